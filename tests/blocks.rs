//! `cost --by block|week|host|project` end to end: Claude Code transcripts imported, then the
//! 5-hour billing blocks beside ccusage's `blocks` report over the same files (the pinned
//! ccusage, `.ci/install-ccusage.sh`; skipped without it unless `HOOKJOURNAL_REQUIRE_CCUSAGE=1`),
//! and whole outputs with "now" pinned.

mod common;
use common::*;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::Value;
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::ignorable_test(
            "blocks_are_ccusages_blocks_over_the_same_transcripts",
            blocks_are_ccusages_blocks_over_the_same_transcripts,
        ),
        Trial::test(
            "cost_by_block_week_host_and_project_whole",
            cost_by_block_week_host_and_project_whole,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

const SID_A: &str = "0b7d7a52-5a0e-4c61-9b55-1d1b2e6c1a01";
const SID_B: &str = "0b7d7a52-5a0e-4c61-9b55-1d1b2e6c1a02";
const OPUS: &str = "claude-opus-4-1-20250805";
const SONNET: &str = "claude-sonnet-4-20250514";

/// One assistant line of a Claude Code transcript.
fn line(sid: &str, n: usize, at_ms: i64, model: &str, out: u64) -> String {
    let ts = chrono::DateTime::from_timestamp_millis(at_ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/proj", "sessionId": sid, "version": "2.1.197",
        "message": {
            "id": format!("msg_{sid}_{n}"), "type": "message", "role": "assistant",
            "model": model, "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 120 + n as u64, "cache_creation_input_tokens": 900,
                      "cache_read_input_tokens": 15_000 + 10 * n as u64, "output_tokens": out}
        },
        "requestId": format!("req_{sid}_{n}"), "type": "assistant",
        "uuid": format!("00000000-0000-4000-8000-{n:012}"), "timestamp": ts
    })
    .to_string()
}

/// Two sessions' transcripts under `home/.claude/projects`, the responses at `offsets` (minutes
/// after `t0_ms`): session A's first, session B's after.
fn corpus(home: &Path, t0_ms: i64, a: &[(i64, &str)], b: &[(i64, &str)]) -> std::path::PathBuf {
    let dir = home.join(".claude/projects/-home-dev-proj");
    std::fs::create_dir_all(&dir).unwrap();
    for (sid, entries) in [(SID_A, a), (SID_B, b)] {
        let text: Vec<String> = entries
            .iter()
            .enumerate()
            .map(|(n, (min, model))| line(sid, n, t0_ms + min * 60_000, model, 300 + 7 * n as u64))
            .collect();
        std::fs::write(dir.join(format!("{sid}.jsonl")), text.join("\n") + "\n").unwrap();
    }
    home.join(".claude/projects")
}

fn ccusage_blocks(bin: &Path, home: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["blocks", "--offline", "--json", "--timezone", "UTC"];
    args.extend_from_slice(extra);
    common::ccusage::report(bin, &args, &[("HOME", home.as_os_str())], "blocks")
}

fn ms(v: &Value) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(v.as_str()?)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Each block of ours beside ccusage's: times, state, responses, tokens, dollars, models, and for
/// the active block its burn rate, projection (to the minute the two runs are apart) and limit.
fn agree(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut f = Vec::new();
    let (o, t) = (
        ours["blocks"].as_array().unwrap(),
        theirs["blocks"].as_array().unwrap(),
    );
    if o.len() != t.len() {
        return vec![format!("{} blocks vs ccusage's {}", o.len(), t.len())];
    }
    for (i, (o, t)) in o.iter().zip(t).enumerate() {
        let mut same = |what: &str, a: Option<Value>, b: Option<Value>| {
            if a != b {
                f.push(format!("block {i}: {what} {a:?} vs ccusage {b:?}"));
            }
        };
        same(
            "start",
            ms(&o["start"]).map(Into::into),
            ms(&t["startTime"]).map(Into::into),
        );
        same(
            "end",
            ms(&o["end"]).map(Into::into),
            ms(&t["endTime"]).map(Into::into),
        );
        same(
            "last response",
            ms(&o["last_response"]).map(Into::into),
            ms(&t["actualEndTime"]).map(Into::into),
        );
        same(
            "active",
            Some(o["active"].clone()),
            Some(t["isActive"].clone()),
        );
        same("gap", Some(o["gap"].clone()), Some(t["isGap"].clone()));
        same(
            "responses",
            Some(o["responses"].clone()),
            Some(t["entries"].clone()),
        );
        for (a, b) in [
            ("input_tokens", "inputTokens"),
            ("output_tokens", "outputTokens"),
            ("cache_write_tokens", "cacheCreationInputTokens"),
            ("cache_read_tokens", "cacheReadInputTokens"),
        ] {
            same(a, Some(o[a].clone()), Some(t["tokenCounts"][b].clone()));
        }
        same(
            "total",
            Some(o["total_tokens"].clone()),
            Some(t["totalTokens"].clone()),
        );
        same(
            "models",
            Some(o["models"].clone()),
            Some(t["models"].clone()),
        );
        let (a, b) = (o["usd"].as_f64().unwrap(), t["costUSD"].as_f64().unwrap());
        if (a - b).abs() > 1e-6 {
            f.push(format!("block {i}: ${a} vs ccusage ${b}"));
        }
        let near = |a: &Value, b: &Value, tol: f64| match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= tol * y.abs().max(1.0),
            _ => a.is_null() && b.is_null(),
        };
        let (ob, tb) = (&o["burn_rate"], &t["burnRate"]);
        if !near(&ob["tokens_per_minute"], &tb["tokensPerMinute"], 1e-9)
            || !near(&ob["usd_per_hour"], &tb["costPerHour"], 1e-9)
        {
            f.push(format!("block {i}: burn rate {ob} vs ccusage {tb}"));
        }
        let (op, tp) = (&o["projection"], &t["projection"]);
        let minutes_apart = match (
            op["remaining_minutes"].as_i64(),
            tp["remainingMinutes"].as_i64(),
        ) {
            (Some(x), Some(y)) => (x - y).abs() <= 1,
            (None, None) => true,
            _ => false,
        };
        if !minutes_apart || !near(&op["total_tokens"], &tp["totalTokens"], 0.01) {
            f.push(format!("block {i}: projection {op} vs ccusage {tp}"));
        }
        let (ol, tl) = (&o["token_limit"], &t["tokenLimitStatus"]);
        if ol["status"] != tl["status"] || ol["limit"] != tl["limit"] {
            f.push(format!("block {i}: limit {ol} vs ccusage {tl}"));
        }
    }
    f
}

