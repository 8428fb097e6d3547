//! `rewind SESSION --to SEQ`: appends `Rewound{session, to_seq}`; every projection then ignores
//! the session's events after SEQ up to the rewind. The log is never edited. The checkpoint is
//! rebuilt by a full replay.

use crate::state_io;
use anyhow::{bail, Result};
use journal::{Journal, Kind};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    pub session: String,
    #[arg(long)]
    pub to: u64,
}

pub fn run(args: Args, journal: Option<PathBuf>) -> Result<ExitCode> {
    let dir = crate::locate::journal_dir(journal.as_deref(), false);
    let mut j: Journal = state_io::open_read(&dir)?;
    let state = state_io::checkpoint_or_rebuild(&mut j)?;
    let id = crate::commands::export::resolve_session(state.sessions.keys(), &args.session)?;
    let s = &state.sessions[&id];
    if args.to >= j.head_seq() {
        bail!(
            "--to {} is not before the journal's last event ({})",
            args.to,
            j.head_seq()
        );
    }
    if args.to < s.first_seq.saturating_sub(1) {
        bail!(
            "session {} starts at seq {}; --to must be at least {}",
            projections::short_id(&id),
            s.first_seq,
            s.first_seq.saturating_sub(1)
        );
    }
    let mut tx = j.begin();
    let now = chrono::Utc::now().timestamp_micros();
    tx.push(crate::ingest::event(
        now,
        "cli",
        Some(&id),
        None,
        Kind::Rewound {
            session: id.clone(),
            to_seq: args.to,
        },
        b"{}".to_vec(),
    ));
    j.commit(tx)?;
    // Rebuild the checkpoint: the rewind changes the past of the session's projections.
    let snap = j.read_snapshot()?;
    let rewinds = state_io::collect_rewinds(&snap)?;
    let full = state_io::full_replay(&snap, rewinds, |_| {})?;
    let mut tx = j.begin();
    let fresh = full.state.partitions();
    for (k, _) in j.scan_state(b"")? {
        if !fresh.iter().any(|(f, _)| *f == k) {
            tx.delete_state(&k);
        }
    }
    for (k, v) in fresh {
        tx.put_state(&k, v);
    }
    j.commit(tx)?;
    println!(
        "session {} rewound to seq {} (events {}..{} of it are now ignored by every projection)",
        crate::output::escape(projections::short_id(&id)),
        args.to,
        args.to + 1,
        j.head_seq() - 1
    );
    Ok(ExitCode::SUCCESS)
}
