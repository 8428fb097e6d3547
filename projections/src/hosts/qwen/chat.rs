//! Pure parsing of Qwen Code's session file (`~/.qwen/projects/<cwd, / → ->/chats/<session>.jsonl`,
//! the payloads' `transcript_path`): usage per model response and the context size.
//!
//! The file is a JSON-lines log (Qwen Code 0.24.4): one line per record, `{"uuid", "parentUuid",
//! "sessionId", "timestamp", "type": "user"|"assistant"|"tool_result"|"system", …}`. Each model
//! response of the main agent is one `assistant` line with `model`, `contextWindowSize` and
//! `usageMetadata{promptTokenCount, candidatesTokenCount, thoughtsTokenCount, totalTokenCount,
//! cachedContentTokenCount}` (Gemini's names; what ccusage reads for Qwen). A resumed session
//! appends to the same file. Neither a compression's summary request nor a subagent's requests
//! are written there (measured: a foreground `agent` tool's requests leave no line), so they are
//! not counted, as ccusage does not count them; the compaction itself is told by the PreCompact
//! hook, which Qwen fires only for a compression that runs.
//!
//! # Usage
//!
//! Measured against a server reporting `prompt_tokens` 11,000 with `cached_tokens` 4,000:
//! `promptTokenCount` 11,000, `cachedContentTokenCount` 4,000. So uncached input =
//! `promptTokenCount − cachedContentTokenCount`, cache reads = `cachedContentTokenCount`, output
//! = `candidatesTokenCount + thoughtsTokenCount` (thinking is billed as output). Each response is
//! counted once, by its line's `uuid`. The context is the latest response's `promptTokenCount`,
//! against its `contextWindowSize`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;
use std::borrow::Cow;

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatScan {
    /// One per response, in file order.
    pub records: Vec<UsageRecord>,
    /// The latest response's context size.
    pub context: Option<ContextReading>,
    /// That response's `contextWindowSize`: the window Qwen compresses against.
    pub window: Option<u64>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(rename = "usageMetadata")]
    usage: Option<Tokens>,
    #[serde(rename = "contextWindowSize")]
    window: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Tokens {
    prompt_token_count: u64,
    candidates_token_count: u64,
    thoughts_token_count: u64,
    cached_content_token_count: u64,
}

/// Parses the complete lines of `bytes`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8]) -> ChatScan {
    let mut out = ChatScan::default();
    let usage = memchr::memmem::Finder::new(b"\"usageMetadata\"");
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        // Only responses carry usage: the other lines are not parsed at all.
        if usage.find(line).is_none() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let (Some(id), Some(t)) = (l.uuid, l.usage) else {
            continue;
        };
        if l.kind.as_deref() != Some("assistant") || id.is_empty() {
            continue;
        }
        let model = l.model.map(Cow::into_owned).unwrap_or_default();
        let timestamp = l.timestamp.map(Cow::into_owned).unwrap_or_default();
        out.context = Some(ContextReading {
            tokens: t.prompt_token_count,
            model: model.clone(),
            timestamp: timestamp.clone(),
        });
        if l.window.is_some() {
            out.window = l.window;
        }
        out.records.push(UsageRecord {
            message_id: id.into_owned(),
            request_id: String::new(),
            model,
            timestamp,
            usage: Usage {
                input_tokens: t
                    .prompt_token_count
                    .saturating_sub(t.cached_content_token_count),
                output_tokens: t
                    .candidates_token_count
                    .saturating_add(t.thoughts_token_count),
                cache_read: t.cached_content_token_count,
                ..Usage::default()
            },
            sidechain: false,
        });
    }
    out.consumed = start;
    out
}
