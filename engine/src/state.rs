//! Moving projection state between the journal and memory: the hook loads only the partitions an
//! event touches and writes back only those that changed; the CLI folds the whole log.

use anyhow::{Context, Result};
use journal::hot::Lookup;
use journal::{spool, Envelope, Journal, Light, ReadSnapshot, Seq};
use projections::config::PolicyConfig;
use projections::event::HookEvent;
use projections::fold::{self, Full, Partition, Rewinds, State};
use projections::replay::{self, Log};
use projections::{Kind, KindOf};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Where a hook's partitions come from: the journal opened in full (sled, its archives), or the
/// hot cache of a journal opened without sled (`journal::Light`).
pub trait Source {
    /// The journal's directory.
    fn dir(&self) -> &Path;
    /// Partition `key`: `Err(CacheMiss)` when a light journal's cache does not know it.
    fn get_partition(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Whether the partition stays in the active store at the next seal (sled only).
    fn is_hot(&self, key: &[u8]) -> Result<bool>;
    /// Whether a spool file was already ingested (its removal may not have happened).
    fn was_drained(&self, spool_id: &str) -> Result<bool>;
    /// Events in the log the checkpoint has not folded yet (sled only).
    fn unfolded(&self) -> Result<Vec<Envelope>>;
    /// Whether the partitions a commit only loaded should go to the hot cache too.
    fn fills_cache(&self) -> bool;
}

/// A light journal's cache did not hold a partition: the caller opens sled and starts over.
#[derive(Debug)]
pub struct CacheMiss;

impl std::fmt::Display for CacheMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a checkpoint partition is not in the hot cache")
    }
}

impl std::error::Error for CacheMiss {}

impl Source for Journal {
    fn dir(&self) -> &Path {
        Journal::dir(self)
    }
    fn get_partition(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_state(key)?)
    }
    fn is_hot(&self, key: &[u8]) -> Result<bool> {
        Ok(Journal::is_hot(self, key)?)
    }
    fn was_drained(&self, spool_id: &str) -> Result<bool> {
        Ok(Journal::was_drained(self, spool_id)?)
    }
    fn unfolded(&self) -> Result<Vec<Envelope>> {
        Ok(Journal::unfolded(self)?)
    }
    fn fills_cache(&self) -> bool {
        true
    }
}

impl Source for Light {
    fn dir(&self) -> &Path {
        Light::dir(self)
    }
    fn get_partition(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.get_state(key) {
            Lookup::Known(v) => Ok(v),
            Lookup::Miss => Err(anyhow::Error::new(CacheMiss)),
        }
    }
    fn is_hot(&self, _key: &[u8]) -> Result<bool> {
        Ok(true)
    }
    fn was_drained(&self, spool_id: &str) -> Result<bool> {
        Ok(self.drained().iter().any(|d| d == spool_id))
    }
    fn unfolded(&self) -> Result<Vec<Envelope>> {
        Ok(Vec::new())
    }
    fn fills_cache(&self) -> bool {
        false
    }
}

/// Whether an error is a light journal's cache miss.
pub fn is_cache_miss(e: &anyhow::Error) -> bool {
    e.downcast_ref::<CacheMiss>().is_some()
}

/// A partial state plus the bytes each partition had when loaded.
///
/// The checkpoint is derived state: when it is marked stale, or a partition or archive it needs
/// cannot be read, the journal is marked stale and `stale` says why. Then events are still
/// committed, but no partition is written back and nothing should be answered from `state`,
/// until a reader or `recover` rebuilds the checkpoint from the log.
pub struct Loaded {
    /// The partitions loaded so far, folded forward.
    pub state: State,
    original: BTreeMap<Vec<u8>, Vec<u8>>,
    /// What went wrong reading partitions, one line each (said on stderr by the caller).
    pub warnings: Vec<String>,
    /// Why the checkpoint cannot be trusted, when it cannot.
    pub stale: Option<String>,
    fills_cache: bool,
    /// The journal-wide open tasks are in `state`: only then is their partition written back.
    tasks_loaded: bool,
    /// The finished journal-wide tasks are in `state` (their partition was loaded, or the
    /// `tasks` partition still held them, as before the split): only then is it written back.
    done_loaded: bool,
}

impl Loaded {
    /// The global record and the journal-wide tasks (what every writer but the hook needs).
    pub fn new(j: &dyn Source) -> Result<Loaded> {
        let mut l = Loaded::lean(j)?;
        l.tasks(j)?;
        Ok(l)
    }

    /// The global record alone: the journal-wide tasks are loaded when an event folds into
    /// them (`fold::partitions_for`) or the answer reads them (`Loaded::tasks`). The hook's
    /// way: most tool calls never look at the task store.
    pub fn lean(j: &dyn Source) -> Result<Loaded> {
        let mut l = Loaded {
            state: State::default(),
            original: BTreeMap::new(),
            warnings: Vec::new(),
            stale: journal::checkpoint::stale_reason(j.dir()),
            fills_cache: j.fills_cache(),
            tasks_loaded: false,
            done_loaded: false,
        };
        if l.stale.is_none() {
            l.load(j, &Partition::Global)?;
        }
        Ok(l)
    }

    /// Loads the journal-wide open tasks if they are not loaded yet.
    pub fn tasks(&mut self, j: &dyn Source) -> Result<()> {
        self.ensure(j, &Partition::Tasks)
    }

    /// A partition that cannot be trusted: the whole checkpoint is stale until rebuilt.
    fn damaged(&mut self, j: &dyn Source, why: &str) {
        if self.stale.is_none() {
            let _ = journal::checkpoint::mark_stale(j.dir(), why);
            self.warnings.push(format!(
                "{why}; events are still recorded, and the checkpoint is rebuilt by the next writer (`hookjournal drain`, or `hookjournal recover`)"
            ));
            self.stale = Some(why.to_string());
        }
    }

