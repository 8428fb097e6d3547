//! End to end with the real OpenCode (1.18.33, pinned by `.ci/install-opencode.sh`), headless
//! (`opencode run …`) against a loopback chat-completions server written here (a provider
//! `@ai-sdk/openai-compatible` in the project's `opencode.json`), with hookjournal's shim plugin
//! installed by `hookjournal install --host opencode` and a second plugin (in
//! `~/.config/opencode/plugins/`, which OpenCode calls first) recording every hook call and bus
//! event the shim forwards.
//!
//! Run one, a task seeded: `bash` (its response reports a prompt at the model's limit, so
//! OpenCode compacts after that step and the turn goes on), `read README.md`, `task` (a `general`
//! subagent, run by OpenCode in a child session), a final text. Checked: every call the recording
//! plugin saw is journaled once, as host `opencode`, with its session (a subagent's under the
//! session that started it; none `Malformed`); the subagent is that session's, started and
//! stopped, with no session of its own; the seeded task reaches the model with the prompt
//! (OpenCode takes context only there and after a tool); the compaction is counted once; README.md
//! is a file read; tokens and USD equal what the server reported for every request OpenCode
//! records as an assistant message (the agent's, the subagent's and the compaction's; not the
//! title generator's), priced at GPT-4.1's rates. Run two, `opencode run … --session <id>`: the
//! restore after the compaction reaches the model with the prompt.
//!
//! Running it
//! ----------
//!   bash .ci/install-opencode.sh             # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test opencode -- --nocapture
//! Environment:
//!   HOOKJOURNAL_OPENCODE_BIN=/path/to/opencode  another OpenCode binary
//!   HOOKJOURNAL_REQUIRE_OPENCODE=1              fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                      keep the temp dir (requests.jsonl, journal)

mod common;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "1.18.33";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, then read README.md.";
const PROMPT_2: &str = "HJ-PROMPT-2: and now the second turn.";
/// What the agent asks of its subagent (OpenCode's `task` tool, a `general` subagent).
const SUBAGENT_PROMPT: &str = "HJ-SUBAGENT: say hi and stop.";
/// The restore's first words after a compaction, as any session's restore text has them.
const RESTORE: &str = "after context compaction, from its event journal";

/// The pinned client, and the npm cache its plugin package install reads.
struct Client {
    bin: PathBuf,
    npm_cache: Option<PathBuf>,
}

fn client() -> Option<Client> {
    let cache = common::ci_cache();
    let bin = std::env::var_os("HOOKJOURNAL_OPENCODE_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            cache.as_ref().map(|c| {
                c.join(format!(
                    "opencode-{VERSION}/node_modules/opencode-linux-x64/bin/opencode"
                ))
            })
        })
        .filter(|b| b.exists())?;
    Some(Client {
        bin,
        npm_cache: cache.map(|c| c.join("opencode-npm-cache")),
    })
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
/// Over OpenCode's auto-compaction point for a 128,000-token model with 16,384 of output.
const BIG: Usage = Usage {
    prompt: 127_000,
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

/// Who sent a request: OpenCode's title generator, its compaction agent, the subagent the agent
/// started (in its child session), or the agent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Title,
    Compaction,
    Subagent,
    Agent,
}

type Server = common::chat_server::Scripted<Role>;

/// The server; `project`: where the scripted `read_file` looks.
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |r| role(&r.body),
        move |body, role, all| reply(body, *role, all, &project),
    )
}

/// OpenCode's side requests by their system prompt: the title generator's and the compaction
/// agent's ("You are a context summarization agent"); the subagent's by its conversation's first
/// prompt, the one the agent gave it.
fn role(request: &Value) -> Role {
    let system = request["messages"][0].to_string();
    let first_prompt = request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(Value::to_string)
        .unwrap_or_default();
    if system.contains("title generator") {
        Role::Title
    } else if system.contains("summarization agent") {
        Role::Compaction
    } else if first_prompt.contains(SUBAGENT_PROMPT) && !first_prompt.contains("HJ-PROMPT") {
        Role::Subagent
    } else {
        Role::Agent
    }
}

