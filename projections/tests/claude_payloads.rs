//! Claude Code 2.1.330's newer payloads, given/when/then: a fork's copied usage counted once,
//! served calls attributed to their caller, SessionStart's context figures and `mcp_server`.

use projections::config::PolicyConfig;
use projections::derived::TaskOp;
use projections::pricing::PricingTable;
use projections::report::{self, CostBy};
use projections::scenario::Scenario;
use projections::{Kind, KindOf};

fn payload(name: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/claude-2.1.330-payloads/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The parent and the fork of the real capture (`--resume PARENT --fork-session`).
const PARENT: &str = "0672d9c8-408c-469f-ae89-9cfd212fe101";
const FORK: &str = "736f5c92-5729-4e84-9733-3db20d5a61f4";

fn end(session: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"/t/{session}.jsonl","cwd":"/home/dev/proj","hook_event_name":"SessionEnd","reason":"other"}}"#
    )
}

/// Input tokens of a session's row and of the `sessions` total (the sum of the rows).
fn rows(s: &Scenario) -> (Vec<(String, u64, f64)>, u64, f64) {
    let pricing = PricingTable::default();
    let cfg = PolicyConfig::default();
    let rows: Vec<(String, u64, f64)> = s
        .state
        .sessions
        .values()
        .map(|x| report::session_row(x, &pricing, &cfg))
        .map(|r| (r.session_id, r.input_tokens, r.usd))
        .collect();
    let tokens = rows.iter().map(|r| r.1).sum();
    let usd = rows.iter().map(|r| r.2).sum();
    (rows, tokens, usd)
}

#[test]
fn a_forks_copied_messages_stay_its_parents_and_the_total_counts_each_request_once() {
    let s = Scenario::default()
        .given_hook(&payload("SessionStart-startup"))
        .given_usage(PARENT, "msg-1", "2026-11-20", 1000)
        .given_usage(PARENT, "msg-2", "2026-11-20", 2000)
        .given_hook(&end(PARENT))
        .given_hook(&payload("SessionStart-fork"))
        // The fork's transcript starts with the parent's two responses, ids and all, then its own.
        .given_usage(FORK, "msg-1", "2026-11-20", 1000)
        .given_usage(FORK, "msg-2", "2026-11-20", 2000)
        .given_usage(FORK, "msg-3", "2026-11-20", 400);
    let (rows, tokens, usd) = rows(&s);
    assert_eq!(
        rows.iter().map(|r| (r.0.as_str(), r.1)).collect::<Vec<_>>(),
        [(PARENT, 3000), (FORK, 400)],
        "each row holds the session's own requests"
    );
    assert_eq!(tokens, 3400, "the total row counts each request once");
    let fork = &s.state.sessions[FORK];
    assert_eq!(fork.continues.as_deref(), Some(PARENT));
    assert_eq!(fork.usage_copied.len(), 2);
    // Claude Code 2.1.197 forks without a SessionStart of the fork's own: the copies name the
    // parent.
    let s197 = Scenario::default()
        .given_hook(&payload("SessionStart-startup"))
        .given_usage(PARENT, "msg-1", "2026-11-20", 1000)
        .given_hook(&payload("UserPromptSubmit"))
        .given_usage(FORK, "msg-1", "2026-11-20", 1000);
    assert_eq!(s197.state.sessions[FORK].continues.as_deref(), Some(PARENT));
    // `cost` agrees: three requests, each in the session that made it.
    let pricing = PricingTable::default();
    let totals = s.state.clone().take_cost_totals();
    let items = totals.items(&pricing).unwrap();
    let (by_session, total) =
        report::cost_rows(&items, &totals.reported, CostBy::Session, None, None, None);
    assert_eq!(total.input_tokens, 3400);
    assert_eq!(total.responses, 3);
    assert!((total.usd - usd).abs() < 1e-9, "{} vs {usd}", total.usd);
    let fork_row = by_session.iter().find(|r| r.key == FORK).unwrap();
    assert_eq!(fork_row.input_tokens, 400);
}

