//! A new user's first hour, end to end and compared as whole outputs: install → first events →
//! every read command → uninstall, each command's `--help`, and the messages that once stumbled
//! (issue 16). Expected outputs live in `tests/expected/`; `HOOKJOURNAL_BLESS=1` rewrites them.

mod common;

use common::{assert_expected, CommandOutput, TestEnvironment};
use std::path::Path;

const SESSION: &str = "0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70";

/// A fixture payload from `tests/fixtures/events/claude`, set in `project` (its `cwd`).
fn payload(name: &str, project: &Path) -> Vec<u8> {
    let p = common::fixtures().join("events/claude").join(name);
    std::fs::read_to_string(p)
        .unwrap()
        .replace("/home/dev/acme-api", project.to_str().unwrap())
        .into_bytes()
}

/// The command `install` registered for `event` in the project's Claude Code settings.
fn registered_command(env: &TestEnvironment, event: &str) -> String {
    let text = std::fs::read_to_string(env.project.join(".claude/settings.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["hooks"][event][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no hook registered for {event}: {text}"))
        .to_string()
}

/// Appends `$ hookjournal ARGS` and the command's whole output to a transcript.
fn step(transcript: &mut String, shown: &str, out: &CommandOutput) {
    transcript.push_str(&format!("$ {shown}\n{}\n", out.render()));
}

/// The latest `recorded_at` in the journal, in microseconds.
fn last_recorded_us(env: &TestEnvironment) -> i64 {
    let out = env.run(&["export", "--report", "events"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    // Read from the raw output: normalisation hides the times.
    let raw = env
        .command(&env.project)
        .args(["export", "--report", "events"])
        .output()
        .unwrap();
    String::from_utf8(raw.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["recorded_at_us"].as_i64().unwrap()
        })
        .max()
        .expect("at least one event")
}

fn rfc3339(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[test]
fn new_user_walkthrough_from_install_to_uninstall() {
    let mut env = TestEnvironment::new();
    let mut t = String::new();
    let install = env.run(&["install"]);
    step(&mut t, "hookjournal install", &install);

    // `status` right after install, before any event: an empty journal, not an error.
    let empty = env.run(&["status"]);
    step(&mut t, "hookjournal status", &empty);

    // The first events, through the very command install registered, as Claude Code runs it.
    for (event, file) in [
        ("SessionStart", "SessionStart-startup.json"),
        ("UserPromptSubmit", "UserPromptSubmit.json"),
        ("PostToolUse", "PostToolUse-TodoWrite.json"),
        ("PostToolUse", "PostToolUse-TaskCreate.json"),
    ] {
        let command = registered_command(&env, event);
        let project = env.project.clone();
        let out = env.run_shell(
            &command,
            &project,
            &[("CLAUDE_PROJECT_DIR", project.to_str().unwrap())],
            &payload(file, &project),
        );
        step(&mut t, &format!("<{event} hook> < {file}"), &out);
    }

    // Relative times against a pinned "now", 90 s after the last event.
    let now = rfc3339(last_recorded_us(&env) + 90_000_000);
    env.set_env("HOOKJOURNAL_NOW", &now);
    let head = env.run(&["status", "--json"]).stdout;
    let head: serde_json::Value = serde_json::from_str(&head).unwrap();
    env.redact(&head["head_hash"].as_str().unwrap()[..16], "[CHAIN HEAD]");

    for args in [
        &["status"][..],
        &["sessions"],
        &["show", "0b7c"],
        &["tasks"],
        &["cost"],
        &["export", "--report", "sessions"],
        &["uninstall"],
    ] {
        let out = env.run(args);
        step(&mut t, &format!("hookjournal {}", args.join(" ")), &out);
        assert_eq!(out.code, Some(0), "{}", out.render());
        assert!(out.stderr.is_empty(), "{}", out.render());
    }
    assert!(!t.contains("no journal"), "{t}");
    assert!(!t.contains("[exit status"), "{t}");
    assert!(!t.contains("[stderr]"), "{t}");
    assert!(t.contains(SESSION), "{t}");
    assert_expected("walkthrough.txt", &t);
}

/// Every command and subcommand, for `--help`.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["hook"],
    &["install"],
    &["uninstall"],
    &["doctor"],
    &["status"],
    &["trust"],
    &["sessions"],
    &["show"],
    &["replay"],
    &["search"],
    &["export"],
    &["import"],
    &["cost"],
    &["tasks"],
    &["tasks", "list"],
    &["tasks", "show"],
    &["tasks", "add"],
    &["tasks", "claim"],
    &["tasks", "release-stale"],
    &["tasks", "start"],
    &["tasks", "done"],
    &["tasks", "fail"],
    &["tasks", "reopen"],
    &["notifications"],
    &["context"],
    &["rewind"],
    &["verify"],
    &["recover"],
    &["drain"],
    &["ship"],
    &["statusline"],
    &["report"],
    &["watch"],
    &["demo"],
    &["completions"],
    &["man"],
];

#[test]
fn every_command_and_flag_has_help_text() {
    let env = TestEnvironment::new();
    // Every command the binary lists is in COMMANDS (a new one cannot slip by untested).
    let top = env.run(&["--help"]).stdout;
    let listed: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    for c in &listed {
        assert!(
            COMMANDS.iter().any(|cmd| cmd.first() == Some(c)),
            "`hookjournal {c}` is not in COMMANDS"
        );
    }
    for cmd in COMMANDS {
        let mut args = cmd.to_vec();
        args.push("--help");
        let out = env.run(&args);
        assert_eq!(out.code, Some(0), "{}", out.render());
        let name = if cmd.is_empty() {
            "hookjournal".to_string()
        } else {
            cmd.join("-")
        };
        let usage = format!("Usage: hookjournal {}", cmd.join(" "));
        assert!(out.stdout.contains(usage.trim_end()), "{}", out.stdout);
        // Every flag and argument line says what it is (clap prints a bare name otherwise).
        // (Short layout: text on the same line; long layout: on the next line.)
        let lines: Vec<&str> = out.stdout.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let l = line.trim_start();
            let upper = |i: usize| l.as_bytes().get(i).is_some_and(u8::is_ascii_uppercase);
            let is_arg = l.starts_with("--")
                || (l.starts_with('<') && upper(1))
                || (l.starts_with('[') && upper(1));
            let is_short = l.len() > 2 && l.starts_with('-') && l.as_bytes()[2] == b',';
            if (is_arg || is_short) && line.starts_with("  ") {
                // Same line: text after the padding (clap pads even a flag with no help, so the
                // line is trimmed first). Next line: a description, not the next flag.
                let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
                let next_is_text = !next.is_empty()
                    && !next.starts_with('-')
                    && !next.starts_with('<')
                    && !next.starts_with('[');
                assert!(
                    l.trim_end().contains("  ") || next_is_text,
                    "`hookjournal {name}`: no help for {l}"
                );
            }
        }
        assert_expected(&format!("help/{name}.txt"), &out.render());
    }
}

