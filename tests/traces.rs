//! `ship --otlp` against a real Arize Phoenix (from the Python package registry, pinned by
//! `.ci/install-phoenix.sh`), started by the test on loopback: the fixture session arrives as one
//! trace per turn, in the GenAI conventions Phoenix reads — its session view groups the turns by
//! `gen_ai.conversation.id`, its token counts are the journal's (input with cache reads and
//! writes), its span kinds are agent, LLM and tool — and shipping again, with or without the
//! cursor, adds no span. A screenshot of the trace in Phoenix's UI is taken by headless Chromium
//! into `target/ci-artifacts/`. Reported ignored by the runner when Phoenix or Chromium is not
//! installed; required when `HOOKJOURNAL_REQUIRE_PHOENIX=1` (set by `.ci/run`).

mod common;
use common::harness::Ran;
use common::phoenix::*;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const SID: &str = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";

/// The journal's id, as `ship` printed it.
fn journal_id(j: &Path) -> String {
    std::fs::read_to_string(j.join("journal-id"))
        .unwrap()
        .trim()
        .to_string()
}

/// `hookjournal ship ARGS`: its output, the journal id, port and machine masked, exit status
/// shown when not 0.
fn ship(j: &Path, p: &Phoenix, args: &[&str]) -> String {
    let out = cmd(j).arg("ship").args(args).output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&err);
    }
    if !out.status.success() {
        text.push_str(&format!("[exit status: {:?}]\n", out.status.code()));
    }
    let text = text.replace(&journal_id(j), "[JOURNAL ID]");
    let text = text.replace(&p.url(), "http://127.0.0.1:[PORT]");
    let machine = text
        .lines()
        .next()
        .and_then(|l| l.split_once("(machine "))
        .map(|(_, m)| m.trim_end_matches(')').to_string());
    match machine {
        Some(m) => text.replace(&format!("(machine {m})"), "(machine [MACHINE])"),
        None => text,
    }
}

