//! Pure parsing of GitHub Copilot CLI's session file (`~/.copilot/session-state/<id>/events.jsonl`,
//! the payloads' `transcriptPath`) for usage and the context size.
//!
//! The file is Copilot's own event log (1.0.102): one JSON object per line, `{"type", "data",
//! "id", "timestamp", "agentId"?}`. Every model call writes one `session.usage_record`,
//! `data.usage{model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
//! maxPromptTokens, apiCallId}`, the main agent's and its subagents' alike (a subagent's line
//! carries a top-level `agentId`) in the session's one file. A compaction's own summary request
//! is not among them: `session.compaction_complete` reports it as `compactionTokensUsed`, and is
//! also the evidence of the compaction itself (`compactionAttemptId`; `success`): Copilot fires
//! no hook after a compaction, runs it while the turn goes on, fires `preCompact` for a `/compact`
//! with nothing to compact, and never runs a `.claude/settings.json` PreCompact handler.
//! `session.shutdown` repeats the totals (without the compaction requests) and is not counted;
//! nor is Copilot's OpenTelemetry file export, which hookjournal never reads.
//!
//! Measured against a server that reports `prompt_tokens` 1,000 with `cached_tokens` 400:
//! `inputTokens` 1,000, `cacheReadTokens` 400. So uncached input = `inputTokens −
//! cacheReadTokens`, cache reads = `cacheReadTokens`, cache writes = `cacheWriteTokens`, output =
//! `outputTokens`. Each call is counted once, by its line's `id`. The context is the latest
//! main-agent call's `inputTokens`, against its `maxPromptTokens`.

use crate::transcript::{ContextReading, Usage, UsageRecord};
use serde::Deserialize;

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionScan {
    /// One per model call (and per compaction request), in file order.
    pub records: Vec<UsageRecord>,
    /// The latest main-agent call's context size.
    pub context: Option<ContextReading>,
    /// That call's prompt limit (`maxPromptTokens`): the window Copilot compacts against.
    pub window: Option<u64>,
    /// The compactions that completed, by `compactionAttemptId`, in order.
    pub compactions: Vec<String>,
    /// Bytes through the end of the last complete line.
    pub consumed: usize,
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: String,
    #[serde(default)]
    timestamp: String,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    usage: Option<Tokens>,
    #[serde(rename = "compactionTokensUsed")]
    compaction: Option<Tokens>,
    #[serde(rename = "compactionAttemptId")]
    attempt: Option<String>,
    success: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Tokens {
    model: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    max_prompt_tokens: Option<u64>,
    api_call_id: Option<String>,
}

impl Tokens {
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(self.cache_read_tokens),
            output_tokens: self.output_tokens,
            cache_write_5m: self.cache_write_tokens,
            cache_write_1h: 0,
            cache_read: self.cache_read_tokens,
        }
    }
}

/// Parses the complete lines of `bytes`. Never fails: lines that do not parse are skipped.
pub fn scan(bytes: &[u8]) -> SessionScan {
    let mut out = SessionScan::default();
    let wanted = [
        memchr::memmem::Finder::new(b"\"session.usage_record\""),
        memchr::memmem::Finder::new(b"\"session.compaction_complete\""),
    ];
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = bytes[start..start + len].trim_ascii();
        start += len + 1;
        // Most lines are tool results and messages: parse only the two kinds read here.
        if wanted.iter().all(|f| f.find(line).is_none()) {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let Some(data) = l.data else {
            continue;
        };
        match l.kind.as_deref() {
            Some("session.usage_record") => {
                let Some(t) = data.usage else {
                    continue;
                };
                let model = t.model.clone().unwrap_or_default();
                if l.agent_id.is_none() {
                    out.context = Some(ContextReading {
                        tokens: t.input_tokens,
                        model: model.clone(),
                        timestamp: l.timestamp.clone(),
                    });
                    out.window = t.max_prompt_tokens.filter(|w| *w > 0).or(out.window);
                }
                out.records.push(UsageRecord {
                    message_id: format!("copilot:{}", l.id),
                    request_id: t.api_call_id.clone().unwrap_or_default(),
                    model,
                    timestamp: l.timestamp,
                    usage: t.usage(),
                    sidechain: l.agent_id.is_some(),
                });
            }
            Some("session.compaction_complete") => {
                let attempt = data.attempt.clone().unwrap_or_else(|| l.id.clone());
                if data.success != Some(false) {
                    out.compactions.push(attempt.clone());
                }
                let Some(t) = data.compaction else {
                    continue;
                };
                out.records.push(UsageRecord {
                    message_id: format!("copilot-compaction:{attempt}"),
                    request_id: String::new(),
                    model: t.model.clone().unwrap_or_default(),
                    timestamp: l.timestamp,
                    usage: t.usage(),
                    sidechain: false,
                });
            }
            _ => {}
        }
    }
    out.consumed = start;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &str = r#"{"type":"session.usage_record","data":{"usage":{"model":"gpt-4.1","inputTokens":1000,"outputTokens":12,"cacheReadTokens":400,"cacheWriteTokens":0,"maxPromptTokens":64000,"apiCallId":"chatcmpl-1"}},"id":"u1","timestamp":"2026-11-25T16:51:35.438Z"}"#;
    const SUB: &str = r#"{"type":"session.usage_record","data":{"usage":{"model":"gpt-4.1","inputTokens":2043,"outputTokens":12,"maxPromptTokens":64000,"apiCallId":"chatcmpl-2"}},"agentId":"5ae3","id":"u2","timestamp":"2026-11-25T16:51:36.000Z"}"#;
    const COMPACTED: &str = r#"{"type":"session.compaction_complete","data":{"success":true,"compactionAttemptId":"c1","summaryContent":"s","compactionTokensUsed":{"requestCount":1,"inputTokens":12090,"outputTokens":12,"cacheReadTokens":0,"cacheWriteTokens":0,"model":"gpt-4.1"}},"id":"x","timestamp":"2026-11-25T16:51:37.000Z"}"#;

    #[test]
    fn each_call_once_uncached_input_apart_and_the_main_agents_context() {
        let text = format!(
            "{CALL}\n{{\"type\":\"tool.execution_complete\",\"data\":{{}}}}\n{SUB}\n{COMPACTED}\n{{\"type\":\"session.usage_rec"
        );
        let scan = scan(text.as_bytes());
        assert_eq!(scan.records.len(), 3);
        let first = &scan.records[0];
        assert_eq!(first.message_id, "copilot:u1");
        assert_eq!(first.request_id, "chatcmpl-1");
        assert_eq!(
            (
                first.usage.input_tokens,
                first.usage.cache_read,
                first.usage.output_tokens
            ),
            (600, 400, 12)
        );
        assert!(scan.records[1].sidechain, "a subagent's call");
        assert_eq!(scan.records[2].message_id, "copilot-compaction:c1");
        assert_eq!(scan.records[2].usage.input_tokens, 12090);
        // The context is the main agent's last call, not the subagent's.
        assert_eq!(scan.context.as_ref().map(|c| c.tokens), Some(1000));
        assert_eq!(scan.window, Some(64000));
        assert_eq!(scan.compactions, ["c1"]);
        // The unfinished last line is left for the next read.
        assert_eq!(scan.consumed, text.rfind('\n').unwrap() + 1);
    }
}
