//! The write path through the real binary: every invocation recorded verbatim, none lost under
//! concurrency or `kill -9`, never a non-zero exit, never stray output.

mod common;
use common::kill::{kill_hooks, Campaign};
use common::*;
use std::collections::BTreeSet;
use std::io::Write;
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

#[test]
fn every_fixture_payload_is_recorded_once_verbatim_with_empty_stdout() {
    let all: Vec<_> = files("events")
        .into_iter()
        .filter(|p| !p.ends_with("notify-argv.json"))
        .collect();
    assert!(all.len() >= 40, "fixtures missing: {}", all.len());
    for path in all {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("j");
        let bytes = std::fs::read(&path).unwrap();
        let out = hook(&j, &bytes, &[]);
        assert!(out.status.success(), "{path:?}: exit {:?}", out.status);
        assert!(
            out.stdout.is_empty(),
            "{path:?}: stdout {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let evs = events(&j);
        let hooks: Vec<_> = evs
            .iter()
            .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
            .collect();
        assert_eq!(hooks.len(), 1, "{path:?}: {evs:?}");
        assert_eq!(hooks[0]["kind"], "Hook", "{path:?} should be well-formed");
        assert_eq!(
            payload_bytes(hooks[0]),
            bytes,
            "{path:?}: payload not verbatim"
        );
    }
}

#[test]
fn bad_inputs_exit_zero_and_are_recorded_as_malformed_byte_for_byte() {
    let bad = files("bad");
    assert!(bad.len() >= 13);
    for path in bad {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("j");
        let bytes = std::fs::read(&path).unwrap();
        let out = hook(&j, &bytes, &[]);
        assert!(out.status.success(), "{path:?}: exit {:?}", out.status);
        assert!(
            out.stdout.is_empty(),
            "{path:?}: stdout {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let evs = events(&j);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(evs.len().min(1), 1, "{name}: nothing recorded");
        let first = &evs[0];
        // Two files are well-formed objects with odd contents: they must stay Hook events.
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
    }
}

#[test]
fn path_traversal_session_id_never_becomes_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let bytes = std::fs::read(fixtures().join("bad/session-id-path-traversal.json")).unwrap();
    assert!(hook(&j, &bytes, &[]).status.success());
    let mut names = BTreeSet::new();
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            names.insert(e.file_name().to_string_lossy().into_owned());
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
    assert!(
        names
            .iter()
            .all(|n| !n.contains("passwd") && !n.contains("..")),
        "{names:?}"
    );
}

#[test]
fn codex_notify_json_from_last_argument_is_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let arg = std::fs::read_to_string(fixtures().join("events/codex/notify-argv.json")).unwrap();
    let out = cmd(&j)
        .arg("hook")
        .arg(&arg)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let evs = events(&j);
    assert_eq!(evs[0]["kind"], "Hook");
    assert_eq!(evs[0]["name"], "agent-turn-complete");
    assert_eq!(evs[0]["host"], "codex");
    assert_eq!(evs[0]["session_id"], "019a8f7e-codex-thread");
    assert_eq!(payload_bytes(&evs[0]), arg.as_bytes());
}

