//! End to end with the real Codex CLI (0.169.0, pinned by `.ci/install-codex-cli.sh`) against a
//! loopback Responses-API server written here, `codex exec` with no bypass flag.
//!
//! `hookjournal install --host codex` registers the hooks and trusts them in the user's
//! `config.toml` as `/hooks` would; the test trusts the project once, as Codex asks a user to at
//! the first start in a folder. Then one turn with a shell call: the hooks run (Codex skips
//! untrusted ones silently); every invocation is journaled once with its exact payload (compared
//! with a counting hook in the user's hooks.json, trusted the same way); the journal's open task
//! reaches the model; tokens, USD and context equal what the server reported, priced at
//! gpt-5.1-codex's rates, read from the rollout; no compaction is counted (run A).
//!
//! Then Codex is set to compact past 5,000 tokens (`-c model_auto_compact_token_limit=5000`) and
//! the shell call reports 9,000 input tokens. Run B, a loop agent (`RALPH_AGENT_ID`) holding a
//! task: the task is kept through the ordinary calls and released at PreCompact (which Codex
//! fires only before a real compaction); the agent is stopped there (`continue:false`), Codex
//! interrupts the turn and compacts nothing, so no compaction is counted. Run C, the same without
//! loop control: Codex sends the summary request, fires PreCompact, PostCompact and SessionStart
//! `source: "compact"`; the compaction is counted once, the restore reaches the next request, and
//! the tokens include the summary request's.
//!
//! The three runs' rollouts, and a corpus of real rollouts, cost what ccusage's Codex report
//! (`ccusage codex daily|session --offline`, pinned by `.ci/install-ccusage.sh`) says they cost.
//!
//! Running it
//! ----------
//!   bash .ci/install-codex-cli.sh             # once; npm registry only, into the CI cache
//!   bash .ci/install-ccusage.sh               # once; ccusage for the cost comparison
//!   cargo test -p hookjournal --test codex_cli -- --nocapture
//! Environment:
//!   HOOKJOURNAL_CODEX_BIN=/path/to/codex      use another Codex CLI
//!   HOOKJOURNAL_REQUIRE_CODEX=1               fail (instead of skip) when Codex CLI is missing
//!   HOOKJOURNAL_CCUSAGE_BIN=/path/to/ccusage  use another ccusage (its `codex` report)
//!   HOOKJOURNAL_REQUIRE_CCUSAGE=1             fail (instead of skip) when ccusage is missing
//!   HOOKJOURNAL_E2E_KEEP=1                    keep the temporary home, project and rollouts

mod common;
use base64::Engine;
use common::ccusage::VERSION as CCUSAGE_VERSION;
use common::harness::{missing, Ran, Skip};
use common::http::{Request, Response};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "0.169.0";
const MODEL: &str = "gpt-5.1-codex";
/// gpt-5.1-codex, USD per token: input, cached input, output.
const PRICE: [f64; 3] = [1.25e-6, 0.125e-6, 10e-6];
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: run the marker command, then say done.";
const PROMPT_B: &str = "HJ-PROMPT-B: run it again, under loop control.";
const PROMPT_C: &str = "HJ-PROMPT-C: run it once more.";

fn codex_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOOKJOURNAL_CODEX_BIN") {
        return Some(PathBuf::from(p));
    }
    let cache = common::ci_cache()?;
    let bin = cache.join(format!(
        "codex-cli-{VERSION}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
    ));
    bin.exists().then_some(bin)
}

/// One response's usage, as the Responses API reports it (input includes the cached tokens,
/// output the reasoning tokens).
#[derive(Clone, Copy, Debug)]
struct Usage {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
}

const SHELL: Usage = Usage {
    input: 3000,
    cached: 1000,
    output: 40,
    reasoning: 0,
};
const FINAL: Usage = Usage {
    input: 3300,
    cached: 2900,
    output: 25,
    reasoning: 10,
};

#[derive(Clone, Debug)]
struct Exchange {
    request: Value,
    usage: Usage,
    role: &'static str,
}

