//! The hosts hookjournal speaks to, and what it knows about each of them: the event names it
//! sends and what they mean, which events take which kind of answer, which payload fields hold
//! what, how a compaction shows, what trust the host wants and where `install` writes.
//!
//! The facts are data (`HostFacts`), read by the adapter (`event::parse`), the policy
//! (`policy::decide`) and the docs' tests; a host is stored in envelopes by its name
//! (`Host::as_str`), so the storage format knows nothing of this type.

use crate::event_kind::EventKind;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// An agent that runs hookjournal's hook.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cursor.
    Cursor,
    /// OpenClaw (its plugin shim forwards each plugin hook, see `OPENCLAW`).
    OpenClaw,
    /// OpenCode (its plugin shim forwards its plugin hooks and bus events, see `OPENCODE`).
    OpenCode,
    /// Qwen Code.
    Qwen,
    /// Crush (Charm's; shell hooks in its `crush.json`, see `CRUSH`).
    Crush,
    /// The pi coding agent (its extension shim forwards its events, see `PI`).
    Pi,
    /// Factory Droid (`droid`; Claude Code's hooks in `.factory/settings.json`, see `DROID`).
    Droid,
    /// Cline CLI (one hook file per event, see `CLINE`).
    Cline,
    /// A host named on the command line (`--host NAME`) or in an imported event that hookjournal
    /// does not know, kept by its name: read with Claude Code's event names, answered only with
    /// what needs nothing host-specific (see `GENERIC`).
    Other(String),
}

/// The hosts hookjournal knows, in the order the docs list them.
pub const KNOWN: [Host; 12] = [
    Host::Claude,
    Host::Codex,
    Host::Gemini,
    Host::Copilot,
    Host::Cursor,
    Host::OpenClaw,
    Host::Qwen,
    Host::OpenCode,
    Host::Crush,
    Host::Pi,
    Host::Droid,
    Host::Cline,
];

impl Host {
    /// The host's name as envelopes store it and `--host` takes it (`claude`, `codex`, …).
    pub fn as_str(&self) -> &str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Cursor => "cursor",
            Host::OpenClaw => "openclaw",
            Host::Qwen => "qwen",
            Host::Droid => "droid",
            Host::OpenCode => "opencode",
            Host::Crush => "crush",
            Host::Pi => "pi",
            Host::Cline => "cline",
            Host::Other(name) => name,
        }
    }

    /// The host a stored or given name denotes; a name hookjournal does not know is kept as
    /// `Other` (so it is stored again exactly as it was given).
    pub fn from_name(name: &str) -> Host {
        KNOWN
            .into_iter()
            .find(|h| h.as_str() == name)
            .unwrap_or_else(|| Host::Other(name.to_string()))
    }

    /// What hookjournal knows about this host.
    pub fn facts(&self) -> &'static HostFacts {
        match self {
            Host::Claude => &CLAUDE,
            Host::Codex => &CODEX,
            Host::Gemini => &GEMINI,
            Host::Copilot => &COPILOT,
            Host::Cursor => &CURSOR,
            Host::OpenClaw => &OPENCLAW,
            Host::Qwen => &QWEN,
            Host::Droid => &DROID,
            Host::OpenCode => &OPENCODE,
            Host::Crush => &CRUSH,
            Host::Pi => &PI,
            Host::Cline => &CLINE,
            Host::Other(_) => &GENERIC,
        }
    }

    /// Whether the host takes an answer of `shape` to the canonical event `kind`.
    pub fn answers(&self, kind: EventKind, shape: AnswerShape) -> bool {
        self.facts().answers.contains(&(kind, shape))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the hosts hookjournal knows (`FromStr` is strict; for stored names,
/// which may be anything, use `Host::from_name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownHost(pub String);

impl fmt::Display for UnknownHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = KNOWN.iter().map(Host::as_str).collect();
        write!(f, "unknown host {:?} (known: {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownHost {}

impl FromStr for Host {
    type Err = UnknownHost;

    fn from_str(s: &str) -> Result<Host, UnknownHost> {
        match Host::from_name(s) {
            Host::Other(name) => Err(UnknownHost(name)),
            known => Ok(known),
        }
    }
}

/// The kinds of answer a hook can print, each honoured by some (host, event) pairs only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnswerShape {
    /// Text added to the model's context, in the form the host reads (`HostFacts::context`).
    Context,
    /// Plain text on stdout, appended to the compaction's summary request (Claude Code's
    /// PreCompact; it rejects `hookSpecificOutput` there).
    CompactionText,
    /// `{"decision":"block","reason":…}` at Stop: the agent goes on with the reason as its prompt.
    BlockStop,
    /// `{"continue":false,"stopReason":…}`: the agent stops (a loop agent at the context limit).
    StopAgent,
}

/// How an event name reads when the event names no tool itself (Cursor's shell and file
/// events): the tool it stands for, and the payload fields its input is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImpliedTool {
    /// `Bash`, input `{"command"}` from the payload's `command`.
    Shell,
    /// `Edit`, input `{"file_path","edits"}` from the payload's `file_path` and `edits`.
    FileEdit,
    /// `Read`, input `{"file_path"}` from the payload's `file_path`.
    FileRead,
}

impl ImpliedTool {
    /// The tool name the event is recorded as.
    pub fn tool(&self) -> &'static str {
        match self {
            ImpliedTool::Shell => "Bash",
            ImpliedTool::FileEdit => "Edit",
            ImpliedTool::FileRead => "Read",
        }
    }
}

/// How a host reads context from a hook's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextForm {
    /// `{"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}}` (Claude Code and the
    /// hosts that copied its protocol).
    Nested,
    /// `{"additionalContext":…}` at the top level: Copilot CLI 1.0.102 reads only that and
    /// ignores the nested form (measured, `tests/copilot_cli.rs`).
    Flat,
    /// `{"context":…}`, Crush's own output envelope (`version`, `decision`, `halt`, `reason`,
    /// `context`, `updated_input`; no `decision`: the tool goes through its permission flow as
    /// it would without the hook).
    Envelope,
    /// `{"contextModification":…}` (Cline CLI: added to the next request as a `<hook_context>`
    /// user message after the tool's result).
    Modification,
}

/// How `install` registers the handler for one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registration {
    /// Seconds the host may give the handler (converted by `InstallFacts::timeout_scale`).
    pub timeout_s: u64,
    /// Tool events take a matcher on the tool name: `"*"`, every tool.
    pub tool_matcher: bool,
    /// The payload names no event (Copilot CLI's camelCase registrations): the command line
    /// does, `hook --event NAME`.
    pub event_arg: bool,
}

/// One event name a host sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostEvent {
    /// The name as the host sends it in `hook_event_name`.
    pub name: &'static str,
    /// What it means (`EventKind::Other`: recorded, never answered).
    pub kind: EventKind,
    /// For tool events that name no tool: the tool they stand for.
    pub implied_tool: Option<ImpliedTool>,
    /// How `install` registers it; `None`: never registered (see `never_registered` reasons in
    /// docs/hooks.md), or the host is not installed by hookjournal.
    pub register: Option<Registration>,
}

/// The payload fields that hold the ids and paths hookjournal reads. (The adapter reads every
/// field name it knows on every host; these are the ones each host is known to send.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadFields {
    /// The session (conversation) id.
    pub session_id: &'static str,
    /// The subagent's id, on events that run inside a subagent.
    pub agent_id: Option<&'static str>,
    /// The session's transcript.
    pub transcript_path: Option<&'static str>,
    /// The project directory, first field that has it first.
    pub cwd: &'static [&'static str],
}

