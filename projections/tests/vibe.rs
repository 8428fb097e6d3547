//! Mistral Vibe's real payloads (tests/fixtures/real-hosts/mistral-vibe-3.0.3), given/when/then:
//! each reads as the host table says, from Vibe's own shape (`hook_event_name` `pre_tool`,
//! `post_tool`, `post_agent`; its built-in file tools without their `file_system.` group; a
//! failed `post_tool` the tool's failure); it is told from every other host by its event names
//! alone; and hookjournal answers it only where it reads an answer (`post_tool`'s
//! `hook_specific_output.additional_context`).

use projections::derived::TaskOp;
use projections::event::{self, Canonical};
use projections::host::{CallerEnv, Host};
use projections::hosts::VIBE;
use projections::scenario::Scenario;

const SESSION: &str = "68378777-00bb-383d-6a02-bb6a3e819dac";

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/mistral-vibe-3.0.3")
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
fn every_vibe_payload_reads_as_the_table_says_and_is_told_by_its_event_names() {
    let all = payloads();
    assert_eq!(all.len(), 8);
    for (stem, text) in all {
        let bytes = text.as_bytes();
        let ev = event::parse(&Host::Vibe, bytes).unwrap_or_else(|| panic!("{stem}"));
        let meaning = VIBE.event(&ev.name).unwrap_or_else(|| panic!("{stem}"));
        let kind = ev.canonical.kind();
        let failed = stem.ends_with("-failure");
        assert!(
            kind == meaning.kind || failed && kind == projections::event::EventKind::ToolFailure,
            "{stem}: {kind:?}"
        );
        assert_eq!(ev.session_id.as_deref(), Some(SESSION), "{stem}");
        assert_eq!(ev.agent_id, None, "{stem}: no subagent");
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/acme-api"), "{stem}");
        // The session store, a directory: read as one (`store`), never as a transcript.
        assert_eq!(
            ev.transcript_path,
            Some(format!("/home/dev/.vibe/logs/session/unified/{SESSION}")),
            "{stem}"
        );
        // By its names alone, whatever --host says (Cursor's are camelCase, Claude's PascalCase).
        assert_eq!(event::detect_host(bytes, None), Host::Vibe, "{stem}");
        assert_eq!(
            event::detect_host(bytes, Some("claude")),
            Host::Vibe,
            "{stem}"
        );
        // Its hook's environment names nothing of Vibe's but the launcher's variable, which
        // every program under Vibe inherits: no caller evidence.
        let env = std::fs::read_to_string(dir().join(format!("{stem}.env"))).unwrap();
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        assert_eq!(
            CallerEnv::read(|n| names.contains(&n)).caller(),
            None,
            "{stem}"
        );
        let (host, parsed) = event::read(bytes, None, &CallerEnv::default(), None);
        assert_eq!(host, Host::Vibe, "{stem}");
        assert!(parsed.is_some(), "{stem}");
    }
}

