//! The write-ahead log: every event of the active tail, outside sled, until its segment is sealed.
//!
//! sled is the embedded store readers use, but it must never be the only copy of an acknowledged
//! event: 0.34 can lose a flushed tail to a damaged byte, or become unreadable after a kill. So a
//! commit appends its events here and syncs the file *before* sled sees the batch. The log's last
//! record is also the chain head's anchor outside sled: a store that lost a tail is caught by
//! comparing the two, and `recover` rebuilds the active store from sealed segments plus this file.
//!
//! `wal/<base:020>.wal` holds the events from `base` (the active store's first seq) on, and
//! `wal/<base:020>.mirror` the same bytes at the same offsets. Records:
//! `[u32 le len][body][32-byte blake3 of (len, body)][u32 le len]HJW1`, where the body is a tag
//! byte and an envelope or the ids of the spool files a batch ingested. A batch is its records
//! in a row, the last one tagged as ending it: a batch whose end is missing was never
//! acknowledged (its writer had not synced it), so its records — its drained ids too — are not
//! part of the log, and the next writer cuts them off. A batch lands whole or not at all.
//!
//! The two copies are written with the same bytes at the same offsets, so an opener that finds
//! them different takes each record from whichever copy holds it intact, up to the last whole
//! batch, and writes the result back to both — the damaged or shorter copy is rewritten from the
//! other only once the other is durable, and a copy is never overwritten by a shorter one. After
//! a power cut, a copy may hold any garbage after its last synced byte: unacknowledged records,
//! zeros, a hole followed by later pages. What neither copy holds intact is cut, and kept aside
//! when it held whole records (see `Pair`).

use crate::envelope::{Envelope, Hash, Seq};
use crate::error::{IoContext, Result};
use crate::files::{self, Durability};
use crate::{DamagePlace, Error};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub(crate) const DIR: &str = "wal";
const MAGIC: &[u8; 4] = b"HJW1";
const TRAILER: u64 = 4 + 4;
/// Header and checksum bytes around a record's body.
const OVERHEAD: u64 = 4 + 32 + TRAILER;

pub(crate) fn path(dir: &Path, base: Seq) -> PathBuf {
    dir.join(DIR).join(format!("{base:020}.wal"))
}

/// The log's second copy: the same records, appended and synced with it. Hooks commit to the
/// log alone (sled ingests it later), so every acknowledged event is on disk twice even before
/// sled has it; an opener or `recover` takes each record from whichever copy holds it intact.
pub(crate) fn mirror_path(dir: &Path, base: Seq) -> PathBuf {
    dir.join(DIR).join(format!("{base:020}.mirror"))
}

fn mirror_of(log: &Path) -> PathBuf {
    log.with_extension("mirror")
}

/// Removes a log and its mirror (after a seal, or a rotation undone).
pub(crate) fn remove(path: &Path) {
    let _ = crate::door::unlink(path);
    let _ = crate::door::unlink(mirror_of(path));
}

/// The write-ahead logs present, oldest first, as (base, path).
pub(crate) fn list(dir: &Path) -> Result<Vec<(Seq, PathBuf)>> {
    files::list_numbered(&dir.join(DIR), ".wal")
}

fn checksum(len: u32, body: &[u8]) -> Hash {
    let mut h = blake3::Hasher::new();
    h.update(&len.to_le_bytes());
    h.update(body);
    *h.finalize().as_bytes()
}

/// Written before batches existed: an event that is a batch of its own.
const TAG_EVENT: u8 = 0;
/// Written before batches existed: the drained ids of the events that follow.
const TAG_DRAINED: u8 = 1;
/// An event; its batch goes on.
const TAG_MORE_EVENT: u8 = 2;
/// The ids of the spool files the batch ingests; the batch goes on.
const TAG_MORE_DRAINED: u8 = 3;
/// The last event of its batch.
const TAG_LAST_EVENT: u8 = 4;

fn raw_record(body: &[u8], out: &mut Vec<u8>) {
    let len = body.len() as u32;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&checksum(len, body));
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(MAGIC);
}

/// Encodes one batch: its drained ids, then its events, the last one ending the batch.
fn encode_batch<'a>(
    events: impl ExactSizeIterator<Item = &'a Envelope>,
    drained: &[String],
    out: &mut Vec<u8>,
) {
    if !drained.is_empty() {
        raw_record(
            &[&[TAG_MORE_DRAINED][..], drained.join("\n").as_bytes()].concat(),
            out,
        );
    }
    let n = events.len();
    for (i, e) in events.enumerate() {
        let tag = if i + 1 == n {
            TAG_LAST_EVENT
        } else {
            TAG_MORE_EVENT
        };
        let mut body = vec![tag];
        body.extend_from_slice(&e.encode());
        raw_record(&body, out);
    }
}

