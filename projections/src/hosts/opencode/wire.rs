//! The OpenCode adapter. OpenCode has no shell hooks: its plugins are JS modules run inside its
//! process, with hooks `(input, output)` (the answer is a mutation of `output`) and a bus of
//! events. hookjournal's shim plugin forwards each one it registers for as
//! `{"hook_event_name", "host_time", "directory", "input", "output"}` (a hook) or
//! `{"hook_event_name", "host_time", "directory", "event"}` (a bus event, named by its `type`).
//! This reads that payload into the canonical event.
//!
//! Subagents: OpenCode runs one in a child session (`session.created` with `info.parentID`); the
//! shim adds `parent_session_id` (the root session) to every call of a child session. Those calls
//! are filed under that session with the child's id as the agent's: the child's start and idle
//! (or error, or deletion) are the subagent's start and stop, its compactions and prompt are not
//! the session's, its usage is.
//!
//! Usage: a completed assistant message (`message.updated`, `info.role` assistant) carries its
//! `tokens{input, output, reasoning, cache{read, write}}` and `modelID`; OpenCode sends the same
//! message more than once, so it is counted once by its id (the largest reading wins).

use super::OPENCODE;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent, HostUsage, PayloadMetrics};
use crate::host::{Host, HostFacts};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize, Default)]
struct Raw {
    hook_event_name: Option<Value>,
    #[serde(default)]
    directory: Option<Value>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    output: Option<Value>,
    #[serde(default)]
    event: Option<Value>,
    /// The root session of a subagent's child session (the shim's own field).
    #[serde(default)]
    parent_session_id: Option<Value>,
}

fn obj(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// A non-empty string value.
fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn st(m: &Map<String, Value>, key: &str) -> Option<String> {
    text(m.get(key))
}

fn num(m: &Map<String, Value>, key: &str) -> u64 {
    m.get(key)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite() && *x >= 0.0)
        .map_or(0, |x| x as u64)
}

fn present(m: &Map<String, Value>, key: &str) -> Option<Value> {
    m.get(key).filter(|v| !v.is_null()).cloned()
}

/// Parses a payload the shim forwarded; `None` when it is no JSON object with a string
/// `hook_event_name`.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    parse_as(Host::OpenCode, &OPENCODE, bytes)
}

/// `parse` for a host that runs the same shim and plugin API (Kilo Code, an OpenCode fork): the
/// event recorded as `host`'s, its names read with `facts`.
pub fn parse_as(host: Host, facts: &HostFacts, bytes: &[u8]) -> Option<HookEvent> {
    let raw: Raw = serde_json::from_slice(bytes).ok()?;
    let name = raw.hook_event_name.as_ref()?.as_str()?.to_string();
    let input = obj(raw.input.as_ref());
    let output = obj(raw.output.as_ref());
    let event = obj(raw.event.as_ref());
    let props = obj(event.get("properties"));
    let info = obj(props.get("info"));
    // A session's own events name it in `info.id`; a message's in `info.sessionID`.
    let own_session = st(&input, "sessionID")
        .or_else(|| st(&props, "sessionID"))
        .or_else(|| st(&info, "sessionID"))
        .or_else(|| {
            matches!(name.as_str(), "session.created" | "session.deleted")
                .then(|| st(&info, "id"))
                .flatten()
        });
    // A subagent runs in a child session: its calls are the session's that started it (the shim
    // names that one; the child's `session.created` names its `parentID` itself), the child's id
    // is the subagent's.
    let parent = text(raw.parent_session_id.as_ref()).or_else(|| {
        (name == "session.created")
            .then(|| st(&info, "parentID"))
            .flatten()
    });
    let (session_id, agent_id) = match parent {
        Some(p) => (Some(p), own_session),
        None => (own_session, None),
    };
    let agent_type = agent_id
        .as_ref()
        .and_then(|_| st(&input, "agent").or_else(|| st(&info, "agent")));
    let cwd = text(raw.directory.as_ref())
        .or_else(|| st(&info, "directory"))
        .or_else(|| st(&obj(info.get("path")), "cwd"));
    let usage = (name == "message.updated").then(|| usage(&info)).flatten();
    let model = st(&obj(input.get("model")), "modelID").or_else(|| st(&info, "modelID"));
    let kind = facts.event(&name).map(|e| e.kind);
    Some(HookEvent {
        name: name.clone(),
        host,
        session_id,
        cwd,
        transcript_path: None,
        agent_name: st(&input, "agent").or_else(|| st(&obj(output.get("message")), "agent")),
        model: model.clone(),
        canonical: match &agent_id {
            Some(id) => {
                canonical(kind, &input, &output, &props).in_subagent(id, agent_type.as_deref())
            }
            None => canonical(kind, &input, &output, &props),
        },
        agent_id,
        agent_type,
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
        tool_call_id: None,
    })
}

/// What an OpenCode hook or bus event means, with its fields.
fn canonical(
    kind: Option<EventKind>,
    input: &Map<String, Value>,
    output: &Map<String, Value>,
    props: &Map<String, Value>,
) -> Canonical {
    let tool = || st(input, "tool").unwrap_or_default();
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: "startup".into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: "deleted".into(),
        },
        // The prompt as it is stored and sent: its text parts.
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: output
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: present(output, "args"),
        },
        Some(EventKind::ToolPost) => Canonical::ToolPost {
            tool: tool(),
            input: present(input, "args"),
            response: Some(Value::Object(output.clone())),
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: None,
        },
        Some(EventKind::StopFailure) => {
            let error = obj(props.get("error"));
            Canonical::StopFailure {
                error: st(&obj(error.get("data")), "message")
                    .or_else(|| st(&error, "name"))
                    .unwrap_or_else(|| "error".into()),
            }
        }
        // OpenCode does not say what started a compaction.
        Some(EventKind::PreCompact) => Canonical::PreCompact {
            trigger: "auto".into(),
            instructions: None,
        },
        Some(EventKind::PostCompact) => Canonical::PostCompact {
            trigger: "auto".into(),
            summary: None,
        },
        _ => Canonical::Other,
    }
}

/// A completed assistant message's usage, counted once by the message's id. `tokens.input` is
/// the uncached input (the cached part is `cache.read`); reasoning is billed as output.
fn usage(info: &Map<String, Value>) -> Option<HostUsage> {
    if st(info, "role").as_deref() != Some("assistant") {
        return None;
    }
    let tokens = obj(info.get("tokens"));
    let cache = obj(tokens.get("cache"));
    let u = HostUsage {
        run_id: st(info, "id"),
        input: num(&tokens, "input"),
        output: num(&tokens, "output") + num(&tokens, "reasoning"),
        cache_read: num(&cache, "read"),
        cache_write: num(&cache, "write"),
        context_budget: None,
        once_per_run: true,
    };
    (u.input + u.output + u.cache_read + u.cache_write > 0).then_some(u)
}
