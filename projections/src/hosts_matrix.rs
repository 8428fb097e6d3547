//! The hosts matrix of the README and docs/hooks.md, generated from the host table: per host, the
//! install command, the events recorded, the answers honoured, how a compaction shows, where the
//! cost comes from and the version its real-client test ran. `tests/hosts_matrix.rs` keeps both
//! documents equal to it (`HOOKJOURNAL_BLESS=1` rewrites them).

use crate::event_kind::EventKind;
use crate::host::{AnswerShape, Host, KNOWN};

/// What the host table's rows do not say themselves, for the matrix.
struct Facts {
    host: Host,
    /// Where the cost comes from.
    cost: &'static str,
    /// The version its real-client test drives; `None`: none can run here (the reason is in
    /// docs/hooks.md).
    tested: Option<&'static str>,
}

const FACTS: [Facts; 12] = [
    Facts {
        host: Host::Claude,
        cost: "its transcript",
        tested: Some("2.1.330 (and 2.1.197)"),
    },
    Facts {
        host: Host::Codex,
        cost: "its rollout file",
        tested: Some("0.169.0"),
    },
    Facts {
        host: Host::Gemini,
        cost: "its chat file",
        tested: Some("0.61.0"),
    },
    Facts {
        host: Host::Copilot,
        cost: "its session's `events.jsonl`",
        tested: Some("1.0.102"),
    },
    Facts {
        host: Host::Cursor,
        cost: "none (no usage reaches its hooks)",
        tested: None,
    },
    Facts {
        host: Host::OpenClaw,
        cost: "its `llm_output` hook",
        tested: Some("2026.9.6"),
    },
    Facts {
        host: Host::Qwen,
        cost: "its chat file",
        tested: Some("0.24.4"),
    },
    Facts {
        host: Host::OpenCode,
        cost: "its completed assistant messages",
        tested: Some("1.18.33"),
    },
    Facts {
        host: Host::Crush,
        cost: "none (only in its SQLite database)",
        tested: None,
    },
    Facts {
        host: Host::Pi,
        cost: "each `turn_end`",
        tested: Some("0.73.1"),
    },
    Facts {
        host: Host::Droid,
        cost: "its session's running totals",
        tested: Some("0.225.2"),
    },
    Facts {
        host: Host::Cline,
        cost: "its session's `messages.json` (found from `$HOME` or `$CLINE_DIR`)",
        tested: Some("3.0.65"),
    },
];

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::SessionStart => "session start",
        EventKind::SessionEnd => "session end",
        EventKind::Prompt => "prompt",
        EventKind::ToolPre => "before a tool",
        EventKind::ToolPost => "after a tool",
        EventKind::ToolFailure => "failed tool",
        EventKind::Notification => "notification",
        EventKind::Stop => "stop",
        EventKind::StopFailure => "stop failure",
        EventKind::SubagentStart => "subagent start",
        EventKind::SubagentStop => "subagent stop",
        EventKind::PreCompact => "before compaction",
        EventKind::PostCompact => "after compaction",
        EventKind::TaskCreated => "task created",
        EventKind::TaskCompleted => "task completed",
        EventKind::Other => "other",
    }
}

/// The answers a host honours, by kind: context at which events, text for the summariser, a
/// blocked stop, a stopped agent.
fn answers(h: &Host) -> String {
    let facts = h.facts();
    let at = |shape: AnswerShape| -> Vec<&'static str> {
        facts
            .answers
            .iter()
            .filter(|(_, s)| *s == shape)
            .map(|(k, _)| kind_name(*k))
            .collect()
    };
    let mut out = Vec::new();
    let context = at(AnswerShape::Context);
    if !context.is_empty() {
        out.push(format!("context ({})", context.join(", ")));
    }
    if !at(AnswerShape::CompactionText).is_empty() {
        out.push("text for the summary".to_string());
    }
    let block = at(AnswerShape::BlockStop);
    if !block.is_empty() {
        out.push(format!("blocks a {}", block.join(", ")));
    }
    let stop = at(AnswerShape::StopAgent);
    if !stop.is_empty() {
        out.push(format!("stops a loop agent ({})", stop.join(", ")));
    }
    if out.is_empty() {
        "none (recorded only)".to_string()
    } else {
        out.join("; ")
    }
}

/// How a compaction shows on the host.
fn compaction(h: &Host) -> String {
    let c = &h.facts().compaction;
    let named = |n: Option<&str>| n.map(|n| format!("`{n}`"));
    let mut out = match (named(c.before), named(c.after)) {
        (Some(b), Some(a)) => format!("{b}, then {a}"),
        (Some(b), None) => b,
        (None, Some(a)) => a,
        (None, None) => String::new(),
    };
    if let Some(s) = c.restart_source {
        out.push_str(&format!(", a session start `{s}`"));
    }
    if c.counted_from_session_file {
        if out.is_empty() {
            out.push_str("read from its session file");
        } else {
            out.push_str("; confirmed in its session file");
        }
    }
    if out.is_empty() {
        "not announced to hooks".to_string()
    } else {
        out
    }
}

/// The matrix, a Markdown table, one row per known host.
pub fn markdown() -> String {
    let mut s = String::from(
        "| host | install | events recorded | answers honoured | compaction | cost from | real client tested |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for h in KNOWN {
        let f = FACTS
            .iter()
            .find(|f| f.host == h)
            .expect("every known host has its matrix facts");
        let facts = h.facts();
        s.push_str(&format!(
            "| {} | `hookjournal install --host {}` | {} | {} | {} | {} | {} |\n",
            facts.product,
            facts.name,
            facts.events.len(),
            answers(&h),
            compaction(&h),
            f.cost,
            f.tested.unwrap_or("none here (see its section)"),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_host_has_one_row() {
        let m = markdown();
        assert_eq!(m.lines().count(), KNOWN.len() + 2);
        for h in KNOWN {
            assert_eq!(
                m.matches(&format!("--host {}`", h.as_str())).count(),
                1,
                "{h:?}"
            );
        }
    }
}
