//! End to end with the real Factory Droid (`@factory/cli` 0.225.1, whose linux-x64 binary package
//! is 0.225.2, pinned by `.ci/install-droid.sh`), headless against a loopback chat-completions
//! server written here (a `customModels` entry of provider `generic-chat-completion-api`: no
//! login), with a second hook (in `~/.factory/settings.json`) recording every invocation.
//!
//! Droid is driven through its JSON-RPC session (`droid exec --input-format stream-jsonrpc`,
//! what its SDK uses): `droid exec PROMPT` fires no UserPromptSubmit, and `droid exec -s ID`
//! fetches the session from Factory's servers. One process, after `hookjournal install --host
//! droid` (`.factory/settings.json`) and a task seeded:
//!
//! - turn one: the model reads README.md and creates notes.txt, and its final response reports a
//!   prompt over the `compactionTokenLimit` the test sets, so Droid compacts at the turn's end (no
//!   hook fires for it); the Stop hook's read of Droid's session file finds the compaction;
//! - turn two: its UserPromptSubmit carries the restore after that compaction;
//! - `droid.compact_session` (a compaction asked for: SessionStart `resume`, PreCompact);
//! - turn three: its UserPromptSubmit carries the restore after that one.
//!
//! (A compaction its threshold starts after a response that calls a tool runs while the tool
//! does: whether the tool's result is in the summary depends on which finishes first, so the
//! test starts it with a response that calls none.)
//!
//! Checked: every invocation the recording hook saw is journaled once, as host `droid`, payload
//! for payload (none `Malformed`); the seeded task reaches the first request; both restores reach
//! the model; the two compactions are counted once each; prompts, the file read and the file
//! created; tokens and USD equal what the server reported for every request (summaries included:
//! Droid's running totals count them), priced at GPT-4.1's rates, and ccusage's Droid report over
//! the same files, where ccusage is installed.
//!
//! Running it
//! ----------
//!   bash .ci/install-droid.sh                # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test droid -- --nocapture
//! Environment:
//!   HOOKJOURNAL_DROID_PREFIX=/path           another install (node_modules/@factory/cli-linux-x64)
//!   HOOKJOURNAL_REQUIRE_DROID=1              fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_CCUSAGE_BIN=/path/to/ccusage another ccusage for the comparison
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::ccusage::VERSION as CCUSAGE_VERSION;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const VERSION: &str = "0.225.1";
/// The version the binary package reports (the registry has no 0.225.1 of it).
const BINARY_VERSION: &str = "0.225.2";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
/// How long any one step (a turn, a compaction, the exit) may take before the test gives up.
const STEP_TIMEOUT: Duration = Duration::from_secs(120);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: read README.md, then write notes.txt.";
const PROMPT_2: &str = "HJ-PROMPT-2: and now the second turn.";
const PROMPT_3: &str = "HJ-PROMPT-3: and a third, after the compaction asked for.";
/// The restore's first words after a compaction, as any session's restore text has them.
const RESTORE: &str = "after context compaction, from its event journal";
/// Droid compacts once a response reports more prompt tokens than this (`compactionTokenLimit`).
const COMPACTION_LIMIT: u64 = 50_000;

fn client() -> Option<PathBuf> {
    let prefix = std::env::var_os("HOOKJOURNAL_DROID_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("droid-{VERSION}"))))?;
    let bin = prefix.join("node_modules/@factory/cli-linux-x64/bin/droid");
    bin.exists().then_some(bin)
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
/// Over `COMPACTION_LIMIT`: Droid compacts once the response is in (with no tool to run: at the
/// turn's end, before its Stop hook).
const BIG: Usage = Usage {
    prompt: 60_000,
    cached: 0,
    output: 12,
};
const SUMMARY: Usage = Usage {
    prompt: 3_000,
    cached: 0,
    output: 20,
};

/// What the server answered, per request (`role`: summary).
type Exchange = common::chat_server::Exchange<bool>;

type Server = common::chat_server::Scripted<bool>;

/// The server; `project`: where the scripted tools look. Droid's summary requests offer no tools.
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |r| r.body.get("tools").is_none(),
        move |body, summary, all| reply(body, *summary, all, &project),
    )
}

