//! Pure reading of a Mistral Vibe session store (`~/.vibe/logs/session/unified/<session>/`,
//! the payload's `transcript_path`, a directory; Vibe 3.0.3, measured in
//! `tests/fixtures/real-hosts/mistral-vibe-3.0.3/FACTS.md`): the session's running token totals.
//!
//! The store publishes a *generation* when the session goes quiescent (after a turn's
//! `post_agent`): `CURRENT` names it, its `manifest.json` names the recovery journal segment
//! that follows it (`recovery_journal_segment.path`, `journal/<seq>.jsonl`), and its
//! `projection-state.json` holds the totals up to it (`snapshot.session.tokenUsage`:
//! `inputTokens`, cached included, `cachedInputTokens`, `outputTokens`). Each model response
//! after it is an `action_result` line of that segment, `payload.result.type ==
//! "completion_succeeded"`, its `payload.result.result.usage` (`input_tokens` with the cached
//! and cache-written ones in it, `cached_input_tokens`, `cache_write_tokens`, `output_tokens`).
//! Vibe deletes all but the newest two generations and segments, so the totals are the
//! generation's plus its segment's: one record per session ([`TOTALS`]), a larger reading
//! replacing the one counted. The model is `meta.json`'s `config.model_name`.

use crate::transcript::{Usage, UsageRecord};
use serde::Deserialize;
use serde_json::Value;

/// The `request_id` of the totals record (its `message_id` is the session's id).
pub const TOTALS: &str = "vibe-session-totals";

/// Token counts as Vibe keeps them: the input with the cached and cache-written in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The input, cached and cache-written included.
    pub input: u64,
    /// The cached input.
    pub cached: u64,
    /// The cache-written input.
    pub cache_write: u64,
    /// The output (reasoning included).
    pub output: u64,
}

impl Counts {
    fn add(self, o: Counts) -> Counts {
        Counts {
            input: self.input.saturating_add(o.input),
            cached: self.cached.saturating_add(o.cached),
            cache_write: self.cache_write.saturating_add(o.cache_write),
            output: self.output.saturating_add(o.output),
        }
    }
}

/// `CURRENT`'s generation: digits only (it names a directory), else `None`.
pub fn generation(current: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(current).ok()?;
    let g = v.get("generation")?.as_str()?;
    (!g.is_empty() && g.len() <= 20 && g.bytes().all(|b| b.is_ascii_digit())).then(|| g.to_string())
}

/// The manifest's journal segment, `journal/<digits>.jsonl` and nothing else.
pub fn segment(manifest: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(manifest).ok()?;
    let p = v.pointer("/recovery_journal_segment/path")?.as_str()?;
    let seq = p.strip_prefix("journal/")?.strip_suffix(".jsonl")?;
    (!seq.is_empty() && seq.len() <= 20 && seq.bytes().all(|b| b.is_ascii_digit()))
        .then(|| p.to_string())
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct TokenUsage {
    input_tokens: u64,
    cached_input_tokens: u64,
    cache_write_tokens: u64,
    output_tokens: u64,
}

/// The totals up to the generation (`projection-state.json`); nothing when it does not parse.
pub fn snapshot(projection_state: &[u8]) -> Counts {
    let t = serde_json::from_slice::<Value>(projection_state)
        .ok()
        .and_then(|v| v.pointer("/snapshot/session/tokenUsage").cloned())
        .and_then(|u| serde_json::from_value::<TokenUsage>(u).ok())
        .unwrap_or_default();
    Counts {
        input: t.input_tokens,
        cached: t.cached_input_tokens,
        cache_write: t.cache_write_tokens,
        output: t.output_tokens,
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ReplyUsage {
    input_tokens: u64,
    cached_input_tokens: u64,
    cache_write_tokens: u64,
    output_tokens: u64,
}

/// The responses of a journal segment (its complete lines), summed.
pub fn journal(segment: &[u8]) -> Counts {
    let complete = segment
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&segment[..0], |i| &segment[..=i]);
    let mut sum = Counts::default();
    for line in complete.split(|b| *b == b'\n') {
        // Cheap filter first: the segment journals every request whole.
        if !contains(line, b"completion_succeeded") {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("action_result")
            || v.pointer("/payload/result/type").and_then(Value::as_str)
                != Some("completion_succeeded")
        {
            continue;
        }
        let Some(u) = v
            .pointer("/payload/result/result/usage")
            .cloned()
            .and_then(|u| serde_json::from_value::<ReplyUsage>(u).ok())
        else {
            continue;
        };
        sum = sum.add(Counts {
            input: u.input_tokens,
            cached: u.cached_input_tokens,
            cache_write: u.cache_write_tokens,
            output: u.output_tokens,
        });
    }
    sum
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `meta.json`'s model (`config.model_name`, the API name).
pub fn model(meta: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(meta).ok()?;
    let m = v.pointer("/config/model_name")?.as_str()?;
    (!m.is_empty()).then(|| m.to_string())
}

/// The session's totals record: the generation's and its segment's counts; `None` before any
/// response.
pub fn totals(
    session: &str,
    snapshot: Counts,
    journal: Counts,
    model: Option<&str>,
) -> Option<UsageRecord> {
    let c = snapshot.add(journal);
    if c.input == 0 && c.output == 0 {
        return None;
    }
    Some(UsageRecord {
        message_id: session.to_string(),
        request_id: TOTALS.to_string(),
        model: model.unwrap_or_default().to_string(),
        timestamp: String::new(),
        usage: Usage {
            input_tokens: c
                .input
                .saturating_sub(c.cached)
                .saturating_sub(c.cache_write),
            output_tokens: c.output,
            cache_write_5m: c.cache_write,
            cache_write_1h: 0,
            cache_read: c.cached,
        },
        sidechain: false,
    })
}
