//! The fold: every projection applied event by event, with rewind semantics.
//!
//! `State` is what the checkpoint holds (per-session state, the journal-wide task store, a small
//! global record, the cost summary and the notification log), stored as partitions so a hook
//! loads only what it touches and a read command only what it answers from. `Full` is the state
//! a full replay builds: every partition, with rewound ranges skipped.

pub use crate::codec::decode;
use crate::codec::encode;
pub use crate::cost_totals::CostRecord;
use crate::cost_totals::CostTotals;
use crate::derived::{self, TaskCommand, TaskOp, TaskReleased};
use crate::event::{self, Canonical};
use crate::index::{IndexShard, SessionSummary};
use crate::kind::{Kind, KindOf};
use crate::session::SessionState;
use crate::tasks::{NewTask, Origin, Task, TaskList, TaskStatus};
use journal::{Envelope, Seq};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The checkpoint's layout. A checkpoint written by an older layout (one without the cost and
/// notification partitions, or with finished tasks in `tasks`; 7: sessions hold the compactions
/// a host announced and its session file confirmed) does not decode or names another layout: it
/// is rebuilt from the log, never extended from where it stands.
pub const LAYOUT: u32 = 7;

/// Journal-wide facts the hook path needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Global {
    /// The last session that ended, per project directory (for restore after `/clear`).
    pub last_ended: BTreeMap<String, String>,
    /// Seq of the last task command (resets every session's reminder counter, lazily).
    pub last_task_command: Seq,
    /// The last event folded.
    pub last_seq: Seq,
    /// Rewinds seen so far: (session, to_seq, at_seq).
    pub rewinds: Vec<(String, Seq, Seq)>,
    /// When each agent was last heard of (µs): its hook events and its task commands. A task
    /// whose owner has been silent longer than the lease is released (see `policy::lease_expired`).
    pub agent_seen: BTreeMap<String, i64>,
    /// The session each host session key was last seen with (OpenClaw's `sessionKey` →
    /// `sessionId`): what an event that names only the key belongs to (`openclaw::resolve_session`).
    pub session_keys: BTreeMap<String, String>,
    /// The layout this checkpoint was written in (`LAYOUT`).
    pub layout: u32,
}

impl Default for Global {
    fn default() -> Global {
        Global {
            last_ended: BTreeMap::new(),
            last_task_command: 0,
            last_seq: 0,
            rewinds: Vec::new(),
            agent_seen: BTreeMap::new(),
            session_keys: BTreeMap::new(),
            layout: LAYOUT,
        }
    }
}

/// Ranges of a session's events that rewinds make every projection ignore.
#[derive(Clone, Debug, Default)]
pub struct Rewinds {
    ranges: BTreeMap<String, Vec<(Seq, Seq)>>,
}

impl Rewinds {
    /// Hides the session's events after `to_seq` and before `at_seq`.
    pub fn add(&mut self, session: &str, to_seq: Seq, at_seq: Seq) {
        self.ranges
            .entry(session.to_string())
            .or_default()
            .push((to_seq, at_seq));
    }
    /// Rewinds from the checkpoint's list `(session, to_seq, at_seq)`.
    pub fn from_list(list: &[(String, Seq, Seq)]) -> Rewinds {
        let mut r = Rewinds::default();
        for (s, to, at) in list {
            r.add(s, *to, *at);
        }
        r
    }
    /// Whether `env` falls in a rewound range of its session. A rewind is an operation on the
    /// log, not one of the session's events: a later rewind never hides (so never undoes) it.
    pub fn hides(&self, env: &Envelope) -> bool {
        let Some(s) = &env.session_id else {
            return false;
        };
        if matches!(env.kind(), Kind::Rewound { .. }) {
            return false;
        }
        self.ranges
            .get(s)
            .is_some_and(|rs| rs.iter().any(|(to, at)| env.seq > *to && env.seq < *at))
    }
}

/// Key of the checkpoint's `Global` partition.
pub const GLOBAL_KEY: &[u8] = b"global";
/// Key of the checkpoint's journal-wide task store: its open tasks (and the next task number).
pub const TASKS_KEY: &[u8] = b"tasks";
/// Key of the journal-wide tasks that are finished (completed, failed, deleted): out of the
/// hook's way, loaded only by the events that can change or reopen them.
pub const TASKS_DONE_KEY: &[u8] = b"tasks-done";
const COST_PREFIX: &[u8] = b"cost:";
const NOTIFICATIONS_PREFIX: &[u8] = b"notifications:";
const INDEX_PREFIX: &[u8] = b"sidx:";
const TOTALS_PREFIX: &[u8] = b"ctot:";

/// The cost summary's responses are split into this many shards by a stable hash (`shard_hash`)
/// of their dedup key, so a usage reading loads and writes one small shard, never the whole
/// summary.
pub const COST_SHARDS: u8 = 64;

/// The notification log is split into chunks of `1 << NOTIFICATION_CHUNK_BITS` seqs: a
/// notification writes its own chunk, a rewind the chunks its range covers.
pub const NOTIFICATION_CHUNK_BITS: u32 = 16;

