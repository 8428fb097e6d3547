//! End to end with the real Kimi CLI (the Python `kimi-cli` 1.52.0, pinned by
//! `.ci/install-kimi.sh`), headless (`python -m kimi_cli.cli --print -p …`, 1.52.0's `kimi`
//! command being a deprecation gate) against a loopback chat-completions server written here, a
//! `[providers.mock]` of type `kimi` in its `~/.kimi/config.toml`, with a second hook (a
//! `[[hooks]]` table per event in the same file) recording every invocation.
//!
//! After `hookjournal install --host kimi --scope user` (13 `[[hooks]]` tables appended to the
//! user's config, every line of it kept): a tool turn (the shell writes a marker, `ReadFile
//! README.md`, a final text). Checked: Kimi starts with the config install wrote (one event name
//! it does not accept and it refuses to start); every invocation the recording hook saw is
//! journaled once, as host `kimi`, payload for payload (none `Malformed`); hookjournal answers
//! nothing (Kimi reads no hook's context, only blocks) and no hookjournal text is in any model
//! request; README.md is a file read; `doctor` finds the registration in the user's config; and
//! `uninstall` gives the config back byte for byte; the tokens hookjournal read from Kimi's
//! `wire.jsonl` (found from `$HOME` and the md5 of the cwd; no payload names it) are what the
//! server served (its file names no model: no price, USD 0).
//!
//! Running it
//! ----------
//!   bash .ci/install-kimi.sh                 # once; Python package registry only, CI cache
//!   cargo test -p hookjournal --test kimi -- --nocapture
//! Environment:
//!   HOOKJOURNAL_KIMI_PREFIX=/path            another install (venv/bin/python in it)
//!   HOOKJOURNAL_REQUIRE_KIMI=1               fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::chat_server::Usage;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "1.52.0";
const MODEL: &str = "kimi-k2";
const RUN_TIMEOUT: Duration = Duration::from_secs(90);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with the shell, read README.md, then stop.";
const USAGE: Usage = Usage {
    prompt: 3_900,
    cached: 1_000,
    output: 12,
};

