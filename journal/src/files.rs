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

pub(crate) fn create_dir(path: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(crate::DIR_MODE)
        .create(path)
        .ctx(|| format!("creating {}", path.display()))
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
