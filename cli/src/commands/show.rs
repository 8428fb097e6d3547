//! `show SESSION`: the execution snapshot.

use crate::cli_util::CommandHelper;
use crate::output::{self, escape};

use projections::session::SessionState;

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (or its first characters).
    pub session: String,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    let state = cmd.checkpoint()?;
    let id = crate::commands::export::resolve_session(state.sessions.keys(), &args.session)?;
    let s = &state.sessions[&id];
    let pricing = settings.pricing();
    if args.json {
        output::print_json(&projections::report::snapshot_json(
            s,
            &pricing,
            &settings.policy,
        ));
    } else {
        print!("{}", render(s, &pricing, &settings.policy));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn render(
    s: &SessionState,
    pricing: &projections::pricing::PricingTable,
    cfg: &projections::config::PolicyConfig,
) -> String {
    let mut o = String::new();
    let (usd, usage) = projections::report::session_usd(s, pricing);
    let (tier, used) = projections::views::pressure(s, cfg);
    let line =
        |o: &mut String, k: &str, v: String| o.push_str(&format!("{:<16}{}\n", output::bold(k), v));
    line(&mut o, "session", escape(&s.id));
    line(&mut o, "host", escape(&s.host));
    line(&mut o, "status", output::tint(s.status.as_str()));
    if let Some(m) = &s.model {
        line(&mut o, "model", escape(m));
    }
    if let Some(c) = &s.cwd {
        line(&mut o, "cwd", escape(c));
    }
    if let Some(b) = &s.branch {
        line(&mut o, "branch", escape(b));
    }
    line(
        &mut o,
        "events",
        format!(
            "{}, seq {}..{}",
            output::count(s.hook_events, "hook event"),
            s.first_seq,
            s.last_seq
        ),
    );
    line(
        &mut o,
        "context",
        format!(
            "{} tokens ({:.0}%, {})",
            output::tokens(s.pressure.tokens),
            used * 100.0,
            output::tint(tier.as_str())
        ),
    );
    line(
        &mut o,
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
    line(
        &mut o,
        "activity",
        format!(
            "{}, {}, {}",
            output::count(s.prompt_count, "prompt"),
            output::count(s.tool_calls, "tool call"),
            output::count(s.compactions, "compaction")
        ),
    );
    if let Some(p) = s.prompts.first() {
        line(&mut o, "last prompt", escape(p));
    }
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
    let list = |o: &mut String, k: &str, items: Vec<String>| {
        if !items.is_empty() {
            o.push_str(&format!("{}\n", output::bold(k)));
            for i in items {
                o.push_str(&format!("  {}\n", escape(&i)));
            }
        }
    };
    list(&mut o, "files edited", s.files_edited.clone());
    list(&mut o, "files read", s.files_read.clone());
    list(
        &mut o,
        "commits",
        s.commits
            .iter()
            .map(|c| format!("{} {}", c.hash, c.message))
            .collect(),
    );
    list(
        &mut o,
        "failed tool calls",
        s.failed_tools
            .iter()
            .map(|f| format!("{}: {}", f.tool, f.error))
            .collect(),
    );
    list(
        &mut o,
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
    if let Some(sum) = &s.last_compact_summary {
        line(&mut o, "compact summary", escape(sum));
    }
    o
}
