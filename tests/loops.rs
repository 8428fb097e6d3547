//! Unattended loops end to end, with the real binary in a `TestEnvironment`: loop safety while the
//! journal is busy, task claims raced by several agents, the loop's own task program, and the
//! live log mirrors. Deterministic outputs are compared whole with `tests/expected/loops/`
//! (`HOOKJOURNAL_BLESS=1` rewrites them); races keep property checks (exactly once, counts).

mod common;

use common::{assert_expected, events_of, replace_pattern, CommandOutput, TestEnvironment};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

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

/// A project whose journal has `config`, trusted: the loop's own settings (its task program)
/// apply once the user trusts the file.
fn project(config: &str) -> TestEnvironment {
    let env = TestEnvironment::new();
    configure(&env, config);
    env
}

fn configure(env: &TestEnvironment, config: &str) {
    std::fs::create_dir_all(env.journal()).unwrap();
    std::fs::write(env.journal().join("config.toml"), config).unwrap();
    ok(env, &["trust"]);
}

/// `hookjournal ARGS`, which must succeed.
fn ok(env: &TestEnvironment, args: &[&str]) -> CommandOutput {
    let out = env.run(args);
    assert_eq!(out.code, Some(0), "{args:?}: {}", out.render());
    out
}

/// The journal's events of `kind`, as `export` shows them (the spool ingested first).
fn task_events(env: &TestEnvironment, kind: &str) -> Vec<serde_json::Value> {
    events_of(&env.raw(&["export", "--report", "events"]))
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

fn spooled(env: &TestEnvironment) -> usize {
    std::fs::read_dir(env.journal().join("spool"))
        .unwrap()
        .count()
}

const STOPPED: &str = "{\"continue\":false,\"stopReason\":\"Context Limit Reached\"}\n";

#[test]
fn sixteen_loop_agents_are_stopped_and_released_exactly_once_while_a_reader_holds_the_journal() {
    let env = project("[hook]\nlock_wait_ms = 20\n");
    for i in 0..16 {
        ok(&env, &["tasks", "add", &format!("task {i}")]);
        let (id, agent) = (format!("T{}", i + 1), format!("dev-{i}"));
        ok(&env, &["tasks", "claim", &id, "--agent", &agent]);
    }
    let held = hold(&env.journal());
    // Sixteen hooks at once: their stderr is not compared whole (they contend with each other).
    let outs: Vec<std::process::Output> = std::thread::scope(|s| {
        let hooks: Vec<_> = (0..16)
            .map(|i| {
                let env = &env;
                s.spawn(move || {
                    let agent = format!("dev-{i}");
                    env.hook_raw(
                        precompact(&format!("s{i}")).as_bytes(),
                        &[("RALPH_AGENT_ID", agent.as_str())],
                    )
                })
            })
            .collect();
        hooks.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in outs {
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), STOPPED);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("spooled"), "{err}");
        assert!(
            err.contains("reached the context limit; stopping the agent"),
            "{err}"
        );
    }
    assert_eq!(spooled(&env), 16);
    drop(held);
    // The task board, read right after: a spooled event is acknowledged, so the reader ingests
    // the spool before it lists: every task failed once, released by its own agent.
    let tasks = env.json(&["tasks", "list", "--json", "--all"]);
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 16);
    for t in tasks {
        assert_eq!(t["status"], "failed", "{t}");
        assert_eq!(t["retry_count"], 1, "{t}");
        assert_eq!(t["fail_reason"], "context limit reached", "{t}");
        assert_eq!(t["owner"], serde_json::Value::Null, "{t}");
    }
    let released = task_events(&env, "TaskReleased");
    assert_eq!(released.len(), 16);
    let mut agents: Vec<String> = released
        .iter()
        .map(|e| e["payload"]["agent"].as_str().unwrap().to_string())
        .collect();
    agents.sort();
    agents.dedup();
    assert_eq!(agents.len(), 16);
    // What the hooks answered is on record, and replay recomputes it.
    assert_eq!(task_events(&env, "ResponseEmitted").len(), 16);
    let replay = env.run(&["replay", "--verify"]);
    assert_eq!(replay.code, Some(0), "{}", replay.render());
    // Ingesting again (another reader) releases nothing more.
    ok(&env, &["tasks", "list"]);
    assert_eq!(task_events(&env, "TaskReleased").len(), 16);
}

