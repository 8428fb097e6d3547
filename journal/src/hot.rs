//! The hot cache: every checkpoint partition as a small file, so that a hook answers without
//! opening sled.
//!
//! sled's open costs 8–9 ms (threads, every segment header, an fsync); reading three small files
//! costs microseconds. The cache is derived state, like the checkpoint it copies: it is never the
//! only copy of anything, and it is trusted only while its `HEAD` proves it is current.
//!
//! ```text
//! hot/HEAD        "HJHEAD01" epoch seq hash boot complete sled_seq drained-ids  blake3
//! hot/<32 hex>    "HJHOT001" epoch key value                                    blake3
//! ```
//!
//! **The invariant:** when `HEAD` names epoch *E* at head (*seq*, *hash*) and the write-ahead
//! log's last record is that same event, every partition file of epoch *E* holds that
//! partition's value at *seq*; with `complete`, a partition with no file of epoch *E* is absent.
//!
//! Every writer that keeps the checkpoint writes the partitions it changed, then `HEAD`, after its
//! events are durable in the log. A writer that appends events without keeping the checkpoint, a
//! kill between the log and `HEAD`, or a rebuild leaves `HEAD` behind the log, and the next
//! writer moves to a new epoch, which makes every older file a miss (never a wrong answer).
//! Files are overwritten in place, without fsync and without a rename (a rename replacing a file
//! costs a directory update, and ext4 starts the new file's writeback at once: together most of
//! a hook's commit). A reader that meets a half-written file, or a writer killed mid-write,
//! finds a checksum that does not match: a miss, never a wrong value. After a power loss the
//! files' order on disk is not guaranteed either, so `HEAD` also names the boot it was written
//! in, and a different boot is a miss.

use crate::envelope::{Hash, Seq};
use crate::error::{IoContext, Result};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The hot cache's directory, in the journal's.
pub const DIR: &str = "hot";
const HEAD: &str = "HEAD";
const HEAD_MAGIC: &[u8; 8] = b"HJHEAD01";
const PART_MAGIC: &[u8; 8] = b"HJHOT001";

/// What `hot/HEAD` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotHead {
    /// Files of other epochs are misses.
    pub epoch: u64,
    /// The journal head the epoch's files are current at.
    pub seq: Seq,
    /// That event's hash.
    pub hash: Hash,
    /// The boot it was written in (`/proc/sys/kernel/random/boot_id`).
    pub boot: String,
    /// Every partition of the checkpoint has a file of this epoch (a miss means absent).
    pub complete: bool,
    /// The last seq the active sled store held when a writer last opened it (how far the
    /// detached drainer is behind).
    pub sled_seq: Seq,
    /// Spool files ingested by recent commits whose removal may not have happened.
    pub drained: Vec<String>,
}

/// The current boot's id ("" where the system does not say).
pub fn boot_id() -> &'static str {
    static BOOT: OnceLock<String> = OnceLock::new();
    BOOT.get_or_init(|| {
        crate::door::read_following(Path::new("/proc/sys/kernel/random/boot_id"), 64)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default()
    })
}

/// A partition looked up in the cache.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Known: its bytes, or `None` when the partition does not exist.
    Known(Option<Vec<u8>>),
    /// Not in the cache: ask the store.
    Miss,
}

/// The cache directory of one journal.
#[derive(Clone, Debug)]
pub struct HotCache {
    dir: PathBuf,
}

fn file_name(key: &[u8]) -> String {
    // The first 16 bytes of the hash as hex (blake3's own rendering: no `format!` per byte).
    blake3::hash(key).to_hex()[..32].to_string()
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()?;
        self.take(n)
    }
}

/// The body of a file whose last 32 bytes are the blake3 of the rest and which starts with
/// `magic`; `None` when it does not check.
fn checked<'a>(bytes: &'a [u8], magic: &[u8; 8]) -> Option<&'a [u8]> {
    if bytes.len() < 40 || &bytes[..8] != magic {
        return None;
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    (blake3::hash(body).as_bytes() == sum).then_some(&body[8..])
}

fn sealed(mut body: Vec<u8>) -> Vec<u8> {
    let sum = blake3::hash(&body);
    body.extend_from_slice(sum.as_bytes());
    body
}

/// Overwrites `path` with `bytes` in place (created private when missing, and the cache's
/// directory with it), cut to their length. Not atomic: every file of the cache ends with its
/// checksum, so a torn one reads as a miss.
fn overwrite(path: &Path, bytes: &[u8]) -> Result<()> {
    // Opened first, the directory made only when it is missing: a hook writes three or four of
    // these files, and a `stat` of the directory before each was one system call a file.
    let opened = match crate::files::open_in_place_sized(path, false) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path
            .parent()
            .map_or(Ok(()), crate::files::create_dir)
            .and_then(|_| {
                crate::files::open_in_place_sized(path, false)
                    .map_err(|e| crate::files::open_error(path, e))
            }),
        r => r.map_err(|e| crate::files::open_error(path, e)),
    };
    let (f, len) = opened?;
    f.write_all_at(bytes, 0)
        .and_then(|_| {
            if len > bytes.len() as u64 {
                f.set_len(bytes.len() as u64)?;
            }
            Ok(())
        })
        .ctx(|| format!("writing {}", path.display()))
}

