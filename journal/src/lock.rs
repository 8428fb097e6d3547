//! The journal's process lock: one `flock` on `DIR/lock`, taken by polling within a budget.
//!
//! sled has its own lock, but it is per store directory; ours covers the whole journal (active
//! store, rotation, segment list) so a rotation can swap the active store safely.

use crate::error::Result;
use crate::Error;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

const WANTED: &str = "lock.wanted";

/// Whether a reader has asked hooks to step aside (a marker younger than 5 s).
fn reader_waiting(wanted: &Path) -> bool {
    crate::door::status(wanted)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(5))
}

/// Whether a reader that began waiting at `start` and last wrote its marker at `marked_at` writes
/// it (again) `now`: after a short wait, then each second while it still waits. Hooks honour a
/// marker only while it is fresh (5 s), and a reader on a loaded machine can wait longer.
fn marker_due(start: Instant, marked_at: Option<Instant>, now: Instant) -> bool {
    match marked_at {
        None => now.saturating_duration_since(start) > Duration::from_millis(20),
        Some(at) => now.saturating_duration_since(at) > Duration::from_secs(1),
    }
}

pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock, waiting at most `wait`. `Error::Busy` when the budget runs out.
    ///
    /// The lock is not fair: many hooks polling it could starve a reader. So a `priority` taker
    /// (a CLI command) that has waited a little leaves a `lock.wanted` marker, and hooks that
    /// see a fresh marker stop competing and spool at once; the marker goes when the reader
    /// has the lock (a stale one, from a killed reader, is ignored after a few seconds).
    pub(crate) fn acquire(dir: &Path, wait: Duration, priority: bool) -> Result<DirLock> {
        // Everything the journal writes is private to its owner.
        // SAFETY: umask only changes this process's file creation mask.
        unsafe { libc::umask(0o077) };
        crate::files::check_journal_dir(dir)?;
        let path = dir.join("lock");
        let file = crate::door::by_path::open_or_create(&path).map_err(|e| {
            let read_only = e.kind() == std::io::ErrorKind::PermissionDenied
                || e.raw_os_error() == Some(libc::EROFS);
            if read_only {
                Error::ReadOnly(dir.to_path_buf())
            } else if e.raw_os_error() == Some(libc::ELOOP) {
                Error::Unsafe {
                    path: path.clone(),
                    what: "it is a symbolic link, which the journal never follows".into(),
                }
            } else {
                Error::Io {
                    context: format!("opening {}", path.display()),
                    cause: e,
                }
            }
        })?;
        let start = Instant::now();
        let deadline = start + wait;
        let wanted = dir.join(WANTED);
        // A hook that arrives while a reader waits steps aside at once: otherwise a stream of
        // newcomers can take the lock each time it frees, before the reader's next poll.
        if !priority && reader_waiting(&wanted) {
            return Err(Error::Busy);
        }
        let mut marked = false;
        let mut marked_at: Option<Instant> = None;
        let mut pause = Duration::from_micros(200);
        loop {
            // SAFETY: flock on a file descriptor we own; no memory is touched.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                if marked {
                    let _ = crate::door::unlink(&wanted);
                }
                return Ok(DirLock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK)
                && err.kind() != std::io::ErrorKind::Interrupted
            {
                return Err(Error::Io {
                    context: format!("locking {}", path.display()),
                    cause: err,
                });
            }
            let now = Instant::now();
            if now >= deadline {
                if marked {
                    let _ = crate::door::unlink(&wanted);
                }
                return Err(Error::Busy);
            }
            if priority && marker_due(start, marked_at, now) {
                marked =
                    crate::files::write_marker(&wanted, std::process::id().to_string().as_bytes())
                        .is_ok()
                        || marked;
                marked_at = Some(now);
            }
            if !priority && reader_waiting(&wanted) {
                return Err(Error::Busy);
            }
            std::thread::sleep(pause.min(deadline - now));
            // A hook waiting behind a drainer notices the release within a millisecond (a poll
            // is one syscall; a 4 ms step showed in the tail at 1M events).
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::marker_due;
    use std::time::{Duration, Instant};

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_waiting_reader_marks_after_a_short_wait_and_again_each_second() {
        // Given a reader that began waiting at t0
        let t0 = Instant::now();
        // Then its first marker is due only past 20 ms
        assert!(!marker_due(t0, None, t0));
        assert!(!marker_due(t0, None, t0 + 20 * MS));
        assert!(marker_due(t0, None, t0 + 21 * MS));
        // And once written at t1, again only past a second later, and each second on: a marker
        // never ages past its 5 s freshness while the reader still waits
        let t1 = t0 + 21 * MS;
        assert!(!marker_due(t0, Some(t1), t1 + 1000 * MS));
        assert!(marker_due(t0, Some(t1), t1 + 1001 * MS));
        let t9 = t1 + 9000 * MS;
        assert!(marker_due(t0, Some(t9 - 1001 * MS), t9));
    }
}
