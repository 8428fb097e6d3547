//! `demo`: plays the bundled sample session (a real-shaped 73-event Claude Code session, compiled
//! into the binary) through the real hook path into a temporary journal, then shows every view.
//! Nothing is left behind.

use crate::cli_util::CommandHelper;
use crate::output::{self, bold};
use engine::settings::Settings;

use anyhow::{Context, Result};
use projections::derived::{self, ResponseEmitted};
use projections::event::Canonical;
use projections::report::{self, CostBy};
use projections::{Kind, KindOf};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// `demo` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep the demo journal in this directory (new or empty) instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

const STEPS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/demo/session.steps.jsonl"
));
const MAIN: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/demo/transcripts/projects/-home-dev-acme-api/db5b5fab-8f4d-3e27-dda1-494c73cf256d.jsonl"
));
const SUB: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/demo/transcripts/projects/-home-dev-acme-api/db5b5fab-8f4d-3e27-dda1-494c73cf256d/subagents/agent-a41536363f6724ba0.jsonl"
));
const MAIN_REL: &str =
    "transcripts/projects/-home-dev-acme-api/db5b5fab-8f4d-3e27-dda1-494c73cf256d.jsonl";
const SUB_REL: &str = "transcripts/projects/-home-dev-acme-api/db5b5fab-8f4d-3e27-dda1-494c73cf256d/subagents/agent-a41536363f6724ba0.jsonl";

fn first_lines(text: &str, n: usize) -> String {
    text.split_inclusive('\n').take(n).collect()
}

/// Plays the sample session into journal `dir`, with transcripts growing under `root`.
pub fn play(exe: &Path, root: &Path, dir: &Path) -> Result<usize> {
    // The transcripts grow beneath the demo's own root, written through its handle.
    engine::fs::door::create_dirs(root, 0o700)?;
    let at = engine::fs::door::Dir::open(root)?;
    at.create_dir_all(Path::new(SUB_REL).parent().expect("has parent"), 0o700)?;
    let mut n = 0;
    for line in STEPS.lines().filter(|l| !l.trim().is_empty()) {
        let step: serde_json::Value = serde_json::from_str(line).context("bundled sample")?;
        let lines = |key: &str| step[key].as_u64().unwrap_or(0) as usize;
        // Rewritten in place, as a transcript grows: the same file, longer.
        let rewrite = |rel: &str, text: String| -> std::io::Result<()> {
            let mut f = at.open_in_place(Path::new(rel), 0o600)?;
            f.set_len(0)?;
            std::io::Write::write_all(&mut f, text.as_bytes())
        };
        rewrite(MAIN_REL, first_lines(MAIN, lines("transcript_lines")))?;
        rewrite(SUB_REL, first_lines(SUB, lines("subagent_lines")))?;
        let payload = step["hook"]
            .to_string()
            .replace("__FIXTURES__", &root.to_string_lossy());
        let mut cmd = Command::new(exe);
        cmd.arg("--journal")
            .arg(dir)
            .arg("hook")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // The demo's journal is read right after and then removed: no detached drainer.
        cmd.env_remove("RALPH_AGENT_ID")
            .env_remove("HOOKJOURNAL_DIR")
            .env("HOOKJOURNAL_DRAINER", "off");
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                cmd.env(k, v.as_str().unwrap_or_default());
            }
        }
        let mut child = cmd.spawn().context("running the hook")?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(payload.as_bytes())?;
        child.wait()?;
        n += 1;
    }
    Ok(n)
}

fn section(title: &str) {
    println!("\n{}", bold(&format!("── {title} ")));
}