#[test]
fn completions_and_man_pages_cover_every_command() {
    let env = TestEnvironment::new();
    let top = env.run(&["--help"]).stdout;
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.contains(&"install") && commands.contains(&"completions"));
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = env.run(&["completions", shell]);
        assert_eq!(out.code, Some(0), "{}", out.render());
        for c in &commands {
            assert!(out.stdout.contains(c), "{shell} completions lack `{c}`");
        }
        // A flag's values come from the same definition: install's hosts.
        assert!(out.stdout.contains("openclaw"), "{shell}: no --host values");
    }
    let out = env.run(&["completions", "tcsh"]);
    assert_eq!(out.code, Some(2), "{}", out.render());
    assert!(
        out.stderr.starts_with("error: invalid value 'tcsh'"),
        "{}",
        out.stderr
    );

    let page = env.run(&["man"]);
    assert_eq!(page.code, Some(0), "{}", page.render());
    assert!(
        page.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "not roff: {}",
        page.stdout
    );
    assert!(page.stdout.contains(".TH hookjournal 1"));
    let dir = env.root().join("man1");
    let out = env.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    for c in &commands {
        let file = dir.join(format!("hookjournal-{c}.1"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!(".TH hookjournal-{c} 1")), "{text}");
    }
    assert!(dir.join("hookjournal.1").is_file());
    assert!(
        !dir.join("hookjournal-follow-session.1").exists(),
        "a hidden command got a page"
    );
}

