//! Per-session projections: the execution snapshot, reminder state and context pressure, plus the
//! session's own tasks and the transcript reading positions (all folded from events).

use crate::answer::Answer;
use crate::derived::{self, ContextObserved};
use crate::event::{Canonical, HookEvent};
use crate::kind::{Kind, KindOf};
use crate::tasks::{NewTask, Origin, TaskList, TaskStatus};
use crate::transcript::Usage;
use journal::{Envelope, Seq};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How the restore's first line names a restore after a compaction (also how the fold recognises
/// that one was given, in the answer it records).
pub const AFTER_COMPACTION: &str = "after context compaction";

/// Tokens a text adds to the context, estimated (about four characters a token).
pub fn estimated_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Last prompts kept per session.
pub const MAX_PROMPTS: usize = 5;
/// Files kept per list (read, edited).
pub const MAX_FILES: usize = 20;
/// Commits kept per session.
pub const MAX_COMMITS: usize = 10;
/// Failed tool calls kept per session.
pub const MAX_FAILURES: usize = 10;
const MAX_TEXT: usize = 600;

/// Where a session is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Working: a prompt, a tool call, a start.
    #[default]
    Active,
    /// Waiting for the user (after a Stop or an idle notification).
    Idle,
    /// Between PreCompact and the compaction's end.
    Compacting,
    /// Ended (SessionEnd); any later event makes it active again.
    Ended,
}

impl Status {
    /// The status as JSON and tables show it (`active`, `idle`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Idle => "idle",
            Status::Compacting => "compacting",
            Status::Ended => "ended",
        }
    }
}

/// A commit the session made, read from `git commit`'s output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// The abbreviated hash.
    pub hash: String,
    /// The commit message's first line (clipped).
    pub message: String,
    /// The event that showed it.
    pub seq: Seq,
}

/// A tool call that failed (or a turn, as tool `(turn)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailedTool {
    /// The tool's name.
    pub tool: String,
    /// The error's first line, and the next as detail (clipped).
    pub error: String,
    /// The event that reported it.
    pub seq: Seq,
}

/// A subagent the session started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Subagent {
    /// The subagent's id.
    pub agent_id: String,
    /// Its type (`Explore`, …), when given.
    pub agent_type: Option<String>,
    /// Started and not stopped yet.
    pub running: bool,
    /// What it said last (clipped).
    pub last_message: Option<String>,
}

/// Reminder state: activity since the last task-tool use, and where the last reminder fell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReminderState {
    /// Tool calls and prompts since the last task-tool use or task command.
    pub since_task_use: u64,
    /// `since_task_use` when the last reminder was issued (None: none since the reset).
    pub last_reminder_at: Option<u64>,
    /// Reminders issued so far.
    pub issued: u64,
    /// The last journal-wide task command this counter has seen (a command resets it too).
    pub seen_task_command: Seq,
}

/// Context pressure: the latest main-chain context size, plus what hookjournal injected since.
/// A compaction starts it over: the tiers are measured again from the next reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// The context tokens of the latest reading (0 after a compaction, until the next reading).
    pub tokens: u64,
    /// The model of the latest reading.
    pub model: Option<String>,
    /// The event that carried the latest reading.
    pub seq: Seq,
    /// A Stop was blocked for the current emergency crossing (cleared when it passes).
    pub emergency_blocked: bool,
    /// Estimated tokens of the context hookjournal injected since the last reading (restore
    /// texts, reminders, notices): they count toward the next tier decision at once.
    pub injected: u64,
    /// The seq of the last compaction (PreCompact): readings it caused show the context before
    /// the compaction, so they do not count.
    pub compacted_at: Seq,
    /// The context window the host itself reported for the latest reading (OpenClaw's
    /// `contextTokenBudget`); otherwise the window comes from the model and the config.
    pub window: Option<u64>,
}

impl Pressure {
    /// A compaction empties the context: nothing is known of it until the next reading.
    fn start_over(&mut self, seq: Seq) {
        self.tokens = 0;
        self.injected = 0;
        self.compacted_at = seq;
        self.emergency_blocked = false;
    }
}

