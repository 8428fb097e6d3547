//! The user's registry of journals: one small JSON file per journal under
//! `$XDG_STATE_HOME/hookjournal/journals/` (else `$HOME/.local/state/…`), so the views that read
//! every project (`--all-projects`) know where the journals are. The directory is the user's own
//! (0700); a file is replaced atomically and read bounded, a link or a non-regular file is
//! refused. A registered path that is no longer a journal is dropped, its file removed.

use anyhow::{Context, Result};
use journal::door::Dir;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How often an answering hook rewrites its journal's entry (else only at SessionEnd).
pub const REFRESH_US: i64 = 24 * 3600 * 1_000_000;

/// The most an entry's file may hold (a path, a name, an id and three times).
const ENTRY_CAP: u64 = 64 << 10;

/// One registered journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The journal's directory, resolved (no link, absolute).
    pub path: PathBuf,
    /// The project's name: the directory the journal is in (`.hookjournal`'s parent).
    pub project: String,
    /// The journal's id (`DIR/journal-id`), when `ship` gave it one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_id: Option<String>,
    /// When the first event this registry saw was recorded (µs since the epoch).
    #[serde(default)]
    pub first_event_us: Option<i64>,
    /// When the last event this registry saw was recorded (µs since the epoch).
    #[serde(default)]
    pub last_event_us: Option<i64>,
    /// When this entry was written (µs since the epoch).
    pub written_at_us: i64,
}

/// Where the registry lives for this user, from the environment (`None` without a home).
pub fn dir() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let state = std::env::var_os("XDG_STATE_HOME")
        .and_then(abs)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(abs)
                .map(|h| h.join(".local/state"))
        })?;
    Some(state.join("hookjournal/journals"))
}

/// The entry's file name for the journal at `journal`: a hash of its path made absolute (no
/// file system call, so the hook's check is one `lstat`).
pub fn file_name(journal: &Path) -> String {
    let abs = std::path::absolute(journal).unwrap_or_else(|_| journal.to_path_buf());
    let h = blake3::hash(abs.as_os_str().as_encoded_bytes());
    format!("{}.json", &h.to_hex()[..32])
}

/// The project a journal directory keeps: `.hookjournal`'s parent's name, or the journal's own.
pub fn project_name(journal: &Path) -> String {
    let named = match journal.file_name() {
        Some(n) if n == ".hookjournal" => journal.parent().and_then(Path::file_name),
        n => n,
    };
    named.map_or_else(
        || journal.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Whether the journal's entry is due a rewrite: missing, or last written more than a day ago
/// (one `lstat`; no registry, nothing is due).
pub fn due(journal: &Path) -> bool {
    let Some(reg) = dir() else {
        return false;
    };
    journal::door::age(&reg.join(file_name(journal)))
        .is_none_or(|age| age.as_micros() > REFRESH_US as u128)
}

/// Writes (or refreshes) the entry of the journal at `journal`: its first event time is kept
/// from the entry already there, else `first_us`; its last is `last_us` when given.
pub fn record(
    journal: &Path,
    first_us: Option<i64>,
    last_us: Option<i64>,
    now_us: i64,
) -> Result<()> {
    let reg_path = dir().context("no home directory: the registry has nowhere to live")?;
    let reg = open_or_create(&reg_path)?;
    let name = file_name(journal);
    let old = read_entry(&reg, Path::new(&name)).ok().flatten();
    let path = journal::door::by_path::canonical(journal)
        .with_context(|| format!("resolving {}", journal.display()))?;
    let journal_id = journal::door::by_path::read_small(&journal.join("journal-id"), 256)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.len() <= 64);
    let entry = Entry {
        project: project_name(&path),
        path,
        journal_id,
        first_event_us: old
            .as_ref()
            .and_then(|o| o.first_event_us)
            .or(first_us)
            .or(last_us),
        last_event_us: last_us.or(old.as_ref().and_then(|o| o.last_event_us)),
        written_at_us: now_us,
    };
    let bytes = serde_json::to_vec_pretty(&entry)?;
    reg.replace(Path::new(&name), 0o600, &bytes)
        .with_context(|| format!("writing {}", reg_path.join(&name).display()))
}

/// The registry's directory opened (created 0700 when missing, its parents too).
fn open_or_create(reg: &Path) -> Result<Dir> {
    let state = reg
        .parent()
        .and_then(Path::parent)
        .expect("dir() ends in hookjournal/journals");
    // `$XDG_STATE_HOME` itself, and its parents, when missing: 0700 as the spec asks.
    let missing: Vec<&Path> = state.ancestors().take_while(|p| !p.is_dir()).collect();
    for d in missing.into_iter().rev() {
        match journal::door::by_path::make_dir(d, 0o700) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(e).with_context(|| format!("creating {}", d.display()));
            }
            _ => {}
        }
    }
    let base = Dir::open(state).with_context(|| format!("opening {}", state.display()))?;
    base.create_dir_all(Path::new("hookjournal/journals"), 0o700)
        .with_context(|| format!("creating {}", reg.display()))
}

