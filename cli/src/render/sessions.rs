//! The sessions table (`sessions`, its team mode, `demo`).

use crate::output::{self, Align, Table};
use projections::report::SessionRow;

/// The sessions table with its total row.
pub fn render(rows: &[SessionRow]) -> String {
    let now = crate::clock::now_us();
    let mut t = Table::new(&[
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
    let mut total = 0.0;
    let mut events = 0;
    for r in rows {
        total += r.usd;
        events += r.events;
        t.row(vec![
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
    }
    if t.is_empty() {
        return "no sessions yet\n".into();
    }
    t.footer(vec![
        output::count(rows.len() as u64, "session"),
        String::new(),
        String::new(),
        String::new(),
        events.to_string(),
        String::new(),
        String::new(),
        String::new(),
        output::usd(total),
    ]);
    t.render()
}
