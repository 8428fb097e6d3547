//! The checkpoint is derived state: every partition can be recomputed by folding the log. When
//! a partition or an archive is damaged, or a recover replaced the store that held the hot
//! partitions, the journal is marked *stale*: hooks keep recording events (and answer nothing
//! from state they cannot trust) until a reader or `recover` rebuilds the checkpoint whole.

use crate::archive;
use crate::error::Result;
use crate::files::{self, Durability};
use std::path::Path;

const STALE: &str = "STALE";
/// The directory of the checkpoint's archives and markers, in the journal's.
pub const DIR: &str = archive::DIR;

/// Marks the checkpoint stale, saying why (kept until a rebuild completes).
pub fn mark_stale(dir: &Path, why: &str) -> Result<()> {
    let d = dir.join(archive::DIR);
    files::create_dir(&d)?;
    files::write_atomic(&d, STALE, why.as_bytes(), Durability::Durable)
}

/// Why the checkpoint is stale, if it is.
pub fn stale_reason(dir: &Path) -> Option<String> {
    crate::files::read_small(&dir.join(archive::DIR).join(STALE), 4096)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Removes the stale marker (a writer that marked it, and wrote the whole checkpoint since).
pub fn clear_stale(dir: &Path) -> Result<()> {
    match crate::door::unlink(dir.join(archive::DIR).join(STALE)) {
        Ok(()) => files::sync_dir(&dir.join(archive::DIR)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(crate::Error::Io {
            context: "removing the stale-checkpoint marker".into(),
            cause: e,
        }),
    }
}
