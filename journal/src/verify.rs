//! `verify`: the hash chain, segment integrity and storage damage, reported where found.

pub use crate::damage::{Damage, DamagePlace};
use crate::envelope::{hex, Envelope, Hash, Seq, ZERO_HASH};
use crate::error::ChainBreak;
use crate::lock::DirLock;
use crate::{segment, spool, store, wal, Error, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// What `verify` checked and found.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Events read, sealed and active.
    pub events: u64,
    /// Sealed segments read.
    pub segments: usize,
    /// The hash of the last event read (the chain head when nothing is damaged).
    pub head_hash: Hash,
    /// Every problem found, at most one chain break per segment and one for the active tail.
    pub damage: Vec<Damage>,
    /// Events the write-ahead log holds that the sled store has not ingested yet (hooks commit
    /// to the log and the hot cache; a drainer or the next command copies them in). Not damage.
    pub not_ingested: u64,
    /// Spooled events read and found whole: hooks put them there (the fast path, a busy lock)
    /// and the next writer ingests them. Not damage.
    pub spooled: usize,
    /// What is not damage but will be repaired by the next writer, one line each: an interrupted
    /// write (a copy of the log shorter than the other, or ending in an unfinished batch), a
    /// store that lost what an earlier boot had not synced.
    pub notes: Vec<String>,
}

impl VerifyReport {
    /// Whether nothing is damaged.
    pub fn ok(&self) -> bool {
        self.damage.is_empty()
    }
}

/// The chain as followed so far: the seq and prev hash the next event must have.
struct Chain {
    expect_seq: Seq,
    prev: Hash,
}

impl Chain {
    /// Checks that `e` continues the chain, then moves past it whatever the answer.
    fn check(&mut self, e: &Envelope, place: &DamagePlace) -> Option<Damage> {
        let out = ChainBreak::check(e, self.expect_seq, &self.prev)
            .err()
            .map(|b| Damage {
                seq: Some(e.seq),
                place: place.clone(),
                what: describe(&b),
            });
        self.expect_seq = e.seq + 1;
        self.prev = e.hash;
        out
    }
}

impl Chain {
    /// Continues the chain through a segment read on its own: its first event is checked here
    /// (as `check` would), the rest were checked against each other. The segment's first break.
    fn stitch(&mut self, links: &SegmentLinks, place: &DamagePlace) -> Option<Damage> {
        let (Some((seq, prev, whole)), Some((last_seq, last_hash))) = (links.first, links.last)
        else {
            return None;
        };
        let first = if seq != self.expect_seq {
            Some(ChainBreak::Seq {
                expected: self.expect_seq,
                found: seq,
            })
        } else if prev != self.prev {
            Some(ChainBreak::Prev { seq, prev })
        } else if !whole {
            Some(ChainBreak::Altered { seq })
        } else {
            None
        };
        self.expect_seq = last_seq + 1;
        self.prev = last_hash;
        first
            .as_ref()
            .or(links.inner_break.as_ref())
            .map(|b| Damage {
                seq: Some(match b {
                    ChainBreak::Seq { found, .. } => *found,
                    ChainBreak::Prev { seq, .. } | ChainBreak::Altered { seq } => *seq,
                }),
                place: place.clone(),
                what: describe(b),
            })
    }
}

/// A chain break as `verify` says it (with its likely cause).
fn describe(b: &ChainBreak) -> String {
    match b {
        ChainBreak::Seq { expected, found } => format!(
            "expected seq {expected}, found seq {found} (an event was deleted, reordered or duplicated)"
        ),
        ChainBreak::Prev { seq, prev } => format!(
            "prev hash {} does not match the hash of seq {} (broken chain)",
            &hex(prev)[..16],
            seq.saturating_sub(1)
        ),
        ChainBreak::Altered { .. } => {
            "content does not match its hash (the event was altered)".into()
        }
    }
}

/// What the active tail looks like from inside, without changing anything (verify never heals).
struct Active {
    events: Vec<Envelope>,
    head: Option<(Seq, Hash)>,
    base: Seq,
}

/// Reads the active store the way `Journal::open` would, but repairs nothing.
fn inspect_store(dir: &Path, wait: Duration, report: &mut VerifyReport) -> Result<Option<Active>> {
    let deadline = std::time::Instant::now() + wait;
    let name = match store::read_current(dir) {
        Ok(Some(n)) => n,
        Ok(None) => {
            if store::has_history(dir)? {
                report.damage.push(Damage {
                    seq: None,
                    place: DamagePlace::Current,
                    what: "missing, but the journal holds events".into(),
                });
                return Ok(None);
            }
            return Err(Error::NotFound(dir.to_path_buf()));
        }
        Err(e) => {
            report.damage.push(Damage {
                seq: None,
                place: DamagePlace::Current,
                what: e.to_string(),
            });
            return Ok(None);
        }
    };
    if !dir.join(&name).is_dir() {
        report.damage.push(Damage {
            seq: None,
            place: DamagePlace::Current,
            what: format!("names {name}, which does not exist"),
        });
        return Ok(None);
    }
    let db = match store::open_sled_waiting(&dir.join(&name), deadline) {
        Ok(db) => db,
        Err(Error::Busy) => return Err(Error::Busy),
        Err(e) => {
            report.damage.push(Damage {
                seq: None,
                place: DamagePlace::ActiveStore(Some(name)),
                what: format!("cannot be opened: {e}"),
            });
            return Ok(None);
        }
    };
    let read = (|| {
        let (seq, hash, base) = store::read_head(&db, &name)?;
        let mut events = Vec::new();
        for kv in db.scan_prefix(b"e") {
            let (k, v) = kv?;
            let env = Envelope::decode(&v).map_err(|e| {
                let seq = k
                    .get(1..9)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes)
                    .unwrap_or(0);
                Error::corrupt(
                    DamagePlace::ActiveStore(Some(name.clone())),
                    format!("seq {seq} does not decode: {e}"),
                )
            })?;
            events.push(env);
        }
        Ok::<_, Error>(Active {
            events,
            head: Some((seq, hash)),
            base,
        })
    })();
    match read {
        Ok(a) => Ok(Some(a)),
        Err(e) => {
            report.damage.push(Damage {
                seq: None,
                place: DamagePlace::ActiveStore(Some(name)),
                what: e.to_string(),
            });
            Ok(None)
        }
    }
}

