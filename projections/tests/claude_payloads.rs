//! Claude Code 2.1.330's newer payloads, given/when/then: a fork's copied usage counted once,
//! served calls attributed to their caller, SessionStart's context figures and `mcp_server`.

use projections::config::PolicyConfig;
use projections::pricing::PricingTable;
use projections::report::{self, CostBy};
use projections::scenario::Scenario;

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
    // `cost` agrees: three requests, each in the session that made it.
    let (by_session, total) = report::cost_rows(
        &s.state.cost_summary(),
        &PricingTable::default(),
        CostBy::Session,
        None,
        None,
        None,
    );
    assert_eq!(total.input_tokens, 3400);
    assert_eq!(total.responses, 3);
    assert!((total.usd - usd).abs() < 1e-9, "{} vs {usd}", total.usd);
    let fork_row = by_session.iter().find(|r| r.key == FORK).unwrap();
    assert_eq!(fork_row.input_tokens, 400);
}