/// Everything folded for one session: its checkpoint partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// The session id.
    pub id: String,
    /// The host's name, as the session's first event stored it.
    pub host: String,
    /// The project directory.
    pub cwd: Option<String>,
    /// The main transcript (a subagent's events do not change it).
    pub transcript_path: Option<String>,
    /// The session's first event.
    pub first_seq: Seq,
    /// Its latest event.
    pub last_seq: Seq,
    /// When its first event was recorded (µs).
    pub first_at_us: i64,
    /// When its latest event was recorded (µs).
    pub last_at_us: i64,
    /// Hook events folded.
    pub hook_events: u64,
    /// Where the session is in its life.
    pub status: Status,
    /// Why it ended (SessionEnd's `reason`).
    pub end_reason: Option<String>,
    /// The model, from payloads and readings.
    pub model: Option<String>,
    /// The agent's name or type as the payload gave it (`agent_name`/`agentName`, or the
    /// `agent_type` of a session started as an agent): what its role is taken from (`dev-3` → dev).
    pub agent_role: Option<String>,
    /// The looping agent driving this session (from the agent-id environment variable).
    pub loop_agent: Option<String>,
    /// The last prompts, most recent first (clipped).
    pub prompts: Vec<String>,
    /// Prompts so far.
    pub prompt_count: u64,
    /// Files the session read, most recent first.
    pub files_read: Vec<String>,
    /// Files edited, most recent first (subagents' edits too).
    pub files_edited: Vec<String>,
    /// Commits made, most recent first.
    pub commits: Vec<Commit>,
    /// Failed tool calls, most recent first.
    pub failed_tools: Vec<FailedTool>,
    /// Tool calls finished (or failed).
    pub tool_calls: u64,
    /// The subagents, in order of appearance.
    pub subagents: Vec<Subagent>,
    /// Compactions so far.
    pub compactions: u64,
    /// Their triggers (`manual`, `auto`), the last 20.
    pub compact_triggers: Vec<String>,
    /// The last compaction's summary (PostCompact), clipped.
    pub last_compact_summary: Option<String>,
    /// The plan the agent last presented (ExitPlanMode), clipped.
    pub plan: Option<String>,
    /// What the agent said at its last Stop (clipped).
    pub last_assistant_message: Option<String>,
    /// The session's own tasks (the host's task tools and events).
    pub tasks: TaskList,
    /// When a task reminder is due.
    pub reminder: ReminderState,
    /// How full the context window is.
    pub pressure: Pressure,
    /// Usage per deduplicated response key, for totals and to dedupe later reads.
    pub usage_by_key: BTreeMap<String, (String, Usage)>,
    /// Byte offset read so far per transcript path.
    pub transcript_offsets: BTreeMap<String, u64>,
    /// The git branch, as last observed.
    pub branch: Option<String>,
    /// The metrics recorded at the last Stop or SessionEnd.
    pub metrics: Option<derived::SessionMetrics>,
    /// SessionStart's `source` (`startup`, `compact`, `clear`, `resume`).
    pub source: Option<String>,
    /// Subagent transcripts seen at SubagentStop (path → agent id): re-read at Stop and
    /// SessionEnd, because SubagentStop fires before the subagent's last usage is written.
    pub subagent_transcripts: BTreeMap<String, String>,
    /// The session this one continues (for `clear`: the session that just ended in the project).
    pub continues: Option<String>,
    /// The host's own cost and context figures (Claude Code's statusline).
    pub host_reported: crate::reported::HostFigures,
    /// A session start or compaction whose restore (or startup) text has not reached the model
    /// yet, by SessionStart `source`: on hosts that take context only with a prompt
    /// (`host::restores_at_prompt`), the next prompt carries it.
    pub start_pending: Option<String>,
    /// What the latest prompt carries (`start_pending` as that prompt found it).
    pub prompt_carries: Option<String>,
    /// Compressions already counted from the host's session file (Gemini CLI: the ids of their
    /// acknowledgements, the last 50), so a history rewritten again is not counted again.
    #[serde(default)]
    pub compressions_seen: Vec<String>,
    /// The hook event whose session-file read found the latest compression (0: none yet).
    #[serde(default)]
    pub compression_seen_at: Seq,
    /// The latest pre-compaction event of a host that announces a compaction its session file
    /// counts (`CompactionFacts::counted_from_session_file`, Copilot CLI): until the file shows
    /// it, the hook reads the file at prompts and tool results too (`awaits_compaction`).
    #[serde(default)]
    pub compaction_announced_at: Seq,
    /// The event whose session-file read showed the last announced compaction.
    #[serde(default)]
    pub compaction_confirmed_at: Seq,
    /// The last answer that stopped the agent (`continue:false`), by its `ResponseEmitted`.
    #[serde(default)]
    pub stop_answered_at: Seq,
    /// The last answer that gave the restore after a compaction, by its `ResponseEmitted`.
    #[serde(default)]
    pub restored_at: Seq,
    /// Responses the session's transcript holds that another session counted first, by dedup
    /// key: a fork (`--fork-session`) starts with its parent's messages. They stay the parent's:
    /// left out of this session's usage, cost and totals.
    #[serde(default)]
    pub usage_copied: BTreeSet<String>,
    /// Tool calls this computer ran for the session, served to it from elsewhere (Claude Code's
    /// served calls: the session itself runs in the cloud, some of its tools here).
    #[serde(default)]
    pub served: ServedCalls,
    /// The MCP servers whose tools the session called (`mcp_server`), with their calls.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, u64>,
    /// What the host said of the conversation at the session's last resume or fork.
    #[serde(default)]
    pub resumed: Option<crate::event::Resumed>,
}