/// FNV-1a (64-bit): stable across builds and platforms, as a checkpoint's layout must be.
fn shard_hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(*x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The notification chunk holding seq `seq`.
pub fn notification_chunk(seq: Seq) -> u64 {
    seq >> NOTIFICATION_CHUNK_BITS
}
const SESSION_PREFIX: &[u8] = b"sess:";

/// Key of a session's checkpoint partition.
pub fn session_key(id: &str) -> Vec<u8> {
    let mut k = SESSION_PREFIX.to_vec();
    k.extend_from_slice(id.as_bytes());
    k
}

/// One partition of the checkpoint: what a hook loads, folds into and writes back.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Partition {
    /// The small journal-wide record (`Global`).
    Global,
    /// The journal-wide task store's open tasks.
    Tasks,
    /// The journal-wide tasks that are finished.
    TasksDone,
    /// One shard of the cost summary's responses (`CostShard`): changed only by usage readings.
    Cost(u8),
    /// One shard of the cost totals (`crate::cost_totals`), by session like the sessions index:
    /// changed only by usage, metrics and host readings.
    CostTotals(u8),
    /// One chunk of the notification log: changed only by `Notification` hook events and
    /// rewinds.
    Notifications(u64),
    /// One session's state.
    Session(String),
    /// One shard of the sessions index (`crate::index`): the summaries of the sessions whose
    /// id hashes to it.
    SessionIndex(u8),
}

impl Partition {
    /// Its key in the checkpoint store.
    pub fn key(&self) -> Vec<u8> {
        match self {
            Partition::Global => GLOBAL_KEY.to_vec(),
            Partition::Tasks => TASKS_KEY.to_vec(),
            Partition::TasksDone => TASKS_DONE_KEY.to_vec(),
            Partition::Cost(n) => [COST_PREFIX, format!("{n:02}").as_bytes()].concat(),
            Partition::Notifications(c) => {
                [NOTIFICATIONS_PREFIX, format!("{c:08}").as_bytes()].concat()
            }
            Partition::Session(id) => session_key(id),
            Partition::SessionIndex(n) => [INDEX_PREFIX, format!("{n:02x}").as_bytes()].concat(),
            Partition::CostTotals(n) => [TOTALS_PREFIX, format!("{n:02x}").as_bytes()].concat(),
        }
    }

    /// The partition stored under `key`; `None` for a key that is none of them.
    pub fn from_key(key: &[u8]) -> Option<Partition> {
        if key == GLOBAL_KEY {
            Some(Partition::Global)
        } else if key == TASKS_KEY {
            Some(Partition::Tasks)
        } else if key == TASKS_DONE_KEY {
            Some(Partition::TasksDone)
        } else if let Some(n) = key.strip_prefix(COST_PREFIX) {
            let n = std::str::from_utf8(n).ok()?.parse().ok()?;
            (n < COST_SHARDS).then_some(Partition::Cost(n))
        } else if let Some(n) = key.strip_prefix(INDEX_PREFIX) {
            hex_shard(n).map(Partition::SessionIndex)
        } else if let Some(n) = key.strip_prefix(TOTALS_PREFIX) {
            hex_shard(n).map(Partition::CostTotals)
        } else if let Some(c) = key.strip_prefix(NOTIFICATIONS_PREFIX) {
            Some(Partition::Notifications(
                std::str::from_utf8(c).ok()?.parse().ok()?,
            ))
        } else {
            let id = key.strip_prefix(SESSION_PREFIX)?;
            Some(Partition::Session(String::from_utf8_lossy(id).into_owned()))
        }
    }

    /// How messages name it (`checkpoint partition `global``, `the checkpoint of session S`).
    pub fn describe(&self) -> String {
        match self {
            Partition::Global => "checkpoint partition `global`".into(),
            Partition::Tasks => "checkpoint partition `tasks`".into(),
            Partition::TasksDone => "checkpoint partition `tasks-done`".into(),
            Partition::Cost(_)
            | Partition::Notifications(_)
            | Partition::SessionIndex(_)
            | Partition::CostTotals(_) => {
                format!(
                    "checkpoint partition `{}`",
                    String::from_utf8_lossy(&self.key())
                )
            }
            Partition::Session(id) => format!("the checkpoint of session {id}"),
        }
    }
}

/// A shard number written as two hex digits (`sidx:0a`, `ctot:ff`).
fn hex_shard(n: &[u8]) -> Option<u8> {
    let n = std::str::from_utf8(n).ok()?;
    (n.len() == 2)
        .then(|| u8::from_str_radix(n, 16).ok())
        .flatten()
}

/// The partitions folding `env` reads and may change: the global record always, the journal-wide
/// tasks (open and finished) for the only events that change them (task commands and releases),
/// every session it touches (`State::sessions_touched`), the cost
/// summary for the readings it sums and the notification log for notifications and rewinds (so
/// an ordinary hook never loads those). A hook loads exactly these before folding an event, and
/// a checkpoint built that way equals a full replay.
pub fn partitions_for(env: &Envelope) -> Vec<Partition> {
    let mut out = vec![Partition::Global];
    if matches!(env.kind(), Kind::TaskCommand | Kind::TaskReleased { .. }) {
        out.push(Partition::Tasks);
        out.push(Partition::TasksDone);
    }
    out.extend(CostShard::shard_of(env).map(Partition::Cost));
    out.extend(CostTotals::shard_of(env).map(Partition::CostTotals));
    out.extend(
        NotificationLog::chunks_changed_by(env)
            .into_iter()
            .map(Partition::Notifications),
    );
    for s in State::sessions_touched(env) {
        out.push(Partition::SessionIndex(crate::index::shard_of(&s)));
        out.push(Partition::Session(s));
    }
    out
}

/// What the checkpoint holds, stored as partitions. A hook's state holds only the partitions it
/// loaded (a session, cost shard or notification chunk it did not load is absent from its map,
/// so not written back).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// Each session's state.
    pub sessions: BTreeMap<String, SessionState>,
    /// The journal-wide task store.
    pub tasks: TaskList,
    /// The small journal-wide record.
    pub global: Global,
    /// The cost summary's response shards held, by shard.
    pub cost: BTreeMap<u8, CostShard>,
    /// The cost totals' shards held, by shard.
    pub totals: BTreeMap<u8, CostTotals>,
    /// The notification log's chunks held, by chunk.
    pub notifications: BTreeMap<u64, NotificationLog>,
    /// The sessions index's shards held, by shard.
    pub index: BTreeMap<u8, IndexShard>,
    /// The sessions changed since they were loaded, by index shard: their summaries are
    /// refreshed when their shard is encoded.
    pub changed: Changed,
}