/// The shell call's usage while Codex is set to compact past `COMPACT_LIMIT` tokens (runs B, C).
const SHELL_BIG: Usage = Usage {
    input: 9000,
    cached: 1000,
    output: 40,
    reasoning: 0,
};
/// The compaction's summary request.
const SUMMARY: Usage = Usage {
    input: 2000,
    cached: 0,
    output: 30,
    reasoning: 0,
};
/// `model_auto_compact_token_limit` for runs B and C: below `SHELL_BIG`, above `FINAL`.
const COMPACT_LIMIT: u64 = 5000;
const SUMMARY_TEXT: &str = "HJ-SUMMARY: the marker command ran.";

/// What the server answers: `compact` (the compaction's summary request), `final` (after the
/// tool's output, or after a compaction), `shell` (a turn's first request).
fn role(request: &Value) -> &'static str {
    let meta = request["client_metadata"]["x-codex-turn-metadata"]
        .as_str()
        .and_then(|m| serde_json::from_str::<Value>(m).ok())
        .unwrap_or_default();
    let text = request.to_string();
    if meta["request_kind"] == "compaction" {
        "compact"
    } else if text.contains("function_call_output") || text.contains("HJ-SUMMARY") {
        "final"
    } else {
        "shell"
    }
}

/// The scripted Responses API: `POST …/responses` answered by the request's role (the shell
/// call, the final message or the compaction's summary), recorded; anything else is not found.
fn serve(req: &Request, exchanges: &Mutex<Vec<Exchange>>, big: &AtomicBool) -> Response {
    if req.method != "POST" || !req.path.contains("/responses") {
        return Response::new(404, "text/plain", "");
    }
    let request: Value = req.json().unwrap_or(Value::Null);
    let n = exchanges.lock().unwrap().len() + 1;
    let role = role(&request);
    let message = |text: &str| json!({"type": "message", "role": "assistant", "id": format!("msg_{n}"), "content": [{"type": "output_text", "text": text}]});
    let (item, usage) = match role {
        "compact" => (message(SUMMARY_TEXT), SUMMARY),
        "final" => (message("HJ-MOCK-FINAL: done."), FINAL),
        _ => (
            json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"), "name": "exec_command", "arguments": "{\"cmd\": \"echo hj-shell-ran\"}"}),
            if big.load(Ordering::SeqCst) {
                SHELL_BIG
            } else {
                SHELL
            },
        ),
    };
    exchanges.lock().unwrap().push(Exchange {
        request,
        usage,
        role,
    });
    let id = format!("resp_{n}");
    let events = [
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.done", "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": {
            "input_tokens": usage.input,
            "input_tokens_details": {"cached_tokens": usage.cached},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning},
            "total_tokens": usage.input + usage.output
        }}}),
    ];
    Response::sse(
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect(),
    )
}