impl HotHead {
    fn encode(&self) -> Vec<u8> {
        let mut b = HEAD_MAGIC.to_vec();
        b.extend_from_slice(&self.epoch.to_le_bytes());
        b.extend_from_slice(&self.seq.to_le_bytes());
        b.extend_from_slice(&self.hash);
        put_u32(&mut b, self.boot.len());
        b.extend_from_slice(self.boot.as_bytes());
        b.push(self.complete as u8);
        b.extend_from_slice(&self.sled_seq.to_le_bytes());
        let ids = self.drained.join("\n");
        put_u32(&mut b, ids.len());
        b.extend_from_slice(ids.as_bytes());
        sealed(b)
    }

    fn decode(bytes: &[u8]) -> Option<HotHead> {
        let mut r = Reader(checked(bytes, HEAD_MAGIC)?);
        let epoch = r.u64()?;
        let seq = r.u64()?;
        let hash: Hash = r.take(32)?.try_into().ok()?;
        let boot = String::from_utf8(r.bytes()?.to_vec()).ok()?;
        let complete = r.take(1)?[0] == 1;
        let sled_seq = r.u64()?;
        let ids = std::str::from_utf8(r.bytes()?).ok()?;
        Some(HotHead {
            epoch,
            seq,
            hash,
            boot,
            complete,
            sled_seq,
            drained: ids
                .split('\n')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        })
    }

    /// Whether the cache is current at head (`seq`, `hash`) in this boot.
    pub fn current_at(&self, seq: Seq, hash: &Hash) -> bool {
        self.seq == seq && &self.hash == hash && self.boot == boot_id()
    }
}

impl HotCache {
    /// The cache of the journal in `journal_dir`.
    pub fn new(journal_dir: &Path) -> HotCache {
        HotCache {
            dir: journal_dir.join(DIR),
        }
    }

    /// What `HEAD` says; `None` when it is missing or does not check (both mean: not current).
    pub fn head(&self) -> Option<HotHead> {
        crate::files::read_regular(&self.dir.join(HEAD))
            .ok()
            .and_then(|b| HotHead::decode(&b))
    }

    /// Replaces `HEAD` (after the partitions it vouches for are written).
    pub fn set_head(&self, head: &HotHead) -> Result<()> {
        overwrite(&self.dir.join(HEAD), &head.encode())
    }

