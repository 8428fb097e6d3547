//! Codex CLI 0.169.0's real payloads (tests/fixtures/real-hosts), given/when/then: host
//! detection, apply_patch's files, a subagent's prompt; and Claude Code 2.1.330's model switch.

use projections::event;
use projections::host::Host;
use projections::scenario::Scenario;

fn payload(dir: &str, name: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/{dir}/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn codex(name: &str) -> String {
    payload("codex-0.169.0-payloads", name)
}

fn names(dir: &str) -> Vec<String> {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/{dir}",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: Vec<String> = std::fs::read_dir(path)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".json")
                .to_string()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_real_payload_is_told_apart_and_a_model_field_proves_nothing() {
    for n in names("codex-0.169.0-payloads") {
        let p = codex(&n);
        assert_eq!(event::detect_host(p.as_bytes(), None), Host::Codex, "{n}");
    }
    for n in names("claude-2.1.330-payloads") {
        let p = payload("claude-2.1.330-payloads", &n);
        assert_eq!(event::detect_host(p.as_bytes(), None), Host::Claude, "{n}");
    }
    // A Claude Code Stop that carries the model is still Claude Code's.
    let stop = r#"{"session_id":"s","hook_event_name":"Stop","model":"claude-opus-4-6","stop_hook_active":false}"#;
    assert_eq!(event::detect_host(stop.as_bytes(), None), Host::Claude);
}

#[test]
fn apply_patch_records_the_files_in_the_patch() {
    let sid = "01a20325-80d6-76b2-94ca-126cfb287b49";
    Scenario::default()
        .host(Host::Codex)
        .given_hook(&codex("gpt55-SessionStart"))
        .when_hook(&codex("gpt55-PostToolUse-apply_patch"))
        .then_state(|st| assert_eq!(st.sessions[sid].files_edited, ["/home/dev/proj/notes.md"]));
    let patch = r#"{"session_id":"x","turn_id":"t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Update File: src/b.rs\n*** Move to: src/c.rs\n*** Delete File: /abs/d.rs\n*** End Patch\n"}}"#;
    Scenario::default()
        .host(Host::Codex)
        .when_hook(patch)
        .then_state(|st| {
            assert_eq!(
                st.sessions["x"].files_edited,
                ["/abs/d.rs", "/p/src/c.rs", "/p/src/b.rs", "/p/src/a.rs"]
            )
        });
}

#[test]
fn a_subagents_prompt_is_not_the_sessions_and_gets_no_reminder() {
    let sid = "01a20328-4a0f-7d93-88d1-26e2832ccf06";
    let parent_prompt = format!(
        r#"{{"session_id":"{sid}","turn_id":"t","cwd":"/home/dev/proj","hook_event_name":"UserPromptSubmit","prompt":"HJ-PARENT: spawn a helper"}}"#
    );
    let cfg = projections::config::PolicyConfig {
        reminder_threshold: 1,
        ..Default::default()
    };
    Scenario::with(cfg)
        .host(Host::Codex)
        .given_task_command(projections::derived::TaskOp::Add, "T1", Some("x"), None)
        .given_hook(&parent_prompt)
        .given_hook(&codex("SubagentStart"))
        .when_hook(&codex("UserPromptSubmit-subagent"))
        .then_no_answer()
        .then_event_kinds(&[])
        .then_state(|st| {
            let s = &st.sessions[sid];
            assert_eq!(s.prompts, ["HJ-PARENT: spawn a helper"]);
            assert_eq!(s.prompt_count, 1);
        });
}

/// Claude Code 2.1.330's PostModelSwitch: the snapshot's model is the new one.
#[test]
fn a_claude_model_switch_changes_the_sessions_model() {
    Scenario::default()
        .given_hook(r#"{"session_id":"c","hook_event_name":"SessionStart","source":"startup","model":"claude-sonnet-4-5"}"#)
        .given_hook(r#"{"session_id":"c","hook_event_name":"PreModelSwitch","from_model":"claude-sonnet-4-5","to_model":"claude-opus-4-6"}"#)
        .when_hook(r#"{"session_id":"c","hook_event_name":"PostModelSwitch","from_model":"claude-sonnet-4-5","to_model":"claude-opus-4-6"}"#)
        .then_no_answer()
        .then_state(|st| assert_eq!(st.sessions["c"].model.as_deref(), Some("claude-opus-4-6")));
}

/// Claude Code 2.1.330's `--resume ID --fork-session`: a new session id, `source: "fork"`; the
/// answer is the parent's restore (the session that last ended in the directory), not startup text.
#[test]
fn a_claude_fork_is_restored_from_its_parent() {
    let fork = payload("claude-2.1.330-payloads", "SessionStart-fork");
    let t = Scenario::default()
        .given_hooks(&[
            r#"{"session_id":"parent-1","cwd":"/home/dev/proj","hook_event_name":"SessionStart","source":"startup"}"#,
            r#"{"session_id":"parent-1","cwd":"/home/dev/proj","hook_event_name":"UserPromptSubmit","prompt":"HJ-PARENT: migrate the billing tables"}"#,
            r#"{"session_id":"parent-1","cwd":"/home/dev/proj","hook_event_name":"SessionEnd","reason":"other"}"#,
        ])
        .when_hook(&fork);
    let context = t.context();
    assert!(
        context.starts_with("hookjournal: state of session parent-1 at a fork (from the session it was forked from)"),
        "{context}"
    );
    assert!(
        context.contains("HJ-PARENT: migrate the billing tables"),
        "{context}"
    );
}