/// How the host's context compaction shows in its hook events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionFacts {
    /// The event fired before the context is compacted (its `trigger` is `manual` or `auto`).
    pub before: Option<&'static str>,
    /// The event fired after it (Claude Code's carries `compact_summary`).
    pub after: Option<&'static str>,
    /// The SessionStart `source` the session continues with after a compaction, if known.
    pub restart_source: Option<&'static str>,
    /// Whether `before` also fires when nothing is compacted (Gemini CLI fires PreCompress
    /// before every model request): then it announces nothing, and a compaction is known only
    /// once the host's session file shows it.
    pub before_fires_without_compaction: bool,
    /// Whether the host's session file shows its compactions, and is read for them: a
    /// compaction is counted there unless `before` announced it (Gemini CLI's never does;
    /// Copilot CLI's preCompact does, and its `.claude/settings.json` handlers may never see
    /// one). Neither host follows a compaction with an event: the restore goes with the next
    /// context it takes after the compaction is announced or shown.
    pub counted_from_session_file: bool,
    /// Whether a `continue:false` answer to `before` stops the compaction (Codex CLI: the turn
    /// is interrupted and nothing is compacted): then the compaction is counted at `after`, which
    /// fires only once the context was compacted.
    pub before_can_cancel: bool,
}

/// The format of the file a host keeps per session (what `engine::ingest` reads it with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionFileFormat {
    /// Claude Code's transcript JSONL (also read for hosts that name a transcript of that shape).
    ClaudeTranscript,
    /// Codex CLI's rollout JSONL.
    CodexRollout,
    /// Gemini CLI's chat file.
    GeminiChat,
    /// Copilot CLI's `session-state/<id>/events.jsonl`.
    CopilotEvents,
    /// Qwen Code's `projects/<cwd>/chats/<session>.jsonl`.
    QwenChat,
    /// Factory Droid's `sessions/<cwd>/<session>.jsonl` (its compactions) and the
    /// `<session>.settings.json` beside it (the session's running token totals).
    DroidSession,
    /// Cline CLI's `sessions/<session>/<session>.messages.json`, one JSON document read whole.
    ClineMessages,
}

/// Where a host's session file is when no payload names it: under the first directory of
/// `dirs` whose environment variable the hook process has (an absolute path, joined with its
/// suffix), at `file` with `{session}` replaced by the session id. The engine reads the
/// environment; the rule is data here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedPath {
    /// (variable, suffix), first set one wins.
    pub dirs: &'static [(&'static str, &'static str)],
    /// The file under it.
    pub file: &'static str,
    /// A subagent's own file under it (`{agent}`: the subagent's id), when it has one.
    pub subagent_file: Option<&'static str>,
}

/// The file a host keeps per session (usage per model call, the context, compactions), and when
/// the hook reads it: data the pure plan (`observe::plan`) turns into reads the engine executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionFileFacts {
    /// Its format.
    pub format: SessionFileFormat,
    /// The events at which the hook reads it (the payload's `transcript_path`).
    pub read_at: &'static [EventKind],
    /// Events at which it is read too while a compaction the host announced is not in the file
    /// yet (Copilot CLI compacts while the turn goes on; the restore follows what the file shows).
    pub read_while_compacting: &'static [EventKind],
    /// Whether a subagent's own events skip it (their payload names the parent's file, whose
    /// usage is the parent's, or a file whose usage is not the session's context).
    pub main_agent_only: bool,
    /// Whether the session's recorded path stands in when the payload names none (Copilot CLI's
    /// sessionEnd names none).
    pub path_from_session: bool,
    /// Bytes read at once, as a multiple of `hook.transcript_read_max` (at SessionEnd: 4).
    pub read_scale: u64,
    /// Whether subagents keep transcripts of their own: read at SubagentStop (the path it names)
    /// and caught up at the session's reads (they lag their SubagentStop).
    pub subagent_files: bool,
    /// Where the file is when the payload names none (`None`: only where a payload names it).
    pub derived_path: Option<DerivedPath>,
}

/// Claude Code's transcript, read at Stop, PreCompact and SessionEnd; subagents' at SubagentStop.
pub const CLAUDE_TRANSCRIPT: SessionFileFacts = SessionFileFacts {
    format: SessionFileFormat::ClaudeTranscript,
    read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
    read_while_compacting: &[],
    main_agent_only: false,
    path_from_session: false,
    read_scale: 1,
    subagent_files: true,
    derived_path: None,
};

/// What the host wants before project hooks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Nothing: hooks in the settings load at the next session start.
    None,
    /// The project folder must be trusted.
    TrustedFolder,
    /// Each new project hook must be trusted in the host (`/hooks`); Codex records it as a
    /// `trusted_hash` in `~/.codex/config.toml`, and `codex exec` skips untrusted hooks silently.
    /// `install` writes that trust itself (Codex 0.169.0's hash, `install/codex_trust.rs`); a
    /// project's hooks load only in a trusted project besides.
    TrustedHooks,
    /// Not established (hookjournal does not install for this host).
    Unverified,
}

/// The settings file `install` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The project's shared settings.
    Project,
    /// The project's settings for this user only (Claude Code's `settings.local.json`).
    Local,
    /// The user's settings for every project.
    User,
}

/// How a host's hooks file lists a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookFileFormat {
    /// `{"hooks":{EVENT:[{"matcher":…,"hooks":[{"type":"command","command":…,"timeout":…}]}]}}`
    /// (Claude Code, Codex CLI, Gemini CLI).
    Grouped,
    /// `{"version":1,"hooks":{EVENT:[{"type":"command","bash":…,"timeoutSec":…}]}}` (Copilot CLI).
    CopilotFlat,
    /// `{"version":1,"hooks":{EVENT:[{"command":…,"timeout":…}]}}` (Cursor).
    CursorFlat,
    /// `{"hooks":{EVENT:[{"name":…,"command":…,"timeout":…}]}}`, no `version`, no matcher (every
    /// tool) (Crush's `crush.json`).
    CrushFlat,
    /// No settings file: one executable per event in a hooks directory, named after the event
    /// (Cline CLI; `install::cline` writes them).
    ScriptPerEvent,
}

impl HookFileFormat {
    /// Whether a new file starts with `"version": 1` (and a file left with nothing else is
    /// removed at uninstall): Copilot CLI's and Cursor's hook files.
    pub fn versioned(&self) -> bool {
        matches!(
            self,
            HookFileFormat::CopilotFlat | HookFileFormat::CursorFlat
        )
    }
}

/// Where and how `install` registers the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstallFacts {
    /// Directory holding the settings file in the project.
    pub config_dir: &'static str,
    /// Directory holding the user's settings in their home (`.copilot` where the project's is
    /// `.github`; else the same as `config_dir`).
    pub user_config_dir: &'static str,
    /// Environment variable that moves the user-level config directory, if the host has one.
    pub config_dir_env: Option<&'static str>,
    /// The settings file in the project's `config_dir`.
    pub project_file: &'static str,
    /// The per-user file in the project's `config_dir`, if the host has one.
    pub local_file: Option<&'static str>,
    /// The settings file in the user's config directory.
    pub user_file: &'static str,
    /// 1 where `timeout` is in seconds, 1000 where it is in milliseconds.
    pub timeout_scale: u64,
    /// Handlers carry a `name` the host shows and toggles them by (Gemini:
    /// `/hooks disable hookjournal`).
    pub named_handlers: bool,
    /// How the file lists a handler.
    pub format: HookFileFormat,
    /// What to do after installing.
    pub next_step: &'static str,
}

impl InstallFacts {
    /// The settings file for `scope`, given the project and the user's config directory (the
    /// home's `config_dir`, or where `config_dir_env` moves it); `None` when the host has no
    /// such scope or no user directory is given.
    pub fn settings_path(
        &self,
        scope: Scope,
        project: &Path,
        user_dir: Option<&Path>,
    ) -> Option<PathBuf> {
        match scope {
            Scope::Project => Some(project.join(self.config_dir).join(self.project_file)),
            Scope::Local => self
                .local_file
                .map(|f| project.join(self.config_dir).join(f)),
            Scope::User => user_dir.map(|d| d.join(self.user_file)),
        }
    }
}

