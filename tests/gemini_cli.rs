//! End to end with the real Gemini CLI (0.61.0, pinned by `.ci/install-gemini-cli.sh`) against a
//! loopback model server written here (the Gemini API's `streamGenerateContent` over SSE, and
//! `generateContent` for the compression's summary requests), with hookjournal installed by
//! `hookjournal install --host gemini` and a second hook recording every invocation.
//!
//! Run A, an ordinary tool-using turn (shell, then `write_file`, then a final answer; PreCompress
//! fires before each of the three requests): every invocation is journaled once with its exact
//! payload; the journal's answer (an open task) reaches the model; the prompt is recorded without
//! hookjournal's own `<hook_context>`; `notes.md` is recorded by its absolute path; tokens and
//! USD equal the usage the server reported, priced at Gemini 2.5 Flash's rates; no compaction.
//!
//! Run B, a loop agent (`RALPH_AGENT_ID`) holding a task: the first response reports 900,000
//! prompt tokens, so Gemini compresses before the next request (the server sees the summary
//! requests). The PreCompress before the compression keeps the task (an ordinary call); the
//! compaction is counted once, from the session file (found at the next AfterTool), the task is
//! failed and released, and the agent is stopped there (`continue:false`; Gemini ignores
//! PreCompress's output) before any further request.
//!
//! Run C, the same compression without loop control: the restore after the compaction reaches
//! the model with the next tool result (Gemini starts no new session after compressing), and the
//! session has two compactions in all.
//!
//! Running it
//! ----------
//!   bash .ci/install-gemini-cli.sh            # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test gemini_cli -- --nocapture
//! Environment:
//!   HOOKJOURNAL_GEMINI_BIN=/path/to/gemini    use another Gemini CLI
//!   HOOKJOURNAL_REQUIRE_GEMINI=1              fail (instead of skip) when Gemini CLI is missing

mod common;
use base64::Engine;
use common::harness::{missing, Ran};
use common::http::Response;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "0.61.0";
const MODEL: &str = "gemini-2.5-flash";
/// Gemini 2.5 Flash, USD per token: input, cached input, output (thinking included).
const PRICE: [f64; 3] = [0.30e-6, 0.03e-6, 2.50e-6];
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT_A: &str = "HJ-PROMPT-A: create a marker file with the shell, then write notes.md.";
const PROMPT_B: &str = "HJ-PROMPT-B: do it again, under loop control.";
const PROMPT_C: &str = "HJ-PROMPT-C: and once more, without.";

fn gemini_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOOKJOURNAL_GEMINI_BIN") {
        return Some(PathBuf::from(p));
    }
    let cache = common::ci_cache()?;
    let bin = cache.join(format!("gemini-cli-{VERSION}/node_modules/.bin/gemini"));
    bin.exists().then_some(bin)
}

/// One scripted response's usage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Usage {
    prompt: u64,
    cached: u64,
    output: u64,
    thoughts: u64,
}

impl Usage {
    fn usd(&self) -> f64 {
        (self.prompt - self.cached) as f64 * PRICE[0]
            + self.cached as f64 * PRICE[1]
            + (self.output + self.thoughts) as f64 * PRICE[2]
    }
}

/// What the server answered, per request.
#[derive(Clone, Debug)]
struct Exchange {
    path: String,
    request: Value,
    /// `main` (the agent's chat, with tools), `summary` (the compression), `side` (anything else).
    role: &'static str,
    usage: Option<Usage>,
}

/// The usage the agent's three requests report in each run.
#[derive(Clone, Copy)]
struct Script {
    shell: Usage,
    write: Usage,
    last: Usage,
}

const RUN_A: Script = Script {
    shell: Usage {
        prompt: 1200,
        cached: 0,
        output: 20,
        thoughts: 5,
    },
    write: Usage {
        prompt: 1400,
        cached: 0,
        output: 20,
        thoughts: 0,
    },
    last: Usage {
        prompt: 1600,
        cached: 400,
        output: 20,
        thoughts: 0,
    },
};

/// The first response fills the context past Gemini's compression threshold (0.5 of 1M).
const RUN_B: Script = Script {
    shell: Usage {
        prompt: 900_000,
        cached: 0,
        output: 20,
        thoughts: 0,
    },
    write: Usage {
        prompt: 2000,
        cached: 0,
        output: 20,
        thoughts: 0,
    },
    last: Usage {
        prompt: 2100,
        cached: 0,
        output: 20,
        thoughts: 0,
    },
};