/// Bookkeeping for the index, not state: two states holding the same partitions are equal
/// whatever they changed to get there.
#[derive(Clone, Debug, Default)]
pub struct Changed(BTreeMap<u8, BTreeSet<String>>);

impl PartialEq for Changed {
    fn eq(&self, _: &Changed) -> bool {
        true
    }
}

/// The global record, when its bytes decode and are of this layout.
pub fn decode_global(b: &[u8]) -> Option<Global> {
    decode::<Global>(b).filter(|g| g.layout == LAYOUT)
}

impl State {
    /// The session ids an event touches (its own, or a task command's target).
    pub fn sessions_touched(env: &Envelope) -> Vec<String> {
        let mut out: Vec<String> = env.session_id.iter().cloned().collect();
        match &env.kind() {
            Kind::TaskCommand => {
                if let Some(c) = derived::parse::<TaskCommand>(&env.payload) {
                    out.extend(c.task.session);
                }
            }
            Kind::TaskReleased { .. } => {
                if let Some(c) = derived::parse::<TaskReleased>(&env.payload) {
                    out.extend(c.task.session);
                }
            }
            _ => {}
        }
        out
    }

    fn saw_agent(&mut self, agent: &str, at_us: i64) {
        let seen = self.global.agent_seen.entry(agent.to_string()).or_default();
        *seen = (*seen).max(at_us);
    }

    /// A session's own tasks, or the journal-wide store.
    fn task_list(&mut self, session: Option<&str>) -> &mut TaskList {
        match session {
            Some(s) => &mut self.session_mut(s).tasks,
            None => &mut self.tasks,
        }
    }

    /// The session's state, created empty when new.
    pub fn session_mut(&mut self, id: &str) -> &mut SessionState {
        let n = crate::index::shard_of(id);
        let changed = self.changed.0.entry(n).or_default();
        if !changed.contains(id) {
            changed.insert(id.to_string());
            // A full fold creates the shards as it meets their sessions (a hook loaded them).
            self.index.entry(n).or_default();
        }
        self.sessions
            .entry(id.to_string())
            .or_insert_with(|| SessionState::new(id))
    }

    /// Folds a reading into its cost shard and the cost totals. Rewinds never hide these: money
    /// spent stays spent.
    pub fn apply_cost(&mut self, env: &Envelope) {
        let Some(t) = CostTotals::shard_of(env) else {
            return;
        };
        let totals = self.totals.entry(t).or_default();
        match &env.kind() {
            Kind::UsageObserved { .. } => {
                let Some(n) = CostShard::shard_of(env) else {
                    return;
                };
                if let Some((old, new)) = self.cost.entry(n).or_default().apply(env) {
                    totals.replace(old.as_ref(), &new);
                }
            }
            _ => totals.apply_reported(env),
        }
    }

