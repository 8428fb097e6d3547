//! Cline CLI 3.0.65 as it ran hookjournal's hook files (tests/fixtures/real-hosts/cline-3.0.65/
//! payloads: what the real CLI sent on stdin, one file per hook run), given/when/then: each reads
//! as the host table says and names its session, the snapshot holds the tools and files, and the
//! answer after a tool is Cline's `contextModification`; its run start and end take none.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::Host;
use projections::hosts::CLINE;
use projections::scenario::Scenario;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/cline-3.0.65/payloads")
}

fn cl(stem: &str) -> String {
    std::fs::read_to_string(dir().join(format!("{stem}.json"))).unwrap()
}

/// The probe's `run_commands` run (01-04), and the `read_files` run (05-06).
const RUN: &str = "1795654254352_3i7th";
const READ: &str = "1795654719177_nm601";
const PROJECT: &str = "/tmp/clprobe/proj";

#[test]
fn every_captured_payload_reads_as_the_table_says_and_names_its_session() {
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap().flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let payload = std::fs::read_to_string(&path).unwrap();
        // Its `hookName`s tell it apart, whatever `--host` says.
        assert_eq!(
            event::detect_host(payload.as_bytes(), Some("claude")),
            Host::Cline,
            "{}",
            path.display()
        );
        let ev = event::parse(&Host::Cline, payload.as_bytes()).unwrap();
        assert_eq!(
            ev.canonical.kind(),
            CLINE.event(&ev.name).unwrap().kind,
            "{}",
            ev.name
        );
        assert!(
            [RUN, READ].contains(&ev.session_id.as_deref().unwrap()),
            "{}",
            ev.name
        );
        assert_eq!(ev.cwd.as_deref(), Some(PROJECT), "{}", ev.name);
        // The main agent's id is no subagent's.
        assert_eq!(ev.agent_id, None, "{}", ev.name);
        seen += 1;
    }
    assert_eq!(seen, 6);
    let pre = event::parse(&Host::Cline, cl("02.PreToolUse").as_bytes()).unwrap();
    assert_eq!(
        pre.canonical,
        Canonical::ToolPre {
            tool: "run_commands".into(),
            input: Some(
                serde_json::json!({"commands": ["env | grep -i cline > envleak.txt; echo done"]})
            ),
        }
    );
    let end = event::parse(&Host::Cline, cl("04.TaskComplete").as_bytes()).unwrap();
    assert_eq!(
        end.canonical,
        Canonical::Stop {
            active: false,
            last_message: Some("Ran it.".into()),
        }
    );
}

#[test]
fn a_subagents_events_name_it_and_stay_in_the_session() {
    let payload = cl("05.PreToolUse-read_files").replace(
        r#""parent_agent_id":null"#,
        r#""parent_agent_id":"agent_lead""#,
    );
    let ev = event::parse(&Host::Cline, payload.as_bytes()).unwrap();
    assert_eq!(ev.session_id.as_deref(), Some(READ));
    assert_eq!(ev.agent_id.as_deref(), Some("agent_1795654719602_vqk609"));
}

#[test]
fn the_snapshot_holds_the_run_its_tools_and_the_files_read() {
    Scenario::default()
        .host(Host::Cline)
        .given_hook(&cl("01.TaskStart"))
        .given_hook(&cl("02.PreToolUse"))
        .given_hook(&cl("03.PostToolUse"))
        .given_hook(&cl("04.TaskComplete"))
        .given_hook(&cl("05.PreToolUse-read_files"))
        .when_hook(&cl("06.PostToolUse-read_files"))
        .then_state(|st| {
            let s = &st.sessions[READ];
            assert_eq!(s.tool_calls, 1);
            assert_eq!(s.files_read, [format!("{PROJECT}/notes.txt")]);
            assert!(s.files_edited.is_empty());
            assert_eq!(st.sessions[RUN].tool_calls, 1);
        });
}

