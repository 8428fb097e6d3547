//! Whether a journal was made here: its origin marker (`origin`), written when the journal is
//! made, ties it to its directory — the directory's inode and canonical path, hashed. A journal
//! without a matching marker came from somewhere else (committed to a repository and checked
//! out, copied or moved, made on another machine) and is *foreign*: it may be read, but hooks
//! neither record into it nor inject anything from it until the user adopts it
//! (`hookjournal trust`). Checking costs one `read` of under 512 bytes and two `stat`s.
//!
//! A journal made before markers existed has none, and is foreign too: nothing it holds tells a
//! journal this user made here from one checked out of a repository (readers on this machine
//! rewrite its hot cache, so even the boot id there proves nothing). The user adopts it once.

use crate::error::{IoContext, Result};
use crate::files::{is_present, write_atomic, Durability};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The marker's file name in the journal's directory.
pub const FILE: &str = "origin";

const MAGIC: &str = "hookjournal origin 1";

/// Where a journal came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Made here: its marker names this directory.
    Ours,
    /// No journal yet (no directory, or no event in it): the first write makes it, here.
    Unmade,
    /// Made elsewhere, or moved: why, in a few words.
    Foreign(String),
}

/// The marker's key for a directory of inode `ino` at `path`.
fn key(ino: u64, path: &Path) -> String {
    let mut h = blake3::Hasher::new();
    h.update(MAGIC.as_bytes());
    h.update(b"\0");
    h.update(&ino.to_le_bytes());
    h.update(path.as_os_str().as_bytes());
    h.finalize().to_hex().to_string()
}

/// Writes the marker for `dir` as it is now (its inode, its canonical path).
pub fn mark(dir: &Path) -> Result<()> {
    let ino = std::fs::symlink_metadata(dir)
        .ctx(|| format!("reading {}", dir.display()))?
        .ino();
    let path = std::fs::canonicalize(dir).ctx(|| format!("resolving {}", dir.display()))?;
    let text = format!("{MAGIC}\nkey {}\ndir {}\n", key(ino, &path), path.display());
    write_atomic(dir, FILE, text.as_bytes(), Durability::Durable)
}

/// Whether `dir` holds events or the start of a store (a journal, not just its settings).
pub(crate) fn has_history(dir: &Path) -> bool {
    ["CURRENT", crate::spool::SPOOL_DIR, "wal", "segments"]
        .iter()
        .any(|n| is_present(&dir.join(n)))
}

/// The marker's bytes, in one `read` (the hook pays for this on every event): a regular file
/// reached without a link, never blocking, of fewer than 512 bytes.
fn read_marker(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = crate::files::open_read(path)?;
    let mut buf = vec![0u8; 512];
    let n = f.read(&mut buf)?;
    if n == buf.len() {
        return Err(std::io::Error::other("larger than a marker ever is"));
    }
    buf.truncate(n);
    Ok(buf)
}

/// Where the journal in `dir` came from.
pub fn status(dir: &Path) -> Origin {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return Origin::Unmade;
    };
    // Not a journal at all: refused for that, elsewhere.
    if !m.is_dir() || crate::files::check_adoptable(dir).is_err() {
        return Origin::Unmade;
    }
    match read_marker(&dir.join(FILE)) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let mut lines = text.lines();
            let want = (lines.next() == Some(MAGIC))
                .then(|| lines.next().and_then(|l| l.strip_prefix("key ")))
                .flatten();
            let Some(want) = want else {
                return Origin::Foreign("its origin marker is not one hookjournal writes".into());
            };
            let matches = |p: &Path| key(m.ino(), p) == want;
            let here = std::path::absolute(dir).is_ok_and(|p| matches(&p))
                || std::fs::canonicalize(dir).is_ok_and(|p| matches(&p));
            if here {
                Origin::Ours
            } else {
                Origin::Foreign(
                    "its origin marker names another directory (it was copied, moved or made \
                     elsewhere)"
                        .into(),
                )
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !has_history(dir) {
                return Origin::Unmade;
            }
            Origin::Foreign(
                "it has no origin marker (it came with the repository or from elsewhere, or a \
                 hookjournal from before origin markers made it)"
                    .into(),
            )
        }
        Err(e) => Origin::Foreign(format!("its origin marker cannot be read ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_journal_is_ours_only_where_it_was_made() {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("j");
        std::fs::create_dir(&j).unwrap();
        assert_eq!(status(&j), Origin::Unmade);
        mark(&j).unwrap();
        std::fs::create_dir(j.join("wal")).unwrap();
        assert_eq!(status(&j), Origin::Ours);
        // Moved: another path. Copied: another inode.
        let moved = d.path().join("moved");
        std::fs::rename(&j, &moved).unwrap();
        assert!(matches!(status(&moved), Origin::Foreign(_)));
        std::fs::rename(&moved, &j).unwrap();
        assert_eq!(status(&j), Origin::Ours);
        let copy = d.path().join("copy");
        std::fs::create_dir_all(copy.join("wal")).unwrap();
        std::fs::copy(j.join(FILE), copy.join(FILE)).unwrap();
        assert!(matches!(status(&copy), Origin::Foreign(_)));
        // Unmarked with events: foreign.
        std::fs::remove_file(copy.join(FILE)).unwrap();
        assert!(matches!(status(&copy), Origin::Foreign(_)));
    }
}