/// One entry's file read (bounded, a regular file reached through no link); `None` if absent.
fn read_entry(reg: &Dir, name: &Path) -> Result<Option<Entry>> {
    let Some(bytes) = reg.read_if_present(name, ENTRY_CAP)? else {
        return Ok(None);
    };
    Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a registry entry",
            reg.path().join(name).display()
        )
    })?))
}

/// The registry read: the journals still there, and what was dropped (each one line for the
/// user; their files removed). A file that is not an entry is left alone and named.
#[derive(Debug, Default)]
pub struct Listing {
    /// The registered journals, by project name then path (one per resolved path).
    pub journals: Vec<Entry>,
    /// Journals moved or deleted since they were registered (their entries are removed).
    pub dropped: Vec<Entry>,
    /// Files of the registry that could not be read as an entry, and why.
    pub unreadable: Vec<String>,
}

/// Every registered journal; one whose path is gone or no longer a journal is dropped and its
/// entry removed. No registry yet is an empty listing.
pub fn list() -> Listing {
    let mut out = Listing::default();
    let Some(reg_path) = dir() else {
        return out;
    };
    let Ok(reg) = Dir::open_nofollow(&reg_path) else {
        return out;
    };
    let Ok(mut names) = reg.entries() else {
        return out;
    };
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, st) in names {
        let n = Path::new(&name);
        if n.extension().is_none_or(|e| e != "json") {
            continue;
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            out.unreadable.push(format!(
                "{}: not a regular file, ignored",
                reg_path.join(n).display()
            ));
            continue;
        }
        match read_entry(&reg, n) {
            Ok(Some(e)) if crate::state::is_journal(&e.path) => {
                if !out.journals.iter().any(|j| j.path == e.path) {
                    out.journals.push(e);
                }
            }
            Ok(Some(e)) => {
                let _ = reg.remove_file(n);
                out.dropped.push(e);
            }
            Ok(None) => {}
            Err(e) => out.unreadable.push(format!("{e:#}")),
        }
    }
    out.journals
        .sort_by(|a, b| (&a.project, &a.path).cmp(&(&b.project, &b.path)));
    out
}

/// How many journals are registered (entries still pointing at a journal; nothing removed).
pub fn count() -> usize {
    let Some(reg_path) = dir() else {
        return 0;
    };
    let Ok(reg) = Dir::open_nofollow(&reg_path) else {
        return 0;
    };
    let mut paths: Vec<PathBuf> = reg
        .entries()
        .unwrap_or_default()
        .into_iter()
        .filter(|(n, st)| {
            Path::new(n).extension().is_some_and(|e| e == "json")
                && st.st_mode & libc::S_IFMT == libc::S_IFREG
        })
        .filter_map(|(n, _)| read_entry(&reg, Path::new(&n)).ok().flatten())
        .filter(|e| crate::state::is_journal(&e.path))
        .map(|e| e.path)
        .collect();
    paths.sort();
    paths.dedup();
    paths.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_is_the_directory_the_journal_is_in() {
        assert_eq!(project_name(Path::new("/src/api/.hookjournal")), "api");
        assert_eq!(project_name(Path::new("/var/journals/web")), "web");
    }

    #[test]
    fn file_name_is_stable_and_differs_by_path() {
        let a = file_name(Path::new("/src/api/.hookjournal"));
        assert_eq!(a, file_name(Path::new("/src/api/.hookjournal")));
        assert_ne!(a, file_name(Path::new("/src/web/.hookjournal")));
        assert_eq!(a.len(), 37);
    }
}