#[test]
fn payload_over_the_cap_keeps_prefix_length_and_hash() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\npayload_cap = 1000\n").unwrap();
    let big = format!(
        "{{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"s\",\"tool_response\":\"{}\"}}",
        "x".repeat(5000)
    );
    let out = hook(&j, big.as_bytes(), &[]);
    assert!(out.status.success() && out.stdout.is_empty());
    let evs = events(&j);
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
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    hook(&j, br#"{"hook_event_name":"Stop","session_id":"s"}"#, &[]);
    assert_eq!(
        std::fs::metadata(&j).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::read_to_string(j.join(".gitignore"))
            .unwrap()
            .trim(),
        "*"
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

#[test]
fn concurrent_hooks_while_export_loops_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    // Small segments: rotations happen under load too.
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 500\n").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let exporter = {
        let (j, stop) = (j.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let out = cmd(&j)
                    .args(["export", "--report", "events"])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success()
                        || String::from_utf8_lossy(&out.stderr).contains("no journal"),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                runs += 1;
            }
            runs
        })
    };
    let workers: Vec<_> = (0..64)
        .map(|w| {
            let j = j.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let out = hook(&j, marker_payload(w, i).as_bytes(), &[]);
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
    let exports = exporter.join().unwrap();
    assert!(exports > 0);
    // Anything still spooled is drained by the next hook.
    hook(
        &j,
        br#"{"hook_event_name":"Stop","session_id":"drain"}"#,
        &[],
    );
    let counts = payload_counts(&j);
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
    let v = cmd(&j).args(["verify", "--json"]).output().unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

#[test]
fn kill_9_at_random_moments_loses_no_acknowledged_event() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    // Tiny segments and a tiny lock budget: kills land in rotations and spool drains too.
    std::fs::write(
        j.join("config.toml"),
        "[hook]\nsegment_events = 40\nlock_wait_ms = 5\n",
    )
    .unwrap();
    // 200 rounds of three hooks with one killed, and on until 100 of the kills landed mid-run;
    // the hooks that were not killed all exit 0 (`kill_hooks` checks).
    let want = Campaign {
        min_rounds: 200,
        landed: 100,
        max_rounds: 2_000,
        seed: 0x9e3779b97f4a7c15,
    };
    let k = kill_hooks(&j, &want, |run| {
        (0..3).map(|n| marker_payload(run, n)).collect()
    });
    let acknowledged = k.acknowledged;
    hook(
        &j,
        br#"{"hook_event_name":"Stop","session_id":"drain"}"#,
        &[],
    );
    let v = cmd(&j).args(["verify", "--json"]).output().unwrap();
    assert!(
        v.status.success(),
        "verify after kills: {}",
        String::from_utf8_lossy(&v.stdout)
    );
    let counts = payload_counts(&j);
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

#[test]
fn busy_journal_spools_and_the_next_hook_drains_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nlock_wait_ms = 1\n").unwrap();
    hook(
        &j,
        br#"{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}"#,
        &[],
    );
    // Hold the journal's lock from outside, as a long reader or another hook would.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(j.join("lock"))
        .unwrap();
    use std::os::unix::io::AsRawFd;
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    for i in 0..5 {
        // Odd markers are PostToolUse: they want the lock, cannot get it, and spool.
        let out = hook(&j, marker_payload(1, 2 * i + 1).as_bytes(), &[]);
        assert!(out.status.success() && out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("spooled"));
    }
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 5);
    drop(lock);
    hook(&j, br#"{"hook_event_name":"Stop","session_id":"s"}"#, &[]);
    let evs: Vec<_> = events(&j)
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
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 0);
}

#[test]
fn record_only_events_skip_the_store_and_are_ingested_before_any_answer() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let pre = std::fs::read(fixtures().join("events/claude/PreToolUse-Bash.json")).unwrap();
    let out = hook(&j, &pre, &[]);
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
    // Only the spool exists: the store was never opened.
    assert!(!j.join("CURRENT").exists());
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 1);
    // A task created through the fast path is visible to the next answer.
    let created = br#"{"hook_event_name":"TaskCreated","session_id":"s","task_id":"9","task_subject":"Fast path task"}"#;
    hook(&j, created, &[]);
    let out = hook(
        &j,
        br#"{"hook_event_name":"SessionStart","session_id":"s","source":"resume"}"#,
        &[],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("restore after resume");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("Fast path task"));
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 0);
    let names: Vec<String> = events(&j)
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["PreToolUse", "TaskCreated", "SessionStart"]);
}

#[test]
fn verify_checks_a_journal_whose_events_all_wait_in_the_spool() {
    // Only record-only hooks so far (issue 33: `verify` said "no journal" where `status` found
    // them): the spooled events are read, checked and counted, and left for a writer.
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let pre = std::fs::read(fixtures().join("events/claude/PreToolUse-Bash.json")).unwrap();
    hook(&j, &pre, &[]);
    hook(&j, &pre, &[]);
    assert!(!j.join("CURRENT").exists());
    let out = cmd(&j).arg("verify").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("valid: 0 events in 0 sealed segments"),
        "{text}"
    );
    assert!(
        text.contains("2 events in the spool") && text.contains("no checkpoint yet"),
        "{text}"
    );
    assert!(!j.join("CURRENT").exists(), "verify wrote a store");
    let v = run_json(&j, &["verify", "--json"]);
    assert_eq!(
        (
            v["ok"].as_bool(),
            v["events"].as_u64(),
            v["spooled"].as_u64()
        ),
        (Some(true), Some(0), Some(2))
    );
    // A directory with neither a log nor a spool is still no journal.
    let out = cmd(&dir.path().join("none"))
        .arg("verify")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_bad_config_is_reported_and_the_hook_still_answers_with_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(
        j.join("config.toml"),
        "[policy]\nreminder_threshold = \"ten\"\n",
    )
    .unwrap();
    let p = br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/p","prompt":"hi"}"#;
    hook(&j, p, &[]);
    hook(
        &j,
        br#"{"hook_event_name":"SessionEnd","session_id":"s","cwd":"/p","reason":"clear"}"#,
        &[],
    );
    let out = hook(
        &j,
        br#"{"hook_event_name":"SessionStart","session_id":"t","cwd":"/p","source":"clear"}"#,
        &[],
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("using defaults"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("still answers");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("hi"));
}

