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

/// A batch of appends and checkpoint writes that lands atomically, or not at all.
pub struct Tx {
    next_seq: Seq,
    prev: Hash,
    events: Vec<Envelope>,
    state: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    drained: Vec<String>,
    folded: bool,
    /// Partitions only the hot cache gets (loaded, unchanged: the store has them already).
    cached: Vec<(Vec<u8>, Vec<u8>)>,
    /// The writer kept the checkpoint (its `state` holds every partition its events changed).
    checkpointed: bool,
    /// The first event pushed by `push_unhashed`: it and those after it are hashed at commit.
    unhashed: Option<usize>,
}

impl Tx {
    /// An empty batch continuing the chain after (`seq`, `hash`).
    fn after(seq: Seq, hash: Hash) -> Tx {
        Tx {
            next_seq: seq + 1,
            prev: hash,
            events: Vec::new(),
            state: Vec::new(),
            drained: Vec::new(),
            folded: false,
            cached: Vec::new(),
            checkpointed: false,
            unhashed: None,
        }
    }
    /// Appends an event; returns its seq (for the `cause` of derived events).
    pub fn push(&mut self, ev: NewEvent) -> Seq {
        assert!(
            self.unhashed.is_none(),
            "Tx::push after Tx::push_unhashed: the chain's previous hash is not known yet"
        );
        let seq = self.next_seq;
        let env = Envelope::seal(ev, seq, self.prev);
        self.prev = env.hash;
        self.next_seq += 1;
        self.events.push(env);
        seq
    }
    /// Appends an already sealed envelope (import), checking it continues the chain exactly.
    pub fn push_sealed(&mut self, env: Envelope) -> Result<Seq> {
        assert!(
            self.unhashed.is_none(),
            "Tx::push_sealed after Tx::push_unhashed: the chain's previous hash is not known yet"
        );
        ChainBreak::check(&env, self.next_seq, &self.prev).map_err(Error::BrokenChain)?;
        let seq = env.seq;
        self.prev = env.hash;
        self.next_seq += 1;
        self.events.push(env);
        Ok(seq)
    }
    /// Appends an event whose hash the commit computes, continuing the journal's head then (on
    /// whichever thread commits): for a bulk writer that folds on one thread while another
    /// commits the batch before. Until the commit its `prev` and `hash` are zero; after it, only
    /// `push_unhashed` appends to this batch. Returns its seq.
    pub fn push_unhashed(&mut self, ev: NewEvent) -> Seq {
        let seq = self.next_seq;
        self.unhashed.get_or_insert(self.events.len());
        self.events.push(Envelope::at(ev, seq, ZERO_HASH));
        self.next_seq += 1;
        seq
    }
    /// Computes the hashes `push_unhashed` left, the chain continuing `head` (the journal's head
    /// hash, which the batch continues).
    fn chain(&mut self, head: Hash) {
        let Some(from) = self.unhashed.take() else {
            return;
        };
        let mut prev = from.checked_sub(1).map_or(head, |i| self.events[i].hash);
        for e in &mut self.events[from..] {
            e.prev = prev;
            e.hash = e.compute_hash();
            prev = e.hash;
        }
        self.prev = prev;
    }
    /// Writes checkpoint partition `key`.
    pub fn put_state(&mut self, key: &[u8], value: Vec<u8>) {
        self.state.push((key.to_vec(), Some(value)));
    }
    /// Deletes checkpoint partition `key` (archived copies included).
    pub fn delete_state(&mut self, key: &[u8]) {
        self.state.push((key.to_vec(), None));
    }
    /// Marks a spool file as ingested by this batch.
    pub fn drained(&mut self, spool_id: &str) {
        self.drained.push(spool_id.to_string());
    }
    /// Says that this batch's checkpoint writes include `Journal::unfolded` events.
    pub fn folded_unfolded(&mut self) {
        self.folded = true;
    }
    /// Says that `put_state` holds every partition this batch's events change, so the hot
    /// cache stays current. A batch with events that does not say so makes the cache stale.
    pub fn checkpointed(&mut self) {
        self.checkpointed = true;
    }
    /// A partition the writer loaded and did not change, for the hot cache only.
    pub fn cache_state(&mut self, key: &[u8], value: Vec<u8>) {
        self.cached.push((key.to_vec(), value));
    }
    /// An empty batch continuing the chain after this one: what a writer that hands batches to
    /// another thread, to be committed in order, builds next.
    pub fn following(&self) -> Tx {
        let mut next = Tx::after(self.next_seq - 1, self.prev);
        // The previous hash is known only once this batch is committed.
        if self.unhashed.is_some() {
            next.unhashed = Some(0);
        }
        next
    }
    /// The checkpoint partitions this batch writes (`None`: deleted), in order.
    pub fn state_writes(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.state.iter().map(|(k, v)| (k.as_slice(), v.as_deref()))
    }
    /// The events appended so far, sealed (with their seqs and hashes).
    pub fn events(&self) -> &[Envelope] {
        &self.events
    }
    /// Whether committing the batch would change nothing.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.state.is_empty() && self.drained.is_empty() && !self.folded
    }
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

/// Creates the journal directory (0700) with a `.gitignore` of `*`, if missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    // Another user's journal (root writing for its owner) gets nothing but spool files.
    if crate::files::owner(dir).is_some_and(|o| o != crate::files::euid()) {
        return Ok(());
    }
    if !is_present(dir) {
        create_dir(dir)?;
    }
    let gi = dir.join(".gitignore");
    if !is_present(&gi) {
        write_atomic(dir, ".gitignore", b"*\n", Durability::Durable)?;
    }
    Ok(())
}

impl Journal {
    /// Opens (and with `create`, creates) the journal in `dir`, taking its lock within `opts.wait`.
    pub fn open(dir: &Path, opts: &OpenOptions) -> Result<Journal> {
        let deadline = std::time::Instant::now() + opts.wait;
        let lock = lock_journal(dir, opts)?;
        Journal::open_locked(dir, opts, lock, deadline)
    }

    /// Opens the journal for a writer that may not need sled: `Opened::Light` when the hot
    /// cache is current (see `Light`), else the journal opened in full under the same lock.
    pub fn open_light(dir: &Path, opts: &OpenOptions) -> Result<Opened> {
        let deadline = std::time::Instant::now() + opts.wait;
        let lock = lock_journal(dir, opts)?;
        match Light::try_open(dir, opts) {
            Ok(Some(p)) => Ok(Opened::Light(Light {
                dir: p.dir,
                base: p.base,
                head_seq: p.head_seq,
                head_hash: p.head_hash,
                segment_events: p.segment_events,
                wal: p.wal,
                hot: p.hot,
                hot_head: p.hot_head,
                opts: opts.clone(),
                deadline,
                lock: Some(lock),
                unsynced: false,
            })),
            Ok(None) | Err(_) => Ok(Opened::Full(Journal::open_locked(
                dir, opts, lock, deadline,
            )?)),
        }
    }

    fn open_locked(
        dir: &Path,
        opts: &OpenOptions,
        lock: DirLock,
        deadline: std::time::Instant,
    ) -> Result<Journal> {
        let mut created = false;
        let active = match read_current(dir)? {
            Some(name) => name,
            None => {
                if !opts.create {
                    return Err(Error::NotFound(dir.to_path_buf()));
                }
                // A journal that already holds events must never restart at seq 1.
                if let Some(what) = holds_history(dir)? {
                    return Err(Error::corrupt(
                        DamagePlace::Current,
                        format!(
                            "CURRENT is missing but the journal holds {what}; run `hookjournal recover`"
                        ),
                    ));
                }
                ensure_dir(dir)?;
                let name = active_name(1);
                // A creation killed before `CURRENT` was written can leave a half-made sled
                // directory that sled then reads as corrupt: it holds nothing (see above).
                let store = dir.join(&name);
                if is_present(&store) {
                    fs::remove_dir_all(&store)
                        .ctx(|| format!("removing the unfinished store {}", store.display()))?;
                }
                let db = open_sled_waiting(&store, deadline)?;
                db.insert(HEAD_KEY, encode_head(0, ZERO_HASH, 1))?;
                db.flush()?;
                drop(db);
                // sled's flush does not sync: the store must be durable before `CURRENT` names it.
                crate::files::sync_tree(&store)?;
                write_atomic(dir, CURRENT, name.as_bytes(), Durability::Durable)?;
                created = true;
                name
            }
        };
        if !dir.join(&active).is_dir() {
            return Err(Error::corrupt(
                DamagePlace::Current,
                format!("CURRENT names {active}, which does not exist; run `hookjournal recover`"),
            ));
        }
        let db = open_sled_waiting(&dir.join(&active), deadline)?;
        let (head_seq, head_hash, base) = read_head(&db, &active)?;
        let had_log = dir.join(wal::DIR).is_dir();
        // A new journal starts its log; one written before the log (no `wal/`, no hot cache)
        // gets one, filled from the store below. Anything else must have its log.
        if created || (!had_log && !is_present(&dir.join(crate::hot::DIR))) {
            Wal::create(dir, base)?;
        }
        let (wal, logged) = Wal::open_scanned(dir, base)?;
        let hot = HotCache::new(dir);
        let mut j = Journal {
            dir: dir.to_path_buf(),
            db,
            active,
            head_seq,
            head_hash,
            base,
            segment_events: opts.segment_events.max(1),
            wal,
            hot_head: new_epoch(hot.head().as_ref(), created),
            hot,
            _lock: lock,
        };
        if is_present(&j.dir.join(ROTATING)) {
            j.recover_rotation()?;
        }
        j.reconcile_wal(logged, had_log)?;
        // The cache is current at this head: keep writing its epoch.
        if let Some(h) = j.hot.head() {
            if h.current_at(j.head_seq, &j.head_hash) {
                j.hot_head = h;
            }
        }
        if created {
            j.hot_head.seq = j.head_seq;
            j.hot_head.hash = j.head_hash;
            j.hot.set_head(&j.hot_head)?;
        }
        Ok(j)
    }

