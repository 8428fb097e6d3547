//! The picture of a session over time, folded from the log for the HTML report: context readings
//! (the transcripts' and the host's), marks (compactions, reminders, blocks) and a timeline of
//! what happened (prompts, tool calls, failures, and each answer with the event that caused it).

use crate::config::PolicyConfig;
use crate::derived::{self, ContextObserved, HostReported, ResponseEmitted};
use crate::event::{self, Canonical};
use crate::kind::{Kind, KindOf};
use crate::policy::Answer;
use crate::views;
use journal::{Envelope, Seq};
use std::collections::BTreeMap;

/// Items kept per session (the most recent ones).
pub const MAX_ITEMS: usize = 400;
const MAX_TEXT: usize = 300;

/// What a mark on the context chart stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// A compaction.
    Compaction,
    /// A task reminder.
    Reminder,
    /// A blocked Stop or a stopped agent.
    Block,
}

impl MarkKind {
    /// Its name (`compaction`, `reminder`, `block`).
    pub fn as_str(&self) -> &'static str {
        match self {
            MarkKind::Compaction => "compaction",
            MarkKind::Reminder => "reminder",
            MarkKind::Block => "block",
        }
    }
}

/// One reading of the context window.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextPoint {
    /// When (µs).
    pub at_us: i64,
    /// Percent of the window used.
    pub pct: f64,
    /// Tokens in the window, when known.
    pub tokens: Option<u64>,
    /// `transcript` or `host`.
    pub source: &'static str,
}

/// A mark on the context chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// When (µs).
    pub at_us: i64,
    /// What it stands for.
    pub kind: MarkKind,
    /// Its label.
    pub label: String,
}

/// `prompt`, `tool`, `failure`, `answer`, `session`, `compaction`, `notification`, `stop`.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The event's seq.
    pub seq: Seq,
    /// When (µs).
    pub at_us: i64,
    /// Its kind (see above).
    pub kind: &'static str,
    /// Its title.
    pub title: String,
    /// What it said (clipped).
    pub text: String,
    /// For answers: the event that caused it (`Hook:UserPromptSubmit #12 "continue"`).
    pub why: Option<String>,
}

/// One session's picture over time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionTimeline {
    /// Context readings, in order.
    pub context: Vec<ContextPoint>,
    /// Compactions, reminders, blocks.
    pub marks: Vec<Mark>,
    /// What happened, the most recent `MAX_ITEMS`.
    pub items: Vec<Item>,
    /// Items dropped past `MAX_ITEMS`.
    pub dropped_items: u64,
    /// The first event's time (µs).
    pub first_at_us: i64,
    /// The latest event's time (µs).
    pub last_at_us: i64,
    /// The model, as last seen.
    pub model: Option<String>,
}

/// Per-session timelines, folded event by event.
#[derive(Clone, Debug, Default)]
pub struct Timelines {
    /// The timelines by session id.
    pub sessions: BTreeMap<String, SessionTimeline>,
    /// What each hook event was, for naming an answer's cause: seq → (label, summary).
    causes: BTreeMap<Seq, (String, String)>,
    /// The compressions each session's file showed so far (Gemini CLI: a compaction is one the
    /// session file shows, never a PreCompress alone).
    compressions_seen: BTreeMap<String, std::collections::BTreeSet<String>>,
}

