//! Sealing the active store into a segment, rotation, bulk batches committed as segments.

use super::commit::keep_hot;
use super::*;

impl Journal {
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
        // The new base's empty log exists (its names durable) before `CURRENT` names the base:
        // a log gone with its mirror is damage, never a power cut between the two.
        let wal = Wal::create(&self.dir, new_base)?;
        self.remove_drained_spool()?;
        (self.head_seq, self.head_hash) = head;
        self.switch_store(db, wal, new_name, new_base)?;
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
            crate::door::by_path::remove_tree(&new_path)
                .ctx(|| format!("removing {}", new_path.display()))?;
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
        let drained = self.drained_ids();
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
    fn switch_store(
        &mut self,
        db: sled::Db,
        wal: Wal,
        new_name: String,
        new_base: Seq,
    ) -> Result<()> {
        write_atomic(&self.dir, CURRENT, new_name.as_bytes(), Durability::Durable)?;
        let old = std::mem::replace(&mut self.db, db);
        drop(old);
        let old_path = self.dir.join(std::mem::replace(&mut self.active, new_name));
        let _ = crate::door::by_path::remove_tree(&old_path);
        let old_base = std::mem::replace(&mut self.base, new_base);
        // The sealed segment now holds the old log's events.
        self.wal = wal;
        wal::remove(&wal::path(&self.dir, old_base));
        let _ = crate::door::unlink(self.dir.join(ROTATING));
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
                crate::door::unlink(path).ctx(|| format!("removing {}", path.display()))?;
            }
        }
        Ok(())
    }
}
