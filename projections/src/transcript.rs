//! Pure parsing of Claude Code transcript bytes (JSONL), as described in section 2 of the hook
//! protocol notes.
//!
//! The transcript is append-only and written asynchronously, so callers read it in chunks:
//! [`scan`] parses every *complete* (`'\n'`-terminated) line of a chunk and reports how many bytes
//! it consumed; the caller keeps the unconsumed tail (a line still being written) and prepends it
//! to the next chunk.
//!
//! # Which lines count, and how they are deduplicated (agreement with ccusage)
//!
//! The reference is `ccusage claude session --offline --json`; the rules below were checked
//! against its output for the fixtures in `tests/fixtures/transcripts-corpus/` and
//! `tests/fixtures/claude-session/` (see `projections/tests/ccusage_agreement.rs`, which matches it to the
//! token):
//!
//! * A line counts when it has a `message.usage` object carrying `input_tokens` and
//!   `output_tokens`, and a non-empty top-level `timestamp`. ccusage does not look at `type`;
//!   neither do we (in practice only `assistant` lines carry usage).
//! * `message.model == "<synthetic>"` lines (Claude Code's locally generated "No response
//!   requested." and API-error stand-ins, always zero usage) are skipped: they are neither
//!   records nor context readings. ccusage keeps them with no model and no tokens, which adds
//!   nothing.
//! * One API response is written as several lines (one per content block) sharing `message.id`
//!   and `requestId`; early lines carry *partial* usage (typically a tiny `output_tokens`). ccusage
//!   (20.x, the version that produced the fixtures; older versions kept the first line) keeps, per
//!   `(message.id, requestId)`, the line with the **largest** `input + output + cache creation +
//!   cache read` and replaces the *whole* entry with it (model and timestamp too: its
//!   `firstActivity` is the timestamp of the largest line, not of the first partial one). On a tie
//!   the earlier line stays. The partial lines are not monotonic (a middle block can report fewer
//!   output tokens than the first), so "last line wins" is not the rule, "largest wins" is. In
//!   the corpus, first-wins would under-count output tokens by 20–36 k per session.
//! * A line with `message.id` but no `requestId` (some transports omit it) is keyed by the message
//!   id alone: its `request_id` is `""`. ccusage does the same (`(message_id, None)`).
//! * A line without `message.id` is counted on its own by ccusage (it cannot be deduplicated). To
//!   keep re-scans idempotent we key it by the line's own `uuid` (`message_id = "uuid:<uuid>"`,
//!   `request_id = ""`); a line with neither `message.id` nor `uuid` is ignored. Claude Code always
//!   writes `message.id`, so this never happens in real transcripts.
//! * Explicitly empty `message.id`, `requestId` or `message.model` strings make ccusage reject the
//!   line; so do we. An absent model is kept as `""` (tokens counted, cost unpriced).
//! * Cache writes: when `usage.cache_creation` {`ephemeral_5m_input_tokens`,
//!   `ephemeral_1h_input_tokens`} is present it is authoritative (the flat
//!   `cache_creation_input_tokens` is ignored, exactly like ccusage); otherwise all of
//!   `cache_creation_input_tokens` counts as 5-minute writes. An all-zero breakdown (what Claude
//!   Code writes when the API sent none) counts as absent.
//! * Deduplication is per session and spans files: subagent transcripts
//!   (`<session>/subagents/agent-*.jsonl`) count toward the parent session. Merge records from
//!   several chunks/files by [`UsageRecord::key`] with [`larger`].
//!
//! Known divergence: ccusage additionally drops a `/btw` side-question replay (an `isSidechain`
//! line repeating a main-chain `message.id` under a *different* `requestId` at the same
//! timestamp). Such replays are rare and are counted here as their own response.
//!
//! # Speed
//!
//! This runs on the hook path. Lines are split without copying, lines that cannot carry usage
//! (no `"usage"` substring) are skipped without being parsed, and candidate lines are parsed into
//! small borrowed structs that ignore every other field (message contents are skipped by the
//! parser, never materialised).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;

/// Token counts of one API response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache writes with the default 5-minute TTL (1.25× input price).
    pub cache_write_5m: u64,
    /// Cache writes with the 1-hour TTL (2× input price).
    pub cache_write_1h: u64,
    /// Cache hits and refreshes (0.1× input price).
    pub cache_read: u64,
}

