//! Kimi CLI's real payloads (tests/fixtures/real-hosts/kimi-1.52.0), given/when/then: each reads
//! as the host table says; its tool payloads tell it from Claude Code's by their shape, its other
//! events by `--host kimi` (its hooks get no environment of their own); a payload of Claude Code's
//! is still Claude's; and hookjournal answers Kimi nothing, with a task open, at every event
//! (Kimi reads no context, only blocks, and Claude's `decision:"block"` it ignores).

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host};
use projections::hosts::KIMI;
use projections::scenario::Scenario;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/kimi-1.52.0")
}

fn kimi(stem: &str) -> String {
    std::fs::read_to_string(dir().join(format!("user.{stem}.json"))).unwrap()
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
fn every_kimi_payload_reads_as_the_table_says_and_its_hook_gets_no_environment_of_its_own() {
    let none = CallerEnv::read(|_| false);
    for (stem, payload) in payloads() {
        let env = std::fs::read_to_string(dir().join(format!("{stem}.env"))).unwrap();
        assert!(
            !env.contains("KIMI_") || env.contains("KIMI_DISABLE_TELEMETRY"),
            "{stem}"
        );
        let bytes = payload.as_bytes();
        let ev = event::parse(&Host::Kimi, bytes).unwrap();
        let meaning = KIMI.event(&ev.name).unwrap_or_else(|| panic!("{stem}"));
        assert_eq!(ev.canonical.kind(), meaning.kind, "{stem}");
        assert!(ev.session_id.is_some() && ev.cwd.is_some(), "{stem}");
        assert_eq!(ev.transcript_path, None, "{stem}");
        // The command install registers names it: `--host kimi`.
        assert_eq!(
            event::detect_host_with(bytes, Some("kimi"), &none),
            Host::Kimi,
            "{stem}"
        );
        // Without it, the tool events are Kimi's by their shape; the rest look like Claude's.
        let tool = stem.contains("ToolUse");
        let bare = event::detect_host(bytes, None);
        assert_eq!(bare == Host::Kimi, tool, "{stem}: {bare}");
    }
}

#[test]
fn a_kimi_tool_result_is_its_python_repr_and_claudes_payloads_stay_claudes() {
    let ev = event::parse(&Host::Kimi, kimi("PostToolUse-ReadFile").as_bytes()).unwrap();
    match ev.canonical {
        Canonical::ToolPost { tool, response, .. } => {
            assert_eq!(tool, "ReadFile");
            let text = response.unwrap();
            assert!(
                text.as_str().unwrap().starts_with("is_error=False"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    let claude = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/claude-2.1.330-payloads");
    let mut seen = 0;
    for entry in std::fs::read_dir(claude).unwrap().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|x| x == "json") {
            let bytes = std::fs::read(&p).unwrap();
            assert_ne!(event::detect_host(&bytes, None), Host::Kimi, "{p:?}");
            seen += 1;
        }
    }
    assert!(seen > 5, "{seen} Claude payloads");
}

#[test]
fn kimi_is_answered_nothing_even_with_a_task_open() {
    let mut s = Scenario::default().host(Host::Kimi).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    for stem in [
        "SessionStart-startup",
        "UserPromptSubmit",
        "PreToolUse-Shell",
        "PostToolUse-Shell",
        "PreCompact-manual",
        "PostCompact-manual",
        "Stop",
        "SessionEnd-exit",
    ] {
        s = s.when_hook(&kimi(stem)).then_no_answer().and();
    }
}

#[test]
fn install_registers_exactly_the_thirteen_names_kimi_accepts() {
    let names: Vec<&str> = KIMI.registered().map(|(e, _)| e.name).collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "SessionEnd",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "Notification",
            "Stop",
            "StopFailure",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "PostCompact",
        ]
    );
    assert!(KIMI
        .registered()
        .all(|(_, r)| (1..=600).contains(&r.timeout_s)));
}

#[test]
fn kimis_wire_log_gives_each_response_once_the_subagents_included_and_the_main_context() {
    use projections::hosts::kimi::wire_log;
    let run = |name: &str| {
        let sessions = dir().join("session-files").join(name).join("sessions");
        let cwd = std::fs::read_dir(&sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let sid = std::fs::read_dir(&cwd)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::read(sid.join("wire.jsonl")).unwrap()
    };
    let tool = wire_log::scan(&run("tool-run"));
    assert_eq!(tool.records.len(), 3);
    assert_eq!(tool.records[0].message_id, "chatcmpl-mock-1");
    assert_eq!(tool.records[0].usage.input_tokens, 3873);
    assert_eq!(tool.records[0].usage.output_tokens, 12);
    assert!(tool.records.iter().all(|r| !r.sidechain));
    assert_eq!(tool.window, Some(131072));
    // The subagent's responses are wrapped in the parent's file: counted, never its context.
    let sub = wire_log::scan(&run("subagent-run"));
    let wrapped = sub.records.iter().filter(|r| r.sidechain).count();
    assert_eq!((sub.records.len() - wrapped, wrapped), (2, 4));
    let last_main = sub.records.iter().rev().find(|r| !r.sidechain).unwrap();
    let ctx = sub.context.unwrap();
    assert!(ctx.tokens >= last_main.usage.input_tokens, "{ctx:?}");
}

#[test]
fn the_stop_reads_kimis_wire_log_where_kimi_keeps_it_by_the_md5_of_the_cwd() {
    let ev = event::parse(&Host::Kimi, kimi("Stop").as_bytes()).unwrap();
    let plan = projections::observe::plan(&ev, None);
    assert_eq!(plan.reads.len(), 1);
    let r = &plan.reads[0];
    assert_eq!(
        r.path,
        "sessions/ce3fa0aa9e98006977055c78d826399a/24a92f22-005e-456f-8c70-0eea7498b3f1/wire.jsonl"
    );
    assert_eq!(r.under.unwrap()[1], ("HOME", ".kimi"));
}
