//! End to end with the real GitHub Copilot CLI (1.0.102, pinned by `.ci/install-copilot-cli.sh`),
//! headless (`copilot -p … --allow-all-tools`, bring-your-own-model) against a loopback
//! chat-completions server written here, with a second hook recording every invocation.
//!
//! Run A, `hookjournal install --host copilot` (`.github/hooks/hookjournal.json`, the folder
//! trusted in `~/.copilot/config.json` as Copilot records it) and a task seeded: a tool turn
//! (the shell, `view`, then more shell calls) whose second response reports a prompt near the
//! 20,000-token limit, so Copilot compacts while the turn goes on. Copilot's OpenTelemetry file
//! export is on. Checked: every invocation the recording hook saw is journaled once, as host
//! `copilot`, payload for payload (none `Malformed`); the seeded task (sessionStart, flat
//! `additionalContext`) and the restore after the compaction (a later tool result) reach the
//! model's requests; the compaction is counted once, from Copilot's session file; tokens and USD
//! equal what the server reported (the compaction's own request included), priced at GPT-4.1's
//! rates, counted once although the OTel file holds the same calls.
//!
//! Run B, only `hookjournal install --host claude` (`.claude/settings.json`, which Copilot runs
//! too): the same turn is recorded as host `copilot` (by the hook's environment), nothing is
//! `Malformed`, the task reaches the model, tokens and USD are read, and the compaction (whose
//! preCompact never reaches a `.claude` handler) is counted from the session file.
//!
//! Running it
//! ----------
//!   bash .ci/install-copilot-cli.sh          # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test copilot_cli -- --nocapture
//! Environment:
//!   HOOKJOURNAL_COPILOT_BIN=/path/to/copilot  use another Copilot CLI (its bundle unpacks into
//!                                             the CI cache's copilot-xdg-cache)
//!   HOOKJOURNAL_REQUIRE_COPILOT=1             fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                    keep the temp dir (requests.jsonl, journal)

mod common;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "1.0.102";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, read README.md, then go on.";
/// The prompt limit Copilot is given: its static context (~10,500 tokens) fits, a response
/// reporting `BIG` does not.
const MAX_PROMPT: u64 = 20_000;
/// The restore's first words, as any session's restore text starts.
const RESTORE: &str = "after context compaction, from its event journal";
/// Shell calls after `view` at most: the turn ends once the restore was seen in a request.
const MORE_CALLS: usize = 8;
/// How long the journal may take to read Copilot's last records after the run.
const FOLLOW_WAIT: Duration = Duration::from_secs(45);

type Outcome = Result<Completion, Failed>;

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::ignorable_test(
            "copilot_hooks_file_journals_every_invocation_and_its_answers_reach_the_model",
            || with_client(run_a),
        ),
        Trial::ignorable_test(
            "claude_settings_run_by_copilot_are_journaled_as_copilot",
            || with_client(run_b),
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// The pinned client and the cache its bundle unpacks into.
struct Client {
    bin: PathBuf,
    xdg_cache: PathBuf,
}

/// Runs `test` with the client, or reports the test ignored with the reason it is missing
/// (failed, with `HOOKJOURNAL_REQUIRE_COPILOT=1`).
fn with_client(test: fn(&Client) -> Result<(), String>) -> Outcome {
    let cache = common::ci_cache();
    let xdg_cache = cache
        .as_ref()
        .map(|c| c.join("copilot-xdg-cache"))
        .unwrap_or_default();
    let bin = std::env::var_os("HOOKJOURNAL_COPILOT_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            cache.map(|c| {
                c.join(format!(
                    "copilot-cli-{VERSION}/node_modules/@github/copilot-linux-x64/copilot"
                ))
            })
        })
        .filter(|b| b.exists());
    let Some(bin) = bin else {
        let why = format!(
            "Copilot CLI {VERSION} is not installed (bash .ci/install-copilot-cli.sh installs it)"
        );
        if std::env::var("HOOKJOURNAL_REQUIRE_COPILOT").is_ok_and(|v| v == "1") {
            return Err(format!("HOOKJOURNAL_REQUIRE_COPILOT is set, but {why}").into());
        }
        return Ok(Completion::ignored_with(why));
    };
    test(&Client { bin, xdg_cache })
        .map(|()| Completion::Completed)
        .map_err(Failed::from)
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
const BIG: Usage = Usage {
    prompt: 19_500,
    cached: 0,
    output: 12,
};
const SUMMARY: Usage = Usage {
    prompt: 12_000,
    cached: 0,
    output: 20,
};

