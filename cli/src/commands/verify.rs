//! `verify`: the hash chain, segments, storage damage, and projections == full replay.
//! Exit 3 when anything is damaged.

use crate::state_io;
use journal::hex;
use projections::fold::State;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Compares the checkpoint with a full replay; returns the partitions that differ.
pub fn projection_diff(checkpoint: &State, replayed: &State) -> Vec<String> {
    let a: std::collections::BTreeMap<_, _> = checkpoint.partitions().into_iter().collect();
    let b: std::collections::BTreeMap<_, _> = replayed.partitions().into_iter().collect();
    let mut out = Vec::new();
    for (k, v) in &b {
        if a.get(k) != Some(v) {
            out.push(String::from_utf8_lossy(k).into_owned());
        }
    }
    for k in a.keys() {
        if !b.contains_key(k) {
            out.push(format!(
                "{} (not in the replay)",
                String::from_utf8_lossy(k)
            ));
        }
    }
    out
}

pub fn run(args: Args, journal: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = crate::locate::journal_dir(journal.as_deref(), false);
    // Spooled events first: verify the journal as every reader will see it.
    if dir.join(journal::spool::SPOOL_DIR).is_dir() {
        drop(state_io::open_read(&dir)?);
    }
    let bar = crate::output::progress(0, "verify");
    let report = match journal::verify(&dir, Duration::from_secs(10), |n| bar.set_position(n)) {
        Ok(r) => r,
        Err(journal::Error::NotFound(p)) => anyhow::bail!("no journal at {}", p.display()),
        Err(e) => return Err(e.into()),
    };
    bar.finish_and_clear();
    let mut damage: Vec<serde_json::Value> = report
        .damage
        .iter()
        .map(|d| serde_json::json!({ "seq": d.seq, "place": d.place, "what": d.what }))
        .collect();
    let mut projections_ok = None;
    if report.ok() {
        // Only a sound chain is worth replaying.
        let j = state_io::open_read(&dir)?;
        let snap = j.read_snapshot()?;
        let checkpoint = state_io::checkpoint(&j);
        drop(j);
        let rewinds = state_io::collect_rewinds(&snap)?;
        let full = state_io::full_replay(&snap, rewinds, |_| {})?;
        match checkpoint {
            Ok(cp) => {
                let diff = projection_diff(&cp, &full.state);
                projections_ok = Some(diff.is_empty());
                for p in diff {
                    damage.push(serde_json::json!({ "seq": null, "place": "checkpoint", "what": format!("partition {p} differs from a full replay") }));
                }
            }
            Err(e) => {
                projections_ok = Some(false);
                damage.push(serde_json::json!({ "seq": null, "place": "checkpoint", "what": e.to_string() }));
            }
        }
    }
    let ok = damage.is_empty();
    if args.json {
        crate::output::print_json(&serde_json::json!({
            "ok": ok, "events": report.events, "segments": report.segments,
            "head_hash": hex(&report.head_hash), "projections_match_replay": projections_ok, "damage": damage,
        }));
    } else if ok {
        println!(
            "{}: {} events in {} sealed segments + active store; chain head {}; projections match a full replay",
            crate::output::tint("valid"),
            crate::output::tokens(report.events),
            report.segments,
            &hex(&report.head_hash)[..16]
        );
    } else {
        println!(
            "{}: {} problem(s)",
            crate::output::tint("damaged"),
            damage.len()
        );
        for d in &damage {
            let seq = d["seq"]
                .as_u64()
                .map(|s| format!("seq {s} "))
                .unwrap_or_default();
            println!(
                "  {}{}: {}",
                seq,
                d["place"].as_str().unwrap_or(""),
                crate::output::escape(d["what"].as_str().unwrap_or(""))
            );
        }
        let unreadable = report
            .damage
            .iter()
            .any(|d| d.place == "active store" && d.what.contains("cannot be opened"));
        if unreadable {
            println!("  the active store cannot be opened: `hookjournal recover` continues the journal from the last sealed segment (hooks keep spooling until then)");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}
