//! Amp, from its plugin API (tests/fixtures/documented/amp, built from the `@ampcode/plugin`
//! types its CLI prints, not captured: Amp is not run here), given/when/then: its shim's payloads
//! say `"host":"amp"`, the thread is the session, a tool call's before and after share its
//! `toolUseID`, a `tool.result` with status `error` is a failure; it is answered at `agent.start`
//! only (the shim turns the context into a message of the prompt).

use projections::derived::TaskOp;
use projections::event::{self, Canonical, EventKind};
use projections::host::{CallerEnv, Host, Scope};
use projections::hosts::AMP;
use projections::scenario::Scenario;
use std::path::{Path, PathBuf};

const THREAD: &str = "T-5f0c8e2a-61d4-4b7e-9a3c-2d8f4e6a1b90";

/// Every payload of the fixtures, in order: (stem, text).
fn payloads() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/documented/amp");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
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

fn text(stem: &str) -> String {
    payloads().into_iter().find(|(s, _)| s == stem).unwrap().1
}

fn ev(stem: &str) -> projections::event::HookEvent {
    event::parse(&Host::Amp, text(stem).as_bytes()).unwrap()
}

#[test]
fn amps_payloads_are_its_own_and_the_thread_is_the_session() {
    let none = CallerEnv::read(|_| false);
    let all = payloads();
    assert_eq!(all.len(), 7);
    for (stem, payload) in &all {
        for hint in [None, Some("claude"), Some("pi"), Some("amp")] {
            assert_eq!(
                event::detect_host_with(payload.as_bytes(), hint, &none),
                Host::Amp,
                "{stem}"
            );
        }
        let (_, ev) = event::read(payload.as_bytes(), None, &none, None);
        let ev = ev.unwrap_or_else(|| panic!("{stem}"));
        let kind = AMP.event(&ev.name).unwrap().kind;
        let failed = stem == "06.tool.result";
        assert_eq!(
            ev.canonical.kind(),
            if failed { EventKind::ToolFailure } else { kind },
            "{stem}"
        );
        assert_eq!(ev.session_id.as_deref(), Some(THREAD));
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"));
    }
}

#[test]
fn a_tool_call_reads_once_with_its_id_and_an_error_is_a_failure() {
    let (pre, post) = (ev("03.tool.call"), ev("04.tool.result"));
    assert!(matches!(&pre.canonical,
        Canonical::ToolPre { tool, input: Some(i) } if tool == "Bash" && i["cmd"] == "npm test"));
    assert!(matches!(&post.canonical,
        Canonical::ToolPost { response: Some(r), .. } if r["exitCode"] == 1));
    assert_eq!(pre.tool_call_id.as_deref(), Some("toolu_01Vq8J2kXbN3"));
    assert_eq!(pre.tool_call_id, post.tool_call_id);
    assert!(matches!(&ev("06.tool.result").canonical,
        Canonical::ToolFailure { tool, error, .. } if tool == "Read" && error.starts_with("file not found")));
    assert!(matches!(&ev("02.agent.start").canonical,
        Canonical::Prompt { text } if text == "run the tests and fix what fails"));
    assert_eq!(ev("07.agent.end").canonical.kind(), EventKind::Stop);
}

#[test]
fn amp_gets_the_open_tasks_at_its_first_prompt_and_nothing_anywhere_else() {
    let s = Scenario::default().host(Host::Amp).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    // session.start takes no answer: the startup list rides on the first prompt.
    let s = s
        .when_hook(&text("01.session.start"))
        .then_no_answer()
        .and();
    let then = s.when_hook(&text("02.agent.start"));
    let answer = then.decision.output().expect("an answer at the prompt");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(context.contains("Migrate the billing tables"), "{context}");
    let mut s = then.and();
    for stem in [
        "03.tool.call",
        "04.tool.result",
        "05.tool.call",
        "06.tool.result",
        "07.agent.end",
    ] {
        s = s.when_hook(&text(stem)).then_no_answer().and();
    }
}

#[test]
fn install_writes_a_shim_plugin_where_amp_loads_them() {
    let i = AMP.install.unwrap();
    assert_eq!(
        i.settings_path(Scope::Project, Path::new("/p"), None),
        Some(PathBuf::from("/p/.amp/plugins/hookjournal.ts"))
    );
    assert_eq!(
        i.settings_path(
            Scope::User,
            Path::new("/p"),
            Some(Path::new("/h/.config/amp"))
        ),
        Some(PathBuf::from("/h/.config/amp/plugins/hookjournal.ts"))
    );
    let names: Vec<&str> = AMP.registered().map(|(e, _)| e.name).collect();
    assert_eq!(
        names,
        [
            "session.start",
            "agent.start",
            "tool.call",
            "tool.result",
            "agent.end"
        ]
    );
}