/// Tool calls this computer ran for a session that runs elsewhere (Claude Code 2.1.330's served
/// calls). Kept apart from the session's own activity: they drive no status, reminder or answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServedCalls {
    /// Hook events of served calls.
    pub events: u64,
    /// Served tool calls finished (or failed).
    pub tool_calls: u64,
    /// Served tool calls that failed.
    pub failed: u64,
    /// The latest served tools, newest first (with their MCP server), the last 10.
    pub recent: Vec<String>,
    /// Files the served calls edited here, most recent first.
    pub files_edited: Vec<String>,
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

fn push_recent(list: &mut Vec<String>, item: &str, max: usize) {
    list.retain(|x| x != item);
    list.insert(0, item.to_string());
    list.truncate(max);
}

fn str_at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

fn id_at(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match v.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

/// A failed tool call's error in one line: its first line, and the next one as detail.
fn failure_text(error: &str) -> String {
    let mut lines = error.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("");
    match lines.next() {
        Some(detail) if !detail.is_empty() => format!("{first} — {detail}"),
        _ => first.to_string(),
    }
}

/// `git commit` output: `[branch abc1234] message` (also `[branch (root-commit) abc1234]`).
pub fn parse_commit(output: &str) -> Option<(String, String)> {
    for line in output.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((inside, msg)) = rest.split_once("] ") else {
            continue;
        };
        let hash = inside.split_whitespace().last()?;
        if hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Some((hash.to_string(), msg.trim().to_string()));
        }
    }
    None
}

/// A tool as lists show it: with its MCP server, when it has one.
pub fn tool_label(tool: &str, mcp_server: Option<&str>) -> String {
    match mcp_server {
        Some(server) => format!("{tool} (MCP server {server})"),
        None => tool.to_string(),
    }
}

fn is_task_tool(tool: &str) -> bool {
    matches!(
        tool,
        "TaskCreate"
            | "TaskUpdate"
            | "TodoWrite"
            | "TaskList"
            | "TaskGet"
            | "write_todos"
            // Auggie's task list.
            | "view_tasklist"
            | "reorganize_tasklist"
            | "update_tasks"
            | "add_tasks"
    )
}

impl SessionState {
    /// A session with nothing folded yet.
    pub fn new(id: &str) -> SessionState {
        SessionState {
            id: id.to_string(),
            ..SessionState::default()
        }
    }

    /// Usage summed over every deduplicated response.
    pub fn usage_total(&self) -> Usage {
        let mut u = Usage::default();
        for (_, x) in self.usage_by_key.values() {
            u.add(x);
        }
        u
    }

    /// The session's tasks in progress.
    pub fn in_progress(&self) -> Vec<&crate::tasks::Task> {
        self.tasks
            .tasks
            .values()
            .filter(|t| t.status == TaskStatus::InProgress)
            .collect()
    }

    fn touch(&mut self, env: &Envelope) {
        if self.first_seq == 0 {
            self.first_seq = env.seq;
            self.first_at_us = env.recorded_at_us;
            self.host = env.host.clone();
        }
        self.last_seq = env.seq;
        self.last_at_us = env.recorded_at_us;
    }

    /// Counts one unit of activity for the reminder (a tool call or a prompt).
    fn activity(&mut self, last_task_command: Seq) {
        if last_task_command > self.reminder.seen_task_command {
            self.reminder.seen_task_command = last_task_command;
            self.reset_reminder();
        }
        self.reminder.since_task_use += 1;
    }

    fn reset_reminder(&mut self) {
        self.reminder.since_task_use = 0;
        self.reminder.last_reminder_at = None;
    }

    /// Whether a compaction was announced (a pre-compaction event) that the host's session file
    /// has not shown yet: Copilot CLI compacts while the turn goes on.
    pub fn awaits_compaction(&self) -> bool {
        self.compaction_announced_at > self.compaction_confirmed_at
    }

    /// Whether every hook event of the session was a call served to it (a cloud session seen
    /// only through the tools it ran here).
    pub fn served_only(&self) -> bool {
        self.served.events > 0 && self.served.events == self.hook_events
    }