    /// Brings the active store and the write-ahead log (already merged from its two copies, see
    /// `wal.rs`) back to the same head. The log ahead of the store (the light path's normal
    /// state, a kill between the two writes, a store that lost its tail) is copied into the store,
    /// to be folded by the next commit. The store ahead of the log (a log that lost records, a
    /// deleted `wal/`, a journal written before the log) holds every event the log has and more:
    /// the log is rewritten from it. A disagreement on the same seq is damage.
    fn reconcile_wal(&mut self, logged: wal::Scan, had_log: bool) -> Result<()> {
        let wal_tail = self.wal.tail();
        let store_tail = (self.head_seq >= self.base).then_some((self.head_seq, self.head_hash));
        if wal_tail == store_tail {
            return Ok(());
        }
        let damaged = |what: String| Error::corrupt(DamagePlace::wal(self.wal.path()), what);
        match wal_tail {
            Some((seq, _)) if seq == self.head_seq => Err(damaged(format!(
                "{} and the active store disagree on seq {seq}; run `hookjournal recover`",
                self.wal.path().display()
            ))),
            Some((seq, _)) if seq > self.head_seq => {
                // A light writer may not have synced its last append yet: the store (and its
                // drained markers, which let spool files go) must never be ahead of the disk.
                self.wal.sync()?;
                let missing: Vec<&Envelope> = logged
                    .events
                    .iter()
                    .filter(|e| e.seq > self.head_seq)
                    .collect();
                let mut prev = self.head_hash;
                for (i, e) in missing.iter().enumerate() {
                    if e.seq != self.head_seq + 1 + i as u64 || e.prev != prev {
                        return Err(damaged(format!(
                            "{}: seq {} does not continue the active store's chain; run `hookjournal recover`",
                            self.wal.path().display(),
                            e.seq
                        )));
                    }
                    prev = e.hash;
                }
                let (Some(first), Some(last)) = (missing.first(), missing.last()) else {
                    return Err(damaged(format!(
                        "{} ends at seq {seq} but holds no event after the store's seq {}; run `hookjournal recover`",
                        self.wal.path().display(),
                        self.head_seq
                    )));
                };
                let mut batch = sled::Batch::default();
                for e in &missing {
                    batch.insert(&event_key(e.seq), e.encode());
                }
                for id in &logged.drained {
                    batch.insert(prefixed(DRAINED, id.as_bytes()), &[] as &[u8]);
                }
                if self.db.get(UNFOLDED_KEY)?.is_none() {
                    batch.insert(UNFOLDED_KEY, &first.seq.to_be_bytes());
                }
                batch.insert(HEAD_KEY, encode_head(last.seq, last.hash, self.base));
                self.db.apply_batch(batch)?;
                self.db.flush()?;
                self.head_seq = last.seq;
                self.head_hash = last.hash;
                Ok(())
            }
            _ => {
                // The store holds more than the log: the log's events must be its first ones.
                let events = self.active_events()?;
                if !prefix_of(&logged.events, &events) {
                    return Err(damaged(format!(
                        "{} and the active store disagree; run `hookjournal recover`",
                        self.wal.path().display()
                    )));
                }
                let drained: Vec<String> = self
                    .db
                    .scan_prefix(DRAINED)
                    .keys()
                    .filter_map(|k| k.ok())
                    .map(|k| String::from_utf8_lossy(&k[DRAINED.len()..]).into_owned())
                    .collect();
                wal::rewrite(&self.dir, self.base, &events, &drained)?;
                self.wal = Wal::open(&self.dir, self.base)?;
                if had_log {
                    crate::incidents::note(
                        &self.dir,
                        &format!(
                            "the write-ahead log lacked seq {}..{} that the active store holds; it was rewritten from the store (nothing lost)",
                            logged.events.last().map(|e| e.seq + 1).unwrap_or(self.base),
                            self.head_seq
                        ),
                    );
                }
                Ok(())
            }
        }
    }

    /// Events that are in the log but not yet in the checkpoint (copied from the write-ahead log
    /// at open). A caller that keeps the checkpoint folds them and says so with
    /// `Tx::folded_unfolded` in the same commit.
    pub fn unfolded(&self) -> Result<Vec<Envelope>> {
        let Some(v) = self.db.get(UNFOLDED_KEY)? else {
            return Ok(Vec::new());
        };
        let from = v.as_ref().try_into().map(u64::from_be_bytes).map_err(|_| {
            Error::corrupt(
                DamagePlace::ActiveStore(None),
                "active store: bad unfolded marker",
            )
        })?;
        let mut out = Vec::new();
        for kv in self.db.range(event_key(from)..=event_key(self.head_seq)) {
            let (_, v) = kv?;
            out.push(Envelope::decode(&v).map_err(|e| {
                Error::corrupt(DamagePlace::ActiveStore(None), format!("active store: {e}"))
            })?);
        }
        Ok(out)
    }

    /// Rebuilds the active store when it cannot be opened, lost a tail, or disagrees with the
    /// write-ahead log, from the sealed segments plus every intact copy of the active tail (the
    /// log, and the store where it still reads). Nothing intact is dropped, nothing is deleted:
    /// a replaced store is moved aside. Safe to kill and rerun: `CURRENT` switches atomically
    /// to a store that is complete before the switch. Marks the checkpoint stale when the store
    /// is replaced (its partitions are then rebuilt by the caller).
    pub fn recover(dir: &Path, wait: Duration) -> Result<Recovered> {
        let deadline = std::time::Instant::now() + wait;
        let _lock = DirLock::acquire(dir, wait, true)?;
        // In the boot that wrote it, the hot cache's head is a witness of how far the journal
        // reached (a log deleted with events no other copy holds).
        let this_boot = HotCache::new(dir)
            .head()
            .filter(|h| h.boot == crate::hot::boot_id());
        let witnessed = this_boot.as_ref().map(|h| h.seq).unwrap_or(0);
        // And of how far sled got: a store that lost events it had is rebuilt (as `verify` says).
        let sled_had = this_boot.map(|h| h.sled_seq).unwrap_or(0);
        HotCache::new(dir).invalidate()?;
        let mut r = Recovered::default();
        remove_unfinished_rebuilds(dir);
        // Links and special files someone planted: removed (never their targets), and said.
        for (path, what) in crate::files::strangers(dir) {
            let plain = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() || m.is_dir());
            if !plain && fs::remove_file(&path).is_ok() {
                r.found.push(format!("removed {}: {what}", path.display()));
                r.changed = true;
            }
        }
        let (sealed_seq, sealed_hash) = sealed_head(dir)?;
        r.sealed = sealed_seq;
        let base = sealed_seq + 1;
        r.base = base;

        // Every candidate copy of the active tail. A missing last segment must not cost the
        // newer events: the tail starts where the store or the newest log says it does.
        let base = tail_base(dir, base, deadline)?;
        if base > r.base {
            r.found.push(format!(
                "the sealed segments end at seq {sealed_seq} but the active tail starts at seq {base}: seq {}..{} (a missing segment) cannot be rebuilt; restore it from a backup or an export",
                sealed_seq + 1,
                base - 1
            ));
            r.lost = Some((sealed_seq + 1, base - 1));
            r.base = base;
        }
        let store = read_store_copy(dir, base, sealed_seq, deadline, &mut r.found)?;
        let pair = wal::read_pair(dir, base)?;
        r.found.extend(wal::describe(&pair, dir, base));
        let claimed = store
            .claimed
            .max(pair.scan.events.last().map(|e| e.seq).unwrap_or(0))
            .max(witnessed);

        // Past a gap the chain cannot be checked against the segments: the tail's first event
        // vouches for itself.
        let after = if base > sealed_seq + 1 {
            [&pair.scan.events, &store.events]
                .iter()
                .find_map(|evs| evs.iter().find(|e| e.seq == base))
                .map(|e| e.prev)
                .unwrap_or(sealed_hash)
        } else {
            sealed_hash
        };
        let (tail, head_seq, head_hash) =
            salvage_tail(base, after, &store.events, &pair.scan.events, &mut r);
        r.head_seq = head_seq.max(sealed_seq);
        if claimed > head_seq {
            let from = r.lost.map(|(a, _)| a).unwrap_or(head_seq + 1);
            r.lost = Some((from, claimed));
        }