#[test]
fn nothing_is_answered_at_the_run_start_and_end_which_cline_does_not_read() {
    let t = Scenario::default().host(Host::Cline).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate"),
        None,
    );
    t.when_hook(&cl("01.TaskStart"))
        .then_no_answer()
        .and()
        .when_hook(&cl("04.TaskComplete"))
        .then_no_answer();
}

/// A run with an open task and nine tool calls: the next tool call makes ten, the default
/// threshold without a task tool.
fn due_a_reminder() -> Scenario {
    let mut t = Scenario::default()
        .host(Host::Cline)
        .given_task_command(TaskOp::Add, "T1", Some("Migrate the billing tables"), None)
        .given_hook(&cl("01.TaskStart"));
    for _ in 0..9 {
        t = t.given_hook(&cl("03.PostToolUse"));
    }
    t
}

#[test]
fn a_task_reminder_after_a_tool_is_a_context_modification() {
    let then = due_a_reminder().when_hook(&cl("03.PostToolUse"));
    let out = then.decision.output().unwrap();
    assert_eq!(out.as_object().unwrap().len(), 1, "{out}");
    let text = out["contextModification"].as_str().unwrap();
    assert!(text.contains("T1"), "{text}");
    then.then_event_kinds(&["ReminderIssued"]);
}

/// Given a session due a task reminder, when a subagent's tool ends, then nothing is injected
/// into the subagent; the session's agent gets the reminder at its own next tool.
#[test]
fn a_subagents_tool_gets_no_reminder_and_the_session_gets_it_next() {
    let in_subagent = cl("03.PostToolUse").replace(
        r#""parent_agent_id":null"#,
        r#""parent_agent_id":"agent_lead""#,
    );
    due_a_reminder()
        .when_hook(&in_subagent)
        .then_no_answer()
        .then_event_kinds(&[])
        .and()
        .when_hook(&cl("03.PostToolUse"))
        .then_event_kinds(&["ReminderIssued"]);
}

/// Each record as (message, request, model, uncached input, cache read, output).
fn records(
    scan: &projections::hosts::cline::session_file::MessagesScan,
) -> Vec<(&str, &str, &str, u64, u64, u64)> {
    scan.records
        .iter()
        .map(|r| {
            (
                r.message_id.as_str(),
                r.request_id.as_str(),
                r.model.as_str(),
                r.usage.input_tokens,
                r.usage.cache_read,
                r.usage.output_tokens,
            )
        })
        .collect()
}

fn messages() -> Vec<u8> {
    std::fs::read(dir().join("../sessions/run_commands.messages.json")).unwrap()
}

/// Given the `run_commands` run's messages file (the mock reported `prompt_tokens` 1,000 then
/// 2,000, 100 of them cached, and 50 out each), when it is read, then each response is one
/// record keyed by its id and the session, priced as `gpt-4.1`, and the context is the last
/// response's prompt.
#[test]
fn usage_from_the_messages_file_once_per_response_priced() {
    use projections::hosts::cline::session_file as cline_session;
    use projections::pricing::PricingTable;
    let scan = cline_session::scan(&messages(), RUN);
    assert_eq!(
        records(&scan),
        [
            ("msg_0vocXDiU", RUN, "gpt-4.1", 900, 100, 50),
            ("msg_KY1qIycl", RUN, "gpt-4.1", 1_900, 100, 50),
        ]
    );
    assert_eq!(scan.records[0].timestamp, "2026-11-26T00:50:55.169Z");
    let ctx = scan.context.expect("a context reading");
    assert_eq!((ctx.tokens, ctx.model.as_str()), (2_000, "gpt-4.1"));
    // gpt-4.1: $2 a million input, $0.50 cached, $8 output.
    let pricing = PricingTable::default();
    let usd: f64 = scan
        .records
        .iter()
        .map(|r| pricing.cost(&r.model, &r.usage).expect("priced"))
        .sum();
    let want = (2_800.0 * 2.0 + 200.0 * 0.5 + 100.0 * 8.0) / 1e6;
    assert!((usd - want).abs() < 1e-12, "{usd} vs {want}");
}

