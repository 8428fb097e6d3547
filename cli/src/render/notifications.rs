//! The notification log as a table (`notifications`, `demo`).

use crate::output::{self, Align, Table};
use projections::fold::NotificationEntry;

/// The notification log as a table.
pub fn render(items: &[&NotificationEntry]) -> String {
    let items: Vec<(Option<&str>, &NotificationEntry)> = items.iter().map(|n| (None, *n)).collect();
    render_in(&items)
}

/// The notification log, each with its project when it has one (`--all-projects`: a PROJECT
/// column).
pub fn render_in(items: &[(Option<&str>, &NotificationEntry)]) -> String {
    if items.is_empty() {
        return "no notifications\n".into();
    }
    let projects = items.iter().any(|(p, _)| p.is_some());
    let mut headers = Vec::new();
    if projects {
        headers.push(("PROJECT", Align::Left));
    }
    headers.extend([
        ("TIME", Align::Left),
        ("SESSION", Align::Left),
        ("TYPE", Align::Left),
        ("TITLE", Align::Left),
        ("MESSAGE", Align::Left),
    ]);
    let mut t = Table::new(&headers);
    for (project, n) in items {
        let mut cells: Vec<String> = project.map(str::to_string).into_iter().collect();
        cells.extend([
            output::timestamp(n.at_us)[..19].replace('T', " "),
            projections::short_id(n.session.as_deref().unwrap_or("-")).to_string(),
            n.kind.clone(),
            n.title.clone().unwrap_or_default(),
            n.message.clone(),
        ]);
        t.row(cells);
    }
    t.render()
}
