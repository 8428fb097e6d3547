//! The hook policy: (state, event) → answer. Pure: the state already holds everything the outside
//! world said (transcripts, git, the agent id), so `replay --verify` can recompute every answer.

pub use crate::answer::Answer;
use crate::config::PolicyConfig;
use crate::derived::{Checkpoint, ReminderIssued, TaskReleased};
use crate::event::{Canonical, EventKind, HookEvent};
use crate::fold::State;
use crate::host::AnswerShape;
use crate::session::SessionState;
use crate::tasks::{TaskRef, TaskStatus};
use crate::views::{self, Purpose, Tier};
use journal::Envelope;
use serde_json::Value;

/// Events the policy asks to record, in the same batch as its cause.
#[derive(Clone, Debug, PartialEq)]
pub enum DecisionEvent {
    /// A task reminder was injected.
    ReminderIssued(ReminderIssued),
    /// A task was failed and released.
    TaskReleased(TaskReleased),
    /// The restore text at a compaction.
    Checkpoint(Checkpoint),
}

/// The policy's answer to one hook event: what to print, what to say on stderr, what to record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// The answer to print, if any.
    pub answer: Option<Answer>,
    /// One line for stderr (warnings the user should see in logs).
    pub stderr: Option<String>,
    /// Events to record in the same batch as the hook event.
    pub events: Vec<DecisionEvent>,
}

impl Decision {
    /// What the hook prints (see `Answer`'s `Display`); empty for no answer.
    pub fn output_text(&self) -> String {
        self.answer
            .as_ref()
            .map(Answer::to_string)
            .unwrap_or_default()
    }

    /// The answer as JSON, if there is one.
    pub fn output(&self) -> Option<Value> {
        self.answer.as_ref().map(Answer::to_json)
    }
}

/// Context for the host's event, where the host takes context at that event.
fn context_answer(ev: &HookEvent, text: String) -> Option<Answer> {
    ev.host
        .answers(ev.canonical.kind(), AnswerShape::Context)
        .then(|| Answer::Context {
            event: ev.name.clone(),
            text,
            form: ev.host.facts().context,
        })
}

/// The looping agent, from the agent-id variable captured in the envelope at ingestion.
fn loop_agent(env: &Envelope) -> Option<&str> {
    env.agent_id.as_deref()
}

/// Why a loop agent's tasks are released at this event, if they are. `agent` is the looping
/// agent's id (the agent-id variable, captured at ingestion); loop mode can also be configured.
pub fn loop_release_reason(
    agent: Option<&str>,
    ev: &HookEvent,
    cfg: &PolicyConfig,
) -> Option<&'static str> {
    if !cfg.loop_mode && agent.is_none() {
        return None;
    }
    match ev.canonical {
        Canonical::PreCompact { .. } if announces_compaction(ev) => Some(CONTEXT_LIMIT),
        Canonical::SessionEnd { .. } if agent.is_some() => Some(SESSION_ENDED),
        _ => None,
    }
}

/// Whether the host's pre-compaction event means a compaction happens. Gemini CLI's PreCompress
/// fires before every model request, before its threshold check: there, only the session file
/// read at a later event shows a compaction (`SessionState::compression_seen_at`).
fn announces_compaction(ev: &HookEvent) -> bool {
    !ev.host.facts().compaction.before_fires_without_compaction
}

/// Whether the session-file read made for this event found a compaction (Gemini CLI).
fn compaction_found_at(session: Option<&SessionState>, env: &Envelope) -> bool {
    session.is_some_and(|s| s.compression_seen_at == env.seq)
}

/// Why a loop agent's tasks are released at a compaction.
pub const CONTEXT_LIMIT: &str = "context limit reached";
const SESSION_ENDED: &str = "session ended unexpectedly";

/// Fails the agent's in-progress tasks (journal-wide, and the session's own that it owns).
fn release(st: &State, s: Option<&SessionState>, agent: &str, reason: &str) -> Vec<TaskReleased> {
    let mut out: Vec<TaskReleased> = st
        .tasks
        .active_for(agent)
        .into_iter()
        .map(|t| TaskReleased {
            task: TaskRef {
                session: None,
                id: t.id.clone(),
            },
            reason: reason.into(),
            agent: Some(agent.into()),
        })
        .collect();
    if let Some(s) = s {
        out.extend(s.tasks.active_for(agent).into_iter().map(|t| TaskReleased {
            task: TaskRef {
                session: Some(s.id.clone()),
                id: t.id.clone(),
            },
            reason: reason.into(),
            agent: Some(agent.into()),
        }));
    }
    out
}

