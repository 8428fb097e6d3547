//! `status`: events, sessions, segments, size, last event, chain state.

use crate::cli_util::CommandHelper;
use crate::output::{relative, timestamp};
use engine::incidents::{Incident, Severity};
use engine::log::hex;
use engine::state;

use std::process::ExitCode;

/// `status` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Prints the journal's size, sessions, last event and chain state.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let dir = cmd.dir();
    // Unless read-only, the spool was ingested: what is left there could not be (damaged, or
    // not this user's file), and `verify` names it.
    let state::StatusRead {
        status: st,
        sessions,
        readonly,
    } = state::read_status(dir)?;
    let incidents = engine::incidents::read(dir);
    let missing: Vec<&Incident> = incidents
        .iter()
        .filter(|i| i.severity == Severity::MayBeMissing)
        .collect();
    let repairs = incidents.len() - missing.len();
    let config = cmd.config();
    if args.json {
        let ignored: Vec<&str> = config.ignored.iter().map(|i| i.guarded.key).collect();
        crate::output::print_json(&serde_json::json!({
            "dir": st.dir, "events": st.events, "sessions": sessions, "segments": st.segments,
            "active_events": st.active_events, "bytes": st.bytes, "hot_files": st.hot_files, "spooled": st.spooled,
            "last_event": st.last_recorded_at_us.map(timestamp), "head_hash": hex(&st.head_hash),
            "incidents": incidents.iter().rev().take(50).map(|i| serde_json::json!({
                "at": timestamp(i.at_ms * 1000),
                "event_may_be_missing": i.severity == Severity::MayBeMissing,
                "what": i.text,
            })).collect::<Vec<_>>(),
            "user_config": config.user, "ignored_settings": ignored,
            "registered_journals": engine::registry::count(),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let now = crate::clock::now_us();
    println!(
        "journal    {}",
        crate::output::escape(&st.dir.display().to_string())
    );
    println!("events     {}", crate::output::tokens(st.events));
    println!("sessions   {sessions}");
    println!(
        "segments   {} sealed + {} in the active store",
        st.segments,
        crate::output::count(st.active_events, "event")
    );
    println!(
        "size       {:.1} MiB (+ a hot cache of {})",
        st.bytes as f64 / (1 << 20) as f64,
        crate::output::count(st.hot_files as u64, "file")
    );
    if st.spooled > 0 {
        println!(
            "spooled    {} {}",
            st.spooled,
            if readonly {
                "waiting (read-only here: not in these figures until the journal's owner runs any command)"
            } else {
                "left in the spool: not ingested (damaged, or not this user's file; `hookjournal verify` names each)"
            }
        );
    }
    match st.last_recorded_at_us {
        Some(t) => println!("last event {} ({})", timestamp(t), relative(t, now)),
        None => println!("last event none"),
    }
    println!("chain head {}", &hex(&st.head_hash)[..16]);
    print_registry();
    if !missing.is_empty() {
        println!(
            "incidents  {} may be missing (a hook could not make it durable):",
            crate::output::count(missing.len() as u64, "event")
        );
        for i in missing.iter().rev().take(5) {
            println!(
                "           {}  {}",
                timestamp(i.at_ms * 1000),
                crate::output::escape(&i.text)
            );
        }
    }
    if repairs > 0 {
        let last = incidents
            .iter()
            .rev()
            .find(|i| i.severity == Severity::Repaired)
            .expect("counted");
        println!(
            "repairs    {} from another copy, nothing lost (last {}: {})",
            repairs,
            timestamp(last.at_ms * 1000),
            crate::output::escape(&last.text)
        );
    }
    print_ignored(config);
    println!(
        "{}",
        crate::output::dim("run `hookjournal verify` to check the chain and the projections")
    );
    Ok(ExitCode::SUCCESS)
}

/// How many journals the user's registry holds (what `--all-projects` reads).
fn print_registry() {
    println!(
        "registry   {} of yours registered (the views' --all-projects reads them)",
        crate::output::count(engine::registry::count() as u64, "journal")
    );
}

/// The project settings the hook ignores, one a line, and how to honour them.
fn print_ignored(config: &engine::settings::Loaded) {
    let Some(why) = &config.ignored_because else {
        return;
    };
    println!(
        "ignored    {} in {} ({why}):",
        crate::output::count(config.ignored.len() as u64, "setting"),
        crate::output::escape(&config.project.display().to_string())
    );
    for i in &config.ignored {
        println!(
            "           {} = {}  ({})",
            i.guarded.key,
            i.value(),
            i.guarded.does
        );
    }
    println!(
        "{}",
        crate::output::dim(
            "review the file, then `hookjournal trust` to honour them (only your own config and a file you trusted may run programs, stop agents or write outside the journal)"
        )
    );
}
