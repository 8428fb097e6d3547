//! The spool: where an invocation goes when the journal's lock cannot be had within the budget.
//!
//! Each spooled event is one file, written to a temp name, fsynced and renamed, so a reader sees it
//! whole or not at all. Names sort by arrival (`<stamp>-<pid>-<counter>`, the stamp from a clock
//! shared by every writer of the spool that never goes back, see `next_stamp`), and the next
//! process that holds the lock drains them in that order. A drained file's id is committed in
//! the same batch as its event, so a crash between commit and unlink never ingests it twice.
//!
//! A spool file is trusted only from the journal's owner: a file another user could write into
//! `spool/` (a checksum is not an author) is never ingested; `verify` names it.
//!
//! A file is `HJSPOOL2`, the blake3 of the body, then the body (a bincode `NewEvent`): a
//! damaged file is caught before it could be ingested as a genuine event. (Files without the
//! magic were written by 0.1.0 and are read as bare bodies.)

use crate::door;
use crate::envelope::{bincode_config, NewEvent};
use crate::error::{IoContext, Result};
use crate::files;
use crate::{DamagePlace, Error};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The spool's directory, inside the journal's.
pub use crate::files::SPOOL_DIR;
const SUFFIX: &str = ".spool";
const MAGIC: &[u8; 8] = b"HJSPOOL2";
/// The spool's shared clock, in the journal's directory (see `next_stamp`).
const CLOCK: &str = "spool.clock";

/// A spooled event's file.
#[derive(Clone, Debug)]
pub struct SpoolEntry {
    /// Its id: `<unix ns>-<pid>-<counter>`, so ids sort by arrival.
    pub id: String,
    /// The file, `spool/<id>.spool`.
    pub path: PathBuf,
}

/// Writes `ev` to the spool of journal `dir` durably; returns its id.
///
/// Only the journal's owner writes it — or root, on the owner's behalf: the file (and a spool
/// directory root creates) is handed to the owner, so root never leaves a file the owner's
/// journal cannot use. Anyone else gets `ReadOnly`.
pub fn write(dir: &Path, ev: &NewEvent) -> Result<String> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let on_behalf = on_behalf_of(dir)?;
    let spool = open_spool(dir, on_behalf)?;
    let id = format!(
        "{:020}-{:010}-{:06}",
        next_stamp(dir, on_behalf),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let body = bincode::serde::encode_to_vec(ev, bincode_config())
        .expect("encoding an event into a Vec cannot fail");
    let mut bytes = Vec::with_capacity(body.len() + 40);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(blake3::hash(&body).as_bytes());
    bytes.extend_from_slice(&body);
    let name = format!("{id}{SUFFIX}");
    // Created, renamed and synced through the `spool/` handle: swapping `spool` for a link
    // meanwhile changes nothing of where the file lands.
    spool
        .replace_with(Path::new(&name), crate::FILE_MODE, true, |f| {
            use std::io::Write;
            if let Some((uid, gid)) = on_behalf {
                door::fchown(f, uid, gid)?;
            }
            f.write_all(&bytes)
        })
        .ctx(|| format!("writing {}", spool.path().join(&name).display()))?;
    Ok(id)
}

/// The journal's `spool/` as a handle, created (and, for root, handed to the owner through
/// the handle) when missing; a link or anything but a directory there is refused.
fn open_spool(dir: &Path, on_behalf: Option<(u32, u32)>) -> Result<door::Dir> {
    let path = dir.join(SPOOL_DIR);
    match door::Dir::open_nofollow(&path) {
        Ok(d) => Ok(d),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            files::create_dir(&path)?;
            let d =
                door::Dir::open_nofollow(&path).ctx(|| format!("opening {}", path.display()))?;
            if let Some((uid, gid)) = on_behalf {
                d.fchown(uid, gid)
                    .ctx(|| format!("giving {} to its journal's owner", path.display()))?;
            }
            Ok(d)
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
            Err(not_a_spool(&path))
        }
        Err(e) => Err(e).ctx(|| format!("opening {}", path.display())),
    }
}

