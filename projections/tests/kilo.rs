//! Kilo Code's real payloads (tests/fixtures/real-hosts/kilo-7.7.9: what OpenCode's shim forwarded
//! from inside Kilo 7.7.9, and its `kilo.db` rows), given/when/then: each is told as Kilo's by the
//! shim's `"host":"kilo"`, by Kilo's own bus events or by `KILO` beside an OpenCode-shaped
//! payload — never by `OPENCODE=1`, which Kilo sets too; it reads as OpenCode's does, with no
//! usage from a `message.updated` (Kilo's is read from its database); the task reminder goes with
//! the prompt; the turn's end reads `kilo.db`, and its rows give each assistant message once, a
//! subagent's child session included.

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host, SessionFileFormat};
use projections::hosts::kilo::db;
use projections::hosts::KILO;
use projections::scenario::Scenario;
use serde_json::Value;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/real-hosts/kilo-7.7.9")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap()
}

/// What the shim forwarded: (name, text).
fn shim_payloads() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hj-shim.") && n.ends_with(".json"))
        .map(|n| {
            let text = read(&n);
            (n, text)
        })
        .collect();
    out.sort();
    out
}

/// The hook process's environment Kilo gave the shim's `hookjournal` (`hj-shim.hook-process.env`).
fn kilo_env() -> CallerEnv {
    let env = read("hj-shim.hook-process.env");
    let names: Vec<String> = env
        .lines()
        .filter_map(|l| l.split('=').next().map(str::to_string))
        .collect();
    CallerEnv::read(|n| names.iter().any(|x| x == n))
}

/// `payload` with `"host":"kilo"` in it, as the shim `install --host kilo` writes sends it.
fn as_installed(payload: &str) -> String {
    let mut v: Value = serde_json::from_str(payload).unwrap();
    v["host"] = "kilo".into();
    v.to_string()
}

#[test]
fn a_payload_of_opencodes_shim_is_kilos_by_its_host_field_or_kilo_in_the_environment_never_by_opencode(
) {
    let all = shim_payloads();
    assert_eq!(all.len(), 6);
    let opencode_only = CallerEnv::read(|n| n == "OPENCODE" || n == "AGENT");
    for (name, text) in &all {
        let bytes = text.as_bytes();
        // As recorded (OpenCode's own shim copied into .kilo/plugins/): Kilo's by KILO alone.
        let (host, parsed) = event::read(bytes, Some("opencode"), &kilo_env(), None);
        assert_eq!(host, Host::Kilo, "{name}");
        let ev = parsed.unwrap_or_else(|| panic!("{name}"));
        assert_eq!(ev.host, Host::Kilo, "{name}");
        assert_eq!(
            ev.session_id.as_deref(),
            Some("ses_dcc72eb02ffeA8OQhF1UwcvKY5")
        );
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"), "{name}");
        // OPENCODE=1 (which Kilo sets too) tells nothing: OpenCode's without KILO.
        assert_eq!(
            event::detect_host_with(bytes, Some("opencode"), &opencode_only),
            Host::OpenCode,
            "{name}"
        );
        // As install writes the shim: Kilo's whatever the environment and --host say.
        let installed = as_installed(text);
        assert_eq!(
            event::detect_host_with(installed.as_bytes(), Some("claude"), &opencode_only),
            Host::Kilo,
            "{name}"
        );
    }
    // Kilo's own bus events are Kilo's by their name.
    let drained = r#"{"hook_event_name":"session.drained","directory":"/p","event":{"type":"session.drained","properties":{"sessionID":"ses_1","token":"t"}}}"#;
    assert_eq!(event::detect_host(drained.as_bytes(), None), Host::Kilo);
    // KILO in a Claude Code payload's environment (Claude Code started from Kilo's shell, which
    // has KILO too) does not make it Kilo's.
    let claude = r#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/t.jsonl"}"#;
    assert_eq!(
        event::detect_host_with(claude.as_bytes(), None, &kilo_env()),
        Host::Claude
    );
}