/// What a read of a log found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The events of the whole batches, in order.
    pub events: Vec<Envelope>,
    /// Spool ids those batches ingested.
    pub drained: Vec<String>,
    /// Bytes holding whole batches.
    pub valid_len: u64,
    /// The file's length (more than `valid_len`: an unfinished batch or damage follows).
    pub file_len: u64,
    /// What is wrong at `valid_len`, if anything.
    pub damage: Option<String>,
}

/// Reads every whole batch of a log, stopping at the first torn or damaged record.
pub(crate) fn scan(path: &Path) -> Result<Scan> {
    Ok(scan_bytes(&read_copy(path)?.unwrap_or_default()))
}

/// A copy's bytes (`None`: there is no such file — or only a link or a special file in its
/// place, which is never followed: `verify` names it, and `recover` replaces it).
fn read_copy(path: &Path) -> Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    match files::open_read(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .ctx(|| format!("reading {}", path.display()))?;
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) if !crate::door::status(path).is_ok_and(|m| m.is_file()) => Ok(None),
        Err(e) => Err(files::open_error(path, e)),
    }
}

pub(crate) fn scan_bytes(bytes: &[u8]) -> Scan {
    let mut s = Scan {
        file_len: bytes.len() as u64,
        ..Scan::default()
    };
    let mut pos = 0usize;
    let (mut events, mut drained) = (Vec::new(), Vec::new());
    while pos < bytes.len() {
        match decode_at(bytes, pos) {
            Ok(d) => {
                match d.record {
                    Record::Event(env) => events.push(*env),
                    Record::Drained(ids) => drained.extend(ids),
                }
                pos = d.end;
                if d.ends_batch {
                    s.events.append(&mut events);
                    s.drained.append(&mut drained);
                    s.valid_len = pos as u64;
                }
            }
            Err(what) => {
                s.damage = Some(what);
                return s;
            }
        }
    }
    if s.valid_len < s.file_len {
        s.damage = Some("a batch whose last record is missing".into());
    }
    s
}

enum Record {
    Event(Box<Envelope>),
    Drained(Vec<String>),
}

struct Decoded {
    record: Record,
    /// The offset just past the record.
    end: usize,
    ends_batch: bool,
}

/// The record's extent at `pos`: `(end, body range)`, checked by length, trailer and checksum.
fn extent_at(bytes: &[u8], pos: usize) -> std::result::Result<(usize, usize, usize), String> {
    let rest = &bytes[pos..];
    if rest.len() < OVERHEAD as usize {
        return Err(format!("a torn record of {} bytes", rest.len()));
    }
    let len = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
    let total = OVERHEAD as usize + len;
    if rest.len() < total {
        return Err(format!(
            "a torn record: {} of {total} bytes present",
            rest.len()
        ));
    }
    let body = &rest[4..4 + len];
    let sum = &rest[4 + len..4 + len + 32];
    let trailer = &rest[total - 8..total];
    if trailer[4..] != MAGIC[..] || trailer[..4] != (len as u32).to_le_bytes() {
        return Err("a record whose trailer is damaged".into());
    }
    if sum != checksum(len as u32, body) {
        return Err("a record that fails its checksum".into());
    }
    Ok((pos + total, pos + 4, pos + 4 + len))
}

fn decode_at(bytes: &[u8], pos: usize) -> std::result::Result<Decoded, String> {
    let (end, from, to) = extent_at(bytes, pos)?;
    let (tag, body) = bytes[from..to]
        .split_first()
        .ok_or("a record of an unknown kind")?;
    let event = |body: &[u8]| {
        Envelope::decode(body)
            .map(|e| Record::Event(Box::new(e)))
            .map_err(|e| format!("a record that does not decode: {e}"))
    };
    let ids = |body: &[u8]| {
        Record::Drained(
            String::from_utf8_lossy(body)
                .split('\n')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )
    };
    let (record, ends_batch) = match *tag {
        TAG_EVENT => (event(body)?, true),
        TAG_MORE_EVENT => (event(body)?, false),
        TAG_LAST_EVENT => (event(body)?, true),
        TAG_DRAINED | TAG_MORE_DRAINED => (ids(body), false),
        _ => return Err("a record of an unknown kind".into()),
    };
    Ok(Decoded {
        record,
        end,
        ends_batch,
    })
}

/// Every whole, valid record starting at or after `from` (found by its trailer), as
/// `(start, ends its batch)`: what follows a point where reading in order stopped.
fn records_from(bytes: &[u8], from: usize) -> impl Iterator<Item = (usize, bool)> + '_ {
    let first_end = from + OVERHEAD as usize;
    (first_end..=bytes.len()).filter_map(move |i| {
        if bytes[i - 4..i] != MAGIC[..] {
            return None;
        }
        let len = u32::from_le_bytes(bytes[i - 8..i - 4].try_into().expect("4 bytes")) as usize;
        let start = i.checked_sub(OVERHEAD as usize + len)?;
        if start < from {
            return None;
        }
        decode_at(bytes, start).ok().map(|d| (start, d.ends_batch))
    })
}