/// What shows, in a hook process's environment, that this host runs it: every variable named is
/// set (and not empty). Only variables the host sets for its hook processes and not for the
/// programs its tools run count (those leak into any agent started from its shell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallerEvidence {
    /// The variables, all of them set.
    pub env: &'static [&'static str],
    /// Where that was established.
    pub measured: &'static str,
}

/// Gemini CLI sets it for its hooks; it only breaks a tie with Claude Code's payload shape.
const GEMINI_TIE_BREAK: &str = "GEMINI_SESSION_ID";
/// Claude Code's session variable: it leaks into every process Claude Code starts, so it only
/// counts against Gemini's tie-break.
const CLAUDE_SESSION: &str = "CLAUDE_CODE_SESSION_ID";

/// The variables of a hook process's environment that host detection reads (`names`), as the
/// CLI found them: set and not empty. Built by the CLI (`ingest::caller_env`), so detection
/// itself stays a function of its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallerEnv {
    set: Vec<&'static str>,
}

impl CallerEnv {
    /// Every variable detection reads: each known host's `caller` evidence, and the Gemini
    /// tie-break's two.
    pub fn names() -> impl Iterator<Item = &'static str> {
        KNOWN
            .into_iter()
            .filter_map(|h| h.facts().caller)
            .flat_map(|c| c.env.iter().copied())
            .chain([GEMINI_TIE_BREAK, CLAUDE_SESSION])
    }

    /// The environment as `is_set` says: whether a variable is set and not empty.
    pub fn read(is_set: impl Fn(&str) -> bool) -> CallerEnv {
        let mut set: Vec<&'static str> = Self::names().filter(|n| is_set(n)).collect();
        set.dedup();
        CallerEnv { set }
    }

    fn has(&self, name: &str) -> bool {
        self.set.contains(&name)
    }

    /// The known host (in table order) whose every `caller` variable is set: the host that runs
    /// this hook process.
    pub fn caller(&self) -> Option<Host> {
        KNOWN.into_iter().find(|h| {
            h.facts()
                .caller
                .is_some_and(|c| c.env.iter().all(|v| self.has(v)))
        })
    }

    /// A payload that looks like Claude Code's is Gemini CLI's: `GEMINI_SESSION_ID` is set and
    /// Claude Code's session variable is not.
    pub fn gemini_tie_break(&self) -> bool {
        self.has(GEMINI_TIE_BREAK) && !self.has(CLAUDE_SESSION)
    }
}

/// Everything hookjournal knows about one host.
#[derive(Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// The name envelopes store and `--host` takes (empty for `GENERIC`).
    pub name: &'static str,
    /// The product, as the docs name it.
    pub product: &'static str,
    /// The event names it sends, in registration order.
    pub events: &'static [HostEvent],
    /// The (canonical event, answer) pairs it honours; everything else is answered with nothing.
    pub answers: &'static [(EventKind, AnswerShape)],
    /// How it reads context.
    pub context: ContextForm,
    /// Whether a prompt event with an empty prompt is the host going on with the turn, not the
    /// user (Qwen Code fires UserPromptSubmit with `prompt:""` after every tool batch): it is
    /// recorded and never answered, and no prompt of the session.
    pub empty_prompt_continues_turn: bool,
    /// What shows in a hook's environment that this host runs it (checked before `--host`, see
    /// `event::detect_host`); `None`: nothing reliable.
    pub caller: Option<CallerEvidence>,
    /// Where the payload holds ids and paths.
    pub payload: PayloadFields,
    /// How a compaction shows.
    pub compaction: CompactionFacts,
    /// The file it keeps per session, and when the hook reads it.
    pub session_file: SessionFileFacts,
    /// What it wants before project hooks run.
    pub trust: Trust,
    /// How `install` registers the handler; `None`: not installed by hookjournal.
    pub install: Option<InstallFacts>,
}

impl HostFacts {
    /// The host's own event of this name.
    pub fn event(&self, name: &str) -> Option<&'static HostEvent> {
        self.events.iter().find(|e| e.name == name)
    }

    /// What an event name means on this host: its own name, else Claude Code's (read on every
    /// host); `None`: an unknown event (recorded as `Other`).
    pub fn meaning(&self, name: &str) -> Option<&'static HostEvent> {
        self.event(name).or_else(|| CLAUDE.event(name))
    }

    /// Whether `name` is this host's own and no event of Claude Code's (what host detection
    /// recognises it by).
    pub fn owns(&self, name: &str) -> bool {
        self.event(name).is_some() && CLAUDE.event(name).is_none()
    }

    /// Whether the host tells when a tool has run (an after-tool event of its own or Claude's);
    /// where it does not (Crush), its before-tool event is the call, counted there.
    pub fn sees_tool_results(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.kind, K::ToolPost | K::ToolFailure))
    }

    /// The events `install` registers, in order (none for a host it does not install for).
    pub fn registered(&self) -> impl Iterator<Item = (&'static HostEvent, Registration)> {
        let installed = self.install.is_some();
        self.events
            .iter()
            .filter(move |_| installed)
            .filter_map(|e| e.register.map(|r| (e, r)))
    }
}

const fn ev(name: &'static str, kind: EventKind, timeout_s: u64) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s,
            tool_matcher: false,
            event_arg: false,
        }),
    }
}

/// An event whose payload names no event: install puts its name on the command line.
const fn unnamed(name: &'static str, kind: EventKind, timeout_s: u64) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s,
            tool_matcher: false,
            event_arg: true,
        }),
    }
}

const fn tool(name: &'static str, kind: EventKind) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s: 10,
            tool_matcher: true,
            event_arg: false,
        }),
    }
}

/// An event hookjournal reads but does not register.
const fn seen(name: &'static str, kind: EventKind) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: None,
    }
}

const fn implied(name: &'static str, kind: EventKind, t: ImpliedTool) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: Some(t),
        register: None,
    }
}

use EventKind as K;

/// Claude Code's events. Never `WorktreeCreate` (its stdout must be a path) nor `MessageDisplay`
/// (fires per streamed chunk). SessionEnd shares a 1.5 s budget among all hooks: ours asks for 2
/// and finishes far inside it. Context-building events get 30 s (Claude's own UserPromptSubmit
/// default).
const CLAUDE_EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    ev("PostToolBatch", K::Other, 10),
    tool("PermissionRequest", K::Other),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("StopFailure", K::StopFailure, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("TaskCreated", K::TaskCreated, 10),
    ev("TaskCompleted", K::TaskCompleted, 10),
    ev("TeammateIdle", K::Other, 10),
    ev("InstructionsLoaded", K::Other, 10),
    ev("ConfigChange", K::Other, 10),
    ev("CwdChanged", K::Other, 10),
    ev("FileChanged", K::Other, 10),
    // In 2.1.197 and 2.1.330 alike.
    ev("UserPromptExpansion", K::Other, 10),
    ev("PermissionDenied", K::Other, 10),
    ev("Setup", K::Other, 10),
    ev("Elicitation", K::Other, 10),
    ev("ElicitationResult", K::Other, 10),
    ev("WorktreeRemove", K::Other, 10),
    // New in 2.1.330. The pinned 2.1.197 does not send them and runs every other hook all the
    // same when settings name them (measured: tests/claude_code.rs registers this table).
    ev("PreModelSwitch", K::Other, 10),
    ev("PostModelSwitch", K::Other, 10),
    ev("DirectoryAdded", K::Other, 10),
    seen("WorktreeCreate", K::Other),
    seen("MessageDisplay", K::Other),
];

