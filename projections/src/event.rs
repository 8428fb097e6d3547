//! Host adapters: a raw hook payload (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, Cursor,
//! Qwen Code) → one canonical event. Lenient by design: every field is optional, a field of an
//! unexpected type is treated as absent, and unknown events and fields are kept (as `Other`),
//! never errors. Which host sent a payload is told by the payload itself, the hook's
//! environment and `--host`, in that order (`detect_host_with`).

pub use crate::event_kind::EventKind;
pub use crate::hook_event::{Canonical, HookEvent, HostUsage, PayloadMetrics, Resumed};
use crate::host::{CallerEnv, Host, HostEvent, HostFacts, ImpliedTool};
use crate::hosts::{self, Wire};
use crate::kind::{Kind, KindOf};
use journal::Envelope;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize, Default)]
struct Raw<'a> {
    #[serde(borrow)]
    hook_event_name: Option<&'a RawValue>,
    /// Windsurf's event name (its payload has no `hook_event_name`).
    #[serde(borrow)]
    agent_action_name: Option<&'a RawValue>,
    /// goose's (it names its event in `event`, as Crush does).
    #[serde(borrow)]
    matcher_context: Option<&'a RawValue>,
    #[serde(borrow)]
    working_dir: Option<&'a RawValue>,
    // Read by host detection only (`Shape`), so that the hook reads its payload once (`read`).
    #[serde(borrow)]
    cursor_version: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    turn_id: Option<&'a RawValue>,
    #[serde(borrow)]
    permission_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    host: Option<&'a RawValue>,
    // Crush names its event here (`{"event":"PreToolUse",…}`).
    #[serde(borrow)]
    event: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    // Copilot CLI: camelCase payloads (and, mixed in, in some PascalCase ones).
    #[serde(borrow, rename = "hookName")]
    hook_name: Option<&'a RawValue>,
    #[serde(borrow, rename = "sessionId")]
    session_id_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "transcriptPath")]
    transcript_path_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "agentId")]
    agent_id_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "agentType")]
    agent_type_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "parentAgentId")]
    parent_agent_id_camel: Option<&'a RawValue>,
    #[serde(borrow)]
    parent_agent_id: Option<&'a RawValue>,
    #[serde(borrow, rename = "toolName")]
    tool_name_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "toolArgs")]
    tool_args: Option<&'a RawValue>,
    #[serde(borrow, rename = "toolInput")]
    tool_input_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "toolResult")]
    tool_result_camel: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_result: Option<&'a RawValue>,
    #[serde(borrow, rename = "customInstructions")]
    custom_instructions_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "stopReason")]
    stop_reason_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "transformedPrompt")]
    transformed_prompt: Option<&'a RawValue>,
    #[serde(borrow, rename = "errorContext")]
    error_context: Option<&'a RawValue>,
    #[serde(borrow, rename = "toolCallId")]
    tool_call_id: Option<&'a RawValue>,
    // Claude Code, Codex, Droid, Qwen: `tool_use_id`; Qwen and Cline also `tool_call_id`.
    #[serde(borrow)]
    tool_use_id: Option<&'a RawValue>,
    #[serde(borrow, rename = "tool_call_id")]
    tool_call_id_snake: Option<&'a RawValue>,
    #[serde(borrow, rename = "serverName")]
    server_name: Option<&'a RawValue>,
    // A subagent's final answer at Copilot's subagentStop.
    #[serde(borrow)]
    response: Option<&'a RawValue>,
    #[serde(borrow)]
    conversation_id: Option<&'a RawValue>,
    #[serde(borrow)]
    transcript_path: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow)]
    workspace_roots: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_id: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_type: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_name: Option<&'a RawValue>,
    #[serde(borrow, rename = "agentName")]
    agent_name_camel: Option<&'a RawValue>,
    #[serde(borrow)]
    model: Option<&'a RawValue>,
    // Claude Code 2.1.330's PreModelSwitch/PostModelSwitch.
    #[serde(borrow)]
    to_model: Option<&'a RawValue>,
    // Claude Code 2.1.330: served calls, MCP tools, resume figures.
    #[serde(borrow)]
    served_call: Option<&'a RawValue>,
    #[serde(borrow)]
    caller_session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    mcp_server: Option<&'a RawValue>,
    #[serde(borrow)]
    context_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    seconds_since_last_response: Option<&'a RawValue>,
    #[serde(borrow)]
    prompt_cache_likely_expired: Option<&'a RawValue>,
    #[serde(borrow)]
    estimated_cache_write_usd: Option<&'a RawValue>,
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    #[serde(borrow)]
    reason: Option<&'a RawValue>,
    #[serde(borrow)]
    prompt: Option<&'a RawValue>,
    /// OpenHands names its event here and its work directory in `working_dir`.
    #[serde(borrow)]
    event_type: Option<&'a RawValue>,
    /// Letta Code's work directory (beside its `event_type`).
    #[serde(borrow)]
    working_directory: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_name: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_input: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_response: Option<&'a RawValue>,
    /// Kimi CLI's tool result: a Python repr (`is_error=False output='…' …`), cut at 2000 chars.
    #[serde(borrow)]
    tool_output: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    title: Option<&'a RawValue>,
    #[serde(borrow)]
    notification_type: Option<&'a RawValue>,
    #[serde(borrow)]
    stop_hook_active: Option<&'a RawValue>,
    #[serde(borrow)]
    last_assistant_message: Option<&'a RawValue>,
    // Gemini CLI's AfterAgent: the final answer.
    #[serde(borrow)]
    prompt_response: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_transcript_path: Option<&'a RawValue>,
    #[serde(borrow)]
    trigger: Option<&'a RawValue>,
    #[serde(borrow)]
    custom_instructions: Option<&'a RawValue>,
    #[serde(borrow)]
    compact_summary: Option<&'a RawValue>,
    #[serde(borrow)]
    task_id: Option<&'a RawValue>,
    #[serde(borrow)]
    task_subject: Option<&'a RawValue>,
    #[serde(borrow)]
    task_description: Option<&'a RawValue>,
    // Cursor
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    #[serde(borrow)]
    file_path: Option<&'a RawValue>,
    #[serde(borrow)]
    edits: Option<&'a RawValue>,
    // Metrics some payloads carry.
    #[serde(borrow)]
    cost_usd: Option<&'a RawValue>,
    #[serde(borrow)]
    cost: Option<&'a RawValue>,
    #[serde(borrow)]
    duration_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    duration: Option<&'a RawValue>,
    #[serde(borrow)]
    tokens_in: Option<&'a RawValue>,
    #[serde(borrow)]
    input_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    tokens_out: Option<&'a RawValue>,
    #[serde(borrow)]
    output_tokens: Option<&'a RawValue>,
}

