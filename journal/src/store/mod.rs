//! The journal: a lock, a small active sled store and the sealed segments.
//!
//! Keys of the active store (one sled tree, so a batch is atomic across all of them):
//! `e` + seq (big-endian) → envelope; `m:head` → (head seq, head hash, base seq);
//! `s:` + key → projection checkpoint partition (empty value: deleted); `t:` + key → the partition
//! was written since the last seal; `d:` + spool id → drained marker.
//!
//! When the active store holds `segment_events` events, they are sealed into a segment file and a
//! fresh active store takes over (the `CURRENT` file names it), carrying the partitions written
//! since the last seal; the others move to an archive (see `archive.rs`).

//!
//! The jobs are split by file: `open` (opening, the log and store reconciled, an interrupted
//! seal finished), `tx` (a batch), `commit` (the one commit path, the checkpoint's partitions,
//! the hot cache), `light` (the writer without sled), `seal` (sealing and rotation), `recover`,
//! `read` (snapshots for readers, status).

mod commit;
mod light;
mod open;
mod read;
mod recover;
mod seal;
#[cfg(test)]
mod tests;
mod tx;

pub use light::{Light, Opened};
pub use read::{journal_size, ReadSnapshot};
pub use tx::Tx;

use crate::archive;
use crate::envelope::{bincode_config, unhex, Envelope, Hash, NewEvent, Seq, ZERO_HASH};
use crate::error::{ChainBreak, IoContext, Result};
use crate::files::{create_dir, is_present, sync_dir, write_atomic, Durability};
use crate::hot::{HotCache, HotHead, Lookup};
use crate::lock::DirLock;
use crate::segment::{self, SegmentInfo};
use crate::wal::{self, Wal};
use crate::{spool, DamagePlace, Error};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Events per sealed segment unless the journal's settings say otherwise.
pub const DEFAULT_SEGMENT_EVENTS: u64 = 4096;
const HEAD_KEY: &[u8] = b"m:head";
const STATE: &[u8] = b"s:";
const DRAINED: &[u8] = b"d:";
/// Events copied into the store from the write-ahead log at open, not yet folded into the
/// checkpoint: the first such seq. Cleared by the commit that folds them.
const UNFOLDED_KEY: &[u8] = b"m:unfolded";
/// Marks a partition written since the last seal (hot: it stays in the active store).
const TOUCHED: &[u8] = b"t:";
const SEGMENTS: &str = "segments";
const CURRENT: &str = "CURRENT";
const ROTATING: &str = "ROTATING";
/// Written by a seal: "the active store `<name>` holds no events; the head is `<seq> <hash>`".
/// Readers that find it (and an empty spool) read the sealed segments without opening sled.
/// The first append after a seal removes it durably before committing.
const EMPTY: &str = "ACTIVE_EMPTY";

/// How `Journal::open` waits for, creates and sizes the journal.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// How long to wait for the lock before giving up with `Error::Busy`.
    pub wait: Duration,
    /// Create the journal if it does not exist.
    pub create: bool,
    /// Events per sealed segment (the active store's size bound).
    pub segment_events: u64,
    /// A reader that must not be starved by a crowd of hooks (see `lock.rs`).
    pub priority: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            wait: Duration::from_secs(10),
            create: false,
            segment_events: DEFAULT_SEGMENT_EVENTS,
            priority: false,
        }
    }
}

/// An open journal, holding its lock until dropped: appends, checkpoint partitions, seals.
pub struct Journal {
    dir: PathBuf,
    db: sled::Db,
    active: String,
    head_seq: Seq,
    head_hash: Hash,
    base: Seq,
    segment_events: u64,
    wal: Wal,
    /// The hot cache and the epoch this process writes it in (see `hot.rs`).
    hot: HotCache,
    hot_head: HotHead,
    // Dropped last: the lock outlives the store.
    _lock: DirLock,
}

/// What `Journal::recover` found and did.
#[derive(Clone, Debug, Default)]
pub struct Recovered {
    /// Events in sealed segments (kept as they are).
    pub sealed: Seq,
    /// The active tail after recovery: `base..=head_seq` (empty when `head_seq < base`).
    pub base: Seq,
    /// The last seq kept (the journal's head after recovery).
    pub head_seq: Seq,
    /// Of the active tail: how many only the write-ahead log held.
    pub from_wal_only: u64,
    /// Of the active tail: how many only the old store held.
    pub from_store_only: u64,
    /// Seqs some copy claimed that no intact copy holds (lost), as a range.
    pub lost: Option<(Seq, Seq)>,
    /// Both copies of the write-ahead log were missing and nothing of this boot witnessed how far
    /// the journal reached: events only they held are gone, and how many cannot be told.
    pub log_gone_uncounted: bool,
    /// Problems found on the way (each one line).
    pub found: Vec<String>,
    /// Stores and files moved aside (never deleted).
    pub moved_aside: Vec<PathBuf>,
    /// Whether anything was changed (false: the journal was sound).
    pub changed: bool,
    /// The write-ahead log (both copies) was rewritten to the kept tail.
    pub rewrote_log: bool,
    /// The active store was rebuilt (the old one moved aside).
    pub rebuilt_store: bool,
}

