//! Cold checkpoint partitions: at each seal, partitions not written since the previous seal move
//! out of the active sled store into an immutable archive file, so the store the hook opens stays
//! small however many sessions the journal has seen. Lookups that miss the active store search
//! the archives newest first through a hashed index (a few `pread`s each); archives are merged
//! when there are more than `MAX_ARCHIVES`.
//!
//! Layout of `state/<seq:020>.cold`: `HJCOLD01`, entries `[u32 klen][key][u32 vlen][value]` in key
//! order, an index of `[u64 key hash][u64 entry offset]` sorted by hash, and a footer
//! `[u64 index offset][u64 count][32-byte blake3 of everything before the footer]HJCOLDEN`.

use crate::error::{IoContext, Result};
use crate::files::{self, Durability};
use crate::{DamagePlace, Error};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub(crate) const DIR: &str = "state";
const MAGIC: &[u8; 8] = b"HJCOLD01";
const END: &[u8; 8] = b"HJCOLDEN";
const FOOTER: usize = 8 + 8 + 32 + 8;
pub(crate) const MAX_ARCHIVES: usize = 8;

fn key_hash(key: &[u8]) -> u64 {
    u64::from_le_bytes(
        blake3::hash(key).as_bytes()[..8]
            .try_into()
            .expect("8 bytes"),
    )
}

/// Archive files, oldest first (by the seq in their name).
pub(crate) fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    files::list_numbered(&dir.join(DIR), ".cold")
}

/// Writes `entries` as archive `state/<seq>.cold`, durably and atomically (replacing a file of
/// that name).
pub(crate) fn write(dir: &Path, seq: u64, entries: &BTreeMap<Vec<u8>, Vec<u8>>) -> Result<PathBuf> {
    let d = dir.join(DIR);
    files::create_dir(&d)?;
    let name = format!("{seq:020}.cold");
    files::write_atomic_with(&d, &name, Durability::Durable, |f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        let mut hasher = blake3::Hasher::new();
        let mut pos = 0u64;
        let mut index: Vec<(u64, u64)> = Vec::with_capacity(entries.len());
        let mut put =
            |w: &mut BufWriter<&mut File>, b: &[u8], pos: &mut u64| -> std::io::Result<()> {
                hasher.update(b);
                *pos += b.len() as u64;
                w.write_all(b)
            };
        put(&mut w, MAGIC, &mut pos)?;
        for (k, v) in entries {
            index.push((key_hash(k), pos));
            put(&mut w, &(k.len() as u32).to_le_bytes(), &mut pos)?;
            put(&mut w, k, &mut pos)?;
            put(&mut w, &(v.len() as u32).to_le_bytes(), &mut pos)?;
            put(&mut w, v, &mut pos)?;
        }
        index.sort_unstable();
        let index_off = pos;
        for (h, off) in &index {
            put(&mut w, &h.to_le_bytes(), &mut pos)?;
            put(&mut w, &off.to_le_bytes(), &mut pos)?;
        }
        let digest = hasher.finalize();
        let mut footer = Vec::with_capacity(FOOTER);
        footer.extend_from_slice(&index_off.to_le_bytes());
        footer.extend_from_slice(&(index.len() as u64).to_le_bytes());
        footer.extend_from_slice(digest.as_bytes());
        footer.extend_from_slice(END);
        w.write_all(&footer)?;
        w.flush()
    })?;
    Ok(d.join(name))
}

/// Opens an archive and reads its footer, checking its length and end marker: (file, length,
/// footer). Errors name the file.
fn open_checked(path: &Path) -> Result<(File, u64, [u8; FOOTER])> {
    let name = path.display();
    let f = crate::files::open_read(path).ctx(|| format!("opening {name}"))?;
    let len = f.metadata().ctx(|| format!("reading {name}"))?.len();
    let corrupt = |w: &str| Error::Corrupt {
        place: DamagePlace::archive(path),
        what: format!("archive {name}: {w}"),
    };
    if len < (MAGIC.len() + FOOTER) as u64 {
        return Err(corrupt("too short"));
    }
    let mut footer = [0u8; FOOTER];
    f.read_exact_at(&mut footer, len - FOOTER as u64)
        .ctx(|| format!("reading {name}"))?;
    if &footer[48..56] != END {
        return Err(corrupt("bad footer"));
    }
    Ok((f, len, footer))
}

