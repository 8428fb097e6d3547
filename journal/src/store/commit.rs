//! The commit path, the checkpoint's partitions and the hot cache kept current.

use super::*;

impl Journal {
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
        // The write-ahead log first: once it is synced, the batch survives whatever happens to
        // sled's files.
        let (seq, hash) = log_batch(
            &self.dir,
            &mut self.wal,
            self.base,
            (self.head_seq, self.head_hash),
            &mut tx,
            Sync::Now,
        )?;
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

    /// The spool files the active store marks ingested (`d:` keys).
    pub(super) fn drained_ids(&self) -> Vec<String> {
        self.db
            .scan_prefix(DRAINED)
            .keys()
            .filter_map(|k| k.ok())
            .map(|k| String::from_utf8_lossy(&k[DRAINED.len()..]).into_owned())
            .collect()
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
                crate::door::unlink(&path).ctx(|| format!("removing {}", path.display()))?;
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
        // The spool files the store's markers say were ingested and that are still there: a
        // light writer skips exactly these. The store is the truth, not the earlier head's list,
        // which is lost with a cache made stale (a light writer that ingested a file removes it
        // only after its lock is released and its log synced: until then it must stay known).
        let spool = self.dir.join(spool::SPOOL_DIR);
        h.drained = self
            .drained_ids()
            .into_iter()
            .filter(|id| is_present(&spool.join(format!("{id}.spool"))))
            .collect();
        for (k, v) in parts {
            self.hot.put(h.epoch, k, v)?;
        }
        self.hot.set_head(&h)?;
        self.hot_head = h;
        Ok(())
    }
}

/// After a commit at `head`: the partitions it wrote (and those it only loaded) go to the hot
/// cache, then `HEAD`; a batch of events that did not keep the checkpoint makes the cache stale.
/// When a batch appended to the log is synced.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sync {
    /// Before the commit returns.
    Now,
    /// By the caller, before it acknowledges anything (`Light::finish`).
    Later,
}

/// The one commit path, up to the log: the batch must continue `head`, its hashes are computed,
/// `ACTIVE_EMPTY` goes (durably, before the log grows), the log must end at `head` (the open made
/// the log and the store agree), and the batch is appended to the log and its mirror. Returns
/// the head the batch ends at. A writer with a store applies the batch to it after this.
pub(super) fn log_batch(
    dir: &Path,
    wal: &mut Wal,
    base: Seq,
    head: (Seq, Hash),
    tx: &mut Tx,
    sync: Sync,
) -> Result<(Seq, Hash)> {
    if tx.next_seq - tx.events.len() as u64 != head.0 + 1 {
        return Err(Error::StaleTx);
    }
    tx.chain(head.1);
    if !tx.events.is_empty() && is_present(&dir.join(EMPTY)) {
        crate::door::unlink(dir.join(EMPTY))
            .ctx(|| format!("removing {}", dir.join(EMPTY).display()))?;
        sync_dir(dir)?;
    }
    let anchored = (head.0 >= base).then_some(head);
    if wal.tail() != anchored {
        return Err(Error::corrupt(
            DamagePlace::wal(wal.path()),
            format!(
                "{} does not end at the journal's head (seq {}); run `hookjournal recover`",
                wal.path().display(),
                head.0
            ),
        ));
    }
    let events: Vec<&Envelope> = tx.events.iter().collect();
    match sync {
        Sync::Now => wal.append(&events, &tx.drained)?,
        Sync::Later => wal.append_unsynced(&events, &tx.drained)?,
    }
    Ok(tx.events.last().map(|e| (e.seq, e.hash)).unwrap_or(head))
}

pub(super) fn keep_hot(
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