/// Side requests and the subagent get text. The agent, per run: run one calls `bash` (its response
/// reports `BIG`: OpenCode compacts after that step, and the turn goes on), then `read README.md`,
/// then `task` (a `general` subagent), then ends; run two (`PROMPT_2`) answers at once.
fn reply(
    request: &Value,
    role: Role,
    before: &[Exchange],
    project: &Path,
) -> (Value, &'static str, Usage) {
    let text = |t: &str, u: Usage| (common::chat_server::text(t), "stop", u);
    match role {
        Role::Title => return text("HJ-MOCK-SIDE: a title", NORMAL),
        Role::Compaction => {
            return text(
                "HJ-MOCK-SUMMARY: a marker was written with the shell; README.md is next.",
                SUMMARY,
            )
        }
        Role::Subagent => return text("HJ-MOCK-SUB: the subagent is done.", NORMAL),
        Role::Agent => {}
    }
    if request.to_string().contains("HJ-PROMPT-2") {
        return text("HJ-MOCK-FINAL: the second turn is done.", NORMAL);
    }
    let agent_calls = before.iter().filter(|e| e.role == Role::Agent).count();
    let usage = if agent_calls == 0 { BIG } else { NORMAL };
    let (name, args) = match agent_calls {
        0 => (
            "bash",
            json!({"command": "echo hj-shell-ran > marker.txt", "description": "write a marker"}),
        ),
        1 => ("read", json!({"filePath": project.join("README.md")})),
        2 => (
            "task",
            json!({"description": "hj subagent", "prompt": SUBAGENT_PROMPT,
                "subagent_type": "general"}),
        ),
        _ => return text("HJ-MOCK-FINAL: all done.", usage),
    };
    (
        common::chat_server::tool_call(agent_calls, name, &args),
        "tool_calls",
        usage,
    )
}

// ---------------------------------------------------------------------------------------------
// The harness.

type Env = common::client::Sandbox<Role>;

impl Env {
    fn new() -> Env {
        let env = Env::start(|project| start_server(project.to_path_buf()));
        let (home, project, server) = (&env.home, &env.project, &env.server);
        let provider = json!({
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "HJ mock",
                "options": {"baseURL": format!("http://127.0.0.1:{}/v1", server.port),
                    "apiKey": "hj-test-key"},
                "models": {MODEL: {"name": MODEL, "limit": {"context": 128000, "output": 16384}}}}},
            "model": format!("mock/{MODEL}"), "small_model": format!("mock/{MODEL}"),
            "autoupdate": false, "share": "disabled"
        });
        fs::write(project.join("opencode.json"), provider.to_string()).unwrap();
        let plugins = home.join(".config/opencode/plugins");
        fs::create_dir_all(&plugins).unwrap();
        fs::write(plugins.join("hj-record.js"), recorder(&env.calls)).unwrap();
        env
    }

    /// `opencode run PROMPT` headless, killed (with its process group) past the timeout.
    fn opencode(&self, client: &Client, prompt: &str, session: Option<&str>) -> String {
        let mut cmd = Command::new(&client.bin);
        cmd.args([
            "run",
            prompt,
            "--model",
            &format!("mock/{MODEL}"),
            "--format",
            "json",
        ]);
        if let Some(id) = session {
            cmd.args(["--session", id]);
        }
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // OpenCode installs its plugin package with npm at a fresh start: from the CI cache.
        if let Some(c) = &client.npm_cache {
            cmd.env("npm_config_cache", c);
        }
        let start = Instant::now();
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let stdout = run.stdout.clone();
        let out = format!(
            "--- stdout (end) ---\n{}\n--- stderr (end) ---\n{}",
            common::client::tail(&stdout, 800),
            common::client::tail(&run.stderr.clone(), 3000)
        );
        eprintln!("opencode ran {:?}", start.elapsed());
        assert!(
            status.is_some_and(|s| s.success()) && stdout.contains("HJ-MOCK-FINAL"),
            "opencode run failed ({status:?}):\n{out}"
        );
        out
    }
}

