//! End to end with the real Kilo Code CLI (7.7.9, pinned by `.ci/install-kilo.sh`), headless
//! (`kilo run …`) against a loopback chat-completions server (a provider
//! `@ai-sdk/openai-compatible` in the project's `kilo.json`), with hookjournal's shim installed by
//! `hookjournal install --host kilo` (into `.kilo/plugins/`) and a second plugin (in
//! `~/.config/kilo/plugins/`, which Kilo calls first) recording every hook call and bus event
//! the shim forwards.
//!
//! Run one, a task seeded: `bash` (its response reports a prompt at the model's limit, so Kilo
//! compacts after that step and the turn goes on), `read README.md`, `task` (a `general`
//! subagent, run by Kilo in a child session), a final text. Checked: every call the recording
//! plugin saw is journaled once, as host `kilo` (Kilo sets OPENCODE=1 too), with its session (a
//! subagent's under the session that started it; none `Malformed`); the seeded task reaches the
//! model with the prompt; README.md is a file read; the subagent is the session's; the compaction
//! is counted once; tokens and USD — read from Kilo's SQLite database `kilo.db` at the turn's end,
//! read-only while Kilo has it open — equal what the server reported for every request (the
//! agent's, the compaction's and the subagent's), priced at GPT-4.1's rates; and the database
//! holds the same totals in its `session` row. Run two, `kilo run … --session <id>`: the restore
//! after the compaction reaches the model with the prompt, and the usage still equals the server's.
//!
//! Running it
//! ----------
//!   bash .ci/install-kilo.sh                 # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test kilo -- --nocapture
//! Environment:
//!   HOOKJOURNAL_KILO_BIN=/path/to/kilo   another Kilo binary
//!   HOOKJOURNAL_REQUIRE_KILO=1           fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1               keep the temp dir (requests.jsonl, journal)

mod common;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "7.7.9";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(80);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, then read README.md.";
/// What the agent asks of its subagent (the `task` tool, a `general` subagent).
const PROMPT_2: &str = "HJ-PROMPT-2: and now the second turn.";
/// The restore's first words after a compaction, as any session's restore text has them.
const RESTORE: &str = "after context compaction, from its event journal";
const SUBAGENT_PROMPT: &str = "HJ-SUBAGENT: say hi and stop.";

fn client() -> Option<PathBuf> {
    std::env::var_os("HOOKJOURNAL_KILO_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            common::ci_cache().map(|c| {
                c.join(format!(
                    "kilo-{VERSION}/node_modules/@kilocode/cli-linux-x64/bin/kilo"
                ))
            })
        })
        .filter(|b| b.exists())
}

// ---------------------------------------------------------------------------------------------
// The model server: chat completions, streamed, scripted by the conversation.

use common::chat_server::Usage;

const NORMAL: Usage = Usage {
    prompt: 11_000,
    cached: 4_000,
    output: 12,
};
/// Over Kilo's auto-compaction point for a 128,000-token model with 16,384 of output.
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
const SUB: Usage = Usage {
    prompt: 6_000,
    cached: 0,
    output: 9,
};

type Exchange = common::chat_server::Exchange<Role>;

/// Who sent a request: the subagent the agent started (in its child session), or the agent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Compaction,
    Subagent,
    Agent,
}

type Server = common::chat_server::Scripted<Role>;

fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |r| role(&r.body),
        move |body, role, all| reply(body, *role, all, &project),
    )
}

/// The subagent's requests by their conversation's first prompt, the one the agent gave it.
fn role(request: &Value) -> Role {
    let first_prompt = request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(Value::to_string)
        .unwrap_or_default();
    let system = request["messages"][0].to_string();
    if system.contains("summarization agent") {
        Role::Compaction
    } else if first_prompt.contains(SUBAGENT_PROMPT) && !first_prompt.contains("HJ-PROMPT") {
        Role::Subagent
    } else {
        Role::Agent
    }
}

/// The agent calls `bash`, then `read README.md`, then `task` (a `general` subagent), then ends;
/// the subagent answers with text.
fn reply(
    _request: &Value,
    role: Role,
    before: &[Exchange],
    project: &Path,
) -> (Value, &'static str, Usage) {
    let text = |t: &str, u: Usage| (common::chat_server::text(t), "stop", u);
    match role {
        Role::Subagent => return text("HJ-MOCK-SUB: the subagent is done.", SUB),
        Role::Compaction => return text("HJ-MOCK-SUMMARY: a marker was written.", SUMMARY),
        Role::Agent => {}
    }
    if _request.to_string().contains("HJ-PROMPT-2") {
        return text("HJ-MOCK-FINAL: the second turn is done.", NORMAL);
    }
    let agent_calls = before.iter().filter(|e| e.role == Role::Agent).count();
    let (name, args) = match agent_calls {
        0 => (
            "bash",
            json!({"command": "echo hj-shell-ran > shell_out.txt && cat shell_out.txt",
                "description": "write a marker"}),
        ),
        1 => ("read", json!({"filePath": project.join("README.md")})),
        2 => (
            "task",
            json!({"description": "hj subagent", "prompt": SUBAGENT_PROMPT,
                "subagent_type": "general"}),
        ),
        _ => return text("HJ-MOCK-FINAL: all done.", NORMAL),
    };
    let usage = if agent_calls == 0 { BIG } else { NORMAL };
    (
        common::chat_server::tool_call(agent_calls, name, &args),
        "tool_calls",
        usage,
    )
}

