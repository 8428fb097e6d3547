//! The write-ahead log: every event of the active tail, outside sled, until its segment is sealed.
//!
//! sled is the embedded store readers use, but it must never be the only copy of an acknowledged
//! event: 0.34 can lose a flushed tail to a damaged byte, or become unreadable after a kill. So a
//! commit appends its events here and syncs the file *before* sled sees the batch. The log's last
//! record is also the chain head's anchor outside sled: a store that lost a tail is caught by
//! comparing the two, and `recover` rebuilds the active store from sealed segments plus this file.
//!
//! `wal/<base:020>.wal` holds the events from `base` (the active store's first seq) on. Records:
//! `[u32 le len][body][32-byte blake3 of (len, body)][u32 le len]HJW1`, where the body is a tag
//! byte and an envelope (tag 0) or the ids of the spool files a batch ingested (tag 1, written
//! before the batch's events, so a store rebuilt from the log never ingests them twice). The trailer
//! lets an opener check the last record with two reads; a torn record (a writer killed while
//! appending, or a full disk) was never acknowledged and is cut off by the next writer.

use crate::envelope::{Envelope, Hash, Seq};
use crate::error::{IoContext, Result};
use crate::files::Durability;
use crate::{DamagePlace, Error};
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) const DIR: &str = "wal";
const MAGIC: &[u8; 4] = b"HJW1";
const TRAILER: u64 = 4 + 4;
/// Header and checksum bytes around an envelope.
const OVERHEAD: u64 = 4 + 32 + TRAILER;
/// No single record is larger than this (payloads are capped far below it).
const MAX_RECORD: u64 = 1 << 31;

pub(crate) fn path(dir: &Path, base: Seq) -> PathBuf {
    dir.join(DIR).join(format!("{base:020}.wal"))
}

/// The log's second copy: the same records, appended and synced with it. Hooks commit to the
/// log alone (sled ingests it later), so every acknowledged event is on disk twice even before
/// sled has it; `recover` takes each event from whichever copy holds it intact.
pub(crate) fn mirror_path(dir: &Path, base: Seq) -> PathBuf {
    dir.join(DIR).join(format!("{base:020}.mirror"))
}

fn mirror_of(log: &Path) -> PathBuf {
    log.with_extension("mirror")
}

/// Removes a log and its mirror (after a seal, or a rotation undone).
pub(crate) fn remove(path: &Path) {
    let _ = fs::remove_file(path);
    let _ = fs::remove_file(mirror_of(path));
}

/// The write-ahead logs present, oldest first, as (base, path).
pub(crate) fn list(dir: &Path) -> Result<Vec<(Seq, PathBuf)>> {
    crate::files::list_numbered(&dir.join(DIR), ".wal")
}

fn checksum(len: u32, body: &[u8]) -> Hash {
    let mut h = blake3::Hasher::new();
    h.update(&len.to_le_bytes());
    h.update(body);
    *h.finalize().as_bytes()
}

const TAG_EVENT: u8 = 0;
const TAG_DRAINED: u8 = 1;

/// Encodes one event record.
fn record(env: &Envelope, out: &mut Vec<u8>) {
    let mut body = vec![TAG_EVENT];
    body.extend_from_slice(&env.encode());
    raw_record(&body, out);
}

fn raw_record(body: &[u8], out: &mut Vec<u8>) {
    let len = body.len() as u32;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&checksum(len, body));
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(MAGIC);
}

/// What a full read of a log found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub events: Vec<Envelope>,
    /// Spool ids the logged batches ingested.
    pub drained: Vec<String>,
    /// Bytes holding whole, valid records.
    pub valid_len: u64,
    /// The file's length (more than `valid_len`: a torn or damaged record follows).
    pub file_len: u64,
    /// What is wrong at `valid_len`, if anything.
    pub damage: Option<String>,
}

