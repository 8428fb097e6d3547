//! The canonical hook event: what every host's payload is read into (`event::parse_named`, and
//! the in-process hosts' own readers in `openclaw` and `opencode`).

use crate::event_kind::EventKind;
use crate::host::Host;

/// The canonical meaning of one hook invocation, whatever host sent it.
#[derive(Clone, Debug, PartialEq)]
pub enum Canonical {
    /// The session starts (or continues after a compaction, `/clear` or a resume).
    SessionStart {
        /// `startup`, `resume`, `clear` or `compact` (default `startup`).
        source: String,
    },
    /// The session ends.
    SessionEnd {
        /// Why (`clear`, `logout`, `prompt_input_exit`, …; default `other`).
        reason: String,
    },
    /// The user submitted a prompt.
    Prompt {
        /// The prompt.
        text: String,
    },
    /// A tool is about to run.
    ToolPre {
        /// The tool's name.
        tool: String,
        /// Its input.
        input: Option<serde_json::Value>,
    },
    /// A tool finished.
    ToolPost {
        /// The tool's name.
        tool: String,
        /// Its input.
        input: Option<serde_json::Value>,
        /// What it returned.
        response: Option<serde_json::Value>,
    },
    /// A tool call failed.
    ToolFailure {
        /// The tool's name.
        tool: String,
        /// Its input.
        input: Option<serde_json::Value>,
        /// The error (an object's JSON text when it is not a string).
        error: String,
    },
    /// The host notified the user.
    Notification {
        /// `notification_type` (`idle_prompt`, `permission_prompt`, …).
        kind: String,
        /// Its title, when given.
        title: Option<String>,
        /// Its message.
        message: String,
    },
    /// The agent finished its answer.
    Stop {
        /// Whether a Stop hook is already making it go on (`stop_hook_active`).
        active: bool,
        /// What the agent said last.
        last_message: Option<String>,
    },
    /// The turn failed (rate limit, overload, …).
    StopFailure {
        /// The error.
        error: String,
    },
    /// A subagent started.
    SubagentStart {
        /// Its id.
        agent_id: String,
        /// Its type, when given.
        agent_type: Option<String>,
    },
    /// A subagent finished.
    SubagentStop {
        /// Its id.
        agent_id: String,
        /// Its type, when given.
        agent_type: Option<String>,
        /// Its own transcript.
        transcript: Option<String>,
        /// What it said last.
        last_message: Option<String>,
    },
    /// The context is about to be compacted.
    PreCompact {
        /// `manual` or `auto` (default `auto`).
        trigger: String,
        /// The user's `/compact` instructions, when there are any.
        instructions: Option<String>,
    },
    /// A compaction finished.
    PostCompact {
        /// `manual` or `auto`.
        trigger: String,
        /// The summary it produced.
        summary: Option<String>,
    },
    /// The host's task tool created a task.
    TaskCreated {
        /// The task's id.
        task_id: String,
        /// Its subject.
        subject: Option<String>,
        /// Its description.
        description: Option<String>,
    },
    /// The host's task tool completed a task.
    TaskCompleted {
        /// The task's id.
        task_id: String,
        /// Its subject.
        subject: Option<String>,
    },
    /// Any other event: recorded, counted, never answered.
    Other,
}

impl Canonical {
    /// What an event of a subagent (`agent_id`) is to the session that started it: its start is
    /// the subagent's; its end of turn, its failure and its end are the subagent's stop (not the
    /// session's: the session's agent is still at work, its tasks still held); a compaction of
    /// the subagent's own history is not the session's. Any other event stays what it is.
    pub fn in_subagent(self, agent_id: &str, agent_type: Option<&str>) -> Canonical {
        let stop = |last_message| Canonical::SubagentStop {
            agent_id: agent_id.to_string(),
            agent_type: agent_type.map(str::to_string),
            transcript: None,
            last_message,
        };
        match self {
            Canonical::SessionStart { .. } => Canonical::SubagentStart {
                agent_id: agent_id.to_string(),
                agent_type: agent_type.map(str::to_string),
            },
            Canonical::Stop { last_message, .. } => stop(last_message),
            Canonical::SessionEnd { .. } => stop(None),
            Canonical::StopFailure { error } => stop(Some(error)),
            Canonical::PreCompact { .. } | Canonical::PostCompact { .. } => Canonical::Other,
            other => other,
        }
    }

    /// Which canonical event this is.
    pub fn kind(&self) -> EventKind {
        match self {
            Canonical::SessionStart { .. } => EventKind::SessionStart,
            Canonical::SessionEnd { .. } => EventKind::SessionEnd,
            Canonical::Prompt { .. } => EventKind::Prompt,
            Canonical::ToolPre { .. } => EventKind::ToolPre,
            Canonical::ToolPost { .. } => EventKind::ToolPost,
            Canonical::ToolFailure { .. } => EventKind::ToolFailure,
            Canonical::Notification { .. } => EventKind::Notification,
            Canonical::Stop { .. } => EventKind::Stop,
            Canonical::StopFailure { .. } => EventKind::StopFailure,
            Canonical::SubagentStart { .. } => EventKind::SubagentStart,
            Canonical::SubagentStop { .. } => EventKind::SubagentStop,
            Canonical::PreCompact { .. } => EventKind::PreCompact,
            Canonical::PostCompact { .. } => EventKind::PostCompact,
            Canonical::TaskCreated { .. } => EventKind::TaskCreated,
            Canonical::TaskCompleted { .. } => EventKind::TaskCompleted,
            Canonical::Other => EventKind::Other,
        }
    }

