//! `export --redact` end to end: hook events carrying the corpus's secrets and look-alikes go in
//! through the real hook; the redacted export holds none of the secrets, every look-alike payload
//! verbatim, and says how many it masked.

mod common;
#[path = "common/redaction_corpus.rs"]
mod corpus;

use common::*;
use serde_json::{json, Value};

fn bash_payload(i: usize, stdout: &str) -> String {
    json!({
        "session_id": "5e55e55e-0000-4000-8000-00000000f4ce",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat .env", "description": "Show env"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false},
        "tool_use_id": format!("toolu_{i:04}")
    })
    .to_string()
}

#[test]
fn redacted_events_export_masks_every_corpus_secret_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let secrets = corpus::secrets();
    let looks = corpus::lookalikes();
    let mut innocent = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        let env = format!("APP_ENV=production\n{}\nLOG_LEVEL=debug\n", s.line);
        let out = hook(&j, bash_payload(i, &env).as_bytes(), &[]);
        assert!(out.status.success());
    }
    for (i, l) in looks.iter().enumerate() {
        let p = bash_payload(1000 + i, l);
        let out = hook(&j, p.as_bytes(), &[]);
        assert!(out.status.success());
        innocent.push(p);
    }
    let out = cmd(&j)
        .args(["export", "--report", "events", "--redact"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        format!("hookjournal: masked {} secrets\n", secrets.len())
    );
    for s in &secrets {
        for p in corpus::pieces(&s.secret) {
            assert!(!text.contains(p), "{}: {p:?} survived the export", s.kind);
        }
        assert!(
            text.contains(&format!("[REDACTED:{}]", s.kind)),
            "{}",
            s.kind
        );
    }
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line parses"))
        .collect();
    assert_eq!(lines.len(), secrets.len() + looks.len());
    let redacted = lines.iter().filter(|l| l["redacted"] == true).count();
    assert_eq!(
        redacted,
        secrets.len(),
        "one masked secret per secret event"
    );
    for p in &innocent {
        assert!(
            text.contains(&format!("\"payload\":{p},")),
            "look-alike payload changed: {p}"
        );
    }
}

#[test]
fn redacted_notifications_report_masks_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j");
    let token = format!("ghp_{}", corpus::Fake::new(7).chars(36, corpus::ALNUM));
    let n = json!({
        "session_id": "5e55e55e-0000-4000-8000-00000000f4ce",
        "hook_event_name": "Notification",
        "message": format!("Claude needs your permission to run: gh auth login --with-token <<< {token}"),
    });
    assert!(hook(&j, n.to_string().as_bytes(), &[]).status.success());
    let out = cmd(&j)
        .args(["export", "--report", "notifications", "--redact"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(&token), "{text}");
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(
        v["message"],
        "Claude needs your permission to run: gh auth login --with-token <<< [REDACTED:github-token]"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "hookjournal: masked 1 secret\n"
    );
}
