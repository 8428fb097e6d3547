//! End to end with the real OpenHands CLI (the Python `openhands` 1.16.0, pinned by
//! `.ci/install-openhands.sh`), headless (`openhands --headless --json --override-with-envs -t
//! …`) against a loopback chat-completions server written here (`LLM_BASE_URL`; OpenHands'
//! requests are not streamed), with a second hook recording every invocation in the same
//! `.openhands/hooks.json` (OpenHands reads the project's file or the user's, never both).
//!
//! After `hookjournal install --host openhands` (the project's `.openhands/hooks.json`, the
//! recorder's hooks kept) and a task seeded: a tool turn (`terminal` writes a marker,
//! `file_editor view README.md`, a final text), then the conversation resumed (`--resume ID`)
//! with a second prompt. Checked: OpenHands runs the file install wrote
//! (one key it does not know and it runs no hook at all); every invocation the recording hook
//! saw is journaled once, as host `openhands`, payload for payload (none `Malformed`); the
//! seeded task reaches the model through the one channel OpenHands lets context in
//! (UserPromptSubmit's flat `additionalContext`, appended to the user's message; the resumed
//! prompt's too) and hookjournal
//! answers nothing anywhere else (no Stop block: OpenHands would loop); README.md is a file
//! read; the tokens and USD hookjournal read from the conversation's `base_state.json` (found
//! from `$HOME` and the session id; no payload names it) are what the server served over both
//! runs, each response once, priced at GPT-4.1's rates; `doctor` finds the registration; `uninstall` gives the file back byte for
//! byte.
//!
//! Running it
//! ----------
//!   bash .ci/install-openhands.sh            # once; Python package registry only, CI cache
//!   cargo test -p hookjournal --test openhands -- --nocapture
//! Environment:
//!   HOOKJOURNAL_OPENHANDS_PREFIX=/path       another install (venv/bin/openhands in it)
//!   HOOKJOURNAL_REQUIRE_OPENHANDS=1          fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::chat_server::Usage;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "1.16.0";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(90);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the terminal, view README.md, then stop.";
const PROMPT_2: &str = "HJ-PROMPT-2: and now the resumed turn.";
const USAGE: Usage = Usage {
    prompt: 3_900,
    cached: 1_000,
    output: 12,
};
/// OpenHands' six events, as its hooks.json takes them.
const EVENTS: [&str; 6] = [
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
    "Stop",
];