/// One copy (the log or its mirror) as `read_pair` found it.
#[derive(Clone, Debug, Default)]
pub(crate) struct CopyState {
    /// The file exists.
    pub present: bool,
    /// Its length.
    pub len: u64,
    /// Where its own reading stops before its end, and why (`None`: it ends with a whole batch).
    pub stops: Option<(u64, String)>,
    /// A whole record follows that point in this copy: the copy is damaged inside, or a power cut
    /// persisted a later page and not an earlier one.
    pub records_after_stop: bool,
    /// The copy's bytes equal the merged log.
    pub matches: bool,
}

/// The log and its mirror, read and merged (see the module's doc).
#[derive(Debug, Default)]
pub(crate) struct Pair {
    /// Whole batches, each record from whichever copy holds it intact.
    pub bytes: Vec<u8>,
    /// The merged log, read.
    pub scan: Scan,
    pub log: CopyState,
    pub mirror: CopyState,
    /// The two copies hold different whole records at the same offset (not a torn write or a
    /// damaged byte: the journal was edited). Nothing is merged past it.
    pub conflict: Option<u64>,
    /// Either copy holds a whole batch past the merged log (cut when repaired; kept aside).
    pub records_beyond: bool,
    /// The two copies as read (`None`: missing).
    copies: [Option<Vec<u8>>; 2],
}

impl Pair {
    /// Whether both copies already hold exactly the merged log.
    pub fn sound(&self) -> bool {
        self.log.matches && self.mirror.matches
    }
}

/// Reads the log of `base` and its mirror and merges them.
pub(crate) fn read_pair(dir: &Path, base: Seq) -> Result<Pair> {
    let log = read_copy(&path(dir, base))?;
    let mirror = read_copy(&mirror_path(dir, base))?;
    let mut pair = merge(log.as_deref(), mirror.as_deref());
    pair.copies = [log, mirror];
    Ok(pair)
}

/// What is wrong with each copy, one line each, as `verify` and `recover` say it (empty when
/// both hold the merged log).
pub(crate) fn describe(pair: &Pair, dir: &Path, base: Seq) -> Vec<String> {
    let mut out = Vec::new();
    let names = [path(dir, base), mirror_path(dir, base)];
    let states = [&pair.log, &pair.mirror];
    let other_present = [pair.mirror.present, pair.log.present];
    for ((p, state), other) in names.iter().zip(states).zip(other_present) {
        if state.matches {
            continue;
        }
        let name = p.display();
        if !state.present {
            if other {
                out.push(format!("{name} is missing (its other copy is whole)"));
            }
            continue;
        }
        match &state.stops {
            Some((at, what)) if state.records_after_stop => out.push(format!(
                "{name}: {what} at byte {at}, followed by whole records"
            )),
            Some((at, what)) => out.push(format!(
                "{name}: {what} at byte {at} (an interrupted write: never acknowledged)"
            )),
            None if state.len < pair.bytes.len() as u64 => out.push(format!(
                "{name} lacks the last {} bytes its other copy holds (an interrupted write)",
                pair.bytes.len() as u64 - state.len
            )),
            None => out.push(format!("{name} differs from its other copy")),
        }
    }
    if let Some(at) = pair.conflict {
        out.push(format!(
            "{} and its mirror hold different records at byte {at}",
            names[0].display()
        ));
    }
    out
}

/// Keeps, in the journal's directory, what each copy holds past the merged log when a whole
/// batch is there (a repair is about to cut it): one durable file per copy. Returns what it
/// kept, one line each.
pub(crate) fn keep_beyond(dir: &Path, base: Seq, pair: &Pair) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    if !pair.records_beyond {
        return Ok(notes);
    }
    let stamp = files::unique_stamp();
    let from = pair.bytes.len();
    for (copy, bytes) in ["wal", "mirror"].iter().zip(&pair.copies) {
        if let Some(b) = bytes.as_deref().filter(|b| b.len() > from) {
            let name = format!("damaged-{base:020}-{copy}-tail-{stamp}");
            files::write_atomic(dir, &name, &b[from..], Durability::Durable)?;
            notes.push(format!(
                "{} bytes after byte {from} of the {copy} were in no whole batch both copies agree on; kept in {name}",
                b.len() - from
            ));
        }
    }
    Ok(notes)
}

fn copy_state(bytes: Option<&[u8]>, merged: &[u8]) -> CopyState {
    let Some(b) = bytes else {
        return CopyState {
            matches: merged.is_empty(),
            ..CopyState::default()
        };
    };
    let s = scan_bytes(b);
    let stops = s.damage.map(|d| (s.valid_len, d));
    let records_after_stop = stops
        .as_ref()
        .is_some_and(|(at, _)| records_from(b, *at as usize + 1).next().is_some());
    CopyState {
        present: true,
        len: b.len() as u64,
        stops,
        records_after_stop,
        matches: b == merged,
    }
}

