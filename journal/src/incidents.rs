//! The journal's incident log, `incidents`: what a user must learn of after the fact.
//!
//! A hook always exits 0 (its host's contract), so when it could not make an event durable —
//! the final sync failed, or spooling failed on a full disk — the only trace would be a stderr
//! line the host may not show. Such an event *may be missing*: it is written here with the time
//! and the reason, and the next hook says so on stderr (once), as do `status` and `doctor`.
//! Repairs an opener made on its own (a log completed from its mirror, an unfinished batch cut)
//! are written here too, as *repaired*: nothing was lost, but the truth is kept.
//!
//! One line per incident: `<unix ms> <may-be-missing|repaired> <text>`. `incidents.unread`
//! holds the byte offset of the first line no hook has said yet.

use crate::files;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

const FILE: &str = "incidents";
const UNREAD: &str = "incidents.unread";
/// Past this size the log starts over (the previous one is kept as `incidents.old`).
const MAX_BYTES: u64 = 1 << 20;

/// How bad an incident is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// An event may be missing: it was not made durable before its hook exited.
    MayBeMissing,
    /// Something was repaired from another copy; nothing acknowledged was lost.
    Repaired,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::MayBeMissing => "may-be-missing",
            Severity::Repaired => "repaired",
        }
    }
}

/// One line of the incident log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incident {
    /// When it was written (milliseconds since the Unix epoch).
    pub at_ms: i64,
    /// How bad it is.
    pub severity: Severity,
    /// What happened, one line.
    pub text: String,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Notes a repair (best effort: the repair itself succeeded either way).
pub fn note(dir: &Path, text: &str) {
    let _ = write(dir, Severity::Repaired, text);
}

/// Notes that an event may be missing, so the next hook, `status` and `doctor` say so.
/// Best effort: on a full disk this may fail too, and the caller's stderr line is all there is.
pub fn event_may_be_missing(dir: &Path, text: &str) {
    let _ = write(dir, Severity::MayBeMissing, text);
}

fn write(dir: &Path, severity: Severity, text: &str) -> std::io::Result<()> {
    if files::owner(dir) != Some(files::euid()) {
        return Err(std::io::Error::other("not this user's journal"));
    }
    let path = dir.join(FILE);
    if crate::door::status(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
        crate::door::by_path::rename(&path, &dir.join("incidents.old"))?;
    }
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let line = format!("{} {} {text}\n", now_ms(), severity.word());
    let mut f = files::open_in_place(&path, true)?;
    let offset = f.seek(SeekFrom::End(0))?;
    f.write_all(line.as_bytes())?;
    f.sync_data()?;
    if severity == Severity::MayBeMissing && crate::door::status(dir.join(UNREAD)).is_err() {
        files::write_atomic(
            dir,
            UNREAD,
            offset.to_string().as_bytes(),
            files::Durability::Durable,
        )
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    Ok(())
}

/// Every incident in the log, oldest first (lines that do not parse are skipped).
pub fn read(dir: &Path) -> Vec<Incident> {
    read_from(dir, 0)
}

fn read_from(dir: &Path, offset: u64) -> Vec<Incident> {
    let Ok(mut f) = files::open_read(&dir.join(FILE)) else {
        return Vec::new();
    };
    let mut text = String::new();
    if f.seek(SeekFrom::Start(offset)).is_err()
        || f.take(MAX_BYTES * 2).read_to_string(&mut text).is_err()
    {
        return Vec::new();
    }
    text.lines().filter_map(parse).collect()
}

fn parse(line: &str) -> Option<Incident> {
    let (at, rest) = line.split_once(' ')?;
    let (word, text) = rest.split_once(' ')?;
    let severity = match word {
        "may-be-missing" => Severity::MayBeMissing,
        "repaired" => Severity::Repaired,
        _ => return None,
    };
    Some(Incident {
        at_ms: at.parse().ok()?,
        severity,
        text: text.to_string(),
    })
}

/// The incidents of events that may be missing that no hook has said yet, marked said. One
/// `stat` when there are none (the hook's path).
pub fn take_unread(dir: &Path) -> Vec<Incident> {
    let marker = dir.join(UNREAD);
    if crate::door::status(&marker).is_err() {
        return Vec::new();
    }
    let offset = files::open_read(&marker)
        .ok()
        .and_then(|mut f| {
            let mut s = String::new();
            Read::by_ref(&mut f).take(32).read_to_string(&mut s).ok()?;
            s.trim().parse::<u64>().ok()
        })
        .unwrap_or(0);
    let _ = crate::door::unlink(&marker);
    read_from(dir, offset)
        .into_iter()
        .filter(|i| i.severity == Severity::MayBeMissing)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_that_may_be_missing_is_said_once_and_kept() {
        let d = tempfile::tempdir().unwrap();
        assert!(take_unread(d.path()).is_empty());
        note(d.path(), "the mirror was rewritten from the log");
        assert!(take_unread(d.path()).is_empty());
        event_may_be_missing(d.path(), "syncing the log failed:\nENOSPC");
        let unread = take_unread(d.path());
        assert_eq!(unread.len(), 1);
        assert_eq!(unread[0].text, "syncing the log failed: ENOSPC");
        assert!(take_unread(d.path()).is_empty());
        let all = read(d.path());
        assert_eq!(
            all.iter().map(|i| i.severity).collect::<Vec<_>>(),
            [Severity::Repaired, Severity::MayBeMissing]
        );
    }
}
