//! Nothing acknowledged is ever lost: kills at random instants, a full disk, damage to every
//! kind of file the journal writes, hostile transcript paths, a read-only journal, a spool
//! backlog, bad limits. Every test runs the real binary.

mod common;

use common::harness::{missing, Ran};
use common::kill::{kill_after, kill_hooks, kill_until, spawn_hook, Campaign};
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

fn verify_code(j: &Path) -> (Option<i32>, String) {
    let out = cmd(j).arg("verify").output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// verify passes, with one `recover` in between if it does not at first.
fn verify_or_recover(j: &Path) -> bool {
    if verify_code(j).0 == Some(0) {
        return false;
    }
    let out = run(j, &["recover"]);
    assert!(
        out.contains("lost: nothing") || out.starts_with("nothing to repair"),
        "{out}"
    );
    let (code, text) = verify_code(j);
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
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
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
    let recovered = verify_or_recover(&j);
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
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mnt)
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
    let _guard = Unmount(mnt.clone());
    let j = mnt.join("j");
    let big = "x".repeat(6_000);
    let mut acknowledged = Vec::new();
    let mut full_seen = false;
    for i in 0..600 {
        let p = format!(
            r#"{{"session_id":"full","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_response":{{"stdout":"{big}"}}}}"#
        );
        let out = hook(&j, p.as_bytes(), &[]);
        assert!(out.status.success(), "hook {i} exited {:?}", out.status);
        assert!(out.stdout.len() <= 1 || out.stdout.starts_with(b"{"));
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("event lost") {
            full_seen = true;
        } else if !full_seen {
            acknowledged.push(p);
        }
    }
    assert!(full_seen, "the disk never filled");
    assert!(
        acknowledged.len() >= 20,
        "{} acknowledged",
        acknowledged.len()
    );
    // Space returns.
    let grown = std::process::Command::new("mount")
        .args(["-o", "remount,size=256m"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(grown.success());
    // A full disk is not damage: whatever it left half-written was never acknowledged.
    let (code, text) = verify_code(&j);
    assert_eq!(code, Some(0), "verify after a full disk: {text}");
    let after = payload("full", 2, 999_999);
    let out = hook(&j, after.as_bytes(), &[]);
    assert!(out.status.success());
    let recovered = verify_or_recover(&j);
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
    assert!(hook(&j, again.as_bytes(), &[]).status.success());
    let counts = payload_counts(&j);
    assert_eq!(counts.get(again.as_bytes()).copied(), Some(1));
    assert_eq!(verify_code(&j).0, Some(0));
    Ok(())
}

/// A journal with every kind of file: sealed segments, an archive of cold partitions, the
/// active store, its write-ahead log, spooled files, `CURRENT`.
fn rich_journal(root: &Path) -> PathBuf {
    let j = root.join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 20\n").unwrap();
    for i in 0..8 {
        hook(&j, payload("early", 2 * i, i).as_bytes(), &[]);
    }
    for i in 8..70 {
        hook(&j, payload("late", 2 * i, i).as_bytes(), &[]);
    }
    // Record-only events stay in the spool until the next lock holder.
    for i in 70..73 {
        hook(&j, payload("late", 1, i).as_bytes(), &[]);
    }
    j
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
    let root = tempfile::tempdir().unwrap();
    let original = rich_journal(root.path());
    let expected = {
        // What a sound journal holds once its spool is ingested (a copy, to keep the spool).
        let c = root.path().join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    assert_eq!(expected.len(), 73);
    let mut table = Vec::new();
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
            let j = root
                .path()
                .join(format!("case-{n}-{}", matches!(how, Harm::Flip)));
            copy_dir(&original, &j);
            let (_, path) = files_of_each_kind(&j).swap_remove(n);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            harm(&path, &how);
            let damaged_copy = root.path().join(format!("damaged-{n}"));
            std::fs::copy(&path, &damaged_copy).unwrap();
            let (code, text) = verify_code(&j);
            // A copy of the log cut short, or torn in its middle, is what a power cut between
            // the two copies' syncs leaves: not damage (the other copy holds every record, so
            // nothing is lost), but named all the same.
            if kind.starts_with("write-ahead log") {
                assert_eq!(code, Some(0), "{label}: verify said {text}");
                let said = match how {
                    Harm::Truncate => "an interrupted write",
                    Harm::Flip => "holds them intact",
                };
                assert!(
                    text.contains("note:") && text.contains(said),
                    "{label}: verify does not note it: {text}"
                );
            } else {
                assert_eq!(code, Some(3), "{label}: verify said {text}");
            }
            let named = match kind {
                "active store db" | "active store conf" => text.contains("active store"),
                _ => text.contains(&name),
            };
            assert!(named, "{label}: verify does not name {name}: {text}");
            let out = cmd(&j).arg("recover").output().unwrap();
            let said = String::from_utf8_lossy(&out.stdout).into_owned();
            if kind == "segment" {
                // The only copy of sealed events: recover says so, drops nothing else, and
                // verify keeps naming the segment.
                assert_eq!(out.status.code(), Some(3), "{label}: {said}");
                assert!(said.contains(&name), "{label}: {said}");
                assert_eq!(verify_code(&j).0, Some(3));
                table.push(format!(
                    "{label}: verify names {name}; recover exit 3, names it"
                ));
                continue;
            }
            assert!(
                out.status.success(),
                "{label}: recover failed: {said} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let (code, text) = verify_code(&j);
            assert_eq!(
                code,
                Some(0),
                "{label}: verify after recover: {text}\nrecover said: {said}"
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
            let again = run(&j, &["recover"]);
            assert!(again.starts_with("nothing to repair"), "{label}: {again}");
            table.push(format!("{label}: verify names it; recover keeps all"));
        }
    }
    eprintln!("damage matrix:\n  {}", table.join("\n  "));
}

fn a_damaged_last_sealed_segment_is_named_and_recover_refuses_to_guess() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 20\n").unwrap();
    for i in 0..45 {
        hook(&j, payload("s", 0, i).as_bytes(), &[]);
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
    // recover rebuilds the active tail from the last sealed event: without it, it says so.
    let out = cmd(&j).arg("recover").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.starts_with("cannot recover: the last sealed segment") && said.contains(&name),
        "{said}"
    );
    let (code, text) = verify_code(&j);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains(&format!("  seq 21 {name}: ")), "{text}");
}

fn a_sealed_only_journal_with_a_damaged_empty_marker_is_named_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 20\n").unwrap();
    for i in 0..20 {
        hook(&j, payload("s", 0, i).as_bytes(), &[]);
    }
    assert!(j.join("ACTIVE_EMPTY").exists());
    harm(&j.join("ACTIVE_EMPTY"), &Harm::Truncate);
    let (code, text) = verify_code(&j);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("ACTIVE_EMPTY"), "{text}");
    run(&j, &["recover"]);
    assert_eq!(verify_code(&j).0, Some(0));
    assert_eq!(payload_counts(&j).len(), 20);
}

