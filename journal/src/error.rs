use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors a caller may need to branch on (`Busy` means: spool instead).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("journal is busy (another process holds its lock)")]
    Busy,
    #[error("no journal at {0}")]
    NotFound(PathBuf),
    /// The journal can be read but not written by this user (or its file system is read-only).
    #[error("journal {0} is read-only here")]
    ReadOnly(PathBuf),
    /// `cause` is not a `source`: it is part of this error's one line, and an error chain
    /// printed in full would say it twice.
    #[error("{context}: {cause}")]
    Io {
        context: String,
        cause: std::io::Error,
    },
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    #[error("corrupt journal: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Invalid(String),
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