struct Server {
    port: u16,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    script: Arc<Mutex<Script>>,
    /// Serving while the test holds it.
    _http: common::http::Server,
}

impl Server {
    fn start() -> Server {
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(RUN_A));
        let (ex, sc) = (exchanges.clone(), script.clone());
        let http = common::http::Server::start(move |req| {
            let request = req.json().unwrap_or(Value::Null);
            let (payload, exchange) = answer(&req.path, request, *sc.lock().unwrap());
            ex.lock().unwrap().push(exchange);
            if req.path.contains("alt=sse") {
                Response::sse(format!("data: {payload}\r\n\r\n"))
            } else {
                Response::json(200, &payload)
            }
        });
        Server {
            port: http.port,
            exchanges,
            script,
            _http: http,
        }
    }

    fn take(&self) -> Vec<Exchange> {
        std::mem::take(&mut *self.exchanges.lock().unwrap())
    }
}

fn response(parts: Value, u: Usage) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": u.prompt,
            "cachedContentTokenCount": u.cached,
            "candidatesTokenCount": u.output,
            "thoughtsTokenCount": u.thoughts,
            "totalTokenCount": u.prompt + u.output + u.thoughts
        },
        "modelVersion": MODEL
    })
}

/// The scripted answer: the agent's chat (it declares tools) goes shell → write_file → final by
/// the function response it ends with; the compression's requests get a summary.
fn answer(path: &str, request: Value, script: Script) -> (Value, Exchange) {
    if path.contains(":countTokens") {
        let ex = Exchange {
            path: path.into(),
            request,
            role: "side",
            usage: None,
        };
        return (json!({"totalTokens": 300}), ex);
    }
    let text = request.to_string();
    let small = Usage {
        prompt: 50,
        cached: 0,
        output: 10,
        thoughts: 0,
    };
    let (role, parts, usage) = if request.get("tools").is_some() {
        let last = request["contents"]
            .as_array()
            .and_then(|c| c.last())
            .cloned()
            .unwrap_or(Value::Null);
        let wrote = request["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| {
                c["parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["functionCall"]["name"] == "write_file")
            });
        let responded = last["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|p| p["functionResponse"]["name"].as_str().map(str::to_string));
        match responded.as_deref() {
            Some("run_shell_command") if !wrote => (
                "main",
                json!([{"functionCall": {"name": "write_file", "args": {"file_path": "notes.md", "content": "# notes\nwritten by the mock model\n"}}}]),
                script.write,
            ),
            Some(_) => (
                "main",
                json!([{"text": "HJ-MOCK-FINAL: all done."}]),
                script.last,
            ),
            None => (
                "main",
                json!([{"functionCall": {"name": "run_shell_command", "args": {"command": "echo hj-shell-ran > shell_out.txt", "description": "write a marker file"}}}]),
                script.shell,
            ),
        }
    } else if text.contains("state_snapshot") {
        (
            "summary",
            json!([{"text": "<state_snapshot>HJ-SUMMARY: a marker file was written.</state_snapshot>"}]),
            small,
        )
    } else {
        ("side", json!([{"text": "mock side answer"}]), small)
    };
    let ex = Exchange {
        path: path.into(),
        request,
        role,
        usage: Some(usage),
    };
    (response(parts, usage), ex)
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    calls: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl Env {
    fn hj(&self, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("HOOKJOURNAL_DIR")
            .env_remove("RALPH_AGENT_ID")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "hookjournal {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.hj(args)).unwrap()
    }

    /// `gemini -p PROMPT` headless, killed (with its process group) past the timeout.
    fn gemini(
        &self,
        prompt: &str,
        agent: Option<&str>,
        extra: &[&str],
    ) -> (bool, String, Duration) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["-p", prompt, "-m", MODEL, "--yolo"])
            .args(extra)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env("GEMINI_API_KEY", "hj-test-key")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(a) = agent {
            cmd.env("RALPH_AGENT_ID", a);
        }
        let start = Instant::now();
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let out = format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            run.stdout.clone(),
            run.stderr.clone()
        );
        (status.is_some_and(|s| s.success()), out, start.elapsed())
    }

    /// Every invocation the recording hook saved, in start order: (event name, payload bytes).
    fn recorded(&self) -> Vec<(String, Vec<u8>)> {
        common::client::call_files(&self.calls)
            .into_iter()
            .map(|p| {
                let raw = fs::read(&p).unwrap();
                let v: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
                (
                    v["hook_event_name"].as_str().unwrap_or("?").to_string(),
                    raw,
                )
            })
            .collect()
    }

    /// The journal's events (`export --report events`), payloads decoded.
    fn events(&self) -> Vec<(Value, Vec<u8>)> {
        #[derive(serde::Deserialize)]
        struct Line<'a> {
            #[serde(borrow)]
            payload: Option<&'a serde_json::value::RawValue>,
            payload_b64: Option<String>,
        }
        // Readers never ingest the spool: a writer does first.
        self.hj(&["drain"]);
        self.hj(&["export", "--report", "events"])
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let raw: Line = serde_json::from_str(l).unwrap();
                let payload = match (raw.payload, raw.payload_b64) {
                    (_, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
                    (Some(p), None) => p.get().as_bytes().to_vec(),
                    (None, None) => Vec::new(),
                };
                (v, payload)
            })
            .collect()
    }
}

