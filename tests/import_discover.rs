//! `import --discover` end to end: a `$HOME` built from real clients' session files (Claude
//! Code, Codex, Gemini CLI, Qwen Code, Copilot CLI), this project's sessions found and imported
//! once, another project's left alone, a damaged file and a link skipped with a note; then, agent
//! by agent, `cost --all-projects --by day --json` beside ccusage's daily report over the same
//! files (the pinned ccusage, `.ci/install-ccusage.sh`; skipped without it unless
//! `HOOKJOURNAL_REQUIRE_CCUSAGE=1`).

mod common;
use common::*;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test(
            "discover_imports_this_projects_sessions_once_whole",
            discover_imports_this_projects_sessions_once_whole,
        ),
        Trial::ignorable_test(
            "discovered_cost_by_day_is_ccusages_agent_by_agent",
            discovered_cost_by_day_is_ccusages_agent_by_agent,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

const AGENTS: [&str; 7] = [
    "claude", "codex", "gemini", "qwen", "copilot", "opencode", "kilo",
];

/// An OpenCode-schema SQLite database at `path` holding the `session` and `message` rows of
/// `rows` (a `{"session": [...], "message": [...]}` dump, each row's columns as its keys; a JSON
/// value in a column stored as its text).
fn plant_db(rows: &Value, path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let db = rusqlite::Connection::open(path).unwrap();
    for table in ["session", "message"] {
        let first = rows[table][0].as_object().unwrap();
        let cols: Vec<&String> = first.keys().collect();
        let names: Vec<&str> = cols.iter().map(|c| c.as_str()).collect();
        db.execute_batch(&format!("CREATE TABLE {table} ({})", names.join(", ")))
            .unwrap();
        let marks = vec!["?"; cols.len()].join(", ");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            names.join(", ")
        );
        for row in rows[table].as_array().unwrap() {
            let vals: Vec<rusqlite::types::Value> = cols
                .iter()
                .map(|c| match &row[c.as_str()] {
                    Value::Null => rusqlite::types::Value::Null,
                    Value::String(s) => rusqlite::types::Value::Text(s.clone()),
                    Value::Number(n) if n.is_i64() => {
                        rusqlite::types::Value::Integer(n.as_i64().unwrap())
                    }
                    Value::Number(n) => rusqlite::types::Value::Real(n.as_f64().unwrap()),
                    v => rusqlite::types::Value::Text(v.to_string()),
                })
                .collect();
            db.execute(&sql, rusqlite::params_from_iter(vals)).unwrap();
        }
    }
}

/// Kilo Code 7.7.9's real `session` and `message` rows (OpenCode's schema), their directory
/// rewritten to `project`; for OpenCode (no database was captured from OpenCode itself) the same
/// rows under other ids, so the two hosts' sessions stay apart in one journal.
fn opencode_rows(host: &str, project: &Path) -> Value {
    let f = fixtures().join("real-hosts/kilo-7.7.9/kilo.db.tool-run.json");
    let mut text = fs::read_to_string(f)
        .unwrap()
        .replace("/home/dev/acme-api", project.to_str().unwrap());
    if host == "opencode" {
        text = text
            .replace("ses_dcc6", "ses_0c6e")
            .replace("msg_2339", "msg_0c39");
    }
    serde_json::from_str(&text).unwrap()
}

/// A fixture file copied to `to`, the project paths the clients wrote rewritten to `project`.
fn plant(from: &Path, to: &Path, project: &Path) {
    let text = fs::read_to_string(from).unwrap();
    let p = project.to_str().unwrap();
    let text = text
        .replace("/home/dev/proj", p)
        .replace("/home/dev/acme-api", p)
        .replace("/work/demo", p);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::write(to, text).unwrap();
}

fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

