//! Bodies of the events hookjournal writes itself (JSON payloads of derived kinds). Whatever the
//! outside world said (transcripts, git, the environment) arrives here, so folds never read it.

use crate::hook_event::PayloadMetrics;
use crate::transcript::{Usage, UsageRecord};
use serde::{Deserialize, Serialize};

/// One deduplicated assistant response read from a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageObserved {
    /// The transcript read, and the byte offset reading reached.
    pub path: String,
    /// The byte offset reading reached.
    pub offset: u64,
    /// The subagent whose transcript this was, if any (usage still counts for the parent session).
    pub agent_id: Option<String>,
    /// The response: ids, model, time and usage.
    pub record: UsageRecord,
}

/// What the latest read of a transcript showed of the context window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextObserved {
    /// The transcript read.
    pub path: String,
    /// The byte offset reading reached.
    pub offset: u64,
    /// The context tokens of the latest main-chain response, if the read found one.
    pub tokens: Option<u64>,
    /// That response's model.
    pub model: Option<String>,
    /// Compressions the read found that the session had not counted yet (Gemini CLI: the ids
    /// of the compression acknowledgements in its session file's history rewrites, see
    /// `gemini_chat`). Each is one compaction, counted here and never at `PreCompress`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compressions: Vec<String>,
    /// The context window the host itself reported with that response (Copilot CLI's
    /// `maxPromptTokens`); otherwise the window comes from the model and the config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
}

/// The git branch of the session's directory, read at Stop and SessionEnd.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GitObserved {
    /// The branch (`None` when detached or not a repository).
    pub branch: Option<String>,
    /// Why git could not tell (a timeout, an error).
    pub error: Option<String>,
}

/// A session's figures at a Stop or SessionEnd.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMetrics {
    /// `stop` or `session_end`.
    pub at: String,
    /// What the payload carried itself.
    pub payload: PayloadMetrics,
    /// Transcript usage summed over the session's deduplicated responses.
    pub usage: Usage,
    /// That usage priced with the price table.
    pub usd: Option<f64>,
    /// The session's model.
    pub model: Option<String>,
    /// The git branch.
    pub branch: Option<String>,
    /// The payload's duration.
    pub duration_ms: Option<f64>,
}

/// Exactly what the hook printed (and said on stderr), with the policy settings it used, so
/// `replay --verify` recomputes the answer under the same settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseEmitted {
    /// What was printed on stdout (empty for nothing).
    pub output: String,
    /// The stderr line, if any.
    pub stderr: Option<String>,
    /// The policy settings the answer was computed with.
    pub policy: crate::config::PolicyConfig,
}

/// A task reminder was injected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReminderIssued {
    /// The open tasks it listed (`TaskRef::display`).
    pub open_tasks: Vec<String>,
    /// Tool calls and prompts since the last task-tool use.
    pub since_task_use: u64,
}

/// A task was failed and released for retry (a loop agent's, or an expired lease).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskReleased {
    /// The task.
    pub task: crate::tasks::TaskRef,
    /// Why (`context limit reached`, `session ended unexpectedly`, `lease expired: …`).
    pub reason: String,
    /// The agent that held it.
    pub agent: Option<String>,
}

/// The session's restore text, recorded at PreCompact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The compaction's trigger (`manual`, `auto`).
    pub trigger: String,
    /// The restore text as it was then.
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
    /// The task it applies to.
    pub task: crate::tasks::TaskRef,
    /// The subject (`add`).
    #[serde(default)]
    pub subject: Option<String>,
    /// The description (`add`).
    #[serde(default)]
    pub description: Option<String>,
    /// The agent doing it (`--agent`): the owner for `add`, `start` and `claim`.
    #[serde(default)]
    pub agent: Option<String>,
    /// Why (`fail`, `done`, `reopen`, `delete`).
    #[serde(default)]
    pub reason: Option<String>,
}

/// What the loop's own task program said when a loop agent's tasks were released there
/// (`task_command` at PreCompact and SessionEnd): the tasks failed, and any error, verbatim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExternalRelease {
    /// The program run.
    pub command: String,
    /// The looping agent whose tasks were released.
    pub agent: String,
    /// The hook event that caused the release (`PreCompact`, `SessionEnd`).
    pub event: String,
    /// Why they were released.
    pub reason: String,
    /// Task ids the program failed.
    pub released: Vec<String>,
    /// One line per call that failed or timed out.
    pub errors: Vec<String>,
}

/// A derived event's body: its JSON.
pub fn body<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("derived bodies are plain data")
}

/// A derived event's body read back; `None` when it does not decode.
pub fn parse<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    serde_json::from_slice(bytes).ok()
}

type LastUsage = Option<(Vec<u8>, std::rc::Rc<UsageObserved>)>;