/// Looks `key` up in one archive. Errors name the file.
pub(crate) fn get(path: &Path, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let name = path.display();
    let (f, len, footer) = open_checked(path)?;
    let corrupt = |w: &str| Error::Corrupt {
        place: DamagePlace::archive(path),
        what: format!("archive {name}: {w}"),
    };
    let index_off = u64::from_le_bytes(footer[0..8].try_into().unwrap());
    let n = u64::from_le_bytes(footer[8..16].try_into().unwrap());
    let end = n
        .checked_mul(16)
        .and_then(|i| i.checked_add(index_off))
        .and_then(|i| i.checked_add(FOOTER as u64));
    if end != Some(len) {
        return Err(corrupt("index does not fit"));
    }
    let h = key_hash(key);
    let at = |i: u64| -> Result<(u64, u64)> {
        let mut b = [0u8; 16];
        f.read_exact_at(&mut b, index_off + i * 16)
            .ctx(|| format!("reading {name}"))?;
        Ok((
            u64::from_le_bytes(b[..8].try_into().unwrap()),
            u64::from_le_bytes(b[8..].try_into().unwrap()),
        ))
    };
    // First index entry with hash >= h.
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if at(mid)?.0 < h {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let mut i = lo;
    while i < n {
        let (eh, off) = at(i)?;
        if eh != h {
            break;
        }
        let mut lb = [0u8; 4];
        f.read_exact_at(&mut lb, off)
            .ctx(|| format!("reading {name}"))?;
        let kl = u32::from_le_bytes(lb) as u64;
        // Lengths are read from the file: never allocate past its entries (the index's start).
        if off.saturating_add(8).saturating_add(kl) > index_off {
            return Err(corrupt("entry cut short"));
        }
        let mut k = vec![0u8; kl as usize];
        f.read_exact_at(&mut k, off + 4)
            .ctx(|| format!("reading {name}"))?;
        if k == key {
            f.read_exact_at(&mut lb, off + 4 + kl)
                .ctx(|| format!("reading {name}"))?;
            let vl = u32::from_le_bytes(lb) as u64;
            if off + 8 + kl + vl > index_off {
                return Err(corrupt("entry cut short"));
            }
            let mut v = vec![0u8; vl as usize];
            f.read_exact_at(&mut v, off + 8 + kl)
                .ctx(|| format!("reading {name}"))?;
            return Ok(Some(v));
        }
        i += 1;
    }
    Ok(None)
}

/// The keys of an archive that start with `prefix`, each with whether its value is non-empty
/// (an empty value is a deletion). Values are skipped, not read: listing the sessions of a large
/// archive costs its keys. The digest is not checked (`read_all` and `verify` do).
pub(crate) fn keys(path: &Path, prefix: &[u8]) -> Result<Vec<(Vec<u8>, bool)>> {
    use std::io::{BufReader, Read};
    let name = path.display();
    let (f, len, footer) = open_checked(path)?;
    let corrupt = |w: &str| Error::Corrupt {
        place: DamagePlace::archive(path),
        what: format!("archive {name}: {w}"),
    };
    let index_off = u64::from_le_bytes(footer[0..8].try_into().unwrap());
    // The entries' lengths are checked against it: it must be inside the file.
    if index_off > len - FOOTER as u64 {
        return Err(corrupt("index does not fit"));
    }
    let mut r = BufReader::with_capacity(1 << 16, f);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).ctx(|| format!("reading {name}"))?;
    if &magic != MAGIC {
        return Err(corrupt("bad header"));
    }
    let mut pos = 8u64;
    let mut out = Vec::new();
    let mut lb = [0u8; 4];
    while pos < index_off {
        r.read_exact(&mut lb).ctx(|| format!("reading {name}"))?;
        let kl = u32::from_le_bytes(lb) as u64;
        if pos + 8 + kl > index_off {
            return Err(corrupt("entry cut short"));
        }
        let mut k = vec![0u8; kl as usize];
        r.read_exact(&mut k).ctx(|| format!("reading {name}"))?;
        r.read_exact(&mut lb).ctx(|| format!("reading {name}"))?;
        let vl = u32::from_le_bytes(lb) as u64;
        r.seek_relative(vl as i64)
            .ctx(|| format!("reading {name}"))?;
        pos += 8 + kl + vl;
        if k.starts_with(prefix) {
            out.push((k, vl > 0));
        }
    }
    Ok(out)
}

/// Every entry of an archive, checking its digest.
pub(crate) fn read_all(path: &Path) -> Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let name = path.display();
    let bytes = crate::files::read_regular(path).ctx(|| format!("reading {name}"))?;
    let corrupt = |w: &str| Error::Corrupt {
        place: DamagePlace::archive(path),
        what: format!("archive {name}: {w}"),
    };
    if bytes.len() < MAGIC.len() + FOOTER || &bytes[..8] != MAGIC {
        return Err(corrupt("bad header or too short"));
    }
    let body = bytes.len() - FOOTER;
    let footer = &bytes[body..];
    if &footer[48..56] != END {
        return Err(corrupt("bad footer"));
    }
    if blake3::hash(&bytes[..body]).as_bytes() != &footer[16..48] {
        return Err(corrupt(
            "content digest mismatch (the file was changed or damaged)",
        ));
    }
    let index_off = u64::from_le_bytes(footer[0..8].try_into().unwrap()) as usize;
    let mut out = BTreeMap::new();
    let mut pos = 8;
    while pos < index_off {
        let rd = |p: usize| -> Result<usize> {
            bytes
                .get(p..p + 4)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
                .ok_or_else(|| corrupt("entry cut short"))
        };
        let kl = rd(pos)?;
        let k = bytes
            .get(pos + 4..pos + 4 + kl)
            .ok_or_else(|| corrupt("entry cut short"))?
            .to_vec();
        let vl = rd(pos + 4 + kl)?;
        let v = bytes
            .get(pos + 8 + kl..pos + 8 + kl + vl)
            .ok_or_else(|| corrupt("entry cut short"))?
            .to_vec();
        pos += 8 + kl + vl;
        out.insert(k, v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_every_key_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = BTreeMap::new();
        for i in 0..500u32 {
            m.insert(
                format!("sess:{i}").into_bytes(),
                vec![i as u8; (i % 40) as usize],
            );
        }
        let p = write(dir.path(), 7, &m).unwrap();
        for (k, v) in &m {
            assert_eq!(get(&p, k).unwrap().as_ref(), Some(v));
        }
        assert_eq!(get(&p, b"sess:nope").unwrap(), None);
        assert_eq!(read_all(&p).unwrap(), m);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&p, bytes).unwrap();
        assert!(read_all(&p).is_err());
    }
}