/// Checks the whole journal without changing it: the sealed segments, the active store against
/// its write-ahead log (a lost tail on either side), the chain across all of them, spooled
/// files, archives, and the checkpoint's stale marker. Damage is collected (first per place).
pub fn verify(dir: &Path, wait: Duration, progress: impl FnMut(u64)) -> Result<VerifyReport> {
    verify_visiting(dir, wait, progress, None)
}

/// `verify`, handing `visit` every event it reads, in chain order (the sealed segments, then the
/// active tail as every reader will see it once repaired), as it reads them: a caller that folds
/// the whole log (the projections against a full replay) reads it once, not twice. What `visit`
/// saw is the log only when the report has no damage.
pub fn verify_visiting(
    dir: &Path,
    wait: Duration,
    mut progress: impl FnMut(u64),
    mut visit: Option<&mut dyn FnMut(&Envelope)>,
) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    // Held to the end: nothing changes the journal while it is read. A link in place of one of
    // the journal's directories is named, and nothing is read through it.
    let lock = match lock_for_reading(dir, wait) {
        Err(Error::Unsafe { path, what }) => {
            report.damage.push(stranger(dir, &path, &what));
            return Ok(report);
        }
        // Only record-only hooks so far: their events wait in the spool and no log exists yet.
        // That is a journal (an empty log and its spool), not a missing one.
        Err(Error::NotFound(_)) if !spool::list(dir)?.is_empty() => {
            check_spool(dir, &mut report)?;
            check_strangers(dir, &mut report);
            return Ok(report);
        }
        other => other?,
    };
    let segments = segment::list(&dir.join("segments"))?;
    let active = if lock.is_some() {
        inspect_store(dir, wait, &mut report)?
    } else {
        // Read-only here: the log is the only copy this user can read.
        None
    };
    let base = tail_base(dir, active.as_ref(), &segments)?;
    let wal_path = wal::path(dir, base);
    let pair = wal::read_pair(dir, base)?;
    check_copies(dir, base, &pair, active.as_ref(), &mut report);
    let log = &pair.scan;
    let segments: Vec<_> = segments.into_iter().filter(|s| s.first < base).collect();
    report.segments = segments.len();
    let mut chain = Chain {
        expect_seq: 1,
        prev: ZERO_HASH,
    };
    check_segments(
        &segments,
        &mut chain,
        &mut report,
        &mut progress,
        visit.as_deref_mut(),
    );
    // The active tail: the store and the log must hold the same events.
    let tail: Vec<Envelope> = match &active {
        Some(a) => {
            // sled's flush does not sync: only in the boot that wrote it does `sled_seq` prove
            // the store once held those events (after a power cut the log still holds them).
            let head = crate::hot::HotCache::new(dir).head();
            let sled_seq = head
                .as_ref()
                .filter(|h| h.boot == crate::hot::boot_id())
                .map(|h| h.sled_seq);
            if let Some(h) = head.filter(|h| h.boot != crate::hot::boot_id()) {
                let last = a.events.last().map(|e| e.seq).unwrap_or(0);
                if h.sled_seq > last {
                    report.notes.push(format!(
                        "the active store lost seq {}..{} to a restart before sled synced them; the log holds them and the next writer copies them in",
                        last + 1,
                        h.sled_seq
                    ));
                }
            }
            compare_store_and_wal(a, log, sled_seq, &DamagePlace::wal(&wal_path), &mut report);
            union_of(a, log)
        }
        None => log.events.clone(),
    };
    check_tail(&tail, &mut chain, &mut report);
    if let Some(visit) = visit {
        tail.iter().for_each(visit);
    }
    if let Some(a) = &active {
        check_head_record(a, base, &mut report);
    }
    check_marker(dir, &chain, active.as_ref(), &mut report);
    check_spool(dir, &mut report)?;
    check_strangers(dir, &mut report);
    check_archives(dir, &mut report)?;
    check_checkpoint(dir, &mut report);
    progress(report.events);
    Ok(report)
}

/// Makes sure there is a journal, and takes its lock when this user can (`None`: read-only).
fn lock_for_reading(dir: &Path, wait: Duration) -> Result<Option<DirLock>> {
    let present = |n: &str| crate::files::is_present(&dir.join(n));
    if !present("CURRENT") && !present("lock") && !store::has_history(dir)? {
        return Err(Error::NotFound(dir.to_path_buf()));
    }
    let lock = match DirLock::acquire(dir, wait, true) {
        Ok(l) => Some(l),
        Err(Error::ReadOnly(_)) => None,
        Err(e) => return Err(e),
    };
    if !present("CURRENT") && !store::has_history(dir)? {
        return Err(Error::NotFound(dir.to_path_buf()));
    }
    Ok(lock)
}

/// The active tail's first seq: the store's base, else the newest log's, else after the segments.
fn tail_base(
    dir: &Path,
    active: Option<&Active>,
    segments: &[segment::SegmentInfo],
) -> Result<Seq> {
    Ok(match active {
        Some(a) => a.base,
        None => wal::list(dir)?
            .last()
            .map(|(b, _)| *b)
            .unwrap_or_else(|| segments.last().map(|s| s.last + 1).unwrap_or(1)),
    })
}

