//! File-system helpers: private directories and files, and the one way a file is replaced
//! atomically (`write_atomic`). The journal's directory is hostile ground (a cloned repository
//! can commit files and links into it; another user can pre-create it): nothing here follows a
//! link, opens a special file, or reads more than a file's own size.

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

/// The user this process runs as.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and touches no memory.
    unsafe { libc::geteuid() }
}

/// Whether `path` exists (as itself: a link is not followed).
pub fn is_present(path: &Path) -> bool {
    crate::door::lstat(path).is_ok_and(|st| st.is_some())
}

/// Who owns the journal directory `dir` (`None`: it does not exist).
pub fn owner(dir: &Path) -> Option<u32> {
    crate::door::lstat(dir).ok().flatten().map(|st| st.st_uid)
}

/// The directories of a journal, besides the journal's own.
const SUBDIRS: [&str; 5] = ["wal", "hot", "state", "segments", "spool"];

/// The name of a project's journal directory.
pub const JOURNAL_DIR_NAME: &str = ".hookjournal";

/// What `.gitignore` holds in a journal hookjournal made (its first write).
pub const GITIGNORE: &[u8] = b"*\n";

/// A name the journal gives an entry of its directory (a damaged or half-made journal may hold
/// only some of them).
fn is_journal_name(name: &str) -> bool {
    const NAMES: [&str; 22] = [
        "CURRENT",
        "ROTATING",
        "ACTIVE_EMPTY",
        "REBUILDING",
        "STALE",
        "lock",
        "lock.wanted",
        "drain.running",
        "incidents",
        "incidents.unread",
        "incidents.old",
        "journal-id",
        "config.toml",
        ".gitignore",
        ORIGIN,
        "wal",
        "hot",
        "state",
        "segments",
        "spool",
        "statusline",
        "search",
    ];
    NAMES.contains(&name)
        || name.starts_with("active-")
        || (name.starts_with('.') && name.ends_with(".tmp"))
}

/// Refuses a directory hookjournal did not make and that is not a journal (`HOOKJOURNAL_DIR` or
/// `--journal` naming `~/projects`, `/etc`, a typo): its mode and contents stay as they are.
/// A directory may be used when it does not exist yet (it is created), when it is a project's
/// `.hookjournal` (where a repository's `config.toml` lives), when it is empty (made with
/// `mkdir` for the purpose), when it holds a journal's own files (`CURRENT`, the `.gitignore` of
/// `*` the journal writes first, `wal/`, `hot/`), or when it holds nothing but names a journal
/// gives its files (`config.toml` written before the first event, a half-made store). A project's
/// `.hookjournal` costs no system call; any other name a few `lstat`s.
pub fn check_adoptable(dir: &Path) -> Result<()> {
    if dir.file_name().is_some_and(|n| n == JOURNAL_DIR_NAME) {
        return Ok(());
    }
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).ctx(|| format!("reading {}", dir.display())),
        // A link or a file: `check_journal_dir` refuses it for what it is.
        Ok(m) if !m.is_dir() => return Ok(()),
        Ok(_) => {}
    }
    let is = |name: &str, dir_wanted: bool| {
        fs::symlink_metadata(dir.join(name)).is_ok_and(|m| {
            if dir_wanted {
                m.is_dir()
            } else {
                m.is_file()
            }
        })
    };
    let journal_gitignore =
        || read_small(&dir.join(".gitignore"), 64).is_ok_and(|b| b == GITIGNORE);
    if is("CURRENT", false) || journal_gitignore() || is("wal", true) || is("hot", true) {
        return Ok(());
    }
    // The first stranger by name, so that what is said does not depend on the directory's order.
    let rd = fs::read_dir(dir).ctx(|| format!("listing {}", dir.display()))?;
    let stranger = rd
        .flatten()
        .take(4096)
        .map(|e| e.file_name())
        .filter(|n| !n.to_str().is_some_and(is_journal_name))
        .min();
    match stranger {
        None => Ok(()),
        Some(name) => Err(Error::Unsafe {
            path: dir.to_path_buf(),
            what: format!(
                "it is no journal and hookjournal did not make it (it holds {:?}), so it is left \
                 as it is: name a new or empty directory, or a journal",
                name
            ),
        }),
    }
}

/// Checks the journal's directory before anything in it is used: it and its subdirectories are
/// real directories (no links), owned by the running user, and private (group or world write
/// access, e.g. a directory another user pre-created or a clone's umask gave, is taken away).
/// A journal owned by another user is `ReadOnly`: it may be read, never written — root
/// included, so it never leaves files the owner cannot use.
pub fn check_journal_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    check_adoptable(dir)?;
    let me = euid();
    for (i, d) in std::iter::once(dir.to_path_buf())
        .chain(SUBDIRS.iter().map(|s| dir.join(s)))
        .enumerate()
    {
        let m = match fs::symlink_metadata(&d) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if i == 0 {
                    return Err(Error::NotFound(dir.to_path_buf()));
                }
                continue;
            }
            Err(e) => return Err(e).ctx(|| format!("reading {}", d.display())),
        };
        if m.file_type().is_symlink() || !m.is_dir() {
            return Err(Error::Unsafe {
                path: d,
                what: if m.file_type().is_symlink() {
                    "it is a symbolic link, which the journal never follows".into()
                } else {
                    "it is not a directory".into()
                },
            });
        }
        if m.uid() != me {
            if i == 0 {
                return Err(Error::ReadOnly(dir.to_path_buf()));
            }
            return Err(Error::Unsafe {
                path: d,
                what: format!("it belongs to another user (uid {})", m.uid()),
            });
        }
        if m.mode() & 0o077 != 0 {
            fs::set_permissions(&d, fs::Permissions::from_mode(crate::DIR_MODE))
                .ctx(|| format!("making {} private", d.display()))?;
        }
    }
    Ok(())
}

