//! Proof that `transcript::scan` + `pricing::PricingTable::default()` reproduce ccusage.
//!
//! The expected figures are ccusage's own output (`ccusage claude session --offline --json`)
//! over the fixture transcripts. Tokens must agree exactly and USD within $0.0001, per session,
//! per model and in total. How ccusage counts (largest usage per `(message.id, requestId)`,
//! whole entry replaced, `<synthetic>` adding nothing, subagent files folded into the parent
//! session) is documented in `projections/src/transcript.rs`; the negative checks at the end
//! show that the obvious alternatives (first line wins, no dedupe) do not match.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use projections::pricing::PricingTable;
use projections::transcript::{self, larger, Usage, UsageRecord};
use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/transcripts-corpus"
);
const CLAUDE_SESSION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/claude-session"
);
const USD_TOLERANCE: f64 = 0.0001;

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            jsonl_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "jsonl") {
            out.push(path);
        }
    }
}

/// `<project>/<session>.jsonl` → session; `<project>/<session>/subagents/agent-*.jsonl` → the
/// parent session.
fn session_of(path: &Path) -> String {
    let parent = path.parent().unwrap();
    if parent.file_name().is_some_and(|n| n == "subagents") {
        parent
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    } else {
        path.file_stem().unwrap().to_string_lossy().into_owned()
    }
}

/// Records of one session, merged across files and chunks with `larger`, in first-seen order.
#[derive(Default)]
struct Session {
    order: Vec<(String, String)>,
    records: HashMap<(String, String), UsageRecord>,
}

impl Session {
    fn merge(&mut self, record: UsageRecord) {
        let key = record.key();
        match self.records.get_mut(&key) {
            Some(old) => {
                if larger(&record.usage, &old.usage) {
                    *old = record;
                }
            }
            None => {
                self.order.push(key.clone());
                self.records.insert(key, record);
            }
        }
    }

    fn records(&self) -> impl Iterator<Item = &UsageRecord> {
        self.order.iter().map(|k| &self.records[k])
    }
}

/// Feeds `bytes` to `scan` in chunks of `chunk` bytes, carrying the unconsumed tail over, as the
/// hook does while the transcript grows. `chunk == usize::MAX` scans the file in one go.
fn scan_chunked(bytes: &[u8], chunk: usize, session: &mut Session) {
    let mut pending: Vec<u8> = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let end = offset.saturating_add(chunk).min(bytes.len());
        pending.extend_from_slice(&bytes[offset..end]);
        offset = end;
        let scan = transcript::scan(&pending);
        assert_eq!(scan.skipped_lines, 0, "fixture lines are all valid");
        for record in scan.records {
            session.merge(record);
        }
        pending.drain(..scan.consumed);
    }
    assert!(pending.is_empty(), "fixtures end with a newline");
}

fn load_sessions(projects: &Path, chunk: usize) -> BTreeMap<String, Session> {
    let mut files = Vec::new();
    jsonl_files(projects, &mut files);
    assert!(
        !files.is_empty(),
        "no transcripts under {}",
        projects.display()
    );
    let mut sessions: BTreeMap<String, Session> = BTreeMap::new();
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        scan_chunked(
            &bytes,
            chunk,
            sessions.entry(session_of(&file)).or_default(),
        );
    }
    sessions
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    usage: Usage,
    cost: f64,
}

impl Totals {
    fn of<'a>(records: impl Iterator<Item = &'a UsageRecord>, table: &PricingTable) -> Totals {
        let mut totals = Totals::default();
        for record in records {
            totals.usage.add(&record.usage);
            totals.cost += table
                .cost(&record.model, &record.usage)
                .unwrap_or_else(|| panic!("model {:?} unpriced", record.model));
        }
        totals
    }

    fn add(&mut self, other: &Totals) {
        self.usage.add(&other.usage);
        self.cost += other.cost;
    }
}

fn u64_field(v: &Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("missing {field} in {v}"))
}

/// Compares with a ccusage JSON object (`inputTokens`, `outputTokens`, `cacheCreationTokens`,
/// `cacheReadTokens`, and the given cost field).
fn assert_matches(what: &str, got: &Totals, expected: &Value, cost_field: &str) {
    let u = &got.usage;
    assert_eq!(
        u.input_tokens,
        u64_field(expected, "inputTokens"),
        "{what}: input"
    );
    assert_eq!(
        u.output_tokens,
        u64_field(expected, "outputTokens"),
        "{what}: output"
    );
    assert_eq!(
        u.cache_write(),
        u64_field(expected, "cacheCreationTokens"),
        "{what}: cache creation"
    );
    assert_eq!(
        u.cache_read,
        u64_field(expected, "cacheReadTokens"),
        "{what}: cache read"
    );
    if let Some(total) = expected.get("totalTokens") {
        assert_eq!(Some(u.total()), total.as_u64(), "{what}: total tokens");
    }
    let want = expected[cost_field].as_f64().unwrap();
    assert!(
        (got.cost - want).abs() < USD_TOLERANCE,
        "{what}: cost {} vs ccusage {want}",
        got.cost
    );
}

