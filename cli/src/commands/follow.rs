//! `hookjournal follow-session` (hidden): some hosts write their session file behind their hooks.
//! Copilot CLI writes a run's last model calls only after its sessionEnd hook returned (the file
//! ends with `session.shutdown`, measured on 1.0.102: in a short `copilot -p` run no hook sees the
//! file at all); Qwen Code writes a turn's last response a moment after its Stop hook started
//! (measured on 0.24.4). Started detached by the hook at such an event, this waits for the line
//! that ends what the event promised (at most `WAIT`), then reads the rest of the file into the
//! journal as the hook would have: usage, context and compactions, caused by that event,
//! deduplicated against the session.

use crate::cli_util::CommandHelper;
use anyhow::{Context, Result};
use engine::ingest;
use engine::state::{self as state_io, Loaded};
use projections::host::Host;
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
    /// The hook event the readings are caused by (Copilot's sessionEnd, Qwen's Stop).
    #[arg(long)]
    pub cause: u64,
}

/// How long the host may take to write its last lines after the hook: Copilot's shutdown comes
/// once its run ends; Qwen's last response within a second (its Stop read may have found it
/// already: then nothing comes, and the wait is short).
fn wait(host: &Host) -> Duration {
    match *host {
        Host::Qwen => Duration::from_secs(5),
        _ => Duration::from_secs(30),
    }
}

/// Waits for the session file to be complete, then records what it holds past the session's
/// recorded offset.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    // Where the file is, whose it is and how far the hooks read it (the lock is let go before
    // the wait).
    let (path, offset, host) = {
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
        (path, offset, Host::from_name(&s.host))
    };
    // What ends the file's part of the event: Copilot's `session.shutdown`, Qwen's next response
    // (the turn's last, with its usage).
    let needle: &[u8] = match host {
        Host::Copilot => b"\"session.shutdown\"",
        Host::Qwen => b"\"usageMetadata\"",
        _ => return Ok(ExitCode::SUCCESS),
    };
    if !Path::new(&path).is_file() {
        return Ok(ExitCode::SUCCESS);
    }
    wait_for(Path::new(&path), offset, needle, wait(&host));
    let mut j = state_io::open_and_drain(dir, false)?;
    let mut tx = engine::Transaction::start_lean(&mut j)?;
    tx.load_session(&args.session)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let max = cmd.settings().hook.transcript_read_max * 4;
    let session = tx.state().sessions.get(&args.session);
    // The host's session file, as the host table names its format.
    let observed = ingest::session_file_events(
        host.facts().session_file.format,
        session,
        &path,
        None,
        None,
        max,
        deadline,
    );
    if observed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let now = chrono::Utc::now().timestamp_micros();
    for o in observed {
        let (kind, body) = o.remember();
        tx.push(ingest::event(
            now,
            host.as_str(),
            Some(&args.session),
            None,
            kind(args.cause),
            body,
        ))?;
    }
    tx.finish()
        .with_context(|| format!("recording the rest of {path}"))?;
    Ok(ExitCode::SUCCESS)
}

/// Polls the file until it holds `needle` in a complete line past `from` (what the hooks read: a
/// resumed session's file holds the last run's too), or `wait` passes.
fn wait_for(path: &Path, from: u64, needle: &[u8], wait: Duration) {
    let start = Instant::now();
    while start.elapsed() < wait {
        if written_after(path, from, needle) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether the file holds `needle` in a complete line past `from` (its last 256 KiB are looked
/// at).
fn written_after(path: &Path, from: u64, needle: &[u8]) -> bool {
    let Ok(mut f) = engine::fs::door::open_following(path) else {
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
    let complete = tail
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&[][..], |end| &tail[..end]);
    complete.windows(needle.len()).any(|w| w == needle)
}