    /// Reads partition `p` from the checkpoint into the state, remembering its bytes.
    fn load(&mut self, j: &dyn Source, p: &Partition) -> Result<()> {
        let key = p.key();
        match p {
            Partition::Tasks => self.tasks_loaded = true,
            Partition::TasksDone => self.done_loaded = true,
            _ => {}
        }
        match j.get_partition(&key) {
            Ok(Some(b)) => {
                if let Err(why) = self.state.decode_partition(p, &b) {
                    self.damaged(j, &why);
                }
                // A journal-wide partition that went cold is written back, so it is hot again.
                if *p != Partition::Tasks || j.is_hot(&key)? {
                    self.original.insert(key, b);
                }
            }
            // Not in the checkpoint: empty (a cost summary or notification log not begun yet).
            Ok(None) => {
                let _ = self.state.load_partition(p, None);
            }
            Err(e) if is_cache_miss(&e) => return Err(e),
            Err(e) => self.damaged(j, &format!("{}: {e}", p.describe())),
        }
        // A `tasks` partition written before the split: its finished tasks move out at the
        // next write-back, so the finished partition must be read (and written) now.
        if *p == Partition::Tasks
            && !self.done_loaded
            && self.state.tasks.tasks.values().any(|t| !t.status.is_open())
        {
            self.load(j, &Partition::TasksDone)?;
        }
        Ok(())
    }

    /// Loads partition `p` if it is not in the state yet (the global record is loaded by `lean`).
    fn ensure(&mut self, j: &dyn Source, p: &Partition) -> Result<()> {
        let held = match p {
            Partition::Tasks => self.tasks_loaded,
            Partition::TasksDone => self.done_loaded,
            p => self.state.holds(p),
        };
        if self.stale.is_some() || held || self.indexed_absent(p) {
            return Ok(());
        }
        self.load(j, p)
    }

    /// A session the index shard held says the checkpoint lacks: a session's partition and its
    /// summary are written in one batch, so there is nothing to look up (in the store, a miss
    /// searches every archive).
    fn indexed_absent(&self, p: &Partition) -> bool {
        let Partition::Session(id) = p else {
            return false;
        };
        self.state
            .index
            .get(&projections::index::shard_of(id))
            .is_some_and(|shard| !shard.contains_key(id))
    }

    /// Loads a session's partition if it is not loaded yet.
    pub fn session(&mut self, j: &dyn Source, id: &str) -> Result<()> {
        // Its index shard too: a session changed is written back with its summary.
        self.ensure(
            j,
            &Partition::SessionIndex(projections::index::shard_of(id)),
        )?;
        self.ensure(j, &Partition::Session(id.to_string()))
    }

    /// Loads every shard of the sessions index (a task reference that must find its session).
    pub fn index(&mut self, j: &dyn Source) -> Result<()> {
        for n in 0..projections::index::INDEX_SHARDS {
            self.ensure(j, &Partition::SessionIndex(n as u8))?;
        }
        Ok(())
    }

    /// Loads whatever partitions `env` needs (`fold::partitions_for`).
    pub fn for_event(&mut self, j: &dyn Source, env: &Envelope) -> Result<()> {
        for p in fold::partitions_for(env) {
            self.ensure(j, &p)?;
        }
        Ok(())
    }

    /// Loads what `env` touches and folds it in.
    pub fn fold(&mut self, j: &dyn Source, env: &Envelope) -> Result<()> {
        self.fold_parsed(j, env, None)
    }

    /// `fold`, given its payload as parsed already (`State::apply_parsed`): parsed once.
    pub fn fold_parsed(
        &mut self,
        j: &dyn Source,
        env: &Envelope,
        parsed: Option<&HookEvent>,
    ) -> Result<()> {
        self.for_event(j, env)?;
        if self.stale.is_none() {
            self.state.apply_parsed(env, parsed);
        }
        Ok(())
    }

    /// Pushes an event caused by `cause` (same time, host, session and agent) and folds it,
    /// loading first what it folds into (a usage reading's cost shard).
    pub fn push_caused(
        &mut self,
        j: &dyn Source,
        tx: &mut journal::Tx,
        cause: &Envelope,
        kind: projections::Kind,
        body: Vec<u8>,
    ) -> Result<()> {
        tx.push(crate::ingest::event(
            cause.recorded_at_us,
            &cause.host,
            cause.session_id.as_deref(),
            cause.agent_id.as_deref(),
            kind,
            body,
        ));
        let env = tx.events().last().expect("just pushed").clone();
        // A release can finish a journal-wide task: the finished ones must be loaded first.
        self.fold(j, &env)
    }

    /// Queues the sessions that changed into `tx` and lets every loaded session go (a later
    /// `session` reads it back from the store). For a writer that has marked the checkpoint stale
    /// and keeps the rest of the state until its last batch (a transcript import): memory holds
    /// one batch's sessions, not all. Nothing while the checkpoint is stale for another reason.
    pub fn release_sessions(&mut self, tx: &mut journal::Tx) {
        // Their summaries stay, in the index shards written with the cost shards at the end.
        self.state.settle_index();
        let sessions = std::mem::take(&mut self.state.sessions);
        if self.stale.is_some() {
            return;
        }
        for (id, s) in sessions {
            let key = fold::session_key(&id);
            let bytes = State::encode_session(&s);
            if self.original.remove(&key).as_ref() != Some(&bytes) {
                tx.put_state(&key, bytes);
            }
        }
    }

    /// Queues every changed partition into `tx` (nothing while the checkpoint is stale), and
    /// says the batch keeps the checkpoint. Read from sled, the unchanged ones go to the hot
    /// cache too, so the next hook finds them there.
    pub fn write_back(&self, tx: &mut journal::Tx) {
        if self.stale.is_some() {
            return;
        }
        let parts = self.state.partitions();
        // Every finished task reopened (or an empty task store written before empty ones had
        // no partition): the partition goes.
        for (key, loaded) in [
            (fold::TASKS_DONE_KEY, self.done_loaded),
            (fold::TASKS_KEY, self.tasks_loaded),
        ] {
            if loaded && !parts.iter().any(|(k, _)| k == key) && self.original.contains_key(key) {
                tx.delete_state(key);
            }
        }
        for (key, bytes) in parts {
            if (key == fold::TASKS_DONE_KEY && !self.done_loaded)
                || (key == fold::TASKS_KEY && !self.tasks_loaded)
            {
                continue;
            }
            if self.original.get(&key) != Some(&bytes) {
                tx.put_state(&key, bytes);
            } else if self.fills_cache {
                tx.cache_state(&key, bytes);
            }
        }
        tx.checkpointed();
    }
}

/// Rebuilds every checkpoint partition by folding the whole log (a stale or damaged checkpoint).
pub fn rebuild_checkpoint(j: &mut Journal) -> Result<()> {
    let snap = j.read_snapshot().context("reading the journal")?;
    let rewinds = collect_rewinds(&snap)?;
    let full = full_replay(&snap, rewinds, |_| {})?;
    let parts: BTreeMap<Vec<u8>, Vec<u8>> = full.state.partitions().into_iter().collect();
    j.replace_checkpoint(&parts)
        .context("writing the rebuilt checkpoint")?;
    Ok(())
}

