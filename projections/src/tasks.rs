//! The task store: tasks from Claude's task tools (TaskCreate/TaskUpdate/TodoWrite), TaskCreated /
//! TaskCompleted events and `hookjournal tasks …` commands. Claude's ids are per session, so a task
//! is named by `TaskRef { session, id }`; CLI tasks are journal-wide (`session: None`).
//! Every transition is idempotent: failing a finished task changes nothing.

use journal::Seq;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A task's name: its session (`None`: journal-wide) and its id there.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskRef {
    /// The session whose own task it is; `None` for a journal-wide task.
    pub session: Option<String>,
    /// The id (the host's, or `T<n>`).
    pub id: String,
}

impl TaskRef {
    /// A journal-wide task.
    pub fn global(id: &str) -> TaskRef {
        TaskRef {
            session: None,
            id: id.to_string(),
        }
    }
    /// `ID` for journal-wide tasks, `SESSION8:ID` for a session's own.
    pub fn display(&self) -> String {
        match &self.session {
            Some(s) => format!("{}:{}", crate::short_id(s), self.id),
            None => self.id.clone(),
        }
    }
}

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started (also `todo`, `open`).
    Pending,
    /// Being worked on (also `active`, `started`).
    InProgress,
    /// Done (also `done`, `complete`).
    Completed,
    /// Failed and released for retry.
    Failed,
    /// Deleted (also `cancelled`).
    Deleted,
}

impl TaskStatus {
    /// A status from the names hosts and users give it (any case, `-` or `_`).
    pub fn parse(s: &str) -> Option<TaskStatus> {
        Some(
            match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "pending" | "todo" | "open" => TaskStatus::Pending,
                "in_progress" | "active" | "started" => TaskStatus::InProgress,
                "completed" | "done" | "complete" => TaskStatus::Completed,
                "failed" => TaskStatus::Failed,
                "deleted" | "cancelled" | "canceled" => TaskStatus::Deleted,
                _ => return None,
            },
        )
    }
    /// The stored name (`pending`, `in_progress`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Deleted => "deleted",
        }
    }
    /// Open tasks still need work: a failed task is released for retry.
    pub fn is_open(&self) -> bool {
        matches!(
            self,
            TaskStatus::Pending | TaskStatus::InProgress | TaskStatus::Failed
        )
    }
}

/// One change of a task's status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskChange {
    /// The event that made it.
    pub seq: Seq,
    /// When (µs).
    pub at_us: i64,
    /// The status it moved to.
    pub status: TaskStatus,
    /// What made the change: the hook event (`PostToolUse`, `TaskCompleted`, …), `cli`, or
    /// `release` (a looping agent's task failed at PreCompact or SessionEnd).
    pub by: String,
    /// Why, when known (a fail reason, a release's owner).
    pub note: Option<String>,
}

/// One task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its session; `None` for a journal-wide task.
    pub session: Option<String>,
    /// What it is.
    pub subject: String,
    /// Its longer description.
    pub description: Option<String>,
    /// Claude's present-tense form (`Writing tests`).
    pub active_form: Option<String>,
    /// Where it is.
    pub status: TaskStatus,
    /// The agent that holds it.
    pub owner: Option<String>,
    /// Times it was failed and released.
    pub retry_count: u32,
    /// Why it last failed.
    pub fail_reason: Option<String>,
    /// The event that created it.
    pub created_seq: Seq,
    /// The event that last changed it.
    pub updated_seq: Seq,
    /// Its status changes (the first and the last 31).
    pub history: Vec<TaskChange>,
}

impl Task {
    /// Its name.
    pub fn task_ref(&self) -> TaskRef {
        TaskRef {
            session: self.session.clone(),
            id: self.id.clone(),
        }
    }
}

/// Whether `t` is in progress under an owner other than `agent` (so `agent` may not take it).
pub fn held_by_other(t: &Task, agent: Option<&str>) -> bool {
    t.status == TaskStatus::InProgress && t.owner.is_some() && t.owner.as_deref() != agent
}

impl Task {
    /// When the task last changed (µs): its last history entry.
    pub fn changed_at_us(&self) -> i64 {
        self.history.last().map(|h| h.at_us).unwrap_or(0)
    }
}

/// Where a change came from (the event's seq and time, and a label).
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// The event's seq.
    pub seq: Seq,
    /// The event's time (µs).
    pub at_us: i64,
    /// What made the change (`PostToolUse`, `cli`, `release`, …).
    pub by: &'a str,
}

/// A task to create: where it lives, its id, and what is known of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewTask<'a> {
    /// The session whose own task it is; `None` for a journal-wide task.
    pub session: Option<&'a str>,
    /// The id (the host's, or `T<n>` for journal-wide tasks).
    pub id: &'a str,
    /// What the task is.
    pub subject: Option<&'a str>,
    /// Its longer description.
    pub description: Option<&'a str>,
    /// Claude's present-tense form (`Writing tests`).
    pub active_form: Option<&'a str>,
    /// The agent that owns it.
    pub owner: Option<&'a str>,
}

impl<'a> NewTask<'a> {
    /// A task known by its place and id only.
    pub fn new(session: Option<&'a str>, id: &'a str) -> Self {
        NewTask {
            session,
            id,
            ..NewTask::default()
        }
    }
}

/// A set of tasks: a session's own, or the journal-wide store.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskList {
    /// The tasks by id.
    pub tasks: BTreeMap<String, Task>,
    /// Next number for journal-wide ids (`T1`, `T2`, …).
    pub next_number: u64,
}

const MAX_HISTORY: usize = 32;

impl TaskList {
    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// The open tasks (pending, in progress, failed), by id.
    pub fn open(&self) -> impl Iterator<Item = &Task> {
        self.tasks.values().filter(|t| t.status.is_open())
    }