/// Codex 0.169.0's trust hash of a command hook (what `install` writes for its own).
fn trust_hash(label: &str, matcher: Option<&str>, command: &str, timeout: u64) -> String {
    let s = |v: &str| Value::from(v).to_string();
    let mut id = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{timeout},"type":"command"}}]"#,
        s(label),
        s(command)
    );
    if let Some(m) = matcher {
        id.push_str(&format!(r#","matcher":{}"#, s(m)));
    }
    id.push('}');
    let hex: String = Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn hj(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env_remove("HOOKJOURNAL_DIR")
        .env_remove("RALPH_AGENT_ID")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookjournal {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn real_codex_runs_installed_hooks_without_bypass_and_is_journaled_and_costed() -> Ran {
    let Some(bin) = codex_bin() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_CODEX",
            format!("real Codex CLI {VERSION} not installed (bash .ci/install-codex-cli.sh)"),
        );
    };
    let started = Instant::now();
    let exchanges = Arc::new(Mutex::new(Vec::new()));
    let big = Arc::new(AtomicBool::new(false));
    let (ex, bg) = (exchanges.clone(), big.clone());
    let server = common::http::Server::start(move |req| serve(req, &ex, &bg));
    let port = server.port;

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, project, calls) = (root.join("home"), root.join("proj"), root.join("calls"));
    for d in [&home.join(".codex"), &project, &calls] {
        fs::create_dir_all(d).unwrap();
    }
    // A repository, as Codex expects a project to be.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .expect("git");
    assert!(git.success());
    // The counting hook, for every event hookjournal registers, in the user's hooks.json,
    // trusted the way install trusts its own.
    let rec = root.join("record.sh");
    fs::write(
        &rec,
        format!(
            "#!/bin/sh\n# One file per invocation (its pid); a single child process, so it finishes fast.\ncat > '{d}/'$$.tmp && mv '{d}/'$$.tmp '{d}/'$$.json\n",
            d = calls.display()
        ),
    )
    .unwrap();
    let rec_cmd = format!("sh '{}'", rec.display());
    let user_hooks = home.join(".codex/hooks.json");
    let mut hooks = serde_json::Map::new();
    let mut config = format!(
        "model = \"{MODEL}\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"HJ_MOCK_KEY\"\n\n[projects.{}]\ntrust_level = \"trusted\"\n",
        Value::from(project.to_str().unwrap())
    );
    for (e, r) in projections::hosts::CODEX.registered() {
        let matcher = r.tool_matcher.then_some("*");
        let mut group = json!({"hooks": [{"type": "command", "command": rec_cmd, "timeout": 10}]});
        if let Some(m) = matcher {
            group["matcher"] = json!(m);
        }
        hooks.insert(e.name.into(), json!([group]));
        let label = snake(e.name);
        let takes_matcher = !matches!(label.as_str(), "user_prompt_submit" | "stop" | "interrupt");
        config.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = \"{}\"\n",
            Value::from(format!("{}:{label}:0:0", user_hooks.display())),
            trust_hash(&label, matcher.filter(|_| takes_matcher), &rec_cmd, 10)
        ));
    }
    fs::write(&user_hooks, json!({ "hooks": hooks }).to_string()).unwrap();
    fs::write(home.join(".codex/config.toml"), config).unwrap();

    let said = hj(&project, &home, &["install", "--host", "codex"]);
    assert!(said.contains("Trusted: 12 hooks"), "{said}");
    hj(&project, &home, &["tasks", "add", SEED_TASK]);

    // Run A: one turn with a shell call, no compaction.
    let (ok, text, took) = codex_exec(&bin, &project, &home, PROMPT, None, &[]);
    eprintln!("run A: codex exec {took:?}");
    assert!(ok && text.contains("HJ-MOCK-FINAL"), "{text}");
    settle(&calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&project, &home, &calls, &mut failures);
    eprintln!("invocations: {counts:?}");
    for want in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ] {
        if !counts.contains_key(want) {
            failures.push(format!("{want} never ran: {counts:?}"));
        }
    }

    let served = std::mem::take(&mut *exchanges.lock().unwrap());
    if !served
        .first()
        .is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the journal's open task did not reach the model".into());
    }
    let sid = session_of(&calls, PROMPT).expect("run A's UserPromptSubmit");
    let show: Value =
        serde_json::from_str(&hj(&project, &home, &["show", &sid, "--json"])).unwrap();
    if served.len() != 2 {
        failures.push(format!("run A: {} requests, expected 2", served.len()));
    }
    check_usage("run A", &show, &served, &mut failures);
    if show["context_tokens"].as_u64() != Some(FINAL.input) {
        failures.push(format!(
            "context {} vs {}",
            show["context_tokens"], FINAL.input
        ));
    }
    if show["compactions"] != 0 {
        failures.push(format!(
            "run A: {} compactions, none happened",
            show["compactions"]
        ));
    }

    // Codex compacts once the context passes the limit: the shell call reports more.
    big.store(true, Ordering::SeqCst);
    let limit = format!("model_auto_compact_token_limit={COMPACT_LIMIT}");

    // Run B: a loop agent holding a task. PreCompact comes only before a real compaction: the
    // task is kept through the ordinary calls and released there, and the agent is stopped
    // (`continue:false`: Codex interrupts the turn and compacts nothing).
    let added = hj(
        &project,
        &home,
        &["tasks", "add", "HJ-LOOP-TASK", "--agent", "dev-1"],
    );
    let id = added.split_whitespace().next().unwrap_or("").to_string();
    hj(
        &project,
        &home,
        &["tasks", "claim", &id, "--agent", "dev-1"],
    );
    let (ok, text, took) = codex_exec(
        &bin,
        &project,
        &home,
        PROMPT_B,
        Some("dev-1"),
        &["-c", &limit],
    );
    eprintln!("run B: codex exec {took:?} (exit ok: {ok})");
    settle(&calls);
    let counts = check_journaled(&project, &home, &calls, &mut failures);
    eprintln!("invocations after run B: {counts:?}");
    let b = std::mem::take(&mut *exchanges.lock().unwrap());
    let roles: Vec<&str> = b.iter().map(|e| e.role).collect();
    if roles != ["shell"] || !text.contains("turn interrupted") {
        failures.push(format!(
            "run B: requests {roles:?}, expected the shell call alone, then the turn interrupted\n{text}"
        ));
    }
    let sid_b = session_of(&calls, PROMPT_B).expect("run B's UserPromptSubmit");
    let events = journal_events(&project, &home);
    let b_events: Vec<&Value> = events
        .iter()
        .filter(|v| v["session_id"] == sid_b.as_str())
        .collect();
    let named = |name: &str| {
        b_events
            .iter()
            .filter(|v| v["name"] == name)
            .map(|v| v["seq"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    let released: Vec<&&Value> = b_events
        .iter()
        .filter(|v| v["kind"] == "TaskReleased")
        .collect();
    let pre = named("PreCompact");
    match (released.as_slice(), pre.as_slice()) {
        ([r], [p]) if r["cause"].as_u64() == Some(*p) => {}
        _ => failures.push(format!(
            "run B: releases {:?} (causes), PreCompact at {pre:?}: expected one release, at the PreCompact",
            released.iter().map(|r| &r["cause"]).collect::<Vec<_>>()
        )),
    }
    if named("PostToolUse").is_empty() || !named("PostCompact").is_empty() {
        failures.push(format!(
            "run B: PostToolUse {:?}, PostCompact {:?}: expected an ordinary tool call and no compaction",
            named("PostToolUse"),
            named("PostCompact")
        ));
    }
    let tasks: Value =
        serde_json::from_str(&hj(&project, &home, &["tasks", "list", "--json"])).unwrap();
    let loop_task = tasks
        .as_array()
        .and_then(|t| t.iter().find(|t| t["subject"] == "HJ-LOOP-TASK"))
        .cloned()
        .unwrap_or(Value::Null);
    if loop_task["status"] != "failed"
        || loop_task["retry_count"] != 1
        || !loop_task["owner"].is_null()
    {
        failures.push(format!(
            "run B: the loop task after PreCompact: {loop_task}"
        ));
    }
    let show_b: Value =
        serde_json::from_str(&hj(&project, &home, &["show", &sid_b, "--json"])).unwrap();
    if show_b["compactions"] != 0 {
        failures.push(format!(
            "run B: {} compactions, Codex compacted nothing",
            show_b["compactions"]
        ));
    }

    // Run C: the same without loop control: Codex compacts (PreCompact, the summary request,
    // PostCompact, SessionStart `compact`) and the restore reaches the next request.
    let (ok, text, took) = codex_exec(&bin, &project, &home, PROMPT_C, None, &["-c", &limit]);
    eprintln!("run C: codex exec {took:?}");
    settle(&calls);
    let counts = check_journaled(&project, &home, &calls, &mut failures);
    eprintln!("invocations after run C: {counts:?}");
    let c = std::mem::take(&mut *exchanges.lock().unwrap());
    let roles: Vec<&str> = c.iter().map(|e| e.role).collect();
    if !ok || roles != ["shell", "compact", "final"] || !text.contains("HJ-MOCK-FINAL") {
        failures.push(format!(
            "run C: requests {roles:?}, expected shell, compact, final\n{text}"
        ));
    }
    let restored = c
        .iter()
        .skip_while(|e| e.role != "compact")
        .skip(1)
        .any(|e| {
            let r = e.request.to_string();
            r.contains("after context compaction") && r.contains("HJ-SEED-TASK")
        });
    if !restored {
        failures.push("run C: the restore after the compaction did not reach the model".into());
    }
    let sid_c = session_of(&calls, PROMPT_C).expect("run C's UserPromptSubmit");
    let c_hooks: Vec<(String, Value)> = journal_events(&project, &home)
        .into_iter()
        .filter(|v| v["session_id"] == sid_c.as_str() && v["kind"] == "Hook")
        .map(|v| (v["name"].as_str().unwrap_or("").to_string(), v))
        .collect();
    let sequence: Vec<String> = c_hooks
        .iter()
        .filter(|(n, _)| matches!(n.as_str(), "PreCompact" | "PostCompact" | "SessionStart"))
        .map(|(n, v)| match v["payload"]["source"].as_str() {
            Some(src) => format!("{n}:{src}"),
            None => n.clone(),
        })
        .collect();
    if sequence
        != [
            "SessionStart:startup",
            "PreCompact",
            "PostCompact",
            "SessionStart:compact",
        ]
    {
        failures.push(format!("run C: compaction events {sequence:?}"));
    }
    let restart = projections::hosts::CODEX.compaction.restart_source;
    if restart != Some("compact") {
        failures.push(format!(
            "the host table's Codex restart source is {restart:?}"
        ));
    }
    let show_c: Value =
        serde_json::from_str(&hj(&project, &home, &["show", &sid_c, "--json"])).unwrap();
    if show_c["compactions"] != 1 {
        failures.push(format!(
            "run C: {} compactions, Codex compacted once",
            show_c["compactions"]
        ));
    }
    check_usage("run C", &show_c, &c, &mut failures);

    // The cost of the three runs' real rollouts agrees with ccusage's Codex report.
    // The comparison with ccusage's report, where it is installed (its own test reports it
    // skipped otherwise).
    if let Ok(ccusage) = require_ccusage() {
        let cost: Value =
            serde_json::from_str(&hj(&project, &home, &["cost", "--by", "day", "--json"])).unwrap();
        let daily = ccusage_codex(&ccusage, &home.join(".codex"), "daily");
        agree_by_day("runs A-C", &cost, &daily, &BTreeMap::new(), &mut failures);
        eprintln!(
            "runs A-C: hookjournal ${} vs ccusage ${}",
            cost["total"]["usd"], daily["totals"]["costUSD"]
        );
    }

    eprintln!("codex_cli total: {:?}", started.elapsed());
    if std::env::var_os("HOOKJOURNAL_E2E_KEEP").is_some() {
        eprintln!("kept {}", tmp.keep().display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// `codex exec PROMPT` with no bypass flag, as the given loop agent; (exit ok, output, time).
fn codex_exec(
    bin: &Path,
    project: &Path,
    home: &Path,
    prompt: &str,
    agent: Option<&str>,
    extra: &[&str],
) -> (bool, String, Duration) {
    let t0 = Instant::now();
    let mut cmd = Command::new(bin);
    cmd.arg("exec")
        .args(extra)
        .arg(prompt)
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TMPDIR", common::client::private_tmp(home))
        .env("CODEX_HOME", home.join(".codex"))
        .env("HJ_MOCK_KEY", "hj-test-key")
        .stdin(std::process::Stdio::null());
    if let Some(a) = agent {
        cmd.env("RALPH_AGENT_ID", a);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text, t0.elapsed())
}

/// Waits until the counting hook's files stop changing (Codex may still be finishing a hook).
fn settle(calls: &Path) {
    let count = || fs::read_dir(calls).map(|d| d.count()).unwrap_or(0);
    let mut last = count();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(250));
        let now = count();
        if now == last {
            return;
        }
        last = now;
    }
}

/// Every line of `export --report events`, parsed, with the payload as JSON where it is.
fn journal_events(project: &Path, home: &Path) -> Vec<Value> {
    // Readers never ingest the spool: a writer does first.
    hj(project, home, &["drain"]);
    hj(project, home, &["export", "--report", "events"])
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(b) = v["payload_b64"].as_str() {
                let raw = base64::engine::general_purpose::STANDARD.decode(b).unwrap();
                v["payload"] = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            }
            v
        })
        .collect()
}

/// The session whose UserPromptSubmit (as the counting hook saw it) carried `prompt`.
fn session_of(calls: &Path, prompt: &str) -> Option<String> {
    recorded(calls).into_iter().find_map(|(n, raw)| {
        let v: Value = serde_json::from_slice(&raw).ok()?;
        (n == "UserPromptSubmit" && v["prompt"] == prompt)
            .then(|| v["session_id"].as_str().unwrap().to_string())
    })
}

/// Every invocation the counting hook saw: (event name, payload bytes), sorted.
fn recorded(calls: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(calls)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let raw = fs::read(&p).unwrap();
            let v: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            (
                v["hook_event_name"].as_str().unwrap_or("?").to_string(),
                raw,
            )
        })
        .collect();
    v.sort();
    v
}

