//! The journal's own files opened by path, every one through no link at its last component
//! (`O_NOFOLLOW`), never blocking (`O_NONBLOCK`), a regular file only: the journal's directory
//! is checked first (`files::check_journal_dir`: ours, never a link), so a name in it is the
//! only component a clone or another user could have swapped. Markers, control files, atomic
//! replaces (a temp file renamed in the same directory) and the syncs durability needs.

use crate::error::{IoContext, Result};
use crate::Error;
use std::fs::{self, File};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
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

/// Reads a small control file whole (`CURRENT`, a marker): a regular file reached without a
/// link, at most `cap` bytes.
pub fn read_small(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (f, len) = open_regular(path)?;
    if len > cap {
        return Err(std::io::Error::other(format!(
            "larger than {cap} bytes, which it never is"
        )));
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(cap).read_to_end(&mut out)?;
    Ok(out)
}

/// Reads a journal file whole (a regular file reached without a link: its size bounds the read).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (f, len) = open_regular(path)?;
    let mut out = Vec::with_capacity(len as usize);
    // Through `take`: `File`'s own `read_to_end` would stat the file and seek again to size
    // the buffer that is sized already (two system calls a file, five files a hook; issue 43).
    f.take(u64::MAX).read_to_end(&mut out)?;
    Ok(out)
}

/// Opens a journal file to write in place, created (mode 0600) when missing: never through a
/// link, never blocking on a FIFO, only a regular file with one link (a hard link planted in the
/// journal would have the write, or root's `fchown`, land in a file elsewhere); with `append`,
/// every write goes to its end.
pub(crate) fn open_in_place(path: &Path, append: bool) -> std::io::Result<File> {
    open_in_place_sized(path, append).map(|(f, _)| f)
}

/// `open_in_place`, with the file's length as it was opened.
pub(crate) fn open_in_place_sized(path: &Path, append: bool) -> std::io::Result<(File, u64)> {
    let f = fs::OpenOptions::new()
        .read(!append)
        .write(true)
        .append(append)
        .create(true)
        .truncate(false)
        .mode(crate::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let st = super::fstat(f.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(std::io::Error::other("not a regular file"));
    }
    if st.st_nlink != 1 {
        return Err(std::io::Error::other(format!(
            "it has {} hard links, and a file written in place must have one",
            st.st_nlink
        )));
    }
    Ok((f, st.st_size as u64))
}

/// Writes a marker file in place (created mode 0600 when missing), never through a link.
pub fn write_marker(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = open_in_place(path, false)?;
    f.set_len(0)?;
    f.write_all(bytes)
}

/// Opens a journal file for reading: never through a link, never blocking on a FIFO, and only
/// a regular file.
pub fn open_read(path: &Path) -> std::io::Result<File> {
    open_regular(path).map(|(f, _)| f)
}

/// `open_read`, with the file's length (one `fstat` for both checks).
fn open_regular(path: &Path) -> std::io::Result<(File, u64)> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let st = super::fstat(f.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT == libc::S_IFREG {
        Ok((f, st.st_size as u64))
    } else {
        Err(std::io::Error::other("not a regular file"))
    }
}

/// Opens an existing journal file for reading and writing (see `open_read`).
pub(crate) fn open_write(path: &Path) -> Result<File> {
    open_write_sized(path).map(|(f, _)| f)
}

/// `open_write`, with the file's length (one `fstat` for the check and the length).
pub(crate) fn open_write_sized(path: &Path) -> Result<(File, u64)> {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|f| {
            let st = super::fstat(f.as_raw_fd())?;
            if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                Ok((f, st.st_size as u64))
            } else {
                Err(std::io::Error::other("not a regular file"))
            }
        })
        .map_err(|e| open_error(path, e))
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
        .create_new(true)
        .write(true)
        .mode(crate::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
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
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_suffix(suffix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    out.sort();
    Ok(out)
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
        // A leftover of a killed process that had this pid: never acknowledged, replaced.
        let mut f = match create_private(&tmp) {
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::AlreadyExists => {
                let _ = crate::door::unlink(&tmp);
                create_private(&tmp)?
            }
            other => other?,
        };
        fill(&mut f).ctx(|| format!("writing {}", tmp.display()))?;
        if durability == Durability::Durable {
            f.sync_all().ctx(|| format!("syncing {}", tmp.display()))?;
        }
        drop(f);
        fs::rename(&tmp, dir.join(name)).ctx(|| format!("renaming {}", tmp.display()))
    })();
    if res.is_err() {
        // A full disk: leave no partial file behind.
        let _ = crate::door::unlink(&tmp);
    }
    res?;
    match durability {
        Durability::Durable => sync_dir(dir),
        Durability::Volatile => Ok(()),
    }
}

/// An entry of a journal directory listed through its handle (`read_dir`): its name, its path,
/// and its status as itself (a link is described, never followed).
pub struct Entry {
    /// Its name in the directory.
    pub name: std::ffi::OsString,
    /// The directory's path joined with its name (for messages and by-path calls).
    pub path: PathBuf,
    /// Its status as itself (`fstatat(AT_SYMLINK_NOFOLLOW)`).
    pub st: libc::stat,
}

impl Entry {
    /// Its name, as `std::fs::DirEntry::file_name`.
    pub fn file_name(&self) -> &std::ffi::OsStr {
        &self.name
    }
    /// A directory (not a link to one).
    pub fn is_dir(&self) -> bool {
        self.st.st_mode & libc::S_IFMT == libc::S_IFDIR
    }
    /// A regular file (not a link to one).
    pub fn is_file(&self) -> bool {
        self.st.st_mode & libc::S_IFMT == libc::S_IFREG
    }
    /// Its size in bytes.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.st.st_size as u64
    }
}

/// The entries of the directory `dir`, opened through no link at its last component
/// (`Dir::open_nofollow`): a journal's subdirectory swapped for a link lists nothing of the
/// link's target, so nothing there is removed or renamed by what the listing names.
pub fn read_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let d = crate::door::Dir::open_nofollow(dir)?;
    Ok(d.entries()?
        .into_iter()
        .map(|(name, st)| Entry {
            path: dir.join(&name),
            name,
            st,
        })
        .collect())
}

/// Renames `from` to `to` by path, within a journal directory already checked (a name of it
/// is replaced; a link at `from` is renamed, not followed).
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::rename(from, to)
}

/// Removes the tree at `path` (a link there is removed, never followed into: std's
/// `remove_dir_all` walks with `openat(O_NOFOLLOW)`).
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    fs::remove_dir_all(path)
}

/// `path` resolved to an absolute path without links (the journal's identity in its origin
/// marker: where it is, said as the kernel sees it).
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    fs::canonicalize(path)
}

/// Opens `path` to read, never through a link at its last component and never blocking, of
/// whatever type it is: the caller says what else it is (the config reader names a FIFO or a
/// directory in its one line).
pub fn open_nofollow(path: &Path) -> std::io::Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Opens `path` to read and write, created (mode 0600) when missing, never through a link, never
/// blocking, never truncated: the journal's `lock`, which is only ever `flock`ed.
pub fn open_or_create(path: &Path) -> std::io::Result<File> {
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(crate::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Creates `path` to read and write (`O_CREAT | O_EXCL`, mode 0600), never an existing file,
/// never through a link: a log's mirror created beside it.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(crate::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Creates the directory `path` (mode `mode`) by path; its parent is one the caller checked.
pub fn make_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().mode(mode).create(path)
}
