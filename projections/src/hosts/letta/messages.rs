//! Pure parsing of a Letta Code conversation's `messages.jsonl` (`--backend local`:
//! `~/.letta/lc-local-backend/conversations/<base64url("conversation:<id>")>/messages.jsonl`,
//! which no payload names; the engine finds the agent's conversations beside it): usage per
//! model response and the context size.
//!
//! The file is JSON lines (Letta Code 0.32.18, `manifest.json`'s `message_format:
//! "pi-session-entry-jsonl"`), appended as the conversation goes (an assistant message is there
//! before its tool's PreToolUse fires; measured): a `{"type":"session","id":<conversation>}`
//! line, then `{"type":"message","message":{role, …, metadata{agent_id, conversation_id}}}`.
//! An assistant message carries `provider`, `model`, `responseId` and `usage{input, output,
//! cacheRead, cacheWrite, reasoning, totalTokens, cost{…}}` (the cost is 0 from a local
//! provider: hookjournal prices the model itself).
//!
//! # Usage
//!
//! `input` is the uncached input (a server reporting 1,000 prompt tokens with 100 cached wrote
//! `input: 900, cacheRead: 100`; measured), cache reads = `cacheRead`, cache writes =
//! `cacheWrite`, output = `output`; each response counted once by its `responseId` (else the
//! message's id) within its conversation. Only the agent's own messages are taken
//! (`metadata.agent_id`). The context is the latest response's input + cache reads + writes.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessagesScan {
    /// One per response, in file order.
    pub records: Vec<UsageRecord>,
    /// The latest response's context size.
    pub context: Option<ContextReading>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    role: Option<String>,
    model: Option<String>,
    #[serde(rename = "responseId")]
    response_id: Option<String>,
    usage: Option<Tokens>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    agent_id: Option<String>,
    conversation_id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens {
    input: u64,
    output: u64,
    #[serde(rename = "cacheRead")]
    cache_read: u64,
    #[serde(rename = "cacheWrite")]
    cache_write: u64,
}

/// Parses the complete lines of `bytes`, keeping the responses of `agent` (every agent's when
/// `None`). Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8], agent: Option<&str>) -> MessagesScan {
    let mut out = MessagesScan::default();
    let needle = memchr::memmem::Finder::new(b"\"usage\"");
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        if needle.find(line).is_none() {
            continue;
        }
        if let Some(r) = record(line, agent) {
            out.context = Some(ContextReading {
                tokens: r.usage.input_tokens + r.usage.cache_read + r.usage.cache_write_5m,
                model: r.model.clone(),
                timestamp: r.timestamp.clone(),
            });
            out.records.push(r);
        }
    }
    out.consumed = start;
    out
}

/// One line's response, if it is an assistant message of `agent` with usage.
fn record(line: &[u8], agent: Option<&str>) -> Option<UsageRecord> {
    let l: Line = serde_json::from_slice(line).ok()?;
    let m = l.message.filter(|_| l.kind.as_deref() == Some("message"))?;
    if m.role.as_deref() != Some("assistant") {
        return None;
    }
    let meta = m.metadata?;
    if agent.is_some_and(|a| meta.agent_id.as_deref() != Some(a)) {
        return None;
    }
    let t = m.usage?;
    let id = m.response_id.or(m.id).filter(|i| !i.is_empty())?;
    Some(UsageRecord {
        message_id: id,
        request_id: meta.conversation_id.unwrap_or_default(),
        model: m.model.unwrap_or_default(),
        timestamp: l.timestamp.unwrap_or_default(),
        usage: Usage {
            input_tokens: t.input,
            output_tokens: t.output,
            cache_read: t.cache_read,
            cache_write_5m: t.cache_write,
            ..Usage::default()
        },
        sidechain: false,
    })
}

/// The agent a conversation's `conversation.json` names (`agent_id`).
pub fn conversation_agent(bytes: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Conversation {
        agent_id: Option<String>,
    }
    serde_json::from_slice::<Conversation>(bytes)
        .ok()?
        .agent_id
        .filter(|a| !a.is_empty())
}

/// How many of the backend's conversations the session has not read yet, the most recently
/// changed first, a hook looks at for the agent's own: every read is paid on the hook path.
pub const CONVERSATIONS_LOOKED_AT: usize = 32;
