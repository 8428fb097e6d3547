//! The OpenClaw adapter. OpenClaw has no shell hooks: its plugin hooks are JS callbacks
//! `(event, ctx)`, and hookjournal's shim plugin forwards each one as
//! `{"hook_event_name", "host_time", "event", "ctx"}` (the host's own objects, their
//! `messages` arrays left out). This reads that payload into the canonical event.
//!
//! Some contexts carry only the `sessionKey` (`agent:main:X`, stable across resets); the session
//! id is resolved from the journal's own log: every event that carries both is remembered
//! (`fold::Global::session_keys`), and ingestion stores the id in the envelope
//! (`resolve_session`).

use super::OPENCLAW;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent, HostUsage, PayloadMetrics};
use crate::host::Host;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Deserialize, Default)]
struct Raw {
    hook_event_name: Option<Value>,
    #[serde(default)]
    event: Option<Value>,
    #[serde(default)]
    ctx: Option<Value>,
}

fn obj(v: &Option<Value>) -> Map<String, Value> {
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

fn present(m: &Map<String, Value>, key: &str) -> Option<Value> {
    m.get(key).filter(|v| !v.is_null()).cloned()
}

/// Parses a payload the shim forwarded; `None` when it is no JSON object with a string
/// `hook_event_name`.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Raw = serde_json::from_slice(bytes).ok()?;
    let name = raw.hook_event_name.as_ref()?.as_str()?.to_string();
    let event = obj(&raw.event);
    let ctx = obj(&raw.ctx);
    let either = |key: &str| st(&ctx, key).or_else(|| st(&event, key));
    let kind = OPENCLAW.event(&name).map(|e| e.kind);
    let canonical = canonical(kind, &event, &ctx);
    let model = st(&event, "model").or_else(|| st(&ctx, "modelId"));
    let usage = (name == "llm_output")
        .then(|| usage(&event, &ctx))
        .flatten();
    Some(HookEvent {
        name: name.clone(),
        host: Host::OpenClaw,
        session_id: either("sessionId"),
        cwd: st(&ctx, "workspaceDir").or_else(|| st(&event, "cwd")),
        // `transcriptPath` holds the session key and `sessionFile` a store reference
        // (`sqlite:main:…`): OpenClaw's usage arrives in `llm_output` instead.
        transcript_path: None,
        agent_id: None,
        agent_type: None,
        agent_name: st(&ctx, "agentId"),
        model: model.clone(),
        canonical,
        metrics: PayloadMetrics {
            duration_ms: event.get("durationMs").and_then(Value::as_f64),
            tokens_in: usage.as_ref().map(|u| u.input),
            tokens_out: usage.as_ref().map(|u| u.output),
            model: usage.as_ref().and(model),
            cost_usd: None,
        },
        session_key: either("sessionKey"),
        continues: (name == "session_start")
            .then(|| st(&event, "resumedFrom"))
            .flatten(),
        usage,
        served: false,
        mcp_server: None,
        resumed: None,
        tool_call_id: None,
    })
}

/// What an OpenClaw hook means, with its fields.
fn canonical(
    kind: Option<EventKind>,
    event: &Map<String, Value>,
    ctx: &Map<String, Value>,
) -> Canonical {
    let tool = || {
        st(event, "toolName")
            .or_else(|| st(ctx, "toolName"))
            .unwrap_or_default()
    };
    match kind {
        // A session that follows a reset continues the one it was reset from: `/clear`'s case.
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: if st(event, "resumedFrom").is_some() {
                "clear".into()
            } else {
                "startup".into()
            },
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: st(event, "reason").unwrap_or_else(|| "other".into()),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(event, "prompt").unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => Canonical::ToolPre {
            tool: tool(),
            input: present(event, "params"),
        },
        // A call that failed reports `error` in the same hook.
        Some(EventKind::ToolPost) => match st(event, "error") {
            Some(error) => Canonical::ToolFailure {
                tool: tool(),
                input: present(event, "params"),
                error,
            },
            None => Canonical::ToolPost {
                tool: tool(),
                input: present(event, "params"),
                response: present(event, "result"),
            },
        },
        Some(EventKind::Stop) => Canonical::Stop {
            active: event
                .get("stopHookActive")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            last_message: st(event, "lastAssistantMessage"),
        },
        // OpenClaw does not say what started a compaction.
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

/// `llm_output`'s usage and the context budget it ran under.
fn usage(event: &Map<String, Value>, ctx: &Map<String, Value>) -> Option<HostUsage> {
    let u = match event.get("usage") {
        Some(Value::Object(u)) => u.clone(),
        _ => return None,
    };
    Some(HostUsage {
        run_id: st(event, "runId").or_else(|| st(ctx, "runId")),
        input: num(&u, "input").unwrap_or(0),
        output: num(&u, "output").unwrap_or(0),
        cache_read: num(&u, "cacheRead").unwrap_or(0),
        cache_write: num(&u, "cacheWrite").unwrap_or(0),
        context_budget: num(event, "contextTokenBudget").or_else(|| num(ctx, "contextTokenBudget")),
        once_per_run: false,
    })
}

/// The session an OpenClaw event that names none belongs to: the last session its `sessionKey`
/// was seen with in the log (`session_keys`: `fold::Global::session_keys`). `None` for other
/// hosts, events that name their session, and keys never seen with a session.
pub fn resolve_session(
    session_keys: &BTreeMap<String, String>,
    host: &str,
    payload: &[u8],
) -> Option<String> {
    if host != OPENCLAW.name {
        return None;
    }
    let ev = parse(payload)?;
    if ev.session_id.is_some() {
        return None;
    }
    session_keys.get(ev.session_key.as_deref()?).cloned()
}