fn a_kill_during_recover_or_import_is_completed_by_running_it_again() {
    let root = tempfile::tempdir().unwrap();
    let original = rich_journal(root.path());
    let expected = {
        let c = root.path().join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    let damaged = |name: &str| {
        let j = root.path().join(name);
        copy_dir(&original, &j);
        let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
        harm(&j.join(current.trim()).join("db"), &Harm::Flip);
        j
    };
    // How long a recover runs here uninterrupted: the kills are drawn within it.
    let j = damaged("r-whole");
    let t0 = Instant::now();
    run(&j, &["recover"]);
    let span = t0.elapsed();
    let quiet = |c: &mut std::process::Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let attempts = kill_until(8, 60, span, 0x9e3779b97f4a7c15, |round, delay| {
        let j = damaged(&format!("r{round}"));
        let landed = kill_after(quiet(cmd(&j).arg("recover")), delay);
        let out = cmd(&j).arg("recover").output().unwrap();
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(verify_code(&j).0, Some(0), "round {round}");
        assert_eq!(payload_counts(&j), expected, "round {round}");
        landed
    });
    eprintln!("recover: 8 kills landed in {attempts} attempts (an uninterrupted run: {span:?})");
    // Import: an export of the sound journal, imported with kills, then completed.
    let file = root.path().join("events.jsonl");
    run(
        &root.path().join("expected"),
        &[
            "export",
            "--report",
            "events",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    let head = run_json(&root.path().join("expected"), &["status", "--json"])["head_hash"].clone();
    let import = |j: &Path| {
        let mut c = cmd(j);
        c.args(["import", "--events", file.to_str().unwrap()]);
        c
    };
    let t0 = Instant::now();
    run(
        &root.path().join("i-whole"),
        &["import", "--events", file.to_str().unwrap()],
    );
    let span = t0.elapsed();
    let attempts = kill_until(8, 60, span, 0x2545f4914f6cdd1d, |round, delay| {
        let j = root.path().join(format!("i{round}"));
        let landed = kill_after(quiet(&mut import(&j)), delay);
        let out = import(&j).output().unwrap();
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            run_json(&j, &["status", "--json"])["head_hash"],
            head,
            "round {round}"
        );
        assert_eq!(verify_code(&j).0, Some(0), "round {round}");
        landed
    });
    eprintln!("import: 8 kills landed in {attempts} attempts (an uninterrupted run: {span:?})");
}

fn hostile_transcript_paths_never_hold_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let fifo = dir.path().join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let folder = dir.path().join("folder.jsonl");
    std::fs::create_dir_all(&folder).unwrap();
    // A regular file whose read fails (EIO): the hook's own memory, as /proc shows it.
    let unreadable = dir.path().join("unreadable.jsonl");
    std::os::unix::fs::symlink("/proc/self/mem", &unreadable).unwrap();
    for (i, path) in [&fifo, &folder, &unreadable].into_iter().enumerate() {
        for event in ["Stop", "PreCompact", "SessionEnd"] {
            let p = format!(
                r#"{{"session_id":"h{i}","hook_event_name":"{event}","transcript_path":"{}","trigger":"auto","reason":"exit"}}"#,
                path.display()
            );
            let mut child = spawn_hook(&j, &p);
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
        }
    }
    let counts = payload_counts(&j);
    assert_eq!(counts.len(), 9);
    let (code, text) = verify_code(&j);
    assert_eq!(code, Some(0), "{text}");
}

fn a_read_only_journal_can_be_read_by_another_user() -> Ran {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root {
        return needs_root("needs root to run the readers as another user");
    }
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nsegment_events = 20\n").unwrap();
    for i in 0..30 {
        hook(&j, payload("ro", i % 4, i).as_bytes(), &[]);
    }
    // What another user reads is the log (the spool is its owner's to ingest).
    run(&j, &["drain"]);
    let owner_view = run(&j, &["sessions", "--json"]);
    let owner_cost = run(&j, &["cost", "--json"]);
    let owner_status = run_json(&j, &["status", "--json"]);
    // Readable by everyone, writable by nobody but root.
    let ok = std::process::Command::new("chmod")
        .args(["-R", "a+rX,go-w"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let as_nobody = |args: &[&str]| {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(BIN)
            .arg("--journal")
            .arg(&j)
            .args(args)
            .env("NO_COLOR", "1")
            .env("HOME", dir.path())
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
    assert!(as_nobody(&["verify"]).starts_with("valid"));
    assert_eq!(
        as_nobody(&["export", "--report", "events"]).lines().count() as u64,
        owner_status["events"].as_u64().unwrap()
    );
    as_nobody(&["show", "ro"]);
    as_nobody(&["replay"]);
    Ok(())
}

fn a_hook_that_finds_a_large_spool_backlog_stops_draining_at_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    // Only the time budget may stop the drain (not the count).
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\ndrain_max = 100000\n").unwrap();
    hook(&j, payload("b", 0, 0).as_bytes(), &[]);
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
        let out = hook(&j, end.as_bytes(), &[]);
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
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(
        j.join("config.toml"),
        "[hook]\nlock_wait_ms = 36000000\ndrain_budget_ms = 0\n",
    )
    .unwrap();
    let out = hook(&j, payload("c", 2, 1).as_bytes(), &[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        vec![
            format!(
                "hookjournal: {}: hook.lock_wait_ms = 36000000 is out of range 0..=2000, using 2000",
                j.join("config.toml").display()
            ),
            format!(
                "hookjournal: {}: hook.drain_budget_ms = 0 is out of range 10..=1000, using 10",
                j.join("config.toml").display()
            )
        ]
    );
    assert_eq!(payload_counts(&j).len(), 1);
}

fn first_use_by_many_processes_at_once_succeeds_for_all() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("fresh");
    let children: Vec<_> = (0..12)
        .map(|i| {
            cmd(&j)
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
        run_json(&j, &["tasks", "--json"]).as_array().unwrap().len(),
        12
    );
}

fn a_damaged_archive_never_blocks_hooks_and_the_checkpoint_is_rebuilt() {
    let root = tempfile::tempdir().unwrap();
    let j = rich_journal(root.path());
    let archive = files_of_each_kind(&j).swap_remove(1).1;
    harm(&archive, &Harm::Flip);
    // A hook touching the archived session: recorded, nothing answered from bad state.
    let p = payload("early", 2, 500);
    let out = hook(&j, p.as_bytes(), &[]);
    assert!(out.status.success());
    // The detached rebuild (or this reader) makes the checkpoint whole again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while j.join("state/STALE").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let counts = payload_counts(&j);
    assert_eq!(counts.get(p.as_bytes()).copied(), Some(1));
    assert_eq!(verify_code(&j).0, Some(0), "{}", verify_code(&j).1);
    let shown = run(&j, &["show", "early"]);
    assert!(shown.contains("step 500"), "{shown}");
}

fn a_deleted_current_never_restarts_the_journal_at_seq_one() {
    let root = tempfile::tempdir().unwrap();
    let j = rich_journal(root.path());
    let before = run_json(&j, &["status", "--json"]);
    std::fs::remove_file(j.join("CURRENT")).unwrap();
    // Hooks still record (spooled), and nothing is overwritten.
    let p = payload("late", 2, 900);
    assert!(hook(&j, p.as_bytes(), &[]).status.success());
    let (code, text) = verify_code(&j);
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("CURRENT: missing, but the journal holds events"),
        "{text}"
    );
    let out = run(&j, &["recover"]);
    assert!(out.contains("lost: nothing"), "{out}");
    assert_eq!(verify_code(&j).0, Some(0));
    let after = run_json(&j, &["status", "--json"]);
    assert!(after["events"].as_u64() > before["events"].as_u64());
    let counts = payload_counts(&j);
    assert_eq!(counts.get(p.as_bytes()).copied(), Some(1));
    assert_eq!(counts.len(), 74);
}

fn importing_an_endless_line_is_refused_in_one_line_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let out = cmd(&j)
        .args(["import", "--events", "/dev/zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "hookjournal: reading /dev/zero line 1: a line longer than 96 MiB: not an events export\n"
    );
    assert!(
        !j.exists(),
        "the journal this import created is removed again"
    );
}

fn verify_json_always_prints_one_object() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let out = cmd(&missing).args(["verify", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"ok": false, "error": format!("no journal at {}", missing.display())})
    );
    // A damaged journal with spooled files (every real journal has them): exit 3, JSON names it.
    let j = rich_journal(dir.path());
    let current = std::fs::read_to_string(j.join("CURRENT")).unwrap();
    harm(&j.join(current.trim()).join("db"), &Harm::Truncate);
    let out = cmd(&j).args(["verify", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(
        v["damage"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["place"].as_str().unwrap().starts_with("active store")),
        "{v}"
    );
}

fn an_empty_task_store_an_older_build_wrote_verifies_and_goes_at_the_next_load() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("j");
    let start =
        r#"{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/p"}"#;
    assert!(hook(&j, start.as_bytes(), &[]).status.success());
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
        let v = run_json(&j, &["verify", "--json"]);
        assert_eq!(v["ok"], true, "{what}: {v}");
    };
    verified("the empty partition is the same state as none");
    // The next hook whose answer reads the tasks loads the partition and drops it.
    let prompt =
        r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/p"}"#;
    assert!(hook(&j, prompt.as_bytes(), &[]).status.success());
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
    let root = tempfile::tempdir().unwrap();
    let j = root.path().join("j");
    std::fs::create_dir_all(&j).unwrap();
    std::fs::write(j.join("config.toml"), "[hook]\nlock_wait_ms = 20\n").unwrap();
    let first = hook(&j, payload("s", 0, 1).as_bytes(), &[]);
    assert!(first.status.success());
    // The lock held by another process, and `spool` a file instead of a directory.
    let lock = std::fs::File::open(j.join("lock")).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    std::fs::remove_dir_all(j.join("spool")).ok();
    std::fs::write(j.join("spool"), b"not a directory").unwrap();
    let lost = hook(&j, payload("s", 0, 2).as_bytes(), &[]);
    assert!(lost.status.success());
    let said = String::from_utf8_lossy(&lost.stderr);
    assert!(said.contains("event lost"), "{said}");
    drop(lock);
    std::fs::remove_file(j.join("spool")).unwrap();

    let next = hook(&j, payload("s", 0, 3).as_bytes(), &[]);
    let said = String::from_utf8_lossy(&next.stderr);
    assert!(
        said.contains("an event may be missing from the journal")
            && said.contains("a PostToolUse event of session s could not be recorded"),
        "{said}"
    );
    let again = hook(&j, payload("s", 0, 4).as_bytes(), &[]);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("may be missing"),
        "said twice"
    );
    let status = run(&j, &["status"]);
    assert!(
        status.contains("incidents  1 event may be missing")
            && status.contains("could not be recorded"),
        "{status}"
    );
    let json = run_json(&j, &["status", "--json"]);
    assert_eq!(json["incidents"][0]["event_may_be_missing"], true, "{json}");
}

