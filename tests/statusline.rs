//! `hookjournal statusline`: whole lines for the documented input shapes (and missing fields and
//! garbage), readings recorded only when they change, compaction resets, chaining, and cost
//! reconciliation against the host's own figures.

mod common;
use common::harness::{missing, Ran};
use common::*;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

const SID: &str = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";

fn statusline(journal: &Path, input: &[u8], args: &[&str]) -> (String, String, i32) {
    let mut c = cmd(journal);
    c.arg("statusline")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

/// The statusline JSON as Claude Code documents it.
fn input(session: &str, cost: f64, used: f64) -> String {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/home/dev/.claude/projects/x/s.jsonl",
        "cwd": "/home/dev/acme-api",
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/home/dev/acme-api", "project_dir": "/home/dev/acme-api"},
        "version": "2.1.197",
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": cost, "total_duration_ms": 45000, "total_api_duration_ms": 2300,
                 "total_lines_added": 156, "total_lines_removed": 23},
        "context_window": {"total_input_tokens": 15234, "total_output_tokens": 4521,
                           "context_window_size": 200000,
                           "current_usage": {"input_tokens": 8500, "output_tokens": 1200,
                                             "cache_creation_input_tokens": 5000,
                                             "cache_read_input_tokens": 2000},
                           "used_percentage": used, "remaining_percentage": 100.0 - used},
        "exceeds_200k_tokens": false
    })
    .to_string()
}

fn host_events(journal: &Path) -> Vec<serde_json::Value> {
    events(journal)
        .into_iter()
        .filter(|e| e["kind"] == "HostReported")
        .collect()
}

fn started_journal(dir: &Path, session: &str) -> std::path::PathBuf {
    let j = dir.join("journal");
    let out = hook(
        &j,
        format!(r#"{{"hook_event_name":"SessionStart","session_id":"{session}","source":"startup","cwd":"/home/dev/acme-api"}}"#).as_bytes(),
        &[],
    );
    assert!(out.status.success());
    j
}

fn statusline_prints_one_line_for_every_documented_shape() {
    let tmp = tempfile::tempdir().unwrap();
    // No journal at all: still one line, nothing created.
    let j = tmp.path().join("none");
    let cases: Vec<(String, &str)> = vec![
        (input("s1", 0.4213, 42.0), "Sonnet 4.5 │ ████░░░░░░ 42% ok │ $0.42\n"),
        (input("s1", 12.5, 86.4), "Sonnet 4.5 │ █████████░ 86% critical │ $12.5\n"),
        (
            r#"{"session_id":"s1","model":{"id":"claude-opus-4-1"},"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":100,"cache_creation_input_tokens":150000,"cache_read_input_tokens":0}},"exceeds_200k_tokens":false,"rate_limits":{"five_hour":{"used_percentage":41.6,"resets_at":1790000000},"seven_day":{"used_percentage":12}}}"#.into(),
            "claude-opus-4-1 │ ████████░░ 75% warning │ 5h 42% 7d 12%\n",
        ),
        (
            r#"{"session_id":"s1","model":{"display_name":"Opus"},"context_window":{"used_percentage":97},"exceeds_200k_tokens":true}"#.into(),
            "Opus │ ██████████ 97% emergency >200k\n",
        ),
        // Missing fields: no model, no cost, no context.
        (r#"{"session_id":"s1"}"#.into(), "? │ ░░░░░░░░░░ ?%\n"),
        (r#"{}"#.into(), "? │ ░░░░░░░░░░ ?%\n"),
        // Wrong types are treated as absent.
        (
            r#"{"model":7,"cost":{"total_cost_usd":"a lot"},"context_window":{"used_percentage":null}}"#.into(),
            "? │ ░░░░░░░░░░ ?%\n",
        ),
        // Payload text cannot drive the terminal or reorder the line.
        (
            r#"{"model":{"display_name":"Evil\u001b[2J\u202eName"}}"#.into(),
            "Evil[2JName │ ░░░░░░░░░░ ?%\n",
        ),
        // Garbage.
        ("not json at all".into(), "hookjournal │ statusline input unreadable\n"),
        ("[1,2,3]".into(), "hookjournal │ statusline input unreadable\n"),
        ("".into(), "hookjournal │ statusline input unreadable\n"),
        ("{\"session_id\":".into(), "hookjournal │ statusline input unreadable\n"),
    ];
    for (inp, want) in &cases {
        let (out, err, code) = statusline(&j, inp.as_bytes(), &[]);
        assert_eq!(code, 0, "input {inp}");
        assert_eq!(&out, want, "input {inp}");
        assert_eq!(err, "", "input {inp}");
    }
    assert!(!j.exists(), "the statusline created a journal");
    // Binary garbage and a huge input.
    let (out, _, code) = statusline(&j, &[0xff, 0x00, 0xfe, 0x1b], &[]);
    assert_eq!(
        (out.as_str(), code),
        ("hookjournal │ statusline input unreadable\n", 0)
    );
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(3 << 20));
    let (out, _, code) = statusline(&j, big.as_bytes(), &[]);
    assert_eq!(
        (out.as_str(), code),
        ("hookjournal │ statusline input unreadable\n", 0)
    );
}

fn statusline_colours_by_tier_unless_no_color() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cmd(&tmp.path().join("none"));
    c.env_remove("NO_COLOR")
        .arg("statusline")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input("s", 1.0, 90.0).as_bytes())
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(
        out,
        "\x1b[1mSonnet 4.5\x1b[0m \x1b[2m│\x1b[0m \x1b[31m█████████░ 90% critical\x1b[0m \x1b[2m│\x1b[0m $1.00\n"
    );
}