/// Codex CLI's events (same shape as Claude's, seconds; SessionEnd has a 1 s budget of its own).
/// Older Codex versions ignore event names they do not know, so SessionEnd is safe to list.
/// `Interrupt` fires after a hook answered `continue:false`.
const CODEX_EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PermissionRequest", K::Other),
    tool("PostToolUse", K::ToolPost),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("Stop", K::Stop, 10),
    ev("Interrupt", K::Other, 10),
];

/// Gemini CLI's events (milliseconds). Not BeforeModel, AfterModel or BeforeToolSelection: they
/// fire on every model request (AfterModel on every streamed chunk), carry the whole
/// conversation, and the handler has nothing to record or answer there that the agent and tool
/// events do not give.
const GEMINI_EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("BeforeAgent", K::Prompt, 30),
    ev("AfterAgent", K::Stop, 10),
    tool("BeforeTool", K::ToolPre),
    tool("AfterTool", K::ToolPost),
    ev("PreCompress", K::PreCompact, 30),
    ev("Notification", K::Notification, 10),
    seen("BeforeModel", K::Other),
    seen("AfterModel", K::Other),
    seen("BeforeToolSelection", K::Other),
];

/// Cursor's events (camelCase, seconds). Cursor ignores a whole `.cursor/hooks.json` that names
/// one event it does not know, so install registers only names its hooks documentation lists
/// (the 20 of `cursor.com/docs/hooks`): the generic tool events, not the shell, file and MCP
/// ones besides them (each tool call would be counted twice), nor Tab or thought events.
const CURSOR_EVENTS: &[HostEvent] = &[
    ev("sessionStart", K::SessionStart, 30),
    ev("sessionEnd", K::SessionEnd, 10),
    ev("beforeSubmitPrompt", K::Prompt, 30),
    ev("preToolUse", K::ToolPre, 10),
    ev("postToolUse", K::ToolPost, 10),
    ev("postToolUseFailure", K::ToolFailure, 10),
    ev("subagentStart", K::SubagentStart, 10),
    ev("subagentStop", K::SubagentStop, 10),
    ev("preCompact", K::PreCompact, 30),
    ev("stop", K::Stop, 10),
    implied("beforeShellExecution", K::ToolPre, ImpliedTool::Shell),
    implied("afterShellExecution", K::ToolPost, ImpliedTool::Shell),
    implied("afterFileEdit", K::ToolPost, ImpliedTool::FileEdit),
    implied("beforeReadFile", K::ToolPre, ImpliedTool::FileRead),
    seen("afterAgentResponse", K::Other),
    seen("afterAgentThought", K::Other),
    seen("beforeMCPExecution", K::Other),
    seen("afterMCPExecution", K::Other),
];

/// GitHub Copilot CLI's events as its camelCase registrations name them (measured on 1.0.102,
/// `copilot -p`, all 15 fire): their payloads name no event, so install puts the name on the
/// command line (`hook --event NAME`), except `permissionRequest` (`hookName`) and
/// `notification` (`hook_event_name`). Its PascalCase registrations (and `.claude/settings.json`,
/// which it runs too) send Claude Code's names, read from Claude's table, plus the two here.
/// Timeouts in seconds (`timeoutSec`).
const COPILOT_EVENTS: &[HostEvent] = &[
    unnamed("sessionStart", K::SessionStart, 30),
    unnamed("sessionEnd", K::SessionEnd, 10),
    unnamed("userPromptSubmitted", K::Prompt, 30),
    unnamed("userPromptTransformed", K::Other, 10),
    unnamed("preToolUse", K::ToolPre, 10),
    ev("permissionRequest", K::Other, 10),
    unnamed("postToolUse", K::ToolPost, 10),
    unnamed("postToolUseFailure", K::ToolFailure, 10),
    unnamed("preCompact", K::PreCompact, 30),
    unnamed("agentStop", K::Stop, 10),
    unnamed("subagentStart", K::SubagentStart, 10),
    unnamed("subagentStop", K::SubagentStop, 10),
    unnamed("errorOccurred", K::StopFailure, 10),
    ev("notification", K::Notification, 10),
    unnamed("preMcpToolCall", K::Other, 10),
    seen("ErrorOccurred", K::StopFailure),
    seen("PreMcpToolCall", K::Other),
];

/// Context at session start, with a prompt and after a tool.
const CONTEXT: [(EventKind, AnswerShape); 3] = [
    (K::SessionStart, AnswerShape::Context),
    (K::Prompt, AnswerShape::Context),
    (K::ToolPost, AnswerShape::Context),
];

/// Claude Code: context; its summariser takes PreCompact's text; Stop can be blocked; a loop
/// agent is stopped at PreCompact (Claude Code 2.1.197 passes that JSON to the summariser as
/// text instead: the task release does not depend on it).
pub const CLAUDE: HostFacts = HostFacts {
    name: "claude",
    product: "Claude Code",
    events: CLAUDE_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::CompactionText),
        (K::PreCompact, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".claude",
        user_config_dir: ".claude",
        config_dir_env: Some("CLAUDE_CONFIG_DIR"),
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Claude Code here (hooks load at session start; /hooks lists them); \
                    check with `hookjournal status`.",
    }),
};

/// Codex CLI: context; Stop can be blocked (JSON or nothing, never plain text); it honours
/// `continue:false` (then fires `Interrupt`).
pub const CODEX: HostFacts = HostFacts {
    name: "codex",
    product: "Codex CLI",
    events: CODEX_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // Measured on 0.169.0 (`tests/codex_cli.rs`): PreCompact, the summary request, PostCompact,
    // then SessionStart `source: "compact"` whose context reaches the next request.
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: true,
    },
    session_file: SessionFileFacts {
        // Usage per request and the context; a subagent's own events name its own rollout,
        // whose usage is not the session's context.
        format: SessionFileFormat::CodexRollout,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: true,
        derived_path: None,
    },
    trust: Trust::TrustedHooks,
    install: Some(InstallFacts {
        config_dir: ".codex",
        user_config_dir: ".codex",
        config_dir_env: Some("CODEX_HOME"),
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Codex here (the hooks are trusted in its config.toml as /hooks would \
                    trust them; a project's hooks also need the project trusted); check with \
                    `hookjournal status`.",
    }),
};

/// Gemini CLI: context; no text at compaction, no blocked Stop. It ignores PreCompress's output
/// (0.61.0 does not read it) and honours `continue:false` at BeforeAgent, AfterTool and
/// AfterAgent: a loop agent is stopped there, after its compaction was found.
pub const GEMINI: HostFacts = HostFacts {
    name: "gemini",
    product: "Gemini CLI",
    events: GEMINI_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::Prompt, AnswerShape::StopAgent),
        (K::ToolPost, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::StopAgent),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("PreCompress"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: true,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        // Usage, context and the compressions that happened. PreCompress fires before every
        // model request, AfterTool too: a compression (written before the request that follows
        // it) is found at the next tool's end.
        format: SessionFileFormat::GeminiChat,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd, K::ToolPost],
        read_while_compacting: &[],
        main_agent_only: false,
        path_from_session: false,
        read_scale: 4,
        subagent_files: true,
        derived_path: None,
    },
    trust: Trust::TrustedFolder,
    install: Some(InstallFacts {
        config_dir: ".gemini",
        user_config_dir: ".gemini",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1000,
        named_handlers: true,
        format: HookFileFormat::Grouped,
        next_step: "Gemini CLI runs project hooks only in a trusted folder: trust this folder when \
                    it asks (or with /permissions; it is recorded in ~/.gemini/trustedFolders.json). \
                    In an untrusted folder, headless runs (`gemini -p`) included, no project hook \
                    runs. Then start Gemini CLI here (/hooks lists the hooks); check with \
                    `hookjournal status`.",
    }),
};