thread_local! {
    /// The last usage body this thread parsed (or encoded), with its value.
    static LAST_USAGE: std::cell::RefCell<LastUsage> = const { std::cell::RefCell::new(None) };
}

/// A usage reading's body, parsed once for all the places the fold reads it (the cost shard it
/// belongs to, the dedup against other sessions, the session): parsing JSON is most of the
/// fold's work in an import. The last body parsed is kept, per thread, with its bytes.
pub fn usage(bytes: &[u8]) -> Option<std::rc::Rc<UsageObserved>> {
    LAST_USAGE.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((b, u)) = &*last {
            if b.as_slice() == bytes {
                return Some(u.clone());
            }
        }
        let u = std::rc::Rc::new(parse::<UsageObserved>(bytes)?);
        *last = Some((bytes.to_vec(), u.clone()));
        Some(u)
    })
}

/// Tells `usage` that `bytes` (`body(&u)`, just encoded by this thread) reads back as `u`, so the
/// fold that follows does not parse what was just written. Encoding is exact (JSON numbers and
/// strings read back as they were written); debug builds check it.
pub fn remember_usage(bytes: &[u8], u: UsageObserved) {
    debug_assert_eq!(parse::<UsageObserved>(bytes).as_ref(), Some(&u));
    LAST_USAGE.with(|last| *last.borrow_mut() = Some((bytes.to_vec(), std::rc::Rc::new(u))));
}

/// The host's own figures, as its statusline input showed them (recorded only when they change).
/// Claude Code's cost and duration counters start again at compaction: the fold treats a drop as
/// a new epoch (see `reported::HostFigures`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostReported {
    /// Where the figures came from: `statusline`.
    pub source: String,
    /// The session's cost so far, as the host counts it.
    pub cost_usd: Option<f64>,
    /// The session's wall-clock duration.
    pub duration_ms: Option<f64>,
    /// Time spent in API requests.
    pub api_duration_ms: Option<f64>,
    /// Tokens in the context window (the last request's input + cache reads + cache writes).
    pub context_tokens: Option<u64>,
    /// The context window's size.
    pub context_window: Option<u64>,
    /// Percent of the window used.
    pub used_percentage: Option<f64>,
    /// The model.
    pub model: Option<String>,
    /// Whether the context is past 200k tokens.
    pub exceeds_200k_tokens: Option<bool>,
    /// The host's version.
    pub version: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given usage bodies of the same length read in turn, when each is parsed through the
    /// memo, then each gives its own reading (the memo answers only for the very same bytes).
    #[test]
    fn the_usage_memo_answers_only_for_the_same_bytes() {
        let body = |m: &str, tokens: u64| {
            super::body(&UsageObserved {
                path: "/t.jsonl".into(),
                offset: tokens,
                agent_id: None,
                record: UsageRecord {
                    message_id: m.into(),
                    request_id: "r".into(),
                    model: "x".into(),
                    timestamp: "t".into(),
                    usage: Usage {
                        input_tokens: tokens,
                        ..Usage::default()
                    },
                    sidechain: false,
                },
            })
        };
        for (m, t) in [("m1", 10), ("m2", 20), ("m1", 10), ("m1", 30), ("m2", 20)] {
            let u = usage(&body(m, t)).expect("parses");
            assert_eq!((u.record.message_id.as_str(), u.offset), (m, t));
            assert_eq!(u.record.usage.input_tokens, t);
        }
        assert!(usage(b"{not json").is_none());
    }

    /// Task commands in the journal decode into the same op, and encode back byte for byte.
    #[test]
    fn stored_task_commands_decode_unchanged() {
        let ops = [
            ("add", TaskOp::Add),
            ("start", TaskOp::Start),
            ("claim", TaskOp::Claim),
            ("done", TaskOp::Done),
            ("fail", TaskOp::Fail),
            ("reopen", TaskOp::Reopen),
            ("delete", TaskOp::Delete),
        ];
        for (name, op) in ops {
            let stored = format!(
                r#"{{"op":"{name}","task":{{"session":null,"id":"T1"}},"subject":"s","description":null,"agent":"dev-1","reason":null}}"#
            );
            let c: TaskCommand = parse(stored.as_bytes()).expect(name);
            assert_eq!(c.op, op);
            assert_eq!(op.as_str(), name);
            assert_eq!(String::from_utf8(body(&c)).unwrap(), stored);
        }
        // A session's task, and the fields older commands left out.
        let c: TaskCommand = parse(br#"{"op":"done","task":{"session":"s1","id":"3"}}"#).unwrap();
        assert_eq!(
            (c.op, c.task.session.as_deref()),
            (TaskOp::Done, Some("s1"))
        );
        // An op this version does not know still decodes (and changes nothing in the fold).
        let c: TaskCommand =
            parse(br#"{"op":"archive","task":{"session":null,"id":"T1"}}"#).unwrap();
        assert_eq!(c.op, TaskOp::Unknown);
    }
}
