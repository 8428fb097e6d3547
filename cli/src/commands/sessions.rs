//! `sessions`: one row per session.

use crate::cli_util::CommandHelper;
use crate::output;
use crate::render::sessions::render;
use projections::report::{session_row, summary_row};

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
}

/// Prints one row per session, from the sessions index (no session's own partition is read,
/// unless a price override leaves its summary unable to price it).
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    let pricing = settings.pricing();
    let mut p = engine::state::Partial::open(cmd.dir())?;
    p.load_index()?;
    let order = p.state.summaries_by_start();
    let last = output::shown_last(args.last, args.all, args.json);
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
    let shown = &rows[..];
    if args.json {
        output::print_json(&serde_json::to_value(shown)?);
        return Ok(ExitCode::SUCCESS);
    }
    if skip > 0 {
        println!(
            "{}",
            output::dim(&format!(
                "the {} started last, of {}; every one: `hookjournal sessions --all`",
                shown.len(),
                output::count(total as u64, "session")
            ))
        );
    }
    print!("{}", render(shown));
    Ok(ExitCode::SUCCESS)
}
