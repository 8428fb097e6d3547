//! Entry points for the fuzz targets in `fuzz/` (not an API: hidden from the docs, and free to
//! change with the formats). Each `decode_*` takes the bytes of one file, puts them where the
//! journal's own reader finds them (a scratch directory), and reads them with that reader: what
//! it makes of them, or the error naming the damage. Each `reseal_*` recomputes a file's
//! checksums, so a fuzzer's mutation reaches the decoding behind them instead of stopping at the
//! checksum; the unit tests below check that a real file comes back from it unchanged, so a
//! change of format that forgets the reseal fails here.
//!
//! The contract under fuzzing: an error, never a panic, no allocation sized by a length field
//! beyond the file, no endless loop.

use crate::envelope::{Envelope, NewEvent};
use crate::hot::{HotCache, Lookup};
use crate::segment::SegmentInfo;
use crate::spool::SpoolEntry;
use std::path::{Path, PathBuf};

/// A scratch directory of this process (on tmpfs where there is one), made once.
fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("hookjournal-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

/// Writes `bytes` as `name` (a path under the scratch directory), returning its path.
fn put(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch().join(name);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("scratch subdirectory");
    std::fs::write(&p, bytes).expect("writing a scratch file");
    p
}

/// What a scan of a write-ahead log found.
#[derive(Debug)]
pub struct WalScan {
    /// The whole records' events.
    pub events: Vec<Envelope>,
    /// The spool ids the logged batches ingested.
    pub drained: Vec<String>,
    /// Bytes holding whole, valid records.
    pub valid_len: u64,
    /// What is wrong after them.
    pub damage: Option<String>,
}

/// A write-ahead log file, as `recover`, `verify` and an opener scan it; and the same bytes as
/// the log of a pair whose mirror holds their first half, merged and opened as a writer opens
/// them (reading both whole, cutting and rewriting what it must).
pub fn scan_wal(bytes: &[u8]) -> Result<WalScan, String> {
    let path = put("wal/00000000000000000001.wal", bytes);
    put("wal/00000000000000000001.mirror", &bytes[..bytes.len() / 2]);
    let s = crate::wal::scan(&path).map_err(|e| e.to_string())?;
    let _ = crate::wal::merge(Some(bytes), Some(&bytes[..bytes.len() / 2]));
    let _ = crate::wal::Wal::open_scanned(scratch(), 1);
    Ok(WalScan {
        events: s.events,
        drained: s.drained,
        valid_len: s.valid_len,
        damage: s.damage,
    })
}

/// `scan_wal` after `reseal_wal`: the records as the fuzzer shaped them, with valid checksums.
pub fn reseal_wal(bytes: &[u8]) -> Vec<u8> {
    // `[u32 le len][body][32-byte blake3 of (len, body)][u32 le len]HJW1`, record after record;
    // a record that does not fit is left as it is (with what follows).
    let mut out = bytes.to_vec();
    let mut pos = 0usize;
    while pos + 4 <= out.len() {
        let len = u32::from_le_bytes(out[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        let end = pos + 4 + len + 32 + 8;
        if end > out.len() {
            break;
        }
        let mut h = blake3::Hasher::new();
        h.update(&out[pos..pos + 4]);
        h.update(&out[pos + 4..pos + 4 + len]);
        let sum = *h.finalize().as_bytes();
        out[pos + 4 + len..pos + 4 + len + 32].copy_from_slice(&sum);
        let (a, b) = (pos + 4 + len + 32, pos + 4 + len + 36);
        out.copy_within(pos..pos + 4, a);
        out[b..b + 4].copy_from_slice(b"HJW1");
        pos = end;
    }
    out
}

/// A spool file, as the hook's drain and `recover` read it.
pub fn decode_spool(bytes: &[u8]) -> Result<NewEvent, String> {
    let id = "00000000000000000001-0000000001-000001";
    let path = put(&format!("spool/{id}.spool"), bytes);
    crate::spool::read(&SpoolEntry {
        id: id.into(),
        path,
    })
    .map_err(|e| e.to_string())
}

/// A spool file with its checksum made right (`HJSPOOL2`, blake3 of the body, the body).
pub fn reseal_spool(bytes: &[u8]) -> Vec<u8> {
    match bytes.strip_prefix(b"HJSPOOL2") {
        Some(rest) if rest.len() >= 32 => {
            let body = &rest[32..];
            let mut out = b"HJSPOOL2".to_vec();
            out.extend_from_slice(blake3::hash(body).as_bytes());
            out.extend_from_slice(body);
            out
        }
        _ => bytes.to_vec(),
    }
}

/// A sealed segment, named after the range its footer claims (the name a sound file has), read
/// whole with its digest checked, read without it (as readers stream it), and streamed as an
/// export reads it: the events of each, or the error.
pub fn decode_segment(bytes: &[u8]) -> [Result<usize, String>; 3] {
    let (first, last) = footer_range(bytes).unwrap_or((1, 1));
    let name = crate::segment::file_name(first, last);
    let path = put(&format!("segments/{name}"), bytes);
    let seg = SegmentInfo {
        path,
        first,
        last,
        bytes: bytes.len() as u64,
    };
    let count = |check: bool| {
        let mut n = 0;
        crate::segment::for_each(&seg, check, |_| {
            n += 1;
            Ok(())
        })
        .map(|()| n)
        .map_err(|e| e.to_string())
    };
    let mut streamed = 0;
    let stream = crate::segment::stream(&seg, |_| {
        streamed += 1;
        Ok(())
    })
    .map(|()| streamed)
    .map_err(|e| e.to_string());
    [count(true), count(false), stream]
}

/// The `first` and `last` a segment's footer claims.
fn footer_range(bytes: &[u8]) -> Option<(u64, u64)> {
    let footer = bytes.get(bytes.len().checked_sub(64)?..)?;
    let at = |i: usize| u64::from_le_bytes(footer[i..i + 8].try_into().expect("8 bytes"));
    Some((at(0), at(8)))
}

/// A segment with its footer's digest made right (the footer's other fields as they are).
pub fn reseal_segment(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if out.len() >= 8 + 64 {
        let body_end = out.len() - 64;
        let digest = *blake3::hash(&out[..body_end]).as_bytes();
        out[body_end + 24..body_end + 56].copy_from_slice(&digest);
    }
    out
}

/// An archive of cold partitions, as a lookup (of `key`), a listing of the keys under
/// `prefix` and a whole read find it.
pub fn decode_archive(bytes: &[u8], key: &[u8], prefix: &[u8]) -> [Result<usize, String>; 3] {
    let path = put("state/00000000000000000001.cold", bytes);
    let e = |e: crate::Error| e.to_string();
    [
        crate::archive::get(&path, key)
            .map(|v| v.map_or(0, |v| v.len()))
            .map_err(e),
        crate::archive::keys(&path, prefix)
            .map(|k| k.len())
            .map_err(e),
        crate::archive::read_all(&path).map(|m| m.len()).map_err(e),
    ]
}

/// An archive with its footer's digest made right.
pub fn reseal_archive(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if out.len() >= 8 + 56 {
        let body = out.len() - 56;
        let digest = *blake3::hash(&out[..body]).as_bytes();
        out[body + 16..body + 48].copy_from_slice(&digest);
    }
    out
}

/// A hot-cache `HEAD` and one partition file (named for `key`), as a hook reads them: what the
/// head says, and the partition's lookup under it.
pub fn decode_hot(head: &[u8], partition: &[u8], key: &[u8]) -> (bool, Option<usize>) {
    let dir = scratch().join("journal");
    let hot = dir.join(crate::hot::DIR);
    std::fs::create_dir_all(&hot).expect("scratch hot directory");
    std::fs::write(hot.join("HEAD"), head).expect("writing HEAD");
    let name: String = blake3::hash(key).as_bytes()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(hot.join(name), partition).expect("writing a partition file");
    let cache = HotCache::new(&dir);
    let Some(h) = cache.head() else {
        return (false, None);
    };
    let _ = cache.entries(h.epoch);
    let found = match cache.get(&h, key) {
        Lookup::Known(v) => v.map(|v| v.len()),
        Lookup::Miss => None,
    };
    (true, found)
}

/// A hot-cache file (`HEAD` or a partition) with its trailing checksum made right.
pub fn reseal_hot(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if out.len() >= 40 {
        let body = out.len() - 32;
        let sum = *blake3::hash(&out[..body]).as_bytes();
        out[body..].copy_from_slice(&sum);
    }
    out
}

/// `CURRENT` (and `ACTIVE_EMPTY`, the seal's marker beside it) as an opener reads them: the
/// store `CURRENT` names, and what is wrong with the marker.
pub fn parse_current(
    current: &[u8],
    empty_marker: &[u8],
) -> (Result<Option<String>, String>, Result<(), String>) {
    let dir = scratch().join("current");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    std::fs::write(dir.join("CURRENT"), current).expect("writing CURRENT");
    std::fs::write(dir.join("ACTIVE_EMPTY"), empty_marker).expect("writing ACTIVE_EMPTY");
    let named = crate::store::read_current(&dir).map_err(|e| e.to_string());
    let marker = crate::store::check_empty_marker(&dir, (1, crate::ZERO_HASH), 0);
    (named, marker)
}

/// An envelope's bincode, as segments, the log and the store hold it.
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope, String> {
    Envelope::decode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Body, Journal, OpenOptions, WireKind};
    use std::time::Duration;

    /// A journal with sealed segments, an archive, a log, spooled files and a hot cache.
    fn journal() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("j");
        let opts = OpenOptions {
            wait: Duration::from_secs(5),
            create: true,
            segment_events: 4,
            priority: false,
        };
        let ev = |i: usize, session: &str| NewEvent {
            recorded_at_us: i as i64,
            host: "claude".into(),
            kind: WireKind {
                tag: 0,
                body: Body::Text("PreToolUse".into()),
            },
            session_id: Some(session.into()),
            agent_id: None,
            payload: format!("{{\"n\":{i}}}").into_bytes(),
            truncated: None,
            spooled: false,
        };
        for i in 0..11 {
            let mut jr = Journal::open(&j, &opts).unwrap();
            let mut tx = jr.begin();
            tx.push(ev(i, if i < 4 { "early" } else { "late" }));
            tx.put_state(format!("s/{}", i % 5).as_bytes(), vec![i as u8; 3]);
            tx.checkpointed();
            jr.commit(tx).unwrap();
            jr.seal_if_full().unwrap();
        }
        crate::spool::write(&j, &ev(99, "late")).unwrap();
        let hot = HotCache::new(&j);
        hot.put(7, b"k", b"value").unwrap();
        (d, j)
    }

    fn files(dir: &Path, suffix: &str) -> Vec<Vec<u8>> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect();
        v.sort();
        v.iter().map(|p| std::fs::read(p).unwrap()).collect()
    }

    #[test]
    fn a_real_file_of_every_kind_reseals_to_itself_and_decodes() {
        let (_d, j) = journal();
        let wals = files(&j.join("wal"), ".wal");
        assert!(!wals.is_empty());
        for w in &wals {
            assert_eq!(&reseal_wal(w), w);
            let s = scan_wal(w).unwrap();
            assert_eq!(s.damage, None);
            assert_eq!(s.valid_len, w.len() as u64);
        }
        let segs = files(&j.join("segments"), ".seg");
        assert!(!segs.is_empty());
        for s in &segs {
            assert_eq!(&reseal_segment(s), s);
            for r in decode_segment(s) {
                assert_eq!(r, Ok(4));
            }
        }
        let archives = files(&j.join("state"), ".cold");
        assert!(!archives.is_empty());
        for a in &archives {
            assert_eq!(&reseal_archive(a), a);
            for r in decode_archive(a, b"s/1", b"s/") {
                assert!(r.is_ok(), "{r:?}");
            }
        }
        for s in files(&j.join("spool"), ".spool") {
            assert_eq!(reseal_spool(&s), s);
            assert_eq!(decode_spool(&s).unwrap().payload, b"{\"n\":99}");
        }
        let part = files(&j.join("hot"), "")
            .into_iter()
            .find(|f| f.starts_with(b"HJHOT001"));
        let part = part.expect("a partition file");
        assert_eq!(reseal_hot(&part), part);
        let current = std::fs::read(j.join("CURRENT")).unwrap();
        assert!(matches!(parse_current(&current, b"").0, Ok(Some(_))));
    }

    /// Every input a fuzz target crashed on (`journal/fuzz-regressions/<target>/`, kept as found),
    /// read again by the target's decoders: an error naming the damage now, never a panic or an
    /// abort (a damaged length prefix asked bincode for petabytes; a segment's and an archive's
    /// footer fields overflowed the arithmetic checking them).
    #[test]
    fn every_input_a_fuzz_target_crashed_on_is_an_error_now() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz-regressions");
        let mut seen = 0;
        for target in std::fs::read_dir(&root).unwrap().flatten() {
            let name = target.file_name().to_string_lossy().into_owned();
            for input in std::fs::read_dir(target.path()).unwrap().flatten() {
                let data = std::fs::read(input.path()).unwrap();
                seen += 1;
                match name.as_str() {
                    "wal_scan" => {
                        for bytes in [data.clone(), reseal_wal(&data)] {
                            let s = scan_wal(&bytes).unwrap();
                            assert!(s.damage.is_some(), "{}", input.path().display());
                        }
                    }
                    "spool_file" => {
                        for bytes in [data.clone(), reseal_spool(&data)] {
                            let e = decode_spool(&bytes).unwrap_err();
                            assert!(e.contains(".spool"), "{e}");
                        }
                    }
                    "segment" => {
                        for bytes in [data.clone(), reseal_segment(&data)] {
                            for r in decode_segment(&bytes) {
                                assert!(r.unwrap_err().contains("segment"));
                            }
                        }
                    }
                    "archive" => {
                        for bytes in [data.clone(), reseal_archive(&data)] {
                            for r in decode_archive(&bytes, b"s/1", b"") {
                                let _ = r;
                            }
                        }
                    }
                    "envelope" => assert!(decode_envelope(&data).is_err()),
                    other => panic!("no decoder for the fuzz target {other}"),
                }
            }
        }
        assert!(seen > 0);
    }
}