fn statusline_records_a_reading_only_when_it_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let j = started_journal(tmp.path(), "s-rec");
    for _ in 0..3 {
        let (out, _, code) = statusline(&j, input("s-rec", 0.30, 20.0).as_bytes(), &[]);
        assert_eq!(code, 0);
        assert!(
            out.starts_with("Sonnet 4.5 │ ██░░░░░░░░ 20% ok │ $0.30"),
            "{out}"
        );
    }
    let evs = host_events(&j);
    assert_eq!(
        evs.len(),
        1,
        "three identical readings → one event: {evs:?}"
    );
    assert_eq!(evs[0]["session_id"], "s-rec");
    assert_eq!(evs[0]["spooled"], true);
    assert_eq!(evs[0]["payload"]["cost_usd"], 0.30);
    assert_eq!(evs[0]["payload"]["context_tokens"], 15500);
    assert_eq!(evs[0]["payload"]["source"], "statusline");

    // Only the clock moved: still one event.
    let same = input("s-rec", 0.30, 20.0).replace("45000", "46000");
    statusline(&j, same.as_bytes(), &[]);
    assert_eq!(host_events(&j).len(), 1);

    // The cost changed: a second event.
    statusline(&j, input("s-rec", 0.55, 31.0).as_bytes(), &[]);
    statusline(&j, input("s-rec", 0.55, 31.0).as_bytes(), &[]);
    assert_eq!(host_events(&j).len(), 2);

    // Compaction: Claude Code's counter starts again. Recorded, and the host's total is the sum
    // of the epochs' maxima (0.55 + 0.12), not the last reading.
    statusline(&j, input("s-rec", 0.04, 8.0).as_bytes(), &[]);
    statusline(&j, input("s-rec", 0.12, 11.0).as_bytes(), &[]);
    assert_eq!(host_events(&j).len(), 4);
    let cost = run_json(&j, &["cost", "--json"]);
    let rec = &cost["reconciliation"]["sessions"][0];
    assert_eq!(rec["session"], "s-rec");
    assert_eq!(rec["host_epochs"], 2);
    assert!(
        (rec["host_usd"].as_f64().unwrap() - 0.67).abs() < 1e-9,
        "{rec}"
    );
    assert_eq!(rec["host_source"], "statusline");
    // `show` has the host's last context reading.
    let show = run_json(&j, &["show", "s-rec", "--json"]);
    assert_eq!(show["host_reported"]["context_tokens"], 15500);
    assert_eq!(show["host_reported"]["epochs"], 2);
}

