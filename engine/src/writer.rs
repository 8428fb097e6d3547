//! One way to write a journal with its checkpoint, whatever handle it takes: light (no sled: the
//! hot cache holds every partition the work needs — the common case) or in full. A light attempt
//! that needs a partition the cache lacks is dropped before it commits anything, and the same
//! work runs again on the store opened under the same lock (`write`). The hook, the task
//! commands and the statusline all write this way.

use crate::state::{CacheMiss, Source};
use journal::{Journal, OpenOptions};
use std::path::Path;

/// A journal a writer holds: its checkpoint partitions (`Source`), a batch to fill, a commit.
pub trait Writer: Source {
    /// A batch continuing the head.
    fn begin(&self) -> journal::Tx;
    /// Commits the batch (a light writer's is synced by `Held::finish`).
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()>;
    /// The store, when the journal is open in full (for work only the store can do first:
    /// draining the whole spool, rebuilding a stale checkpoint).
    fn full(&mut self) -> Option<&mut Journal> {
        None
    }
}

impl Writer for Journal {
    fn begin(&self) -> journal::Tx {
        Journal::begin(self)
    }
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()> {
        Journal::commit(self, tx)
    }
    fn full(&mut self) -> Option<&mut Journal> {
        Some(self)
    }
}

impl Writer for journal::Light {
    fn begin(&self) -> journal::Tx {
        journal::Light::begin(self)
    }
    /// Synced by `Held::finish` once the lock is released.
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()> {
        journal::Light::commit_deferred(self, tx)
    }
}

/// The journal as a writer holds it after its work, until its commits are durable.
pub enum Held {
    /// Opened without sled (the hot cache answered).
    Light(journal::Light),
    /// Opened in full.
    Full(Journal),
}

impl Held {
    /// Whether work the writer leaves to a detached drainer is due: the sled store lags the log
    /// by `drain_lag` events, the active store is full, or the hot cache is incomplete.
    pub fn drainer_due(&self, drain_lag: u64) -> bool {
        match self {
            Held::Light(l) => crate::maintenance::due_after_light(l, drain_lag),
            Held::Full(j) => j.needs_seal() || !j.hot_complete(),
        }
    }

    /// Seals a full active store (a writer holding the store; a light one leaves it to the
    /// drainer).
    pub fn seal_if_full(&mut self) -> journal::Result<()> {
        match self {
            Held::Light(_) => Ok(()),
            Held::Full(j) => j.seal_if_full().map(|_| ()),
        }
    }

    /// Makes the commits durable: a light writer releases the lock first (the next writer goes
    /// on while this one waits for the disk), then syncs the log; a full one already synced.
    /// Nothing the work committed may be acknowledged before this returns `Ok`.
    pub fn finish(&mut self) -> journal::Result<()> {
        match self {
            Held::Light(l) => l.finish(),
            Held::Full(_) => Ok(()),
        }
    }
}

/// Why `write` did not finish its work.
#[derive(Debug)]
pub enum WriteError {
    /// The journal could not be opened (busy, missing, damaged, not this user's): nothing ran.
    Open(journal::Error),
    /// The work failed (or the store, opened after a cache miss, did not open).
    Work(anyhow::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Open(e) => write!(f, "{e}"),
            WriteError::Work(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// Opens `dir` for writing and runs `work` on it: light when the hot cache is current and
/// `light_ok` (a caller that knows the cache cannot serve, e.g. a spool backlog a light writer
/// must not drain, says no), in full otherwise. A light attempt that misses the cache
/// (`CacheMiss`) is dropped — the work must not have committed — and `work` runs again on the
/// store, opened under the same lock.
pub fn write<T>(
    dir: &Path,
    opts: &OpenOptions,
    light_ok: bool,
    work: impl FnMut(&mut dyn Writer) -> anyhow::Result<T>,
) -> Result<(Held, T), WriteError> {
    let opened = Journal::open_light(dir, opts).map_err(WriteError::Open)?;
    run(opened, light_ok, work).map_err(WriteError::Work)
}

fn run<T>(
    opened: journal::Opened,
    light_ok: bool,
    mut work: impl FnMut(&mut dyn Writer) -> anyhow::Result<T>,
) -> anyhow::Result<(Held, T)> {
    let mut j = match opened {
        journal::Opened::Light(mut light) => {
            crate::trace::mark("open light");
            let tried = if light_ok {
                work(&mut light)
            } else {
                Err(anyhow::Error::new(CacheMiss))
            };
            match tried {
                Ok(t) => return Ok((Held::Light(light), t)),
                Err(e) if crate::state::is_cache_miss(&e) => {
                    crate::trace::mark("cache miss");
                    light.upgrade()?
                }
                Err(e) => return Err(e),
            }
        }
        journal::Opened::Full(j) => j,
    };
    crate::trace::mark("open");
    let t = work(&mut j)?;
    Ok((Held::Full(j), t))
}

/// A command's change, start to end: `dir` opened for writing (light when the hot cache serves
/// and no spool backlog waits; in full otherwise, the spool drained and a stale checkpoint
/// rebuilt first), `work` run on it (it starts and finishes its `Transaction`), a full store
/// sealed, the commits made durable, and a detached drainer started when one is due. Nothing
/// `work` committed is acknowledged before this returns `Ok`.
pub fn change<T>(
    dir: &Path,
    drain_lag: u64,
    mut work: impl FnMut(&mut dyn Writer) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    crate::trust::refuse_foreign(dir)?;
    let opts = crate::state::cli_open_options(dir, true);
    // A spool backlog is the store's to drain first: a light writer never drains it.
    let backlog = !journal::spool::list(dir)?.is_empty();
    let (mut held, outcome) = write(dir, &opts, !backlog, |w| {
        if let Some(j) = w.full() {
            crate::state::drain_all(j)?;
            if crate::state::Loaded::new(&*j)?.stale.is_some() {
                crate::state::rebuild_checkpoint(j)?;
            }
        }
        work(w)
    })
    .map_err(|e| match e {
        WriteError::Open(e) => crate::state::open_error(dir, e),
        WriteError::Work(e) => e,
    })?;
    held.seal_if_full()?;
    let due = held.drainer_due(drain_lag);
    held.finish()?;
    if due {
        crate::maintenance::after_hook(dir, opts.segment_events);
    }
    Ok(outcome)
}