    /// Folds a hook event of this session.
    pub fn apply_hook(&mut self, env: &Envelope, ev: &HookEvent, last_task_command: Seq) {
        self.touch(env);
        self.hook_events += 1;
        if ev.served {
            self.served_call(ev);
            return;
        }
        self.note_identity(env, ev);
        if self.status == Status::Ended && !matches!(ev.canonical, Canonical::SessionEnd { .. }) {
            self.status = Status::Active;
            self.end_reason = None;
        }
        let o = Origin {
            seq: env.seq,
            at_us: env.recorded_at_us,
            by: &ev.name,
        };
        match &ev.canonical {
            // A subagent's own prompt (Codex sends it with the parent's session id and the
            // subagent's agent_id) is not the session's.
            Canonical::Prompt { .. } if ev.agent_id.is_some() => {}
            Canonical::Prompt { text } => {
                self.prompt_carries = self.start_pending.take();
                self.status = Status::Active;
                self.prompt_count += 1;
                self.prompts.insert(0, clip(text, MAX_TEXT));
                self.prompts.truncate(MAX_PROMPTS);
                self.activity(last_task_command);
            }
            Canonical::ToolPre { .. }
            | Canonical::ToolPost { .. }
            | Canonical::ToolFailure { .. } => self.tool_event(ev, o, last_task_command),
            // A subagent's own end of turn (Copilot CLI fires agentStop inside a subagent too):
            // the session's agent is still at work.
            Canonical::Stop { .. } if ev.agent_id.is_some() => {}
            Canonical::SubagentStart { .. } | Canonical::SubagentStop { .. } => {
                if !self.subagent_event(&ev.canonical) {
                    return;
                }
            }
            Canonical::TaskCreated { .. } | Canonical::TaskCompleted { .. } => {
                self.task_event(&ev.canonical, o)
            }
            // Gemini CLI fires PreCompress before every model request, compressed or not: the
            // compaction is counted when its session file shows it (`ContextObserved`).
            Canonical::PreCompact { .. }
                if ev.host.facts().compaction.before_fires_without_compaction => {}
            // Copilot CLI's compaction ends after its preCompact, while the turn goes on: counted
            // now, and its record in the session file (`ContextObserved`) not again.
            Canonical::PreCompact { trigger, .. }
                if ev.host.facts().compaction.counted_from_session_file =>
            {
                self.compaction_announced(env.seq, trigger)
            }
            other => self.lifecycle(
                other,
                env.seq,
                crate::host::restores_at_prompt(&ev.host),
                ev.host.facts().compaction.before_can_cancel,
            ),
        }
        if let Some(u) = &ev.usage {
            self.host_usage(env.seq, ev.model.as_deref(), u);
        }
        if let Some(r) = &ev.resumed {
            self.resumed_with(env.seq, ev, r);
        }
        self.subagent_seen(ev);
    }

    /// A resume, fork or model switch's figures (Claude Code 2.1.330): `context_tokens` is the
    /// window the next request re-sends, a context reading before any transcript is read (a
    /// fork's first); the rest is kept for `show`.
    fn resumed_with(&mut self, seq: Seq, ev: &HookEvent, r: &crate::event::Resumed) {
        if matches!(ev.canonical, Canonical::SessionStart { .. }) {
            self.resumed = Some(r.clone());
        }
        if let Some(tokens) = r.context_tokens.filter(|t| *t > 0) {
            self.pressure.tokens = tokens;
            self.pressure.injected = 0;
            self.pressure.seq = seq;
        }
    }

    /// A tool call served to this session: counted apart, its edits noted, nothing else.
    fn served_call(&mut self, ev: &HookEvent) {
        self.served.events += 1;
        if self.cwd.is_none() {
            self.cwd = ev.cwd.clone();
        }
        let (tool, failed) = match &ev.canonical {
            Canonical::ToolPost { tool, .. } => (tool, false),
            Canonical::ToolFailure { tool, .. } => (tool, true),
            Canonical::ToolPre { tool, .. } if !ev.host.facts().sees_tool_results() => {
                (tool, false)
            }
            _ => return,
        };
        self.served.tool_calls += 1;
        self.served.failed += u64::from(failed);
        let label = tool_label(tool, ev.mcp_server.as_deref());
        self.served.recent.insert(0, label);
        self.served.recent.truncate(10);
        let call = ev.tool_call().unwrap_or_default();
        for path in &call.edited {
            push_recent(&mut self.served.files_edited, path, MAX_FILES);
        }
    }

    /// A model call's usage reported in the hook itself (OpenClaw's `llm_output`): its tokens
    /// (one response each, keyed by the event), and the context reading it gives.
    fn host_usage(&mut self, seq: Seq, model: Option<&str>, u: &crate::event::HostUsage) {
        let usage = Usage {
            input_tokens: u.input,
            output_tokens: u.output,
            cache_write_5m: u.cache_write,
            cache_write_1h: 0,
            cache_read: u.cache_read,
        };
        let model = model.unwrap_or_default().to_string();
        let run = u.run_id.as_deref().unwrap_or("run");
        let key = if u.once_per_run {
            run.to_string()
        } else {
            format!("{run}:{seq}")
        };
        if let Some((_, old)) = self.usage_by_key.get(&key) {
            if !crate::transcript::larger(&usage, old) {
                return;
            }
        }
        self.usage_by_key.insert(key, (model.clone(), usage));
        if !model.is_empty() {
            self.model = Some(model.clone());
            self.pressure.model = Some(model);
        }
        self.pressure.injected = 0;
        self.pressure.tokens = usage.context_tokens();
        self.pressure.seq = seq;
        if u.context_budget.is_some() {
            self.pressure.window = u.context_budget;
        }
    }