impl Usage {
    /// All cache writes (5-minute + 1-hour): ccusage's `cacheCreationTokens`.
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m.saturating_add(self.cache_write_1h)
    }

    /// All five counters: ccusage's `totalTokens`, and the measure [`larger`] compares.
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_write())
            .saturating_add(self.cache_read)
    }

    /// Context window used by the request: input + cache writes + cache reads (everything the
    /// model read). This is also the measure Anthropic's long-context price tiers are chosen by.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_write())
            .saturating_add(self.cache_read)
    }

    /// Adds `other` counter by counter (saturating).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_write_5m = self.cache_write_5m.saturating_add(other.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }
}

/// The usage of one API response, deduplicated within a chunk.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UsageRecord {
    /// `message.id`, or `"uuid:<line uuid>"` for the (theoretical) line without one.
    pub message_id: String,
    /// `requestId`, or `""` when the line has none.
    pub request_id: String,
    /// `message.model` as written (e.g. `claude-sonnet-4-20250514`), `""` when absent.
    pub model: String,
    /// Top-level `timestamp` of the line that carried the kept (largest) usage.
    pub timestamp: String,
    /// The usage (the largest of the lines that carried it).
    pub usage: Usage,
    /// `isSidechain == true` (subagent / side conversation).
    pub sidechain: bool,
}

impl UsageRecord {
    /// The deduplication key: `(message_id, request_id)`.
    pub fn key(&self) -> (String, String) {
        (self.message_id.clone(), self.request_id.clone())
    }
}

/// Context window used by the latest main-chain response.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextReading {
    /// `input + cache writes + cache reads` of that response.
    pub tokens: u64,
    /// The model of that response.
    pub model: String,
    /// Its line's timestamp.
    pub timestamp: String,
}

/// What [`scan`] found in one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    /// One per `(message.id, requestId)` seen in this chunk, deduplicated keeping the largest
    /// usage, in first-seen order; `<synthetic>` lines skipped.
    pub records: Vec<UsageRecord>,
    /// Latest main-chain (`isSidechain != true`) response's context tokens, by line order.
    pub context: Option<ContextReading>,
    /// Bytes through the end of the last complete (`'\n'`-terminated) line. A trailing partial
    /// line is not consumed.
    pub consumed: usize,
    /// Complete, non-blank lines that are not transcript entries: lines that do not look like a
    /// JSON object (`{...}`), and lines mentioning `"usage"` that fail to parse. (Lines without
    /// `"usage"` are deliberately not parsed, so a truncated object among them goes uncounted.)
    pub skipped_lines: usize,
}

/// Merge rule for the same key across chunks and files: `true` (replace `old` with `new`) when
/// `new` has strictly more tokens in total. Ties keep the record already held, like ccusage.
pub fn larger(new: &Usage, old: &Usage) -> bool {
    new.total() > old.total()
}

/// Parses the complete lines of `bytes`. Never fails: unparseable lines are counted and skipped.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut out = Scan::default();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let usage = memchr::memmem::Finder::new(USAGE_NEEDLE);
    let mut start = 0;
    while let Some(len) = memchr::memchr(b'\n', &bytes[start..]) {
        let line = &bytes[start..start + len];
        start += len + 1;
        scan_line(line, &usage, &mut out, &mut index);
    }
    out.consumed = start;
    out
}

const USAGE_NEEDLE: &[u8] = b"\"usage\"";
const SYNTHETIC_MODEL: &str = "<synthetic>";

fn scan_line(
    line: &[u8],
    usage: &memchr::memmem::Finder<'_>,
    out: &mut Scan,
    index: &mut HashMap<(String, String), usize>,
) {
    let line = line.trim_ascii();
    if line.is_empty() {
        return;
    }
    if usage.find(line).is_none() {
        if line.first() != Some(&b'{') || line.last() != Some(&b'}') {
            out.skipped_lines += 1;
        }
        return;
    }
    let Ok(entry) = serde_json::from_slice::<RawLine<'_>>(line) else {
        out.skipped_lines += 1;
        return;
    };
    let Some(record) = entry.into_record() else {
        return;
    };
    if !record.sidechain {
        out.context = Some(ContextReading {
            tokens: record.usage.context_tokens(),
            model: record.model.clone(),
            timestamp: record.timestamp.clone(),
        });
    }
    let key = (record.message_id.clone(), record.request_id.clone());
    match index.get(&key) {
        Some(&at) => {
            if larger(&record.usage, &out.records[at].usage) {
                out.records[at] = record;
            }
        }
        None => {
            index.insert(key, out.records.len());
            out.records.push(record);
        }
    }
}

/// The fields of a transcript line we need; everything else is skipped by the parser.
#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(borrow, default)]
    message: Option<RawMessage<'a>>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(borrow, default)]
    uuid: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation: Option<RawCacheCreation>,
}

