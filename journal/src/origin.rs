//! Whether a journal was made here: its origin marker (`origin`), written when the journal is
//! made, ties it to its directory — the directory's inode and canonical path, hashed. A journal
//! without a matching marker came from somewhere else (committed to a repository and checked
//! out, copied or moved, made on another machine) and is *foreign*: it may be read, but hooks
//! neither record into it nor inject anything from it until the user adopts it
//! (`hookjournal trust`). Checking costs one `read` of under 512 bytes and two `stat`s.
//!
//! A journal made before markers existed has none. It is taken as made here, and marked at its
//! next write, when it looks as only hookjournal leaves a journal and as no checkout does: its
//! directory and its store's files are this user's with no group or other permission at all
//! (hookjournal makes them 0700 and 0600; git checks files out 0644 or 0664 under the usual
//! umasks), and the repository's index (`.git/index` beside it, read bounded) names no file under
//! it. Anything else — a checkout, a copy with other modes, a `.git` that cannot be read — is
//! foreign, and the user adopts it once (`hookjournal trust`). The rule's limit: a repository
//! cloned under `umask 077` whose journal was force-added and is then untracked, or a journal
//! copied with its modes from another machine (`rsync -a`, a tarball), passes as one's own.

use crate::error::{IoContext, Result};
use crate::files::{is_present, write_atomic, Durability};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The marker's file name in the journal's directory.
pub use crate::files::ORIGIN as FILE;

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
    let ino = crate::door::status(dir)
        .ctx(|| format!("reading {}", dir.display()))?
        .ino();
    let path =
        crate::door::by_path::canonical(dir).ctx(|| format!("resolving {}", dir.display()))?;
    let text = format!("{MAGIC}\nkey {}\ndir {}\n", key(ino, &path), path.display());
    write_atomic(dir, FILE, text.as_bytes(), Durability::Durable)
}

/// Whether `dir` holds events or the start of a store (a journal, not just its settings).
pub(crate) fn has_history(dir: &Path) -> bool {
    ["CURRENT", crate::files::SPOOL_DIR, "wal", "segments"]
        .iter()
        .any(|n| is_present(&dir.join(n)))
}

/// A journal with no marker that only hookjournal can have left (see the module's comment): this
/// user's, private to them, and in no repository's index.
pub(crate) fn made_here_before_markers(dir: &Path) -> bool {
    let private = |st: &libc::stat| st.st_uid == crate::files::euid() && st.st_mode & 0o077 == 0;
    let Ok(d) = crate::door::Dir::open_nofollow(dir) else {
        return false;
    };
    let dir_private = d.stat().is_ok_and(|st| private(&st));
    let store_private = [
        "CURRENT",
        "lock",
        crate::files::SPOOL_DIR,
        "wal",
        "segments",
    ]
    .iter()
    .all(|n| match d.lstat(Path::new(n)) {
        Ok(Some(st)) => private(&st),
        Ok(None) => true,
        Err(_) => false,
    });
    dir_private && store_private && !in_git_index(dir)
}

/// Whether the index of the repository the journal's directory sits in (`.git/index` beside it)
/// names a path under it; `true` when that cannot be told (a `.git` that is a file or a link, an
/// index that does not read, one over 256 MiB).
fn in_git_index(dir: &Path) -> bool {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return true;
    };
    let index = crate::door::Dir::open_nofollow(parent)
        .and_then(|p| p.read_if_present(Path::new(".git/index"), 256 << 20));
    let index = match index {
        Ok(Some(b)) => b,
        // No repository (or one with no index yet): nothing of it is tracked.
        Ok(None) => return false,
        Err(_) => return true,
    };
    // Index paths are plain in versions 2 and 3; version 4 shares a prefix with the path before,
    // which the directory's own name and its `/` still follow (`hookjournal/CURRENT`).
    let mut needle = name.as_bytes().to_vec();
    needle.push(b'/');
    let needle = needle.strip_prefix(b".").unwrap_or(&needle).to_vec();
    index.windows(needle.len()).any(|w| w == needle.as_slice())
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
    let Ok(m) = crate::door::status(dir) else {
        return Origin::Unmade;
    };
    if !m.is_dir() {
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
                || crate::door::by_path::canonical(dir).is_ok_and(|p| matches(&p));
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
            // Not a journal at all (refused for that, elsewhere), or none yet. Asked only here:
            // a marked journal, the hook's every call, is known by its marker's one read.
            if crate::files::check_adoptable(dir).is_err() || !has_history(dir) {
                return Origin::Unmade;
            }
            if made_here_before_markers(dir) {
                // Marked now, once: the next check is the marker's one read, never the index's.
                let _ = mark(dir);
                return Origin::Ours;
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

    /// A journal as a pre-marker hookjournal left it in `project`: a store file and the lock,
    /// in a directory, with `mode` on all three.
    fn before_markers(project: &Path, mode: u32) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = project.join(".hookjournal");
        std::fs::create_dir(&dir).unwrap();
        for f in ["CURRENT", "lock"] {
            std::fs::write(dir.join(f), b"x").unwrap();
            std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let dir_mode = if mode == 0o600 { 0o700 } else { 0o755 };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(dir_mode)).unwrap();
        dir
    }

    /// Given journals with no marker, when their origin is asked, then one private to this user
    /// and in no repository's index is this user's (a hookjournal before markers made it); one
    /// with a checkout's modes, or one the repository's index names, is foreign.
    #[test]
    fn an_unmarked_journal_is_ours_only_as_hookjournal_alone_leaves_one() {
        let t = tempfile::tempdir().unwrap();
        let ours = before_markers(&mkdir(t.path().join("a")), 0o600);
        assert_eq!(status(&ours), Origin::Ours);
        // Marked as it was found: from now on the marker alone says so.
        assert!(is_present(&ours.join(FILE)));
        let checked_out = before_markers(&mkdir(t.path().join("b")), 0o644);
        assert!(matches!(status(&checked_out), Origin::Foreign(_)));
        let tracked = before_markers(&mkdir(t.path().join("c")), 0o600);
        std::fs::create_dir(t.path().join("c/.git")).unwrap();
        std::fs::write(
            t.path().join("c/.git/index"),
            b"DIRC\0\0\0\x02....\0.hookjournal/CURRENT\0",
        )
        .unwrap();
        assert!(matches!(status(&tracked), Origin::Foreign(_)));
        std::fs::write(
            t.path().join("c/.git/index"),
            b"DIRC\0\0\0\x02....src/main.rs\0",
        )
        .unwrap();
        assert_eq!(status(&tracked), Origin::Ours);
    }

    fn mkdir(p: std::path::PathBuf) -> std::path::PathBuf {
        std::fs::create_dir_all(&p).unwrap();
        p
    }

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
        // Unmarked with events, and not as private as hookjournal makes a journal: foreign.
        std::fs::remove_file(copy.join(FILE)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(status(&copy), Origin::Foreign(_)));
    }
}
