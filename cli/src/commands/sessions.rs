//! `sessions`: one row per session.

use crate::cli_util::CommandHelper;
use crate::output;
use crate::render::sessions::{render, render_across};
use projections::report::{session_row, summary_row, SessionRow};

use std::process::ExitCode;

/// `sessions` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the N sessions started last (default: 100 in the table, every one with --json).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub last: Option<usize>,
    /// Every session, however many.
    #[arg(long)]
    pub all: bool,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
    /// Every journal in your registry (`$XDG_STATE_HOME/hookjournal/journals`), read untouched,
    /// with a PROJECT column (with --json: a `project` field).
    #[arg(long)]
    pub all_projects: bool,
}

/// Prints one row per session, from the sessions index (no session's own partition is read,
/// unless a price override leaves its summary unable to price it).
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let last = output::shown_last(args.last, args.all, args.json);
    if args.all_projects {
        return all_projects(&args, last);
    }
    let settings = cmd.settings();
    let mut p = engine::state::Partial::open(cmd.dir())?;
    let (rows, total) = rows(&mut p, settings, last)?;
    if args.json {
        output::print_json(&serde_json::to_value(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    say_skipped(rows.len(), total);
    print!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// `sessions --all-projects`: every registered journal's rows, in the order they started.
fn all_projects(args: &Args, last: Option<usize>) -> anyhow::Result<ExitCode> {
    let mut per = Vec::new();
    for r in crate::cli_util::registered() {
        let mut p = r.open()?;
        per.push((r.project.clone(), rows(&mut p, &r.settings(), None)?.0));
    }
    let mut all = projections::across::sessions(per);
    let total = all.len();
    let skip = last.map_or(0, |l| total.saturating_sub(l));
    all.drain(..skip);
    if args.json {
        output::print_json(&serde_json::to_value(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    say_skipped(all.len(), total);
    print!("{}", render_across(&all));
    Ok(ExitCode::SUCCESS)
}

/// Says when the table shows only the sessions started last.
fn say_skipped(shown: usize, total: usize) {
    if shown < total {
        println!(
            "{}",
            output::dim(&format!(
                "the {} started last, of {}; every one: `hookjournal sessions --all`",
                shown,
                output::count(total as u64, "session")
            ))
        );
    }
}

/// The rows of the `last` sessions started (every one for `None`), in the order they started,
/// and how many sessions the journal holds.
fn rows(
    p: &mut engine::state::Partial,
    settings: &engine::settings::Settings,
    last: Option<usize>,
) -> anyhow::Result<(Vec<SessionRow>, usize)> {
    let pricing = settings.pricing();
    p.load_index()?;
    let order = p.state.summaries_by_start();
    let skip = last.map_or(0, |l| order.len().saturating_sub(l));
    let total = order.len();
    let mut rows = Vec::new();
    let mut exact = Vec::new();
    let mut prices = std::collections::HashMap::new();
    let mut lookup = |m: &str| {
        *prices
            .entry(m.to_string())
            .or_insert_with(|| pricing.lookup(m))
    };
    for (id, sum) in &order[skip..] {
        match sum.usd_with(&mut lookup) {
            Some(usd) => rows.push(summary_row(id, sum, usd, &settings.policy)),
            None => exact.push((*id).clone()),
        }
    }
    drop(order);
    for id in exact {
        p.load(&projections::fold::Partition::Session(id.clone()))?;
        if let Some(s) = p.state.sessions.get(&id) {
            rows.push(session_row(s, &pricing, &settings.policy));
        }
    }
    rows.sort_by(|a, b| (a.first_seq, &a.session_id).cmp(&(b.first_seq, &b.session_id)));
    Ok((rows, total))
}