#[derive(Deserialize)]
struct RawCacheCreation {
    #[serde(default)]
    ephemeral_5m_input_tokens: Option<u64>,
    #[serde(default)]
    ephemeral_1h_input_tokens: Option<u64>,
}

impl RawUsage {
    fn to_usage(&self) -> Option<Usage> {
        // Claude Code writes an all-zero breakdown when the API gave none (gateways, older API
        // versions): then, like Claude Code's own cost and ccusage, the flat total is 5-minute.
        let breakdown = self.cache_creation.as_ref().map(|b| {
            (
                b.ephemeral_5m_input_tokens.unwrap_or(0),
                b.ephemeral_1h_input_tokens.unwrap_or(0),
            )
        });
        let (cache_write_5m, cache_write_1h) = match breakdown {
            Some((m5, h1)) if m5 + h1 > 0 => (m5, h1),
            _ => (self.cache_creation_input_tokens.unwrap_or(0), 0),
        };
        Some(Usage {
            input_tokens: self.input_tokens?,
            output_tokens: self.output_tokens?,
            cache_write_5m,
            cache_write_1h,
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
        })
    }
}

impl RawLine<'_> {
    fn into_record(self) -> Option<UsageRecord> {
        let message = self.message?;
        let usage = message.usage.as_ref()?.to_usage()?;
        let model = match message.model {
            Some(model) if model.is_empty() || model == SYNTHETIC_MODEL => return None,
            Some(model) => model.into_owned(),
            None => String::new(),
        };
        let timestamp = self.timestamp.filter(|t| !t.is_empty())?.into_owned();
        let request_id = match self.request_id {
            Some(id) if id.is_empty() => return None,
            Some(id) => id.into_owned(),
            None => String::new(),
        };
        let message_id = match message.id {
            Some(id) if id.is_empty() => return None,
            Some(id) => id.into_owned(),
            None => format!("uuid:{}", self.uuid.filter(|u| !u.is_empty())?),
        };
        Some(UsageRecord {
            message_id,
            request_id,
            model,
            timestamp,
            usage,
            sidechain: self.is_sidechain == Some(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(
        id: &str,
        req: &str,
        model: &str,
        side: bool,
        ts: &str,
        (i, o, cc, cr): (u64, u64, u64, u64),
    ) -> String {
        format!(
            r#"{{"parentUuid":null,"isSidechain":{side},"type":"assistant","message":{{"id":"{id}","type":"message","role":"assistant","model":"{model}","content":[{{"type":"text","text":"hi"}}],"usage":{{"input_tokens":{i},"output_tokens":{o},"cache_creation_input_tokens":{cc},"cache_read_input_tokens":{cr},"service_tier":"standard"}}}},"requestId":"{req}","uuid":"u-{id}-{o}","timestamp":"{ts}"}}"#
        ) + "\n"
    }

    const S4: &str = "claude-sonnet-4-20250514";

    #[test]
    fn split_response_keeps_largest_and_replaces_whole_record() {
        let text = [
            assistant("m1", "r1", S4, false, "t1", (10, 8, 100, 1000)),
            assistant("m1", "r1", S4, false, "t2", (10, 900, 100, 1000)),
            // Non-monotonic: a later block with fewer output tokens must not win.
            assistant("m1", "r1", S4, false, "t3", (10, 5, 100, 1000)),
            assistant("m2", "r2", S4, false, "t4", (1, 2, 3, 4)),
        ]
        .concat();
        let scan = scan(text.as_bytes());
        assert_eq!(scan.consumed, text.len());
        assert_eq!(scan.skipped_lines, 0);
        assert_eq!(scan.records.len(), 2);
        let first = &scan.records[0];
        assert_eq!(first.key(), ("m1".to_string(), "r1".to_string()));
        assert_eq!(first.usage.output_tokens, 900);
        assert_eq!(first.timestamp, "t2");
        assert_eq!(scan.records[1].message_id, "m2");
        // Context: the latest main-chain line.
        let ctx = scan.context.unwrap();
        assert_eq!((ctx.tokens, ctx.timestamp.as_str()), (1 + 3 + 4, "t4"));
        assert_eq!(ctx.model, S4);
    }

    #[test]
    fn ties_keep_the_first_line() {
        let text = [
            assistant("m1", "r1", S4, false, "t1", (1, 1, 1, 1)),
            assistant("m1", "r1", S4, false, "t2", (1, 1, 1, 1)),
        ]
        .concat();
        assert_eq!(scan(text.as_bytes()).records[0].timestamp, "t1");
        let a = Usage {
            output_tokens: 2,
            ..Usage::default()
        };
        assert!(!larger(&a, &a));
        assert!(larger(&a, &Usage::default()));
    }

    #[test]
    fn synthetic_lines_are_skipped() {
        let synthetic = r#"{"isSidechain":false,"type":"assistant","uuid":"x","message":{"id":"msg_s","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"No response requested."}],"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"timestamp":"t9"}"#;
        let text = assistant("m1", "r1", S4, false, "t1", (5, 6, 7, 8)) + synthetic + "\n";
        let scan = scan(text.as_bytes());
        assert_eq!(scan.records.len(), 1);
        assert_eq!(scan.skipped_lines, 0);
        // The synthetic line does not reset the context reading to zero.
        assert_eq!(scan.context.unwrap().tokens, 5 + 7 + 8);
    }

    #[test]
    fn sidechain_is_flagged_and_excluded_from_context() {
        let text = [
            assistant("m1", "r1", S4, false, "t1", (1, 1, 10, 100)),
            assistant("m2", "r2", S4, true, "t2", (2, 2, 20, 200)),
        ]
        .concat();
        let scan = scan(text.as_bytes());
        assert_eq!(scan.records.len(), 2);
        assert!(!scan.records[0].sidechain);
        assert!(scan.records[1].sidechain);
        let ctx = scan.context.unwrap();
        assert_eq!((ctx.tokens, ctx.timestamp.as_str()), (111, "t1"));

        let only_side = assistant("m2", "r2", S4, true, "t2", (2, 2, 20, 200));
        assert_eq!(super::scan(only_side.as_bytes()).context, None);
    }

    #[test]
    fn partial_last_line_is_not_consumed() {
        let full = assistant("m1", "r1", S4, false, "t1", (1, 2, 3, 4));
        let second = assistant("m2", "r2", S4, false, "t2", (5, 6, 7, 8));
        let cut = second.len() / 2;
        let text = format!("{full}{}", &second[..cut]);
        let first_scan = scan(text.as_bytes());
        assert_eq!(first_scan.consumed, full.len());
        assert_eq!(first_scan.records.len(), 1);
        assert_eq!(first_scan.skipped_lines, 0);
        // A complete line without its '\n' is still partial.
        let unterminated = &second[..second.len() - 1];
        let s = scan(unterminated.as_bytes());
        assert_eq!((s.consumed, s.records.len()), (0, 0));
        // Carrying the tail over reproduces the whole-file result.
        let rest = format!("{}{}", &text[first_scan.consumed..], &second[cut..]);
        let second_scan = scan(rest.as_bytes());
        assert_eq!(second_scan.consumed, rest.len());
        assert_eq!(second_scan.records[0].message_id, "m2");
        assert_eq!(scan(b"").consumed, 0);
    }

    #[test]
    fn garbage_lines_are_skipped() {
        let good = assistant("m1", "r1", S4, false, "t1", (1, 2, 3, 4));
        let truncated_usage = &good[..good.len() - 20];
        let text = [
            "not json at all\n",
            "\n",
            "   \r\n",
            "[1,2,3]\n",
            truncated_usage,
            "\n",
            r#"{"message":{"usage":"oops"},"timestamp":"t"}"#,
            "\n",
            "\u{0}\u{1}binary\n",
            r#"{"type":"user","message":{"role":"user","content":"step"},"timestamp":"t"}"#,
            "\n",
            &good,
        ]
        .concat();
        let mut bytes = text.into_bytes();
        bytes.splice(0..0, b"\xff\xfe invalid utf8 \"usage\"\n".iter().copied());
        let scan = scan(&bytes);
        assert_eq!(scan.skipped_lines, 6);
        assert_eq!(scan.records.len(), 1);
        assert_eq!(scan.consumed, bytes.len());
    }

    #[test]
    fn all_zero_breakdown_counts_the_flat_total_as_5m() {
        let line = r#"{"type":"assistant","message":{"id":"m3","model":"claude-sonnet-4-5","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":500,"cache_read_input_tokens":4,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}}},"requestId":"r3","timestamp":"t"}"#;
        let scan = scan(format!("{line}\n").as_bytes());
        let u = scan.records[0].usage;
        assert_eq!((u.cache_write_5m, u.cache_write_1h), (500, 0));
    }

    #[test]
    fn cache_creation_breakdown_and_fallback() {
        let with = r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-5","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":999,"cache_read_input_tokens":4,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20}}},"requestId":"r1","timestamp":"t"}"#;
        let without = r#"{"type":"assistant","message":{"id":"m2","model":"claude-opus-4-5","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":30}},"requestId":"r2","timestamp":"t"}"#;
        let scan = scan(format!("{with}\n{without}\n").as_bytes());
        let u = scan.records[0].usage;
        assert_eq!(
            (u.cache_write_5m, u.cache_write_1h, u.cache_read),
            (10, 20, 4)
        );
        assert_eq!(u.cache_write(), 30);
        assert_eq!(u.total(), 1 + 2 + 30 + 4);
        assert_eq!(u.context_tokens(), 1 + 30 + 4);
        let v = scan.records[1].usage;
        assert_eq!(
            (v.cache_write_5m, v.cache_write_1h, v.cache_read),
            (30, 0, 0)
        );
    }

    #[test]
    fn missing_ids_and_requirements() {
        let no_req = r#"{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":1,"output_tokens":1}},"timestamp":"t"}"#;
        let no_req_bigger = r#"{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":1,"output_tokens":9}},"timestamp":"t2"}"#;
        let no_id = r#"{"type":"assistant","uuid":"abc","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}},"requestId":"r","timestamp":"t"}"#;
        let no_id_no_uuid = r#"{"type":"assistant","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}},"timestamp":"t"}"#;
        let no_timestamp = r#"{"type":"assistant","message":{"id":"m3","model":"m","usage":{"input_tokens":1,"output_tokens":1}},"requestId":"r"}"#;
        let empty_req = r#"{"type":"assistant","message":{"id":"m4","model":"m","usage":{"input_tokens":1,"output_tokens":1}},"requestId":"","timestamp":"t"}"#;
        let no_output = r#"{"type":"assistant","message":{"id":"m5","model":"m","usage":{"input_tokens":1}},"requestId":"r","timestamp":"t"}"#;
        let no_model = r#"{"type":"assistant","message":{"id":"m6","usage":{"input_tokens":1,"output_tokens":1}},"requestId":"r","timestamp":"t"}"#;
        let text = [
            no_req,
            no_req_bigger,
            no_id,
            no_id_no_uuid,
            no_timestamp,
            empty_req,
            no_output,
            no_model,
        ]
        .join("\n")
            + "\n";
        let scan = scan(text.as_bytes());
        let keys: Vec<_> = scan.records.iter().map(UsageRecord::key).collect();
        assert_eq!(
            keys,
            [
                ("m1".to_string(), String::new()),
                ("uuid:abc".to_string(), "r".to_string()),
                ("m6".to_string(), "r".to_string()),
            ]
        );
        assert_eq!(scan.records[0].usage.output_tokens, 9);
        assert_eq!(scan.records[2].model, "");
        assert_eq!(scan.skipped_lines, 0);
    }

    #[test]
    fn escaped_strings_and_needle_in_content() {
        // A user line quoting `"usage"` inside a tool result parses and is ignored.
        let user = r#"{"type":"user","message":{"role":"user","content":"{\"usage\":{\"input_tokens\":5}}"},"timestamp":"t"}"#;
        let escaped = r#"{"type":"assistant","message":{"id":"m\u0031","model":"claude-haiku-4-5","usage":{"input_tokens":1,"output_tokens":1}},"requestId":"r\"1","timestamp":"t"}"#;
        let scan = scan(format!("{user}\n{escaped}\n").as_bytes());
        assert_eq!(scan.skipped_lines, 0);
        assert_eq!(scan.records.len(), 1);
        assert_eq!(
            scan.records[0].key(),
            ("m1".to_string(), "r\"1".to_string())
        );
    }

    #[test]
    fn usage_arithmetic() {
        let mut a = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_write_5m: 3,
            cache_write_1h: 4,
            cache_read: 5,
        };
        assert_eq!(
            (a.cache_write(), a.total(), a.context_tokens()),
            (7, 15, 13)
        );
        let b = a;
        a.add(&b);
        assert_eq!(a.total(), 30);
        let max = Usage {
            input_tokens: u64::MAX,
            ..Usage::default()
        };
        a.add(&max);
        assert_eq!(a.input_tokens, u64::MAX);
        assert_eq!(a.total(), u64::MAX);
    }

    #[test]
    fn only_lines_naming_usage_are_parsed() {
        let usage = br#"{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-20250514","usage":{"input_tokens":5,"output_tokens":1}},"requestId":"req_1","timestamp":"2026-11-23T10:00:00Z"}"#;
        let mut text = b"{\"type\":\"user\"}\nnot json\n".to_vec();
        text.extend_from_slice(usage);
        text.push(b'\n');
        let s = scan(&text);
        // Lines without `"usage"` are skipped unparsed; only the broken one counts as skipped.
        assert_eq!(s.skipped_lines, 1);
        assert_eq!(s.consumed, text.len());
        assert_eq!(s.records.len(), 1);
        assert_eq!(s.records[0].usage.input_tokens, 5);
    }
}
