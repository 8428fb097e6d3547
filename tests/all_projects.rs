//! `--all-projects` end to end: three projects' journals (filled by `import --transcripts`,
//! registered by it), their per-project views and the view across them, whole; the totals equal
//! the sums of the per-project views; the hook registers its journal after it has answered; a
//! moved project is dropped, said once; and a registered journal is read untouched.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const OPUS: &str = "claude-opus-4-1-20250805";
const SONNET: &str = "claude-sonnet-4-20250514";
// 2026-11-28 09:12 UTC.
const T0_MS: i64 = 1_795_857_120_000;

/// One assistant line of a Claude Code transcript.
fn line(sid: &str, n: usize, at_ms: i64, model: &str, out: u64) -> String {
    let ts = chrono::DateTime::from_timestamp_millis(at_ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/proj", "sessionId": sid, "version": "2.1.197",
        "message": {
            "id": format!("msg_{sid}_{n}"), "type": "message", "role": "assistant",
            "model": model, "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 120 + n as u64, "cache_creation_input_tokens": 900,
                      "cache_read_input_tokens": 15_000 + 10 * n as u64, "output_tokens": out}
        },
        "requestId": format!("req_{sid}_{n}"), "type": "assistant",
        "uuid": format!("00000000-0000-4000-8000-{n:012}"), "timestamp": ts
    })
    .to_string()
}

