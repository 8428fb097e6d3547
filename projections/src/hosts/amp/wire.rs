//! The Amp adapter, from its plugin API (`PluginEventMap`; not run here): hookjournal's shim
//! forwards each event as `{"host":"amp", "hook_event_name", "host_time", "cwd", "session_id",
//! "event"}`, `event` being Amp's own: `thread.id` everywhere; `message` (the prompt) at
//! `agent.start` and `agent.end`, with `status` and `lastMessage` at the end; `toolUseID`, `tool`
//! (Amp's own names, `Bash`, `Read`, `edit_file`, …) and `input` at `tool.call`, with `status`
//! (`done`, `error`, `cancelled`), `error` and `output` at `tool.result`.

use super::AMP;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde_json::{Map, Value};

fn st(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses a payload the shim forwarded; `None` when it is no JSON object naming its event.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    let name = st(&raw, "hook_event_name")?;
    let empty = Map::new();
    let event = raw
        .get("event")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let thread = event.get("thread").and_then(Value::as_object);
    let kind = AMP.event(&name).map(|e| e.kind);
    Some(HookEvent {
        session_id: st(&raw, "session_id").or_else(|| thread.and_then(|t| st(t, "id"))),
        cwd: st(&raw, "cwd"),
        tool_call_id: st(event, "toolUseID"),
        ..HookEvent::new(name, Host::Amp, canonical(kind, event))
    })
}

/// What an Amp event means, with its fields.
fn canonical(kind: Option<EventKind>, event: &Map<String, Value>) -> Canonical {
    let field = |k: &str| event.get(k).filter(|v| !v.is_null()).cloned();
    let tool = || st(event, "tool").unwrap_or_default();
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(event, "message").unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: field("input"),
        },
        Some(EventKind::ToolPost) => match st(event, "status").as_deref() {
            Some("error") | Some("cancelled") => Canonical::ToolFailure {
                tool: tool(),
                input: field("input"),
                error: st(event, "error")
                    .or_else(|| st(event, "status"))
                    .unwrap_or_default(),
            },
            _ => Canonical::ToolPost {
                tool: tool(),
                input: field("input"),
                response: field("output"),
            },
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        _ => Canonical::Other,
    }
}
