//! Moving projection state between the journal and memory: the hook loads only the partitions an
//! event touches and writes back only those that changed; the CLI folds the whole log.

use anyhow::{Context, Result};
use journal::{spool, Envelope, Journal, Kind, NewEvent, ReadSnapshot};
use projections::fold::{self, Full, Rewinds, State};
use projections::session::SessionState;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A partial state plus the bytes each partition had when loaded.
pub struct Loaded {
    pub state: State,
    original: BTreeMap<Vec<u8>, Vec<u8>>,
    pub warnings: Vec<String>,
}

impl Loaded {
    pub fn new(j: &Journal) -> Result<Loaded> {
        let mut l = Loaded {
            state: State::default(),
            original: BTreeMap::new(),
            warnings: Vec::new(),
        };
        if let Some(b) = j.get_state(fold::GLOBAL_KEY)? {
            match fold::decode(&b) {
                Some(g) => l.state.global = g,
                None => l.warnings.push(
                    "checkpoint partition `global` does not decode; run `hookjournal verify`"
                        .into(),
                ),
            }
            l.original.insert(fold::GLOBAL_KEY.to_vec(), b);
        }
        if let Some(b) = j.get_state(fold::TASKS_KEY)? {
            match fold::decode(&b) {
                Some(t) => l.state.tasks = t,
                None => l.warnings.push(
                    "checkpoint partition `tasks` does not decode; run `hookjournal verify`".into(),
                ),
            }
            // A journal-wide partition that went cold is written back, so it is hot again.
            if j.is_hot(fold::TASKS_KEY)? {
                l.original.insert(fold::TASKS_KEY.to_vec(), b);
            }
        }
        Ok(l)
    }

    /// Loads a session's partition if it is not loaded yet.
    pub fn session(&mut self, j: &Journal, id: &str) -> Result<()> {
        if self.state.sessions.contains_key(id) {
            return Ok(());
        }
        let key = fold::session_key(id);
        if let Some(b) = j.get_state(&key)? {
            match fold::decode::<SessionState>(&b) {
                Some(s) => {
                    self.state.sessions.insert(id.to_string(), s);
                }
                None => self.warnings.push(format!(
                    "checkpoint of session {id} does not decode; run `hookjournal verify`"
                )),
            }
            self.original.insert(key, b);
        }
        Ok(())
    }

    /// Loads whatever partitions `env` touches.
    pub fn for_event(&mut self, j: &Journal, env: &Envelope) -> Result<()> {
        for s in State::sessions_touched(env) {
            self.session(j, &s)?;
        }
        Ok(())
    }

    /// Queues every changed partition into `tx`.
    pub fn write_back(&self, tx: &mut journal::Tx) {
        let mut put = |key: Vec<u8>, bytes: Vec<u8>| {
            if self.original.get(&key) != Some(&bytes) {
                tx.put_state(&key, bytes);
            }
        };
        put(fold::GLOBAL_KEY.to_vec(), self.state.encode_global());
        put(fold::TASKS_KEY.to_vec(), self.state.encode_tasks());
        for (id, s) in &self.state.sessions {
            put(fold::session_key(id), State::encode_session(s));
        }
    }
}

/// The checkpoint of the journal in `dir`, read under a short lock (the spool drained first).
pub fn read_checkpoint(dir: &Path) -> Result<State> {
    let j = open_read(dir)?;
    checkpoint(&j)
}

/// The whole checkpoint (every partition), as the CLI reads it.
pub fn checkpoint(j: &Journal) -> Result<State> {
    let parts = j.scan_state(b"")?;
    State::from_partitions(&parts)
        .map_err(|e| anyhow::anyhow!("checkpoint: {e}; run `hookjournal verify`"))
}

/// Folds every event of a snapshot. With `exact_rewinds`, a first pass collects the rewinds
/// (verify's way); otherwise the checkpoint's list of rewinds is trusted.
pub fn full_replay(
    snap: &ReadSnapshot,
    rewinds: Rewinds,
    mut progress: impl FnMut(u64),
) -> Result<Full> {
    let mut full = Full::with_rewinds(rewinds);
    let mut n = 0u64;
    snap.for_each(|env| {
        full.apply(&env);
        n += 1;
        if n.is_multiple_of(65_536) {
            progress(n);
        }
        Ok(())
    })?;
    progress(n);
    Ok(full)
}

pub fn collect_rewinds(snap: &ReadSnapshot) -> Result<Rewinds> {
    let mut r = Rewinds::default();
    snap.for_each(|env| {
        fold::collect_rewind(&mut r, &env);
        Ok(())
    })?;
    Ok(r)
}

/// What most read commands need: a snapshot taken under a short lock, and the checkpoint.
pub struct View {
    pub snap: ReadSnapshot,
    pub state: State,
}

pub fn open_view(dir: &Path) -> Result<View> {
    let j = open_read(dir)?;
    let snap = j.read_snapshot().context("reading the journal")?;
    let state = checkpoint(&j)?;
    Ok(View { snap, state })
}

