//! The notification log as a table (`notifications`, `demo`).

use crate::output::{self, Align, Table};

/// The notification log as a table.
pub fn render(items: &[&projections::fold::NotificationEntry]) -> String {
    if items.is_empty() {
        return "no notifications\n".into();
    }
    let mut t = Table::new(&[
        ("TIME", Align::Left),
        ("SESSION", Align::Left),
        ("TYPE", Align::Left),
        ("TITLE", Align::Left),
        ("MESSAGE", Align::Left),
    ]);
    for n in items {
        t.row(vec![
            output::timestamp(n.at_us)[..19].replace('T', " "),
            projections::short_id(n.session.as_deref().unwrap_or("-")).to_string(),
            n.kind.clone(),
            n.title.clone().unwrap_or_default(),
            n.message.clone(),
        ]);
    }
    t.render()
}