/// Plays the sample session into a journal of its own and prints every view.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    // The demo always starts from an empty journal of its own: it never adds to a real one.
    if cmd.journal_arg().is_some() {
        eprintln!("hookjournal: demo plays into a new journal of its own and ignores --journal; to keep it, use `demo --keep DIR`");
        return Ok(ExitCode::from(2));
    }
    if let Some(dir) = &args.keep {
        let used = engine::fs::door::Dir::open(dir)
            .and_then(|d| d.entries())
            .map(|e| !e.is_empty());
        if used.unwrap_or(dir.exists()) {
            eprintln!(
                "hookjournal: {} is not a new or empty directory; demo --keep never adds to an existing journal",
                dir.display()
            );
            return Ok(ExitCode::from(2));
        }
    }
    let tmp = tempfile::tempdir().context("creating a temporary directory")?;
    let dir = match &args.keep {
        Some(d) => d.clone(),
        None => tmp.path().join("journal"),
    };
    let exe = std::env::current_exe().context("finding the hookjournal binary")?;
    let started = std::time::Instant::now();
    let n = play(&exe, &tmp.path().join("fixtures"), &dir)?;
    let elapsed = started.elapsed();
    println!(
        "{}",
        bold(&format!("hookjournal demo: played a {n}-event Claude Code session through `hookjournal hook` ({:.1} ms per hook, whole process)", elapsed.as_secs_f64() * 1000.0 / n as f64))
    );
    let settings = Settings::default();
    let view = engine::state::open_view(&dir)?;
    let full = view.full(|_| {})?;
    print_views(&view, &full, &settings)?;
    let answers = print_restore(&view)?;
    section("notifications (hookjournal notifications)");
    let items: Vec<_> = full.notifications().collect();
    print!("{}", crate::render::notifications::render(&items));
    print_excerpt(answers);
    // The HTML report, beside the journal (the temporary one goes with it; --keep keeps both).
    let html = crate::render::report::build(
        &dir,
        &settings,
        None,
        crate::dates::Range::new(None, None)?,
        None,
    )?;
    let file = dir.join("report.html");
    crate::render::report::write(&file, &html)?;
    section(&format!(
        "HTML report (hookjournal report --html): {}",
        file.display()
    ));
    if args.keep.is_none() {
        println!("{}", output::dim("(removed with the demo's temporary journal: `hookjournal demo --keep DIR` keeps it)"));
    }
    println!(
        "\n{}",
        output::dim("Try it on your own project: `hookjournal install` (Claude Code), then `hookjournal sessions`, `hookjournal replay --verify`.")
    );
    if args.keep.is_none() {
        drop(view);
        tmp.close()
            .context("removing the demo's temporary directory")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The read views, each as its own command prints it: sessions, the snapshot, the task board,
/// cost.
fn print_views(
    view: &engine::state::View,
    full: &projections::fold::Full,
    settings: &Settings,
) -> Result<()> {
    let pricing = settings.pricing();
    let st = &view.state;

    section("sessions");
    let mut sessions: Vec<_> = st.sessions.values().collect();
    sessions.sort_by_key(|s| s.first_seq);
    let rows: Vec<report::SessionRow> = sessions
        .iter()
        .map(|s| report::session_row(s, &pricing, &settings.policy))
        .collect();
    print!("{}", crate::render::sessions::render(&rows));

    let s = sessions.first().context("the sample has a session")?;
    section(&format!(
        "snapshot (hookjournal show {})",
        projections::short_id(&s.id)
    ));
    print!(
        "{}",
        crate::render::show::render(s, &pricing, &settings.policy)
    );

    section("task board (hookjournal tasks)");
    print!("{}", crate::render::tasks::render(&st.all_tasks()));

    section("cost (hookjournal cost --by session)");
    let cost = full.cost();
    let items = report::cost_items(&cost, &pricing);
    let (crows, total) =
        report::cost_rows(&items, &cost.reported, CostBy::Session, None, None, None);
    print!(
        "{}",
        crate::render::cost::render(&crows, &total, crate::render::cost::By::Session)
    );
    Ok(())
}

/// Prints the restore text given after the compaction; returns every answer beside the hook event
/// that caused it.
fn print_restore(view: &engine::state::View) -> Result<Vec<(engine::log::Envelope, u64, String)>> {
    // Each answer and the hook event that caused it.
    let mut answers = Vec::new();
    view.snap.for_each(|e| {
        if let Kind::ResponseEmitted { cause } = e.kind() {
            if let Some(r) = derived::parse::<ResponseEmitted>(&e.payload) {
                answers.push((cause, e.seq, r.output));
            }
        }
        Ok(())
    })?;
    let mut excerpt = Vec::new();
    let mut restore = None;
    for (cause, seq, output) in answers {
        let mut hook = None;
        view.snap.for_each_in(cause, cause, |e| {
            hook = Some(e);
            Ok(())
        })?;
        let Some(hook) = hook else { continue };
        let text = match projections::policy::Answer::from_recorded(&output) {
            Some(projections::policy::Answer::Context { text, .. }) => text,
            _ => String::new(),
        };
        // The restore: the answer to SessionStart after a compaction.
        let parsed = projections::event::from_envelope(&hook);
        if parsed.is_some_and(
            |p| matches!(&p.canonical, Canonical::SessionStart { source } if source == "compact"),
        ) {
            restore = Some(text.clone());
        }
        excerpt.push((hook, seq, text));
    }
    section("restore text injected at SessionStart(compact)");
    println!(
        "{}",
        output::escape_text(restore.as_deref().unwrap_or("(none)"))
    );
    Ok(excerpt)
}

/// Every answer beside the hook event that caused it (a `replay` excerpt).
fn print_excerpt(excerpt: Vec<(engine::log::Envelope, u64, String)>) {
    section("why each answer was given (hookjournal replay, excerpt)");
    for (h, seq, text) in excerpt {
        println!(
            "{:>5}  {}  {}",
            h.seq,
            bold(&h.kind().label()),
            output::escape(&crate::render::replay::summary(&h))
        );
        let first = text.lines().next().unwrap_or("");
        println!(
            "{:>5}  {}  {}",
            seq,
            bold("ResponseEmitted"),
            output::escape(first)
        );
    }
}