/// Every invocation the counting hook saw is in the journal, byte for byte, once; returns how
/// many of each event it saw.
fn check_journaled(
    project: &Path,
    home: &Path,
    calls: &Path,
    failures: &mut Vec<String>,
) -> BTreeMap<String, usize> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        kind: String,
        name: Option<String>,
        session_id: Option<String>,
        #[serde(borrow)]
        payload: Option<&'a serde_json::value::RawValue>,
        payload_b64: Option<String>,
    }
    let mut recorded = recorded(calls);
    hj(project, home, &["drain"]);
    let export = hj(project, home, &["export", "--report", "events"]);
    let mut ends = BTreeMap::<String, usize>::new();
    let mut journal: Vec<(String, Vec<u8>)> = export
        .lines()
        .filter_map(|l| {
            let e: Line = serde_json::from_str(l).unwrap();
            (e.kind == "Hook").then(|| {
                let bytes = match (e.payload, e.payload_b64) {
                    (_, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
                    (Some(p), None) => p.get().as_bytes().to_vec(),
                    (None, None) => Vec::new(),
                };
                let name = e.name.unwrap_or_default();
                if name == "SessionEnd" {
                    *ends.entry(e.session_id.unwrap_or_default()).or_insert(0) += 1;
                }
                (name, bytes)
            })
        })
        .collect();
    journal.sort();
    let mut counts = BTreeMap::new();
    for (n, _) in &recorded {
        *counts.entry(n.clone()).or_insert(0) += 1;
    }
    // Codex gives SessionEnd hooks one short budget and, measured here, never ran the counting
    // hook's SessionEnd (user layer) while it ran hookjournal's (project layer): SessionEnd is
    // checked in the journal alone, once per session.
    let sessions: std::collections::BTreeSet<String> = recorded
        .iter()
        .filter_map(|(_, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            v["session_id"].as_str().map(str::to_string)
        })
        .collect();
    for s in &sessions {
        let n = ends.get(s).copied().unwrap_or(0);
        if n != 1 {
            failures.push(format!(
                "{n} SessionEnd events journaled for {s}, expected 1"
            ));
        }
    }
    journal.retain(|(n, _)| n != "SessionEnd");
    recorded.retain(|(n, _)| n != "SessionEnd");
    if recorded != journal {
        failures.push(format!(
            "journal {:?} vs counting hook {:?}",
            journal.iter().map(|x| &x.0).collect::<Vec<_>>(),
            recorded.iter().map(|x| &x.0).collect::<Vec<_>>()
        ));
    }
    counts
}

