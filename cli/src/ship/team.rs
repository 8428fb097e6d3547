//! Team views: `hookjournal --source postgres://… sessions | cost | tasks` read the team store
//! that `ship --postgres` fills and print through the same renderers as the local commands.

use super::mask_url;
use crate::output;
use crate::render::cost::By;
use crate::render::{cost, sessions, tasks};
use anyhow::{bail, Context, Result};
use postgres::Client;
use projections::report::CostRow;
use projections::tasks::{Task, TaskStatus};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// `--source VALUE`: a PostgreSQL URL, or the word `postgres` for the configured one
/// ($HOOKJOURNAL_POSTGRES_URL, then `[ship] postgres` in config.toml), which keeps the password
/// off the command line.
pub fn resolve(source: &str, journal: Option<&Path>) -> Result<String> {
    if source.starts_with("postgres://") || source.starts_with("postgresql://") {
        return Ok(source.to_string());
    }
    if source == "postgres" || source == "postgresql" {
        if let Some(url) = std::env::var("HOOKJOURNAL_POSTGRES_URL")
            .ok()
            .filter(|s| !s.trim().is_empty())
        {
            return Ok(url);
        }
        let dir = crate::locate::journal_dir(journal, false);
        if let Some(url) = engine::settings::Settings::load(&dir).0.ship.postgres {
            return Ok(url);
        }
        bail!("--source postgres: set HOOKJOURNAL_POSTGRES_URL or `postgres` in [ship] of config.toml");
    }
    bail!(
        "--source {}: expected a postgres:// URL or the word `postgres`",
        mask_url(source)
    )
}

/// Connects and checks that `ship` has created the schema there.
fn open(url: &str) -> Result<Client> {
    let mut c = super::pg::connect(url)?;
    let exists: bool = c
        .query_one("SELECT to_regclass('hookjournal_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        bail!(
            "{} holds no hookjournal tables yet (run `hookjournal ship --postgres URL` first)",
            mask_url(url)
        );
    }
    let v = super::pg::schema_version(&mut c)?;
    if v as usize > super::pg::MIGRATIONS.len() {
        bail!("the team store's schema (version {v}) is newer than this hookjournal; upgrade it");
    }
    Ok(c)
}

/// The team's sessions table (`--json`: the rows).
pub fn sessions(url: &str, json: bool) -> Result<ExitCode> {
    let mut c = open(url)?;
    let rows = c
        .query(
            "SELECT row, machine, journal_id FROM hookjournal_sessions
             ORDER BY start_at, machine, journal_id, first_seq",
            &[],
        )
        .context("reading hookjournal_sessions")?;
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut v: serde_json::Value = r.get(0);
            v["machine"] = r.get::<_, String>(1).into();
            v["journal_id"] = r.get::<_, String>(2).into();
            v
        })
        .collect();
    if json {
        output::print_json(&serde_json::Value::Array(rows));
    } else {
        // Rows written by this or an older hookjournal: fields it lacks read as zero or empty.
        let typed: Vec<projections::report::SessionRow> = rows
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap_or_default())
            .collect();
        print!("{}", sessions::render(&typed));
    }
    Ok(ExitCode::SUCCESS)
}

/// One stored cost record.
struct Rec {
    machine: String,
    source: String,
    session: String,
    model: String,
    day: Option<String>,
    input: u64,
    output: u64,
    cache_write: u64,
    cache_read: u64,
    total: u64,
    usd: Option<f64>,
}

impl Rec {
    fn add_to(&self, row: &mut CostRow) {
        row.input_tokens += self.input;
        row.output_tokens += self.output;
        row.cache_write_tokens += self.cache_write;
        row.cache_read_tokens += self.cache_read;
        row.total_tokens += self.total;
        row.responses += 1;
        match self.usd {
            Some(x) => row.usd += x,
            None => row.unpriced_responses += 1,
        }
        if !row.models.contains(&self.model) {
            row.models.push(self.model.clone());
            row.models.sort();
        }
    }
}

