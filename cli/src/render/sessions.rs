//! The sessions table (`sessions`, its team mode, `demo`).

use crate::output::{self, Align, Table};
use projections::across::InProject;
use projections::report::SessionRow;

/// The sessions table with its total row.
pub fn render(rows: &[SessionRow]) -> String {
    table(rows.iter().map(|r| (None, r)), false)
}

/// The sessions of every project (`--all-projects`), with a PROJECT column.
pub fn render_across(rows: &[InProject<SessionRow>]) -> String {
    table(
        rows.iter().map(|r| (Some(r.project.as_str()), &r.row)),
        true,
    )
}

fn table<'a>(
    rows: impl Iterator<Item = (Option<&'a str>, &'a SessionRow)>,
    projects: bool,
) -> String {
    let now = crate::clock::now_us();
    let mut headers = vec![];
    if projects {
        headers.push(("PROJECT", Align::Left));
    }
    headers.extend([
        ("SESSION", Align::Left),
        ("HOST", Align::Left),
        ("STARTED", Align::Left),
        ("LAST", Align::Left),
        ("EVENTS", Align::Right),
        ("STATUS", Align::Left),
        ("CONTEXT", Align::Right),
        ("TIER", Align::Left),
        ("COST", Align::Right),
    ]);
    let mut t = Table::new(&headers);
    let mut total = 0.0;
    let mut events = 0;
    let mut n = 0u64;
    for (project, r) in rows {
        total += r.usd;
        events += r.events;
        n += 1;
        let mut cells: Vec<String> = project.map(str::to_string).into_iter().collect();
        cells.extend([
            projections::short_id(&r.session_id).to_string(),
            r.host.clone(),
            output::timestamp(r.start_us)[..16].replace('T', " "),
            output::relative(r.last_us, now),
            r.events.to_string(),
            r.status.clone(),
            // A served-only session (a cloud session's calls run here) has no context here.
            if r.status == "served" {
                "-".into()
            } else {
                format!("{:.0}%", r.context_used * 100.0)
            },
            if r.status == "served" {
                "-".into()
            } else {
                r.tier.clone()
            },
            output::usd(r.usd),
        ]);
        t.row(cells);
    }
    if t.is_empty() {
        return "no sessions yet\n".into();
    }
    let mut footer: Vec<String> = if projects {
        vec![String::new()]
    } else {
        vec![]
    };
    footer.extend([
        output::count(n, "session"),
        String::new(),
        String::new(),
        String::new(),
        events.to_string(),
        String::new(),
        String::new(),
        String::new(),
        output::usd(total),
    ]);
    t.footer(footer);
    t.render()
}