fn fixture_session_arrives_as_traces_phoenix_reads_and_a_reship_adds_nothing() -> Ran {
    let python = phoenix_python()?;
    let chrome = chromium()?;
    let phoenix = Phoenix::start(&python);
    // Nothing of Phoenix listens beyond loopback (its gRPC receiver would, untold).
    let ports = listeners(phoenix.child.id());
    assert_eq!(
        ports,
        BTreeMap::from([(phoenix.port, true), (phoenix.grpc, true)]),
        "phoenix's listeners (port → loopback only)"
    );

    let played = play_session(&[]);
    let j = &played.journal;
    let cost = run_json(j, &["cost", "--json"]);
    let row = &cost["rows"][0];
    let n = |k: &str| row[k].as_i64().unwrap();

    let mut t = String::new();
    let url = phoenix.url();
    t.push_str("$ hookjournal ship --otlp URL\n");
    t.push_str(&ship(j, &phoenix, &["--otlp", &url]));
    let spans = {
        // Every turn's root and every response, once Phoenix holds them.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = phoenix.spans();
            if roots(&s).len() == 2 && s.iter().filter(|x| kind_of(x) == "LLM").count() == 7 {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix did not hold the fixture session's spans within 60 s: {} held",
                s.len()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    };
    let traces: Vec<String> = roots(&spans)
        .iter()
        .map(|s| s["context"]["trace_id"].as_str().unwrap().to_string())
        .collect();

    // Span kinds, names and the convention's attributes as Phoenix read them.
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for s in &spans {
        *kinds.entry(kind_of(s)).or_default() += 1;
    }
    t.push_str(&format!("\nspans by kind in phoenix: {kinds:?}\n"));
    for r in roots(&spans) {
        t.push_str(&format!(
            "trace: {} (session {}, seq {}..{}), {} span(s)\n",
            r["name"].as_str().unwrap(),
            r["attributes"]["session.id"].as_str().unwrap_or("?"),
            attr_i64(r, "hookjournal.first_seq"),
            attr_i64(r, "hookjournal.last_seq"),
            spans
                .iter()
                .filter(|s| s["context"]["trace_id"] == r["context"]["trace_id"])
                .count()
        ));
        assert!(
            r["attributes"]["input.value"].is_null(),
            "content sent unasked"
        );
    }
    // Tokens: Phoenix's counts are the journal's, input with the cache's reads and writes.
    let sum = |k: &str| spans.iter().map(|s| attr_i64(s, k)).sum::<i64>();
    assert_eq!(
        sum("llm.token_count.prompt"),
        n("input_tokens") + n("cache_read_tokens") + n("cache_write_tokens")
    );
    assert_eq!(sum("llm.token_count.completion"), n("output_tokens"));
    assert_eq!(
        sum("llm.token_count.prompt_details.cache_read"),
        n("cache_read_tokens")
    );
    assert_eq!(
        sum("llm.token_count.prompt_details.cache_write"),
        n("cache_write_tokens")
    );
    assert_eq!(kinds.get("LLM").copied(), Some(n("responses") as usize));
    let usd: f64 = spans
        .iter()
        .filter_map(|s| s["attributes"]["hookjournal.cost_usd"].as_f64())
        .sum();
    assert!(
        (usd - row["usd"].as_f64().unwrap()).abs() < 1e-9,
        "{usd} beside cost's {}",
        row["usd"]
    );
    let tools: Vec<&Value> = spans.iter().filter(|s| kind_of(s) == "TOOL").collect();
    assert!(tools
        .iter()
        .all(|s| s["attributes"]["tool.name"].is_string()));
    // Phoenix's session view: one session, both turns, the journal's token counts.
    let sessions = get(phoenix.port, "/v1/projects/default/sessions").unwrap();
    let session = &sessions["data"][0];
    assert_eq!(session["session_id"], SID);
    assert_eq!(session["traces"].as_array().unwrap().len(), 2);
    assert_eq!(
        session["token_count_prompt"].as_i64().unwrap(),
        sum("llm.token_count.prompt")
    );

    // Shipping again sends nothing (the cursor); without the cursor (lost, or another machine
    // shipping the same journal), the same ids, which Phoenix keeps once.
    t.push_str("\n$ hookjournal ship --otlp URL  (again)\n");
    t.push_str(&ship(j, &phoenix, &["--otlp", &url]));
    for e in std::fs::read_dir(j).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cursor") {
            std::fs::remove_file(p).unwrap();
        }
    }
    t.push_str("\n$ hookjournal ship --otlp URL --otlp-signals traces  (the cursors removed)\n");
    t.push_str(&ship(
        j,
        &phoenix,
        &["--otlp", &url, "--otlp-signals", "traces"],
    ));
    // One more turn, shipped after the resend: once Phoenix holds it, it has taken the resend
    // (it inserts in the order it received).
    let prompt = format!(
        r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{SID}","cwd":"/p","prompt":"one more"}}"#
    );
    let stop = format!(r#"{{"hook_event_name":"Stop","session_id":"{SID}","cwd":"/p"}}"#);
    hook(j, prompt.as_bytes(), &[]);
    hook(j, stop.as_bytes(), &[]);
    t.push_str("\n$ hookjournal ship --otlp URL --otlp-signals traces  (after one more turn)\n");
    t.push_str(&ship(
        j,
        &phoenix,
        &["--otlp", &url, "--otlp-signals", "traces"],
    ));
    let mut all = traces.clone();
    let before = spans.len();
    let deadline = Instant::now() + Duration::from_secs(60);
    let after = loop {
        let s = phoenix.spans();
        if roots(&s).len() >= 3 {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the new turn not in phoenix within 60 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    // The new turn's root is the one folded from the latest events.
    all.push(
        roots(&after).last().unwrap()["context"]["trace_id"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    let after = phoenix.spans_once_holding(&all);
    t.push_str(&format!(
        "\nspans in phoenix: {before} after the first ship, {} after the resend and one more turn (its root alone)\n",
        after.len()
    ));
    assert_eq!(after.len(), before + 1, "the resend added spans");
    assert_expected("traces/phoenix.txt", &t);

    // The trace in Phoenix's own UI, as a person sees it.
    let png = screenshot(
        &chrome,
        &format!("{url}/redirects/traces/{}", traces[1]),
        "phoenix-trace.png",
    );
    let len = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        len > 20_000,
        "no screenshot at {} ({len} bytes)",
        png.display()
    );
    Ok(())
}

fn content_is_sent_only_when_asked_and_masked_with_redact() -> Ran {
    let python = phoenix_python()?;
    let phoenix = Phoenix::start(&python);
    let env = TestEnvironment::new();
    let key = "AKIAIOSFODNN7EXAMPLE";
    for p in [
        r#"{"hook_event_name":"SessionStart","session_id":"c1","cwd":"/p","source":"startup"}"#
            .to_string(),
        format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":"c1","cwd":"/p","prompt":"deploy with {key} please"}}"#
        ),
        r#"{"hook_event_name":"Stop","session_id":"c1","cwd":"/p","last_assistant_message":"Deployed."}"#
            .to_string(),
    ] {
        assert!(env.hook_raw(p.as_bytes(), &[]).status.success());
    }
    let url = phoenix.url();
    let out = env.run(&[
        "ship",
        "--otlp",
        &url,
        "--otlp-signals",
        "traces",
        "--content",
        "--redact",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let deadline = Instant::now() + Duration::from_secs(60);
    let root = loop {
        let s = phoenix.spans();
        if let Some(r) = roots(&s).first() {
            break (*r).clone();
        }
        assert!(Instant::now() < deadline, "no trace in phoenix within 60 s");
        std::thread::sleep(Duration::from_millis(250));
    };
    let input = root["attributes"]["input.value"]
        .as_str()
        .unwrap_or_default();
    assert!(input.starts_with("deploy with "), "{input}");
    assert!(!input.contains(key), "a secret was shipped: {input}");
    assert_eq!(root["attributes"]["output.value"], "Deployed.");
    assert_eq!(root["attributes"]["session.id"], "c1");
    Ok(())
}

/// Headless Chromium's screenshot of `url` (given 20 s of virtual time to render), in
/// `target/ci-artifacts/NAME`.
fn screenshot(chrome: &Path, url: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("ci-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(name);
    let _ = std::fs::remove_file(&png);
    let shot = format!("--screenshot={}", png.display());
    let args = [
        "--window-size=1600,1000",
        "--virtual-time-budget=20000",
        shot.as_str(),
    ];
    headless_chromium(chrome, &args, url, Duration::from_secs(120));
    png
}

fn follow_sends_each_turn_when_it_ends_while_the_session_runs() -> Ran {
    let python = phoenix_python()?;
    let phoenix = Phoenix::start(&python);
    let env = TestEnvironment::new();
    let turn = |n: usize| {
        for p in [
            format!(
                r#"{{"hook_event_name":"UserPromptSubmit","session_id":"live","cwd":"/p","prompt":"turn {n}"}}"#
            ),
            r#"{"hook_event_name":"PreToolUse","session_id":"live","cwd":"/p","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls"}}"#.to_string(),
            r#"{"hook_event_name":"PostToolUse","session_id":"live","cwd":"/p","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"ls"},"tool_response":{"stdout":"a"}}"#.to_string(),
            r#"{"hook_event_name":"Stop","session_id":"live","cwd":"/p"}"#.to_string(),
        ] {
            assert!(env.hook_raw(p.as_bytes(), &[]).status.success());
        }
    };
    turn(1);
    let url = phoenix.url();
    let mut follower = env
        .command(&env.project)
        .args([
            "ship",
            "--otlp",
            &url,
            "--otlp-signals",
            "traces",
            "--follow",
            "--poll-ms",
            "100",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The session goes on: each turn shows up once it has ended, the session never ending.
    let roots_held = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = phoenix.spans();
            if roots(&spans).len() >= n {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix held {} turn(s), not {n}, within 60 s",
                roots(&spans).len()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    roots_held(1);
    turn(2);
    let spans = roots_held(2);
    let _ = follower.kill();
    let _ = follower.wait();
    assert_eq!(roots(&spans).len(), 2);
    assert_eq!(spans.iter().filter(|s| kind_of(s) == "TOOL").count(), 2);
    Ok(())
}

harness_main!(
    fixture_session_arrives_as_traces_phoenix_reads_and_a_reship_adds_nothing,
    content_is_sent_only_when_asked_and_masked_with_redact,
    follow_sends_each_turn_when_it_ends_while_the_session_runs,
);