fn clip(s: &str, n: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

/// What a tool call is about: a task's id and status, a to-do list's length, else the call's
/// own subject (`ToolCall::subject`: its path, command, pattern…, in every host's words).
fn tool_arg(ev: &event::HookEvent, input: Option<&serde_json::Value>) -> String {
    let Some(i) = input else {
        return String::new();
    };
    if let Some(id) = i.get("taskId").and_then(|x| x.as_str()) {
        let status = i
            .get("status")
            .and_then(|x| x.as_str())
            .unwrap_or("updated");
        return format!("[{}] → {status}", clip(id, 40));
    }
    if let Some(todos) = i.get("todos").and_then(|x| x.as_array()) {
        return format!("{} todos", todos.len());
    }
    [
        "file_path",
        "command",
        "pattern",
        "subject",
        "description",
        "url",
        "path",
        "prompt",
    ]
    .iter()
    .find_map(|k| i.get(*k).and_then(|x| x.as_str()))
    .map(str::to_string)
    .or_else(|| ev.tool_call().map(|c| c.subject))
    .map(|s| clip(&s, 160))
    .unwrap_or_default()
}

/// The item kind and title a hook event shows as; `None` for events the timeline leaves out.
fn item_of(ev: &event::HookEvent) -> Option<(&'static str, String)> {
    Some(match &ev.canonical {
        Canonical::Prompt { .. } => ("prompt", "prompt".to_string()),
        Canonical::ToolPost { tool, .. } => ("tool", tool.clone()),
        Canonical::ToolFailure { tool, .. } => ("failure", format!("{tool} failed")),
        Canonical::StopFailure { .. } => ("failure", "turn failed".to_string()),
        Canonical::SessionStart { source } => ("session", format!("session start ({source})")),
        Canonical::SessionEnd { reason } => ("session", format!("session end ({reason})")),
        Canonical::PreCompact { trigger, .. } => ("compaction", format!("compaction ({trigger})")),
        Canonical::Notification { kind, .. } => ("notification", format!("notification ({kind})")),
        Canonical::Stop { .. } => ("stop", "answer finished".to_string()),
        Canonical::SubagentStop { agent_type, .. } => (
            "stop",
            format!("subagent {} finished", agent_type.as_deref().unwrap_or("")),
        ),
        Canonical::TaskCreated { .. } | Canonical::TaskCompleted { .. } => {
            ("tool", ev.name.clone())
        }
        _ => return None,
    })
}

impl Timelines {
    /// Folds one event; `keep` says whether it falls in the report's slice (session, dates).
    pub fn apply(&mut self, env: &Envelope, cfg: &PolicyConfig, keep: bool) {
        let Some(sid) = env.session_id.clone() else {
            return;
        };
        match &env.kind() {
            Kind::Hook { name } => self.hook(env, &sid, name, keep),
            Kind::ContextObserved { .. } => {
                let Some(c) = derived::parse::<ContextObserved>(&env.payload) else {
                    return;
                };
                let seen = self.compressions_seen.entry(sid.clone()).or_default();
                let new = c
                    .compressions
                    .iter()
                    .filter(|id| seen.insert((*id).clone()))
                    .count();
                if !keep {
                    return;
                }
                for _ in 0..new {
                    let t = self.session(&sid, env);
                    t.marks.push(Mark {
                        at_us: env.recorded_at_us,
                        kind: MarkKind::Compaction,
                        label: "compaction (shown by the session file)".into(),
                    });
                    t.push(Item {
                        seq: env.seq,
                        at_us: env.recorded_at_us,
                        kind: "compaction",
                        title: "compaction (shown by the session file)".into(),
                        text: String::new(),
                        why: None,
                    });
                }
                let Some(tokens) = c.tokens else {
                    return;
                };
                let t = self.session(&sid, env);
                if c.model.is_some() {
                    t.model = c.model.clone();
                }
                let window = views::window_for(c.model.as_deref().or(t.model.as_deref()), cfg);
                t.context.push(ContextPoint {
                    at_us: env.recorded_at_us,
                    pct: tokens as f64 * 100.0 / window as f64,
                    tokens: Some(tokens),
                    source: "transcript",
                });
            }
            Kind::HostReported if keep => {
                let Some(r) = derived::parse::<HostReported>(&env.payload) else {
                    return;
                };
                let Some(pct) = r.used_percentage else {
                    return;
                };
                self.session(&sid, env).context.push(ContextPoint {
                    at_us: env.recorded_at_us,
                    pct,
                    tokens: r.context_tokens,
                    source: "host",
                });
            }
            Kind::ReminderIssued { cause } if keep => {
                let r = derived::parse::<derived::ReminderIssued>(&env.payload);
                let t = self.session(&sid, env);
                t.marks.push(Mark {
                    at_us: env.recorded_at_us,
                    kind: MarkKind::Reminder,
                    label: format!(
                        "task reminder after {} steps (cause #{cause})",
                        r.map(|r| r.since_task_use).unwrap_or(0)
                    ),
                });
            }
            Kind::ResponseEmitted { cause } if keep => self.answer(env, &sid, *cause),
            _ => {}
        }
    }

    /// A hook event: remembered as a cause when it can be answered, and an item of its own.
    fn hook(&mut self, env: &Envelope, sid: &str, name: &str, keep: bool) {
        let parsed = event::from_envelope(env);
        let summary = parsed.as_ref().map(summary).unwrap_or_default();
        // Causes are remembered only for events that get answered (bounded memory).
        if matches!(
            name,
            "SessionStart"
                | "UserPromptSubmit"
                | "PostToolUse"
                | "Stop"
                | "PreCompact"
                | "SessionEnd"
                | "SubagentStop"
        ) || parsed
            .as_ref()
            .is_some_and(|p| !matches!(p.canonical, Canonical::ToolPre { .. } | Canonical::Other))
        {
            self.causes
                .insert(env.seq, (format!("{name} #{}", env.seq), summary.clone()));
        }
        if !keep {
            return;
        }
        let Some(ev) = parsed else {
            return;
        };
        let t = self.session(sid, env);
        if let Some(m) = &ev.model {
            t.model = Some(m.clone());
        }
        // Gemini CLI's PreCompress fires before every model request: not an item, and a
        // compaction only when the session file shows one (`ContextObserved`).
        let facts = ev.host.facts().compaction;
        if facts.before_fires_without_compaction
            && matches!(ev.canonical, Canonical::PreCompact { .. })
        {
            return;
        }
        // Where the session file counts compactions (Copilot CLI), the mark is put there too.
        let from_file = facts.counted_from_session_file;
        // Marked where the session's count takes it: at PostCompact where the host can cancel at
        // PreCompact (Codex CLI), else at PreCompact.
        let cancellable = facts.before_can_cancel;
        let compacted = match &ev.canonical {
            Canonical::PreCompact { trigger, .. } if !cancellable && !from_file => Some(trigger),
            Canonical::PostCompact { trigger, .. } if cancellable => Some(trigger),
            _ => None,
        };
        if let Some(trigger) = compacted {
            t.marks.push(Mark {
                at_us: env.recorded_at_us,
                kind: MarkKind::Compaction,
                label: format!("compaction ({trigger})"),
            });
        }
        let Some((kind, title)) = item_of(&ev) else {
            return;
        };
        t.push(Item {
            seq: env.seq,
            at_us: env.recorded_at_us,
            kind,
            title,
            text: summary,
            why: None,
        });
    }

    /// An answer, with the event that caused it; a block (or a stopped agent) is also a mark.
    fn answer(&mut self, env: &Envelope, sid: &str, cause: Seq) {
        let Some(r) = derived::parse::<ResponseEmitted>(&env.payload) else {
            return;
        };
        let why = self
            .causes
            .get(&cause)
            .map(|(l, s)| {
                if s.is_empty() {
                    l.clone()
                } else {
                    format!("{l}: {s}")
                }
            })
            .unwrap_or_else(|| format!("event #{cause}"));
        let answer = Answer::from_recorded(&r.output);
        let blocked = matches!(answer, Some(Answer::BlockStop { .. } | Answer::StopAgent));
        let text = answer
            .as_ref()
            .map(|a| a.text().to_string())
            .unwrap_or_else(|| r.output.clone());
        let t = self.session(sid, env);
        if blocked {
            t.marks.push(Mark {
                at_us: env.recorded_at_us,
                kind: MarkKind::Block,
                label: format!("blocked: {}", clip(&text, 120)),
            });
        }
        t.push(Item {
            seq: env.seq,
            at_us: env.recorded_at_us,
            kind: "answer",
            title: if blocked {
                "answer (block)".into()
            } else {
                "answer".into()
            },
            text: clip(&text, 1200),
            why: Some(why),
        });
    }

    fn session(&mut self, sid: &str, env: &Envelope) -> &mut SessionTimeline {
        let t = self.sessions.entry(sid.to_string()).or_default();
        if t.first_at_us == 0 {
            t.first_at_us = env.recorded_at_us;
        }
        t.last_at_us = env.recorded_at_us;
        t
    }
}

impl SessionTimeline {
    fn push(&mut self, item: Item) {
        if self.items.len() >= MAX_ITEMS {
            self.items.remove(0);
            self.dropped_items += 1;
        }
        self.items.push(item);
    }
}

fn summary(ev: &event::HookEvent) -> String {
    match &ev.canonical {
        Canonical::Prompt { text } => clip(text, MAX_TEXT),
        Canonical::ToolPost { input, .. } | Canonical::ToolPre { input, .. } => {
            tool_arg(ev, input.as_ref())
        }
        Canonical::ToolFailure { input, error, .. } => {
            let arg = tool_arg(ev, input.as_ref());
            let err = clip(
                error.lines().find(|l| !l.trim().is_empty()).unwrap_or(""),
                200,
            );
            if arg.is_empty() {
                err
            } else {
                format!("{arg} — {err}")
            }
        }
        Canonical::StopFailure { error } => clip(error, 200),
        Canonical::Notification { message, .. } => clip(message, 200),
        Canonical::Stop { last_message, .. } => last_message
            .as_deref()
            .map(|m| clip(m, 200))
            .unwrap_or_default(),
        Canonical::SubagentStop { last_message, .. } => last_message
            .as_deref()
            .map(|m| clip(m, 200))
            .unwrap_or_default(),
        Canonical::TaskCreated {
            subject, task_id, ..
        }
        | Canonical::TaskCompleted { subject, task_id } => {
            format!("[{task_id}] {}", subject.as_deref().unwrap_or(""))
        }
        Canonical::PostCompact { summary, .. } => {
            summary.as_deref().map(|s| clip(s, 200)).unwrap_or_default()
        }
        _ => String::new(),
    }
}