    /// The whole cost summary, its shards merged (they hold disjoint keys).
    pub fn cost_summary(&self) -> CostSummary {
        let mut all = CostSummary::default();
        for c in self.cost.values() {
            all.by_key
                .extend(c.by_key.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        for t in self.totals.values() {
            all.reported
                .extend(t.reported.iter().map(|(k, v)| (k.clone(), v.clone())));
            all.host
                .extend(t.host.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        all
    }

    /// Every deduplicated response, the cost shards moved out of the state (no copy).
    pub fn take_responses(&mut self) -> BTreeMap<String, CostRecord> {
        let mut all = BTreeMap::new();
        for c in std::mem::take(&mut self.cost).into_values() {
            all.extend(c.by_key);
        }
        all
    }

    /// The cost totals, their shards moved out of the state and merged.
    pub fn take_cost_totals(&mut self) -> crate::cost_totals::Merged {
        CostTotals::merged(std::mem::take(&mut self.totals))
    }

    /// Every notification still counted, oldest first (chunks are in seq order).
    pub fn notifications(&self) -> impl DoubleEndedIterator<Item = &NotificationEntry> + '_ {
        self.notifications.values().flat_map(NotificationLog::iter)
    }

    /// Applies one event. Rewound ranges are the caller's to skip (see `Full::apply`).
    pub fn apply(&mut self, env: &Envelope) {
        self.apply_parsed(env, None);
    }

    /// `apply`, given what a hook event's payload says when the caller has parsed it already
    /// (`event::from_envelope(env)`, as the hook has for its own invocation): the payload is
    /// then not parsed a second time. `None`: parsed here when the event is a hook event.
    pub fn apply_parsed(&mut self, env: &Envelope, parsed: Option<&event::HookEvent>) {
        self.global.last_seq = env.seq;
        self.apply_cost(env);
        if let Some(a) = &env.agent_id {
            self.saw_agent(a, env.recorded_at_us);
        }
        match &env.kind() {
            Kind::Hook { .. } => {
                let owned;
                let ev = match parsed {
                    Some(ev) => ev,
                    None => {
                        let Some(ev) = event::from_envelope(env) else {
                            return;
                        };
                        owned = ev;
                        &owned
                    }
                };
                if let (Some(name), None) = (&ev.agent_name, &ev.agent_id) {
                    self.saw_agent(name, env.recorded_at_us);
                }
                if let Some(n) = NotificationEntry::from_hook(env, ev) {
                    self.notifications
                        .entry(notification_chunk(env.seq))
                        .or_default()
                        .push(env.session_id.clone(), n);
                }
                if let (Some(key), Some(sid)) = (&ev.session_key, &ev.session_id) {
                    if self.global.session_keys.get(key) != Some(sid) {
                        self.global.session_keys.insert(key.clone(), sid.clone());
                    }
                }
                // An event that names only its session key was given its session at ingestion.
                let Some(sid) = ev.session_id.clone().or_else(|| env.session_id.clone()) else {
                    return;
                };
                let last_cmd = self.global.last_task_command;
                let s = self.session_mut(&sid);
                s.apply_hook(env, ev, last_cmd);
                match &ev.canonical {
                    Canonical::SessionEnd { .. } => {
                        if let Some(cwd) = &s.cwd {
                            let cwd = cwd.clone();
                            self.global.last_ended.insert(cwd, sid);
                        }
                    }
                    // A fork (Claude Code's `--resume ID --fork-session`) is a new session whose
                    // payload does not name its parent: the session that last ended here.
                    Canonical::SessionStart { source } if source == "clear" || source == "fork" => {
                        let cwd = s.cwd.clone();
                        let prev = ev
                            .continues
                            .clone()
                            .or_else(|| cwd.and_then(|c| self.global.last_ended.get(&c).cloned()))
                            .filter(|p| *p != sid);
                        self.session_mut(&sid).continues = prev;
                    }
                    _ => {}
                }
            }
            Kind::Malformed { .. } => {}
            Kind::TaskCommand => {
                let Some(c) = derived::parse::<TaskCommand>(&env.payload) else {
                    return;
                };
                self.apply_task_command(env, &c);
                self.global.last_task_command = env.seq;
            }
            Kind::TaskReleased { .. } => {
                let Some(r) = derived::parse::<TaskReleased>(&env.payload) else {
                    return;
                };
                let o = Origin {
                    seq: env.seq,
                    at_us: env.recorded_at_us,
                    by: "release",
                };
                self.task_list(r.task.session.as_deref())
                    .fail(&r.task.id, &r.reason, o);
            }
            Kind::Rewound { session, to_seq } => {
                self.global
                    .rewinds
                    .push((session.clone(), *to_seq, env.seq));
                for c in NotificationLog::chunks_changed_by(env) {
                    self.notifications
                        .entry(c)
                        .or_default()
                        .rewind(session, *to_seq, env.seq);
                }
            }
            _ => self.apply_reading(env),
        }
    }

    /// Folds a derived event into its session: a usage reading another session counted first
    /// is kept apart (`SessionState::copied_usage`).
    pub fn apply_reading(&mut self, env: &Envelope) {
        let Some(sid) = &env.session_id else {
            return;
        };
        let copied = self.counted_by_another(env, sid);
        let s = self.session_mut(sid);
        match copied {
            Some((key, owner)) => {
                // Claude Code 2.1.197 starts a fork with the parent's SessionStart(resume) and
                // names no parent anywhere: the copies name it.
                if s.continues.is_none() {
                    s.continues = Some(owner);
                }
                s.copied_usage(env, key)
            }
            None => s.apply_derived(env),
        }
    }

    /// The dedup key of a usage reading another session counted first, and that session (its
    /// cost shard, folded already, names the owner): a fork's transcript (Claude Code's `--fork-session`) starts with
    /// its parent's messages, ids and all. Like ccusage, each API request counts once, where it
    /// was first seen.
    fn counted_by_another(&self, env: &Envelope, sid: &str) -> Option<(String, String)> {
        if !matches!(env.kind(), Kind::UsageObserved { .. }) {
            return None;
        }
        let u = derived::usage(&env.payload)?;
        let key = CostSummary::key(&u.record);
        let shard = CostShard::shard_of(env)?;
        let owner = &self.cost.get(&shard)?.by_key.get(&key)?.session;
        (owner != sid).then(|| (key, owner.clone()))
    }

    fn apply_task_command(&mut self, env: &Envelope, c: &TaskCommand) {
        let o = Origin {
            seq: env.seq,
            at_us: env.recorded_at_us,
            by: "cli",
        };
        let sess = c.task.session.clone();
        let sess = sess.as_deref();
        let list = self.task_list(sess);
        let id = c.task.id.as_str();
        let reason = c.reason.as_deref();
        match c.op {
            TaskOp::Add => list.create(
                NewTask {
                    subject: c.subject.as_deref(),
                    description: c.description.as_deref(),
                    owner: c.agent.as_deref(),
                    ..NewTask::new(sess, id)
                },
                o,
            ),
            TaskOp::Start | TaskOp::Claim => start_task(list, sess, id, c, o),
            TaskOp::Done => {
                if list
                    .get(id)
                    .is_some_and(|t| t.status == TaskStatus::Deleted)
                {
                    return;
                }
                list.set_status(sess, id, TaskStatus::Completed, o, reason);
            }
            TaskOp::Fail => {
                list.fail(id, reason.unwrap_or("failed"), o);
            }
            TaskOp::Reopen
                if list
                    .get(id)
                    .is_some_and(|t| t.status != TaskStatus::Pending) =>
            {
                list.set_status(sess, id, TaskStatus::Pending, o, reason);
                list.set_owner(id, None, o);
            }
            TaskOp::Delete => {
                list.set_status(sess, id, TaskStatus::Deleted, o, reason);
            }
            TaskOp::Reopen | TaskOp::Unknown => {}
        }
    }

    /// Every partition the state holds, encoded (deterministic: the same state gives the same
    /// bytes). The open tasks' partition only when a journal-wide task was ever created, the
    /// finished tasks' only when there is a finished task: a hook that folds no task command
    /// never loads or writes them, so a journal without journal-wide tasks has neither.
    pub fn partitions(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = vec![(GLOBAL_KEY.to_vec(), encode(&self.global))];
        if self.has_task_store() {
            out.push((TASKS_KEY.to_vec(), self.encode_tasks()));
        }
        // No finished task, no partition (a journal that never finished one has none).
        if self.tasks.tasks.values().any(|t| !t.status.is_open()) {
            out.push((TASKS_DONE_KEY.to_vec(), self.encode_tasks_done()));
        }
        for (n, c) in &self.cost {
            out.push((Partition::Cost(*n).key(), encode(c)));
        }
        for (n, t) in &self.totals {
            out.push((Partition::CostTotals(*n).key(), encode(t)));
        }
        for (n, c) in &self.notifications {
            out.push((Partition::Notifications(*n).key(), encode(c)));
        }
        for (id, s) in &self.sessions {
            out.push((session_key(id), encode(s)));
        }
        for n in self.index.keys() {
            out.extend(
                self.encode_index_shard(*n)
                    .map(|b| (Partition::SessionIndex(*n).key(), b)),
            );
        }
        out
    }

    /// Shard `n` of the sessions index with the summaries of the sessions changed since loading
    /// refreshed, encoded; `None` when the state does not hold it, or it is empty (an empty
    /// shard is no partition, as in a full replay).
    fn encode_index_shard(&self, n: u8) -> Option<Vec<u8>> {
        let stored = self.index.get(&n)?;
        let fresh: Vec<(&String, SessionSummary)> = self
            .changed
            .0
            .get(&n)
            .into_iter()
            .flatten()
            .filter_map(|id| Some((id, SessionSummary::of(self.sessions.get(id)?))))
            .collect();
        if fresh.is_empty() {
            return (!stored.is_empty()).then(|| encode(stored));
        }
        // The stored shard by reference with the fresh summaries over it: the same bytes as
        // the updated `IndexShard`, without cloning the shard's other summaries.
        let mut shard: BTreeMap<&String, &SessionSummary> = stored.iter().collect();
        shard.extend(fresh.iter().map(|(id, s)| (*id, s)));
        Some(encode(&shard))
    }

    /// Writes the summaries of the sessions changed so far into their index shards, so the
    /// sessions can be let go and their shards written later (a long import).
    pub fn settle_index(&mut self) {
        for (n, ids) in std::mem::take(&mut self.changed.0) {
            let shard = self.index.entry(n).or_default();
            for id in ids {
                if let Some(s) = self.sessions.get(&id) {
                    shard.insert(id, SessionSummary::of(s));
                }
            }
        }
    }

    /// Every summary of the index shards held (refreshed as `partitions` writes them), one per
    /// session, in no particular order.
    pub fn summaries(&self) -> Vec<(&String, std::borrow::Cow<'_, SessionSummary>)> {
        let changed: std::collections::HashSet<&String> = self
            .changed
            .0
            .values()
            .flatten()
            .filter(|id| self.sessions.contains_key(*id))
            .collect();
        let mut out: Vec<_> = self
            .index
            .values()
            .flat_map(|shard| shard.iter())
            .filter(|(k, _)| !changed.contains(k))
            .map(|(k, v)| (k, std::borrow::Cow::Borrowed(v)))
            .collect();
        for id in changed {
            if let Some((k, s)) = self.sessions.get_key_value(id) {
                out.push((k, std::borrow::Cow::Owned(SessionSummary::of(s))));
            }
        }
        out
    }

    /// `summaries`, in the order the sessions started (first seq, then id).
    pub fn summaries_by_start(&self) -> Vec<(&String, std::borrow::Cow<'_, SessionSummary>)> {
        // Sorted by key, each summary then moved once: a summary is hundreds of bytes, and
        // sorting them in place moved each many times (a tenth of `sessions` at 13,699).
        let all = self.summaries();
        let mut keys: Vec<(u64, &String, usize)> = all
            .iter()
            .enumerate()
            .map(|(i, (id, s))| (s.first_seq, *id, i))
            .collect();
        keys.sort_unstable();
        let mut slots: Vec<Option<_>> = all.into_iter().map(Some).collect();
        keys.into_iter()
            .filter_map(|(_, _, i)| slots[i].take())
            .collect()
    }

    /// The encoded partition `p`; `None` for a session the state does not hold.
    pub fn encode_partition(&self, p: &Partition) -> Option<Vec<u8>> {
        match p {
            Partition::Global => Some(self.encode_global()),
            Partition::Tasks => self.has_task_store().then(|| self.encode_tasks()),
            Partition::TasksDone => Some(self.encode_tasks_done()),
            Partition::Cost(n) => self.cost.get(n).map(encode),
            Partition::Notifications(c) => self.notifications.get(c).map(encode),
            Partition::Session(id) => self.sessions.get(id).map(State::encode_session),
            Partition::SessionIndex(n) => self.encode_index_shard(*n),
            Partition::CostTotals(n) => self.totals.get(n).map(encode),
        }
    }

    /// Whether the state holds partition `p` (the global record always).
    pub fn holds(&self, p: &Partition) -> bool {
        match p {
            Partition::Global => true,
            // Whether the journal-wide tasks were loaded is the loader's to track (`Loaded`):
            // an empty task store and one not loaded look alike.
            Partition::Tasks | Partition::TasksDone => false,
            Partition::Cost(n) => self.cost.contains_key(n),
            Partition::Notifications(c) => self.notifications.contains_key(c),
            Partition::Session(id) => self.sessions.contains_key(id),
            Partition::SessionIndex(n) => self.index.contains_key(n),
            Partition::CostTotals(n) => self.totals.contains_key(n),
        }
    }

    /// Loads partition `p` as the checkpoint has it: its bytes decoded, or — when the checkpoint
    /// does not hold it — empty (a session absent stays absent: it is created when folded).
    pub fn load_partition(&mut self, p: &Partition, bytes: Option<&[u8]>) -> Result<(), String> {
        match (p, bytes) {
            (_, Some(b)) => self.decode_partition(p, b),
            (Partition::Cost(n), None) => {
                self.cost.entry(*n).or_default();
                Ok(())
            }
            (Partition::Notifications(c), None) => {
                self.notifications.entry(*c).or_default();
                Ok(())
            }
            (Partition::SessionIndex(n), None) => {
                self.index.entry(*n).or_default();
                Ok(())
            }
            (Partition::CostTotals(n), None) => {
                self.totals.entry(*n).or_default();
                Ok(())
            }
            (_, None) => Ok(()),
        }
    }

    /// Decodes partition `p` into the state (replacing what it held of it); an error when the
    /// bytes do not decode, and then the state is unchanged.
    pub fn decode_partition(&mut self, p: &Partition, bytes: &[u8]) -> Result<(), String> {
        let what = || format!("{} does not decode", p.describe());
        match p {
            Partition::Global => self.global = decode_global(bytes).ok_or_else(what)?,
            Partition::Tasks => self.merge_tasks(decode(bytes).ok_or_else(what)?),
            Partition::TasksDone => {
                let done: BTreeMap<String, Task> = decode(bytes).ok_or_else(what)?;
                self.tasks.tasks.extend(done);
            }
            Partition::Cost(n) => {
                self.cost.insert(*n, decode(bytes).ok_or_else(what)?);
            }
            Partition::Notifications(c) => {
                self.notifications
                    .insert(*c, decode(bytes).ok_or_else(what)?);
            }
            Partition::Session(id) => {
                let s = decode(bytes).ok_or_else(what)?;
                self.sessions.insert(id.clone(), s);
            }
            Partition::SessionIndex(n) => {
                self.index.insert(*n, decode(bytes).ok_or_else(what)?);
            }
            Partition::CostTotals(n) => {
                self.totals.insert(*n, decode(bytes).ok_or_else(what)?);
            }
        }
        Ok(())
    }

    /// One session's partition, encoded.
    pub fn encode_session(s: &SessionState) -> Vec<u8> {
        encode(s)
    }
    /// Whether the journal-wide task store is more than empty: a task in it, or a number taken.
    fn has_task_store(&self) -> bool {
        self.tasks.next_number != 0 || !self.tasks.tasks.is_empty()
    }

    /// The journal-wide open tasks' partition (with the next task number), encoded.
    pub fn encode_tasks(&self) -> Vec<u8> {
        /// `TaskList` by reference: the same bytes, without cloning every open task.
        #[derive(Serialize)]
        struct OpenTasks<'a> {
            tasks: BTreeMap<&'a String, &'a Task>,
            next_number: u64,
        }
        encode(&OpenTasks {
            tasks: self
                .tasks
                .tasks
                .iter()
                .filter(|(_, t)| t.status.is_open())
                .collect(),
            next_number: self.tasks.next_number,
        })
    }
    /// The journal-wide finished tasks' partition, encoded.
    pub fn encode_tasks_done(&self) -> Vec<u8> {
        let done: BTreeMap<&String, &Task> = self
            .tasks
            .tasks
            .iter()
            .filter(|(_, t)| !t.status.is_open())
            .collect();
        encode(&done)
    }
    /// Adds a decoded `tasks` partition to the journal-wide store (which may already hold the
    /// finished tasks). A partition written before the split holds finished tasks too.
    fn merge_tasks(&mut self, list: TaskList) {
        self.tasks.next_number = list.next_number;
        self.tasks.tasks.extend(list.tasks);
    }
    /// The global partition, encoded.
    pub fn encode_global(&self) -> Vec<u8> {
        encode(&self.global)
    }

    /// Rebuilds a state from partitions. Unreadable partitions are an error for the caller.
    pub fn from_partitions(parts: &[(Vec<u8>, Vec<u8>)]) -> Result<State, String> {
        let mut st = State::default();
        for (k, v) in parts {
            match Partition::from_key(k) {
                Some(Partition::Global) => {
                    st.global = decode_global(v).ok_or("global partition does not decode")?
                }
                Some(Partition::Tasks) => {
                    st.merge_tasks(decode(v).ok_or("tasks partition does not decode")?)
                }
                Some(Partition::TasksDone) => {
                    let done: BTreeMap<String, Task> =
                        decode(v).ok_or("tasks-done partition does not decode")?;
                    st.tasks.tasks.extend(done);
                }
                Some(
                    p @ (Partition::Cost(_)
                    | Partition::Notifications(_)
                    | Partition::SessionIndex(_)
                    | Partition::CostTotals(_)),
                ) => st.decode_partition(&p, v)?,
                Some(Partition::Session(id)) => {
                    let s: SessionState = decode(v)
                        .ok_or_else(|| format!("session partition {id} does not decode"))?;
                    st.sessions.insert(id, s);
                }
                None => {}
            }
        }
        Ok(st)
    }

    /// All tasks: journal-wide first, then each session's.
    pub fn all_tasks(&self) -> Vec<&crate::tasks::Task> {
        let mut v: Vec<_> = self.tasks.tasks.values().collect();
        for s in self.sessions.values() {
            v.extend(s.tasks.tasks.values());
        }
        v
    }
}

/// `start` and `claim`. A task another agent holds is never taken over: the first claim in the
/// log wins. `start` of an unknown id creates it in progress; `claim` needs an existing task.
fn start_task(list: &mut TaskList, sess: Option<&str>, id: &str, c: &TaskCommand, o: Origin) {
    let Some(t) = list.get(id) else {
        if c.op == TaskOp::Start {
            list.set_status(sess, id, TaskStatus::InProgress, o, None);
            list.set_owner(id, c.agent.as_deref(), o);
        }
        return;
    };
    if !t.status.is_open() || crate::tasks::held_by_other(t, c.agent.as_deref()) {
        return;
    }
    list.set_status(sess, id, TaskStatus::InProgress, o, None);
    if c.agent.is_some() {
        list.set_owner(id, c.agent.as_deref(), o);
    }
}

/// The whole cost summary, as full-log reports read it: every deduplicated response, plus the
/// costs hosts reported themselves. Stored split: the responses in the `Cost` shards (by dedup
/// key), the per-session figures in the `CostTotals` shards (by session).
/// The cost summary ignores rewinds on purpose: money spent stays spent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostSummary {
    /// The responses by `message_id:request_id`.
    pub by_key: BTreeMap<String, CostRecord>,
    /// Sessions' own reported metrics (hosts that put cost in payloads): last value per session.
    pub reported: BTreeMap<String, derived::SessionMetrics>,
    /// What the host itself reported per session (statusline readings), over every epoch.
    pub host: BTreeMap<String, crate::reported::HostFigures>,
}

impl CostSummary {
    /// A response's dedup key, like ccusage's: `message_id:request_id`.
    pub(crate) fn key(r: &crate::transcript::UsageRecord) -> String {
        format!("{}:{}", r.message_id, r.request_id)
    }
}

/// One shard of the cost summary's responses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostShard {
    /// The responses by `message_id:request_id`.
    pub by_key: BTreeMap<String, CostRecord>,
}

