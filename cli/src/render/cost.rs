//! The cost tables (`cost`, its team mode, `demo`).

use crate::output::{self, Align, Table};
use projections::across::InProject;
use projections::report::{CostRow, Reconciled};

/// How `cost` groups its rows.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum By {
    /// One row per session
    Session,
    /// One row per day (UTC)
    Day,
    /// One row per week (UTC days; see --start-of-week)
    Week,
    /// One row per month (UTC)
    Month,
    /// One row per 5-hour billing block, with the active block's burn rate and projection
    Block,
    /// One row per model
    Model,
    /// One row per host (the agent that ran the session)
    Host,
    /// One row per project (locally: this one)
    Project,
    /// One row per machine (locally: this one; with --source: every machine that shipped).
    Machine,
}

/// The first day of a week, for `cost --by week`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default)]
pub enum WeekStart {
    /// Weeks from Sunday (as ccusage's weekly report)
    #[default]
    Sunday,
    /// Weeks from Monday (ISO 8601)
    Monday,
    /// Weeks from Tuesday
    Tuesday,
    /// Weeks from Wednesday
    Wednesday,
    /// Weeks from Thursday
    Thursday,
    /// Weeks from Friday
    Friday,
    /// Weeks from Saturday
    Saturday,
}

impl From<WeekStart> for chrono::Weekday {
    fn from(w: WeekStart) -> chrono::Weekday {
        match w {
            WeekStart::Sunday => chrono::Weekday::Sun,
            WeekStart::Monday => chrono::Weekday::Mon,
            WeekStart::Tuesday => chrono::Weekday::Tue,
            WeekStart::Wednesday => chrono::Weekday::Wed,
            WeekStart::Thursday => chrono::Weekday::Thu,
            WeekStart::Friday => chrono::Weekday::Fri,
            WeekStart::Saturday => chrono::Weekday::Sat,
        }
    }
}

/// Transcript cost beside the host's own, per session and in total, with the difference named.
/// Nothing when no host reported a cost.
pub fn render_reconciliation(rows: &[Reconciled], total: &Reconciled) -> String {
    if total.host_usd.is_none() {
        return String::new();
    }
    let mut t = Table::new(&[
        ("SESSION", Align::Left),
        ("TRANSCRIPTS", Align::Right),
        ("HOST REPORTED", Align::Right),
        ("DIFFERENCE", Align::Right),
        ("WHY", Align::Left),
    ]);
    let cells = |r: &Reconciled, key: String| {
        vec![
            key,
            output::usd(r.transcript_usd),
            r.host_usd.map(output::usd).unwrap_or_else(|| "-".into()),
            r.difference_usd
                .map(|d| {
                    format!(
                        "{}{}",
                        if d >= 0.0 { "+" } else { "-" },
                        output::usd(d.abs())
                    )
                })
                .unwrap_or_else(|| "-".into()),
            r.explanation.join("; "),
        ]
    };
    for r in rows {
        t.row(cells(r, projections::short_id(&r.session).to_string()));
    }
    t.footer(cells(total, "total".into()));
    format!(
        "\n{}\n{}",
        output::bold("transcripts vs what the host reported (Claude Code's statusline cost)"),
        t.render()
    )
}

/// The cost table with its total row.
pub fn render(rows: &[CostRow], total: &CostRow, by: By) -> String {
    table(rows.iter().map(|r| (None, r)), total, by)
}

/// The cost of every project (`--all-projects`): a PROJECT column before the key (`--by
/// project`: the key is the project).
pub fn render_across(rows: &[InProject<CostRow>], total: &CostRow, by: By) -> String {
    let keyed = matches!(by, By::Project);
    table(
        rows.iter()
            .map(|r| (Some((!keyed).then_some(r.project.as_str())), &r.row)),
        total,
        by,
    )
}

/// `projects`: `None` for one journal's table, `Some(project)` (or `Some(None)`, the key being
/// the project) for every project's.
fn table<'a>(
    rows: impl Iterator<Item = (Option<Option<&'a str>>, &'a CostRow)>,
    total: &CostRow,
    by: By,
) -> String {
    let mut rows = rows.peekable();
    let Some(&(first, _)) = rows.peek() else {
        return "no usage recorded yet (usage is read from transcripts at Stop, SubagentStop, PreCompact and SessionEnd)\n".into();
    };
    let projects = matches!(first, Some(Some(_)));
    let key = match by {
        By::Session => "SESSION",
        By::Day => "DAY",
        By::Week => "WEEK OF",
        By::Month => "MONTH",
        By::Block => "BLOCK",
        By::Model => "MODEL",
        By::Host => "HOST",
        By::Project => "PROJECT",
        By::Machine => "MACHINE",
    };
    let mut headers = Vec::new();
    if projects {
        headers.push(("PROJECT", Align::Left));
    }
    headers.extend([
        (key, Align::Left),
        ("INPUT", Align::Right),
        ("OUTPUT", Align::Right),
        ("CACHE WRITE", Align::Right),
        ("CACHE READ", Align::Right),
        ("TOTAL TOKENS", Align::Right),
        ("COST", Align::Right),
    ]);
    let mut t = Table::new(&headers);
    let cells = |project: Option<&str>, r: &CostRow, key: String| {
        let mut usd = output::usd(r.usd);
        if r.unpriced_responses > 0 {
            usd.push_str(&format!(" (+{} unpriced)", r.unpriced_responses));
        }
        let mut c: Vec<String> = project.map(str::to_string).into_iter().collect();
        c.extend([
            key,
            output::tokens(r.input_tokens),
            output::tokens(r.output_tokens),
            output::tokens(r.cache_write_tokens),
            output::tokens(r.cache_read_tokens),
            output::tokens(r.total_tokens),
            usd,
        ]);
        c
    };
    for (project, r) in rows {
        let k = if matches!(by, By::Session) {
            projections::short_id(&r.key).to_string()
        } else {
            r.key.clone()
        };
        t.row(cells(project.flatten(), r, k));
    }
    let blank = projects.then_some("");
    t.footer(cells(blank, total, "total".into()));
    t.render()
}