    /// Whether the policy never answers this event and it needs nothing read from outside:
    /// such events take the hook's spool fast path and never open the store.
    pub fn is_record_only(&self) -> bool {
        matches!(
            self,
            Canonical::ToolPre { .. }
                | Canonical::ToolFailure { .. }
                | Canonical::Notification { .. }
                | Canonical::SubagentStart { .. }
                | Canonical::TaskCreated { .. }
                | Canonical::TaskCompleted { .. }
                | Canonical::PostCompact { .. }
                | Canonical::StopFailure { .. }
                | Canonical::Other
        )
    }
}

impl HookEvent {
    /// An event `name` from `host` meaning `canonical`, everything else unsaid: what a host's
    /// own parser (`hosts::<host>::wire`) starts from, naming only the fields its payload has
    /// (`HookEvent { session_id, cwd, ..HookEvent::new(name, host, canonical) }`).
    pub fn new(name: String, host: Host, canonical: Canonical) -> HookEvent {
        HookEvent {
            name,
            host,
            session_id: None,
            cwd: None,
            transcript_path: None,
            agent_id: None,
            agent_type: None,
            agent_name: None,
            model: None,
            canonical,
            metrics: PayloadMetrics::default(),
            session_key: None,
            continues: None,
            usage: None,
            served: false,
            mcp_server: None,
            resumed: None,
            tool_call_id: None,
        }
    }

    /// Whether this invocation is only recorded (the hook's spool fast path): an event the
    /// policy never answers (`Canonical::is_record_only`) unless its host takes context there
    /// (Crush's PreToolUse carries the reminder), or a call served to a session that runs
    /// elsewhere.
    pub fn is_record_only(&self) -> bool {
        self.served
            || (self.canonical.is_record_only()
                && !self
                    .host
                    .answers(self.canonical.kind(), crate::host::AnswerShape::Context))
    }
}

/// Metrics a payload may carry itself (some hosts and wrappers report them).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PayloadMetrics {
    /// Cost in USD (`cost_usd` or `cost`).
    pub cost_usd: Option<f64>,
    /// Duration in ms (`duration_ms` or `duration`).
    pub duration_ms: Option<f64>,
    /// Input tokens (`tokens_in` or `input_tokens`).
    pub tokens_in: Option<u64>,
    /// Output tokens (`tokens_out` or `output_tokens`).
    pub tokens_out: Option<u64>,
    /// The model.
    pub model: Option<String>,
}

impl PayloadMetrics {
    /// Whether the payload carried none of them.
    pub fn is_empty(&self) -> bool {
        *self == PayloadMetrics::default()
    }
}

/// A parsed hook invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct HookEvent {
    /// The event name as the host sent it (`PreToolUse`, `AfterTool`, `beforeShellExecution`…).
    pub name: String,
    /// The host that sent it.
    pub host: Host,
    /// The session (Cursor: conversation) id; `None` when absent or empty.
    pub session_id: Option<String>,
    /// The project directory.
    pub cwd: Option<String>,
    /// The session's transcript; `None` when absent or empty.
    pub transcript_path: Option<String>,
    /// Set inside a Claude Code subagent.
    pub agent_id: Option<String>,
    /// The agent's type (a subagent's, or the session's `claude --agent NAME`).
    pub agent_type: Option<String>,
    /// The agent's own name, when the host or a wrapper names it (`agent_name` / `agentName`):
    /// what roles are taken from.
    pub agent_name: Option<String>,
    /// The model, when the payload names it.
    pub model: Option<String>,
    /// What the event means.
    pub canonical: Canonical,
    /// Metrics the payload carried itself.
    pub metrics: PayloadMetrics,
    /// The host's stable name for the conversation, when it has one besides the session id
    /// (OpenClaw's `sessionKey`, the same across resets).
    pub session_key: Option<String>,
    /// The session this one continues, when the host names it (OpenClaw's `resumedFrom`).
    pub continues: Option<String>,
    /// A model call's usage, when the host reports it in the hook (OpenClaw's `llm_output`).
    pub usage: Option<HostUsage>,
    /// A tool call this computer ran for another session (Claude Code 2.1.330's served calls:
    /// `served_call`, `session_id: "served:<caller>"`, an empty `transcript_path`). `session_id`
    /// is then the caller's.
    pub served: bool,
    /// The MCP server of an `mcp__*` tool (Claude Code 2.1.330's `mcp_server.name`).
    pub mcp_server: Option<String>,
    /// What a resume, fork or model switch says of the context (Claude Code 2.1.330).
    pub resumed: Option<Resumed>,
    /// The host's id of the tool call a tool event is about (`tool_use_id`, `toolCallId`, …),
    /// the same at its before and after; `None` when the host sends none.
    pub tool_call_id: Option<String>,
}

/// Claude Code 2.1.330's figures on a resumed (or forked) conversation, and at a model switch.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resumed {
    /// The tokens the next request re-sends: the last response's whole window.
    pub context_tokens: Option<u64>,
    /// Seconds since the transcript's last response.
    pub seconds_since_last_response: Option<u64>,
    /// Whether the prompt cache has likely expired since.
    pub prompt_cache_likely_expired: Option<bool>,
    /// Claude Code's estimate of re-caching the context, USD.
    pub estimated_cache_write_usd: Option<f64>,
}

/// One model call's usage as a hook reports it, with the context budget it ran under.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostUsage {
    /// The run the call belonged to.
    pub run_id: Option<String>,
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// The context-token budget (the window the host allows), when it says.
    pub context_budget: Option<u64>,
    /// `run_id` names one model call the host reports more than once (OpenCode's assistant
    /// message): counted once, the largest reading wins.
    pub once_per_run: bool,
}