/// The journal's size and head, for `status`.
#[derive(Clone, Debug)]
pub struct Status {
    /// The journal's directory.
    pub dir: PathBuf,
    /// Events in the log (the head seq).
    pub events: u64,
    /// The hash of the last event.
    pub head_hash: Hash,
    /// Sealed segments.
    pub segments: usize,
    /// Events in the active store, not yet sealed.
    pub active_events: u64,
    /// Bytes on disk, the hot cache aside (`hot_files`).
    pub bytes: u64,
    /// Files in the hot cache (a copy of the checkpoint, a file per partition: counted, not
    /// sized, since sizing means a `stat` each).
    pub hot_files: usize,
    /// When the last event was recorded (microseconds since the Unix epoch).
    pub last_recorded_at_us: Option<i64>,
    /// Spool files waiting to be ingested.
    pub spooled: usize,
}

fn encode_head(seq: Seq, hash: Hash, base: Seq) -> Vec<u8> {
    bincode::serde::encode_to_vec((seq, hash, base), bincode_config())
        .expect("encoding a head record into a Vec cannot fail")
}

pub(crate) fn read_head(db: &sled::Db, active: &str) -> Result<(Seq, Hash, Seq)> {
    match db.get(HEAD_KEY)? {
        Some(v) => bincode::serde::decode_from_slice::<(Seq, Hash, Seq), _>(&v, bincode_config())
            .map(|(h, _)| h)
            .map_err(|e| {
                Error::corrupt(
                    DamagePlace::ActiveStore(Some(active.into())),
                    format!("active store head: {e}"),
                )
            }),
        None => Err(Error::corrupt(
            DamagePlace::ActiveStore(Some(active.into())),
            format!("active store {active} has no head record"),
        )),
    }
}

/// What `CURRENT` names: `None` when it is missing; an error when it is not a store's name.
pub(crate) fn read_current(dir: &Path) -> Result<Option<String>> {
    match crate::files::read_small(&dir.join(CURRENT), 256) {
        Ok(s) => {
            let name = String::from_utf8_lossy(&s).trim().to_string();
            if name.starts_with("active-")
                && !name.contains('/')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            {
                Ok(Some(name))
            } else {
                Err(Error::corrupt(
                    DamagePlace::Current,
                    format!("CURRENT is damaged (it names {name:?}); run `hookjournal recover`"),
                ))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            context: format!("reading {}", dir.join(CURRENT).display()),
            cause: e,
        }),
    }
}

/// Whether a journal without `CURRENT` already holds events (so it must not start over).
/// Journals written before the log always have `CURRENT`.
/// Whether the journal holds events (segments, a log or a store), `CURRENT` aside.
pub(crate) fn has_history(dir: &Path) -> Result<bool> {
    Ok(holds_history(dir)?.is_some())
}

fn holds_history(dir: &Path) -> Result<Option<String>> {
    if !segment::list(&dir.join(SEGMENTS))?.is_empty() {
        return Ok(Some("sealed segments".into()));
    }
    if wal::list(dir)?
        .iter()
        .any(|(_, p)| fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false))
    {
        return Ok(Some("a write-ahead log".into()));
    }
    // Every acknowledged event is in a segment or a log: a store without either (a creation
    // that was killed before `CURRENT` was written) holds nothing to keep.
    Ok(None)
}

/// Checks `ACTIVE_EMPTY` (a seal's hint that the active store holds no events) against the
/// journal: `Ok(())` when absent or true, else what is wrong with it.
pub(crate) fn check_empty_marker(
    dir: &Path,
    head: (Seq, Hash),
    store_events: usize,
) -> std::result::Result<(), String> {
    let Some(marker) = read_marker(&dir.join(EMPTY)) else {
        return Ok(());
    };
    let parts: Vec<&str> = marker.split_whitespace().collect();
    let [name, seq, hash] = parts.as_slice() else {
        return Err(format!("is damaged ({marker:?})"));
    };
    let (Ok(seq), Some(hash)) = (seq.parse::<Seq>(), unhex(hash)) else {
        return Err(format!("is damaged ({marker:?})"));
    };
    let current = read_current(dir).ok().flatten().unwrap_or_default();
    if *name == current && (store_events > 0 || (seq, hash) != head) {
        return Err(format!(
            "says the active store is empty at seq {seq}, but the journal's head is seq {}",
            head.0
        ));
    }
    Ok(())
}

/// A small marker's text (`None`: missing, unreadable, a link or not a regular file).
fn read_marker(path: &Path) -> Option<String> {
    crate::files::read_small(path, 4096)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn active_name(base: Seq) -> String {
    format!("active-{base:020}")
}

fn event_key(seq: Seq) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = b'e';
    k[1..].copy_from_slice(&seq.to_be_bytes());
    k
}

fn prefixed(prefix: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + key.len());
    k.extend_from_slice(prefix);
    k.extend_from_slice(key);
    k
}

