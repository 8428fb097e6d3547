//! `redact`: every kind of secret is masked and counted, masked JSON still parses, and text
//! without secrets comes back borrowed and unchanged.

use projections::redact::redact;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::path::PathBuf;

// Made-up secrets in the real formats (none of them valid anywhere).
const ANTHROPIC: &str = "sk-ant-api03-Zq8vK3mT1xR7pL0wN5cY2bH9gF4dS6aJ_uE-oI3kM8nB1vC7xZ2qW5eR9tY4uI0oP6aS3dF8gH1jK7lZ9xC2vB5nM4qW-8eR2tYAA";
const OPENAI_LEGACY: &str = "sk-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc2Df4Gh6Jk8Lm0Np2Q";
const OPENAI_PROJECT: &str = "sk-proj-Xy7Zq2Wm9Kp4Lr8Tn3Vb6Hc1Jd5Fg0Ns7Qe2Ru9Ia4Ob8Uc3Yd6Ze1Af5Bg0Ch7Di2Ej9Fk4Gl8Hm3In6Jo1Kp5Lq0Mr7Ns2Ot9Pu4Qv8Rw3Sx6Ty1Uz5Va0Wb7Xc2Yd9Ze4";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const GOOGLE: &str = "AIzaSyD4x9Kq2Lm7Np3Rs8Tv1Wx6Yz0Ab5Cd4Ef";
const STRIPE_SECRET: &str = "sk_live_51H8xYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
const STRIPE_RESTRICTED: &str = "rk_live_51H8xYzAbCdEfGhIjKlMnOpQrSt";
const GITHUB_CLASSIC: &str = "ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r";
const GITHUB_OAUTH: &str = "gho_9Z8y7X6w5V4u3T2s1R0q9P8o7N6m5L4k3J2i";
const GITHUB_FINE: &str =
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456";
const GITLAB: &str = "glpat-xY7zK2mQ9pL4rT8nV3bW";
const SLACK_BOT: &str = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const SLACK_APP: &str = "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A Bash PostToolUse payload, as JSON text, whose output holds `stdout`.
fn bash_payload(stdout: &str) -> String {
    json!({
        "session_id": "0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat .env", "description": "Show env"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false},
        "tool_use_id": "toolu_01ABC"
    })
    .to_string()
}

/// Redacts `text`, checks it masked exactly `expected` secrets and that none of `secrets` is left.
fn assert_masked(text: &str, secrets: &[&str], expected: usize) -> String {
    let (out, n) = redact(text);
    assert_eq!(n, expected, "count for {text}\n-> {out}");
    assert!(matches!(out, Cow::Owned(_)));
    for s in secrets {
        assert!(!out.contains(s), "{s} survived in {out}");
    }
    out.into_owned()
}

#[test]
fn each_kind_is_masked_and_counted_in_plain_text_and_in_json() {
    let cases: &[(&str, &str, &str)] = &[
        ("ANTHROPIC_API_KEY={}", ANTHROPIC, "anthropic-key"),
        ("OPENAI_API_KEY={}", OPENAI_LEGACY, "openai-key"),
        ("export OPENAI_API_KEY='{}'", OPENAI_PROJECT, "openai-key"),
        ("aws_access_key_id = {}", AWS_KEY_ID, "aws-access-key"),
        ("aws_secret_access_key = {}", AWS_SECRET, "aws-secret-key"),
        ("key: {}", GOOGLE, "google-api-key"),
        ("STRIPE_KEY={}", STRIPE_SECRET, "stripe-key"),
        ("stripe {}", STRIPE_RESTRICTED, "stripe-key"),
        ("token {}", GITHUB_CLASSIC, "github-token"),
        ("oauth: {}", GITHUB_OAUTH, "github-token"),
        ("GH_TOKEN={}", GITHUB_FINE, "github-token"),
        ("glab auth login --token {}", GITLAB, "gitlab-token"),
        ("SLACK_BOT_TOKEN={}", SLACK_BOT, "slack-token"),
        ("SLACK_APP_TOKEN={}", SLACK_APP, "slack-token"),
        ("session cookie {} end", JWT, "jwt"),
        ("{}\n", PEM, "private-key"),
    ];
    for (template, secret, kind) in cases {
        let text = template.replace("{}", secret);
        let marker = format!("[REDACTED:{kind}]");

        let plain = assert_masked(&text, &[secret], 1);
        assert!(plain.contains(&marker), "{plain}");
        assert_eq!(
            plain,
            text.replace(secret, &marker),
            "only the secret is replaced"
        );

        let payload = bash_payload(&format!("line one\n{text}\nline three"));
        let masked = assert_masked(&payload, &[secret], 1);
        let v: Value = serde_json::from_str(&masked).expect("masked JSON parses");
        let stdout = v["tool_response"]["stdout"].as_str().unwrap();
        assert_eq!(
            stdout,
            format!("line one\n{}\nline three", text.replace(secret, &marker))
        );
    }
}

