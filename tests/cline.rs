//! End to end with the real Cline CLI (3.0.65, pinned by `.ci/install-cline.sh`), headless
//! (`cline --json PROMPT`, the session in-process: `CLINE_SESSION_BACKEND_MODE=local`, so no hub
//! daemon is left behind) against a loopback chat-completions server (`cline auth -p openai -b
//! URL`), with hookjournal's hook files installed by `hookjournal install --host cline` and a
//! counting hook of the same names in `~/.cline/hooks/` (Cline runs both).
//!
//! A task is seeded and `reminder_threshold = 1` set, so the first tool result is answered with a
//! task reminder. Run one: `read_files` on notes.txt, then text. Run two (Cline has no headless
//! second turn in a session: `--id` forces its TUI, see FACTS.md, so it is a second session):
//! `apply_patch` adding a file, then `spawn_agent` (a subagent answering with text), then text.
//! Checked: every hook run the counting hook saw is journaled once, as host `cline`, in its
//! session (none `Malformed`); the reminder reaches the model's next request as Cline's
//! `<hook_context source="PostToolUse">`; the snapshot has the file read, the file edited, the
//! tool calls and the finished subagent; each session's tokens, USD and context are what the
//! server reported for its requests, the subagent's included (read from Cline's messages files,
//! the session's and the subagent's beside it, which the hook finds under `$HOME`). Cline
//! announces no compaction to its hooks: that is not checked (see docs/hooks.md, "Cline CLI").
//!
//! Running it
//! ----------
//!   bash .ci/install-cline.sh                 # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test cline -- --nocapture
//! Environment:
//!   HOOKJOURNAL_CLINE_BIN=/path/to/cline      another Cline binary
//!   HOOKJOURNAL_REQUIRE_CLINE=1               fail (instead of report ignored) when it is missing
//!   HOOKJOURNAL_E2E_KEEP=1                    keep the temp dir (requests.jsonl, journal)

mod common;
use common::harness::{missing, Ran};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "3.0.65";
const MODEL: &str = "gpt-4.1";
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: read notes.txt.";
const PROMPT_2: &str = "HJ-PROMPT-2: add a file.";
/// The system prompt run two's agent gives the subagent it spawns (`spawn_agent`).
const SUBAGENT_SYSTEM: &str = "HJ-SUBAGENT-SYS: you are a helper subagent.";
/// What the server reports for every request: prompt tokens (cached included), cached, output.
const SERVED: (u64, u64, u64) = (11_000, 4_000, 12);
/// gpt-4.1's USD per token (input, cache read, output), from the price data.
const PRICE: [f64; 3] = [2e-6, 5e-7, 8e-6];

fn client() -> Option<PathBuf> {
    std::env::var_os("HOOKJOURNAL_CLINE_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            common::ci_cache().map(|c| {
                c.join(format!(
                    "cline-{VERSION}/node_modules/@cline/cli-linux-x64/bin/cline"
                ))
            })
        })
        .filter(|b| b.exists())
}

/// The agent's script, by the conversation so far: a tool call while the request has no tool
/// result yet, then text; in run two, after its tool, a subagent (`spawn_agent`), which answers
/// with text.
fn reply(request: &Value, project: &Path) -> common::chat_server::Answer {
    let text = request.to_string();
    let messages = request["messages"].to_string();
    let answered = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let subagent = request["messages"][0]["content"]
        .to_string()
        .contains(SUBAGENT_SYSTEM);
    let spawned = messages.contains("\"name\":\"spawn_agent\"");
    let (delta, finish) = if subagent {
        (
            common::chat_server::text("HJ-SUB-FINAL: the notes say hello."),
            "stop",
        )
    } else if answered && text.contains("HJ-PROMPT-2") && !spawned {
        let args = json!({"systemPrompt": SUBAGENT_SYSTEM, "task": "HJ-SUBAGENT-TASK: say hello."});
        let call = common::chat_server::tool_call(3, "spawn_agent", &args);
        (call, "tool_calls")
    } else if answered {
        (common::chat_server::text("HJ-MOCK-FINAL: done."), "stop")
    } else if text.contains("HJ-PROMPT-2") {
        let patch = "*** Begin Patch\n*** Add File: added.txt\n+hj added\n*** End Patch\n";
        let call = common::chat_server::tool_call(2, "apply_patch", &json!({"input": patch}));
        (call, "tool_calls")
    } else {
        let args = json!({"files": [{"path": project.join("notes.txt")}]});
        let call = common::chat_server::tool_call(1, "read_files", &args);
        (call, "tool_calls")
    };
    common::chat_server::Answer {
        delta,
        finish,
        prompt_tokens: SERVED.0,
        cached_tokens: SERVED.1,
        output_tokens: SERVED.2,
    }
}

