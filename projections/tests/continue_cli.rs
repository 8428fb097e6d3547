//! Continue's cn 1.5.47 (tests/fixtures/real-hosts/continue-1.5.47), given/when/then: it fires no
//! hook, so there is no payload of its own; were its runner reached, a Claude Code payload with
//! `CONTINUE_PROJECT_DIR` in the hook's environment is Continue's (before `--host claude`, as a
//! `.claude/settings.json` handler says), and is answered with nothing while what cn reads of an
//! answer is unmeasured. Its install writes `.continue/`, never `.claude/`.

use projections::derived::TaskOp;
use projections::event;
use projections::host::{CallerEnv, Host, Scope};
use projections::hosts::CONTINUE;
use projections::scenario::Scenario;
use std::path::{Path, PathBuf};

fn facts() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/real-hosts/continue-1.5.47/FACTS.md"),
    )
    .unwrap()
}

/// A SessionStart as its (unreached) runner would build it: Claude Code's fields,
/// `transcript_path` empty, cn's session UUID.
const START: &str = r#"{"session_id":"5d0e6c1e-2f4b-4b7e-9a51-0c7c2a9d1f11","transcript_path":"","cwd":"/home/dev/acme-api","hook_event_name":"SessionStart","source":"startup"}"#;

#[test]
fn its_runners_variable_names_it_before_host_claude_and_nothing_else_does() {
    assert!(facts().contains("`CONTINUE_PROJECT_DIR` (both = cwd; nothing else marks cn)"));
    let env = |vars: &[&str]| CallerEnv::read(|n| vars.contains(&n));
    let cn = env(&["CONTINUE_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]);
    assert_eq!(cn.caller(), Some(Host::Continue));
    assert_eq!(
        event::detect_host_with(START.as_bytes(), Some("claude"), &cn),
        Host::Continue
    );
    // CLAUDE_PROJECT_DIR alone is anyone's.
    let claude = env(&["CLAUDE_PROJECT_DIR"]);
    assert_eq!(claude.caller(), None);
    assert_eq!(
        event::detect_host_with(START.as_bytes(), Some("claude"), &claude),
        Host::Claude
    );
    let ev = event::parse(&Host::Continue, START.as_bytes()).unwrap();
    assert_eq!(
        ev.canonical.kind(),
        projections::event::EventKind::SessionStart
    );
    assert_eq!(
        ev.transcript_path, None,
        "an empty transcript path names no file"
    );
}

#[test]
fn nothing_is_answered_with_a_task_open() {
    Scenario::default()
        .host(Host::Continue)
        .given_task_command(TaskOp::Add, "T1", Some("Migrate the billing tables"), None)
        .when_hook(START)
        .then_no_answer();
}

#[test]
fn install_writes_continues_own_files() {
    let i = CONTINUE.install.unwrap();
    let p = Path::new("/p");
    assert_eq!(
        i.settings_path(Scope::Project, p, None),
        Some(PathBuf::from("/p/.continue/settings.json"))
    );
    assert_eq!(
        i.settings_path(Scope::Local, p, None),
        Some(PathBuf::from("/p/.continue/settings.local.json"))
    );
    assert_eq!(i.config_dir_env, Some("CONTINUE_GLOBAL_DIR"));
    // The 17 names its loader knows; WorktreeCreate never registered.
    assert_eq!(CONTINUE.events.len(), 17);
    assert_eq!(CONTINUE.registered().count(), 16);
    for name in facts()
        .split("17 event names: ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .split_whitespace()
    {
        assert!(CONTINUE.event(name).is_some(), "{name}");
    }
}
