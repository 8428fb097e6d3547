//! Gemini CLI 0.61.0's real payloads (tests/fixtures/real-hosts), given/when/then: what the
//! session snapshot takes from them.

use projections::event::{self, Canonical};
use projections::host::Host;
use projections::scenario::Scenario;

fn payload(name: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/gemini-0.61.0-payloads/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const SID: &str = "40153b72-4182-48e4-94c9-9b8e0f322c81";

#[test]
fn every_real_payload_is_told_to_be_geminis() {
    for name in [
        "SessionStart",
        "BeforeAgent",
        "BeforeTool-write_file",
        "AfterTool-write_file",
        "AfterTool-run_shell_command",
        "PreCompress",
        "AfterAgent",
        "SessionEnd",
        "BeforeModel",
    ] {
        assert_eq!(
            event::detect_host(payload(name).as_bytes(), None),
            Host::Gemini,
            "{name}"
        );
    }
}

#[test]
fn hookjournals_own_context_in_the_prompt_is_not_the_users_prompt() {
    Scenario::default()
        .host(Host::Gemini)
        .given_hook(&payload("SessionStart"))
        .when_hook(&payload("BeforeAgent"))
        .then_state(|st| {
            assert_eq!(
                st.sessions[SID].prompts,
                ["Create a marker file with the shell, then write notes.md."]
            );
        });
    // Another hook's block is the user's context and stays.
    let other = r#"{"hook_event_name":"BeforeAgent","session_id":"s","prompt":"<hook_context>other: x</hook_context>\n\ngo <hook_context>hookjournal: y</hook_context>"}"#;
    let ev = event::parse(&Host::Gemini, other.as_bytes()).unwrap();
    assert_eq!(
        ev.canonical,
        Canonical::Prompt {
            text: "<hook_context>other: x</hook_context>\n\ngo".into()
        }
    );
}

#[test]
fn after_agent_gives_the_final_answer_and_write_file_the_absolute_path() {
    Scenario::default()
        .host(Host::Gemini)
        .given_hooks(&[
            &payload("SessionStart"),
            &payload("BeforeAgent"),
            &payload("AfterTool-run_shell_command"),
            &payload("AfterTool-write_file"),
        ])
        .when_hook(&payload("AfterAgent"))
        .then_state(|st| {
            let s = &st.sessions[SID];
            assert_eq!(
                s.last_assistant_message.as_deref(),
                Some("HJ-MOCK-FINAL: all done.")
            );
            assert_eq!(s.files_edited, ["/home/dev/proj/notes.md"]);
        });
    // Without a response naming it, a relative input path is taken against the session's cwd.
    Scenario::default()
        .host(Host::Gemini)
        .given_hook(&payload("SessionStart"))
        .when_hook(r#"{"hook_event_name":"AfterTool","session_id":"40153b72-4182-48e4-94c9-9b8e0f322c81","cwd":"/home/dev/proj","tool_name":"replace","tool_input":{"file_path":"./src/a.rs"}}"#)
        .then_state(|st| assert_eq!(st.sessions[SID].files_edited, ["/home/dev/proj/src/a.rs"]));
}