fn statusline_shows_the_task_in_progress_from_the_journal() {
    let played = play_session(&[]);
    let j = &played.journal;
    let inp = input(SID, 0.2, 16.0);
    // The first call finds no cached facts and starts a refresh in the background.
    let (first, _, _) = statusline(j, inp.as_bytes(), &[]);
    assert_eq!(first, "Sonnet 4.5 │ ██░░░░░░░░ 16% ok │ $0.20\n");
    // A deadline for a hang, not a speed: the refresh is a background process.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (out, _, _) = statusline(j, inp.as_bytes(), &[]);
        if out != first {
            assert_eq!(
                out,
                "Sonnet 4.5 │ ██░░░░░░░░ 16% ok │ $0.20 │ ▶ [2] Wire limiter into /login\n"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "facts never refreshed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn statusline_chains_the_users_own_and_can_only_record() {
    let tmp = tempfile::tempdir().unwrap();
    let j = started_journal(tmp.path(), "s-chain");
    let theirs = "read x; echo \"theirs: ${#x} bytes\"";
    let inp = input("s-chain", 0.3, 20.0);
    let (out, _, _) = statusline(&j, inp.as_bytes(), &["--chain", theirs]);
    assert_eq!(
        out,
        format!(
            "Sonnet 4.5 │ ██░░░░░░░░ 20% ok │ $0.30\ntheirs: {} bytes\n",
            inp.len()
        )
    );
    let (out, _, _) = statusline(
        &j,
        input("s-chain", 0.4, 20.0).as_bytes(),
        &["--record-only", "--chain", "echo theirs only"],
    );
    assert_eq!(out, "theirs only\n");
    assert_eq!(host_events(&j).len(), 2, "record-only still records");
    // A chained command that hangs is cut off; ours still prints.
    let t0 = std::time::Instant::now();
    let (out, _, code) = statusline(&j, inp.as_bytes(), &["--chain", "sleep 30"]);
    assert_eq!(
        (out.as_str(), code),
        ("Sonnet 4.5 │ ██░░░░░░░░ 20% ok │ $0.30\n", 0)
    );
    // Cut off, not waited for: it would run 30 s (the bound is slack for a loaded machine).
    assert!(t0.elapsed() < std::time::Duration::from_secs(25));
}

/// Cost reconciliation on the fixture session (one auto compaction): the transcripts' $0.5497
/// beside the host's epochs (0.36 before the compaction, 0.21 after) = $0.57, the difference
/// named as the compaction's summary request.
fn cost_shows_transcript_and_host_cost_and_names_the_difference() {
    let played = play_session(&[]);
    let j = &played.journal;
    for (c, u) in [(0.11, 30.0), (0.36, 80.0), (0.02, 9.0), (0.21, 16.0)] {
        statusline(j, input(SID, c, u).as_bytes(), &[]);
    }
    let v = run_json(j, &["cost", "--json"]);
    let rec = &v["reconciliation"]["sessions"][0];
    assert!(
        (rec["transcript_usd"].as_f64().unwrap() - 0.54969).abs() < 1e-5,
        "{rec}"
    );
    assert!(
        (rec["host_usd"].as_f64().unwrap() - 0.57).abs() < 1e-9,
        "{rec}"
    );
    assert!(
        (rec["difference_usd"].as_f64().unwrap() - 0.02031).abs() < 1e-5,
        "{rec}"
    );
    assert_eq!(
        rec["explanation"][0],
        "compaction summary requests are in no transcript (1 compaction)"
    );
    let total = &v["reconciliation"]["total"];
    assert_eq!(total["host_usd"], rec["host_usd"]);
    let table = run(j, &["cost"]);
    let tail: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("transcripts vs"))
        .collect();
    assert_eq!(
        tail.join("\n"),
        "transcripts vs what the host reported (Claude Code's statusline cost)\n\
         SESSION   TRANSCRIPTS  HOST REPORTED  DIFFERENCE  WHY\n\
         db5b5fab      $0.5497        $0.5700    +$0.0203  compaction summary requests are in no transcript (1 compaction)\n\
         ─────────────────────────────────────────────────────────────────────────────────────────────────────────────────\n\
         total         $0.5497        $0.5700    +$0.0203"
    );
}

fn settings_of(project: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(project.join(".claude/settings.json")).unwrap())
        .unwrap()
}