/// A served call as Claude Code 2.1.330 builds its hook input for a call it runs for a cloud
/// session (`remoteCall`): `session_id` `served:<caller>`, an empty `transcript_path`, no
/// `prompt_id`, plus `served_call`/`caller_session_id` (fields of its hook-input schema).
fn served(event: &str, caller_field: bool, fields: &str) -> String {
    let extra = if caller_field {
        format!(r#""served_call":true,"caller_session_id":"{CALLER}","#)
    } else {
        String::new()
    };
    format!(
        r#"{{"session_id":"served:{CALLER}","transcript_path":"","cwd":"/home/dev/proj","permission_mode":"default",{extra}"hook_event_name":"{event}",{fields}}}"#
    )
}

const CALLER: &str = "session_01HJcloudCaller";

#[test]
fn served_calls_belong_to_their_caller_make_no_session_of_their_own_and_are_never_answered() {
    let write = r#""tool_name":"Write","tool_input":{"file_path":"/home/dev/proj/out.txt","content":"x"},"tool_response":{"type":"create","filePath":"/home/dev/proj/out.txt"},"tool_use_id":"toolu_1""#;
    let mcp = r#""tool_name":"mcp__docs__search","tool_input":{"q":"x"},"tool_use_id":"toolu_2","error":"boom","mcp_server":{"name":"docs","source":"project"}"#;
    let parsed = projections::event::parse(
        &projections::host::Host::Claude,
        served("PostToolUse", true, write).as_bytes(),
    )
    .unwrap();
    assert!(parsed.served);
    assert_eq!(parsed.session_id.as_deref(), Some(CALLER));
    assert_eq!(parsed.transcript_path, None, "an empty path is no path");
    // Enough served calls to pass the reminder threshold: still no answer.
    // A journal-wide open task, so a reminder would be due after enough tool calls.
    let mut s = Scenario::default()
        .given_hook(&payload("SessionStart-startup"))
        .given_task_command(TaskOp::Add, "1", Some("open task"), None);
    for _ in 0..40 {
        s = s.given_hook(&served("PostToolUse", false, write));
    }
    let s = s
        .when_hook(&served("PostToolUse", true, write))
        .then_no_answer()
        .and()
        .when_hook(&served("PostToolUseFailure", false, mcp))
        .then_no_answer()
        .and();
    let ids: Vec<&str> = s.state.sessions.keys().map(String::as_str).collect();
    assert_eq!(ids, [PARENT, CALLER], "no `served:` session");
    let caller = &s.state.sessions[CALLER];
    assert!(caller.served_only());
    assert_eq!(caller.served.events, 42);
    assert_eq!(caller.served.tool_calls, 42);
    assert_eq!(caller.served.failed, 1);
    assert_eq!(caller.served.recent.len(), 10, "the last ten");
    assert_eq!(
        caller.served.recent[..2],
        ["mcp__docs__search (MCP server docs)", "Write"]
    );
    let answered: Vec<&journal::Envelope> = s
        .log
        .iter()
        .filter(|e| !matches!(e.kind(), Kind::Hook { .. } | Kind::TaskCommand))
        .collect();
    assert!(answered.is_empty(), "no reminder, no answer: {answered:?}");
    assert_eq!(caller.served.files_edited, ["/home/dev/proj/out.txt"]);
    assert_eq!(caller.tool_calls, 0, "not the session's own activity");
    assert_eq!(caller.transcript_path, None);
    let row = report::session_row(caller, &PricingTable::default(), &PolicyConfig::default());
    assert_eq!(row.status, "served");
    assert_eq!(row.usd, 0.0);
    assert_eq!(row.model, None);
    // A call whose caller Claude Code could not name belongs to no session.
    let unknown = r#"{"session_id":"served:unknown","transcript_path":"","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#;
    let ev =
        projections::event::parse(&projections::host::Host::Claude, unknown.as_bytes()).unwrap();
    assert!(ev.served);
    assert_eq!(ev.session_id, None);
}

#[test]
fn a_forks_context_tokens_seed_its_pressure_and_mcp_servers_are_counted_with_their_tools() {
    let mcp = |event: &str| {
        format!(
            r#"{{"session_id":"{FORK}","transcript_path":"/t/{FORK}.jsonl","cwd":"/home/dev/proj","hook_event_name":"{event}","tool_name":"mcp__docs__search","tool_input":{{}},"tool_response":{{}},"tool_use_id":"t","error":"down","mcp_server":{{"name":"docs","source":"project"}}}}"#
        )
    };
    let s = Scenario::default()
        .given_hook(&payload("SessionStart-fork"))
        .given_hook(&mcp("PostToolUse"))
        .given_hook(&mcp("PostToolUseFailure"));
    let fork = &s.state.sessions[FORK];
    assert_eq!(
        fork.pressure.tokens, 1012,
        "the fork's context before any read"
    );
    let r = fork.resumed.as_ref().unwrap();
    assert_eq!(r.seconds_since_last_response, Some(3));
    assert_eq!(r.prompt_cache_likely_expired, Some(false));
    assert_eq!(r.estimated_cache_write_usd, Some(0.0038));
    assert_eq!(fork.mcp_servers.get("docs"), Some(&2));
    assert_eq!(
        fork.failed_tools[0].tool,
        "mcp__docs__search (MCP server docs)"
    );
    // A later reading from the transcript replaces the seed.
    let s = s.given_context(FORK, 5000);
    assert_eq!(s.state.sessions[FORK].pressure.tokens, 5000);
}
