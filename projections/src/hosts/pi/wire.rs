//! The pi adapter. pi (the pi coding agent) has no shell hooks: its extensions are TypeScript
//! modules run inside its process, subscribing to events with `pi.on(name, handler)` (the answer
//! is the handler's return value). hookjournal's shim extension forwards each event it subscribes
//! to as `{"host": "pi", "hook_event_name", "host_time", "cwd", "session_id", "session_file",
//! "context_usage", "event"}` (`event`: pi's own event object, its large lists as counts). This
//! reads that payload into the canonical event.
//!
//! Usage: `turn_end` carries the turn's assistant message, its `usage{input, output, cacheRead,
//! cacheWrite}` (`input` is the uncached part) and `model`; one `turn_end` per model call. The
//! context window is `context_usage.contextWindow`, pi's own figure for the model.

use super::PI;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent, HostUsage, PayloadMetrics};
use crate::host::Host;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize, Default)]
struct Raw {
    hook_event_name: Option<Value>,
    #[serde(default)]
    cwd: Option<Value>,
    #[serde(default)]
    session_id: Option<Value>,
    #[serde(default)]
    context_usage: Option<Value>,
    #[serde(default)]
    event: Option<Value>,
}

fn obj(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

fn st(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn num(m: &Map<String, Value>, key: &str) -> Option<u64> {
    m.get(key)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite() && *x >= 0.0)
        .map(|x| x as u64)
}

fn string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses a payload the shim forwarded; `None` when it is no JSON object with a string
/// `hook_event_name`.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Raw = serde_json::from_slice(bytes).ok()?;
    let name = raw.hook_event_name.as_ref()?.as_str()?.to_string();
    let event = obj(raw.event.as_ref());
    let message = obj(event.get("message"));
    let budget = num(&obj(raw.context_usage.as_ref()), "contextWindow");
    let usage = (name == "turn_end")
        .then(|| usage(&message, budget))
        .flatten();
    let model = (name == "turn_end")
        .then(|| st(&message, "model"))
        .flatten();
    let kind = PI.event(&name).map(|e| e.kind);
    Some(HookEvent {
        name,
        host: Host::Pi,
        session_id: string(raw.session_id.as_ref()),
        cwd: string(raw.cwd.as_ref()),
        // pi's session file (`session_file`) is journaled with every event, never read: its
        // usage arrives with `turn_end`.
        transcript_path: None,
        agent_id: None,
        agent_type: None,
        agent_name: None,
        model: model.clone(),
        canonical: canonical(kind, &event),
        metrics: PayloadMetrics {
            duration_ms: None,
            tokens_in: usage.as_ref().map(|u| u.input),
            tokens_out: usage.as_ref().map(|u| u.output),
            model: usage.as_ref().and(model),
            cost_usd: None,
        },
        session_key: None,
        continues: None,
        usage,
        served: false,
        mcp_server: None,
        resumed: None,
        tool_call_id: st(&event, "toolCallId"),
    })
}

/// The text parts of a message's `content` (a string, or a list of parts).
fn text_of(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// What a pi event means, with its fields.
fn canonical(kind: Option<EventKind>, event: &Map<String, Value>) -> Canonical {
    let tool = || st(event, "toolName").unwrap_or_default();
    let input = || event.get("input").filter(|v| !v.is_null()).cloned();
    match kind {
        // `new` is a fresh session in place of the last (`/new`, Claude Code's `/clear`); a
        // resumed, forked or reloaded one goes on with what it held.
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: match st(event, "reason").as_deref() {
                None | Some("startup") => "startup",
                Some("new") => "clear",
                Some(_) => "resume",
            }
            .into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: st(event, "reason").unwrap_or_else(|| "other".into()),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(event, "prompt").unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: input(),
        },
        // A failed call reports `isError` in the same event.
        Some(EventKind::ToolPost) if event.get("isError") == Some(&Value::Bool(true)) => {
            Canonical::ToolFailure {
                tool: tool(),
                input: input(),
                error: text_of(event.get("content")).unwrap_or_else(|| "error".into()),
            }
        }
        Some(EventKind::ToolPost) => Canonical::ToolPost {
            tool: tool(),
            input: input(),
            response: Some(Value::Object(
                event
                    .iter()
                    .filter(|(k, _)| matches!(k.as_str(), "content" | "details" | "isError"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
        },
        Some(EventKind::Stop) => {
            let last = obj(event.get("lastMessage"));
            Canonical::Stop {
                active: false,
                last_message: (st(&last, "role").as_deref() == Some("assistant"))
                    .then(|| text_of(last.get("content")))
                    .flatten(),
            }
        }
        // pi's event says no trigger; a compaction it starts itself has no instructions.
        Some(EventKind::PreCompact) => Canonical::PreCompact {
            trigger: if event
                .get("customInstructions")
                .is_some_and(|v| !v.is_null())
            {
                "manual".into()
            } else {
                "auto".into()
            },
            instructions: st(event, "customInstructions"),
        },
        Some(EventKind::PostCompact) => Canonical::PostCompact {
            trigger: "auto".into(),
            summary: st(&obj(event.get("compactionEntry")), "summary"),
        },
        _ => Canonical::Other,
    }
}

/// A turn's model call: its assistant message's usage.
fn usage(message: &Map<String, Value>, budget: Option<u64>) -> Option<HostUsage> {
    if st(message, "role").as_deref() != Some("assistant") {
        return None;
    }
    let u = obj(message.get("usage"));
    let usage = HostUsage {
        run_id: st(message, "responseId"),
        input: num(&u, "input").unwrap_or(0),
        output: num(&u, "output").unwrap_or(0),
        cache_read: num(&u, "cacheRead").unwrap_or(0),
        cache_write: num(&u, "cacheWrite").unwrap_or(0),
        context_budget: budget,
        once_per_run: false,
    };
    (usage.input + usage.output + usage.cache_read + usage.cache_write > 0).then_some(usage)
}
