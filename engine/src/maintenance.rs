//! The work a hook leaves behind so that the agent does not wait for it: catching sled up with
//! the log, sealing, filling the hot cache (a drainer), and rebuilding a stale checkpoint. Each
//! runs as a detached `hookjournal` process of its own, at most one at a time per journal (a
//! marker file), and never makes the hook wait or fail.

use crate::state;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// Present while a drainer started by a hook runs: another hook does not start a second one.
pub const DRAINING: &str = "drain.running";
/// Present (under `state/`) while a detached rebuild of the checkpoint runs.
pub const REBUILDING: &str = "REBUILDING";

/// Opens the store (which copies the log's new events in), folds them into the checkpoint,
/// ingests the spool, seals a full store (merging archives) and fills the hot cache. A busy
/// journal is left for later: the next hook that finds work due starts another drainer.
pub fn drain(dir: &Path, segment_events: u64) -> Result<()> {
    let opts = journal::OpenOptions {
        wait: Duration::from_secs(5),
        // A journal of spooled events alone (the fast path never opened the store) is made.
        create: dir.join(journal::spool::SPOOL_DIR).is_dir(),
        segment_events,
        priority: false,
    };
    let mut j = match journal::Journal::open(dir, &opts) {
        Ok(j) => j,
        Err(journal::Error::Busy) => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("opening journal {}", dir.display())),
    };
    state::drain_all(&mut j)?;
    j.seal_if_full().context("sealing the active store")?;
    if !j.hot_complete() {
        j.fill_hot().context("filling the hot cache")?;
    }
    Ok(())
}

/// Whether a light writer leaves work to a drainer: sled lags the log by `drain_lag` events,
/// the active store is full, or the hot cache is incomplete.
pub fn due_after_light(light: &journal::Light, drain_lag: u64) -> bool {
    light.sled_lag() >= drain_lag || light.needs_seal() || !light.complete()
}

static INLINE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process do the drainer's and the checkpoint rebuild's work itself, after the
/// answer, instead of starting a detached `hookjournal`: for a program embedding the engine
/// (its executable is not hookjournal) and the engine's own tests.
pub fn work_inline() {
    INLINE.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn inline() -> bool {
    INLINE.load(std::sync::atomic::Ordering::Relaxed)
}

/// What a hook does when drain work is due: start a detached drainer — or, with
/// `HOOKJOURNAL_DRAINER=inline` (for tests that need seals at exact places) or `work_inline`,
/// drain in this process after the answer; `off` leaves it to the next command.
pub fn after_hook(dir: &Path, segment_events: u64) {
    let mode = std::env::var("HOOKJOURNAL_DRAINER");
    match mode.as_deref() {
        _ if inline() => {
            if let Err(e) = drain(dir, segment_events) {
                eprintln!("hookjournal: draining after the answer: {e:#}");
            }
        }
        Ok("inline") => {
            if let Err(e) = drain(dir, segment_events) {
                eprintln!("hookjournal: draining after the answer: {e:#}");
            }
        }
        Ok("off") => {}
        _ => spawn(
            dir,
            &dir.join(DRAINING),
            Duration::from_secs(30),
            &["drain"],
        ),
    }
}

/// Starts a detached `recover --checkpoint-only` (a hook found the checkpoint stale), at most
/// one at a time: the hook itself never waits for a rebuild (`work_inline`: rebuilds here).
pub fn spawn_rebuild(dir: &Path) {
    if inline() {
        if let Err(e) = rebuild_checkpoint(dir) {
            eprintln!("hookjournal: rebuilding the checkpoint: {e:#}");
        }
        return;
    }
    spawn(
        dir,
        &dir.join(journal::checkpoint::DIR).join(REBUILDING),
        Duration::from_secs(120),
        &["recover", "--checkpoint-only"],
    );
}

/// Rebuilds the checkpoint from the log (`recover --checkpoint-only`): marked stale, then opened
/// by a writer, which rebuilds a stale checkpoint before anything else.
/// The detached rebuild's marker goes whatever the outcome: the next hook may start another.
pub fn rebuild_checkpoint(dir: &Path) -> Result<()> {
    let rebuilt = (|| -> Result<()> {
        journal::checkpoint::mark_stale(dir, "rebuild requested by recover")?;
        drop(crate::state::open_and_drain(dir, false)?);
        Ok(())
    })();
    let _ = journal::door::unlink(dir.join(journal::checkpoint::DIR).join(REBUILDING));
    rebuilt
}

/// Starts `hookjournal --journal DIR ARGS` detached (its own process group, stdio closed),
/// unless `marker` is younger than `fresh` (one like it still runs). Never waits, never fails
/// the caller.
fn spawn(dir: &Path, marker: &Path, fresh: Duration, args: &[&str]) {
    let running = journal::door::age(marker).is_some_and(|age| age < fresh);
    if running
        || journal::files::write_marker(marker, std::process::id().to_string().as_bytes()).is_err()
    {
        return;
    }
    use std::os::unix::process::CommandExt;
    let spawned = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg("--journal")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
    });
    if spawned.is_err() {
        let _ = journal::door::unlink(marker);
    }
}

/// Journals (`recover`) every spool file that fails its checksum as a `Malformed` event holding its bytes.
pub fn journal_damaged_spool(dir: &Path) -> Result<usize> {
    let mut j = crate::state::open_and_drain(dir, false)?;
    let mut tx = j.begin();
    let mut done = Vec::new();
    for entry in journal::spool::list(dir)? {
        let Err(e) = journal::spool::read(&entry) else {
            continue;
        };
        let bytes = journal::files::read_regular(&entry.path)
            .with_context(|| format!("reading {}", entry.path.display()))?;
        tx.push(journal::NewEvent {
            recorded_at_us: chrono::Utc::now().timestamp_micros(),
            host: "unknown".into(),
            kind: projections::Kind::Malformed {
                reason: format!("damaged spool file: {e}"),
            }
            .into(),
            session_id: None,
            agent_id: None,
            payload: bytes,
            truncated: None,
            spooled: true,
        });
        tx.drained(&entry.id);
        done.push(entry);
    }
    if done.is_empty() {
        return Ok(0);
    }
    // These events are not folded here: the checkpoint is rebuilt next, and marked stale first
    // so that a kill in between still rebuilds it.
    journal::checkpoint::mark_stale(dir, "damaged spool files were journaled by recover")?;
    j.commit(tx)?;
    for entry in &done {
        let _ = journal::spool::remove(entry);
    }
    Ok(done.len())
}
