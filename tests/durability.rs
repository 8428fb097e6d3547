//! Nothing acknowledged is ever lost: kills at random instants, a full disk, damage to every
//! kind of file the journal writes, hostile transcript paths, a read-only journal, a spool
//! backlog, bad limits. Every test runs the real binary in a `TestEnvironment` (cleared
//! environment, HOME and project under one temp root). What `verify`, `recover` and `status`
//! say about damage a test did in a fixed way is compared whole with `tests/expected/durability/`
//! (`HOOKJOURNAL_BLESS=1` rewrites them); kills, races and budgets keep their property checks
//! (every acknowledged event present once, `verify` valid).

mod common;

use common::harness::{missing, Ran};
use common::kill::{kill_after, kill_hooks, kill_until, Campaign};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A unique payload; `kind` picks the path it takes: 0 PostToolUse (answered, under the lock),
/// 1 PreToolUse (record-only: the spool), 2 UserPromptSubmit (answered), 3 Stop (transcript).
fn payload(session: &str, kind: usize, i: usize) -> String {
    match kind % 4 {
        0 => format!(
            r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_response":{{"stdout":"{i}"}},"tool_use_id":"t-{i}"}}"#
        ),
        1 => format!(
            r#"{{"session_id":"{session}","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{{"file_path":"/src/{i}.rs"}},"tool_use_id":"t-{i}"}}"#
        ),
        2 => format!(
            r#"{{"session_id":"{session}","hook_event_name":"UserPromptSubmit","prompt":"step {i}"}}"#
        ),
        _ => format!(
            r#"{{"session_id":"{session}","hook_event_name":"Stop","stop_hook_active":false,"n":{i}}}"#
        ),
    }
}

/// Replaces the `n` lowercase hex digits after each `prefix` with `[HASH]`.
fn hide_hex(text: &str, prefix: &str, n: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let end = at + prefix.len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        let hex = rest
            .bytes()
            .take(n)
            .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            .count();
        if hex == n {
            out.push_str("[HASH]");
            rest = &rest[n..];
        }
    }
    out.push_str(rest);
    out
}

