//! The Auggie adapter. Auggie 0.36.0 sends a payload of its own on stdin, pretty-printed JSON
//! (2-space indent): `hook_event_name` (its seven names, `PromptSubmit` for the prompt),
//! `conversation_id` (the session, = the id `--output-format json` prints), `workspace_roots`
//! (one entry, the workspace root: the project), and at the tool events `tool_name`,
//! `tool_input`, `tool_output`, `tool_error`, `is_mcp_tool`; `user_prompt` at PromptSubmit;
//! `agent_stop_cause` and `_exchange` (the last exchange) at Stop. No transcript path, no cwd,
//! no timestamp. Measured; `tests/fixtures/real-hosts/auggie-0.36.0/FACTS.md`.
//!
//! PreToolUse's `tool_output` is `"[undefined]"` (its serializer's placeholder: the tool has not
//! run), never output. A PostToolUse with a `tool_error` that is not null is a failed tool (0.36.0
//! has no PostToolUseFailure): read as the call's failure, its error the text.

use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde::Deserialize;
use serde_json::Value;

/// The payload's keys, each taken only when it has the type Auggie sends.
#[derive(Deserialize)]
struct Payload {
    hook_event_name: Option<Value>,
    conversation_id: Option<Value>,
    workspace_roots: Option<Value>,
    tool_name: Option<Value>,
    tool_input: Option<Value>,
    tool_output: Option<Value>,
    tool_error: Option<Value>,
    user_prompt: Option<Value>,
    _exchange: Option<Value>,
    notification_type: Option<Value>,
    notification_message: Option<Value>,
}

/// A non-empty string value.
fn st(v: &Option<Value>) -> Option<String> {
    v.as_ref()
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses an Auggie payload; `None` when it is no JSON object naming its event.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let p: Payload = serde_json::from_slice(bytes).ok()?;
    let name = st(&p.hook_event_name)?;
    let kind = super::AUGGIE.meaning(&name).map(|e| e.kind);
    let meaning = canonical(kind, &p);
    let cwd = p
        .workspace_roots
        .as_ref()
        .and_then(|r| r.get(0))
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .map(str::to_string);
    Some(HookEvent {
        session_id: st(&p.conversation_id),
        cwd,
        ..HookEvent::new(name, Host::Auggie, meaning)
    })
}

/// What an Auggie event means, with its fields.
fn canonical(kind: Option<EventKind>, p: &Payload) -> Canonical {
    let tool = || st(&p.tool_name).unwrap_or_default();
    let input = || p.tool_input.clone().filter(|v| !v.is_null());
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: "other".into(),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(&p.user_prompt).unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        Some(EventKind::ToolPost) => match p.tool_error.as_ref().filter(|e| !e.is_null()) {
            Some(error) => Canonical::ToolFailure {
                tool: tool(),
                input: input(),
                error: error
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_string),
            },
            None => Canonical::ToolPost {
                tool: tool(),
                input: input(),
                response: p
                    .tool_output
                    .clone()
                    .filter(|v| !v.is_null() && v.as_str() != Some("[undefined]")),
            },
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: p
                ._exchange
                .as_ref()
                .and_then(|x| x.pointer("/exchange/response_text"))
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        },
        Some(EventKind::Notification) => Canonical::Notification {
            kind: st(&p.notification_type).unwrap_or_else(|| "info".into()),
            title: None,
            message: st(&p.notification_message).unwrap_or_default(),
        },
        _ => Canonical::Other,
    }
}