/// The session's tokens and USD equal what the server reported for its requests, priced at
/// gpt-5.1-codex's rates.
fn check_usage(run: &str, show: &Value, served: &[Exchange], failures: &mut Vec<String>) {
    let sum = |f: fn(&Usage) -> u64| served.iter().map(|e| f(&e.usage)).sum::<u64>();
    let want = (
        sum(|u| u.input - u.cached),
        sum(|u| u.output),
        sum(|u| u.cached),
    );
    let usd: f64 = served
        .iter()
        .map(|e| {
            let u = e.usage;
            (u.input - u.cached) as f64 * PRICE[0]
                + u.cached as f64 * PRICE[1]
                + u.output as f64 * PRICE[2]
        })
        .sum();
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
    );
    if got != want || (show["usd"].as_f64().unwrap_or(0.0) - usd).abs() > 1e-12 {
        failures.push(format!(
            "{run}: {} requests; tokens {got:?} ${} vs served {want:?} ${usd}",
            served.len(),
            show["usd"]
        ));
    }
}

/// `PreToolUse` → `pre_tool_use`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// ccusage, or why not (a failure under `HOOKJOURNAL_REQUIRE_CCUSAGE=1`).
fn require_ccusage() -> Result<PathBuf, Skip> {
    common::ccusage::bin().map_or_else(
        || {
            missing(
                "HOOKJOURNAL_REQUIRE_CCUSAGE",
                format!("ccusage {CCUSAGE_VERSION} not installed (bash .ci/install-ccusage.sh)"),
            )
        },
        Ok,
    )
}