fn recorder(calls: &Path) -> String {
    format!(
        "#!/bin/sh\n# Records one hook invocation verbatim, one file per invocation.\nf=$(mktemp '{d}/'$(date +%s%N)-XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n",
        d = calls.display()
    )
}

fn setup(port: u16, bin: PathBuf) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    let calls = tmp.path().join("calls");
    for d in [&home, &project, &calls] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(project.join("README.md"), "# demo\n").unwrap();
    let rec = tmp.path().join("record.sh");
    fs::write(&rec, recorder(&calls)).unwrap();
    // The counting hook, for every event hookjournal registers, in the user's settings; the
    // project's settings are install's.
    let mut hooks = serde_json::Map::new();
    for (e, r) in projections::hosts::GEMINI.registered() {
        let mut group = json!({"hooks": [{"name": "recorder", "type": "command", "command": format!("sh '{}'", rec.display()), "timeout": 10000}]});
        if r.tool_matcher {
            group["matcher"] = json!("*");
        }
        hooks.insert(e.name.into(), json!([group]));
    }
    fs::create_dir_all(home.join(".gemini")).unwrap();
    let user = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooks": hooks,
    });
    fs::write(home.join(".gemini/settings.json"), user.to_string()).unwrap();
    let env = Env {
        _tmp: tmp,
        home,
        project,
        calls,
        bin,
        port,
    };
    let said = env.hj(&["install", "--host", "gemini"]);
    assert!(
        said.contains("trusted"),
        "install states the trust requirement: {said}"
    );
    // What install tells the user to do: trust the folder (here the way the dialog records it).
    let project_abs = env.project.canonicalize().unwrap();
    fs::write(
        env.home.join(".gemini/trustedFolders.json"),
        json!({ project_abs.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    env
}

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

/// Every recorded invocation is in the journal exactly once, payload for payload.
fn check_journaled(env: &Env, failures: &mut Vec<String>) -> BTreeMap<String, usize> {
    let recorded = env.recorded();
    let journal: Vec<(String, Vec<u8>)> = env
        .events()
        .into_iter()
        .filter(|(v, _)| v["kind"] == "Hook")
        .map(|(v, p)| (v["name"].as_str().unwrap_or("").to_string(), p))
        .collect();
    let mut a: Vec<&(String, Vec<u8>)> = recorded.iter().collect();
    let mut b: Vec<&(String, Vec<u8>)> = journal.iter().collect();
    a.sort();
    b.sort();
    if a != b {
        failures.push(format!(
            "journal holds {} hook events, the counting hook saw {}: {:?} vs {:?}",
            b.len(),
            a.len(),
            b.iter().map(|x| &x.0).collect::<Vec<_>>(),
            a.iter().map(|x| &x.0).collect::<Vec<_>>()
        ));
    }
    let mut counts = BTreeMap::new();
    for (name, _) in &recorded {
        *counts.entry(name.clone()).or_insert(0) += 1;
    }
    counts
}

fn excerpt(s: &str) -> String {
    s.chars().take(160).collect()
}

fn session_of(env: &Env, prompt: &str) -> Option<String> {
    env.recorded().iter().find_map(|(name, raw)| {
        let v: Value = serde_json::from_slice(raw).ok()?;
        (name == "BeforeAgent" && v["prompt"].as_str()?.contains(prompt))
            .then(|| v["session_id"].as_str().unwrap().to_string())
    })
}

fn real_gemini_cli_session_is_journaled_costed_and_compactions_counted_when_they_happen() -> Ran {
    let Some(bin) = gemini_bin() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_GEMINI",
            format!("real Gemini CLI {VERSION} not installed (bash .ci/install-gemini-cli.sh)"),
        );
    };
    let started = Instant::now();
    let server = Server::start();
    let env = setup(server.port, bin);
    let mut failures = Vec::new();
    env.hj(&["tasks", "add", SEED_TASK]);

    // Run A: an ordinary tool-using turn.
    let (ok, out, took) = env.gemini(PROMPT_A, None, &[]);
    eprintln!("run A: {took:?}");
    assert!(
        ok && out.contains("HJ-MOCK-FINAL"),
        "gemini run A failed:\n{out}"
    );
    settle(&env.calls);
    let a = server.take();
    let counts = check_journaled(&env, &mut failures);
    eprintln!("run A invocations: {counts:?}");
    let main_a: Vec<&Exchange> = a.iter().filter(|e| e.role == "main").collect();
    if main_a.len() != 3 {
        failures.push(format!(
            "run A: {} agent requests, expected 3",
            main_a.len()
        ));
    }
    if counts.get("PreCompress").copied().unwrap_or(0) < 3 {
        failures.push(format!(
            "run A: PreCompress fired {:?} times, expected one per request",
            counts.get("PreCompress")
        ));
    }
    if !main_a
        .first()
        .is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("run A: the journal's open task did not reach the model".into());
    }
    let sid_a = session_of(&env, PROMPT_A).expect("run A's BeforeAgent");
    let show = env.json(&["show", &sid_a, "--json"]);
    if show["last_prompts"] != json!([PROMPT_A]) {
        failures.push(format!("run A: recorded prompts {}", show["last_prompts"]));
    }
    let notes = env.project.canonicalize().unwrap().join("notes.md");
    if !show["files_edited"]
        .as_array()
        .is_some_and(|f| f.iter().any(|p| p == notes.to_str().unwrap()))
    {
        failures.push(format!("run A: files edited {}", show["files_edited"]));
    }
    if show["last_assistant_message"] != "HJ-MOCK-FINAL: all done." {
        failures.push(format!(
            "run A: last answer {}",
            show["last_assistant_message"]
        ));
    }
    if show["compactions"] != 0 {
        failures.push(format!(
            "run A: {} compactions without any compression",
            show["compactions"]
        ));
    }
    let served: Vec<Usage> = main_a.iter().filter_map(|e| e.usage).collect();
    let usd: f64 = served.iter().map(Usage::usd).sum();
    let tokens = |f: fn(&Usage) -> u64| served.iter().map(f).sum::<u64>();
    let want = (
        tokens(|u| u.prompt - u.cached),
        tokens(|u| u.output + u.thoughts),
        tokens(|u| u.cached),
    );
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
    );
    if got != want || (show["usd"].as_f64().unwrap_or(0.0) - usd).abs() > 1e-12 {
        failures.push(format!(
            "run A: tokens {got:?} ${} vs served {want:?} ${usd}",
            show["usd"]
        ));
    }
    let ctx = show["context_tokens"].as_u64().unwrap_or(0);
    if ctx != RUN_A.last.prompt {
        failures.push(format!(
            "run A: context {ctx}, the last request's prompt was {}",
            RUN_A.last.prompt
        ));
    }

    // Run B: a loop agent holding a task; Gemini compresses after the first response.
    *server.script.lock().unwrap() = RUN_B;
    let added = env.hj(&["tasks", "add", "HJ-LOOP-TASK", "--agent", "dev-1"]);
    let id = added.split_whitespace().next().unwrap_or("").to_string();
    env.hj(&["tasks", "claim", &id, "--agent", "dev-1"]);
    let before_b = env.events().len() as u64;
    // Resumed: Gemini compresses only history before the latest user turn (its split point).
    let (ok, out, took) = env.gemini(PROMPT_B, Some("dev-1"), &["--resume", "latest"]);
    eprintln!("run B: {took:?} (exit ok: {ok})");
    settle(&env.calls);
    let b = server.take();
    let summaries = b.iter().filter(|e| e.role == "summary").count();
    eprintln!(
        "run B requests: {:?}",
        b.iter()
            .map(|e| format!(
                "{} {} {}",
                e.role,
                e.path,
                excerpt(
                    &e.request["contents"]
                        .as_array()
                        .and_then(|c| c.last())
                        .cloned()
                        .unwrap_or_default()
                        .to_string()
                )
            ))
            .collect::<Vec<_>>()
    );
    // Found at the AfterTool after the compaction (write_file's) and stopped there: no request
    // after the second.
    let main_b = b.iter().filter(|e| e.role == "main").count();
    if main_b != 2 || !out.contains("Agent execution stopped: Context Limit Reached") {
        failures.push(format!(
            "run B: {main_b} agent requests, expected 2 (stopped)\n{out}"
        ));
    }
    if summaries == 0 {
        failures.push(format!(
            "run B: Gemini did not compress (no summary request)\n{out}"
        ));
    }
    check_journaled(&env, &mut failures);
    let sid_b = session_of(&env, PROMPT_B).expect("run B's BeforeAgent");
    let show = env.json(&["show", &sid_b, "--json"]);
    if show["compactions"] != 1 {
        failures.push(format!(
            "run B: {} compactions, Gemini compressed once",
            show["compactions"]
        ));
    }
    // The release came at a PreCompress after the compression, never at the ordinary one before.
    let events = env.events();
    let b_events: Vec<&Value> = events
        .iter()
        .map(|(v, _)| v)
        .filter(|v| v["session_id"] == sid_b.as_str() && v["seq"].as_u64() > Some(before_b))
        .collect();
    let released: Vec<&&Value> = b_events
        .iter()
        .filter(|v| v["kind"] == "TaskReleased")
        .collect();
    let precompress_before = |seq: u64| {
        b_events
            .iter()
            .filter(|v| v["name"] == "PreCompress" && v["seq"].as_u64() < Some(seq))
            .count()
    };
    match released.as_slice() {
        [r] => {
            let n = precompress_before(r["seq"].as_u64().unwrap());
            if n < 2 {
                failures.push(format!(
                    "run B: the task was released at PreCompress #{n}, before any compression"
                ));
            }
        }
        other => failures.push(format!("run B: {} task releases, expected 1", other.len())),
    }
    let tasks = env.json(&["tasks", "list", "--json"]);
    let loop_task = tasks
        .as_array()
        .and_then(|t| t.iter().find(|t| t["subject"] == "HJ-LOOP-TASK"))
        .cloned()
        .unwrap_or(Value::Null);
    if loop_task["retry_count"] != 1 || !loop_task["owner"].is_null() {
        failures.push(format!(
            "run B: the loop task after the compaction: {loop_task}"
        ));
    }
    // Run C: the same compression without loop control: the restore reaches the model with the
    // next tool's result (Gemini starts no new session after a compression).
    *server.script.lock().unwrap() = Script { ..RUN_B };
    let (ok, out, took) = env.gemini(PROMPT_C, None, &["--resume", "latest"]);
    eprintln!("run C: {took:?}");
    settle(&env.calls);
    let c = server.take();
    if !ok || c.iter().all(|e| e.role != "summary") {
        failures.push(format!("run C: no compression\n{out}"));
    }
    let restored = c
        .iter()
        .skip_while(|e| e.role != "summary")
        .filter(|e| e.role == "main")
        .filter(|e| e.request.to_string().contains("after context compaction"))
        .count();
    if restored == 0 {
        failures.push("run C: the restore after the compaction did not reach the model".into());
    }
    check_journaled(&env, &mut failures);
    let show = env.json(&["show", &sid_b, "--json"]);
    if show["compactions"] != 2 {
        failures.push(format!(
            "run C: {} compactions in all, expected 2",
            show["compactions"]
        ));
    }
    eprintln!("gemini_cli total: {:?}", started.elapsed());
    if !failures.is_empty() && std::env::var_os("HOOKJOURNAL_E2E_KEEP").is_some() {
        let kept = env._tmp.path().to_path_buf();
        std::mem::forget(env);
        eprintln!("kept {}", kept.display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

harness_main!(real_gemini_cli_session_is_journaled_costed_and_compactions_counted_when_they_happen,);
