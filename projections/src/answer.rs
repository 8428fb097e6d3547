//! What the hook answers, before it is printed, and how each kind of answer is written in the
//! host's words (`Answer::to_json`). The policy decides which one (`policy::decide`).

use crate::host::{AnswerShape, ContextForm};
use serde_json::{json, Value};

/// What the hook answers, before it is printed: each kind of answer is honoured by some
/// (host, event) pairs only (`Host::answers`).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Text for the model's context, answering the host's event named `event`.
    Context {
        /// The event name as the host sent it (`hookEventName` must equal it).
        event: String,
        /// The text added to the context.
        text: String,
        /// How the host reads it (nested in `hookSpecificOutput`, or flat).
        form: ContextForm,
    },
    /// Plain text for the compaction's summariser (Claude Code's PreCompact).
    CompactionText(String),
    /// A blocked Stop: the agent goes on with `reason` as its prompt.
    BlockStop {
        /// What the agent is told.
        reason: String,
    },
    /// The agent is stopped (a loop agent at the context limit).
    StopAgent,
}

/// The `stopReason` of `Answer::StopAgent`.
const STOP_REASON: &str = "Context Limit Reached";

impl Answer {
    /// The kind of answer this is.
    pub fn shape(&self) -> AnswerShape {
        match self {
            Answer::Context { .. } => AnswerShape::Context,
            Answer::CompactionText(_) => AnswerShape::CompactionText,
            Answer::BlockStop { .. } => AnswerShape::BlockStop,
            Answer::StopAgent => AnswerShape::StopAgent,
        }
    }

    /// The answer as JSON: an object, or a string for plain text.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Context {
                event,
                text,
                form: ContextForm::Nested,
            } => json!({
                "hookSpecificOutput": { "hookEventName": event, "additionalContext": text }
            }),
            Answer::Context {
                text,
                form: ContextForm::Flat,
                ..
            } => json!({ "additionalContext": text }),
            Answer::Context {
                text,
                form: ContextForm::Envelope,
                ..
            } => json!({ "context": text }),
            Answer::Context {
                text,
                form: ContextForm::Modification,
                ..
            } => json!({ "contextModification": text }),
            Answer::Context {
                text,
                form: ContextForm::SnakeNested,
                ..
            } => json!({ "hook_specific_output": { "additional_context": text } }),
            Answer::Context {
                text,
                form: ContextForm::Plain,
                ..
            }
            | Answer::CompactionText(text) => Value::String(text.clone()),
            Answer::BlockStop { reason } => json!({ "decision": "block", "reason": reason }),
            Answer::StopAgent => json!({ "continue": false, "stopReason": STOP_REASON }),
        }
    }

    /// The text the answer shows: the context, the summariser's text, the reason.
    pub fn text(&self) -> &str {
        match self {
            Answer::Context { text, .. } | Answer::CompactionText(text) => text,
            Answer::BlockStop { reason } => reason,
            Answer::StopAgent => STOP_REASON,
        }
    }

    /// The text the answer puts into the model's context, counted toward the next pressure tier
    /// (the context, or a blocked Stop's reason, which becomes the agent's prompt).
    pub fn injected_text(&self) -> Option<&str> {
        match self {
            Answer::Context { text, .. } => Some(text),
            Answer::BlockStop { reason } => Some(reason),
            Answer::CompactionText(_) | Answer::StopAgent => None,
        }
    }

    /// Reads back what a hook printed (`ResponseEmitted.output`): `None` for nothing, or for a
    /// JSON object that is none of the answers above. Text that is not a JSON object is
    /// `CompactionText`, the one answer printed as plain text.
    pub fn from_recorded(output: &str) -> Option<Answer> {
        if output.is_empty() {
            return None;
        }
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(output) else {
            return Some(Answer::CompactionText(output.to_string()));
        };
        let str_at = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if o.get("decision").and_then(Value::as_str) == Some("block") {
            return Some(Answer::BlockStop {
                reason: str_at(o.get("reason")).unwrap_or_default(),
            });
        }
        if o.get("continue").and_then(Value::as_bool) == Some(false) {
            return Some(Answer::StopAgent);
        }
        if let Some(text) = str_at(o.get("additionalContext")) {
            return Some(Answer::Context {
                event: String::new(),
                text,
                form: ContextForm::Flat,
            });
        }
        if let Some(text) = str_at(o.get("contextModification")) {
            return Some(Answer::Context {
                event: String::new(),
                text,
                form: ContextForm::Modification,
            });
        }
        if let Some(text) = str_at(o.get("context")) {
            return Some(Answer::Context {
                event: String::new(),
                text,
                form: ContextForm::Envelope,
            });
        }
        let snake = o.get("hook_specific_output");
        if let Some(text) = str_at(snake.and_then(|h| h.get("additional_context"))) {
            return Some(Answer::Context {
                event: String::new(),
                text,
                form: ContextForm::SnakeNested,
            });
        }
        let specific = o.get("hookSpecificOutput");
        let text = str_at(specific.and_then(|h| h.get("additionalContext")))?;
        Some(Answer::Context {
            event: str_at(specific.and_then(|h| h.get("hookEventName"))).unwrap_or_default(),
            text,
            form: ContextForm::Nested,
        })
    }
}

/// What the hook prints: the JSON object, or for `CompactionText` the text itself.
impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::CompactionText(text)
            | Answer::Context {
                text,
                form: ContextForm::Plain,
                ..
            } => f.write_str(text),
            other => write!(f, "{}", other.to_json()),
        }
    }
}
