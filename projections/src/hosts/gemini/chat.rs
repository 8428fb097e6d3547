//! Pure parsing of Gemini CLI's session file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`,
//! the payloads' `transcript_path`): usage per model response, the context size, and the
//! compressions that really happened.
//!
//! The file is a JSON-lines log (Gemini CLI 0.61.0): a metadata line, then one line per message
//! (`{"id","type":"user"|"gemini","tokens":{…},"model",…}`; a response with tool calls is written
//! again under the same id), and `{"$set":{…}}` updates. When the chat's history is replaced —
//! a resume, and a compression — the whole history is written as `{"$set":{"messages":[…]}}`.
//!
//! # Compression evidence
//!
//! Gemini fires `PreCompress` before every model request, before its threshold check, with the
//! same payload whether or not anything is compressed; the hook cannot tell. A compression that
//! happened replaces the history with `[…initial context, {user: summary}, {gemini: "Got it.
//! Thanks for the additional context!"}, …kept turns]` (its `ChatCompressionService`), and the
//! recording writes that history as a `$set` of messages whose two compression messages carry
//! ids never seen before (a resume keeps the ids it loaded). So a compression is a `$set` of
//! messages holding that acknowledgement under a new id: [`ChatScan::compressions`] lists the
//! ids, and the caller drops the ones its session already counted.
//!
//! # Usage
//!
//! `tokens{input,output,cached,thoughts,tool,total}` mirrors the API's `usageMetadata`
//! (`input` is the whole prompt, cached tokens included). One response is counted once, by its
//! id (the largest reading wins, as for Claude transcripts), as: uncached input = `input −
//! cached + tool`, cache reads = `cached`, output = `output + thoughts` (thinking is billed as
//! output). The context size is the latest response's `input + tool`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;
use std::collections::HashMap;

/// The model's fixed reply to the compression summary (Gemini CLI's `ChatCompressionService`).
pub const COMPRESSION_ACK: &str = "Got it. Thanks for the additional context!";

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatScan {
    /// One per response id, in first-seen order, keeping the largest usage.
    pub records: Vec<UsageRecord>,
    /// The latest response's context size (after the last compression in the chunk, if any).
    pub context: Option<ContextReading>,
    /// Ids of the compression acknowledgements in the chunk's history rewrites, in order.
    pub compressions: Vec<String>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<std::borrow::Cow<'a, str>>,
    tokens: Option<Tokens>,
    #[serde(rename = "$set")]
    set: Option<Set>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens {
    input: u64,
    output: u64,
    cached: u64,
    thoughts: u64,
    tool: u64,
}

#[derive(Deserialize, Default)]
struct Set {
    messages: Option<Vec<Message>>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    content: Option<serde_json::Value>,
}

impl Message {
    fn is_compression_ack(&self) -> bool {
        self.kind.as_deref() == Some("gemini")
            && self.content.as_ref().is_some_and(|c| {
                c.as_array().is_some_and(|parts| {
                    parts.len() == 1
                        && parts[0].get("text").and_then(|t| t.as_str()) == Some(COMPRESSION_ACK)
                }) || c.as_str() == Some(COMPRESSION_ACK)
            })
    }
}

/// Parses the complete lines of `bytes`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8]) -> ChatScan {
    let mut out = ChatScan::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let tokens = memchr::memmem::Finder::new(b"\"tokens\"");
    let ack = memchr::memmem::Finder::new(COMPRESSION_ACK.as_bytes());
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        // Only responses (with tokens) and history rewrites holding the acknowledgement matter.
        let is_set = line.starts_with(b"{\"$set\"");
        if !(is_set && ack.find(line).is_some() || !is_set && tokens.find(line).is_some()) {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        if let Some(messages) = l.set.and_then(|s| s.messages) {
            for m in messages.iter().filter(|m| m.is_compression_ack()) {
                if let Some(id) = &m.id {
                    out.compressions.push(id.clone());
                    // The context read before the compression is not the context now.
                    out.context = None;
                }
            }
            continue;
        }
        let (Some(id), Some(t)) = (l.id, l.tokens) else {
            continue;
        };
        if l.kind.as_deref() != Some("gemini") || id.is_empty() {
            continue;
        }
        let usage = Usage {
            input_tokens: t.input.saturating_sub(t.cached).saturating_add(t.tool),
            output_tokens: t.output.saturating_add(t.thoughts),
            cache_read: t.cached,
            ..Usage::default()
        };
        let model = l.model.map(|m| m.into_owned()).unwrap_or_default();
        let timestamp = l.timestamp.map(|t| t.into_owned()).unwrap_or_default();
        out.context = Some(ContextReading {
            tokens: t.input.saturating_add(t.tool),
            model: model.clone(),
            timestamp: timestamp.clone(),
        });
        let record = UsageRecord {
            message_id: id.into_owned(),
            request_id: String::new(),
            model,
            timestamp,
            usage,
            sidechain: false,
        };
        match index.get(&record.message_id) {
            Some(&i) => {
                if crate::transcript::larger(&record.usage, &out.records[i].usage) {
                    out.records[i] = record;
                }
            }
            None => {
                index.insert(record.message_id.clone(), out.records.len());
                out.records.push(record);
            }
        }
    }
    out.consumed = start;
    out
}