/// Cursor: recorded, never answered (hookjournal gives it no context). A handler registered
/// for Claude Code that Cursor runs (it loads `.claude/settings*.json` when third-party hooks
/// are on) is told apart by `CURSOR_VERSION` (Cursor's hooks documentation; not measured here).
pub const CURSOR: HostFacts = HostFacts {
    name: "cursor",
    product: "Cursor",
    events: CURSOR_EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["CURSOR_VERSION"],
        measured: "Cursor's hooks documentation (every hook process gets CURSOR_VERSION); not measured here",
    }),
    payload: PayloadFields {
        session_id: "conversation_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd", "workspace_roots"],
    },
    compaction: CompactionFacts {
        before: Some("preCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".cursor",
        user_config_dir: ".cursor",
        config_dir_env: None,
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::CursorFlat,
        next_step: "start a new Cursor agent chat here (Cursor reads .cursor/hooks.json for each \
                    session; its Hooks settings list them); check with `hookjournal status`.",
    }),
};

/// GitHub Copilot CLI (measured on 1.0.102, `tests/copilot_cli.rs`): context as a flat
/// `additionalContext` at sessionStart (its own user message), userPromptSubmitted (appended
/// to the prompt) and postToolUse (appended to the tool result); a blocked agentStop starts a
/// new turn with the reason. Neither `continue:false` (prompt, tool, preCompact) nor any
/// answer to preCompact changes anything, and no hook follows a compaction: the restore goes
/// with the next prompt or tool result after its session file shows the compaction. A notification is never answered: its context starts
/// a new turn, and in `-p` mode every turn notifies again.
pub const COPILOT: HostFacts = HostFacts {
    name: "copilot",
    product: "Copilot CLI",
    events: COPILOT_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Flat,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["COPILOT_CLI", "COPILOT_PROJECT_DIR"],
        measured: "Copilot CLI 1.0.102 sets COPILOT_CLI=1 and COPILOT_PROJECT_DIR for every hook \
                   process (.github/hooks, ~/.copilot/hooks, .claude/settings.json); the programs \
                   its shell tool runs get COPILOT_CLI without COPILOT_PROJECT_DIR",
    }),
    payload: PayloadFields {
        session_id: "sessionId",
        agent_id: Some("agentId"),
        transcript_path: Some("transcriptPath"),
        cwd: &["cwd"],
    },
    // Its compaction runs while the turn goes on and ends in `session.compaction_complete` in
    // its session file, read at agentStop, preCompact, sessionEnd, and at prompts and tool
    // results while one announced is not there yet: counted at preCompact, or there when no
    // preCompact announced it. The restore goes with the next prompt or tool result after
    // preCompact: it lands after the compaction's summary (measured).
    compaction: CompactionFacts {
        before: Some("preCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        // Usage per model call, the context and the compactions (its sessionEnd names no file:
        // the session's own). A subagent's agentStop names its parent's file. A compaction ends
        // after its preCompact while the turn goes on: until the file shows it, prompts and tool
        // results read the file too (to restore after it).
        format: SessionFileFormat::CopilotEvents,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[K::Prompt, K::ToolPost],
        main_agent_only: true,
        path_from_session: true,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    trust: Trust::TrustedFolder,
    install: Some(InstallFacts {
        config_dir: ".github",
        user_config_dir: ".copilot",
        config_dir_env: Some("COPILOT_HOME"),
        project_file: "hooks/hookjournal.json",
        local_file: None,
        user_file: "hooks/hookjournal.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::CopilotFlat,
        next_step: "start Copilot CLI here (`copilot`, or `copilot -p …`); check with \
                    `hookjournal status`.",
    }),
};

/// Qwen Code's events: the 22 names of 0.24.4's `HookEventName` (it skips any other name as
/// invalid), Claude Code's where they are Claude's, in its settings' shape, timeouts in seconds.
/// Never `MessageDisplay`: it fires again and again while a reply streams (its bundle: "called
/// repeatedly as the assistant's reply streams"). SessionEnd fires only at `/clear` headless;
/// PermissionRequest and PermissionDenied never in `-p` (a headless agent is not offered the
/// tools that ask); TodoCreated and TodoCompleted fire twice per todo (`phase` validation, then
/// postWrite).
const QWEN_EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    ev("UserPromptExpansion", K::Other, 10),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    ev("PostToolBatch", K::Other, 10),
    tool("PermissionRequest", K::Other),
    ev("PermissionDenied", K::Other, 10),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("StopFailure", K::StopFailure, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("SessionDelete", K::Other, 10),
    ev("TodoCreated", K::Other, 10),
    ev("TodoCompleted", K::Other, 10),
    ev("InstructionsLoaded", K::Other, 10),
    seen("MessageDisplay", K::Other),
];

/// Qwen Code (0.24.4 measured; `tests/fixtures/real-hosts/qwen-0.24.4/FACTS.md`): Claude Code's
/// event names and snake_case fields plus Gemini's top-level `timestamp`, hooks in
/// `.qwen/settings.json`. It reads Claude's nested context only (the flat one is ignored): at
/// SessionStart into the system prompt, with a prompt, after a tool, and at PreCompact into the
/// compression prompt ("Additional Instructions"); a blocked Stop goes on with the reason as the
/// prompt. It ignores `continue:false` (at PreCompact and after a tool alike, measured), so a loop
/// agent's task is released at a compaction but the agent is not stopped. Recognised by its hooks' environment, so a Qwen payload is never taken for Gemini's.
pub const QWEN: HostFacts = HostFacts {
    name: "qwen",
    product: "Qwen Code",
    events: QWEN_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::Context),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: true,
    caller: Some(CallerEvidence {
        env: &["QWEN_CODE_CLI", "QWEN_PROJECT_DIR"],
        measured:
            "Qwen Code 0.24.4 sets QWEN_CODE_CLI and QWEN_PROJECT_DIR for every hook process; \
                   the programs its shell tool runs get QWEN_CODE_CLI (and QWEN_CODE_SESSION_ID) \
                   without QWEN_PROJECT_DIR",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // PreCompact fires only for a compression that runs (manual `/compress` or auto), then
    // PostCompact and SessionStart `compact`: its answer replaces the startup one in the system
    // prompt from the second request after the compression on (measured: tests/qwen_code.rs).
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // Usage per response of the main agent and the context (a subagent's requests are not
    // written there; its SubagentStop names the parent's file). The turn's last response is
    // written behind the Stop hook: `follow-session` reads it once it is there.
    session_file: SessionFileFacts {
        format: SessionFileFormat::QwenChat,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    // Folder trust is off by default: project hooks load in any folder. Where a user turned it
    // on (`security.folderTrust.enabled`), an untrusted folder's hooks are skipped silently.
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".qwen",
        user_config_dir: ".qwen",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Qwen Code here (it reads .qwen/settings.json of the folder it starts \
                    in, not of the repository's root); check with `hookjournal status`.",
    }),
};

/// OpenClaw's plugin hooks, as its shim plugin forwards them (`{"hook_event_name", "host_time",
/// "event", "ctx"}`; see `openclaw`). Not `llm_input` (the whole prompt and history, every model
/// call), nor message, gateway or subagent hooks. `before_message_write` and
/// `tool_result_persist` carry only the `sessionKey` (resolved to the session at ingestion).
/// Timeouts are the shim's per-handler budgets; `before_tool_call` fails closed on a timeout.
const OPENCLAW_EVENTS: &[HostEvent] = &[
    ev("session_start", K::SessionStart, 30),
    ev("session_end", K::SessionEnd, 10),
    ev("before_reset", K::Other, 10),
    ev("before_prompt_build", K::Prompt, 30),
    ev("before_agent_run", K::Other, 10),
    ev("before_tool_call", K::ToolPre, 10),
    ev("after_tool_call", K::ToolPost, 10),
    ev("tool_result_persist", K::Other, 10),
    ev("before_message_write", K::Other, 10),
    ev("before_agent_finalize", K::Stop, 10),
    ev("agent_end", K::Other, 10),
    ev("llm_output", K::Other, 10),
    ev("before_compaction", K::PreCompact, 30),
    ev("after_compaction", K::PostCompact, 10),
    seen("llm_input", K::Other),
];

/// OpenClaw: its session and compaction hooks are observe-only, so what Claude Code gets at
/// SessionStart (restore, startup tasks) reaches the model at the next `before_prompt_build`
/// (`prependContext`), with the pressure notice and task reminders; an emergency Stop is a
/// `before_agent_finalize` revision. Nothing can stop it at a compaction (see docs/hooks.md).
pub const OPENCLAW: HostFacts = HostFacts {
    name: "openclaw",
    product: "OpenClaw",
    events: OPENCLAW_EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "ctx.sessionId",
        agent_id: None,
        transcript_path: None,
        cwd: &["ctx.workspaceDir", "event.cwd"],
    },
    compaction: CompactionFacts {
        before: Some("before_compaction"),
        after: Some("after_compaction"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".openclaw",
        user_config_dir: ".openclaw",
        config_dir_env: Some("OPENCLAW_STATE_DIR"),
        project_file: "openclaw.json",
        local_file: None,
        user_file: "openclaw.json",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "restart the OpenClaw gateway (`openclaw gateway run`) so it loads the \
                    hookjournal plugin; check with `hookjournal status`.",
    }),
};

/// OpenCode's plugin hooks and bus events, as its shim plugin forwards them
/// (`{"hook_event_name", "host_time", "directory", "input", "output"}` for a hook, `"event"` for
/// a bus event; see `opencode`). Not the chatty ones: `message.part.*` (every streamed delta and
/// part state), `session.status`/`updated`/`diff`, `chat.params`/`headers`, `tool.definition`,
/// the `experimental.chat.*` transforms (every request, the title request included);
/// `message.updated` only for a completed assistant message (its tokens and cost). Timeouts are
/// the shim's per-call budgets (a hung hookjournal is killed, and OpenCode goes on).
const OPENCODE_EVENTS: &[HostEvent] = &[
    ev("session.created", K::SessionStart, 10),
    ev("chat.message", K::Prompt, 30),
    ev("command.execute.before", K::Other, 10),
    ev("tool.execute.before", K::ToolPre, 10),
    ev("tool.execute.after", K::ToolPost, 10),
    ev("message.updated", K::Other, 10),
    ev("todo.updated", K::Other, 10),
    ev("permission.asked", K::Other, 10),
    ev("permission.replied", K::Other, 10),
    ev("command.executed", K::Other, 10),
    ev("experimental.session.compacting", K::PreCompact, 30),
    ev("session.compacted", K::PostCompact, 10),
    ev("session.idle", K::Stop, 10),
    ev("session.error", K::StopFailure, 10),
    ev("session.deleted", K::SessionEnd, 10),
];

/// OpenCode (1.18.33 measured; `tests/fixtures/real-hosts/opencode-1.18.33/FACTS.md`): in-process
/// plugins, no shell hooks, so `install` writes a shim plugin that forwards each hook to
/// `hookjournal hook --host opencode` and applies the answer by mutating the hook's `output`:
/// context appended to the prompt's last text part (`chat.message`), to the tool's output
/// (`tool.execute.after`), and to the compaction prompt (`experimental.session.compacting`'s
/// `context`). Its bus events only observe: a session start's text (startup tasks, a restore)
/// rides on the next prompt, nothing can block its idle, and nothing stops a loop agent.
pub const OPENCODE: HostFacts = HostFacts {
    name: "opencode",
    product: "OpenCode",
    events: OPENCODE_EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::ToolPost, AnswerShape::Context),
        (K::PreCompact, AnswerShape::Context),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "input.sessionID",
        agent_id: None,
        transcript_path: None,
        cwd: &["directory"],
    },
    compaction: CompactionFacts {
        before: Some("experimental.session.compacting"),
        after: Some("session.compacted"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // No file is read: its usage arrives with its completed assistant messages, and its session
    // database is never read (the shim names no transcript).
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".opencode",
        user_config_dir: ".config/opencode",
        config_dir_env: None,
        project_file: "plugins/hookjournal.js",
        local_file: None,
        user_file: "plugins/hookjournal.js",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start OpenCode here (`opencode`, or `opencode run …`; it loads plugins at its \
                    start); check with `hookjournal status`.",
    }),
};