/// Entries under `dir` (recursively) that the journal never makes: symbolic links, special
/// files, entries another user owns. As (path, what it is).
pub fn strangers(dir: &Path) -> Vec<(PathBuf, String)> {
    use std::os::unix::fs::MetadataExt;
    let me = owner(dir).unwrap_or_else(euid);
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            let what = if m.file_type().is_symlink() {
                Some("a symbolic link (never followed)".to_string())
            } else if m.uid() != me {
                Some(format!("owned by another user (uid {})", m.uid()))
            } else if m.is_dir() {
                todo.push(e.path());
                None
            } else if !m.is_file() {
                Some("a special file (not something the journal makes)".to_string())
            } else {
                None
            };
            if let Some(w) = what {
                out.push((e.path(), w));
            }
        }
    }
    out.sort();
    out
}

/// Refuses a directory the journal is about to hand to another library (sled opens its own
/// files): any link or special file in it is `Unsafe`.
pub(crate) fn check_tree(dir: &Path) -> Result<()> {
    if let Some((path, what)) = strangers(dir).into_iter().next() {
        return Err(Error::Unsafe { path, what });
    }
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Unsafe {
            path: dir.to_path_buf(),
            what: "it is a symbolic link, which the journal never follows".into(),
        }),
        _ => Ok(()),
    }
}

/// Reads a small control file whole (`CURRENT`, a marker): a regular file reached without a
/// link, at most `cap` bytes.
pub fn read_small(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = open_read(path)?;
    if f.metadata()?.len() > cap {
        return Err(std::io::Error::other(format!(
            "larger than {cap} bytes, which it never is"
        )));
    }
    let mut out = Vec::new();
    f.take(cap).read_to_end(&mut out)?;
    Ok(out)
}

/// The spool's directory, inside the journal's (named here, below every module that needs the
/// name; `spool::SPOOL_DIR` is this).
pub const SPOOL_DIR: &str = "spool";

/// The origin marker's name in the journal's directory (`origin::FILE` is this).
pub const ORIGIN: &str = "origin";

/// Reads a journal file whole (a regular file reached without a link: its size bounds the read).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = open_read(path)?;
    let mut out = Vec::with_capacity(f.metadata()?.len() as usize);
    f.read_to_end(&mut out)?;
    Ok(out)
}

/// Opens a journal file to write in place, created (mode 0600) when missing: never through a
/// link, never blocking on a FIFO, only a regular file with one link (a hard link planted in the
/// journal would have the write, or root's `fchown`, land in a file elsewhere); with `append`,
/// every write goes to its end.
pub(crate) fn open_in_place(path: &Path, append: bool) -> std::io::Result<File> {
    use std::os::unix::fs::MetadataExt;
    let f = fs::OpenOptions::new()
        .read(!append)
        .write(true)
        .append(append)
        .create(true)
        .truncate(false)
        .mode(crate::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if m.nlink() != 1 {
        return Err(std::io::Error::other(format!(
            "it has {} hard links, and a file written in place must have one",
            m.nlink()
        )));
    }
    Ok(f)
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
        // A leftover of a killed process that had this pid: never acknowledged, replaced.
        let mut f = match create_private(&tmp) {
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::AlreadyExists => {
                let _ = fs::remove_file(&tmp);
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
    fn only_a_new_empty_or_journal_directory_is_adopted() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        assert!(check_adoptable(&p("new")).is_ok());
        fs::create_dir(p("empty")).unwrap();
        assert!(check_adoptable(&p("empty")).is_ok());
        fs::create_dir(p("settings")).unwrap();
        fs::write(p("settings/config.toml"), "").unwrap();
        assert!(check_adoptable(&p("settings")).is_ok());
        fs::create_dir(p("journal")).unwrap();
        fs::write(p("journal/.gitignore"), GITIGNORE).unwrap();
        fs::write(p("journal/anything"), "").unwrap();
        assert!(check_adoptable(&p("journal")).is_ok());
        // A project's root: its own `.gitignore`, its files.
        fs::create_dir_all(p("project/spool")).unwrap();
        fs::write(p("project/.gitignore"), "target/\n").unwrap();
        fs::write(p("project/notes.txt"), "").unwrap();
        let err = check_adoptable(&p("project")).unwrap_err().to_string();
        assert!(err.contains("\"notes.txt\""), "{err}");
        fs::create_dir_all(p("x/.hookjournal/whatever")).unwrap();
        assert!(check_adoptable(&p("x/.hookjournal")).is_ok());
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
