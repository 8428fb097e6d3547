//! `verify`: the hash chain, segments, storage damage, and projections == full replay.
//! Exit 3 when anything is damaged.

use crate::cli_util::CommandHelper;
use engine::log::hex;
use engine::state;

use std::process::ExitCode;
use std::time::Duration;

/// `verify` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Checks the chain, the segments and the projections; exit 3 on damage.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let dir = cmd.dir();
    match check(dir) {
        Ok(outcome) => Ok(print(&args, outcome)),
        // `--json` always prints: a tool reading it gets an answer, not an empty line.
        Err(e) if args.json => {
            crate::output::print_json(&serde_json::json!({
                "ok": false, "error": crate::output::one_line(&format!("{e:#}")),
            }));
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e),
    }
}

/// What `verify` found (a data value: `doctor` summarises it too).
pub struct Outcome {
    /// The journal as it was on disk.
    pub report: engine::log::VerifyReport,
    /// Every problem: the report's, then the projections'.
    pub damage: Vec<engine::log::Damage>,
    /// Whether the checkpoint matched a full replay (`None`: not checked, read-only here).
    pub projections_ok: Option<bool>,
    /// Whether the journal has a store (a log and a checkpoint) yet: until a writer ingests
    /// them, the hooks' fast path keeps every event in the spool.
    pub store: bool,
    /// Whether the checkpoint was written by an older build (not compared: rebuilt by the next
    /// writer).
    pub older_checkpoint: bool,
}

/// Whether the checkpoint's global record is of another layout than this build's.
fn older_layout(j: &engine::Journal) -> anyhow::Result<bool> {
    Ok(j.get_state(projections::fold::GLOBAL_KEY)?
        .is_some_and(|b| projections::fold::decode_global(&b).is_none()))
}

/// The journal as it is on disk (nothing repaired first), then — when the log is sound — the
/// checkpoint against a full replay. A sound journal's spooled events are acknowledged events:
/// when nothing needs repair (no note), they are ingested (as the next hook would ingest them)
/// and the journal checked again, so the counts are of every acknowledged event.
pub fn check(dir: &std::path::Path) -> anyhow::Result<Outcome> {
    let (mut report, mut fold) = on_disk(dir)?;
    // Never the writer that repairs what it found: a journal with a note is left as it lies.
    if report.ok() && report.notes.is_empty() && report.spooled > 0 {
        match state::open_read(dir) {
            Ok(j) => {
                drop(j);
                (report, fold) = on_disk(dir)?;
            }
            // Read-only here: its spool is counted as it lies.
            Err(e) if state::is_readonly(&e) => {}
            Err(e) => return Err(e),
        }
    }
    check_checkpoint(dir, report, fold)
}

/// `engine::log::verify` with a progress bar: the log, the segments and the spool as they are,
/// and the log folded as it is read (the full replay the checkpoint is compared with).
fn on_disk(dir: &std::path::Path) -> anyhow::Result<(engine::log::VerifyReport, state::OnePass)> {
    let bar = crate::output::progress(0, "verify");
    let mut fold = state::OnePass::default();
    let read = engine::log::verify_visiting(
        dir,
        Duration::from_secs(10),
        |n| bar.set_position(n),
        Some(&mut |e| fold.see(e)),
    );
    let report = match read {
        Ok(r) => r,
        Err(engine::Error::NotFound(p)) => anyhow::bail!("no journal at {}", p.display()),
        Err(e) => return Err(e.into()),
    };
    bar.finish_and_clear();
    Ok((report, fold))
}