/// Crush's events: the one its hook runner fires (`hooks.EventPreToolUse`, before every tool
/// call of the top-level agent; a subagent's own calls fire none). Registered without a matcher
/// (every tool). Claude Code's names are read too (`HostFacts::meaning`), should a later build
/// send them.
const CRUSH_EVENTS: &[HostEvent] = &[ev("PreToolUse", K::ToolPre, 10)];

/// Crush (`@charmland/crush` 0.96.1 pinned; not run here: its npm package downloads the binary
/// from the project's release page at install, which this machine cannot reach; the facts are
/// read from its source, `tests/fixtures/real-hosts/crush-0.96.1/FACTS.md`). Shell hooks in
/// `crush.json` (`{"hooks":{"PreToolUse":[{"name","matcher","command","timeout"}]}}`, timeouts in
/// seconds); the payload is `{"event","session_id","cwd","tool_name","tool_input"}` (its event
/// name in `event`, not `hook_event_name`), with `CRUSH_EVENT`, `CRUSH_SESSION_ID`, `CRUSH_CWD`,
/// `CRUSH_PROJECT_DIR` and `CRUSH_TOOL_*` in the environment. Its answer envelope's `context` is
/// appended to the tool's result, so reminders ride on the next tool call. No prompt, stop,
/// session or compaction event: no restore after a compaction, no pressure notice (no usage
/// reaches a hook; its usage is in its SQLite `.crush/crush.db`, which hookjournal does not
/// read), no blocked stop, no stopped loop agent.
pub const CRUSH: HostFacts = HostFacts {
    name: "crush",
    product: "Crush",
    events: CRUSH_EVENTS,
    answers: &[(K::ToolPre, AnswerShape::Context)],
    context: ContextForm::Envelope,
    empty_prompt_continues_turn: false,
    // Its hook runner adds them to every hook process; its bash tool gives the programs it runs
    // only `CRUSH=1`, `AGENT=crush`, `AI_AGENT=crush`.
    caller: Some(CallerEvidence {
        env: &["CRUSH_EVENT", "CRUSH_PROJECT_DIR"],
        measured:
            "Crush's source (internal/hooks/input.go BuildEnv, internal/shell CrushEnvMarkers \
                   at 37f36e9, after v0.90.0): every hook process gets CRUSH_EVENT and \
                   CRUSH_PROJECT_DIR, its bash tool's programs neither; not measured here",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // No file is read: its sessions and usage are in SQLite (`.crush/crush.db`), and its payload
    // names no transcript.
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: "",
        user_config_dir: ".config/crush",
        config_dir_env: Some("CRUSH_GLOBAL_CONFIG"),
        project_file: "crush.json",
        local_file: None,
        user_file: "crush.json",
        timeout_scale: 1,
        named_handlers: true,
        format: HookFileFormat::CrushFlat,
        next_step: "start Crush here (`crush`, or `crush run …`; it reads crush.json and \
                    .crush.json from here up to the repository's root at its start); check with \
                    `hookjournal status`.",
    }),
};