impl CostShard {
    /// The shard a usage reading changes, by its response's dedup key; `None` for other events.
    pub fn shard_of(env: &Envelope) -> Option<u8> {
        if !matches!(env.kind(), Kind::UsageObserved { .. }) {
            return None;
        }
        let u = derived::usage(&env.payload)?;
        let h = shard_hash(CostSummary::key(&u.record).as_bytes());
        Some((h % u64::from(COST_SHARDS)) as u8)
    }

    /// Folds a usage reading: `Some((replaced, counted))` when it changed what is counted (a new
    /// response, or a larger reading of one counted, which replaces it like ccusage's).
    pub fn apply(&mut self, env: &Envelope) -> Option<(Option<CostRecord>, CostRecord)> {
        if !matches!(env.kind(), Kind::UsageObserved { .. }) {
            return None;
        }
        let u = derived::usage(&env.payload)?;
        let key = CostSummary::key(&u.record);
        match self.by_key.get_mut(&key) {
            Some(old) => {
                // Like ccusage: the larger reading replaces the whole record.
                if !crate::transcript::larger(&u.record.usage, &old.usage) {
                    return None;
                }
                let before = old.clone();
                old.usage = u.record.usage;
                old.model = u.record.model.clone();
                old.timestamp = u.record.timestamp.clone();
                Some((Some(before), old.clone()))
            }
            None => {
                let r = CostRecord {
                    session: env.session_id.clone().unwrap_or_default(),
                    agent_id: u.agent_id.clone(),
                    model: u.record.model.clone(),
                    timestamp: u.record.timestamp.clone(),
                    usage: u.record.usage,
                };
                self.by_key.insert(key, r.clone());
                Some((None, r))
            }
        }
    }
}