        // Order matters for crash safety: whole records no copy can keep are set aside, the log
        // is rewritten (both copies, one after the other), then the store rebuilt and `CURRENT`
        // switched, then the rest moved aside, the markers removed and the directory synced last.
        // A store behind the log is not damage: a light writer appends to the log alone, and
        // the next open copies the rest in.
        let store_last = store.events.last().map(|e| e.seq).unwrap_or(base - 1);
        let store_matches = store.ok && prefix_of(&store.events, &tail) && store_last >= sled_had;
        let wal_matches = pair.sound() && same_events(&pair.scan.events, &tail);
        if !wal_matches {
            r.found.extend(wal::keep_beyond(dir, base, &pair)?);
            wal::rewrite(dir, base, &tail, &pair.scan.drained)?;
            r.changed = true;
            r.rewrote_log = true;
        }
        if !store_matches {
            // The spool files the log says were ingested are never ingested again.
            rebuild_store(
                dir,
                base,
                sealed_seq,
                (head_seq, head_hash),
                &tail,
                &pair.scan.drained,
            )?;
            r.changed = true;
            r.rebuilt_store = true;
        }
        move_aside(dir, base, &mut r)?;
        if check_empty_marker(dir, (head_seq, head_hash), tail.len()).is_err() {
            let _ = fs::remove_file(dir.join(EMPTY));
            r.changed = true;
        }
        let _ = fs::remove_file(dir.join(ROTATING));
        sync_dir(dir)?;
        Ok(r)
    }

    /// Finishes or undoes a rotation that a crash interrupted: whatever `CURRENT` names is the truth.
    fn recover_rotation(&mut self) -> Result<()> {
        for entry in fs::read_dir(&self.dir)
            .ctx(|| format!("listing {}", self.dir.display()))?
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("active-") && name != self.active {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        let segdir = self.dir.join(SEGMENTS);
        for seg in segment::list(&segdir)? {
            if seg.first >= self.base {
                fs::remove_file(&seg.path).ctx(|| format!("removing {}", seg.path.display()))?;
            }
        }
        if let Ok(rd) = fs::read_dir(&segdir) {
            for entry in rd.flatten() {
                if entry.file_name().to_string_lossy().ends_with(".tmp") {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        for (seq, path) in archive::list(&self.dir)? {
            if seq > self.base {
                fs::remove_file(&path).ctx(|| format!("removing {}", path.display()))?;
            }
        }
        // An older log is covered by the segment the seal wrote before switching.
        for (base, path) in wal::list(&self.dir)? {
            if base != self.base {
                wal::remove(&path);
            }
        }
        let _ = fs::remove_file(self.dir.join(ROTATING));
        sync_dir(&self.dir)
    }

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

    /// Starts a batch that continues the chain from the current head.
    pub fn begin(&self) -> Tx {
        Tx::after(self.head_seq, self.head_hash)
    }

    /// Writes the batch atomically and flushes it to disk before returning.
    pub fn commit(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, true)
    }

    /// Like `commit` but without the flush (bulk import flushes once at the end).
    pub fn commit_unflushed(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, false)
    }

    fn commit_inner(&mut self, mut tx: Tx, flush: bool) -> Result<()> {
        if tx.is_empty() {
            return Ok(());
        }
        if tx.next_seq - tx.events.len() as u64 != self.head_seq + 1 {
            return Err(Error::StaleTx);
        }
        tx.chain(self.head_hash);
        if !tx.events.is_empty() && is_present(&self.dir.join(EMPTY)) {
            fs::remove_file(self.dir.join(EMPTY))
                .ctx(|| format!("removing {}", self.dir.join(EMPTY).display()))?;
            sync_dir(&self.dir)?;
        }
        // The write-ahead log first: once it is synced, the batch survives whatever happens to
        // sled's files. The open made the log and the store agree on the head.
        let head = (self.head_seq >= self.base).then_some((self.head_seq, self.head_hash));
        if self.wal.tail() != head {
            return Err(Error::corrupt(
                DamagePlace::wal(self.wal.path()),
                format!(
                    "{} does not end at the journal's head (seq {}); run `hookjournal recover`",
                    self.wal.path().display(),
                    self.head_seq
                ),
            ));
        }
        let events: Vec<&Envelope> = tx.events.iter().collect();
        self.wal.append(&events, &tx.drained)?;
        let mut batch = sled::Batch::default();
        for e in &tx.events {
            batch.insert(&event_key(e.seq), e.encode());
        }
        for (k, v) in &tx.state {
            // A delete is an empty value: it must shadow an archived copy of the partition.
            batch.insert(prefixed(STATE, k), v.clone().unwrap_or_default());
            batch.insert(prefixed(TOUCHED, k), &[] as &[u8]);
        }
        for id in &tx.drained {
            batch.insert(prefixed(DRAINED, id.as_bytes()), &[] as &[u8]);
        }
        if tx.folded {
            batch.remove(UNFOLDED_KEY);
        }
        let (seq, hash) = tx
            .events
            .last()
            .map(|e| (e.seq, e.hash))
            .unwrap_or((self.head_seq, self.head_hash));
        batch.insert(HEAD_KEY, encode_head(seq, hash, self.base));
        self.db.apply_batch(batch)?;
        if flush {
            self.db.flush()?;
        }
        self.head_seq = seq;
        self.head_hash = hash;
        self.hot_head.sled_seq = seq;
        keep_hot(&self.hot, &mut self.hot_head, &self.dir, &tx, (seq, hash))
    }

    /// Flushes the active store to disk (after `commit_unflushed`).
    pub fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    /// A checkpoint partition: from the active store, else from the archives, newest first.
    pub fn get_state(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.db.get(prefixed(STATE, key))? {
            return Ok((!v.is_empty()).then(|| v.to_vec()));
        }
        for (_, path) in archive::list(&self.dir)?.iter().rev() {
            if let Some(v) = archive::get(path, key)? {
                return Ok((!v.is_empty()).then_some(v));
            }
        }
        Ok(None)
    }

    /// Whether a partition was written since the last seal (it will stay in the active store).
    pub fn is_hot(&self, key: &[u8]) -> Result<bool> {
        Ok(self.db.contains_key(prefixed(TOUCHED, key))?)
    }

    /// Every checkpoint partition whose key starts with `prefix` (archives and active store).
    pub fn scan_state(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut all: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for (_, path) in archive::list(&self.dir)? {
            for (k, v) in archive::read_all(&path)? {
                if k.starts_with(prefix) {
                    all.insert(k, v);
                }
            }
        }
        for kv in self.db.scan_prefix(prefixed(STATE, prefix)) {
            let (k, v) = kv?;
            all.insert(k[STATE.len()..].to_vec(), v.to_vec());
        }
        Ok(all.into_iter().filter(|(_, v)| !v.is_empty()).collect())
    }

    /// The keys of every checkpoint partition starting with `prefix` (archives and active store),
    /// without reading their values: what a reader resolving a session prefix needs.
    pub fn state_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut all: BTreeMap<Vec<u8>, bool> = BTreeMap::new();
        for (_, path) in archive::list(&self.dir)? {
            all.extend(archive::keys(&path, prefix)?);
        }
        for kv in self.db.scan_prefix(prefixed(STATE, prefix)) {
            let (k, v) = kv?;
            all.insert(k[STATE.len()..].to_vec(), !v.is_empty());
        }
        Ok(all
            .into_iter()
            .filter(|(_, live)| *live)
            .map(|(k, _)| k)
            .collect())
    }

    /// Whether a spool file was already ingested (its unlink may not have happened).
    pub fn was_drained(&self, spool_id: &str) -> Result<bool> {
        Ok(self
            .db
            .contains_key(prefixed(DRAINED, spool_id.as_bytes()))?)
    }

    /// Replaces the whole checkpoint with `parts` (a rebuild from the log): one archive named by
    /// the active base holds every partition, the store's hot copies are cleared, older archives
    /// removed, and the stale marker cleared last — a kill anywhere leaves it stale, to be redone.
    pub fn replace_checkpoint(&mut self, parts: &BTreeMap<Vec<u8>, Vec<u8>>) -> Result<()> {
        self.hot.invalidate()?;
        self.hot_head = new_epoch(Some(&self.hot_head), false);
        archive::write(&self.dir, self.base, parts)?;
        let mut batch = sled::Batch::default();
        for prefix in [STATE, TOUCHED] {
            for k in self.db.scan_prefix(prefix).keys() {
                batch.remove(k?);
            }
        }
        batch.remove(UNFOLDED_KEY);
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        for (seq, path) in archive::list(&self.dir)? {
            if seq != self.base {
                fs::remove_file(&path).ctx(|| format!("removing {}", path.display()))?;
            }
        }
        crate::checkpoint::clear_stale(&self.dir)?;
        // The new checkpoint goes to the hot cache whole, so hooks and readers go on without
        // sled (left incomplete, every read would open the store until a drainer filled it).
        if self.db.get(UNFOLDED_KEY)?.is_none() {
            self.hot_epoch_of(parts.iter().map(|(k, v)| (k.as_slice(), v.as_slice())))?;
        }
        Ok(())
    }

    /// Whether every checkpoint partition is in the hot cache (see `fill_hot`).
    pub fn hot_complete(&self) -> bool {
        self.hot_head.complete
    }

    /// Writes every checkpoint partition to the hot cache in a new epoch and marks it complete,
    /// so a hook can take a partition the cache does not have for absent. Only when the
    /// checkpoint is folded to the head and not stale; otherwise nothing is done.
    pub fn fill_hot(&mut self) -> Result<()> {
        if self.db.get(UNFOLDED_KEY)?.is_some()
            || crate::checkpoint::stale_reason(&self.dir).is_some()
        {
            return Ok(());
        }
        let parts = self.scan_state(b"")?;
        self.hot_epoch_of(parts.iter().map(|(k, v)| (k.as_slice(), v.as_slice())))
    }

    /// Writes `parts` (every checkpoint partition, current at the head) to the hot cache in a
    /// new, complete epoch.
    fn hot_epoch_of<'a>(
        &mut self,
        parts: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<()> {
        let mut h = new_epoch(Some(&self.hot_head), true);
        h.seq = self.head_seq;
        h.hash = self.head_hash;
        h.sled_seq = self.head_seq;
        h.drained = std::mem::take(&mut self.hot_head.drained);
        for (k, v) in parts {
            self.hot.put(h.epoch, k, v)?;
        }
        self.hot.set_head(&h)?;
        self.hot_head = h;
        Ok(())
    }

    /// Whether the active store holds `segment_events` events (the next drain seals it).
    pub fn needs_seal(&self) -> bool {
        self.head_seq + 1 - self.base >= self.segment_events
    }

    /// Seals the active store into a segment when it is full. Returns whether it did.
    pub fn seal_if_full(&mut self) -> Result<bool> {
        if !self.needs_seal() {
            return Ok(false);
        }
        self.seal()?;
        Ok(true)
    }

    /// Seals every event of the active store into a segment and starts a fresh active store that
    /// carries the checkpoint. Crash-safe: `CURRENT` switches atomically, and `open` cleans up.
    pub fn seal(&mut self) -> Result<()> {
        if self.head_seq < self.base {
            return Ok(());
        }
        let events = self.active_events()?;
        if events.is_empty() {
            return Err(Error::corrupt(
                DamagePlace::ActiveStore(Some(self.active.clone())),
                format!(
                    "active store {} holds no events, but its head is seq {}",
                    self.active, self.head_seq
                ),
            ));
        }
        self.rotate(&events, None)
    }

    /// Commits a bulk batch (an import) straight into a sealed segment: its events are written
    /// once, as a segment, instead of to the write-ahead log, the store and later a segment; a
    /// fresh active store takes over carrying the checkpoint, the batch's partitions in the
    /// archive the rotation writes. Atomic
    /// like a seal: a kill before `CURRENT` switches leaves the journal as it was (`open`
    /// removes the segment), after it the batch is whole. The active store is sealed first when
    /// it holds events. A batch without events is an ordinary `commit`.
    pub fn commit_as_segment(&mut self, mut tx: Tx) -> Result<()> {
        if tx.events.is_empty() {
            return self.commit(tx);
        }
        if tx.next_seq - tx.events.len() as u64 != self.head_seq + 1 {
            return Err(Error::StaleTx);
        }
        tx.chain(self.head_hash);
        self.seal()?;
        self.rotate(&tx.events, Some(&tx))?;
        self.hot_head.sled_seq = self.head_seq;
        keep_hot(
            &self.hot,
            &mut self.hot_head,
            &self.dir,
            &tx,
            (self.head_seq, self.head_hash),
        )
    }

    /// Writes `events` (the active store's, or a bulk batch's that follow them) as a segment,
    /// starts the next active store after them carrying the checkpoint (and `tx`'s writes), and
    /// switches to it.
    fn rotate(&mut self, events: &[Envelope], tx: Option<&Tx>) -> Result<()> {
        let last = events.last().expect("a segment holds at least one event");
        let head = (last.seq, last.hash);
        let new_base = last.seq + 1;
        let new_name = active_name(new_base);
        // Order matters for crash safety (`recover_rotation` relies on it): `ROTATING` first; the
        // segment, the new store and any archive complete, and drained spool files gone, before
        // `CURRENT` switches; only then the old store and log go, `ROTATING` is removed and
        // `ACTIVE_EMPTY` written; archives are merged last.
        write_atomic(
            &self.dir,
            ROTATING,
            new_name.as_bytes(),
            Durability::Durable,
        )?;
        let segdir = self.dir.join(SEGMENTS);
        create_dir(&segdir)?;
        segment::write(&segdir, events)?;
        let db = self.start_store(new_base, &new_name, head, tx)?;
        self.remove_drained_spool()?;
        (self.head_seq, self.head_hash) = head;
        self.switch_store(db, new_name, new_base)?;
        self.merge_archives()
    }

    /// Creates the next active store `new_name` (replacing a leftover of an interrupted seal) and
    /// fills it: the store is returned flushed and complete, not yet named by `CURRENT`.
    fn start_store(
        &self,
        new_base: Seq,
        new_name: &str,
        head: (Seq, Hash),
        tx: Option<&Tx>,
    ) -> Result<sled::Db> {
        let new_path = self.dir.join(new_name);
        if is_present(&new_path) {
            fs::remove_dir_all(&new_path).ctx(|| format!("removing {}", new_path.display()))?;
        }
        let db = open_sled_waiting(
            &new_path,
            std::time::Instant::now() + Duration::from_secs(5),
        )?;
        self.carry_partitions(&db, new_base, head, tx)?;
        // sled's flush writes without syncing: the new store must be durable before `CURRENT`
        // names it (else a power cut leaves `CURRENT` naming a store with no head record).
        crate::files::sync_tree(&new_path)?;
        Ok(db)
    }

    /// Carries the hot partitions, the head and the unfolded marker into the new store `db` (with
    /// a bulk batch's drained markers), and writes the partitions untouched since the last seal,
    /// with a bulk batch's partitions, to an archive named by `new_base`.
    fn carry_partitions(
        &self,
        db: &sled::Db,
        new_base: Seq,
        head: (Seq, Hash),
        tx: Option<&Tx>,
    ) -> Result<()> {
        let mut batch = sled::Batch::default();
        let mut cold: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let written: std::collections::HashSet<&[u8]> = tx
            .map(|t| t.state.iter().map(|(k, _)| k.as_slice()).collect())
            .unwrap_or_default();
        for kv in self.db.scan_prefix(STATE) {
            let (k, v) = kv?;
            let bare = &k[STATE.len()..];
            if written.contains(bare) {
                continue;
            }
            if self.db.contains_key(prefixed(TOUCHED, bare))? {
                batch.insert(k, v);
            } else {
                cold.insert(bare.to_vec(), v.to_vec());
            }
        }
        let mut unfolded = self.db.get(UNFOLDED_KEY)?;
        if let Some(tx) = tx {
            // A bulk batch's partitions go to the archive too: a flat file takes them far faster
            // than sled, and the next writer of one puts its new value in the store (a deleted
            // one is an empty value, which shadows older archives like the store's does).
            for (k, v) in &tx.state {
                cold.insert(k.clone(), v.clone().unwrap_or_default());
            }
            for id in &tx.drained {
                batch.insert(prefixed(DRAINED, id.as_bytes()), &[] as &[u8]);
            }
            if tx.folded {
                unfolded = None;
            }
        }
        // Partitions untouched for a whole segment move to an archive named by the new base:
        // written before `CURRENT` switches, removed by recovery if the switch never happens.
        if !cold.is_empty() {
            archive::write(&self.dir, new_base, &cold)?;
        }
        batch.insert(HEAD_KEY, encode_head(head.0, head.1, new_base));
        if let Some(v) = unfolded {
            batch.insert(UNFOLDED_KEY, v);
        }
        db.apply_batch(batch)?;
        db.flush()?;
        Ok(())
    }

    /// Removes the spool files the active store marks drained (the markers are not carried over).
    fn remove_drained_spool(&self) -> Result<()> {
        let drained: Vec<String> = self
            .db
            .scan_prefix(DRAINED)
            .keys()
            .filter_map(|k| k.ok())
            .map(|k| String::from_utf8_lossy(&k[DRAINED.len()..]).into_owned())
            .collect();
        if drained.is_empty() {
            return Ok(());
        }
        for id in drained {
            let path = self.dir.join(spool::SPOOL_DIR).join(format!("{id}.spool"));
            spool::remove(&spool::SpoolEntry { id, path })?;
        }
        // The drained markers go with the old store: the removals must be durable first, or a
        // power cut brings the files back with nothing to say they were ingested.
        sync_dir(&self.dir.join(spool::SPOOL_DIR))
    }

    /// Points `CURRENT` at the new store `db`, then removes the old store, its log and `ROTATING`
    /// and writes `ACTIVE_EMPTY` (in that order).
    fn switch_store(&mut self, db: sled::Db, new_name: String, new_base: Seq) -> Result<()> {
        write_atomic(&self.dir, CURRENT, new_name.as_bytes(), Durability::Durable)?;
        let old = std::mem::replace(&mut self.db, db);
        drop(old);
        let old_path = self.dir.join(std::mem::replace(&mut self.active, new_name));
        let _ = fs::remove_dir_all(&old_path);
        let old_base = std::mem::replace(&mut self.base, new_base);
        // The sealed segment now holds the old log's events.
        self.wal = Wal::create(&self.dir, new_base)?;
        wal::remove(&wal::path(&self.dir, old_base));
        let _ = fs::remove_file(self.dir.join(ROTATING));
        let marker = format!(
            "{} {} {}",
            self.active,
            self.head_seq,
            crate::envelope::hex(&self.head_hash)
        );
        write_atomic(&self.dir, EMPTY, marker.as_bytes(), Durability::Durable)
    }

    /// More than `MAX_ARCHIVES` archives: merge them into the newest one's name (newest value of
    /// each key wins), then remove the older files. A crash in between leaves duplicates whose
    /// newest copy wins, which is what lookups read anyway.
    fn merge_archives(&mut self) -> Result<()> {
        let list = archive::list(&self.dir)?;
        if list.len() <= archive::MAX_ARCHIVES {
            return Ok(());
        }
        let mut merged = BTreeMap::new();
        for (_, path) in &list {
            merged.extend(archive::read_all(path)?);
        }
        merged.retain(|_, v: &mut Vec<u8>| !v.is_empty());
        let (newest, _) = *list.last().expect("non-empty");
        archive::write(&self.dir, newest, &merged)?;
        for (seq, path) in &list {
            if *seq != newest {
                fs::remove_file(path).ctx(|| format!("removing {}", path.display()))?;
            }
        }
        Ok(())
    }

    fn active_events(&self) -> Result<Vec<Envelope>> {
        let mut out = Vec::with_capacity((self.head_seq + 1 - self.base) as usize);
        for kv in self.db.scan_prefix(b"e") {
            let (k, v) = kv?;
            let env = Envelope::decode(&v).map_err(|e| {
                let seq = k
                    .get(1..9)
                    .map(|b| u64::from_be_bytes(b.try_into().unwrap()))
                    .unwrap_or(0);
                Error::corrupt(
                    DamagePlace::ActiveStore(None),
                    format!("active store, seq {seq}: {e}"),
                )
            })?;
            out.push(env);
        }
        Ok(out)
    }

    /// The sealed segments and a copy of the active events: everything a reader needs, so it can
    /// release the lock and stream the rest from immutable files without stalling hooks.
    pub fn read_snapshot(&self) -> Result<ReadSnapshot> {
        let segments = segment::list(&self.dir.join(SEGMENTS))?
            .into_iter()
            .filter(|s| s.first < self.base)
            .collect();
        Ok(ReadSnapshot {
            segments,
            active: self.active_events()?,
            head_seq: self.head_seq,
            head_hash: self.head_hash,
        })
    }

    /// The journal's size and head.
    pub fn status(&self) -> Result<Status> {
        let segments = segment::list(&self.dir.join(SEGMENTS))?;
        let (bytes, hot_files) = journal_size(&self.dir);
        let bytes = bytes.max(1);
        let last = self
            .db
            .scan_prefix(b"e")
            .next_back()
            .transpose()?
            .and_then(|(_, v)| Envelope::decode(&v).ok())
            .map(|e| e.recorded_at_us);
        let last = match last {
            Some(t) => Some(t),
            None => match segments.last() {
                Some(s) => segment::read_all(s)?.last().map(|e| e.recorded_at_us),
                None => None,
            },
        };
        Ok(Status {
            dir: self.dir.clone(),
            events: self.head_seq,
            head_hash: self.head_hash,
            segments: segments.iter().filter(|s| s.first < self.base).count(),
            active_events: self.head_seq + 1 - self.base,
            bytes,
            hot_files,
            last_recorded_at_us: last,
            spooled: spool::list(&self.dir)?.len(),
        })
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

/// After a commit at `head`: the partitions it wrote (and those it only loaded) go to the hot
/// cache, then `HEAD`; a batch of events that did not keep the checkpoint makes the cache stale.
fn keep_hot(
    hot: &HotCache,
    hh: &mut HotHead,
    dir: &Path,
    tx: &Tx,
    head: (Seq, Hash),
) -> Result<()> {
    if !tx.events.is_empty() && !tx.checkpointed {
        // The partitions this batch changed are not in the cache: a later commit that keeps
        // the checkpoint starts a new, incomplete epoch, so older files are never taken as current.
        let drained = std::mem::take(&mut hh.drained);
        *hh = new_epoch(Some(hh), false);
        hh.drained = drained;
        return hot.invalidate();
    }
    for (k, v) in &tx.cached {
        hot.put(hh.epoch, k, v)?;
    }
    for (k, v) in &tx.state {
        hot.put(hh.epoch, k, v.as_deref().unwrap_or_default())?;
    }
    hh.seq = head.0;
    hh.hash = head.1;
    // Spool files ingested here, and earlier ones whose removal has not happened yet.
    let spool = dir.join(spool::SPOOL_DIR);
    hh.drained
        .retain(|id| is_present(&spool.join(format!("{id}.spool"))));
    hh.drained.extend(tx.drained.iter().cloned());
    hot.set_head(hh)
}

/// How `Journal::open_light` opened the journal.
pub enum Opened {
    /// Without sled: the hot cache is current.
    Light(Light),
    /// In full (the cache is not current, a seal was interrupted, the checkpoint is stale, …).
    Full(Journal),
}

/// The journal opened without sled, for a writer whose whole state is in the hot cache: it holds
/// the lock and the write-ahead log, reads partitions from the cache, and commits by appending
/// to the log (durable) and writing the cache. The sled store catches up later: whoever opens it
/// next copies the log's new events in and folds them (`Journal::unfolded`); the hook starts a
/// detached drainer for that when the store lags. A cache miss is answered by `upgrade`.
pub struct Light {
    dir: PathBuf,
    base: Seq,
    head_seq: Seq,
    head_hash: Hash,
    segment_events: u64,
    wal: Wal,
    hot: HotCache,
    hot_head: HotHead,
    opts: OpenOptions,
    deadline: std::time::Instant,
    /// `None` once `finish` released it.
    lock: Option<DirLock>,
    /// Events appended by `commit_deferred` and not synced yet.
    unsynced: bool,
}

/// `Light` without its lock, options and deadline (filled in by `open_light`).
struct LightParts {
    dir: PathBuf,
    base: Seq,
    head_seq: Seq,
    head_hash: Hash,
    segment_events: u64,
    wal: Wal,
    hot: HotCache,
    hot_head: HotHead,
}

impl Light {
    /// Under the lock: `Some` when nothing needs sled — `CURRENT` names a store, no seal was
    /// interrupted, the checkpoint is not stale, and the cache is current at the log's head.
    fn try_open(dir: &Path, opts: &OpenOptions) -> Result<Option<LightParts>> {
        let Some(active) = read_current(dir)? else {
            return Ok(None);
        };
        if is_present(&dir.join(ROTATING)) || crate::checkpoint::stale_reason(dir).is_some() {
            return Ok(None);
        }
        let Some(base) = active
            .strip_prefix("active-")
            .and_then(|r| r.split('-').next())
            .and_then(|b| b.parse::<Seq>().ok())
        else {
            return Ok(None);
        };
        let hot = HotCache::new(dir);
        let Some(hot_head) = hot.head() else {
            return Ok(None);
        };
        let wal = Wal::open(dir, base)?;
        // An empty log: nothing was committed since the seal that started it, so the head is
        // the sealed one, which the cache must name.
        let (head_seq, head_hash) = match wal.tail() {
            Some(t) => t,
            None if hot_head.seq + 1 == base => (hot_head.seq, hot_head.hash),
            None => return Ok(None),
        };
        if !hot_head.current_at(head_seq, &head_hash) {
            return Ok(None);
        }
        Ok(Some(LightParts {
            dir: dir.to_path_buf(),
            base,
            head_seq,
            head_hash,
            segment_events: opts.segment_events.max(1),
            wal,
            hot,
            hot_head,
        }))
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The seq of the last event.
    pub fn head_seq(&self) -> Seq {
        self.head_seq
    }
    /// Spool files a recent commit ingested (their removal may not have happened).
    pub fn drained(&self) -> &[String] {
        &self.hot_head.drained
    }
    /// Checkpoint partition `key` from the hot cache (`Lookup::Miss`: `upgrade` and read sled).
    pub fn get_state(&self, key: &[u8]) -> Lookup {
        self.hot.get(&self.hot_head, key)
    }
    /// Events the sled store does not hold yet.
    pub fn sled_lag(&self) -> u64 {
        self.head_seq.saturating_sub(self.hot_head.sled_seq)
    }
    /// Whether the active store is full (a drainer seals it).
    pub fn needs_seal(&self) -> bool {
        self.head_seq + 1 - self.base >= self.segment_events
    }
    /// Whether every partition is in the cache.
    pub fn complete(&self) -> bool {
        self.hot_head.complete
    }

    /// Starts a batch that continues the chain from the current head.
    pub fn begin(&self) -> Tx {
        Tx::after(self.head_seq, self.head_hash)
    }

    /// Commits without sled: the events (and the spool files they came from) are appended to
    /// the write-ahead log and synced — from then on they survive anything — then the changed
    /// partitions and `HEAD` go to the hot cache.
    pub fn commit(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, true)
    }

    /// `commit`, but the log is synced by `finish` (after the lock is released) or at drop:
    /// nothing is acknowledged before then.
    pub fn commit_deferred(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, false)
    }

    /// Releases the lock, then syncs what `commit_deferred` appended: the next writer goes on
    /// while this one waits for the disk, and their syncs share the file system's commits.
    /// Once it returns `Ok`, this writer's events are durable and may be acknowledged.
    pub fn finish(&mut self) -> Result<()> {
        let syncer = if self.unsynced {
            Some(self.wal.syncer()?)
        } else {
            None
        };
        self.lock = None;
        self.unsynced = false;
        match syncer {
            Some(s) => s.sync(),
            None => Ok(()),
        }
    }

    fn commit_inner(&mut self, mut tx: Tx, sync: bool) -> Result<()> {
        if tx.is_empty() {
            return Ok(());
        }
        if self.lock.is_none()
            || tx.next_seq - tx.events.len() as u64 != self.head_seq + 1
            || tx.folded
        {
            return Err(Error::StaleTx);
        }
        tx.chain(self.head_hash);
        if !tx.events.is_empty() && is_present(&self.dir.join(EMPTY)) {
            fs::remove_file(self.dir.join(EMPTY))
                .ctx(|| format!("removing {}", self.dir.join(EMPTY).display()))?;
            sync_dir(&self.dir)?;
        }
        let events: Vec<&Envelope> = tx.events.iter().collect();
        if sync {
            // One sync covers every earlier deferred append to the same file too.
            self.wal.append(&events, &tx.drained)?;
            self.unsynced = false;
        } else {
            self.wal.append_unsynced(&events, &tx.drained)?;
            self.unsynced |= !events.is_empty();
        }
        let (seq, hash) = tx
            .events
            .last()
            .map(|e| (e.seq, e.hash))
            .unwrap_or((self.head_seq, self.head_hash));
        self.head_seq = seq;
        self.head_hash = hash;
        keep_hot(&self.hot, &mut self.hot_head, &self.dir, &tx, (seq, hash))
    }

    /// Opens sled under the lock this writer holds (a cache miss, or work only the store can
    /// do). Nothing the light writer did is lost: its commits are in the log, which the open
    /// copies into the store.
    pub fn upgrade(mut self) -> Result<Journal> {
        self.sync_pending()?;
        let lock = self.lock.take().ok_or(Error::StaleTx)?;
        Journal::open_locked(&self.dir, &self.opts, lock, self.deadline)
    }

    fn sync_pending(&mut self) -> Result<()> {
        if self.unsynced {
            self.wal.sync()?;
            self.unsynced = false;
        }
        Ok(())
    }
}

impl Drop for Light {
    /// Deferred appends not synced by `finish` (an error path) are synced before the lock goes.
    fn drop(&mut self) {
        let _ = self.sync_pending();
    }
}

// The steps of `Journal::recover`.

/// Removes the half-built stores (`rebuild-*`) of a recover that was killed.
fn remove_unfinished_rebuilds(dir: &Path) {
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("rebuild-") {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
}

/// The last sealed event's seq and hash (`0`, `ZERO_HASH` without segments); a damaged last
/// segment is an error, since the active tail cannot be rebuilt without it.
fn sealed_head(dir: &Path) -> Result<(Seq, Hash)> {
    let segments = segment::list(&dir.join(SEGMENTS))?;
    Ok(match segments.last() {
        Some(seg) => {
            let events = segment::read_all(seg).map_err(|e| {
                Error::corrupt(
                    DamagePlace::segment(&seg.path),
                    format!(
                        "the last sealed segment {} is damaged ({e}); recover cannot rebuild sealed history — restore it from a backup or an export",
                        seg.path.display()
                    ),
                )
            })?;
            let last = events
                .last()
                .ok_or_else(|| Error::corrupt(DamagePlace::segment(&seg.path), "empty segment"))?;
            (last.seq, last.hash)
        }
        None => (0, ZERO_HASH),
    })
}

/// The active store's copy of the tail, as `recover` read it.
struct StoreCopy {
    /// Its events (none when it does not open or read).
    events: Vec<Envelope>,
    /// Whether it read and starts where the sealed segments end.
    ok: bool,
    /// The highest seq claimed so far: the sealed head, or the store's head record if higher.
    claimed: Seq,
}

/// Reads the store `CURRENT` names, noting in `found` what is wrong with it.
fn read_store_copy(
    dir: &Path,
    base: Seq,
    sealed_seq: Seq,
    deadline: std::time::Instant,
    found: &mut Vec<String>,
) -> Result<StoreCopy> {
    let mut copy = StoreCopy {
        events: Vec::new(),
        ok: false,
        claimed: sealed_seq,
    };
    let current = match read_current(dir) {
        Ok(c) => c,
        Err(e) => {
            found.push(e.to_string());
            None
        }
    };
    let Some(name) = &current else {
        found.push("CURRENT names no active store".into());
        return Ok(copy);
    };
    // The store is closed again before this returns (it may be moved aside later).
    match open_sled_waiting(&dir.join(name), deadline) {
        Ok(db) => match scan_store(&db, name, &mut copy.claimed) {
            Ok((b, out)) => {
                copy.ok = b == base;
                if !copy.ok {
                    found.push(format!(
                        "the active store starts at seq {b}, the sealed segments end at {sealed_seq}"
                    ));
                }
                copy.events = out;
            }
            Err(e) => found.push(format!("the active store {name}: {e}")),
        },
        Err(Error::Busy) => return Err(Error::Busy),
        Err(e) => found.push(format!("the active store {name} cannot be opened: {e}")),
    }
    Ok(copy)
}

/// Reads a store's head record (raising `claimed` to its seq), then its events: `(base, events)`.
fn scan_store(db: &sled::Db, name: &str, claimed: &mut Seq) -> Result<(Seq, Vec<Envelope>)> {
    let (seq, _, b) = read_head(db, name)?;
    *claimed = (*claimed).max(seq);
    let mut out = Vec::new();
    for kv in db.scan_prefix(b"e") {
        let (_, v) = kv?;
        out.push(
            Envelope::decode(&v)
                .map_err(|e| Error::corrupt(DamagePlace::ActiveStore(Some(name.into())), e))?,
        );
    }
    Ok((b, out))
}

/// The longest intact chain from `base` after the event hashed `prev`, each seq from whichever
/// copy has it (counted in `r`): `(tail, head seq, head hash)`.
fn salvage_tail(
    base: Seq,
    prev: Hash,
    store_events: &[Envelope],
    log_events: &[Envelope],
    r: &mut Recovered,
) -> (Vec<Envelope>, Seq, Hash) {
    let valid = |events: &[Envelope]| -> BTreeMap<Seq, Envelope> {
        events
            .iter()
            .filter(|e| e.seq >= base && e.compute_hash() == e.hash)
            .map(|e| (e.seq, e.clone()))
            .collect()
    };
    let from_store = valid(store_events);
    let from_log = valid(log_events);
    let mut tail: Vec<Envelope> = Vec::new();
    let (mut seq, mut prev) = (base, prev);
    loop {
        let pick = [from_log.get(&seq), from_store.get(&seq)]
            .into_iter()
            .flatten()
            .find(|e| e.prev == prev)
            .cloned();
        let Some(e) = pick else { break };
        match (from_log.contains_key(&seq), from_store.contains_key(&seq)) {
            (true, false) => r.from_wal_only += 1,
            (false, true) => r.from_store_only += 1,
            _ => {}
        }
        prev = e.hash;
        seq += 1;
        tail.push(e);
    }
    (tail, seq - 1, prev)
}

/// Where the active tail starts: after the sealed segments, unless the store `CURRENT` names
/// or the newest log starts later (a segment is missing).
fn tail_base(dir: &Path, after_sealed: Seq, deadline: std::time::Instant) -> Result<Seq> {
    let from_log = wal::list(dir)?.last().map(|(b, _)| *b).unwrap_or(0);
    let from_store = match read_current(dir) {
        Ok(Some(name)) => match open_sled_waiting(&dir.join(&name), deadline) {
            Ok(db) => read_head(&db, &name).map(|(_, _, b)| b).unwrap_or(0),
            Err(Error::Busy) => return Err(Error::Busy),
            Err(_) => 0,
        },
        _ => 0,
    };
    Ok(after_sealed.max(from_log).max(from_store))
}

/// Whether a copy holds exactly the events of `tail` (same seqs, same hashes).
fn same_events(copy: &[Envelope], tail: &[Envelope]) -> bool {
    copy.len() == tail.len() && prefix_of(copy, tail)
}

/// Whether `copy` holds the first events of `tail` (all of them, or fewer).
fn prefix_of(copy: &[Envelope], tail: &[Envelope]) -> bool {
    copy.len() <= tail.len() && copy.iter().zip(tail).all(|(a, b)| a.hash == b.hash)
}

/// Builds a fresh store holding the tail and the log's drained markers, complete before `CURRENT`
/// names it; marks the checkpoint stale first.
fn rebuild_store(
    dir: &Path,
    base: Seq,
    sealed_seq: Seq,
    (head_seq, head_hash): (Seq, Hash),
    tail: &[Envelope],
    drained: &[String],
) -> Result<()> {
    // Order matters: stale marker, then the store built and flushed under a `rebuild-` name,
    // renamed and the directory synced, `ACTIVE_EMPTY` removed, and `CURRENT` switched last.
    crate::checkpoint::mark_stale(dir, "the active store was rebuilt by recover")?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let building = dir.join(format!("rebuild-{stamp}"));
    let db = open_sled(&building)?;
    let mut batch = sled::Batch::default();
    for e in tail {
        batch.insert(&event_key(e.seq), e.encode());
    }
    for id in drained {
        batch.insert(prefixed(DRAINED, id.as_bytes()), &[] as &[u8]);
    }
    batch.insert(
        HEAD_KEY,
        encode_head(head_seq.max(sealed_seq), head_hash, base),
    );
    db.apply_batch(batch)?;
    db.flush()?;
    drop(db);
    crate::files::sync_tree(&building)?;
    let name = format!("{}-{stamp}", active_name(base));
    fs::rename(&building, dir.join(&name)).ctx(|| format!("renaming {}", building.display()))?;
    sync_dir(dir)?;
    let _ = fs::remove_file(dir.join(EMPTY));
    write_atomic(dir, CURRENT, name.as_bytes(), Durability::Durable)
}

/// Moves aside (never deletes) every store `CURRENT` does not name and every log but `base`'s.
fn move_aside(dir: &Path, base: Seq, r: &mut Recovered) -> Result<()> {
    let current = read_current(dir)?.unwrap_or_default();
    for e in fs::read_dir(dir)
        .ctx(|| format!("listing {}", dir.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("active-") && name != current {
            let aside = dir.join(format!("damaged-{name}"));
            fs::rename(e.path(), &aside).ctx(|| format!("moving {name} aside"))?;
            r.moved_aside.push(aside);
            r.changed = true;
        }
    }
    for (b, path) in wal::list(dir)? {
        if b != base {
            let aside = dir.join(format!("damaged-{b:020}.wal"));
            fs::rename(&path, &aside).ctx(|| format!("moving {} aside", path.display()))?;
            r.moved_aside.push(aside);
            let mirror = wal::mirror_path(dir, b);
            if is_present(&mirror) {
                let aside = dir.join(format!("damaged-{b:020}.mirror"));
                fs::rename(&mirror, &aside).ctx(|| format!("moving {} aside", mirror.display()))?;
                r.moved_aside.push(aside);
            }
            r.changed = true;
        }
    }
    Ok(())
}

/// Bytes under a journal's directory but its hot cache, and the hot cache's file count.
pub fn journal_size(dir: &Path) -> (u64, usize) {
    let mut bytes = 0;
    let mut hot_files = 0;
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name() == crate::hot::DIR {
                hot_files = fs::read_dir(e.path()).map(|d| d.count()).unwrap_or(0);
                continue;
            }
            match e.metadata() {
                Ok(m) if m.is_dir() => bytes += dir_size(&e.path()),
                Ok(m) => bytes += m.len(),
                Err(_) => {}
            }
        }
    }
    (bytes, hot_files)
}

fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = fs::read_dir(path) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// What a reader saw under the lock: sealed segments (read later, lock-free) plus the active tail.
pub struct ReadSnapshot {
    /// The sealed segments, in seq order.
    pub segments: Vec<SegmentInfo>,
    /// The events after the last sealed segment, in seq order.
    pub active: Vec<Envelope>,
    /// The seq of the last event.
    pub head_seq: Seq,
    /// The hash of the last event.
    pub head_hash: Hash,
}

impl ReadSnapshot {
    /// Takes the lock within `wait`, copies what is needed and releases it at once.
    pub fn take(dir: &Path, wait: Duration) -> Result<ReadSnapshot> {
        let j = Journal::open(
            dir,
            &OpenOptions {
                wait,
                priority: true,
                ..OpenOptions::default()
            },
        )?;
        j.read_snapshot()
    }

    /// Like `take`, but when the active store is known to be empty (a seal wrote `ACTIVE_EMPTY`
    /// and nothing was appended or spooled since), only the lock file is touched: the sealed
    /// segments are the whole journal. `None` means: use `take`.
    pub fn take_sealed(dir: &Path, wait: Duration) -> Result<Option<ReadSnapshot>> {
        if !is_present(&dir.join(EMPTY)) {
            return Ok(None);
        }
        let _lock = DirLock::acquire(dir, wait, true)?;
        if !spool::list(dir)?.is_empty() {
            return Ok(None);
        }
        let (Some(marker), Ok(Some(current))) = (read_marker(&dir.join(EMPTY)), read_current(dir))
        else {
            return Ok(None);
        };
        let parts: Vec<&str> = marker.split_whitespace().collect();
        let [name, seq, hash] = parts.as_slice() else {
            return Ok(None);
        };
        if *name != current.trim() {
            return Ok(None);
        }
        let (Ok(head_seq), Some(head_hash)) = (seq.parse::<Seq>(), unhex(hash)) else {
            return Ok(None);
        };
        let segments: Vec<SegmentInfo> = segment::list(&dir.join(SEGMENTS))?
            .into_iter()
            .filter(|s| s.first <= head_seq)
            .collect();
        if segments.last().map(|s| s.last).unwrap_or(0) != head_seq {
            return Ok(None);
        }
        Ok(Some(ReadSnapshot {
            segments,
            active: Vec::new(),
            head_seq,
            head_hash,
        }))
    }

    /// For a journal this user can read but not write: no lock, no sled. The sealed segments and
    /// the write-ahead log of the newest base are the whole journal (spooled events excepted:
    /// their count is returned so the caller can say they are not shown).
    pub fn take_readonly(dir: &Path) -> Result<(ReadSnapshot, usize)> {
        if read_current(dir)?.is_none() {
            return Err(Error::NotFound(dir.to_path_buf()));
        }
        let logs = wal::list(dir)?;
        let segments = segment::list(&dir.join(SEGMENTS))?;
        let (base, active) = match logs.last() {
            Some((base, path)) => {
                let s = wal::scan(path)?;
                if let Some(d) = s.damage {
                    return Err(Error::corrupt(
                        DamagePlace::wal(path),
                        format!("{}: {d}", path.display()),
                    ));
                }
                (*base, s.events)
            }
            None => {
                // 0.1.0 wrote no log: only a fully sealed journal can be read without sled.
                let end = segments.last().map(|s| s.last).unwrap_or(0);
                let marker = read_marker(&dir.join(EMPTY)).unwrap_or_default();
                let sealed_only = marker.split_whitespace().nth(1) == Some(&end.to_string());
                if !sealed_only {
                    return Err(Error::OwnerOnly(dir.to_path_buf()));
                }
                (end + 1, Vec::new())
            }
        };
        let segments: Vec<SegmentInfo> = segments.into_iter().filter(|s| s.first < base).collect();
        let (head_seq, head_hash) = match active.last() {
            Some(e) => (e.seq, e.hash),
            None => match segments.last() {
                Some(seg) => segment::read_all(seg)?
                    .last()
                    .map(|e| (e.seq, e.hash))
                    .unwrap_or((0, ZERO_HASH)),
                None => (0, ZERO_HASH),
            },
        };
        let spooled = spool::list(dir).map(|l| l.len()).unwrap_or(0);
        Ok((
            ReadSnapshot {
                segments,
                active,
                head_seq,
                head_hash,
            },
            spooled,
        ))
    }

    /// Every event in seq order. Segments are streamed; their digests are not checked here
    /// (that is `verify`'s job), but each record must decode.
    pub fn for_each(&self, mut f: impl FnMut(Envelope) -> Result<()>) -> Result<()> {
        for seg in &self.segments {
            segment::stream(seg, &mut f)?;
        }
        for e in &self.active {
            f(e.clone())?;
        }
        Ok(())
    }

    /// Events with `from <= seq <= to`, skipping whole segments outside the range.
    pub fn for_each_in(
        &self,
        from: Seq,
        to: Seq,
        mut f: impl FnMut(Envelope) -> Result<()>,
    ) -> Result<()> {
        for seg in &self.segments {
            if seg.last < from || seg.first > to {
                continue;
            }
            segment::stream(seg, |e| {
                if e.seq >= from && e.seq <= to {
                    f(e)
                } else {
                    Ok(())
                }
            })?;
        }
        for e in &self.active {
            if e.seq >= from && e.seq <= to {
                f(e.clone())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Kind;
    use crate::verify::tests_support::{append, stop};

    fn open(dir: &Path) -> Journal {
        crate::verify::tests_support::open(dir, DEFAULT_SEGMENT_EVENTS)
    }

    /// Given a journal whose checkpoint is replaced (a rebuild), when it is opened light, then
    /// the hot cache holds the new checkpoint whole: a partition reads from it, and one the
    /// checkpoint lacks is known absent (no sled open for either).
    #[test]
    fn a_replaced_checkpoint_is_in_the_hot_cache_whole() {
        let d = tempfile::tempdir().unwrap();
        let mut j = open(d.path());
        for i in 1..=3 {
            append(&mut j, i);
        }
        let parts: BTreeMap<Vec<u8>, Vec<u8>> = [
            (b"global".to_vec(), b"g".to_vec()),
            (b"sess:a".to_vec(), b"session a".to_vec()),
        ]
        .into_iter()
        .collect();
        j.replace_checkpoint(&parts).unwrap();
        drop(j);
        let opts = OpenOptions::default();
        let Opened::Light(l) = Journal::open_light(d.path(), &opts).unwrap() else {
            panic!("the hot cache is not current after a rebuild");
        };
        assert!(l.complete());
        assert_eq!(
            l.get_state(b"sess:a"),
            Lookup::Known(Some(b"session a".to_vec()))
        );
        assert_eq!(l.get_state(b"sess:b"), Lookup::Known(None));
    }

    #[test]
    fn a_creation_killed_before_current_was_written_starts_clean() {
        let d = tempfile::tempdir().unwrap();
        // What a kill during sled's first open can leave: a store directory sled reads as corrupt.
        let half = d.path().join(active_name(1));
        fs::create_dir_all(&half).unwrap();
        fs::write(half.join("conf"), b"segment_size: 524288\n").unwrap();
        fs::write(half.join("db"), vec![0xAB; 4096]).unwrap();
        let mut j = open(d.path());
        let ev = NewEvent {
            recorded_at_us: 1,
            host: "claude".into(),
            kind: crate::Kind::TaskCommand,
            session_id: None,
            agent_id: None,
            payload: b"{}".to_vec(),
            truncated: None,
            spooled: false,
        };
        let mut tx = j.begin();
        tx.push(ev);
        j.commit(tx).unwrap();
        drop(j);
        assert_eq!(open(d.path()).status().unwrap().events, 1);
    }

    #[test]
    fn an_import_that_does_not_continue_the_chain_is_a_typed_break() {
        let a = tempfile::tempdir().unwrap();
        let mut j = open(a.path());
        for i in 1..=3 {
            append(&mut j, i);
        }
        let events = j.active_events().unwrap();
        let b = tempfile::tempdir().unwrap();
        let j2 = open(b.path());
        let mut tx = j2.begin();
        assert!(matches!(
            tx.push_sealed(events[1].clone()),
            Err(Error::BrokenChain(ChainBreak::Seq {
                expected: 1,
                found: 2
            }))
        ));
        let mut forged = events[0].clone();
        forged.prev = [7; 32];
        assert!(matches!(
            tx.push_sealed(forged),
            Err(Error::BrokenChain(ChainBreak::Prev { seq: 1, prev })) if prev == [7; 32]
        ));
        let mut altered = events[0].clone();
        altered.payload = b"{}".to_vec();
        let err = tx.push_sealed(altered).unwrap_err();
        assert_eq!(err.to_string(), "seq 1: hash does not match its content");
        assert_eq!(tx.push_sealed(events[0].clone()).unwrap(), 1);
        // A batch begun before another commit is refused, typed.
        let mut late = j.begin();
        late.push(NewEvent {
            recorded_at_us: 5,
            host: "claude".into(),
            kind: Kind::TaskCommand,
            session_id: None,
            agent_id: None,
            payload: b"{}".to_vec(),
            truncated: None,
            spooled: false,
        });
        append(&mut j, 4);
        assert!(matches!(j.commit(late), Err(Error::StaleTx)));
    }

    /// Given three events in the active store, when a batch of four unhashed events (and a
    /// partition) is committed as a segment, then the chain is the one four ordinary commits
    /// make, the events are in two segments and nowhere else, and the partition reads; a batch
    /// whose switch failed (a kill before `CURRENT` switches) is gone whole at the next open,
    /// and commits again.
    #[test]
    fn a_batch_committed_as_a_segment_is_the_same_chain_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let plain = d.path().join("plain");
        let mut p = crate::verify::tests_support::open(&plain, 100);
        for i in 1..=7 {
            append(&mut p, i);
        }
        let want = (p.head_seq(), p.head_hash());
        drop(p);

        let bulk = d.path().join("bulk");
        let mut j = crate::verify::tests_support::open(&bulk, 100);
        for i in 1..=3 {
            append(&mut j, i);
        }
        let batch = |j: &Journal| {
            let mut tx = j.begin();
            for i in 4..=7 {
                tx.push_unhashed(stop(i));
            }
            assert_eq!(tx.events()[3].hash, ZERO_HASH);
            tx.put_state(b"k", b"v".to_vec());
            tx
        };
        // The next store cannot be made: the seal of the first three goes through, the batch's
        // segment is written, `CURRENT` never switches.
        let blocker = bulk.join(active_name(8));
        fs::write(&blocker, b"").unwrap();
        assert!(j.commit_as_segment(batch(&j)).is_err());
        drop(j);
        fs::remove_file(&blocker).unwrap();
        let mut j = crate::verify::tests_support::open(&bulk, 100);
        assert_eq!((j.head_seq(), j.get_state(b"k").unwrap()), (3, None));
        let segs = |dir: &Path| -> Vec<(Seq, Seq)> {
            segment::list(&dir.join(SEGMENTS))
                .unwrap()
                .iter()
                .map(|s| (s.first, s.last))
                .collect()
        };
        assert_eq!(segs(&bulk), [(1, 3)]);

        j.commit_as_segment(batch(&j)).unwrap();
        assert_eq!((j.head_seq(), j.head_hash()), want);
        assert_eq!(j.get_state(b"k").unwrap(), Some(b"v".to_vec()));
        assert_eq!(j.active_events().unwrap(), Vec::<Envelope>::new());
        drop(j);
        assert_eq!(segs(&bulk), [(1, 3), (4, 7)]);
        let report = crate::verify(&bulk, Duration::from_secs(5), |_| {}).unwrap();
        assert!(report.ok(), "{:?}", report.damage);
        let j = crate::verify::tests_support::open(&bulk, 100);
        assert_eq!((j.head_seq(), j.head_hash()), want);
        assert_eq!(j.get_state(b"k").unwrap(), Some(b"v".to_vec()));
    }

    #[test]
    fn a_seal_leaves_one_store_one_log_and_no_rotation_marker() {
        let d = tempfile::tempdir().unwrap();
        let mut j = crate::verify::tests_support::open(d.path(), 5);
        for i in 1..=7 {
            append(&mut j, i);
            assert_eq!(j.seal_if_full().unwrap(), i == 5);
        }
        assert!(!d.path().join(ROTATING).exists());
        let current = fs::read_to_string(d.path().join(CURRENT)).unwrap();
        let stores: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("active-"))
            .collect();
        assert_eq!(stores, [current.trim().to_string()]);
        assert_eq!(wal::list(d.path()).unwrap().len(), 1);
    }

    #[test]
    fn recover_names_a_damaged_last_segment_by_its_place() {
        let d = tempfile::tempdir().unwrap();
        let mut j = crate::verify::tests_support::open(d.path(), 5);
        for i in 1..=7 {
            append(&mut j, i);
            j.seal_if_full().unwrap();
        }
        drop(j);
        let seg = segment::list(&d.path().join(SEGMENTS)).unwrap().remove(0);
        let mut bytes = fs::read(&seg.path).unwrap();
        bytes[20] ^= 1;
        fs::write(&seg.path, bytes).unwrap();
        match Journal::recover(d.path(), Duration::from_secs(1)) {
            Err(Error::Corrupt {
                place: DamagePlace::Segment(name),
                what,
            }) => {
                assert_eq!(name, "00000000000000000001-00000000000000000005.seg");
                assert!(what.starts_with("the last sealed segment"), "{what}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unfinished_sled_snapshot_left_by_a_kill_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let mut j = open(d.path());
        for i in 1..=5 {
            append(&mut j, i);
        }
        drop(j);
        drop(open(d.path())); // sled writes a snapshot at open once its log has advanced
        let store = d
            .path()
            .join(fs::read_to_string(d.path().join(CURRENT)).unwrap());
        let snap = fs::read_dir(&store)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("snap.")
            })
            .expect("sled wrote a snapshot");
        // What a kill between sled's write and its rename leaves: half a newer snapshot.
        let bytes = fs::read(&snap).unwrap();
        fs::write(
            store.join("snap.FFFFFFFFFFFFFFF0.generating"),
            &bytes[..bytes.len() / 2],
        )
        .unwrap();
        let j = open(d.path());
        assert_eq!(j.head_seq(), 5);
        assert_eq!(j.active_events().unwrap().len(), 5);
    }

    #[test]
    fn a_store_that_lost_its_tail_is_healed_from_the_log_and_the_events_marked_unfolded() {
        let d = tempfile::tempdir().unwrap();
        let mut j = open(d.path());
        for i in 1..=3 {
            append(&mut j, i);
        }
        // A batch the log holds and the store does not (a kill between the two writes).
        let mut tx = j.begin();
        tx.push(NewEvent {
            recorded_at_us: 4,
            host: "claude".into(),
            kind: Kind::Hook {
                name: "Stop".into(),
            },
            session_id: None,
            agent_id: None,
            payload: b"{}".to_vec(),
            truncated: None,
            spooled: false,
        });
        let ev = tx.events[0].clone();
        j.wal.append(&[&ev], &[]).unwrap();
        drop(j);
        let j = open(d.path());
        assert_eq!(j.head_seq(), 4);
        assert_eq!(j.unfolded().unwrap(), vec![ev]);
    }

    /// Events committed the way hooks commit them: to the log alone (the light path), after
    /// `n` events the store holds.
    fn light_journal(dir: &Path, n: u64, light: u64) -> Vec<Envelope> {
        let mut j = open(dir);
        for i in 1..=n {
            append(&mut j, i);
        }
        let mut tx = j.begin();
        for i in n + 1..=n + light {
            tx.push(stop(i));
        }
        let evs = tx.events.clone();
        // What a light writer does: the log gets the batch, sled does not.
        j.wal.append(&evs.iter().collect::<Vec<_>>(), &[]).unwrap();
        drop(j);
        evs
    }

    /// Given a flipped byte inside the log while its mirror is whole, and events only the log
    /// and mirror hold, when the journal is opened in full, then every event is there (the
    /// record is taken from the mirror): no panic, no fork, nothing lost.
    #[test]
    fn a_flipped_byte_inside_the_log_costs_nothing_when_its_mirror_is_whole() {
        let d = tempfile::tempdir().unwrap();
        let light = light_journal(d.path(), 3, 4);
        let log = wal::path(d.path(), 1);
        let mut bytes = fs::read(&log).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x20;
        fs::write(&log, &bytes).unwrap();
        let j = open(d.path());
        assert_eq!((j.head_seq(), j.head_hash()), (7, light[3].hash));
        assert_eq!(j.active_events().unwrap().len(), 7);
        assert_eq!(
            fs::read(&log).unwrap(),
            fs::read(wal::mirror_path(d.path(), 1)).unwrap()
        );
        drop(j);
        let report = crate::verify(d.path(), Duration::from_secs(5), |_| {}).unwrap();
        assert!(report.ok(), "{:?}", report.damage);
    }

    /// The same flip in both copies: the events after it cannot be chained. The open refuses
    /// nothing and panics nowhere; what the copies held past the flip is kept aside and said to
    /// be possibly missing.
    #[test]
    fn a_flip_in_both_copies_keeps_what_follows_aside_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        light_journal(d.path(), 3, 4);
        let mut bytes = fs::read(wal::path(d.path(), 1)).unwrap();
        let at = bytes.len() * 3 / 4;
        bytes[at] ^= 0x20;
        fs::write(wal::path(d.path(), 1), &bytes).unwrap();
        fs::write(wal::mirror_path(d.path(), 1), &bytes).unwrap();
        let j = open(d.path());
        assert!(j.head_seq() >= 3, "{}", j.head_seq());
        let kept = fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("damaged-"))
            .count();
        assert_eq!(kept, 2);
        assert!(!crate::incidents::take_unread(d.path()).is_empty());
    }

    /// Given a log that lost its last records while the store holds them (both copies cut
    /// short: the store is ahead), when it is opened, then the log is rewritten from the store
    /// and the repair is noted. Both copies deleted is refused until `recover` rewrites them.
    #[test]
    fn a_store_ahead_of_the_log_rewrites_the_log_and_a_deleted_log_waits_for_recover() {
        let d = tempfile::tempdir().unwrap();
        let mut j = open(d.path());
        for i in 1..=5 {
            append(&mut j, i);
        }
        let head = j.head_hash();
        drop(j);
        // Five appends, five batches of one record of the same size: keep the first two.
        let two = {
            let b = fs::read(wal::path(d.path(), 1)).unwrap();
            b[..b.len() / 5 * 2].to_vec()
        };
        fs::write(wal::path(d.path(), 1), &two).unwrap();
        fs::write(wal::mirror_path(d.path(), 1), &two).unwrap();
        assert_eq!(wal::scan(&wal::path(d.path(), 1)).unwrap().events.len(), 2);
        let j = open(d.path());
        assert_eq!((j.head_seq(), j.head_hash()), (5, head));
        drop(j);
        assert_eq!(wal::scan(&wal::path(d.path(), 1)).unwrap().events.len(), 5);
        let said = crate::incidents::read(d.path());
        assert!(
            said.iter()
                .any(|i| i.text.contains("rewritten from the store")),
            "{said:?}"
        );

        fs::remove_file(wal::path(d.path(), 1)).unwrap();
        fs::remove_file(wal::mirror_path(d.path(), 1)).unwrap();
        assert!(matches!(
            Journal::open(d.path(), &OpenOptions::default()),
            Err(Error::Corrupt {
                place: DamagePlace::Wal(_),
                ..
            })
        ));
        let report = crate::verify(d.path(), Duration::from_secs(5), |_| {}).unwrap();
        assert!(
            report
                .damage
                .iter()
                .any(|d| d.what.starts_with("missing, with its mirror")),
            "{:?}",
            report.damage
        );
        let r = Journal::recover(d.path(), Duration::from_secs(5)).unwrap();
        assert!(r.rewrote_log && !r.rebuilt_store, "{r:?}");
        let j = open(d.path());
        assert_eq!((j.head_seq(), j.head_hash()), (5, head));
    }
}
