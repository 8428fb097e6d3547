//! The fold: every projection applied event by event, with rewind semantics.
//!
//! `State` is what the hook path needs and checkpoints (per-session state, the journal-wide task
//! store, a small global record), stored as partitions so a hook loads only what it touches.
//! `Full` adds the projections only the CLI reads (cost, notifications), rebuilt by full replay.

use crate::derived::{self, TaskCommand, TaskOp, TaskReleased};
use crate::event::{self, Canonical};
use crate::session::SessionState;
use crate::tasks::{NewTask, Origin, TaskList, TaskStatus};
use crate::transcript::Usage;
use journal::{Envelope, Kind, Seq};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Journal-wide facts the hook path needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
        if matches!(env.kind, Kind::Rewound { .. }) {
            return false;
        }
        self.ranges
            .get(s)
            .is_some_and(|rs| rs.iter().any(|(to, at)| env.seq > *to && env.seq < *at))
    }
}

/// Key of the checkpoint's `Global` partition.
pub const GLOBAL_KEY: &[u8] = b"global";
/// Key of the checkpoint's journal-wide task store.
pub const TASKS_KEY: &[u8] = b"tasks";
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
    /// The journal-wide task store.
    Tasks,
    /// One session's state.
    Session(String),
}

impl Partition {
    /// Its key in the checkpoint store.
    pub fn key(&self) -> Vec<u8> {
        match self {
            Partition::Global => GLOBAL_KEY.to_vec(),
            Partition::Tasks => TASKS_KEY.to_vec(),
            Partition::Session(id) => session_key(id),
        }
    }

    /// The partition stored under `key`; `None` for a key that is none of them.
    pub fn from_key(key: &[u8]) -> Option<Partition> {
        if key == GLOBAL_KEY {
            Some(Partition::Global)
        } else if key == TASKS_KEY {
            Some(Partition::Tasks)
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
            Partition::Session(id) => format!("the checkpoint of session {id}"),
        }
    }
}

/// The partitions folding `env` reads and may change: the global record and the journal-wide
/// tasks always, and every session it touches (`State::sessions_touched`). A hook loads exactly
/// these before folding an event, and a checkpoint built that way equals a full replay.
pub fn partitions_for(env: &Envelope) -> Vec<Partition> {
    let mut out = vec![Partition::Global, Partition::Tasks];
    out.extend(
        State::sessions_touched(env)
            .into_iter()
            .map(Partition::Session),
    );
    out
}

/// What the hook path needs and the checkpoint holds, stored as partitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Each session's state.
    pub sessions: BTreeMap<String, SessionState>,
    /// The journal-wide task store.
    pub tasks: TaskList,
    /// The small journal-wide record.
    pub global: Global,
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode::config::standard()).expect("state encodes")
}

/// Decodes a checkpoint partition; `None` when the bytes do not decode.
pub fn decode<T: for<'de> Deserialize<'de>>(b: &[u8]) -> Option<T> {
    bincode::serde::decode_from_slice(b, bincode::config::standard())
        .ok()
        .map(|(v, _)| v)
}

