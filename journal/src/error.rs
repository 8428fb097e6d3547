use crate::damage::DamagePlace;
use crate::envelope::{Envelope, Hash, Seq};
use std::path::PathBuf;

/// The journal's `Result`: `Error` unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, typed for the cases a caller branches on (`Busy` means: spool instead).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process held the journal's lock (or a reader asked hooks to step aside) for the
    /// whole wait.
    #[error("journal is busy (another process holds its lock)")]
    Busy,
    /// The directory holds no journal (and the caller did not ask to create one).
    #[error("no journal at {0}")]
    NotFound(PathBuf),
    /// The journal can be read but not written by this user (or its file system is read-only).
    #[error("journal {0} is read-only here")]
    ReadOnly(PathBuf),
    /// Read-only here, and the events not yet sealed are only in the active store, which only
    /// its owner can read (a journal written before the write-ahead log).
    #[error("journal {0} is read-only here and its active store can only be read by its owner")]
    OwnerOnly(PathBuf),
    /// A file-system call failed. `cause` is not a `source`: it is part of this error's one
    /// line, and an error chain printed in full would say it twice.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done, e.g. `reading <path>`.
        context: String,
        /// The operating system's error.
        cause: std::io::Error,
    },
    /// The embedded store failed.
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    /// Part of the journal is damaged: `place` says which, `what` says how (one line, naming the
    /// file).
    #[error("corrupt journal: {what}")]
    Corrupt {
        /// The damaged part.
        place: DamagePlace,
        /// The damage, as said to a person.
        what: String,
    },
    /// An already sealed event (an import) does not continue the journal's chain.
    #[error("{0}")]
    BrokenChain(ChainBreak),
    /// A transaction was begun before another one was committed: its seqs are taken.
    #[error("transaction began before another commit")]
    StaleTx,
    /// A reader's callback stopped the read; the callback keeps its own reason.
    #[error("stopped by the caller")]
    Stopped,
    /// Something in the journal's directory is not what the journal makes: a symbolic link, a
    /// special file, a directory owned by another user. The journal never follows or uses it.
    #[error("refusing {}: {what}", path.display())]
    Unsafe {
        /// The entry.
        path: PathBuf,
        /// What it is, as said to a person.
        what: String,
    },
}

impl Error {
    /// Damage to `place`, said as `what`.
    pub(crate) fn corrupt(place: DamagePlace, what: impl Into<String>) -> Error {
        Error::Corrupt {
            place,
            what: what.into(),
        }
    }
}

/// How an event fails to continue a hash chain (checked in this order).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    /// The event is not the next seq: one was deleted, reordered or duplicated.
    #[error("expected seq {expected}, got {found}")]
    Seq {
        /// The seq the chain continues with.
        expected: Seq,
        /// The event's seq.
        found: Seq,
    },
    /// The event's `prev` is not the hash of the event before it.
    #[error("seq {seq}: prev hash does not continue the chain")]
    Prev {
        /// The event's seq.
        seq: Seq,
        /// The `prev` hash the event holds.
        prev: Hash,
    },
    /// The event's content does not hash to its `hash`: it was altered.
    #[error("seq {seq}: hash does not match its content")]
    Altered {
        /// The event's seq.
        seq: Seq,
    },
}

impl ChainBreak {
    /// Checks that `e` continues a chain whose next seq is `expected` after an event hashed
    /// `prev`.
    pub(crate) fn check(e: &Envelope, expected: Seq, prev: &Hash) -> Result<(), ChainBreak> {
        if e.seq != expected {
            Err(ChainBreak::Seq {
                expected,
                found: e.seq,
            })
        } else if e.prev != *prev {
            Err(ChainBreak::Prev {
                seq: e.seq,
                prev: e.prev,
            })
        } else if e.compute_hash() != e.hash {
            Err(ChainBreak::Altered { seq: e.seq })
        } else {
            Ok(())
        }
    }
}

pub(crate) trait IoContext<T> {
    fn ctx(self, f: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, f: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Io {
            context: f(),
            cause: source,
        })
    }
}