/// The answer a loop agent's PreCompact gets, whatever the journal's state: it needs nothing read,
/// so a hook that could not take the journal's lock still gives it (the release follows when the
/// spooled event is ingested, see `decide_spooled`).
pub fn loop_answer(agent: Option<&str>, ev: &HookEvent, cfg: &PolicyConfig) -> Option<Answer> {
    match (&ev.canonical, loop_release_reason(agent, ev, cfg)) {
        (Canonical::PreCompact { .. }, Some(_))
            if ev
                .host
                .answers(EventKind::PreCompact, AnswerShape::StopAgent) =>
        {
            Some(Answer::StopAgent)
        }
        _ => None,
    }
}

/// The loop-safety part of an answer: release the agent's tasks, stop the agent at PreCompact.
fn loop_safety(st: &State, env: &Envelope, ev: &HookEvent, cfg: &PolicyConfig, d: &mut Decision) {
    let agent = loop_agent(env);
    let session = ev.session_id.as_deref().and_then(|id| st.sessions.get(id));
    let found = (cfg.loop_mode || agent.is_some()) && compaction_found_at(session, env);
    let Some(reason) =
        loop_release_reason(agent, ev, cfg).or_else(|| found.then_some(CONTEXT_LIMIT))
    else {
        return;
    };
    let released = agent
        .map(|a| release(st, session, a, reason))
        .unwrap_or_default();
    let names: Vec<String> = released.iter().map(|r| r.task.display()).collect();
    let what = if names.is_empty() {
        "no active task in the journal to release".to_string()
    } else {
        format!("failed and released task {}", names.join(", "))
    };
    let name = agent.unwrap_or("(loop mode)");
    // Copilot CLI honours no stop at all (measured): the line says so rather than claim one.
    let stopping = if ev
        .host
        .facts()
        .answers
        .iter()
        .any(|(_, shape)| *shape == AnswerShape::StopAgent)
    {
        " and stopping the agent"
    } else {
        " (the host takes no stop: the agent goes on)"
    };
    d.stderr = match ev.canonical {
        Canonical::PreCompact { .. } if announces_compaction(ev) => Some(format!(
            "hookjournal: agent {name} reached the context limit; {what}{stopping}"
        )),
        _ if found => Some(format!(
            "hookjournal: agent {name} reached the context limit (the host compressed its context); {what}{stopping}"
        )),
        Canonical::PreCompact { .. } => Some(format!(
            "hookjournal: agent {name} reached the context limit; {what}{stopping}"
        )),
        _ if !names.is_empty() => Some(format!(
            "hookjournal: session of agent {name} ended; {what}"
        )),
        _ => None,
    };
    d.events
        .extend(released.into_iter().map(DecisionEvent::TaskReleased));
    if let Some(answer) = loop_answer(agent, ev, cfg) {
        d.answer = Some(answer);
    } else if found && ev.host.answers(ev.canonical.kind(), AnswerShape::StopAgent) {
        d.answer = Some(Answer::StopAgent);
    }
}

/// What the journal records for an event that waited in the spool: the hook answered it without
/// the state (`loop_answer`), and the loop release it asked for happens now, exactly once.
pub fn decide_spooled(st: &State, env: &Envelope, ev: &HookEvent, cfg: &PolicyConfig) -> Decision {
    let mut d = Decision::default();
    loop_safety(st, env, ev, cfg, &mut d);
    d
}