/// The rows of `cost --by …` over every shipped journal: the local grouping (see
/// `projections::report::cost_rows`) applied to the stored records and their stored USD.
fn cost_rows(
    recs: &[Rec],
    by: By,
    week_start: chrono::Weekday,
    since: Option<&str>,
    until: Option<&str>,
) -> (Vec<CostRow>, CostRow) {
    let mut rows: BTreeMap<String, CostRow> = BTreeMap::new();
    let mut total = CostRow {
        key: "total".into(),
        ..CostRow::default()
    };
    for r in recs.iter().filter(|r| r.source == "transcript") {
        let day = r.day.as_deref().unwrap_or("unknown");
        if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
            continue;
        }
        let key = match by {
            By::Session => r.session.clone(),
            By::Day => day.to_string(),
            By::Week => projections::report::week_of(day, week_start),
            By::Month => day.get(..7).unwrap_or("unknown").to_string(),
            By::Model => r.model.clone(),
            By::Machine => r.machine.clone(),
            By::Block | By::Host | By::Project => {
                unreachable!("refused by `cost` before the store is read")
            }
        };
        let row = rows.entry(key.clone()).or_insert_with(|| CostRow {
            key,
            ..CostRow::default()
        });
        r.add_to(row);
        r.add_to(&mut total);
    }
    // Sessions that reported their own cost in payloads count where the local view counts
    // them: by session, when the session has no transcript usage in the range.
    if matches!(by, By::Session) {
        for r in recs.iter().filter(|r| r.source == "reported") {
            if rows.contains_key(&r.session) {
                continue;
            }
            let usd = r.usd.unwrap_or(0.0);
            let row = CostRow {
                key: r.session.clone(),
                usd,
                input_tokens: r.input,
                output_tokens: r.output,
                total_tokens: r.input + r.output,
                models: (!r.model.is_empty())
                    .then(|| r.model.clone())
                    .into_iter()
                    .collect(),
                ..CostRow::default()
            };
            total.usd += usd;
            total.input_tokens += row.input_tokens;
            total.output_tokens += row.output_tokens;
            total.total_tokens += row.total_tokens;
            rows.insert(r.session.clone(), row);
        }
    }
    let mut rows: Vec<CostRow> = rows.into_values().collect();
    if matches!(by, By::Session | By::Model | By::Machine) {
        projections::report::costliest_first(&mut rows);
    }
    (rows, total)
}

/// The team's cost table, grouped `by`, between `since` and `until`.
pub fn cost(
    url: &str,
    by: By,
    week_start: chrono::Weekday,
    since: Option<&str>,
    until: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    if matches!(by, By::Block | By::Host | By::Project) {
        anyhow::bail!(
            "cost --by {} reads a journal on this machine; the team store keeps no response times, hosts or projects (yet)",
            format!("{by:?}").to_lowercase()
        );
    }
    let range = crate::dates::Range::new(since, until)?;
    let (since, until) = range.days();
    let mut c = open(url)?;
    let recs: Vec<Rec> = c
        .query(
            "SELECT machine, source, session_id, model, day, input_tokens, output_tokens,
                    cache_write_5m_tokens + cache_write_1h_tokens, cache_read_tokens,
                    total_tokens, cost_usd
             FROM hookjournal_cost ORDER BY journal_id, record_key COLLATE \"C\"",
            &[],
        )
        .context("reading hookjournal_cost")?
        .iter()
        .map(|r| Rec {
            machine: r.get(0),
            source: r.get(1),
            session: r.get(2),
            model: r.get(3),
            day: r.get(4),
            input: r.get::<_, i64>(5) as u64,
            output: r.get::<_, i64>(6) as u64,
            cache_write: r.get::<_, i64>(7) as u64,
            cache_read: r.get::<_, i64>(8) as u64,
            total: r.get::<_, i64>(9) as u64,
            usd: r.get(10),
        })
        .collect();
    let (rows, total) = cost_rows(&recs, by, week_start, since.as_deref(), until.as_deref());
    if json {
        output::print_json(&serde_json::json!({
            "by": format!("{by:?}").to_lowercase(), "rows": rows, "total": total
        }));
    } else {
        print!("{}", cost::render(&rows, &total, by));
    }
    Ok(ExitCode::SUCCESS)
}

/// The team's task board, filtered by `status` and `agent` (`listing`: the command lists,
/// rather than changes a task).
pub fn tasks(
    url: &str,
    listing: bool,
    status: Option<&str>,
    agent: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    if !listing {
        bail!("with --source, `tasks` only lists: changes go to a local journal");
    }
    let status = status
        .map(|s| {
            TaskStatus::parse(s).ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown status {s:?} (pending, in_progress, completed, failed, deleted)"
                )
            })
        })
        .transpose()?;
    let mut c = open(url)?;
    let rows = c
        .query(
            "SELECT row, machine, journal_id FROM hookjournal_tasks ORDER BY machine, journal_id, ord",
            &[],
        )
        .context("reading hookjournal_tasks")?;
    let mut all: Vec<(Task, String, String)> = Vec::new();
    for r in &rows {
        let task: Task = serde_json::from_value(r.get(0))
            .context("a row of hookjournal_tasks does not decode")?;
        all.push((task, r.get(1), r.get(2)));
    }
    let kept: Vec<&(Task, String, String)> = all
        .iter()
        .filter(|(t, _, _)| status.is_none_or(|s| t.status == s))
        .filter(|(t, _, _)| agent.is_none() || t.owner.as_deref() == agent)
        .collect();
    if json {
        let v: Vec<serde_json::Value> = kept
            .iter()
            .map(|(t, machine, id)| {
                let mut v = tasks::task_json(t);
                v["machine"] = machine.clone().into();
                v["journal_id"] = id.clone().into();
                v
            })
            .collect();
        output::print_json(&serde_json::Value::Array(v));
    } else {
        let refs: Vec<&Task> = kept.iter().map(|(t, _, _)| t).collect();
        print!("{}", tasks::render(&refs));
    }
    Ok(ExitCode::SUCCESS)
}