#[test]
fn gemini_users_never_see_a_config_warning_on_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(
        j.join("config.toml"),
        "[policy]\nreminder_threshold = \"ten\"\n",
    )
    .unwrap();
    // Gemini CLI shows stderr as a "Hook system message" when stdout is empty.
    for p in [
        &br#"{"hook_event_name":"BeforeTool","session_id":"g","cwd":"/p","timestamp":"t","tool_name":"ls","tool_input":{}}"#[..],
        br#"{"hook_event_name":"PreCompress","session_id":"g","cwd":"/p","timestamp":"t","trigger":"auto"}"#,
        br#"{"hook_event_name":"AfterAgent","session_id":"g","cwd":"/p","timestamp":"t","prompt":"x","prompt_response":"y"}"#,
    ] {
        let out = hook(&j, p, &[]);
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{}", String::from_utf8_lossy(p));
    }
    // The same file still warns elsewhere (Claude Code shows stderr only in its debug log).
    let out = hook(
        &j,
        br#"{"hook_event_name":"Stop","session_id":"c","cwd":"/p"}"#,
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
}

#[test]
fn gemini_environment_breaks_a_tie_but_never_overrides_the_payload_or_flag() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let plain = br#"{"hook_event_name":"Stop","session_id":"g1"}"#;
    hook(&j, plain, &[("GEMINI_SESSION_ID", "g1")]);
    let codex = br#"{"hook_event_name":"Stop","session_id":"c1","turn_id":"t"}"#;
    hook(&j, codex, &[("GEMINI_SESSION_ID", "g1")]);
    let hosts: Vec<String> = events(&j)
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["host"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts, ["gemini", "codex"]);
}

#[test]
fn a_panic_under_the_lock_spools_the_event_and_still_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let p = br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"survive"}"#;
    let out = hook(&j, p, &[("HOOKJOURNAL_FAILPOINT", "locked")]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("internal error") && err.contains("spooled"),
        "{err}"
    );
    let evs = events(&j);
    assert_eq!(evs.len(), 1);
    assert_eq!(payload_bytes(&evs[0]), p.to_vec());
    assert_eq!(evs[0]["spooled"], true);
}

#[test]
fn hook_help_prints_help_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args(["hook", "--help"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--host"));
    assert!(!dir.path().join(".hookjournal").exists());
}

#[test]
fn cli_output_into_a_closed_pipe_ends_quietly() {
    let (_dir, p) = play_session_for_pipe();
    let mut child = cmd(&p)
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

fn play_session_for_pipe() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    for i in 0..200 {
        hook(&j, marker_payload(0, i).as_bytes(), &[]);
    }
    (dir, j)
}

#[test]
fn flipped_bytes_in_a_segment_or_the_active_store_make_verify_exit_3_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 20\n").unwrap();
    for i in 0..50 {
        hook(&j, marker_payload(3, 2 * i + 1).as_bytes(), &[]);
    }
    assert_eq!(
        cmd(&j).arg("verify").output().unwrap().status.code(),
        Some(0)
    );
    let flip = |path: &std::path::Path| {
        let mut b = std::fs::read(path).unwrap();
        let nonzero: Vec<usize> = (0..b.len()).filter(|&i| b[i] != 0).collect();
        let at = nonzero[nonzero.len() / 2];
        b[at] ^= 0xff;
        std::fs::write(path, b).unwrap();
    };
    // A sealed segment.
    let copy = dir.path().join("copy");
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
    let out = cmd(&copy).arg("verify").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&*seg.file_name().unwrap().to_string_lossy()),
        "{text}"
    );
    // The active sled store, once it has ingested the log's tail (as the drainer does).
    run(&j, &["drain"]);
    let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    flip(&j.join(current.trim()).join("db"));
    let out = cmd(&j).arg("verify").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("active store"));
    // The hook still exits 0 and keeps the event on a damaged store: it never opens sled while
    // the hot cache is current (the event goes to the write-ahead log), else it spools.
    let out = hook(&j, marker_payload(3, 999).as_bytes(), &[]);
    assert!(out.status.success() && out.stdout.is_empty());
    // `recover` rebuilds the store from the sealed segments and the write-ahead log: every
    // acknowledged event is kept, and the spooled one is ingested.
    let out = run(&j, &["recover"]);
    assert!(out.contains("rebuilt the active store"), "{out}");
    assert!(out.contains("lost: nothing"), "{out}");
    assert_eq!(run_json(&j, &["verify", "--json"])["ok"], true);
    let counts = payload_counts(&j);
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
    let out = hook(&j, marker_payload(3, 1001).as_bytes(), &[]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(run(&j, &["recover"]).starts_with("nothing to repair"));
}