/// Tasks whose owner has been silent longer than the lease at `now_us` (an agent killed without a
/// SessionEnd never releases its task itself). The time is the event's own, recorded at ingestion.
/// The journal-wide tasks, and with `all_sessions` every session's own tasks too (the CLI, which
/// reads the whole checkpoint; a hook holds only its own session, so it looks at none, and
/// `replay --verify` recomputes the same answer).
pub fn lease_expired(
    st: &State,
    now_us: i64,
    cfg: &PolicyConfig,
    all_sessions: bool,
) -> Vec<TaskReleased> {
    if cfg.task_lease_secs == 0 {
        return Vec::new();
    }
    let lease_us = cfg.task_lease_secs.saturating_mul(1_000_000) as i64;
    let mut out = Vec::new();
    let sessions = st.sessions.values().filter(|_| all_sessions);
    let lists = std::iter::once(&st.tasks).chain(sessions.map(|s| &s.tasks));
    for list in lists {
        for t in list.tasks.values() {
            let Some(owner) = t.owner.as_deref() else {
                continue;
            };
            if t.status != TaskStatus::InProgress {
                continue;
            }
            let seen = st.global.agent_seen.get(owner).copied().unwrap_or(0);
            let last = seen.max(t.changed_at_us());
            let silent = now_us.saturating_sub(last);
            if silent > lease_us {
                out.push(TaskReleased {
                    task: t.task_ref(),
                    reason: format!(
                        "lease expired: agent {owner} silent for {} (lease {})",
                        duration_text(silent / 1_000_000),
                        duration_text(cfg.task_lease_secs as i64)
                    ),
                    agent: Some(owner.to_string()),
                });
            }
        }
    }
    out
}

/// 7260 → "2h 1m"; 59 → "59s".
pub fn duration_text(secs: i64) -> String {
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m"),
        _ if m == 0 => format!("{h}h"),
        _ => format!("{h}h {m}m"),
    }
}

fn reminder_due(
    st: &State,
    s: &SessionState,
    cfg: &PolicyConfig,
) -> Option<(ReminderIssued, String)> {
    let r = &s.reminder;
    if r.since_task_use < cfg.reminder_threshold {
        return None;
    }
    if let Some(at) = r.last_reminder_at {
        if r.since_task_use < at + cfg.reminder_cooldown {
            return None;
        }
    }
    let open = views::open_tasks_for(st, s);
    if open.is_empty() {
        return None;
    }
    let text = views::reminder_text(&open, r.since_task_use);
    Some((
        ReminderIssued {
            open_tasks: open.iter().map(|t| t.task_ref().display()).collect(),
            since_task_use: r.since_task_use,
        },
        text,
    ))
}

/// Whether `decide` or `decide_spooled` for hook event `env` (folded into `st`) can read the
/// journal-wide tasks: a hook loads that partition only then. Every tool call pays for what its
/// answer reads, and a PostToolUse whose session is not due a reminder, a Stop or a Notification
/// reads no task. An over-approximation: `true` whenever a branch that reads them may run.
pub fn reads_tasks(st: &State, env: &Envelope, ev: &HookEvent, cfg: &PolicyConfig) -> bool {
    if ev.served {
        return false;
    }
    let session = ev.session_id.as_deref().and_then(|id| st.sessions.get(id));
    // A loop's release, a compaction found in the session file, or the restore after it.
    if loop_release_reason(loop_agent(env), ev, cfg).is_some()
        || compaction_found_at(session, env)
        || session.is_some_and(|s| s.compression_seen_at > s.restored_at)
    {
        return true;
    }
    match &ev.canonical {
        Canonical::SessionStart { .. }
        | Canonical::PreCompact { .. }
        | Canonical::Prompt { .. } => true,
        Canonical::ToolPost { .. } => {
            session.is_some_and(|s| s.reminder.since_task_use >= cfg.reminder_threshold)
        }
        // Crush's only event: its reminder rides on the tool's result.
        Canonical::ToolPre { .. } if ev.host.answers(EventKind::ToolPre, AnswerShape::Context) => {
            session.is_some_and(|s| s.reminder.since_task_use >= cfg.reminder_threshold)
        }
        _ => false,
    }
}

