//! Pure reading of Kilo Code's SQLite database (`~/.local/share/kilo/kilo.db`, OpenCode's schema
//! plus Kilo's tables), which no payload names (`HostFacts::session_file`'s derived path): usage
//! per assistant message and the context size. The engine runs [`MESSAGES`] on the database,
//! read-only (`engine::host_db`), and hands the rows here.
//!
//! A `message` row's `data` is a JSON document; an assistant message's holds
//! `tokens{input, output, reasoning, cache{read, write}}`, `modelID`, `time.created` (ms) and
//! `cost` (Kilo's own price: 0 for a provider without one). `session.tokens_*` are the sums of its
//! assistant messages' (measured on 7.7.9: 4193 + 4285 + 4407 = 12885). A subagent runs in a
//! child session (`session.parent_id`): its messages are the session's usage, not its context.
//!
//! # Usage
//!
//! As OpenCode's `message.updated` (`hosts::opencode::wire`): `tokens.input` is the uncached
//! input (the cached part is `cache.read`), reasoning is billed as output; each message counted
//! once by its id. The context is the latest main-session message's input and cache.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;

/// The messages of session `?1` and of its child sessions (subagents), oldest first, at most
/// `?2` of them, each `data` at most `?3` bytes: `(id, session_id, data)`.
pub const MESSAGES: &str = "SELECT m.id, m.session_id, m.data FROM message AS m \
     WHERE m.session_id IN (SELECT s.id FROM session AS s WHERE s.id = ?1 OR s.parent_id = ?1) \
     AND length(m.data) <= ?3 ORDER BY m.time_created, m.id LIMIT ?2";

/// The top-level sessions (a subagent's child session is read with its parent's, [`MESSAGES`])
/// and the working directory each was started in, oldest first, at most `?1` of them:
/// `(id, directory)`. What `import --discover` reads to find a project's sessions.
pub const SESSIONS: &str = "SELECT s.id, s.directory FROM session AS s \
     WHERE s.parent_id IS NULL ORDER BY s.time_created, s.id LIMIT ?1";

/// At most this many sessions are listed by [`SESSIONS`].
pub const MAX_SESSIONS: u32 = 100_000;

/// At most this many messages are read at once (a session's newest beyond them are not).
pub const MAX_MESSAGES: u32 = 20_000;

/// One `message` row as [`MESSAGES`] selects it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// `msg_…`.
    pub id: String,
    /// The session it is in (the subagent's child session for a subagent's message).
    pub session_id: String,
    /// Its JSON document.
    pub data: String,
}

/// What [`scan`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbScan {
    /// One per assistant message that reported usage.
    pub records: Vec<UsageRecord>,
    /// The latest main-session message's context size.
    pub context: Option<ContextReading>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Data {
    role: String,
    #[serde(rename = "modelID")]
    model_id: String,
    tokens: Tokens,
    time: Time,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens {
    input: f64,
    output: f64,
    reasoning: f64,
    cache: Cache,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Cache {
    read: f64,
    write: f64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Time {
    created: f64,
}

fn count(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x as u64
    } else {
        0
    }
}

/// A time in ms since the epoch as RFC 3339 UTC with milliseconds.
fn rfc3339(ms: f64) -> String {
    chrono::DateTime::from_timestamp_millis(ms as i64)
        .filter(|_| ms > 0.0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// The usage in `rows` of session `session` (its own messages and its subagents'). Never fails:
/// a row that does not parse, a user message or one without usage gives nothing.
pub fn scan(rows: &[Row], session: &str) -> DbScan {
    let mut out = DbScan::default();
    for row in rows {
        let Ok(d) = serde_json::from_str::<Data>(&row.data) else {
            continue;
        };
        if d.role != "assistant" {
            continue;
        }
        let t = &d.tokens;
        let usage = Usage {
            input_tokens: count(t.input),
            output_tokens: count(t.output) + count(t.reasoning),
            cache_read: count(t.cache.read),
            cache_write_5m: count(t.cache.write),
            cache_write_1h: 0,
        };
        if usage.input_tokens + usage.output_tokens + usage.cache_read + usage.cache_write_5m == 0 {
            continue;
        }
        let main = row.session_id == session;
        let timestamp = rfc3339(d.time.created);
        if main {
            out.context = Some(ContextReading {
                tokens: usage.input_tokens + usage.cache_read + usage.cache_write_5m,
                model: d.model_id.clone(),
                timestamp: timestamp.clone(),
            });
        }
        out.records.push(UsageRecord {
            message_id: row.id.clone(),
            request_id: row.session_id.clone(),
            model: d.model_id,
            timestamp,
            usage,
            sidechain: !main,
        });
    }
    out
}
