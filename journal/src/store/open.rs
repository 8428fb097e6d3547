//! Opening a journal: the lock, `CURRENT`, the store, the log reconciled with it, an
//! interrupted seal finished.

use super::recover::prefix_of;
use super::*;

impl Journal {
    /// Opens (and with `create`, creates) the journal in `dir`, taking its lock within `opts.wait`.
    pub fn open(dir: &Path, opts: &OpenOptions) -> Result<Journal> {
        let deadline = std::time::Instant::now() + opts.wait;
        let lock = lock_journal(dir, opts)?;
        Journal::open_locked(dir, opts, lock, deadline)
    }

    pub(super) fn open_locked(
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
                    crate::door::by_path::remove_tree(&store)
                        .ctx(|| format!("removing the unfinished store {}", store.display()))?;
                }
                let db = open_sled_waiting(&store, deadline)?;
                db.insert(HEAD_KEY, encode_head(0, ZERO_HASH, 1))?;
                db.flush()?;
                drop(db);
                // sled's flush does not sync: the store must be durable before `CURRENT` names it.
                crate::files::sync_tree(&store)?;
                // So is its (empty) log: `CURRENT` never names a base whose log is missing.
                Wal::create(dir, 1)?;
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
                let drained = self.drained_ids();
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

    /// Finishes or undoes a rotation that a crash interrupted: whatever `CURRENT` names is the truth.
    fn recover_rotation(&mut self) -> Result<()> {
        for entry in crate::door::by_path::read_dir(&self.dir)
            .ctx(|| format!("listing {}", self.dir.display()))?
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("active-") && name != self.active {
                let _ = crate::door::by_path::remove_tree(&entry.path);
            }
        }
        let segdir = self.dir.join(SEGMENTS);
        for seg in segment::list(&segdir)? {
            if seg.first >= self.base {
                crate::door::unlink(&seg.path)
                    .ctx(|| format!("removing {}", seg.path.display()))?;
            }
        }
        if let Ok(rd) = crate::door::by_path::read_dir(&segdir) {
            for entry in rd {
                if entry.file_name().to_string_lossy().ends_with(".tmp") {
                    let _ = crate::door::unlink(&entry.path);
                }
            }
        }
        for (seq, path) in archive::list(&self.dir)? {
            if seq > self.base {
                crate::door::unlink(&path).ctx(|| format!("removing {}", path.display()))?;
            }
        }
        // An older log is covered by the segment the seal wrote before switching.
        for (base, path) in wal::list(&self.dir)? {
            if base != self.base {
                wal::remove(&path);
            }
        }
        let _ = crate::door::unlink(self.dir.join(ROTATING));
        sync_dir(&self.dir)
    }
}
