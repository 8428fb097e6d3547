//! Auggie's real payloads (tests/fixtures/real-hosts/auggie-0.36.0), given/when/then: each
//! reads as the host table says, from Auggie's own shape (`conversation_id`, `workspace_roots`,
//! pretty-printed, Claude Code's event names and `PromptSubmit`); it is told from Cursor's own
//! payloads (the same two fields, camelCase names, `cursor_version`) and from every other host by
//! that shape alone and by the variables its hooks get; PreToolUse's `"[undefined]"` output is
//! no output and a PostToolUse with `tool_error` a failure; hookjournal answers it only where it
//! reads an answer (PostToolUse's `additionalContext`); and its session record gives each
//! exchange once, with the session's model.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host, SessionFileFormat};
use projections::hosts::auggie::session_file;
use projections::hosts::AUGGIE;
use projections::scenario::Scenario;

const SESSION: &str = "2536fee0-b933-4573-ac64-9397771e3b85";

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/auggie-0.36.0")
}

fn payload(stem: &str) -> String {
    std::fs::read_to_string(dir().join(format!("{stem}.json"))).unwrap()
}

/// Every recorded payload: (stem, text).
fn payloads() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_auggie_payload_reads_as_the_table_says_and_is_told_by_its_shape_and_its_variables() {
    let all = payloads();
    // Three registrations (project, local, user) of the same run, a failed view, and a handler
    // registered under Cursor's `stop` (Auggie sends its own name for it).
    assert_eq!(all.len(), 3 * 8 + 1 + 1);
    for (stem, text) in all {
        let bytes = text.as_bytes();
        assert!(text.starts_with("{\n  \""), "{stem}: pretty-printed");
        let ev = event::parse(&Host::Auggie, bytes).unwrap_or_else(|| panic!("{stem}"));
        let meaning = AUGGIE.event(&ev.name).unwrap_or_else(|| panic!("{stem}"));
        // A failed tool's PostToolUse is its failure.
        if stem.ends_with("-error") {
            assert!(
                matches!(ev.canonical, Canonical::ToolFailure { .. }),
                "{stem}"
            );
        } else {
            assert_eq!(ev.canonical.kind(), meaning.kind, "{stem}");
        }
        assert!(
            ev.session_id.as_deref().is_some_and(|s| s.len() == 36),
            "{stem}"
        );
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"), "{stem}");
        // By its shape alone, whatever --host says, and by its hook's environment.
        assert_eq!(event::detect_host(bytes, None), Host::Auggie, "{stem}");
        assert_eq!(
            event::detect_host(bytes, Some("cursor")),
            Host::Auggie,
            "{stem}"
        );
        let env = std::fs::read_to_string(dir().join(format!("{stem}.env"))).unwrap();
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        let caller = CallerEnv::read(|n| names.contains(&n)).caller();
        assert_eq!(caller, Some(Host::Auggie), "{stem}");
        let (host, parsed) = event::read(bytes, None, &CallerEnv::default(), None);
        assert_eq!(host, Host::Auggie, "{stem}");
        assert!(parsed.is_some(), "{stem}");
    }
    // The programs its launch-process tool runs get AUGMENT_AGENT, not the hook's own.
    assert_eq!(
        CallerEnv::read(|n| n == "AUGMENT_AGENT" || n == "AUGMENT_SESSION_AUTH").caller(),
        None
    );
}

#[test]
fn cursors_own_payloads_stay_cursors() {
    let events =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/events/cursor");
    let mut n = 0;
    for e in std::fs::read_dir(events).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        assert_eq!(
            event::detect_host(&bytes, None),
            Host::Cursor,
            "{}",
            e.path().display()
        );
        n += 1;
    }
    assert!(n >= 8);
}

