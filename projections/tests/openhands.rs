//! OpenHands' real payloads (tests/fixtures/real-hosts/openhands-1.16.0), given/when/then: each
//! reads as the host table says, from OpenHands' own shape (`event_type`, `working_dir`, the
//! pydantic dumps of its actions and observations); it is told from every other host by that
//! shape alone and by the variables its hooks get; hookjournal answers it only where it reads an
//! answer (UserPromptSubmit's flat `additionalContext`), never a Stop (a `deny` loops forever);
//! and its conversation's `base_state.json` gives each response once, the subagent tasks'
//! included.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host, SessionFileFormat};
use projections::hosts::openhands::base_state;
use projections::hosts::OPENHANDS;
use projections::scenario::Scenario;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/openhands-1.16.0")
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
        .filter(|p| !p.ends_with("hooks.json"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_openhands_payload_reads_as_the_table_says_and_is_told_by_its_shape_and_its_variables() {
    let all = payloads();
    assert_eq!(all.len(), 20);
    for (stem, text) in all {
        let bytes = text.as_bytes();
        let ev = event::parse(&Host::OpenHands, bytes).unwrap_or_else(|| panic!("{stem}"));
        let meaning = OPENHANDS
            .event(&ev.name)
            .unwrap_or_else(|| panic!("{stem}"));
        // A failed tool comes as PostToolUse, its observation's `is_error` true.
        let failed = stem.ends_with("-error");
        let kind = ev.canonical.kind();
        assert_eq!(kind == meaning.kind, !failed, "{stem}: {kind:?}");
        assert!(ev.session_id.is_some(), "{stem}");
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"), "{stem}");
        // By its shape alone, whatever --host says, and by its hook's environment.
        assert_eq!(event::detect_host(bytes, None), Host::OpenHands, "{stem}");
        assert_eq!(
            event::detect_host(bytes, Some("claude")),
            Host::OpenHands,
            "{stem}"
        );
        let env = std::fs::read_to_string(dir().join(format!("{stem}.env"))).unwrap();
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        let caller = CallerEnv::read(|n| names.contains(&n)).caller();
        assert_eq!(caller, Some(Host::OpenHands), "{stem}");
        // And the whole hook path reads it as OpenHands', not Malformed.
        let (host, parsed) = event::read(bytes, None, &CallerEnv::default(), None);
        assert_eq!(host, Host::OpenHands, "{stem}");
        assert!(parsed.is_some(), "{stem}");
    }
    // The programs its terminal tool runs have none of its hook variables.
    assert_eq!(
        CallerEnv::read(|n| n == "OPENHANDS_SUPPRESS_BANNER").caller(),
        None
    );
}

#[test]
fn an_openhands_tool_call_is_its_action_and_observation_and_an_error_is_a_failure() {
    let read = |stem: &str| event::parse(&Host::OpenHands, payload(stem).as_bytes()).unwrap();
    match read("project.PreToolUse-terminal").canonical {
        Canonical::ToolPre { tool, input } => {
            assert_eq!(tool, "terminal");
            assert_eq!(
                input.unwrap()["command"],
                "echo hj-shell-ran > shell_out.txt && cat shell_out.txt"
            );
        }
        other => panic!("{other:?}"),
    }
    match read("project.PostToolUse-file_editor").canonical {
        Canonical::ToolPost {
            tool,
            input,
            response,
        } => {
            assert_eq!(tool, "file_editor");
            assert_eq!(input.unwrap()["path"], "/home/dev/acme-api/README.md");
            assert_eq!(response.unwrap()["kind"], "FileEditorObservation");
        }
        other => panic!("{other:?}"),
    }
    match read("project.PostToolUse-file_editor-error").canonical {
        Canonical::ToolFailure { tool, error, .. } => {
            assert_eq!(tool, "file_editor");
            assert!(error.contains("does not exist"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    match read("project.UserPromptSubmit").canonical {
        Canonical::Prompt { text } => {
            assert_eq!(text, "run a shell command, then read the readme")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn openhands_gets_the_task_reminder_flat_at_the_prompt_and_nothing_anywhere_else() {
    let s = Scenario::default()
        .host(Host::OpenHands)
        .given_task_command(TaskOp::Add, "T1", Some("Migrate the billing tables"), None);
    let mut s = s
        .when_hook(&payload("project.SessionStart"))
        .then_no_answer()
        .and();
    let then = s.when_hook(&payload("project.UserPromptSubmit"));
    let answer = then.decision.output().expect("an answer at the prompt");
    let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["additionalContext"], "flat, nothing else: {answer}");
    assert!(answer["additionalContext"]
        .as_str()
        .unwrap()
        .contains("Migrate the billing tables"));
    s = then.and();
    for stem in [
        "project.PreToolUse-terminal",
        "project.PostToolUse-terminal",
        "project.PostToolUse-file_editor-error",
        // A Stop `deny` would make OpenHands go on and Stop fire again, for ever.
        "project.Stop",
        "project.Stop-after_feedback",
        "project.SessionEnd",
    ] {
        s = s.when_hook(&payload(stem)).then_no_answer().and();
    }
}

#[test]
fn install_registers_exactly_the_six_names_openhands_accepts() {
    let names: Vec<&str> = OPENHANDS.registered().map(|(e, _)| e.name).collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    // The file the real runs used holds these six and nothing else.
    let used: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("hooks.json")).unwrap()).unwrap();
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
}

fn state(run: &str, id: &str) -> Vec<u8> {
    let p = dir()
        .join("session-files")
        .join(run)
        .join("conversations")
        .join(id)
        .join("base_state.json");
    std::fs::read(p).unwrap()
}

#[test]
fn base_state_gives_each_response_once_the_subagent_tasks_included_and_the_agents_context() {
    let id = "ec1af093af864f58a6281b464ae9defc";
    let tool = base_state::scan(&state("tool-run", id), id);
    assert!(tool.records.len() >= 2, "{:?}", tool.records);
    assert!(tool.records.iter().all(|r| !r.sidechain));
    assert!(tool.records.iter().all(|r| r.model == "openai/gpt-4.1"));
    assert!(tool.records.iter().all(|r| r.request_id == id));
    assert!(tool.records[0].timestamp.starts_with("20"), "dated");
    let last = tool.records.last().unwrap();
    let ctx = tool.context.unwrap();
    assert_eq!(ctx.tokens, last.usage.input_tokens + last.usage.cache_read);
    assert_eq!(tool.window, Some(1_047_576));
    // The subagent's task: in the parent's file as `task:task_00000001`, counted there once.
    let sub_id = "ac0f02ff17cb428288ac6e3692dbfe33";
    let sub = base_state::scan(&state("subagent-run", sub_id), sub_id);
    let ids: Vec<&str> = sub.records.iter().map(|r| r.message_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "chatcmpl-mock-1",
            "chatcmpl-mock-4",
            "chatcmpl-mock-2",
            "chatcmpl-mock-3"
        ]
    );
    let tasks = sub.records.iter().filter(|r| r.sidechain).count();
    assert_eq!(tasks, 2);
    let input: u64 = sub.records.iter().map(|r| r.usage.input_tokens).sum();
    assert_eq!(
        input,
        7315 + 7575,
        "agent's and task's accumulated prompt tokens"
    );
    // Not OpenHands' file, or cut short: nothing.
    assert_eq!(base_state::scan(b"{\"stats\":", sub_id).records, []);
}

#[test]
fn the_stop_reads_the_conversations_base_state_where_openhands_keeps_it() {
    let ev = event::parse(&Host::OpenHands, payload("project.Stop").as_bytes()).unwrap();
    let plan = projections::observe::plan(&ev, None);
    assert_eq!(plan.reads.len(), 1);
    let r = &plan.reads[0];
    assert_eq!(r.format, SessionFileFormat::OpenHandsState);
    assert_eq!(r.path, "ec1af093af864f58a6281b464ae9defc/base_state.json");
    let under = r.under.unwrap();
    assert_eq!(under.first(), Some(&("OPENHANDS_CONVERSATIONS_DIR", "")));
    assert_eq!(under.last(), Some(&("HOME", ".openhands/conversations")));
    // During the run its file shows no tokens yet: a tool event reads nothing.
    let post = event::parse(
        &Host::OpenHands,
        payload("project.PostToolUse-terminal").as_bytes(),
    )
    .unwrap();
    assert_eq!(projections::observe::plan(&post, None).reads, []);
}
