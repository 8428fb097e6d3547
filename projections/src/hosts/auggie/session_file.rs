//! Pure parsing of an Auggie session record (`~/.augment/sessions/<conversation_id>.json`,
//! which no payload names: `HostFacts::session_file`'s derived path): usage per model call and
//! the context size.
//!
//! The file is one JSON document (Auggie 0.36.0), rewritten whole as the session goes:
//! `{sessionId, chatHistory: [{exchange: {request_id, request_nodes, response_nodes, …},
//! finishedAt, …}], agentState: {modelId, …}}`. One exchange per model call; its usage is a
//! `type: 10` node of `response_nodes` (`token_usage{input_tokens, output_tokens,
//! cache_read_input_tokens, cache_creation_input_tokens}`, Anthropic's fields: input excludes
//! the cache). At the Stop hook every exchange of the turn is in it (measured).
//!
//! # Usage
//!
//! Each exchange counted once, by its `request_id`: uncached input = `input_tokens`, cache reads
//! = `cache_read_input_tokens`, cache writes = `cache_creation_input_tokens`, output =
//! `output_tokens`. The model is the session's `agentState.modelId` (empty when the backend chose
//! its default: then hookjournal names none and prices none). The context is the last
//! exchange's input, cache included.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;

/// What [`scan`] found in the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionScan {
    /// One per exchange that reported usage.
    pub records: Vec<UsageRecord>,
    /// The last such exchange's context size.
    pub context: Option<ContextReading>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default, rename = "chatHistory")]
    chat_history: Vec<Item>,
    #[serde(default, rename = "agentState")]
    agent_state: Option<AgentState>,
}

#[derive(Deserialize)]
struct AgentState {
    #[serde(default, rename = "modelId")]
    model_id: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    exchange: Option<Exchange>,
    #[serde(default, rename = "finishedAt")]
    finished_at: Option<String>,
}

#[derive(Deserialize)]
struct Exchange {
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    response_nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    #[serde(rename = "type")]
    kind: Option<u64>,
    token_usage: Option<TokenUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
}

/// The usage node's type in `response_nodes`.
const TOKEN_USAGE: u64 = 10;

/// Parses the whole file `bytes` of session `session` (the key part that keeps two sessions'
/// request ids apart). Never fails: a file that does not parse (cut short, not Auggie's) gives
/// nothing.
pub fn scan(bytes: &[u8], session: &str) -> SessionScan {
    let mut out = SessionScan::default();
    let Ok(file) = serde_json::from_slice::<File>(bytes) else {
        return out;
    };
    let model = file
        .agent_state
        .and_then(|a| a.model_id)
        .unwrap_or_default();
    for item in file.chat_history {
        let Some(x) = item.exchange else { continue };
        let Some(id) = x.request_id.filter(|r| !r.is_empty()) else {
            continue;
        };
        let mut usage = Usage::default();
        let mut seen = false;
        for n in x.response_nodes {
            if let (Some(TOKEN_USAGE), Some(t)) = (n.kind, n.token_usage) {
                seen = true;
                usage.input_tokens += t.input_tokens;
                usage.output_tokens += t.output_tokens;
                usage.cache_read += t.cache_read_input_tokens;
                usage.cache_write_5m += t.cache_creation_input_tokens;
            }
        }
        if !seen {
            continue;
        }
        let timestamp = item.finished_at.unwrap_or_default();
        out.context = Some(ContextReading {
            tokens: usage.input_tokens + usage.cache_read + usage.cache_write_5m,
            model: model.clone(),
            timestamp: timestamp.clone(),
        });
        out.records.push(UsageRecord {
            message_id: id,
            request_id: session.to_string(),
            model: model.clone(),
            timestamp,
            usage,
            sidechain: false,
        });
    }
    out
}