#[test]
fn a_vibe_tool_call_is_its_input_and_result_and_a_failed_one_its_failure() {
    let read = |stem: &str| event::parse(&Host::Vibe, payload(stem).as_bytes()).unwrap();
    match read("project.pre_tool-bash").canonical {
        Canonical::ToolPre { tool, input } => {
            assert_eq!(tool, "bash", "file_system. dropped");
            assert_eq!(input.unwrap()["command"], "echo hj-shell-ran > marker.txt");
        }
        other => panic!("{other:?}"),
    }
    match read("project.post_tool-read_file").canonical {
        Canonical::ToolPost {
            tool,
            input,
            response,
        } => {
            assert_eq!(tool, "read_file");
            assert_eq!(input.unwrap()["file_path"], "README.md");
            assert_eq!(response.unwrap()["path"], "/home/dev/acme-api/README.md");
        }
        other => panic!("{other:?}"),
    }
    let failure = read("project.post_tool-read_file-failure");
    match &failure.canonical {
        Canonical::ToolFailure { tool, error, .. } => {
            assert_eq!(tool, "read_file");
            assert!(error.starts_with("File not found at:"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(failure.tool_call_id.as_deref(), Some("call_hj_3"));
    assert!(matches!(
        read("project.post_agent").canonical,
        Canonical::Stop { active: false, .. }
    ));
}

#[test]
fn a_subagents_events_are_the_parent_sessions() {
    let text = payload("project.pre_tool-bash").replace(
        "\"parent_session_id\": null",
        "\"parent_session_id\": \"parent-1\"",
    );
    let ev = event::parse(&Host::Vibe, text.as_bytes()).unwrap();
    assert_eq!(ev.session_id.as_deref(), Some("parent-1"));
    assert_eq!(ev.agent_id.as_deref(), Some(SESSION));
}

#[test]
fn vibe_gets_the_task_reminder_after_a_tool_in_its_words_and_nothing_at_the_turns_end() {
    let mut s = Scenario::default().host(Host::Vibe).given_task_command(
        TaskOp::Add,
        "T1",
        Some("Migrate the billing tables"),
        None,
    );
    // Nine tool calls since the task was used: nothing said; the reminder is due at the
    // tenth's result.
    for _ in 0..9 {
        s = s
            .when_hook(&payload("project.pre_tool-read_file"))
            .then_no_answer()
            .and();
        s = s
            .when_hook(&payload("project.post_tool-read_file"))
            .then_no_answer()
            .and();
    }
    s = s
        .when_hook(&payload("project.pre_tool-bash"))
        .then_no_answer()
        .and();
    let then = s.when_hook(&payload("project.post_tool-bash"));
    let answer = then.decision.output().expect("a reminder after the tool");
    let context = answer["hook_specific_output"]["additional_context"]
        .as_str()
        .unwrap_or_else(|| panic!("snake_case context: {answer}"));
    assert!(context.contains("Migrate the billing tables"), "{context}");
    assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    then.and()
        .when_hook(&payload("project.post_agent"))
        .then_no_answer();
}

#[test]
fn install_registers_vibes_three_types_in_its_hooks_toml() {
    let names: Vec<&str> = VIBE.registered().map(|(e, _)| e.name).collect();
    assert_eq!(names, ["pre_tool", "post_tool", "post_agent"]);
    let install = VIBE.install.unwrap();
    assert_eq!(install.timeout_scale, 1, "seconds");
    let p = std::path::Path::new("/p");
    use projections::host::Scope;
    assert_eq!(
        install.settings_path(Scope::Project, p, None),
        Some("/p/.vibe/hooks.toml".into())
    );
    assert_eq!(
        install.settings_path(Scope::User, p, Some(std::path::Path::new("/h/.vibe"))),
        Some("/h/.vibe/hooks.toml".into())
    );
}

fn store_file(rel: &str) -> Vec<u8> {
    std::fs::read(dir().join("session-files").join(rel)).unwrap()
}

/// Given the session store after a resumed run (its generation 91: five responses of 3,900
/// input tokens, 1,000 cached, 12 out) and one more response in the journal segment after it,
/// the totals are both, once each, the cached part read as cache reads; a journal line that is
/// not the response's `action_result` (its `core_input` echo), and a line cut short, count
/// nothing.
#[test]
fn the_session_stores_totals_are_its_generation_and_the_journal_after_it() {
    use projections::hosts::vibe::store::{self, Counts};
    let generation = store::generation(&store_file("CURRENT")).unwrap();
    assert_eq!(generation, "0000000000000091");
    let gen_dir = format!("generations/{generation}");
    let segment = store::segment(&store_file(&format!("{gen_dir}/manifest.json")));
    assert_eq!(segment.as_deref(), Some("journal/0000000000000092.jsonl"));
    let snapshot = store::snapshot(&store_file(&format!("{gen_dir}/projection-state.json")));
    let five = Counts {
        input: 19_500,
        cached: 5_000,
        cache_write: 0,
        output: 60,
    };
    assert_eq!(snapshot, five);
    let line = store_file("journal-completions.jsonl");
    let one = Counts {
        input: 3_900,
        cached: 1_000,
        cache_write: 0,
        output: 12,
    };
    assert_eq!(store::journal(&line), one);
    // Its echo as the core's input, and a cut-short copy, count nothing.
    let text = String::from_utf8(line.clone()).unwrap();
    let echo = text.replace("\"type\":\"action_result\"", "\"type\":\"core_input\"");
    let cut = &text[..text.len() / 2];
    let journal = format!("{text}{echo}{cut}");
    assert_eq!(store::journal(journal.as_bytes()), one);
    let model = store::model(&store_file("meta.json"));
    assert_eq!(model.as_deref(), Some("devstral-small-2507"));
    let r = store::totals(SESSION, snapshot, one, model.as_deref()).unwrap();
    assert_eq!(
        (r.message_id.as_str(), r.request_id.as_str()),
        (SESSION, store::TOTALS)
    );
    assert_eq!(
        (
            r.usage.input_tokens,
            r.usage.cache_read,
            r.usage.output_tokens
        ),
        (23_400 - 6_000, 6_000, 72)
    );
    assert_eq!(
        store::totals(SESSION, Counts::default(), Counts::default(), None),
        None
    );
    // A generation or segment that is no plain name is refused.
    assert_eq!(store::generation(br#"{"generation":"../x"}"#), None);
    assert_eq!(
        store::segment(br#"{"recovery_journal_segment":{"path":"journal/../../x.jsonl"}}"#),
        None
    );
}