fn s(v: Option<&RawValue>) -> Option<String> {
    let v = v?;
    serde_json::from_str::<Cow<str>>(v.get())
        .ok()
        .map(Cow::into_owned)
}

fn b(v: Option<&RawValue>) -> Option<bool> {
    serde_json::from_str::<bool>(v?.get()).ok()
}

fn f(v: Option<&RawValue>) -> Option<f64> {
    let v = v?;
    serde_json::from_str::<f64>(v.get())
        .ok()
        .or_else(|| s(Some(v)).and_then(|s| s.trim().parse().ok()))
        .filter(|x| x.is_finite())
}

fn u(v: Option<&RawValue>) -> Option<u64> {
    f(v).filter(|x| *x >= 0.0).map(|x| x as u64)
}

fn val(v: Option<&RawValue>) -> Option<serde_json::Value> {
    let v = v?;
    serde_json::from_str::<serde_json::Value>(v.get())
        .ok()
        .filter(|v| !v.is_null())
}

/// A string field or, for an object/array, its compact JSON text.
fn text(v: Option<&RawValue>) -> Option<String> {
    let v = v?;
    s(Some(v)).or_else(|| (v.get() != "null").then(|| v.get().to_string()))
}

/// Why raw bytes are not a hook invocation; `None` means they are (a JSON object with a string
/// `hook_event_name`). The reason goes into the `Malformed` event. (A payload without a name is
/// still one when the invocation names its event, or the host's shape tells it: `parse_named`.)
pub fn malformed_reason(bytes: &[u8]) -> Option<String> {
    if bytes.iter().all(|c| c.is_ascii_whitespace()) {
        return Some("empty input".into());
    }
    let raw: Raw = match serde_json::from_slice::<&RawValue>(bytes) {
        Err(e) => return Some(format!("not JSON: {e}")),
        Ok(v) if !v.get().starts_with('{') => {
            let what = match v.get().as_bytes()[0] {
                b'[' => "an array",
                b'"' => "a string",
                b't' | b'f' => "a boolean",
                b'n' => "null",
                _ => "a number",
            };
            return Some(format!("not a JSON object but {what}"));
        }
        Ok(v) => match serde_json::from_str(v.get()) {
            Ok(r) => r,
            Err(e) => return Some(format!("unreadable object: {e}")),
        },
    };
    match raw.hook_event_name {
        None => Some("no hook_event_name".into()),
        Some(v) if s(Some(v)).is_none() => Some("hook_event_name is not a string".into()),
        Some(_) => None,
    }
}

/// The event name of a well-formed payload.
pub fn event_name(bytes: &[u8]) -> Option<String> {
    let raw: Raw = serde_json::from_slice(bytes).ok()?;
    s(raw.hook_event_name)
}

/// Detects the host from the payload shape alone; `hint` is the `--host` flag (see
/// `detect_host_with`, which the hook calls with its environment).
pub fn detect_host(bytes: &[u8], hint: Option<&str>) -> Host {
    detect_host_with(bytes, hint, &CallerEnv::default())
}