/// Reads every valid record of a log, stopping at the first torn or damaged one.
pub(crate) fn scan(path: &Path) -> Result<Scan> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .ctx(|| format!("reading {}", path.display()))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Scan::default()),
        Err(e) => {
            return Err(Error::Io {
                context: format!("reading {}", path.display()),
                cause: e,
            })
        }
    }
    Ok(scan_bytes(&bytes))
}

fn scan_bytes(bytes: &[u8]) -> Scan {
    let mut s = Scan {
        file_len: bytes.len() as u64,
        ..Scan::default()
    };
    let mut pos = 0usize;
    while pos < bytes.len() {
        match decode_at(bytes, pos) {
            Ok((Record::Event(env), next)) => {
                s.events.push(*env);
                pos = next;
                s.valid_len = pos as u64;
            }
            Ok((Record::Drained(ids), next)) => {
                s.drained.extend(ids);
                pos = next;
                s.valid_len = pos as u64;
            }
            Err(what) => {
                s.damage = Some(what);
                break;
            }
        }
    }
    s
}

enum Record {
    Event(Box<Envelope>),
    Drained(Vec<String>),
}

fn decode_at(bytes: &[u8], pos: usize) -> std::result::Result<(Record, usize), String> {
    let rest = &bytes[pos..];
    if rest.len() < OVERHEAD as usize {
        return Err(format!("a torn record of {} bytes", rest.len()));
    }
    let len = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
    let total = OVERHEAD as usize + len as usize;
    if rest.len() < total {
        return Err(format!(
            "a torn record: {} of {total} bytes present",
            rest.len()
        ));
    }
    let body = &rest[4..4 + len as usize];
    let sum = &rest[4 + len as usize..4 + len as usize + 32];
    let trailer = &rest[total - 8..total];
    if trailer[4..] != MAGIC[..] || trailer[..4] != len.to_le_bytes() {
        return Err("a record whose trailer is damaged".into());
    }
    if sum != checksum(len, body) {
        return Err("a record that fails its checksum".into());
    }
    let rec = match body.split_first() {
        Some((&TAG_EVENT, env)) => Record::Event(Box::new(
            Envelope::decode(env).map_err(|e| format!("a record that does not decode: {e}"))?,
        )),
        Some((&TAG_DRAINED, ids)) => Record::Drained(
            String::from_utf8_lossy(ids)
                .split('\n')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        _ => return Err("a record of an unknown kind".into()),
    };
    Ok((rec, pos + total))
}

/// The open log of the active store, appended to under the journal's lock.
pub(crate) struct Wal {
    file: File,
    mirror: File,
    path: PathBuf,
    len: u64,
    /// The last record's seq and hash (`None`: the log is empty).
    tail: Option<(Seq, Hash)>,
}

impl Wal {
    /// Opens (creating) the log for `base`. A torn tail — an append that was never
    /// acknowledged — is cut off; a damaged record anywhere else is an error.
    pub(crate) fn open(dir: &Path, base: Seq) -> Result<Wal> {
        let path = path(dir, base);
        let d = dir.join(DIR);
        if !d.exists() {
            crate::files::create_dir(&d)?;
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(crate::FILE_MODE)
            .open(&path)
            .ctx(|| format!("opening {}", path.display()))?;
        let len = file
            .metadata()
            .ctx(|| format!("reading {}", path.display()))?
            .len();
        let mpath = mirror_of(&path);
        let mirror = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(crate::FILE_MODE)
            .open(&mpath)
            .ctx(|| format!("opening {}", mpath.display()))?;
        let mut wal = Wal {
            file,
            mirror,
            path,
            len,
            tail: None,
        };
        if len == 0 {
            wal.match_mirror()?;
            return Ok(wal);
        }
        // The common case: the last record is whole (two small reads).
        if let Some(last) = wal.read_last()? {
            wal.tail = Some((last.seq, last.hash));
            wal.match_mirror()?;
            return Ok(wal);
        }
        // Torn or damaged at the end: find the last whole record.
        let s = scan(&wal.path)?;
        if s.valid_len < s.file_len && s.damage.is_some() {
            // Only the final record may be torn; damage before it is not ours to cut.
            let rest = s.file_len - s.valid_len;
            if !is_torn_tail(&wal.path, s.valid_len, rest)? {
                return Err(Error::Corrupt {
                    place: DamagePlace::wal(&wal.path),
                    what: format!(
                        "{}: {} at byte {}",
                        wal.path.display(),
                        s.damage.unwrap_or_default(),
                        s.valid_len
                    ),
                });
            }
        }
        wal.file
            .set_len(s.valid_len)
            .ctx(|| format!("cutting the torn tail of {}", wal.path.display()))?;
        wal.file
            .sync_data()
            .ctx(|| format!("syncing {}", wal.path.display()))?;
        wal.len = s.valid_len;
        wal.tail = s.events.last().map(|e| (e.seq, e.hash));
        wal.match_mirror()?;
        Ok(wal)
    }

    /// Makes the mirror the same length as the log: after a kill between the two appends (or
    /// for a log written before mirrors) it is made a copy of the log, which was just checked.
    /// Equal lengths are the common case (one `fstat`); `verify` compares their contents.
    fn match_mirror(&mut self) -> Result<()> {
        let mpath = mirror_of(&self.path);
        let mlen = self
            .mirror
            .metadata()
            .ctx(|| format!("reading {}", mpath.display()))?
            .len();
        if mlen == self.len {
            return Ok(());
        }
        let mut bytes = vec![0u8; self.len as usize];
        self.file
            .read_exact_at(&mut bytes, 0)
            .ctx(|| format!("reading {}", self.path.display()))?;
        self.mirror
            .set_len(0)
            .and_then(|_| self.mirror.write_all_at(&bytes, 0))
            .and_then(|_| self.mirror.sync_data())
            .ctx(|| format!("rewriting {}", mpath.display()))
    }

    fn read_last(&self) -> Result<Option<Envelope>> {
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
        if len + OVERHEAD > self.len || len + OVERHEAD > MAX_RECORD {
            return Ok(None);
        }
        let start = self.len - len - OVERHEAD;
        let mut rec = vec![0u8; (len + OVERHEAD) as usize];
        self.file
            .read_exact_at(&mut rec, start)
            .ctx(|| format!("reading {}", self.path.display()))?;
        Ok(match decode_at(&rec, 0) {
            Ok((Record::Event(e), _)) => Some(*e),
            _ => None,
        })
    }

    pub(crate) fn tail(&self) -> Option<(Seq, Hash)> {
        self.tail
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `events` and syncs them to disk. On failure (a full disk) the file is cut back,
    /// so a later append never follows a partial record.
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

    /// Appends `events` without syncing: the caller syncs (`sync`, or a `Syncer` once the lock
    /// is released) before it acknowledges them. A failed write is cut back, as in `append`.
    pub(crate) fn append_unsynced(
        &mut self,
        events: &[&Envelope],
        drained: &[String],
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        if !drained.is_empty() {
            raw_record(
                &[&[TAG_DRAINED][..], drained.join("\n").as_bytes()].concat(),
                &mut buf,
            );
        }
        for e in events {
            record(e, &mut buf);
        }
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

/// Syncs two files' data at once (the second on a scoped thread).
fn sync_pair(a: &File, b: &File) -> std::io::Result<()> {
    std::thread::scope(|s| {
        let other = s.spawn(|| b.sync_data());
        let first = a.sync_data();
        let second = other.join().unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the thread syncing the mirror panicked",
            ))
        });
        first.and(second)
    })
}

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

/// Whether the bytes after `valid_len` are a single unfinished append: a record that claims to
/// reach (or pass) the end of the file. Anything else is damage inside the log.
pub(crate) fn is_torn_tail(path: &Path, valid_len: u64, rest: u64) -> Result<bool> {
    if rest < 4 {
        return Ok(true);
    }
    let f = File::open(path).ctx(|| format!("reading {}", path.display()))?;
    let mut len = [0u8; 4];
    f.read_exact_at(&mut len, valid_len)
        .ctx(|| format!("reading {}", path.display()))?;
    let claimed = u32::from_le_bytes(len) as u64 + OVERHEAD;
    Ok(claimed > rest)
}

/// Rewrites a log to hold exactly `events` (recover, and healing a log that lost records).
pub(crate) fn rewrite(dir: &Path, base: Seq, events: &[Envelope]) -> Result<()> {
    let d = dir.join(DIR);
    crate::files::create_dir(&d)?;
    let mut buf = Vec::new();
    for e in events {
        record(e, &mut buf);
    }
    crate::files::write_atomic(&d, &format!("{base:020}.wal"), &buf, Durability::Durable)?;
    crate::files::write_atomic(&d, &format!("{base:020}.mirror"), &buf, Durability::Durable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Kind, NewEvent, ZERO_HASH};

    fn chain(n: u64) -> Vec<Envelope> {
        let mut prev = ZERO_HASH;
        (1..=n)
            .map(|i| {
                let e = Envelope::seal(
                    NewEvent {
                        recorded_at_us: i as i64,
                        host: "claude".into(),
                        kind: Kind::Hook {
                            name: "Stop".into(),
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

    #[test]
    fn appended_records_read_back_and_anchor_the_tail() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(5);
        let mut w = Wal::open(d.path(), 1).unwrap();
        w.append(&evs[..3].iter().collect::<Vec<_>>(), &["a".into()])
            .unwrap();
        w.append(&evs[3..].iter().collect::<Vec<_>>(), &[]).unwrap();
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((5, evs[4].hash)));
        let s = scan(&path(d.path(), 1)).unwrap();
        assert_eq!(s.events, evs);
        assert_eq!(s.drained, vec!["a".to_string()]);
        assert!(s.damage.is_none());
    }

    #[test]
    fn a_torn_final_append_is_cut_off_by_the_next_opener() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(3);
        let mut w = Wal::open(d.path(), 1).unwrap();
        w.append(&evs.iter().collect::<Vec<_>>(), &[]).unwrap();
        let p = path(d.path(), 1);
        let full = fs::metadata(&p).unwrap().len();
        // Half of a fourth record, as a kill mid-write leaves it.
        let mut more = Vec::new();
        record(&chain(4)[3], &mut more);
        let f = fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all_at(&more[..more.len() / 2], full).unwrap();
        let w = Wal::open(d.path(), 1).unwrap();
        assert_eq!(w.tail(), Some((3, evs[2].hash)));
        assert_eq!(fs::metadata(&p).unwrap().len(), full);
    }

    #[test]
    fn a_flipped_byte_inside_the_log_is_found_by_a_scan_and_never_cut() {
        let d = tempfile::tempdir().unwrap();
        let evs = chain(4);
        let mut w = Wal::open(d.path(), 1).unwrap();
        w.append(&evs.iter().collect::<Vec<_>>(), &[]).unwrap();
        let p = path(d.path(), 1);
        let mut bytes = fs::read(&p).unwrap();
        bytes[10] ^= 0x40;
        fs::write(&p, &bytes).unwrap();
        // Opening checks only the last record (the hook path); the scan finds the damage.
        assert_eq!(
            Wal::open(d.path(), 1).unwrap().tail(),
            Some((4, evs[3].hash))
        );
        let s = scan(&p).unwrap();
        assert!(s.events.is_empty());
        assert!(s.damage.unwrap().contains("checksum"));
        // Damage in the last record is not mistaken for a torn append.
        let mut bytes = fs::read(&p).unwrap();
        bytes[10] ^= 0x40;
        let n = bytes.len();
        bytes[n - 20] ^= 0x01;
        fs::write(&p, &bytes).unwrap();
        assert!(matches!(
            Wal::open(d.path(), 1),
            Err(Error::Corrupt {
                place: DamagePlace::Wal(name),
                ..
            }) if name == "00000000000000000001.wal"
        ));
    }
}