/// A plugin that records every call hookjournal's shim forwards (the same hooks and events, from
/// the host table; a completed assistant message only), one file per call, named by time, process
/// and call order, with the session it belongs to: a subagent's child session's calls are the
/// root session's.
fn recorder(calls: &Path) -> String {
    let names: Vec<&str> = projections::hosts::OPENCODE
        .registered()
        .map(|(e, _)| e.name)
        .collect();
    format!(
        r#"// Records each call hookjournal's shim forwards: {{"name", "session"}}, one file per call.
import {{ writeFileSync }} from "node:fs";
const DIR = {dir};
const NAMES = new Set({names});
let n = 0;
// A subagent's child session (its `session.created` names its `parentID`) is its root session's.
const parents = new Map();
const root = (session) => parents.get(session) ?? session;
const record = (name, session) =>
  writeFileSync(`${{DIR}}/${{Date.now()}}.${{process.pid}}.${{String(++n).padStart(5, "0")}}.json`,
    JSON.stringify({{ name, session: root(session) }}));
export const HjRecord = async () => {{
  const hooks = {{
    event: async ({{ event }}) => {{
      if (!NAMES.has(event?.type)) return;
      const p = event.properties ?? {{}};
      if (event.type === "session.created" && p.info?.parentID) parents.set(p.info.id, root(p.info.parentID));
      if (event.type === "message.updated" && !(p.info?.role === "assistant" && p.info?.time?.completed)) return;
      record(event.type, p.sessionID ?? p.info?.sessionID ?? p.info?.id ?? "");
    }},
  }};
  for (const name of NAMES) {{
    if (name.includes(".") && !name.startsWith("session.") && !name.startsWith("message.") &&
        !name.startsWith("todo.") && !name.startsWith("permission.") && name !== "command.executed") {{
      hooks[name] = async (input) => record(name, input?.sessionID ?? "");
    }}
  }}
  return hooks;
}};
"#,
        dir = json!(calls),
        names = json!(names)
    )
}

/// Waits until the recording plugin's directory stops changing.
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

