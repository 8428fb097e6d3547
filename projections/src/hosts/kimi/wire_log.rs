//! Pure parsing of Kimi CLI's event log (`~/.kimi/sessions/<md5 of the cwd>/<session>/wire.jsonl`,
//! which no payload names: `HostFacts::session_file`'s derived path): usage per model response
//! and the context size.
//!
//! The file is JSON lines (Kimi CLI 1.52.0): a first `{"type":"metadata",…}`, then
//! `{"timestamp": <unix float>, "message": {"type", "payload"}}`. Each model response is one
//! `StatusUpdate` whose payload holds `token_usage{input_other, output, input_cache_read,
//! input_cache_creation}`, `context_tokens`, `max_context_tokens` and `message_id` (the response's
//! id). A subagent's records are wrapped in the parent's file as `SubagentEvent{…, event:{type,
//! payload}}`: their usage is the session's, their context is not. No line names the model.
//!
//! # Usage
//!
//! Uncached input = `input_other`, cache reads = `input_cache_read`, cache writes =
//! `input_cache_creation`, output = `output`; each response counted once by its `message_id`.
//! The context is the latest top-level response's `context_tokens`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;
use serde_json::value::RawValue;

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WireScan {
    /// One per response (the main agent's and its subagents'), in file order.
    pub records: Vec<UsageRecord>,
    /// The latest main-agent response's context size.
    pub context: Option<ContextReading>,
    /// That response's `max_context_tokens`.
    pub window: Option<u64>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line<'a> {
    timestamp: Option<f64>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Wrapped<'a> {
    #[serde(borrow)]
    event: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Status {
    token_usage: Option<Tokens>,
    context_tokens: Option<u64>,
    max_context_tokens: Option<u64>,
    message_id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens {
    input_other: u64,
    output: u64,
    input_cache_read: u64,
    input_cache_creation: u64,
}

/// A `StatusUpdate`'s payload, and whether it is a subagent's (wrapped).
fn status<'a>(m: &Message<'a>) -> Option<(Status, bool)> {
    let payload = m.payload?.get();
    match m.kind.as_deref()? {
        "StatusUpdate" => Some((serde_json::from_str(payload).ok()?, false)),
        "SubagentEvent" => {
            let w: Wrapped = serde_json::from_str(payload).ok()?;
            let inner = w.event?;
            (inner.kind.as_deref() == Some("StatusUpdate"))
                .then(|| serde_json::from_str(inner.payload?.get()).ok())
                .flatten()
                .map(|s| (s, true))
        }
        _ => None,
    }
}

/// Parses the complete lines of `bytes`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8]) -> WireScan {
    let mut out = WireScan::default();
    let needle = memchr::memmem::Finder::new(b"\"token_usage\"");
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        if needle.find(line).is_none() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let Some((s, sub)) = l.message.as_ref().and_then(status) else {
            continue;
        };
        let (Some(id), Some(t)) = (s.message_id.filter(|i| !i.is_empty()), s.token_usage) else {
            continue;
        };
        let timestamp = l
            .timestamp
            .and_then(|t| chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64))
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .unwrap_or_default();
        if !sub {
            if let Some(tokens) = s.context_tokens {
                out.context = Some(ContextReading {
                    tokens,
                    model: String::new(),
                    timestamp: timestamp.clone(),
                });
                out.window = s.max_context_tokens.or(out.window);
            }
        }
        out.records.push(UsageRecord {
            message_id: id,
            request_id: String::new(),
            model: String::new(),
            timestamp,
            usage: Usage {
                input_tokens: t.input_other,
                output_tokens: t.output,
                cache_read: t.input_cache_read,
                cache_write_5m: t.input_cache_creation,
                ..Usage::default()
            },
            sidechain: sub,
        });
    }
    out.consumed = start;
    out
}
