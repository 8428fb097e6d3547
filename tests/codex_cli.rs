//! End to end with the real Codex CLI (0.169.0, pinned by `.ci/install-codex-cli.sh`) against a
//! loopback Responses-API server written here, `codex exec` with no bypass flag.
//!
//! `hookjournal install --host codex` registers the hooks and trusts them in the user's
//! `config.toml` as `/hooks` would; the test trusts the project once, as Codex asks a user to at
//! the first start in a folder. Then one turn with a shell call: the hooks run (Codex skips
//! untrusted ones silently); every invocation is journaled once with its exact payload (compared
//! with a counting hook in the user's hooks.json, trusted the same way); the journal's open task
//! reaches the model; tokens, USD and context equal what the server reported, priced at
//! gpt-5.1-codex's rates, read from the rollout.
//!
//! Running it
//! ----------
//!   bash .ci/install-codex-cli.sh             # once; npm registry only, into the CI cache
//!   cargo test -p hookjournal --test codex_cli -- --nocapture
//! Environment:
//!   HOOKJOURNAL_CODEX_BIN=/path/to/codex      use another Codex CLI
//!   HOOKJOURNAL_REQUIRE_CODEX=1               fail (instead of skip) when Codex CLI is missing

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const VERSION: &str = "0.169.0";
const MODEL: &str = "gpt-5.1-codex";
/// gpt-5.1-codex, USD per token: input, cached input, output.
const PRICE: [f64; 3] = [1.25e-6, 0.125e-6, 10e-6];
const SEED_TASK: &str = "HJ-SEED-TASK: migrate the billing tables";
const PROMPT: &str = "HJ-PROMPT: run the marker command, then say done.";

fn codex_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOOKJOURNAL_CODEX_BIN") {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("HOOKJOURNAL_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/hookjournal-ci"))
        })?;
    let bin = cache.join(format!(
        "codex-cli-{VERSION}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
    ));
    bin.exists().then_some(bin)
}

/// One response's usage, as the Responses API reports it (input includes the cached tokens).
#[derive(Clone, Copy, Debug)]
struct Usage {
    input: u64,
    cached: u64,
    output: u64,
}

const SHELL: Usage = Usage {
    input: 3000,
    cached: 1000,
    output: 40,
};
const FINAL: Usage = Usage {
    input: 3300,
    cached: 2900,
    output: 25,
};

#[derive(Clone, Debug)]
struct Exchange {
    request: Value,
    usage: Usage,
}

fn serve(mut stream: TcpStream, exchanges: &Mutex<Vec<Exchange>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut len = 0;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            if h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        if !line.starts_with("POST") || !line.contains("/responses") {
            write!(
                stream,
                "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
            )?;
            continue;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let n = exchanges.lock().unwrap().len() + 1;
        let answered = request.to_string().contains("function_call_output");
        let (item, usage) = if answered {
            (
                json!({"type": "message", "role": "assistant", "id": format!("msg_{n}"), "content": [{"type": "output_text", "text": "HJ-MOCK-FINAL: done."}]}),
                FINAL,
            )
        } else {
            (
                json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"), "name": "exec_command", "arguments": "{\"cmd\": \"echo hj-shell-ran\"}"}),
                SHELL,
            )
        };
        exchanges.lock().unwrap().push(Exchange { request, usage });
        let id = format!("resp_{n}");
        let events = [
            json!({"type": "response.created", "response": {"id": id}}),
            json!({"type": "response.output_item.done", "item": item}),
            json!({"type": "response.completed", "response": {"id": id, "usage": {
                "input_tokens": usage.input,
                "input_tokens_details": {"cached_tokens": usage.cached},
                "output_tokens": usage.output,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage.input + usage.output
            }}}),
        ];
        let sse: String = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect();
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}",
            sse.len()
        )?;
        stream.flush()?;
    }
}

