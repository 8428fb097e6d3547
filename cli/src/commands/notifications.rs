//! `notifications`: the notification log.

use crate::cli_util::CommandHelper;
use crate::output;
use crate::render::notifications::{render, render_in};
use engine::state::Partial;
use projections::fold::NotificationEntry;

use std::process::ExitCode;

/// `notifications` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this session's notifications (full id or its first characters).
    #[arg(long)]
    pub session: Option<String>,
    /// Only the last N notifications (default: 100 in the table, every one with --json).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub last: Option<usize>,
    /// Every notification, however many.
    #[arg(long)]
    pub all: bool,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
    /// Every journal in your registry (`$XDG_STATE_HOME/hookjournal/journals`), read untouched,
    /// with a PROJECT column (with --json: a `project` field).
    #[arg(long, conflicts_with = "session")]
    pub all_projects: bool,
}

/// Prints the notification log.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    if args.all_projects {
        return all_projects(&args);
    }
    let mut p = Partial::open(cmd.dir())?;
    let session = match &args.session {
        Some(s) => Some(engine::resolve_session(p.session_ids()?.iter(), s)?),
        None => None,
    };
    let last = output::shown_last(args.last, args.all, args.json);
    // The log's chunks newest first, until the last N are found: the answer's size, not the
    // log's.
    p.load(&projections::fold::Partition::Global)?;
    let newest = projections::fold::notification_chunk(p.state.global.last_seq);
    let wanted =
        |n: &&projections::fold::NotificationEntry| session.is_none() || n.session == session;
    for c in (0..=newest).rev() {
        p.load(&projections::fold::Partition::Notifications(c))?;
        if last.is_some_and(|l| p.state.notifications().filter(wanted).count() > l) {
            break;
        }
    }
    let state = p.into_state();
    let matching: Vec<_> = state.notifications().filter(wanted).collect();
    let skip = last.map_or(0, |l| matching.len().saturating_sub(l));
    let items = &matching[skip..];
    if args.json {
        let v: Vec<serde_json::Value> = items.iter().map(|n| json(n)).collect();
        output::print_json(&serde_json::Value::Array(v));
        return Ok(ExitCode::SUCCESS);
    }
    if skip > 0 {
        println!(
            "{}",
            output::dim(&format!(
                "the last {}; every one: `hookjournal notifications --all`",
                items.len()
            ))
        );
    }
    print!("{}", render(items));
    Ok(ExitCode::SUCCESS)
}

/// A notification as `--json` lists it.
fn json(n: &NotificationEntry) -> serde_json::Value {
    serde_json::json!({"timestamp": output::timestamp(n.at_us), "session_id": n.session, "type": n.kind, "title": n.title, "message": n.message, "seq": n.seq})
}

/// `notifications --all-projects`: every registered journal's log (read untouched), in time
/// order, the last N of them all.
fn all_projects(args: &Args) -> anyhow::Result<ExitCode> {
    let mut per = Vec::new();
    for r in crate::cli_util::registered() {
        let mut p = r.open()?;
        p.load(&projections::fold::Partition::Global)?;
        let newest = projections::fold::notification_chunk(p.state.global.last_seq);
        for c in 0..=newest {
            p.load(&projections::fold::Partition::Notifications(c))?;
        }
        let state = p.into_state();
        per.push((r.project.clone(), state.notifications().cloned().collect()));
    }
    let mut all = projections::across::by_time(per, |n: &NotificationEntry| n.at_us);
    let last = output::shown_last(args.last, args.all, args.json);
    let skip = last.map_or(0, |l| all.len().saturating_sub(l));
    all.drain(..skip);
    if args.json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|n| {
                let mut v = json(&n.row);
                v["project"] = n.project.clone().into();
                v
            })
            .collect();
        output::print_json(&serde_json::Value::Array(v));
        return Ok(ExitCode::SUCCESS);
    }
    if skip > 0 {
        println!(
            "{}",
            output::dim(&format!(
                "the last {}; every one: `hookjournal notifications --all-projects --all`",
                all.len()
            ))
        );
    }
    let items: Vec<(Option<&str>, &NotificationEntry)> = all
        .iter()
        .map(|n| (Some(n.project.as_str()), &n.row))
        .collect();
    print!("{}", render_in(&items));
    Ok(ExitCode::SUCCESS)
}