fn install_cmd(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(BIN)
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("HOOKJOURNAL_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn install_statusline_chains_the_users_own_and_uninstall_restores_it() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".claude")).unwrap();
    let theirs = r#"printf '%s' "$(cat | wc -c) \"bytes\" $HOME" | tr -d ' '"#;
    let original = serde_json::json!({
        "model": "sonnet",
        "statusLine": {"type": "command", "command": theirs, "padding": 1}
    });
    std::fs::write(
        p.join(".claude/settings.json"),
        serde_json::to_string_pretty(&original).unwrap(),
    )
    .unwrap();

    let out = install_cmd(p, home.path(), &["install", "--statusline"]);
    let bin = std::fs::canonicalize(BIN).unwrap();
    let ours = format!("\"{}\" statusline", bin.display());
    let s = settings_of(p);
    let registered = s["statusLine"]["command"].as_str().unwrap().to_string();
    assert!(
        registered.starts_with(&format!("{ours} --chain \"")),
        "{registered}"
    );
    assert_eq!(s["statusLine"]["padding"], 1);
    assert_eq!(s["statusLine"]["type"], "command");
    assert!(out.contains(&format!("Status line: {registered}")), "{out}");
    // Installing again changes nothing; the chained command is not wrapped twice.
    install_cmd(p, home.path(), &["install", "--statusline"]);
    assert_eq!(settings_of(p)["statusLine"]["command"], registered.as_str());

    // The registered command, run the way Claude Code runs it (sh -c, JSON on stdin): our line,
    // then theirs, which got the same input.
    std::fs::create_dir_all(p.join(".hookjournal")).unwrap();
    let inp = input("s-inst", 0.3, 20.0);
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&registered)
        .env("NO_COLOR", "1")
        .env("HOME", "/h")
        .env_remove("HOOKJOURNAL_DIR")
        .current_dir(p)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(inp.as_bytes())
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(
        out,
        format!(
            "Sonnet 4.5 │ ██░░░░░░░░ 20% ok │ $0.30\n{}\"bytes\"/h\n",
            inp.len()
        )
    );

    // Record-only: theirs alone is shown.
    install_cmd(
        p,
        home.path(),
        &["install", "--statusline", "--statusline-record-only"],
    );
    let ro = settings_of(p)["statusLine"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        ro.starts_with(&format!("{ours} --record-only --chain \"")),
        "{ro}"
    );

    // Uninstall gives back exactly what the user had.
    let out = install_cmd(p, home.path(), &["uninstall"]);
    assert!(out.contains("Restored your own status line"), "{out}");
    assert_eq!(settings_of(p), original);
}

fn install_statusline_without_one_adds_ours_and_uninstall_removes_it() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    install_cmd(
        p,
        home.path(),
        &["install", "--statusline", "--scope", "local"],
    );
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    let bin = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        s["statusLine"],
        serde_json::json!({"type": "command", "command": format!("\"{}\" statusline", bin.display())})
    );
    install_cmd(p, home.path(), &["uninstall", "--scope", "local"]);
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s, serde_json::json!({}));
}

