//! The report's timeline marks a compaction where the session counts one, on every host:
//! given/when/then over the same events the snapshot folds.

mod common;

use common::{precompact, S};
use projections::config::PolicyConfig;
use projections::host::Host;
use projections::scenario::Scenario;
use projections::timeline::{MarkKind, Timelines};

fn marks(sc: &Scenario, sid: &str) -> (usize, Vec<&'static str>) {
    let mut t = Timelines::default();
    for env in &sc.log {
        t.apply(env, &PolicyConfig::default(), true);
    }
    let tl = &t.sessions[sid];
    let compactions = tl
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Compaction)
        .count();
    (compactions, tl.items.iter().map(|i| i.kind).collect())
}

fn gemini(event: &str) -> String {
    format!(
        r#"{{"hook_event_name":"{event}","session_id":"g1","cwd":"/proj","transcript_path":"/chats/g1.jsonl","trigger":"auto","prompt":"go"}}"#
    )
}

#[test]
fn gemini_precompress_alone_is_no_compaction_and_a_compression_the_file_shows_is_one() {
    // Given three model requests, each preceded by PreCompress, where the session file shows
    // one compression (and shows it again at the next read),
    let sc = Scenario::default()
        .host(Host::Gemini)
        .given_hook(&gemini("BeforeAgent"))
        .reading("g1", &[], Some(1_000))
        .given_hook(&gemini("PreCompress"))
        .reading("g1", &["ack-1"], Some(500))
        .given_hook(&gemini("PreCompress"))
        .reading("g1", &["ack-1"], Some(600))
        .given_hook(&gemini("PreCompress"));
    // when the timeline is folded, then it marks exactly one compaction and lists no PreCompress.
    let (n, items) = marks(&sc, "g1");
    assert_eq!(n, 1, "{items:?}");
    assert_eq!(items.iter().filter(|k| **k == "compaction").count(), 1);
    // And the snapshot counts the same.
    assert_eq!(sc.state.sessions["g1"].compactions, 1);
}

#[test]
fn claude_code_marks_its_compaction_at_precompact() {
    let sc = Scenario::default().given_hook(&precompact("manual"));
    assert_eq!(marks(&sc, S).0, 1);
}

#[test]
fn codex_marks_its_compaction_at_postcompact_and_not_a_stopped_precompact() {
    let codex = |event: &str| {
        let path = format!(
            "{}/../tests/fixtures/real-hosts/codex-0.169.0-payloads/{event}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        // The two captures come from two runs: one session here.
        std::fs::read_to_string(path).unwrap().replace(
            "01a20327-cbd7-7371-aa13-3d54cae51e0d",
            "01a20325-aad9-79c3-9f66-17d6fcfd4ad7",
        )
    };
    let sid = "01a20325-aad9-79c3-9f66-17d6fcfd4ad7";
    let stopped = Scenario::default()
        .host(Host::Codex)
        .given_hook(&codex("PreCompact"));
    assert_eq!(marks(&stopped, sid).0, 0);
    assert_eq!(stopped.state.sessions[sid].compactions, 0);
    let done = stopped.given_hook(&codex("PostCompact"));
    assert_eq!(marks(&done, sid).0, 1);
    assert_eq!(done.state.sessions[sid].compactions, 1);
}

#[test]
fn a_cline_tool_call_is_listed_with_its_command_and_its_files() {
    // Given Cline CLI's tool results as it sends them (its own payload: a command list, a file
    // list; none of Claude Code's input keys),
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/cline-3.0.65/payloads");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let sc = Scenario::default()
        .host(Host::Cline)
        .given_hook(&read("03.PostToolUse.json"))
        .given_hook(&read("06.PostToolUse-read_files.json"));
    // when the timeline is folded, then each item says what the call was about.
    let mut t = Timelines::default();
    for env in &sc.log {
        t.apply(env, &PolicyConfig::default(), true);
    }
    let texts: Vec<(&str, &str)> = t
        .sessions
        .values()
        .flat_map(|tl| &tl.items)
        .map(|i| (i.title.as_str(), i.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            (
                "run_commands",
                "env | grep -i cline > envleak.txt; echo done"
            ),
            ("read_files", "/tmp/clprobe/proj/notes.txt"),
        ]
    );
}