/// The pinned client (`venv/bin/openhands`).
fn client() -> Option<PathBuf> {
    let prefix = std::env::var_os("HOOKJOURNAL_OPENHANDS_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("openhands-{VERSION}"))))?;
    let bin = prefix.join("venv/bin/openhands");
    bin.exists().then_some(bin)
}

type Server = common::chat_server::Scripted<()>;

/// The agent's chat: `terminal` writes a marker, `file_editor` views README.md, then a final
/// text (a reply without a tool call ends OpenHands' turn).
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |_| (),
        move |_, _, before| {
            let readme = project.join("README.md");
            let (name, args) = match before.len() {
                0 => (
                    "terminal",
                    json!({"command": "echo hj-shell-ran > marker.txt", "security_risk": "LOW"}),
                ),
                1 => (
                    "file_editor",
                    json!({"command": "view", "path": readme, "security_risk": "LOW"}),
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

/// The project's hooks.json before install: the recording hook for each of the six events.
fn recorder_hooks(env: &Env) -> String {
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| {
            let command = format!("sh '{}' {e}", env.recorder().display());
            let handler = json!({"type": "command", "command": command, "timeout": 15});
            (e.to_string(), json!([{"matcher": "*", "hooks": [handler]}]))
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "hooks": hooks })).unwrap() + "\n"
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// The environment OpenHands runs in: the loopback model, no price list fetched, and a tmux
/// server of the sandbox's own (its terminal tool's server outlives the CLI).
fn client_env(env: &Env, cmd: &mut Command) {
    cmd.current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("TMPDIR", common::client::private_tmp(&env.home))
        .env("TMUX_TMPDIR", common::client::private_tmp(&env.home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("LLM_MODEL", format!("openai/{MODEL}"))
        .env("LLM_API_KEY", "hj-test-key")
        .env(
            "LLM_BASE_URL",
            format!("http://127.0.0.1:{}/v1", env.server.port),
        )
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("OPENHANDS_SUPPRESS_BANNER", "1");
}

/// `openhands --headless --json -t PROMPT`, killed past the timeout. It exits 0 whatever
/// happened: the final text in its output is what tells a finished turn.
fn openhands(env: &Env, bin: &Path, prompt: &str, resume: Option<&str>) -> Result<String, String> {
    let mut cmd = Command::new(bin);
    cmd.args(["--headless", "--json", "--override-with-envs", "-t", prompt])
        .args(resume.map(|id| ["--resume", id]).into_iter().flatten())
        .stdin(Stdio::null());
    client_env(env, &mut cmd);
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("openhands ran {:?}", start.elapsed());
    let mut tmux = Command::new("tmux");
    tmux.args(["-L", "openhands", "kill-server"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    client_env(env, &mut tmux);
    let _ = tmux.status();
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 1500),
        common::client::tail(&run.stderr, 3000)
    );
    match run.status {
        Some(s) if s.success() && run.stdout.contains("HJ-MOCK-FINAL") => Ok(out),
        s => Err(format!("openhands --headless failed ({s:?}):\n{out}")),
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

fn real_openhands_session_is_journaled_and_the_task_reaches_the_model() -> Ran {
    let Some(bin) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_OPENHANDS",
            format!(
                "OpenHands {VERSION} is not installed (bash .ci/install-openhands.sh installs it)"
            ),
        );
    };
    // Its terminal tool runs every command in tmux (the install script installs it).
    let tmux = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .status();
    if !tmux.is_ok_and(|s| s.success()) {
        return missing(
            "HOOKJOURNAL_REQUIRE_OPENHANDS",
            "tmux is not installed (OpenHands' terminal tool needs it; bash \
             .ci/install-openhands.sh installs it)",
        );
    }
    let env = Env::start(|project| start_server(project.to_path_buf()));
    fs::write(env.recorder(), recorder(&env.calls)).unwrap();
    let hooks_json = env.project.join(".openhands/hooks.json");
    fs::create_dir_all(hooks_json.parent().unwrap()).unwrap();
    let mine = recorder_hooks(&env);
    fs::write(&hooks_json, &mine).unwrap();
    let said = env.hj(&["install", "--host", "openhands"]);
    eprintln!("{said}");
    env.hj(&["tasks", "add", SEED_TASK]);

    let out = openhands(&env, &bin, PROMPT, None).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let sid = env
        .recorded()
        .iter()
        .find_map(|(_, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            (v["message"] == PROMPT).then(|| v["session_id"].as_str().map(str::to_string))?
        })
        .unwrap_or_else(|| panic!("no UserPromptSubmit with the prompt recorded\n{out}"));
    // The conversation resumed with a second prompt: SessionStart again (unmarked), the
    // reminder again, and its base_state.json now holding both runs' responses.
    let served_first = env.server.exchanges().len();
    let out_2 = openhands(&env, &bin, PROMPT_2, Some(&sid)).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let mut failures = Vec::new();
    if env.server.exchanges().len() <= served_first {
        failures.push(format!("the resumed run made no model request\n{out_2}"));
    }
    let events = env.events();
    let counts =
        common::client::check_journaled("openhands", &env.recorded(), &events, &mut failures);
    for event in EVENTS {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}\n{out}"));
        }
    }
    for event in ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] {
        if counts.get(event) != Some(&2) {
            failures.push(format!("{event} not once per run: {counts:?}\n{out_2}"));
        }
    }
    // The one channel OpenHands lets context in: UserPromptSubmit's flat additionalContext,
    // appended to the user's message. Nothing answered anywhere else.
    let answered = answers(&events);
    eprintln!("answered: {answered:?}");
    for (event, output) in &answered {
        let flat = serde_json::from_str::<Value>(output)
            .ok()
            .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()));
        if event != "UserPromptSubmit" || flat != Some(vec!["additionalContext".to_string()]) {
            failures.push(format!("hookjournal answered {event} with {output}"));
        }
    }
    let exchanges = env.server.exchanges();
    eprintln!("model requests {}", exchanges.len());
    let reached = exchanges.iter().all(|e| {
        e.request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "user")
            .any(|m| m["content"].to_string().contains("HJ-SEED-TASK"))
    });
    if exchanges.is_empty() || !reached {
        failures.push("the seeded task is not in every request's user message".into());
    }
    // The resumed run's prompt got the reminder too: its own user message holds both.
    let resumed = exchanges.last().and_then(|e| {
        let messages = e.request["messages"].as_array()?;
        let last_user = messages.iter().rev().find(|m| m["role"] == "user")?;
        Some(last_user["content"].to_string())
    });
    if !resumed.is_some_and(|m| m.contains("HJ-PROMPT-2") && m.contains("HJ-SEED-TASK")) {
        failures.push("the resumed prompt's message does not carry the reminder".into());
    }
    let show = env.json(&["show", &sid, "--json"]);
    let readme = env.project.canonicalize().unwrap().join("README.md");
    if show["host"] != "openhands"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // Tokens and USD from the conversation's base_state.json, read at Stop and SessionEnd:
    // what the server served, at GPT-4.1's prices.
    let sum = |f: fn(&Usage) -> u64| exchanges.iter().map(|e| f(&e.usage)).sum::<u64>();
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
    let want_usd: f64 = exchanges.iter().map(|e| e.usage.usd(PRICE)).sum();
    let usd = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) usd {usd}; served {want:?} usd {want_usd} \
         over {} requests",
        exchanges.len()
    );
    if got != want || (usd - want_usd).abs() > 1e-9 {
        failures.push(format!(
            "tokens {got:?} usd {usd} vs served {want:?} usd {want_usd}"
        ));
    }
    let doctor = env.hj(&["doctor"]);
    if !doctor
        .lines()
        .any(|l| l.contains("OpenHands") && l.contains("hooks.json"))
    {
        failures.push(format!("doctor does not find the registration:\n{doctor}"));
    }
    env.hj(&["uninstall", "--host", "openhands"]);
    if fs::read_to_string(&hooks_json).unwrap() != mine {
        failures.push("uninstall did not give hooks.json back as it was".into());
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Where the pinned client is installed, its own validator (openhands-sdk's `HookConfig`, what
/// it loads hooks.json with) takes the file.
fn valid_for_openhands(file: &Path) {
    let Some(bin) = client() else {
        return;
    };
    let python = bin.with_file_name("python");
    let check = "import json, sys\nfrom openhands.sdk.hooks.config import HookConfig\n\
                 HookConfig.from_dict(json.load(open(sys.argv[1])))\n";
    let out = Command::new(python)
        .args(["-c", check])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "OpenHands rejects {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Given a project hooks.json holding what OpenHands rejects alongside hookjournal's six events
/// (one unknown event key and it runs no hook at all), install refuses and writes nothing; given
/// one of its six in either spelling, install adds beside the user's in that spelling (the
/// client's own validator takes the result, where it is installed), doctor counts them, and
/// uninstall gives the file back.
fn install_writes_only_a_hooks_json_openhands_accepts() {
    let (_tmp, home, project, _calls) = common::client::sandbox("README.md", "# demo\n");
    let file = project.join(".openhands/hooks.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let handler = r#"[{"matcher":"*","hooks":[{"type":"command","command":"true"}]}]"#;
    for (refused, why) in [
        (
            format!(r#"{{"hooks":{{"Notification":{handler}}}}}"#),
            "runs no hook",
        ),
        // Both spellings: ours beside `pre_tool_use` would be one event twice.
        (
            format!(r#"{{"hooks":{{"pre_tool_use":{handler},"Stop":{handler}}}}}"#),
            "runs no hook",
        ),
        // Without the wrapper: beside a `hooks` key OpenHands would ignore them.
        (
            format!(r#"{{"PreToolUse":{handler}}}"#),
            "would ignore them",
        ),
    ] {
        fs::write(&file, &refused).unwrap();
        let out = Command::new(common::BIN)
            .args(["install", "--host", "openhands"])
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{refused}: {said}");
        assert!(said.contains(why), "{refused}: {said}");
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            refused,
            "nothing written"
        );
    }
    // A key beside `hooks` OpenHands ignores: kept.
    let mine =
        format!("{{\n  \"hooks\": {{\n    \"Stop\": {handler}\n  }},\n  \"note\": \"mine\"\n}}\n");
    fs::write(&file, &mine).unwrap();
    common::client::hj(&project, &home, &["install", "--host", "openhands"]);
    let installed_text = fs::read_to_string(&file).unwrap();
    let installed: Value = serde_json::from_str(&installed_text).unwrap();
    let root: Vec<&String> = installed.as_object().unwrap().keys().collect();
    assert_eq!(root, ["hooks", "note"]);
    let mut events: Vec<&str> = installed["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    events.sort();
    let mut six = EVENTS.to_vec();
    six.sort();
    assert_eq!(events, six);
    assert_eq!(installed["hooks"]["Stop"].as_array().unwrap().len(), 2);
    // A key OpenHands rejects, added by hand after install: doctor says no hook runs.
    let mut broken = installed.clone();
    broken["hooks"]["Notification"] = installed["hooks"]["Stop"].clone();
    fs::write(&file, broken.to_string()).unwrap();
    let doctor = Command::new(common::BIN)
        .arg("doctor")
        .current_dir(&project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("holds what OpenHands rejects (Notification): it runs no hook at all"),
        "{report}"
    );
    fs::write(&file, &installed_text).unwrap();
    // A file in snake_case gets ours in snake_case, and doctor counts them as the events.
    let snake = format!("{{\"hooks\": {{\"stop\": {handler}}}}}\n");
    fs::write(&file, &snake).unwrap();
    common::client::hj(&project, &home, &["install", "--host", "openhands"]);
    let text = fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<&str> = v["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "post_tool_use",
            "pre_tool_use",
            "session_end",
            "session_start",
            "stop",
            "user_prompt_submit"
        ]
    );
    valid_for_openhands(&file);
    let report = common::client::hj(&project, &home, &["doctor"]);
    assert!(
        report.contains("registers hookjournal for all 6 events"),
        "{report}"
    );
    common::client::hj(&project, &home, &["uninstall", "--host", "openhands"]);
    assert_eq!(fs::read_to_string(&file).unwrap(), snake);
    fs::write(&file, &installed_text).unwrap();
    valid_for_openhands(&file);
    // A user install where the work dir has its own file is said never to run there.
    let said = common::client::hj(
        &project,
        &home,
        &["install", "--host", "openhands", "--scope", "user"],
    );
    assert!(said.contains("and then not your user file"), "{said}");
    common::client::hj(
        &project,
        &home,
        &["uninstall", "--host", "openhands", "--scope", "user"],
    );
    common::client::hj(&project, &home, &["uninstall", "--host", "openhands"]);
    assert_eq!(fs::read_to_string(&file).unwrap(), mine);
}

harness_main!(
    real_openhands_session_is_journaled_and_the_task_reaches_the_model,
    install_writes_only_a_hooks_json_openhands_accepts
);
