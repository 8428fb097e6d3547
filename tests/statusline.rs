//! `hookjournal statusline`: whole lines for the documented input shapes (and missing fields and
//! garbage), readings recorded only when they change, compaction resets, chaining, and cost
//! reconciliation against the host's own figures.

mod common;
use common::harness::{missing, Ran};
use common::{assert_expected, replace_pattern, test_path, CommandOutput, TestEnvironment, BIN};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

const SID: &str = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";

/// `hookjournal statusline ARGS` in the project, `input` on stdin, as Claude Code runs it.
fn statusline(env: &TestEnvironment, input: &[u8], args: &[&str]) -> CommandOutput {
    statusline_with(env, env.command(&env.project), input, args)
}

fn statusline_with(
    env: &TestEnvironment,
    mut c: std::process::Command,
    input: &[u8],
    args: &[&str],
) -> CommandOutput {
    c.arg("statusline")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    CommandOutput {
        stdout: env.normalize(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalize(&String::from_utf8_lossy(&out.stderr)),
        code: out.status.code(),
    }
}

/// The statusline JSON as Claude Code documents it, for a session in `project`.
fn input(project: &Path, session: &str, cost: f64, used: f64) -> String {
    let project = project.to_str().unwrap();
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/home/dev/.claude/projects/x/s.jsonl",
        "cwd": project,
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": project, "project_dir": project},
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

fn host_events(env: &TestEnvironment) -> Vec<serde_json::Value> {
    env.journaled()
        .into_iter()
        .filter(|e| e["kind"] == "HostReported")
        .collect()
}

/// A project whose journal has seen `session` start.
fn started(session: &str) -> TestEnvironment {
    let env = TestEnvironment::new();
    let out = env.hook(
        format!(r#"{{"hook_event_name":"SessionStart","session_id":"{session}","source":"startup","cwd":"/home/dev/acme-api"}}"#).as_bytes(),
        &[],
    );
    assert_eq!(out.code, Some(0), "{}", out.render());
    env
}

fn statusline_prints_one_line_for_every_documented_shape() {
    // No journal at all: still one line, nothing created.
    let env = TestEnvironment::new();
    let documented = |cost, used| input(&env.project, "s1", cost, used);
    let cases: Vec<(String, String)> = vec![
        ("<documented, $0.4213, 42%>".into(), documented(0.4213, 42.0)),
        ("<documented, $12.5, 86.4%>".into(), documented(12.5, 86.4)),
        (String::new(), r#"{"session_id":"s1","model":{"id":"claude-opus-4-1"},"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":100,"cache_creation_input_tokens":150000,"cache_read_input_tokens":0}},"exceeds_200k_tokens":false,"rate_limits":{"five_hour":{"used_percentage":41.6,"resets_at":1790000000},"seven_day":{"used_percentage":12}}}"#.into()),
        (String::new(), r#"{"session_id":"s1","model":{"display_name":"Opus"},"context_window":{"used_percentage":97},"exceeds_200k_tokens":true}"#.into()),
        // Missing fields: no model, no cost, no context.
        (String::new(), r#"{"session_id":"s1"}"#.into()),
        (String::new(), r#"{}"#.into()),
        // Wrong types are treated as absent.
        (String::new(), r#"{"model":7,"cost":{"total_cost_usd":"a lot"},"context_window":{"used_percentage":null}}"#.into()),
        // Payload text cannot drive the terminal or reorder the line.
        (String::new(), r#"{"model":{"display_name":"Evil\u001b[2J\u202eName"}}"#.into()),
        // Garbage.
        (String::new(), "not json at all".into()),
        (String::new(), "[1,2,3]".into()),
        ("<empty>".into(), "".into()),
        (String::new(), "{\"session_id\":".into()),
    ];
    let mut t = String::new();
    for (shown_as, inp) in &cases {
        let what = if shown_as.is_empty() { inp } else { shown_as };
        let out = statusline(&env, inp.as_bytes(), &[]);
        common::step(&mut t, &format!("<statusline> < {what}"), &out);
    }
    assert!(!env.journal().exists(), "the statusline created a journal");
    // Binary garbage and a huge input.
    let out = statusline(&env, &[0xff, 0x00, 0xfe, 0x1b], &[]);
    common::step(&mut t, "<statusline> < <bytes ff 00 fe 1b>", &out);
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(3 << 20));
    let out = statusline(&env, big.as_bytes(), &[]);
    common::step(&mut t, "<statusline> < <a 3 MiB JSON object>", &out);
    assert_expected("statusline/shapes.txt", &t);
}

fn statusline_colours_by_tier_unless_no_color() {
    let env = TestEnvironment::new();
    let mut c = env.command(&env.project);
    c.env_remove("NO_COLOR");
    let out = statusline_with(&env, c, input(&env.project, "s", 1.0, 90.0).as_bytes(), &[]);
    // The escapes shown as `\e`.
    assert_expected(
        "statusline/colours.txt",
        &out.render().replace('\x1b', "\\e"),
    );
}

/// The payloads of the journal's `HostReported` events, with their session and whether they
/// were spooled, normalised.
fn host_reports(env: &TestEnvironment) -> String {
    let reports: Vec<serde_json::Value> = host_events(env)
        .into_iter()
        .map(|e| {
            serde_json::json!({"session_id": e["session_id"], "spooled": e["spooled"], "payload": e["payload"]})
        })
        .collect();
    env.normalize(&format!(
        "{}\n",
        serde_json::to_string_pretty(&reports).unwrap()
    ))
}

fn statusline_records_a_reading_only_when_it_changes() {
    let env = started("s-rec");
    let mut t = String::new();
    let reading = |cost, used| input(&env.project, "s-rec", cost, used);
    for _ in 0..3 {
        let out = statusline(&env, reading(0.30, 20.0).as_bytes(), &[]);
        common::step(&mut t, "<statusline> < <s-rec, $0.30, 20%>", &out);
    }
    assert_eq!(
        host_events(&env).len(),
        1,
        "three identical readings → one event"
    );
    t.push_str("$ <the recorded HostReported events>\n");
    t.push_str(&host_reports(&env));

    // Only the clock moved: still one event.
    let same = reading(0.30, 20.0).replace("45000", "46000");
    statusline(&env, same.as_bytes(), &[]);
    assert_eq!(host_events(&env).len(), 1);

    // The cost changed: a second event.
    statusline(&env, reading(0.55, 31.0).as_bytes(), &[]);
    statusline(&env, reading(0.55, 31.0).as_bytes(), &[]);
    assert_eq!(host_events(&env).len(), 2);

    // Compaction: Claude Code's counter starts again. Recorded, and the host's total is the sum
    // of the epochs' maxima (0.55 + 0.12), not the last reading.
    statusline(&env, reading(0.04, 8.0).as_bytes(), &[]);
    statusline(&env, reading(0.12, 11.0).as_bytes(), &[]);
    assert_eq!(host_events(&env).len(), 4);
    let cost = env.json(&["cost", "--json"]);
    let rec = &cost["reconciliation"]["sessions"][0];
    assert_eq!(rec["session"], "s-rec");
    assert_eq!(rec["host_epochs"], 2);
    assert!(
        (rec["host_usd"].as_f64().unwrap() - 0.67).abs() < 1e-9,
        "{rec}"
    );
    assert_eq!(rec["host_source"], "statusline");
    // `show` has the host's last context reading.
    let show = env.json(&["show", "s-rec", "--json"]);
    assert_eq!(show["host_reported"]["context_tokens"], 15500);
    assert_eq!(show["host_reported"]["epochs"], 2);
    common::step(&mut t, "hookjournal cost", &env.run(&["cost"]));
    assert_expected("statusline/records-on-change.txt", &t);
}

fn statusline_shows_the_task_in_progress_from_the_journal() {
    let env = TestEnvironment::new();
    env.play_claude_session();
    let inp = input(&env.project, SID, 0.2, 16.0);
    // The first call finds no cached facts and starts a refresh in the background.
    let first = statusline(&env, inp.as_bytes(), &[]);
    let mut t = String::new();
    common::step(
        &mut t,
        "<statusline> < <db5b5fab, $0.20, 16%> (no facts cached)",
        &first,
    );
    // A deadline for a hang, not a speed: the refresh is a background process.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let out = statusline(&env, inp.as_bytes(), &[]);
        if out.render() != first.render() {
            common::step(
                &mut t,
                "<statusline> < <db5b5fab, $0.20, 16%> (refreshed)",
                &out,
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "facts never refreshed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_expected("statusline/task-in-progress.txt", &t);
}

fn statusline_chains_the_users_own_and_can_only_record() {
    let mut env = started("s-chain");
    let theirs = "read x; echo \"theirs: ${#x} bytes\"";
    let inp = input(&env.project, "s-chain", 0.3, 20.0);
    // The input's length is the temp directory's: theirs must have read exactly all of it.
    env.redact(
        &format!("theirs: {} bytes", inp.len()),
        "theirs: [INPUT LENGTH] bytes",
    );
    let mut t = String::new();
    let out = statusline(&env, inp.as_bytes(), &["--chain", theirs]);
    common::step(
        &mut t,
        &format!("<statusline> --chain '{theirs}' < <s-chain, $0.30, 20%>"),
        &out,
    );
    let out = statusline(
        &env,
        input(&env.project, "s-chain", 0.4, 20.0).as_bytes(),
        &["--record-only", "--chain", "echo theirs only"],
    );
    common::step(
        &mut t,
        "<statusline> --record-only --chain 'echo theirs only' < <s-chain, $0.40, 20%>",
        &out,
    );
    assert_eq!(host_events(&env).len(), 2, "record-only still records");
    // A chained command that hangs is cut off; ours still prints.
    let t0 = std::time::Instant::now();
    let out = statusline(&env, inp.as_bytes(), &["--chain", "sleep 30"]);
    // Cut off, not waited for: it would run 30 s (the bound is slack for a loaded machine).
    assert!(t0.elapsed() < std::time::Duration::from_secs(25));
    common::step(
        &mut t,
        "<statusline> --chain 'sleep 30' < <s-chain, $0.30, 20%>",
        &out,
    );
    assert_expected("statusline/chain.txt", &t);
}

/// Cost reconciliation on the fixture session (one auto compaction): the transcripts' $0.5497
/// beside the host's epochs (0.36 before the compaction, 0.21 after) = $0.57, the difference
/// named as the compaction's summary request.
fn cost_shows_transcript_and_host_cost_and_names_the_difference() {
    let env = TestEnvironment::new();
    env.play_claude_session();
    for (c, u) in [(0.11, 30.0), (0.36, 80.0), (0.02, 9.0), (0.21, 16.0)] {
        statusline(&env, input(&env.project, SID, c, u).as_bytes(), &[]);
    }
    let v = env.json(&["cost", "--json"]);
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
    assert_expected("statusline/cost.txt", &env.run(&["cost"]).render());
}

fn settings_file(env: &TestEnvironment, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(env.project.join(".claude").join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Appends a settings file's `statusLine` (`None`: the whole file), normalised, to `t`.
fn shown_settings(env: &TestEnvironment, t: &mut String, name: &str, key: Option<&str>) {
    let v = settings_file(env, name);
    let (what, v) = match key {
        Some(k) => (format!("the {k} of .claude/{name}"), &v[k]),
        None => (format!(".claude/{name}"), &v),
    };
    let text = env.normalize(&serde_json::to_string_pretty(v).unwrap());
    t.push_str(&format!("$ <{what}>\n{text}\n\n"));
}

fn install_statusline_chains_the_users_own_and_uninstall_restores_it() {
    let mut env = TestEnvironment::new();
    std::fs::create_dir_all(env.project.join(".claude")).unwrap();
    let theirs = r#"printf '%s' "$(cat | wc -c) \"bytes\" $HOME" | tr -d ' '"#;
    let original = serde_json::json!({
        "model": "sonnet",
        "statusLine": {"type": "command", "command": theirs, "padding": 1}
    });
    std::fs::write(
        env.project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&original).unwrap(),
    )
    .unwrap();
    // The binary, as install registers it.
    let bin = std::fs::canonicalize(BIN).unwrap();
    env.redact(bin.to_str().unwrap(), "$BIN");

    let mut t = String::new();
    env.step(&mut t, &["install", "--statusline"]);
    shown_settings(&env, &mut t, "settings.json", Some("statusLine"));
    let registered = settings_file(&env, "settings.json")["statusLine"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    // Installing again changes nothing; the chained command is not wrapped twice.
    env.step(&mut t, &["install", "--statusline"]);
    assert_eq!(
        settings_file(&env, "settings.json")["statusLine"]["command"],
        registered.as_str()
    );

    // The registered command, run the way Claude Code runs it (sh -c, JSON on stdin): our line,
    // then theirs, which got the same input.
    std::fs::create_dir_all(env.journal()).unwrap();
    let inp = input(&env.project, "s-inst", 0.3, 20.0);
    // The input's length is the temp directory's: theirs must have counted exactly all of it.
    env.redact(
        &format!("{}\"bytes\"", inp.len()),
        "[INPUT LENGTH]\"bytes\"",
    );
    let out = env.run_shell(&registered, &env.project, &[], inp.as_bytes());
    common::step(
        &mut t,
        "<the registered status line> < <s-inst, $0.30, 20%>",
        &out,
    );

    // Record-only: theirs alone is shown.
    env.step(
        &mut t,
        &["install", "--statusline", "--statusline-record-only"],
    );
    shown_settings(&env, &mut t, "settings.json", Some("statusLine"));

    // Uninstall gives back exactly what the user had.
    env.step(&mut t, &["uninstall"]);
    assert_eq!(settings_file(&env, "settings.json"), original);
    assert_expected("statusline/install-chained.txt", &t);
}

fn install_statusline_without_one_adds_ours_and_uninstall_removes_it() {
    let mut env = TestEnvironment::new();
    let bin = std::fs::canonicalize(BIN).unwrap();
    env.redact(bin.to_str().unwrap(), "$BIN");
    let mut t = String::new();
    env.step(&mut t, &["install", "--statusline", "--scope", "local"]);
    shown_settings(&env, &mut t, "settings.local.json", Some("statusLine"));
    env.step(&mut t, &["uninstall", "--scope", "local"]);
    shown_settings(&env, &mut t, "settings.local.json", None);
    assert_expected("statusline/install-local.txt", &t);
}

fn watch_once_prints_sessions_burn_context_and_tasks() {
    let mut env = TestEnvironment::new();
    env.play_claude_session();
    // Not pinned (watch shows the time of day): ages from the real clock are normalised.
    env.normalize_ages();
    statusline(&env, input(&env.project, SID, 0.61, 16.0).as_bytes(), &[]);
    let mut t = String::new();
    // watch never drains the spool (it would hold the lock longer): the reading waits there.
    env.step(&mut t, &["watch", "--once"]);
    // Once a writer has ingested it, the host's figure (above the transcripts') shows.
    env.step(&mut t, &["drain"]);
    env.step(&mut t, &["watch", "--once"]);
    let t = replace_pattern(&t, " · dd:dd:dd\n", " · [CLOCK]\n");
    assert_expected("statusline/watch-once.txt", &last_column_fixed(&t));
}

/// The LAST column at one width: its age ("1s ago" or "12s ago", shown `[AGO]`) sets it.
fn last_column_fixed(text: &str) -> String {
    let collapse = |line: &str, after: &str| match line.find(after) {
        Some(at) => {
            let end = at + after.len();
            let rest = line[end..].trim_start_matches(' ');
            format!("{}  {rest}", &line[..end])
        }
        None => line.to_string(),
    };
    text.split_inclusive('\n')
        .map(|l| {
            if l.starts_with("SESSION ") {
                collapse(l, "LAST")
            } else {
                collapse(l, "[AGO]")
            }
        })
        .collect()
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
    let env = started("s-live");
    // What the screen shows is the terminal's and the redraws' timing: only properties are
    // checked here, not the whole output.
    let mut child = std::process::Command::new("/usr/bin/script")
        .args(["-q", "-e", "-c"])
        .arg(format!("{BIN} watch --interval 100"))
        .arg("/dev/null")
        .env_clear()
        .env("PATH", test_path())
        .env("HOME", &env.home)
        .env("NO_COLOR", "1")
        .env("HOOKJOURNAL_DRAINER", "inline")
        .current_dir(&env.project)
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
        let out = env.hook_raw(p.as_bytes(), &[]);
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
    let prompts = env
        .journaled()
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