/// Names what is wrong with the log's two copies. Damage is what an interrupted write cannot
/// explain: a copy or `wal/` missing, a damaged record followed by whole ones, two copies that
/// disagree. A copy that is shorter than the other or ends in an unfinished batch is a note:
/// the next writer completes or cuts it, and nothing acknowledged is lost.
fn check_copies(
    dir: &Path,
    base: Seq,
    pair: &wal::Pair,
    active: Option<&Active>,
    report: &mut VerifyReport,
) {
    let wal_place = DamagePlace::Wal(format!("{base:020}.wal"));
    let mirror_place = DamagePlace::Wal(format!("{base:020}.mirror"));
    // Whether the machine restarted since the journal's last write (its hot cache's head names
    // another boot, or is gone): only then can a power cut explain a tear.
    let restarted = crate::hot::HotCache::new(dir)
        .head()
        .is_none_or(|h| h.boot != crate::hot::boot_id());
    let first_missing = pair.scan.events.last().map(|e| e.seq + 1).unwrap_or(base);
    if !dir.join(wal::DIR).is_dir() {
        // A journal written before the log has neither a log nor a hot cache.
        if dir.join(crate::hot::DIR).is_dir() {
            report.damage.push(Damage {
                seq: None,
                place: wal_place,
                what: "the write-ahead log's directory wal/ is missing: events only it held are lost; `hookjournal recover` rewrites it from the store".into(),
            });
        }
        return;
    }
    if !pair.log.present && !pair.mirror.present {
        let store_holds = active.is_some_and(|a| !a.events.is_empty());
        report.damage.push(Damage {
            seq: None,
            place: wal_place.clone(),
            what: format!(
                "missing, with its mirror: events only they held are lost; `hookjournal recover` rewrites them{}",
                if store_holds { " from the store" } else { "" }
            ),
        });
        return;
    }
    for (state, place, other, other_state) in [
        (&pair.log, &wal_place, &mirror_place, &pair.mirror),
        (&pair.mirror, &mirror_place, &wal_place, &pair.log),
    ] {
        if state.matches {
            continue;
        }
        if !state.present {
            report.damage.push(Damage {
                seq: None,
                place: place.clone(),
                what: format!("missing; {other} holds every record: the next writer or `hookjournal recover` rewrites it"),
            });
            continue;
        }
        describe_copy(
            Copy {
                state,
                place,
                other,
                other_state,
            },
            pair,
            first_missing,
            restarted,
            report,
        );
    }
    if let Some(at) = pair.conflict {
        report.damage.push(Damage {
            seq: seq_at(pair, at),
            place: wal_place,
            what: format!("it and {mirror_place} hold different records at byte {at} (the journal was edited): `hookjournal recover` keeps what continues the chain"),
        });
    }
}

/// One copy of the log, beside the other.
struct Copy<'a> {
    state: &'a wal::CopyState,
    place: &'a DamagePlace,
    other: &'a DamagePlace,
    other_state: &'a wal::CopyState,
}

/// What a present copy that differs from the merged log says: a note when an interrupted
/// write explains it, damage otherwise (`restarted`: the machine restarted since the journal's
/// last write).
fn describe_copy(
    c: Copy<'_>,
    pair: &wal::Pair,
    first_missing: Seq,
    restarted: bool,
    report: &mut VerifyReport,
) {
    let Copy {
        state,
        place,
        other,
        other_state,
    } = c;
    match &state.stops {
        // A power cut keeps later pages of an unsynced write without earlier ones: when the
        // other copy holds the torn record and every one after it, nothing is lost and the
        // next writer rewrites this copy from the other.
        Some((at, what)) if state.records_after_stop && (*at as usize) < pair.bytes.len() => {
            report.notes.push(format!(
                "{place}: {what} at byte {at}, followed by whole records; {other} holds them intact (a write torn by a power cut, or damage to this copy alone): the next writer or `hookjournal recover` rewrites it"
            ))
        }
        // Past the merged log, where the other copy holds nothing whole (it never reached
        // here, or its own write was torn here with nothing after): a batch is acknowledged
        // only once both copies are synced past it, so nothing from here on ever was; the
        // opener cuts it, keeping the whole records aside.
        Some((at, what)) if state.records_after_stop && holds_nothing_from(other_state, *at) => {
            report.notes.push(format!(
                "{place}: {what} at byte {at}, followed by whole records {other} never reached: an interrupted write, never acknowledged; the next writer cuts it and keeps those records aside"
            ))
        }
        // Torn in both copies (no copy holds the record here intact) after a restart: a power
        // cut can drop the same unsynced page of both, and a batch is acknowledged only once
        // both copies are synced past it, which would have made this record durable in both.
        // So nothing from here on ever was. In the boot of the journal's last write no power
        // cut came between: the same damage there is damage.
        Some((at, what)) if state.records_after_stop && restarted => {
            report.notes.push(format!(
                "{place}: {what} at byte {at}, followed by whole records, with {other} torn there too: an interrupted write a restart cut (never acknowledged); the next writer cuts it and keeps those records aside"
            ))
        }
        Some((at, what)) if state.records_after_stop => report.damage.push(Damage {
            seq: Some(first_missing.min(seq_at(pair, *at).unwrap_or(first_missing))),
            place: place.clone(),
            what: format!("{what} at byte {at}, followed by whole records no copy can chain: `hookjournal recover` keeps them aside"),
        }),
        Some((at, what)) => report.notes.push(format!(
            "{place}: {what} at byte {at}: an interrupted write, never acknowledged; the next writer cuts it"
        )),
        None => report.notes.push(format!(
            "{place} lacks the last {} bytes {other} holds: an interrupted write; the next writer completes it",
            (pair.bytes.len() as u64).saturating_sub(state.len)
        )),
    }
}

