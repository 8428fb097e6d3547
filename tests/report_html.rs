//! `report --html` rendered by a real headless Chromium (Debian's `chromium`): the charts and the
//! timeline are in the DOM, the page logs no console error (a Content-Security-Policy violation
//! is one: nothing may load from anywhere), no URL in the file, payload text escaped, and a
//! screenshot is written to `target/ci-artifacts/`. Reported ignored by the runner when Chromium is
//! not installed; required when `HOOKJOURNAL_REQUIRE_CHROMIUM=1` (set by `.ci/run`).

mod common;
use common::harness::Ran;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const SID: &str = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";

fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("ci-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs headless Chromium on `file` with `mode` (`--dump-dom` or `--screenshot=…`); returns
/// (stdout, stderr).
fn browse(chrome: &Path, file: &Path, mode: &str) -> (String, String) {
    let url = format!("file://{}", file.display());
    let args = [
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2000",
        mode,
    ];
    headless_chromium(chrome, &args, &url, Duration::from_secs(90))
}

fn console_messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE")
                || l.contains("Refused to")
                || l.contains("Content Security Policy")
        })
        .collect()
}

/// No tag loads anything (payload text is escaped, so every `<` starts a real tag), the style
/// sheet imports nothing, no URL anywhere.
fn no_urls(html: &str) {
    for tag in html
        .split('<')
        .skip(1)
        .filter_map(|t| t.split_once('>').map(|(a, _)| a))
    {
        for attr in [" src=", " href=", " srcset=", " action=", " xlink:href="] {
            assert!(!tag.contains(attr), "a tag loads something: <{tag}>");
        }
    }
    let style = html
        .split("<style>")
        .nth(1)
        .and_then(|s| s.split("</style>").next())
        .unwrap_or("");
    assert!(
        !style.contains("url(") && !style.contains("@import"),
        "the style sheet loads something"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "a URL in the report"
    );
    assert!(html.contains("default-src 'none'"), "no CSP");
}

fn check_rendered(chrome: &Path, html_file: &Path, shot: &str) -> String {
    let html = std::fs::read_to_string(html_file).unwrap();
    no_urls(&html);
    let (dom, stderr) = browse(chrome, html_file, "--dump-dom");
    assert!(dom.contains("<html"), "no DOM dumped; stderr:\n{stderr}");
    let console = console_messages(&stderr);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let png = artifacts().join(shot);
    let _ = std::fs::remove_file(&png);
    let (_, stderr) = browse(
        chrome,
        html_file,
        &format!("--screenshot={}", png.display()),
    );
    let len = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        len > 10_000,
        "no screenshot at {} ({len} bytes); stderr:\n{stderr}",
        png.display()
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    dom
}

