//! goose, from its source (tests/fixtures/documented/goose, built from its `HookContext`, not
//! captured: goose is not run here), given/when/then: its payloads name their event in `event`
//! as Crush's do, and are told from Crush's by goose's own fields (`matcher_context`,
//! `working_dir`) and the `cwd` Crush always sends; a tool call's before and after share its
//! `tool_call_id`; its file and shell events are recorded only; it is answered nothing (any
//! JSON but a decision at PreToolUse is a hook failure to goose).

use projections::derived::TaskOp;
use projections::event::{self, Canonical, EventKind};
use projections::host::{CallerEnv, Host};
use projections::hosts::GOOSE;
use projections::scenario::Scenario;

fn dir(host: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
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

#[test]
fn gooses_payloads_are_its_own_and_crushs_stay_crushs() {
    let none = CallerEnv::read(|_| false);
    let all = payloads("documented/goose");
    assert_eq!(all.len(), 10);
    for (stem, payload) in &all {
        let bytes = payload.as_bytes();
        for hint in [None, Some("claude"), Some("crush"), Some("goose")] {
            assert_eq!(
                event::detect_host_with(bytes, hint, &none),
                Host::Goose,
                "{stem}"
            );
        }
        let (_, ev) = event::read(bytes, None, &none, None);
        let ev = ev.unwrap_or_else(|| panic!("{stem}"));
        assert_eq!(
            ev.canonical.kind(),
            GOOSE.event(&ev.name).unwrap().kind,
            "{stem}"
        );
        assert_eq!(ev.session_id.as_deref(), Some("20261201_3"));
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"));
    }
    // Crush's real payloads (a string `event`, a `cwd`) are still Crush's.
    for (stem, payload) in payloads("real-hosts/crush-0.96.1/payloads") {
        assert_eq!(
            event::detect_host_with(payload.as_bytes(), None, &none),
            Host::Crush,
            "{stem}"
        );
    }
}

#[test]
fn a_tool_call_reads_once_with_its_id_and_its_file_events_are_recorded_only() {
    let all = payloads("documented/goose");
    let ev = |stem: &str| {
        let (_, text) = all.iter().find(|(s, _)| s.ends_with(stem)).unwrap();
        event::parse(&Host::Goose, text.as_bytes()).unwrap()
    };
    let (pre, post) = (ev(".PreToolUse"), ev(".PostToolUse"));
    assert!(
        matches!(&pre.canonical, Canonical::ToolPre { tool, .. } if tool == "developer__shell")
    );
    assert_eq!(post.canonical.kind(), EventKind::ToolPost);
    assert_eq!(pre.tool_call_id.as_deref(), Some("call_7Qx2"));
    assert_eq!(pre.tool_call_id, post.tool_call_id);
    for stem in [
        "BeforeShellExecution",
        "AfterShellExecution",
        "PreToolUseResult",
    ] {
        assert_eq!(ev(stem).canonical, Canonical::Other, "{stem}");
    }
    let failed = ev("PostToolUseFailure");
    assert!(
        matches!(&failed.canonical, Canonical::ToolFailure { error, .. } if error == "File not found")
    );
    assert!(matches!(&ev("Stop").canonical,
        Canonical::Stop { last_message: Some(m), .. } if m.starts_with("Added CHANGES.md")));
}

#[test]
fn a_goose_session_folds_and_is_answered_nothing() {
    let all = payloads("documented/goose");
    let texts: Vec<&str> = all.iter().map(|(_, t)| t.as_str()).collect();
    let mut t = Scenario::default().host(Host::Goose).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    for text in &texts {
        t = t.when_hook(text).then_no_answer().and();
    }
    t.when_hook(texts[1]).then_state(|st| {
        let s = &st.sessions["20261201_3"];
        assert_eq!(s.prompts[0], "Add a CHANGES file and run the tests.");
    });
}

#[test]
fn install_registers_no_matcher_in_a_plugin_of_its_own() {
    use projections::host::Scope;
    use std::path::{Path, PathBuf};
    let i = GOOSE.install.unwrap();
    assert_eq!(
        i.settings_path(Scope::Project, Path::new("/p"), None),
        Some(PathBuf::from(
            "/p/.agents/plugins/hookjournal/hooks/hooks.json"
        ))
    );
    // goose compiles a matcher as a regex: Claude Code's `*` is none, and its rule is skipped.
    assert!(GOOSE.registered().all(|(_, r)| !r.tool_matcher));
    assert_eq!(GOOSE.registered().count(), 12);
}