    /// Start, end, idle, stop and compaction: the session's status and what comes with it.
    /// `at_prompt`: the host takes context only with a prompt, so a start or compaction's text
    /// waits for the next one (`start_pending`); other hosts never set it. `counted_after`: a
    /// PreCompact can be cancelled (Codex CLI), so the compaction is counted at PostCompact.
    fn lifecycle(&mut self, c: &Canonical, seq: Seq, at_prompt: bool, counted_after: bool) {
        match c {
            Canonical::SessionStart { source } => {
                self.status = Status::Active;
                self.source = Some(source.clone());
                if at_prompt {
                    self.start_pending = Some(source.clone());
                }
                if source == "compact" || source == "clear" {
                    self.pressure.start_over(seq);
                }
            }
            Canonical::SessionEnd { reason } => {
                self.status = Status::Ended;
                self.end_reason = Some(reason.clone());
            }
            Canonical::Notification { kind, .. } if kind == "idle_prompt" => {
                self.status = Status::Idle;
            }
            Canonical::Stop { last_message, .. } => {
                self.status = Status::Idle;
                if let Some(m) = last_message {
                    self.last_assistant_message = Some(clip(m, MAX_TEXT));
                }
            }
            Canonical::StopFailure { error } => {
                self.status = Status::Idle;
                self.failed("(turn)", error, seq);
            }
            Canonical::PreCompact { trigger, .. } => {
                self.status = Status::Compacting;
                if !counted_after {
                    self.compacted(trigger);
                }
                self.pressure.start_over(seq);
            }
            Canonical::PostCompact {
                summary, trigger, ..
            } => {
                self.status = Status::Active;
                if counted_after {
                    self.compacted(trigger);
                }
                if at_prompt {
                    self.start_pending = Some("compact".into());
                }
                self.pressure.start_over(seq);
                if let Some(s) = summary {
                    self.last_compact_summary = Some(clip(s, 1500));
                }
            }
            _ => {}
        }
    }

    /// One compaction, with its trigger (the last 20 kept).
    fn compacted(&mut self, trigger: &str) {
        self.compactions += 1;
        self.compact_triggers.push(trigger.to_string());
        if self.compact_triggers.len() > 20 {
            self.compact_triggers.remove(0);
        }
    }

    /// How a restore text names this session (`hookjournal: state of session <short id>`).
    fn restore_label(&self) -> String {
        format!(
            "hookjournal: state of session {}",
            crate::text::ident(crate::short_id(&self.id))
        )
    }

    /// A compaction the host's session file showed after the fact (it reads the context after
    /// it: the reading that found it is not discarded).
    fn compressed(&mut self, seq: Seq) {
        self.compacted("auto");
        self.pressure.start_over(seq);
    }

    /// A compaction announced by a host whose session file shows it later (Copilot CLI's
    /// preCompact): counted, the context starts over and the restore is due
    /// (`compression_seen_at`) now; the file's record of it, when it comes, counts nothing again
    /// (`awaits_compaction`).
    fn compaction_announced(&mut self, seq: Seq, trigger: &str) {
        self.status = Status::Compacting;
        self.compacted(trigger);
        self.compaction_announced_at = seq;
        self.compression_seen_at = seq;
        self.pressure.start_over(seq);
    }

    /// Before a tool, after it, and a failed call.
    fn tool_event(&mut self, ev: &HookEvent, o: Origin, last_task_command: Seq) {
        match &ev.canonical {
            // A host that never tells a tool's result (Crush): the call is counted before it.
            Canonical::ToolPre { tool, input } if !ev.host.facts().sees_tool_results() => {
                self.status = Status::Active;
                let input = input.as_ref().unwrap_or(&Value::Null);
                self.tool_used(ev, tool, input, &Value::Null, o, last_task_command);
            }
            Canonical::ToolPre { .. } => self.status = Status::Active,
            Canonical::ToolPost {
                tool,
                input,
                response,
            } => {
                let input = input.as_ref().unwrap_or(&Value::Null);
                let response = response.as_ref().unwrap_or(&Value::Null);
                self.tool_used(ev, tool, input, response, o, last_task_command);
            }
            Canonical::ToolFailure { tool, error, .. } => {
                self.tool_calls += 1;
                self.activity(last_task_command);
                self.mcp_call(ev);
                let label = tool_label(tool, ev.mcp_server.as_deref());
                self.failed(&label, &failure_text(error), o.seq);
            }
            _ => {}
        }
    }

    /// SubagentStart and SubagentStop. `false` for a SubagentStop that is no subagent of the
    /// session: Claude Code runs /compact as a forked agent (no start, no type); it is journaled,
    /// and nothing else of the event is folded.
    fn subagent_event(&mut self, c: &Canonical) -> bool {
        match c {
            Canonical::SubagentStart {
                agent_id,
                agent_type,
            } => self.subagent_started(agent_id, agent_type.as_deref()),
            Canonical::SubagentStop {
                agent_id,
                agent_type,
                last_message,
                transcript,
            } => {
                let known = self.subagents.iter().any(|s| &s.agent_id == agent_id);
                if !known && agent_type.as_deref().unwrap_or("").is_empty() {
                    return false;
                }
                self.subagent_stopped(
                    agent_id,
                    agent_type.as_deref(),
                    last_message.as_deref(),
                    transcript.as_deref(),
                );
            }
            _ => {}
        }
        true
    }