/// Claude Code 2.1.330's served calls (tool calls it runs here for a cloud session, as its
/// `remoteCall` hook input builds them): journaled verbatim, answered with nothing, under the
/// caller's session; `sessions` shows the caller as `served`, `show` names the served tools.
#[test]
fn served_calls_are_journaled_under_their_caller_and_shown_as_served() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
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
        let out = hook(&j, format!("{p}\n").as_bytes(), &[]);
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    }
    let evs = events(&j);
    let hooks: Vec<_> = evs.iter().filter(|e| e["kind"] == "Hook").collect();
    assert_eq!(hooks.len(), 2);
    assert!(hooks.iter().all(|e| e["session_id"] == caller), "{hooks:?}");
    let rows = run_json(&j, &["sessions", "--json"]);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["session_id"], caller);
    assert_eq!(rows[0]["status"], "served");
    let table = run(&j, &["sessions"]);
    assert!(table.contains("served"), "{table}");
    let show = run(&j, &["show", caller]);
    assert!(
        show.contains("1 tool call run on this computer for this session")
            && show.contains("mcp__docs__search (MCP server docs)"),
        "{show}"
    );
}

/// Read commands take partitions from the hot cache while it is current (no sled open), and
/// never write: given a session answered through the cache and then record-only events that went
/// to the spool, when `sessions` and `show` read it, then they count every one (the backlog
/// folded in memory) and the spool is left to the next writer.
#[test]
fn reads_from_the_hot_cache_see_the_events_still_in_the_spool() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let start =
        br#"{"hook_event_name":"SessionStart","session_id":"s-hot","source":"startup","cwd":"/p"}"#;
    let prompt =
        br#"{"hook_event_name":"UserPromptSubmit","session_id":"s-hot","prompt":"go","cwd":"/p"}"#;
    for p in [&start[..], &prompt[..]] {
        assert!(hook(&j, p, &[]).status.success());
    }
    let pre = br#"{"hook_event_name":"PreToolUse","session_id":"s-hot","tool_name":"Read","tool_input":{},"cwd":"/p"}"#;
    for _ in 0..3 {
        assert!(hook(&j, pre, &[]).status.success());
    }
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 3);
    let rows = run_json(&j, &["sessions", "--json"]);
    assert_eq!(rows[0]["events"], 5, "{rows}");
    let show = run_json(&j, &["show", "s-hot", "--json"]);
    assert_eq!(show["events"], 5, "{show}");
    assert_eq!(std::fs::read_dir(j.join("spool")).unwrap().count(), 3);
    let status = run_json(&j, &["status", "--json"]);
    assert_eq!(
        (status["events"].as_u64(), status["spooled"].as_u64()),
        (Some(2), Some(3))
    );
}

