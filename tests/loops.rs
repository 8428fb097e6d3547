//! Unattended loops end to end, with the real binary: loop safety while the journal is busy, task
//! claims raced by several agents, the loop's own task program, and the live log mirrors.

mod common;

use common::{cmd, events, hook, run, run_json};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Holds the journal's lock (as a long reader or another hook does) until dropped.
fn hold(j: &Path) -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(j.join("lock"))
        .unwrap();
    assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
    f
}

fn precompact(session: &str) -> String {
    format!(
        r#"{{"hook_event_name":"PreCompact","session_id":"{session}","cwd":"/proj","trigger":"auto","custom_instructions":""}}"#
    )
}

fn new_journal(config: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), config).unwrap();
    // The loop's own settings (its task program) apply once the user trusts the file.
    run(&j, &["trust"]);
    (dir, j)
}

fn task_events(j: &Path, kind: &str) -> Vec<serde_json::Value> {
    events(j)
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

#[test]
fn sixteen_loop_agents_are_stopped_and_released_exactly_once_while_a_reader_holds_the_journal() {
    let (_d, j) = new_journal("[hook]\nlock_wait_ms = 20\n");
    for i in 0..16 {
        run(&j, &["tasks", "add", &format!("task {i}")]);
        run(
            &j,
            &[
                "tasks",
                "claim",
                &format!("T{}", i + 1),
                "--agent",
                &format!("dev-{i}"),
            ],
        );
    }
    let held = hold(&j);
    let children: Vec<_> = (0..16)
        .map(|i| {
            let j = j.clone();
            std::thread::spawn(move || {
                let agent = format!("dev-{i}");
                hook(
                    &j,
                    precompact(&format!("s{i}")).as_bytes(),
                    &[("RALPH_AGENT_ID", agent.as_str())],
                )
            })
        })
        .collect();
    for c in children {
        let out = c.join().unwrap();
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"continue\":false,\"stopReason\":\"Context Limit Reached\"}\n"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("spooled"), "{err}");
        assert!(
            err.contains("reached the context limit; stopping the agent"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 16);
    drop(held);
    // The next writer ingests the spool: every task failed once, released by its own agent.
    run(&j, &["drain"]);
    let tasks = run_json(&j, &["tasks", "list", "--json"]);
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 16);
    for t in tasks {
        assert_eq!(t["status"], "failed", "{t}");
        assert_eq!(t["retry_count"], 1, "{t}");
        assert_eq!(t["fail_reason"], "context limit reached", "{t}");
        assert_eq!(t["owner"], serde_json::Value::Null, "{t}");
    }
    let released = task_events(&j, "TaskReleased");
    assert_eq!(released.len(), 16);
    let mut agents: Vec<String> = released
        .iter()
        .map(|e| e["payload"]["agent"].as_str().unwrap().to_string())
        .collect();
    agents.sort();
    agents.dedup();
    assert_eq!(agents.len(), 16);
    // What the hooks answered is on record, and replay recomputes it.
    assert_eq!(task_events(&j, "ResponseEmitted").len(), 16);
    let out = cmd(&j).args(["replay", "--verify"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Ingesting again (another reader) releases nothing more.
    run(&j, &["tasks", "list"]);
    assert_eq!(task_events(&j, "TaskReleased").len(), 16);
}

#[test]
fn the_next_hook_ingests_a_spooled_compaction_and_releases_the_agents_task() {
    let (_d, j) = new_journal("[hook]\nlock_wait_ms = 20\n");
    run(&j, &["tasks", "add", "ship it"]);
    run(&j, &["tasks", "claim", "T1", "--agent", "dev-1"]);
    let held = hold(&j);
    let out = hook(
        &j,
        precompact("s1").as_bytes(),
        &[("RALPH_AGENT_ID", "dev-1")],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("spooled"));
    drop(held);
    // Another session's prompt: its hook ingests the spool before it answers, and the
    // spooled compaction's release needs the journal-wide tasks its own answer does not.
    let prompt =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"s2","cwd":"/proj","prompt":"go"}"#;
    assert!(hook(&j, prompt.as_bytes(), &[]).status.success());
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 0);
    let released = task_events(&j, "TaskReleased");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["payload"]["agent"], "dev-1");
    let tasks = run_json(&j, &["tasks", "list", "--json"]);
    assert_eq!(tasks[0]["status"], "failed", "{tasks}");
    assert_eq!(tasks[0]["fail_reason"], "context limit reached", "{tasks}");
}

