//! Pure parsing of Codex CLI's rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, the
//! payloads' `transcript_path`) for usage and the context size.
//!
//! Usage is read the way ccusage reads it (its Codex report): each `event_msg` of type
//! `token_count` carries `info.total_token_usage` (the session's running total) and
//! `info.last_token_usage` (the request just made). Codex writes the same reading more than once
//! (and again, with an empty `last_token_usage`, after a compaction): one request is counted once,
//! keyed by the running total it brought the session to (`codex-total:<total_tokens>`), so a
//! repeated reading is the same record. The ingestion sets the record's `request_id` to the
//! rollout's file name: two rollouts can reach the same running total. OpenAI's `input_tokens` include the cached ones:
//! uncached input = `input − cached`, cache reads = `cached`; `output_tokens` include reasoning.
//! The model is the latest `turn_context`'s (else the caller's fallback, for a chunk that starts
//! after it). The context is the latest request's `input_tokens`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RolloutScan {
    /// One per request, in order.
    pub records: Vec<UsageRecord>,
    /// The latest request's context size.
    pub context: Option<ContextReading>,
    /// The model of the latest `turn_context` in the chunk.
    pub model: Option<String>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    timestamp: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type")]
    kind: Option<String>,
    model: Option<String>,
    info: Option<Info>,
}

#[derive(Deserialize)]
struct Info {
    total_token_usage: Option<Tokens>,
    last_token_usage: Option<Tokens>,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct Tokens {
    input_tokens: u64,
    cached_input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

/// Parses the complete lines of `bytes`; `model` names the model of requests before the chunk's
/// first `turn_context`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8], model: Option<&str>) -> RolloutScan {
    let mut out = RolloutScan::default();
    let mut model = model.map(str::to_string);
    let wanted = [
        memchr::memmem::Finder::new(b"\"token_count\""),
        memchr::memmem::Finder::new(b"\"turn_context\""),
    ];
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        if wanted.iter().all(|f| f.find(line).is_none()) {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let Some(p) = l.payload else {
            continue;
        };
        if l.kind.as_deref() == Some("turn_context") {
            if let Some(m) = p.model.filter(|m| !m.is_empty()) {
                out.model = Some(m.clone());
                model = Some(m);
            }
            continue;
        }
        if l.kind.as_deref() != Some("event_msg") || p.kind.as_deref() != Some("token_count") {
            continue;
        }
        let Some(Info {
            total_token_usage: Some(total),
            last_token_usage: Some(last),
        }) = p.info
        else {
            continue;
        };
        if last.input_tokens == 0 && last.output_tokens == 0 {
            continue;
        }
        let model = model.clone().unwrap_or_default();
        out.context = Some(ContextReading {
            tokens: last.input_tokens,
            model: model.clone(),
            timestamp: l.timestamp.clone(),
        });
        let id = format!("codex-total:{}", total.total_tokens);
        if out.records.iter().any(|r| r.message_id == id) {
            continue;
        }
        out.records.push(UsageRecord {
            message_id: id,
            request_id: String::new(),
            model,
            timestamp: l.timestamp,
            usage: Usage {
                input_tokens: last.input_tokens.saturating_sub(last.cached_input_tokens),
                output_tokens: last.output_tokens,
                cache_read: last.cached_input_tokens,
                ..Usage::default()
            },
            sidechain: false,
        });
    }
    out.consumed = start;
    out
}
