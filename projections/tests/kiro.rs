//! Kiro CLI, from its source (tests/fixtures/documented/kiro, built from the serializer of the
//! Amazon Q Developer CLI it was renamed from, not captured: Kiro is not run here),
//! given/when/then: its payloads are told from Cursor's (the same camelCase `preToolUse`,
//! `postToolUse` and `stop`) by its own `agentSpawn` and `userPromptSubmit` and by carrying
//! neither `cursor_version` nor `conversation_id`; a `postToolUse` with `success: false` is a
//! failure; the context it reads (the stdout of `agentSpawn` and `userPromptSubmit`) is answered
//! as plain text, and nothing anywhere else.

use projections::derived::TaskOp;
use projections::event::{self, Canonical, EventKind};
use projections::host::{CallerEnv, Host, Scope};
use projections::hosts::KIRO;
use projections::policy::Answer;
use projections::scenario::Scenario;
use std::path::{Path, PathBuf};

fn dir(host: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(host)
}

/// Every payload of a fixture directory, in order: (stem, text).
fn payloads(host: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir(host))
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

fn ev(stem: &str) -> projections::event::HookEvent {
    let all = payloads("documented/kiro");
    let (_, text) = all.iter().find(|(s, _)| s == stem).unwrap();
    event::parse(&Host::Kiro, text.as_bytes()).unwrap()
}

#[test]
fn kiros_payloads_are_its_own_and_cursors_stay_cursors() {
    let none = CallerEnv::read(|_| false);
    let all = payloads("documented/kiro");
    assert_eq!(all.len(), 9);
    for (stem, payload) in &all {
        let bytes = payload.as_bytes();
        for hint in [None, Some("claude"), Some("cursor"), Some("kiro")] {
            assert_eq!(
                event::detect_host_with(bytes, hint, &none),
                Host::Kiro,
                "{stem} (--host {hint:?})"
            );
        }
        let (_, ev) = event::read(bytes, None, &none, None);
        let ev = ev.unwrap_or_else(|| panic!("{stem}"));
        let kind = KIRO.event(&ev.name).unwrap().kind;
        let failed = stem == "06.postToolUse";
        assert_eq!(
            ev.canonical.kind(),
            if failed { EventKind::ToolFailure } else { kind },
            "{stem}"
        );
        // Kiro sends no session id: the session is its directory's.
        assert_eq!(ev.session_id.as_deref(), Some("kiro:/home/dev/acme-api"));
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"));
    }
    // Cursor's payloads (camelCase names too, with `cursor_version` and `conversation_id`) are
    // still Cursor's.
    let cursor = payloads("events/cursor");
    assert_eq!(cursor.len(), 8);
    for (stem, payload) in cursor {
        assert_eq!(
            event::detect_host_with(payload.as_bytes(), None, &none),
            Host::Cursor,
            "{stem}"
        );
    }
}

#[test]
fn a_tool_call_reads_with_kiros_own_names_and_a_failed_one_is_a_failure() {
    assert!(matches!(&ev("03.preToolUse").canonical,
        Canonical::ToolPre { tool, input: Some(i) } if tool == "execute_bash" && i["command"] == "npm test"));
    assert!(matches!(&ev("04.postToolUse").canonical,
        Canonical::ToolPost { tool, response: Some(r), .. }
            if tool == "execute_bash" && r["result"][0]["exit_status"] == "1"));
    assert!(matches!(&ev("06.postToolUse").canonical,
        Canonical::ToolFailure { tool, error, .. }
            if tool == "fs_read" && error.starts_with("An error occurred processing the tool: \nfailed to read")));
    assert!(matches!(&ev("07.preToolUse").canonical,
        Canonical::ToolPre { tool, .. } if tool == "@git/git_status"));
    assert!(matches!(&ev("02.userPromptSubmit").canonical,
        Canonical::Prompt { text } if text == "run the tests and fix what fails"));
    assert!(matches!(
        &ev("01.agentSpawn").canonical,
        Canonical::SessionStart { .. }
    ));
    assert!(matches!(
        &ev("09.stop").canonical,
        Canonical::Stop {
            last_message: None,
            ..
        }
    ));
}

#[test]
fn kiro_gets_the_open_tasks_as_plain_text_at_agent_spawn_and_nothing_at_a_tool_or_stop() {
    let all = payloads("documented/kiro");
    let text = |stem: &str| all.iter().find(|(s, _)| s == stem).unwrap().1.clone();
    let s = Scenario::default().host(Host::Kiro).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    let then = s.when_hook(&text("01.agentSpawn"));
    let printed = then.decision.output_text();
    assert!(
        printed.contains("Migrate the billing tables"),
        "the open tasks: {printed}"
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&printed).is_err(),
        "plain text, no JSON: {printed}"
    );
    assert!(matches!(
        Answer::from_recorded(&printed),
        Some(Answer::CompactionText(t)) if t == printed
    ));
    let mut s = then.and();
    for stem in [
        "02.userPromptSubmit",
        "03.preToolUse",
        "04.postToolUse",
        "05.preToolUse",
        "06.postToolUse",
        "07.preToolUse",
        "08.postToolUse",
        "09.stop",
    ] {
        s = s.when_hook(&text(stem)).then_no_answer().and();
    }
}

#[test]
fn install_writes_an_agent_of_its_own_with_no_matcher_and_timeouts_in_ms() {
    let i = KIRO.install.unwrap();
    assert_eq!(
        i.settings_path(Scope::Project, Path::new("/p"), None),
        Some(PathBuf::from("/p/.kiro/agents/hookjournal.json"))
    );
    assert_eq!(
        i.settings_path(
            Scope::User,
            Path::new("/p"),
            Some(Path::new("/h/.kiro/agents"))
        ),
        Some(PathBuf::from("/h/.kiro/agents/hookjournal.json"))
    );
    assert_eq!(i.timeout_scale, 1000);
    // No matcher: Kiro runs a hook without one for every tool.
    assert!(KIRO.registered().all(|(_, r)| !r.tool_matcher));
    let names: Vec<&str> = KIRO.registered().map(|(e, _)| e.name).collect();
    assert_eq!(
        names,
        [
            "agentSpawn",
            "userPromptSubmit",
            "preToolUse",
            "postToolUse",
            "stop"
        ]
    );
}
