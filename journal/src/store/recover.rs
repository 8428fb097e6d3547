//! `Journal::recover`: the active tail rebuilt from every intact copy.

use super::*;

impl Journal {
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
        let unwitnessed = this_boot.is_none();
        // And of how far sled got: a store that lost events it had is rebuilt (as `verify` says).
        let sled_had = this_boot.map(|h| h.sled_seq).unwrap_or(0);
        HotCache::new(dir).invalidate()?;
        let mut r = Recovered::default();
        remove_unfinished_rebuilds(dir);
        remove_strangers(dir, &mut r);
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
        r.log_gone_uncounted = unwitnessed && !pair.log.present && !pair.mirror.present;
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
        let wal_matches = pair.sound()
            && pair.log.present
            && pair.mirror.present
            && same_events(&pair.scan.events, &tail);
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
            let _ = crate::door::unlink(dir.join(EMPTY));
            r.changed = true;
        }
        let _ = crate::door::unlink(dir.join(ROTATING));
        sync_dir(dir)?;
        Ok(r)
    }
}

// The steps of `Journal::recover`.

/// Removes the half-built stores (`rebuild-*`) of a recover that was killed.
fn remove_unfinished_rebuilds(dir: &Path) {
    if let Ok(rd) = crate::door::by_path::read_dir(dir) {
        for e in rd {
            if e.file_name().to_string_lossy().starts_with("rebuild-") {
                let _ = crate::door::by_path::remove_tree(&e.path);
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
    // A damaged `CURRENT` can name a store that is not there: opening it would create one.
    if !crate::files::is_present(&dir.join(name)) {
        found.push(format!(
            "CURRENT names the active store {name}, which does not exist"
        ));
        return Ok(copy);
    }
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
        // (Only a store that is there: opening one a damaged `CURRENT` names would create it.)
        Ok(Some(name)) if crate::files::is_present(&dir.join(&name)) => {
            match open_sled_waiting(&dir.join(&name), deadline) {
                Ok(db) => read_head(&db, &name).map(|(_, _, b)| b).unwrap_or(0),
                Err(Error::Busy) => return Err(Error::Busy),
                Err(_) => 0,
            }
        }
        _ => 0,
    };
    Ok(after_sealed.max(from_log).max(from_store))
}

/// Whether a copy holds exactly the events of `tail` (same seqs, same hashes).
fn same_events(copy: &[Envelope], tail: &[Envelope]) -> bool {
    copy.len() == tail.len() && prefix_of(copy, tail)
}

/// Whether `copy` holds the first events of `tail` (all of them, or fewer).
pub(super) fn prefix_of(copy: &[Envelope], tail: &[Envelope]) -> bool {
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
    crate::door::by_path::rename(&building, &dir.join(&name))
        .ctx(|| format!("renaming {}", building.display()))?;
    sync_dir(dir)?;
    let _ = crate::door::unlink(dir.join(EMPTY));
    write_atomic(dir, CURRENT, name.as_bytes(), Durability::Durable)
}

/// Moves aside (never deletes) every store `CURRENT` does not name and every log but `base`'s.
fn move_aside(dir: &Path, base: Seq, r: &mut Recovered) -> Result<()> {
    let current = read_current(dir)?.unwrap_or_default();
    for e in crate::door::by_path::read_dir(dir).ctx(|| format!("listing {}", dir.display()))? {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("active-") && name != current {
            let aside = dir.join(format!("damaged-{name}"));
            crate::door::by_path::rename(&e.path, &aside).ctx(|| format!("moving {name} aside"))?;
            r.moved_aside.push(aside);
            r.changed = true;
        }
    }
    for (b, path) in wal::list(dir)? {
        if b != base {
            let aside = dir.join(format!("damaged-{b:020}.wal"));
            crate::door::by_path::rename(&path, &aside)
                .ctx(|| format!("moving {} aside", path.display()))?;
            r.moved_aside.push(aside);
            let mirror = wal::mirror_path(dir, b);
            if is_present(&mirror) {
                let aside = dir.join(format!("damaged-{b:020}.mirror"));
                crate::door::by_path::rename(&mirror, &aside)
                    .ctx(|| format!("moving {} aside", mirror.display()))?;
                r.moved_aside.push(aside);
            }
            r.changed = true;
        }
    }
    // Said in the same order on every file system (a directory lists in its own order).
    r.moved_aside.sort();
    Ok(())
}

/// Links and special files someone planted in the journal: removed (never their targets), and
/// said.
fn remove_strangers(dir: &Path, r: &mut Recovered) {
    for (path, what) in crate::files::strangers(dir) {
        let plain = crate::door::status(&path).is_ok_and(|m| m.is_file() || m.is_dir());
        if !plain && crate::door::unlink(&path).is_ok() {
            r.found.push(format!("removed {}: {what}", path.display()));
            r.changed = true;
        }
    }
}