/// Replaces every run of 32 or more lowercase hex digits (a hash, or part of one) with `[HASH]`.
fn hide_long_hex(text: &str) -> String {
    let is_hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once('\n')) {
        if is_hex(c) {
            run.push(c);
            continue;
        }
        out.push_str(if run.len() >= 32 { "[HASH]" } else { &run });
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// What varies between runs in what the journal says about itself: chain hashes (they hash the
/// hooks' recorded times, which are the real clock's), spool files' names (a stamp and the
/// writer's pid) and the pid in a temporary file's name.
fn stable(text: &str) -> String {
    let s = hide_hex(text, "chain head ", 16);
    let s = hide_hex(&s, "prev hash ", 16);
    let s = hide_long_hex(&s);
    let s = replace_pattern(
        &s,
        "dddddddddddddddddddd-dddddddddd-dddddd.spool",
        "[SPOOL FILE]",
    );
    s.split_inclusive('\n')
        .map(|l| match l.split_once("[SPOOL FILE].") {
            // `.NAME.PID.N.tmp`
            Some((head, tail)) if tail.starts_with(|c: char| c.is_ascii_digit()) => {
                let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                format!("{head}[SPOOL FILE].[PID]{rest}")
            }
            _ => l.to_string(),
        })
        .collect()
}

/// `hookjournal --journal J ARGS` in the test's environment, normalised (and `stable`).
fn at(env: &TestEnvironment, j: &Path, args: &[&str]) -> CommandOutput {
    let out = env
        .command(&env.project)
        .arg("--journal")
        .arg(j)
        .args(args)
        .output()
        .unwrap();
    CommandOutput {
        stdout: stable(&env.normalize(&String::from_utf8_lossy(&out.stdout))),
        stderr: stable(&env.normalize(&String::from_utf8_lossy(&out.stderr))),
        code: out.status.code(),
    }
}

/// Runs `at` and appends `$ hookjournal ARGS` and its whole output to the transcript `t`.
fn step(env: &TestEnvironment, j: &Path, t: &mut String, args: &[&str]) -> CommandOutput {
    let out = at(env, j, args);
    shown(t, &format!("hookjournal {}", args.join(" ")), &out);
    out
}

/// Appends `$ WHAT` and an output, whole, to the transcript `t`.
fn shown(t: &mut String, what: &str, out: &CommandOutput) {
    t.push_str(&format!("$ {what}\n{}\n", out.render()));
}

/// A hook recording `payload` in the project's journal, its output normalised.
fn hook_in(env: &TestEnvironment, payload: &str) -> CommandOutput {
    let out = env.hook(payload.as_bytes(), &[]);
    CommandOutput {
        stdout: stable(&out.stdout),
        stderr: stable(&out.stderr),
        code: out.code,
    }
}

/// Writes the project journal's `config.toml` (before its first event).
fn config(env: &TestEnvironment, toml: &str) {
    std::fs::create_dir_all(env.journal()).unwrap();
    std::fs::write(env.journal().join("config.toml"), toml).unwrap();
}

fn verify_code(env: &TestEnvironment, j: &Path) -> (Option<i32>, String) {
    let out = at(env, j, &["verify"]);
    (out.code, out.render())
}

/// verify passes, with one `recover` in between if it does not at first. (What `recover` says
/// depends on where a kill landed: only that it lost nothing is checked.)
fn verify_or_recover(env: &TestEnvironment, j: &Path) -> bool {
    if verify_code(env, j).0 == Some(0) {
        return false;
    }
    let out = at(env, j, &["recover"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    assert!(
        out.stdout.contains("lost: nothing") || out.stdout.starts_with("nothing to repair"),
        "{}",
        out.render()
    );
    let (code, text) = verify_code(env, j);
    assert_eq!(code, Some(0), "verify after recover: {text}");
    true
}

/// A test that needs root is skipped without it; CI (root) sets `HOOKJOURNAL_REQUIRE_ROOT=1`,
/// and there a skip is a failure.
fn needs_root(why: &str) -> Ran {
    missing(
        "HOOKJOURNAL_REQUIRE_ROOT",
        format!("{why}; CI runs it as root"),
    )
}

fn a_thousand_sigkills_of_single_hooks_lose_no_acknowledged_event() {
    let env = TestEnvironment::new();
    let j = env.journal();
    // A thousand rounds of one victim beside a bystander (so kills also land while another
    // process waits for or holds the lock), and on until 300 of the kills landed mid-run.
    let want = Campaign {
        min_rounds: 1000,
        landed: 300,
        max_rounds: 5000,
        seed: 0x2545f4914f6cdd1d,
    };
    let k = kill_hooks(&j, &want, |i| {
        vec![
            payload(&format!("s{}", i % 7), i, 2 * i),
            payload(&format!("s{}", (i + 3) % 7), i + 1, 2 * i + 1),
        ]
    });
    // A reader ingests whatever was spooled; verify, recovering once if a kill left damage.
    let recovered = verify_or_recover(&env, &j);
    let counts = payload_counts(&j);
    let lost = k
        .acknowledged
        .iter()
        .filter(|p| counts.get(p.as_bytes()).copied() != Some(1))
        .count();
    eprintln!(
        "kill test: {} SIGKILLs ({} landed mid-run), {} acknowledged, {lost} lost or duplicated, recover needed: {recovered}",
        k.rounds,
        k.landed,
        k.acknowledged.len()
    );
    assert_eq!(lost, 0);
    assert!(
        counts.values().all(|&n| n == 1),
        "an event was recorded twice"
    );
}

fn a_full_disk_loses_nothing_acknowledged_before_it_and_the_journal_recovers() -> Ran {
    let env = TestEnvironment::new();
    // The project's journal is a 2 MiB file system of its own.
    let j = env.journal();
    std::fs::create_dir_all(&j).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&j)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return needs_root("cannot mount a tmpfs here (needs root)");
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(j.clone());
    let big = "x".repeat(6_000);
    let mut acknowledged = Vec::new();
    let mut first_lost = None;
    for i in 0..600 {
        let p = format!(
            r#"{{"session_id":"full","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_response":{{"stdout":"{big}"}}}}"#
        );
        let out = hook_in(&env, &p);
        assert_eq!(out.code, Some(0), "hook {i}: {}", out.render());
        assert!(out.stdout.len() <= 1 || out.stdout.starts_with('{'));
        if out.stderr.contains("event lost") {
            first_lost.get_or_insert(out);
        } else if first_lost.is_none() {
            acknowledged.push(p);
        }
    }
    let first_lost = first_lost.expect("the disk never filled");
    assert!(
        acknowledged.len() >= 20,
        "{} acknowledged",
        acknowledged.len()
    );
    // What the hook that met the full disk says, whole (which hook that is depends on sizes).
    let mut t = String::new();
    shown(
        &mut t,
        "hookjournal hook  # the first event the disk had no room for",
        &first_lost,
    );
    // Space returns.
    let grown = std::process::Command::new("mount")
        .args(["-o", "remount,size=256m"])
        .arg(&j)
        .status()
        .unwrap();
    assert!(grown.success());
    // A full disk is not damage: whatever it left half-written was never acknowledged.
    let (code, text) = verify_code(&env, &j);
    assert_eq!(code, Some(0), "verify after a full disk: {text}");
    let after = payload("full", 2, 999_999);
    let out = hook_in(&env, &after);
    shown(&mut t, "hookjournal hook  # space returned", &out);
    assert_expected("durability/full-disk.txt", &t);
    let recovered = verify_or_recover(&env, &j);
    let counts = payload_counts(&j);
    let lost = acknowledged
        .iter()
        .filter(|p| counts.get(p.as_bytes()).copied() != Some(1))
        .count();
    eprintln!(
        "full disk: {} acknowledged before the disk filled, {lost} lost, recover needed: {recovered}",
        acknowledged.len()
    );
    assert_eq!(lost, 0);
    // It records again.
    let again = payload("full", 0, 1_000_001);
    assert_eq!(hook_in(&env, &again).code, Some(0));
    let counts = payload_counts(&j);
    assert_eq!(counts.get(again.as_bytes()).copied(), Some(1));
    assert_eq!(verify_code(&env, &j).0, Some(0));
    Ok(())
}

/// A journal with every kind of file: sealed segments, an archive of cold partitions, the
/// active store, its write-ahead log, spooled files, `CURRENT`.
fn rich_journal(env: &TestEnvironment) -> PathBuf {
    config(env, "[hook]\nsegment_events = 20\n");
    for i in 0..8 {
        env.hook_raw(payload("early", 2 * i, i).as_bytes(), &[]);
    }
    for i in 8..70 {
        env.hook_raw(payload("late", 2 * i, i).as_bytes(), &[]);
    }
    // Record-only events stay in the spool until the next lock holder.
    for i in 70..73 {
        env.hook_raw(payload("late", 1, i).as_bytes(), &[]);
    }
    env.journal()
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn files_of_each_kind(j: &Path) -> Vec<(&'static str, PathBuf)> {
    let first = |sub: &str, ext: &str| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(j.join(sub))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(ext))
            .collect();
        v.sort();
        v.into_iter()
            .next()
            .unwrap_or_else(|| panic!("no {ext} in {sub}"))
    };
    let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    let store = j.join(current.trim());
    vec![
        ("segment", first("segments", ".seg")),
        ("archive", first("state", ".cold")),
        ("write-ahead log", first("wal", ".wal")),
        ("write-ahead log's mirror", first("wal", ".mirror")),
        ("spool file", first("spool", ".spool")),
        ("CURRENT", j.join("CURRENT")),
        ("active store db", store.join("db")),
        ("active store conf", store.join("conf")),
    ]
}

enum Harm {
    Flip,
    Truncate,
}

fn harm(path: &Path, how: &Harm) {
    let mut b = std::fs::read(path).unwrap();
    match how {
        // Late in the file, where the newest records are (the tail a store can lose).
        Harm::Flip => {
            let nonzero: Vec<usize> = (0..b.len()).filter(|&i| b[i] != 0).collect();
            let at = nonzero[nonzero.len() * 5 / 6];
            b[at] ^= 0x5a;
        }
        // Cut into the written content (sled preallocates zeros past it).
        Harm::Truncate => {
            let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
            let keep = end.saturating_sub((end / 4).clamp(1, 300));
            b.truncate(keep);
        }
    }
    std::fs::write(path, b).unwrap();
}

fn every_kind_of_damage_is_named_by_verify_and_recover_keeps_every_intact_event() {
    let env = TestEnvironment::new();
    let original = rich_journal(&env);
    let expected = {
        // What a sound journal holds once its spool is ingested (a copy, to keep the spool).
        let c = env.root().join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    assert_eq!(expected.len(), 73);
    // Compared whole: what verify says of each damaged file (exit 3 and its name; a copy of the
    // write-ahead log cut short or torn is what a power cut between the two copies' syncs
    // leaves, not damage, but noted), what recover says it kept, and that a second recover
    // finds nothing to repair.
    let mut t = String::new();
    for (n, (kind, _)) in files_of_each_kind(&original).into_iter().enumerate() {
        for how in [Harm::Flip, Harm::Truncate] {
            let label = format!(
                "{kind} {}",
                if matches!(how, Harm::Flip) {
                    "flipped byte"
                } else {
                    "truncated"
                }
            );
            let j = env
                .root()
                .join(format!("case-{n}-{}", matches!(how, Harm::Flip)));
            copy_dir(&original, &j);
            let (_, path) = files_of_each_kind(&j).swap_remove(n);
            harm(&path, &how);
            let damaged_copy = env.root().join(format!("damaged-{n}"));
            std::fs::copy(&path, &damaged_copy).unwrap();
            t.push_str(&format!(
                "### {label}: {}\n",
                stable(&env.normalize(&path.to_string_lossy()))
            ));
            let (code, text) = {
                let out = step(&env, &j, &mut t, &["verify"]);
                (out.code, out.render())
            };
            if kind.starts_with("write-ahead log") {
                assert_eq!(code, Some(0), "{label}: verify said {text}");
            } else {
                assert_eq!(code, Some(3), "{label}: verify said {text}");
            }
            let out = step(&env, &j, &mut t, &["recover"]);
            let said = out.render();
            if kind == "segment" {
                // The only copy of sealed events: recover says so, drops nothing else, and
                // verify keeps naming the segment.
                assert_eq!(out.code, Some(3), "{label}: {said}");
                let again = step(&env, &j, &mut t, &["verify"]);
                assert_eq!(again.code, Some(3), "{label}: {}", again.render());
                continue;
            }
            assert_eq!(out.code, Some(0), "{label}: recover failed: {said}");
            let after = step(&env, &j, &mut t, &["verify"]);
            assert_eq!(
                after.code,
                Some(0),
                "{label}: verify after recover: {}\nrecover said: {said}",
                after.render()
            );
            let counts = payload_counts(&j);
            // The damaged spool file held the first record-only event (no longer intact).
            let damaged = (kind == "spool file").then(|| payload("late", 1, 70).into_bytes());
            for p in expected.keys() {
                if Some(p) == damaged.as_ref() {
                    continue;
                }
                let n = counts.get(p).copied().unwrap_or(0);
                assert_eq!(
                    n,
                    1,
                    "{label}: {} present {n} times\nrecover said: {said}",
                    String::from_utf8_lossy(p)
                );
            }
            if kind == "spool file" {
                // The damaged file's bytes are journaled, marked as such.
                let malformed: Vec<_> = events(&j)
                    .into_iter()
                    .filter(|e| e["kind"] == "Malformed")
                    .collect();
                assert_eq!(malformed.len(), 1, "{label}");
                assert_eq!(
                    payload_bytes(&malformed[0]),
                    std::fs::read(&damaged_copy).unwrap(),
                    "{label}"
                );
                assert_eq!(counts.len(), expected.len() - 1, "{label}");
            } else {
                assert_eq!(counts.len(), expected.len(), "{label}");
            }
            // Idempotent: a second run finds nothing to repair.
            let again = step(&env, &j, &mut t, &["recover"]);
            assert_eq!(again.code, Some(0), "{label}: {}", again.render());
        }
    }
    assert_expected("durability/every-kind-of-damage.txt", &t);
}

fn a_damaged_last_sealed_segment_is_named_and_recover_refuses_to_guess() {
    let env = TestEnvironment::new();
    let j = env.journal();
    config(&env, "[hook]\nsegment_events = 20\n");
    for i in 0..45 {
        env.hook_raw(payload("s", 0, i).as_bytes(), &[]);
    }
    let mut segs: Vec<PathBuf> = std::fs::read_dir(j.join("segments"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    segs.sort();
    let last = segs.last().unwrap();
    let name = last.file_name().unwrap().to_string_lossy().into_owned();
    harm(last, &Harm::Flip);
    // recover rebuilds the active tail from the last sealed event: without it, it says so
    // (naming the segment), and verify names it at the first seq it holds.
    let mut t = format!("# a flipped byte in the last sealed segment, {name}\n");
    let out = step(&env, &j, &mut t, &["recover"]);
    assert_eq!(out.code, Some(3), "{}", out.render());
    let out = step(&env, &j, &mut t, &["verify"]);
    assert_eq!(out.code, Some(3), "{}", out.render());
    assert_expected("durability/damaged-last-sealed-segment.txt", &t);
}

fn a_sealed_only_journal_with_a_damaged_empty_marker_is_named_and_repaired() {
    let env = TestEnvironment::new();
    let j = env.journal();
    config(&env, "[hook]\nsegment_events = 20\n");
    for i in 0..20 {
        env.hook_raw(payload("s", 0, i).as_bytes(), &[]);
    }
    assert!(j.join("ACTIVE_EMPTY").exists());
    harm(&j.join("ACTIVE_EMPTY"), &Harm::Truncate);
    let mut t = "# ACTIVE_EMPTY truncated\n".to_string();
    damaged_then_recovered(&env, &j, &mut t, "");
    assert_expected("durability/damaged-empty-marker.txt", &t);
    assert_eq!(payload_counts(&j).len(), 20);
}

/// `verify` names the damage (exit 3), `recover` mends it (exit 0) and `verify` then says valid
/// (exit 0), each shown in `t`; `what` labels a failure.
fn damaged_then_recovered(env: &TestEnvironment, j: &Path, t: &mut String, what: &str) {
    for (command, code) in [("verify", 3), ("recover", 0), ("verify", 0)] {
        let out = step(env, j, t, &[command]);
        assert_eq!(out.code, Some(code), "{what} {command}: {}", out.render());
    }
}

/// `hookjournal --journal J` in the test's environment, to run as a child.
fn command_at(env: &TestEnvironment, j: &Path) -> std::process::Command {
    let mut c = env.command(&env.project);
    c.arg("--journal").arg(j);
    c
}

/// `hookjournal --journal J ARGS`, which must exit 0.
fn ok(env: &TestEnvironment, j: &Path, args: &[&str]) -> CommandOutput {
    let out = at(env, j, args);
    assert_eq!(out.code, Some(0), "{args:?}: {}", out.render());
    out
}

/// `hookjournal --journal J ARGS`, which must exit 0, its stdout parsed as JSON (read raw:
/// normalising would hide the hashes and times it holds).
fn json(env: &TestEnvironment, j: &Path, args: &[&str]) -> serde_json::Value {
    let out = command_at(env, j).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{args:?}: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?} ({e}): {stdout}"))
}

fn a_kill_during_recover_or_import_is_completed_by_running_it_again() {
    let env = TestEnvironment::new();
    let root = env.root();
    let original = rich_journal(&env);
    let expected = {
        let c = root.join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    let damaged = |name: &str| {
        let j = root.join(name);
        copy_dir(&original, &j);
        let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
        harm(&j.join(current.trim()).join("db"), &Harm::Flip);
        j
    };
    // How long a recover runs here uninterrupted: the kills are drawn within it.
    let j = damaged("r-whole");
    let t0 = Instant::now();
    ok(&env, &j, &["recover"]);
    let span = t0.elapsed();
    let quiet = |c: &mut std::process::Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // Where each kill landed varies: what the second run says is not compared, only that it
    // completes the work with every event kept.
    let attempts = kill_until(8, 60, span, 0x9e3779b97f4a7c15, |round, delay| {
        let j = damaged(&format!("r{round}"));
        let landed = kill_after(quiet(command_at(&env, &j).arg("recover")), delay);
        let out = at(&env, &j, &["recover"]);
        assert_eq!(out.code, Some(0), "round {round}: {}", out.render());
        assert_eq!(verify_code(&env, &j).0, Some(0), "round {round}");
        assert_eq!(payload_counts(&j), expected, "round {round}");
        landed
    });
    eprintln!("recover: 8 kills landed in {attempts} attempts (an uninterrupted run: {span:?})");
    // Import: an export of the sound journal, imported with kills, then completed.
    let file = root.join("events.jsonl");
    ok(
        &env,
        &root.join("expected"),
        &[
            "export",
            "--report",
            "events",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    let head = json(&env, &root.join("expected"), &["status", "--json"])["head_hash"].clone();
    let import = |j: &Path| {
        let mut c = command_at(&env, j);
        c.args(["import", "--events", file.to_str().unwrap()]);
        c
    };
    let t0 = Instant::now();
    ok(
        &env,
        &root.join("i-whole"),
        &["import", "--events", file.to_str().unwrap()],
    );
    let span = t0.elapsed();
    let attempts = kill_until(8, 60, span, 0x2545f4914f6cdd1d, |round, delay| {
        let j = root.join(format!("i{round}"));
        let landed = kill_after(quiet(&mut import(&j)), delay);
        let out = import(&j).output().unwrap();
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            json(&env, &j, &["status", "--json"])["head_hash"],
            head,
            "round {round}"
        );
        assert_eq!(verify_code(&env, &j).0, Some(0), "round {round}");
        landed
    });
    eprintln!("import: 8 kills landed in {attempts} attempts (an uninterrupted run: {span:?})");
}

fn hostile_transcript_paths_never_hold_the_hook() {
    use std::io::{Read, Write};
    let env = TestEnvironment::new();
    let j = env.journal();
    let dir = env.root();
    let fifo = dir.join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let folder = dir.join("folder.jsonl");
    std::fs::create_dir_all(&folder).unwrap();
    // A regular file whose read fails (EIO): the hook's own memory, as /proc shows it.
    let unreadable = dir.join("unreadable.jsonl");
    std::os::unix::fs::symlink("/proc/self/mem", &unreadable).unwrap();
    let mut t = String::new();
    for (i, path) in [&fifo, &folder, &unreadable].into_iter().enumerate() {
        for event in ["Stop", "PreCompact", "SessionEnd"] {
            let p = format!(
                r#"{{"session_id":"h{i}","hook_event_name":"{event}","transcript_path":"{}","trigger":"auto","reason":"exit"}}"#,
                path.display()
            );
            let mut child = command_at(&env, &j)
                .arg("hook")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(p.as_bytes()).unwrap();
            // A hang detector, not a speed claim: a blocked hook would wait forever.
            let start = Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if start.elapsed() > Duration::from_secs(20) {
                    let _ = child.kill();
                    panic!("the hook blocked on {} ({event})", path.display());
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            assert!(status.success());
            let (mut stdout, mut stderr) = (String::new(), String::new());
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let out = CommandOutput {
                stdout: env.normalize(&stdout),
                stderr: env.normalize(&stderr),
                code: status.code(),
            };
            shown(
                &mut t,
                &format!(
                    "hookjournal hook  # {event}, transcript {}",
                    env.normalize(&path.to_string_lossy())
                ),
                &out,
            );
        }
    }
    let counts = payload_counts(&j);
    assert_eq!(counts.len(), 9);
    let out = step(&env, &j, &mut t, &["verify"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    assert_expected("durability/hostile-transcript-paths.txt", &t);
}

fn a_read_only_journal_can_be_read_by_another_user() -> Ran {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root {
        return needs_root("needs root to run the readers as another user");
    }
    let env = TestEnvironment::new();
    let j = env.journal();
    config(&env, "[hook]\nsegment_events = 20\n");
    for i in 0..30 {
        env.hook_raw(payload("ro", i % 4, i).as_bytes(), &[]);
    }
    // What another user reads is the log (the spool is its owner's to ingest).
    ok(&env, &j, &["drain"]);
    let raw = |args: &[&str]| {
        let out = command_at(&env, &j).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let owner_view = raw(&["sessions", "--json"]);
    let owner_cost = raw(&["cost", "--json"]);
    let owner_status = json(&env, &j, &["status", "--json"]);
    // Readable by everyone, writable by nobody but root.
    let ok = std::process::Command::new("chmod")
        .args(["-R", "a+rX,go-w"])
        .arg(env.root())
        .status()
        .unwrap();
    assert!(ok.success());
    // The test's environment, as user and group 65534.
    let as_nobody = |args: &[&str]| {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(BIN)
            .arg("--journal")
            .arg(&j)
            .args(args)
            .env_clear()
            .env("PATH", test_path())
            .env("HOME", &env.home)
            .env("NO_COLOR", "1")
            .current_dir(&env.project)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} as another user: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(as_nobody(&["sessions", "--json"]), owner_view);
    assert_eq!(as_nobody(&["cost", "--json"]), owner_cost);
    let status: serde_json::Value =
        serde_json::from_str(&as_nobody(&["status", "--json"])).unwrap();
    assert_eq!(status["events"], owner_status["events"]);
    assert_eq!(status["head_hash"], owner_status["head_hash"]);
    assert_eq!(status["sessions"], owner_status["sessions"]);
    // Compared whole: valid, nothing spooled, the projections not checked (it cannot write).
    assert_expected(
        "durability/read-only-verify.txt",
        &stable(&env.normalize(&as_nobody(&["verify"]))),
    );
    assert_eq!(
        as_nobody(&["export", "--report", "events"]).lines().count() as u64,
        owner_status["events"].as_u64().unwrap()
    );
    as_nobody(&["show", "ro"]);
    as_nobody(&["replay"]);
    Ok(())
}

fn a_hook_that_finds_a_large_spool_backlog_stops_draining_at_its_budget() {
    let env = TestEnvironment::new();
    let j = env.journal();
    // Only the time budget may stop the drain (not the count).
    config(&env, "[hook]\ndrain_max = 100000\n");
    env.hook_raw(payload("b", 0, 0).as_bytes(), &[]);
    // A backlog larger than the budget drains: doubled while this machine drains it whole.
    let (mut n, mut spooled, mut ends) = (5_000, 0, 0);
    let left = loop {
        for i in spooled..n {
            let ev = journal::NewEvent {
                recorded_at_us: i as i64,
                host: "claude".into(),
                kind: projections::Kind::Hook {
                    name: "PreToolUse".into(),
                }
                .into(),
                session_id: Some("b".into()),
                agent_id: None,
                payload: payload("b", 1, i + 1).into_bytes(),
                truncated: None,
                spooled: true,
            };
            journal::spool::write(&j, &ev).unwrap();
        }
        spooled = n;
        let end = format!(
            r#"{{"session_id":"b","hook_event_name":"SessionEnd","reason":"exit","n":{n}}}"#
        );
        let start = Instant::now();
        let out = env.hook_raw(end.as_bytes(), &[]);
        let took = start.elapsed();
        assert!(out.status.success());
        ends += 1;
        let left = journal::spool::list(&j).unwrap().len();
        eprintln!(
            "SessionEnd with a backlog of {n}: {took:?}, {left} files left for the next process"
        );
        if left > 0 {
            break left;
        }
        assert!(n < 80_000, "the hook drained every backlog up to {n} files");
        n *= 2;
    };
    // It stopped at its budget and queued itself behind the rest, in order.
    assert!(left > 0);
    let counts = payload_counts(&j);
    assert_eq!(counts.len(), n + 1 + ends);
    assert!(counts.values().all(|&c| c == 1));
    let evs = events(&j);
    assert_eq!(
        evs.last().unwrap()["name"],
        "SessionEnd",
        "arrival order kept"
    );
}

fn out_of_range_limits_are_clamped_with_one_line_each() {
    let env = TestEnvironment::new();
    config(
        &env,
        "[hook]\nlock_wait_ms = 36000000\ndrain_budget_ms = 0\n",
    );
    let out = env.hook(payload("c", 2, 1).as_bytes(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    assert_expected("durability/out-of-range-limits.txt", &out.render());
    assert_eq!(payload_counts(&env.journal()).len(), 1);
}

fn first_use_by_many_processes_at_once_succeeds_for_all() {
    let env = TestEnvironment::new();
    let j = env.journal();
    let children: Vec<_> = (0..12)
        .map(|i| {
            command_at(&env, &j)
                .args(["tasks", "add", &format!("task {i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        json(&env, &j, &["tasks", "--json"])
            .as_array()
            .unwrap()
            .len(),
        12
    );
}

fn a_damaged_archive_never_blocks_hooks_and_the_checkpoint_is_rebuilt() {
    let mut env = TestEnvironment::new();
    let j = rich_journal(&env);
    let archive = files_of_each_kind(&j).swap_remove(1).1;
    harm(&archive, &Harm::Flip);
    // A hook touching the archived session: recorded, nothing answered from bad state.
    let p = payload("early", 2, 500);
    let out = env.hook(p.as_bytes(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    // The detached rebuild (or this reader) makes the checkpoint whole again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while j.join("state/STALE").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let counts = payload_counts(&j);
    assert_eq!(counts.get(p.as_bytes()).copied(), Some(1));
    let (code, text) = verify_code(&env, &j);
    assert_eq!(code, Some(0), "{text}");
    // The session's view, whole: ages of the hooks' real-clock times read [AGO].
    env.pin_now_ahead();
    let shown = at(&env, &j, &["show", "early"]);
    assert_expected("durability/damaged-archive-show.txt", &shown.render());
}

fn a_deleted_current_never_restarts_the_journal_at_seq_one() {
    let env = TestEnvironment::new();
    let j = rich_journal(&env);
    let before = json(&env, &j, &["status", "--json"]);
    std::fs::remove_file(j.join("CURRENT")).unwrap();
    // Hooks still record (spooled), and nothing is overwritten.
    let p = payload("late", 2, 900);
    let mut t = "# CURRENT deleted\n".to_string();
    let out = hook_in(&env, &p);
    shown(&mut t, "hookjournal hook", &out);
    assert_eq!(out.code, Some(0));
    damaged_then_recovered(&env, &j, &mut t, "");
    assert_expected("durability/deleted-current.txt", &t);
    let after = json(&env, &j, &["status", "--json"]);
    assert!(after["events"].as_u64() > before["events"].as_u64());
    let counts = payload_counts(&j);
    assert_eq!(counts.get(p.as_bytes()).copied(), Some(1));
    assert_eq!(counts.len(), 74);
}

fn importing_an_endless_line_is_refused_in_one_line_and_leaves_nothing() {
    let env = TestEnvironment::new();
    let j = env.journal();
    let out = at(&env, &j, &["import", "--events", "/dev/zero"]);
    assert_expected("durability/import-endless-line.txt", &out.render());
    assert!(
        !j.exists(),
        "the journal this import created is removed again"
    );
}

fn verify_json_always_prints_one_object() {
    let env = TestEnvironment::new();
    // One JSON object, whatever verify finds: compared whole, and parsed.
    let one_object = |j: &Path| {
        let out = command_at(&env, j)
            .args(["verify", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert!(v.is_object(), "{v}");
        at(&env, j, &["verify", "--json"])
    };
    let mut t = String::new();
    let missing = env.root().join("none");
    let out = one_object(&missing);
    shown(
        &mut t,
        "hookjournal --journal $TEST_ENV/none verify --json",
        &out,
    );
    assert_eq!(out.code, Some(1));
    // A damaged journal with spooled files (every real journal has them): exit 3, JSON names it.
    let j = rich_journal(&env);
    let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    harm(&j.join(current.trim()).join("db"), &Harm::Truncate);
    let out = one_object(&j);
    shown(
        &mut t,
        "hookjournal verify --json  # the active store's db truncated",
        &out,
    );
    assert_eq!(out.code, Some(3));
    assert_expected("durability/verify-json.txt", &t);
}

fn an_empty_task_store_an_older_build_wrote_verifies_and_goes_at_the_next_load() {
    let env = TestEnvironment::new();
    let j = env.journal();
    let start =
        r#"{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/p"}"#;
    assert!(env.hook_raw(start.as_bytes(), &[]).status.success());
    // What every build before this one wrote, tasks or none: an empty `tasks` partition.
    let opts = journal::OpenOptions {
        wait: Duration::from_secs(30),
        create: false,
        segment_events: 100_000,
        priority: false,
    };
    let tasks = projections::fold::TASKS_KEY;
    {
        let mut jr = journal::Journal::open(&j, &opts).unwrap();
        let mut tx = jr.begin();
        tx.put_state(tasks, projections::fold::State::default().encode_tasks());
        tx.checkpointed();
        jr.commit(tx).unwrap();
        assert!(jr.get_state(tasks).unwrap().is_some());
    }
    let verified = |what: &str| {
        let v = json(&env, &j, &["verify", "--json"]);
        assert_eq!(v["ok"], true, "{what}: {v}");
    };
    verified("the empty partition is the same state as none");
    // The next hook whose answer reads the tasks loads the partition and drops it.
    let prompt =
        r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/p"}"#;
    assert!(env.hook_raw(prompt.as_bytes(), &[]).status.success());
    // Gone from the hot cache the hook answered from, and from sled once a reader folds the log
    // the hook appended (verify does, and a drainer would).
    let hot = journal::hot::HotCache::new(&j);
    let head = hot.head().expect("a current hot cache");
    assert!(matches!(
        hot.get(&head, tasks),
        journal::hot::Lookup::Known(None)
    ));
    verified("after the hook");
    let jr = journal::Journal::open(&j, &opts).unwrap();
    assert_eq!(jr.get_state(tasks).unwrap(), None);
}

/// Given a hook whose event can be neither committed (the lock is held) nor spooled (the spool
/// cannot be written), when it exits 0 as its host requires, then the loss is not silent: the
/// next hook says on stderr that an event may be missing, once, and `status` lists it.
fn an_event_a_hook_could_not_keep_is_said_by_the_next_hook_and_status() {
    use std::os::unix::io::AsRawFd;
    let mut env = TestEnvironment::new();
    let j = env.journal();
    config(&env, "[hook]\nlock_wait_ms = 20\n");
    let first = hook_in(&env, &payload("s", 0, 1));
    assert_eq!(first.code, Some(0), "{}", first.render());
    // The lock held by another process, and `spool` a file instead of a directory.
    let lock = std::fs::File::open(j.join("lock")).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    std::fs::remove_dir_all(j.join("spool")).ok();
    std::fs::write(j.join("spool"), b"not a directory").unwrap();
    // Compared whole: the hook that lost its event says so; the next says an event may be
    // missing, naming it; the one after says nothing; `status` lists the incident.
    let mut t = String::new();
    let lost = hook_in(&env, &payload("s", 0, 2));
    shown(
        &mut t,
        "hookjournal hook  # the lock held, the spool not a directory",
        &lost,
    );
    assert_eq!(lost.code, Some(0));
    drop(lock);
    std::fs::remove_file(j.join("spool")).unwrap();
    let next = hook_in(&env, &payload("s", 0, 3));
    shown(&mut t, "hookjournal hook  # the next", &next);
    let again = hook_in(&env, &payload("s", 0, 4));
    shown(&mut t, "hookjournal hook  # the one after", &again);
    env.pin_now_ahead();
    step(&env, &j, &mut t, &["status"]);
    assert_expected("durability/event-not-kept.txt", &t);
    let status = json(&env, &j, &["status", "--json"]);
    assert_eq!(
        status["incidents"][0]["event_may_be_missing"], true,
        "{status}"
    );
}

/// The write-ahead log, its mirror and `wal/` deleted: each is named by `verify`; a missing
/// copy is rewritten from the other with nothing lost; a log gone with its mirror is refused
/// by every writer until `recover` rewrites it and says what no copy holds.
fn a_deleted_log_mirror_or_wal_directory_is_named_and_recover_agrees() {
    let env = TestEnvironment::new();
    let original = rich_journal(&env);
    let expected = {
        let c = env.root().join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    // Compared whole: verify names what is missing (exit 3), recover says it lost nothing,
    // verify is valid again, and a second recover finds nothing to repair.
    let mut t = String::new();
    for what in ["log", "mirror", "wal/"] {
        let j = env
            .root()
            .join(format!("deleted-{}", what.trim_end_matches('/')));
        copy_dir(&original, &j);
        // Everything in the store first, so that the log holds nothing only it has.
        ok(&env, &j, &["status"]);
        let log = std::fs::read_dir(j.join("wal"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "wal"))
            .unwrap();
        match what {
            "log" => std::fs::remove_file(&log).unwrap(),
            "mirror" => std::fs::remove_file(log.with_extension("mirror")).unwrap(),
            _ => std::fs::remove_dir_all(j.join("wal")).unwrap(),
        }
        t.push_str(&format!("### {what} deleted\n"));
        damaged_then_recovered(&env, &j, &mut t, what);
        assert_eq!(payload_counts(&j), expected, "{what}");
        let out = step(&env, &j, &mut t, &["recover"]);
        assert_eq!(out.code, Some(0), "{what}: {}", out.render());
    }
    assert_expected("durability/deleted-log-mirror-or-wal.txt", &t);
}

/// Given a checkpoint whose partitions are not what the log folds to (a session's partition
/// put back to an older state, and one for a session the log never had), when verified, then
/// each is named as differing from a full replay (read in the same pass as the chain), exit 3.
fn a_checkpoint_that_is_not_the_fold_of_the_log_is_named_by_verify() {
    let env = TestEnvironment::new();
    let j = env.journal();
    let mut t = String::new();
    let start =
        r#"{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/p"}"#;
    assert!(env.hook_raw(start.as_bytes(), &[]).status.success());
    let opts = journal::OpenOptions {
        wait: Duration::from_secs(30),
        create: false,
        segment_events: 100_000,
        priority: false,
    };
    let key = projections::fold::session_key("s1");
    let older = {
        let jr = journal::Journal::open(&j, &opts).unwrap();
        jr.get_state(&key)
            .unwrap()
            .expect("the session's partition")
    };
    let prompt =
        r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/p"}"#;
    assert!(env.hook_raw(prompt.as_bytes(), &[]).status.success());
    let out = step(&env, &j, &mut t, &["verify"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    {
        let mut jr = journal::Journal::open(&j, &opts).unwrap();
        let mut tx = jr.begin();
        tx.put_state(&key, older.clone());
        tx.put_state(&projections::fold::session_key("ghost"), older);
        tx.checkpointed();
        jr.commit(tx).unwrap();
    }
    let out = step(&env, &j, &mut t, &["verify"]);
    assert_eq!(out.code, Some(3), "{}", out.render());
    let out = step(&env, &j, &mut t, &["verify", "--json"]);
    assert_eq!(out.code, Some(3), "{}", out.render());
    assert_expected("durability/checkpoint-not-the-fold.txt", &t);
}

harness_main!(
    a_thousand_sigkills_of_single_hooks_lose_no_acknowledged_event,
    a_full_disk_loses_nothing_acknowledged_before_it_and_the_journal_recovers,
    every_kind_of_damage_is_named_by_verify_and_recover_keeps_every_intact_event,
    a_damaged_last_sealed_segment_is_named_and_recover_refuses_to_guess,
    a_sealed_only_journal_with_a_damaged_empty_marker_is_named_and_repaired,
    a_kill_during_recover_or_import_is_completed_by_running_it_again,
    hostile_transcript_paths_never_hold_the_hook,
    a_read_only_journal_can_be_read_by_another_user,
    a_hook_that_finds_a_large_spool_backlog_stops_draining_at_its_budget,
    out_of_range_limits_are_clamped_with_one_line_each,
    first_use_by_many_processes_at_once_succeeds_for_all,
    a_damaged_archive_never_blocks_hooks_and_the_checkpoint_is_rebuilt,
    a_deleted_current_never_restarts_the_journal_at_seq_one,
    importing_an_endless_line_is_refused_in_one_line_and_leaves_nothing,
    verify_json_always_prints_one_object,
    an_empty_task_store_an_older_build_wrote_verifies_and_goes_at_the_next_load,
    an_event_a_hook_could_not_keep_is_said_by_the_next_hook_and_status,
    a_deleted_log_mirror_or_wal_directory_is_named_and_recover_agrees,
    a_checkpoint_that_is_not_the_fold_of_the_log_is_named_by_verify,
);
