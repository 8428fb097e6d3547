//! The OpenClaw adapter, given/when/then: its plugin hooks (as the shim forwards them) read as
//! canonical events, events that carry only the `sessionKey` join their session, `llm_output`
//! gives usage and pressure against OpenClaw's own budget, and what Claude Code gets at
//! SessionStart (restore, startup tasks) reaches OpenClaw's model with the next prompt.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::Host;
use projections::policy::Answer;
use projections::scenario::Scenario;
use serde_json::{json, Value};

const SID: &str = "oc-sess-0001";
const KEY: &str = "agent:main:work";

/// A payload as the shim forwards hook `name`: the host's `event` and `ctx` objects.
fn hook(name: &str, event: Value, ctx: Value) -> String {
    json!({"hook_event_name": name, "host_time": "2026-11-23T21:00:00.000Z", "event": event, "ctx": ctx})
        .to_string()
}

/// The context of an agent-run hook of session `SID`.
fn run_ctx() -> Value {
    json!({"agentId": "main", "sessionKey": KEY, "sessionId": SID, "runId": "r1",
           "workspaceDir": "/home/u/.openclaw/workspace"})
}

fn session_start(resumed_from: Option<&str>) -> String {
    let mut event = json!({"sessionId": SID, "sessionKey": KEY});
    if let Some(r) = resumed_from {
        event["resumedFrom"] = json!(r);
    }
    hook(
        "session_start",
        event,
        json!({"sessionId": SID, "sessionKey": KEY, "agentId": "main"}),
    )
}

fn prompt(text: &str) -> String {
    hook(
        "before_prompt_build",
        json!({"prompt": text, "messagesOmitted": 0}),
        run_ctx(),
    )
}

fn after_tool(tool: &str, params: Value, error: Option<&str>) -> String {
    let mut event = json!({"toolName": tool, "params": params, "runId": "r1", "toolCallId": "c1",
                           "result": {"content": [{"type": "text", "text": "ok"}]}, "durationMs": 12});
    if let Some(e) = error {
        event["error"] = json!(e);
    }
    hook("after_tool_call", event, run_ctx())
}

fn compaction(name: &str) -> String {
    hook(
        name,
        json!({"messageCount": 4, "tokenCount": 15}),
        json!({"sessionId": SID, "sessionKey": KEY, "agentId": "main"}),
    )
}

fn llm_output(input: u64, budget: u64) -> String {
    hook(
        "llm_output",
        json!({"runId": "r1", "sessionId": SID, "provider": "mock", "model": "mock-1",
               "contextTokenBudget": budget, "assistantTexts": ["done"],
               "usage": {"input": input, "output": 9, "cacheRead": 0, "cacheWrite": 0, "total": input + 9}}),
        run_ctx(),
    )
}

fn finalize() -> String {
    hook(
        "before_agent_finalize",
        json!({"runId": "r1", "sessionId": SID, "sessionKey": KEY, "stopHookActive": false,
               "lastAssistantMessage": "done", "transcriptPath": KEY}),
        run_ctx(),
    )
}

fn openclaw() -> Scenario {
    Scenario::default().host(Host::OpenClaw)
}

fn parse(payload: &str) -> event::HookEvent {
    event::parse(&Host::OpenClaw, payload.as_bytes()).expect("an OpenClaw payload")
}

#[test]
fn each_hook_reads_as_its_canonical_event() {
    let cases: Vec<(String, Canonical)> = vec![
        (
            session_start(None),
            Canonical::SessionStart {
                source: "startup".into(),
            },
        ),
        (
            session_start(Some("oc-sess-0000")),
            Canonical::SessionStart {
                source: "clear".into(),
            },
        ),
        (
            prompt("fix the build"),
            Canonical::Prompt {
                text: "fix the build".into(),
            },
        ),
        (
            hook(
                "before_tool_call",
                json!({"toolName": "exec", "params": {"command": "ls"}}),
                run_ctx(),
            ),
            Canonical::ToolPre {
                tool: "exec".into(),
                input: Some(json!({"command": "ls"})),
            },
        ),
        (
            after_tool("exec", json!({"command": "ls"}), None),
            Canonical::ToolPost {
                tool: "exec".into(),
                input: Some(json!({"command": "ls"})),
                response: Some(json!({"content": [{"type": "text", "text": "ok"}]})),
            },
        ),
        (
            after_tool("read", json!({"path": "/x"}), Some("ENOENT: /x")),
            Canonical::ToolFailure {
                tool: "read".into(),
                input: Some(json!({"path": "/x"})),
                error: "ENOENT: /x".into(),
            },
        ),
        (
            finalize(),
            Canonical::Stop {
                active: false,
                last_message: Some("done".into()),
            },
        ),
        (
            compaction("before_compaction"),
            Canonical::PreCompact {
                trigger: "auto".into(),
                instructions: None,
            },
        ),
        (
            compaction("after_compaction"),
            Canonical::PostCompact {
                trigger: "auto".into(),
                summary: None,
            },
        ),
        (
            hook(
                "session_end",
                json!({"sessionId": SID, "reason": "reset", "nextSessionId": SID}),
                json!({"sessionId": SID, "sessionKey": KEY}),
            ),
            Canonical::SessionEnd {
                reason: "reset".into(),
            },
        ),
        (
            hook("before_reset", json!({"reason": "reset"}), run_ctx()),
            Canonical::Other,
        ),
        (llm_output(10, 100), Canonical::Other),
    ];
    for (payload, expected) in cases {
        let ev = parse(&payload);
        assert_eq!(ev.canonical, expected, "{payload}");
        assert_eq!(ev.session_id.as_deref(), Some(SID), "{payload}");
        assert_eq!(ev.session_key.as_deref(), Some(KEY), "{payload}");
    }
    let started = parse(&session_start(Some("oc-sess-0000")));
    assert_eq!(started.continues.as_deref(), Some("oc-sess-0000"));
    let run = parse(&prompt("x"));
    assert_eq!(run.agent_name.as_deref(), Some("main"));
    assert_eq!(run.cwd.as_deref(), Some("/home/u/.openclaw/workspace"));
    // `transcriptPath` holds the session key, not a file: nothing is read from it.
    assert_eq!(parse(&finalize()).transcript_path, None);
    // The shim's names are OpenClaw's own: detected without `--host`.
    assert_eq!(
        event::detect_host(prompt("x").as_bytes(), None),
        Host::OpenClaw
    );
}

