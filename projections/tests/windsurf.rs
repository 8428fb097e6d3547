//! Windsurf's Cascade, from its documentation (tests/fixtures/documented/windsurf, built from
//! the docs, not captured: Windsurf is not run here), given/when/then: its payloads, which name
//! their event in `agent_action_name`, are told apart by that alone and read into Claude Code's
//! tool names (a command `Bash`, a file read `Read`, a write `Edit`, an MCP tool `mcp__…`), the
//! conversation its `trajectory_id`; and it is answered nothing (stdout goes to the user only).

use projections::derived::TaskOp;
use projections::event::{self, Canonical, EventKind};
use projections::host::{CallerEnv, Host};
use projections::hosts::WINDSURF;
use projections::scenario::Scenario;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/documented/windsurf")
}

/// Every payload, in the order of the turn: (stem, text).
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
fn every_documented_payload_is_windsurfs_by_its_shape_and_reads_as_the_table_says() {
    let none = CallerEnv::read(|_| false);
    let all = payloads();
    assert_eq!(all.len(), 10);
    for (stem, payload) in &all {
        let bytes = payload.as_bytes();
        // Whatever `--host` says: no other host sends `agent_action_name`.
        for hint in [None, Some("claude"), Some("windsurf")] {
            assert_eq!(
                event::detect_host_with(bytes, hint, &none),
                Host::Windsurf,
                "{stem}"
            );
        }
        let (host, ev) = event::read(bytes, Some("claude"), &none, None);
        assert_eq!(host, Host::Windsurf);
        let ev = ev.unwrap_or_else(|| panic!("{stem}"));
        let meaning = WINDSURF.event(&ev.name).unwrap();
        assert_eq!(ev.canonical.kind(), meaning.kind, "{stem}");
        assert_eq!(ev.session_id.as_deref(), Some("traj-7f3c"), "{stem}");
    }
    let tool = |stem: &str| {
        let (_, text) = all.iter().find(|(s, _)| s.ends_with(stem)).unwrap();
        event::parse(&Host::Windsurf, text.as_bytes()).unwrap()
    };
    let cmd = tool("pre_run_command");
    assert_eq!(cmd.cwd.as_deref(), Some("/home/dev/acme-api"));
    let Canonical::ToolPre { tool: name, input } = &cmd.canonical else {
        panic!("{:?}", cmd.canonical)
    };
    assert_eq!(name, "Bash");
    assert_eq!(input.as_ref().unwrap()["command"], "npm test");
    let mcp = tool("pre_mcp_tool_use");
    assert!(
        matches!(&mcp.canonical, Canonical::ToolPre { tool, .. } if tool == "mcp__github__create_issue")
    );
    assert_eq!(mcp.mcp_server.as_deref(), Some("github"));
    let end = tool("post_cascade_response");
    assert_eq!(end.canonical.kind(), EventKind::Stop);
}

#[test]
fn a_documented_turn_folds_into_its_session_and_is_answered_nothing() {
    let all = payloads();
    let texts: Vec<&str> = all.iter().map(|(_, t)| t.as_str()).collect();
    let (last, before) = texts.split_last().unwrap();
    Scenario::default()
        .host(Host::Windsurf)
        .given_task_command(TaskOp::Add, "T1", Some("Migrate the billing tables"), None)
        .given_hooks(before)
        .when_hook(last)
        .then_no_answer()
        .then_state(|st| {
            let s = &st.sessions["traj-7f3c"];
            assert_eq!(s.prompts, ["Add a CHANGES file and run the tests."]);
            assert!(s
                .files_read
                .iter()
                .any(|f| f == "/home/dev/acme-api/README.md"));
            assert!(
                s.files_edited
                    .iter()
                    .any(|f| f == "/home/dev/acme-api/CHANGES.md"),
                "{:?}",
                s.files_edited
            );
        });
    // Not at the prompt either, with a task open.
    Scenario::default()
        .host(Host::Windsurf)
        .given_task_command(TaskOp::Add, "T1", Some("x"), None)
        .when_hook(texts[0])
        .then_no_answer();
}