#[test]
fn an_auggie_tool_call_is_its_input_and_output_and_a_tool_error_is_a_failure() {
    let read = |stem: &str| event::parse(&Host::Auggie, payload(stem).as_bytes()).unwrap();
    match read("project.PreToolUse-launch-process").canonical {
        Canonical::ToolPre { tool, input } => {
            assert_eq!(tool, "launch-process");
            assert_eq!(
                input.unwrap()["command"],
                "echo hj-shell-ran > shell_out.txt && cat shell_out.txt"
            );
        }
        other => panic!("{other:?}"),
    }
    match read("project.PostToolUse-view").canonical {
        Canonical::ToolPost {
            tool,
            input,
            response,
        } => {
            assert_eq!(tool, "view");
            assert_eq!(input.unwrap()["path"], "/home/dev/acme-api/README.md");
            assert!(response
                .unwrap()
                .as_str()
                .unwrap()
                .contains("# demo project"));
        }
        other => panic!("{other:?}"),
    }
    match read("project.PostToolUse-view-error").canonical {
        Canonical::ToolFailure { tool, error, .. } => {
            assert_eq!(tool, "view");
            assert!(error.starts_with("File not found"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    match read("project.PromptSubmit").canonical {
        Canonical::Prompt { text } => assert_eq!(text, "Add a CHANGES file and run the tests."),
        other => panic!("{other:?}"),
    }
    match read("project.Stop-end_turn").canonical {
        Canonical::Stop { last_message, .. } => {
            assert_eq!(last_message.as_deref(), Some("HJ-MOCK-FINAL: all done."))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn auggies_sessions_see_its_reads_commands_and_failures() {
    Scenario::default()
        .host(Host::Auggie)
        .given_hook(&payload("project.SessionStart"))
        .given_hook(&payload("project.PreToolUse-launch-process"))
        .given_hook(&payload("project.PostToolUse-launch-process"))
        .given_hook(&payload("project.PreToolUse-view"))
        .when_hook(&payload("project.PostToolUse-view"))
        .then_state(|state| {
            let s = &state.sessions[SESSION];
            assert_eq!(s.files_read, ["/home/dev/acme-api/README.md"]);
            assert_eq!(s.tool_calls, 2);
        });
}

#[test]
fn auggie_gets_the_task_reminder_after_a_tool_and_nothing_anywhere_else() {
    let mut s = Scenario::default()
        .host(Host::Auggie)
        .given_task_command(TaskOp::Add, "T1", Some("Migrate the billing tables"), None)
        .given_hook(&payload("project.SessionStart"));
    s = s
        .when_hook(&payload("project.PromptSubmit"))
        .then_no_answer()
        .and();
    // The prompt and eight tool calls since the task was used: nothing said, before a tool
    // included; the reminder is due at the ninth's result (ten tool calls and prompts).
    for _ in 0..8 {
        s = s
            .when_hook(&payload("project.PreToolUse-view"))
            .then_no_answer()
            .and();
        s = s
            .when_hook(&payload("project.PostToolUse-view"))
            .then_no_answer()
            .and();
    }
    s = s
        .when_hook(&payload("project.PreToolUse-launch-process"))
        .then_no_answer()
        .and();
    let then = s.when_hook(&payload("project.PostToolUse-launch-process"));
    let answer = then.decision.output().expect("a reminder after the tool");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("nested additionalContext: {answer}"));
    assert!(context.contains("Migrate the billing tables"), "{context}");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    then.and()
        .when_hook(&payload("project.Stop-end_turn"))
        .then_no_answer();
}

#[test]
fn install_registers_auggies_seven_events_in_milliseconds_with_a_matcher_on_tool_events_only() {
    let names: Vec<&str> = AUGGIE.registered().map(|(e, _)| e.name).collect();
    assert_eq!(names.len(), 7);
    for (e, r) in AUGGIE.registered() {
        assert_eq!(
            r.tool_matcher,
            e.name.ends_with("ToolUse"),
            "{}: a matcher on tool events only",
            e.name
        );
    }
    let install = AUGGIE.install.unwrap();
    assert_eq!(install.timeout_scale, 1000);
    assert_eq!(
        install.format,
        projections::host::HookFileFormat::GroupedRegex
    );
    let p = std::path::Path::new("/p");
    use projections::host::Scope;
    assert_eq!(
        install.settings_path(Scope::Local, p, None),
        Some("/p/.augment/settings.local.json".into())
    );
    assert_eq!(
        install.settings_path(Scope::User, p, Some(std::path::Path::new("/h/.augment"))),
        Some("/h/.augment/settings.json".into())
    );
}

#[test]
fn the_session_record_gives_each_exchange_once_with_the_sessions_model() {
    let bytes =
        std::fs::read(dir().join(format!("session-files/sessions/{SESSION}.json"))).unwrap();
    let scan = session_file::scan(&bytes, SESSION);
    assert_eq!(scan.records.len(), 3);
    let input: u64 = scan.records.iter().map(|r| r.usage.input_tokens).sum();
    assert_eq!(input, 7111 + 7405 + 7700);
    let output: u64 = scan.records.iter().map(|r| r.usage.output_tokens).sum();
    assert_eq!(output, 36);
    assert!(scan.records.iter().all(|r| r.request_id == SESSION));
    let mut ids: Vec<&str> = scan.records.iter().map(|r| r.message_id.as_str()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each exchange once");
    // This run let the backend choose its model: none named.
    assert!(scan.records.iter().all(|r| r.model.is_empty()));
    assert_eq!(scan.context.unwrap().tokens, 7700);
    // With a model chosen (`--model`), every exchange is that model's.
    let text = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"modelId\": \"\"", "\"modelId\": \"claude-sonnet-4-5\"");
    let named = session_file::scan(text.as_bytes(), SESSION);
    assert!(named.records.iter().all(|r| r.model == "claude-sonnet-4-5"));
    // A file cut short: nothing.
    assert_eq!(
        session_file::scan(&bytes[..bytes.len() - 10], SESSION).records,
        []
    );
}

#[test]
fn stop_and_session_end_read_the_session_record_where_auggie_keeps_it() {
    let ev = event::parse(&Host::Auggie, payload("project.Stop-end_turn").as_bytes()).unwrap();
    let plan = projections::observe::plan(&ev, None);
    assert_eq!(plan.reads.len(), 1);
    let r = &plan.reads[0];
    assert_eq!(r.format, SessionFileFormat::AuggieSession);
    assert_eq!(r.path, format!("sessions/{SESSION}.json"));
    assert_eq!(r.under.unwrap(), &[("HOME", ".augment")]);
    // After a tool, nothing is read.
    let post = event::parse(
        &Host::Auggie,
        payload("project.PostToolUse-view").as_bytes(),
    )
    .unwrap();
    assert_eq!(projections::observe::plan(&post, None).reads, []);
}