#[test]
fn an_event_with_only_the_session_key_joins_the_session_last_seen_with_it() {
    let write = hook(
        "before_message_write",
        json!({"message": {"role": "user", "content": "hi"}}),
        json!({"agentId": "main", "sessionKey": KEY}),
    );
    let t = openclaw()
        .given_hook(&session_start(None))
        .when_hook(&write);
    let last = t.scenario.log.last().unwrap();
    assert_eq!(last.session_id.as_deref(), Some(SID));
    t.then_no_answer().then_state(|st| {
        assert_eq!(st.sessions[SID].hook_events, 2);
        assert_eq!(
            st.global.session_keys.get(KEY).map(String::as_str),
            Some(SID)
        );
    });
    // A key the log never saw with a session stays unattributed.
    let stranger = hook(
        "tool_result_persist",
        json!({"toolName": "exec"}),
        json!({"sessionKey": "agent:main:other"}),
    );
    let t = openclaw()
        .given_hook(&session_start(None))
        .when_hook(&stranger);
    assert_eq!(t.scenario.log.last().unwrap().session_id, None);
    t.then_state(|st| assert_eq!(st.sessions.len(), 1));
}

#[test]
fn llm_output_gives_usage_and_pressure_against_openclaws_own_budget() {
    // 150,000 of a 200,000 budget: 75 %, the warning tier, noticed at the next prompt.
    let t = openclaw()
        .given_hooks(&[&session_start(None), &prompt("one")])
        .given_hook(&llm_output(150_000, 200_000))
        .when_hook(&prompt("two"));
    let notice = t.context();
    assert!(
        notice.contains("75% used") && notice.contains("200,000"),
        "{notice}"
    );
    t.then_state(|st| {
        let s = &st.sessions[SID];
        assert_eq!(s.pressure.window, Some(200_000));
        assert_eq!(s.usage_total().input_tokens, 150_000);
        assert_eq!(s.usage_total().output_tokens, 9);
        assert_eq!(s.model.as_deref(), Some("mock-1"));
    });
    // The same tokens in a 1,000,000 budget are nothing to mention.
    openclaw()
        .given_hooks(&[&session_start(None), &prompt("one")])
        .given_hook(&llm_output(150_000, 1_000_000))
        .when_hook(&prompt("two"))
        .then_no_answer();
}

#[test]
fn the_restore_after_a_compaction_rides_on_the_next_prompt_once() {
    let given = openclaw().given_hooks(&[
        &session_start(None),
        &prompt("migrate the schema"),
        &after_tool("edit", json!({"path": "/src/db.rs"}), None),
        &compaction("before_compaction"),
        &compaction("after_compaction"),
    ]);
    let t = given.when_hook(&prompt("carry on"));
    let text = t.context();
    assert!(
        text.contains("after context compaction") && text.contains("migrate the schema"),
        "{text}"
    );
    assert!(
        !text.contains("carry on"),
        "the restore describes the session before this prompt: {text}"
    );
    let printed = t.decision.output().unwrap();
    assert_eq!(
        printed["hookSpecificOutput"]["hookEventName"],
        "before_prompt_build"
    );
    // Only once: the prompt after it carries nothing.
    t.scenario.when_hook(&prompt("and then")).then_no_answer();
}