/// Merges two copies written with the same bytes at the same offsets: at each offset the record
/// whichever copy holds intact, up to the last whole batch.
pub(crate) fn merge(a: Option<&[u8]>, b: Option<&[u8]>) -> Pair {
    let (x, y) = (a.unwrap_or_default(), b.unwrap_or_default());
    let mut out: Vec<u8> = Vec::with_capacity(x.len().max(y.len()));
    let mut whole = 0usize;
    let mut pos = 0usize;
    let mut conflict = None;
    loop {
        let rx = (pos < x.len()).then(|| decode_at(x, pos).ok()).flatten();
        let ry = (pos < y.len()).then(|| decode_at(y, pos).ok()).flatten();
        let (d, from) = match (rx, ry) {
            (Some(dx), Some(dy)) => {
                if dx.end != dy.end || x[pos..dx.end] != y[pos..dy.end] {
                    conflict = Some(pos as u64);
                    break;
                }
                (dx, x)
            }
            (Some(dx), None) => (dx, x),
            (None, Some(dy)) => (dy, y),
            (None, None) => break,
        };
        out.extend_from_slice(&from[pos..d.end]);
        pos = d.end;
        if d.ends_batch {
            whole = pos;
        }
    }
    out.truncate(whole);
    // Past the merged log, records of a batch whose end is missing were never acknowledged; a
    // whole batch there (after a record neither copy holds intact) may have been: kept aside.
    let batch_beyond = |c: &[u8]| records_from(c, whole).any(|(_, ends)| ends);
    let records_beyond = conflict.is_none() && (batch_beyond(x) || batch_beyond(y));
    let log = copy_state(a, &out);
    let mirror = copy_state(b, &out);
    Pair {
        scan: scan_bytes(&out),
        bytes: out,
        log,
        mirror,
        conflict,
        records_beyond,
        copies: [None, None],
    }
}

/// What an opener repaired (said by `status` and `doctor` through the journal's incidents).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Healed {
    /// One line per copy rewritten or cut.
    pub notes: Vec<String>,
}

/// The open log of the active store, appended to under the journal's lock.
pub(crate) struct Wal {
    file: File,
    mirror: File,
    path: PathBuf,
    len: u64,
    /// The last record's seq and hash (`None`: the log is empty).
    tail: Option<(Seq, Hash)>,
    /// What opening it repaired.
    pub healed: Healed,
}

impl Wal {
    /// Opens (creating) the log of `base` and its mirror. When the two are the same length and
    /// end with the same whole batch (the common case: a few small reads) they are trusted;
    /// otherwise both are read whole, merged and repaired (`heal`).
    pub(crate) fn open(dir: &Path, base: Seq) -> Result<Wal> {
        Ok(Wal::open_with(dir, base, false)?.0)
    }

    /// Opens the log like `open`, but reads both copies whole whatever their ends say, mending
    /// what the quick check cannot see (a damaged record inside either copy): what a writer
    /// opening the store does before it trusts the log. Returns the log's events.
    pub(crate) fn open_scanned(dir: &Path, base: Seq) -> Result<(Wal, Scan)> {
        let (wal, scan) = Wal::open_with(dir, base, true)?;
        Ok((wal, scan.unwrap_or_default()))
    }

    /// Creates the empty log of a new base and its mirror (a new journal, a seal's new active
    /// store, a journal written before the log), their names durable before it returns.
    pub(crate) fn create(dir: &Path, base: Seq) -> Result<Wal> {
        let d = dir.join(DIR);
        files::ensure_dir(&d)?;
        let p = path(dir, base);
        if open_or_create(&p)?.1 | open_or_create(&mirror_of(&p))?.1 {
            files::sync_dir(&d)?;
        }
        Wal::open(dir, base)
    }

    fn open_with(dir: &Path, base: Seq, scanned: bool) -> Result<(Wal, Option<Scan>)> {
        let path = path(dir, base);
        let d = dir.join(DIR);
        let mpath = mirror_of(&path);
        // Only `create` makes a log: both copies gone (or `wal/`) is damage, not a fresh start —
        // events only they held are lost, and `recover` must say so. (Each copy is opened
        // first and asked after only when missing: one `fstat` a copy, for its kind and length.)
        let log = open_existing(&path)?;
        let copy = open_existing(&mpath)?;
        if log.is_none() && copy.is_none() {
            return Err(Error::corrupt(
                DamagePlace::wal(&path),
                format!(
                    "{} is missing, with its mirror; run `hookjournal recover`",
                    path.display()
                ),
            ));
        }
        let created = log.is_none() || copy.is_none();
        let (file, len) = match log {
            Some(opened) => opened,
            None => (create(&path)?, 0),
        };
        let (mirror, mlen) = match copy {
            Some(opened) => opened,
            None => (create(&mpath)?, 0),
        };
        if created {
            // A new file's name is durable only once its directory is synced.
            files::sync_dir(&d)?;
        }
        let mut wal = Wal {
            file,
            mirror,
            path,
            len,
            tail: None,
            healed: Healed::default(),
        };
        if len == mlen && !scanned {
            if len == 0 {
                return Ok((wal, None));
            }
            if let Some(last) = wal.read_last()? {
                wal.tail = Some((last.seq, last.hash));
                return Ok((wal, None));
            }
        }
        let scan = wal.heal(dir)?;
        Ok((wal, Some(scan)))
    }