struct Env {
    tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    calls: PathBuf,
    requests: Arc<Mutex<Vec<Value>>>,
    port: u16,
    /// The model server, serving while the test holds it.
    _http: common::http::Server,
}

impl Env {
    fn new() -> Env {
        let (tmp, home, project, calls) = common::client::sandbox("notes.txt", "hello world\n");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (seen, dir) = (requests.clone(), project.clone());
        let http = common::chat_server::start(MODEL, move |request| {
            seen.lock().unwrap().push(request.body.clone());
            reply(&request.body, &dir)
        });
        // The counting hook: one file per run, named by the hook file and its process id.
        let hooks = home.join(".cline/hooks");
        fs::create_dir_all(&hooks).unwrap();
        for (e, _) in projections::hosts::CLINE.registered() {
            let file = projections::hosts::cline::cline_hook_file(e.name).unwrap();
            let path = hooks.join(file);
            let script = format!("#!/bin/sh\ncat > '{}/{file}.'$$'.json'\n", calls.display());
            fs::write(&path, script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        Env {
            tmp,
            home,
            project,
            calls,
            requests,
            port: http.port,
            _http: http,
        }
    }

    fn hj(&self, args: &[&str]) -> String {
        common::client::hj(&self.project, &self.home, args)
    }

    /// The client, headless, killed (with its process group) past the timeout.
    fn cline(&self, bin: &Path, args: &[&str]) -> String {
        let start = Instant::now();
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env("CLINE_SESSION_BACKEND_MODE", "local")
            .stdin(Stdio::null());
        let run = common::client::run_bounded(&mut cmd, RUN_TIMEOUT);
        let status = run.status;
        let stdout = run.stdout.clone();
        let stderr = run.stderr.clone();
        eprintln!("cline {:?} ran {:?}", args.first(), start.elapsed());
        assert!(
            status.is_some_and(|s| s.success()),
            "cline {args:?} failed ({status:?}):\n{stdout}\n{stderr}"
        );
        stdout
    }

    /// Every hook run the counting hook saw: (hookName, session).
    fn recorded(&self) -> Vec<(String, String)> {
        fs::read_dir(&self.calls)
            .unwrap()
            .flatten()
            .map(|e| {
                let v: Value = serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
                (
                    v["hookName"].as_str().unwrap_or("").to_string(),
                    v["sessionContext"]["rootSessionId"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    }

    fn events(&self) -> Vec<Value> {
        self.hj(&["drain"]);
        common::events_of(&self.hj(&["export", "--report", "events"]))
    }

    fn keep(self) {
        if std::env::var_os("HOOKJOURNAL_E2E_KEEP").is_some() {
            let requests: String = self
                .requests
                .lock()
                .unwrap()
                .iter()
                .map(|r| format!("{r}\n"))
                .collect();
            fs::write(self.tmp.path().join("requests.jsonl"), requests).unwrap();
            eprintln!("kept {}", self.tmp.keep().display());
        }
    }
}

/// The snapshot: the file read, the file edited, the tool calls and the subagent, over both runs'
/// sessions.
fn check_snapshot(env: &Env) {
    let rows: Value = serde_json::from_str(&env.hj(&["sessions", "--json"])).unwrap();
    let mut read = Vec::new();
    let mut edited = Vec::new();
    let mut tools = 0;
    let mut subagents = Vec::new();
    for row in rows.as_array().unwrap() {
        let id = row["session_id"].as_str().unwrap();
        let show: Value = serde_json::from_str(&env.hj(&["show", id, "--json"])).unwrap();
        read.extend(show["files_read"].as_array().cloned().unwrap_or_default());
        edited.extend(show["files_edited"].as_array().cloned().unwrap_or_default());
        tools += show["tool_calls"].as_u64().unwrap_or(0);
        subagents.extend(show["subagents"].as_array().cloned().unwrap_or_default());
    }
    let p = env.project.display();
    assert_eq!(read, [json!(format!("{p}/notes.txt"))]);
    assert_eq!(edited, [json!(format!("{p}/added.txt"))]);
    // read_files, apply_patch and spawn_agent; the subagent, finished.
    assert_eq!(tools, 3);
    assert_eq!(subagents.len(), 1, "{subagents:?}");
    assert_eq!(subagents[0]["running"], false, "{subagents:?}");
    // Cline's apply_patch wrote it (without the patch's last newline).
    assert_eq!(
        fs::read_to_string(env.project.join("added.txt")).unwrap(),
        "hj added"
    );
}

/// Each session's tokens and USD are what the server reported for its requests (run one: the
/// tool call and the text; run two: those, the spawn and its subagent's one, which Cline keeps
/// in a file of the subagent's own), and its context is the last request's prompt.
fn check_usage(env: &Env, sessions: &[&str], served: usize) {
    let (prompt, cached, output) = SERVED;
    let mut total = (0, 0, 0, 0.0);
    for sid in sessions {
        let show: Value = serde_json::from_str(&env.hj(&["show", sid, "--json"])).unwrap();
        let got = (
            show["input_tokens"].as_u64().unwrap_or(0),
            show["output_tokens"].as_u64().unwrap_or(0),
            show["cache_read_tokens"].as_u64().unwrap_or(0),
        );
        let usd = show["usd"].as_f64().unwrap_or(0.0);
        eprintln!("session {sid}: tokens {got:?} (uncached in, out, cache read) ${usd:.6}");
        let subagents = show["subagents"].as_array().map_or(0, Vec::len);
        let n = if subagents == 0 { 2 } else { 4 };
        assert_eq!(
            got,
            (n * (prompt - cached), n * output, n * cached),
            "{show}"
        );
        assert_eq!(show["model"], MODEL, "{show}");
        assert_eq!(show["context_tokens"], prompt, "{show}");
        total = (
            total.0 + got.0,
            total.1 + got.1,
            total.2 + got.2,
            total.3 + usd,
        );
    }
    let n = served as u64;
    let want = (n * (prompt - cached), n * output, n * cached);
    let want_usd = want.0 as f64 * PRICE[0] + want.2 as f64 * PRICE[1] + want.1 as f64 * PRICE[2];
    eprintln!(
        "journaled tokens {:?} ${:.6}; served {want:?} ${want_usd:.6} over {served} requests",
        (total.0, total.1, total.2),
        total.3
    );
    assert_eq!((total.0, total.1, total.2), want);
    assert!(
        (total.3 - want_usd).abs() < 1e-9,
        "{} vs {want_usd}",
        total.3
    );
}

/// Two headless runs of the real client with hookjournal's hook files beside a counting hook.
fn cline_runs_are_journaled_once_and_the_answer_reaches_the_model() -> Ran {
    let Some(bin) = client() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_CLINE",
            format!("Cline CLI {VERSION} is not installed (bash .ci/install-cline.sh)"),
        );
    };
    let env = Env::new();
    let url = format!("http://127.0.0.1:{}/v1", env.port);
    let auth = [
        "auth",
        "-p",
        "openai",
        "-k",
        "hj-test-key",
        "-m",
        MODEL,
        "-b",
        &url,
    ];
    env.cline(&bin, &auth);
    env.hj(&["install", "--host", "cline"]);
    fs::write(
        env.project.join(".hookjournal/config.toml"),
        "[policy]\nreminder_threshold = 1\n",
    )
    .unwrap();
    env.hj(&["tasks", "add", SEED_TASK]);
    env.cline(&bin, &["--json", PROMPT]);
    env.cline(&bin, &["--json", PROMPT_2]);

    // Every hook run is journaled once, in its session, as Cline's.
    let recorded = env.recorded();
    let hooks: Vec<Value> = env
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
        .collect();
    assert!(hooks.iter().all(|e| e["kind"] == "Hook"), "{hooks:?}");
    assert!(hooks.iter().all(|e| e["host"] == "cline"), "{hooks:?}");
    let mut journaled: Vec<(String, String)> = hooks
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["session_id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut seen = recorded.clone();
    seen.sort();
    journaled.sort();
    assert_eq!(journaled, seen, "journaled vs seen by the counting hook");
    let sessions: std::collections::BTreeSet<&str> =
        recorded.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(sessions.len(), 2, "{recorded:?}");
    for name in ["agent_start", "tool_call", "tool_result", "agent_end"] {
        let n = recorded.iter().filter(|(n, _)| n == name).count();
        // Once per run and once in the subagent; three tools (the spawn one of them).
        assert_eq!(n, 3, "{name}: {recorded:?}");
    }
    eprintln!(
        "hook runs seen {}, journaled {}",
        seen.len(),
        journaled.len()
    );

    // The reminder answered after the first tool reaches the model's next request.
    let requests = env.requests.lock().unwrap().clone();
    let after_tool = requests
        .iter()
        .find(|r| r.to_string().contains("HJ-PROMPT:") && r.to_string().contains("\"tool\""))
        .expect("the request after run one's tool");
    let last = after_tool["messages"].as_array().unwrap().last().unwrap();
    let said = last["content"].to_string();
    assert!(
        said.contains("<hook_context source=\\\"PostToolUse\\\"") && said.contains("HJ-SEED-TASK"),
        "{said}"
    );

    check_snapshot(&env);
    let sessions: Vec<&str> = sessions.into_iter().collect();
    check_usage(&env, &sessions, requests.len());
    env.keep();
    Ok(())
}

harness_main!(cline_runs_are_journaled_once_and_the_answer_reaches_the_model);
