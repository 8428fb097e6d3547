//! File-system helpers: private directories and files, and the one way a file is replaced
//! atomically (`write_atomic`). The journal's directory is hostile ground (a cloned repository
//! can commit files and links into it; another user can pre-create it): nothing here follows a
//! link, opens a special file, or reads more than a file's own size.

use crate::error::{IoContext, Result};
use crate::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

pub(crate) use crate::door::by_path::{
    list_numbered, open_error, open_in_place, open_in_place_sized, open_write, open_write_sized,
    sync_dir, sync_tree, write_atomic_with,
};
/// The journal's by-path file primitives live in the door (`door::by_path`); named here too.
pub use crate::door::by_path::{
    open_read, read_regular, read_small, write_atomic, write_marker, Durability,
};

/// Creates `path` and any missing parents (mode 0700). A new directory's name is durable only
/// once its parent is synced, so each parent that gained one is synced.
pub(crate) fn create_dir(path: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut p = Some(path);
    while let Some(d) = p {
        match crate::door::status(d) {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(d);
                p = d.parent().filter(|p| !p.as_os_str().is_empty());
            }
            Err(e) => return Err(e).ctx(|| format!("creating {}", path.display())),
        }
    }
    for d in missing.iter().rev() {
        match crate::door::by_path::make_dir(d, crate::DIR_MODE) {
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
    match crate::door::status(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).ctx(|| format!("reading {}", dir.display())),
        // A link or a file: `check_journal_dir` refuses it for what it is.
        Ok(m) if !m.is_dir() => return Ok(()),
        Ok(_) => {}
    }
    let is = |name: &str, dir_wanted: bool| {
        crate::door::status(dir.join(name)).is_ok_and(|m| {
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
    let rd = crate::door::by_path::read_dir(dir).ctx(|| format!("listing {}", dir.display()))?;
    let stranger = rd
        .into_iter()
        .take(4096)
        .map(|e| e.name)
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
    use std::os::unix::fs::MetadataExt;
    check_adoptable(dir)?;
    let me = euid();
    for (i, d) in std::iter::once(dir.to_path_buf())
        .chain(SUBDIRS.iter().map(|s| dir.join(s)))
        .enumerate()
    {
        let m = match crate::door::status(&d) {
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
            // Through the directory's own descriptor, opened through no link: a name swapped
            // for a link meanwhile changes nothing elsewhere.
            crate::door::Dir::open_nofollow(&d)
                .and_then(|h| h.fchmod(crate::DIR_MODE))
                .ctx(|| format!("making {} private", d.display()))?;
        }
    }
    Ok(())
}

/// Entries under `dir` (recursively) that the journal never makes: symbolic links, special
/// files, entries another user owns. As (path, what it is).
pub fn strangers(dir: &Path) -> Vec<(PathBuf, String)> {
    let me = owner(dir).unwrap_or_else(euid);
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = crate::door::by_path::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let what = if e.st.st_mode & libc::S_IFMT == libc::S_IFLNK {
                Some("a symbolic link (never followed)".to_string())
            } else if e.st.st_uid != me {
                Some(format!("owned by another user (uid {})", e.st.st_uid))
            } else if e.is_dir() {
                todo.push(e.path.clone());
                None
            } else if !e.is_file() {
                Some("a special file (not something the journal makes)".to_string())
            } else {
                None
            };
            if let Some(w) = what {
                out.push((e.path, w));
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
    match crate::door::status(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Unsafe {
            path: dir.to_path_buf(),
            what: "it is a symbolic link, which the journal never follows".into(),
        }),
        _ => Ok(()),
    }
}

/// The spool's directory, inside the journal's (named here, below every module that needs the
/// name; `spool::SPOOL_DIR` is this).
pub const SPOOL_DIR: &str = "spool";

/// The origin marker's name in the journal's directory (`origin::FILE` is this).
pub const ORIGIN: &str = "origin";

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

/// The last component of `path`, as text (empty when there is none).
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;
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