    /// Makes the cache not current, so the next writer starts a new epoch (a rebuild, a
    /// recovery, an import: anything that changes the checkpoint without going through it).
    pub fn invalidate(&self) -> Result<()> {
        match crate::door::unlink(self.dir.join(HEAD)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).ctx(|| format!("removing {}", self.dir.join(HEAD).display())),
        }
    }

    /// Partition `key` as epoch `epoch` knows it. A file of another epoch, a damaged file or
    /// one naming another key is a miss; so is no file, unless the epoch is `complete`.
    pub fn get(&self, head: &HotHead, key: &[u8]) -> Lookup {
        let Ok(bytes) = crate::files::read_regular(&self.dir.join(file_name(key))) else {
            return if head.complete {
                Lookup::Known(None)
            } else {
                Lookup::Miss
            };
        };
        let Some(body) = checked(&bytes, PART_MAGIC) else {
            return Lookup::Miss;
        };
        let mut r = Reader(body);
        let (Some(epoch), Some(k), Some(v)) = (r.u64(), r.bytes(), r.bytes()) else {
            return Lookup::Miss;
        };
        if epoch != head.epoch || k != key {
            // Another epoch's file (even in a complete cache: a partition that exists was
            // written in this epoch, so a leftover is never taken for absent) is a miss.
            return Lookup::Miss;
        }
        Lookup::Known((!v.is_empty()).then(|| v.to_vec()))
    }

    /// Writes partition `key` for `epoch` (an empty value: the partition does not exist).
    pub fn put(&self, epoch: u64, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = PART_MAGIC.to_vec();
        b.extend_from_slice(&epoch.to_le_bytes());
        put_u32(&mut b, key.len());
        b.extend_from_slice(key);
        put_u32(&mut b, value.len());
        b.extend_from_slice(value);
        overwrite(&self.dir.join(file_name(key)), &sealed(b))
    }

    /// Every partition file of `epoch`, as (key, value) (for `verify`).
    pub fn entries(&self, epoch: u64) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let rd = match crate::door::by_path::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).ctx(|| format!("listing {}", self.dir.display())),
        };
        let mut out = Vec::new();
        for entry in rd {
            if entry.file_name().len() != 32 {
                continue;
            }
            let Ok(bytes) = crate::files::read_regular(&entry.path) else {
                continue;
            };
            let Some(body) = checked(&bytes, PART_MAGIC) else {
                continue;
            };
            let mut r = Reader(body);
            if let (Some(e), Some(k), Some(v)) = (r.u64(), r.bytes(), r.bytes()) {
                if e == epoch {
                    out.push((k.to_vec(), v.to_vec()));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(epoch: u64, complete: bool) -> HotHead {
        HotHead {
            epoch,
            seq: 7,
            hash: [3; 32],
            boot: boot_id().to_string(),
            complete,
            sled_seq: 5,
            drained: vec!["a".into(), "b".into()],
        }
    }

    #[test]
    fn head_and_partitions_read_back_in_their_epoch_only() {
        let d = tempfile::tempdir().unwrap();
        let c = HotCache::new(d.path());
        assert_eq!(c.head(), None);
        let h = head(2, false);
        c.put(2, b"sess:x", b"value").unwrap();
        c.put(1, b"sess:old", b"old").unwrap();
        c.set_head(&h).unwrap();
        assert_eq!(c.head(), Some(h.clone()));
        assert!(h.current_at(7, &[3; 32]));
        assert!(!h.current_at(8, &[3; 32]));
        assert_eq!(c.get(&h, b"sess:x"), Lookup::Known(Some(b"value".to_vec())));
        assert_eq!(c.get(&h, b"sess:old"), Lookup::Miss);
        assert_eq!(c.get(&h, b"sess:none"), Lookup::Miss);
        let complete = head(2, true);
        assert_eq!(c.get(&complete, b"sess:none"), Lookup::Known(None));
        c.put(2, b"gone", b"").unwrap();
        assert_eq!(c.get(&h, b"gone"), Lookup::Known(None));
        assert_eq!(
            c.entries(2).unwrap(),
            vec![
                (b"gone".to_vec(), Vec::new()),
                (b"sess:x".to_vec(), b"value".to_vec())
            ]
        );
    }

    #[test]
    fn a_damaged_file_is_a_miss_and_a_damaged_head_is_no_head() {
        let d = tempfile::tempdir().unwrap();
        let c = HotCache::new(d.path());
        let h = head(1, true);
        c.put(1, b"global", b"value").unwrap();
        c.set_head(&h).unwrap();
        let p = d.path().join(DIR).join(file_name(b"global"));
        let mut b = std::fs::read(&p).unwrap();
        let n = b.len();
        b[n - 40] ^= 1;
        std::fs::write(&p, b).unwrap();
        assert_eq!(c.get(&h, b"global"), Lookup::Miss);
        let hp = d.path().join(DIR).join(HEAD);
        let mut b = std::fs::read(&hp).unwrap();
        b[12] ^= 1;
        std::fs::write(&hp, b).unwrap();
        assert_eq!(c.head(), None);
    }

    #[test]
    fn an_overwrite_in_place_reads_back_and_a_torn_one_is_a_miss() {
        let d = tempfile::tempdir().unwrap();
        let c = HotCache::new(d.path());
        let h = head(1, true);
        c.put(1, b"sess:a", &[7u8; 4096]).unwrap();
        c.put(1, b"sess:a", b"short").unwrap();
        assert_eq!(c.get(&h, b"sess:a"), Lookup::Known(Some(b"short".to_vec())));
        // A writer killed after writing the new bytes, before cutting the file to their length:
        // the old file's tail (and its checksum) follows the new body.
        let p = d.path().join(DIR).join(file_name(b"sess:a"));
        c.put(1, b"sess:a", &[9u8; 4096]).unwrap();
        let long = std::fs::read(&p).unwrap();
        c.put(1, b"sess:a", b"tiny").unwrap();
        let short = std::fs::read(&p).unwrap();
        let mut torn = long.clone();
        torn[..short.len()].copy_from_slice(&short);
        std::fs::write(&p, &torn).unwrap();
        assert_eq!(c.get(&h, b"sess:a"), Lookup::Miss);
        // Killed halfway through writing the new bytes over the old ones.
        let mut torn = short.clone();
        torn[..long.len().min(short.len()) / 2].copy_from_slice(&long[..short.len() / 2]);
        std::fs::write(&p, &torn).unwrap();
        assert_eq!(c.get(&h, b"sess:a"), Lookup::Miss);
    }

    #[test]
    fn another_boot_is_not_current() {
        let mut h = head(1, true);
        h.boot = "another boot".into();
        assert!(!h.current_at(7, &[3; 32]));
    }
}