#[test]
fn the_restore_after_a_reset_rides_on_the_next_prompt() {
    let end = hook(
        "session_end",
        json!({"sessionId": SID, "sessionKey": KEY, "reason": "reset", "nextSessionId": SID}),
        json!({"sessionId": SID, "sessionKey": KEY}),
    );
    let t = openclaw()
        .given_hooks(&[
            &session_start(None),
            &prompt("write the release notes"),
            &hook("before_reset", json!({"reason": "reset"}), run_ctx()),
            &end,
        ])
        // The session start answers nothing itself: OpenClaw's session hooks only observe.
        .given_hook(&session_start(Some(SID)))
        .when_hook(&prompt("next"));
    let text = t.context();
    assert!(
        text.contains("hookjournal: state of session") && text.contains("write the release notes"),
        "{text}"
    );
}

#[test]
fn startup_tasks_reach_the_first_prompt_and_session_start_answers_nothing() {
    let given = openclaw().given_task_command(TaskOp::Add, "T1", Some("Ship the adapter"), None);
    let started = given.when_hook(&session_start(None));
    assert_eq!(started.decision.answer, None);
    let t = started.scenario.when_hook(&prompt("hello"));
    assert!(t.context().contains("Ship the adapter"), "{}", t.context());
}

#[test]
fn the_emergency_stop_is_a_finalize_revision_once() {
    let t = openclaw()
        .given_hooks(&[&session_start(None), &prompt("go")])
        .given_hook(&llm_output(196_000, 200_000))
        .when_hook(&finalize());
    assert!(
        matches!(t.decision.answer, Some(Answer::BlockStop { .. })),
        "{:?}",
        t.decision.answer
    );
    t.scenario.when_hook(&finalize()).then_no_answer();
}

#[test]
fn a_reset_into_a_new_session_restores_the_one_it_resumed_from() {
    let new_ctx = json!({"sessionId": "oc-sess-0002", "sessionKey": KEY, "agentId": "main"});
    let t = openclaw()
        .given_hooks(&[&session_start(None), &prompt("port the parser")])
        .given_hook(&hook(
            "session_start",
            json!({"sessionId": "oc-sess-0002", "sessionKey": KEY, "resumedFrom": SID}),
            new_ctx.clone(),
        ))
        .when_hook(&hook(
            "before_prompt_build",
            json!({"prompt": "continue"}),
            new_ctx,
        ));
    let text = t.context();
    assert!(
        text.contains("state of session oc-sess-") && text.contains("port the parser"),
        "{text}"
    );
    t.then_state(|st| {
        assert_eq!(st.sessions["oc-sess-0002"].continues.as_deref(), Some(SID));
        assert_eq!(
            st.global.session_keys.get(KEY).map(String::as_str),
            Some("oc-sess-0002")
        );
    });
}

/// OpenClaw's file tools name their file in `params.path`, often relative to the workspace:
/// the files read and edited are recorded by their absolute path, so the snapshot and the restore
/// after a compaction name them.
#[test]
fn file_tools_record_the_files_read_and_edited_against_the_workspace() {
    let ws = "/home/u/.openclaw/workspace";
    openclaw()
        .given_hook(&session_start(None))
        .given_hook(&prompt("tidy the notes"))
        .given_hook(&after_tool("read", json!({"path": "notes/todo.md"}), None))
        .given_hook(&after_tool(
            "write",
            json!({"path": "notes/done.md", "content": "x"}),
            None,
        ))
        .given_hook(&after_tool(
            "edit",
            json!({"path": format!("{ws}/README.md"), "oldText": "a", "newText": "b"}),
            None,
        ))
        .given_hook(&after_tool(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch"}),
            None,
        ))
        // A failed read is no file read.
        .given_hook(&after_tool(
            "read",
            json!({"path": "missing.md"}),
            Some("ENOENT"),
        ))
        .given_hook(&compaction("before_compaction"))
        .given_hook(&compaction("after_compaction"))
        .when_hook(&prompt("go on"))
        .then_state(move |st| {
            let s = &st.sessions[SID];
            assert_eq!(s.files_read, [format!("{ws}/notes/todo.md")]);
            assert_eq!(
                s.files_edited,
                [
                    format!("{ws}/src/lib.rs"),
                    format!("{ws}/README.md"),
                    format!("{ws}/notes/done.md"),
                ]
            );
        });
    let restore = openclaw()
        .given_hook(&session_start(None))
        .given_hook(&after_tool("edit", json!({"path": "notes/done.md"}), None))
        .given_hook(&after_tool("read", json!({"path": "notes/todo.md"}), None))
        .given_hook(&compaction("before_compaction"))
        .given_hook(&compaction("after_compaction"))
        .when_hook(&prompt("go on"))
        .context();
    assert!(
        restore.contains(&format!(
            "Files edited (recent first): \"{ws}/notes/done.md\""
        )) && restore.contains(&format!(
            "Files read (recent first): \"{ws}/notes/todo.md\""
        )),
        "{restore}"
    );
}