/// The answer to hook event `env` (already folded into `st`, with its observations).
pub fn decide(st: &State, env: &Envelope, ev: &HookEvent, cfg: &PolicyConfig) -> Decision {
    let mut d = Decision::default();
    // A call served to a session that runs elsewhere: recorded for it, never answered (the
    // answer would reach another machine's session through its tool result).
    if ev.served {
        return d;
    }
    let session = ev.session_id.as_deref().and_then(|id| st.sessions.get(id));
    match &ev.canonical {
        Canonical::SessionStart { source } => {
            at_session_start(st, env, ev, cfg, session, source, &mut d)
        }
        Canonical::PreCompact { trigger, .. } => {
            let real = announces_compaction(ev) || compaction_found_at(session, env);
            if let Some(s) = session.filter(|_| real) {
                at_pre_compact(st, s, ev, cfg, trigger, &mut d);
            }
            loop_safety(st, env, ev, cfg, &mut d);
        }
        // A host that takes no context here (Cursor): nothing to say, and no reminder spent on it.
        Canonical::Prompt { .. } | Canonical::ToolPost { .. } | Canonical::ToolPre { .. }
            if !ev.host.answers(ev.canonical.kind(), AnswerShape::Context) => {}
        // A subagent's prompt or tool: no reminder or notice injected into the subagent (the
        // session's agent keeps the tasks; the reminder comes at its own next tool or prompt).
        Canonical::Prompt { .. } | Canonical::ToolPost { .. } | Canonical::ToolPre { .. }
            if ev.agent_id.is_some() => {}
        Canonical::Prompt { .. } => {
            if let Some(s) = session {
                at_prompt(st, s, ev, cfg, &mut d);
            }
        }
        // Where the host takes context before a tool (Crush appends it to the tool's result):
        // the reminder, as after a tool elsewhere.
        Canonical::ToolPost { .. } | Canonical::ToolPre { .. } => {
            if let Some((r, t)) = session.and_then(|s| reminder_due(st, s, cfg)) {
                d.events.push(DecisionEvent::ReminderIssued(r));
                d.answer = context_answer(ev, t);
            }
        }
        Canonical::Stop { active, .. } => {
            if let Some(s) = session {
                d.answer = at_stop(s, ev, cfg, *active);
            }
        }
        Canonical::SessionEnd { .. } => loop_safety(st, env, ev, cfg, &mut d),
        _ => {}
    }
    // A compaction the session file showed at another event (Gemini CLI's AfterAgent).
    if compaction_found_at(session, env)
        && !matches!(
            ev.canonical,
            Canonical::PreCompact { .. } | Canonical::SessionEnd { .. }
        )
    {
        loop_safety(st, env, ev, cfg, &mut d);
    }
    // After a compaction found in the session file (no SessionStart follows it on Gemini CLI):
    // the restore, once, with the next context the host takes.
    if let Some(s) = session {
        let kind = ev.canonical.kind();
        if s.compression_seen_at > s.restored_at
            && matches!(kind, EventKind::Prompt | EventKind::ToolPost)
            && ev.agent_id.is_none()
            && ev.host.answers(kind, AnswerShape::Context)
        {
            let restore = views::restore_text(st, s, cfg, Purpose::Restore { source: "compact" });
            let text = match d.answer.take() {
                Some(Answer::Context { text, .. }) => format!("{restore}\n\n{text}"),
                _ => restore,
            };
            d.answer = context_answer(ev, text);
        }
    }
    // A loop agent whose compaction was found where its host takes no stop (Gemini CLI ignores
    // PreCompress's output) is stopped at the next event that takes one.
    if let Some(s) = session {
        let looping = cfg.loop_mode || loop_agent(env).is_some();
        if looping
            && s.compression_seen_at > s.stop_answered_at
            && ev.host.answers(ev.canonical.kind(), AnswerShape::StopAgent)
        {
            d.answer = Some(Answer::StopAgent);
        }
    }
    d
}

/// SessionStart: the restore or startup text, and the tasks whose lease expired (released now).
fn at_session_start(
    st: &State,
    env: &Envelope,
    ev: &HookEvent,
    cfg: &PolicyConfig,
    session: Option<&SessionState>,
    source: &str,
    d: &mut Decision,
) {
    let expired = lease_expired(st, env.recorded_at_us, cfg, false);
    let text = session.and_then(|s| session_start_text(st, s, cfg, source));
    let text = match (text, released_text(&expired)) {
        (Some(t), Some(r)) => Some(format!("{t}\n{r}")),
        (t, r) => t.or(r),
    };
    if let Some(t) = text {
        d.answer = context_answer(ev, t);
    }
    d.events
        .extend(expired.into_iter().map(DecisionEvent::TaskReleased));
}