/// Every recorded call is in the journal exactly once, with its session, as host `opencode`, and
/// nothing is `Malformed`. Returns the calls per name.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let recorded = env.recorded_names();
    // The shim's hook for OpenCode's last bus event (`session.idle`) can still be running when
    // the client has exited: read until the journal holds as many invocations as were recorded
    // (bounded; an extra one still fails the comparison).
    let start = Instant::now();
    let events = loop {
        let events = env.events();
        let invocations = events
            .iter()
            .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
            .count();
        if invocations >= recorded.len() || start.elapsed() > Duration::from_secs(30) {
            break events;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    common::client::check_named_journaled("opencode", &recorded, &events, failures)
}

/// Tokens and USD of the session equal what the server reported for the requests OpenCode keeps
/// as assistant messages (the agent's and the compaction's; its title generator's are none).
fn check_usage(env: &Env, sid: &str, failures: &mut Vec<String>) -> Value {
    let served: Vec<Usage> = env
        .server
        .exchanges()
        .iter()
        .filter(|e| e.role != Role::Title)
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

// ---------------------------------------------------------------------------------------------
// The test.

fn real_opencode_session_is_journaled_restored_and_costed() -> Ran {
    let Some(client) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_OPENCODE",
            format!(
                "OpenCode {VERSION} is not installed (bash .ci/install-opencode.sh installs it)"
            ),
        );
    };
    let env = Env::new();
    let said = env.hj(&["install", "--host", "opencode"]);
    eprintln!("{said}");
    env.hj(&["tasks", "add", SEED_TASK]);

    // Run one: a tool turn with an auto-compaction in it.
    let out = env.opencode(&client, PROMPT, None);
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for name in [
        "session.created",
        "chat.message",
        "tool.execute.before",
        "tool.execute.after",
        "message.updated",
        "experimental.session.compacting",
        "session.compacted",
        "session.idle",
    ] {
        if !counts.contains_key(name) {
            failures.push(format!("{name} never came: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    let first = exchanges.iter().find(|e| e.role == Role::Agent);
    if !first.is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK")) {
        failures.push("the seeded task did not reach the first agent request".into());
    }
    let sid = env
        .events()
        .iter()
        .find(|e| e["name"] == "chat.message")
        .and_then(|e| e["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no chat.message journaled\n{out}"));
    let show = check_usage(&env, &sid, &mut failures);
    if show["compactions"] != 1 {
        failures.push(format!(
            "{} compactions counted, the server saw {}",
            show["compactions"],
            exchanges
                .iter()
                .filter(|e| e.role == Role::Compaction)
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
    if !show["last_prompts"][0]
        .as_str()
        .is_some_and(|p| p.contains(PROMPT))
    {
        failures.push(format!("prompts {}", show["last_prompts"]));
    }
    // The subagent ran in a child session: filed under this one, started and stopped, its usage
    // counted above with the session's; no session of its own.
    let subagents = show["subagents"].as_array().cloned().unwrap_or_default();
    let served_sub = exchanges.iter().any(|e| e.role == Role::Subagent);
    if !served_sub
        || subagents.len() != 1
        || subagents[0]["agent_type"] != "general"
        || subagents[0]["running"] != false
    {
        failures.push(format!(
            "subagents {} (the server served the subagent: {served_sub})",
            show["subagents"]
        ));
    }
    let sessions = env.json(&["sessions", "--all", "--json"]);
    if sessions.as_array().map(Vec::len) != Some(1) {
        failures.push(format!("sessions {sessions}"));
    }

    // Run two: the restore after the compaction goes with the next prompt.
    let before = exchanges.len();
    let out2 = env.opencode(&client, PROMPT_2, Some(&sid));
    settle(&env.calls);
    check_journaled(&env, &mut failures);
    let exchanges = env.server.exchanges();
    let restored = exchanges[before..]
        .iter()
        .any(|e| e.role == Role::Agent && e.request.to_string().contains(RESTORE));
    eprintln!("the restore after the compaction reached run two's request: {restored}");
    if !restored {
        failures.push("the restore after the compaction did not reach the model".into());
    }
    check_usage(&env, &sid, &mut failures);
    if !failures.is_empty() {
        failures.push(out);
        failures.push(out2);
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// OpenCode exits without waiting for its bus events' handlers (`opencode run` ends right after
/// `session.idle`): the shim forwards what is still queued then, in order, before the process
/// goes. Driven with node: the installed shim gets five bus events, and the process exits at
/// once, before any of them started; the journal holds all five, in order.
fn the_shim_forwards_what_is_still_queued_when_opencode_exits() -> Ran {
    if Command::new("node").arg("--version").output().is_err() {
        return missing("HOOKJOURNAL_REQUIRE_NPM", "node is not on PATH");
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let journal = project.join(".hookjournal");
    let out = common::cmd(&journal)
        .args(["install", "--host", "opencode"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // As an ES module (the plugins directory has no package.json saying so).
    let shim = tmp.path().join("shim.mjs");
    fs::copy(project.join(".opencode/plugins/hookjournal.js"), &shim).unwrap();
    let driver = format!(
        r#"import {{ HookjournalPlugin }} from {shim};
const hooks = await HookjournalPlugin({{ directory: {dir} }});
for (let n = 1; n <= 5; n++) {{
  hooks.event({{ event: {{ type: "session.idle", properties: {{ sessionID: "ses_exit", n }} }} }});
}}
process.exit(0);
"#,
        shim = json!(shim.to_str().unwrap()),
        dir = json!(project.to_str().unwrap()),
    );
    let script = tmp.path().join("driver.mjs");
    fs::write(&script, driver).unwrap();
    let ran = Command::new("node")
        .arg(&script)
        .current_dir(&project)
        .env("HOME", tmp.path())
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let _ = common::cmd(&journal).arg("drain").output();
    let order: Vec<u64> = common::events(&journal)
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| {
            let payload: Value = serde_json::from_slice(&common::payload_bytes(e)).unwrap();
            payload["event"]["properties"]["n"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(order, [1, 2, 3, 4, 5]);
    Ok(())
}

harness_main!(
    real_opencode_session_is_journaled_restored_and_costed,
    the_shim_forwards_what_is_still_queued_when_opencode_exits
);