/// The write-ahead log, its mirror and `wal/` deleted: each is named by `verify`; a missing
/// copy is rewritten from the other with nothing lost; a log gone with its mirror is refused
/// by every writer until `recover` rewrites it and says what no copy holds.
fn a_deleted_log_mirror_or_wal_directory_is_named_and_recover_agrees() {
    let root = tempfile::tempdir().unwrap();
    let original = rich_journal(root.path());
    let expected = {
        let c = root.path().join("expected");
        copy_dir(&original, &c);
        payload_counts(&c)
    };
    for what in ["log", "mirror", "wal/"] {
        let j = root
            .path()
            .join(format!("deleted-{}", what.trim_end_matches('/')));
        copy_dir(&original, &j);
        // Everything in the store first, so that the log holds nothing only it has.
        run(&j, &["status"]);
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
        let (code, text) = verify_code(&j);
        assert_eq!(code, Some(3), "{what} deleted: verify said {text}");
        assert!(text.contains("missing"), "{what} deleted: {text}");
        let out = cmd(&j).arg("recover").output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{what}: {said}");
        assert!(said.contains("lost: nothing"), "{what}: {said}");
        assert_eq!(verify_code(&j).0, Some(0), "{what}");
        assert_eq!(payload_counts(&j), expected, "{what}");
        assert!(
            run(&j, &["recover"]).starts_with("nothing to repair"),
            "{what}"
        );
    }
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
);