#[test]
fn eight_agents_racing_claim_next_over_four_tasks_claim_each_once() {
    let (_d, j) = new_journal("");
    for i in 0..4 {
        run(&j, &["tasks", "add", &format!("task {i}")]);
    }
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (j, barrier) = (j.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                cmd(&j)
                    .args([
                        "tasks",
                        "claim",
                        "--next",
                        "--agent",
                        &format!("agent-{i}"),
                        "--json",
                    ])
                    .output()
                    .unwrap()
            })
        })
        .collect();
    let outs: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
    let won: Vec<&std::process::Output> = outs.iter().filter(|o| o.status.success()).collect();
    let lost: Vec<&std::process::Output> = outs.iter().filter(|o| !o.status.success()).collect();
    assert_eq!(won.len(), 4);
    for l in &lost {
        assert_eq!(l.status.code(), Some(1));
        let err = String::from_utf8_lossy(&l.stderr);
        assert!(
            err.starts_with("hookjournal: no open task to claim for agent-"),
            "{err}"
        );
        assert!(err.ends_with("(4 tasks held by other agents)\n"), "{err}");
    }
    let mut claimed: Vec<String> = won
        .iter()
        .map(|o| {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect();
    claimed.sort();
    assert_eq!(claimed, ["T1", "T2", "T3", "T4"]);
    let tasks = run_json(&j, &["tasks", "list", "--json"]);
    let mut owners: Vec<&str> = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["owner"].as_str().unwrap())
        .collect();
    owners.sort();
    owners.dedup();
    assert_eq!(owners.len(), 4, "four different agents hold them");
}

#[test]
fn claiming_a_held_task_fails_clearly_and_changes_nothing() {
    let (_d, j) = new_journal("");
    run(&j, &["tasks", "add", "only one"]);
    run(&j, &["tasks", "claim", "T1", "--agent", "dev-1"]);
    for args in [
        &["tasks", "claim", "T1", "--agent", "dev-2"][..],
        &["tasks", "start", "T1", "--agent", "dev-2"][..],
    ] {
        let out = cmd(&j).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("hookjournal: task T1 is held by agent dev-1 (in progress since "),
            "{err}"
        );
        assert!(err.ends_with("); not claimed\n"), "{err}");
    }
    let out = cmd(&j).args(["tasks", "claim", "T1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "hookjournal: tasks claim needs --agent NAME (the agent taking the task)\n"
    );
    let t = run_json(&j, &["tasks", "show", "T1", "--json"]);
    assert_eq!(t["owner"], "dev-1");
    assert_eq!(t["history"].as_array().unwrap().len(), 2);
}

#[test]
fn release_stale_frees_a_task_whose_agent_was_killed() {
    let (_d, j) = new_journal("");
    run(&j, &["tasks", "add", "long job"]);
    run(&j, &["tasks", "claim", "T1", "--agent", "dev-9"]);
    // dev-9's session is killed (kill -9): no SessionEnd ever comes.
    hook(
        &j,
        br#"{"hook_event_name":"UserPromptSubmit","session_id":"k","prompt":"go"}"#,
        &[("RALPH_AGENT_ID", "dev-9")],
    );
    assert_eq!(
        run(&j, &["tasks", "release-stale", "--lease", "3600"]),
        "no task held past its lease\n"
    );
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let out = run(&j, &["tasks", "release-stale", "--lease", "1"]);
    assert!(
        out.starts_with("T1 released: lease expired: agent dev-9 silent for "),
        "{out}"
    );
    let t = run_json(&j, &["tasks", "show", "T1", "--json"]);
    assert_eq!(t["status"], "failed");
    assert_eq!(t["owner"], serde_json::Value::Null);
    // Another agent can take it now.
    run(&j, &["tasks", "claim", "--next", "--agent", "dev-10"]);
}

fn task_program(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("task-calls.log");
    let script = dir.join("task");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\ncase \"$1\" in\n  list) echo '[{{\"id\":\"41\",\"agent\":\"dev-1\"}},{{\"id\":\"42\",\"agent\":\"dev-2\"}},{{\"id\":43,\"owner\":\"dev-1\"}}]' ;;\n  fail) exit 0 ;;\nesac\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn the_loops_own_task_program_fails_the_agents_tasks_busy_journal_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let script = task_program(dir.path());
    let log = dir.path().join("task-calls.log");
    let (_d, j) = new_journal("[hook]\nlock_wait_ms = 20\n");
    let env = [
        ("RALPH_AGENT_ID", "dev-1"),
        ("RALPH_TASK_SCRIPT", script.to_str().unwrap()),
    ];
    let out = hook(&j, precompact("a").as_bytes(), &env);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"continue\":false,\"stopReason\":\"Context Limit Reached\"}\n"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason context limit reached\nfail 43 --reason context limit reached\n"
    );
    // Busy: the program still runs once, and what it did is recorded when the spool is ingested.
    std::fs::remove_file(&log).unwrap();
    let held = hold(&j);
    let out = hook(
        &j,
        br#"{"hook_event_name":"SessionEnd","session_id":"b","reason":"other"}"#,
        &env,
    );
    assert!(out.stdout.is_empty());
    drop(held);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason session ended unexpectedly\nfail 43 --reason session ended unexpectedly\n"
    );
    let recorded: Vec<serde_json::Value> = task_events(&j, "ExternalRelease")
        .into_iter()
        .map(|e| e["payload"].clone())
        .collect();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0]["event"], "PreCompact");
    assert_eq!(recorded[0]["released"], serde_json::json!(["41", "43"]));
    assert_eq!(recorded[1]["event"], "SessionEnd");
    assert_eq!(recorded[1]["reason"], "session ended unexpectedly");
    assert_eq!(recorded[1]["errors"], serde_json::json!([]));
}

