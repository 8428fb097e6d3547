//! The goose adapter, from its source (`HookContext`, serialized as the hook's stdin; not run
//! here): the event in `event`, `session_id`, the tool in `tool_name`/`tool_input`/`tool_output`
//! (goose's own tool names, `developer__shell`, …) and `tool_call_id`, the same at a call's
//! PreToolUse and PostToolUse; the prompt in `message`, the turn's last answer in
//! `last_assistant_message`, the directory in `working_dir`.

use super::GOOSE;
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

/// Parses a goose payload; `None` when it is no JSON object naming its event (`event`, or
/// `hook_event_name` in a hand-written one).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    let name = st(&raw, "event").or_else(|| st(&raw, "hook_event_name"))?;
    let kind = GOOSE.event(&name).map(|e| e.kind);
    let meaning = canonical(kind, &raw);
    Some(HookEvent {
        session_id: st(&raw, "session_id"),
        cwd: st(&raw, "working_dir").or_else(|| st(&raw, "cwd")),
        tool_call_id: st(&raw, "tool_call_id"),
        ..HookEvent::new(name, Host::Goose, meaning)
    })
}

/// What a goose event means, with its fields.
fn canonical(kind: Option<EventKind>, raw: &Map<String, Value>) -> Canonical {
    let field = |k: &str| raw.get(k).filter(|v| !v.is_null()).cloned();
    let tool = || st(raw, "tool_name").unwrap_or_default();
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: "other".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(raw, "message")
                .or_else(|| st(raw, "prompt"))
                .unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: field("tool_input"),
        },
        Some(EventKind::ToolPost) => Canonical::ToolPost {
            tool: tool(),
            input: field("tool_input"),
            response: field("tool_output"),
        },
        Some(EventKind::ToolFailure) => Canonical::ToolFailure {
            tool: tool(),
            input: field("tool_input"),
            error: st(raw, "message")
                .or_else(|| field("tool_output").map(|o| o.to_string()))
                .unwrap_or_else(|| "error".into()),
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: st(raw, "last_assistant_message"),
        },
        _ => Canonical::Other,
    }
}
