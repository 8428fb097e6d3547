//! The spool: where an invocation goes when the journal's lock cannot be had within the budget.
//!
//! Each spooled event is one file, written to a temp name, fsynced and renamed, so a reader sees it
//! whole or not at all. Names sort by arrival (`<unix ns>-<pid>-<counter>`), and the next process
//! that holds the lock drains them in that order. A drained file's id is committed in the same
//! batch as its event, so a crash between commit and unlink never ingests it twice.
//!
//! A file is `HJSPOOL2`, the blake3 of the body, then the body (a bincode `NewEvent`): a
//! damaged file is caught before it could be ingested as a genuine event. (Files without the
//! magic were written by 0.1.0 and are read as bare bodies.)

use crate::envelope::{bincode_config, NewEvent};
use crate::error::{IoContext, Result};
use crate::files::{self, Durability};
use crate::{DamagePlace, Error};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The spool's directory, inside the journal's.
pub const SPOOL_DIR: &str = "spool";
const SUFFIX: &str = ".spool";
const MAGIC: &[u8; 8] = b"HJSPOOL2";

/// A spooled event's file.
#[derive(Clone, Debug)]
pub struct SpoolEntry {
    /// Its id: `<unix ns>-<pid>-<counter>`, so ids sort by arrival.
    pub id: String,
    /// The file, `spool/<id>.spool`.
    pub path: PathBuf,
}

/// Writes `ev` to the spool of journal `dir` durably; returns its id.
pub fn write(dir: &Path, ev: &NewEvent) -> Result<String> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let spool = dir.join(SPOOL_DIR);
    if !spool.exists() {
        files::create_dir(&spool)?;
    }
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let id = format!(
        "{ns:020}-{:010}-{:06}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let body = bincode::serde::encode_to_vec(ev, bincode_config())
        .expect("encoding an event into a Vec cannot fail");
    let mut bytes = Vec::with_capacity(body.len() + 40);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(blake3::hash(&body).as_bytes());
    bytes.extend_from_slice(&body);
    files::write_atomic(
        &spool,
        &format!("{id}{SUFFIX}"),
        &bytes,
        Durability::Durable,
    )?;
    Ok(id)
}

/// Spooled events in arrival order. Temp files (a writer killed mid-write) are skipped; they were
/// never acknowledged.
pub fn list(dir: &Path) -> Result<Vec<SpoolEntry>> {
    let spool = dir.join(SPOOL_DIR);
    let rd = match fs::read_dir(&spool) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::Io {
                context: format!("listing {}", spool.display()),
                cause: e,
            })
        }
    };
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(SUFFIX)) else {
            continue;
        };
        if id.starts_with('.') {
            continue;
        }
        out.push(SpoolEntry {
            id: id.to_string(),
            path: entry.path(),
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Reads a spooled event. A damaged file (`Error::Corrupt`) is left where it is by the
/// hook and readers; `verify` names it and `recover` journals its bytes.
pub fn read(entry: &SpoolEntry) -> Result<NewEvent> {
    let bytes = fs::read(&entry.path).ctx(|| format!("reading {}", entry.path.display()))?;
    decode(&bytes).map_err(|e| Error::Corrupt {
        place: DamagePlace::Spool(entry.id.clone()),
        what: format!("spool file {}.spool: {e}", entry.id),
    })
}

fn decode(bytes: &[u8]) -> std::result::Result<NewEvent, String> {
    let body = match bytes.strip_prefix(MAGIC) {
        Some(rest) if rest.len() >= 32 => {
            let (sum, body) = rest.split_at(32);
            if sum != blake3::hash(body).as_bytes() {
                return Err("fails its checksum (the file was damaged)".into());
            }
            body
        }
        Some(_) => return Err("is truncated".into()),
        None => bytes,
    };
    crate::envelope::decode_bounded(body).map_err(|e| format!("does not decode: {e}"))
}

/// Removes a drained spool file (missing is fine: a crash may have removed it already).
pub fn remove(entry: &SpoolEntry) -> Result<()> {
    match fs::remove_file(&entry.path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io {
            context: format!("removing {}", entry.path.display()),
            cause: e,
        }),
    }
}

/// Removes temp files older than `age` left by writers that were killed mid-write.
pub fn sweep_temps(dir: &Path, age: std::time::Duration) {
    let Ok(rd) = fs::read_dir(dir.join(SPOOL_DIR)) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in rd.flatten() {
        let is_tmp = entry
            .file_name()
            .to_str()
            .map(|n| n.ends_with(".tmp"))
            .unwrap_or(false);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .map(|d| d > age)
            .unwrap_or(false);
        if is_tmp && old {
            let _ = fs::remove_file(entry.path());
        }
    }
}
