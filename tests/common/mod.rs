//! Shared helpers for the end-to-end tests: run the real binary in a temp environment.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_hookjournal");

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

pub fn cmd(journal: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--journal").arg(journal);
    c.env_remove("RALPH_AGENT_ID")
        .env_remove("HOOKJOURNAL_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("GEMINI_SESSION_ID")
        .env_remove("HOOKJOURNAL_SOURCE")
        .env("NO_COLOR", "1");
    c
}

/// Runs `hookjournal --journal J hook` with `payload` on stdin and `env` set.
pub fn hook(journal: &Path, payload: &[u8], env: &[(&str, &str)]) -> Output {
    let mut c = cmd(journal);
    c.arg("hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("spawn hook");
    child.stdin.take().unwrap().write_all(payload).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs a CLI command, asserting success, returning stdout.
pub fn run(journal: &Path, args: &[&str]) -> String {
    let out = cmd(journal).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "hookjournal {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn run_json(journal: &Path, args: &[&str]) -> serde_json::Value {
    let s = run(journal, args);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{args:?} printed invalid JSON ({e}): {s}"))
}

/// Every line of `export --report events`, parsed, with the raw line kept under `"_line"`.
pub fn events(journal: &Path) -> Vec<serde_json::Value> {
    run(journal, &["export", "--report", "events"])
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("valid JSONL");
            v["_line"] = l.into();
            v
        })
        .collect()
}

/// Every hook payload in the journal, with how often it appears.
pub fn payload_counts(journal: &Path) -> std::collections::BTreeMap<Vec<u8>, usize> {
    let mut m = std::collections::BTreeMap::new();
    for e in events(journal) {
        if e["kind"] == "Hook" {
            *m.entry(payload_bytes(&e)).or_insert(0) += 1;
        }
    }
    m
}

/// The raw payload bytes of an exported event line (exactly as recorded).
pub fn payload_bytes(line: &serde_json::Value) -> Vec<u8> {
    use base64::Engine;
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        payload: Option<&'a serde_json::value::RawValue>,
        payload_b64: Option<String>,
    }
    let text = line["_line"].as_str().expect("a line from events()");
    let raw: Raw = serde_json::from_str(text).unwrap();
    match (raw.payload, raw.payload_b64) {
        (Some(p), _) => p.get().as_bytes().to_vec(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
        _ => panic!("no payload in {text}"),
    }
}

/// The fixture session, played step by step with growing transcripts (as Claude Code would).
pub struct Played {
    pub root: tempfile::TempDir,
    pub journal: PathBuf,
    /// (step index, event name, stdout, stderr) for every hook invocation.
    pub outputs: Vec<(usize, String, String, String)>,
}

pub fn play_session(env: &[(&str, &str)]) -> Played {
    let root = tempfile::tempdir().unwrap();
    let fx = root.path().join("cs");
    let src = fixtures().join("claude-session");
    let tr = "transcripts/projects/-home-dev-acme-api";
    let sid = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";
    let main_src = std::fs::read_to_string(src.join(format!("{tr}/{sid}.jsonl"))).unwrap();
    let sub_src = std::fs::read_to_string(src.join(format!(
        "{tr}/{sid}/subagents/agent-a41536363f6724ba0.jsonl"
    )))
    .unwrap();
    let main = fx.join(format!("{tr}/{sid}.jsonl"));
    let sub = fx.join(format!(
        "{tr}/{sid}/subagents/agent-a41536363f6724ba0.jsonl"
    ));
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    let journal = root.path().join("journal");
    let mut outputs = Vec::new();
    let steps = std::fs::read_to_string(src.join("session.steps.jsonl")).unwrap();
    for (i, line) in steps.lines().enumerate() {
        let step: serde_json::Value = serde_json::from_str(line).unwrap();
        let take = |text: &str, n: u64| {
            text.split_inclusive('\n')
                .take(n as usize)
                .collect::<String>()
        };
        std::fs::write(
            &main,
            take(&main_src, step["transcript_lines"].as_u64().unwrap()),
        )
        .unwrap();
        std::fs::write(
            &sub,
            take(&sub_src, step["subagent_lines"].as_u64().unwrap()),
        )
        .unwrap();
        let payload = step["hook"]
            .to_string()
            .replace("__FIXTURES__", &fx.to_string_lossy());
        let mut e: Vec<(String, String)> = step["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        e.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = hook(&journal, payload.as_bytes(), &e);
        assert!(out.status.success(), "step {i} exited {:?}", out.status);
        outputs.push((
            i,
            step["hook"]["hook_event_name"]
                .as_str()
                .unwrap()
                .to_string(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        ));
    }
    Played {
        root,
        journal,
        outputs,
    }
}