#[test]
fn kilo_events_read_as_opencodes_and_a_completed_message_carries_no_usage() {
    let parse = |name: &str| event::parse(&Host::Kilo, read(name).as_bytes()).unwrap();
    match parse("hj-shim.tool.execute.after.json").canonical {
        Canonical::ToolPost { tool, input, .. } => {
            assert_eq!(tool, "bash");
            assert!(input.unwrap()["command"]
                .as_str()
                .unwrap()
                .contains("hj-shell-ran"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse("hj-shim.session.idle.json").canonical,
        Canonical::Stop { .. }
    ));
    assert!(matches!(
        parse("hj-shim.session.created.json").canonical,
        Canonical::SessionStart { .. }
    ));
    // OpenCode counts a completed assistant message's tokens; Kilo's come from kilo.db only.
    let msg = read("hj-shim.message.updated.json");
    let oc = event::parse(&Host::OpenCode, msg.as_bytes()).unwrap();
    assert!(oc.usage.is_some());
    let k = event::parse(&Host::Kilo, msg.as_bytes()).unwrap();
    assert_eq!(k.usage, None);
    assert_eq!(k.metrics.tokens_in, None);
    // And install does not register it (no hook per assistant message).
    assert!(KILO.registered().all(|(e, _)| e.name != "message.updated"));
}

#[test]
fn kilo_gets_the_task_reminder_with_the_prompt_and_nothing_where_it_reads_nothing() {
    let s = Scenario::default().host(Host::Kilo).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    let s = s
        .when_hook(&as_installed(&read("hj-shim.session.created.json")))
        .then_no_answer()
        .and();
    let then = s.when_hook(&as_installed(&read("hj-shim.chat.message.json")));
    let answer = then.decision.output().expect("an answer with the prompt");
    assert!(answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("Migrate the billing tables"));
    then.and()
        .when_hook(&as_installed(&read("hj-shim.tool.execute.before.json")))
        .then_no_answer()
        .and()
        .when_hook(&as_installed(&read("hj-shim.session.idle.json")))
        .then_no_answer();
}

#[test]
fn the_turns_end_reads_kilo_db_and_a_tool_reads_nothing() {
    let idle = event::parse(&Host::Kilo, read("hj-shim.session.idle.json").as_bytes()).unwrap();
    let plan = projections::observe::plan(&idle, None);
    assert_eq!(plan.reads.len(), 1);
    let r = &plan.reads[0];
    assert_eq!(r.format, SessionFileFormat::OpenCodeDb);
    assert_eq!(r.path, "kilo.db");
    assert_eq!(
        r.under.unwrap(),
        &[("XDG_DATA_HOME", "kilo"), ("HOME", ".local/share/kilo")]
    );
    let after = event::parse(
        &Host::Kilo,
        read("hj-shim.tool.execute.after.json").as_bytes(),
    )
    .unwrap();
    assert_eq!(projections::observe::plan(&after, None).reads, []);
}

/// The `message` rows of the recorded tool run (`kilo.db.tool-run.json`), as `db::MESSAGES`
/// selects them.
fn rows() -> (String, Vec<db::Row>, Value) {
    let dump: Value = serde_json::from_str(&read("kilo.db.tool-run.json")).unwrap();
    let session = dump["session"][0].clone();
    let rows = dump["message"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| db::Row {
            id: m["id"].as_str().unwrap().into(),
            session_id: m["session_id"].as_str().unwrap().into(),
            data: m["data"].to_string(),
        })
        .collect();
    (session["id"].as_str().unwrap().into(), rows, session)
}

#[test]
fn kilo_db_gives_each_assistant_message_once_and_the_sessions_totals() {
    let (sid, rows, session) = rows();
    let scan = db::scan(&rows, &sid);
    // Three assistant messages (the user's has no usage): Kilo's own session totals.
    assert_eq!(scan.records.len(), 3);
    let input: u64 = scan.records.iter().map(|r| r.usage.input_tokens).sum();
    let output: u64 = scan.records.iter().map(|r| r.usage.output_tokens).sum();
    assert_eq!(input, session["tokens_input"].as_u64().unwrap());
    assert_eq!(input, 4193 + 4285 + 4407);
    assert_eq!(output, session["tokens_output"].as_u64().unwrap());
    assert!(scan
        .records
        .iter()
        .all(|r| r.model == "gpt-4.1" && !r.sidechain));
    assert!(scan.records[0].timestamp.starts_with("2026-12-01T21:44"));
    let ctx = scan.context.unwrap();
    assert_eq!(ctx.tokens, 4407);
    // A subagent's child session: its usage is the session's (a sidechain), not its context.
    let mut child = rows[1].clone();
    child.id = "msg_child".into();
    child.session_id = "ses_child".into();
    let with_child = db::scan(&[rows.clone(), vec![child]].concat(), &sid);
    assert_eq!(with_child.records.len(), 4);
    assert!(with_child.records[3].sidechain);
    assert_eq!(with_child.context.unwrap().tokens, 4407);
    // A row that is not JSON, or another's shape: nothing.
    let junk = db::Row {
        id: "m".into(),
        session_id: sid.clone(),
        data: "{\"role\":".into(),
    };
    assert_eq!(db::scan(&[junk], &sid).records, []);
}
