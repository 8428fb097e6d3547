//! Views across projects (`--all-projects`): each registered journal's own rows, tagged with
//! its project and merged, so that every figure is the sum of the per-project views. Pure: the
//! rows arrive already computed, one journal at a time.

use crate::report::{CostRow, SessionRow};
use serde::Serialize;

/// A row of one project's view, tagged with the project.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InProject<T> {
    /// The project's name (the directory its journal is in).
    pub project: String,
    /// The row, as the project's own view has it.
    #[serde(flatten)]
    pub row: T,
}

/// Tags every row of `rows` with `project`.
pub fn tagged<T>(project: &str, rows: Vec<T>) -> Vec<InProject<T>> {
    rows.into_iter()
        .map(|row| InProject {
            project: project.to_string(),
            row,
        })
        .collect()
}

/// Every project's sessions in one list, in the order they started (ties by project, then id).
pub fn sessions(per_project: Vec<(String, Vec<SessionRow>)>) -> Vec<InProject<SessionRow>> {
    let mut all: Vec<InProject<SessionRow>> = per_project
        .into_iter()
        .flat_map(|(p, rows)| tagged(&p, rows))
        .collect();
    all.sort_by(|a, b| {
        (a.row.start_us, &a.project, &a.row.session_id).cmp(&(
            b.row.start_us,
            &b.project,
            &b.row.session_id,
        ))
    });
    all
}

/// How the cost rows of several projects merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostMerge {
    /// One row per project: its total.
    ByProject,
    /// Each project's rows, ordered by their key (days, weeks, months), then project.
    ByKey,
    /// Each project's rows, costliest first (sessions, models, hosts).
    Costliest,
}

/// Every project's cost rows and one total, the sum of the projects' totals.
pub fn cost(
    per_project: Vec<(String, Vec<CostRow>, CostRow)>,
    merge: CostMerge,
) -> (Vec<InProject<CostRow>>, CostRow) {
    let mut total = CostRow {
        key: "total".into(),
        ..CostRow::default()
    };
    let mut rows = Vec::new();
    for (project, project_rows, project_total) in per_project {
        add(&mut total, &project_total);
        match merge {
            CostMerge::ByProject if project_rows.is_empty() => {}
            CostMerge::ByProject => rows.push(InProject {
                row: CostRow {
                    key: project.clone(),
                    ..project_total
                },
                project,
            }),
            _ => rows.extend(tagged(&project, project_rows)),
        }
    }
    match merge {
        CostMerge::ByKey => {
            rows.sort_by(|a, b| (&a.row.key, &a.project).cmp(&(&b.row.key, &b.project)))
        }
        CostMerge::ByProject | CostMerge::Costliest => rows.sort_by(|a, b| {
            b.row
                .usd
                .total_cmp(&a.row.usd)
                .then_with(|| (&a.project, &a.row.key).cmp(&(&b.project, &b.row.key)))
        }),
    }
    (rows, total)
}

/// Adds `r`'s figures to `into` (its models merged, sorted).
fn add(into: &mut CostRow, r: &CostRow) {
    into.usd += r.usd;
    into.unpriced_responses += r.unpriced_responses;
    into.input_tokens += r.input_tokens;
    into.output_tokens += r.output_tokens;
    into.cache_write_tokens += r.cache_write_tokens;
    into.cache_read_tokens += r.cache_read_tokens;
    into.total_tokens += r.total_tokens;
    into.responses += r.responses;
    for m in &r.models {
        if let Err(i) = into.models.binary_search(m) {
            into.models.insert(i, m.clone());
        }
    }
}

