//! The journal's process lock: one `flock` on `DIR/lock`, taken by polling within a budget.
//!
//! sled has its own lock, but it is per store directory; ours covers the whole journal (active
//! store, rotation, segment list) so a rotation can swap the active store safely.

use crate::error::{IoContext, Result};
use crate::Error;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock, waiting at most `wait`. `Error::Busy` when the budget runs out.
    pub(crate) fn acquire(dir: &Path, wait: Duration) -> Result<DirLock> {
        let path = dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(crate::FILE_MODE)
            .open(&path)
            .ctx(|| format!("opening {}", path.display()))?;
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_micros(200);
        loop {
            // SAFETY: flock on a file descriptor we own; no memory is touched.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(DirLock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK)
                && err.kind() != std::io::ErrorKind::Interrupted
            {
                return Err(Error::Io {
                    context: format!("locking {}", path.display()),
                    source: err,
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Busy);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(4));
        }
    }
}