// ---------------------------------------------------------------------------------------------
// The harness.

type Env = common::client::Sandbox<Role>;

fn setup() -> Env {
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
    fs::write(project.join("kilo.json"), provider.to_string()).unwrap();
    let plugins = home.join(".config/kilo/plugins");
    fs::create_dir_all(&plugins).unwrap();
    fs::write(plugins.join("hj-record.js"), recorder(&env.calls)).unwrap();
    env
}

/// `kilo run PROMPT` headless, killed (with its process group) past the timeout.
fn kilo(env: &Env, bin: &Path, prompt: &str, session: Option<&str>) -> String {
    let mut cmd = Command::new(bin);
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
    cmd.current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("TMPDIR", common::client::private_tmp(&env.home))
        .env("TERM", "dumb");
    for var in [
        "KILO_DISABLE_AUTOUPDATE",
        "KILO_DISABLE_MODELS_FETCH",
        "KILO_DISABLE_LSP_DOWNLOAD",
        "KILO_DISABLE_SHARE",
        "KILO_DISABLE_SESSION_INGEST",
        "KILO_NO_DAEMON",
    ] {
        cmd.env(var, "1");
    }
    cmd.env("KILO_TELEMETRY_LEVEL", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr (end) ---\n{}",
        common::client::tail(&run.stdout, 800),
        common::client::tail(&run.stderr, 3000)
    );
    eprintln!("kilo ran {:?}", start.elapsed());
    assert!(
        run.status.is_some_and(|s| s.success()) && run.stdout.contains("HJ-MOCK-FINAL"),
        "kilo run failed ({:?}):\n{out}",
        run.status
    );
    out
}