fn watch_once_prints_sessions_burn_context_and_tasks() {
    let played = play_session(&[]);
    let j = &played.journal;
    statusline(j, input(SID, 0.61, 16.0).as_bytes(), &[]);
    let out = run(j, &["watch", "--once"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!("hookjournal watch · {} · ", j.display())),
        "{out}"
    );
    assert_eq!(
        lines[1],
        "SESSION   STATUS  LAST    CONTEXT          TIER     COST  $/H  TASK"
    );
    assert!(
        lines[2].starts_with("db5b5fab  ended   ")
            && lines[2]
                .ends_with("██░░░░░░░░  16%  ok    $0.5497    -  [2] Wire limiter into /login"),
        "{out}"
    );
    assert!(
        out.contains("1 session (0 live) · $0.5497 · burn $0.0000/h · 2 open tasks · "),
        "{out}"
    );
    // watch never drains the spool (it would hold the lock longer): the reading waits there.
    assert!(
        out.contains("1 waiting in the spool"),
        "the watch drained the spool: {out}"
    );
    assert!(
        out.contains("  db5b5fab:2   in_progress  Wire limiter into /login\n"),
        "{out}"
    );
    // Once a writer has ingested it, the host's figure (above the transcripts') shows.
    run(j, &["drain"]);
    let out = run(j, &["watch", "--once"]);
    assert!(
        out.contains("1 session (0 live) · $0.6100 · burn $0.0000/h · 2 open tasks · "),
        "{out}"
    );
    assert!(out.contains(" 0 waiting in the spool"), "{out}");
}

/// The live view in a real pseudo-terminal (util-linux `script`): it redraws, hooks keep
/// landing while it runs, and `q` quits it.
fn watch_runs_live_in_a_terminal_and_quits_on_q() -> Ran {
    if !Path::new("/usr/bin/script").exists() {
        return missing(
            "HOOKJOURNAL_REQUIRE_SCRIPT",
            "no /usr/bin/script (util-linux) to give watch a terminal",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let j = started_journal(tmp.path(), "s-live");
    let mut child = std::process::Command::new("/usr/bin/script")
        .args(["-q", "-e", "-c"])
        .arg(format!(
            "{BIN} --journal {} watch --interval 100",
            j.display()
        ))
        .arg("/dev/null")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The screen as it arrives, read on a thread, so the test waits for what it needs to see.
    let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let screen = screen.clone();
        let mut out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let shown = || String::from_utf8_lossy(&screen.lock().unwrap()).into_owned();
    // `script` runs watch in its own session: end both if the test gives up, or they outlive it.
    let give_up = |child: &mut std::process::Child, why: &str| -> ! {
        let _ = std::process::Command::new("pkill")
            .args(["-P", &child.id().to_string()])
            .status();
        let _ = child.kill();
        panic!("{why}");
    };
    let wait_until = |child: &mut std::process::Child, what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !done() {
            if std::time::Instant::now() > deadline {
                give_up(child, &format!("{what} within 60 s: {}", shown()));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    for i in 0..20 {
        let p = format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":"s-live","prompt":"p{i}"}}"#
        );
        let out = hook(&j, p.as_bytes(), &[]);
        assert!(out.status.success());
    }
    // Drawn, then redrawn with the session, while the hooks landed: only then quit.
    wait_until(&mut child, "never redrawn", &|| {
        let s = shown();
        s.matches("hookjournal watch").count() >= 2 && s.contains("s-live")
    });
    child.stdin.as_mut().unwrap().write_all(b"q").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            give_up(&mut child, "watch did not quit on q within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    reader.join().unwrap();
    assert!(status.success());
    let screen = shown();
    assert!(
        screen.contains("\x1b[?1049h") && screen.contains("\x1b[?1049l"),
        "no alternate screen"
    );
    let prompts = events(&j)
        .into_iter()
        .filter(|e| e["name"] == "UserPromptSubmit")
        .count();
    assert_eq!(prompts, 20, "hooks lost while watch ran");
    Ok(())
}

harness_main!(
    statusline_prints_one_line_for_every_documented_shape,
    statusline_colours_by_tier_unless_no_color,
    statusline_records_a_reading_only_when_it_changes,
    statusline_shows_the_task_in_progress_from_the_journal,
    statusline_chains_the_users_own_and_can_only_record,
    cost_shows_transcript_and_host_cost_and_names_the_difference,
    install_statusline_chains_the_users_own_and_uninstall_restores_it,
    install_statusline_without_one_adds_ours_and_uninstall_removes_it,
    watch_once_prints_sessions_burn_context_and_tasks,
    watch_runs_live_in_a_terminal_and_quits_on_q,
);
