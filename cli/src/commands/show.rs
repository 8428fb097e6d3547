//! `show SESSION`: the execution snapshot; `show SESSION --at SEQ`: the snapshot as it was just
//! after event SEQ (the seq `search` and `replay` print), folded from the log as the hook saw it.

use crate::cli_util::CommandHelper;
use crate::output::{self, escape};
use crate::render::replay::summary;
use crate::render::show::render;
use projections::fold::{Full, Rewinds};
use projections::{Kind, KindOf};

use std::process::ExitCode;

/// `show` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (or its first characters).
    pub session: String,
    /// The session as it was just after this event (a seq `search` or `replay` printed): the log
    /// folded up to it, as the hook saw it then.
    #[arg(long, value_name = "SEQ")]
    pub at: Option<u64>,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Prints one session's execution snapshot.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    if let Some(seq) = args.at {
        return at(cmd, &args, seq);
    }
    let settings = cmd.settings();
    // One session's partition, not the whole checkpoint.
    let mut p = engine::state::Partial::open(cmd.dir())?;
    let id = p.session(&args.session)?;
    let state = p.into_state();
    let s = &state.sessions[&id];
    let pricing = settings.pricing();
    if args.json {
        output::print_json(&projections::report::snapshot_json(
            s,
            &pricing,
            &settings.policy,
        ));
    } else {
        print!("{}", render(s, &pricing, &settings.policy));
    }
    Ok(ExitCode::SUCCESS)
}

/// `show SESSION --at SEQ`: the log replayed up to SEQ, the session's snapshot then, under a line
/// naming the event.
fn at(cmd: &CommandHelper, args: &Args, seq: u64) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    let view = cmd.view()?;
    let id = engine::resolve_session(view.state.sessions.keys(), &args.session)?;
    if seq == 0 || seq > view.snap.head_seq {
        eprintln!(
            "hookjournal: --at {seq}: the journal's events are seq 1 to {}",
            view.snap.head_seq
        );
        return Ok(ExitCode::from(2));
    }
    // The log up to SEQ folded with the rewinds recorded by then (as the hook saw it: a later
    // rewind not yet applied): two passes over those events, never a copy of the state each.
    let mut rewinds = Vec::new();
    let mut event = None;
    view.snap.for_each_in(1, seq, |e| {
        if let Kind::Rewound { session, to_seq } = e.kind() {
            rewinds.push((session, to_seq, e.seq));
        }
        if e.seq == seq {
            event = Some(e);
        }
        Ok(())
    })?;
    let Some(event) = event else {
        eprintln!("hookjournal: --at {seq}: no event has that seq");
        return Ok(ExitCode::from(2));
    };
    let mut full = Full::with_rewinds(Rewinds::from_list(&rewinds));
    view.snap.for_each_in(1, seq, |e| {
        full.apply(&e);
        Ok(())
    })?;
    let session = full.state.sessions.remove(&id);
    let Some(s) = session else {
        eprintln!(
            "hookjournal: session {} had not started at seq {seq}",
            projections::short_id(&id)
        );
        return Ok(ExitCode::from(1));
    };
    let kind = event.kind().label();
    let whose = event.session_id.as_deref().filter(|s| *s != id);
    let pricing = settings.pricing();
    if args.json {
        let mut v = projections::report::snapshot_json(&s, &pricing, &settings.policy);
        v["at"] = serde_json::json!({
            "seq": seq,
            "recorded_at": output::timestamp(event.recorded_at_us),
            "kind": kind,
            "session_id": event.session_id,
            "summary": summary(&event),
        });
        output::print_json(&v);
    } else {
        let other = whose
            .map(|w| format!(", session {}'s event", projections::short_id(w)))
            .unwrap_or_default();
        println!(
            "as of seq {seq} ({}, {}{}: {})\n",
            output::timestamp(event.recorded_at_us),
            escape(&kind),
            escape(&other),
            escape(&summary(&event))
        );
        print!("{}", render(&s, &pricing, &settings.policy));
    }
    Ok(ExitCode::SUCCESS)
}
