//! End to end with the real Mistral Vibe CLI (the Python `mistral-vibe` 3.0.3, a wheel with its
//! Rust TUI, pinned by `.ci/install-vibe.sh`), headless (`vibe -p … --trust --auto-approve`)
//! against a loopback chat-completions server written here (a `generic` provider in
//! `~/.vibe/config.toml`), with a second hook recording every invocation in the same
//! `.vibe/hooks.toml`.
//!
//! After `hookjournal install --host vibe` (the project's `.vibe/hooks.toml`, the recorder's
//! tables kept), a task seeded and `reminder_threshold = 1`: first a run **without** `--trust`
//! (the folder untrusted: Vibe runs no hook of the project's file, neither the recorder nor
//! hookjournal), then the trusted run: a tool turn (`bash` writes a marker, `read_file`
//! README.md, a final text). Checked: every invocation the recording hook saw is journaled
//! once, as host `vibe`, payload for payload (none `Malformed`), `pre_tool`, `post_tool` and
//! `post_agent` all seen; hookjournal answered only `post_tool`, with
//! `hook_specific_output.additional_context`, and the seeded task reaches the model in the tool
//! results that follow; README.md is a file read; `doctor` finds the registration and says the
//! folder is not trusted in `trusted_folders.toml`; `uninstall` gives the file back byte for
//! byte; the tokens and USD hookjournal read from the session store (its latest generation's
//! running totals and the journal segment after it; the payload's `transcript_path`) are what
//! the server served the trusted run, priced at GPT-4.1's rates.
//!
//! Running it
//! ----------
//!   bash .ci/install-vibe.sh                 # once; Python package registry only, CI cache
//!   cargo test -p hookjournal --test vibe -- --nocapture
//! Environment:
//!   HOOKJOURNAL_VIBE_PREFIX=/path            another install (venv/bin/vibe in it)
//!   HOOKJOURNAL_REQUIRE_VIBE=1               fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (requests.jsonl, journal)