impl CostTotals {
    /// The shard an event changes: the shard of its session (`crate::index::shard_of`) for
    /// usage, metrics and host readings; `None` for events the totals ignore (and for metrics
    /// or host readings without a session).
    pub fn shard_of(env: &Envelope) -> Option<u8> {
        match &env.kind() {
            Kind::UsageObserved { .. } => Some(crate::index::shard_of(
                env.session_id.as_deref().unwrap_or_default(),
            )),
            Kind::SessionMetrics { .. } | Kind::HostReported => {
                Some(crate::index::shard_of(env.session_id.as_deref()?))
            }
            _ => None,
        }
    }

    /// Folds a session's metrics or host reading (other kinds are ignored).
    pub fn apply_reported(&mut self, env: &Envelope) {
        match &env.kind() {
            Kind::SessionMetrics { .. } => {
                if let (Some(s), Some(m)) = (
                    &env.session_id,
                    derived::parse::<derived::SessionMetrics>(&env.payload),
                ) {
                    if !m.payload.is_empty() {
                        self.reported.insert(s.clone(), m);
                    }
                }
            }
            Kind::HostReported => {
                if let (Some(s), Some(r)) = (
                    &env.session_id,
                    derived::parse::<derived::HostReported>(&env.payload),
                ) {
                    self.host
                        .entry(s.clone())
                        .or_default()
                        .apply(env.seq, env.recorded_at_us, &r);
                }
            }
            _ => {}
        }
    }
}

