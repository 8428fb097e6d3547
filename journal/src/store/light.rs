//! The journal opened without sled (see `Light`).

use super::commit::{keep_hot, log_batch, Sync};
use super::*;

impl Journal {
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
}

/// The size of sled's segments, which its store file grows to at its second open.
const SLED_SEGMENT: u64 = 512 * 1024;

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
pub(super) struct LightParts {
    pub(super) dir: PathBuf,
    pub(super) base: Seq,
    pub(super) head_seq: Seq,
    pub(super) head_hash: Hash,
    pub(super) segment_events: u64,
    pub(super) wal: Wal,
    pub(super) hot: HotCache,
    pub(super) hot_head: HotHead,
}

impl Light {
    /// Under the lock: `Some` when nothing needs sled — `CURRENT` names a store, no seal was
    /// interrupted, the checkpoint is not stale, and the cache is current at the log's head.
    pub(super) fn try_open(dir: &Path, opts: &OpenOptions) -> Result<Option<LightParts>> {
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

    /// The journal's size and head, as `Journal::status` gives them, without sled: the last
    /// event is the write-ahead log's last record. `None` when that record cannot be read in a
    /// few small reads (a log to heal), or the store has not laid out its file yet: the caller
    /// asks the store.
    pub fn status(&self) -> Result<Option<Status>> {
        // sled lays out its first segment (512 KiB) at a store's second open, not at its first:
        // a store not reopened since it was made (by a seal, an import) is smaller now than it
        // will be after the next open. The store answers then, once, so that the size `status`
        // shows is the one that stays.
        let Some(active) = read_current(&self.dir)? else {
            return Ok(None);
        };
        let laid_out = crate::door::status(self.dir.join(active).join("db"))
            .is_ok_and(|m| m.is_file() && m.len() >= SLED_SEGMENT - 1);
        if !laid_out {
            return Ok(None);
        }
        let last = match self.wal.tail() {
            None => None,
            Some((seq, _)) => match self.wal.read_last()? {
                Some(e) if e.seq == seq => Some(e.recorded_at_us),
                _ => return Ok(None),
            },
        };
        super::read::status_of(&self.dir, (self.head_seq, self.head_hash), self.base, last)
            .map(Some)
    }

    /// Starts a batch that continues the chain from the current head.
    pub fn begin(&self) -> Tx {
        Tx::after(self.head_seq, self.head_hash)
    }

    /// Commits without sled: the events (and the spool files they came from) are appended to
    /// the write-ahead log and synced — from then on they survive anything — then the changed
    /// partitions and `HEAD` go to the hot cache.
    pub fn commit(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, Sync::Now)
    }

    /// `commit`, but the log is synced by `finish` (after the lock is released) or at drop:
    /// nothing is acknowledged before then.
    pub fn commit_deferred(&mut self, tx: Tx) -> Result<()> {
        self.commit_inner(tx, Sync::Later)
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

    fn commit_inner(&mut self, mut tx: Tx, sync: Sync) -> Result<()> {
        if tx.is_empty() {
            return Ok(());
        }
        if self.lock.is_none() || tx.folded {
            return Err(Error::StaleTx);
        }
        let (seq, hash) = log_batch(
            &self.dir,
            &mut self.wal,
            self.base,
            (self.head_seq, self.head_hash),
            &mut tx,
            sync,
        )?;
        // One sync covers every earlier deferred append to the same file too.
        self.unsynced = sync == Sync::Later && (self.unsynced || !tx.events.is_empty());
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