fn sha256_hex(s: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `agent`'s real session files, planted in `home` where the client keeps them, as sessions of
/// `project`. Returns the files planted.
fn plant_agent(agent: &str, home: &Path, project: &Path) -> Vec<PathBuf> {
    let fx = fixtures();
    let real = fx.join("real-hosts");
    let sanitized: String = project
        .to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let mut out = Vec::new();
    match agent {
        "claude" => {
            let to = home.join(".claude/projects").join(&sanitized);
            for f in jsonl_in(&fx.join("transcripts-corpus/projects/-home-dev-acme-api")) {
                let t = to.join(f.file_name().unwrap());
                plant(&f, &t, project);
                out.push(t);
            }
        }
        "codex" => {
            let corpus = real.join("codex-0.169.0-rollouts/corpus/sessions/2026/11");
            for day in ["22", "23"] {
                for f in jsonl_in(&corpus.join(day)) {
                    let t = home
                        .join(".codex/sessions/2026/11")
                        .join(day)
                        .join(f.file_name().unwrap());
                    plant(&f, &t, project);
                    out.push(t);
                }
            }
        }
        "gemini" => {
            // One project folder says its root; the other is named by the root's hash only.
            let chats = real.join("gemini-0.61.0-chats");
            let a = home.join(".gemini/tmp/proj/chats/session-2026-11-22T12-01-tool.jsonl");
            plant(&chats.join("tool-run.jsonl"), &a, project);
            fs::write(
                home.join(".gemini/tmp/proj/.project_root"),
                project.to_str().unwrap(),
            )
            .unwrap();
            let b = home.join(".gemini/tmp/7c1e/chats/session-2026-11-22T12-03-comp.jsonl");
            plant(&chats.join("with-real-compression.jsonl"), &b, project);
            let text = fs::read_to_string(&b).unwrap();
            let first = text.lines().next().unwrap();
            let mut header: Value = serde_json::from_str(first).unwrap();
            header["projectHash"] = json!(sha256_hex(project.to_str().unwrap()));
            fs::write(&b, text.replacen(first, &header.to_string(), 1)).unwrap();
            out.extend([a, b]);
        }
        "qwen" => {
            let to = home.join(".qwen/projects").join(&sanitized).join("chats");
            for f in jsonl_in(&real.join("qwen-0.24.4/chats")) {
                let first = fs::read_to_string(&f).unwrap();
                let v: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
                let t = to.join(format!("{}.jsonl", v["sessionId"].as_str().unwrap()));
                plant(&f, &t, project);
                out.push(t);
            }
        }
        "copilot" => {
            for f in jsonl_in(&real.join("copilot-1.0.102/session-state")) {
                let first = fs::read_to_string(&f).unwrap();
                let v: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
                let t = home
                    .join(".copilot/session-state")
                    .join(v["data"]["sessionId"].as_str().unwrap())
                    .join("events.jsonl");
                plant(&f, &t, project);
                out.push(t);
            }
        }
        "opencode" | "kilo" => {
            let t = home
                .join(".local/share")
                .join(agent)
                .join(format!("{agent}.db"));
            plant_db(&opencode_rows(agent, project), &t);
            out.push(t);
        }
        _ => unreachable!(),
    }
    out
}

/// Given every agent's files for this project, another project's rollout and OpenCode session,
/// a damaged rollout and a link to a transcript elsewhere, and one Codex session a hook already read: when `import
/// --discover` runs twice, then the first imports every response but the hook's, the second
/// nothing; `sessions` shows the sessions no hook saw as `files`, `cost --by host` each host's.
fn discover_imports_this_projects_sessions_once_whole() -> Result<(), Failed> {
    let mut env = TestEnvironment::new();
    env.pin_now_ahead();
    let (home, project) = (env.home.clone(), env.project.clone());
    let mut codex = Vec::new();
    for agent in AGENTS {
        let files = plant_agent(agent, &home, &project);
        if agent == "codex" {
            codex = files;
        }
    }
    // Another project's rollout: its session_meta names another working directory.
    let other = home.join(".codex/sessions/2026/11/24/rollout-2026-11-24T10-00-00-other.jsonl");
    let corpus = fixtures().join("real-hosts/codex-0.169.0-rollouts/corpus/sessions/2026/11/22");
    plant(
        &jsonl_in(&corpus)[0],
        &other,
        Path::new("/home/dev/elsewhere"),
    );
    // Another project's OpenCode session, in the same database.
    rusqlite::Connection::open(home.join(".local/share/opencode/opencode.db"))
        .unwrap()
        .execute(
            "INSERT INTO session (id, directory, time_created) VALUES ('ses_0e15e', ?1, 1)",
            ["/home/dev/elsewhere"],
        )
        .unwrap();
    // A damaged rollout, and a link to a transcript outside the folder.
    fs::write(
        home.join(".codex/sessions/2026/11/24/rollout-2026-11-24T11-00-00-damaged.jsonl"),
        "\u{0}\u{1} not a rollout\n",
    )
    .unwrap();
    let outside = env.root().join("outside.jsonl");
    fs::write(&outside, "{}\n").unwrap();
    let claude_dir = claude_folder(&home, &project);
    env.redact(
        claude_dir.file_name().unwrap().to_str().unwrap(),
        "[PROJECT FOLDER]",
    );
    std::os::unix::fs::symlink(&outside, claude_dir.join("linked.jsonl")).unwrap();

    // A hook read the first Codex rollout at its SessionEnd, as Codex sends it.
    let meta: Value = serde_json::from_str(
        fs::read_to_string(&codex[0])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let payload = json!({
        "session_id": meta["payload"]["id"],
        "transcript_path": codex[0],
        "cwd": project,
        "hook_event_name": "SessionEnd",
        "reason": "other",
    });
    let mut hook = env.command(&project);
    hook.args(["hook", "--host", "codex"]);
    let out = feed(&mut hook, payload.to_string().as_bytes());
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    let mut t = String::new();
    env.step(&mut t, &["import", "--discover"]);
    env.step(&mut t, &["import", "--discover"]);
    env.step(&mut t, &["sessions"]);
    env.step(&mut t, &["cost", "--by", "host"]);
    assert_expected("import_discover.txt", &t);
    Ok(())
}

fn claude_folder(home: &Path, project: &Path) -> PathBuf {
    let sanitized: String = project
        .to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects").join(sanitized)
}

/// `ccusage [AGENT] daily --offline --json -z UTC` with `home` as HOME.
fn ccusage_daily(bin: &Path, agent: &str, home: &Path) -> Value {
    common::ccusage::report(
        bin,
        &[agent, "daily", "--offline", "--json", "--timezone", "UTC"],
        &[("HOME", home.as_os_str())],
        &format!("{agent} daily"),
    )
}

/// gpt-4.1's prices per token (input, output), the model of the Qwen and Copilot fixtures.
const GPT41: (f64, f64) = (2.0e-6, 8.0e-6);

/// What ccusage 20.0.24 counts differently from hookjournal, by design, over the same files: its
/// figures are ours plus these (tokens: input, output; dollars).
#[derive(Default)]
struct Convention {
    input: i64,
    output: i64,
    usd: f64,
}

/// ccusage's conventions for `agent` on `day` over `files`: its Qwen report counts
/// `promptTokenCount` as input and the cached part again as cache reads (`tests/qwen_code.rs`);
/// its Copilot report leaves out the compactions' own summary requests
/// (`session.compaction_complete`'s `compactionTokensUsed`), which hookjournal counts; its Kilo
/// report's dollars are Kilo's own.
fn convention(agent: &str, day: &str, ours: &Value, files: &[PathBuf]) -> Convention {
    match agent {
        "qwen" => {
            let cached = ours["cache_read_tokens"].as_i64().unwrap_or(0);
            Convention {
                input: cached,
                usd: cached as f64 * GPT41.0,
                ..Convention::default()
            }
        }
        "copilot" => {
            let mut c = Convention::default();
            for f in files {
                for line in fs::read_to_string(f).unwrap().lines() {
                    let v: Value = serde_json::from_str(line).unwrap();
                    let t = &v["data"]["compactionTokensUsed"];
                    let on_day = v["timestamp"]
                        .as_str()
                        .is_some_and(|ts| ts.starts_with(day));
                    if v["type"] == "session.compaction_complete" && on_day {
                        let (i, o) = (
                            t["inputTokens"].as_i64().unwrap(),
                            t["outputTokens"].as_i64().unwrap(),
                        );
                        c.input -= i;
                        c.output -= o;
                        c.usd -= i as f64 * GPT41.0 + o as f64 * GPT41.1;
                    }
                }
            }
            c
        }
        // Its Kilo report takes the dollars Kilo recorded with each message (`data.cost`: 0 for
        // a provider Kilo has no price for, as here) rather than pricing the tokens (checked with
        // a cost of 0.5 set on each of the three messages: ccusage kilo daily says $1.5).
        "kilo" => {
            let db = rusqlite::Connection::open(&files[0]).unwrap();
            let mut q = db.prepare("SELECT data FROM message").unwrap();
            let recorded: f64 = q
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .map(|d| serde_json::from_str::<Value>(&d.unwrap()).unwrap())
                .filter(|d| d["role"] == "assistant")
                .filter(|d| {
                    let ms = d["time"]["created"].as_i64().unwrap_or(0);
                    chrono::DateTime::from_timestamp_millis(ms)
                        .is_some_and(|t| t.format("%Y-%m-%d").to_string() == day)
                })
                .map(|d| d["cost"].as_f64().unwrap_or(0.0))
                .sum();
            Convention {
                usd: recorded - ours["usd"].as_f64().unwrap_or(0.0),
                ..Convention::default()
            }
        }
        _ => Convention::default(),
    }
}

/// One day of ours beside ccusage's, after its conventions (`convention`): tokens exactly,
/// dollars to 1e-6. Returns the line of figures the report quotes.
fn agree_day(
    agent: &str,
    day: &str,
    ours: &Value,
    theirs: &Value,
    files: &[PathBuf],
    f: &mut Vec<String>,
) -> String {
    let n = |v: &Value, k: &str| v[k].as_i64().unwrap_or(0);
    let c = convention(agent, day, ours, files);
    let pairs = [
        ("input_tokens", "inputTokens", c.input),
        ("output_tokens", "outputTokens", c.output),
        ("cache_write_tokens", "cacheCreationTokens", 0),
        ("cache_read_tokens", "cacheReadTokens", 0),
        ("total_tokens", "totalTokens", c.input + c.output),
    ];
    for (o, t, extra) in pairs {
        if n(ours, o) + extra != n(theirs, t) {
            f.push(format!(
                "{agent} {day}: {o} {} ({extra:+}) vs ccusage {t} {}",
                n(ours, o),
                n(theirs, t)
            ));
        }
    }
    let usd = ours["usd"].as_f64().unwrap_or(0.0);
    let their = theirs["totalCost"]
        .as_f64()
        .or(theirs["costUSD"].as_f64())
        .unwrap_or(f64::NAN);
    if (usd + c.usd - their).abs() > 1e-6 {
        f.push(format!(
            "{agent} {day}: ${usd} ({:+}) vs ccusage ${their}",
            c.usd
        ));
    }
    format!(
        "{agent} {day}: hookjournal {} tokens ${usd:.6}, ccusage {} tokens ${their:.6} (its convention: {:+} tokens, ${:+.6})",
        n(ours, "total_tokens"),
        n(theirs, "totalTokens"),
        c.input + c.output,
        c.usd
    )
}

/// Given one agent's real session files in a fresh home, when `import --discover` runs, then
/// `cost --all-projects --by day --json` (the import registered the journal) is ccusage's daily
/// report for that agent over the same files, day by
/// day, in tokens and dollars.
fn discovered_cost_by_day_is_ccusages_agent_by_agent() -> Result<Completion, Failed> {
    let bin = match common::ccusage::required() {
        Ok(bin) => bin,
        Err(outcome) => return outcome,
    };
    let mut failures = Vec::new();
    for agent in AGENTS {
        let env = TestEnvironment::new();
        let files = plant_agent(agent, &env.home, &env.project);
        let out = env.run(&["import", "--discover"]);
        if out.code != Some(0) {
            failures.push(format!("{agent}: import --discover: {}", out.render()));
            continue;
        }
        let ours = env.json(&["cost", "--all-projects", "--by", "day", "--json"]);
        let theirs = ccusage_daily(&bin, agent, &env.home);
        let ours: BTreeMap<String, Value> = ours["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["key"].as_str().unwrap().to_string(), r.clone()))
            .collect();
        let theirs: BTreeMap<String, Value> = theirs["daily"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["date"].as_str().unwrap().to_string(), r.clone()))
            .collect();
        if ours.keys().ne(theirs.keys()) || ours.is_empty() {
            failures.push(format!(
                "{agent}: days {:?} vs ccusage {:?}",
                ours.keys(),
                theirs.keys()
            ));
        }
        for (day, t) in &theirs {
            if let Some(o) = ours.get(day) {
                eprintln!("{}", agree_day(agent, day, o, t, &files, &mut failures));
            }
        }
    }
    if failures.is_empty() {
        Ok(Completion::Completed)
    } else {
        Err(failures.join("\n").into())
    }
}