/// pi's extension events, as its shim extension forwards them (`{"host":"pi",
/// "hook_event_name", "host_time", "cwd", "session_id", "session_file", "context_usage",
/// "event"}`; see `pi`). Not the chatty ones: `context` and `before_provider_request` (every
/// model request), `message_*` and `tool_execution_*` (every streamed message and tool state),
/// `turn_start`, `agent_start`, `input` (the prompt again, before its expansion). Timeouts are the
/// shim's per-call budgets (a hung hookjournal is killed, and pi goes on).
const PI_EVENTS: &[HostEvent] = &[
    ev("session_start", K::SessionStart, 10),
    ev("before_agent_start", K::Prompt, 30),
    ev("tool_call", K::ToolPre, 10),
    ev("tool_result", K::ToolPost, 10),
    ev("turn_end", K::Other, 10),
    ev("agent_end", K::Stop, 10),
    ev("session_before_compact", K::PreCompact, 30),
    ev("session_compact", K::PostCompact, 10),
    ev("session_shutdown", K::SessionEnd, 10),
];

/// pi (0.73.1 measured; `tests/fixtures/real-hosts/pi-0.73.1/FACTS.md`): in-process extensions,
/// no shell hooks, so `install` writes a shim extension that forwards each event to `hookjournal
/// hook --host pi` and applies the answer as the handler's return value: context becomes a
/// message of the prompt (`before_agent_start`'s `message`, stored in the session and sent to
/// the model) or is appended to the tool's result (`tool_result`'s `content`). Its session and
/// compaction events take no context (`session_before_compact` can only cancel the compaction
/// or replace its summary whole): a restore rides on the next prompt, which pi starts right
/// after it compacts. `agent_end` cannot be blocked, and nothing stops a loop agent.
pub const PI: HostFacts = HostFacts {
    name: "pi",
    product: "pi",
    events: PI_EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::ToolPost, AnswerShape::Context),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    // `PI_CODING_AGENT=true` is set for pi's whole process, so every tool's process has it too.
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("session_before_compact"),
        after: Some("session_compact"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // No file is read: usage arrives with `turn_end`; the session file
    // (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`) is named in every payload.
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".pi",
        user_config_dir: ".pi/agent",
        config_dir_env: Some("PI_CODING_AGENT_DIR"),
        project_file: "extensions/hookjournal.ts",
        local_file: None,
        user_file: "extensions/hookjournal.ts",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start pi here (`pi`, or `pi -p …`; it loads extensions at its start); check \
                    with `hookjournal status`.",
    }),
};

/// Factory Droid's events: the 9 names of 0.225's hook schema, Claude Code's all of them, in its
/// settings' shape, timeouts in seconds (default 60). Measured on 0.225.2 (`droid exec`):
/// UserPromptSubmit fires only where a prompt is submitted through its JSON-RPC session
/// (`--input-format stream-jsonrpc`, what its SDK and IDE clients use), not for `droid exec
/// PROMPT`; PostToolUse not for a tool that failed; PreCompact only for a compaction asked for
/// (`droid.compact_session`, `/compress`), none for one its token threshold starts.
const DROID_EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
];

/// Factory Droid (`@factory/cli` 0.225.1, whose binary package is 0.225.2, measured;
/// `tests/fixtures/real-hosts/droid-0.225.1/FACTS.md`): Claude Code's event names, payloads and
/// nested answers, hooks in `.factory/settings.json`. It reads the nested context at
/// SessionStart, with a prompt and after a tool (each reaches the next model request), and a
/// blocked Stop goes on with the reason; context at PreCompact reaches nothing. `continue:false`
/// after a tool ends the turn (measured), so a loop agent whose compaction was announced or found
/// is stopped at its next tool result. No hook follows a compaction: the restore goes with the
/// next prompt or tool result after PreCompact, or after its session file shows a compaction its
/// threshold started. Told from Claude Code by its hooks' environment.
pub const DROID: HostFacts = HostFacts {
    name: "droid",
    product: "Factory Droid",
    events: DROID_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::ToolPost, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"],
        measured: "Factory Droid 0.225.2 sets DROID_PROJECT_DIR and FACTORY_PROJECT_DIR (and \
                   CLAUDE_PROJECT_DIR, proving nothing) for every hook process; the programs its \
                   Execute tool runs get neither",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // A compaction asked for: SessionStart `resume`, PreCompact (`trigger` says `auto` unless
    // instructions were given), the summary request; the session goes on under the same id. One
    // its threshold starts fires nothing and shows as a `compaction_state` line in the session
    // file (a compaction asked for writes its line in a new session file, not this one).
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    // Its compactions and the session's token totals (summary requests included), read at the
    // end of a turn, before a compaction, at the session's end and after each tool (a threshold
    // compaction can happen mid-turn, while a tool runs: the restore then goes with the first
    // tool result after its line is written).
    session_file: SessionFileFacts {
        format: SessionFileFormat::DroidSession,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd, K::ToolPost],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    // Project hooks load with no trust step (measured in a fresh home).
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".factory",
        user_config_dir: ".factory",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Droid here (`droid`, or `droid exec …`; it reads .factory/settings.json \
                    at its start); check with `hookjournal status`.",
    }),
};

/// Cline CLI's hooks, by the `hookName` its payloads carry; install writes the hook file each is
/// run from (`hook_file`). Not its PreCompact file: 3.0.65 maps it to no event and never runs it.
/// Timeouts are Cline's own (30 s for every hook); the registration's is not written anywhere.
const CLINE_EVENTS: &[HostEvent] = &[
    ev("agent_start", K::SessionStart, 30),
    ev("agent_resume", K::SessionStart, 30),
    ev("prompt_submit", K::Prompt, 30),
    ev("tool_call", K::ToolPre, 30),
    ev("tool_result", K::ToolPost, 30),
    ev("agent_end", K::Stop, 30),
    ev("agent_abort", K::Other, 30),
    ev("agent_error", K::StopFailure, 30),
    ev("session_shutdown", K::SessionEnd, 30),
];

/// The file Cline CLI runs for one of its events (`HOOK_CONFIG_FILE_EVENT_MAP` of 3.0.65).
pub fn cline_hook_file(event: &str) -> Option<&'static str> {
    Some(match event {
        "agent_start" => "TaskStart",
        "agent_resume" => "TaskResume",
        "prompt_submit" => "UserPromptSubmit",
        "tool_call" => "PreToolUse",
        "tool_result" => "PostToolUse",
        "agent_end" => "TaskComplete",
        "agent_abort" => "TaskCancel",
        "agent_error" => "TaskError",
        "session_shutdown" => "SessionShutdown",
        _ => return None,
    })
}