/// The fields host detection looks at.
#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow)]
    hook_event_name: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_action_name: Option<&'a RawValue>,
    #[serde(borrow)]
    matcher_context: Option<&'a RawValue>,
    #[serde(borrow)]
    working_dir: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow)]
    cursor_version: Option<&'a RawValue>,
    #[serde(borrow)]
    conversation_id: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    turn_id: Option<&'a RawValue>,
    #[serde(borrow)]
    transcript_path: Option<&'a RawValue>,
    #[serde(borrow)]
    permission_mode: Option<&'a RawValue>,
    #[serde(borrow, rename = "sessionId")]
    session_id_camel: Option<&'a RawValue>,
    #[serde(borrow, rename = "hookName")]
    hook_name: Option<&'a RawValue>,
    #[serde(borrow)]
    event: Option<&'a RawValue>,
    /// The host as a shim names it (pi's: `"pi"`; some of its event names are OpenClaw's too).
    #[serde(borrow)]
    host: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_output: Option<&'a RawValue>,
    #[serde(borrow, rename = "tool_call_id")]
    tool_call_id_snake: Option<&'a RawValue>,
    #[serde(borrow)]
    event_type: Option<&'a RawValue>,
    #[serde(borrow)]
    working_directory: Option<&'a RawValue>,
    #[serde(borrow)]
    workspace_roots: Option<&'a RawValue>,
}

