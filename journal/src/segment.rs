//! Sealed segments: immutable flat files of consecutive envelopes.
//!
//! Layout: `HJSEG001` magic, then records `[u32 le length][bincode envelope]`, then a footer:
//! `[u64 first][u64 last][u64 count][32-byte blake3 of every byte before the footer]HJSEGEND`.
//! File names are `<first:020>-<last:020>.seg`, so a directory listing sorts them in order.

use crate::envelope::{Envelope, Seq};
use crate::error::{IoContext, Result};
use crate::files::{self, Durability};
use crate::{DamagePlace, Error};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"HJSEG001";
const END: &[u8; 8] = b"HJSEGEND";
const FOOTER_LEN: usize = 8 + 8 + 8 + 32 + 8;

/// A sealed segment file and the events it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The file.
    pub path: PathBuf,
    /// The seq of its first event.
    pub first: Seq,
    /// The seq of its last event.
    pub last: Seq,
    /// The file's size.
    pub bytes: u64,
}

pub(crate) fn file_name(first: Seq, last: Seq) -> String {
    format!("{first:020}-{last:020}.seg")
}

fn parse_name(name: &str) -> Option<(Seq, Seq)> {
    let stem = name.strip_suffix(".seg")?;
    let (a, b) = stem.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Lists sealed segments in seq order.
pub(crate) fn list(dir: &Path) -> Result<Vec<SegmentInfo>> {
    let mut out = Vec::new();
    let rd = match crate::door::by_path::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => {
            return Err(Error::Io {
                context: format!("listing {}", dir.display()),
                cause: e,
            })
        }
    };
    for entry in rd {
        let Some((first, last)) = entry.file_name().to_str().and_then(parse_name) else {
            continue;
        };
        // Only regular files are segments (a link or a directory is named by `verify`).
        if !entry.is_file() {
            continue;
        }
        let bytes = entry.len();
        out.push(SegmentInfo {
            path: entry.path,
            first,
            last,
            bytes,
        });
    }
    out.sort_by_key(|s| s.first);
    Ok(out)
}

/// Writes a segment (at least one event) durably and atomically: see `files::write_atomic_with`.
pub(crate) fn write(dir: &Path, events: &[Envelope]) -> Result<SegmentInfo> {
    let first = events
        .first()
        .expect("a segment holds at least one event")
        .seq;
    let last = events.last().map(|e| e.seq).unwrap_or(first);
    let name = file_name(first, last);
    files::write_atomic_with(dir, &name, Durability::Durable, |file| {
        let mut hasher = blake3::Hasher::new();
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut put = |w: &mut BufWriter<&mut File>, bytes: &[u8]| -> std::io::Result<()> {
            hasher.update(bytes);
            w.write_all(bytes)
        };
        put(&mut w, MAGIC)?;
        for e in events {
            let rec = e.encode();
            put(&mut w, &(rec.len() as u32).to_le_bytes())?;
            put(&mut w, &rec)?;
        }
        let digest = hasher.finalize();
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(&first.to_le_bytes());
        footer.extend_from_slice(&last.to_le_bytes());
        footer.extend_from_slice(&(events.len() as u64).to_le_bytes());
        footer.extend_from_slice(digest.as_bytes());
        footer.extend_from_slice(END);
        w.write_all(&footer)?;
        w.flush()
    })?;
    let path = dir.join(&name);
    let bytes = crate::door::status(&path).map(|m| m.len()).unwrap_or(0);
    Ok(SegmentInfo {
        path,
        first,
        last,
        bytes,
    })
}

/// Reads a whole segment, checking its footer digest. Errors name the file and the cause.
pub(crate) fn read_all(seg: &SegmentInfo) -> Result<Vec<Envelope>> {
    // Sized by the name, but never past what the file could hold (a name is bytes from disk too).
    let named = seg.last.saturating_sub(seg.first).saturating_add(1);
    let mut out = Vec::with_capacity(named.min(seg.bytes / 8) as usize);
    for_each(seg, true, |e| {
        out.push(e);
        Ok(())
    })?;
    Ok(out)
}