/// How many sessions the sessions index holds (each shard's entry count; no summary decoded).
pub fn session_count(j: &Journal) -> Result<usize> {
    let mut n = 0;
    for shard in 0..projections::index::INDEX_SHARDS {
        if let Some(b) = j.get_state(&Partition::SessionIndex(shard as u8).key())? {
            n += projections::index::shard_len(&b)
                .with_context(|| format!("sessions index shard {shard:02x} does not decode"))?;
        }
    }
    Ok(n)
}

/// What `status` shows: the journal's size and head, and how many sessions the index holds.
pub struct StatusRead {
    /// The journal's size and head.
    pub status: journal::Status,
    /// Sessions in the sessions index.
    pub sessions: usize,
    /// Read as a user who cannot write it: the spool not ingested (`status.spooled` waits).
    pub readonly: bool,
}

/// `status` of the journal in `dir`, every acknowledged event in it: from the write-ahead log
/// and the hot cache when the cache is current and nothing waits in the spool (no sled open, no
/// archive read: at 1M events most of what `status` cost), else from the store once the spool
/// is ingested. A cache that misses or does not decode is passed by for the store, never
/// believed.
pub fn read_status(dir: &Path) -> Result<StatusRead> {
    let create = dir.join(spool::SPOOL_DIR).is_dir();
    let j = match Journal::open_light(dir, &cli_open_options(dir, create)) {
        Ok(journal::Opened::Light(l)) => {
            if !spool_waiting(&l)? {
                if let (Some(status), Some(sessions)) = (l.status()?, cached_session_count(&l)) {
                    return Ok(StatusRead {
                        status,
                        sessions,
                        readonly: false,
                    });
                }
            }
            full_caught_up(l.upgrade())?
        }
        Ok(journal::Opened::Full(j)) => full_caught_up(Ok(j))?,
        Err(e) => {
            let e = open_error(dir, e);
            if !is_readonly(&e) {
                return Err(e);
            }
            let (status, sessions) = readonly_status(dir)?;
            return Ok(StatusRead {
                status,
                sessions,
                readonly: true,
            });
        }
    };
    Ok(StatusRead {
        status: j.status()?,
        sessions: session_count(&j)?,
        readonly: false,
    })
}

/// `session_count` from the hot cache; `None` when a shard misses or does not decode.
fn cached_session_count(l: &Light) -> Option<usize> {
    let mut n = 0;
    for shard in 0..projections::index::INDEX_SHARDS {
        match l.get_state(&Partition::SessionIndex(shard as u8).key()) {
            Lookup::Known(Some(b)) => n += projections::index::shard_len(&b)?,
            Lookup::Known(None) => {}
            Lookup::Miss => return None,
        }
    }
    Some(n)
}

/// A read-only journal (this user cannot write it): the log read without the lock or sled, and
/// the state by a full replay. Spooled events are not shown, and a line on stderr says so.
fn readonly_view(dir: &Path) -> Result<View> {
    readonly_view_saying(dir, "is read-only here", "its owner runs a command")
}

/// `readonly_view`, its line on spooled events saying why they are not shown (`why`) and
/// until when (`until`).
fn readonly_view_saying(dir: &Path, why: &str, until: &str) -> Result<View> {
    let snap = readonly_snapshot_saying(dir, why, until)?;
    let rewinds = collect_rewinds(&snap)?;
    let full = full_replay(&snap, rewinds, |_| {})?;
    Ok(View {
        snap,
        state: full.state,
    })
}

/// The log of the journal in `dir` read untouched (no lock taken, nothing written: a registered
/// journal read by `--all-projects`, foreign or not), as a read-only user reads it; its spooled
/// events are not shown (a line on stderr says so).
pub fn untouched_snapshot(dir: &Path) -> Result<ReadSnapshot> {
    readonly_snapshot_saying(dir, "is read untouched", "a command runs in its project")
}

/// `untouched_snapshot` without its line on stderr, for a live view that shows the spool itself:
/// the log, and how many events wait in the spool (not in it).
pub fn untouched_snapshot_quiet(dir: &Path) -> Result<(ReadSnapshot, usize)> {
    ReadSnapshot::take_readonly(dir)
        .map_err(|e| anyhow::anyhow!("reading journal {}: {e}", dir.display()))
}

/// The log read without the lock or sled, the line on spooled events saying why they are not
/// shown (`why`) and until when (`until`).
fn readonly_snapshot_saying(dir: &Path, why: &str, until: &str) -> Result<ReadSnapshot> {
    let (snap, spooled) = ReadSnapshot::take_readonly(dir)
        .map_err(|e| anyhow::anyhow!("reading journal {}: {e}", dir.display()))?;
    if spooled > 0 {
        eprintln!(
            "hookjournal: journal {} {why}: {spooled} spooled event(s) are not shown until {until}",
            dir.display()
        );
    }
    Ok(snap)
}

/// `status` for a journal this user can only read: counted from the log itself.
pub fn readonly_status(dir: &Path) -> Result<(journal::Status, usize)> {
    let view = readonly_view(dir)?;
    let snap = &view.snap;
    let mut last = None;
    snap.for_each(|e| {
        last = Some(e.recorded_at_us);
        Ok(())
    })?;
    let sealed: u64 = snap.segments.iter().map(|s| s.last + 1 - s.first).sum();
    let st = journal::Status {
        dir: dir.to_path_buf(),
        events: snap.head_seq,
        head_hash: snap.head_hash,
        segments: snap.segments.len(),
        hot_files: journal::journal_size(dir).1,
        active_events: snap.head_seq - sealed,
        bytes: snap.segments.iter().map(|s| s.bytes).sum(),
        last_recorded_at_us: last,
        spooled: spooled(dir),
    };
    Ok((st, view.state.sessions.len()))
}

/// Whether `dir` holds a journal's store (its `CURRENT` or its lock), whatever state it is in.
pub fn is_journal(dir: &Path) -> bool {
    journal::files::is_present(&dir.join("CURRENT"))
        || journal::files::is_present(&dir.join("lock"))
}

/// Whether an error says the journal can be read but not written by this user.
pub fn is_readonly(e: &anyhow::Error) -> bool {
    e.downcast_ref::<journal::Error>()
        .is_some_and(|e| matches!(e, journal::Error::ReadOnly(_)))
}