    /// Reads both copies whole and makes them the merged log: a copy that is not is rewritten
    /// from it (atomically, while the other is untouched) or cut back to it; whole records
    /// neither copy can keep are set aside first.
    fn heal(&mut self, dir: &Path) -> Result<Scan> {
        let mpath = mirror_of(&self.path);
        let base = files::file_name(&self.path)
            .strip_suffix(".wal")
            .and_then(|b| b.parse::<Seq>().ok())
            .unwrap_or(0);
        let mut pair = read_pair(dir, base)?;
        if pair.sound() {
            self.len = pair.bytes.len() as u64;
            self.tail = pair.scan.events.last().map(|e| (e.seq, e.hash));
            return Ok(std::mem::take(&mut pair.scan));
        }
        if let Some(at) = pair.conflict {
            return Err(Error::corrupt(
                DamagePlace::wal(&self.path),
                format!(
                    "{} and its mirror hold different records at byte {at}; run `hookjournal recover`",
                    self.path.display()
                ),
            ));
        }
        let found = describe(&pair, dir, base);
        let kept = keep_beyond(dir, base, &pair)?;
        for line in &found {
            crate::incidents::note(dir, &format!("repaired the write-ahead log: {line}"));
        }
        for line in &kept {
            // Whole batches after a record neither copy holds: unacknowledged if a power cut
            // left them, lost events if both copies were damaged. Said until someone looks.
            crate::incidents::event_may_be_missing(
                dir,
                &format!("the write-ahead log could not chain whole records: {line}"),
            );
        }
        self.healed.notes.extend(found);
        self.healed.notes.extend(kept);
        let states = [&pair.log, &pair.mirror];
        for ((p, bytes), state) in [&self.path, &mpath]
            .into_iter()
            .zip(&pair.copies)
            .zip(states)
        {
            if state.matches {
                continue;
            }
            let n = pair.bytes.len();
            let holds_merged = bytes
                .as_deref()
                .is_some_and(|b| b.len() >= n && b[..n] == pair.bytes);
            if holds_merged {
                // Only an unfinished batch (or garbage a power cut left) follows: cut it.
                let f = files::open_write(p)?;
                f.set_len(n as u64)
                    .and_then(|_| f.sync_data())
                    .ctx(|| format!("cutting the unfinished tail of {}", p.display()))?;
            } else {
                // Rewritten whole while the other copy, untouched, holds every record.
                let name = files::file_name(p);
                files::write_atomic(&dir.join(DIR), &name, &pair.bytes, Durability::Durable)?;
            }
        }
        // A rewrite replaced the files: open them again.
        self.file = files::open_write(&self.path)?;
        self.mirror = files::open_write(&mpath)?;
        self.len = pair.bytes.len() as u64;
        self.tail = pair.scan.events.last().map(|e| (e.seq, e.hash));
        Ok(pair.scan)
    }

    /// The last record, when it is a whole event ending a batch and the mirror ends with the
    /// same bytes (`None`: read both copies whole).
    pub(crate) fn read_last(&self) -> Result<Option<Envelope>> {
        if self.len < OVERHEAD {
            return Ok(None);
        }
        let mut trailer = [0u8; TRAILER as usize];
        self.file
            .read_exact_at(&mut trailer, self.len - TRAILER)
            .ctx(|| format!("reading {}", self.path.display()))?;
        if trailer[4..] != MAGIC[..] {
            return Ok(None);
        }
        let len = u32::from_le_bytes(trailer[..4].try_into().expect("4 bytes")) as u64;
        if len + OVERHEAD > self.len {
            return Ok(None);
        }
        let start = self.len - len - OVERHEAD;
        let mut rec = vec![0u8; (len + OVERHEAD) as usize];
        self.file
            .read_exact_at(&mut rec, start)
            .ctx(|| format!("reading {}", self.path.display()))?;
        let mut other = vec![0u8; rec.len()];
        if self.mirror.read_exact_at(&mut other, start).is_err() || other != rec {
            return Ok(None);
        }
        Ok(match decode_at(&rec, 0) {
            Ok(Decoded {
                record: Record::Event(e),
                ends_batch: true,
                ..
            }) => Some(*e),
            _ => None,
        })
    }

