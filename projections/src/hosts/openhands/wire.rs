//! The OpenHands adapter. OpenHands 1.16.0 sends a payload of its own on stdin
//! (`openhands.sdk.hooks`' pydantic `HookEvent`, dumped): exactly the eight keys `event_type`,
//! `tool_name`, `tool_input`, `tool_response`, `message`, `session_id`, `working_dir`,
//! `metadata`, the unused ones `null` or `{}`; no `hook_event_name`, no `cwd`, no
//! `transcript_path`. `tool_input` is the action's dump (`{"command", …, "kind":
//! "TerminalAction"}`), `tool_response` the observation's (`content[{type,text}]`, `is_error`,
//! …, `kind`). This reads that payload into the canonical event (measured;
//! `tests/fixtures/real-hosts/openhands-1.16.0/FACTS.md`).
//!
//! Usage: no payload carries it, nor names the conversation's `base_state.json` that does; the
//! engine finds that file by the host table's rule and `base_state` reads it.

use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde::Deserialize;
use serde_json::Value;

/// The payload's keys (OpenHands' `HookEvent`), each taken only when it has the type OpenHands
/// sends (a string where a string is sent).
#[derive(Deserialize)]
struct Payload {
    event_type: Option<Value>,
    /// A hand-written payload's name.
    hook_event_name: Option<Value>,
    tool_name: Option<Value>,
    tool_input: Option<Value>,
    tool_response: Option<Value>,
    message: Option<Value>,
    session_id: Option<Value>,
    working_dir: Option<Value>,
    cwd: Option<Value>,
}

/// A non-empty string value.
fn st(v: &Option<Value>) -> Option<String> {
    v.as_ref()
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses an OpenHands payload; `None` when it is no JSON object naming its event
/// (`event_type`, or `hook_event_name` in a hand-written one).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let p: Payload = serde_json::from_slice(bytes).ok()?;
    let name = st(&p.event_type).or_else(|| st(&p.hook_event_name))?;
    let kind = super::OPENHANDS.event(&name).map(|e| e.kind);
    let meaning = canonical(kind, &p);
    Some(HookEvent {
        session_id: st(&p.session_id),
        cwd: st(&p.working_dir).or_else(|| st(&p.cwd)),
        ..HookEvent::new(name, Host::OpenHands, meaning)
    })
}

/// The text of an observation's `content[{type:"text", text}]` parts, joined.
fn text_of(response: &Value) -> String {
    let parts = response.get("content").and_then(Value::as_array);
    let texts: Vec<&str> = parts
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// What an OpenHands event means, with its fields.
fn canonical(kind: Option<EventKind>, p: &Payload) -> Canonical {
    let tool = || st(&p.tool_name).unwrap_or_default();
    let input = || p.tool_input.clone().filter(|v| !v.is_null());
    match kind {
        // A resumed conversation's SessionStart is marked by nothing (same session id).
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: "other".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(&p.message).unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        // Errors come as PostToolUse too, their observation's `is_error` true.
        Some(EventKind::ToolPost) => match p.tool_response.as_ref().filter(|v| !v.is_null()) {
            Some(r) if r.get("is_error").and_then(Value::as_bool) == Some(true) => {
                Canonical::ToolFailure {
                    tool: tool(),
                    input: input(),
                    error: text_of(r),
                }
            }
            response => Canonical::ToolPost {
                tool: tool(),
                input: input(),
                response: response.cloned(),
            },
        },
        // `metadata.reason` is "agent_finished"; nothing marks a Stop that follows a Stop
        // hook's block.
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        _ => Canonical::Other,
    }
}