    /// Creates a task, or fills in what a known one lacks (TaskCreated after TaskCreate).
    pub fn create(&mut self, new: NewTask, o: Origin) {
        let NewTask {
            session,
            id,
            subject,
            description,
            active_form,
            owner,
        } = new;
        if let Some(n) = id.strip_prefix('T').and_then(|n| n.parse::<u64>().ok()) {
            self.next_number = self.next_number.max(n);
        }
        if let Some(t) = self.tasks.get_mut(id) {
            if t.subject.is_empty() {
                if let Some(s) = subject {
                    t.subject = s.to_string();
                }
            }
            if t.description.is_none() {
                t.description = description.map(str::to_string);
            }
            return;
        }
        self.tasks.insert(
            id.to_string(),
            Task {
                id: id.to_string(),
                session: session.map(str::to_string),
                subject: subject.unwrap_or_default().to_string(),
                description: description.map(str::to_string),
                active_form: active_form.map(str::to_string),
                status: TaskStatus::Pending,
                owner: owner.map(str::to_string),
                retry_count: 0,
                fail_reason: None,
                created_seq: o.seq,
                updated_seq: o.seq,
                history: vec![TaskChange {
                    seq: o.seq,
                    at_us: o.at_us,
                    status: TaskStatus::Pending,
                    by: o.by.to_string(),
                    note: None,
                }],
            },
        );
    }

    /// Moves a task to `to`. Returns whether anything changed. Unknown ids are created (a
    /// TaskUpdate can arrive for a task whose TaskCreate was not seen).
    pub fn set_status(
        &mut self,
        session: Option<&str>,
        id: &str,
        to: TaskStatus,
        o: Origin,
        note: Option<&str>,
    ) -> bool {
        if !self.tasks.contains_key(id) {
            self.create(NewTask::new(session, id), o);
        }
        let t = self.tasks.get_mut(id).expect("just created");
        if t.status == to {
            return false;
        }
        t.status = to;
        if to != TaskStatus::Failed {
            t.fail_reason = None;
        }
        t.updated_seq = o.seq;
        t.history.push(TaskChange {
            seq: o.seq,
            at_us: o.at_us,
            status: to,
            by: o.by.to_string(),
            note: note.map(str::to_string),
        });
        if t.history.len() > MAX_HISTORY {
            t.history.remove(1);
        }
        true
    }

    /// Fails an open task and releases it for retry: status failed, retry_count + 1, owner cleared.
    /// A finished (completed, deleted) or already failed task is left as it is.
    pub fn fail(&mut self, id: &str, reason: &str, o: Origin) -> bool {
        let Some(t) = self.tasks.get_mut(id) else {
            return false;
        };
        if !matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress) {
            return false;
        }
        t.status = TaskStatus::Failed;
        t.retry_count += 1;
        t.fail_reason = Some(reason.to_string());
        let owner = t.owner.take();
        t.updated_seq = o.seq;
        let note = match owner {
            Some(a) => format!("{reason} (was owned by {a})"),
            None => reason.to_string(),
        };
        t.history.push(TaskChange {
            seq: o.seq,
            at_us: o.at_us,
            status: TaskStatus::Failed,
            by: o.by.to_string(),
            note: Some(note),
        });
        true
    }

    /// Gives the task to `owner` (or nobody).
    pub fn set_owner(&mut self, id: &str, owner: Option<&str>, o: Origin) {
        if let Some(t) = self.tasks.get_mut(id) {
            if t.owner.as_deref() != owner {
                t.owner = owner.map(str::to_string);
                t.updated_seq = o.seq;
            }
        }
    }

    /// Changes a task's subject and description, each when given.
    pub fn edit(&mut self, id: &str, subject: Option<&str>, description: Option<&str>, o: Origin) {
        if let Some(t) = self.tasks.get_mut(id) {
            if let Some(s) = subject {
                t.subject = s.to_string();
                t.updated_seq = o.seq;
            }
            if let Some(d) = description {
                t.description = Some(d.to_string());
                t.updated_seq = o.seq;
            }
        }
    }

    /// The in-progress tasks owned by `agent`.
    pub fn active_for(&self, agent: &str) -> Vec<&Task> {
        self.tasks
            .values()
            .filter(|t| t.status == TaskStatus::InProgress && t.owner.as_deref() == Some(agent))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(seq: Seq) -> Origin<'static> {
        Origin {
            seq,
            at_us: 0,
            by: "test",
        }
    }

    /// A list holding journal task T1, owned by agent-7.
    fn owned_t1() -> TaskList {
        let mut l = TaskList::default();
        l.create(
            NewTask {
                subject: Some("a"),
                owner: Some("agent-7"),
                ..NewTask::new(None, "T1")
            },
            o(1),
        );
        l
    }

    #[test]
    fn failing_a_finished_task_changes_nothing() {
        let mut l = owned_t1();
        l.set_status(None, "T1", TaskStatus::Completed, o(2), None);
        let before = l.clone();
        assert!(!l.fail("T1", "context limit reached", o(3)));
        assert_eq!(l, before);
    }

    #[test]
    fn failing_releases_for_retry_once() {
        let mut l = owned_t1();
        l.set_status(None, "T1", TaskStatus::InProgress, o(2), None);
        assert!(l.fail("T1", "context limit reached", o(3)));
        assert!(!l.fail("T1", "session ended unexpectedly", o(4)));
        let t = l.get("T1").unwrap();
        assert_eq!(
            (t.status, t.retry_count, t.owner.as_deref()),
            (TaskStatus::Failed, 1, None)
        );
        assert_eq!(t.fail_reason.as_deref(), Some("context limit reached"));
        assert!(t.status.is_open());
    }
}
