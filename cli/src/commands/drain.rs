//! `hookjournal drain` (hidden): the work a hook leaves behind so that the agent does not wait for
//! it. A hook answers from the hot cache and the write-ahead log without opening sled; when the
//! sled store lags the log by `hook.drain_lag` events, the active store is full, or the hot cache
//! is incomplete, it starts this command detached. It opens the store (which copies the log's new
//! events in), folds them into the checkpoint, ingests the spool, seals a full store (merging
//! archives), and fills the hot cache — then exits. Run by hand, it does the same.

use crate::cli_util::CommandHelper;
use anyhow::{Context, Result};
use engine::state;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `drain` has no flags.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Present while a drainer started by a hook runs: another hook does not start a second one.
const MARKER: &str = "drain.running";

/// Catches sled up with the log, seals, fills the hot cache. A busy journal is left for later
/// (exit 0): the next hook that finds work due starts another drainer.
pub fn run(cmd: &CommandHelper, _args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    let res = drain(dir, cmd.settings().hook.segment_events);
    let _ = std::fs::remove_file(dir.join(MARKER));
    res
}

fn drain(dir: &Path, segment_events: u64) -> Result<ExitCode> {
    let opts = journal::OpenOptions {
        wait: Duration::from_secs(5),
        create: false,
        segment_events,
        priority: false,
    };
    let mut j = match journal::Journal::open(dir, &opts) {
        Ok(j) => j,
        Err(journal::Error::Busy) => return Ok(ExitCode::SUCCESS),
        Err(e) => return Err(e).with_context(|| format!("opening journal {}", dir.display())),
    };
    state::drain_all(&mut j)?;
    j.seal_if_full().context("sealing the active store")?;
    if !j.hot_complete() {
        j.fill_hot().context("filling the hot cache")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a light writer leaves work to a drainer: sled lags the log by `drain_lag` events,
/// the active store is full, or the hot cache is incomplete.
pub fn due_after_light(light: &journal::Light, drain_lag: u64) -> bool {
    light.sled_lag() >= drain_lag || light.needs_seal() || !light.complete()
}

/// What a hook does when drain work is due: start a detached drainer — or, with
/// `HOOKJOURNAL_DRAINER=inline` (for tests that need seals at exact places), drain in this
/// process after the answer; `off` leaves it to the next command.
pub fn after_hook(dir: &Path, segment_events: u64) {
    match std::env::var("HOOKJOURNAL_DRAINER").as_deref() {
        Ok("inline") => {
            if let Err(e) = drain(dir, segment_events) {
                eprintln!("hookjournal: draining after the answer: {e:#}");
            }
        }
        Ok("off") => {}
        _ => spawn(dir),
    }
}

/// Starts a detached drainer for the journal in `dir`, unless one started less than 30 s ago is
/// still running. Never waits for it and never fails the caller.
pub fn spawn(dir: &Path) {
    let marker = dir.join(MARKER);
    let fresh = std::fs::symlink_metadata(&marker)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(30));
    if fresh
        || journal::files::write_marker(&marker, std::process::id().to_string().as_bytes()).is_err()
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        let _ = std::fs::remove_file(&marker);
        return;
    };
    use std::os::unix::process::CommandExt;
    let spawned = std::process::Command::new(exe)
        .arg("--journal")
        .arg(dir)
        .arg("drain")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    if spawned.is_err() {
        let _ = std::fs::remove_file(&marker);
    }
}