fn report_of_the_fixture_session_renders_in_chromium() -> Ran {
    let chrome = chromium()?;
    let played = play_session(&[]);
    let j = &played.journal;
    // The host's own figures, with a compaction reset; and hostile payload text.
    for (c, u) in [(0.11, 30.0), (0.36, 80.0), (0.02, 9.0), (0.21, 16.0)] {
        let inp = serde_json::json!({"session_id": SID, "model": {"id": "claude-sonnet-4-20250514"},
            "cost": {"total_cost_usd": c}, "context_window": {"used_percentage": u}});
        let mut child = cmd(j)
            .arg("statusline")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(inp.to_string().as_bytes())
            .unwrap();
        child.wait().unwrap();
    }
    let evil = format!(
        r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{SID}","cwd":"/home/dev/acme-api","prompt":"<img src=x onerror=alert(1)><script>alert(2)</script>\u202eevil"}}"#
    );
    hook(j, evil.as_bytes(), &[]);
    let file = played.root.path().join("report.html");
    let out = run(j, &["report", "--html", file.to_str().unwrap()]);
    assert!(
        out.starts_with(&format!("wrote {}", file.display())),
        "{out}"
    );

    let dom = check_rendered(&chrome, &file, "report-fixture-session.png");
    for needle in [
        // cost per day and per model, drawn
        "id=\"chart-cost-day\"",
        "id=\"chart-cost-model\"",
        "<rect class=\"bar\"",
        "claude-sonnet-4-20250514",
        // transcripts vs host, with the difference named
        "id=\"reconciliation\"",
        "compaction summary requests are in no transcript (1 compaction)",
        // context over time, both sources, with the compaction and the reminder marked
        "class=\"chart context-chart\"",
        "data-source=\"transcript\"",
        "data-source=\"host\"",
        "class=\"mark mark-compaction\"",
        "class=\"mark mark-reminder\"",
        // the timeline: prompts, tool calls, failures, answers and why
        "class=\"item k-prompt\"",
        "class=\"item k-tool\"",
        "class=\"item k-failure\"",
        "class=\"item k-answer\"",
        "why: UserPromptSubmit #",
        "why: SessionStart #",
        // the task board
        "data-status=\"in_progress\"",
        "Wire limiter into /login",
        "Add token-bucket limiter",
    ] {
        assert!(dom.contains(needle), "the rendered DOM lacks {needle:?}");
    }
    // Payload text stays text.
    assert!(!dom.contains("<img"), "a payload became an element");
    assert!(!dom.contains("<script"), "a payload became a script");
    assert!(
        dom.contains("&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;evil")
    );

    // A slice: one session, a date range with nothing in it.
    let sliced = played.root.path().join("slice.html");
    run(
        j,
        &[
            "report",
            "--html",
            sliced.to_str().unwrap(),
            "--session",
            "db5b",
            "--since",
            "2001-01-01",
            "--until",
            "2001-01-02",
        ],
    );
    let html = std::fs::read_to_string(&sliced).unwrap();
    assert!(html.contains("session db5b, since 2001-01-01, until 2001-01-02"));
    assert!(html.contains("no usage recorded"));
    Ok(())
}

fn report_of_an_empty_journal_renders_in_chromium() -> Ran {
    let chrome = chromium()?;
    let tmp = tempfile::tempdir().unwrap();
    let j = tmp.path().join("journal");
    std::fs::create_dir(&j).unwrap();
    let file = tmp.path().join("empty.html");
    run(&j, &["report", "--html", file.to_str().unwrap()]);
    let dom = check_rendered(&chrome, &file, "report-empty-journal.png");
    for needle in [
        "id=\"summary\"",
        "id=\"chart-cost-day\"",
        "id=\"chart-cost-model\"",
        "id=\"context-none\"",
        "class=\"timeline\"",
        "id=\"tasks\"",
        "no usage recorded",
        "no context readings yet",
        "nothing happened yet",
        "no tasks",
    ] {
        assert!(dom.contains(needle), "the rendered DOM lacks {needle:?}");
    }
    // No journal at all is an error, one line.
    let out = cmd(&tmp.path().join("missing"))
        .args(["report", "--html", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("hookjournal: no journal at "));
    Ok(())
}

/// The report of every registered journal: the fixture session's and a second project's, one
/// page that renders with no console message and loads nothing, the projects table first and
/// each journal's sections under its name, their element ids each held once.
fn report_of_all_projects_renders_in_chromium() -> Ran {
    let chrome = chromium()?;
    let played = play_session(&[]);
    // A second journal beside it: the same user's registry (its state home is the same).
    let other = played.root.path().join("other");
    let prompt = br#"{"hook_event_name":"UserPromptSubmit","session_id":"o1","cwd":"/home/dev/web","prompt":"ship the pricing page"}"#;
    hook(&other, prompt, &[]);
    let file = played.root.path().join("all.html");
    let out = run(
        &played.journal,
        &["report", "--html", file.to_str().unwrap(), "--all-projects"],
    );
    assert!(
        out.starts_with(&format!("wrote {}", file.display())),
        "{out}"
    );
    let dom = check_rendered(&chrome, &file, "report-all-projects.png");
    for needle in [
        "all projects · 2 journals",
        "<table class=\"projects\">",
        "id=\"p0-summary\"",
        "id=\"p1-summary\"",
        "id=\"p0-chart-cost-day\"",
        "Wire limiter into /login",
        "ship the pricing page",
    ] {
        assert!(dom.contains(needle), "the rendered DOM lacks {needle:?}");
    }
    assert!(!dom.contains("id=\"summary\""), "an id held twice");
    Ok(())
}

harness_main!(
    report_of_the_fixture_session_renders_in_chromium,
    report_of_an_empty_journal_renders_in_chromium,
    report_of_all_projects_renders_in_chromium,
);
