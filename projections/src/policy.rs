//! The hook policy: (state, event) → answer. Pure: the state already holds everything the outside
//! world said (transcripts, git, the agent id), so `replay --verify` can recompute every answer.

use crate::config::PolicyConfig;
use crate::derived::{Checkpoint, ReminderIssued, TaskReleased};
use crate::event::{Canonical, HookEvent};
use crate::fold::State;
use crate::session::SessionState;
use crate::tasks::TaskRef;
use crate::views::{self, Purpose, Tier};
use journal::Envelope;
use serde_json::{json, Value};

/// Events the policy asks to record, in the same batch as its cause.
#[derive(Clone, Debug, PartialEq)]
pub enum DecisionEvent {
    ReminderIssued(ReminderIssued),
    TaskReleased(TaskReleased),
    Checkpoint(Checkpoint),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// The one JSON object to print, if any.
    pub output: Option<Value>,
    /// One line for stderr (warnings the user should see in logs).
    pub stderr: Option<String>,
    pub events: Vec<DecisionEvent>,
}

impl Decision {
    pub fn output_text(&self) -> String {
        self.output
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_default()
    }
}

fn context_output(host: &str, event: &str, text: String) -> Option<Value> {
    match host {
        // Cursor has no context injection for these events.
        "cursor" => None,
        _ => Some(
            json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }),
        ),
    }
}

/// The looping agent, from the agent-id variable captured in the envelope at ingestion.
fn loop_agent(env: &Envelope) -> Option<&str> {
    env.agent_id.as_deref()
}

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

/// The answer to hook event `env` (already folded into `st`, with its observations).
pub fn decide(st: &State, env: &Envelope, ev: &HookEvent, cfg: &PolicyConfig) -> Decision {
    let mut d = Decision::default();
    let session = ev.session_id.as_deref().and_then(|id| st.sessions.get(id));
    let host = ev.host.as_str();
    match &ev.canonical {
        Canonical::SessionStart { source } => {
            let Some(s) = session else { return d };
            let text = match source.as_str() {
                "compact" | "resume" => views::has_facts(s)
                    .then(|| views::restore_text(st, s, cfg, Purpose::Restore { source })),
                "clear" => {
                    let from = s
                        .continues
                        .as_ref()
                        .and_then(|p| st.sessions.get(p))
                        .unwrap_or(s);
                    views::has_facts(from)
                        .then(|| views::restore_text(st, from, cfg, Purpose::Restore { source }))
                }
                _ => views::startup_text(st, s, cfg),
            };
            if let Some(t) = text {
                d.output = context_output(host, &ev.name, t);
            }
        }
        Canonical::PreCompact { trigger, .. } => {
            if let Some(s) = session {
                d.events.push(DecisionEvent::Checkpoint(Checkpoint {
                    trigger: trigger.clone(),
                    text: views::restore_text(st, s, cfg, Purpose::Compact { trigger }),
                }));
            }
            let agent = loop_agent(env);
            if (cfg.loop_mode || agent.is_some()) && host != "cursor" {
                let released = agent
                    .map(|a| release(st, session, a, "context limit reached"))
                    .unwrap_or_default();
                let names: Vec<String> = released.iter().map(|r| r.task.display()).collect();
                d.stderr = Some(format!(
                    "hookjournal: agent {} reached the context limit; {} and stopping the agent",
                    agent.unwrap_or("(loop mode)"),
                    if names.is_empty() {
                        "no active task to release".to_string()
                    } else {
                        format!("failed and released task {}", names.join(", "))
                    }
                ));
                d.events
                    .extend(released.into_iter().map(DecisionEvent::TaskReleased));
                d.output =
                    Some(json!({ "continue": false, "stopReason": "Context Limit Reached" }));
            }
        }
        // Cursor takes no injected context: nothing to say, and no reminder spent on it.
        Canonical::Prompt { .. } | Canonical::ToolPost { .. } if host == "cursor" => {}
        Canonical::Prompt { .. } => {
            let Some(s) = session else { return d };
            let mut parts = Vec::new();
            if let Some(t) = views::escalation_text(s, cfg) {
                parts.push(t);
            }
            if let Some((r, t)) = reminder_due(st, s, cfg) {
                d.events.push(DecisionEvent::ReminderIssued(r));
                parts.push(t);
            }
            if !parts.is_empty() {
                d.output = context_output(host, &ev.name, parts.join("\n\n"));
            }
        }
        Canonical::ToolPost { .. } => {
            let Some(s) = session else { return d };
            if let Some((r, t)) = reminder_due(st, s, cfg) {
                d.events.push(DecisionEvent::ReminderIssued(r));
                d.output = context_output(host, &ev.name, t);
            }
        }
        Canonical::Stop { active, .. } => {
            let Some(s) = session else { return d };
            let (tier, _) = views::pressure(s, cfg);
            let can_block = matches!(host, "claude" | "codex") && ev.agent_id.is_none();
            if tier == Tier::Emergency
                && !*active
                && !s.pressure.emergency_blocked
                && cfg.block_stop_at_emergency
                && can_block
            {
                d.output =
                    Some(json!({ "decision": "block", "reason": views::emergency_reason(s, cfg) }));
            }
        }
        Canonical::SessionEnd { .. } => {
            if let Some(agent) = loop_agent(env) {
                let released = release(st, session, agent, "session ended unexpectedly");
                if !released.is_empty() {
                    let names: Vec<String> = released.iter().map(|r| r.task.display()).collect();
                    d.stderr = Some(format!(
                        "hookjournal: session of agent {agent} ended; failed and released task {}",
                        names.join(", ")
                    ));
                }
                d.events
                    .extend(released.into_iter().map(DecisionEvent::TaskReleased));
            }
        }
        _ => {}
    }
    d
}