/// The checkpoint of the journal in `dir`, read under a short lock (the spool ingested first).
pub fn read_checkpoint(dir: &Path) -> Result<State> {
    match open_read(dir) {
        Ok(mut j) => checkpoint_or_rebuild(&mut j),
        Err(e) if is_readonly(&e) => Ok(readonly_view(dir)?.state),
        Err(e) => Err(e),
    }
}

/// The whole checkpoint; a damaged one (an archive or partition that does not read) is marked
/// stale and rebuilt from the log first. Readers never fail on derived state.
pub fn checkpoint_or_rebuild(j: &mut Journal) -> Result<State> {
    match checkpoint(j) {
        Ok(s) => Ok(s),
        Err(e) => {
            eprintln!("hookjournal: {e:#}; rebuilding the checkpoint from the log");
            journal::checkpoint::mark_stale(
                j.dir(),
                &projections::text::one_line(&format!("{e:#}")),
            )?;
            rebuild_checkpoint(j)?;
            checkpoint(j)
        }
    }
}

/// The checkpoint as the commands that read sessions and tasks take it: every partition but the
/// cost shards and notification chunks (their own commands load those).
pub fn checkpoint(j: &Journal) -> Result<State> {
    let mut parts = j.scan_state(&fold::session_key(""))?;
    for p in [Partition::Global, Partition::Tasks] {
        if let Some(v) = j.get_state(&p.key())? {
            parts.push((p.key(), v));
        }
    }
    decode_checkpoint(&parts)
}

/// The whole checkpoint, every partition (what `verify` compares with a full replay).
pub fn checkpoint_whole(j: &Journal) -> Result<State> {
    decode_checkpoint(&j.scan_state(b"")?)
}

fn decode_checkpoint(parts: &[(Vec<u8>, Vec<u8>)]) -> Result<State> {
    State::from_partitions(parts)
        .map_err(|e| anyhow::anyhow!("checkpoint: {e}; run `hookjournal verify`"))
}

/// A snapshot read as the replay engine's log.
pub struct SnapLog<'a>(pub &'a ReadSnapshot);

impl Log for SnapLog<'_> {
    type Error = journal::Error;

    fn each(&self, f: &mut dyn FnMut(Envelope)) -> journal::Result<()> {
        self.0.for_each(|e| {
            f(e);
            Ok(())
        })
    }

    fn each_in(&self, from: Seq, to: Seq, f: &mut dyn FnMut(Envelope)) -> journal::Result<()> {
        self.0.for_each_in(from, to, |e| {
            f(e);
            Ok(())
        })
    }
}

/// Folds every event of a snapshot, skipping what `rewinds` hide (`replay::full_replay`).
pub fn full_replay(
    snap: &ReadSnapshot,
    rewinds: Rewinds,
    progress: impl FnMut(u64),
) -> Result<Full> {
    Ok(replay::full_replay(&SnapLog(snap), rewinds, progress)?)
}

/// The rewinds a snapshot holds (pass one of a full replay).
pub fn collect_rewinds(snap: &ReadSnapshot) -> Result<Rewinds> {
    Ok(replay::collect_rewinds(&SnapLog(snap))?)
}

/// A full replay fed the events as `verify` reads them (`journal::verify_visiting`): the log is
/// read and decoded once, where the replay over a snapshot reads it twice more (its rewinds,
/// then the fold). A rewind hides events before it, so the fold here assumes none; one seen,
/// the snapshot is folded again with every rewind this pass collected.
#[derive(Default)]
pub struct OnePass {
    full: Full,
    rewinds: Rewinds,
    rewound: bool,
    /// The last event seen, `(0, ZERO_HASH)` before the first.
    head: (Seq, journal::Hash),
}

impl OnePass {
    /// Folds `e`, the next event of the log.
    pub fn see(&mut self, e: &Envelope) {
        if matches!(e.kind(), Kind::Rewound { .. }) {
            fold::collect_rewind(&mut self.rewinds, e);
            self.rewound = true;
        }
        // Once a rewind is seen the fold is redone: only the rewinds are collected.
        if !self.rewound {
            self.full.apply(e);
        }
        self.head = (e.seq, e.hash);
    }

    /// The full replay at `snap`'s head, exactly `full_replay(snap, collect_rewinds(snap))`:
    /// this fold, with the events the snapshot holds past the last one seen (a writer's since)
    /// folded on, when the snapshot continues what was seen; else the snapshot replayed.
    pub fn finish(mut self, snap: &ReadSnapshot) -> Result<Full> {
        let (seq, hash) = self.head;
        let continues = match snap.head_seq.cmp(&seq) {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => snap.head_hash == hash,
            std::cmp::Ordering::Greater => {
                let mut extra = Vec::new();
                snap.for_each_in(seq + 1, snap.head_seq, |e| {
                    extra.push(e);
                    Ok(())
                })?;
                let linked = extra
                    .first()
                    .is_some_and(|e| e.seq == seq + 1 && e.prev == hash);
                if linked {
                    extra.iter().for_each(|e| self.see(e));
                }
                linked
            }
        };
        if !continues {
            return full_replay(snap, collect_rewinds(snap)?, |_| {});
        }
        if self.rewound {
            return full_replay(snap, self.rewinds, |_| {});
        }
        Ok(self.full)
    }
}

/// What most read commands need: a snapshot taken under a short lock, and the checkpoint.
pub struct View {
    /// The log as it was under the lock, the spool ingested into it first.
    pub snap: ReadSnapshot,
    /// The checkpoint at the snapshot's head.
    pub state: State,
}

/// The log and the checkpoint of the journal in `dir`, as one consistent snapshot.
pub fn open_view(dir: &Path) -> Result<View> {
    let mut j = match open_read(dir) {
        Ok(j) => j,
        Err(e) if is_readonly(&e) => return readonly_view(dir),
        Err(e) => return Err(e),
    };
    let snap = j.read_snapshot().context("reading the journal")?;
    let state = checkpoint_or_rebuild(&mut j)?;
    Ok(View { snap, state })
}

