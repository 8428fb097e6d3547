//! The engine: a hookjournal journal *with* its checkpoint — what the commands share between
//! the `journal` crate (bytes, order, hashes, durability) and the `projections` crate (pure
//! folds, the host table, the policy), as jj's `jj_lib` is to its CLI.
//!
//! It owns the write path (partitions loaded and written back, the spool drained, a stale
//! checkpoint rebuilt, the light writer's cache misses), the reads of outside files the hook
//! records as events (transcripts, session files, git), the journal's settings and their trust,
//! and the mirrors. It knows nothing of terminals: errors are values, output is data.

#![warn(missing_docs)]

pub mod codex_trust;
pub mod discover;
pub mod doctor;
pub mod hook;
pub mod host_db;
pub mod import;
pub mod ingest;
pub mod loop_tasks;
pub mod maintenance;
pub mod mirror;
pub mod registration;
pub mod registry;
pub mod search;
pub mod settings;
pub mod state;
pub mod trace;
pub mod transaction;
pub mod trust;
pub mod writer;

pub use transaction::Transaction;

/// The journal handle a command holds (opened by `state`: `open_read`, `open_and_drain`), and
/// the errors a caller branches on. Its transactions are the engine's (`Transaction`).
pub use journal::{Error, Journal, OpenOptions};

/// The log's data as the commands read and render it: envelopes, their order and hashes, one
/// consistent snapshot of the log, and what `verify` reports. Reading only: nothing here
/// writes the journal.
pub mod log {
    pub use journal::{
        hex, unhex, verify, verify_visiting, Damage, DamagePlace, Envelope, Hash, NewEvent,
        ReadSnapshot, Result, Seq, Status, Truncation, VerifyReport, ZERO_HASH,
    };
}

/// The file system through the journal's one door (`journal::door`: directory handles, bounded
/// reads, no link followed) and its file helpers and modes, for the commands that write files
/// of their own (install, the statusline's view, ship's cursors).
pub mod fs {
    pub use journal::{door, files, write_atomic, Durability, DIR_MODE, FILE_MODE};
}

/// Where a journal came from (a foreign one records nothing until `trust` adopts it), and the
/// incidents a user must learn of.
pub use journal::{incidents, origin};

/// Finds the one session `want` names: its id, or a prefix of exactly one id.
pub fn resolve_session<'a>(
    ids: impl Iterator<Item = &'a String>,
    want: &str,
) -> anyhow::Result<String> {
    let matches: Vec<&String> = ids
        .filter(|id| id.as_str() == want || id.starts_with(want))
        .collect();
    if let Some(exact) = matches.iter().find(|id| id.as_str() == want) {
        return Ok((*exact).clone());
    }
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => anyhow::bail!("no session {want:?} in this journal (see `hookjournal sessions`)"),
        many => anyhow::bail!(
            "{want:?} matches {} sessions; give more characters",
            many.len()
        ),
    }
}