    pub(crate) fn tail(&self) -> Option<(Seq, Hash)> {
        self.tail
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one batch and syncs it. On failure (a full disk) the files are cut back, so a
    /// later append never follows a partial record.
    pub(crate) fn append(&mut self, events: &[&Envelope], drained: &[String]) -> Result<()> {
        let (len, tail) = (self.len, self.tail);
        self.append_unsynced(events, drained)?;
        if let Err(e) = self.sync() {
            let _ = self.file.set_len(len);
            let _ = self.mirror.set_len(len);
            self.len = len;
            self.tail = tail;
            return Err(e);
        }
        Ok(())
    }

    /// Syncs the log and its mirror, the two at once (on ext4 the first sync's journal commit
    /// carries both files' new lengths; the second mostly waits for the same flush).
    pub(crate) fn sync(&self) -> Result<()> {
        sync_pair(&self.file, &self.mirror)
            .ctx(|| format!("syncing {} and its mirror", self.path.display()))
    }

    /// Handles that sync the log and its mirror after the lock is released (`Syncer::sync`).
    pub(crate) fn syncer(&self) -> Result<Syncer> {
        Ok(Syncer {
            log: self
                .file
                .try_clone()
                .ctx(|| format!("duplicating {}", self.path.display()))?,
            mirror: self
                .mirror
                .try_clone()
                .ctx(|| format!("duplicating {}", self.path.display()))?,
            path: self.path.clone(),
        })
    }

    /// Appends one batch without syncing: the caller syncs (`sync`, or a `Syncer` once the lock
    /// is released) before it acknowledges it. A failed write is cut back, as in `append`.
    pub(crate) fn append_unsynced(
        &mut self,
        events: &[&Envelope],
        drained: &[String],
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        encode_batch(events.iter().copied(), drained, &mut buf);
        let res = self
            .file
            .write_all_at(&buf, self.len)
            .and_then(|_| self.mirror.write_all_at(&buf, self.len));
        if let Err(e) = res {
            let _ = self.file.set_len(self.len);
            let _ = self.mirror.set_len(self.len);
            return Err(Error::Io {
                context: format!("appending to {}", self.path.display()),
                cause: e,
            });
        }
        self.len += buf.len() as u64;
        let last = events.last().expect("non-empty");
        self.tail = Some((last.seq, last.hash));
        Ok(())
    }
}

/// Opens a copy for reading and writing, with its length; `None` when it is missing.
fn open_existing(path: &Path) -> Result<Option<(File, u64)>> {
    match files::open_write_sized(path) {
        Ok(opened) => Ok(Some(opened)),
        Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens a copy for reading and writing, creating it when missing: (file, created).
fn open_or_create(path: &Path) -> Result<(File, bool)> {
    match open_existing(path)? {
        Some((f, _)) => Ok((f, false)),
        None => Ok((create(path)?, true)),
    }
}

/// Creates a missing copy (never through a link, never over a file that appeared meanwhile).
fn create(path: &Path) -> Result<File> {
    crate::door::by_path::create_new(path).ctx(|| format!("creating {}", path.display()))
}

/// Syncs two files' data on this thread: the second file's writeback is started first
/// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, which waits for nothing), so its data goes to the
/// disk while the first `fdatasync` runs, and the second `fdatasync` only waits for what is left.
/// This replaced a thread that ran the two at once: spawning it (a 2 MB stack, its signal stack,
/// the join) cost more than it overlapped, issue 43. Durability is the two `fdatasync`s, as
/// before.
fn sync_pair(a: &File, b: &File) -> std::io::Result<()> {
    start_writeback(b);
    a.sync_data()?;
    b.sync_data()
}

/// Starts writing `f`'s dirty pages out without waiting (a hint: its result is not needed, the
/// `fdatasync` after it is what makes the data durable).
#[cfg(target_os = "linux")]
fn start_writeback(f: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call's duration; no memory is passed.
    unsafe { libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File) {}

/// The log and its mirror as duplicated handles, synced after the journal's lock is released:
/// a writer that appended under the lock lets the next one in while its own sync runs, and
/// concurrent syncs share the file system's journal commits (group commit, for free). Any
/// later sync of the same file covers these bytes too, so a writer that read them and is
/// acknowledged never outlives them.
pub struct Syncer {
    log: File,
    mirror: File,
    path: PathBuf,
}

impl Syncer {
    /// Makes the appended events durable.
    pub fn sync(self) -> Result<()> {
        sync_pair(&self.log, &self.mirror)
            .ctx(|| format!("syncing {} and its mirror", self.path.display()))
    }
}

/// Rewrites a log and its mirror to hold exactly `events` (one batch, with the spool ids they
/// ingested): the log first, durably, then the mirror — so one whole copy exists throughout.
pub(crate) fn rewrite(
    dir: &Path,
    base: Seq,
    events: &[Envelope],
    drained: &[String],
) -> Result<()> {
    let d = dir.join(DIR);
    files::ensure_dir(&d)?;
    let mut buf = Vec::new();
    if !events.is_empty() {
        encode_batch(events.iter(), drained, &mut buf);
    }
    files::write_atomic(&d, &format!("{base:020}.wal"), &buf, Durability::Durable)?;
    files::write_atomic(&d, &format!("{base:020}.mirror"), &buf, Durability::Durable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{NewEvent, ZERO_HASH};
    use crate::kind::{Body, WireKind};
    use std::fs;

    fn chain(n: u64) -> Vec<Envelope> {
        let mut prev = ZERO_HASH;
        (1..=n)
            .map(|i| {
                let e = Envelope::seal(
                    NewEvent {
                        recorded_at_us: i as i64,
                        host: "claude".into(),
                        kind: WireKind {
                            tag: 0,
                            body: Body::Text("Stop".into()),
                        },
                        session_id: Some("s".into()),
                        agent_id: None,
                        payload: format!("{{\"n\":{i}}}").into_bytes(),
                        truncated: None,
                        spooled: false,
                    },
                    i,
                    prev,
                );
                prev = e.hash;
                e
            })
            .collect()
    }

    fn refs(evs: &[Envelope]) -> Vec<&Envelope> {
        evs.iter().collect()
    }

    fn both(d: &Path) -> (Vec<u8>, Vec<u8>) {
        (
            fs::read(path(d, 1)).unwrap(),
            fs::read(mirror_path(d, 1)).unwrap(),
        )
    }

    #[test]
    fn appended_batches_read_back_and_anchor_the_tail() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(5);
        assert!(matches!(Wal::open(d.path(), 1), Err(Error::Corrupt { .. })));
        let mut w = Wal::create(d.path(), 1).unwrap();
        w.append(&refs(&evs[..3]), &["a".into()]).unwrap();
        w.append(&refs(&evs[3..]), &[]).unwrap();
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((5, evs[4].hash)));
        assert_eq!(w.healed, Healed::default());
        let s = scan(&path(d.path(), 1)).unwrap();
        assert_eq!(s.events, evs);
        assert_eq!(s.drained, vec!["a".to_string()]);
        assert!(s.damage.is_none());
    }

    /// Given a batch of a drained record and three events, when only its first two records
    /// reached the disk in both copies (a power cut mid-append), then the batch is gone whole:
    /// neither its events nor its drained ids are read, and the next opener cuts it.
    #[test]
    fn a_batch_torn_after_its_drained_record_is_cut_whole() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(4);
        let mut w = Wal::create(d.path(), 1).unwrap();
        w.append(&refs(&evs[..1]), &[]).unwrap();
        let whole = fs::metadata(path(d.path(), 1)).unwrap().len();
        let mut batch = Vec::new();
        encode_batch(evs[1..].iter(), &["s1".into(), "s2".into()], &mut batch);
        // The drained record and the first event, then half of the second.
        let first_two = {
            let (e1, ..) = extent_at(&batch, 0).unwrap();
            let (e2, ..) = extent_at(&batch, e1).unwrap();
            e2
        };
        for p in [path(d.path(), 1), mirror_path(d.path(), 1)] {
            let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.write_all_at(&batch[..first_two + 20], whole).unwrap();
        }
        let s = scan(&path(d.path(), 1)).unwrap();
        assert_eq!((s.events.len(), s.drained.len()), (1, 0));
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((1, evs[0].hash)));
        let (log, mirror) = both(d.path());
        assert_eq!((log.len() as u64, mirror.len() as u64), (whole, whole));
    }

    /// A power cut that extended the file but not its data leaves zeros: an unfinished batch,
    /// cut without complaint.
    #[test]
    fn a_tail_of_zeros_is_cut_like_any_torn_append() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(3);
        let mut w = Wal::create(d.path(), 1).unwrap();
        w.append(&refs(&evs), &[]).unwrap();
        let whole = fs::metadata(path(d.path(), 1)).unwrap().len();
        for p in [path(d.path(), 1), mirror_path(d.path(), 1)] {
            let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(whole + 4096).unwrap();
        }
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((3, evs[2].hash)));
        assert_eq!(fs::metadata(path(d.path(), 1)).unwrap().len(), whole);
        // Nothing whole was cut, so nothing was kept aside.
        assert!(!w.healed.notes.iter().any(|n| n.contains("kept in")));
    }

    /// Given a log cut short (or deleted) while its mirror is whole, when it is opened, then the
    /// log is completed from the mirror: the mirror is never cut back to the shorter log.
    #[test]
    fn a_shorter_or_missing_log_is_completed_from_its_mirror_never_the_reverse() {
        for how in ["cut", "deleted"] {
            let d = tempfile::tempdir().unwrap();
            let evs = chain(6);
            let mut w = Wal::create(d.path(), 1).unwrap();
            for e in &evs {
                w.append(&[e], &[]).unwrap();
            }
            drop(w);
            let (_, whole) = both(d.path());
            let lp = path(d.path(), 1);
            match how {
                "cut" => fs::OpenOptions::new()
                    .write(true)
                    .open(&lp)
                    .unwrap()
                    .set_len(whole.len() as u64 / 2)
                    .unwrap(),
                _ => fs::remove_file(&lp).unwrap(),
            }
            let w = Wal::open(d.path(), 1).unwrap();
            assert_eq!(w.tail(), Some((6, evs[5].hash)), "{how}");
            assert_eq!(both(d.path()), (whole.clone(), whole.clone()), "{how}");
            assert_eq!(w.healed.notes.len(), 1, "{how}: {:?}", w.healed.notes);
        }
    }

    /// Given a flipped byte inside the log and another inside the mirror, at different records,
    /// when the log is opened, then each record is taken from the copy that holds it intact and
    /// both copies are rewritten whole.
    #[test]
    fn damage_in_each_copy_is_mended_from_the_other() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(4);
        let mut w = Wal::create(d.path(), 1).unwrap();
        for e in &evs {
            w.append(&[e], &[]).unwrap();
        }
        drop(w);
        let (whole, _) = both(d.path());
        let mut log = whole.clone();
        log[10] ^= 0x40;
        let mut mirror = whole.clone();
        let n = mirror.len();
        mirror[n - 20] ^= 0x01;
        fs::write(path(d.path(), 1), &log).unwrap();
        fs::write(mirror_path(d.path(), 1), &mirror).unwrap();
        let p = read_pair(d.path(), 1).unwrap();
        assert!(p.log.records_after_stop && !p.mirror.records_after_stop);
        assert_eq!(p.bytes, whole);
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((4, evs[3].hash)));
        assert_eq!(both(d.path()), (whole.clone(), whole));
    }

    /// Damage to the same record of both copies: nothing past it can be chained; the whole
    /// records after it are kept aside, never dropped silently.
    #[test]
    fn records_neither_copy_holds_whole_are_kept_aside_when_cut() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(4);
        let mut w = Wal::create(d.path(), 1).unwrap();
        for e in &evs {
            w.append(&[e], &[]).unwrap();
        }
        drop(w);
        let (mut whole, _) = both(d.path());
        whole[10] ^= 0x40;
        fs::write(path(d.path(), 1), &whole).unwrap();
        fs::write(mirror_path(d.path(), 1), &whole).unwrap();
        // The quick open trusts the whole last batch; a writer opening the store scans.
        assert_eq!(
            Wal::open(d.path(), 1).unwrap().tail(),
            Some((4, evs[3].hash))
        );
        let (w, _) = Wal::open_scanned(d.path(), 1).unwrap();
        assert_eq!(w.tail(), None);
        let missing = crate::incidents::take_unread(d.path());
        assert_eq!(missing.len(), 2, "{missing:?}");
        let kept: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("damaged-"))
            .collect();
        let mut kept = kept;
        kept.sort();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(
            fs::read(d.path().join(&kept[0])).unwrap(),
            whole,
            "{kept:?}"
        );
    }

    #[test]
    fn copies_that_hold_different_whole_records_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(2);
        let other = {
            let mut e = chain(2);
            e[1].payload = b"{}".to_vec();
            e[1].hash = e[1].compute_hash();
            e
        };
        let mut a = Vec::new();
        encode_batch(evs.iter(), &[], &mut a);
        let mut b = Vec::new();
        encode_batch(other.iter(), &[], &mut b);
        fs::create_dir_all(d.path().join(DIR)).unwrap();
        fs::write(path(d.path(), 1), &a).unwrap();
        fs::write(mirror_path(d.path(), 1), &b).unwrap();
        assert!(matches!(
            Wal::open(d.path(), 1),
            Err(Error::Corrupt {
                place: DamagePlace::Wal(name),
                ..
            }) if name == "00000000000000000001.wal"
        ));
    }

    /// Logs written before batches (each event a record of its own) still read.
    #[test]
    fn records_written_before_batches_read_as_batches_of_one() {
        let evs = chain(3);
        let mut bytes = Vec::new();
        raw_record(&[&[TAG_DRAINED][..], b"x\ny"].concat(), &mut bytes);
        for e in &evs {
            raw_record(&[&[TAG_EVENT][..], &e.encode()[..]].concat(), &mut bytes);
        }
        let s = scan_bytes(&bytes);
        assert_eq!(s.events, evs);
        assert_eq!(s.drained, vec!["x".to_string(), "y".to_string()]);
        assert!(s.damage.is_none());
    }
}
