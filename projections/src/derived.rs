//! Bodies of the events hookjournal writes itself (JSON payloads of derived kinds). Whatever the
//! outside world said (transcripts, git, the environment) arrives here, so folds never read it.

use crate::event::PayloadMetrics;
use crate::transcript::{Usage, UsageRecord};
use serde::{Deserialize, Serialize};

/// One deduplicated assistant response read from a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageObserved {
    /// The transcript read, and the byte offset reading reached.
    pub path: String,
    pub offset: u64,
    /// The subagent whose transcript this was, if any (usage still counts for the parent session).
    pub agent_id: Option<String>,
    pub record: UsageRecord,
}

/// What the latest read of a transcript showed of the context window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextObserved {
    pub path: String,
    pub offset: u64,
    pub tokens: Option<u64>,
    pub model: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GitObserved {
    pub branch: Option<String>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMetrics {
    /// `stop` or `session_end`.
    pub at: String,
    pub payload: PayloadMetrics,
    pub usage: Usage,
    pub usd: Option<f64>,
    pub model: Option<String>,
    pub branch: Option<String>,
    pub duration_ms: Option<f64>,
}

/// Exactly what the hook printed (and said on stderr), with the policy settings it used, so
/// `replay --verify` recomputes the answer under the same settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseEmitted {
    pub output: String,
    pub stderr: Option<String>,
    pub policy: crate::config::PolicyConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReminderIssued {
    pub open_tasks: Vec<String>,
    pub since_task_use: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskReleased {
    pub task: crate::tasks::TaskRef,
    pub reason: String,
    pub agent: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub trigger: String,
    pub text: String,
}

/// What a task command does, stored as its lowercase name (`"add"`, `"claim"`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskOp {
    /// Creates the task (pending), owned by the agent when one is given.
    Add,
    /// Moves it to in progress, owned by the agent when one is given (an unknown id is created).
    Start,
    /// Like `start` for an agent, but only an existing open task nobody else holds.
    Claim,
    /// Completes it (a deleted task stays deleted).
    Done,
    /// Fails an open task and releases it for retry (`retry_count` + 1, owner cleared).
    Fail,
    /// Back to pending, owner cleared.
    Reopen,
    /// Marks it deleted. No `tasks` subcommand writes it; it comes from imported or hand-made
    /// events (`import --events`).
    Delete,
    /// An op this version does not know (a newer version's, or a hand-made event): the command
    /// is recorded and changes no task.
    #[serde(other)]
    Unknown,
}

impl TaskOp {
    /// The stored name (`add`, `start`, …; `unknown` for `Unknown`).
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskOp::Add => "add",
            TaskOp::Start => "start",
            TaskOp::Claim => "claim",
            TaskOp::Done => "done",
            TaskOp::Fail => "fail",
            TaskOp::Reopen => "reopen",
            TaskOp::Delete => "delete",
            TaskOp::Unknown => "unknown",
        }
    }
}

/// A change to the task store made from the CLI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskCommand {
    /// What the command does.
    pub op: TaskOp,
    pub task: crate::tasks::TaskRef,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// What the loop's own task program said when a loop agent's tasks were released there
/// (`task_command` at PreCompact and SessionEnd): the tasks failed, and any error, verbatim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExternalRelease {
    /// The program run.
    pub command: String,
    pub agent: String,
    /// The hook event that caused the release (`PreCompact`, `SessionEnd`).
    pub event: String,
    pub reason: String,
    /// Task ids the program failed.
    pub released: Vec<String>,
    /// One line per call that failed or timed out.
    pub errors: Vec<String>,
}

pub fn body<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("derived bodies are plain data")
}

pub fn parse<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    serde_json::from_slice(bytes).ok()
}

/// The host's own figures, as its statusline input showed them (recorded only when they change).
/// Claude Code's cost and duration counters start again at compaction: the fold treats a drop as
/// a new epoch (see `reported::HostFigures`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostReported {
    /// Where the figures came from: `statusline`.
    pub source: String,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<f64>,
    pub api_duration_ms: Option<f64>,
    /// Tokens in the context window (the last request's input + cache reads + cache writes).
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub used_percentage: Option<f64>,
    pub model: Option<String>,
    pub exceeds_200k_tokens: Option<bool>,
    pub version: Option<String>,
}