/// `None` when the running user owns the journal; `Some(owner)` when root writes for its owner;
/// `ReadOnly` for anyone else.
fn on_behalf_of(dir: &Path) -> Result<Option<(u32, u32)>> {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = crate::door::status(dir) else {
        return Ok(None);
    };
    let me = files::euid();
    if m.uid() == me {
        Ok(None)
    } else if me == 0 {
        Ok(Some((m.uid(), m.gid())))
    } else {
        Err(Error::ReadOnly(dir.to_path_buf()))
    }
}

/// The next stamp of the spool's shared clock: the wall clock in nanoseconds, but never less
/// than one past the last stamp any writer took (`spool.clock`, 8 bytes read and advanced under
/// its own `flock`, held for two small I/Os), so a clock stepped back never reorders arrivals.
/// The file is not synced: after a power cut it may be older, and the wall clock (which moved
/// on meanwhile) takes over again. Anything wrong with it falls back to the wall clock: a link,
/// a special file, or a hard link (root would write into, and hand over, a file elsewhere).
/// Root hands the clock to the journal's owner through its open descriptor, never by path.
fn next_stamp(dir: &Path, on_behalf: Option<(u32, u32)>) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    shared_clock(&dir.join(CLOCK), now, on_behalf).unwrap_or(now)
}

fn shared_clock(path: &Path, now: u64, on_behalf: Option<(u32, u32)>) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;
    let f = files::open_in_place(path, false).ok()?;
    if let Some((uid, gid)) = on_behalf {
        let _ = door::fchown(&f, uid, gid);
    }
    // SAFETY: flock on a descriptor we own; released when `f` is closed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return None;
    }
    let mut last = [0u8; 8];
    let last = match f.read_at(&mut last, 0) {
        Ok(8) => u64::from_le_bytes(last),
        _ => 0,
    };
    let next = now.max(last.saturating_add(1));
    f.write_all_at(&next.to_le_bytes(), 0).ok()?;
    Some(next)
}

/// The most a spool file may hold: a payload at the largest `payload_cap` (64 MiB) with its
/// envelope, four times over. A larger file is not read, and is left for `verify` to name.
const FILE_CAP: u64 = 1 << 28;

/// The journal's `spool/` as a handle (a link there is never followed); `None` when there is none.
fn spool_dir(dir: &Path) -> Result<Option<door::Dir>> {
    let path = dir.join(SPOOL_DIR);
    match door::Dir::open_nofollow(&path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
            Err(not_a_spool(&path))
        }
        Err(e) => Err(e).ctx(|| format!("listing {}", path.display())),
    }
}

