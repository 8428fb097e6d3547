//! Pure parsing of an OpenHands conversation's `base_state.json`
//! (`~/.openhands/conversations/<session id without dashes>/base_state.json`, which no payload
//! names: `HostFacts::session_file`'s derived path): usage per model response and the context
//! size.
//!
//! The file is one JSON document (OpenHands 1.16.0, openhands-sdk 1.21.0), rewritten whole as
//! the conversation goes; its `stats.usage_to_metrics` maps a usage id (`agent`, `condenser`,
//! `task:task_00000001` per subagent task) to LiteLLM's metrics: `token_usages[]` (one per
//! model response: `model`, `prompt_tokens`, `completion_tokens`, `cache_read_tokens`,
//! `cache_write_tokens`, `response_id`), `costs[]` (`timestamp`, one per priced response) and
//! `accumulated_cost`. A subagent's own `subagents/<id>/base_state.json` repeats its usage as
//! `agent`: only the parent's file is read, where it is `task:…`. During a run the file shows
//! no tokens yet (measured at PostToolUse); at the Stop hook and at SessionEnd it is complete.
//!
//! # Usage
//!
//! `prompt_tokens` is the request's whole input, cached included (OpenAI's `prompt_tokens`, its
//! `cached_tokens` read as `cache_read_tokens`; measured: a server reporting 3,900 with 1,000
//! cached). So uncached input = `prompt_tokens − cache_read_tokens`, cache reads =
//! `cache_read_tokens`, cache writes = `cache_write_tokens` (0 from a chat-completions server),
//! output = `completion_tokens`; each response counted once by its `response_id`. The context is
//! the latest `agent` response's `prompt_tokens`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;
use std::collections::BTreeMap;

/// What [`scan`] found in the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateScan {
    /// One per response (the agent's, the condenser's, each subagent task's), by usage id.
    pub records: Vec<UsageRecord>,
    /// The latest `agent` response's context size.
    pub context: Option<ContextReading>,
    /// That response's `context_window`.
    pub window: Option<u64>,
}

#[derive(Deserialize)]
struct File {
    stats: Option<Stats>,
}

#[derive(Deserialize)]
struct Stats {
    #[serde(default)]
    usage_to_metrics: BTreeMap<String, Metrics>,
}

#[derive(Deserialize)]
struct Metrics {
    #[serde(default)]
    token_usages: Vec<TokenUsage>,
    #[serde(default)]
    costs: Vec<Cost>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenUsage {
    model: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    context_window: u64,
    response_id: String,
}

#[derive(Deserialize)]
struct Cost {
    timestamp: Option<f64>,
}

/// A Unix time in seconds (a float) as RFC 3339 UTC with milliseconds.
fn rfc3339(t: f64) -> String {
    chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// Parses the whole file `bytes` of conversation `conversation` (the key part that keeps two
/// conversations' response ids apart). Never fails: a file that does not parse (cut short, not
/// OpenHands') gives nothing.
pub fn scan(bytes: &[u8], conversation: &str) -> StateScan {
    let mut out = StateScan::default();
    let Ok(File { stats: Some(stats) }) = serde_json::from_slice::<File>(bytes) else {
        return out;
    };
    for (usage_id, m) in stats.usage_to_metrics {
        // Each priced response appends one cost: dated by it when they pair up one to one.
        let dated = m.costs.len() == m.token_usages.len();
        for (i, t) in m.token_usages.into_iter().enumerate() {
            if t.response_id.is_empty() {
                continue;
            }
            let timestamp = m
                .costs
                .get(i)
                .filter(|_| dated)
                .and_then(|c| c.timestamp)
                .map(rfc3339)
                .unwrap_or_default();
            if usage_id == "agent" {
                out.context = Some(ContextReading {
                    tokens: t.prompt_tokens,
                    model: t.model.clone(),
                    timestamp: timestamp.clone(),
                });
                out.window = Some(t.context_window).filter(|w| *w > 0);
            }
            out.records.push(UsageRecord {
                message_id: t.response_id,
                request_id: conversation.to_string(),
                model: t.model,
                timestamp,
                usage: Usage {
                    input_tokens: t.prompt_tokens.saturating_sub(t.cache_read_tokens),
                    output_tokens: t.completion_tokens,
                    cache_read: t.cache_read_tokens,
                    cache_write_5m: t.cache_write_tokens,
                    cache_write_1h: 0,
                },
                sidechain: usage_id.starts_with("task:"),
            });
        }
    }
    out
}