/// Whether a copy holds no whole record at or after byte `at`: it ends there, or its reading
/// stops there (or before) with no whole record after the stop.
fn holds_nothing_from(copy: &wal::CopyState, at: u64) -> bool {
    copy.len <= at
        || copy
            .stops
            .as_ref()
            .is_some_and(|(stop, _)| *stop <= at && !copy.records_after_stop)
}

/// The seq of the first event at or after byte `at` of the merged log.
fn seq_at(pair: &wal::Pair, at: u64) -> Option<Seq> {
    let before = wal::scan_bytes(&pair.bytes[..(at as usize).min(pair.bytes.len())]);
    Some(
        before
            .events
            .last()
            .map(|e| e.seq + 1)
            .unwrap_or_else(|| pair.scan.events.first().map(|e| e.seq).unwrap_or(0)),
    )
}

/// What the chain needs of one sealed segment, read on its own (segments are independent until
/// they are stitched): its first event, where its own events stop continuing each other, its last.
struct SegmentLinks {
    /// The first event's seq and `prev`, and whether its content hashes to its `hash`.
    first: Option<(Seq, Hash, bool)>,
    /// The first event after the first that does not continue the one before it.
    inner_break: Option<ChainBreak>,
    /// The last event's seq and hash.
    last: Option<(Seq, Hash)>,
    events: u64,
}

/// Reads a segment (its digest checked) and follows the chain inside it. The check of each event
/// after the first depends only on the event before it, so this is exactly the sequential check
/// but for the first event, which `stitch` checks against the segments before.
fn segment_links(
    seg: &segment::SegmentInfo,
    mut keep: impl FnMut(Envelope) -> Result<()>,
) -> Result<SegmentLinks> {
    let mut links = SegmentLinks {
        first: None,
        inner_break: None,
        last: None,
        events: 0,
    };
    segment::for_each(seg, true, |e| {
        match links.last {
            None => links.first = Some((e.seq, e.prev, e.compute_hash() == e.hash)),
            Some((seq, prev)) if links.inner_break.is_none() => {
                links.inner_break = ChainBreak::check(&e, seq + 1, &prev).err();
            }
            Some(_) => {}
        }
        links.last = Some((e.seq, e.hash));
        links.events += 1;
        keep(e)
    })?;
    Ok(links)
}

/// Every segment's links, read on up to as many threads as the machine has cores (at most 4), in
/// segment order.
fn read_links(segments: &[segment::SegmentInfo]) -> Vec<Result<SegmentLinks>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4)
        .min(segments.len().max(1));
    if threads <= 1 {
        return segments
            .iter()
            .map(|s| segment_links(s, |_| Ok(())))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<Result<SegmentLinks>>> = (0..segments.len()).map(|_| None).collect();
    let done = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(seg) = segments.get(i) else {
                            return mine;
                        };
                        mine.push((i, segment_links(seg, |_| Ok(()))));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a verify thread panicked"))
            .collect::<Vec<_>>()
    });
    for (i, r) in done {
        out[i] = Some(r);
    }
    out.into_iter()
        .map(|r| r.expect("every segment read"))
        .collect()
}

/// What a segment's reader hands the thread that visits the events in order.
enum Piece {
    Events(Vec<Envelope>),
    Done(Result<SegmentLinks>),
}

