//! A session's execution snapshot as text (`show`, `demo`).

use crate::output::{self, escape};
use projections::session::SessionState;

/// A session's snapshot as `key  value` lines and lists.
pub fn render(
    s: &SessionState,
    pricing: &projections::pricing::PricingTable,
    cfg: &projections::config::PolicyConfig,
) -> String {
    let mut o = String::new();
    facts(&mut o, s, pricing, cfg);
    task_lines(&mut o, s);
    lists(&mut o, s);
    if let Some(sum) = &s.last_compact_summary {
        line(&mut o, "compact summary", escape(sum));
    }
    o
}

/// One `key  value` line.
fn line(o: &mut String, k: &str, v: String) {
    o.push_str(&format!("{:<16}{}\n", output::bold(k), v));
}

/// The session's facts, a line each: id, host, status, model, place, events, context, cost,
/// activity, last prompt.
fn facts(
    o: &mut String,
    s: &SessionState,
    pricing: &projections::pricing::PricingTable,
    cfg: &projections::config::PolicyConfig,
) {
    let (usd, usage) = projections::report::session_usd(s, pricing);
    let (tier, used) = projections::views::pressure(s, cfg);
    line(o, "session", escape(&s.id));
    line(o, "host", escape(&s.host));
    line(o, "status", output::tint(s.status.as_str()));
    if let Some(m) = &s.model {
        line(o, "model", escape(m));
    }
    if let Some(c) = &s.cwd {
        line(o, "cwd", escape(c));
    }
    if let Some(b) = &s.branch {
        line(o, "branch", escape(b));
    }
    line(
        o,
        "events",
        format!(
            "{}, seq {}..{}",
            output::count(s.hook_events, "hook event"),
            s.first_seq,
            s.last_seq
        ),
    );
    line(
        o,
        "context",
        format!(
            "{} tokens ({:.0}%, {})",
            output::tokens(s.pressure.tokens),
            used * 100.0,
            output::tint(tier.as_str())
        ),
    );
    line(
        o,
        "cost",
        format!(
            "{} ({} in, {} out, {} cache write, {} cache read)",
            output::usd(usd),
            output::tokens(usage.input_tokens),
            output::tokens(usage.output_tokens),
            output::tokens(usage.cache_write()),
            output::tokens(usage.cache_read)
        ),
    );
    if !s.usage_copied.is_empty() {
        // A fork's copies of its parent's responses: counted for the parent, not here.
        let parent = s.continues.as_deref().unwrap_or("its parent");
        line(
            o,
            "copied",
            format!(
                "{} of {}, counted there",
                output::count(s.usage_copied.len() as u64, "response"),
                escape(parent)
            ),
        );
    }
    line(
        o,
        "activity",
        format!(
            "{}, {}, {}",
            output::count(s.prompt_count, "prompt"),
            output::count(s.tool_calls, "tool call"),
            output::count(s.compactions, "compaction")
        ),
    );
    if let Some(p) = s.prompts.first() {
        line(o, "last prompt", escape(p));
    }
    if let Some(r) = &s.resumed {
        line(o, "resumed", resumed_text(r));
    }
    if s.served.events > 0 {
        line(
            o,
            "served calls",
            format!(
                "{} run on this computer for this session ({} failed)",
                output::count(s.served.tool_calls, "tool call"),
                s.served.failed
            ),
        );
    }
}

/// A resume's or fork's figures as Claude Code gave them.
fn resumed_text(r: &projections::event::Resumed) -> String {
    let mut parts = Vec::new();
    if let Some(t) = r.context_tokens {
        parts.push(format!("{} tokens of context", output::tokens(t)));
    }
    if let Some(secs) = r.seconds_since_last_response {
        parts.push(format!(
            "{} after the last response",
            projections::policy::duration_text(secs as i64)
        ));
    }
    match r.prompt_cache_likely_expired {
        Some(true) => parts.push("prompt cache likely expired".into()),
        Some(false) => parts.push("prompt cache likely warm".into()),
        None => {}
    }
    if let Some(usd) = r.estimated_cache_write_usd {
        parts.push(format!("re-caching ≈ {}", output::usd(usd)));
    }
    parts.join(", ")
}

/// The session's own tasks, one line each.
fn task_lines(o: &mut String, s: &SessionState) {
    if !s.tasks.tasks.is_empty() {
        o.push_str(&format!("{}\n", output::bold("tasks")));
        // Ids are the host's (`1`, `todo-1`, …): the column is as wide as the widest.
        let w = s
            .tasks
            .tasks
            .values()
            .map(|t| escape(&t.id).chars().count())
            .max()
            .unwrap_or(0);
        for t in s.tasks.tasks.values() {
            let status = t.status.as_str();
            o.push_str(&format!(
                "  {:<w$} {}{} {}\n",
                escape(&t.id),
                output::tint(status),
                " ".repeat(12usize.saturating_sub(status.len())),
                escape(&t.subject)
            ));
        }
    }
}

/// Files edited and read, commits, failed tool calls and subagents, a titled list each.
fn lists(o: &mut String, s: &SessionState) {
    let list = |o: &mut String, k: &str, items: Vec<String>| {
        if !items.is_empty() {
            o.push_str(&format!("{}\n", output::bold(k)));
            for i in items {
                o.push_str(&format!("  {}\n", escape(&i)));
            }
        }
    };
    list(o, "files edited", s.files_edited.clone());
    list(
        o,
        "mcp servers",
        s.mcp_servers
            .iter()
            .map(|(name, n)| format!("{name}: {}", output::count(*n, "tool call")))
            .collect(),
    );
    list(o, "served tools", s.served.recent.clone());
    list(o, "served edits", s.served.files_edited.clone());
    list(o, "files read", s.files_read.clone());
    list(
        o,
        "commits",
        s.commits
            .iter()
            .map(|c| format!("{} {}", c.hash, c.message))
            .collect(),
    );
    list(
        o,
        "failed tool calls",
        s.failed_tools
            .iter()
            .map(|f| format!("{}: {}", f.tool, f.error))
            .collect(),
    );
    list(
        o,
        "subagents",
        s.subagents
            .iter()
            .map(|a| {
                format!(
                    "{} {} {}",
                    a.agent_type.as_deref().unwrap_or("agent"),
                    a.agent_id,
                    if a.running { "running" } else { "done" }
                )
            })
            .collect(),
    );
}
