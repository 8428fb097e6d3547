//! `report --html FILE`: one self-contained HTML file (inline CSS and SVG drawn here, no script,
//! no network: a CSP of `default-src 'none'`) with cost per day and per model, context use over
//! time per session with compactions, reminders and blocks marked, a timeline of each session
//! (prompts, tool calls, failures, and every answer with the event that caused it), and the task
//! board. Built from a full replay of the log, so it works on any journal and on a slice;
//! `--redact` masks secrets in every event before anything is folded from it.

use crate::cli_util::CommandHelper;
use crate::dates::Range;
use crate::render::report::{build, build_all, write, ProjectJournal};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// `report` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write the report to this file (HTML).
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// Only this session (id or its first characters).
    #[arg(long, conflicts_with = "all_projects")]
    pub session: Option<String>,
    /// Every journal of yours (`status` says how many are registered): a table of the projects,
    /// then each project's report under its name; each journal read untouched.
    #[arg(long)]
    pub all_projects: bool,
    /// From this day (YYYY-MM-DD, inclusive) or RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    /// Up to this day (inclusive) or RFC 3339 time.
    #[arg(long)]
    pub until: Option<String>,
    /// Mask secrets (API keys, tokens, private keys, passwords) in everything the report shows
    /// of the events, as `export --redact` does.
    #[arg(long)]
    pub redact: bool,
}

/// Writes the self-contained HTML report.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    let settings = cmd.settings();
    let range = Range::new(args.since.as_deref(), args.until.as_deref())?;
    let mut masked = 0;
    let html = if args.all_projects {
        let journals: Vec<ProjectJournal> = crate::cli_util::registered()
            .into_iter()
            .map(|r| ProjectJournal {
                settings: r.settings(),
                project: r.project,
                dir: r.dir,
            })
            .collect();
        build_all(&journals, range, args.redact.then_some(&mut masked))?
    } else {
        build(
            dir,
            settings,
            args.session.as_deref(),
            range,
            args.redact.then_some(&mut masked),
        )?
    };
    write(&args.html, &html)?;
    println!(
        "wrote {} ({} KiB): open it in a browser",
        args.html.display(),
        html.len().div_ceil(1024)
    );
    if args.redact {
        eprintln!(
            "hookjournal: masked {}",
            crate::output::count(masked as u64, "secret")
        );
    }
    Ok(ExitCode::SUCCESS)
}