    /// Claude Code's TaskCreated and TaskCompleted: the session's own task store.
    fn task_event(&mut self, c: &Canonical, o: Origin) {
        match c {
            Canonical::TaskCreated {
                task_id,
                subject,
                description,
            } if !task_id.is_empty() => {
                let new = NewTask {
                    subject: subject.as_deref(),
                    description: description.as_deref(),
                    ..NewTask::new(Some(&self.id), task_id)
                };
                self.tasks.create(new, o);
            }
            Canonical::TaskCompleted { task_id, subject } if !task_id.is_empty() => {
                let new = NewTask {
                    subject: subject.as_deref(),
                    ..NewTask::new(Some(&self.id), task_id)
                };
                self.tasks.create(new, o);
                self.tasks
                    .set_status(Some(&self.id), task_id, TaskStatus::Completed, o, None);
            }
            _ => {}
        }
    }

    /// What every hook event says about the session: project directory, transcript, model, the
    /// looping agent and the agent's name (its role).
    fn note_identity(&mut self, env: &Envelope, ev: &HookEvent) {
        if self.cwd.is_none() || ev.cwd.is_some() {
            self.cwd = ev.cwd.clone().or(self.cwd.take());
        }
        if ev.transcript_path.is_some() && ev.agent_id.is_none() {
            self.transcript_path = ev.transcript_path.clone();
        }
        if let Some(m) = &ev.model {
            self.model = Some(m.clone());
        }
        if let Some(a) = &env.agent_id {
            self.loop_agent = Some(a.clone());
        }
        // A subagent's events carry its own `agent_id` and type: those are not the session's.
        if ev.agent_id.is_none() {
            if let Some(name) = ev.agent_name.as_ref().or(ev.agent_type.as_ref()) {
                self.agent_role = Some(name.clone());
            }
        }
    }

    /// A tool call that finished: the task store, the reminder counter, files, commits, plan.
    fn tool_used(
        &mut self,
        ev: &HookEvent,
        tool: &str,
        input: &Value,
        response: &Value,
        o: Origin,
        last_task_command: Seq,
    ) {
        self.tool_calls += 1;
        self.mcp_call(ev);
        if is_task_tool(tool) {
            self.apply_task_tool(tool, input, response, o);
            self.reset_reminder();
        } else {
            self.activity(last_task_command);
        }
        let call = ev
            .tool_call_in(ev.cwd.as_deref().or(self.cwd.as_deref()))
            .unwrap_or_default();
        for path in &call.edited {
            push_recent(&mut self.files_edited, path, MAX_FILES);
        }
        // A subagent's reads are its own context, not the session's; its edits changed the
        // project all the same.
        if ev.agent_id.is_none() {
            for path in &call.read {
                push_recent(&mut self.files_read, path, MAX_FILES);
            }
        }
        if let Some((hash, message)) = call.commit {
            self.commits.retain(|c| c.hash != hash);
            self.commits.insert(
                0,
                Commit {
                    hash,
                    message: clip(&message, 200),
                    seq: o.seq,
                },
            );
            self.commits.truncate(MAX_COMMITS);
        }
        if let Some(plan) = &call.plan {
            self.plan = Some(clip(plan, 1500));
        }
    }

    /// A call of an MCP server's tool, counted by server.
    fn mcp_call(&mut self, ev: &HookEvent) {
        if let Some(server) = &ev.mcp_server {
            *self.mcp_servers.entry(server.clone()).or_default() += 1;
        }
    }

    /// Records a failed tool call (or a failed turn, as tool `(turn)`), most recent first.
    fn failed(&mut self, tool: &str, error: &str, seq: Seq) {
        self.failed_tools.insert(
            0,
            FailedTool {
                tool: tool.to_string(),
                error: clip(error, 200),
                seq,
            },
        );
        self.failed_tools.truncate(MAX_FAILURES);
    }

    fn subagent_started(&mut self, agent_id: &str, agent_type: Option<&str>) {
        match self.subagents.iter_mut().find(|s| s.agent_id == agent_id) {
            Some(s) => s.running = true,
            None => self.subagents.push(Subagent {
                agent_id: agent_id.to_string(),
                agent_type: agent_type.map(str::to_string),
                running: true,
                last_message: None,
            }),
        }
    }

    fn subagent_stopped(
        &mut self,
        agent_id: &str,
        agent_type: Option<&str>,
        last_message: Option<&str>,
        transcript: Option<&str>,
    ) {
        if let Some(path) = transcript {
            self.subagent_transcripts
                .insert(path.to_string(), agent_id.to_string());
        }
        let last_message = last_message.map(|m| clip(m, 300));
        match self.subagents.iter_mut().find(|s| s.agent_id == agent_id) {
            Some(s) => {
                s.running = false;
                s.last_message = last_message;
            }
            None => self.subagents.push(Subagent {
                agent_id: agent_id.to_string(),
                agent_type: agent_type.map(str::to_string),
                running: false,
                last_message,
            }),
        }
    }