/// What the server answered, per request (`role`: interaction).
type Exchange = common::chat_server::Exchange<String>;

type Server = common::chat_server::Scripted<String>;

/// The server; a request's role is its `x-interaction-type` (`conversation-compaction` for the
/// compaction's summary request).
fn start_server() -> Server {
    Server::start(
        MODEL,
        |r| {
            r.header("x-interaction-type")
                .unwrap_or_default()
                .to_string()
        },
        |body, interaction, all| reply(body, interaction, all),
    )
}

/// The compaction gets a summary. The agent's chat: `bash` (a marker), `view README.md`, then
/// `bash` calls until a request carries the restore (or `MORE_CALLS`), then a final text. The
/// second agent request reports `BIG`: Copilot compacts before its next one.
fn reply(request: &Value, interaction: &str, before: &[Exchange]) -> (Value, &'static str, Usage) {
    if interaction == "conversation-compaction" {
        let text = "HJ-MOCK-SUMMARY: a marker was written and README.md read.";
        return (
            json!({"role": "assistant", "content": text}),
            "stop",
            SUMMARY,
        );
    }
    let agent_calls = before
        .iter()
        .filter(|e| e.role != "conversation-compaction")
        .count();
    let usage = if agent_calls == 1 { BIG } else { NORMAL };
    let restored = request.to_string().contains(RESTORE);
    let (name, args) = match agent_calls {
        0 => (
            "bash",
            json!({"command": "echo hj-shell-ran > marker.txt", "description": "write a marker",
                "mode": "sync", "initial_wait": 10}),
        ),
        1 => ("view", json!({"path": "README.md"})),
        n if n < 2 + MORE_CALLS && !restored => (
            "bash",
            json!({"command": format!("echo hj-more-{n}"), "description": "echo",
                "mode": "sync", "initial_wait": 10}),
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

type Env = common::client::Sandbox<String>;

impl Env {
    fn new() -> Env {
        let env = Env::start(|_| start_server());
        fs::write(env.recorder(), recorder(&env.calls)).unwrap();
        env
    }

    /// Trusts the project as Copilot's own prompt records it (`trustedFolders`).
    fn trust(&self) {
        fs::create_dir_all(self.home.join(".copilot")).unwrap();
        let project = self.project.canonicalize().unwrap();
        fs::write(
            self.home.join(".copilot/config.json"),
            json!({"trustedFolders": [project]}).to_string(),
        )
        .unwrap();
    }

    /// `copilot -p PROMPT` headless, killed (with its process group) past the timeout.
    fn copilot(&self, client: &Client, otel: bool) -> Result<String, String> {
        let mut cmd = Command::new(&client.bin);
        cmd.args([
            "-p",
            PROMPT,
            "--allow-all-tools",
            "--no-auto-update",
            "--output-format",
            "json",
        ])
        .current_dir(&self.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &self.home)
        .env("TMPDIR", common::client::private_tmp(&self.home))
        .env("TERM", "dumb")
        .env("XDG_CACHE_HOME", &client.xdg_cache)
        .env("XDG_CONFIG_HOME", self.home.join(".config"))
        .env(
            "COPILOT_PROVIDER_BASE_URL",
            format!("http://127.0.0.1:{}/v1", self.server.port),
        )
        .env("COPILOT_PROVIDER_API_KEY", "hj-test-key")
        .env("COPILOT_MODEL", MODEL)
        .env("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", MAX_PROMPT.to_string())
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        if otel {
            cmd.env(
                "COPILOT_OTEL_FILE_EXPORTER_PATH",
                self.home.join(".copilot/otel/copilot-otel.jsonl"),
            );
        }
        let start = Instant::now();
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let stdout = run.stdout.clone();
        let out = format!(
            "--- stdout (last lines) ---\n{}\n--- stderr ---\n{}",
            stdout
                .lines()
                .filter(|l| !l.trim().is_empty())
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join("\n"),
            run.stderr.clone()
        );
        let answered = stdout.contains("HJ-MOCK-FINAL");
        eprintln!("copilot ran {:?}", start.elapsed());
        match status {
            Some(s) if s.success() && answered => Ok(out),
            _ => Err(format!("copilot -p failed ({status:?}):\n{out}")),
        }
    }

    /// What the journal answered, in order (`ResponseEmitted` outputs).
    fn answers(&self) -> Vec<Value> {
        // Readers never ingest the spool: a writer does first.
        self.hj(&["drain"]);
        common::events_of(&self.hj(&["export", "--report", "events"]))
            .into_iter()
            .filter(|e| e["kind"] == "ResponseEmitted")
            .filter_map(|e| {
                let body = common::payload_bytes(&e);
                let v: Value = serde_json::from_slice(&body).ok()?;
                serde_json::from_str(v["output"].as_str()?).ok()
            })
            .collect()
    }
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\n# Records one hook invocation verbatim: $1 is the event it was registered for.\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// Waits until the recording hook's directory stops changing (hooks may outlive the run).
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
/// `copilot`, and nothing is `Malformed`. Returns the invocations per event.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let events = common::client::journal_events(&env.project, &env.home);
    common::client::check_journaled("copilot", &env.recorded(), &events, failures)
}

/// The session the prompt started (from the recorded payloads).
fn session_id(env: &Env) -> Option<String> {
    env.recorded().iter().find_map(|(_, raw)| {
        let v: Value = serde_json::from_slice(raw).ok()?;
        if v["prompt"].as_str()? != PROMPT {
            return None;
        }
        v["sessionId"]
            .as_str()
            .or(v["session_id"].as_str())
            .map(str::to_string)
    })
}

/// Tokens and USD of the session equal what the server reported. Copilot writes its last
/// usage records after the sessionEnd hook: the journal's follower reads them once they are
/// there, so the session is looked at until they are in (or `FOLLOW_WAIT` passed).
fn check_usage(env: &Env, sid: &str, failures: &mut Vec<String>) -> Value {
    let served: Vec<Usage> = env.server.exchanges().iter().map(|e| e.usage).collect();
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
        "tokens {got:?} (uncached in, out, cache read) ${shown:.6}; served {want:?} ${usd:.6} over {} requests",
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

/// Says which of the journal's answers reached a model request (their first line, verbatim).
fn answers_reached(env: &Env, exchanges: &[Exchange]) -> Vec<(String, bool)> {
    env.answers()
        .iter()
        .filter_map(|a| a["additionalContext"].as_str().or(a["reason"].as_str()))
        .map(|text| {
            let first = text.lines().next().unwrap_or("").to_string();
            // Requests hold the text JSON-escaped: look for a stretch without quotes.
            let probe: String = first.chars().take_while(|c| *c != '"').collect();
            let reached = exchanges
                .iter()
                .any(|e| e.request.to_string().contains(probe.trim_end()));
            (first, reached)
        })
        .collect()
}

/// The compaction request's index among the server's requests, if there was one.
fn compaction_at(exchanges: &[Exchange]) -> Option<usize> {
    exchanges
        .iter()
        .position(|e| e.role == "conversation-compaction")
}

fn verdict(failures: Vec<String>) -> Result<(), String> {
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------------
// The runs.

fn run_a(client: &Client) -> Result<(), String> {
    let env = Env::new();
    // The recording hook, for every event Copilot fires, beside install's file.
    let mut hooks = serde_json::Map::new();
    for (e, _) in projections::hosts::COPILOT.registered() {
        let bash = format!("sh '{}' {}", env.recorder().display(), e.name);
        hooks.insert(
            e.name.into(),
            json!([{"type": "command", "bash": bash, "timeoutSec": 10}]),
        );
    }
    fs::create_dir_all(env.project.join(".github/hooks")).unwrap();
    fs::write(
        env.project.join(".github/hooks/recorder.json"),
        json!({"version": 1, "hooks": hooks}).to_string(),
    )
    .unwrap();
    let said = env.hj(&["install", "--host", "copilot"]);
    if !said.contains("not in trustedFolders") {
        return Err(format!(
            "install does not say the folder is untrusted:\n{said}"
        ));
    }
    // What install tells the user to do, the way Copilot's own prompt records it.
    env.trust();
    let said = env.hj(&["install", "--host", "copilot"]);
    if !said.contains("is trusted by Copilot CLI") {
        return Err(format!(
            "install does not say the folder is trusted:\n{said}"
        ));
    }
    env.hj(&["tasks", "add", SEED_TASK]);

    let out = env.copilot(client, true)?;
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for event in [
        "sessionStart",
        "userPromptSubmitted",
        "postToolUse",
        "preCompact",
        "agentStop",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    if !exchanges
        .iter()
        .any(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the seeded task did not reach the model".into());
    }
    let compacted = compaction_at(&exchanges);
    let restored = exchanges
        .iter()
        .position(|e| e.request.to_string().contains(RESTORE));
    match (compacted, restored) {
        (Some(c), Some(r)) if r > c => {
            eprintln!("compaction request #{c}; the restore reached request #{r}")
        }
        _ => failures.push(format!(
            "the restore after the compaction did not reach the model (compaction request {compacted:?}, restore {restored:?})"
        )),
    }
    let reached = answers_reached(&env, &exchanges);
    eprintln!("answers (first line, reached a model request): {reached:#?}");
    if reached.iter().any(|(_, r)| !r) {
        failures.push(format!("an answer did not reach the model: {reached:?}"));
    }
    // Copilot reads only a flat `additionalContext`: every answer is one.
    let answers = env.answers();
    if answers.is_empty()
        || answers
            .iter()
            .any(|a| a.get("hookSpecificOutput").is_some() || !a["additionalContext"].is_string())
    {
        failures.push(format!("answers not flat: {answers:?}"));
    }
    match session_id(&env) {
        Some(sid) => {
            let show = check_usage(&env, &sid, &mut failures);
            if show["compactions"] != 1 {
                failures.push(format!(
                    "{} compactions counted, the server saw {}",
                    show["compactions"],
                    exchanges
                        .iter()
                        .filter(|e| e.role == "conversation-compaction")
                        .count()
                ));
            }
            let readme = env.project.canonicalize().unwrap().join("README.md");
            if !show["files_read"]
                .as_array()
                .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
            {
                failures.push(format!("files read {}", show["files_read"]));
            }
        }
        None => failures.push("no userPromptSubmitted with the prompt recorded".into()),
    }
    let otel = env.home.join(".copilot/otel/copilot-otel.jsonl");
    if !fs::read_to_string(&otel).is_ok_and(|t| t.contains("gen_ai.usage.input_tokens")) {
        failures.push(format!("no OTel usage in {}", otel.display()));
    }
    if !failures.is_empty() {
        failures.push(out);
    }
    env.keep();
    verdict(failures)
}

fn run_b(client: &Client) -> Result<(), String> {
    let env = Env::new();
    // The recording hook in .claude/settings.json, for every event install registers there.
    let mut hooks = serde_json::Map::new();
    for (e, r) in projections::hosts::CLAUDE.registered() {
        let command = format!("sh '{}' {}", env.recorder().display(), e.name);
        let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]});
        if r.tool_matcher {
            group["matcher"] = json!("*");
        }
        hooks.insert(e.name.into(), json!([group]));
    }
    fs::create_dir_all(env.project.join(".claude")).unwrap();
    fs::write(
        env.project.join(".claude/settings.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
    env.hj(&["install", "--host", "claude"]);
    env.trust();
    env.hj(&["tasks", "add", SEED_TASK]);

    let out = env.copilot(client, false)?;
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    if !exchanges
        .iter()
        .any(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the seeded task did not reach the model".into());
    }
    let reached = answers_reached(&env, &exchanges);
    eprintln!("answers (first line, reached a model request): {reached:#?}");
    if reached.iter().any(|(_, r)| !r) {
        failures.push(format!("an answer did not reach the model: {reached:?}"));
    }
    match session_id(&env) {
        Some(sid) => {
            let show = check_usage(&env, &sid, &mut failures);
            let served = exchanges
                .iter()
                .filter(|e| e.role == "conversation-compaction")
                .count();
            if show["compactions"] != json!(served) || served == 0 {
                failures.push(format!(
                    "{} compactions counted, the server saw {served}",
                    show["compactions"]
                ));
            }
            if show["host"] != "copilot" {
                failures.push(format!("session host {}", show["host"]));
            }
        }
        None => failures.push("no UserPromptSubmit with the prompt recorded".into()),
    }
    if !failures.is_empty() {
        failures.push(out);
    }
    env.keep();
    verdict(failures)
}
