//! File-system helpers: private directories and files, and the one way a file is replaced
//! atomically (`write_atomic`).

use crate::error::{IoContext, Result};
use crate::Error;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// How much `write_atomic` does to make a replacement survive a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// The temp file is fsynced before the rename and its directory after: once the call
    /// returns, the new content survives a crash or power loss.
    Durable,
    /// Rename only: readers never see a partial file, but after a crash the old content (or
    /// none) may be there. For caches that are rebuilt anyway.
    Volatile,
}

/// Creates `path` and any missing parents (mode 0700). A new directory's name is durable only
/// once its parent is synced, so each parent that gained one is synced.
pub(crate) fn create_dir(path: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut p = Some(path);
    while let Some(d) = p {
        match fs::symlink_metadata(d) {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(d);
                p = d.parent().filter(|p| !p.as_os_str().is_empty());
            }
            Err(e) => return Err(e).ctx(|| format!("creating {}", path.display())),
        }
    }
    for d in missing.iter().rev() {
        match fs::DirBuilder::new().mode(crate::DIR_MODE).create(d) {
            Ok(()) => {}
            // Another process made it meanwhile: it is there all the same.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).ctx(|| format!("creating {}", d.display())),
        }
        if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

/// Creates `path` (see `create_dir`) unless it exists.
pub(crate) fn ensure_dir(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    create_dir(path)
}

/// Opens a journal file for reading: never through a link, never blocking on a FIFO, and only
/// a regular file.
pub(crate) fn open_read(path: &Path) -> std::io::Result<File> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    regular(f)
}

/// Opens an existing journal file for reading and writing (see `open_read`).
pub(crate) fn open_write(path: &Path) -> Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(regular)
        .map_err(|e| open_error(path, e))
}

fn regular(f: File) -> std::io::Result<File> {
    if f.metadata()?.is_file() {
        Ok(f)
    } else {
        Err(std::io::Error::other("not a regular file"))
    }
}

/// The one-line error for a journal file that did not open (a link is said to be one).
pub(crate) fn open_error(path: &Path, e: std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Error::Io {
            context: format!("opening {}", path.display()),
            cause: std::io::Error::other("it is a symbolic link, which the journal never follows"),
        };
    }
    Error::Io {
        context: format!("opening {}", path.display()),
        cause: e,
    }
}

/// A name part no other call of this process, or another process, has made: nanoseconds, pid
/// and a counter.
pub(crate) fn unique_stamp() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{ns}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Syncs every file under `dir`, each directory in it, `dir` itself and its parent: what sled
/// leaves only "flushed" (written, not synced) is durable after it.
pub(crate) fn sync_tree(dir: &Path) -> Result<()> {
    fn walk(d: &Path) -> Result<()> {
        let rd = fs::read_dir(d).ctx(|| format!("listing {}", d.display()))?;
        for e in rd {
            let e = e.ctx(|| format!("listing {}", d.display()))?;
            let t = e
                .file_type()
                .ctx(|| format!("reading {}", e.path().display()))?;
            if t.is_dir() {
                walk(&e.path())?;
            } else if t.is_file() {
                File::open(e.path())
                    .and_then(|f| f.sync_all())
                    .ctx(|| format!("syncing {}", e.path().display()))?;
            }
        }
        sync_dir(d)
    }
    walk(dir)?;
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => sync_dir(p),
        _ => Ok(()),
    }
}

/// Creates (or truncates) a file only its owner can read: the journal holds prompts and output.
fn create_private(path: &Path) -> Result<File> {
    fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(crate::FILE_MODE)
        .open(path)
        .ctx(|| format!("creating {}", path.display()))
}

/// Files of `dir` named `<number><suffix>`, in number order (a missing `dir` has none).
pub(crate) fn list_numbered(dir: &Path, suffix: &str) -> Result<Vec<(u64, PathBuf)>> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::Io {
                context: format!("listing {}", dir.display()),
                cause: e,
            })
        }
    };
    let mut out: Vec<(u64, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_suffix(suffix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The last component of `path`, as text (empty when there is none).
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(crate) fn sync_dir(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|d| d.sync_all())
        .ctx(|| format!("syncing {}", path.display()))
}

/// Replaces `dir/name` with `bytes` atomically: see `write_atomic_with`.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8], durability: Durability) -> Result<()> {
    write_atomic_with(dir, name, durability, |f| f.write_all(bytes))
}

/// Replaces `dir/name` atomically with what `fill` writes: a temp file unique to this process
/// (`.<name>.<pid>.<n>.tmp`, mode 0600), renamed over the target, with the fsyncs `durability`
/// asks for. A failed write removes the temp file. Two processes writing the same file race
/// harmlessly (the last rename wins).
pub(crate) fn write_atomic_with(
    dir: &Path,
    name: &str,
    durability: Durability,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let res = (|| {
        let mut f = create_private(&tmp)?;
        fill(&mut f).ctx(|| format!("writing {}", tmp.display()))?;
        if durability == Durability::Durable {
            f.sync_all().ctx(|| format!("syncing {}", tmp.display()))?;
        }
        drop(f);
        fs::rename(&tmp, dir.join(name)).ctx(|| format!("renaming {}", tmp.display()))
    })();
    if res.is_err() {
        // A full disk: leave no partial file behind.
        let _ = fs::remove_file(&tmp);
    }
    res?;
    match durability {
        Durability::Durable => sync_dir(dir),
        Durability::Volatile => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_replaced_file_is_private_and_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        for durability in [Durability::Durable, Durability::Volatile] {
            fs::write(d.path().join("f"), b"old").unwrap();
            fs::set_permissions(d.path().join("f"), fs::Permissions::from_mode(0o644)).unwrap();
            write_atomic(d.path(), "f", b"new", durability).unwrap();
            assert_eq!(fs::read(d.path().join("f")).unwrap(), b"new");
            let mode = fs::metadata(d.path().join("f"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, crate::FILE_MODE);
            let names: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().collect();
            assert_eq!(names.len(), 1, "{names:?}");
        }
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temp_file() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("f"), b"old").unwrap();
        let err = write_atomic_with(d.path(), "f", Durability::Durable, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(
            matches!(&err, Error::Io { cause, .. } if cause.to_string() == "disk full"),
            "{err}"
        );
        assert_eq!(fs::read(d.path().join("f")).unwrap(), b"old");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
