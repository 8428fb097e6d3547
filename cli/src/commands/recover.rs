//! `recover`: makes a damaged journal whole again from every intact copy it has, and says exactly
//! what it kept. The active store is rebuilt from the sealed segments plus the write-ahead log
//! (and whatever of the old store still reads); damaged spool files are journaled as bytes;
//! the checkpoint is rebuilt from the log. Nothing intact is dropped, nothing is deleted (a
//! replaced store is moved aside), and every step is safe to kill and run again.

use crate::cli_util::CommandHelper;
use anyhow::{Context, Result};
use engine::log::DamagePlace;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `recover` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only rebuild the checkpoint (derived state) from the log; the log is not touched.
    #[arg(long)]
    pub checkpoint_only: bool,
}

/// Repairs what `verify` found, keeping every intact event.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    if !engine::state::is_journal(dir) {
        anyhow::bail!("no journal at {} (nothing to recover)", dir.display());
    }
    if args.checkpoint_only {
        engine::maintenance::rebuild_checkpoint(dir)?;
        println!("checkpoint rebuilt from the log");
        return Ok(ExitCode::SUCCESS);
    }
    let r = match engine::Journal::recover(dir, Duration::from_secs(10)) {
        Ok(r) => r,
        // The last sealed segment is damaged: nothing here can rebuild it.
        Err(engine::Error::Corrupt {
            place: DamagePlace::Segment(_),
            what,
        }) => {
            println!("cannot recover: {}", crate::output::escape(&what));
            return Ok(ExitCode::from(3));
        }
        Err(e) => return Err(e).with_context(|| format!("recovering {}", dir.display())),
    };
    for f in &r.found {
        println!("found: {}", crate::output::escape(f));
    }
    // Sealed history nothing here can rebuild: said first, and the checkpoint is left alone
    // (it cannot be replayed past a damaged segment).
    let code = remaining_damage(dir, true)?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    // Spooled events (intact ones are ingested in order by opening), then damaged spool files,
    // kept as bytes, then the checkpoint rebuilt from the whole log.
    drop(cmd.open_write()?);
    let damaged = engine::maintenance::journal_damaged_spool(dir)?;
    engine::maintenance::rebuild_checkpoint(dir)?;
    let j = cmd.open_write()?;
    let head = j.head_seq();
    drop(j);

    if !r.changed && damaged == 0 && r.lost.is_none() && !r.log_gone_uncounted {
        println!(
            "nothing to repair: the active store and its write-ahead log agree ({head} events); checkpoint rebuilt from the log"
        );
        return remaining_damage(dir, false);
    }
    if r.changed {
        let tail = if r.head_seq >= r.base {
            format!(
                "seq {}..{} in the active store ({} only in the write-ahead log, {} only in the old store)",
                r.base, r.head_seq, r.from_wal_only, r.from_store_only
            )
        } else {
            "no active events".into()
        };
        let what = match (r.rebuilt_store, r.rewrote_log) {
            (true, true) => "rebuilt the active store and its write-ahead log",
            (true, false) => "rebuilt the active store",
            (false, true) => "rewrote the write-ahead log and its mirror",
            (false, false) => "repaired the journal",
        };
        let sealed = if r.sealed == 0 {
            "no sealed segments".to_string()
        } else {
            format!("seq 1..{} in sealed segments", r.sealed)
        };
        println!("{what}: kept {sealed} and {tail}");
        for p in &r.moved_aside {
            println!(
                "moved aside (not deleted): {}",
                crate::output::escape(&p.display().to_string())
            );
        }
    }
    if damaged > 0 {
        println!(
            "journaled {damaged} damaged spool file(s) as Malformed events (their bytes are kept)"
        );
    }
    match r.lost {
        Some((a, b)) => {
            println!("lost: seq {a}..{b} were claimed by a damaged copy and are in no intact one")
        }
        None if r.log_gone_uncounted => println!(
            "lost: cannot be counted: the write-ahead log and its mirror were both missing, so events after seq {} that only they held are gone, and nothing left tells how many (an export or a backup has them)",
            r.head_seq
        ),
        None => println!("lost: nothing"),
    }
    println!("the journal holds {head} events; checkpoint rebuilt from the log");
    remaining_damage(dir, false)
}

/// What recover cannot repair (a damaged sealed segment: it is the only copy of its events)
/// is said plainly, with exit 3. `sealed_only`: look at sealed segments alone.
fn remaining_damage(dir: &Path, sealed_only: bool) -> Result<ExitCode> {
    let report = engine::log::verify(dir, Duration::from_secs(10), |_| {})?;
    let damage: Vec<_> = report
        .damage
        .iter()
        .filter(|d| !sealed_only || matches!(d.place, DamagePlace::Segment(_)))
        .collect();
    if damage.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for d in damage {
        let seq = d.seq.map(|s| format!("seq {s} ")).unwrap_or_default();
        println!(
            "still damaged: {seq}{}: {}",
            crate::output::escape(&d.place.to_string()),
            crate::output::escape(&d.what)
        );
    }
    println!("sealed segments are the only copy of their events: restore a damaged one from a backup or an export (`hookjournal export --report events --skip-damaged` saves every readable event now; see the cookbook to merge it with an older export)");
    Ok(ExitCode::from(3))
}