/// Like `open_view` for commands that fold the whole log anyway (cost, notifications): only the
/// small global partition (for the rewinds) is read from the checkpoint.
pub fn open_log(dir: &Path, need_rewinds: bool) -> Result<View> {
    if !need_rewinds {
        // A quiescent journal (everything sealed, nothing spooled) is read without sled.
        if let Some(snap) = ReadSnapshot::take_sealed(dir, Duration::from_secs(10))? {
            return Ok(View {
                snap,
                state: State::default(),
            });
        }
    }
    let j = open_read(dir)?;
    let snap = j.read_snapshot().context("reading the journal")?;
    let mut state = State::default();
    if let Some(b) = j.get_state(fold::GLOBAL_KEY)? {
        state.global = fold::decode(&b).ok_or_else(|| {
            anyhow::anyhow!(
                "checkpoint partition `global` does not decode; run `hookjournal verify`"
            )
        })?;
    }
    Ok(View { snap, state })
}

/// Ingests whatever waits in the spool (a reader holds the lock anyway, and should see it all).
pub fn drain_all(j: &mut Journal) -> Result<()> {
    loop {
        let mut loaded = Loaded::new(j)?;
        let mut tx = j.begin();
        let Drained { done, .. } = drain(j, &mut loaded, &mut tx, 4096)?;
        if done.is_empty() {
            return Ok(());
        }
        loaded.write_back(&mut tx);
        j.commit(tx)?;
        for entry in &done {
            let _ = spool::remove(entry);
        }
        j.seal_if_full()?;
    }
}

/// Opens an existing journal for a CLI command (waits up to 10 s for busy hooks). A directory
/// holding only spooled events (the fast path never opened the store) counts as a journal.
pub fn open_read(dir: &Path) -> Result<Journal> {
    let create = dir.join(spool::SPOOL_DIR).is_dir();
    open_and_drain(dir, create)
}

/// Opens (with `create`, creates) a journal for a CLI command and drains its spool first.
pub fn open_and_drain(dir: &Path, create: bool) -> Result<Journal> {
    let mut j = Journal::open(
        dir,
        &journal::OpenOptions {
            wait: Duration::from_secs(10),
            create,
            segment_events: crate::settings::Settings::load(dir).0.hook.segment_events,
            priority: true,
        },
    )
    .map_err(|e| match e {
        journal::Error::NotFound(p) => anyhow::anyhow!(
            "no journal at {} (run `hookjournal install`, or pass --journal DIR)",
            p.display()
        ),
        journal::Error::Busy => anyhow::anyhow!(
            "journal {} is busy (another process held its lock for 10 s)",
            dir.display()
        ),
        other => anyhow::anyhow!("opening journal {}: {other}", dir.display()),
    })?;
    drain_all(&mut j)?;
    Ok(j)
}

impl View {
    /// The full fold (cost, notifications), using the checkpoint's rewinds.
    pub fn full(&self, progress: impl FnMut(u64)) -> Result<Full> {
        full_replay(
            &self.snap,
            Rewinds::from_list(&self.state.global.rewinds),
            progress,
        )
    }
}

/// Ingests spooled events in arrival order into `tx`. Returns the files to remove after commit.
pub fn drain(
    j: &Journal,
    loaded: &mut Loaded,
    tx: &mut journal::Tx,
    max: usize,
) -> anyhow::Result<Drained> {
    let entries = spool::list(j.dir())?;
    if entries.is_empty() {
        return Ok(Drained {
            done: Vec::new(),
            more: false,
        });
    }
    let more = entries.len() > max;
    spool::sweep_temps(j.dir(), Duration::from_secs(600));
    let mut done = Vec::new();
    for entry in entries.into_iter().take(max) {
        if j.was_drained(&entry.id)? {
            let _ = spool::remove(&entry);
            continue;
        }
        let ev = match spool::read(&entry) {
            Ok(ev) => ev,
            Err(e) => {
                // A spool file that does not decode is still journaled, as bytes.
                let bytes = std::fs::read(&entry.path).unwrap_or_default();
                NewEvent {
                    recorded_at_us: chrono::Utc::now().timestamp_micros(),
                    host: "unknown".into(),
                    kind: Kind::Malformed {
                        reason: format!("unreadable spool file: {e}"),
                    },
                    session_id: None,
                    agent_id: None,
                    payload: bytes,
                    truncated: None,
                    spooled: true,
                }
            }
        };
        tx.push(ev);
        let env = tx.events().last().expect("just pushed").clone();
        loaded.for_event(j, &env)?;
        loaded.state.apply(&env);
        tx.drained(&entry.id);
        done.push(entry);
    }
    Ok(Drained { done, more })
}

/// What a drain took: the files to remove after the commit, and whether more are waiting.
pub struct Drained {
    pub done: Vec<spool::SpoolEntry>,
    pub more: bool,
}
