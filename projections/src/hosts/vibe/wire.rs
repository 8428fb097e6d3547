//! The Mistral Vibe adapter. Vibe 3.0.3 sends a payload of its own on stdin (one JSON object,
//! no trailing newline): `hook_event_name` (`pre_tool`, `post_tool`, `post_agent`: names no
//! other host sends), `session_id`, `transcript_path` (the session store's **directory**,
//! `~/.vibe/logs/session/unified/<session_id>`, no transcript file), `cwd`,
//! `parent_session_id` (set in a subagent), and at the tool events `tool_name` (qualified:
//! `file_system.bash`, `file_system.read_file`, `vibe.todo` …), `tool_call_id` (the model's
//! id), `tool_input` (in the legacy argument names: `file_path`, `command`, `timeout`);
//! `post_tool` adds `tool_status` (`success`, `failure`, `cancelled`), `tool_output`,
//! `tool_output_text`, `tool_error`, `duration_ms`; `post_agent` adds `agent_name`. Measured;
//! `tests/fixtures/real-hosts/mistral-vibe-3.0.3/FACTS.md`.
//!
//! The built-in file tools' group is dropped from the name (`file_system.read_file` is
//! `read_file`, `file_system.bash` is `bash`): the names every host's file and shell tools are
//! known by. A `post_tool` whose `tool_status` is `failure` is the tool's failure. A subagent's
//! events (its own `session_id`, the parent's in `parent_session_id`) are the parent session's,
//! the subagent named by its session.

use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde::Deserialize;
use serde_json::Value;

/// The payload's keys, each taken only when it has the type Vibe sends.
#[derive(Deserialize)]
struct Payload {
    hook_event_name: Option<Value>,
    session_id: Option<Value>,
    parent_session_id: Option<Value>,
    cwd: Option<Value>,
    transcript_path: Option<Value>,
    tool_name: Option<Value>,
    tool_call_id: Option<Value>,
    tool_input: Option<Value>,
    tool_status: Option<Value>,
    tool_output: Option<Value>,
    tool_output_text: Option<Value>,
    tool_error: Option<Value>,
}

/// A non-empty string value.
fn st(v: &Option<Value>) -> Option<String> {
    v.as_ref()
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The tool's name as hookjournal reads it: a built-in file tool without its group.
fn tool_name(qualified: &str) -> String {
    qualified
        .strip_prefix("file_system.")
        .unwrap_or(qualified)
        .to_string()
}

/// Parses a Mistral Vibe payload; `None` when it is no JSON object naming its event.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let p: Payload = serde_json::from_slice(bytes).ok()?;
    let name = st(&p.hook_event_name)?;
    let kind = super::VIBE.event(&name).map(|e| e.kind);
    let meaning = canonical(kind, &p);
    // A subagent's events: the parent's session, the subagent by its own session id.
    let (session_id, agent_id) = match st(&p.parent_session_id) {
        Some(parent) => (Some(parent), st(&p.session_id)),
        None => (st(&p.session_id), None),
    };
    Some(HookEvent {
        session_id,
        agent_id,
        cwd: st(&p.cwd),
        // The session store's directory, read by `store` (its own session's only).
        transcript_path: st(&p.transcript_path).filter(|_| st(&p.parent_session_id).is_none()),
        tool_call_id: st(&p.tool_call_id),
        ..HookEvent::new(name, Host::Vibe, meaning)
    })
}

/// What a Vibe event means, with its fields.
fn canonical(kind: Option<EventKind>, p: &Payload) -> Canonical {
    let tool = || st(&p.tool_name).map(|t| tool_name(&t)).unwrap_or_default();
    let input = || p.tool_input.clone().filter(|v| !v.is_null());
    match kind {
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        Some(EventKind::ToolPost) if st(&p.tool_status).as_deref() == Some("failure") => {
            Canonical::ToolFailure {
                tool: tool(),
                input: input(),
                error: st(&p.tool_error).unwrap_or_default(),
            }
        }
        Some(EventKind::ToolPost) => Canonical::ToolPost {
            tool: tool(),
            input: input(),
            response: (p.tool_output.clone().filter(|v| !v.is_null()))
                .or_else(|| p.tool_output_text.clone().filter(|v| !v.is_null())),
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        _ => Canonical::Other,
    }
}