#[test]
fn the_next_hook_ingests_a_spooled_compaction_and_releases_the_agents_task() {
    let env = project("[hook]\nlock_wait_ms = 20\n");
    let mut t = String::new();
    env.step(&mut t, &["tasks", "add", "ship it"]);
    env.step(&mut t, &["tasks", "claim", "T1", "--agent", "dev-1"]);
    // The journal held by this test for the hook's whole run: it is busy, never a race.
    let held = hold(&env.journal());
    let out = env.hook(precompact("s1").as_bytes(), &[("RALPH_AGENT_ID", "dev-1")]);
    common::step(&mut t, "<PreCompact hook of dev-1, the journal held>", &out);
    drop(held);
    assert_eq!(spooled(&env), 1);
    // Another session's prompt: its hook ingests the spool before it answers, and the
    // spooled compaction's release needs the journal-wide tasks its own answer does not.
    let prompt =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"s2","cwd":"/proj","prompt":"go"}"#;
    assert!(env.hook_raw(prompt.as_bytes(), &[]).status.success());
    assert_eq!(spooled(&env), 0);
    let released = task_events(&env, "TaskReleased");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["payload"]["agent"], "dev-1");
    env.step(&mut t, &["tasks", "show", "T1"]);
    assert_expected("loops/spooled-compaction-released.txt", &t);
}