impl State {
    /// The session ids an event touches (its own, or a task command's target).
    pub fn sessions_touched(env: &Envelope) -> Vec<String> {
        let mut out: Vec<String> = env.session_id.iter().cloned().collect();
        match &env.kind {
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
        self.sessions
            .entry(id.to_string())
            .or_insert_with(|| SessionState::new(id))
    }

    /// Applies one event. Rewound ranges are the caller's to skip (see `Full::apply`).
    pub fn apply(&mut self, env: &Envelope) {
        self.global.last_seq = env.seq;
        if let Some(a) = &env.agent_id {
            self.saw_agent(a, env.recorded_at_us);
        }
        match &env.kind {
            Kind::Hook { .. } => {
                let Some(ev) = event::from_envelope(env) else {
                    return;
                };
                if let (Some(name), None) = (&ev.agent_name, &ev.agent_id) {
                    self.saw_agent(name, env.recorded_at_us);
                }
                let Some(sid) = ev.session_id.clone() else {
                    return;
                };
                let last_cmd = self.global.last_task_command;
                let s = self.session_mut(&sid);
                s.apply_hook(env, &ev, last_cmd);
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
                        let prev = cwd
                            .and_then(|c| self.global.last_ended.get(&c).cloned())
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
            }
            _ => {
                if let Some(sid) = &env.session_id {
                    self.session_mut(sid).apply_derived(env);
                }
            }
        }
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

    /// Every partition, encoded (deterministic: the same state gives the same bytes).
    pub fn partitions(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = vec![
            (GLOBAL_KEY.to_vec(), encode(&self.global)),
            (TASKS_KEY.to_vec(), encode(&self.tasks)),
        ];
        for (id, s) in &self.sessions {
            out.push((session_key(id), encode(s)));
        }
        out
    }

    /// The encoded partition `p`; `None` for a session the state does not hold.
    pub fn encode_partition(&self, p: &Partition) -> Option<Vec<u8>> {
        match p {
            Partition::Global => Some(self.encode_global()),
            Partition::Tasks => Some(self.encode_tasks()),
            Partition::Session(id) => self.sessions.get(id).map(State::encode_session),
        }
    }

    /// Decodes partition `p` into the state (replacing what it held of it); an error when the
    /// bytes do not decode, and then the state is unchanged.
    pub fn decode_partition(&mut self, p: &Partition, bytes: &[u8]) -> Result<(), String> {
        let what = || format!("{} does not decode", p.describe());
        match p {
            Partition::Global => self.global = decode(bytes).ok_or_else(what)?,
            Partition::Tasks => self.tasks = decode(bytes).ok_or_else(what)?,
            Partition::Session(id) => {
                let s = decode(bytes).ok_or_else(what)?;
                self.sessions.insert(id.clone(), s);
            }
        }
        Ok(())
    }

    /// One session's partition, encoded.
    pub fn encode_session(s: &SessionState) -> Vec<u8> {
        encode(s)
    }
    /// The journal-wide task partition, encoded.
    pub fn encode_tasks(&self) -> Vec<u8> {
        encode(&self.tasks)
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
                    st.global = decode(v).ok_or("global partition does not decode")?
                }
                Some(Partition::Tasks) => {
                    st.tasks = decode(v).ok_or("tasks partition does not decode")?
                }
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

/// One response's usage, as the cost summary keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostRecord {
    /// Its session.
    pub session: String,
    /// The subagent whose transcript it came from.
    pub agent_id: Option<String>,
    /// The model.
    pub model: String,
    /// When it was written.
    pub timestamp: String,
    /// The usage (the largest reading).
    pub usage: Usage,
}

/// Tokens per deduplicated response, plus costs that payloads reported themselves.
/// The cost summary ignores rewinds on purpose: money spent stays spent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostSummary {
    /// The responses by `message_id:request_id`.
    pub by_key: BTreeMap<String, CostRecord>,
    /// Sessions' own reported metrics (hosts that put cost in payloads): last value per session.
    pub reported: BTreeMap<String, derived::SessionMetrics>,
    /// What the host itself reported per session (statusline readings), over every epoch.
    pub host: BTreeMap<String, crate::reported::HostFigures>,
}

impl CostSummary {
    /// Folds an event (usage, metrics, host figures; other kinds are ignored).
    pub fn apply(&mut self, env: &Envelope) {
        match &env.kind {
            Kind::UsageObserved { .. } => {
                let Some(u) = derived::parse::<derived::UsageObserved>(&env.payload) else {
                    return;
                };
                let key = format!("{}:{}", u.record.message_id, u.record.request_id);
                let session = env.session_id.clone().unwrap_or_default();
                match self.by_key.get_mut(&key) {
                    Some(old) => {
                        // Like ccusage: the larger reading replaces the whole record.
                        if crate::transcript::larger(&u.record.usage, &old.usage) {
                            old.usage = u.record.usage;
                            old.model = u.record.model;
                            old.timestamp = u.record.timestamp;
                        }
                    }
                    None => {
                        self.by_key.insert(
                            key,
                            CostRecord {
                                session,
                                agent_id: u.agent_id,
                                model: u.record.model,
                                timestamp: u.record.timestamp,
                                usage: u.record.usage,
                            },
                        );
                    }
                }
            }
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
        let Kind::Hook { name } = &env.kind else {
            return None;
        };
        if name != "Notification" {
            return None;
        }
        let ev = event::from_envelope(env)?;
        let Canonical::Notification {
            kind,
            title,
            message,
        } = ev.canonical
        else {
            return None;
        };
        Some(NotificationEntry {
            seq: env.seq,
            at_us: env.recorded_at_us,
            session: ev.session_id,
            kind,
            title,
            message,
        })
    }
}

/// Everything: the checkpointed state plus the CLI-only projections.
#[derive(Clone, Debug, Default)]
pub struct Full {
    /// The checkpointed state.
    pub state: State,
    /// The cost summary.
    pub cost: CostSummary,
    /// Every notification, in order.
    pub notifications: Vec<NotificationEntry>,
    /// Events folded (hidden ones included).
    pub events: u64,
    /// The rewinds whose ranges are skipped.
    pub rewinds: Rewinds,
}

impl Full {
    /// A fold that knows the rewinds in advance (collect them first with `collect_rewind`).
    pub fn with_rewinds(rewinds: Rewinds) -> Full {
        Full {
            rewinds,
            ..Full::default()
        }
    }

    /// Folds one event: the cost always, the rest unless a rewind hides it.
    pub fn apply(&mut self, env: &Envelope) {
        self.events += 1;
        self.cost.apply(env);
        if self.rewinds.hides(env) {
            self.state.global.last_seq = env.seq;
            // A rewind changes what the agent did, not what was measured: usage and context
            // readings (and the transcript positions they carry) stay, like the cost summary.
            if matches!(
                env.kind,
                Kind::UsageObserved { .. } | Kind::ContextObserved { .. } | Kind::HostReported
            ) {
                if let Some(sid) = &env.session_id {
                    self.state.session_mut(sid).apply_derived(env);
                }
            }
            return;
        }
        if let Some(n) = NotificationEntry::from_event(env) {
            self.notifications.push(n);
        }
        self.state.apply(env);
    }
}

/// Pass one of a full replay: the rewinds, so pass two can skip what they hide.
pub fn collect_rewind(rewinds: &mut Rewinds, env: &Envelope) {
    if let Kind::Rewound { session, to_seq } = &env.kind {
        rewinds.add(session, *to_seq, env.seq);
    }
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
            },
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