/// `ccusage codex REPORT --offline --json -z UTC` over the rollouts under `codex_home`.
fn ccusage_codex(bin: &Path, codex_home: &Path, report: &str) -> Value {
    let home = codex_home.parent().unwrap();
    let tmp = common::client::private_tmp(home);
    common::ccusage::report(
        bin,
        &["codex", report, "--offline", "--json", "--timezone", "UTC"],
        &[
            ("HOME", home.as_os_str()),
            ("TMPDIR", tmp.as_os_str()),
            ("CODEX_HOME", codex_home.as_os_str()),
        ],
        &format!("codex {report}"),
    )
}

/// One row of `hookjournal cost` against ccusage's: tokens exactly (ccusage's `inputTokens` are
/// the uncached ones, as hookjournal's; outputs include reasoning in both), dollars to 1e-9 after
/// taking out `unpriced_usd`, what ccusage priced that hookjournal leaves unpriced.
fn agree(what: &str, ours: &Value, theirs: &Value, unpriced_usd: f64, failures: &mut Vec<String>) {
    let pairs = [
        ("input_tokens", "inputTokens"),
        ("cache_read_tokens", "cacheReadTokens"),
        ("cache_write_tokens", "cacheCreationTokens"),
        ("output_tokens", "outputTokens"),
        ("total_tokens", "totalTokens"),
    ];
    for (o, t) in pairs {
        if ours[o].as_u64() != theirs[t].as_u64() {
            failures.push(format!(
                "{what}: {o} {} vs ccusage {t} {}",
                ours[o], theirs[t]
            ));
        }
    }
    let (o, t) = (
        ours["usd"].as_f64().unwrap_or(0.0),
        theirs["costUSD"].as_f64().unwrap_or(f64::NAN),
    );
    if (o - (t - unpriced_usd)).abs() > 1e-9 {
        failures.push(format!(
            "{what}: ${o} vs ccusage ${t} (less ${unpriced_usd} hookjournal leaves unpriced)"
        ));
    }
}

