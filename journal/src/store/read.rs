//! What readers take: snapshots of the log, the journal's size and status.

use super::*;

impl Journal {
    pub(super) fn active_events(&self) -> Result<Vec<Envelope>> {
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
        let last = self
            .db
            .scan_prefix(b"e")
            .next_back()
            .transpose()?
            .and_then(|(_, v)| Envelope::decode(&v).ok())
            .map(|e| e.recorded_at_us);
        status_of(&self.dir, (self.head_seq, self.head_hash), self.base, last)
    }
}

/// The status of the journal in `dir` at `head`, its active store starting at `base`, the last
/// event in it recorded at `last` (`None`: the active store is empty, and the last sealed
/// segment says).
pub(super) fn status_of(
    dir: &Path,
    head: (Seq, Hash),
    base: Seq,
    last: Option<i64>,
) -> Result<Status> {
    let segments = segment::list(&dir.join(SEGMENTS))?;
    let (bytes, hot_files) = journal_size(dir);
    let bytes = bytes.max(1);
    let last = match last {
        Some(t) => Some(t),
        None => match segments.last() {
            Some(s) => segment::read_all(s)?.last().map(|e| e.recorded_at_us),
            None => None,
        },
    };
    Ok(Status {
        dir: dir.to_path_buf(),
        events: head.0,
        head_hash: head.1,
        segments: segments.iter().filter(|s| s.first < base).count(),
        active_events: head.0 + 1 - base,
        bytes,
        hot_files,
        last_recorded_at_us: last,
        spooled: spool::list(dir)?.len(),
    })
}

/// Bytes under a journal's directory but its hot cache, and the hot cache's file count.
pub fn journal_size(dir: &Path) -> (u64, usize) {
    let mut bytes = 0;
    let mut hot_files = 0;
    if let Ok(rd) = crate::door::by_path::read_dir(dir) {
        for e in rd {
            if e.file_name() == crate::hot::DIR {
                // Counted by name: one file per session, none of them looked at.
                hot_files = crate::door::Dir::open_nofollow(&e.path)
                    .and_then(|d| d.names())
                    .map_or(0, |n| n.len());
            } else if e.is_dir() {
                bytes += dir_size(&e.path);
            } else {
                bytes += e.len();
            }
        }
    }
    (bytes, hot_files)
}

fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = crate::door::by_path::read_dir(path) {
        for e in rd {
            total += if e.is_dir() {
                dir_size(&e.path)
            } else {
                e.len()
            };
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
        if self.segments.len() < 2 || read_ahead_threads() == 0 {
            for seg in &self.segments {
                segment::stream(seg, &mut f)?;
            }
        } else {
            read_ahead(&self.segments, &mut f)?;
        }
        for e in &self.active {
            f(e.clone())?;
        }
        Ok(())
    }

    /// Like `for_each`, for a salvage (`export --skip-damaged`): a segment that cannot be read
    /// to its end is reported to `damaged` (the segment, the first seq not read, why) and the
    /// rest of the journal is still read. An error of `f` stops it as in `for_each`.
    pub fn for_each_salvaging(
        &self,
        mut f: impl FnMut(Envelope) -> Result<()>,
        mut damaged: impl FnMut(&SegmentInfo, Seq, &Error),
    ) -> Result<()> {
        for seg in &self.segments {
            let (mut next, mut own) = (seg.first, None);
            let read = segment::stream(seg, |e| {
                next = e.seq + 1;
                f(e).map_err(|err| {
                    own = Some(err);
                    Error::Busy // a stand-in that stops the stream: `own` holds the error
                })
            });
            match (read, own) {
                (_, Some(err)) => return Err(err),
                (Err(e), None) => damaged(seg, next, &e),
                (Ok(()), None) => {}
            }
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

/// Threads that read and decode segments ahead of a `for_each` caller: one per core but the
/// caller's, at most 2 (0 on a single core: then the caller reads them itself). Measured on 2
/// busy cores, a second reader beside the fold (and parsing payloads there) cost 1.12x the
/// sequential verify where one reader made it 0.76x: the fold, not the reading, is the limit.
fn read_ahead_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .saturating_sub(1)
        .min(2)
}

/// What a read-ahead thread hands the caller: events in order, a segment's end, or its error.
enum Ahead {
    Events(Vec<Envelope>),
    End,
    Failed(Error),
}

/// `segment::stream` over every segment, in order, with the reading and decoding done by
/// `read_ahead_threads` threads (segment `i` by thread `i % n`), a few batches ahead of `f`: the
/// decoding overlaps the fold, which is sequential. What `f` sees, and
/// every error, are exactly the sequential reading's; an error of `f` stops the threads.
fn read_ahead(segments: &[SegmentInfo], f: &mut dyn FnMut(Envelope) -> Result<()>) -> Result<()> {
    use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
    const BATCH: usize = 1024;
    let n = read_ahead_threads().max(1);
    std::thread::scope(|scope| {
        let mut receivers: Vec<Receiver<Ahead>> = Vec::with_capacity(n);
        for k in 0..n {
            let (tx, rx): (SyncSender<Ahead>, Receiver<Ahead>) = sync_channel(8);
            receivers.push(rx);
            scope.spawn(move || {
                for seg in segments.iter().skip(k).step_by(n) {
                    let mut batch = Vec::with_capacity(BATCH);
                    let read = segment::stream(seg, |e| {
                        batch.push(e);
                        if batch.len() == BATCH {
                            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                            // The caller stopped: stop reading (the error is never seen).
                            tx.send(Ahead::Events(full)).map_err(|_| Error::Busy)?;
                        }
                        Ok(())
                    });
                    let last = match read {
                        Ok(()) => Ahead::End,
                        Err(Error::Busy) => return,
                        Err(e) => Ahead::Failed(e),
                    };
                    let failed = matches!(last, Ahead::Failed(_));
                    if !batch.is_empty() && tx.send(Ahead::Events(batch)).is_err() {
                        return;
                    }
                    if tx.send(last).is_err() || failed {
                        return;
                    }
                }
            });
        }
        // Dropped on return, whatever it is: a thread still sending then stops.
        let receivers = receivers;
        for i in 0..segments.len() {
            loop {
                match receivers[i % n].recv() {
                    Ok(Ahead::Events(events)) => {
                        for e in events {
                            f(e)?;
                        }
                    }
                    Ok(Ahead::End) => break,
                    Ok(Ahead::Failed(e)) => return Err(e),
                    Err(_) => unreachable!("a read-ahead thread ends only after its segments"),
                }
            }
        }
        Ok(())
    })
}