/// PreCompact: the checkpoint, and what the summariser should keep where the host takes it.
fn at_pre_compact(
    st: &State,
    s: &SessionState,
    ev: &HookEvent,
    cfg: &PolicyConfig,
    trigger: &str,
    d: &mut Decision,
) {
    d.events.push(DecisionEvent::Checkpoint(Checkpoint {
        trigger: trigger.to_string(),
        text: views::restore_text(st, s, cfg, Purpose::Compact { trigger }),
    }));
    if let Some(text) = views::compaction_guidance(st, s, cfg, trigger) {
        d.answer = compaction_answer(ev, text);
    }
}

/// A prompt: the pressure notice and the task reminder, either or both.
fn at_prompt(st: &State, s: &SessionState, ev: &HookEvent, cfg: &PolicyConfig, d: &mut Decision) {
    // The reminder is decided first: what it injects counts toward the tier at once.
    let reminder = reminder_due(st, s, cfg);
    let extra = reminder
        .as_ref()
        .map(|(_, t)| views::estimated_tokens(t))
        .unwrap_or(0);
    let mut parts = Vec::new();
    // Where the host takes no context at SessionStart, the restore (after a compaction or a
    // reset) or the startup list rides on the first prompt after it.
    if let Some(t) = s
        .prompt_carries
        .as_deref()
        .filter(|_| crate::host::restores_at_prompt(&ev.host))
        .and_then(|source| session_start_text(st, &before_prompt(s), cfg, source))
    {
        parts.push(t);
    }
    if let Some(t) = views::escalation_text(s, cfg, extra) {
        parts.push(t);
    }
    if let Some((r, t)) = reminder {
        d.events.push(DecisionEvent::ReminderIssued(r));
        parts.push(t);
    }
    if !parts.is_empty() {
        d.answer = context_answer(ev, parts.join("\n\n"));
    }
}

/// The session as it was before the prompt just folded: what a restore riding on that prompt
/// describes (the prompt itself follows it).
fn before_prompt(s: &SessionState) -> SessionState {
    let mut before = s.clone();
    if !before.prompts.is_empty() {
        before.prompts.remove(0);
    }
    before.prompt_count = before.prompt_count.saturating_sub(1);
    before
}

/// Stop: blocked once per emergency crossing, for the main agent on hosts that take a block,
/// never while the host says a Stop hook is already active.
fn at_stop(s: &SessionState, ev: &HookEvent, cfg: &PolicyConfig, active: bool) -> Option<Answer> {
    let (tier, _) = views::pressure(s, cfg);
    let can_block =
        ev.host.answers(EventKind::Stop, AnswerShape::BlockStop) && ev.agent_id.is_none();
    (tier == Tier::Emergency
        && !active
        && !s.pressure.emergency_blocked
        && cfg.block_stop_at_emergency
        && can_block)
        .then(|| Answer::BlockStop {
            reason: views::emergency_reason(s, cfg),
        })
}

/// The restore text (compact, clear, resume) or the startup list of open tasks.
fn session_start_text(
    st: &State,
    s: &SessionState,
    cfg: &PolicyConfig,
    source: &str,
) -> Option<String> {
    match source {
        "compact" | "resume" => views::has_facts(s)
            .then(|| views::restore_text(st, s, cfg, Purpose::Restore { source })),
        "clear" | "fork" => {
            let from = s
                .continues
                .as_ref()
                .and_then(|p| st.sessions.get(p))
                .unwrap_or(s);
            views::has_facts(from)
                .then(|| views::restore_text(st, from, cfg, Purpose::Restore { source }))
        }
        _ => views::startup_text(st, s, cfg),
    }
}

fn released_text(released: &[TaskReleased]) -> Option<String> {
    if released.is_empty() {
        return None;
    }
    let lines: Vec<String> = released
        .iter()
        .map(|r| {
            format!(
                "- {} ({})",
                crate::text::ident(&r.task.display()),
                crate::text::field(&r.reason, 300)
            )
        })
        .collect();
    Some(format!(
        "hookjournal: released {} task(s) for other agents:\n{}",
        released.len(),
        lines.join("\n")
    ))
}