/// `hookjournal cost --by day` and its total against `ccusage codex daily`; `unpriced`: per day,
/// the dollars ccusage gives to rollouts of models hookjournal does not price.
fn agree_by_day(
    what: &str,
    cost: &Value,
    daily: &Value,
    unpriced: &BTreeMap<String, f64>,
    failures: &mut Vec<String>,
) {
    let ours: BTreeMap<String, &Value> = cost["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap().to_string(), r))
        .collect();
    let theirs: BTreeMap<String, &Value> = daily["daily"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["date"].as_str().unwrap().to_string(), r))
        .collect();
    if ours.keys().ne(theirs.keys()) {
        failures.push(format!(
            "{what}: days {:?} vs ccusage {:?}",
            ours.keys(),
            theirs.keys()
        ));
    }
    for (day, t) in &theirs {
        if let Some(o) = ours.get(day) {
            let u = unpriced.get(day).copied().unwrap_or(0.0);
            agree(&format!("{what} {day}"), o, t, u, failures);
        }
    }
    agree(
        &format!("{what} total"),
        &cost["total"],
        &daily["totals"],
        unpriced.values().sum(),
        failures,
    );
}

/// Codex cost agrees with ccusage's Codex report on a corpus of real Codex 0.169.0 rollouts
/// (`tests/fixtures/real-hosts/codex-0.169.0-rollouts/corpus/`: two days; cached input,
/// reasoning output, an interrupted turn, compactions with their summary requests, and two
/// rollouts whose first requests reach the same running total). Each rollout is read by the hook
/// at a SessionEnd naming it, as Codex would send it. Every model is priced, gpt-5.5 (Codex
/// 0.169.0's default) included, and tokens and dollars agree per session, per day and in total.
fn codex_cost_agrees_with_ccusage_on_a_rollout_corpus() -> Ran {
    let ccusage = require_ccusage()?;
    let tmp = tempfile::tempdir().unwrap();
    let codex_home = tmp.path().join("home/.codex");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-hosts/codex-0.169.0-rollouts/corpus");
    let mut rollouts = Vec::new();
    for day in fs::read_dir(corpus.join("sessions/2026/11"))
        .unwrap()
        .flatten()
    {
        let dir = codex_home.join("sessions/2026/11").join(day.file_name());
        fs::create_dir_all(&dir).unwrap();
        for f in fs::read_dir(day.path()).unwrap().flatten() {
            let to = dir.join(f.file_name());
            fs::copy(f.path(), &to).unwrap();
            rollouts.push(to);
        }
    }
    rollouts.sort();
    assert_eq!(rollouts.len(), 5, "{rollouts:?}");
    let journal = tmp.path().join("journal");
    for r in &rollouts {
        let first = fs::read_to_string(r).unwrap();
        let meta: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        let sid = meta["payload"]["id"].as_str().unwrap();
        let payload = json!({
            "session_id": sid,
            "transcript_path": r,
            "cwd": "/home/dev/proj",
            "hook_event_name": "SessionEnd",
            "reason": "other",
        });
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .arg("--journal")
            .arg(&journal)
            .args(["hook", "--host", "codex"])
            .env("HOOKJOURNAL_DRAINER", "inline")
            .env_remove("HOOKJOURNAL_DIR")
            .env_remove("RALPH_AGENT_ID")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
    }
    let cost = |by: &str| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .arg("--journal")
            .arg(&journal)
            .args(["cost", "--by", by, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let mut failures = Vec::new();

    // By session: ccusage names a session by its rollout file, which ends with the thread id.
    let sessions = ccusage_codex(&ccusage, &codex_home, "session");
    let ours = cost("session");
    let theirs = sessions["sessions"].as_array().unwrap();
    if theirs.len() != rollouts.len() {
        failures.push(format!("ccusage saw {} sessions", theirs.len()));
    }
    for t in theirs {
        let file = t["sessionFile"].as_str().unwrap_or_default();
        let Some(o) = ours["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"].as_str().is_some_and(|k| file.ends_with(k)))
        else {
            failures.push(format!("no session of hookjournal's for {file}"));
            continue;
        };
        if o["unpriced_responses"].as_u64() != Some(0) {
            failures.push(format!(
                "{file}: {} unpriced responses (models {:?})",
                o["unpriced_responses"],
                t["models"]
                    .as_object()
                    .map(|m| m.keys().collect::<Vec<_>>())
            ));
        }
        agree(&format!("session {file}"), o, t, 0.0, &mut failures);
    }

    // By day and in total.
    let daily = ccusage_codex(&ccusage, &codex_home, "daily");
    agree_by_day(
        "corpus",
        &cost("day"),
        &daily,
        &BTreeMap::new(),
        &mut failures,
    );
    eprintln!(
        "corpus: hookjournal ${} ({} unpriced responses) vs ccusage ${}",
        ours["total"]["usd"], ours["total"]["unpriced_responses"], sessions["totals"]["costUSD"]
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

harness_main!(
    real_codex_runs_installed_hooks_without_bypass_and_is_journaled_and_costed,
    codex_cost_agrees_with_ccusage_on_a_rollout_corpus,
);