/// A summary request gets a summary. Turn one: `Read README.md`, `Create notes.txt`, then a final
/// text whose response reports `BIG` (Droid compacts at the turn's end, before its Stop hook);
/// turns two and three answer at once. `before`: the requests answered so far.
fn reply(
    request: &Value,
    summary: bool,
    before: &[Exchange],
    project: &Path,
) -> (Value, &'static str, Usage) {
    if summary {
        let text = "HJ-MOCK-SUMMARY: README.md was read, notes.txt written.";
        return (common::chat_server::text(text), "stop", SUMMARY);
    }
    let text = request.to_string();
    if text.contains("HJ-PROMPT-3") || text.contains("HJ-PROMPT-2") {
        let text = common::chat_server::text("HJ-MOCK-FINAL: the turn is done.");
        return (text, "stop", NORMAL);
    }
    let calls = before.iter().filter(|e| !e.role).count();
    let (name, args) = match calls {
        0 => ("Read", json!({"file_path": project.join("README.md")})),
        1 => (
            "Create",
            json!({"file_path": project.join("notes.txt"), "content": "hj notes\n"}),
        ),
        _ => {
            let text = common::chat_server::text("HJ-MOCK-FINAL: all done.");
            return (text, "stop", BIG);
        }
    };
    (
        common::chat_server::tool_call(calls, name, &args),
        "tool_calls",
        NORMAL,
    )
}

// ---------------------------------------------------------------------------------------------
// Droid's JSON-RPC session on its stdin and stdout.

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line Droid printed, for the failure message.
    seen: Vec<String>,
    next_id: u64,
}

impl Session {
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let message = json!({"type": "request", "jsonrpc": "2.0", "factoryApiVersion": "1.0.0",
            "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}").map_err(|e| format!("writing {method}: {e}"))?;
        stdin.flush().map_err(|e| e.to_string())?;
        let response = self.until(|v| v["type"] == "response" && v["id"] == id.as_str())?;
        match response.get("error") {
            Some(e) => Err(format!("{method}: {e}")),
            None => Ok(response["result"].clone()),
        }
    }

