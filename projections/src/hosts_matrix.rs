//! The hosts matrix of the README and docs/hooks.md, generated from the host registry (`hosts::HOSTS`): per host, the
//! install command, the events recorded, the answers honoured, how a compaction shows, where the
//! cost comes from and the version its real-client test ran. `tests/hosts_matrix.rs` keeps both
//! documents equal to it (`HOOKJOURNAL_BLESS=1` rewrites them).

use crate::event_kind::EventKind;
use crate::host::{AnswerShape, Host};
use crate::hosts::HOSTS;

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
    for m in HOSTS {
        let h = Host::from_name(m.facts.name);
        let facts = m.facts;
        s.push_str(&format!(
            "| {} | `hookjournal install --host {}{}` | {} | {} | {} | {} | {} |\n",
            facts.product,
            facts.name,
            if facts.install.is_some_and(|i| i.user_only()) {
                " --scope user"
            } else {
                ""
            },
            facts.events.len(),
            answers(&h),
            compaction(&h),
            m.cost_from,
            m.tested.unwrap_or("not run here (see its section)"),
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
        assert_eq!(m.lines().count(), HOSTS.len() + 2);
        for h in Host::known() {
            assert_eq!(
                m.matches(&format!("--host {}`", h.as_str())).count()
                    + m.matches(&format!("--host {} --scope user`", h.as_str()))
                        .count(),
                1,
                "{h:?}"
            );
        }
    }
}