/// Like `open_view` for commands that fold the whole log anyway (cost, notifications): only the
/// small global partition (for the rewinds) is read from the checkpoint.
pub fn open_log(dir: &Path, need_rewinds: bool) -> Result<View> {
    if !need_rewinds {
        // A quiescent journal (everything sealed, nothing spooled) is read without sled.
        if let Ok(Some(snap)) = ReadSnapshot::take_sealed(dir, Duration::from_secs(10)) {
            return Ok(View {
                snap,
                state: State::default(),
            });
        }
    }
    let j = match open_read(dir) {
        Ok(j) => j,
        Err(e) if is_readonly(&e) => return readonly_view(dir),
        Err(e) => return Err(e),
    };
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

/// Folds into the checkpoint the events the store copied from the write-ahead log at open (hooks
/// commit to the log and the hot cache; the store catches up here), without ingesting the spool.
pub fn fold_unfolded(j: &mut Journal) -> Result<()> {
    let unfolded = j.unfolded()?;
    if unfolded.is_empty() {
        return Ok(());
    }
    let mut loaded = Loaded::new(&*j)?;
    let mut tx = j.begin();
    for env in &unfolded {
        loaded.fold(&*j, env)?;
    }
    tx.folded_unfolded();
    loaded.write_back(&mut tx);
    j.commit(tx)?;
    Ok(())
}

/// Ingests whatever waits in the spool (a reader holds the lock anyway, and should see it all).
pub fn drain_all(j: &mut Journal) -> Result<()> {
    loop {
        let mut loaded = Loaded::new(j)?;
        let mut tx = j.begin();
        let far = std::time::Instant::now() + Duration::from_secs(3600);
        let settings = crate::settings::Settings::load(j.dir()).0;
        let Drained { done, .. } = drain(j, &mut loaded, &mut tx, 4096, far, &settings.policy)?;
        for w in &loaded.warnings {
            eprintln!("hookjournal: {w}");
        }
        if tx.is_empty() {
            // Only files an earlier commit ingested: its `d:` keys are in the store, which the
            // open copied from a synced log.
            for entry in &done {
                let _ = spool::remove(entry);
            }
            if journal::checkpoint::stale_reason(j.dir()).is_some() {
                rebuild_checkpoint(j)?;
            }
            return Ok(());
        }
        loaded.write_back(&mut tx);
        let committed = if settings.mirror.any() {
            tx.events().to_vec()
        } else {
            Vec::new()
        };
        j.commit(tx)?;
        for entry in &done {
            let _ = spool::remove(entry);
        }
        crate::mirror::write(j.dir(), &settings.mirror, &committed);
        j.seal_if_full()?;
    }
}

/// A store opened for reading, brought up to every acknowledged event (`catch_up`).
fn full_caught_up(j: journal::Result<Journal>) -> Result<Journal> {
    let mut j = j.map_err(|e| anyhow::anyhow!("{e}"))?;
    catch_up(&mut j)?;
    Ok(j)
}

/// Opens an existing journal for a read command (waits up to 10 s for busy hooks), brought up
/// to every acknowledged event (`catch_up`). A directory holding only spooled events (the fast
/// path never opened the store) counts as a journal.
pub fn open_read(dir: &Path) -> Result<Journal> {
    let create = dir.join(spool::SPOOL_DIR).is_dir();
    let mut j =
        Journal::open(dir, &cli_open_options(dir, create)).map_err(|e| open_error(dir, e))?;
    catch_up(&mut j)?;
    Ok(j)
}

/// Brings a journal a reader holds (under its lock) up to every acknowledged event: a spooled
/// event is acknowledged, so the spool is ingested here exactly as the next hook would ingest it
/// (`drain_all`: the same fold, the same task releases and answers, the final seqs and hashes),
/// and the events the store copied from the log are folded into the checkpoint. A reader then
/// shows the journal as it is after a full drain; only a journal this user cannot write is
/// read without its spool (`readonly_view` says so).
pub fn catch_up(j: &mut Journal) -> Result<()> {
    if spool_waiting(&*j)? {
        drain_all(j)
    } else {
        fold_unfolded(j)
    }
}

/// Whether the spool holds a file the log has not ingested (a damaged one counts: the drain
/// names it and leaves it in place).
pub fn spool_waiting(j: &dyn Source) -> Result<bool> {
    for entry in spool::list(j.dir())? {
        if !j.was_drained(&entry.id)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Opens (with `create`, creates) a journal for a CLI command and drains its spool first.
pub fn open_and_drain(dir: &Path, create: bool) -> Result<Journal> {
    let mut j =
        Journal::open(dir, &cli_open_options(dir, create)).map_err(|e| open_error(dir, e))?;
    drain_all(&mut j)?;
    Ok(j)
}

/// The options a CLI command opens a journal with: it waits up to 10 s, ahead of hooks.
pub fn cli_open_options(dir: &Path, create: bool) -> journal::OpenOptions {
    journal::OpenOptions {
        wait: Duration::from_secs(10),
        create,
        segment_events: crate::settings::Settings::load(dir).0.hook.segment_events,
        priority: true,
    }
}

/// A CLI command's one-line error for a journal that did not open.
pub fn open_error(dir: &Path, e: journal::Error) -> anyhow::Error {
    match e {
        journal::Error::NotFound(p) => anyhow::anyhow!(
            "no journal at {} yet (`hookjournal install` creates it; after a user-scope install, the first hook event in this project does; or pass --journal DIR)",
            p.display()
        ),
        e @ journal::Error::ReadOnly(_) => anyhow::Error::new(e),
        journal::Error::Busy => anyhow::anyhow!(
            "journal {} is busy (another process held its lock for 10 s)",
            dir.display()
        ),
        other => anyhow::anyhow!("opening journal {}: {other}", dir.display()),
    }
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

/// Folds what the log holds beyond the checkpoint (copied from the write-ahead log at open),
/// then ingests spooled events in arrival order into `tx`, until `max` files or the `deadline`.
/// A damaged spool file is left where it is (`verify` names it, `recover` journals its bytes).
/// A spooled hook event gets now what its hook could not do without the state: a loop agent's
/// task release (`policy::decide_spooled`), in the same batch. Returns the files to remove after
/// commit.
pub fn drain(
    j: &dyn Source,
    loaded: &mut Loaded,
    tx: &mut journal::Tx,
    max: usize,
    deadline: std::time::Instant,
    policy: &PolicyConfig,
) -> anyhow::Result<Drained> {
    let unfolded = j.unfolded()?;
    if !unfolded.is_empty() {
        for env in &unfolded {
            loaded.fold(j, env)?;
        }
        tx.folded_unfolded();
    }
    let entries = spool::list(j.dir())?;
    if entries.is_empty() {
        return Ok(Drained {
            done: Vec::new(),
            more: false,
        });
    }
    spool::sweep_temps(j.dir(), Duration::from_secs(600));
    let mut done = Vec::new();
    let mut more = false;
    for (i, entry) in entries.into_iter().enumerate() {
        if i >= max || (i > 0 && std::time::Instant::now() >= deadline) {
            more = true;
            break;
        }
        if j.was_drained(&entry.id)? {
            // Ingested by an earlier commit, which may not be durable yet: removed with the
            // files this batch ingests, once its commit is.
            done.push(entry);
            continue;
        }
        let mut ev = match spool::read(&entry) {
            Ok(ev) => ev,
            Err(journal::Error::Io { cause: source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue
            }
            Err(e) => {
                let warning = format!(
                    "{e}; left in the spool (`hookjournal verify` names it, `hookjournal recover` journals its bytes)"
                );
                if first_time(&warning) {
                    loaded.warnings.push(warning);
                }
                continue;
            }
        };
        if ev.session_id.is_none() {
            ev.session_id = projections::openclaw::resolve_session(
                &loaded.state.global.session_keys,
                &ev.host,
                &ev.payload,
            );
        }
        tx.push(ev);
        let env = tx.events().last().expect("just pushed").clone();
        let parsed = matches!(env.kind(), Kind::Hook { .. })
            .then(|| projections::event::from_envelope(&env))
            .flatten();
        loaded.fold_parsed(j, &env, parsed.as_ref())?;
        if let (None, Some(ev)) = (&loaded.stale, parsed) {
            if projections::policy::reads_tasks(&loaded.state, &env, &ev, policy) {
                loaded.tasks(j)?;
            }
            for (kind, body) in spooled_decision(&loaded.state, &env, &ev, policy) {
                loaded.push_caused(j, tx, &env, kind, body)?;
            }
        }
        tx.drained(&entry.id);
        done.push(entry);
    }
    Ok(Drained { done, more })
}

/// The events a spooled hook event's ingestion records (see `policy::decide_spooled`): the loop
/// release, and the answer its hook gave without the state.
fn spooled_decision(
    state: &State,
    env: &Envelope,
    ev: &projections::event::HookEvent,
    policy: &PolicyConfig,
) -> Vec<(projections::Kind, Vec<u8>)> {
    let d = projections::policy::decide_spooled(state, env, ev, policy);
    let mut out: Vec<_> = d.events.iter().map(|e| e.kind_and_body(env.seq)).collect();
    if d.answer.is_some() || d.stderr.is_some() {
        out.push((
            Kind::ResponseEmitted { cause: env.seq },
            projections::derived::body(&projections::derived::ResponseEmitted {
                output: d.output_text(),
                stderr: d.stderr.clone(),
                policy: policy.clone(),
            }),
        ));
    }
    out
}

/// What a drain took: the files to remove after the commit, and whether more are waiting.
pub struct Drained {
    /// The spool files to remove once the commit is durable.
    pub done: Vec<spool::SpoolEntry>,
    /// Whether more are waiting.
    pub more: bool,
}

/// What a read command answers from: only the partitions it names, read under a short lock,
/// after the spool is ingested (`catch_up`). A journal this user can only read is replayed whole
/// instead, and then every partition is held from the start.
pub struct Partial {
    j: Src,
    loaded: std::collections::BTreeSet<Partition>,
    /// The partitions read, decoded.
    pub state: State,
}

/// The store, opened (and its spool drained) when the partitions were read from the cache.
fn full(src: &mut Src) -> Result<Option<&mut Journal>> {
    if matches!(src, Src::Light(_)) {
        let Src::Light(l) = std::mem::replace(src, Src::Readonly) else {
            unreachable!("matched above");
        };
        *src = Src::Full(full_caught_up(l.upgrade())?);
    }
    Ok(match src {
        Src::Full(j) => Some(j),
        _ => None,
    })
}

/// Where a `Partial` reads partitions from.
enum Src {
    /// The hot cache, current with the log and no spooled event waiting: no sled open.
    Light(Light),
    /// The store, its spool ingested.
    Full(Journal),
    /// A journal this user cannot write: the state was replayed whole at open.
    Readonly,
}

impl Partial {
    /// Opens the journal in `dir` for reading partitions; nothing is loaded yet. While the hot
    /// cache is current and no spooled event waits, partitions are read from the cache (sled's
    /// open costs more than most reads); the first miss opens the store, and so does a spooled
    /// event, which is ingested first.
    pub fn open(dir: &Path) -> Result<Partial> {
        let create = dir.join(spool::SPOOL_DIR).is_dir();
        let j = match Journal::open_light(dir, &cli_open_options(dir, create)) {
            Ok(journal::Opened::Light(l)) if spool_waiting(&l)? => {
                Src::Full(full_caught_up(l.upgrade())?)
            }
            Ok(journal::Opened::Light(l)) => Src::Light(l),
            Ok(journal::Opened::Full(j)) => Src::Full(full_caught_up(Ok(j))?),
            Err(e) => {
                let e = open_error(dir, e);
                if !is_readonly(&e) {
                    return Err(e);
                }
                return Ok(Partial {
                    j: Src::Readonly,
                    loaded: Default::default(),
                    state: readonly_view(dir)?.state,
                });
            }
        };
        Ok(Partial {
            j,
            loaded: Default::default(),
            state: State::default(),
        })
    }

    /// Opens the journal in `dir` without writing it or taking its lock (a registered journal
    /// read by `--all-projects`, foreign or not): the log read as a read-only user reads it and
    /// the state replayed whole. Spooled events are not shown (a line on stderr says so).
    pub fn open_untouched(dir: &Path) -> Result<Partial> {
        Ok(Partial {
            j: Src::Readonly,
            loaded: Default::default(),
            state: readonly_view_saying(dir, "is read untouched", "a command runs in its project")?
                .state,
        })
    }

    /// Loads partition `p` (a session the checkpoint does not hold stays absent). A partition
    /// that cannot be read marks the checkpoint stale and has it rebuilt from the log, once.
    pub fn load(&mut self, p: &Partition) -> Result<()> {
        if matches!(self.j, Src::Readonly) || !self.loaded.insert(p.clone()) {
            return Ok(());
        }
        if let Src::Light(l) = &self.j {
            if let Lookup::Known(bytes) = l.get_state(&p.key()) {
                if self.state.load_partition(p, bytes.as_deref()).is_ok() {
                    return Ok(());
                }
            }
        }
        let Some(j) = full(&mut self.j)? else {
            return Ok(());
        };
        let read = |j: &Journal, st: &mut State| -> Result<()> {
            let bytes = j.get_state(&p.key())?;
            st.load_partition(p, bytes.as_deref())
                .map_err(|e| anyhow::anyhow!("{e}"))
        };
        if let Err(e) = read(j, &mut self.state) {
            eprintln!("hookjournal: {e:#}; rebuilding the checkpoint from the log");
            journal::checkpoint::mark_stale(
                j.dir(),
                &projections::text::one_line(&format!("{e:#}")),
            )?;
            rebuild_checkpoint(j)?;
            read(j, &mut self.state)
                .map_err(|e| anyhow::anyhow!("{e:#}; run `hookjournal verify`"))?;
        }
        Ok(())
    }

    /// Every shard of the cost summary.
    pub fn load_cost(&mut self) -> Result<()> {
        for n in 0..fold::COST_SHARDS {
            self.load(&Partition::Cost(n))?;
        }
        Ok(())
    }

    /// Every shard of the cost totals.
    pub fn load_totals(&mut self) -> Result<()> {
        self.load_shards(
            (0..projections::index::INDEX_SHARDS)
                .map(|n| Partition::CostTotals(n as u8))
                .collect(),
        )
    }

    /// Loads shards of the sessions index or the cost totals. From the hot cache, two threads
    /// read and decode them (at 10k sessions the index is 4 MB and most of a `sessions` call);
    /// any miss, or the store, takes `load` one shard at a time.
    fn load_shards(&mut self, parts: Vec<Partition>) -> Result<()> {
        debug_assert!(parts
            .iter()
            .all(|p| matches!(p, Partition::SessionIndex(_) | Partition::CostTotals(_))));
        let parts: Vec<Partition> = parts
            .into_iter()
            .filter(|p| !self.loaded.contains(p))
            .collect();
        if let Src::Light(l) = &self.j {
            let decode = |ps: &[Partition]| -> Option<State> {
                let mut st = State::default();
                for p in ps {
                    let Lookup::Known(bytes) = l.get_state(&p.key()) else {
                        return None;
                    };
                    st.load_partition(p, bytes.as_deref()).ok()?;
                }
                Some(st)
            };
            let (a, b) = parts.split_at(parts.len() / 2);
            let (sa, sb) = std::thread::scope(|s| {
                let other = s.spawn(|| decode(b));
                (decode(a), other.join().ok().flatten())
            });
            if let (Some(sa), Some(sb)) = (sa, sb) {
                for st in [sa, sb] {
                    self.state.index.extend(st.index);
                    self.state.totals.extend(st.totals);
                }
                self.loaded.extend(parts);
                return Ok(());
            }
        }
        for p in &parts {
            self.load(p)?;
        }
        Ok(())
    }

    /// Every shard of the sessions index.
    pub fn load_index(&mut self) -> Result<()> {
        self.load_shards(
            (0..projections::index::INDEX_SHARDS)
                .map(|n| Partition::SessionIndex(n as u8))
                .collect(),
        )
    }

    /// The ids of every session the checkpoint holds (keys only; no session is decoded).
    pub fn session_ids(&mut self) -> Result<Vec<String>> {
        let Some(j) = full(&mut self.j)? else {
            return Ok(self.state.sessions.keys().cloned().collect());
        };
        let prefix = fold::session_key("");
        Ok(j.state_keys(&prefix)?
            .into_iter()
            .map(|k| String::from_utf8_lossy(&k[prefix.len()..]).into_owned())
            .collect())
    }

    /// The session `want` names (its id or first characters), loaded.
    pub fn session(&mut self, want: &str) -> Result<String> {
        let exact = Partition::Session(want.to_string());
        self.load(&exact)?;
        let id = if self.state.holds(&exact) {
            want.to_string()
        } else {
            crate::resolve_session(self.session_ids()?.iter(), want)?
        };
        self.load(&Partition::Session(id.clone()))?;
        Ok(id)
    }

    /// The state loaded so far; the journal's lock is released.
    pub fn into_state(self) -> State {
        self.state
    }
}

/// Whether this process has not said `warning` yet: a command that drains more than once (as
/// `recover` does) names a damaged spool file once.
fn first_time(warning: &str) -> bool {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    SAID.lock()
        .map(|mut said| said.insert(warning.to_string()))
        .unwrap_or(true)
}

/// The hot cache's partitions (when it is current at the snapshot's head) that differ from a
/// full replay: a hook would answer from them (`verify`).
pub fn hot_cache_diff(
    dir: &std::path::Path,
    snap: &ReadSnapshot,
    replayed: &State,
) -> Result<Vec<String>> {
    let hot = journal::hot::HotCache::new(dir);
    let Some(head) = hot
        .head()
        .filter(|h| h.current_at(snap.head_seq, &snap.head_hash))
    else {
        return Ok(Vec::new());
    };
    let want: std::collections::BTreeMap<_, _> = replayed.partitions().into_iter().collect();
    let mut have: std::collections::BTreeMap<_, _> = hot.entries(head.epoch)?.into_iter().collect();
    // An empty journal-wide task store written before an empty store had no partition: the
    // same state as none.
    if have.get(fold::TASKS_KEY).is_some_and(|v| {
        fold::decode::<projections::tasks::TaskList>(v)
            == Some(projections::tasks::TaskList::default())
    }) {
        have.remove(fold::TASKS_KEY);
    }
    let mut out: Vec<String> = have
        .iter()
        .filter(|(k, v)| want.get(*k).map(Vec::as_slice).unwrap_or_default() != v.as_slice())
        .map(|(k, _)| {
            format!(
                "hot cache partition {} differs from a full replay",
                String::from_utf8_lossy(k)
            )
        })
        .collect();
    // A complete cache is taken at its word that a partition it lacks does not exist.
    if head.complete {
        out.extend(want.keys().filter(|k| !have.contains_key(*k)).map(|k| {
            format!(
                "the hot cache says it is complete but lacks partition {}",
                String::from_utf8_lossy(k)
            )
        }));
    }
    Ok(out)
}

/// How many spool files wait in `dir` (none when the spool does not read).
pub fn spooled(dir: &Path) -> usize {
    spool::list(dir).map(|l| l.len()).unwrap_or(0)
}

/// Whether `dir` has an active store yet (`CURRENT`, even a link: `verify` looks at what is
/// there); a journal whose events all wait in the spool has none.
pub fn has_store(dir: &Path) -> bool {
    journal::files::is_present(&dir.join("CURRENT"))
}

/// Whether `dir` holds events to read: an active store (`CURRENT`) or a spool.
pub fn has_events(dir: &Path) -> bool {
    dir.join("CURRENT").exists() || dir.join(spool::SPOOL_DIR).is_dir()
}

/// Hands `ev` to the spool: acknowledged once this returns, ingested in order by the next writer
/// (a statusline's reading, which must never wait for the lock).
pub fn spool_event(dir: &Path, ev: &journal::NewEvent) -> journal::Result<()> {
    spool::write(dir, ev).map(|_| ())
}

/// The partitions `keys` of the journal in `dir`, for a reader that must not wait (a statusline):
/// from the hot cache when it holds them all and nothing waits in the spool (no sled open), else
/// from the store, once the spool is ingested and the log's unfolded events folded in. `None`
/// when the journal is busy, missing or does not read.
pub fn read_partitions_quick(
    dir: &Path,
    segment_events: u64,
    keys: &[Vec<u8>],
) -> Option<Vec<Option<Vec<u8>>>> {
    let opts = journal::OpenOptions {
        wait: Duration::ZERO,
        create: false,
        segment_events,
        priority: false,
    };
    let mut j = match Journal::open_light(dir, &opts).ok()? {
        // A spooled event is acknowledged: it is ingested (below) before anything is shown.
        journal::Opened::Light(l) if spool_waiting(&l).ok()? => l.upgrade().ok()?,
        journal::Opened::Light(l) => {
            let cached: Option<Vec<Option<Vec<u8>>>> = keys
                .iter()
                .map(|k| match l.get_state(k) {
                    Lookup::Known(v) => Some(v),
                    Lookup::Miss => None,
                })
                .collect();
            match cached {
                Some(parts) => return Some(parts),
                None => l.upgrade().ok()?,
            }
        }
        journal::Opened::Full(j) => j,
    };
    // The store may lag the log (hooks commit to the log and the cache), and the spool the
    // store: both are brought in first.
    catch_up(&mut j).ok()?;
    keys.iter().map(|k| j.get_state(k).ok()).collect()
}

#[cfg(test)]
mod one_pass {
    use super::*;
    use journal::{NewEvent, ZERO_HASH};

    /// A log of prompts in sessions `a` and `b`; with `rewind`, session `a` rewound to seq 3 at
    /// seq 6 (hiding its seq 5).
    fn log(n: u64, rewind: bool) -> Vec<Envelope> {
        let mut prev = ZERO_HASH;
        (1..=n)
            .map(|seq| {
                let sid = if seq % 2 == 0 { "a" } else { "b" };
                let (kind, payload) = if rewind && seq == 6 {
                    let k = Kind::Rewound {
                        session: "a".into(),
                        to_seq: 3,
                    };
                    (k.into(), b"{}".to_vec())
                } else {
                    let p = format!(
                        r#"{{"hook_event_name":"UserPromptSubmit","session_id":"{sid}","prompt":"p{seq}","cwd":"/w"}}"#
                    );
                    let k = Kind::Hook {
                        name: "UserPromptSubmit".into(),
                    };
                    (k.into(), p.into_bytes())
                };
                let e = Envelope::seal(
                    NewEvent {
                        recorded_at_us: seq as i64 * 1000,
                        host: "claude".into(),
                        kind,
                        session_id: Some(sid.into()),
                        agent_id: None,
                        payload,
                        truncated: None,
                        spooled: false,
                    },
                    seq,
                    prev,
                );
                prev = e.hash;
                e
            })
            .collect()
    }

    fn snapshot(events: Vec<Envelope>) -> ReadSnapshot {
        let (head_seq, head_hash) = events
            .last()
            .map(|e| (e.seq, e.hash))
            .unwrap_or((0, ZERO_HASH));
        ReadSnapshot {
            segments: Vec::new(),
            active: events,
            head_seq,
            head_hash,
        }
    }

    /// A state's partitions, key and bytes.
    type Partitions = Vec<(Vec<u8>, Vec<u8>)>;

    /// The partitions of `OnePass` fed `seen`, finished against `snap`, beside the two-pass
    /// replay of `snap`.
    fn both(seen: &[Envelope], snap: &ReadSnapshot) -> (Partitions, Partitions) {
        let mut pass = OnePass::default();
        seen.iter().for_each(|e| pass.see(e));
        let one = pass.finish(snap).unwrap().state.partitions();
        let two = full_replay(snap, collect_rewinds(snap).unwrap(), |_| {})
            .unwrap()
            .state
            .partitions();
        (one, two)
    }

    #[test]
    fn the_fold_of_what_verify_read_is_the_full_replay() {
        let events = log(9, false);
        let (one, two) = both(&events, &snapshot(events.clone()));
        assert_eq!(one, two);
    }

    #[test]
    fn events_a_writer_appended_since_are_folded_on() {
        let events = log(9, false);
        let (one, two) = both(&events[..5], &snapshot(events.clone()));
        assert_eq!(one, two);
        // Not what a fold of the five alone gives: the four after them count.
        let (five, _) = both(&events[..5], &snapshot(events[..5].to_vec()));
        assert_ne!(one, five);
    }

    #[test]
    fn a_rewind_seen_hides_what_it_rewound() {
        let events = log(9, true);
        let (one, two) = both(&events, &snapshot(events.clone()));
        assert_eq!(one, two);
        // The rewind matters here: folded as if there were none, the state differs.
        let mut blind = Full::default();
        events.iter().for_each(|e| blind.apply(e));
        assert_ne!(one, blind.state.partitions());
    }

    #[test]
    fn a_rewind_appended_since_hides_what_it_rewound() {
        let events = log(9, true);
        let (one, two) = both(&events[..4], &snapshot(events.clone()));
        assert_eq!(one, two);
    }

    #[test]
    fn a_snapshot_that_does_not_continue_what_was_seen_is_replayed_itself() {
        let seen = log(9, false);
        // Another log of the same length (a rewind in it): another head hash.
        let other = log(9, true);
        let (one, two) = both(&seen, &snapshot(other.clone()));
        assert_eq!(one, two);
        // Shorter than what was seen.
        let (one, two) = both(&seen, &snapshot(other[..3].to_vec()));
        assert_eq!(one, two);
    }
}