    /// Reads Droid's output until a line `done` accepts (or the step's time is up).
    fn until(&mut self, done: impl Fn(&Value) -> bool) -> Result<Value, String> {
        let end = Instant::now() + STEP_TIMEOUT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => return Err("timed out".into()),
                Err(RecvTimeoutError::Disconnected) => return Err("droid exited".into()),
            };
            self.seen.push(line.clone());
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if done(&v) {
                    return Ok(v);
                }
            }
        }
    }

    /// A user message, and the turn it starts, to its end.
    fn turn(&mut self, text: &str) -> Result<(), String> {
        self.request("droid.add_user_message", json!({"text": text}))?;
        self.until(|v| v["params"]["notification"]["type"] == "agent_turn_completed")
            .map(drop)
    }

    /// Closes its stdin and waits for it to end (SessionEnd), killing it past the timeout.
    fn close(mut self) -> Result<Vec<String>, String> {
        drop(self.stdin.take());
        while let Ok(l) = self.lines.recv_timeout(STEP_TIMEOUT) {
            self.seen.push(l);
        }
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return if s.success() {
                    Ok(self.seen)
                } else {
                    Err(format!("droid exited with {s}"))
                };
            }
            if start.elapsed() > STEP_TIMEOUT {
                let pgid = self.child.id();
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pgid}")])
                    .status();
                let _ = self.child.wait();
                return Err("droid did not exit".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The harness.

type Env = common::client::Sandbox<bool>;

impl Env {
    fn new() -> Env {
        let env = Env::start(|project| start_server(project.to_path_buf()));
        fs::write(env.recorder(), recorder(&env.calls)).unwrap();
        env
    }

    /// `~/.factory/settings.json`: the loopback model, the compaction threshold, and the recording
    /// hook for every event install registers.
    fn user_settings(&self) {
        let mut hooks = serde_json::Map::new();
        for (e, _) in projections::hosts::DROID.registered() {
            let command = format!("sh '{}' {}", self.recorder().display(), e.name);
            hooks.insert(
                e.name.into(),
                json!([{"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 10}]}]),
            );
        }
        let settings = json!({
            "customModels": [{
                "model": MODEL,
                "displayName": "HJ loopback",
                "baseUrl": format!("http://127.0.0.1:{}/v1", self.server.port),
                "apiKey": "hj-test-key",
                "provider": "generic-chat-completion-api",
                "maxOutputTokens": 4096,
                // Droid offers an OpenAI model ApplyPatch instead of Create and Edit otherwise.
                "fileEditToolProfile": "create-edit",
            }],
            "compactionTokenLimit": COMPACTION_LIMIT,
            "hooks": hooks,
        });
        fs::create_dir_all(self.home.join(".factory")).unwrap();
        fs::write(
            self.home.join(".factory/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
    }

    /// `droid exec` on a JSON-RPC session, its own process group, its output read by a thread.
    fn droid(&self, bin: &Path) -> Session {
        let mut child = Command::new(bin)
            .args(["exec", "--input-format", "stream-jsonrpc"])
            .args(["--output-format", "stream-jsonrpc", "--auto", "low"])
            .args(["-m", &format!("custom:{MODEL}")])
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn droid");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            next_id: 0,
        }
    }
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\n# Records one hook invocation verbatim: $1 is the event it was registered for.\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// Every recorded invocation is in the journal exactly once, payload for payload, as host
/// `droid`, and nothing is `Malformed`. Returns the invocations per event.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let events = common::client::journal_events(&env.project, &env.home);
    common::client::check_journaled("droid", &env.recorded(), &events, failures)
}

/// The journal's answers (their first line), each with its event's name and whether it reached
/// a model request.
fn answers_reached(env: &Env, exchanges: &[Exchange]) -> Vec<(String, String, bool)> {
    let events = env.events();
    let names: BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .filter_map(|e| Some((e["seq"].as_u64()?, e["name"].as_str()?.to_string())))
        .collect();
    events
        .iter()
        .filter(|e| e["kind"] == "ResponseEmitted")
        .filter_map(|e| {
            let body: Value = serde_json::from_slice(&common::payload_bytes(e)).ok()?;
            let answer: Value = serde_json::from_str(body["output"].as_str()?).ok()?;
            let text = answer["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .or(answer["reason"].as_str())?;
            let first = text.lines().next().unwrap_or("").to_string();
            let probe: String = first
                .chars()
                .take_while(|c| !matches!(c, '"' | '\\'))
                .collect();
            let reached = exchanges
                .iter()
                .any(|x| x.request.to_string().contains(probe.trim_end()));
            let name = names
                .get(&e["cause"].as_u64()?)
                .cloned()
                .unwrap_or_default();
            Some((name, first, reached))
        })
        .collect()
}

/// The first request after the `n`th summary request (0-based) and before the next one that
/// carries the restore.
fn restored_after_summary(exchanges: &[Exchange], n: usize) -> Option<usize> {
    let summaries: Vec<usize> = (0..exchanges.len())
        .filter(|&i| exchanges[i].role)
        .collect();
    let end = summaries.get(n + 1).copied().unwrap_or(exchanges.len());
    (summaries.get(n)? + 1..end).find(|&i| exchanges[i].request.to_string().contains(RESTORE))
}

fn verdict(failures: Vec<String>) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The test.

fn real_droid_session_is_journaled_restored_and_costed() -> Ran {
    let Some(bin) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_DROID",
            format!(
                "Factory Droid {VERSION} is not installed (bash .ci/install-droid.sh installs it)"
            ),
        );
    };
    let started = Instant::now();
    let env = Env::new();
    env.user_settings();
    let said = env.hj(&["install", "--host", "droid"]);
    eprintln!("{said}");
    env.hj(&["tasks", "add", SEED_TASK]);

    let mut droid = env.droid(&bin);
    let cwd = env.project.canonicalize().unwrap();
    let run = (|| {
        let init = droid.request(
            "droid.initialize_session",
            json!({"machineId": "hj-test", "cwd": cwd, "modelId": format!("custom:{MODEL}"),
                "autonomyLevel": "low"}),
        )?;
        droid.turn(PROMPT)?;
        droid.turn(PROMPT_2)?;
        droid.request("droid.compact_session", json!({}))?;
        droid.turn(PROMPT_3)?;
        Ok::<String, String>(init["sessionId"].as_str().unwrap_or_default().to_string())
    })();
    let (sid, output) = match run {
        Ok(sid) => (sid, droid.close()),
        Err(e) => {
            let seen = droid.seen.join("\n");
            let _ = droid.close();
            panic!("driving droid: {e}\n{seen}")
        }
    };
    let output = output.unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "droid {BINARY_VERSION} ran {:?}, {} lines of JSON-RPC output",
        started.elapsed(),
        output.len()
    );

    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PreCompact",
        "Stop",
        "SessionEnd",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    check_answers(&env, &exchanges, &mut failures);
    let show = check_usage(&env, &sid, &exchanges, &mut failures);
    check_snapshot(&env, &show, &mut failures);
    if let Some(ccusage) = common::ccusage::bin() {
        compare_with_ccusage(&ccusage, &env, &sid, &show, &mut failures);
    } else if std::env::var("HOOKJOURNAL_REQUIRE_CCUSAGE").is_ok_and(|v| v == "1") {
        failures.push(format!(
            "HOOKJOURNAL_REQUIRE_CCUSAGE=1, but ccusage {CCUSAGE_VERSION} is not installed"
        ));
    }
    eprintln!("the test took {:?}", started.elapsed());
    env.keep();
    verdict(failures);
    Ok(())
}

/// The seeded task reaches the first request; the restore reaches a request after each of the
/// two compactions (the threshold's, then the one asked for); every answer reached the model.
fn check_answers(env: &Env, exchanges: &[Exchange], failures: &mut Vec<String>) {
    let summaries = exchanges.iter().filter(|e| e.role).count();
    if summaries != 2 {
        failures.push(format!("{summaries} summary requests, not 2"));
    }
    if !exchanges
        .first()
        .is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the seeded task did not reach the first request".into());
    }
    for n in 0..2 {
        match restored_after_summary(exchanges, n) {
            Some(i) => eprintln!(
                "the restore after compaction {} reached request #{i}",
                n + 1
            ),
            None => failures.push(format!(
                "the restore after compaction {} did not reach the model",
                n + 1
            )),
        }
    }
    let reached = answers_reached(env, exchanges);
    eprintln!("answers (event, first line, reached a model request): {reached:#?}");
    if reached.is_empty() || reached.iter().any(|(_, _, r)| !r) {
        failures.push(format!("an answer did not reach the model: {reached:?}"));
    }
}

/// Prompts, the compactions, the file read and the file created.
fn check_snapshot(env: &Env, show: &Value, failures: &mut Vec<String>) {
    if show["last_prompts"] != json!([PROMPT_3, PROMPT_2, PROMPT]) || show["host"] != "droid" {
        failures.push(format!(
            "prompts {}, host {}",
            show["last_prompts"], show["host"]
        ));
    }
    if show["compactions"] != 2 {
        failures.push(format!("{} compactions counted", show["compactions"]));
    }
    let cwd = env.project.canonicalize().unwrap();
    for (field, file) in [("files_read", "README.md"), ("files_edited", "notes.txt")] {
        let path = cwd.join(file);
        if !show[field]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == path.to_str().unwrap()))
        {
            failures.push(format!("{field} {}", show[field]));
        }
    }
}