/// Streams a segment's envelopes. With `check_digest`, the whole file is hashed first.
pub(crate) fn for_each(
    seg: &SegmentInfo,
    check_digest: bool,
    mut f: impl FnMut(Envelope) -> Result<()>,
) -> Result<()> {
    let name = seg
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bytes = crate::files::read_regular(&seg.path).ctx(|| format!("reading segment {name}"))?;
    let corrupt = |what: String| Error::Corrupt {
        place: DamagePlace::Segment(name.clone()),
        what: format!("segment {name}: {what}"),
    };
    if bytes.len() < MAGIC.len() + FOOTER_LEN || &bytes[..8] != MAGIC {
        return Err(corrupt("bad header or too short".into()));
    }
    let body_end = bytes.len() - FOOTER_LEN;
    let footer = &bytes[body_end..];
    if &footer[56..64] != END {
        return Err(corrupt("bad footer".into()));
    }
    let u64_at = |i: usize| u64::from_le_bytes(footer[i..i + 8].try_into().unwrap());
    let (first, last, count) = (u64_at(0), u64_at(8), u64_at(16));
    let span = last.checked_sub(first).and_then(|d| d.checked_add(1));
    if first != seg.first || last != seg.last || Some(count) != span {
        return Err(corrupt(format!(
            "footer says {first}..{last} ({count} events), name says {}..{}",
            seg.first, seg.last
        )));
    }
    if check_digest && blake3::hash(&bytes[..body_end]).as_bytes() != &footer[24..56] {
        return Err(corrupt(
            "content digest mismatch (the file was changed or damaged)".into(),
        ));
    }
    let mut pos = 8;
    let mut n = 0u64;
    while pos < body_end {
        if pos + 4 > body_end {
            return Err(corrupt(format!("record {n} cut short")));
        }
        let len = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        pos += 4;
        if pos + len > body_end {
            return Err(corrupt(format!("record {n} cut short")));
        }
        let env = Envelope::decode(&bytes[pos..pos + len])
            .map_err(|e| corrupt(format!("record {n}: {e}")))?;
        pos += len;
        n += 1;
        f(env)?;
    }
    if n != count {
        return Err(corrupt(format!("{n} records, footer says {count}")));
    }
    Ok(())
}

/// Streams a segment's envelopes from a reader without loading it whole (for large exports).
pub(crate) fn stream(seg: &SegmentInfo, mut f: impl FnMut(Envelope) -> Result<()>) -> Result<()> {
    let name = seg
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = crate::files::open_read(&seg.path).ctx(|| format!("opening segment {name}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let corrupt = |what: String| Error::Corrupt {
        place: DamagePlace::Segment(name.clone()),
        what: format!("segment {name}: {what}"),
    };
    if len < (MAGIC.len() + FOOTER_LEN) as u64 {
        return Err(corrupt("too short".into()));
    }
    let body_end = len - FOOTER_LEN as u64;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)
        .ctx(|| format!("reading segment {name}"))?;
    if &magic != MAGIC {
        return Err(corrupt("bad header".into()));
    }
    let mut pos = 8u64;
    let mut buf = Vec::new();
    while pos < body_end {
        let mut lb = [0u8; 4];
        r.read_exact(&mut lb)
            .ctx(|| format!("reading segment {name}"))?;
        let l = u32::from_le_bytes(lb) as usize;
        if pos + 4 + l as u64 > body_end {
            return Err(corrupt("record cut short".into()));
        }
        buf.resize(l, 0);
        r.read_exact(&mut buf)
            .ctx(|| format!("reading segment {name}"))?;
        pos += 4 + l as u64;
        f(Envelope::decode(&buf).map_err(corrupt)?)?;
    }
    Ok(())
}