/// Gemini CLI fires PreCompress before every model request: only the session file, read under
/// the lock, shows a compaction. The loop's task program then runs after the answer, once per
/// compaction the file shows, and what it did is recorded.
#[test]
fn the_loops_task_program_runs_once_for_a_compaction_the_gemini_session_file_shows() {
    let dir = tempfile::tempdir().unwrap();
    let script = task_program(dir.path());
    let log = dir.path().join("task-calls.log");
    let (_d, j) = new_journal("");
    let chat = dir.path().join("session.jsonl");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/real-hosts");
    let precompress = |chat: &Path| {
        let p = std::fs::read_to_string(fixtures.join("gemini-0.61.0-payloads/PreCompress.json"))
            .unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&p).unwrap();
        v["transcript_path"] = chat.to_str().unwrap().into();
        v.to_string()
    };
    let env = [
        ("RALPH_AGENT_ID", "dev-1"),
        ("RALPH_TASK_SCRIPT", script.to_str().unwrap()),
    ];
    // An ordinary request: the session file shows no compression; the program is not run.
    std::fs::copy(fixtures.join("gemini-0.61.0-chats/tool-run.jsonl"), &chat).unwrap();
    let out = hook(&j, precompress(&chat).as_bytes(), &env);
    assert!(out.status.success());
    assert!(!log.exists(), "the task program ran on an ordinary request");
    // A session file that shows a compression: the program runs once.
    let other = dir.path().join("compressed.jsonl");
    std::fs::copy(
        fixtures.join("gemini-0.61.0-chats/with-real-compression.jsonl"),
        &other,
    )
    .unwrap();
    let out = hook(&j, precompress(&other).as_bytes(), &env);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason context limit reached\nfail 43 --reason context limit reached\n"
    );
    // The next request, with no new compression: not again.
    let out = hook(&j, precompress(&other).as_bytes(), &env);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
    let recorded: Vec<serde_json::Value> = task_events(&j, "ExternalRelease")
        .into_iter()
        .map(|e| e["payload"].clone())
        .collect();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0]["event"], "PreCompress");
    assert_eq!(recorded[0]["reason"], "context limit reached");
    assert_eq!(recorded[0]["released"], serde_json::json!(["41", "43"]));
}

#[test]
fn a_task_program_that_hangs_is_cut_off_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("task");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_d, j) = new_journal(&format!(
        "[policy]\ntask_command = \"{}\"\n[hook]\ntask_command_timeout_ms = 200\n",
        script.display()
    ));
    let started = std::time::Instant::now();
    let out = hook(
        &j,
        precompact("h").as_bytes(),
        &[("RALPH_AGENT_ID", "dev-1")],
    );
    // Cut off, not waited for: the program would run 30 s (the bound is slack for a loaded machine).
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    assert!(!out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the loop's task program: `")
            && err.contains("list --status active --json` timed out"),
        "{err}"
    );
}

#[test]
fn live_mirrors_carry_the_export_reports_lines() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join(".hookjournal");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(
        j.join("config.toml"),
        "[mirror]\nsession_log = \".session-log.jsonl\"\nnotification_log = \"logs/notifications.jsonl\"\n",
    )
    .unwrap();
    run(&j, &["trust"]);
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    let n = br#"{"hook_event_name":"Notification","session_id":"m","message":"Claude needs your permission to use Bash","title":"Claude Code","notification_type":"permission_prompt"}"#;
    hook(&j, n, &[]);
    hook(
        &j,
        br#"{"hook_event_name":"Stop","session_id":"m","stop_hook_active":false}"#,
        &[],
    );
    hook(
        &j,
        br#"{"hook_event_name":"SessionEnd","session_id":"m","reason":"other"}"#,
        &[],
    );
    let session_log = std::fs::read_to_string(dir.path().join(".session-log.jsonl")).unwrap();
    let notifications =
        std::fs::read_to_string(dir.path().join("logs/notifications.jsonl")).unwrap();
    assert_eq!(session_log.lines().count(), 2, "{session_log}");
    assert_eq!(notifications.lines().count(), 1, "{notifications}");
    assert_eq!(
        session_log,
        run(&j, &["export", "--report", "session-log"]),
        "same lines as the export"
    );
    assert_eq!(
        notifications,
        run(&j, &["export", "--report", "notifications"])
    );
}

#[test]
fn tiers_out_of_order_are_refused_one_line_each_and_the_hook_still_answers() {
    let (_d, j) = new_journal("[policy]\nwarning = 0.9\ncritical = 0.5\n");
    let out = hook(
        &j,
        br#"{"hook_event_name":"SessionStart","session_id":"c","source":"startup"}"#,
        &[],
    );
    assert!(out.status.success());
    let cfg = j.join("config.toml");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hookjournal: {0}: policy.warning = 0.9 must be below policy.critical = 0.5\n\
             hookjournal: {0}: context tiers refused; using warning 0.7, critical 0.85, emergency 0.95\n",
            cfg.display()
        )
    );
}