/// Given two sessions' transcripts whose responses make a finished block, a gap, and a block still
/// active now (ccusage knows only the real clock, so the times are set from it), when imported,
/// then `cost --by block --json` is ccusage's `blocks --json` block by block, with and without a
/// token limit, and the blocks' dollars add up to `cost`'s total.
fn blocks_are_ccusages_blocks_over_the_same_transcripts() -> Result<Completion, Failed> {
    let bin = match common::ccusage::required() {
        Ok(bin) => bin,
        Err(outcome) => return outcome,
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let now_ms = chrono::Utc::now().timestamp_millis();
    let t0 = now_ms - 11 * 3_600_000;
    // Minutes after 11 hours ago — A: 0, 25, 100; B: 50 (one block of both sessions), then 460
    // (6 h after the last: a gap first), 500 and 640 (20 minutes ago: the block is active).
    let projects = corpus(
        &home,
        t0,
        &[(0, OPUS), (25, SONNET), (100, OPUS)],
        &[(50, SONNET), (460, OPUS), (500, SONNET), (640, OPUS)],
    );
    let j = dir.path().join("j");
    run(&j, &["import", "--transcripts", projects.to_str().unwrap()]);
    let ours = run_json(&j, &["cost", "--by", "block", "--json"]);
    let theirs = ccusage_blocks(&bin, &home, &[]);
    let mut failures = agree(&ours, &theirs);
    let blocks = ours["blocks"].as_array().unwrap();
    if !blocks.iter().any(|b| b["gap"] == true) || !blocks.iter().any(|b| b["active"] == true) {
        failures.push(format!(
            "the corpus should make a gap and an active block: {ours}"
        ));
    }
    for limit in ["60000", "max"] {
        let ours = run_json(
            &j,
            &["cost", "--by", "block", "--json", "--token-limit", limit],
        );
        let theirs = ccusage_blocks(&bin, &home, &["--token-limit", limit]);
        failures.extend(
            agree(&ours, &theirs)
                .into_iter()
                .map(|f| format!("--token-limit {limit}: {f}")),
        );
    }
    let total = run_json(&j, &["cost", "--json"])["total"]["usd"]
        .as_f64()
        .unwrap();
    let sum: f64 = blocks.iter().map(|b| b["usd"].as_f64().unwrap()).sum();
    if (sum - total).abs() > 1e-9 {
        failures.push(format!("blocks sum to ${sum}, cost's total is ${total}"));
    }
    if failures.is_empty() {
        Ok(Completion::Completed)
    } else {
        Err(failures.join("\n").into())
    }
}

/// Given the same kind of corpus at fixed times and "now" pinned inside its last block, the
/// tables of `cost --by block` (with a limit, and `--active`), `--by week` (from Sunday and from
/// Monday), `--by host` and `--by project`, whole; and the flags that go only with blocks refused.
fn cost_by_block_week_host_and_project_whole() -> Result<(), Failed> {
    let mut env = TestEnvironment::new();
    // 2026-11-28 (a Saturday) 09:12 UTC.
    let t0 = 1_795_857_120_000;
    let projects = corpus(
        &env.home,
        t0,
        &[(0, OPUS), (25, SONNET), (200, OPUS), (470, SONNET)],
        &[(1_500, OPUS), (1_520, SONNET), (1_540, OPUS)],
    );
    env.set_env("HOOKJOURNAL_NOW", "2026-11-29T11:10:00Z");
    let mut t = String::new();
    assert!(projects.starts_with(&env.home));
    // Commands run in the project, beside the home.
    env.step(
        &mut t,
        &["import", "--transcripts", "../home/.claude/projects"],
    );
    for args in [
        &["cost", "--by", "block"][..],
        &["cost", "--by", "block", "--token-limit", "100000"],
        &["cost", "--by", "block", "--active", "--token-limit", "max"],
        &["cost", "--by", "week"],
        &["cost", "--by", "week", "--start-of-week", "monday"],
        &["cost", "--by", "host"],
        &["cost", "--by", "project"],
        &["cost", "--by", "day", "--token-limit", "5"],
    ] {
        env.step(&mut t, args);
    }
    assert_expected("cost/blocks-weeks-hosts.txt", &t);
    Ok(())
}