impl<'a> Shape<'a> {
    /// The fields detection looks at, of a payload already read.
    fn of(raw: &Raw<'a>) -> Shape<'a> {
        Shape {
            hook_event_name: raw.hook_event_name,
            agent_action_name: raw.agent_action_name,
            matcher_context: raw.matcher_context,
            working_dir: raw.working_dir,
            cwd: raw.cwd,
            cursor_version: raw.cursor_version,
            conversation_id: raw.conversation_id,
            timestamp: raw.timestamp,
            turn_id: raw.turn_id,
            transcript_path: raw.transcript_path,
            permission_mode: raw.permission_mode,
            session_id_camel: raw.session_id_camel,
            hook_name: raw.hook_name,
            event: raw.event,
            host: raw.host,
            tool_output: raw.tool_output,
            tool_call_id_snake: raw.tool_call_id_snake,
            event_type: raw.event_type,
            working_directory: raw.working_directory,
            workspace_roots: raw.workspace_roots,
        }
    }

    /// A host only one host's payloads show: Crush's string `event` (with no `hook_event_name`),
    /// OpenHands' `event_type` with `working_dir`, OpenClaw's, OpenCode's, Gemini CLI's and Qwen Code's own event names, Cursor's `cursor_version`, Kimi CLI's tool payloads (`is_kimi`), Codex's `turn_id` or rollout transcript
    /// (SessionStart and SessionEnd carry no turn id) and its `Interrupt`. A `model` field alone
    /// says nothing: Claude Code sends one too.
    fn identifies(&self, name: &str) -> Option<Host> {
        // OpenHands names its event in `event_type` and its work directory in `working_dir`
        // (Letta Code's `event_type` comes with `working_directory`), never `hook_event_name`.
        if self.hook_event_name.is_none()
            && s(self.event_type).is_some_and(|e| hosts::OPENHANDS.event(&e).is_some())
            && self.working_dir.is_some()
        {
            return Some(Host::OpenHands);
        }
        // Letta Code names its event in `event_type` and its work directory in
        // `working_directory`, never `hook_event_name`.
        if self.hook_event_name.is_none()
            && s(self.event_type).is_some_and(|e| hosts::LETTA.event(&e).is_some())
            && self.working_directory.is_some()
        {
            return Some(Host::Letta);
        }
        // Auggie sends Cursor's `conversation_id` and `workspace_roots` with its own event names
        // (Claude Code's PascalCase ones and `PromptSubmit`; Cursor's are camelCase, and Auggie
        // sends its own names for handlers registered under Cursor's), and no `cursor_version`.
        if self.conversation_id.is_some()
            && self.workspace_roots.is_some()
            && self.cursor_version.is_none()
            && hosts::AUGGIE.event(name).is_some()
            || hosts::AUGGIE.owns(name)
        {
            return Some(Host::Auggie);
        }
        // Mistral Vibe's three event names are its own (lower snake case: Cursor's would be
        // camelCase).
        if hosts::VIBE.owns(name) {
            return Some(Host::Vibe);
        }
        // Crush names its event in a string `event`, and sends no `hook_event_name`; so does
        // goose, with its own names or fields (`matcher_context`, `working_dir`) and no `cwd`,
        // which Crush always sends.
        if let Some(event) = s(self.event).filter(|_| self.hook_event_name.is_none()) {
            if hosts::GOOSE.owns(&event)
                || self.matcher_context.is_some()
                || self.working_dir.is_some()
            {
                return Some(Host::Goose);
            }
            if self.cwd.is_some() {
                return Some(Host::Crush);
            }
        }
        if hosts::GOOSE.owns(name) {
            return Some(Host::Goose);
        }
        // Windsurf's Cascade names its event in `agent_action_name` (its names are its own).
        if self.hook_event_name.is_none() && s(self.agent_action_name).is_some()
            || hosts::WINDSURF.owns(name)
        {
            return Some(Host::Windsurf);
        }
        if let Some(h) = self.kiro_or_amp(name) {
            return Some(h);
        }
        if s(self.host).as_deref() == Some("pi")
            || hosts::PI.owns(name) && !hosts::OPENCLAW.owns(name)
        {
            return Some(Host::Pi);
        }
        if hosts::OPENCLAW.owns(name) {
            return Some(Host::OpenClaw);
        }
        // Kilo Code's install says so in OpenCode's shim; its own bus events are its own.
        if s(self.host).as_deref() == Some("kilo")
            || hosts::KILO.owns(name) && !hosts::OPENCODE.owns(name)
        {
            return Some(Host::Kilo);
        }
        if hosts::OPENCODE.owns(name) {
            return Some(Host::OpenCode);
        }
        if hosts::GEMINI.owns(name) {
            return Some(Host::Gemini);
        }
        if hosts::QWEN.owns(name) {
            return Some(Host::Qwen);
        }
        // Cline CLI names its event in `hookName` (as Copilot's permissionRequest does), with
        // names no other host sends.
        if hosts::CLINE.owns(name) || s(self.hook_name).is_some_and(|n| hosts::CLINE.owns(&n)) {
            return Some(Host::Cline);
        }
        if self.cursor_version.is_some() {
            return Some(Host::Cursor);
        }
        if self.is_kimi() {
            return Some(Host::Kimi);
        }
        let rollout = s(self.transcript_path).is_some_and(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|f| f.starts_with("rollout-") && f.ends_with(".jsonl"))
        });
        (self.turn_id.is_some() || rollout || hosts::CODEX.owns(name)).then_some(Host::Codex)
    }

    /// Kiro CLI's payloads and Amp's shim's (both from their sources, not run here).
    fn kiro_or_amp(&self, name: &str) -> Option<Host> {
        // Amp's shim says so (its event names, `tool.call`, …, are its own too).
        if s(self.host).as_deref() == Some("amp") || hosts::AMP.owns(name) {
            return Some(Host::Amp);
        }
        // Kiro CLI: `agentSpawn` and `userPromptSubmit` are its own; its `preToolUse`,
        // `postToolUse` and `stop` are Cursor's names too, sent with only `cwd` and the tool's
        // fields (Cursor's carry `cursor_version` and `conversation_id`).
        let kiro = hosts::KIRO.owns(name) && !hosts::CURSOR.owns(name)
            || hosts::KIRO.event(name).is_some()
                && self.cursor_version.is_none()
                && self.conversation_id.is_none()
                && self.cwd.is_some();
        kiro.then_some(Host::Kiro)
    }

    /// Kimi CLI's tool events: its `tool_output` (a Python repr, `is_error=…`), or its
    /// `tool_call_id` with none of the fields Claude Code and Qwen Code send with every event
    /// (`transcript_path`, `permission_mode`, `timestamp`). Its other events look like Claude
    /// Code's minus those fields: `--host kimi` tells them.
    fn is_kimi(&self) -> bool {
        let repr = s(self.tool_output).is_some_and(|o| o.starts_with("is_error="));
        let bare = self.transcript_path.is_none()
            && self.permission_mode.is_none()
            && self.timestamp.is_none()
            && self.hook_name.is_none();
        repr || bare && s(self.tool_call_id_snake).is_some()
    }

    /// The host a payload looks like when nothing else tells: Copilot CLI's camelCase fields or
    /// its session file as the transcript; Cursor's camelCase event names and conversation id; a
    /// top-level `timestamp` with `permission_mode` (Qwen Code), with a name Gemini CLI sends and
    /// a transcript (Gemini), or else (Copilot CLI's PascalCase registrations); else Claude
    /// Code.
    fn looks_like(&self, name: &str) -> Host {
        let copilot_file = s(self.transcript_path)
            .is_some_and(|p| p.contains("/session-state/") && p.ends_with("/events.jsonl"));
        if self.session_id_camel.is_some() || self.hook_name.is_some() || copilot_file {
            return Host::Copilot;
        }
        if self.conversation_id.is_some()
            || name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        {
            return Host::Cursor;
        }
        match (self.timestamp.is_some(), self.permission_mode.is_some()) {
            (true, true) => Host::Qwen,
            // Gemini sends its transcript with every event; Copilot's SessionStart and
            // SessionEnd carry none.
            (true, false)
                if hosts::GEMINI.event(name).is_some() && self.transcript_path.is_some() =>
            {
                Host::Gemini
            }
            (true, false) => Host::Copilot,
            (false, _) => Host::Claude,
        }
    }
}

/// Detects the host that runs the hook (see docs/hooks.md, "Host detection"), first rule that
/// applies:
///
/// 1. a payload only one host sends (`Shape::identifies`);
/// 2. the hook's environment: a host's `HostFacts::caller` variables, all set (Copilot CLI and
///    Cursor run `.claude/settings.json` handlers too, with Claude Code's payloads);
/// 3. `hint`, the `--host` flag (any value but `auto`), whatever it names;
/// 4. the payload's shape (`Shape::looks_like`), where Gemini CLI's `GEMINI_SESSION_ID` (without
///    Claude Code's `CLAUDE_CODE_SESSION_ID`) breaks a tie with Claude Code.
pub fn detect_host_with(bytes: &[u8], hint: Option<&str>, env: &CallerEnv) -> Host {
    detect(
        serde_json::from_slice::<Shape>(bytes).ok().as_ref(),
        hint,
        env,
    )
}