#[test]
fn install_from_a_subdirectory_edits_the_project_root() {
    let env = TestEnvironment::new();
    std::fs::create_dir(env.project.join(".git")).unwrap();
    let sub = env.project.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let mut t = String::new();
    step(
        &mut t,
        "hookjournal install",
        &env.run_in(&sub, &["install"]),
    );
    step(&mut t, "hookjournal status", &env.run_in(&sub, &["status"]));
    step(
        &mut t,
        "hookjournal uninstall",
        &env.run_in(&sub, &["uninstall"]),
    );
    assert_expected("install-from-subdirectory.txt", &t);
    assert!(env.project.join(".claude/settings.json").is_file());
    assert!(env.project.join(".hookjournal").is_dir());
    assert!(!sub.join(".claude").exists() && !sub.join(".hookjournal").exists());
}

#[test]
fn hook_with_a_missing_project_dir_creates_no_directories() {
    let env = TestEnvironment::new();
    let missing = env.root().join("nonexistent/x");
    let out = env.run_shell(
        &format!("\"{}\" hook", common::BIN),
        &env.project,
        &[("CLAUDE_PROJECT_DIR", missing.to_str().unwrap())],
        &payload("SessionStart-startup.json", &env.project),
    );
    assert_expected("hook-missing-project-dir.txt", &out.render());
    assert!(!env.root().join("nonexistent").exists());
    // Nothing lost: the event is where the readers look from the cwd.
    let status = env.run(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert!(v["events"].as_u64().unwrap() >= 1, "{}", status.render());
}

#[test]
fn hook_at_a_terminal_says_what_it_waits_for() {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let env = TestEnvironment::new();
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty fills two fds we then own; no name/termios/winsize.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both fds are open and ours alone.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let child = env
        .command(&env.project)
        .arg("hook")
        .stdin(slave)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-D at the start of a line: end of input on the terminal.
    master.write_all(b"\x04").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(master);
    let rendered = CommandOutput {
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
        code: out.status.code(),
    };
    assert_expected("hook-at-a-terminal.txt", &rendered.render());
    // With a payload on a pipe, nothing is said.
    let piped = env.run_shell(
        &format!("\"{}\" hook", common::BIN),
        &env.project,
        &[],
        &payload("SessionStart-startup.json", &env.project),
    );
    assert_eq!(piped.stderr, "", "{}", piped.render());
}

#[test]
fn replay_refuses_an_unknown_kind() {
    let env = TestEnvironment::new();
    let mut t = String::new();
    env.run(&["install"]);
    step(
        &mut t,
        "hookjournal replay --kind Bogus",
        &env.run(&["replay", "--kind", "Bogus"]),
    );
    step(
        &mut t,
        "hookjournal replay --kind Hook:Stop",
        &env.run(&["replay", "--kind", "Hook:Stop"]),
    );
    assert_expected("replay-unknown-kind.txt", &t);
}

#[test]
fn demo_never_adds_to_an_existing_journal() {
    let env = TestEnvironment::new();
    let mut t = String::new();
    step(
        &mut t,
        "hookjournal --journal j demo",
        &env.run(&["--journal", "j", "demo"]),
    );
    let kept = env.run(&["demo", "--keep", "kept"]);
    assert_eq!(kept.code, Some(0), "{}", kept.render());
    let events = |env: &TestEnvironment| {
        let s = env.run(&["--journal", "kept", "status", "--json"]).stdout;
        serde_json::from_str::<serde_json::Value>(&s).unwrap()["events"].clone()
    };
    let before = events(&env);
    step(
        &mut t,
        "hookjournal demo --keep kept",
        &env.run(&["demo", "--keep", "kept"]),
    );
    assert_eq!(events(&env), before, "the second demo added events");
    assert!(!env.project.join("j").exists());
    assert_expected("demo-refusals.txt", &t);
}

#[test]
fn rewind_says_what_it_changes_and_what_still_holds() {
    let env = TestEnvironment::new();
    env.run(&["install"]);
    for file in [
        "SessionStart-startup.json",
        "UserPromptSubmit.json",
        "PostToolUse-TodoWrite.json",
        "PreToolUse-Bash.json",
        "Stop.json",
    ] {
        let out = env.run_shell(
            &format!("\"{}\" hook", common::BIN),
            &env.project,
            &[],
            &payload(file, &env.project),
        );
        assert_eq!(out.code, Some(0));
    }
    let mut t = String::new();
    for args in [
        &["replay", "--session", "0b7c", "--kind", "Hook"][..],
        &["rewind", "0b7c", "--to", "0"],
        &["rewind", "0b7c", "--to", "99"],
        &["rewind", "0b7c", "--to", "4"],
        &["rewind", "0b7c", "--to", "2"],
        &["rewind", "0b7c", "--to", "3"],
        &["show", "0b7c"],
    ] {
        step(
            &mut t,
            &format!("hookjournal {}", args.join(" ")),
            &env.run(args),
        );
    }
    assert_expected("rewind-messages.txt", &t);
}

/// What the cookbook says about importing a redacted or filtered export: it imports only while
/// its lines are still a whole, unmasked chain from seq 1 (then it is that prefix of the journal);
/// otherwise import names the first line that breaks the chain and leaves nothing behind.
#[test]
fn redacted_or_filtered_exports_import_only_as_an_unbroken_chain() {
    let env = TestEnvironment::new();
    env.run(&["install"]);
    let hook = |payload: &[u8]| {
        let out = env.run_shell(
            &format!("\"{}\" hook", common::BIN),
            &env.project,
            &[],
            payload,
        );
        assert_eq!(out.code, Some(0), "{}", out.render());
    };
    // One line each, as the hosts send them (a payload with newlines is exported as text).
    let compact = |name: &str| {
        let v: serde_json::Value = serde_json::from_slice(&payload(name, &env.project)).unwrap();
        serde_json::to_vec(&v).unwrap()
    };
    hook(&compact("SessionStart-startup.json"));
    hook(&compact("UserPromptSubmit.json"));
    // A second session, whose prompt holds a secret.
    hook(br#"{"session_id":"5ec2e700-0000-4000-8000-000000000001","hook_event_name":"UserPromptSubmit","prompt":"deploy with sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","cwd":"/x"}"#);
    let now = rfc3339(last_recorded_us(&env) + 90_000_000);
    let mut env = env;
    env.set_env("HOOKJOURNAL_NOW", &now);
    let mut t = String::new();
    for args in [
        &[
            "export",
            "--report",
            "events",
            "--redact",
            "--session",
            "0b7c",
            "--out",
            "first.jsonl",
        ][..],
        &["--journal", "r1", "import", "--events", "first.jsonl"],
        &["--journal", "r1", "status"],
        &[
            "export",
            "--report",
            "events",
            "--redact",
            "--out",
            "all.jsonl",
        ],
        &["--journal", "r2", "import", "--events", "all.jsonl"],
        &[
            "export",
            "--report",
            "events",
            "--session",
            "5ec2",
            "--out",
            "second.jsonl",
        ],
        &["--journal", "r3", "import", "--events", "second.jsonl"],
    ] {
        step(
            &mut t,
            &format!("hookjournal {}", args.join(" ")),
            &env.run(args),
        );
    }
    let t = common::replace_pattern(&t, " xxxxxxxxxxxxxxxx\n", " [CHAIN HEAD]\n");
    assert_expected("import-redacted-or-filtered.txt", &t);
    assert!(!env.project.join("r2").exists() && !env.project.join("r3").exists());
}

#[test]
fn demo_prints_every_view_whole() {
    let mut env = TestEnvironment::new();
    // Far after the demo's events: relative times become a date, the same on every run.
    env.set_env("HOOKJOURNAL_NOW", "2099-01-01T00:00:00Z");
    let out = env.run(&["demo", "--keep", "kept"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let mut text = out.render();
    // The hook's timing is the one figure that differs between runs.
    let at = text
        .find(" ms per hook")
        .expect("the demo reports its hook timing");
    let start = text[..at].rfind('(').expect("timing in parentheses") + 1;
    text.replace_range(start..at, "[MS]");
    let text = common::replace_pattern(&text, "[MINUTE]:dd", "[SECOND]");
    let text = common::replace_pattern(&text, "dddd-dd-dd", "[DAY]");
    assert_expected("demo.txt", &text);
}

#[test]
fn colour_follows_no_color_and_clicolor_force() {
    let env = TestEnvironment::new();
    env.run(&["demo", "--keep", "kept"]);
    let show = |vars: &[(&str, &str)]| {
        let mut c = env.command(&env.project);
        c.env_remove("NO_COLOR")
            .args(["--journal", "kept", "sessions"]);
        for (k, v) in vars {
            c.env(k, v);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    // Piped: plain, unless forced; NO_COLOR wins over forcing.
    assert!(!show(&[]).contains('\x1b'));
    let forced = show(&[("CLICOLOR_FORCE", "1")]);
    assert!(
        forced.contains("\x1b[32mended") || forced.contains("\x1b[1m"),
        "{forced:?}"
    );
    assert!(!show(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'));
}
