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
use crate::hook_event::{Canonical, HookEvent, PayloadMetrics};
use crate::host::Host;
use serde::Deserialize;
use serde_json::Value;

/// The payload's keys (OpenHands' `HookEvent`).
#[derive(Deserialize)]
struct Payload {
    event_type: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    tool_response: Option<Value>,
    message: Option<String>,
    session_id: Option<String>,
    working_dir: Option<String>,
    metadata: Option<Value>,
}

/// Parses an OpenHands payload; `None` when it is no JSON object naming its event
/// (`event_type`).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let p: Payload = serde_json::from_slice(bytes).ok()?;
    let name = p.event_type.clone().filter(|n| !n.is_empty())?;
    let kind = super::OPENHANDS.event(&name).map(|e| e.kind);
    Some(HookEvent {
        canonical: canonical(kind, &p),
        name,
        host: Host::OpenHands,
        session_id: p.session_id.filter(|s| !s.is_empty()),
        cwd: p.working_dir.filter(|s| !s.is_empty()),
        transcript_path: None,
        agent_id: None,
        agent_type: None,
        agent_name: None,
        model: None,
        metrics: PayloadMetrics::default(),
        session_key: None,
        continues: None,
        usage: None,
        served: false,
        mcp_server: None,
        resumed: None,
        tool_call_id: None,
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
    let tool = || p.tool_name.clone().unwrap_or_default();
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
            text: p.message.clone().unwrap_or_default(),
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
        // `metadata.reason` ("agent_finished"); nothing marks a Stop that follows a Stop
        // hook's block.
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        _ => {
            let _ = &p.metadata;
            Canonical::Other
        }
    }
}