    /// A subagent's event before its SubagentStart (or without one) makes it known.
    fn subagent_seen(&mut self, ev: &HookEvent) {
        let (Some(t), Some(id)) = (&ev.agent_type, &ev.agent_id) else {
            return;
        };
        if !self
            .subagents
            .iter()
            .any(|s| s.agent_type.as_ref() == Some(t))
        {
            self.subagents.push(Subagent {
                agent_id: id.clone(),
                agent_type: Some(t.clone()),
                running: true,
                last_message: None,
            });
        }
    }

    fn apply_task_tool(&mut self, tool: &str, input: &Value, response: &Value, o: Origin) {
        match tool {
            "TaskCreate" => self.task_create(input, response, o),
            "TaskUpdate" => self.task_update(input, response, o),
            "TodoWrite" | "write_todos" => self.todo_write(input, o),
            _ => {}
        }
    }

    /// Claude's TaskCreate: the id exists only in the response.
    fn task_create(&mut self, input: &Value, response: &Value, o: Origin) {
        let id = response
            .get("task")
            .and_then(|t| id_at(t, &["id", "taskId", "task_id"]))
            .or_else(|| id_at(response, &["taskId", "id", "task_id"]));
        let Some(id) = id else { return };
        let subject = str_at(input, &["subject"])
            .or_else(|| response.get("task").and_then(|t| str_at(t, &["subject"])));
        let new = NewTask {
            subject,
            description: str_at(input, &["description"]),
            active_form: str_at(input, &["activeForm"]),
            owner: str_at(input, &["owner"]),
            ..NewTask::new(Some(&self.id), &id)
        };
        self.tasks.create(new, o);
    }

    /// Claude's TaskUpdate: subject, description, owner and status, each when given.
    fn task_update(&mut self, input: &Value, response: &Value, o: Origin) {
        let Some(id) = id_at(input, &["taskId", "id", "task_id"])
            .or_else(|| id_at(response, &["taskId", "id", "task_id"]))
        else {
            return;
        };
        let sid = Some(self.id.as_str());
        if !self.tasks.tasks.contains_key(&id) {
            let new = NewTask {
                subject: str_at(input, &["subject"]),
                description: str_at(input, &["description"]),
                ..NewTask::new(sid, &id)
            };
            self.tasks.create(new, o);
        }
        self.tasks.edit(
            &id,
            str_at(input, &["subject"]),
            str_at(input, &["description"]),
            o,
        );
        if let Some(owner) = str_at(input, &["owner"]) {
            self.tasks.set_owner(&id, Some(owner), o);
        }
        if let Some(st) = str_at(input, &["status"]).and_then(TaskStatus::parse) {
            self.tasks.set_status(sid, &id, st, o, None);
        }
    }

    /// TodoWrite (Gemini's write_todos): always the whole list; todos no longer in it are deleted.
    fn todo_write(&mut self, input: &Value, o: Origin) {
        let Some(todos) = input.get("todos").and_then(Value::as_array) else {
            return;
        };
        let sid = Some(self.id.as_str());
        let mut seen = Vec::new();
        for (i, todo) in todos.iter().enumerate() {
            let id = format!(
                "todo-{}",
                id_at(todo, &["id"]).unwrap_or_else(|| (i + 1).to_string())
            );
            let subject = str_at(todo, &["content", "subject", "description"]);
            if !self.tasks.tasks.contains_key(&id) {
                let new = NewTask {
                    subject,
                    active_form: str_at(todo, &["activeForm"]),
                    ..NewTask::new(sid, &id)
                };
                self.tasks.create(new, o);
            } else {
                self.tasks.edit(&id, subject, None, o);
            }
            if let Some(st) = str_at(todo, &["status"]).and_then(TaskStatus::parse) {
                self.tasks.set_status(sid, &id, st, o, None);
            }
            seen.push(id);
        }
        let gone: Vec<String> = self
            .tasks
            .tasks
            .keys()
            .filter(|k| k.starts_with("todo-") && !seen.contains(k))
            .cloned()
            .collect();
        for id in gone {
            self.tasks.set_status(
                sid,
                &id,
                TaskStatus::Deleted,
                o,
                Some("no longer in the todo list"),
            );
        }
    }

    /// A usage reading of a response another session counted first (`key`): its transcript
    /// position is taken, its tokens are not (they are the other session's).
    pub fn copied_usage(&mut self, env: &Envelope, key: String) {
        self.touch(env);
        if let Some(u) = derived::usage(&env.payload) {
            self.transcript_offsets.insert(u.path.clone(), u.offset);
        }
        self.usage_copied.insert(key);
    }