/// `detect_host_with` over the fields detection looks at (`None`: no JSON object).
fn detect(shape: Option<&Shape>, hint: Option<&str>, env: &CallerEnv) -> Host {
    let name = shape
        .and_then(|sh| s(sh.hook_event_name))
        .unwrap_or_default();
    if let Some(h) = shape.and_then(|sh| sh.identifies(&name)) {
        // Kilo Code runs OpenCode's shim and sets OPENCODE=1: its own KILO tells.
        if h == Host::OpenCode && env.kilo_runs_it() {
            return Host::Kilo;
        }
        return h;
    }
    if let Some(h) = env.caller() {
        return h;
    }
    if let Some(h) = hint.filter(|h| *h != "auto") {
        return Host::from_name(h);
    }
    match shape.map(|sh| sh.looks_like(&name)) {
        Some(Host::Claude) | None if env.gemini_tie_break() => Host::Gemini,
        Some(h) => h,
        None => Host::Claude,
    }
}

/// What the hook does with its payload, reading it once: the host that sent it
/// (`detect_host_with`) and the event it is (`parse_named`, `given` the event name the command
/// line gives). One deserialization for every host of Claude Code's payload shape; a host with a
/// parser of its own (`hosts::Wire::Own`) reads the bytes again with it, and a payload the
/// fields do not deserialize from is looked at again for detection alone (as before).
pub fn read(
    bytes: &[u8],
    hint: Option<&str>,
    env: &CallerEnv,
    given: Option<&str>,
) -> (Host, Option<HookEvent>) {
    let Ok(raw) = serde_json::from_slice::<Raw>(bytes) else {
        return (detect_host_with(bytes, hint, env), None);
    };
    let host = detect(Some(&Shape::of(&raw)), hint, env);
    let parsed = match host.module().map(|m| m.wire) {
        Some(Wire::Own(parse)) => parse(bytes),
        _ => parse_raw(&host, raw, given),
    };
    (host, parsed)
}

/// Parses a well-formed payload sent by `host`. `None` only for bytes that `malformed_reason`
/// rejects.
pub fn parse(host: &Host, bytes: &[u8]) -> Option<HookEvent> {
    parse_named(host, bytes, None)
}

/// Parses a payload sent by `host`; `given` is the event name the invocation was given (`hook
/// --event NAME`, or the name recorded with the envelope), for payloads that carry none. The
/// payload's own name wins (`hook_event_name`, Copilot's `hookName`); a Copilot payload with
/// neither is named from its fields (`copilot_event`). `None` for bytes that are no JSON object
/// or name no event.
pub fn parse_named(host: &Host, bytes: &[u8], given: Option<&str>) -> Option<HookEvent> {
    if let Some(Wire::Own(parse)) = host.module().map(|m| m.wire) {
        return parse(bytes);
    }
    parse_raw(host, serde_json::from_slice(bytes).ok()?, given)
}

/// `parse_named` over a payload of Claude Code's shape, already read.
fn parse_raw(host: &Host, raw: Raw, given: Option<&str>) -> Option<HookEvent> {
    let name = s(raw.hook_event_name)
        .or_else(|| s(raw.hook_name))
        .or_else(|| (*host == Host::Crush).then(|| s(raw.event)).flatten())
        .or_else(|| given.filter(|g| !g.is_empty()).map(str::to_string))
        .or_else(|| {
            (*host == Host::Copilot)
                .then(|| copilot_event(&raw))
                .flatten()
                .map(str::to_string)
        })?;
    let facts = host.facts();
    let mut canonical = canonical(facts.meaning(&name), &raw);
    // Qwen Code's UserPromptSubmit after each tool batch (`prompt:""`) is the turn going on.
    if facts.empty_prompt_continues_turn
        && matches!(canonical, Canonical::Prompt { .. })
        && s(raw.prompt).is_some_and(|p| p.is_empty())
    {
        canonical = Canonical::Other;
    }
    // After a model switch (PostModelSwitch's `to_model`) the session runs the new model.
    let model = s(raw.model).or_else(|| {
        (name == "PostModelSwitch")
            .then(|| s(raw.to_model))
            .flatten()
    });
    let agent_id = s(raw.agent_id)
        .or_else(|| s(raw.agent_id_camel))
        .filter(|s| !s.is_empty());
    // Inside a Copilot subagent the payload's session id is the subagent's own; the session is
    // its parent (`parentAgentId`).
    let session_id = s(raw.parent_agent_id_camel)
        .or_else(|| s(raw.parent_agent_id))
        .filter(|p| !p.is_empty())
        .or_else(|| s(raw.session_id))
        .or_else(|| s(raw.session_id_camel))
        .or_else(|| s(raw.conversation_id))
        .filter(|s| !s.is_empty());
    let (session_id, served) = served_for(&raw, session_id);
    let resumed = resumed(&raw);
    Some(HookEvent {
        name,
        host: host.clone(),
        session_id,
        served,
        mcp_server: val(raw.mcp_server).and_then(|v| match v {
            serde_json::Value::String(n) => Some(n),
            v => v.get("name")?.as_str().map(str::to_string),
        }),
        resumed,
        cwd: cwd(facts, &raw),
        transcript_path: s(raw.transcript_path)
            .or_else(|| s(raw.transcript_path_camel))
            .filter(|p| !p.is_empty()),
        agent_id,
        agent_type: s(raw.agent_type).or_else(|| s(raw.agent_type_camel)),
        agent_name: s(raw.agent_name)
            .or_else(|| s(raw.agent_name_camel))
            .filter(|n| !n.trim().is_empty()),
        model,
        canonical,
        metrics: metrics(&raw),
        session_key: None,
        continues: None,
        usage: None,
        tool_call_id: s(raw.tool_use_id)
            .or_else(|| s(raw.tool_call_id_snake))
            .or_else(|| s(raw.tool_call_id))
            .filter(|id| !id.is_empty()),
    })
}

