//! `export --redact` end to end: hook events carrying the corpus's secrets and look-alikes go in
//! through the real hook; the redacted export holds none of the secrets, every look-alike payload
//! verbatim, and says how many it masked. The exports are compared whole with
//! `tests/expected/redaction/`, after the checks that no secret survived (so that blessing can
//! never write one there).

mod common;
#[path = "common/redaction_corpus.rs"]
mod corpus;

use common::{assert_expected, replace_pattern, CommandOutput, TestEnvironment};
use serde_json::{json, Value};

/// `hookjournal ARGS` in the project: (raw stdout, the whole output normalised). The chain's
/// hashes cover the recorded times, which are the real clock's: they read `[HASH]`.
fn export(env: &TestEnvironment, args: &[&str]) -> (String, String) {
    let out = env.command(&env.project).args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let whole = CommandOutput {
        stdout: env.normalize(&stdout),
        stderr: env.normalize(&String::from_utf8_lossy(&out.stderr)),
        code: out.status.code(),
    }
    .render();
    let hash = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    let whole = replace_pattern(
        &whole,
        &format!("\"prev\":\"{hash}\""),
        "\"prev\":\"[HASH]\"",
    );
    let whole = replace_pattern(
        &whole,
        &format!("\"hash\":\"{hash}\""),
        "\"hash\":\"[HASH]\"",
    );
    (stdout, whole)
}

fn hook(env: &TestEnvironment, payload: &str) {
    let out = env.hook_raw(payload.as_bytes(), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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
    let env = TestEnvironment::new();
    let secrets = corpus::secrets();
    let looks = corpus::lookalikes();
    let mut innocent = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        let text = format!("APP_ENV=production\n{}\nLOG_LEVEL=debug\n", s.line);
        hook(&env, &bash_payload(i, &text));
    }
    for (i, l) in looks.iter().enumerate() {
        let p = bash_payload(1000 + i, l);
        hook(&env, &p);
        innocent.push(p);
    }
    let (text, whole) = export(&env, &["export", "--report", "events", "--redact"]);
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
    // Every line whole, and the count of masked secrets on stderr.
    assert!(
        whole.ends_with(&format!(
            "[stderr]\nhookjournal: masked {} secrets\n",
            secrets.len()
        )),
        "{whole}"
    );
    assert_expected("redaction/events.txt", &whole);
}

#[test]
fn redacted_notifications_report_masks_the_message() {
    let env = TestEnvironment::new();
    let token = format!("ghp_{}", corpus::Fake::new(7).chars(36, corpus::ALNUM));
    let n = json!({
        "session_id": "5e55e55e-0000-4000-8000-00000000f4ce",
        "hook_event_name": "Notification",
        "message": format!("Claude needs your permission to run: gh auth login --with-token <<< {token}"),
    });
    hook(&env, &n.to_string());
    let (text, whole) = export(&env, &["export", "--report", "notifications", "--redact"]);
    assert!(!text.contains(&token), "{text}");
    assert_expected("redaction/notifications.txt", &whole);
}

/// `text` as the HTML report escapes it.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn redacted_html_report_shows_none_of_the_secrets_typed_in_prompts() {
    let env = TestEnvironment::new();
    let secrets = corpus::secrets();
    for (i, s) in secrets.iter().enumerate() {
        let prompt = json!({
            "session_id": "5e55e55e-0000-4000-8000-00000000f4ce",
            "hook_event_name": "UserPromptSubmit",
            "cwd": env.project,
            "prompt": format!("step {i}: use this\n{}", s.line),
        });
        hook(&env, &prompt.to_string());
    }
    let report = |name: &str, redact: bool| {
        let file = env.root().join(name);
        let mut args = vec!["report", "--html", file.to_str().unwrap()];
        if redact {
            args.push("--redact");
        }
        let out = env.run(&args);
        assert_eq!(out.code, Some(0), "{}", out.render());
        (std::fs::read_to_string(&file).unwrap(), out.stderr)
    };
    let shows = |html: &str, s: &corpus::Secret| {
        corpus::pieces(&s.secret)
            .into_iter()
            .find(|p| html.contains(p) || html.contains(&html_escaped(p)))
            .map(str::to_string)
    };
    // Without --redact the prompts are in the report as typed: the families of issue 38 at least.
    let (plain, _) = report("plain.html", false);
    for kind in [
        "aws-access-key",
        "aws-secret-key",
        "github-token",
        "private-key",
        "anthropic-key",
        "password",
    ] {
        assert!(
            secrets
                .iter()
                .any(|s| s.kind == kind && shows(&plain, s).is_some()),
            "no {kind} in the unredacted report: the test would prove nothing"
        );
    }
    // With it, no 12-character piece of any secret is left, and the count is said.
    let (html, stderr) = report("redacted.html", true);
    let leaked: Vec<String> = secrets
        .iter()
        .filter_map(|s| shows(&html, s).map(|p| format!("{}: {p:?}", s.kind)))
        .collect();
    assert!(leaked.is_empty(), "left in the report: {leaked:#?}");
    assert!(html.contains("[REDACTED:"), "nothing marked as masked");
    assert!(
        stderr.starts_with("hookjournal: masked ") && stderr.ends_with(" secrets\n"),
        "{stderr}"
    );
}
