//! The write path through the real binary: every invocation recorded verbatim, none lost under
//! concurrency or `kill -9`, never a non-zero exit, never stray output. Each test runs in a
//! `TestEnvironment` (cleared environment, HOME and project under one temp root); outputs that are
//! deterministic are compared whole with `tests/expected/hook/` (`HOOKJOURNAL_BLESS=1` rewrites
//! them), races keep their property checks.

mod common;
use common::kill::{kill_hooks, Campaign};
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Stdio;

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![fixtures().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// A fixture's path under `tests/fixtures/DIR`, as the expected outputs name it.
fn rel(path: &std::path::Path, dir: &str) -> String {
    path.strip_prefix(fixtures().join(dir))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The number of files waiting in the project journal's spool.
fn spooled(env: &TestEnvironment) -> usize {
    std::fs::read_dir(env.journal().join("spool"))
        .unwrap()
        .count()
}

/// Writes the project journal's `config.toml` (before its first event).
fn config(env: &TestEnvironment, toml: &str) {
    std::fs::create_dir_all(env.journal()).unwrap();
    std::fs::write(env.journal().join("config.toml"), toml).unwrap();
}

/// `hookjournal --journal <the project's> hook ARGS` with `payload` on stdin and `vars` set (a
/// host's recorded environment, which may name another project directory), normalised.
fn hook_with(
    env: &TestEnvironment,
    args: &[&str],
    payload: &[u8],
    vars: &[(String, String)],
) -> CommandOutput {
    let mut c = env.command(&env.project);
    c.arg("--journal").arg(env.journal()).arg("hook").args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = feed(&mut c, payload);
    CommandOutput {
        stdout: env.normalize(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalize(&String::from_utf8_lossy(&out.stderr)),
        code: out.status.code(),
    }
}

/// One journaled event in a line: kind, name, host, session, and a Malformed one's reason.
fn describe(e: &Value) -> String {
    let mut s = e["kind"].as_str().unwrap().to_string();
    for field in ["name", "host", "session_id"] {
        if let Some(v) = e[field].as_str() {
            s.push_str(&format!(" {field}={}", v.escape_debug()));
        }
    }
    if let Some(r) = e["reason"].as_str() {
        s.push_str(&format!(" reason={r}"));
    }
    s
}

/// Given each fixture payload in a fresh project, when the hook runs, then it prints nothing and
/// the journal holds that one payload, verbatim, as a well-formed Hook of the host it came from.
#[test]
fn every_fixture_payload_is_recorded_once_verbatim_with_empty_stdout() {
    let all: Vec<_> = files("events")
        .into_iter()
        .filter(|p| !p.ends_with("notify-argv.json"))
        .collect();
    assert!(all.len() >= 40, "fixtures missing: {}", all.len());
    let mut report = String::new();
    for path in all {
        let name = rel(&path, "events");
        let env = TestEnvironment::new();
        let bytes = std::fs::read(&path).unwrap();
        let out = env.hook(&bytes, &[]);
        assert_eq!(out.code, Some(0), "{name}: {}", out.render());
        assert!(out.stdout.is_empty(), "{name}: {}", out.render());
        let evs = env.journaled();
        let hooks: Vec<_> = evs
            .iter()
            .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
            .collect();
        assert_eq!(hooks.len(), 1, "{name}: {evs:?}");
        assert_eq!(hooks[0]["kind"], "Hook", "{name} should be well-formed");
        assert_eq!(
            payload_bytes(hooks[0]),
            bytes,
            "{name}: payload not verbatim"
        );
        report.push_str(&format!("{name}: {}\n{}", describe(hooks[0]), out.render()));
    }
    assert_expected("hook/every-fixture.txt", &report);
}

/// Given each bad input in a fresh project, when the hook runs, then it exits 0 printing nothing
/// and records the bytes exactly: as Malformed with a reason, or, for an object with a string
/// event name however odd the rest, as a Hook.
#[test]
fn bad_inputs_exit_zero_and_are_recorded_as_malformed_byte_for_byte() {
    let bad = files("bad");
    assert!(bad.len() >= 13);
    let mut report = String::new();
    for path in bad {
        let name = rel(&path, "bad");
        let env = TestEnvironment::new();
        let bytes = std::fs::read(&path).unwrap();
        let out = env.hook(&bytes, &[]);
        assert_eq!(out.code, Some(0), "{name}: {}", out.render());
        assert!(out.stdout.is_empty(), "{name}: {}", out.render());
        let evs = env.journaled();
        assert!(!evs.is_empty(), "{name}: nothing recorded");
        let first = &evs[0];
        // Objects with a string event name are hook events, however odd the rest (escape
        // sequences, invalid UTF-8 inside a string, 5,000-deep nesting, a hostile session id).
        let expect_hook = [
            "control-chars",
            "session-id-path",
            "deep-nesting",
            "not-utf8",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        if expect_hook {
            assert_eq!(first["kind"], "Hook", "{name}: {first}");
        } else {
            assert_eq!(first["kind"], "Malformed", "{name}: {first}");
            assert!(!first["reason"].as_str().unwrap().is_empty());
        }
        assert_eq!(payload_bytes(first), bytes, "{name}: payload not verbatim");
        report.push_str(&format!("{name}: {}\n{}", describe(first), out.render()));
    }
    assert_expected("hook/bad-inputs.txt", &report);
}

#[test]
fn path_traversal_session_id_never_becomes_a_path() {
    let env = TestEnvironment::new();
    let bytes = std::fs::read(fixtures().join("bad/session-id-path-traversal.json")).unwrap();
    let out = env.hook(&bytes, &[]);
    assert_eq!(out.render(), "");
    let mut names = BTreeSet::new();
    let mut stack = vec![env.root().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            names.insert(e.file_name().to_string_lossy().into_owned());
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
    assert!(names.contains(".hookjournal"), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| !n.contains("passwd") && !n.contains("..")),
        "{names:?}"
    );
}

/// Codex's `notify` passes its JSON as the last argument, stdin closed: recorded verbatim as a
/// Hook of host codex, with nothing printed.
#[test]
fn codex_notify_json_from_last_argument_is_journaled() {
    let env = TestEnvironment::new();
    let arg = std::fs::read_to_string(fixtures().join("events/codex/notify-argv.json")).unwrap();
    let j = env.journal();
    let out = env.run(&["--journal", j.to_str().unwrap(), "hook", &arg]);
    assert_eq!(out.render(), "");
    let evs = env.journaled();
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(
        describe(&evs[0]),
        "Hook name=agent-turn-complete host=codex session_id=019a8f7e-codex-thread"
    );
    assert_eq!(payload_bytes(&evs[0]), arg.as_bytes());
}

#[test]
fn payload_over_the_cap_keeps_prefix_length_and_hash() {
    let env = TestEnvironment::new();
    config(&env, "[hook]\npayload_cap = 1000\n");
    let big = format!(
        "{{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"s\",\"tool_response\":\"{}\"}}",
        "x".repeat(5000)
    );
    let out = env.hook(big.as_bytes(), &[]);
    assert_eq!(out.render(), "");
    let evs = env.journaled();
    assert_eq!(evs[0]["kind"], "Malformed");
    assert_eq!(evs[0]["truncated"]["original_len"], big.len());
    assert_eq!(
        evs[0]["truncated"]["blake3"],
        blake3::hash(big.as_bytes()).to_hex().as_str()
    );
    assert_eq!(payload_bytes(&evs[0]), big.as_bytes()[..1000].to_vec());
}

#[test]
fn journal_is_private_and_ignored_by_git() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnvironment::new();
    let j = env.journal();
    let out = env.hook(br#"{"hook_event_name":"Stop","session_id":"s"}"#, &[]);
    assert_eq!(out.render(), "");
    assert_eq!(
        std::fs::metadata(&j).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::read_to_string(j.join(".gitignore")).unwrap(),
        "*\n"
    );
    let mut stack = vec![j.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            if e.path().is_dir() {
                assert_eq!(mode, 0o700, "{:?}", e.path());
                stack.push(e.path());
            } else {
                assert_eq!(mode, 0o600, "{:?}", e.path());
            }
        }
    }
}

/// A unique payload: PreToolUse (record-only, the spool fast path) for even `i`, PostToolUse
/// (through the store, under the lock) for odd `i`, so both paths race each other.
fn marker_payload(worker: usize, i: usize) -> String {
    let event = if i.is_multiple_of(2) {
        "PreToolUse"
    } else {
        "PostToolUse"
    };
    format!(
        r#"{{"session_id":"w{worker}","hook_event_name":"{event}","tool_name":"Bash","tool_input":{{"command":"echo {worker}-{i}"}},"tool_use_id":"t-{worker}-{i}"}}"#
    )
}

/// Races: what each hook met (the lock free or busy, a rotation) varies by run, so only the
/// properties are checked (never a hook's stderr, which may carry a spool note).
#[test]
fn concurrent_hooks_while_export_loops_lose_and_duplicate_nothing() {
    let env = TestEnvironment::new();
    // Small segments: rotations happen under load too.
    config(&env, "[hook]\nsegment_events = 500\n");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let exports = std::thread::scope(|s| {
        let exporter = s.spawn(|| {
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // A reader waits for the lock within a bound (10 s); on a loaded machine 64 hooks
                // can outlast it, and it says so: how long it waited is the machine's, not a
                // property of the journal (the export after the race must succeed).
                let out = env.run(&["export", "--report", "events"]);
                assert!(
                    out.code == Some(0)
                        || out.stderr.contains("no journal")
                        || out
                            .stderr
                            .contains("is busy (another process held its lock for"),
                    "{}",
                    out.render()
                );
                runs += 1;
            }
            runs
        });
        let workers: Vec<_> = (0..64)
            .map(|w| {
                let env = &env;
                s.spawn(move || {
                    for i in 0..50 {
                        let out = env.hook_raw(marker_payload(w, i).as_bytes(), &[]);
                        assert!(out.status.success());
                        assert!(
                            out.stdout.is_empty(),
                            "{}",
                            String::from_utf8_lossy(&out.stdout)
                        );
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        exporter.join().unwrap()
    });
    assert!(exports > 0);
    let after = env.run(&["export", "--report", "events"]);
    assert_eq!(after.code, Some(0), "{}", after.render());
    // Anything still spooled is drained by the next hook.
    env.hook_raw(br#"{"hook_event_name":"Stop","session_id":"drain"}"#, &[]);
    let counts = env.journaled_payloads();
    for w in 0..64 {
        for i in 0..50 {
            let n = counts
                .get(marker_payload(w, i).as_bytes())
                .copied()
                .unwrap_or(0);
            assert_eq!(n, 1, "payload {w}-{i} present {n} times");
        }
    }
    assert_eq!(counts.values().sum::<usize>(), 64 * 50 + 1);
    let v = env.run(&["verify", "--json"]);
    assert_eq!(v.code, Some(0), "{}", v.render());
}

/// Races: where each kill landed varies by run, so only the property is checked.
#[test]
fn kill_9_at_random_moments_loses_no_acknowledged_event() {
    let env = TestEnvironment::new();
    // Tiny segments and a tiny lock budget: kills land in rotations and spool drains too.
    config(&env, "[hook]\nsegment_events = 40\nlock_wait_ms = 5\n");
    // 200 rounds of three hooks with one killed, and on until 100 of the kills landed mid-run;
    // the hooks that were not killed all exit 0 (`kill_hooks` checks). `kill_hooks` runs them
    // with `--journal`, on the project's journal.
    let want = Campaign {
        min_rounds: 200,
        landed: 100,
        max_rounds: 2_000,
        seed: 0x9e3779b97f4a7c15,
    };
    let k = kill_hooks(&env.journal(), &want, |run| {
        (0..3).map(|n| marker_payload(run, n)).collect()
    });
    let acknowledged = k.acknowledged;
    env.hook_raw(br#"{"hook_event_name":"Stop","session_id":"drain"}"#, &[]);
    let v = env.run(&["verify", "--json"]);
    assert_eq!(v.code, Some(0), "verify after kills: {}", v.render());
    let counts = env.journaled_payloads();
    for p in &acknowledged {
        assert_eq!(
            counts.get(p.as_bytes()).copied(),
            Some(1),
            "acknowledged payload {p} missing or duplicated"
        );
    }
    assert!(
        counts.values().all(|&n| n == 1),
        "a killed invocation was recorded twice"
    );
}

/// Given the journal's lock held from outside, when hooks that need the store run, then each
/// says its event was spooled (the lock is held throughout: no race decides it) and exits 0;
/// once the lock is free, the next hook ingests them in arrival order.
#[test]
fn busy_journal_spools_and_the_next_hook_drains_in_order() {
    let env = TestEnvironment::new();
    config(&env, "[hook]\nlock_wait_ms = 1\n");
    let out = env.hook(
        br#"{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}"#,
        &[],
    );
    assert_eq!(out.code, Some(0), "{}", out.render());
    // Hold the journal's lock from outside, as a long reader or another hook would.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(env.journal().join("lock"))
        .unwrap();
    use std::os::unix::io::AsRawFd;
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let mut outputs = String::new();
    for i in 0..5 {
        // Odd markers are PostToolUse: they want the lock, cannot get it, and spool.
        let out = env.hook(marker_payload(1, 2 * i + 1).as_bytes(), &[]);
        outputs.push_str(&out.render());
    }
    assert_expected("hook/busy-journal-spools.txt", &outputs);
    assert_eq!(spooled(&env), 5);
    drop(lock);
    let out = env.hook(br#"{"hook_event_name":"Stop","session_id":"s"}"#, &[]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let evs: Vec<_> = env
        .journaled()
        .into_iter()
        .filter(|e| e["kind"] == "Hook")
        .collect();
    let order: Vec<String> = evs
        .iter()
        .map(|e| {
            e["payload"]["tool_use_id"]
                .as_str()
                .unwrap_or(e["name"].as_str().unwrap())
                .to_string()
        })
        .collect();
    assert_eq!(
        order,
        [
            "SessionStart",
            "t-1-1",
            "t-1-3",
            "t-1-5",
            "t-1-7",
            "t-1-9",
            "Stop"
        ]
    );
    assert!(evs[1]["spooled"].as_bool().unwrap());
    assert_eq!(spooled(&env), 0);
}

/// Given a session whose every hook after its start was record-only (spooled by the fast path:
/// a killed agent, a host that ends on a tool event), when it is exported and read right after,
/// with no hook since, then every view holds every invocation: the export's 61 events, the
/// session's 61 hook events, the status's count, and nothing said about a spool.
#[test]
fn every_read_shows_the_spooled_end_of_a_session_with_no_hook_since() {
    let env = TestEnvironment::new();
    let start =
        br#"{"hook_event_name":"SessionStart","session_id":"s","cwd":"/p","source":"startup"}"#;
    assert_eq!(env.hook(start, &[]).code, Some(0));
    for i in 0..60 {
        let pre = format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"Bash","tool_input":{{"command":"echo {i}"}}}}"#
        );
        assert_eq!(env.hook(pre.as_bytes(), &[]).code, Some(0));
    }
    assert_eq!(spooled(&env), 60);
    let export = env.run(&["export", "--report", "events"]);
    assert_eq!((export.code, export.stderr.as_str()), (Some(0), ""));
    let hooks = common::events_of(&env.raw(&["export", "--report", "events"]))
        .into_iter()
        .filter(|e| e["kind"] == "Hook")
        .count();
    assert_eq!(hooks, 61);
    let sessions = env.json(&["sessions", "--json"]);
    assert_eq!(sessions[0]["events"], 61, "{sessions}");
    let status = env.json(&["status", "--json"]);
    assert_eq!(
        (&status["events"], &status["spooled"]),
        (&61.into(), &0.into())
    );
}

/// Given a record-only event, when the hook runs, then only the spool is written (the store is
/// never opened); a task created that way is in the next answer (a resume's restore), which
/// ingests the spool first.
#[test]
fn record_only_events_skip_the_store_and_are_ingested_before_any_answer() {
    let env = TestEnvironment::new();
    let j = env.journal();
    let pre = std::fs::read(fixtures().join("events/claude/PreToolUse-Bash.json")).unwrap();
    let out = env.hook(&pre, &[]);
    assert_eq!(out.render(), "");
    // Only the spool exists: the store was never opened.
    assert!(!j.join("CURRENT").exists());
    assert_eq!(spooled(&env), 1);
    // A task created through the fast path is visible to the next answer.
    let created = br#"{"hook_event_name":"TaskCreated","session_id":"s","task_id":"9","task_subject":"Fast path task"}"#;
    env.hook(created, &[]);
    let out = env.hook(
        br#"{"hook_event_name":"SessionStart","session_id":"s","source":"resume"}"#,
        &[],
    );
    assert_expected("hook/restore-after-fast-path.txt", &out.render());
    assert_eq!(spooled(&env), 0);
    let names: Vec<String> = env
        .journaled()
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["PreToolUse", "TaskCreated", "SessionStart"]);
}

#[test]
fn verify_checks_a_journal_whose_events_all_wait_in_the_spool() {
    // Only record-only hooks so far (issue 33: `verify` said "no journal" where `status` found
    // them): the spooled events are read and checked where they lie, then ingested (they are
    // acknowledged events), and the journal checked again with them in its log.
    let env = TestEnvironment::new();
    let j = env.journal();
    let pre = std::fs::read(fixtures().join("events/claude/PreToolUse-Bash.json")).unwrap();
    env.hook(&pre, &[]);
    env.hook(&pre, &[]);
    assert!(!j.join("CURRENT").exists());
    let text = env.run(&["verify"]).render();
    assert_eq!(spooled(&env), 0);
    let json = env.run(&["verify", "--json"]).render();
    // The events' hashes cover the time they were recorded.
    let text = common::replace_pattern(&text, " xxxxxxxxxxxxxxxx;", " [CHAIN HEAD];");
    let json = common::replace_pattern(
        &json,
        &format!("\"{}\"", "x".repeat(64)),
        "\"[CHAIN HEAD]\"",
    );
    // A directory with neither a log nor a spool is still no journal.
    let none = env.root().join("none");
    let missing = env.run(&["--journal", none.to_str().unwrap(), "verify"]);
    assert_expected(
        "hook/verify-spool-only.txt",
        &format!(
            "$ hookjournal verify\n{text}\n$ hookjournal verify --json\n{json}\n\
             $ hookjournal --journal $TEST_ENV/none verify\n{}",
            missing.render()
        ),
    );
}

#[test]
fn a_bad_config_is_reported_and_the_hook_still_answers_with_defaults() {
    let env = TestEnvironment::new();
    config(&env, "[policy]\nreminder_threshold = \"ten\"\n");
    let p = br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/p","prompt":"hi"}"#;
    env.hook(p, &[]);
    env.hook(
        br#"{"hook_event_name":"SessionEnd","session_id":"s","cwd":"/p","reason":"clear"}"#,
        &[],
    );
    // The answer (the prompt "hi" restored after /clear) and one warning naming the file.
    let out = env.hook(
        br#"{"hook_event_name":"SessionStart","session_id":"t","cwd":"/p","source":"clear"}"#,
        &[],
    );
    assert_expected("hook/bad-config-still-answers.txt", &out.render());
}

#[test]
fn gemini_users_never_see_a_config_warning_on_every_call() {
    let env = TestEnvironment::new();
    config(&env, "[policy]\nreminder_threshold = \"ten\"\n");
    // Gemini CLI shows stderr as a "Hook system message" when stdout is empty.
    for p in [
        &br#"{"hook_event_name":"BeforeTool","session_id":"g","cwd":"/p","timestamp":"t","tool_name":"ls","tool_input":{}}"#[..],
        br#"{"hook_event_name":"PreCompress","session_id":"g","cwd":"/p","timestamp":"t","trigger":"auto"}"#,
        br#"{"hook_event_name":"AfterAgent","session_id":"g","cwd":"/p","timestamp":"t","prompt":"x","prompt_response":"y"}"#,
    ] {
        let out = env.hook(p, &[]);
        assert_eq!(out.render(), "", "{}", String::from_utf8_lossy(p));
    }
    // The same file still warns elsewhere (Claude Code shows stderr only in its debug log).
    let out = env.hook(
        br#"{"hook_event_name":"Stop","session_id":"c","cwd":"/p"}"#,
        &[],
    );
    assert_expected("hook/config-warning-for-claude.txt", &out.render());
}

#[test]
fn gemini_environment_breaks_a_tie_but_never_overrides_the_payload_or_flag() {
    let env = TestEnvironment::new();
    let plain = br#"{"hook_event_name":"Stop","session_id":"g1"}"#;
    env.hook(plain, &[("GEMINI_SESSION_ID", "g1")]);
    let codex = br#"{"hook_event_name":"Stop","session_id":"c1","turn_id":"t"}"#;
    env.hook(codex, &[("GEMINI_SESSION_ID", "g1")]);
    let hosts: Vec<String> = env
        .journaled()
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["host"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts, ["gemini", "codex"]);
}

#[test]
fn a_panic_under_the_lock_spools_the_event_and_still_exits_zero() {
    let env = TestEnvironment::new();
    let p = br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"survive"}"#;
    let out = env.hook(p, &[("HOOKJOURNAL_FAILPOINT", "locked")]);
    // Exit 0, nothing on stdout, one line on stderr: the internal error, and the event spooled.
    // The panic's place is named by line, which moves with every edit of the file.
    let text = ["d:", "dd:", "ddd:", "dddd:"]
        .iter()
        .rev()
        .fold(out.render(), |t, n| {
            replace_pattern(&t, &format!("hook.rs:{n}"), "hook.rs:[LINE]:")
        });
    assert_expected("hook/panic-under-the-lock.txt", &text);
    let evs = env.journaled();
    assert_eq!(evs.len(), 1);
    assert_eq!(payload_bytes(&evs[0]), p.to_vec());
    assert_eq!(evs[0]["spooled"], true);
}

/// `hook --help` prints the help `first_hour` compares for every command, and records nothing.
#[test]
fn hook_help_prints_help_and_records_nothing() {
    let env = TestEnvironment::new();
    let out = env.run(&["hook", "--help"]);
    assert_expected("help/hook.txt", &out.render());
    assert!(!env.journal().exists());
}

#[test]
fn cli_output_into_a_closed_pipe_ends_quietly() {
    let env = TestEnvironment::new();
    for i in 0..200 {
        env.hook_raw(marker_payload(0, i).as_bytes(), &[]);
    }
    let mut child = env
        .command(&env.project)
        .args(["replay"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    // Like `cat` into `| head`: ended by SIGPIPE, with nothing said (no error, no panic line).
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(13),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn flipped_bytes_in_a_segment_or_the_active_store_make_verify_exit_3_naming_the_place() {
    let env = TestEnvironment::new();
    let j = env.journal();
    config(&env, "[hook]\nsegment_events = 20\n");
    for i in 0..50 {
        env.hook_raw(marker_payload(3, 2 * i + 1).as_bytes(), &[]);
    }
    let out = env.run(&["verify"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let flip = |path: &std::path::Path| {
        let mut b = std::fs::read(path).unwrap();
        let nonzero: Vec<usize> = (0..b.len()).filter(|&i| b[i] != 0).collect();
        let at = nonzero[nonzero.len() / 2];
        b[at] ^= 0xff;
        std::fs::write(path, b).unwrap();
    };
    // A sealed segment, in a copy of the journal.
    let copy = env.root().join("copy");
    let _ = std::process::Command::new("cp")
        .arg("-r")
        .arg(&j)
        .arg(&copy)
        .status();
    let seg = std::fs::read_dir(copy.join("segments"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "seg"))
        .unwrap();
    flip(&seg);
    let segment = env.run(&["--journal", copy.to_str().unwrap(), "verify"]);
    assert_eq!(segment.code, Some(3), "{}", segment.render());
    let seg_name = seg.file_name().unwrap().to_string_lossy().into_owned();
    // The active sled store, once it has ingested the log's tail (as the drainer does).
    let drained = env.run(&["drain"]);
    assert_eq!(drained.code, Some(0), "{}", drained.render());
    let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    flip(&j.join(current.trim()).join("db"));
    let store = env.run(&["verify"]);
    assert_eq!(store.code, Some(3), "{}", store.render());
    // The hook still exits 0 and keeps the event on a damaged store: it never opens sled while
    // the hot cache is current (the event goes to the write-ahead log), else it spools.
    let out = env.hook_raw(marker_payload(3, 999).as_bytes(), &[]);
    assert!(out.status.success() && out.stdout.is_empty());
    // `recover` rebuilds the store from the sealed segments and the write-ahead log: every
    // acknowledged event is kept, and the spooled one is ingested.
    let recovered = env.run(&["recover"]);
    assert_eq!(recovered.code, Some(0), "{}", recovered.render());
    assert_eq!(env.json(&["verify", "--json"])["ok"], true);
    let counts = env.journaled_payloads();
    for i in 0..50 {
        assert_eq!(
            counts.get(marker_payload(3, 2 * i + 1).as_bytes()).copied(),
            Some(1),
            "event {i}"
        );
    }
    assert_eq!(
        counts.get(marker_payload(3, 999).as_bytes()).copied(),
        Some(1)
    );
    assert!(std::fs::read_dir(&j)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("damaged-")));
    // And hooks answer from the store again.
    let out = env.hook(marker_payload(3, 1001).as_bytes(), &[]);
    assert_eq!(out.render(), "");
    let again = env.run(&["recover"]);
    assert_eq!(again.code, Some(0), "{}", again.render());
    // Compared whole: verify names each damaged place and exits 3, `recover` says it rebuilt
    // the active store and lost nothing, then that there is nothing to repair. The chain hashes
    // the hooks' recorded times, which are the real clock's.
    let transcript = format!(
        "$ hookjournal --journal $TEST_ENV/copy verify  # a flipped byte in {seg_name}\n{}\n\
         $ hookjournal verify  # a flipped byte in the active store\n{}\n\
         $ hookjournal recover\n{}\n$ hookjournal recover\n{}",
        segment.render(),
        store.render(),
        recovered.render(),
        again.render()
    );
    let transcript = replace_pattern(
        &transcript,
        "prev hash xxxxxxxxxxxxxxxx ",
        "prev hash [HASH] ",
    );
    assert_expected("hook/flipped-bytes-verify-and-recover.txt", &transcript);
}

/// Claude Code 2.1.330's served calls (tool calls it runs here for a cloud session, as its
/// `remoteCall` hook input builds them): journaled verbatim, answered with nothing, under the
/// caller's session; `sessions` shows the caller as `served`, `show` names the served tools.
#[test]
fn served_calls_are_journaled_under_their_caller_and_shown_as_served() {
    let mut env = TestEnvironment::new();
    let caller = "session_01HJcloudCaller";
    let payloads = [
        format!(
            r#"{{"session_id":"served:{caller}","transcript_path":"","cwd":"/p","permission_mode":"default","served_call":true,"caller_session_id":"{caller}","hook_event_name":"PreToolUse","tool_name":"mcp__docs__search","tool_input":{{"q":"x"}},"tool_use_id":"t1","mcp_server":{{"name":"docs","source":"project"}}}}"#
        ),
        format!(
            r#"{{"session_id":"served:{caller}","transcript_path":"","cwd":"/p","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"mcp__docs__search","tool_input":{{"q":"x"}},"tool_response":{{}},"tool_use_id":"t1","mcp_server":{{"name":"docs","source":"project"}}}}"#
        ),
    ];
    for p in &payloads {
        let out = env.hook(format!("{p}\n").as_bytes(), &[]);
        assert_eq!(out.code, Some(0), "{}", out.render());
        assert!(out.stdout.is_empty(), "{}", out.render());
    }
    let evs = env.journaled();
    let hooks: Vec<_> = evs.iter().filter(|e| e["kind"] == "Hook").collect();
    assert_eq!(hooks.len(), 2);
    assert!(hooks.iter().all(|e| e["session_id"] == caller), "{hooks:?}");
    // Verbatim (the export gives a JSON payload as its JSON value: without the line's newline).
    for (e, p) in hooks.iter().zip(&payloads) {
        assert_eq!(payload_bytes(e), p.as_bytes());
    }
    let rows = env.json(&["sessions", "--json"]);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["session_id"], caller);
    assert_eq!(rows[0]["status"], "served");
    env.pin_now_ahead();
    let table = env.run(&["sessions"]).render();
    let show = env.run(&["show", caller]).render();
    assert_expected(
        "hook/served-calls.txt",
        &format!("$ hookjournal sessions\n{table}\n$ hookjournal show {caller}\n{show}"),
    );
}

/// Read commands take partitions from the hot cache while it is current (no sled open), but a
/// spooled event is an acknowledged one: given a session answered through the cache and then
/// record-only events that went to the spool, when `sessions` reads it, then it ingests the spool
/// first (the store opened for it) and counts every one, and so do `show` and `status` after it.
#[test]
fn reads_from_the_hot_cache_ingest_the_events_still_in_the_spool() {
    let mut env = TestEnvironment::new();
    let start =
        br#"{"hook_event_name":"SessionStart","session_id":"s-hot","source":"startup","cwd":"/p"}"#;
    let prompt =
        br#"{"hook_event_name":"UserPromptSubmit","session_id":"s-hot","prompt":"go","cwd":"/p"}"#;
    for p in [&start[..], &prompt[..]] {
        assert!(env.hook_raw(p, &[]).status.success());
    }
    let pre = br#"{"hook_event_name":"PreToolUse","session_id":"s-hot","tool_name":"Read","tool_input":{},"cwd":"/p"}"#;
    for _ in 0..3 {
        assert!(env.hook_raw(pre, &[]).status.success());
    }
    assert_eq!(spooled(&env), 3);
    let rows = env.json(&["sessions", "--json"]);
    assert_eq!(rows[0]["events"], 5, "{rows}");
    assert_eq!(spooled(&env), 0);
    let show = env.json(&["show", "s-hot", "--json"]);
    assert_eq!(show["events"], 5, "{show}");
    let status = env.json(&["status", "--json"]);
    assert_eq!(
        (status["events"].as_u64(), status["spooled"].as_u64()),
        (Some(5), Some(0))
    );
    env.pin_now_ahead();
    let sessions = env.run(&["sessions"]).render();
    let show = env.run(&["show", "s-hot"]).render();
    assert_expected(
        "hook/hot-cache-reads.txt",
        &format!("$ hookjournal sessions\n{sessions}\n$ hookjournal show s-hot\n{show}"),
    );
}

/// Given three sessions, when `sessions --last 2` lists them, then the table shows the two
/// started last and says how to see every one; `--json` keeps every session unless `--last`.
#[test]
fn sessions_shows_the_ones_started_last_and_all_on_request() {
    let mut env = TestEnvironment::new();
    for s in ["s-one", "s-two", "s-three"] {
        let p = format!(
            r#"{{"hook_event_name":"SessionStart","session_id":"{s}","source":"startup","cwd":"/p"}}"#
        );
        assert!(env.hook_raw(p.as_bytes(), &[]).status.success());
    }
    env.pin_now_ahead();
    let last = env.run(&["sessions", "--last", "2"]).render();
    let all = env.run(&["sessions", "--all"]).render();
    assert_expected(
        "hook/sessions-last-and-all.txt",
        &format!("$ hookjournal sessions --last 2\n{last}\n$ hookjournal sessions --all\n{all}"),
    );
    assert_eq!(
        env.json(&["sessions", "--json"]).as_array().unwrap().len(),
        3
    );
    let last = env.json(&["sessions", "--json", "--last", "1"]);
    assert_eq!(last[0]["session_id"], "s-three", "{last}");
    assert_eq!(last.as_array().unwrap().len(), 1);
}

/// The hook's environment as a Copilot CLI 1.0.102 fixture's `.env` recorded it (its own
/// variables: PATH and HOME stay the test's).
fn copilot_env(stem: &str) -> Vec<(String, String)> {
    let env = fixtures().join(format!("real-hosts/copilot-1.0.102/{stem}.env"));
    std::fs::read_to_string(env)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| !matches!(*k, "PATH" | "HOME" | "PWD" | "SHELL"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every payload Copilot CLI sends, registered as install registers it (camelCase, the event on
/// the command line) or as Claude Code's (`.claude/settings.json`, `--host claude`) or
/// PascalCase in its own files: journaled once, verbatim, as host `copilot`, never Malformed.
#[test]
fn every_copilot_payload_is_journaled_as_copilot_and_none_is_malformed() {
    let env = TestEnvironment::new();
    let all: Vec<_> = files("real-hosts/copilot-1.0.102")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    let mut sent = Vec::new();
    for path in &all {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (shape, event) = stem.split_once('.').unwrap();
        let event = event.split('-').next().unwrap();
        let args: Vec<&str> = match shape {
            "camel" | "user" => vec!["--host", "copilot", "--event", event],
            _ => vec!["--host", "claude"],
        };
        let bytes = std::fs::read(path).unwrap();
        let out = hook_with(&env, &args, &bytes, &copilot_env(&stem));
        assert_eq!(out.code, Some(0), "{stem}: {}", out.render());
        // One journal, hooks in turn: a hook may still spool behind a backlog on a loaded
        // machine, so its stderr is checked, not compared.
        assert!(
            quiet_or_spooled(out.stderr.as_bytes()),
            "{stem}: {}",
            out.stderr
        );
        sent.push((stem, bytes));
    }
    let evs = env.journaled();
    let hooks: Vec<_> = evs
        .iter()
        .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
        .collect();
    assert_eq!(hooks.len(), sent.len());
    let mut report = String::new();
    for (e, (stem, bytes)) in hooks.iter().zip(&sent) {
        assert_eq!(e["kind"], "Hook", "{stem}");
        assert_eq!(e["host"], "copilot", "{stem}");
        assert_eq!(&payload_bytes(e), bytes, "{stem}: not verbatim");
        report.push_str(&format!("{stem}: {}\n", describe(e)));
    }
    // Compared whole: a camelCase payload is recorded under the name its command line gave
    // (agentStop, userPromptSubmitted, preCompact, permissionRequest), a PascalCase or Claude
    // Code one under its payload's, every one as host copilot.
    assert_expected("hook/every-copilot-payload.txt", &report);
}

/// `replay` names every host's tool call by what the call is about, read through the host's
/// own payload: Cline CLI's command list and read_files list, Copilot CLI's `view` path, shell
/// command and task — not only Claude Code's `tool_input` keys (it showed these empty).
#[test]
fn replay_names_the_tool_and_its_subject_for_every_hosts_payload() {
    let env = TestEnvironment::new();
    let cline = "real-hosts/cline-3.0.65/payloads";
    for stem in [
        "02.PreToolUse",
        "03.PostToolUse",
        "05.PreToolUse-read_files",
        "06.PostToolUse-read_files",
    ] {
        let bytes = std::fs::read(fixtures().join(format!("{cline}/{stem}.json"))).unwrap();
        let out = hook_with(&env, &["--host", "cline"], &bytes, &[]);
        assert_eq!(out.code, Some(0), "{stem}: {}", out.render());
    }
    for stem in [
        "camel.preToolUse-bash",
        "camel.postToolUse-view",
        "camel.postToolUseFailure-view",
        "camel.postToolUse-task",
    ] {
        let event = stem.split_once('.').unwrap().1.split('-').next().unwrap();
        let bytes =
            std::fs::read(fixtures().join(format!("real-hosts/copilot-1.0.102/{stem}.json")))
                .unwrap();
        let args = ["--host", "copilot", "--event", event];
        let out = hook_with(&env, &args, &bytes, &copilot_env(stem));
        assert_eq!(out.code, Some(0), "{stem}: {}", out.render());
    }
    let replay = env.run(&["replay", "--json"]);
    assert_eq!(replay.code, Some(0), "{}", replay.render());
    let lines: String = replay
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| {
            format!(
                "{}: {}\n",
                e["kind"].as_str().unwrap(),
                e["summary"].as_str().unwrap()
            )
        })
        .collect();
    assert_expected("hook/replay-names-every-hosts-tool.txt", &lines);
}

/// A handler registered for Claude Code that Copilot CLI runs answers in Copilot's words: the
/// flat `additionalContext` it reads (it ignores Claude Code's nested one); the same payload
/// from Claude Code itself (no Copilot in the environment) is answered nested.
#[test]
fn a_claude_handler_run_by_copilot_answers_with_flat_context() {
    let env = TestEnvironment::new();
    let added = env.run(&["tasks", "add", "Migrate the billing tables"]);
    assert_eq!(added.code, Some(0), "{}", added.render());
    let stem = "claude.SessionStart-new";
    let payload =
        std::fs::read(fixtures().join(format!("real-hosts/copilot-1.0.102/{stem}.json"))).unwrap();
    let copilot = hook_with(&env, &["--host", "claude"], &payload, &copilot_env(stem));
    let claude = hook_with(&env, &["--host", "claude"], &payload, &[]);
    assert_expected(
        "hook/claude-handler-run-by-copilot.txt",
        &format!(
            "--- run by Copilot CLI\n{}\n--- run by Claude Code\n{}",
            copilot.render(),
            claude.render()
        ),
    );
    let answer: Value = serde_json::from_str(&copilot.stdout).unwrap();
    assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    assert!(answer["additionalContext"].is_string(), "{answer}");
    let answer: Value = serde_json::from_str(&claude.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"], "SessionStart",
        "{answer}"
    );
}

/// Qwen Code's payloads carry Gemini's top-level `timestamp`: with Qwen's environment they are
/// Qwen's, whatever `--host` says, and never Malformed.
#[test]
fn a_qwen_payload_is_journaled_as_qwen_not_gemini() {
    let env = TestEnvironment::new();
    let qwen = fixtures().join("real-hosts/qwen-0.24.4");
    for stem in [
        "project.SessionStart-startup",
        "project.PreToolUse-run_shell_command",
    ] {
        let payload = std::fs::read(qwen.join(format!("{stem}.json"))).unwrap();
        let vars: Vec<(String, String)> = std::fs::read_to_string(qwen.join(format!("{stem}.env")))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter(|(k, _)| k.starts_with("QWEN_"))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let out = hook_with(&env, &["--host", "gemini"], &payload, &vars);
        assert_eq!(out.code, Some(0), "{stem}: {}", out.render());
    }
    let hosts: Vec<String> = env
        .journaled()
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["host"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts, ["qwen", "qwen"]);
}