/// Given the file as a hook finds it mid-write or not Cline's, then nothing is read from it
/// (it is one JSON document: a cut one does not parse), and a re-read gives the same keys, so
/// the fold counts each response once.
#[test]
fn a_cut_or_foreign_file_gives_nothing_and_a_reread_the_same_keys() {
    use projections::hosts::cline::session_file as cline_session;
    let bytes = messages();
    assert_eq!(
        cline_session::scan(&bytes[..bytes.len() - 10], RUN),
        Default::default()
    );
    assert_eq!(
        cline_session::scan(b"{\"messages\":7}", RUN),
        Default::default()
    );
    assert_eq!(
        cline_session::scan(&bytes, RUN),
        cline_session::scan(&bytes, RUN)
    );
}

/// The `spawn_agent` run (tests/fixtures/real-hosts/cline-3.0.65/payloads/subagent): the lead
/// agent's spawn, the subagent's start and end, the spawn's result.
const SPAWN: &str = "1795682305354_4tv3f";
const SUBAGENT: &str = "agent_1795682305772_v9k8i5";

fn sub(stem: &str) -> String {
    cl(&format!("subagent/{stem}"))
}

/// Given the lead agent spawning a subagent, when the subagent starts and ends, then it is the
/// session's subagent, started then finished with its last words, and the session is still at
/// work (the subagent's end is not the session's); nothing is answered at either; the spawn's
/// result is one tool call of the lead agent's.
#[test]
fn a_spawned_subagent_starts_and_ends_as_the_sessions_subagent() {
    let start = event::parse(&Host::Cline, sub("02.TaskStart-subagent").as_bytes()).unwrap();
    assert_eq!(start.session_id.as_deref(), Some(SPAWN));
    assert_eq!(
        start.canonical,
        Canonical::SubagentStart {
            agent_id: SUBAGENT.into(),
            agent_type: None
        }
    );
    Scenario::default()
        .host(Host::Cline)
        .given_hook(&sub("01.PreToolUse-spawn_agent"))
        .when_hook(&sub("02.TaskStart-subagent"))
        .then_no_answer()
        .then_state(|st| {
            let s = &st.sessions[SPAWN];
            assert_eq!(s.subagents.len(), 1);
            assert!(s.subagents[0].running);
        })
        .and()
        .when_hook(&sub("03.TaskComplete-subagent"))
        .then_no_answer()
        .then_state(|st| {
            let s = &st.sessions[SPAWN];
            assert!(!s.subagents[0].running);
            assert_eq!(
                s.subagents[0].last_message.as_deref(),
                Some("HJ-SUBAGENT-FINAL: notes say hello.")
            );
            assert_eq!(s.status, projections::session::Status::Active);
        })
        .and()
        // The spawn's result is the lead agent's tool call, the subagent still the one.
        .when_hook(&sub("04.PostToolUse-spawn_agent"))
        .then_state(|st| {
            let s = &st.sessions[SPAWN];
            assert_eq!((s.subagents.len(), s.tool_calls), (1, 1));
        });
}

/// Given the subagent's own messages file (beside the session's; the server reported prompts of
/// 10,400 and 10,800 tokens, 2,000 and 3,000 cached, 14 and 18 out), when it is read, then each
/// of its two responses is one record, as the session's file's are.
#[test]
fn a_subagents_own_messages_file_holds_its_responses() {
    let bytes = std::fs::read(dir().join("../sessions/subagent.messages.json")).unwrap();
    let scan = projections::hosts::cline::session_file::scan(&bytes, SPAWN);
    assert_eq!(
        records(&scan),
        [
            ("msg_Y7a8OFeS", SPAWN, "gpt-4.1", 8_400, 2_000, 14),
            ("msg_ObcZ9N7y", SPAWN, "gpt-4.1", 7_800, 3_000, 18)
        ]
    );
}