/// A plugin that records every call hookjournal's shim forwards (the same hooks and events, from
/// the host table), one file per call, with the session it belongs to: a subagent's child
/// session's calls are the root session's.
fn recorder(calls: &Path) -> String {
    let names: Vec<&str> = projections::hosts::KILO
        .registered()
        .map(|(e, _)| e.name)
        .collect();
    format!(
        r#"// Records each call hookjournal's shim forwards: {{"name", "session"}}, one file per call.
import {{ writeFileSync }} from "node:fs";
const DIR = {dir};
const NAMES = new Set({names});
let n = 0;
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
      record(event.type, p.sessionID ?? p.info?.sessionID ?? p.info?.id ?? "");
    }},
  }};
  for (const name of NAMES) {{
    if (name.includes(".") && !name.startsWith("session.") && !name.startsWith("todo.") &&
        !name.startsWith("permission.") && name !== "command.executed") {{
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

/// Every recorded call is in the journal exactly once, with its session, as host `kilo`, and
/// nothing is `Malformed`. Returns the calls per name.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let recorded = env.recorded_names();
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
    common::client::check_named_journaled("kilo", &recorded, &events, failures)
}

/// Tokens and USD of the session equal what the server reported for every request.
fn check_usage(env: &Env, sid: &str, failures: &mut Vec<String>) -> Value {
    let served: Vec<Usage> = env.server.exchanges().iter().map(|e| e.usage).collect();
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

/// Kilo's own totals in its `session` row (uncached input, output, cache read), read after it
/// exited.
fn db_totals(env: &Env, sid: &str) -> Option<(u64, u64, u64)> {
    let db = env.home.join(".local/share/kilo/kilo.db");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.query_row(
        "SELECT tokens_input, tokens_output + tokens_reasoning, tokens_cache_read FROM session WHERE id = ?1",
        [sid],
        |r| {
            let n = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
            Ok((n(0)?, n(1)?, n(2)?))
        },
    )
    .ok()
}

// ---------------------------------------------------------------------------------------------
// The test.

fn real_kilo_session_is_journaled_reminded_and_costed_from_its_database() -> Ran {
    let Some(bin) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_KILO",
            format!("Kilo Code {VERSION} is not installed (bash .ci/install-kilo.sh installs it)"),
        );
    };
    let env = setup();
    let said = env.hj(&["install", "--host", "kilo"]);
    eprintln!("{said}");
    assert!(env.project.join(".kilo/plugins/hookjournal.js").exists());
    env.hj(&["tasks", "add", SEED_TASK]);

    let out = kilo(&env, &bin, PROMPT, None);
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts = check_journaled(&env, &mut failures);
    for name in [
        "session.created",
        "chat.message",
        "tool.execute.before",
        "tool.execute.after",
        "session.idle",
    ] {
        if !counts.contains_key(name) {
            failures.push(format!("{name} never came: {counts:?}"));
        }
    }
    let exchanges = env.server.exchanges();
    let first = exchanges.iter().find(|e| e.role == Role::Agent);
    let reminded = first.is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK"));
    eprintln!("the seeded task reached the first agent request: {reminded}");
    if !reminded {
        failures.push("the seeded task did not reach the first agent request".into());
    }
    let sid = env
        .events()
        .iter()
        .find(|e| e["name"] == "chat.message")
        .and_then(|e| e["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no chat.message journaled\n{out}"));
    let show = check_usage(&env, &sid, &mut failures);
    let readme = env.project.canonicalize().unwrap().join("README.md");
    if !show["files_read"]
        .as_array()
        .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!("files read {}", show["files_read"]));
    }
    let subagents = show["subagents"].as_array().cloned().unwrap_or_default();
    let served_sub = exchanges.iter().any(|e| e.role == Role::Subagent);
    if !served_sub || subagents.len() != 1 || subagents[0]["running"] != false {
        failures.push(format!(
            "subagents {} (the server served the subagent: {served_sub})",
            show["subagents"]
        ));
    }
    let sessions = env.json(&["sessions", "--all", "--json"]);
    if sessions.as_array().map(Vec::len) != Some(1) {
        failures.push(format!("sessions {sessions}"));
    }
    let compactions = exchanges
        .iter()
        .filter(|e| e.role == Role::Compaction)
        .count();
    eprintln!(
        "compactions counted {}, served {compactions}",
        show["compactions"]
    );
    if show["compactions"] != 1 || compactions != 1 {
        failures.push(format!(
            "{} compactions counted, the server saw {compactions}",
            show["compactions"]
        ));
    }
    // Kilo's own session row: the main session's messages, its compaction's included (the
    // subagent's are its child's).
    let main: Vec<&Exchange> = exchanges
        .iter()
        .filter(|e| e.role != Role::Subagent)
        .collect();
    let want = (
        main.iter()
            .map(|e| e.usage.prompt - e.usage.cached)
            .sum::<u64>(),
        main.iter().map(|e| e.usage.output).sum::<u64>(),
        main.iter().map(|e| e.usage.cached).sum::<u64>(),
    );
    let db = db_totals(&env, &sid);
    eprintln!("kilo.db's session row: {db:?}, the agent's requests served {want:?}");
    if db != Some(want) {
        failures.push(format!("kilo.db session row {db:?} vs served {want:?}"));
    }
    // Run two: the restore after the compaction goes with the next prompt.
    let before = exchanges.len();
    let out2 = kilo(&env, &bin, PROMPT_2, Some(&sid));
    settle(&env.calls);
    check_journaled(&env, &mut failures);
    let restored = env.server.exchanges()[before..]
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

/// Without the client: `install --host kilo` writes OpenCode's shim as Kilo's into
/// `.kilo/plugins/` (never `.opencode/plugins/`, which Kilo does not load), refuses a file of the
/// user's own there, `doctor` reports it, and `uninstall` removes it (and only it).
fn install_writes_the_shim_where_kilo_loads_it_and_uninstall_removes_only_it() -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    fs::create_dir_all(project.join(".git")).unwrap();
    let journal = project.join(".hookjournal");
    let run = |args: &[&str]| {
        let out = common::cmd(&journal)
            .args(args)
            .current_dir(&project)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, said) = run(&["install", "--host", "kilo"]);
    assert!(ok, "{said}");
    let shim = project.join(".kilo/plugins/hookjournal.js");
    let text = fs::read_to_string(&shim).unwrap();
    let settings: Value = serde_json::from_str(
        text.lines()
            .find_map(|l| l.strip_prefix("const SETTINGS = "))
            .unwrap()
            .trim_end_matches(';'),
    )
    .unwrap();
    assert_eq!(settings["host"], "kilo");
    assert!(!project.join(".opencode").exists());
    let (_, doctor) = run(&["doctor"]);
    assert!(
        doctor.contains("Kilo Code: the hookjournal shim is in"),
        "{doctor}"
    );
    let (ok, said) = run(&["uninstall", "--host", "kilo"]);
    assert!(ok && !shim.exists(), "{said}");
    // A plugin of the user's own at that path is neither replaced nor removed.
    fs::create_dir_all(shim.parent().unwrap()).unwrap();
    fs::write(&shim, "export const Mine = async () => ({});\n").unwrap();
    let (ok, said) = run(&["install", "--host", "kilo"]);
    assert!(!ok && said.contains("not hookjournal's shim"), "{said}");
    let (ok, said) = run(&["uninstall", "--host", "kilo"]);
    assert!(!ok && said.contains("not hookjournal's shim"), "{said}");
    assert!(fs::read_to_string(&shim).unwrap().contains("Mine"));
    Ok(())
}

harness_main!(
    real_kilo_session_is_journaled_reminded_and_costed_from_its_database,
    install_writes_the_shim_where_kilo_loads_it_and_uninstall_removes_only_it
);