#[test]
fn a_key_at_the_start_of_a_json_line_is_masked() {
    // In JSON text the key follows the two characters `\n`: the `n` must not hide it.
    let payload = bash_payload(&format!("{ANTHROPIC}\n{GITHUB_CLASSIC}\n{AWS_KEY_ID}\n"));
    assert!(payload.contains(&format!("\\n{GITHUB_CLASSIC}")));
    let masked = assert_masked(&payload, &[ANTHROPIC, GITHUB_CLASSIC, AWS_KEY_ID], 3);
    serde_json::from_str::<Value>(&masked).unwrap();
}

#[test]
fn a_key_glued_to_a_word_is_still_found_after_it() {
    let text = format!("task-{ANTHROPIC}");
    let (out, n) = redact(&text);
    assert_eq!(n, 1, "{out}");
    assert_eq!(out, "task-[REDACTED:anthropic-key]");
}

#[test]
fn pem_blocks_are_masked_with_real_or_json_escaped_newlines() {
    for header in [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
    ] {
        let pem = PEM.replace("RSA PRIVATE KEY", header);
        let plain = assert_masked(&format!("cat id:\n{pem}\ndone"), &["MIIEowIBAAKCAQEA"], 1);
        assert_eq!(plain, "cat id:\n[REDACTED:private-key]\ndone");

        let payload = json!({"tool_input": {"file_path": "/home/dev/.ssh/id", "content": pem}, "tool_use_id": "x"}).to_string();
        assert!(payload.contains("-----\\nMIIE"));
        let masked = assert_masked(&payload, &["MIIEowIBAAKCAQEA", "VTLw7onLRn"], 1);
        let v: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(v["tool_input"]["content"], "[REDACTED:private-key]");
        assert_eq!(v["tool_use_id"], "x");
    }
    // Cut off before its END line (a truncated tool output): still masked, the JSON still parses.
    let cut = &PEM[..PEM.find("-----END").unwrap()];
    let masked = assert_masked(&bash_payload(cut), &["MIIEowIBAAKCAQEA"], 1);
    let v: Value = serde_json::from_str(&masked).unwrap();
    // The newline after the last base64 line is not part of the key.
    assert_eq!(v["tool_response"]["stdout"], "[REDACTED:private-key]\n");
}

#[test]
fn passwords_in_urls_keep_the_user_and_host() {
    let cases = [
        (
            "DATABASE_URL=postgres://app:s3cr3t-P%40ss@db.internal:5432/app",
            "postgres://app:[REDACTED:password]@db.internal:5432/app",
        ),
        (
            "git clone https://deploy:hunter2@git.example.com/org/repo.git",
            "https://deploy:[REDACTED:password]@git.example.com/org/repo.git",
        ),
        (
            "redis://:only-a-password@cache:6379/0",
            "redis://:[REDACTED:password]@cache:6379/0",
        ),
        (
            "amqp://guest:p@ss@rabbit/",
            "amqp://guest:[REDACTED:password]@rabbit/",
        ),
    ];
    for (text, expected) in cases {
        let (out, n) = redact(text);
        assert_eq!(n, 1, "{text}");
        assert!(out.ends_with(expected), "{out}");
        let masked = assert_masked(&bash_payload(text), &[], 1);
        assert_eq!(
            serde_json::from_str::<Value>(&masked).unwrap()["tool_response"]["stdout"],
            out.as_ref()
        );
    }
    for plain in [
        "https://example.com:8443/path",
        "ssh://git@github.com:22/org/repo",
        "see http://localhost:3000/@user",
    ] {
        assert_eq!(redact(plain), (Cow::Borrowed(plain), 0), "{plain}");
    }
}

