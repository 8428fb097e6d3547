//! Pure parsing of Factory Droid's session files (`~/.factory/sessions/<cwd, / → ->/<session>`,
//! the payloads' `transcript_path` is its `.jsonl`): its compactions, the model, and the session's
//! token totals from the `<session>.settings.json` beside it.
//!
//! Measured on Droid 0.225.2 (`tests/fixtures/real-hosts/droid-0.225.1/FACTS.md`):
//!
//! - The `.jsonl` is a JSON-lines log: `session_start`, `message` lines (`message.role`; an
//!   assistant's carries `modelId`, e.g. `custom:gpt-4.1` for a model of the user's own
//!   `customModels`), `agent_turn_outcome`, and one `compaction_state` line (`id`,
//!   `summaryText`, `removedCount`) per compaction its token threshold started. No line carries
//!   usage. A compaction asked for (`droid.compact_session`, `/compress`) writes its
//!   `compaction_state` into a new session file (its `session_start` names this one as `parent`)
//!   while the hooks go on with this session's id: it is told by the PreCompact hook instead.
//! - The `.settings.json` is rewritten whole as the session goes: `tokenUsage{inputTokens,
//!   outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens}` are the session's running
//!   totals over every model request (summary requests included), already up to date when the
//!   turn's Stop hook runs; `lastCallTokenUsage{inputTokens, cacheReadTokens}` is the latest
//!   request's. What ccusage reads for Droid.
//!
//! # Usage
//!
//! Against a server that reports `prompt_tokens` 4,000 with `cached_tokens` 100: `inputTokens`
//! grows by 3,900 and `cacheReadTokens` by 100. So uncached input = `inputTokens`, cache reads =
//! `cacheReadTokens`, cache writes = `cacheCreationTokens`, output = `outputTokens +
//! thinkingTokens`. The totals are one record per session file, keyed by the file: a later,
//! larger reading replaces the earlier one. The context is the latest request's `inputTokens +
//! cacheReadTokens`.

use crate::transcript::{Usage, UsageRecord};
use serde::Deserialize;
use std::borrow::Cow;

/// The key part that marks a Droid session's running totals (`UsageRecord::request_id`).
pub const TOTALS: &str = "droid-session-totals";

/// What [`scan`] found in a chunk of the `.jsonl`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionScan {
    /// The compactions its threshold started, by their line's `id`, in order.
    pub compactions: Vec<String>,
    /// The latest assistant message's model (`custom:` taken off).
    pub model: Option<String>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "modelId")]
    model: Option<Cow<'a, str>>,
}

/// A model id as Droid writes it, as prices name it: a custom model's `custom:` prefix taken
/// off.
pub fn model_name(id: &str) -> String {
    id.strip_prefix("custom:").unwrap_or(id).to_string()
}

/// Parses the complete lines of `bytes`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8]) -> SessionScan {
    let mut out = SessionScan::default();
    let compaction = memchr::memmem::Finder::new(b"\"compaction_state\"");
    let model = memchr::memmem::Finder::new(b"\"modelId\"");
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        // Only compactions and assistant messages matter: the other lines are not parsed.
        if compaction.find(line).is_none() && model.find(line).is_none() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        match (l.kind.as_deref(), l.id, l.message) {
            (Some("compaction_state"), Some(id), _) if !id.is_empty() => {
                out.compactions.push(id.into_owned())
            }
            (Some("message"), _, Some(m)) if m.role.as_deref() == Some("assistant") => {
                if let Some(id) = m.model.filter(|m| !m.is_empty()) {
                    out.model = Some(model_name(&id));
                }
            }
            _ => {}
        }
    }
    out.consumed = start;
    out
}

/// The session's totals as its `.settings.json` holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Totals {
    /// The running totals, one record keyed by the session file (`message_id`) and [`TOTALS`].
    pub record: UsageRecord,
    /// The latest request's context (`lastCallTokenUsage`), when there was one.
    pub context: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings<'a> {
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    token_usage: Option<Tokens>,
    last_call_token_usage: Option<Tokens>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Tokens {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_tokens: u64,
    cache_read_tokens: u64,
    thinking_tokens: u64,
}

/// Reads a `.settings.json` (`bytes`) of session file `file` (its name without extension).
/// `model`: the one the `.jsonl` named last, else the settings' own. `None`: no totals there
/// (nothing requested yet, or not Droid's file).
pub fn totals(bytes: &[u8], file: &str, model: Option<&str>) -> Option<Totals> {
    let s: Settings = serde_json::from_slice(bytes).ok()?;
    let t = s.token_usage?;
    let usage = Usage {
        input_tokens: t.input_tokens,
        output_tokens: t.output_tokens.saturating_add(t.thinking_tokens),
        cache_write_5m: t.cache_creation_tokens,
        cache_write_1h: 0,
        cache_read: t.cache_read_tokens,
    };
    if usage.total() == 0 {
        return None;
    }
    let model = model
        .map(str::to_string)
        .or_else(|| s.model.as_deref().map(model_name))
        .unwrap_or_default();
    let context = s
        .last_call_token_usage
        .map(|c| c.input_tokens.saturating_add(c.cache_read_tokens))
        .filter(|t| *t > 0);
    Some(Totals {
        record: UsageRecord {
            message_id: file.to_string(),
            request_id: TOTALS.to_string(),
            model,
            timestamp: String::new(),
            usage,
            sidechain: false,
        },
        context,
    })
}
