//! The Letta Code adapter. Letta Code 0.32.18 sends a payload of its own on stdin (one JSON
//! object, no trailing newline): `event_type` (the event's name), `working_directory`,
//! `agent_id` and, at the tool events, `tool_name`, `tool_input`, `tool_call_id` (the model's
//! id), PostToolUse's `tool_result{status: "success"|"error", output}`, PostToolUseFailure's
//! `error_message` and `error_type`; no `hook_event_name`, no `session_id`, no `cwd`, no
//! `transcript_path`. The interactive events add `prompt` (UserPromptSubmit), `conversation_id`
//! (all but the tool events), `is_new_session` (SessionStart), `subagent_id` (SubagentStop).
//! Measured; `tests/fixtures/real-hosts/letta-code-0.32.18/FACTS.md`.
//!
//! **The session is the agent** (`agent_id`): it is the only id every payload carries (the
//! tool events, the only ones `letta -p` fires, carry no conversation id, and Letta removes
//! `LETTA_CONVERSATION_ID` from the hook's environment). A headless run creates a new agent, so
//! one run is one session; in the TUI, conversations of one agent are one session (a
//! `conversation_id` taken where it is sent would split a conversation's tool events from its
//! prompts).

use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde::Deserialize;
use serde_json::Value;

/// The payload's keys, each taken only when it has the type Letta sends.
#[derive(Deserialize)]
struct Payload {
    event_type: Option<Value>,
    /// A hand-written payload's name.
    hook_event_name: Option<Value>,
    working_directory: Option<Value>,
    cwd: Option<Value>,
    agent_id: Option<Value>,
    tool_name: Option<Value>,
    tool_input: Option<Value>,
    tool_call_id: Option<Value>,
    tool_result: Option<Value>,
    error_message: Option<Value>,
    prompt: Option<Value>,
    is_new_session: Option<Value>,
    assistant_message: Option<Value>,
    subagent_id: Option<Value>,
    subagent_type: Option<Value>,
    message: Option<Value>,
    level: Option<Value>,
    trigger: Option<Value>,
}

/// A non-empty string value.
fn st(v: &Option<Value>) -> Option<String> {
    v.as_ref()
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses a Letta Code payload; `None` when it is no JSON object naming its event
/// (`event_type`, or `hook_event_name` in a hand-written one).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let p: Payload = serde_json::from_slice(bytes).ok()?;
    let name = st(&p.event_type).or_else(|| st(&p.hook_event_name))?;
    let kind = super::LETTA.event(&name).map(|e| e.kind);
    let meaning = canonical(kind, &p);
    Some(HookEvent {
        session_id: st(&p.agent_id),
        cwd: st(&p.working_directory).or_else(|| st(&p.cwd)),
        tool_call_id: st(&p.tool_call_id),
        ..HookEvent::new(name, Host::Letta, meaning)
    })
}

/// What a Letta event means, with its fields.
fn canonical(kind: Option<EventKind>, p: &Payload) -> Canonical {
    let tool = || st(&p.tool_name).unwrap_or_default();
    let input = || p.tool_input.clone().filter(|v| !v.is_null());
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: match p.is_new_session.as_ref().and_then(Value::as_bool) {
                Some(false) => "resume".into(),
                _ => "startup".into(),
            },
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: "other".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(&p.prompt).unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        // A failed tool fires PostToolUse (its `tool_result.status` "error") and then
        // PostToolUseFailure: the first stays the call's result (its status in the response),
        // the second is its failure, so a failure is counted once.
        Some(EventKind::ToolPost) => Canonical::ToolPost {
            tool: tool(),
            input: input(),
            response: p.tool_result.clone().filter(|v| !v.is_null()),
        },
        Some(EventKind::ToolFailure) => Canonical::ToolFailure {
            tool: tool(),
            input: input(),
            error: st(&p.error_message).unwrap_or_default(),
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: st(&p.assistant_message),
        },
        Some(EventKind::SubagentStop) => Canonical::SubagentStop {
            agent_id: st(&p.subagent_id).unwrap_or_default(),
            agent_type: st(&p.subagent_type),
            transcript: None,
            last_message: None,
        },
        Some(EventKind::Notification) => Canonical::Notification {
            kind: st(&p.level).unwrap_or_default(),
            title: None,
            message: st(&p.message).unwrap_or_default(),
        },
        // `context_length`, `max_context_length`; no trigger in 0.32.18's bundle.
        Some(EventKind::PreCompact) => Canonical::PreCompact {
            trigger: st(&p.trigger).unwrap_or_else(|| "auto".into()),
            instructions: None,
        },
        _ => Canonical::Other,
    }
}