#[test]
fn eight_agents_racing_claim_next_over_four_tasks_claim_each_once() {
    let env = project("");
    for i in 0..4 {
        ok(&env, &["tasks", "add", &format!("task {i}")]);
    }
    let barrier = std::sync::Barrier::new(8);
    let outs: Vec<std::process::Output> = std::thread::scope(|s| {
        let racers: Vec<_> = (0..8)
            .map(|i| {
                let (env, barrier) = (&env, &barrier);
                s.spawn(move || {
                    let agent = format!("agent-{i}");
                    let mut c = env.command(&env.project);
                    c.args(["tasks", "claim", "--next", "--agent", &agent, "--json"]);
                    barrier.wait();
                    c.output().unwrap()
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let won: Vec<&std::process::Output> = outs.iter().filter(|o| o.status.success()).collect();
    assert_eq!(won.len(), 4);
    // Who lost is the race's; what a loser is told is not.
    for lost in outs.iter().filter(|o| !o.status.success()) {
        let out = CommandOutput {
            stdout: String::from_utf8_lossy(&lost.stdout).into(),
            stderr: String::from_utf8_lossy(&lost.stderr).into(),
            code: lost.status.code(),
        };
        let text = replace_pattern(&out.render(), "for agent-d ", "for agent-[N] ");
        assert_expected("loops/claim-next-none-open.txt", &text);
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
    let tasks = env.json(&["tasks", "list", "--json"]);
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
    let env = project("");
    let mut t = String::new();
    env.step(&mut t, &["tasks", "add", "only one"]);
    env.step(&mut t, &["tasks", "claim", "T1", "--agent", "dev-1"]);
    for args in [
        &["tasks", "claim", "T1", "--agent", "dev-2"][..],
        &["tasks", "start", "T1", "--agent", "dev-2"],
        &["tasks", "claim", "T1"],
    ] {
        let out = env.step(&mut t, args);
        assert_eq!(out.code, Some(1), "{}", out.render());
    }
    env.step(&mut t, &["tasks", "show", "T1"]);
    assert_expected("loops/claim-held.txt", &t);
}

#[test]
fn release_stale_frees_a_task_whose_agent_was_killed() {
    let mut env = project("");
    env.normalize_ages();
    let mut t = String::new();
    env.step(&mut t, &["tasks", "add", "long job"]);
    env.step(&mut t, &["tasks", "claim", "T1", "--agent", "dev-9"]);
    // dev-9's session is killed (kill -9): no SessionEnd ever comes.
    let out = env.hook(
        br#"{"hook_event_name":"UserPromptSubmit","session_id":"k","prompt":"go"}"#,
        &[("RALPH_AGENT_ID", "dev-9")],
    );
    common::step(&mut t, "<UserPromptSubmit hook of dev-9>", &out);
    env.step(&mut t, &["tasks", "release-stale", "--lease", "3600"]);
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    env.step(&mut t, &["tasks", "release-stale", "--lease", "1"]);
    env.step(&mut t, &["tasks", "show", "T1"]);
    // Another agent can take it now.
    env.step(&mut t, &["tasks", "claim", "--next", "--agent", "dev-10"]);
    // How long dev-9 was silent is the machine's (at least the 2 s slept).
    let t = replace_pattern(&t, "silent for dds", "silent for [N]s");
    let t = replace_pattern(&t, "silent for ds", "silent for [N]s");
    assert_expected("loops/release-stale.txt", &t);
}

/// A loop's task program that lists dev-1's and dev-2's tasks (41, 42, and 43 by owner) and logs
/// every call to `task-calls.log` beside it.
fn task_program(dir: &Path) -> PathBuf {
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

/// The payloads of the journal's `ExternalRelease` events (what the task program did), normalised.
fn external_releases(env: &TestEnvironment) -> String {
    let recorded: Vec<serde_json::Value> = task_events(env, "ExternalRelease")
        .into_iter()
        .map(|e| e["payload"].clone())
        .collect();
    env.normalize(&format!(
        "{}\n",
        serde_json::to_string_pretty(&recorded).unwrap()
    ))
}

#[test]
fn the_loops_own_task_program_fails_the_agents_tasks_busy_journal_or_not() {
    let env = project("[hook]\nlock_wait_ms = 20\n");
    let script = task_program(env.root());
    let log = env.root().join("task-calls.log");
    let vars = [
        ("RALPH_AGENT_ID", "dev-1"),
        ("RALPH_TASK_SCRIPT", script.to_str().unwrap()),
    ];
    let mut t = String::new();
    let out = env.hook(precompact("a").as_bytes(), &vars);
    common::step(&mut t, "<PreCompact hook of dev-1>", &out);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason context limit reached\nfail 43 --reason context limit reached\n"
    );
    // Busy (the journal held by this test for the hook's whole run): the program still runs
    // once, and what it did is recorded when the spool is ingested.
    std::fs::remove_file(&log).unwrap();
    let held = hold(&env.journal());
    let out = env.hook(
        br#"{"hook_event_name":"SessionEnd","session_id":"b","reason":"other"}"#,
        &vars,
    );
    common::step(&mut t, "<SessionEnd hook of dev-1, the journal held>", &out);
    drop(held);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason session ended unexpectedly\nfail 43 --reason session ended unexpectedly\n"
    );
    t.push_str("$ <the recorded ExternalRelease payloads>\n");
    t.push_str(&external_releases(&env));
    assert_expected("loops/task-program.txt", &t);
}

/// Gemini CLI fires PreCompress before every model request: only the session file, read under
/// the lock, shows a compaction. The loop's task program then runs after the answer, once per
/// compaction the file shows, and what it did is recorded.
#[test]
fn the_loops_task_program_runs_once_for_a_compaction_the_gemini_session_file_shows() {
    let env = project("");
    let script = task_program(env.root());
    let log = env.root().join("task-calls.log");
    let chat = env.root().join("session.jsonl");
    let fixtures = common::fixtures().join("real-hosts");
    let precompress = |chat: &Path| {
        let p = std::fs::read_to_string(fixtures.join("gemini-0.61.0-payloads/PreCompress.json"))
            .unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&p).unwrap();
        v["transcript_path"] = chat.to_str().unwrap().into();
        v.to_string()
    };
    let vars = [
        ("RALPH_AGENT_ID", "dev-1"),
        ("RALPH_TASK_SCRIPT", script.to_str().unwrap()),
    ];
    let mut t = String::new();
    // An ordinary request: the session file shows no compression; the program is not run.
    std::fs::copy(fixtures.join("gemini-0.61.0-chats/tool-run.jsonl"), &chat).unwrap();
    let out = env.hook(precompress(&chat).as_bytes(), &vars);
    common::step(&mut t, "<PreCompress hook, no compression>", &out);
    assert!(!log.exists(), "the task program ran on an ordinary request");
    // A session file that shows a compression: the program runs once.
    let other = env.root().join("compressed.jsonl");
    std::fs::copy(
        fixtures.join("gemini-0.61.0-chats/with-real-compression.jsonl"),
        &other,
    )
    .unwrap();
    let out = env.hook(precompress(&other).as_bytes(), &vars);
    common::step(&mut t, "<PreCompress hook, a compression>", &out);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "list --status active --json\nfail 41 --reason context limit reached\nfail 43 --reason context limit reached\n"
    );
    // The next request, with no new compression: not again.
    let out = env.hook(precompress(&other).as_bytes(), &vars);
    common::step(&mut t, "<PreCompress hook, no new compression>", &out);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
    t.push_str("$ <the recorded ExternalRelease payloads>\n");
    t.push_str(&external_releases(&env));
    assert_expected("loops/task-program-gemini.txt", &t);
}

#[test]
fn a_task_program_that_hangs_is_cut_off_within_its_budget() {
    let env = TestEnvironment::new();
    let script = env.root().join("task");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    configure(
        &env,
        &format!(
            "[policy]\ntask_command = \"{}\"\n[hook]\ntask_command_timeout_ms = 200\n",
            script.display()
        ),
    );
    let started = std::time::Instant::now();
    let out = env.hook(precompact("h").as_bytes(), &[("RALPH_AGENT_ID", "dev-1")]);
    // Cut off, not waited for: the program would run 30 s (the bound is slack for a loaded machine).
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    assert_expected("loops/task-program-hangs.txt", &out.render());
}

#[test]
fn live_mirrors_carry_the_export_reports_lines() {
    let env = project(
        "[mirror]\nsession_log = \".session-log.jsonl\"\nnotification_log = \"logs/notifications.jsonl\"\n",
    );
    std::fs::create_dir_all(env.project.join("logs")).unwrap();
    let mut t = String::new();
    for (name, payload) in [
        (
            "Notification",
            &br#"{"hook_event_name":"Notification","session_id":"m","message":"Claude needs your permission to use Bash","title":"Claude Code","notification_type":"permission_prompt"}"#[..],
        ),
        (
            "Stop",
            br#"{"hook_event_name":"Stop","session_id":"m","stop_hook_active":false}"#,
        ),
        (
            "SessionEnd",
            br#"{"hook_event_name":"SessionEnd","session_id":"m","reason":"other"}"#,
        ),
    ] {
        common::step(&mut t, &format!("<{name} hook>"), &env.hook(payload, &[]));
    }
    let session_log = std::fs::read_to_string(env.project.join(".session-log.jsonl")).unwrap();
    let notifications =
        std::fs::read_to_string(env.project.join("logs/notifications.jsonl")).unwrap();
    assert_eq!(
        session_log,
        env.raw(&["export", "--report", "session-log"]),
        "same lines as the export"
    );
    assert_eq!(
        notifications,
        env.raw(&["export", "--report", "notifications"])
    );
    t.push_str(&format!("$ cat .session-log.jsonl\n{session_log}\n"));
    t.push_str(&format!("$ cat logs/notifications.jsonl\n{notifications}"));
    assert_expected("loops/mirrors.txt", &env.normalize(&t));
}

#[test]
fn tiers_out_of_order_are_refused_one_line_each_and_the_hook_still_answers() {
    let env = project("[policy]\nwarning = 0.9\ncritical = 0.5\n");
    let out = env.hook(
        br#"{"hook_event_name":"SessionStart","session_id":"c","source":"startup"}"#,
        &[],
    );
    assert_expected("loops/tiers-out-of-order.txt", &out.render());
}
