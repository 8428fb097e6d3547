//! `recover`: when `verify` reports that the active store cannot be opened, replace it with a
//! fresh one that continues the chain from the last sealed segment, rebuild the checkpoint by a
//! full replay, and ingest what the hooks spooled meanwhile. The damaged store is kept aside.

use crate::state_io;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args, journal: Option<PathBuf>) -> Result<ExitCode> {
    let dir = crate::locate::journal_dir(journal.as_deref(), false);
    if !dir.join("CURRENT").exists() {
        anyhow::bail!("no journal store at {} (nothing to recover)", dir.display());
    }
    let recovered = journal::Journal::recover(&dir, Duration::from_secs(10))
        .with_context(|| format!("recovering {}", dir.display()))?;
    let Some(r) = recovered else {
        println!("the active store opens: nothing to recover (run `hookjournal verify` for a full check)");
        return Ok(ExitCode::SUCCESS);
    };
    // The checkpoint's hot partitions were in the damaged store: rebuild every partition.
    let mut j = state_io::open_read(&dir)?;
    let snap = j.read_snapshot()?;
    let rewinds = state_io::collect_rewinds(&snap)?;
    let full = state_io::full_replay(&snap, rewinds, |_| {})?;
    let mut tx = j.begin();
    for (k, v) in full.state.partitions() {
        tx.put_state(&k, v);
    }
    j.commit(tx)?;
    drop(j);
    // Events the hooks spooled while the store was unreadable: ingested on top.
    let j = state_io::open_read(&dir)?;
    let head = j.head_seq();
    drop(j);
    println!(
        "recovered: the damaged active store is kept at {}; the journal continues from seq {} (the last sealed segment) and now holds {} events; events that were only in the damaged store are not recovered",
        crate::output::escape(&r.moved_aside.display().to_string()),
        r.head_seq,
        head
    );
    Ok(ExitCode::SUCCESS)
}