#[test]
fn authorization_headers_keep_the_scheme_in_every_spelling() {
    let bearer = "tok_9f8e7d6c5b4a39281706";
    let basic = "dXNlcjpwYXNzd29yZA==";
    let cases = [
        format!("curl -H \"Authorization: Bearer {bearer}\" https://api.example.com"),
        format!("curl -H 'authorization: bearer {bearer}' https://api.example.com"),
        format!("Authorization: Basic {basic}"),
        format!("{{\"headers\": {{\"Authorization\":\"Bearer {bearer}\"}}}}"),
        format!("{{'Authorization': 'Token {bearer}'}}"),
    ];
    for text in &cases {
        let out = assert_masked(text, &[bearer, basic], 1);
        assert!(out.contains("[REDACTED:authorization]"), "{out}");
        assert!(
            out.contains("earer [REDACTED")
                || out.contains("asic [REDACTED")
                || out.contains("oken [REDACTED"),
            "{out}"
        );
        // Again inside a JSON string, where the header's own quotes are escaped.
        let masked = assert_masked(&bash_payload(text), &[bearer, basic], 1);
        let v: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(v["tool_response"]["stdout"], out.as_str());
    }
    // A JSON value holding a JSON document with headers (escaped twice).
    let inner = json!({"headers": {"Authorization": format!("Bearer {bearer}")}}).to_string();
    let outer = json!({"tool_response": {"body": inner}}).to_string();
    let masked = assert_masked(&outer, &[bearer], 1);
    let v: Value = serde_json::from_str(&masked).unwrap();
    let body: Value = serde_json::from_str(v["tool_response"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["headers"]["Authorization"],
        "Bearer [REDACTED:authorization]"
    );
}

#[test]
fn the_count_adds_up_over_many_secrets() {
    let all = [
        ANTHROPIC,
        OPENAI_LEGACY,
        AWS_KEY_ID,
        GOOGLE,
        GITHUB_CLASSIC,
        GITLAB,
        SLACK_BOT,
        JWT,
        STRIPE_SECRET,
    ];
    let text = all.join(" and ");
    let out = assert_masked(&text, &all, all.len());
    assert_eq!(out.matches("[REDACTED:").count(), all.len());
    // Redacting again finds nothing more.
    assert_eq!(redact(&out), (Cow::Borrowed(out.as_str()), 0));
}

#[test]
fn ordinary_text_is_returned_borrowed() {
    let texts = [
        "commit 4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
        "session 0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70, request req_011CUz8f7Nq2Lk9XyAbCdEfG",
        "/home/dev/acme-api/src/handlers/sk-list.rs and C:\\Users\\dev\\risk-model",
        "task-sk-list-items, disk-usage, ask-the-user, sk-learn-compatible-estimators-v2",
        "risk-management-framework-overview-and-policies",
        "base64: aGVsbG8gd29ybGQgdGhpcyBpcyBvcmRpbmFyeSB0ZXh0Cg== and eyJmb28iOiJiYXIifQ==",
        "Authorization: Bearer $GITHUB_TOKEN, Authorization: Bearer <token>",
        "see https://docs.example.com:443/guide#auth and user@example.com",
        "AKIA is the prefix of AWS key ids; ghp_ starts a GitHub token; -----BEGIN CERTIFICATE-----",
        "",
    ];
    for text in texts {
        let (out, n) = redact(text);
        assert_eq!(n, 0, "{text} -> {out}");
        assert!(matches!(out, Cow::Borrowed(_)), "{text}");
    }
}

#[test]
fn real_hook_payloads_and_transcripts_are_unchanged() {
    let mut files = Vec::new();
    for host in ["claude", "codex", "gemini", "cursor"] {
        for entry in std::fs::read_dir(fixtures().join("events").join(host)).unwrap() {
            files.push(entry.unwrap().path());
        }
    }
    files.push(fixtures().join("claude-session/session.steps.jsonl"));
    for dir in [
        "transcripts-corpus/projects/-home-dev-acme-api",
        "claude-session/transcripts/projects/-home-dev-acme-api",
    ] {
        for entry in std::fs::read_dir(fixtures().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 40);
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let (out, n) = redact(&text);
        assert_eq!(n, 0, "{}: masked {n}", path.display());
        assert!(matches!(out, Cow::Borrowed(_)), "{}", path.display());
    }
}

#[test]
fn secrets_planted_in_a_real_payload_leave_it_valid_json() {
    let path = fixtures().join("events/claude/PostToolUse-Write.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["tool_input"]["content"] = json!(format!(
        "# Notes\nkey={OPENAI_PROJECT}\nurl=mysql://root:pw@db/x\n{PEM}\n"
    ));
    v["tool_response"]["content"] = v["tool_input"]["content"].clone();
    let text = serde_json::to_string_pretty(&v).unwrap();
    let masked = assert_masked(&text, &[OPENAI_PROJECT, "MIIEow", ":pw@"], 6);
    let back: Value = serde_json::from_str(&masked).unwrap();
    assert_eq!(back["session_id"], v["session_id"]);
    assert_eq!(
        back["tool_input"]["content"],
        "# Notes\nkey=[REDACTED:openai-key]\nurl=mysql://root:[REDACTED:password]@db/x\n[REDACTED:private-key]\n"
    );
}

fn secret_or_noise() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(ANTHROPIC.to_string()),
        Just(JWT.to_string()),
        Just(PEM.to_string()),
        Just(GITHUB_CLASSIC.to_string()),
        Just(format!("Authorization: Bearer {GITLAB}")),
        Just("postgres://u:pa\"ss@h/db".to_string()),
        Just("https://u:p\\w@h/".to_string()),
        "[ -~\\n\\t\"\\\\é]{0,12}",
    ]
}

proptest! {
    /// Whatever surrounds the secrets (quotes, backslashes, escapes), masked JSON still parses and
    /// every string keeps its other characters.
    #[test]
    fn masked_json_always_parses(parts in prop::collection::vec(secret_or_noise(), 0..8)) {
        let s = parts.concat();
        let text = json!({"a": s, "b": [s.clone(), {"c": s}]}).to_string();
        let (out, n) = redact(&text);
        let v: Value = serde_json::from_str(&out).expect("masked JSON parses");
        prop_assert_eq!(&v["a"], &v["b"][0]);
        prop_assert_eq!(n % 3, 0);
        if n == 0 {
            prop_assert!(matches!(out, Cow::Borrowed(_)));
        }
    }
}