/// A project directory under the test's root with one session's transcript beside it (the
/// responses at `minutes` after T0 with `model`), imported into its journal.
fn project(env: &TestEnvironment, name: &str, sid: &str, minutes: &[(i64, &str)]) -> PathBuf {
    let dir = env.root().join(name);
    let transcripts = env
        .root()
        .join(format!("transcripts-{name}/-home-dev-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&transcripts).unwrap();
    let text: Vec<String> = minutes
        .iter()
        .enumerate()
        .map(|(n, (min, model))| line(sid, n, T0_MS + min * 60_000, model, 300 + 7 * n as u64))
        .collect();
    std::fs::write(
        transcripts.join(format!("{sid}.jsonl")),
        text.join("\n") + "\n",
    )
    .unwrap();
    let out = env.run_in(
        &dir,
        &[
            "import",
            "--transcripts",
            transcripts.parent().unwrap().to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.render());
    dir
}

fn json_in(env: &TestEnvironment, cwd: &Path, args: &[&str]) -> Value {
    let out = env.command(cwd).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `args` in `cwd`, its normalised output added to the transcript `t`.
fn step_in(env: &TestEnvironment, t: &mut String, cwd: &Path, args: &[&str]) {
    let out = env.run_in(cwd, args);
    let name = cwd.file_name().unwrap().to_string_lossy();
    step(
        t,
        &format!("(in {name}) hookjournal {}", args.join(" ")),
        &out,
    );
}

fn three_projects(env: &TestEnvironment) -> Vec<PathBuf> {
    vec![
        project(
            env,
            "api",
            "a1111111-0000-4000-8000-000000000001",
            &[(0, OPUS), (25, SONNET), (200, OPUS)],
        ),
        project(
            env,
            "web",
            "b2222222-0000-4000-8000-000000000002",
            &[(60, SONNET), (1_500, SONNET)],
        ),
        project(
            env,
            "docs",
            "c3333333-0000-4000-8000-000000000003",
            &[(1_520, OPUS)],
        ),
    ]
}

/// Given three projects, each with a session's usage, when each one's `cost --by day`, `cost
/// --by project`, `sessions` and `tasks` are shown and then `--all-projects` of each, from
/// another directory, then the view across has every project's rows with a PROJECT column and
/// its totals are the sums of theirs.
#[test]
fn all_projects_views_are_the_sum_of_each_projects_views() {
    let mut env = TestEnvironment::new();
    env.set_env("HOOKJOURNAL_NOW", "2026-11-29T11:10:00Z");
    let projects = three_projects(&env);
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut t = String::new();
    step_in(
        &env,
        &mut t,
        &projects[0],
        &["tasks", "add", "fix the rate limit"],
    );
    step_in(
        &env,
        &mut t,
        &projects[1],
        &["tasks", "add", "ship the pricing page"],
    );
    for p in &projects {
        for args in [
            &["cost", "--by", "day"][..],
            &["cost", "--by", "project"],
            &["sessions"],
            &["tasks"],
        ] {
            step_in(&env, &mut t, p, args);
        }
    }
    for args in [
        &["cost", "--by", "day", "--all-projects"][..],
        &["cost", "--by", "project", "--all-projects"],
        &[
            "cost",
            "--by",
            "project",
            "--all-projects",
            "--since",
            "2026-11-28",
            "--until",
            "2026-11-28",
        ],
        &["cost", "--by", "model", "--all-projects"],
        &["cost", "--by", "session", "--all-projects"],
        &["cost", "--by", "block", "--all-projects"],
        &["sessions", "--all-projects"],
        &["tasks", "--all-projects"],
        &["notifications", "--all-projects"],
        &["watch", "--all-projects", "--once"],
    ] {
        step_in(&env, &mut t, &elsewhere, args);
    }
    assert_expected("all-projects/views.txt", &t);
    let status = env.run_in(&projects[0], &["status"]);
    assert!(status.stdout.contains(
        "\nregistry   3 journals of yours registered (the views' --all-projects reads them)\n"
    ));

    // The totals are the sums of the per-project ones, to the token and the cent.
    let per: Vec<Value> = projects
        .iter()
        .map(|p| json_in(&env, p, &["cost", "--json"]))
        .collect();
    let across = json_in(&env, &elsewhere, &["cost", "--all-projects", "--json"]);
    for field in ["total_tokens", "input_tokens", "output_tokens", "responses"] {
        let sum: u64 = per
            .iter()
            .map(|v| v["total"][field].as_u64().unwrap())
            .sum();
        assert_eq!(across["total"][field].as_u64().unwrap(), sum, "{field}");
        assert!(sum > 0);
    }
    let sum: f64 = per
        .iter()
        .map(|v| v["total"]["usd"].as_f64().unwrap())
        .sum();
    assert!((across["total"]["usd"].as_f64().unwrap() - sum).abs() < 1e-9);
    let sessions: usize = projects
        .iter()
        .map(|p| {
            json_in(&env, p, &["sessions", "--json"])
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    let all = json_in(&env, &elsewhere, &["sessions", "--all-projects", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), sessions);
    assert_eq!(all[0]["project"], "api");
}

/// Given three projects, when `report --html --all-projects` is written from elsewhere, then its
/// projects table has each project's row (sessions, events, cost and tokens as each project's
/// own report shows them) and their sums, and each project's report follows under its name,
/// its element ids its own.
#[test]
fn the_html_report_of_all_projects_is_each_projects_report_and_their_sums() {
    let mut env = TestEnvironment::new();
    env.set_env("HOOKJOURNAL_NOW", "2026-11-29T11:10:00Z");
    let projects = three_projects(&env);
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let file = env.root().join("all.html");
    let out = env.run_in(
        &elsewhere,
        &["report", "--html", file.to_str().unwrap(), "--all-projects"],
    );
    assert_eq!(out.code, Some(0), "{}", out.render());
    let html = std::fs::read_to_string(&file).unwrap();
    let table = &html[html.find("<table class=\"projects\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap() + "</table>".len()];
    let table = env.normalize(
        &table
            .replace("<tr>", "\n<tr>")
            .replace("</tbody>", "\n</tbody>"),
    );
    assert_expected(
        "all-projects/report-projects-table.txt",
        &format!("{table}\n"),
    );
    // Each project's own report, its cards as they are in the section under its name.
    for (i, p) in projects.iter().enumerate() {
        let own_file = env.root().join(format!("own-{i}.html"));
        let out = env.run_in(p, &["report", "--html", own_file.to_str().unwrap()]);
        assert_eq!(out.code, Some(0), "{}", out.render());
        let own = std::fs::read_to_string(&own_file).unwrap();
        let cards = |h: &str, id: &str| {
            let at = h
                .find(&format!("<section class=\"cards\" id=\"{id}\">"))
                .unwrap();
            let rest = &h[at..];
            rest[rest.find('>').unwrap()..rest.find("</section>").unwrap()].to_string()
        };
        // Its section, by its heading.
        let name = p.file_name().unwrap().to_string_lossy();
        let head = html.find(&format!("\"><h2>{name} <span")).unwrap();
        let k = &html[html[..head].rfind("id=\"p").unwrap() + 5..head];
        assert_eq!(
            cards(&html, &format!("p{k}-summary")),
            cards(&own, "summary"),
            "{p:?}"
        );
    }
    assert_eq!(html.matches("id=\"summary\"").count(), 0, "ids prefixed");
}

/// Given a project whose journal the hook created (a SessionStart, answered, then a
/// Notification), when `notifications --all-projects --json` is read, then it is that project's
/// own list with a `project` field, and the registry's entry is the user's own file.
#[test]
fn the_hook_registers_its_journal_after_answering() {
    let env = TestEnvironment::new();
    let start = format!(
        r#"{{"hook_event_name":"SessionStart","session_id":"s1","cwd":"{}","source":"startup"}}"#,
        env.project.display()
    );
    let note = format!(
        r#"{{"hook_event_name":"Notification","session_id":"s1","cwd":"{}","message":"Claude needs your permission to use Bash","title":"Claude Code","notification_type":"permission_prompt"}}"#,
        env.project.display()
    );
    assert_eq!(env.hook(start.as_bytes(), &[]).code, Some(0));
    let registry = env.state_home().join("hookjournal/journals");
    let entries: Vec<_> = std::fs::read_dir(&registry).unwrap().collect();
    assert_eq!(entries.len(), 1, "one entry after the first answered hook");
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&registry), 0o700);
    let entry = entries[0].as_ref().unwrap().path();
    assert_eq!(mode(&entry), 0o600);
    let e: Value = serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
    assert_eq!(e["project"], "project");
    assert!(e["last_event_us"].as_i64().unwrap() > 0);
    assert_eq!(env.hook(note.as_bytes(), &[]).code, Some(0));
    let own = json_in(&env, &env.project, &["notifications", "--json"]);
    let across = json_in(
        &env,
        env.root(),
        &["notifications", "--all-projects", "--json"],
    );
    let mut stripped = across.clone();
    for n in stripped.as_array_mut().unwrap() {
        assert_eq!(n["project"], "project");
        n.as_object_mut().unwrap().remove("project");
    }
    assert_eq!(stripped, own);
    assert_eq!(own.as_array().unwrap().len(), 1);
}

/// Given two registered projects, when one is moved away, then the next view across projects
/// says so once on stderr and drops it; the one after says nothing.
#[test]
fn a_moved_project_is_dropped_said_once() {
    let mut env = TestEnvironment::new();
    env.set_env("HOOKJOURNAL_NOW", "2026-11-29T11:10:00Z");
    let projects = three_projects(&env);
    std::fs::rename(&projects[1], env.root().join("web-moved")).unwrap();
    let mut t = String::new();
    for _ in 0..2 {
        step_in(
            &env,
            &mut t,
            &projects[0],
            &["cost", "--by", "project", "--all-projects"],
        );
    }
    assert_expected("all-projects/moved.txt", &t);
}

/// Given a registered project, when every view reads it `--all-projects`, then nothing in its
/// journal changes (no file added, removed, grown or touched).
#[test]
fn a_registered_journal_is_read_untouched() {
    let env = TestEnvironment::new();
    let projects = three_projects(&env);
    // A spooled event waits in one journal: the views across leave it there.
    let note = format!(
        r#"{{"hook_event_name":"Notification","session_id":"s1","cwd":"{}","message":"waiting","title":"Claude Code","notification_type":"idle_prompt"}}"#,
        projects[0].display()
    );
    let mut hook = env.command(&projects[0]);
    hook.arg("hook").env("CLAUDE_PROJECT_DIR", &projects[0]);
    assert!(feed(&mut hook, note.as_bytes()).status.success());
    let journal = projects[0].join(".hookjournal");
    assert_eq!(std::fs::read_dir(journal.join("spool")).unwrap().count(), 1);
    let before = tree(&journal);
    for args in [
        &["cost", "--all-projects"][..],
        &["cost", "--by", "block", "--all-projects"],
        &["sessions", "--all-projects"],
        &["tasks", "--all-projects"],
        &["notifications", "--all-projects"],
    ] {
        let out = env.run_in(env.root(), args);
        assert_eq!(out.code, Some(0), "{}", out.render());
        assert_eq!(
            out.stderr,
            "hookjournal: journal $TEST_ENV/api/.hookjournal is read untouched: 1 spooled event(s) are not shown until a command runs in its project\n"
        );
    }
    assert_eq!(tree(&journal), before);
}

/// Every file under `dir` with its size and modification time.
fn tree(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// Given a registered journal that became foreign (its origin marker names another directory),
/// when the views across projects read it, then it is listed with its figures, and nothing in
/// it changes (no adoption, no marker rewritten).
#[test]
fn a_foreign_registered_journal_is_listed_untouched() {
    let env = TestEnvironment::new();
    let projects = three_projects(&env);
    let journal = projects[2].join(".hookjournal");
    let origin = journal.join("origin");
    let text = std::fs::read_to_string(&origin).unwrap();
    let foreign: String = text
        .lines()
        .map(|l| match l.strip_prefix("key ") {
            Some(k) => format!("key {}\n", "0".repeat(k.len())),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&origin, foreign).unwrap();
    assert!(env
        .run_in(&projects[2], &["status"])
        .stderr
        .contains("is foreign"));
    let own = json_in(&env, &projects[2], &["cost", "--json"]);
    let before = tree(&journal);
    let across = json_in(
        &env,
        env.root(),
        &["cost", "--by", "project", "--all-projects", "--json"],
    );
    let docs = across["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["project"] == "docs")
        .expect("the foreign journal is listed");
    assert_eq!(docs["total_tokens"], own["total"]["total_tokens"]);
    assert_eq!(tree(&journal), before);
    assert_eq!(
        json_in(&env, env.root(), &["sessions", "--all-projects", "--json"])
            .as_array()
            .unwrap()
            .len(),
        3
    );
}
