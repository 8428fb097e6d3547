//! The task board (`tasks`, its team mode, `demo`) and a task as JSON.

use crate::output::{Align, Table};
use projections::tasks::Task;

/// A task as JSON, with its display ref.
pub fn task_json(t: &Task) -> serde_json::Value {
    let mut v = serde_json::to_value(t).unwrap_or_default();
    v["ref"] = t.task_ref().display().into();
    v["session_id"] = t.session.clone().into();
    v
}

/// The task board as a table.
pub fn render(tasks: &[&Task]) -> String {
    let rows: Vec<(Option<&str>, &Task)> = tasks.iter().map(|t| (None, *t)).collect();
    render_in(&rows)
}

/// The task board, each task with its project when it has one (`--all-projects`: a PROJECT
/// column).
pub fn render_in(tasks: &[(Option<&str>, &Task)]) -> String {
    if tasks.is_empty() {
        return "no tasks\n".into();
    }
    let mut headers = Vec::new();
    if tasks.iter().any(|(p, _)| p.is_some()) {
        headers.push(("PROJECT", Align::Left));
    }
    headers.extend([
        ("ID", Align::Left),
        ("STATUS", Align::Left),
        ("OWNER", Align::Left),
        ("RETRIES", Align::Right),
        ("SUBJECT", Align::Left),
    ]);
    let mut t = Table::new(&headers);
    for (project, task) in tasks {
        let mut subject = task.subject.clone();
        if let Some(r) = &task.fail_reason {
            subject.push_str(&format!(" (failed: {r})"));
        }
        let mut cells: Vec<String> = project.map(str::to_string).into_iter().collect();
        cells.extend([
            task.task_ref().display(),
            task.status.as_str().into(),
            task.owner.clone().unwrap_or_else(|| "-".into()),
            task.retry_count.to_string(),
            subject,
        ]);
        t.row(cells);
    }
    t.render()
}