/// sled 0.34 writes a snapshot as `snap.<lsn>.generating`, then renames it; a process killed in
/// between leaves the partial file, which the next open picks as the newest snapshot and fails
/// on. It was never complete, so it is removed before opening.
fn remove_unfinished_snapshots(path: &Path) {
    if let Ok(rd) = fs::read_dir(path) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("snap.") && name.ends_with(".generating") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

fn open_sled(path: &Path) -> Result<sled::Db> {
    // sled follows links: nothing in a store it opens may be one.
    crate::files::check_tree(path)?;
    remove_unfinished_snapshots(path);
    // No background flusher: we flush explicitly before answering, and its thread would be
    // joined on drop (a few ms per hook).
    let config = sled::Config::new()
        .path(path)
        .flush_every_ms(None)
        .cache_capacity(8 << 20);
    // Some damage makes sled panic rather than fail: that is damage all the same.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| config.open())) {
        Ok(db) => Ok(db?),
        Err(_) => Err(Error::corrupt(
            DamagePlace::ActiveStore(Some(crate::files::file_name(path))),
            format!(
                "the store {} cannot be read (sled panicked)",
                path.display()
            ),
        )),
    }
}

/// Opens the active store. sled's own file lock can outlive the previous holder's handle by a
/// moment (its background threads close the file last), so `WouldBlock` is retried until the
/// deadline and then reported as busy.
pub(crate) fn open_sled_waiting(path: &Path, deadline: std::time::Instant) -> Result<sled::Db> {
    loop {
        match open_sled(path) {
            // sled reports its lock as `Other` with this message (fs2's WouldBlock inside).
            Err(Error::Sled(sled::Error::Io(e)))
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.to_string().contains("could not acquire lock") =>
            {
                if std::time::Instant::now() >= deadline {
                    return Err(Error::Busy);
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            other => return other,
        }
    }
}

/// Creates the journal directory (0700) with a `.gitignore` of `*`, if missing. A journal
/// directory that is a link (a repository can commit `.hookjournal -> elsewhere`) is refused
/// before anything is written: its `.gitignore` would land in the link's target. A directory
/// hookjournal did not make and that is no journal is refused, untouched (`check_adoptable`).
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if let Ok(m) = fs::symlink_metadata(dir) {
        if m.file_type().is_symlink() || !m.is_dir() {
            return Err(Error::Unsafe {
                path: dir.to_path_buf(),
                what: if m.file_type().is_symlink() {
                    "it is a symbolic link, which the journal never follows".into()
                } else {
                    "it is not a directory".into()
                },
            });
        }
    }
    crate::files::check_adoptable(dir)?;
    // Another user's journal (root writing for its owner) gets nothing but spool files.
    if crate::files::owner(dir).is_some_and(|o| o != crate::files::euid()) {
        return Ok(());
    }
    // A journal made now (a new directory, or one with no event yet: empty, or a repository's
    // settings) is marked as made here, and so is one a hookjournal from before markers made
    // here (`origin::made_here_before_markers`); a journal that came with events is not.
    let created = !is_present(dir);
    if created {
        create_dir(dir)?;
    }
    if created
        || (!is_present(&dir.join(crate::origin::FILE))
            && (!crate::origin::has_history(dir) || crate::origin::made_here_before_markers(dir)))
    {
        crate::origin::mark(dir)?;
    }
    let gi = dir.join(".gitignore");
    if !is_present(&gi) {
        write_atomic(
            dir,
            ".gitignore",
            crate::files::GITIGNORE,
            Durability::Durable,
        )?;
    }
    Ok(())
}

impl Journal {
    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The seq of the last event (0 when the journal is empty).
    pub fn head_seq(&self) -> Seq {
        self.head_seq
    }
    /// The hash of the last event (`ZERO_HASH` when the journal is empty).
    pub fn head_hash(&self) -> Hash {
        self.head_hash
    }
}

/// Takes the journal's lock (creating the directory when `opts.create` and it has no journal).
fn lock_journal(dir: &Path, opts: &OpenOptions) -> Result<DirLock> {
    // Everything the journal writes is private to its owner, sled's own files included.
    // SAFETY: umask only changes this process's file creation mask.
    unsafe { libc::umask(0o077) };
    // Another user's journal is theirs: "no journal yet" would be wrong, and so would writing.
    if crate::files::owner(dir).is_some_and(|o| o != crate::files::euid()) {
        return Err(Error::ReadOnly(dir.to_path_buf()));
    }
    if !is_present(&dir.join(CURRENT)) && !is_present(&dir.join("lock")) {
        if !opts.create {
            return Err(Error::NotFound(dir.to_path_buf()));
        }
        ensure_dir(dir)?;
    }
    DirLock::acquire(dir, opts.wait, opts.priority)
}

/// The epoch a writer uses when the cache is not current: one no earlier file can have (the
/// clock, and past the old epoch). A journal just created has an empty checkpoint, so its
/// first epoch is complete.
fn new_epoch(old: Option<&HotHead>, created: bool) -> HotHead {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    HotHead {
        epoch: now.max(old.map(|h| h.epoch + 1).unwrap_or(0)),
        seq: 0,
        hash: ZERO_HASH,
        boot: crate::hot::boot_id().to_string(),
        complete: created,
        sled_seq: 0,
        drained: Vec::new(),
    }
}