/// Tokens and USD of the session equal what the server reported for every request, summaries
/// included (Droid's running totals count them).
fn check_usage(env: &Env, sid: &str, served: &[Exchange], failures: &mut Vec<String>) -> Value {
    let sum = |f: fn(&Usage) -> u64| served.iter().map(|e| f(&e.usage)).sum::<u64>();
    let want = (
        sum(|u| u.prompt - u.cached),
        sum(|u| u.output),
        sum(|u| u.cached),
    );
    let show = env.json(&["show", sid, "--json"]);
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
    );
    let usd: f64 = served.iter().map(|e| e.usage.usd(PRICE)).sum();
    let shown = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) ${shown:.6}; served {want:?} ${usd:.6} \
         over {} requests",
        served.len()
    );
    if got != want || (shown - usd).abs() > 1e-9 {
        failures.push(format!("tokens {got:?} ${shown} vs served {want:?} ${usd}"));
    }
    if show["model"] != MODEL {
        failures.push(format!("model {}", show["model"]));
    }
    show
}

/// `ccusage droid session --offline --json` over the test's `~/.factory`: the same tokens for the
/// session (ccusage reads the same `tokenUsage`), and the same dollars.
fn compare_with_ccusage(
    bin: &Path,
    env: &Env,
    sid: &str,
    show: &Value,
    failures: &mut Vec<String>,
) {
    let session = match common::ccusage::session(bin, "droid", &env.home, sid) {
        Ok(s) => s,
        Err(e) => {
            failures.push(e);
            return;
        }
    };
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let ours = (
        n(&show["input_tokens"]),
        n(&show["output_tokens"]),
        n(&show["cache_read_tokens"]),
    );
    let theirs = (
        n(&session["inputTokens"]),
        n(&session["outputTokens"]),
        n(&session["cacheReadTokens"]),
    );
    let usd = show["usd"].as_f64().unwrap_or(0.0);
    let their_usd = session["totalCost"].as_f64().unwrap_or(0.0);
    eprintln!(
        "ccusage {CCUSAGE_VERSION} (session {sid}): input {}, output {}, \
         cache reads {}, ${their_usd:.6}; hookjournal {ours:?} ${usd:.6}",
        theirs.0, theirs.1, theirs.2
    );
    if ours != theirs || (usd - their_usd).abs() > 1e-6 {
        failures.push(format!(
            "ccusage: {theirs:?} ${their_usd} vs hookjournal {ours:?} ${usd}"
        ));
    }
}

harness_main!(real_droid_session_is_journaled_restored_and_costed);
