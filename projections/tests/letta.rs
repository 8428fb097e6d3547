//! Letta Code's real payloads (tests/fixtures/real-hosts/letta-code-0.32.18), given/when/then:
//! each reads as the host table says, from Letta's own shape (`event_type`,
//! `working_directory`, `agent_id`: the agent is the session); it is told from every other host
//! by that shape alone and by the variables its hooks get; hookjournal answers it only where it
//! reads an answer (PostToolUse's `additionalContext`); and its conversation's `messages.jsonl`
//! gives each response once, the agent's only.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host, SessionFileFormat};
use projections::hosts::letta::messages;
use projections::hosts::LETTA;
use projections::scenario::Scenario;

const AGENT: &str = "agent-local-eb36f983-376f-4d8b-8eb5-edead8e2d6e9";

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/letta-code-0.32.18")
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
fn every_letta_payload_reads_as_the_table_says_and_is_told_by_its_shape_and_its_variables() {
    let all = payloads();
    assert_eq!(all.len(), 14);
    for (stem, text) in all {
        let bytes = text.as_bytes();
        let ev = event::parse(&Host::Letta, bytes).unwrap_or_else(|| panic!("{stem}"));
        let meaning = LETTA.event(&ev.name).unwrap_or_else(|| panic!("{stem}"));
        assert_eq!(ev.canonical.kind(), meaning.kind, "{stem}");
        // The agent is the session: no payload carries another id.
        assert!(
            ev.session_id
                .as_deref()
                .is_some_and(|s| s.starts_with("agent-local-")),
            "{stem}"
        );
        assert!(ev.tool_call_id.is_some(), "{stem}");
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"), "{stem}");
        // By its shape alone, whatever --host says, and by its hook's environment.
        assert_eq!(event::detect_host(bytes, None), Host::Letta, "{stem}");
        assert_eq!(
            event::detect_host(bytes, Some("claude")),
            Host::Letta,
            "{stem}"
        );
        let env = std::fs::read_to_string(dir().join(format!("{stem}.env"))).unwrap();
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        let caller = CallerEnv::read(|n| names.contains(&n)).caller();
        assert_eq!(caller, Some(Host::Letta), "{stem}");
        // And the whole hook path reads it as Letta's, not Malformed.
        let (host, parsed) = event::read(bytes, None, &CallerEnv::default(), None);
        assert_eq!(host, Host::Letta, "{stem}");
        assert!(parsed.is_some(), "{stem}");
    }
    // The programs its Bash tool runs get LETTA_AGENT_ID and AGENT_ID, not the hook's own.
    assert_eq!(
        CallerEnv::read(|n| n == "LETTA_AGENT_ID" || n == "AGENT_ID").caller(),
        None
    );
}