/// Cline CLI (3.0.65 measured; `tests/fixtures/real-hosts/cline-3.0.65/FACTS.md`): one executable
/// per event, its payload on stdin, `{"cancel","contextModification","errorMessage"}` on stdout.
/// `contextModification` reaches the model after a tool (PreToolUse's and PostToolUse's go into
/// the next request; hookjournal answers at PostToolUse). Its run-start hooks are fire-and-forget
/// (their answer is dropped), no hook announces a compaction (the PreCompact file is never run),
/// and nothing can block its end or stop it at a compaction (see docs/hooks.md).
pub const CLINE: HostFacts = HostFacts {
    name: "cline",
    product: "Cline CLI",
    events: CLINE_EVENTS,
    answers: &[(K::ToolPost, AnswerShape::Context)],
    context: ContextForm::Modification,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["CLINE_BUILD_ENV", "CLINE_CONNECTOR_CLI_LAUNCH"],
        measured: "Cline CLI 3.0.65 sets CLINE_BUILD_ENV and CLINE_CONNECTOR_CLI_LAUNCH for every \
                   hook process; the programs its run_commands tool runs get \
                   CLINE_CONNECTOR_CLI_LAUNCH without CLINE_BUILD_ENV",
    }),
    payload: PayloadFields {
        session_id: "sessionContext.rootSessionId",
        agent_id: Some("agent_id"),
        transcript_path: None,
        cwd: &["workspaceInfo.rootPath", "workspaceRoots"],
    },
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // Usage per response of the lead agent and the context, in
    // `~/.cline/data/sessions/<id>/<id>.messages.json` (a `spawn_agent` subagent's in
    // `<id>/<agent id>.messages.json` beside it), which no payload names: found from the
    // hook's environment as the CLI finds it, read whole at the run's end (every response is
    // there by then) and at shutdown: not after each tool, where parsing the whole growing file
    // would cost every tool call (the context for the pressure notice is the last run's).
    session_file: SessionFileFacts {
        format: SessionFileFormat::ClineMessages,
        read_at: &[K::Stop, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[
                ("CLINE_SESSION_DATA_DIR", ""),
                ("CLINE_DATA_DIR", "sessions"),
                ("CLINE_DIR", "data/sessions"),
                ("HOME", ".cline/data/sessions"),
            ],
            file: "{session}/{session}.messages.json",
            subagent_file: Some("{session}/{agent}.messages.json"),
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".clinerules",
        user_config_dir: ".cline",
        config_dir_env: Some("CLINE_DIR"),
        project_file: "hooks",
        local_file: None,
        user_file: "hooks",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::ScriptPerEvent,
        next_step: "start Cline here (`cline \"…\"`; it finds the hook files at each run); check \
                    with `hookjournal status`.",
    }),
};

/// Whether this host restores at the next prompt instead of at SessionStart (it takes context
/// with a prompt, not when a session starts).
pub fn restores_at_prompt(host: &Host) -> bool {
    host.answers(K::Prompt, AnswerShape::Context)
        && !host.answers(K::SessionStart, AnswerShape::Context)
}

/// A host hookjournal does not know (`Host::Other`): Claude Code's event names, context answers
/// and a loop agent's stop; nothing that needs host-specific support (text at compaction, a
/// blocked Stop).
pub const GENERIC: HostFacts = HostFacts {
    name: "",
    product: "an unknown host",
    events: CLAUDE_EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::StopAgent),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: CLAUDE_TRANSCRIPT,
    trust: Trust::Unverified,
    install: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_kept() {
        for h in KNOWN {
            assert_eq!(Host::from_name(h.as_str()), h);
            assert_eq!(h.as_str().parse::<Host>(), Ok(h.clone()));
            assert_eq!(h.to_string(), h.facts().name);
        }
        assert_eq!(Host::from_name("auto"), Host::Other("auto".into()));
        assert_eq!(Host::from_name("Claude").as_str(), "Claude");
        assert_eq!(
            "cli".parse::<Host>(),
            Err(UnknownHost("cli".into())),
            "FromStr is strict"
        );
    }

    #[test]
    fn every_event_name_is_listed_once_per_host() {
        for f in [
            &CLAUDE, &CODEX, &GEMINI, &COPILOT, &CURSOR, &OPENCLAW, &QWEN, &OPENCODE, &CRUSH, &PI,
            &DROID, &CLINE,
        ] {
            for e in f.events {
                assert_eq!(f.events.iter().filter(|x| x.name == e.name).count(), 1);
            }
            // A host's own name never means something else under Claude's name.
            for e in f.events {
                if let Some(c) = CLAUDE.event(e.name) {
                    assert_eq!(c.kind, e.kind, "{} {}", f.name, e.name);
                }
            }
        }
    }

    #[test]
    fn install_paths_per_scope() {
        let p = Path::new("/p");
        let home = Path::new("/h/.claude");
        let c = CLAUDE.install.unwrap();
        assert_eq!(
            c.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.claude/settings.json"))
        );
        assert_eq!(
            c.settings_path(Scope::Local, p, None),
            Some(PathBuf::from("/p/.claude/settings.local.json"))
        );
        assert_eq!(
            c.settings_path(Scope::User, p, Some(home)),
            Some(PathBuf::from("/h/.claude/settings.json"))
        );
        let x = CODEX.install.unwrap();
        assert_eq!(x.settings_path(Scope::Local, p, None), None);
        assert_eq!(
            x.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.codex/hooks.json"))
        );
        let q = QWEN.install.unwrap();
        assert_eq!(
            q.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.qwen/settings.json"))
        );
        assert_eq!(
            q.settings_path(Scope::User, p, Some(Path::new("/h/.qwen"))),
            Some(PathBuf::from("/h/.qwen/settings.json"))
        );
        assert_eq!(q.settings_path(Scope::Local, p, None), None);
        assert_eq!(QWEN.registered().count(), 21);
        let k = CRUSH.install.unwrap();
        assert_eq!(
            k.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/crush.json"))
        );
        assert_eq!(
            k.settings_path(Scope::User, p, Some(Path::new("/h/.config/crush"))),
            Some(PathBuf::from("/h/.config/crush/crush.json"))
        );
        assert_eq!(k.settings_path(Scope::Local, p, None), None);
        assert_eq!(CRUSH.registered().count(), 1);
        let d = DROID.install.unwrap();
        assert_eq!(
            d.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.factory/settings.json"))
        );
        assert_eq!(
            d.settings_path(Scope::User, p, Some(Path::new("/h/.factory"))),
            Some(PathBuf::from("/h/.factory/settings.json"))
        );
        assert_eq!(d.settings_path(Scope::Local, p, None), None);
        assert_eq!(DROID.registered().count(), 9);
        let g = COPILOT.install.unwrap();
        assert_eq!(
            g.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.github/hooks/hookjournal.json"))
        );
        assert_eq!(
            g.settings_path(Scope::User, p, Some(Path::new("/h/.copilot"))),
            Some(PathBuf::from("/h/.copilot/hooks/hookjournal.json"))
        );
    }

    #[test]
    fn the_environment_names_the_caller_only_with_all_its_variables() {
        let env = |vars: &[&str]| CallerEnv::read(|n| vars.contains(&n));
        assert_eq!(env(&[]).caller(), None);
        // Copilot's shell tool gives the programs it runs COPILOT_CLI alone.
        assert_eq!(env(&["COPILOT_CLI"]).caller(), None);
        assert_eq!(
            env(&[
                "COPILOT_CLI",
                "COPILOT_PROJECT_DIR",
                "CLAUDE_CODE_SESSION_ID"
            ])
            .caller(),
            Some(Host::Copilot)
        );
        assert_eq!(env(&["QWEN_CODE_CLI"]).caller(), None);
        assert_eq!(
            env(&["QWEN_CODE_CLI", "QWEN_PROJECT_DIR"]).caller(),
            Some(Host::Qwen)
        );
        // Droid's Execute tool gives the programs it runs neither of its two.
        assert_eq!(
            env(&["CLAUDE_PROJECT_DIR", "DROID_PROJECT_DIR"]).caller(),
            None
        );
        assert_eq!(
            env(&["DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"]).caller(),
            Some(Host::Droid)
        );
        assert_eq!(env(&["CURSOR_VERSION"]).caller(), Some(Host::Cursor));
        // Crush's bash tool gives its programs none of its hook variables.
        assert_eq!(env(&["CRUSH_EVENT"]).caller(), None);
        assert_eq!(
            env(&["CRUSH_EVENT", "CRUSH_PROJECT_DIR"]).caller(),
            Some(Host::Crush)
        );
        assert!(env(&["GEMINI_SESSION_ID"]).gemini_tie_break());
        assert!(!env(&["GEMINI_SESSION_ID", "CLAUDE_CODE_SESSION_ID"]).gemini_tie_break());
    }
}