/// Codex 0.169.0's trust hash of a command hook (what `install` writes for its own).
fn trust_hash(label: &str, matcher: Option<&str>, command: &str, timeout: u64) -> String {
    let s = |v: &str| Value::from(v).to_string();
    let mut id = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{timeout},"type":"command"}}]"#,
        s(label),
        s(command)
    );
    if let Some(m) = matcher {
        id.push_str(&format!(r#","matcher":{}"#, s(m)));
    }
    id.push('}');
    let hex: String = Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn hj(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hookjournal"))
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env_remove("HOOKJOURNAL_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookjournal {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn real_codex_runs_installed_hooks_without_bypass_and_is_journaled_and_costed() {
    let Some(bin) = codex_bin() else {
        let msg = format!("Codex CLI {VERSION} not found (bash .ci/install-codex-cli.sh)");
        if std::env::var("HOOKJOURNAL_REQUIRE_CODEX").is_ok_and(|v| v == "1") {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    };
    let started = Instant::now();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let exchanges = Arc::new(Mutex::new(Vec::new()));
    let ex = exchanges.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let ex = ex.clone();
            std::thread::spawn(move || {
                let _ = serve(stream, &ex);
            });
        }
    });

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, project, calls) = (root.join("home"), root.join("proj"), root.join("calls"));
    for d in [&home.join(".codex"), &project, &calls] {
        fs::create_dir_all(d).unwrap();
    }
    // A repository, as Codex expects a project to be.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .expect("git");
    assert!(git.success());
    // The counting hook, for every event hookjournal registers, in the user's hooks.json,
    // trusted the way install trusts its own.
    let rec = root.join("record.sh");
    fs::write(
        &rec,
        format!(
            "#!/bin/sh\n# One file per invocation (its pid); a single child process, so it finishes fast.\ncat > '{d}/'$$.tmp && mv '{d}/'$$.tmp '{d}/'$$.json\n",
            d = calls.display()
        ),
    )
    .unwrap();
    let rec_cmd = format!("sh '{}'", rec.display());
    let user_hooks = home.join(".codex/hooks.json");
    let mut hooks = serde_json::Map::new();
    let mut config = format!(
        "model = \"{MODEL}\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"HJ_MOCK_KEY\"\n\n[projects.{}]\ntrust_level = \"trusted\"\n",
        Value::from(project.to_str().unwrap())
    );
    for (e, r) in projections::host::CODEX.registered() {
        let matcher = r.tool_matcher.then_some("*");
        let mut group = json!({"hooks": [{"type": "command", "command": rec_cmd, "timeout": 10}]});
        if let Some(m) = matcher {
            group["matcher"] = json!(m);
        }
        hooks.insert(e.name.into(), json!([group]));
        let label = snake(e.name);
        let takes_matcher = !matches!(label.as_str(), "user_prompt_submit" | "stop" | "interrupt");
        config.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = \"{}\"\n",
            Value::from(format!("{}:{label}:0:0", user_hooks.display())),
            trust_hash(&label, matcher.filter(|_| takes_matcher), &rec_cmd, 10)
        ));
    }
    fs::write(&user_hooks, json!({ "hooks": hooks }).to_string()).unwrap();
    fs::write(home.join(".codex/config.toml"), config).unwrap();

    let said = hj(&project, &home, &["install", "--host", "codex"]);
    assert!(said.contains("Trusted: 12 hooks"), "{said}");
    hj(&project, &home, &["tasks", "add", SEED_TASK]);

    let t0 = Instant::now();
    let out = Command::new(&bin)
        .args(["exec", PROMPT])
        .current_dir(&project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("HJ_MOCK_KEY", "hj-test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let took = t0.elapsed();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("codex exec: {took:?}");
    assert!(
        out.status.success() && text.contains("HJ-MOCK-FINAL"),
        "{text}"
    );
    std::thread::sleep(Duration::from_millis(2000));
    let mut failures = Vec::new();

    // Every invocation the counting hook saw is in the journal, byte for byte.
    let mut recorded: Vec<(String, Vec<u8>)> = fs::read_dir(&calls)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let raw = fs::read(&p).unwrap();
            let v: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            (
                v["hook_event_name"].as_str().unwrap_or("?").to_string(),
                raw,
            )
        })
        .collect();
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        kind: String,
        name: Option<String>,
        #[serde(borrow)]
        payload: Option<&'a serde_json::value::RawValue>,
        payload_b64: Option<String>,
    }
    let export = hj(&project, &home, &["export", "--report", "events"]);
    let mut journal: Vec<(String, Vec<u8>)> = export
        .lines()
        .filter_map(|l| {
            let e: Line = serde_json::from_str(l).unwrap();
            (e.kind == "Hook").then(|| {
                let bytes = match (e.payload, e.payload_b64) {
                    (_, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
                    (Some(p), None) => p.get().as_bytes().to_vec(),
                    (None, None) => Vec::new(),
                };
                (e.name.unwrap_or_default(), bytes)
            })
        })
        .collect();
    recorded.sort();
    journal.sort();
    let mut counts = BTreeMap::new();
    for (n, _) in &recorded {
        *counts.entry(n.clone()).or_insert(0) += 1;
    }
    eprintln!("invocations: {counts:?}");
    for want in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    ] {
        if !counts.contains_key(want) {
            failures.push(format!("{want} never ran: {counts:?}"));
        }
    }
    // Codex gives SessionEnd hooks one short budget and, measured here, never ran the counting
    // hook's SessionEnd (user layer) while it ran hookjournal's (project layer): SessionEnd is
    // checked in the journal alone, once.
    let ends = journal.iter().filter(|(n, _)| n == "SessionEnd").count();
    if ends != 1 {
        failures.push(format!("{ends} SessionEnd events journaled, expected 1"));
    }
    journal.retain(|(n, _)| n != "SessionEnd");
    recorded.retain(|(n, _)| n != "SessionEnd");
    if recorded != journal {
        failures.push(format!(
            "journal {:?} vs counting hook {:?}",
            journal.iter().map(|x| &x.0).collect::<Vec<_>>(),
            recorded.iter().map(|x| &x.0).collect::<Vec<_>>()
        ));
    }

    let served = exchanges.lock().unwrap().clone();
    if !served
        .first()
        .is_some_and(|e| e.request.to_string().contains("HJ-SEED-TASK"))
    {
        failures.push("the journal's open task did not reach the model".into());
    }
    let sid = recorded
        .iter()
        .find_map(|(n, raw)| {
            let v: Value = serde_json::from_slice(raw).ok()?;
            (n == "SessionStart").then(|| v["session_id"].as_str().unwrap().to_string())
        })
        .expect("a SessionStart");
    let show: Value =
        serde_json::from_str(&hj(&project, &home, &["show", &sid, "--json"])).unwrap();
    let sum = |f: fn(&Usage) -> u64| served.iter().map(|e| f(&e.usage)).sum::<u64>();
    let want = (
        sum(|u| u.input - u.cached),
        sum(|u| u.output),
        sum(|u| u.cached),
    );
    let usd: f64 = served
        .iter()
        .map(|e| {
            let u = e.usage;
            (u.input - u.cached) as f64 * PRICE[0]
                + u.cached as f64 * PRICE[1]
                + u.output as f64 * PRICE[2]
        })
        .sum();
    let got = (
        show["input_tokens"].as_u64().unwrap_or(0),
        show["output_tokens"].as_u64().unwrap_or(0),
        show["cache_read_tokens"].as_u64().unwrap_or(0),
    );
    if served.len() != 2 || got != want || (show["usd"].as_f64().unwrap_or(0.0) - usd).abs() > 1e-12
    {
        failures.push(format!(
            "{} requests; tokens {got:?} ${} vs served {want:?} ${usd}",
            served.len(),
            show["usd"]
        ));
    }
    if show["context_tokens"].as_u64() != Some(FINAL.input) {
        failures.push(format!(
            "context {} vs {}",
            show["context_tokens"], FINAL.input
        ));
    }
    eprintln!("codex_cli total: {:?}", started.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `PreToolUse` → `pre_tool_use`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