mod common;
use common::chat_server::Usage;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VERSION: &str = "3.0.3";
const MODEL: &str = "gpt-4.1";
/// GPT-4.1, USD per token: input, cached input, output (projections/data/prices.json).
const PRICE: [f64; 3] = [2.0e-6, 0.5e-6, 8.0e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker with bash, read README.md, then stop.";
const USAGE: Usage = Usage {
    prompt: 3_900,
    cached: 1_000,
    output: 12,
};
/// Vibe's three hook types.
const EVENTS: [&str; 3] = ["pre_tool", "post_tool", "post_agent"];

/// The pinned client (`venv/bin/vibe`).
fn client() -> Option<PathBuf> {
    let prefix = std::env::var_os("HOOKJOURNAL_VIBE_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("mistral-vibe-{VERSION}"))))?;
    let bin = prefix.join("venv/bin/vibe");
    bin.exists().then_some(bin)
}

type Server = common::chat_server::Scripted<()>;

/// The agent's chat: `bash` writes a marker, `read_file` reads README.md, then a final text,
/// by the tool results the request already holds.
fn start_server() -> Server {
    Server::start(
        MODEL,
        |_| (),
        move |body, _, _| {
            let done = body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "tool")
                .count();
            let (name, args) = match done {
                0 => ("bash", json!({"command": "echo hj-shell-ran > marker.txt"})),
                1 => ("read_file", json!({"path": "README.md"})),
                _ => {
                    let text = common::chat_server::text("HJ-MOCK-FINAL: all done.");
                    return (text, "stop", USAGE);
                }
            };
            let call = common::chat_server::tool_call(done, name, &args);
            (call, "tool_calls", USAGE)
        },
    )
}

type Env = common::client::Sandbox<()>;

/// The project's hooks.toml before install: the recording hook for each of the three types.
fn recorder_hooks(env: &Env) -> String {
    EVENTS
        .iter()
        .map(|e| {
            format!(
                "[[hooks]]\nname = \"record-{e}\"\ntype = \"{e}\"\ncommand = \"sh '{}' {e}\"\ntimeout = 15\n\n",
                env.recorder().display()
            )
        })
        .collect()
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// Vibe's user config: the loopback model as a generic (OpenAI chat completions) provider, no
/// update check, no telemetry.
fn vibe_config(port: u16) -> String {
    format!(
        "active_model = \"local\"\nenable_update_checks = false\nenable_auto_update = false\n\
         enable_telemetry = false\nenable_notifications = false\n\n\
         [[providers]]\nname = \"loop\"\napi_base = \"http://127.0.0.1:{port}/v1\"\n\
         api_key_env_var = \"\"\nbackend = \"generic\"\n\n\
         [[models]]\nname = \"{MODEL}\"\nprovider = \"loop\"\nalias = \"local\"\n"
    )
}

/// `vibe -p PROMPT --auto-approve [--trust]`, killed past the timeout: its output, or why it
/// failed.
fn vibe(env: &Env, bin: &Path, trust: bool) -> Result<String, String> {
    let mut cmd = Command::new(bin);
    cmd.args(["-p", PROMPT, "--auto-approve", "--output", "text"])
        .args(trust.then_some("--trust"))
        .stdin(Stdio::null())
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("TMPDIR", common::client::private_tmp(&env.home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8");
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("vibe ran {:?}", start.elapsed());
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 1500),
        common::client::tail(&run.stderr, 3000)
    );
    match run.status {
        Some(s) if s.success() && run.stdout.contains("HJ-MOCK-FINAL") => Ok(out),
        s => Err(format!("vibe -p failed ({s:?}):\n{out}")),
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

/// Whether every answer is post_tool's snake_case context holding the task, and there is one.
fn only_post_tool_context(answered: &[(String, String)], failures: &mut Vec<String>) {
    if answered.is_empty() {
        failures.push("hookjournal answered nothing".into());
    }
    for (event, output) in answered {
        let v: Value = serde_json::from_str(output).unwrap_or(Value::Null);
        let context = v.pointer("/hook_specific_output/additional_context");
        let only = v.as_object().is_some_and(|o| o.len() == 1);
        if event != "post_tool"
            || !only
            || !context
                .and_then(Value::as_str)
                .is_some_and(|c| c.contains("HJ-SEED-TASK"))
        {
            failures.push(format!("hookjournal answered {event} with {output}"));
        }
    }
}

fn real_vibe_session_is_journaled_and_the_task_reaches_the_model() -> Ran {
    let Some(bin) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_VIBE",
            format!(
                "Mistral Vibe {VERSION} is not installed (bash .ci/install-vibe.sh installs it)"
            ),
        );
    };
    let env = Env::start(|_| start_server());
    fs::create_dir_all(env.home.join(".vibe")).unwrap();
    fs::write(
        env.home.join(".vibe/config.toml"),
        vibe_config(env.server.port),
    )
    .unwrap();
    fs::write(env.recorder(), recorder(&env.calls)).unwrap();
    let hooks_toml = env.project.join(".vibe/hooks.toml");
    fs::create_dir_all(hooks_toml.parent().unwrap()).unwrap();
    let mine = recorder_hooks(&env);
    fs::write(&hooks_toml, &mine).unwrap();
    let said = env.hj(&["install", "--host", "vibe"]);
    eprintln!("{said}");
    fs::write(
        env.project.join(".hookjournal/config.toml"),
        "[policy]\nreminder_threshold = 1\n",
    )
    .unwrap_or_else(|_| {
        fs::create_dir_all(env.project.join(".hookjournal")).unwrap();
        fs::write(
            env.project.join(".hookjournal/config.toml"),
            "[policy]\nreminder_threshold = 1\n",
        )
        .unwrap();
    });
    env.hj(&["tasks", "add", SEED_TASK]);
    let mut failures = Vec::new();
    if !said.contains("only in a trusted folder") {
        failures.push(format!(
            "install does not say the folder must be trusted:\n{said}"
        ));
    }

    // Untrusted: the project's hooks.toml is not run at all.
    let untrusted = vibe(&env, &bin, false).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let before = env.events().iter().filter(|e| e["kind"] == "Hook").count();
    if !env.recorded().is_empty() || before != 0 {
        failures.push(format!(
            "an untrusted folder ran project hooks: {} recorded, {before} journaled\n{untrusted}",
            env.recorded().len()
        ));
    }
    let served_untrusted = env.server.exchanges().len();

    let out = vibe(&env, &bin, true).unwrap_or_else(|e| panic!("{e}"));
    settle(&env.calls);
    let events = env.events();
    let recorded = env.recorded();
    let counts = common::client::check_journaled("vibe", &recorded, &events, &mut failures);
    for event in EVENTS {
        if !counts.contains_key(event) {
            failures.push(format!("{event} never fired: {counts:?}\n{out}"));
        }
    }
    let answered = answers(&events);
    eprintln!("answered: {answered:?}");
    only_post_tool_context(&answered, &mut failures);
    // The reminder reaches the model: appended to a tool's result, in every request after the
    // first answered post_tool.
    let exchanges = env.server.exchanges();
    let trusted = &exchanges[served_untrusted..];
    eprintln!(
        "model requests {} (untrusted run {served_untrusted})",
        trusted.len()
    );
    let reached = trusted.iter().skip(1).all(|e| {
        e.request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .any(|m| m["content"].to_string().contains("HJ-SEED-TASK"))
    });
    if trusted.len() < 3 || !reached {
        failures.push("the seeded task is not in the tool results the model saw".into());
    }
    let sid = recorded
        .iter()
        .find_map(|(_, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            v["session_id"].as_str().map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no payload recorded\n{out}"));
    let show = env.json(&["show", &sid, "--json"]);
    let readme = env.project.join("README.md");
    if show["host"] != "vibe"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // Tokens and USD from the session store's running totals, read after each tool and at
    // post_agent: what the server served the trusted run, at GPT-4.1's prices.
    let sum = |f: fn(&Usage) -> u64| trusted.iter().map(|e| f(&e.usage)).sum::<u64>();
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
    let want_usd: f64 = trusted.iter().map(|e| e.usage.usd(PRICE)).sum();
    let usd = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (uncached in, out, cache read) usd {usd}; served {want:?} usd {want_usd} \
         over {} requests",
        trusted.len()
    );
    if got != want || (usd - want_usd).abs() > 1e-9 {
        failures.push(format!(
            "tokens {got:?} usd {usd} vs served {want:?} usd {want_usd}"
        ));
    }
    let doctor = Command::new(common::BIN)
        .arg("doctor")
        .current_dir(&env.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    if !report.contains("hooks.toml registers hookjournal for all 3 events")
        || !report.contains("the folder is not trusted")
    {
        failures.push(format!("doctor:\n{report}"));
    }
    env.hj(&["uninstall", "--host", "vibe"]);
    if fs::read_to_string(&hooks_toml).unwrap() != mine {
        failures.push("uninstall did not give hooks.toml back as it was".into());
    }
    env.keep();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

harness_main!(real_vibe_session_is_journaled_and_the_task_reaches_the_model);