/// The event a Copilot CLI payload that names none is (its camelCase registrations send no
/// name; install puts it on the command line, so this is for handlers registered by hand), from
/// the fields each of its events carries (measured on 1.0.102).
fn copilot_event(raw: &Raw) -> Option<&'static str> {
    let tool = raw.tool_name_camel.is_some() || raw.tool_name.is_some();
    let name = if raw.tool_call_id.is_some() && raw.server_name.is_some() {
        "preMcpToolCall"
    } else if tool && (raw.tool_result_camel.is_some() || raw.tool_result.is_some()) {
        "postToolUse"
    } else if tool && raw.error.is_some() {
        "postToolUseFailure"
    } else if tool {
        "preToolUse"
    } else if raw.transformed_prompt.is_some() {
        "userPromptTransformed"
    } else if raw.prompt.is_some() {
        "userPromptSubmitted"
    } else if raw.error_context.is_some() {
        "errorOccurred"
    } else if raw.trigger.is_some() {
        "preCompact"
    } else if raw.stop_reason_camel.is_some() || raw.stop_hook_active.is_some() {
        if raw.response.is_some() || raw.agent_name_camel.is_some() {
            "subagentStop"
        } else {
            "agentStop"
        }
    } else if raw.agent_name_camel.is_some() {
        "subagentStart"
    } else if raw.source.is_some() {
        "sessionStart"
    } else if raw.reason.is_some() {
        "sessionEnd"
    } else {
        return None;
    };
    Some(name)
}

/// The session a served call belongs to: Claude Code runs tool calls here for another (cloud)
/// session and sends them with `served_call`, `caller_session_id` and `session_id:
/// "served:<caller>"` (`served:unknown` when it could not name the caller). Such a call is the
/// caller's, never a session of its own; with no caller named it belongs to no session.
fn served_for(raw: &Raw, session_id: Option<String>) -> (Option<String>, bool) {
    let prefixed = session_id
        .as_deref()
        .and_then(|id| id.strip_prefix("served:"));
    if b(raw.served_call) != Some(true) && prefixed.is_none() {
        return (session_id, false);
    }
    let caller = s(raw.caller_session_id)
        .or_else(|| prefixed.map(str::to_string))
        .filter(|c| !c.is_empty() && c != "unknown");
    (caller, true)
}

/// SessionStart's figures at a resume or fork (and a model switch's `context_tokens`).
fn resumed(raw: &Raw) -> Option<Resumed> {
    let r = Resumed {
        context_tokens: u(raw.context_tokens),
        seconds_since_last_response: u(raw.seconds_since_last_response),
        prompt_cache_likely_expired: b(raw.prompt_cache_likely_expired),
        estimated_cache_write_usd: f(raw.estimated_cache_write_usd),
    };
    (r != Resumed::default()).then_some(r)
}

/// Parses the payload of a stored hook event, as sent by the host its envelope names, with the
/// event name recorded for it (a Copilot CLI payload names none).
pub fn from_envelope(env: &Envelope) -> Option<HookEvent> {
    let kind = env.kind();
    let name = match &kind {
        Kind::Hook { name } => Some(name.as_str()),
        _ => None,
    };
    parse_named(&Host::from_name(&env.host), &env.payload, name)
}