    /// A context reading from the host's session file: compactions it shows (counted, or
    /// confirming the one announced), and the context's size, model and window.
    fn context_observed(&mut self, env: &Envelope, c: ContextObserved) {
        self.transcript_offsets.insert(c.path, c.offset);
        let new: Vec<String> = c
            .compressions
            .iter()
            .filter(|id| !self.compressions_seen.contains(id))
            .cloned()
            .collect();
        for id in new {
            let cause = env.kind().cause().unwrap_or(env.seq);
            if self.awaits_compaction() {
                // The compaction its pre-compaction event announced (and counted).
                self.compaction_confirmed_at = cause;
            } else {
                self.compressed(env.seq);
                self.compression_seen_at = cause;
            }
            self.compressions_seen.push(id);
            if self.compressions_seen.len() > 50 {
                self.compressions_seen.remove(0);
            }
        }
        // The reading taken at the compaction itself shows the context before it.
        let before_compaction = env.kind().cause() == Some(self.pressure.compacted_at);
        if let (Some(tokens), false) = (c.tokens, before_compaction) {
            self.pressure.injected = 0;
            self.pressure.tokens = tokens;
            self.pressure.seq = env.seq;
            if c.window.is_some() {
                self.pressure.window = c.window;
            }
            if c.model.is_some() {
                self.pressure.model = c.model.clone();
                self.model = c.model;
            }
        }
    }

    /// An answer the hook gave (its recorded output): a blocked Stop or a stopped agent, the
    /// restore after a compaction, and the tokens it injected.
    fn answered(&mut self, seq: Seq, output: &str) {
        let answer = Answer::from_recorded(output);
        // A blocked Stop marks the emergency crossing as handled.
        if matches!(answer, Some(Answer::BlockStop { .. })) {
            self.pressure.emergency_blocked = true;
        }
        if matches!(answer, Some(Answer::StopAgent)) {
            self.stop_answered_at = seq;
        }
        let injected = match &answer {
            // Plain text is a host's context where its context is plain text (Kiro CLI).
            Some(Answer::CompactionText(text))
                if crate::host::Host::from_name(&self.host).facts().context
                    == crate::host::ContextForm::Plain =>
            {
                Some(text.as_str())
            }
            a => a.as_ref().and_then(Answer::injected_text),
        };
        // Only a line that starts so: a recorded value can never start a line.
        let header = format!("{} {}", self.restore_label(), AFTER_COMPACTION);
        if injected.is_some_and(|t| t.lines().any(|l| l.starts_with(&header))) {
            self.restored_at = seq;
        }
        self.pressure.injected += injected.map(estimated_tokens).unwrap_or(0);
    }

    /// Folds a derived event of this session.
    pub fn apply_derived(&mut self, env: &Envelope) {
        self.touch(env);
        match &env.kind() {
            Kind::UsageObserved { .. } => {
                let Some(u) = derived::usage(&env.payload) else {
                    return;
                };
                self.transcript_offsets.insert(u.path.clone(), u.offset);
                let key = format!("{}:{}", u.record.message_id, u.record.request_id);
                let replace = match self.usage_by_key.get(&key) {
                    Some((_, old)) => crate::transcript::larger(&u.record.usage, old),
                    None => true,
                };
                if replace {
                    self.usage_by_key
                        .insert(key, (u.record.model.clone(), u.record.usage));
                }
                if u.agent_id.is_none() && self.model.is_none() {
                    self.model = Some(u.record.model.clone());
                }
            }
            Kind::ContextObserved { .. } => {
                if let Some(c) = derived::parse::<ContextObserved>(&env.payload) {
                    self.context_observed(env, c);
                }
            }
            Kind::GitObserved { .. } => {
                if let Some(g) = derived::parse::<derived::GitObserved>(&env.payload) {
                    if g.branch.is_some() {
                        self.branch = g.branch;
                    }
                }
            }
            Kind::SessionMetrics { .. } => {
                self.metrics = derived::parse(&env.payload);
            }
            Kind::HostReported => {
                if let Some(r) = derived::parse::<derived::HostReported>(&env.payload) {
                    self.host_reported.apply(env.seq, env.recorded_at_us, &r);
                }
            }
            Kind::ReminderIssued { .. } => {
                self.reminder.last_reminder_at = Some(self.reminder.since_task_use);
                self.reminder.issued += 1;
            }
            Kind::ResponseEmitted { .. } => {
                if let Some(r) = derived::parse::<derived::ResponseEmitted>(&env.payload) {
                    self.answered(env.seq, &r.output);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_lines_are_recognised() {
        assert_eq!(
            parse_commit("[main 3f2a9c1] Add token-bucket rate limiter\n 2 files changed"),
            Some(("3f2a9c1".into(), "Add token-bucket rate limiter".into()))
        );
        assert_eq!(
            parse_commit("[main (root-commit) abcdef0] init"),
            Some(("abcdef0".into(), "init".into()))
        );
        assert_eq!(parse_commit("[warn] nothing"), None);
    }
}