/// Given three sessions, when `sessions --last 2` lists them, then the table shows the two
/// started last and says how to see every one; `--json` keeps every session unless `--last`.
#[test]
fn sessions_shows_the_ones_started_last_and_all_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    for s in ["s-one", "s-two", "s-three"] {
        let p = format!(
            r#"{{"hook_event_name":"SessionStart","session_id":"{s}","source":"startup","cwd":"/p"}}"#
        );
        assert!(hook(&j, p.as_bytes(), &[]).status.success());
    }
    let out = run(&j, &["sessions", "--last", "2"]);
    assert!(
        out.starts_with(
            "the 2 started last, of 3 sessions; every one: `hookjournal sessions --all`"
        ),
        "{out}"
    );
    assert!(
        !out.contains("s-one") && out.contains("s-two") && out.contains("s-three"),
        "{out}"
    );
    let all = run(&j, &["sessions", "--all"]);
    assert!(
        all.contains("s-one") && !all.contains("started last"),
        "{all}"
    );
    assert_eq!(
        run_json(&j, &["sessions", "--json"])
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let last = run_json(&j, &["sessions", "--json", "--last", "1"]);
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

/// `hookjournal hook ARGS` with `payload` on stdin and `env` set.
fn hook_with(
    journal: &std::path::Path,
    args: &[&str],
    payload: &[u8],
    env: &[(String, String)],
) -> std::process::Output {
    let mut c = cmd(journal);
    c.arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload).unwrap();
    child.wait_with_output().unwrap()
}

/// Every payload Copilot CLI sends, registered as install registers it (camelCase, the event on
/// the command line) or as Claude Code's (`.claude/settings.json`, `--host claude`) or
/// PascalCase in its own files: journaled once, verbatim, as host `copilot`, never Malformed.
#[test]
fn every_copilot_payload_is_journaled_as_copilot_and_none_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
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
        let out = hook_with(&j, &args, &bytes, &copilot_env(&stem));
        assert!(out.status.success(), "{stem}");
        assert!(
            quiet_or_spooled(&out.stderr),
            "{stem}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        sent.push((stem, bytes));
    }
    let evs = events(&j);
    let hooks: Vec<_> = evs
        .iter()
        .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
        .collect();
    assert_eq!(hooks.len(), sent.len());
    for (e, (stem, bytes)) in hooks.iter().zip(&sent) {
        assert_eq!(e["kind"], "Hook", "{stem}");
        assert_eq!(e["host"], "copilot", "{stem}");
        assert_eq!(&payload_bytes(e), bytes, "{stem}: not verbatim");
    }
    // A camelCase payload is recorded under the name its command line gave.
    let named: BTreeSet<&str> = hooks.iter().filter_map(|e| e["name"].as_str()).collect();
    for name in [
        "agentStop",
        "userPromptSubmitted",
        "preCompact",
        "Stop",
        "permissionRequest",
    ] {
        assert!(named.contains(name), "{name} not among {named:?}");
    }
}

/// A handler registered for Claude Code that Copilot CLI runs answers in Copilot's words: the
/// flat `additionalContext` it reads (it ignores Claude Code's nested one).
#[test]
fn a_claude_handler_run_by_copilot_answers_with_flat_context() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    run(&j, &["tasks", "add", "Migrate the billing tables"]);
    let stem = "claude.SessionStart-new";
    let payload =
        std::fs::read(fixtures().join(format!("real-hosts/copilot-1.0.102/{stem}.json"))).unwrap();
    let out = hook_with(&j, &["--host", "claude"], &payload, &copilot_env(stem));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    assert!(answer["additionalContext"]
        .as_str()
        .unwrap()
        .contains("Migrate the billing tables"));
    // The same payload from Claude Code itself (no Copilot in the environment): nested.
    let out = hook_with(&j, &["--host", "claude"], &payload, &[]);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"], "SessionStart",
        "{answer}"
    );
}

/// Qwen Code's payloads carry Gemini's top-level `timestamp`: with Qwen's environment they are
/// Qwen's, whatever `--host` says, and never Malformed.
#[test]
fn a_qwen_payload_is_journaled_as_qwen_not_gemini() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let qwen = fixtures().join("real-hosts/qwen-0.24.4");
    for stem in [
        "project.SessionStart-startup",
        "project.PreToolUse-run_shell_command",
    ] {
        let payload = std::fs::read(qwen.join(format!("{stem}.json"))).unwrap();
        let env: Vec<(String, String)> = std::fs::read_to_string(qwen.join(format!("{stem}.env")))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter(|(k, _)| k.starts_with("QWEN_"))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let out = hook_with(&j, &["--host", "gemini"], &payload, &env);
        assert!(out.status.success());
    }
    let hosts: Vec<String> = events(&j)
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["host"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts, ["qwen", "qwen"]);
}
