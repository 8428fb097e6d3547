//! The fixture session played through the real binary, and every view over it: snapshot, tasks,
//! cost (to ccusage's figures), notifications, reminders, pressure, restore, replay, reports.

mod common;
use common::kill::{kill_after, kill_until};
use common::*;
use serde_json::Value;

fn expected() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("claude-session/expected.json")).unwrap(),
    )
    .unwrap()
}

const SID: &str = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";

#[test]
fn fixture_session_yields_the_expected_facts() {
    let p = play_session(&[]);
    let exp = expected();
    let j = &p.journal;

    // Tasks: exactly the expected states.
    let tasks = run_json(j, &["tasks", "--json"]);
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    for (id, want) in exp["tasks"].as_object().unwrap() {
        let t = tasks
            .iter()
            .find(|t| t["id"] == *id)
            .unwrap_or_else(|| panic!("task {id} missing"));
        assert_eq!(t["subject"], want["subject"]);
        assert_eq!(t["status"], want["status"], "task {id}");
        assert_eq!(t["session_id"], SID);
    }

    let snap = run_json(j, &["show", SID, "--json"]);
    let mut edited: Vec<Value> = snap["files_edited"].as_array().unwrap().clone();
    edited.sort_by_key(|v| v.to_string());
    let mut want_edited = exp["files_edited"].as_array().unwrap().clone();
    want_edited.sort_by_key(|v| v.to_string());
    assert_eq!(edited, want_edited);
    let mut read: Vec<Value> = snap["files_read"].as_array().unwrap().clone();
    read.sort_by_key(|v| v.to_string());
    let mut want_read = exp["files_read"].as_array().unwrap().clone();
    want_read.sort_by_key(|v| v.to_string());
    assert_eq!(read, want_read);
    let commits = snap["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1);
    assert_eq!(commits[0]["hash"], exp["commits"][0]["hash"]);
    assert_eq!(commits[0]["message"], exp["commits"][0]["message"]);
    assert_eq!(snap["compactions"], exp["compactions"]);
    assert_eq!(snap["tool_calls"], exp["tool_calls"]);
    assert_eq!(snap["events"], exp["hook_events"]);
    assert_eq!(snap["status"], "ended");
    let sub = &snap["subagents"][0];
    assert_eq!(sub["agent_id"], exp["subagents"][0]["agent_id"]);
    assert_eq!(sub["agent_type"], exp["subagents"][0]["agent_type"]);

    // Notifications, in order.
    let notes = run_json(j, &["notifications", "--json"]);
    let got: Vec<(Value, Value)> = notes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["type"].clone(), n["message"].clone()))
        .collect();
    let want: Vec<(Value, Value)> = exp["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["type"].clone(), n["message"].clone()))
        .collect();
    assert_eq!(got, want);

    // Cost: tokens exactly, USD to the cent (and much closer).
    let cost = run_json(j, &["cost", "--by", "session", "--json"]);
    let row = &cost["rows"][0];
    assert_eq!(row["key"], SID);
    let c = &exp["cost"];
    assert_eq!(row["input_tokens"], c["input_tokens"]);
    assert_eq!(row["output_tokens"], c["output_tokens"]);
    assert_eq!(row["cache_write_tokens"], c["cache_creation_tokens"]);
    assert_eq!(row["cache_read_tokens"], c["cache_read_tokens"]);
    let usd = row["usd"].as_f64().unwrap();
    assert!(
        (usd - c["total_usd"].as_f64().unwrap()).abs() < 0.000_01,
        "usd {usd}"
    );
    assert_eq!(cost["total"]["usd"], row["usd"]);

    // The sessions table agrees with the cost summary.
    let sessions = run_json(j, &["sessions", "--json"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert!((sessions[0]["usd"].as_f64().unwrap() - usd).abs() < 1e-9);

    // The chain is sound and the checkpoint equals a full replay.
    let v = run_json(j, &["verify", "--json"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["projections_match_replay"], true);
}

#[test]
fn second_prompt_gets_a_warning_tier_notice_and_the_first_does_not() {
    let p = play_session(&[]);
    let prompts: Vec<&(usize, String, String, String)> = p
        .outputs
        .iter()
        .filter(|o| o.1 == "UserPromptSubmit")
        .collect();
    assert_eq!(prompts.len(), 2);
    assert!(
        prompts[0].2.is_empty(),
        "first prompt answered: {}",
        prompts[0].2
    );
    let v: Value = serde_json::from_str(&prompts[1].2).expect("second prompt answers JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let tier = &expected()["tiers"][0];
    assert!(ctx.contains("warning tier"), "{ctx}");
    assert!(
        ctx.contains("76%") && ctx.contains("152,000"),
        "{ctx} (expected {tier})"
    );
    // Only the universal + event fields: nothing Claude would reject.
    assert_eq!(v.as_object().unwrap().len(), 1);
}

#[test]
fn reminder_fires_once_in_the_grep_glob_stretch_and_respects_the_cooldown() {
    let p = play_session(&[]);
    let reminders: Vec<&(usize, String, String, String)> = p
        .outputs
        .iter()
        .filter(|o| o.2.contains("no task tool used"))
        .collect();
    assert!(!reminders.is_empty(), "no reminder fired");
    // Steps 35..=64 (0-based) are the Grep/Glob stretch after the second prompt.
    let first = reminders[0].0;
    assert!((35..=64).contains(&first), "first reminder at step {first}");
    assert_eq!(reminders[0].1, "PostToolUse");
    let text = &reminders[0].2;
    assert!(
        text.contains("Wire limiter into /login") && text.contains("Write rate-limit tests"),
        "{text}"
    );
    assert!(
        !text.contains("Add token-bucket limiter"),
        "completed task listed: {text}"
    );
    // Cooldown 10: a second reminder needs 10 more tool calls/prompts.
    if let Some(second) = reminders.get(1) {
        let between = p.outputs[first + 1..second.0]
            .iter()
            .filter(|o| {
                o.1 == "PostToolUse" || o.1 == "UserPromptSubmit" || o.1 == "PostToolUseFailure"
            })
            .count();
        assert!(between >= 9, "second reminder after {between} calls");
    }
    let issued = events(&p.journal)
        .iter()
        .filter(|e| e["kind"] == "ReminderIssued")
        .count();
    assert_eq!(issued, reminders.len());
}

#[test]
fn restore_after_compact_mentions_everything_that_matters() {
    let p = play_session(&[]);
    let start = p
        .outputs
        .iter()
        .find(|o| o.1 == "SessionStart" && o.0 > 0)
        .expect("SessionStart(compact)");
    let v: Value = serde_json::from_str(&start.2).expect("restore JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // What the fixture's author listed (expected.json), independently of the snapshots.
    for m in expected()["restore_after_compact"]["must_mention"]
        .as_array()
        .unwrap()
    {
        assert!(
            text.contains(m.as_str().unwrap()),
            "restore text lacks {m}:\n{text}"
        );
    }
    assert!(text.len() <= 6000);
    // In progress comes before the next task, which comes before the done one.
    let (a, b, c) = (
        text.find("Wire limiter").unwrap(),
        text.find("Write rate-limit").unwrap(),
        text.find("Add token-bucket limiter").unwrap(),
    );
    assert!(a < b && b < c, "{text}");
    // The PreCompact checkpoint was recorded (what `context` prints: `context_prints_…`).
    assert!(events(&p.journal).iter().any(|e| e["kind"] == "Checkpoint"));
}

#[test]
fn context_prints_what_each_moment_would_inject() {
    let env = TestEnvironment::new();
    env.play_claude_session();
    let mut out = String::new();
    for args in [
        &["context", SID, "--for", "restore"][..],
        &["context", SID, "--for", "compact", "--trigger", "manual"],
        &["context", SID, "--for", "compact"],
    ] {
        out.push_str(&format!("$ {}\n{}", args.join(" "), env.run(args).render()));
    }
    assert_expected("session/context.txt", &out);
}

#[test]
fn replay_verify_recomputes_every_answer_without_difference() {
    let env = TestEnvironment::new();
    env.play_claude_session();
    assert_expected(
        "session/replay-verify.txt",
        &env.run(&["replay", "--verify"]).render(),
    );
    let lines = env
        .run(&["replay", "--kind", "ResponseEmitted", "--json"])
        .stdout;
    assert!(lines.lines().count() >= 3);
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "ResponseEmitted");
}

#[test]
fn replay_shows_the_changes_each_event_caused() {
    let p = play_session(&[]);
    let out = run(&p.journal, &["replay", "--json"]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let update = lines
        .iter()
        .find(|l| {
            l["kind"] == "Hook:PostToolUse"
                && l["summary"]
                    .as_str()
                    .unwrap()
                    .starts_with("TaskUpdate 1 → in_progress")
        })
        .expect("TaskUpdate event");
    let fields: Vec<&str> = update["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.iter().any(|f| f.contains("tasks.tasks.1")),
        "{fields:?}"
    );
    // Filters: by kind and by seq range.
    let stops = run(&p.journal, &["replay", "--kind", "Hook:Stop", "--json"]);
    assert_eq!(stops.lines().count(), 2);
    let range = run(
        &p.journal,
        &["replay", "--from", "3", "--to", "5", "--json"],
    );
    assert_eq!(range.lines().count(), 3);
}

#[test]
fn loop_mode_fails_the_agents_task_at_precompact_and_session_end_changes_nothing() {
    let env = TestEnvironment::new();
    let mut out = String::new();
    let mut step =
        |title: &str, o: CommandOutput| out.push_str(&format!("$ {title}\n{}", o.render()));
    step(
        "tasks add",
        env.run(&["tasks", "add", "Migrate the billing tables"]),
    );
    step(
        "tasks start",
        env.run(&["tasks", "start", "T1", "--agent", "agent-7"]),
    );
    let pre = std::fs::read(fixtures().join("events/claude/PreCompact-auto.json")).unwrap();
    let agent = [("RALPH_AGENT_ID", "agent-7")];
    // Stops the agent (one JSON object), says which task it failed, and fails it.
    step("hook PreCompact", env.hook(&pre, &agent));
    step("tasks show", env.run(&["tasks", "show", "T1"]));
    // SessionEnd afterwards: idempotent, nothing changes; nor does a CLI fail of the failed task.
    let end = std::fs::read(fixtures().join("events/claude/SessionEnd.json")).unwrap();
    step("hook SessionEnd", env.hook(&end, &agent));
    step("tasks fail", env.run(&["tasks", "fail", "T1"]));
    step(
        "tasks show --json",
        env.run(&["tasks", "show", "T1", "--json"]),
    );
    step("verify", env.run(&["verify"]));
    let out = replace_pattern(&out, "xxxxxxxxxxxxxxxx; ", "[HEAD]; ");
    assert_expected("session/loop-precompact.txt", &out);
}

#[test]
fn session_end_releases_a_still_active_task_of_the_agent() {
    let env = TestEnvironment::new();
    let mut out = String::new();
    let mut step =
        |title: &str, o: CommandOutput| out.push_str(&format!("$ {title}\n{}", o.render()));
    step("tasks add", env.run(&["tasks", "add", "Ship it"]));
    step(
        "tasks start",
        env.run(&["tasks", "start", "T1", "--agent", "agent-9"]),
    );
    let end = std::fs::read(fixtures().join("events/claude/SessionEnd.json")).unwrap();
    step(
        "hook SessionEnd",
        env.hook(&end, &[("RALPH_AGENT_ID", "agent-9")]),
    );
    step("tasks show", env.run(&["tasks", "show", "T1"]));
    // Reopen puts it back for the next agent.
    step("tasks reopen", env.run(&["tasks", "reopen", "T1"]));
    step("tasks show", env.run(&["tasks", "show", "T1"]));
    assert_expected("session/loop-session-end.txt", &out);
}

#[test]
fn imported_transcript_corpus_costs_what_ccusage_says() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let corpus = fixtures().join("transcripts-corpus/projects");
    run(&j, &["import", "--transcripts", corpus.to_str().unwrap()]);
    let cost = run_json(&j, &["cost", "--by", "session", "--json"]);
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(
            fixtures().join("transcripts-corpus/expected-ccusage-session.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let rows = cost["rows"].as_array().unwrap();
    let sessions = want["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), sessions.len());
    let mut total = 0.0;
    for s in sessions {
        let r = rows
            .iter()
            .find(|r| r["key"] == s["sessionId"])
            .unwrap_or_else(|| panic!("session {} missing", s["sessionId"]));
        assert_eq!(r["input_tokens"], s["inputTokens"]);
        assert_eq!(r["output_tokens"], s["outputTokens"]);
        assert_eq!(r["cache_write_tokens"], s["cacheCreationTokens"]);
        assert_eq!(r["cache_read_tokens"], s["cacheReadTokens"]);
        let (a, b) = (r["usd"].as_f64().unwrap(), s["totalCost"].as_f64().unwrap());
        assert!((a - b).abs() < 0.0001, "{}: {a} vs {b}", s["sessionId"]);
        total += b;
    }
    assert!((cost["total"]["usd"].as_f64().unwrap() - total).abs() < 0.0001);
    // Importing again adds nothing (deduplicated).
    run(&j, &["import", "--transcripts", corpus.to_str().unwrap()]);
    let again = run_json(&j, &["cost", "--by", "session", "--json"]);
    assert_eq!(again["total"], cost["total"]);
    // By model and by day add up to the same total.
    for by in ["model", "day", "month"] {
        let c = run_json(&j, &["cost", "--by", by, "--json"]);
        let sum: f64 = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["usd"].as_f64().unwrap())
            .sum();
        assert!((sum - total).abs() < 0.0001, "by {by}: {sum}");
    }
}

/// A transcript import killed at any point is completed by the rerun: the same costs, responses
/// and sessions as one import that ran through, and a journal that verifies.
#[test]
fn a_killed_transcript_import_is_completed_by_the_rerun() {
    let dir = tempfile::tempdir().unwrap();
    // The fixture transcripts under 40 project folders, each copy its own session (the file
    // name is the session id): enough batches for a kill to land between two of them.
    let src = fixtures().join("transcripts-corpus/projects/-home-dev-acme-api");
    let corpus = dir.path().join("projects");
    for copy in 0..40 {
        let project = corpus.join(format!("-home-dev-copy-{copy:02}"));
        std::fs::create_dir_all(&project).unwrap();
        for f in std::fs::read_dir(&src).unwrap().flatten() {
            let name = f
                .file_name()
                .to_string_lossy()
                .replace("-", &format!("{copy:02}"));
            std::fs::copy(f.path(), project.join(name)).unwrap();
        }
    }
    let whole = dir.path().join("whole");
    run(
        &whole,
        &["import", "--transcripts", corpus.to_str().unwrap()],
    );
    let want = run_json(&whole, &["cost", "--by", "session", "--json"]);
    assert!(want["total"]["responses"].as_u64().unwrap() > 100);
    // Killed at random instants within the time a whole import takes here, until three kills
    // landed mid-import; each killed journal is completed by the rerun.
    let t0 = std::time::Instant::now();
    run(
        &dir.path().join("timed"),
        &["import", "--transcripts", corpus.to_str().unwrap()],
    );
    let span = t0.elapsed();
    kill_until(3, 20, span, 0x2545f4914f6cdd1d, |i, delay| {
        let j = dir.path().join(format!("killed-{i}"));
        // A journal that exists already, so a kill cannot land while it is being created.
        run(&j, &["tasks", "add", "before the import"]);
        let child = cmd(&j)
            .args(["import", "--transcripts", corpus.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let landed = kill_after(child, delay);
        run(&j, &["import", "--transcripts", corpus.to_str().unwrap()]);
        let got = run_json(&j, &["cost", "--by", "session", "--json"]);
        assert_eq!(got["total"], want["total"], "killed after {delay:?}");
        assert_eq!(got["rows"], want["rows"], "killed after {delay:?}");
        assert_eq!(run_json(&j, &["verify", "--json"])["ok"], true);
        // And a third run adds nothing.
        run(&j, &["import", "--transcripts", corpus.to_str().unwrap()]);
        let again = run_json(&j, &["cost", "--by", "session", "--json"]);
        assert_eq!(again["total"], want["total"]);
        landed
    });
}

#[test]
fn export_then_import_reproduces_the_chain_head() {
    let p = play_session(&[]);
    let file = p.root.path().join("events.jsonl");
    run(
        &p.journal,
        &[
            "export",
            "--report",
            "events",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    let j2 = p.root.path().join("j2");
    run(&j2, &["import", "--events", file.to_str().unwrap()]);
    let a = run_json(&p.journal, &["status", "--json"]);
    let b = run_json(&j2, &["status", "--json"]);
    assert_eq!(a["head_hash"], b["head_hash"]);
    assert_eq!(a["events"], b["events"]);
    assert_eq!(run_json(&j2, &["verify", "--json"])["ok"], true);
    assert_eq!(
        run(&p.journal, &["tasks", "--json"]),
        run(&j2, &["tasks", "--json"])
    );
    // The same file again adds nothing (a killed import is completed this way).
    run(&j2, &["import", "--events", file.to_str().unwrap()]);
    assert_eq!(
        run_json(&j2, &["status", "--json"])["head_hash"],
        a["head_hash"]
    );
    // A journal holding other events refuses.
    let other = p.root.path().join("other");
    run(&other, &["tasks", "add", "something else"]);
    let out = cmd(&other)
        .args(["import", "--events", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not this file's first 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_report_is_valid_jsonl_with_the_expected_rows() {
    let p = play_session(&[]);
    let j = &p.journal;
    let lines = |report: &str, extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["export", "--report", report];
        args.extend_from_slice(extra);
        run(j, &args)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{report}: {e}: {l}")))
            .collect()
    };
    let ev = lines("events", &[]);
    assert_eq!(ev.iter().filter(|e| e["kind"] == "Hook").count(), 73);
    assert_eq!(lines("sessions", &[]).len(), 1);
    let snaps = lines("snapshots", &[]);
    assert_eq!(snaps[0]["commits"][0]["hash"], "3f2a9c1");
    assert_eq!(lines("tasks", &[]).len(), 3);
    let notes = lines("notifications", &[]);
    assert_eq!(notes.len(), 2);
    for n in &notes {
        for k in ["timestamp", "type", "title", "message"] {
            assert!(n.get(k).is_some(), "notification lacks {k}");
        }
    }
    let cost = lines("cost", &[]);
    let usd: f64 = cost.iter().map(|c| c["cost_usd"].as_f64().unwrap()).sum();
    assert!((usd - 0.54969).abs() < 0.00001);
    let log = lines("session-log", &[]);
    assert_eq!(log.len(), 3, "two Stops and a SessionEnd");
    for k in [
        "timestamp",
        "cost_usd",
        "duration_ms",
        "tokens_in",
        "tokens_out",
        "model",
        "branch",
    ] {
        assert!(log[0].get(k).is_some(), "session-log lacks {k}");
    }
    assert_eq!(log[2]["event"], "session_end");
    // Filters.
    let unknown = cmd(j)
        .args(["export", "--report", "events", "--session", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session"));
    assert_eq!(lines("events", &["--since", "2099-01-01"]).len(), 0);
    assert_eq!(lines("events", &["--session", "db5b5fab"]).len(), ev.len());
}

#[test]
fn redacted_export_masks_each_planted_secret_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let secrets = [
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefGHIJ",
        "ghp_1234567890abcdefghijABCDEFGHIJ123456",
        "glpat-xY12ab34CD56ef78GH90",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ];
    for (i, s) in secrets.iter().enumerate() {
        let p = format!(
            r#"{{"hook_event_name":"PostToolUse","session_id":"r","tool_name":"Bash","tool_input":{{"command":"echo {s}"}},"tool_use_id":"t{i}"}}"#
        );
        hook(&j, p.as_bytes(), &[]);
    }
    let url = r#"{"hook_event_name":"PostToolUse","session_id":"r","tool_name":"Bash","tool_input":{"command":"git clone https://bob:hunter2secret@example.com/x.git"},"tool_response":{"stdout":"Authorization: Bearer abcdef0123456789abcdef"}}"#;
    hook(&j, url.as_bytes(), &[]);
    let pem = "{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"r\",\"tool_name\":\"Read\",\"tool_response\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx\\n-----END RSA PRIVATE KEY-----\"}";
    hook(&j, pem.as_bytes(), &[]);
    let clean = r#"{"hook_event_name":"PostToolUse","session_id":"r","tool_name":"Bash","tool_input":{"command":"git log 3f2a9c1d 0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70 /home/dev/src/sk-learn"}}"#;
    hook(&j, clean.as_bytes(), &[]);
    let out = cmd(&j)
        .args(["export", "--report", "events", "--redact"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for s in secrets {
        assert!(!text.contains(s), "secret {s} survived");
    }
    for s in [
        "hunter2secret",
        "abcdef0123456789abcdef",
        "MIIEowIBAAKCAQEAx",
    ] {
        assert!(!text.contains(s), "{s} survived");
    }
    assert!(
        text.contains("bob") && text.contains("example.com"),
        "user and host kept"
    );
    assert!(
        text.contains("3f2a9c1d")
            && text.contains("0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70")
            && text.contains("sk-learn"),
        "ordinary text masked"
    );
    for l in text.lines() {
        serde_json::from_str::<Value>(l).expect("still valid JSON");
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("masked 9 secret"), "{err}");
}

#[test]
fn terminal_escape_sequences_from_payloads_are_printed_escaped() {
    let mut env = TestEnvironment::new();
    env.pin_now_ahead();
    let evil = std::fs::read(fixtures().join("bad/control-chars-in-strings.json")).unwrap();
    env.hook(&evil, &[]);
    let p = "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"s1\\u001b[31m\",\"prompt\":\"hi\\u001b]0;owned\\u0007\"}";
    env.hook(p.as_bytes(), &[]);
    let mut all = String::new();
    for args in [
        &["show", "s1"][..],
        &["replay"],
        &["notifications"],
        &["sessions"],
        &["tasks"],
    ] {
        let out = env.run(args).render();
        assert!(
            !out.contains('\x1b') && !out.contains('\x07'),
            "{args:?} printed a raw control character:\n{out}"
        );
        all.push_str(&format!("$ {}\n{out}", args.join(" ")));
    }
    assert_expected("session/control-characters.txt", &all);
}

#[test]
fn demo_prints_every_section_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1")
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for s in [
        "sessions",
        "snapshot",
        "task board",
        "cost",
        "restore text",
        "notifications",
        "replay",
        "Wire limiter into /login",
        "$0.5497",
        "3f2a9c1",
    ] {
        assert!(text.contains(s), "demo lacks {s}:\n{text}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "demo left files behind"
    );
}

#[test]
fn rewind_makes_projections_ignore_the_rewound_events() {
    let p = play_session(&[]);
    let j = &p.journal;
    // Rewind to just after the first TaskUpdate (task 1 in progress, nothing completed yet).
    let lines = run(j, &["replay", "--kind", "Hook:PostToolUse", "--json"]);
    let first_update = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["summary"].as_str().unwrap().starts_with("TaskUpdate 1"))
        .unwrap();
    let to = first_update["seq"].as_u64().unwrap();
    run(j, &["rewind", "db5b5fab", "--to", &to.to_string()]);
    let tasks = run_json(j, &["tasks", "--json"]);
    let t1 = tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "1")
        .unwrap();
    assert_eq!(t1["status"], "in_progress");
    let snap = run_json(j, &["show", SID, "--json"]);
    assert_eq!(snap["commits"].as_array().unwrap().len(), 0);
    assert_eq!(snap["compactions"], 0);
    // The log is not edited, the chain stays valid, and the checkpoint equals a full replay.
    let v = run_json(j, &["verify", "--json"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(events(j).iter().filter(|e| e["kind"] == "Hook").count(), 73);
    // Money spent stays spent: the cost summary ignores rewinds.
    let cost = run_json(j, &["cost", "--json"]);
    assert!((cost["total"]["usd"].as_f64().unwrap() - 0.54969).abs() < 0.00001);
    // New events after the rewind count again.
    let prompt = format!(
        r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{SID}","prompt":"again"}}"#
    );
    hook(j, prompt.as_bytes(), &[]);
    assert_eq!(
        run_json(j, &["show", SID, "--json"])["last_prompts"][0],
        "again"
    );
    assert!(cmd(j)
        .args(["replay", "--verify"])
        .output()
        .unwrap()
        .status
        .success());
}

#[test]
fn clear_restores_from_the_session_that_just_ended_in_the_project() {
    let env = TestEnvironment::new();
    let ev = |name: &str, sid: &str, extra: &str| {
        format!(r#"{{"hook_event_name":"{name}","session_id":"{sid}","cwd":"/p"{extra}}}"#)
    };
    let mut out = String::new();
    for (name, sid, extra) in [
        ("SessionStart", "old", r#","source":"startup""#),
        ("UserPromptSubmit", "old", r#","prompt":"build the parser""#),
        (
            "PostToolUse",
            "old",
            r#","tool_name":"TaskCreate","tool_input":{"subject":"Write the lexer"},"tool_response":{"task":{"id":"1"}}"#,
        ),
        ("SessionEnd", "old", r#","reason":"clear""#),
        // The new session after /clear gets the old one's state...
        ("SessionStart", "new", r#","source":"clear""#),
        // ...and a startup in the same project lists the open task too.
        ("SessionStart", "third", r#","source":"startup""#),
    ] {
        let o = env.hook(ev(name, sid, extra).as_bytes(), &[]);
        out.push_str(&format!("--- {name} {sid}\n{}", o.render()));
    }
    assert_expected("session/clear-restores.txt", &out);
}

#[test]
fn emergency_tier_blocks_stop_once_and_never_when_stop_hook_active() {
    let env = TestEnvironment::new();
    let t = env.root().join("t.jsonl");
    let line = r#"{"type":"assistant","isSidechain":false,"requestId":"r1","timestamp":"2026-11-03T14:00:35.000Z","message":{"id":"m1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":190000,"output_tokens":5}}}"#;
    std::fs::write(&t, format!("{line}\n")).unwrap();
    let stop = |active: bool| {
        format!(
            r#"{{"hook_event_name":"Stop","session_id":"e","transcript_path":"{}","stop_hook_active":{active}}}"#,
            t.display()
        )
    };
    // Never while stop_hook_active; then once; never twice for the same crossing.
    let mut out = String::new();
    for active in [true, false, false] {
        let o = env.hook(stop(active).as_bytes(), &[]);
        out.push_str(&format!(
            "--- Stop, stop_hook_active {active}\n{}",
            o.render()
        ));
    }
    assert_expected("session/emergency-stop.txt", &out);
}

#[test]
fn cold_sessions_move_to_archives_and_still_restore_on_resume() {
    let p = play_session(&[]);
    let j = &p.journal;
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 40\n").unwrap();
    // Enough other activity for many seals: the fixture session goes cold and is archived.
    for s in 0..60 {
        for name in ["SessionStart", "UserPromptSubmit", "Stop"] {
            let payload = format!(
                r#"{{"hook_event_name":"{name}","session_id":"other-{s}","source":"startup","prompt":"p"}}"#
            );
            assert!(hook(j, payload.as_bytes(), &[]).status.success());
        }
    }
    let archives: Vec<_> = std::fs::read_dir(j.join("state"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cold"))
        .collect();
    assert!(
        !archives.is_empty() && archives.len() <= 9,
        "{} archives",
        archives.len()
    );
    let active = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    assert!(!active.trim().ends_with("00000000000000000001"));
    // Resuming the archived session restores its state.
    let out = hook(
        j,
        format!(r#"{{"hook_event_name":"SessionStart","session_id":"{SID}","source":"resume"}}"#)
            .as_bytes(),
        &[],
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("restore on resume");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("Wire limiter into /login"));
    assert_eq!(
        run_json(j, &["sessions", "--json"])
            .as_array()
            .unwrap()
            .len(),
        61
    );
    assert_eq!(run_json(j, &["show", SID, "--json"])["compactions"], 1);
    let v = run_json(j, &["verify", "--json"]);
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["segments"].as_u64().unwrap() >= 5);
}

#[test]
fn each_host_gets_only_the_fields_it_honours() {
    let env = TestEnvironment::new();
    env.run(&["tasks", "add", "Ship the parser"]);
    let mut out = String::new();
    let mut hook = |title: &str, payload: &[u8]| {
        let o = env.hook(payload, &[]);
        if !o.stdout.is_empty() || !o.stderr.is_empty() {
            out.push_str(&format!("--- {title}\n{}", o.render()));
        }
    };
    // Gemini: one AfterTool reminder in twelve calls, with the Gemini event name.
    for i in 0..12 {
        let p = format!(
            r#"{{"hook_event_name":"AfterTool","session_id":"g","timestamp":"2026-11-03T14:05:0{}Z","tool_name":"run_shell_command","tool_input":{{"command":"ls"}},"tool_response":{{"llmContent":"x"}}}}"#,
            i % 10
        );
        hook(&format!("Gemini AfterTool {i}"), p.as_bytes());
    }
    // Cursor: never answered, and no reminder is spent on it.
    for i in 0..12 {
        let p = br#"{"hook_event_name":"afterFileEdit","conversation_id":"c","cursor_version":"2.0.34","file_path":"/a.ts","workspace_roots":["/w"]}"#;
        hook(&format!("Cursor afterFileEdit {i}"), p);
    }
    // Codex: strict schema, only documented fields; Stop answers JSON or nothing.
    hook("Codex UserPromptSubmit", br#"{"hook_event_name":"UserPromptSubmit","session_id":"x","turn_id":"t1","model":"gpt-5.1-codex","prompt":"fix it"}"#);
    hook("Codex SessionStart resume", br#"{"hook_event_name":"SessionStart","session_id":"x","model":"gpt-5.1-codex","turn_id":"t2","source":"resume"}"#);
    hook("Codex Stop", br#"{"hook_event_name":"Stop","session_id":"x","turn_id":"t2","model":"gpt-5.1-codex","stop_hook_active":false}"#);
    assert_expected("session/each-host-answers.txt", &out);
    let reminders: Vec<Value> = events(&env.journal())
        .into_iter()
        .filter(|e| e["kind"] == "ReminderIssued")
        .collect();
    assert!(
        reminders.iter().all(|r| r["session_id"] == "g"),
        "{reminders:?}"
    );
}

/// Bidi overrides and isolates, zero-width and other invisible characters: in a prompt, a
/// notification and a tool's file path.
#[test]
fn bidi_and_invisible_characters_from_payloads_are_printed_escaped() {
    let mut env = TestEnvironment::new();
    env.pin_now_ahead();
    let j = env.journal();
    let sid = "b1d1b1d1-0000-4000-8000-000000000001";
    let prompt =
        "review inv\u{202e}txt.exe\u{202c} and \u{2066}admin\u{2069}\u{200b} please 日本語 🎉";
    let message = "Claude needs your permission for \u{202e}fdp.exe\u{feff}";
    let path = "/home/dev/src/\u{2066}main\u{2069}.rs\u{2028}";
    let payloads = [
        serde_json::json!({"session_id": sid, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        serde_json::json!({"session_id": sid, "hook_event_name": "Notification", "message": message}),
        serde_json::json!({"session_id": sid, "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "fn main() {}\n"}, "tool_response": {"filePath": path}}),
    ];
    for p in &payloads {
        assert!(env.hook_raw(p.to_string().as_bytes(), &[]).status.success());
    }
    // Raw, these reorder or hide what the terminal shows.
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
    };
    let mut seen = String::new();
    let mut check = |args: &[&str], wants: &[&str]| -> String {
        let out = run(&j, args);
        if !args.contains(&"--json") {
            seen.push_str(&format!("$ {}\n{out}", args.join(" ")));
        }
        let raw: Vec<String> = out
            .chars()
            .filter(|&c| unsafe_char(c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(raw.is_empty(), "{args:?} printed {raw:?} raw:\n{out}");
        for w in wants {
            assert!(out.contains(w), "{args:?} lacks {w}:\n{out}");
        }
        assert!(
            !out.contains("日本語") || out.contains("日本語 🎉"),
            "printable text kept"
        );
        out
    };
    let show = check(
        &["show", sid],
        &[
            "\\u{202e}",
            "\\u{2066}",
            "\\u{2069}",
            "\\u{200b}",
            "\\u{2028}",
        ],
    );
    assert!(show.contains("日本語 🎉"), "{show}");
    check(
        &["replay"],
        &["\\u{202e}", "\\u{2066}", "\\u{feff}", "\\u{2028}"],
    );
    check(&["notifications"], &["\\u{202e}fdp.exe\\u{feff}"]);
    check(&["sessions"], &[]);
    check(&["context", sid, "--for", "compact"], &[]);
    // JSON for people's terminals too: escaped, and it parses back to the payload's text.
    let json = check(&["notifications", "--json"], &["\\u202e"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["message"], message);
    let json = check(&["show", sid, "--json"], &["\\u2066"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["files_edited"][0], path);
    for line in check(&["replay", "--json"], &["\\u202e"]).lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    assert_expected("session/invisible-characters.txt", &env.normalize(&seen));
}

/// Given a price override whose long-context threshold is not one of the cost totals' bands
/// (1 token: every request is over it), when `cost` prices the imported corpus, then that model's
/// responses cost the long-context rates, priced one by one from the responses, and the other
/// models are unchanged.
#[test]
fn a_threshold_the_bands_cannot_tell_is_priced_response_by_response() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let corpus = fixtures().join("transcripts-corpus/projects");
    run(&j, &["import", "--transcripts", corpus.to_str().unwrap()]);
    let before = run_json(&j, &["cost", "--by", "model", "--json"]);
    std::fs::write(
        j.join("config.toml"),
        "[pricing.\"claude-sonnet-4\"]\ninput = 1.0\noutput = 1.0\ncache_write_5m = 1.0\n\
         cache_write_1h = 1.0\ncache_read = 1.0\n\n[pricing.\"claude-sonnet-4\".long_context]\n\
         threshold_tokens = 1\ninput = 2.0\noutput = 3.0\ncache_write_5m = 4.0\n\
         cache_write_1h = 4.0\ncache_read = 5.0\n",
    )
    .unwrap();
    let after = run_json(&j, &["cost", "--by", "model", "--json"]);
    let row = |c: &Value, m: &str| -> Value {
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == m)
            .cloned()
            .unwrap_or_else(|| panic!("no row for {m}: {c}"))
    };
    let sonnet = row(&after, "claude-sonnet-4-20250514");
    let t = |k: &str| sonnet[k].as_f64().unwrap();
    let want = (2.0 * t("input_tokens")
        + 3.0 * t("output_tokens")
        + 4.0 * t("cache_write_tokens")
        + 5.0 * t("cache_read_tokens"))
        / 1e6;
    let got = sonnet["usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    let opus = "claude-opus-4-1-20250805";
    assert_eq!(row(&after, opus)["usd"], row(&before, opus)["usd"]);
}

/// Given the fixture session (tasks 1 completed, 2 in progress, 3 pending), journal-wide T1
/// done and T2 pending, and a later session with no task: when `tasks` lists the board, then it
/// shows the open tasks and says what it left out; `--last`, `--status`, `--all` and `--json`
/// widen or narrow it as they say.
#[test]
fn the_task_board_lists_open_tasks_and_every_one_on_request() {
    let env = TestEnvironment::new();
    env.play_claude_session();
    env.run(&["tasks", "add", "ship it"]);
    env.run(&["tasks", "add", "then this"]);
    env.run(&["tasks", "done", "T1"]);
    let later =
        br#"{"hook_event_name":"SessionStart","session_id":"s-later","source":"startup","cwd":"/p"}"#;
    env.hook(later, &[]);
    let mut out = String::new();
    for args in [
        &["tasks"][..],
        &["tasks", "--last", "1"],
        &["tasks", "--all"],
        &["tasks", "--status", "completed"],
    ] {
        out.push_str(&format!("$ {}\n{}", args.join(" "), env.run(args).render()));
    }
    assert_expected("session/task-board.txt", &out);
    let json = env.command(&env.project).args(["tasks", "--json"]).output();
    let json: Value = serde_json::from_slice(&json.unwrap().stdout).unwrap();
    let refs: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ref"].as_str().unwrap())
        .collect();
    assert_eq!(refs, ["T1", "T2", "db5b5fab:1", "db5b5fab:2", "db5b5fab:3"]);
    assert_eq!(json[2]["history"].as_array().unwrap().len(), 3, "{json}");
}

/// The fixture session as its user meets it, compared whole: what every hook answered, in order,
/// then each view of the journal afterwards (the list, the snapshot, the task board, cost, the
/// notifications, the replay of the compaction's answer and `verify`).
#[test]
fn the_fixture_session_every_answer_and_every_view_whole() {
    let mut env = TestEnvironment::new();
    env.pin_now_ahead();
    let answers = env.play_claude_session();
    assert_expected("session/hook-answers.txt", &answers);
    for (name, args) in [
        ("sessions", &["sessions"][..]),
        ("show", &["show", SID]),
        ("tasks", &["tasks", "--all"]),
        ("cost", &["cost", "--by", "session"]),
        ("notifications", &["notifications"]),
        (
            "replay",
            &["replay", "--session", "db5b", "--kind", "Hook:PreCompact"],
        ),
        ("verify", &["verify"]),
    ] {
        // The chain head hashes the hooks' recorded times, which are the real clock's.
        let out = env.run(args).render();
        let out = replace_pattern(&out, "xxxxxxxxxxxxxxxx; ", "[HEAD]; ");
        assert_expected(&format!("session/{name}.txt"), &out);
    }
}