/// Why `path` (a journal's `spool`) is not used: a link, or not a directory.
fn not_a_spool(path: &Path) -> Error {
    let what = match crate::door::status(path) {
        Ok(m) if m.file_type().is_symlink() => {
            "it is a symbolic link, which the journal never follows"
        }
        _ => "it is not a directory",
    };
    Error::Unsafe {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// The names of `spool/` through its handle, with their status (a link is seen as itself).
fn spool_entries(dir: &Path) -> Result<Vec<(String, libc::stat)>> {
    let Some(spool) = spool_dir(dir)? else {
        return Ok(Vec::new());
    };
    let entries = spool
        .entries()
        .ctx(|| format!("listing {}", spool.path().display()))?;
    Ok(entries
        .into_iter()
        .filter_map(|(name, st)| Some((name.into_string().ok()?, st)))
        .collect())
}

/// Spooled events in arrival order. Temp files (a writer killed mid-write) are skipped; they were
/// never acknowledged. `spool/` is read through a handle: swapped for a link, it lists nothing
/// of the link's target.
pub fn list(dir: &Path) -> Result<Vec<SpoolEntry>> {
    let spool = dir.join(SPOOL_DIR);
    let mut out: Vec<SpoolEntry> = spooled(dir)?
        .into_iter()
        .map(|(id, _)| SpoolEntry {
            path: spool.join(format!("{id}{SUFFIX}")),
            id,
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// The spool's genuine files (see `list`) as `(id, status)`, in directory order.
fn spooled(dir: &Path) -> Result<Vec<(String, libc::stat)>> {
    let owner = files::owner(dir);
    Ok(spool_entries(dir)?
        .into_iter()
        .filter_map(|(name, st)| {
            let id = name.strip_suffix(SUFFIX)?;
            (!id.starts_with('.') && genuine(&st, owner)).then(|| (id.to_string(), st))
        })
        .collect())
}

/// How long the oldest spooled event has waited (its file's age), `None` when none waits.
pub fn oldest_age(dir: &Path) -> Option<std::time::Duration> {
    let oldest = spooled(dir).ok()?.iter().map(|(_, st)| st.st_mtime).min()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    Some(std::time::Duration::from_secs(
        now.saturating_sub(oldest).max(0) as u64,
    ))
}

/// A spool file written by the journal's owner: a regular file (not a link) the owner owns.
fn genuine(st: &libc::stat, owner: Option<u32>) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG && Some(st.st_uid) == owner
}

/// Entries of `spool/` that look like spool files but are not the owner's regular files: never
/// ingested, named by `verify`. As `(name, what it is)`.
pub fn impostors(dir: &Path) -> Vec<(String, String)> {
    let owner = files::owner(dir);
    let mut out: Vec<(String, String)> = spool_entries(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|(n, _)| n.ends_with(SUFFIX) && !n.starts_with('.'))
        .filter_map(|(name, st)| {
            let what = match st.st_mode & libc::S_IFMT {
                libc::S_IFLNK => "a symbolic link".to_string(),
                libc::S_IFREG if Some(st.st_uid) != owner => {
                    format!("written by another user (uid {})", st.st_uid)
                }
                libc::S_IFREG => return None,
                _ => "not a regular file".to_string(),
            };
            Some((name, what))
        })
        .collect();
    out.sort();
    out
}

/// The spool directory and the name of `entry` in it.
fn entry_at(entry: &SpoolEntry) -> Result<(door::Dir, &std::ffi::OsStr)> {
    let (Some(parent), Some(name)) = (entry.path.parent(), entry.path.file_name()) else {
        return Err(Error::Unsafe {
            path: entry.path.clone(),
            what: "it is not a spool file's path".into(),
        });
    };
    let d = door::Dir::open_nofollow(parent).ctx(|| format!("opening {}", parent.display()))?;
    Ok((d, name))
}

/// Reads a spooled event, through the spool's handle (no link followed, a special file refused
/// without blocking, at most `FILE_CAP` bytes). A damaged file (`Error::Corrupt`) is left where
/// it is by the hook and readers; `verify` names it and `recover` journals its bytes.
pub fn read(entry: &SpoolEntry) -> Result<NewEvent> {
    let (spool, name) = entry_at(entry)?;
    let bytes = spool
        .read(Path::new(name), FILE_CAP)
        .ctx(|| format!("reading {}", entry.path.display()))?;
    decode(&bytes).map_err(|e| Error::Corrupt {
        place: DamagePlace::Spool(entry.id.clone()),
        what: format!("spool file {}.spool: {e}", entry.id),
    })
}

fn decode(bytes: &[u8]) -> std::result::Result<NewEvent, String> {
    let body = match bytes.strip_prefix(MAGIC) {
        Some(rest) if rest.len() >= 32 => {
            let (sum, body) = rest.split_at(32);
            if sum != blake3::hash(body).as_bytes() {
                return Err("fails its checksum (the file was damaged)".into());
            }
            body
        }
        Some(_) => return Err("is truncated".into()),
        None => bytes,
    };
    crate::envelope::decode_bounded(body).map_err(|e| format!("does not decode: {e}"))
}

/// Removes a drained spool file through the spool's handle (missing is fine: a crash may have
/// removed it already; `spool/` swapped for a link meanwhile removes nothing elsewhere).
pub fn remove(entry: &SpoolEntry) -> Result<()> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let (spool, name) = match entry_at(entry) {
        Ok(found) => found,
        Err(Error::Io { cause, .. }) if gone(&cause) => return Ok(()),
        Err(e) => return Err(e),
    };
    match spool.remove_file(Path::new(name)) {
        Ok(()) => Ok(()),
        Err(e) if gone(&e) => Ok(()),
        Err(e) => Err(Error::Io {
            context: format!("removing {}", entry.path.display()),
            cause: e,
        }),
    }
}

/// Removes temp files older than `age` left by writers that were killed mid-write (through the
/// spool's handle, as `remove`).
pub fn sweep_temps(dir: &Path, age: std::time::Duration) {
    let Ok(Some(spool)) = spool_dir(dir) else {
        return;
    };
    let Ok(entries) = spool.entries() else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    for (name, st) in entries {
        let is_tmp = name.to_str().is_some_and(|n| n.ends_with(".tmp"));
        let old = now.saturating_sub(st.st_mtime) > age.as_secs() as i64;
        if is_tmp && old && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            let _ = spool.remove_file(Path::new(&name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{Body, WireKind};
    use std::fs;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn event() -> NewEvent {
        NewEvent {
            recorded_at_us: 1,
            host: "claude".into(),
            kind: WireKind {
                tag: 9,
                body: Body::Empty,
            },
            session_id: None,
            agent_id: None,
            payload: b"{}".to_vec(),
            truncated: None,
            spooled: false,
        }
    }

    /// Given `spool/` swapped for a link to another directory and back, over and over, while
    /// events are spooled: no spool file (nor temp file) ever lands in the other directory. The
    /// spool used to be checked once by path and then written by path.
    #[test]
    fn a_spool_swapped_for_a_link_meanwhile_never_steers_a_write() {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("journal");
        let elsewhere = d.path().join("elsewhere");
        fs::create_dir_all(j.join(SPOOL_DIR)).unwrap();
        fs::create_dir(&elsewhere).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (j, elsewhere, stop) = (j.clone(), elsewhere.clone(), stop.clone());
            std::thread::spawn(move || {
                let (spool, real) = (j.join(SPOOL_DIR), j.join("spool.real"));
                while !stop.load(Ordering::Relaxed) {
                    if fs::rename(&spool, &real).is_ok() {
                        let _ = std::os::unix::fs::symlink(&elsewhere, &spool);
                        std::thread::yield_now();
                        let _ = fs::remove_file(&spool);
                        let _ = fs::rename(&real, &spool);
                    }
                    std::thread::yield_now();
                }
            })
        };
        let started = std::time::Instant::now();
        let mut written = 0;
        while started.elapsed() < std::time::Duration::from_secs(2) {
            if write(&j, &event()).is_ok() {
                written += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        let landed: Vec<_> = fs::read_dir(&elsewhere).unwrap().flatten().collect();
        assert!(written > 0, "nothing was spooled at all");
        assert!(
            landed.is_empty(),
            "{} of {written} landed elsewhere: {landed:?}",
            landed.len()
        );
    }

    /// Given `spool/` replaced by a link to another journal's spool holding a genuine spool
    /// file, when the spool is listed, read and swept, then the link is refused in one line and
    /// nothing of its target is listed, read or removed.
    #[test]
    fn a_spool_that_is_a_link_lists_reads_and_removes_nothing_of_its_target() {
        let d = tempfile::tempdir().unwrap();
        let (j, other) = (d.path().join("journal"), d.path().join("other"));
        fs::create_dir_all(&j).unwrap();
        fs::create_dir_all(&other).unwrap();
        write(&other, &event()).unwrap();
        let theirs = list(&other).unwrap();
        assert_eq!(theirs.len(), 1);
        std::os::unix::fs::symlink(other.join(SPOOL_DIR), j.join(SPOOL_DIR)).unwrap();
        let refused = list(&j).unwrap_err().to_string();
        assert!(refused.contains("symbolic link"), "{refused}");
        assert!(impostors(&j).is_empty());
        let through = SpoolEntry {
            id: theirs[0].id.clone(),
            path: j.join(SPOOL_DIR).join(format!("{}{SUFFIX}", theirs[0].id)),
        };
        assert!(read(&through).is_err());
        assert!(remove(&through).is_err());
        sweep_temps(&j, std::time::Duration::ZERO);
        assert_eq!(
            list(&other).unwrap().len(),
            1,
            "the target's file was removed"
        );
    }

    /// Given `spool.clock` hard-linked to a file elsewhere, the clock is not used: the file keeps
    /// its bytes, and the stamp comes from the wall clock.
    #[test]
    fn a_hard_linked_clock_is_not_written() {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("journal");
        fs::create_dir_all(&j).unwrap();
        let other = d.path().join("other");
        fs::write(&other, b"keep me!").unwrap();
        fs::hard_link(&other, j.join(CLOCK)).unwrap();
        write(&j, &event()).unwrap();
        assert_eq!(fs::read(&other).unwrap(), b"keep me!");
    }
}
