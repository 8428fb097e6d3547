//! Where damage is and what it is, as `verify` and `recover` name it (and errors carry it).

use crate::envelope::Seq;
use std::fmt;
use std::path::Path;

/// A path's last component, as text.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Which part of the journal is damaged. Its `Display` is the place `verify` names (`verify
/// --json`'s `place`), e.g. `wal/00000000000000000031.wal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DamagePlace {
    /// A sealed segment, by file name: the only copy of its events.
    Segment(String),
    /// The active sled store; named when it is the store itself (not an event in it) that does
    /// not open or read.
    ActiveStore(Option<String>),
    /// A write-ahead log, by file name (under `wal/`).
    Wal(String),
    /// The `CURRENT` file, which names the active store.
    Current,
    /// The `ACTIVE_EMPTY` marker a seal leaves.
    EmptyMarker,
    /// A spooled event's file, by id (under `spool/`).
    Spool(String),
    /// A checkpoint archive, by file name (under `state/`).
    Archive(String),
    /// The checkpoint: stale, or different from a full replay.
    Checkpoint,
    /// Something in the journal's directory the journal never makes (a link, a special file,
    /// another user's file), by its path under the journal.
    Stranger(String),
}

impl DamagePlace {
    pub(crate) fn segment(path: &Path) -> DamagePlace {
        DamagePlace::Segment(file_name(path))
    }
    pub(crate) fn wal(path: &Path) -> DamagePlace {
        DamagePlace::Wal(file_name(path))
    }
    pub(crate) fn archive(path: &Path) -> DamagePlace {
        DamagePlace::Archive(file_name(path))
    }
}

impl fmt::Display for DamagePlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DamagePlace::Segment(name) => f.write_str(name),
            DamagePlace::ActiveStore(None) => f.write_str("active store"),
            DamagePlace::ActiveStore(Some(name)) => write!(f, "active store {name}"),
            DamagePlace::Wal(name) => write!(f, "wal/{name}"),
            DamagePlace::Current => f.write_str("CURRENT"),
            DamagePlace::EmptyMarker => f.write_str("ACTIVE_EMPTY"),
            DamagePlace::Spool(id) => write!(f, "spool/{id}.spool"),
            DamagePlace::Archive(name) => write!(f, "state/{name}"),
            DamagePlace::Checkpoint => f.write_str("checkpoint"),
            DamagePlace::Stranger(path) => f.write_str(path),
        }
    }
}

/// One problem `verify` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The first seq affected, when known.
    pub seq: Option<Seq>,
    /// Where it is.
    pub place: DamagePlace,
    /// What is wrong, as said to a person.
    pub what: String,
}