/// The pinned client's Python (its venv holds `kimi_cli`).
fn client() -> Option<PathBuf> {
    let prefix = std::env::var_os("HOOKJOURNAL_KIMI_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("kimi-{VERSION}"))))?;
    let python = prefix.join("venv/bin/python");
    python.exists().then_some(python)
}

type Server = common::chat_server::Scripted<()>;

/// The agent's chat: the shell writes a marker, `ReadFile README.md`, then a final text.
fn start_server(project: PathBuf) -> Server {
    Server::start(
        MODEL,
        |_| (),
        move |_, _, before| {
            let readme = project.join("README.md");
            let (name, args) = match before.len() {
                0 => (
                    "Shell",
                    json!({"command": "echo hj-shell-ran > marker.txt", "description": "marker"}),
                ),
                1 => ("ReadFile", json!({"path": readme})),
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

/// The user's config before install: the provider (and its key), no telemetry, and the
/// recording hook for every event install registers.
fn user_config(env: &Env) -> String {
    let mut text = format!(
        "# the tester's own config\ndefault_model = \"mock\"\ntelemetry = false\n\n\
         [models.mock]\nprovider = \"mock\"\nmodel = \"{MODEL}\"\nmax_context_size = 131072\n\n\
         [providers.mock]\ntype = \"kimi\"\nbase_url = \"http://127.0.0.1:{}/v1\"\n\
         api_key = \"hj-test-key\" # a secret install must keep\n",
        env.server.port
    );
    for (e, _) in projections::hosts::KIMI.registered() {
        text.push_str(&format!(
            "\n[[hooks]]\nevent = \"{}\"\ncommand = \"sh '{}' {}\"\ntimeout = 15\n",
            e.name,
            env.recorder().display(),
            e.name
        ));
    }
    text
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// `python -m kimi_cli.cli --print -p PROMPT` headless, killed past the timeout.
fn kimi(env: &Env, python: &Path, prompt: &str) -> Result<String, String> {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "kimi_cli.cli", "--print", "-p", prompt])
        .args(["--output-format", "stream-json"])
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("TMPDIR", common::client::private_tmp(&env.home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("KIMI_DISABLE_TELEMETRY", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("kimi ran {:?}", start.elapsed());
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 800),
        common::client::tail(&run.stderr, 2000)
    );
    match run.status {
        Some(s) if s.success() && run.stdout.contains("HJ-MOCK-FINAL") => Ok(out),
        s => Err(format!("kimi --print failed ({s:?}):\n{out}")),
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

fn real_kimi_cli_session_is_journaled_and_answered_with_nothing() -> Ran {
    let Some(python) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_KIMI",
            format!("Kimi CLI {VERSION} is not installed (bash .ci/install-kimi.sh installs it)"),
        );
    };
    let env = Env::start(|project| start_server(project.to_path_buf()));
    fs::write(env.recorder(), recorder(&env.calls)).unwrap();
    let config = env.home.join(".kimi/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = user_config(&env);
    fs::write(&config, &mine).unwrap();
    let said = env.hj(&["install", "--host", "kimi", "--scope", "user"]);
    eprintln!("{said}");
    let installed = fs::read_to_string(&config).unwrap();
    let mut failures = Vec::new();
    if !installed.starts_with(&mine) {
        failures.push("install did not keep the user's config as it was".to_string());
    }
    env.hj(&["tasks", "add", SEED_TASK]);

    let out = kimi(&env, &python, PROMPT).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let events = env.events();
    let counts = common::client::check_journaled("kimi", &env.recorded(), &events, &mut failures);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}\n{out}"));
        }
    }
    // Kimi reads no hook's context: hookjournal prints nothing, and nothing of its own is in
    // any request.
    let answered: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "ResponseEmitted")
        .filter_map(|e| {
            let body: Value = serde_json::from_slice(&common::payload_bytes(e)).ok()?;
            Some(body["output"].as_str()?.to_string())
        })
        .filter(|o| !o.is_empty())
        .collect();
    if !answered.is_empty() {
        failures.push(format!("hookjournal answered Kimi: {answered:?}"));
    }
    let exchanges = env.server.exchanges();
    eprintln!("model requests {}", exchanges.len());
    if exchanges
        .iter()
        .any(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the seeded task reached a request (Kimi reads no context)".into());
    }
    let sid = env
        .recorded()
        .iter()
        .find_map(|(_, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            (v["prompt"] == PROMPT).then(|| v["session_id"].as_str().map(str::to_string))?
        })
        .unwrap_or_else(|| panic!("no UserPromptSubmit with the prompt recorded\n{out}"));
    let show = env.json(&["show", &sid, "--json"]);
    let readme = env.project.canonicalize().unwrap().join("README.md");
    if show["host"] != "kimi"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // Tokens from Kimi's wire.jsonl, read at Stop and SessionEnd: what the server served. Its
    // file names no model, so no price applies (USD 0).
    let served = env.server.exchanges();
    let sum = |f: fn(&Usage) -> u64| served.iter().map(|e| f(&e.usage)).sum::<u64>();
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
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) usd {}; served {want:?} over {} requests",
        show["usd"],
        served.len()
    );
    if got != want {
        failures.push(format!("tokens {got:?} vs served {want:?}"));
    }
    let doctor = env.hj(&["doctor"]);
    if !doctor
        .lines()
        .any(|l| l.contains("Kimi CLI") && l.contains("config.toml"))
    {
        failures.push(format!("doctor does not find the registration:\n{doctor}"));
    }
    env.hj(&["uninstall", "--host", "kimi", "--scope", "user"]);
    if fs::read_to_string(&config).unwrap() != mine {
        failures.push("uninstall did not give the config back as it was".into());
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

harness_main!(real_kimi_cli_session_is_journaled_and_answered_with_nothing);