/// The canonical event an event name stands for (`None`: unknown, kept as `Other`), with its
/// fields read from the payload.
fn canonical(meaning: Option<&HostEvent>, raw: &Raw) -> Canonical {
    let Some(meaning) = meaning else {
        return Canonical::Other;
    };
    match meaning.kind {
        // Copilot CLI calls a new session's start `new`.
        EventKind::SessionStart => Canonical::SessionStart {
            source: s(raw.source)
                .filter(|src| src != "new")
                .unwrap_or_else(|| "startup".into()),
        },
        EventKind::SessionEnd => Canonical::SessionEnd {
            reason: s(raw.reason).unwrap_or_else(|| "other".into()),
        },
        EventKind::Prompt => Canonical::Prompt {
            text: without_own_context(&s(raw.prompt).unwrap_or_default()),
        },
        EventKind::ToolPre | EventKind::ToolPost | EventKind::ToolFailure => {
            tool_event(meaning, raw)
        }
        EventKind::Notification => Canonical::Notification {
            kind: s(raw.notification_type).unwrap_or_else(|| "notification".into()),
            title: s(raw.title),
            message: text(raw.message).unwrap_or_default(),
        },
        EventKind::Stop => Canonical::Stop {
            active: b(raw.stop_hook_active).unwrap_or(false),
            last_message: s(raw.last_assistant_message).or_else(|| s(raw.prompt_response)),
        },
        EventKind::StopFailure => Canonical::StopFailure {
            error: error_text(raw),
        },
        EventKind::SubagentStart => Canonical::SubagentStart {
            agent_id: s(raw.agent_id)
                .or_else(|| s(raw.agent_id_camel))
                .unwrap_or_default(),
            agent_type: s(raw.agent_type).or_else(|| s(raw.agent_type_camel)),
        },
        EventKind::SubagentStop => Canonical::SubagentStop {
            agent_id: s(raw.agent_id)
                .or_else(|| s(raw.agent_id_camel))
                .unwrap_or_default(),
            agent_type: s(raw.agent_type).or_else(|| s(raw.agent_type_camel)),
            transcript: s(raw.agent_transcript_path),
            last_message: s(raw.last_assistant_message).or_else(|| s(raw.response)),
        },
        EventKind::PreCompact => Canonical::PreCompact {
            trigger: s(raw.trigger).unwrap_or_else(|| "auto".into()),
            instructions: s(raw.custom_instructions)
                .or_else(|| s(raw.custom_instructions_camel))
                .filter(|s| !s.is_empty()),
        },
        EventKind::PostCompact => Canonical::PostCompact {
            trigger: s(raw.trigger).unwrap_or_else(|| "auto".into()),
            summary: s(raw.compact_summary),
        },
        EventKind::TaskCreated => Canonical::TaskCreated {
            task_id: s(raw.task_id).unwrap_or_default(),
            subject: s(raw.task_subject),
            description: s(raw.task_description),
        },
        EventKind::TaskCompleted => Canonical::TaskCompleted {
            task_id: s(raw.task_id).unwrap_or_default(),
            subject: s(raw.task_subject),
        },
        EventKind::Other => Canonical::Other,
    }
}

