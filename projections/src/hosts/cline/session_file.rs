//! Pure parsing of Cline CLI's messages file (`<sessions dir>/<id>/<id>.messages.json`, where
//! `<id>` is the payloads' `sessionContext.rootSessionId`): usage per model response and the
//! context size. No payload names the file: the engine finds it from the hook's environment by
//! the host table's rule (`HostFacts::session_file`, `DerivedPath`).
//!
//! The file is one JSON document (Cline CLI 3.0.65), rewritten whole as messages are added:
//! `{"sessionId", "messages": [{"id", "role", "content", "ts", "modelInfo": {"id", "provider"},
//! "metrics": {"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"}}, …]}`;
//! each model response of the lead agent is one `assistant` message with `modelInfo` and
//! `metrics`. Every response of a run is there when its `agent_end` hook runs (measured: 3 runs).
//!
//! # Usage
//!
//! Measured against a server reporting `prompt_tokens` 1,000 with `cached_tokens` 100:
//! `inputTokens` 1,000, `cacheReadTokens` 100. So uncached input = `inputTokens −
//! cacheReadTokens`, cache reads = `cacheReadTokens`, cache writes = `cacheWriteTokens` (0 from a
//! chat-completions server: whether `inputTokens` includes them is not measured), output =
//! `outputTokens`. Each response is counted once, by its message `id`. The context is the latest
//! response's `inputTokens`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;
use std::borrow::Cow;

/// What [`scan`] found in the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessagesScan {
    /// One per response, in file order.
    pub records: Vec<UsageRecord>,
    /// The latest response's context size.
    pub context: Option<ContextReading>,
}

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow, default)]
    messages: Vec<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    ts: Option<u64>,
    #[serde(borrow, rename = "modelInfo")]
    model: Option<ModelInfo<'a>>,
    // `content`, the bulk of the file, is skipped unread (not a field here).
    metrics: Option<Metrics>,
}

#[derive(Deserialize)]
struct ModelInfo<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Metrics {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
}

/// Parses the whole file `bytes` of session `session` (the key part that keeps two sessions'
/// message ids apart). Never fails: a file that does not parse (cut short, not Cline's) gives
/// nothing, and messages without usage are skipped.
pub fn scan(bytes: &[u8], session: &str) -> MessagesScan {
    let mut out = MessagesScan::default();
    let Ok(file) = serde_json::from_slice::<File>(bytes) else {
        return out;
    };
    for m in file.messages {
        let (Some(id), Some(t)) = (m.id, m.metrics) else {
            continue;
        };
        if m.role.as_deref() != Some("assistant") || id.is_empty() {
            continue;
        }
        let model = m
            .model
            .and_then(|i| i.id)
            .map(Cow::into_owned)
            .unwrap_or_default();
        let timestamp = m.ts.map(rfc3339_of_ms).unwrap_or_default();
        out.context = Some(ContextReading {
            tokens: t.input_tokens,
            model: model.clone(),
            timestamp: timestamp.clone(),
        });
        out.records.push(UsageRecord {
            message_id: id.into_owned(),
            request_id: session.to_string(),
            model,
            timestamp,
            usage: Usage {
                input_tokens: t.input_tokens.saturating_sub(t.cache_read_tokens),
                output_tokens: t.output_tokens,
                cache_write_5m: t.cache_write_tokens,
                cache_write_1h: 0,
                cache_read: t.cache_read_tokens,
            },
            sidechain: false,
        });
    }
    out
}

/// A Unix time in milliseconds as RFC 3339 UTC (`2026-11-26T00:50:55.169Z`), as the other hosts'
/// files date their responses (cost per day reads the date from it).
pub fn rfc3339_of_ms(ms: u64) -> String {
    let (secs, milli) = (ms / 1000, ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (Howard Hinnant's `civil_from_days`), for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_milliseconds_read_as_utc_dates() {
        assert_eq!(rfc3339_of_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_of_ms(1_795_654_255_169), "2026-11-26T00:50:55.169Z");
        assert_eq!(rfc3339_of_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