#[test]
fn a_letta_tool_call_is_its_input_and_result_and_a_failure_comes_after_the_result() {
    let read = |stem: &str| event::parse(&Host::Letta, payload(stem).as_bytes()).unwrap();
    match read("project.PreToolUse-Bash").canonical {
        Canonical::ToolPre { tool, input } => {
            assert_eq!(tool, "Bash");
            assert_eq!(
                input.unwrap()["command"],
                "echo hj-shell-ran > shell_out.txt && cat shell_out.txt"
            );
        }
        other => panic!("{other:?}"),
    }
    match read("project.PostToolUse-Read").canonical {
        Canonical::ToolPost {
            tool,
            input,
            response,
        } => {
            assert_eq!(tool, "Read");
            assert_eq!(input.unwrap()["file_path"], "/home/dev/acme-api/README.md");
            assert_eq!(response.unwrap()["status"], "success");
        }
        other => panic!("{other:?}"),
    }
    // A failed tool: PostToolUse with its status "error" (the call's result), then
    // PostToolUseFailure (its failure), the same call id.
    let post = read("project.PostToolUse-Read-error");
    match &post.canonical {
        Canonical::ToolPost { response, .. } => {
            assert_eq!(response.as_ref().unwrap()["status"], "error")
        }
        other => panic!("{other:?}"),
    }
    let failure = read("project.PostToolUseFailure-Read");
    match &failure.canonical {
        Canonical::ToolFailure { tool, error, .. } => {
            assert_eq!(tool, "Read");
            assert!(error.contains("File does not exist"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(post.tool_call_id, failure.tool_call_id);
}

#[test]
fn letta_gets_the_task_reminder_after_a_tool_and_nothing_anywhere_else() {
    let mut s = Scenario::default().host(Host::Letta).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    // Nine tool calls since the task was used (each a PreToolUse and a PostToolUse): nothing
    // said, before a tool included; the reminder is due at the tenth's result.
    for _ in 0..9 {
        s = s
            .when_hook(&payload("project.PreToolUse-Read"))
            .then_no_answer()
            .and();
        s = s
            .when_hook(&payload("project.PostToolUse-Read"))
            .then_no_answer()
            .and();
    }
    s = s
        .when_hook(&payload("project.PreToolUse-Bash"))
        .then_no_answer()
        .and();
    let then = s.when_hook(&payload("project.PostToolUse-Bash"));
    let answer = then.decision.output().expect("a reminder after the tool");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("nested additionalContext: {answer}"));
    assert!(context.contains("Migrate the billing tables"), "{context}");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    then.and()
        .when_hook(&payload("project.PostToolUseFailure-Read"))
        .then_no_answer();
}

#[test]
fn install_registers_letta_events_in_milliseconds_in_its_three_files() {
    let names: Vec<&str> = LETTA.registered().map(|(e, _)| e.name).collect();
    // The names of the real run's settings, every one of them.
    let used: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir().join("session-files/settings.json")).unwrap(),
    )
    .unwrap();
    let mut keys: Vec<&str> = used["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    let mut ours = names.clone();
    ours.sort();
    assert_eq!(keys, ours);
    let install = LETTA.install.unwrap();
    assert_eq!(install.timeout_scale, 1000);
    let p = std::path::Path::new("/p");
    use projections::host::Scope;
    assert_eq!(
        install.settings_path(Scope::Local, p, None),
        Some("/p/.letta/settings.local.json".into())
    );
    assert_eq!(
        install.settings_path(Scope::User, p, Some(std::path::Path::new("/h/.letta"))),
        Some("/h/.letta/settings.json".into())
    );
}

fn messages_file() -> Vec<u8> {
    std::fs::read(dir().join(
        "session-files/lc-local-backend/conversations/Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ/messages.jsonl",
    ))
    .unwrap()
}

#[test]
fn messages_give_each_of_the_agents_responses_once_with_its_model_and_the_context() {
    let bytes = messages_file();
    let scan = messages::scan(&bytes, Some(AGENT));
    let ids: Vec<&str> = scan.records.iter().map(|r| r.message_id.as_str()).collect();
    assert_eq!(
        ids,
        ["chatcmpl-mock-2", "chatcmpl-mock-3", "chatcmpl-mock-4"]
    );
    assert!(scan.records.iter().all(|r| r.model == "gpt-4.1"));
    assert!(scan.records.iter().all(|r| r.request_id == "local-conv-1"));
    let input: u64 = scan.records.iter().map(|r| r.usage.input_tokens).sum();
    assert_eq!(input, 8479 + 8562 + 8637);
    let output: u64 = scan.records.iter().map(|r| r.usage.output_tokens).sum();
    assert_eq!(output, 36);
    assert_eq!(scan.context.unwrap().tokens, 8637);
    assert_eq!(scan.consumed, bytes.len());
    // Another agent's messages, or a line cut short: nothing.
    assert_eq!(
        messages::scan(&bytes, Some("agent-local-other")).records,
        []
    );
    let cut = &bytes[..bytes.len() - 10];
    assert_eq!(messages::scan(cut, Some(AGENT)).records.len(), 2);
    let conversation = std::fs::read(dir().join(
        "session-files/lc-local-backend/conversations/Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ/conversation.json",
    ))
    .unwrap();
    assert_eq!(
        messages::conversation_agent(&conversation).as_deref(),
        Some(AGENT)
    );
}

#[test]
fn a_tool_result_reads_the_agents_conversations_where_the_local_backend_keeps_them() {
    let ev = event::parse(&Host::Letta, payload("project.PostToolUse-Bash").as_bytes()).unwrap();
    let plan = projections::observe::plan(&ev, None);
    assert_eq!(plan.reads.len(), 1);
    let r = &plan.reads[0];
    assert_eq!(r.format, SessionFileFormat::LettaMessages);
    assert_eq!(r.path, format!("conversations/{AGENT}"));
    let under = r.under.unwrap();
    assert_eq!(under.first(), Some(&("LETTA_LOCAL_BACKEND_DIR", "")));
    assert_eq!(under.last(), Some(&("HOME", ".letta/lc-local-backend")));
    // Before a tool, nothing is read.
    let pre = event::parse(&Host::Letta, payload("project.PreToolUse-Bash").as_bytes()).unwrap();
    assert_eq!(projections::observe::plan(&pre, None).reads, []);
}
