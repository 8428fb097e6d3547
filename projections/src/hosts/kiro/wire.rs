//! The Kiro CLI adapter, from its source (`HookExecutor::run_hook`, the JSON it writes on a
//! hook's stdin; not run here): `hook_event_name` (camelCase), `cwd`, the prompt in `prompt`
//! (at `userPromptSubmit`, and at `agentSpawn` when a prompt is waiting), the tool in
//! `tool_name` (its own names, `fs_read`, `execute_bash`, `@server/tool` for MCP), `tool_input`
//! and, after the call, `tool_response`: `{"success":true,"result":[…]}` or
//! `{"success":false,"error":[…]}`, a failure. No session id, no tool call id: the session is
//! named after the directory (`kiro:<cwd>`).

use super::KIRO;
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

/// Parses a Kiro CLI payload; `None` when it is no JSON object naming its event.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    let name = st(&raw, "hook_event_name")?;
    let kind = KIRO.event(&name).map(|e| e.kind);
    let meaning = canonical(kind, &raw);
    let cwd = st(&raw, "cwd");
    Some(HookEvent {
        // Kiro sends no session id: its chats are told apart by their directory alone (every
        // chat in one directory folds into one session). A `session_id` is read where a payload
        // has one (written by hand, or a later Kiro's).
        session_id: st(&raw, "session_id").or_else(|| cwd.as_ref().map(|d| format!("kiro:{d}"))),
        cwd,
        ..HookEvent::new(name, Host::Kiro, meaning)
    })
}

/// What a Kiro CLI event means, with its fields.
fn canonical(kind: Option<EventKind>, raw: &Map<String, Value>) -> Canonical {
    let field = |k: &str| raw.get(k).filter(|v| !v.is_null()).cloned();
    let tool = || st(raw, "tool_name").unwrap_or_default();
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(raw, "prompt").unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: field("tool_input"),
        },
        Some(EventKind::ToolPost) => {
            let response = field("tool_response");
            let failed = response
                .as_ref()
                .and_then(|r| r.get("success"))
                .and_then(Value::as_bool)
                == Some(false);
            if failed {
                let error = response.as_ref().and_then(|r| r.get("error"));
                Canonical::ToolFailure {
                    tool: tool(),
                    input: field("tool_input"),
                    error: error.map_or_else(|| "error".into(), error_text),
                }
            } else {
                Canonical::ToolPost {
                    tool: tool(),
                    input: field("tool_input"),
                    response,
                }
            }
        }
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        _ => Canonical::Other,
    }
}

/// A failed call's `error` blocks as one text: the strings joined by lines, other JSON as is.
fn error_text(error: &Value) -> String {
    match error {
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| b.as_str().map_or_else(|| b.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