/// The checkpoint against a full replay, when the log is sound.
fn check_checkpoint(
    dir: &std::path::Path,
    report: engine::log::VerifyReport,
    fold: state::OnePass,
) -> anyhow::Result<Outcome> {
    let mut damage = report.damage.clone();
    let mut projections_ok = None;
    let mut notes = Vec::new();
    let mut older_checkpoint = false;
    // No store yet: a journal this user can only read whose events all wait in the spool.
    let store = state::has_store(dir);
    if report.ok() && store {
        // Only a sound log is worth replaying.
        match state::open_read(dir) {
            // A checkpoint of an older layout (an older build's) is derived state the next
            // writer rebuilds from the log: said, not compared.
            Ok(j) if older_layout(&j)? => {
                older_checkpoint = true;
                notes.push(format!(
                    "checkpoint: written by an older build (its layout is not {}): the next hook or `hookjournal drain` rebuilds it from the log",
                    projections::fold::LAYOUT
                ));
            }
            Ok(j) => {
                let snap = j.read_snapshot()?;
                let checkpoint = state::checkpoint_whole(&j);
                drop(j);
                let full = fold.finish(&snap)?;
                let mut diff: Vec<String> = match checkpoint {
                    Ok(cp) => projections::fold::partition_diff(&cp, &full.state)
                        .into_iter()
                        .map(|p| format!("partition {p} differs from a full replay"))
                        .collect(),
                    Err(e) => vec![e.to_string()],
                };
                diff.extend(state::hot_cache_diff(dir, &snap, &full.state)?);
                projections_ok = Some(diff.is_empty());
                damage.extend(diff.into_iter().map(|what| engine::log::Damage {
                    seq: None,
                    place: engine::log::DamagePlace::Checkpoint,
                    what,
                }));
            }
            // Read-only here: the checkpoint cannot be opened, the log was checked.
            Err(e)
                if e.downcast_ref::<engine::Error>()
                    .is_some_and(|e| matches!(e, engine::Error::ReadOnly(_))) => {}
            Err(e) => return Err(e),
        }
    }
    let mut report = report;
    report.notes.extend(notes);
    Ok(Outcome {
        report,
        damage,
        projections_ok,
        store,
        older_checkpoint,
    })
}

fn print(args: &Args, o: Outcome) -> ExitCode {
    let Outcome {
        report,
        damage,
        projections_ok,
        store,
        older_checkpoint,
    } = o;
    let ok = damage.is_empty();
    let (events, head_hash) = (report.events, report.head_hash);
    if args.json {
        crate::output::print_json(&serde_json::json!({
            "ok": ok, "events": events, "segments": report.segments, "spooled": report.spooled,
            "head_hash": hex(&head_hash), "projections_match_replay": projections_ok,
            "damage": damage.iter().map(|d| serde_json::json!({
                "seq": d.seq, "place": d.place.to_string(), "what": d.what,
            })).collect::<Vec<_>>(),
            "notes": report.notes,
        }));
    } else if ok {
        let checked = match projections_ok {
            Some(true) => "projections match a full replay",
            _ if !store => "no checkpoint yet (read-only here: every event waits in the spool)",
            _ if older_checkpoint => "projections not compared (an older build's checkpoint)",
            _ => "projections not checked (the journal is read-only here)",
        };
        println!(
            "{}: {} event{} in {} sealed segments + active store; chain head {}; {checked}",
            crate::output::tint("valid"),
            crate::output::tokens(events),
            if events == 1 { "" } else { "s" },
            report.segments,
            &hex(&head_hash)[..16]
        );
        if report.spooled > 0 {
            println!(
                "  {} in the spool, each read whole, not in the count above: verify ingests them only into a journal it can write that needs no repair (`hookjournal drain` does)",
                crate::output::count(report.spooled as u64, "event")
            );
        }
        for n in &report.notes {
            println!("  note: {}", crate::output::escape(n));
        }
    } else {
        println!(
            "{}: {} problem(s)",
            crate::output::tint("damaged"),
            damage.len()
        );
        for d in &damage {
            let seq = d.seq.map(|s| format!("seq {s} ")).unwrap_or_default();
            println!(
                "  {}{}: {}",
                seq,
                crate::output::escape(&d.place.to_string()),
                crate::output::escape(&d.what)
            );
        }
        for n in &report.notes {
            println!("  note: {}", crate::output::escape(n));
        }
        println!("  `hookjournal recover` rebuilds what can be rebuilt from the intact copies and says what it kept");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}