/// Every project's items (notifications, tasks) in one list, ordered by `at` (stable: a
/// project's own order is kept among equal keys).
pub fn by_time<T, K: Ord>(
    per_project: Vec<(String, Vec<T>)>,
    at: impl Fn(&T) -> K,
) -> Vec<InProject<T>> {
    let mut all: Vec<InProject<T>> = per_project
        .into_iter()
        .flat_map(|(p, items)| tagged(&p, items))
        .collect();
    all.sort_by_key(|a| at(&a.row));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost_row(key: &str, usd: f64, tokens: u64, model: &str) -> CostRow {
        CostRow {
            key: key.into(),
            usd,
            input_tokens: tokens,
            total_tokens: tokens,
            responses: 1,
            models: vec![model.into()],
            ..CostRow::default()
        }
    }

    fn session(id: &str, start_us: i64) -> SessionRow {
        SessionRow {
            session_id: id.into(),
            start_us,
            ..SessionRow::default()
        }
    }

    #[test]
    fn cost_by_project_is_one_row_per_project_and_the_total_is_their_sum() {
        // given two projects' by-day rows and totals
        let api_total = cost_row("total", 3.0, 300, "opus");
        let web_total = cost_row("total", 1.0, 100, "sonnet");
        let per = vec![
            (
                "api".to_string(),
                vec![
                    cost_row("2026-12-01", 1.0, 100, "opus"),
                    cost_row("2026-12-02", 2.0, 200, "opus"),
                ],
                api_total,
            ),
            (
                "web".to_string(),
                vec![cost_row("2026-12-02", 1.0, 100, "sonnet")],
                web_total,
            ),
            ("empty".to_string(), vec![], CostRow::default()),
        ];
        // when merged by project
        let (rows, total) = cost(per, CostMerge::ByProject);
        // then one row per project with usage, costliest first, and the total is the sum
        let keys: Vec<(&str, f64)> = rows
            .iter()
            .map(|r| (r.row.key.as_str(), r.row.usd))
            .collect();
        assert_eq!(keys, vec![("api", 3.0), ("web", 1.0)]);
        assert_eq!(total.usd, 4.0);
        assert_eq!(total.total_tokens, 400);
        assert_eq!(total.responses, 2);
        assert_eq!(total.models, vec!["opus".to_string(), "sonnet".to_string()]);
    }

    #[test]
    fn cost_by_day_keeps_each_projects_rows_in_day_order() {
        // given two projects with rows on overlapping days
        let per = vec![
            (
                "web".to_string(),
                vec![cost_row("2026-12-01", 1.0, 10, "m")],
                cost_row("total", 1.0, 10, "m"),
            ),
            (
                "api".to_string(),
                vec![
                    cost_row("2026-12-01", 2.0, 20, "m"),
                    cost_row("2026-11-30", 0.5, 5, "m"),
                ],
                cost_row("total", 2.5, 25, "m"),
            ),
        ];
        // when merged by key
        let (rows, total) = cost(per, CostMerge::ByKey);
        // then the days are in order, a day's projects by name, and nothing is lost
        let keys: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.row.key.as_str(), r.project.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("2026-11-30", "api"),
                ("2026-12-01", "api"),
                ("2026-12-01", "web")
            ]
        );
        assert_eq!(total.usd, 3.5);
        assert_eq!(total.total_tokens, 35);
    }

    #[test]
    fn sessions_of_every_project_are_in_start_order() {
        // given sessions of two projects interleaved in time
        let per = vec![
            (
                "api".to_string(),
                vec![session("a1", 10), session("a2", 30)],
            ),
            ("web".to_string(), vec![session("w1", 20)]),
        ];
        // when merged
        let all = sessions(per);
        // then they are in the order they started, each tagged with its project
        let ids: Vec<(&str, &str)> = all
            .iter()
            .map(|r| (r.project.as_str(), r.row.session_id.as_str()))
            .collect();
        assert_eq!(ids, vec![("api", "a1"), ("web", "w1"), ("api", "a2")]);
    }

    #[test]
    fn items_by_time_keep_a_projects_order_among_ties() {
        // given items with equal times in two projects
        let per = vec![
            ("api".to_string(), vec![(5, "x"), (5, "y")]),
            ("web".to_string(), vec![(1, "z")]),
        ];
        // when merged by time
        let all = by_time(per, |i| i.0);
        // then the earliest is first and ties keep their order
        let names: Vec<&str> = all.iter().map(|i| i.row.1).collect();
        assert_eq!(names, vec!["z", "x", "y"]);
    }

    #[test]
    fn a_tagged_row_serializes_flat_with_its_project() {
        let r = InProject {
            project: "api".to_string(),
            row: session("a1", 1),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["project"], "api");
        assert_eq!(v["session_id"], "a1");
    }
}
