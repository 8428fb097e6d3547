//! `search` end to end: the fixture Claude Code session played through the hooks, then searched
//! (whole outputs compared with `tests/expected/search/`); the index derived from the log (built
//! by the first search, caught up by the next, rebuilt when damaged); a link planted at the index
//! refused, its target untouched; secrets masked with `--redact`.

mod common;
use common::*;

fn played() -> TestEnvironment {
    let mut env = TestEnvironment::new();
    env.pin_now_ahead();
    env.play_claude_session();
    env
}

/// Given the fixture session played, when it is searched for words of its prompt, its tool
/// inputs and its commit, then each match shows its seq, session, kind, field and snippet, best
/// first; `--session`, `--limit` and a prefix narrow it; no match says so and exits 1.
#[test]
fn search_finds_prompts_paths_commands_and_commits_whole() {
    let env = played();
    let mut t = String::new();
    for args in [
        &["search", "rate", "limiting"][..],
        &["search", "login.rs"],
        &["search", "token-bucket", "--limit", "2"],
        &["search", "--session", "db5b", "commit*"],
        &["search", "cargo", "test", "--json", "--limit", "1"],
        &["search", "kubernetes"],
    ] {
        env.step(&mut t, args);
    }
    let t = replace_pattern(
        &t,
        "\"recorded_at_us\": dddddddddddddddd",
        "\"recorded_at_us\": [US]",
    );
    let t = replace_pattern(&t, "\"score\": d.dddddddddddddddd", "\"score\": [SCORE]");
    assert_expected("search/fixture-session.txt", &t);
}

/// Given a seq search found, when the session is shown at it, then the snapshot is the session
/// as it was just after that event (the prompts, files and commits up to it, not the later
/// ones), under a line naming the event; a seq past the log's end is refused.
#[test]
fn show_at_a_seq_search_found_is_the_session_then() {
    let env = played();
    let mut t = String::new();
    for args in [
        &["show", "db5b", "--at", "28"][..],
        &["show", "db5b", "--at", "100000"],
    ] {
        env.step(&mut t, args);
    }
    assert_expected("search/show-at.txt", &t);
    let then = env.json(&["show", "db5b", "--at", "28", "--json"]);
    let now = env.json(&["show", "db5b", "--json"]);
    assert_eq!(then["at"]["seq"], 28, "{then}");
    assert!(
        then["events"].as_u64() < now["events"].as_u64(),
        "{then}\n{now}"
    );
    // Rewound to before its commit, the session has none now; at seq 28 it had it, as the hook
    // saw it then.
    let rewound = env.run(&["rewind", "db5b", "--to", "20"]);
    assert_eq!(rewound.code, Some(0), "{}", rewound.render());
    let now = env.json(&["show", "db5b", "--json"]);
    assert_eq!(now["commits"].as_array().map(Vec::len), Some(0), "{now}");
    let then = env.json(&["show", "db5b", "--at", "28", "--json"]);
    assert_eq!(then["commits"][0]["hash"], "3f2a9c1", "{then}");
    // After the rewind was recorded, the state at its seq is the rewound one.
    let head = env.json(&["status", "--json"]);
    let at = head["events"].as_u64().unwrap();
    let after = env.json(&["show", "db5b", "--at", &at.to_string(), "--json"]);
    assert_eq!(
        after["commits"].as_array().map(Vec::len),
        Some(0),
        "{after}"
    );
}

fn prompt(text: &str) -> String {
    format!(r#"{{"session_id":"s-new","hook_event_name":"UserPromptSubmit","prompt":"{text}"}}"#)
}

/// Given a search index, when new events arrive, the index is damaged, or rebuilt on request,
/// then every search answers from the whole log: the new events found, the damaged file built
/// again, the counts the log's.
#[test]
fn the_index_follows_the_log_and_is_rebuilt_when_damaged() {
    let env = played();
    let j = env.journal();
    let count = |v: &serde_json::Value| v["hits"].as_array().unwrap().len();
    // What was found, where (relevance scores move with every event the index holds).
    let found = |v: &serde_json::Value| -> Vec<(u64, String)> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["seq"].as_u64().unwrap(), h["snippet"].to_string()))
            .collect()
    };
    let first = run_json(&j, &["search", "rate", "--json"]);
    assert!(first["indexed"]["rebuilt"] == true && count(&first) > 0);
    let events = first["indexed"]["events"].as_u64().unwrap();
    // A new event is found by the next search, which adds only it.
    let out = env.hook_raw(
        prompt("why does the flamegraph show memcpy").as_bytes(),
        &[],
    );
    assert!(out.status.success() && quiet_or_spooled(&out.stderr));
    let next = run_json(&j, &["search", "flamegraph", "--json"]);
    assert_eq!(count(&next), 1);
    assert_eq!(next["indexed"]["rebuilt"], false);
    assert_eq!(next["indexed"]["events"].as_u64(), Some(events + 1));
    // Damaged: rebuilt from the log, the same answer.
    let file = j.join("search/index.sqlite");
    std::fs::write(&file, vec![b'x'; 40_000]).unwrap();
    let again = run_json(&j, &["search", "flamegraph", "--json"]);
    assert_eq!(found(&again), found(&next));
    assert_eq!(again["indexed"]["rebuilt"], true);
    assert_eq!(again["indexed"]["events"].as_u64(), Some(events + 1));
    // On request.
    let rebuilt = run_json(&j, &["search", "rate", "--json", "--rebuild"]);
    let mut want = found(&first);
    let mut got = found(&rebuilt);
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(rebuilt["indexed"]["rebuilt"], true);
}

/// Given the index's name replaced by a link to a file of the user's, when searched, then the
/// file is never opened as the index nor written, and the search still answers.
#[test]
fn a_link_planted_at_the_index_is_never_followed() {
    let env = played();
    let j = env.journal();
    run(&j, &["search", "rate"]);
    let victim = env.home.join("notes.txt");
    std::fs::write(&victim, b"my notes\n").unwrap();
    let file = j.join("search/index.sqlite");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&victim, &file).unwrap();
    let found = run_json(&j, &["search", "rate", "--json"]);
    assert!(!found["hits"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::read(&victim).unwrap(), b"my notes\n");
    assert!(!std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Given a prompt holding an AWS key pair, when searched with `--redact`, then the snippet shows
/// the kinds of secret, not the secret.
#[test]
fn redact_masks_secrets_in_snippets() {
    let env = played();
    let out = env.hook_raw(
        prompt("deploy with AKIAIOSFODNN7EXAMPLE and aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY").as_bytes(),
        &[],
    );
    assert!(out.status.success());
    let mut t = String::new();
    env.step(&mut t, &["search", "deploy", "--redact"]);
    assert!(
        !t.contains("AKIAIOSFODNN7EXAMPLE") && !t.contains("wJalrXUtnFEMI"),
        "{t}"
    );
    assert_expected("search/redacted.txt", &t);
}
