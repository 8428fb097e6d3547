//! `hookjournal follow-session` (hidden): Copilot CLI writes its session file behind its hooks,
//! and a run's last model calls only after its sessionEnd hook returned (the file ends with
//! `session.shutdown`, measured on 1.0.102: in a short `copilot -p` run no hook sees the file at
//! all). Started detached by the hook at a Copilot sessionEnd, this waits for that line (at most
//! `WAIT`), then reads the rest of the file into the journal as the hook would have: usage,
//! context and compactions, caused by that sessionEnd, deduplicated against the session.

use crate::cli_util::CommandHelper;
use anyhow::{Context, Result};
use engine::ingest;
use engine::state::{self as state_io, Loaded};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `follow-session` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session whose host file to follow.
    #[arg(long)]
    pub session: String,
    /// The hook event the readings are caused by (the session's sessionEnd).
    #[arg(long)]
    pub cause: u64,
}

/// How long Copilot may take to write its last lines after the sessionEnd hook.
const WAIT: Duration = Duration::from_secs(30);

/// Waits for the session file to be complete, then records what it holds past the session's
/// recorded offset.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    // Where the file is and how far the hooks read it (the lock is let go before the wait).
    let (path, offset) = {
        let j = state_io::open_and_drain(dir, false)?;
        let mut loaded = Loaded::lean(&j)?;
        loaded.session(&j, &args.session)?;
        let Some(s) = loaded.state.sessions.get(&args.session) else {
            return Ok(ExitCode::SUCCESS);
        };
        let Some(path) = s.transcript_path.clone() else {
            return Ok(ExitCode::SUCCESS);
        };
        let offset = ingest::recorded_offset(Some(s), &path);
        (path, offset)
    };
    if !Path::new(&path).is_file() {
        return Ok(ExitCode::SUCCESS);
    }
    wait_for_shutdown(Path::new(&path), offset, WAIT);
    let mut j = state_io::open_and_drain(dir, false)?;
    let mut loaded = Loaded::lean(&j)?;
    loaded.session(&j, &args.session)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let max = cmd.settings().hook.transcript_read_max * 4;
    let observed = ingest::copilot_session_events(
        loaded.state.sessions.get(&args.session),
        &path,
        max,
        deadline,
    );
    if observed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let now = chrono::Utc::now().timestamp_micros();
    let mut tx = j.begin();
    for o in observed {
        let (kind, body) = o.remember();
        tx.push(ingest::event(
            now,
            projections::host::COPILOT.name,
            Some(&args.session),
            None,
            kind(args.cause),
            body,
        ));
        let env = tx.events().last().expect("just pushed").clone();
        loaded.fold(&j, &env)?;
    }
    loaded.write_back(&mut tx);
    j.commit(tx)
        .with_context(|| format!("recording the rest of {path}"))?;
    Ok(ExitCode::SUCCESS)
}

/// Polls the file until it holds a `session.shutdown` line past `from` (what the hooks read:
/// a resumed session's file holds the last run's too), or `wait` passes.
fn wait_for_shutdown(path: &Path, from: u64, wait: Duration) {
    let start = Instant::now();
    while start.elapsed() < wait {
        if shutdown_after(path, from) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether the file holds `"session.shutdown"` past `from` (its last 256 KiB are looked at).
fn shutdown_after(path: &Path, from: u64) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = from.max(len.saturating_sub(256 << 10));
    if len <= start || f.seek(SeekFrom::Start(start)).is_err() {
        return false;
    }
    let mut tail = Vec::new();
    if f.take(len - start).read_to_end(&mut tail).is_err() {
        return false;
    }
    let needle = b"\"session.shutdown\"";
    tail.windows(needle.len()).any(|w| w == needle)
}