#[test]
fn corpus_matches_ccusage_session_report() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(format!("{CORPUS}/expected-ccusage-session.json")).unwrap(),
    )
    .unwrap();
    let table = PricingTable::default();
    let expected_sessions = expected["sessions"].as_array().unwrap();

    for chunk in [usize::MAX, 4096, 977, 64] {
        let sessions = load_sessions(Path::new(&format!("{CORPUS}/projects")), chunk);
        assert_eq!(sessions.len(), expected_sessions.len(), "session count");
        let mut grand = Totals::default();
        for want in expected_sessions {
            let id = want["sessionId"].as_str().unwrap();
            let session = sessions
                .get(id)
                .unwrap_or_else(|| panic!("session {id} not found"));
            let got = Totals::of(session.records(), &table);
            assert_matches(
                &format!("session {id} (chunk {chunk})"),
                &got,
                want,
                "totalCost",
            );
            grand.add(&got);

            // Per-model breakdowns and the models used.
            let mut by_model: BTreeMap<&str, Vec<&UsageRecord>> = BTreeMap::new();
            for r in session.records() {
                by_model.entry(r.model.as_str()).or_default().push(r);
            }
            let breakdowns = want["modelBreakdowns"].as_array().unwrap();
            assert_eq!(by_model.len(), breakdowns.len(), "{id}: models");
            for b in breakdowns {
                let model = b["modelName"].as_str().unwrap();
                let records = by_model
                    .get(model)
                    .unwrap_or_else(|| panic!("{id}: model {model} missing"));
                let got = Totals::of(records.iter().copied(), &table);
                assert_matches(&format!("{id}/{model}"), &got, b, "cost");
            }
            let used: Vec<&str> = want["modelsUsed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            assert_eq!(by_model.keys().copied().collect::<Vec<_>>(), used, "{id}");

            // ccusage's first/last activity are the timestamps of the *kept* (largest) lines:
            // the whole entry is replaced, not just its usage.
            let first = session
                .records()
                .map(|r| r.timestamp.as_str())
                .min()
                .unwrap();
            let last = session
                .records()
                .map(|r| r.timestamp.as_str())
                .max()
                .unwrap();
            assert_eq!(
                first,
                want["firstActivity"].as_str().unwrap(),
                "{id}: first"
            );
            assert_eq!(last, want["lastActivity"].as_str().unwrap(), "{id}: last");
        }
        assert_matches("corpus total", &grand, &expected["totals"], "totalCost");
    }
}

#[test]
fn claude_session_matches_expected_cost() {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(format!("{CLAUDE_SESSION}/expected.json")).unwrap())
            .unwrap();
    let cost = &expected["cost"];
    let session_id = expected["session_id"].as_str().unwrap();
    let table = PricingTable::default();

    let sessions = load_sessions(
        Path::new(&format!("{CLAUDE_SESSION}/transcripts/projects")),
        usize::MAX,
    );
    assert_eq!(sessions.keys().collect::<Vec<_>>(), [session_id]);
    let session = &sessions[session_id];
    // The subagent file's sidechain response is part of the session.
    assert!(session.records().any(|r| r.sidechain));
    let got = Totals::of(session.records(), &table);
    assert_eq!(got.usage.input_tokens, u64_field(cost, "input_tokens"));
    assert_eq!(got.usage.output_tokens, u64_field(cost, "output_tokens"));
    assert_eq!(
        got.usage.cache_write(),
        u64_field(cost, "cache_creation_tokens")
    );
    assert_eq!(got.usage.cache_read, u64_field(cost, "cache_read_tokens"));
    let want = cost["total_usd"].as_f64().unwrap();
    assert!(
        (got.cost - want).abs() < USD_TOLERANCE,
        "{} vs {want}",
        got.cost
    );
}

/// The main transcript's last main-chain reading is the context window in use at the end.
#[test]
fn claude_session_context_reading() {
    let path = format!(
        "{CLAUDE_SESSION}/transcripts/projects/-home-dev-acme-api/db5b5fab-8f4d-3e27-dda1-494c73cf256d.jsonl"
    );
    let scan = transcript::scan(&std::fs::read(path).unwrap());
    let ctx = scan.context.expect("a main-chain response");
    let last_main = scan.records.iter().rev().find(|r| !r.sidechain).unwrap();
    assert_eq!(ctx.tokens, last_main.usage.context_tokens());
    assert_eq!(ctx.model, "claude-sonnet-4-20250514");
}

/// The alternatives do not agree with ccusage: keeping the first line of a split response loses
/// output tokens, and not deduplicating multiplies input and cache tokens.
#[test]
fn first_wins_and_no_dedupe_disagree() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(format!("{CORPUS}/expected-ccusage-session.json")).unwrap(),
    )
    .unwrap();
    let want_output = u64_field(&expected["totals"], "outputTokens");
    let want_input = u64_field(&expected["totals"], "inputTokens");

    let mut files = Vec::new();
    jsonl_files(Path::new(&format!("{CORPUS}/projects")), &mut files);
    let (mut first_wins_output, mut no_dedupe_input) = (0, 0);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let mut seen = std::collections::HashSet::new();
        // Line by line, so every line's own usage is visible.
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            for r in transcript::scan(line).records {
                no_dedupe_input += r.usage.input_tokens;
                if seen.insert(r.key()) {
                    first_wins_output += r.usage.output_tokens;
                }
            }
        }
    }
    assert!(
        first_wins_output < want_output,
        "first-wins under-counts output"
    );
    assert!(no_dedupe_input > want_input, "no dedupe over-counts input");
}