/// A notification the host showed the user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationEntry {
    /// The event's seq.
    pub seq: Seq,
    /// When (µs).
    pub at_us: i64,
    /// Its session.
    pub session: Option<String>,
    /// `notification_type` (`idle_prompt`, `permission_prompt`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its title.
    pub title: Option<String>,
    /// Its message.
    pub message: String,
}

impl NotificationEntry {
    /// The notification a hook event carries, if it is one.
    pub fn from_event(env: &Envelope) -> Option<NotificationEntry> {
        if !NotificationLog::is_notification(&env.kind()) {
            return None;
        }
        NotificationEntry::from_hook(env, &event::from_envelope(env)?)
    }

    /// The notification a parsed hook event carries, if it is one (a `Notification` hook event
    /// whose payload reads as one).
    pub fn from_hook(env: &Envelope, ev: &event::HookEvent) -> Option<NotificationEntry> {
        if !NotificationLog::is_notification(&env.kind()) {
            return None;
        }
        let Canonical::Notification {
            kind,
            title,
            message,
        } = &ev.canonical
        else {
            return None;
        };
        Some(NotificationEntry {
            seq: env.seq,
            at_us: env.recorded_at_us,
            session: ev.session_id.clone(),
            kind: kind.clone(),
            title: title.clone(),
            message: message.clone(),
        })
    }
}