/// A prompt without the context hookjournal itself injected into it. Gemini CLI (`-p`) hands
/// BeforeAgent a prompt that already holds the SessionStart answer as
/// `<hook_context>hookjournal: …</hook_context>`: that is not what the user typed. Other hooks'
/// blocks are kept.
fn without_own_context(prompt: &str) -> String {
    const OPEN: &str = "<hook_context>hookjournal";
    const CLOSE: &str = "</hook_context>";
    if !prompt.contains(OPEN) {
        return prompt.to_string();
    }
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(i) = rest.find(OPEN) {
        let Some(j) = rest[i..].find(CLOSE) else {
            break;
        };
        out.push_str(&rest[..i]);
        rest = &rest[i + j + CLOSE.len()..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// A tool event: the tool, its input (and response, or error), from the payload or, for events
/// that name no tool, from their own fields.
fn tool_event(meaning: &HostEvent, raw: &Raw) -> Canonical {
    let tool = || {
        s(raw.tool_name)
            .or_else(|| s(raw.tool_name_camel))
            .unwrap_or_default()
    };
    // Copilot CLI: `toolArgs` (`toolInput` at permissionRequest), `toolResult` (PascalCase:
    // `tool_result`).
    let input = || {
        val(raw.tool_input)
            .or_else(|| val(raw.tool_args))
            .or_else(|| val(raw.tool_input_camel))
    };
    match (meaning.kind, meaning.implied_tool) {
        (EventKind::ToolPre, Some(t)) => Canonical::ToolPre {
            tool: t.tool().into(),
            input: implied_input(t, raw),
        },
        (EventKind::ToolPost, Some(t)) => Canonical::ToolPost {
            tool: t.tool().into(),
            input: implied_input(t, raw),
            response: None,
        },
        (EventKind::ToolPre, None) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        (EventKind::ToolPost, None) => Canonical::ToolPost {
            tool: tool(),
            input: input(),
            response: val(raw.tool_response)
                .or_else(|| val(raw.tool_output))
                .or_else(|| val(raw.tool_result_camel))
                .or_else(|| val(raw.tool_result)),
        },
        _ => Canonical::ToolFailure {
            tool: tool(),
            input: input(),
            error: error_text(raw),
        },
    }
}

/// An error as text: a string, an error object's `message` (Copilot CLI's errorOccurred), or
/// the object's JSON text.
fn error_text(raw: &Raw) -> String {
    val(raw.error)
        .and_then(|e| e.get("message")?.as_str().map(str::to_string))
        .or_else(|| text(raw.error))
        .unwrap_or_default()
}

/// The input of a tool event that names no tool, from the payload's own fields.
fn implied_input(t: ImpliedTool, raw: &Raw) -> Option<serde_json::Value> {
    match t {
        ImpliedTool::Shell => s(raw.command).map(|c| serde_json::json!({ "command": c })),
        ImpliedTool::FileEdit => {
            s(raw.file_path).map(|p| serde_json::json!({ "file_path": p, "edits": val(raw.edits) }))
        }
        ImpliedTool::FileRead => s(raw.file_path).map(|p| serde_json::json!({ "file_path": p })),
    }
}

/// The project directory: `cwd`, else the first workspace root on hosts that send those.
fn cwd(facts: &HostFacts, raw: &Raw) -> Option<String> {
    s(raw.cwd).or_else(|| {
        if facts.payload.cwd.contains(&"workspace_roots") {
            val(raw.workspace_roots)
                .and_then(|v| v.get(0).and_then(|x| x.as_str()).map(str::to_string))
        } else {
            None
        }
    })
}

/// The metrics a payload carries itself, under any of the names hosts and wrappers use.
fn metrics(raw: &Raw) -> PayloadMetrics {
    PayloadMetrics {
        cost_usd: f(raw.cost_usd).or_else(|| f(raw.cost)),
        duration_ms: f(raw.duration_ms).or_else(|| f(raw.duration)),
        tokens_in: u(raw.tokens_in).or_else(|| u(raw.input_tokens)),
        tokens_out: u(raw.tokens_out).or_else(|| u(raw.output_tokens)),
        model: s(raw.model),
    }
}

/// Codex's legacy `notify` program gets `{"type":"agent-turn-complete","thread-id":…}` as its last
/// argument. Returns it as a payload with a `hook_event_name`, so it is journaled like the rest.
pub fn codex_notify_payload(arg: &str) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_str(arg).ok()?;
    let obj = v.as_object()?;
    obj.get("type")?.as_str()?;
    Some(arg.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_reasons_are_specific() {
        assert_eq!(malformed_reason(b"  \n").unwrap(), "empty input");
        assert!(malformed_reason(b"[1]").unwrap().contains("array"));
        assert!(malformed_reason(b"\"x\"").unwrap().contains("string"));
        assert!(malformed_reason(b"{\"a\":1}")
            .unwrap()
            .contains("no hook_event_name"));
        assert!(malformed_reason(b"{\"hook_event_name\":3}")
            .unwrap()
            .contains("not a string"));
        assert!(malformed_reason(b"{\"hook_event_name\":\"Stop\"")
            .unwrap()
            .starts_with("not JSON"));
        assert!(malformed_reason(b"{\"hook_event_name\":\"Stop\"}{}")
            .unwrap()
            .starts_with("not JSON"));
        assert_eq!(
            malformed_reason(b"{\"hook_event_name\":\"Stop\",\"session_id\":7}"),
            None
        );
    }

    #[test]
    fn wrong_field_types_are_treated_as_absent() {
        let e = parse(
            &Host::Claude,
            br#"{"hook_event_name":"Stop","session_id":7,"stop_hook_active":"yes"}"#,
        )
        .unwrap();
        assert_eq!(e.session_id, None);
        assert_eq!(
            e.canonical,
            Canonical::Stop {
                active: false,
                last_message: None
            }
        );
    }

    #[test]
    fn hosts_are_told_apart_by_shape() {
        assert_eq!(
            detect_host(br#"{"hook_event_name":"PreToolUse","turn_id":"t"}"#, None),
            Host::Codex
        );
        assert_eq!(
            detect_host(br#"{"hook_event_name":"SessionStart","model":"m"}"#, None),
            Host::Claude
        );
        assert_eq!(
            detect_host(br#"{"hook_event_name":"AfterTool"}"#, None),
            Host::Gemini
        );
        assert_eq!(
            detect_host(br#"{"hook_event_name":"stop","cursor_version":"1"}"#, None),
            Host::Cursor
        );
        assert_eq!(
            detect_host(br#"{"hook_event_name":"Stop"}"#, Some("gemini")),
            Host::Gemini
        );
    }

    #[test]
    fn gemini_and_cursor_map_to_canonical_events() {
        let g = parse(&Host::Gemini, br#"{"hook_event_name":"BeforeTool","session_id":"g","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#).unwrap();
        assert!(
            matches!(g.canonical, Canonical::ToolPre { ref tool, .. } if tool == "run_shell_command")
        );
        let c = parse(&Host::Cursor, br#"{"hook_event_name":"afterFileEdit","conversation_id":"c","file_path":"/a.ts","workspace_roots":["/w"]}"#).unwrap();
        assert_eq!(c.session_id.as_deref(), Some("c"));
        assert_eq!(c.cwd.as_deref(), Some("/w"));
        assert!(matches!(c.canonical, Canonical::ToolPost { ref tool, .. } if tool == "Edit"));
    }
}
