//! `sessions`: one row per session.

use crate::cli_util::CommandHelper;
use crate::output::{self, Align, Table};

use std::process::ExitCode;

/// `sessions` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Prints one row per session.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    let state = cmd.checkpoint()?;
    let pricing = settings.pricing();
    let mut sessions: Vec<_> = state.sessions.values().collect();
    sessions.sort_by_key(|s| s.first_seq);
    let rows: Vec<serde_json::Value> = sessions
        .iter()
        .map(|s| projections::report::session_row(s, &pricing, &settings.policy))
        .collect();
    if args.json {
        output::print_json(&serde_json::Value::Array(rows));
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// The sessions table with its total row.
pub fn render(rows: &[serde_json::Value]) -> String {
    let now = crate::clock::now_us();
    let mut t = Table::new(&[
        ("SESSION", Align::Left),
        ("HOST", Align::Left),
        ("STARTED", Align::Left),
        ("LAST", Align::Left),
        ("EVENTS", Align::Right),
        ("STATUS", Align::Left),
        ("CONTEXT", Align::Right),
        ("TIER", Align::Left),
        ("COST", Align::Right),
    ]);
    let mut total = 0.0;
    let mut events = 0;
    for r in rows {
        let usd = r["usd"].as_f64().unwrap_or(0.0);
        total += usd;
        events += r["events"].as_u64().unwrap_or(0);
        t.row(vec![
            projections::short_id(r["session_id"].as_str().unwrap_or("")).to_string(),
            r["host"].as_str().unwrap_or("").to_string(),
            output::timestamp(r["start_us"].as_i64().unwrap_or(0))[..16].replace('T', " "),
            output::relative(r["last_us"].as_i64().unwrap_or(0), now),
            r["events"].to_string(),
            r["status"].as_str().unwrap_or("").to_string(),
            format!("{:.0}%", r["context_used"].as_f64().unwrap_or(0.0) * 100.0),
            r["tier"].as_str().unwrap_or("").to_string(),
            output::usd(usd),
        ]);
    }
    if t.is_empty() {
        return "no sessions yet\n".into();
    }
    t.footer(vec![
        output::count(rows.len() as u64, "session"),
        String::new(),
        String::new(),
        String::new(),
        events.to_string(),
        String::new(),
        String::new(),
        String::new(),
        output::usd(total),
    ]);
    t.render()
}