/// Every segment's links, as `read_links`, with every event handed to `visit` in seq order:
/// segment `i` is read (digest, decoding, hashes) by thread `i % n` of `n` (one per core but the
/// caller's, at most 3), a few batches ahead of `visit`, which runs on the caller's thread.
fn read_links_visiting(
    segments: &[segment::SegmentInfo],
    visit: &mut (dyn FnMut(&Envelope) + '_),
) -> Vec<Result<SegmentLinks>> {
    use std::sync::mpsc::{sync_channel, Receiver};
    const BATCH: usize = 1024;
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .saturating_sub(1)
        .clamp(1, 3)
        .min(segments.len().max(1));
    std::thread::scope(|scope| {
        let mut receivers: Vec<Receiver<Piece>> = Vec::with_capacity(n);
        for k in 0..n {
            let (tx, rx) = sync_channel(8);
            receivers.push(rx);
            scope.spawn(move || {
                for seg in segments.iter().skip(k).step_by(n) {
                    let mut batch = Vec::with_capacity(BATCH);
                    let links = segment_links(seg, |e| {
                        batch.push(e);
                        if batch.len() == BATCH {
                            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                            // The caller is gone (it panicked): stop reading.
                            tx.send(Piece::Events(full)).map_err(|_| Error::Busy)?;
                        }
                        Ok(())
                    });
                    if !batch.is_empty() && tx.send(Piece::Events(batch)).is_err() {
                        return;
                    }
                    if tx.send(Piece::Done(links)).is_err() {
                        return;
                    }
                }
            });
        }
        let mut out = Vec::with_capacity(segments.len());
        for i in 0..segments.len() {
            loop {
                match receivers[i % n].recv() {
                    Ok(Piece::Events(events)) => events.iter().for_each(&mut *visit),
                    Ok(Piece::Done(links)) => {
                        out.push(links);
                        break;
                    }
                    Err(_) => panic!("a verify thread panicked"),
                }
            }
        }
        out
    })
}

/// Follows the chain through the sealed segments: a gap, an unreadable segment, and each
/// segment's first break are damage. Segments are read in parallel, then stitched in order;
/// with `visit`, their events are handed to it in order as they are read.
fn check_segments(
    segments: &[segment::SegmentInfo],
    chain: &mut Chain,
    report: &mut VerifyReport,
    progress: &mut dyn FnMut(u64),
    visit: Option<&mut (dyn FnMut(&Envelope) + '_)>,
) {
    let all = match visit {
        Some(visit) => read_links_visiting(segments, visit),
        None => read_links(segments),
    };
    for (seg, links) in segments.iter().zip(all) {
        let place = DamagePlace::segment(&seg.path);
        if seg.first != chain.expect_seq {
            report.damage.push(Damage {
                seq: Some(chain.expect_seq),
                place: place.clone(),
                what: format!(
                    "segments leave a gap: expected seq {}, segment starts at {}",
                    chain.expect_seq, seg.first
                ),
            });
        }
        match links {
            Ok(links) => {
                let first_bad = chain.stitch(&links, &place);
                report.damage.extend(first_bad);
                report.events += links.events;
            }
            Err(e) => {
                report.damage.push(Damage {
                    seq: Some(seg.first),
                    place,
                    what: e.to_string(),
                });
                chain.expect_seq = seg.last + 1;
                chain.prev = ZERO_HASH;
            }
        }
        progress(report.events);
    }
}

/// Names the events only the log holds, those only the store holds, and the first seq on which
/// the two disagree. Events after the store's last one that only the log holds are not damage:
/// hooks commit to the log alone and the store ingests them later (`Light`) — unless the hot
/// cache says a writer had already put them in the store (`sled_seq`), which then lost them.
fn compare_store_and_wal(
    a: &Active,
    log: &wal::Scan,
    sled_seq: Option<Seq>,
    wal_place: &DamagePlace,
    report: &mut VerifyReport,
) {
    let in_store: BTreeMap<Seq, Hash> = a.events.iter().map(|e| (e.seq, e.hash)).collect();
    let in_log: BTreeMap<Seq, Hash> = log.events.iter().map(|e| (e.seq, e.hash)).collect();
    let store_last = in_store
        .keys()
        .next_back()
        .copied()
        .unwrap_or(a.base.saturating_sub(1));
    let ingested = sled_seq.unwrap_or(0).max(store_last);
    report.not_ingested = in_log.keys().filter(|s| **s > ingested).count() as u64;
    let only_log: Vec<Seq> = in_log
        .keys()
        .filter(|s| !in_store.contains_key(s) && **s <= ingested)
        .copied()
        .collect();
    let only_store: Vec<Seq> = in_store
        .keys()
        .filter(|s| !in_log.contains_key(s))
        .copied()
        .collect();
    if let (Some(first), Some(last)) = (only_log.first(), only_log.last()) {
        report.damage.push(Damage {
            seq: Some(*first),
            place: DamagePlace::ActiveStore(None),
            what: format!(
                "lacks {} event(s) in seq {first}..{last} (lost, or never written after a kill); {wal_place} holds them: `hookjournal recover` restores them",
                only_log.len()
            ),
        });
    }
    if let (Some(first), Some(last)) = (only_store.first(), only_store.last()) {
        report.damage.push(Damage {
            seq: Some(*first),
            place: wal_place.clone(),
            what: format!(
                "lacks {} event(s) in seq {first}..{last} that the active store holds: `hookjournal recover` rewrites it",
                only_store.len()
            ),
        });
    }
    if let Some(seq) = in_store
        .iter()
        .find(|(s, h)| in_log.get(s).is_some_and(|l| l != *h))
        .map(|(s, _)| *s)
    {
        report.damage.push(Damage {
            seq: Some(seq),
            place: wal_place.clone(),
            what: "disagrees with the active store".into(),
        });
    }
}

/// The tail every reader will see once repaired: the store's events, plus those only the log has.
fn union_of(a: &Active, log: &wal::Scan) -> Vec<Envelope> {
    let mut all: BTreeMap<Seq, Envelope> = a.events.iter().map(|e| (e.seq, e.clone())).collect();
    for e in &log.events {
        all.entry(e.seq).or_insert_with(|| e.clone());
    }
    all.into_values().collect()
}

/// Follows the chain through the active tail (its first break is damage) and counts its events.
fn check_tail(tail: &[Envelope], chain: &mut Chain, report: &mut VerifyReport) {
    let mut first_bad = None;
    for e in tail {
        if let Some(d) = chain.check(e, &DamagePlace::ActiveStore(None)) {
            first_bad.get_or_insert(d);
        }
    }
    report.events += tail.len() as u64;
    report.damage.extend(first_bad);
    report.head_hash = chain.prev;
}

/// Checks that the store's head record names the last event it holds.
fn check_head_record(a: &Active, base: Seq, report: &mut VerifyReport) {
    let Some((seq, hash)) = a.head else {
        return;
    };
    let last = a.events.last().map(|e| (e.seq, e.hash));
    let matches = match last {
        Some(l) => l == (seq, hash),
        None => seq == base - 1,
    };
    if !matches {
        report.damage.push(Damage {
            seq: Some(seq),
            place: DamagePlace::ActiveStore(None),
            what: format!(
                "head record says seq {seq} but the store's events end at seq {}",
                last.map(|l| l.0).unwrap_or(base - 1)
            ),
        });
    }
}

/// Checks `ACTIVE_EMPTY` against the head the chain reached and the store's events.
fn check_marker(dir: &Path, chain: &Chain, active: Option<&Active>, report: &mut VerifyReport) {
    if let Err(what) = store::check_empty_marker(
        dir,
        (chain.expect_seq - 1, chain.prev),
        active.map(|a| a.events.len()).unwrap_or(0),
    ) {
        report.damage.push(Damage {
            seq: None,
            place: DamagePlace::EmptyMarker,
            what,
        });
    }
}

/// Names the spooled files waiting to be ingested that do not read (one ingested meanwhile is not
/// damage).
fn check_spool(dir: &Path, report: &mut VerifyReport) -> Result<()> {
    for entry in spool::list(dir)? {
        match spool::read(&entry) {
            Ok(_) => report.spooled += 1,
            Err(e) if entry.path.exists() => {
                report.damage.push(Damage {
                    seq: None,
                    place: DamagePlace::Spool(entry.id.clone()),
                    what: e.to_string(),
                });
            }
            // Ingested (and removed) since the listing.
            Err(_) => {}
        }
    }
    Ok(())
}

/// Names every link, special file and other user's file in the journal's directory: the journal
/// never follows or uses them (a cloned repository or another user put them there).
fn check_strangers(dir: &Path, report: &mut VerifyReport) {
    for (path, what) in crate::files::strangers(dir) {
        report.damage.push(stranger(dir, &path, &what));
    }
}

/// Damage: `path` in the journal is not the journal's (`what` it is).
fn stranger(dir: &Path, path: &Path, what: &str) -> Damage {
    Damage {
        seq: None,
        place: DamagePlace::Stranger(path.strip_prefix(dir).unwrap_or(path).display().to_string()),
        what: format!("{what}: not the journal's; remove it"),
    }
}

/// Names the checkpoint archives that do not read.
fn check_archives(dir: &Path, report: &mut VerifyReport) -> Result<()> {
    for (_, path) in crate::archive::list(dir)? {
        // An archive merged away since the listing (a concurrent seal) is not damage.
        if let Err(e) = crate::archive::read_all(&path).map(|_| ()).or_else(|e| {
            if path.exists() {
                Err(e)
            } else {
                Ok(())
            }
        }) {
            report.damage.push(Damage {
                seq: None,
                place: DamagePlace::archive(&path),
                what: e.to_string(),
            });
        }
    }
    Ok(())
}

/// Names a checkpoint marked stale, with the reason it was marked.
fn check_checkpoint(dir: &Path, report: &mut VerifyReport) {
    if let Some(why) = crate::checkpoint::stale_reason(dir) {
        report.damage.push(Damage {
            seq: None,
            place: DamagePlace::Checkpoint,
            what: format!(
                "stale ({}); the next reader or `hookjournal recover` rebuilds it",
                why.trim()
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::NewEvent;
    use crate::kind::{Body, WireKind};
    use crate::segment;
    use crate::store::{Journal, OpenOptions};
    use std::time::Duration;

    fn ev(i: u64) -> NewEvent {
        NewEvent {
            recorded_at_us: i as i64,
            host: "claude".into(),
            kind: WireKind {
                tag: 0,
                body: Body::Text("PreToolUse".into()),
            },
            session_id: Some(format!("s{}", i % 3)),
            agent_id: None,
            payload: format!("{{\"i\":{i}}}").into_bytes(),
            truncated: None,
            spooled: false,
        }
    }

    /// 35 events in segments of 10: three sealed segments and 5 in the active store.
    fn journal() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(
            dir.path(),
            &OpenOptions {
                create: true,
                segment_events: 10,
                ..OpenOptions::default()
            },
        )
        .unwrap();
        for i in 1..=35 {
            let mut tx = j.begin();
            tx.push(ev(i));
            j.commit(tx).unwrap();
            j.seal_if_full().unwrap();
        }
        dir
    }

    fn segs(dir: &Path) -> Vec<segment::SegmentInfo> {
        segment::list(&dir.join("segments")).unwrap()
    }

    fn check(dir: &Path) -> VerifyReport {
        verify(dir, Duration::from_secs(1), |_| {}).unwrap()
    }

    #[test]
    fn a_sound_journal_verifies() {
        let dir = journal();
        assert_eq!(segs(dir.path()).len(), 3);
        let r = check(dir.path());
        assert!(r.ok(), "{:?}", r.damage);
        assert_eq!(r.events, 35);
    }

    /// Given three sealed segments and an active tail, when verified with a visitor, then it
    /// sees every event once, in seq order.
    #[test]
    fn every_event_is_visited_once_in_order() {
        let dir = journal();
        let mut seen = Vec::new();
        let r = verify_visiting(
            dir.path(),
            Duration::from_secs(1),
            |_| {},
            Some(&mut |e: &Envelope| seen.push(e.seq)),
        )
        .unwrap();
        assert!(r.ok(), "{:?}", r.damage);
        assert_eq!(seen, (1..=35).collect::<Vec<_>>());
    }

    #[test]
    fn a_flipped_byte_in_a_segment_is_named() {
        let dir = journal();
        let s = &segs(dir.path())[1];
        let mut bytes = std::fs::read(&s.path).unwrap();
        bytes[40] ^= 0x01;
        std::fs::write(&s.path, bytes).unwrap();
        let r = check(dir.path());
        assert!(!r.ok());
        let name = s.path.file_name().unwrap().to_string_lossy();
        assert!(
            r.damage
                .iter()
                .any(|d| d.place == DamagePlace::Segment(name.to_string())),
            "{:?}",
            r.damage
        );
    }

    #[test]
    fn reordered_events_with_a_forged_digest_break_the_chain_where_they_are() {
        let dir = journal();
        let s = segs(dir.path())[1].clone();
        let mut events = segment::read_all(&s).unwrap();
        events.swap(3, 4);
        std::fs::remove_file(&s.path).unwrap();
        // Written with a valid footer and the same name: only the chain can tell.
        let tmp = tempfile::tempdir().unwrap();
        let forged = segment::write(tmp.path(), &events);
        // `write` names the file by its first/last seq; here those are unchanged.
        std::fs::rename(forged.unwrap().path, &s.path).unwrap();
        let r = check(dir.path());
        assert!(!r.ok());
        assert_eq!(r.damage[0].seq, Some(15), "{:?}", r.damage);
        assert!(
            r.damage[0].what.contains("expected seq 14"),
            "{:?}",
            r.damage
        );
    }

    #[test]
    fn a_deleted_event_in_the_active_store_is_named_and_found_in_the_log() {
        let dir = journal();
        {
            let j = Journal::open(dir.path(), &OpenOptions::default()).unwrap();
            drop(j);
        }
        let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
        let db = sled::Config::new()
            .path(dir.path().join(current.trim()))
            .open()
            .unwrap();
        let mut key = vec![b'e'];
        key.extend_from_slice(&33u64.to_be_bytes());
        assert!(db.remove(key).unwrap().is_some());
        db.flush().unwrap();
        drop(db);
        let r = check(dir.path());
        assert_eq!(r.damage.len(), 1, "{:?}", r.damage);
        assert_eq!(r.damage[0].place, DamagePlace::ActiveStore(None));
        assert_eq!(r.damage[0].seq, Some(33));
        assert!(
            r.damage[0].what.contains("lacks 1 event(s) in seq 33..33")
                && r.damage[0]
                    .what
                    .contains("wal/00000000000000000031.wal holds them"),
            "{:?}",
            r.damage
        );
    }

    #[test]
    fn damage_places_render_as_verify_has_always_named_them() {
        let places = [
            (
                DamagePlace::Segment("00000000000000000001-00000000000000000010.seg".into()),
                "00000000000000000001-00000000000000000010.seg",
            ),
            (DamagePlace::ActiveStore(None), "active store"),
            (
                DamagePlace::ActiveStore(Some("active-00000000000000000031".into())),
                "active store active-00000000000000000031",
            ),
            (
                DamagePlace::Wal("00000000000000000031.wal".into()),
                "wal/00000000000000000031.wal",
            ),
            (DamagePlace::Current, "CURRENT"),
            (DamagePlace::EmptyMarker, "ACTIVE_EMPTY"),
            (
                DamagePlace::Spool("00000000000000000007-0000000042-000000".into()),
                "spool/00000000000000000007-0000000042-000000.spool",
            ),
            (
                DamagePlace::Archive("00000000000000000031.cold".into()),
                "state/00000000000000000031.cold",
            ),
            (DamagePlace::Checkpoint, "checkpoint"),
        ];
        for (place, text) in places {
            assert_eq!(place.to_string(), text, "{place:?}");
        }
    }

    #[test]
    fn a_damaged_wal_and_archive_are_named_by_their_typed_place() {
        let dir = journal();
        // The same record damaged in both copies: no copy holds it whole.
        for copy in [
            crate::wal::path(dir.path(), 31),
            crate::wal::mirror_path(dir.path(), 31),
        ] {
            let mut bytes = std::fs::read(&copy).unwrap();
            bytes[10] ^= 0x40;
            std::fs::write(&copy, bytes).unwrap();
        }
        // No partition was ever archived here: a file that is not an archive stands for one.
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        let archive = dir.path().join("state").join("00000000000000000031.cold");
        std::fs::write(&archive, b"not an archive").unwrap();
        let r = check(dir.path());
        let places: Vec<_> = r.damage.iter().map(|d| &d.place).collect();
        assert!(
            places.contains(&&DamagePlace::Wal("00000000000000000031.wal".into())),
            "{:?}",
            r.damage
        );
        assert!(
            places.contains(&&DamagePlace::Archive("00000000000000000031.cold".into())),
            "{:?}",
            r.damage
        );
    }

    /// Given a log copy torn in its middle (a power cut keeps later pages of an unsynced write
    /// without earlier ones) while the mirror holds every record, when the journal is verified,
    /// then it is valid with a note naming the torn copy, and nothing is called damage.
    #[test]
    fn a_copy_torn_in_its_middle_beside_a_whole_one_is_a_note() {
        let dir = journal();
        let wal = crate::wal::path(dir.path(), 31);
        let mut bytes = std::fs::read(&wal).unwrap();
        bytes[10..20].fill(0);
        std::fs::write(&wal, bytes).unwrap();
        let r = check(dir.path());
        assert!(r.damage.is_empty(), "{:?}", r.damage);
        assert!(
            r.notes.iter().any(|n| n.starts_with("wal/00000000000000000031.wal: ")
                && n.contains("followed by whole records; wal/00000000000000000031.mirror holds them intact")),
            "{:?}",
            r.notes
        );
    }

    /// That `verify` called no torn record damage, and said a note `is_it` recognises.
    fn tear_is_a_note(r: &VerifyReport, is_it: impl Fn(&str) -> bool) {
        assert!(
            !r.damage
                .iter()
                .any(|d| d.what.contains("followed by whole records")),
            "{:?}",
            r.damage
        );
        assert!(r.notes.iter().any(|n| is_it(n)), "{:?}", r.notes);
    }

    /// Where each record of a log ends (at least four records).
    fn record_ends(bytes: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut n = 0;
        for cut in 0..=bytes.len() {
            let k = crate::wal::scan_bytes(&bytes[..cut]).events.len();
            if k > n {
                ends.push(cut);
                n = k;
            }
        }
        assert!(ends.len() >= 4, "{ends:?}");
        ends
    }

    /// Given a log copy torn past where its mirror ends, with whole records after the tear (a
    /// power cut kept later pages of an unsynced append), when verified, then it is a note: no
    /// batch there was ever acknowledged, since the mirror never reached it.
    #[test]
    fn a_tear_past_where_the_other_copy_ends_is_a_note() {
        let dir = journal();
        let wal = crate::wal::path(dir.path(), 31);
        let mirror = crate::wal::mirror_path(dir.path(), 31);
        let bytes = std::fs::read(&wal).unwrap();
        let ends = record_ends(&bytes);
        let k = ends.len();
        std::fs::write(&mirror, &bytes[..ends[k - 4]]).unwrap();
        let mut torn = bytes.clone();
        torn[ends[k - 3] + 2..ends[k - 2]].fill(0);
        std::fs::write(&wal, &torn).unwrap();
        let r = check(dir.path());
        // (Here the store holds those events too, and says so: this journal's store is synced,
        // which a power cut before the mirror's sync would not have let happen.)
        tear_is_a_note(&r, |n| n.contains("never reached: an interrupted write"));
    }

    /// Given both copies torn at the same record by one interrupted write, the log with nothing
    /// after the tear and its mirror with whole records after it (a power cut kept later pages of
    /// the mirror's unsynced append), when verified, then it is a note: the log holds nothing
    /// whole from there on, so no batch there was ever acknowledged (a power-loss cycle of seed
    /// 953069118 was called damage).
    #[test]
    fn one_write_torn_in_both_copies_with_records_after_in_one_is_a_note() {
        let dir = journal();
        let wal = crate::wal::path(dir.path(), 31);
        let mirror = crate::wal::mirror_path(dir.path(), 31);
        let bytes = std::fs::read(&wal).unwrap();
        let ends = record_ends(&bytes);
        let k = ends.len();
        let mut torn = bytes.clone();
        torn[ends[k - 4] + 2..ends[k - 3]].fill(0);
        std::fs::write(&mirror, &torn).unwrap();
        std::fs::write(&wal, &torn[..ends[k - 3]]).unwrap();
        let r = check(dir.path());
        tear_is_a_note(&r, |n| {
            n.starts_with("wal/00000000000000000031.mirror: ")
                && n.contains("never reached: an interrupted write")
        });
    }

    /// Given the same record torn in both copies with whole records after it in both, when
    /// verified in the boot of the journal's last write, then it is damage (no power cut came
    /// between: something damaged the files); when verified after a restart, then it is a note:
    /// a power cut drops the same unsynced page of both copies, and nothing past it was ever
    /// acknowledged (a power-loss cycle of seed 300051151 was called damage).
    #[test]
    fn one_record_torn_in_both_copies_is_damage_unless_the_machine_restarted() {
        let dir = journal();
        let wal = crate::wal::path(dir.path(), 31);
        let mirror = crate::wal::mirror_path(dir.path(), 31);
        let bytes = std::fs::read(&wal).unwrap();
        let mut torn = bytes.clone();
        torn[10..20].fill(0);
        std::fs::write(&wal, &torn).unwrap();
        std::fs::write(&mirror, &torn).unwrap();
        // The journal's last write in this boot.
        let hot = crate::hot::HotCache::new(dir.path());
        let mut head = crate::hot::HotHead {
            epoch: 1,
            seq: 35,
            hash: [0; 32],
            boot: crate::hot::boot_id().to_string(),
            complete: false,
            sled_seq: 35,
            drained: Vec::new(),
        };
        hot.set_head(&head).unwrap();
        let r = check(dir.path());
        assert!(
            r.damage.iter().any(|d| d
                .what
                .contains("followed by whole records no copy can chain")),
            "{:?}",
            r.damage
        );
        head.boot = "an earlier boot".into();
        hot.set_head(&head).unwrap();
        let r = check(dir.path());
        tear_is_a_note(&r, |n| {
            n.contains("torn there too: an interrupted write a restart cut")
        });
    }

    #[test]
    fn an_edited_payload_is_caught_by_its_hash() {
        let dir = journal();
        let s = segs(dir.path())[0].clone();
        let mut events = segment::read_all(&s).unwrap();
        events[2].payload = b"{\"i\":999}".to_vec();
        std::fs::remove_file(&s.path).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::rename(segment::write(tmp.path(), &events).unwrap().path, &s.path).unwrap();
        let r = check(dir.path());
        assert_eq!(r.damage[0].seq, Some(3));
        assert!(r.damage[0].what.contains("altered"), "{:?}", r.damage);
    }
}

#[cfg(test)]
mod sealed_reads {
    use super::tests_support::*;
    use crate::store::ReadSnapshot;
    use std::time::Duration;

    #[test]
    fn a_fully_sealed_journal_is_read_without_the_store_until_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = open(dir.path(), 1000);
        for i in 1..=25 {
            append(&mut j, i);
        }
        j.seal().unwrap();
        drop(j);
        let snap = ReadSnapshot::take_sealed(dir.path(), Duration::from_secs(1))
            .unwrap()
            .expect("sealed read");
        let mut n = 0;
        snap.for_each(|_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((n, snap.head_seq), (25, 25));
        let mut j = open(dir.path(), 1000);
        append(&mut j, 26);
        drop(j);
        assert!(
            ReadSnapshot::take_sealed(dir.path(), Duration::from_secs(1))
                .unwrap()
                .is_none()
        );
        let full = ReadSnapshot::take(dir.path(), Duration::from_secs(1)).unwrap();
        assert_eq!(full.head_seq, 26);
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use crate::envelope::NewEvent;
    use crate::kind::{Body, WireKind};
    use crate::store::{Journal, OpenOptions};
    use std::path::Path;

    pub fn open(dir: &Path, segment_events: u64) -> Journal {
        Journal::open(
            dir,
            &OpenOptions {
                create: true,
                segment_events,
                ..OpenOptions::default()
            },
        )
        .unwrap()
    }

    /// The `i`th test event: a Stop hook recorded at `i` µs.
    pub fn stop(i: u64) -> NewEvent {
        NewEvent {
            recorded_at_us: i as i64,
            host: "claude".into(),
            kind: WireKind {
                tag: 0,
                body: Body::Text("Stop".into()),
            },
            session_id: None,
            agent_id: None,
            payload: format!("{{\"i\":{i}}}").into_bytes(),
            truncated: None,
            spooled: false,
        }
    }

    pub fn append(j: &mut Journal, i: u64) {
        let mut tx = j.begin();
        tx.push(stop(i));
        j.commit(tx).unwrap();
    }
}
