//! `hookjournal drain`: the work a hook leaves behind so that the agent does not wait for
//! it. A hook answers from the hot cache and the write-ahead log without opening sled; when the
//! sled store lags the log by `hook.drain_lag` events, the active store is full, or the hot cache
//! is incomplete, it starts this command detached. It opens the store (which copies the log's new
//! events in), folds them into the checkpoint, ingests the spool, seals a full store (merging
//! archives), and fills the hot cache — then exits. Run by hand, it does the same.

use crate::cli_util::CommandHelper;
use anyhow::Result;
use engine::maintenance;
use std::process::ExitCode;

/// `drain` has no flags.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Catches sled up with the log, seals, fills the hot cache. A busy journal is left for later
/// (exit 0): the next hook that finds work due starts another drainer.
pub fn run(cmd: &CommandHelper, _args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    let res = maintenance::drain(dir, cmd.settings().hook.segment_events);
    let _ = engine::fs::door::unlink(dir.join(maintenance::DRAINING));
    res.map(|()| ExitCode::SUCCESS)
}