/// Every notification still counted, in log order. Each remembers its envelope's session, the
/// one a rewind names (`Rewinds::hides`), so a rewind removes exactly what a full replay skips.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationLog {
    entries: Vec<(Option<String>, NotificationEntry)>,
}

impl NotificationLog {
    /// The chunks an event can change: a notification's own, and for a rewind every chunk its
    /// hidden range (after `to_seq`, before the rewind) covers.
    pub fn chunks_changed_by(env: &Envelope) -> Vec<u64> {
        match &env.kind() {
            k if NotificationLog::is_notification(k) => vec![notification_chunk(env.seq)],
            Kind::Rewound { to_seq, .. } if to_seq.saturating_add(1) < env.seq => {
                (notification_chunk(to_seq + 1)..=notification_chunk(env.seq - 1)).collect()
            }
            _ => Vec::new(),
        }
    }

    fn is_notification(kind: &Kind) -> bool {
        matches!(kind, Kind::Hook { name } if name == "Notification")
    }

    fn push(&mut self, envelope_session: Option<String>, n: NotificationEntry) {
        self.entries.push((envelope_session, n));
    }

    /// A rewind recorded at `at_seq`: the session's notifications after `to_seq` no longer count.
    fn rewind(&mut self, session: &str, to_seq: Seq, at_seq: Seq) {
        self.entries
            .retain(|(s, n)| !(s.as_deref() == Some(session) && n.seq > to_seq && n.seq < at_seq));
    }

    /// The notifications, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &NotificationEntry> + '_ {
        self.entries.iter().map(|(_, n)| n)
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Everything a full replay builds: the whole state (every partition).
#[derive(Clone, Debug)]
pub struct Full {
    /// The state, every partition held.
    pub state: State,
    /// Events folded (hidden ones included).
    pub events: u64,
    /// The rewinds whose ranges are skipped.
    pub rewinds: Rewinds,
}

impl Default for Full {
    fn default() -> Full {
        Full::with_rewinds(Rewinds::default())
    }
}

impl Full {
    /// A fold that knows the rewinds in advance (collect them first with `collect_rewind`).
    pub fn with_rewinds(rewinds: Rewinds) -> Full {
        Full {
            state: State::default(),
            events: 0,
            rewinds,
        }
    }

    /// The cost summary (its shards merged).
    pub fn cost(&self) -> CostSummary {
        self.state.cost_summary()
    }

    /// Every notification still counted, oldest first.
    pub fn notifications(&self) -> impl DoubleEndedIterator<Item = &NotificationEntry> + '_ {
        self.state.notifications()
    }

    /// Folds one event: the cost always, the rest unless a rewind hides it.
    pub fn apply(&mut self, env: &Envelope) {
        self.events += 1;
        if self.rewinds.hides(env) {
            self.state.apply_cost(env);
            self.state.global.last_seq = env.seq;
            // A rewind changes what the agent did, not what was measured: usage and context
            // readings (and the transcript positions they carry) stay, like the cost summary.
            if matches!(
                env.kind(),
                Kind::UsageObserved { .. } | Kind::ContextObserved { .. } | Kind::HostReported
            ) {
                self.state.apply_reading(env);
            }
            return;
        }
        self.state.apply(env);
    }
}

/// Pass one of a full replay: the rewinds, so pass two can skip what they hide.
pub fn collect_rewind(rewinds: &mut Rewinds, env: &Envelope) {
    if let Kind::Rewound { session, to_seq } = &env.kind() {
        rewinds.add(session, *to_seq, env.seq);
    }
}

/// Compares a checkpoint with a full replay: the partitions that differ, by key (`verify`,
/// `import`).
pub fn partition_diff(checkpoint: &State, replayed: &State) -> Vec<String> {
    let a: std::collections::BTreeMap<_, _> = checkpoint.partitions().into_iter().collect();
    let b: std::collections::BTreeMap<_, _> = replayed.partitions().into_iter().collect();
    let mut out = Vec::new();
    for (k, v) in &b {
        if a.get(k) != Some(v) {
            out.push(String::from_utf8_lossy(k).into_owned());
        }
    }
    for k in a.keys() {
        if !b.contains_key(k) {
            out.push(format!(
                "{} (not in the replay)",
                String::from_utf8_lossy(k)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewound(seq: Seq, to_seq: Seq) -> Envelope {
        Envelope {
            seq,
            recorded_at_us: 0,
            host: "cli".into(),
            kind: Kind::Rewound {
                session: "s".into(),
                to_seq,
            }
            .into(),
            session_id: Some("s".into()),
            agent_id: None,
            payload: b"{}".to_vec(),
            truncated: None,
            spooled: false,
            prev: journal::ZERO_HASH,
            hash: journal::ZERO_HASH,
        }
    }

    /// A rewind whose range covers an earlier rewind's event leaves it in force: the checkpoint's
    /// list of rewinds is the log's, as a two-pass replay (`collect_rewind`) counts them.
    #[test]
    fn a_later_rewind_never_hides_an_earlier_one() {
        let events = [rewound(10, 5), rewound(11, 8)];
        let mut collected = Rewinds::default();
        for e in &events {
            collect_rewind(&mut collected, e);
        }
        let mut full = Full::with_rewinds(collected);
        for e in &events {
            full.apply(e);
        }
        assert_eq!(
            full.state.global.rewinds,
            vec![("s".to_string(), 5, 10), ("s".to_string(), 8, 11)]
        );
    }
}
