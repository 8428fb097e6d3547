//! A journal written by a 0.1.0-era build (`tests/fixtures/journal-0.1/`, see its README) read by
//! this one: the chain verifies to the same head, every event exports with the kind, fields and
//! hash the old build exported, and the journal keeps growing on top of it.

mod common;

use common::{fixtures, TestEnvironment};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Copies the fixture the way a user's journal is on disk: directories 0700, files 0600, owned by
/// the user (git keeps neither, and the hostile-ground checks refuse looser modes).
fn copy_private(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_private(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
}

fn fixture() -> (TestEnvironment, serde_json::Value) {
    let env = TestEnvironment::new();
    let src = fixtures().join("journal-0.1");
    copy_private(&src.join("journal"), &env.project.join(".hookjournal"));
    let expected = std::fs::read_to_string(src.join("expected.json")).unwrap();
    (env, serde_json::from_str(&expected).unwrap())
}

/// What `hookjournal ARGS` printed, as it printed it (JSON is compared, not normalised), and how
/// it exited.
fn raw(env: &TestEnvironment, args: &[&str]) -> (String, Option<i32>) {
    let out = env.command(&env.project).args(args).output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

fn verify(env: &TestEnvironment) -> (serde_json::Value, Option<i32>) {
    let (out, code) = raw(env, &["verify", "--json"]);
    (serde_json::from_str(&out).unwrap(), code)
}

fn export(env: &TestEnvironment) -> Vec<serde_json::Value> {
    let (out, code) = raw(env, &["export", "--report", "events"]);
    assert_eq!(code, Some(0));
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_journal_written_by_0_1_verifies_with_the_same_chain_head() {
    let (env, expected) = fixture();
    let log_is_sound = |v: &serde_json::Value| {
        assert_eq!(v["events"], expected["events"], "{v}");
        assert_eq!(v["segments"], expected["segments"], "{v}");
        assert_eq!(v["head_hash"], expected["head_hash"], "{v}");
    };
    // As the old build left it: the log is whole, and valid. Its checkpoint is of an older
    // layout: derived state the next writer rebuilds, said as a note, never damage.
    let (v, code) = verify(&env);
    assert_eq!(code, Some(0), "{v}");
    log_is_sound(&v);
    assert_eq!(v["damage"], serde_json::json!([]), "{v}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("checkpoint: written by an older build")),
        "{v}"
    );
    // The first writer (a hook, or `drain` here) rebuilds the checkpoint from the log.
    let (_, code) = raw(&env, &["drain"]);
    assert_eq!(code, Some(0));
    let (v, code) = verify(&env);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["ok"], true, "{v}");
    log_is_sound(&v);
    assert_eq!(v["projections_match_replay"], true, "{v}");
}

#[test]
fn every_event_a_0_1_journal_holds_exports_with_its_kind_and_hash() {
    let (env, expected) = fixture();
    let got = export(&env);
    let want = std::fs::read_to_string(fixtures().join("journal-0.1/events.jsonl")).unwrap();
    let want: Vec<serde_json::Value> = want
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        // The fields the old build exported for this event, each the same now.
        for (field, value) in w.as_object().unwrap() {
            assert_eq!(&g[field], value, "seq {}: {field}", w["seq"]);
        }
    }
    // Every kind the old build wrote is in the fixture, as often as it wrote it.
    let kinds = expected["kinds"].as_object().unwrap();
    assert_eq!(kinds.len(), projections::KINDS.len(), "{kinds:?}");
    for (kind, n) in kinds {
        let seen = got.iter().filter(|e| e["kind"] == kind.as_str()).count();
        assert_eq!(Some(seen as u64), n.as_u64(), "{kind}");
    }
}

#[test]
fn a_0_1_journal_takes_new_events_and_still_verifies() {
    let (env, expected) = fixture();
    let prompt = r#"{"hook_event_name":"UserPromptSubmit","session_id":"after-upgrade","cwd":"/p","prompt":"go"}"#;
    let mut hook = env
        .command(&env.project)
        .arg("hook")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    hook.stdin
        .take()
        .unwrap()
        .write_all(prompt.as_bytes())
        .unwrap();
    assert!(hook.wait_with_output().unwrap().status.success());
    let (v, code) = verify(&env);
    assert_eq!(code, Some(0), "{v}");
    let old = expected["events"].as_u64().unwrap();
    assert!(v["events"].as_u64().unwrap() > old, "{v}");
    // The old head is the first new event's `prev`: the chain goes on from it.
    let first_new = export(&env)
        .into_iter()
        .find(|e| e["seq"] == old + 1)
        .expect("the first new event");
    assert_eq!(first_new["prev"], expected["head_hash"]);
}