/// How role priorities reach the summariser at the compaction point, on the hosts whose
/// compaction takes a hook's words (elsewhere they arrive in the restore after it).
///
/// Claude Code appends a PreCompact hook's stdout, trimmed, to the summary request as
/// "Additional Instructions" (manual and auto compaction alike). It forwards JSON as raw text and
/// rejects `hookSpecificOutput` for this event, so the answer here is plain text, printed as it is
/// (see `Answer`'s `Display`). Qwen Code reads the nested `additionalContext` there instead, and
/// appends it to its compression prompt the same way (measured on 0.24.4).
fn compaction_answer(ev: &HookEvent, text: String) -> Option<Answer> {
    if ev
        .host
        .answers(EventKind::PreCompact, AnswerShape::CompactionText)
    {
        return Some(Answer::CompactionText(text));
    }
    context_answer(ev, text)
}

impl DecisionEvent {
    /// The journal event recording this decision, caused by the hook event at `cause`.
    pub fn kind_and_body(&self, cause: journal::Seq) -> (crate::kind::Kind, Vec<u8>) {
        use crate::derived::body;
        use crate::kind::Kind;
        match self {
            DecisionEvent::ReminderIssued(r) => (Kind::ReminderIssued { cause }, body(r)),
            DecisionEvent::TaskReleased(r) => (Kind::TaskReleased { cause }, body(r)),
            DecisionEvent::Checkpoint(c) => (Kind::Checkpoint { cause }, body(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::ContextForm;

    /// What the hook printed reads back as the answer it was, and renders exactly as before the
    /// answer was typed (the recorded outputs `replay --verify` compares with).
    #[test]
    fn answers_render_as_recorded_and_read_back() {
        let cases = [
            (
                Answer::Context {
                    event: "UserPromptSubmit".into(),
                    text: "a \"quoted\" note".into(),
                    form: ContextForm::Nested,
                },
                r#"{"hookSpecificOutput":{"additionalContext":"a \"quoted\" note","hookEventName":"UserPromptSubmit"}}"#,
            ),
            (
                Answer::Context {
                    event: String::new(),
                    text: "hookjournal: 1 open task".into(),
                    form: ContextForm::Flat,
                },
                r#"{"additionalContext":"hookjournal: 1 open task"}"#,
            ),
            (
                Answer::Context {
                    event: String::new(),
                    text: "hookjournal: 1 open task".into(),
                    form: ContextForm::Envelope,
                },
                r#"{"context":"hookjournal: 1 open task"}"#,
            ),
            (
                Answer::Context {
                    event: String::new(),
                    text: "hookjournal: 1 open task".into(),
                    form: ContextForm::Modification,
                },
                r#"{"contextModification":"hookjournal: 1 open task"}"#,
            ),
            (
                Answer::Context {
                    event: String::new(),
                    text: "hookjournal: 1 open task".into(),
                    form: ContextForm::SnakeNested,
                },
                r#"{"hook_specific_output":{"additional_context":"hookjournal: 1 open task"}}"#,
            ),
            (
                Answer::CompactionText("hookjournal: keep\n- x".into()),
                "hookjournal: keep\n- x",
            ),
            (
                Answer::BlockStop {
                    reason: "full".into(),
                },
                r#"{"decision":"block","reason":"full"}"#,
            ),
            (
                Answer::StopAgent,
                r#"{"continue":false,"stopReason":"Context Limit Reached"}"#,
            ),
        ];
        for (answer, printed) in cases {
            assert_eq!(answer.to_string(), printed);
            assert_eq!(Answer::from_recorded(printed), Some(answer));
        }
        assert_eq!(Answer::from_recorded(""), None);
        assert_eq!(Answer::from_recorded(r#"{"systemMessage":"x"}"#), None);
        // Context that mentions a block is not a block.
        let context = Answer::Context {
            event: "Stop".into(),
            text: r#"{"decision":"block"}"#.into(),
            form: ContextForm::Nested,
        };
        assert_eq!(Answer::from_recorded(&context.to_string()), Some(context));
    }
}
