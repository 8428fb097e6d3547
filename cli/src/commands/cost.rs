//! `cost`: tokens and USD by session, day, week, month, 5-hour billing block, model, host,
//! project or machine.

use crate::cli_util::CommandHelper;
use crate::dates::Range;
use crate::output;
use crate::render::cost::{render, render_across, render_reconciliation, By, WeekStart};
use engine::state::Partial;
use projections::across;
use projections::fold::{CostRecord, Partition};
use projections::index;
use projections::report::{self, CostBy, CostRow, Reconciled, SessionFacts};
use std::collections::{BTreeMap, BTreeSet};

use std::process::ExitCode;

/// `cost` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// How to group the rows.
    #[arg(long, value_enum, default_value = "session")]
    pub by: By,
    /// From this day (YYYY-MM-DD, inclusive) or RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    /// Up to this day (inclusive) or RFC 3339 time.
    #[arg(long)]
    pub until: Option<String>,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
    /// The first day of a week, for --by week.
    #[arg(long, value_enum, default_value = "sunday")]
    pub start_of_week: WeekStart,
    /// With --by block: the active block's projection beside this many tokens (`max`: the most
    /// any finished block used), ok, warning (over 80%) or exceeds.
    #[arg(long, value_name = "TOKENS|max")]
    pub token_limit: Option<String>,
    /// With --by block: only the active block.
    #[arg(long)]
    pub active: bool,
    /// Every journal in your registry (`$XDG_STATE_HOME/hookjournal/journals`), read untouched,
    /// with a PROJECT column (with --json: a `project` field); the total is the sum of theirs.
    #[arg(long)]
    pub all_projects: bool,
}

/// Prints tokens and USD, grouped.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let dir = cmd.dir();
    let settings = cmd.settings();
    let range = Range::new(args.since.as_deref(), args.until.as_deref())?;
    let pricing = settings.pricing();
    if args.token_limit.is_some() && !matches!(args.by, By::Block) {
        anyhow::bail!(output::UsageError(
            "--token-limit goes with --by block".into()
        ));
    }
    if args.active && !matches!(args.by, By::Block) {
        anyhow::bail!(output::UsageError("--active goes with --by block".into()));
    }
    if args.all_projects {
        return all_projects(&range, &args);
    }
    let mut p = Partial::open(dir)?;
    if matches!(args.by, By::Block) {
        p.load_cost()?;
        let responses = p.state.take_responses();
        let entries = projections::blocks::entries(responses.values(), &pricing);
        return blocks(entries, &range, &args);
    }
    p.load_totals()?;
    let totals = p.state.take_cost_totals();
    // The responses one by one only when a price override's threshold is not a band bound.
    let responses: BTreeMap<String, CostRecord>;
    let items = match totals.items(&pricing) {
        Some(items) => items,
        None => {
            p.load_cost()?;
            responses = p.state.take_responses();
            projections::cost_totals::record_items(responses.values(), &pricing)
        }
    };
    let (rows, total) = grouped(
        &mut p,
        &items,
        &totals.reported,
        &args,
        &range,
        || machine(cmd.settings()),
        project_of(dir),
    )?;
    let (since, until) = range.days();
    if !args.json && totals.host.is_empty() && totals.reported.is_empty() {
        // No host reported a cost: the table has no reconciliation to show.
        print!("{}", render(&rows, &total, args.by));
        return Ok(ExitCode::SUCCESS);
    }
    // The table shows the reconciliation only for sessions whose host reported a cost, so only
    // their facts are read; `--json` lists every session's compactions.
    let mut shards: BTreeSet<u8> = totals
        .host
        .keys()
        .chain(totals.reported.keys())
        .map(|s| index::shard_of(s))
        .collect();
    if args.json {
        shards.extend(items.iter().map(|it| index::shard_of(it.session)));
    }
    for n in shards {
        p.load(&Partition::SessionIndex(n))?;
    }
    let facts = |s: &str| {
        let n = index::shard_of(s);
        p.state
            .index
            .get(&n)
            .and_then(|shard| shard.get(s))
            .map(|sum| SessionFacts {
                compactions: sum.compactions,
                subagents: sum.subagents as usize,
            })
            .unwrap_or_default()
    };
    let (rec, rec_total) = report::reconcile(
        &items,
        &totals.reported,
        &totals.host,
        &facts,
        since.as_deref(),
        until.as_deref(),
    );
    if args.json {
        print_json(args.by, &rows, &total, &rec, &rec_total);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render(&rows, &total, args.by));
    print!("{}", render_reconciliation(&rec, &rec_total));
    Ok(ExitCode::SUCCESS)
}

/// `cost --json`, written straight from the rows (18,798 sessions' reconciliation is 5 MB).
fn print_json(
    by: By,
    rows: &[CostRow],
    total: &CostRow,
    rec: &[Reconciled],
    rec_total: &Reconciled,
) {
    #[derive(serde::Serialize)]
    struct Json<'a> {
        by: String,
        reconciliation: Reconciliation<'a>,
        rows: &'a [CostRow],
        total: &'a CostRow,
    }
    #[derive(serde::Serialize)]
    struct Reconciliation<'a> {
        sessions: &'a [Reconciled],
        total: &'a Reconciled,
    }
    output::print_json(&Json {
        by: format!("{by:?}").to_lowercase(),
        reconciliation: Reconciliation {
            sessions: rec,
            total: rec_total,
        },
        rows,
        total,
    });
}

/// The rows of one journal's cost, grouped as `args.by` says (`--by block` aside), and their
/// total.
fn grouped(
    p: &mut Partial,
    items: &[projections::cost_totals::CostItem<'_>],
    reported: &BTreeMap<String, projections::derived::SessionMetrics>,
    args: &Args,
    range: &Range,
    machine: impl FnOnce() -> String,
    project: String,
) -> anyhow::Result<(Vec<CostRow>, CostRow)> {
    let by = match args.by {
        By::Session | By::Host => CostBy::Session,
        By::Day | By::Machine | By::Project | By::Block => CostBy::Day,
        By::Week => CostBy::Week(args.start_of_week.into()),
        By::Month => CostBy::Month,
        By::Model => CostBy::Model,
    };
    let (since, until) = range.days();
    let (rows, total) = report::cost_rows(
        items,
        reported,
        by,
        since.as_deref(),
        until.as_deref(),
        None,
    );
    let rows = match args.by {
        By::Machine => one_row(machine(), &rows, &total),
        By::Project => one_row(project, &rows, &total),
        By::Host => by_host(p, rows)?,
        _ => rows,
    };
    Ok((rows, total))
}

/// `cost --all-projects`: every registered journal's rows (read untouched, each priced by its
/// own settings) with a PROJECT column, and their total; `--by block` cuts every journal's
/// responses together into blocks, as the billing window spans projects.
fn all_projects(range: &Range, args: &Args) -> anyhow::Result<ExitCode> {
    let journals = crate::cli_util::registered();
    if matches!(args.by, By::Block) {
        let mut kept = Vec::new();
        for r in &journals {
            let mut p = r.open()?;
            p.load_cost()?;
            kept.push((p.state.take_responses(), r.settings().pricing()));
        }
        let entries = kept
            .iter()
            .flat_map(|(responses, pricing)| {
                projections::blocks::entries(responses.values(), pricing)
            })
            .collect();
        return blocks(entries, range, args);
    }
    let mut per = Vec::new();
    for r in &journals {
        let settings = r.settings();
        let pricing = settings.pricing();
        let mut p = r.open()?;
        p.load_cost()?;
        let responses = p.state.take_responses();
        p.load_totals()?;
        let totals = p.state.take_cost_totals();
        let items = totals.items(&pricing).unwrap_or_else(|| {
            projections::cost_totals::record_items(responses.values(), &pricing)
        });
        let (rows, total) = grouped(
            &mut p,
            &items,
            &totals.reported,
            args,
            range,
            || machine(&settings),
            r.project.clone(),
        )?;
        per.push((r.project.clone(), rows, total));
    }
    let merge = match args.by {
        By::Project | By::Machine => across::CostMerge::ByProject,
        By::Day | By::Week | By::Month | By::Block => across::CostMerge::ByKey,
        By::Session | By::Model | By::Host => across::CostMerge::Costliest,
    };
    let (rows, total) = across::cost(per, merge);
    if args.json {
        output::print_json(&serde_json::json!({
            "by": format!("{:?}", args.by).to_lowercase(),
            "all_projects": true,
            "rows": rows,
            "total": total,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render_across(&rows, &total, args.by));
    Ok(ExitCode::SUCCESS)
}

/// This machine, as `ship` names it.
fn machine(settings: &engine::settings::Settings) -> String {
    settings
        .ship
        .machine
        .clone()
        .unwrap_or_else(crate::ship::hostname)
}

/// The project a journal directory keeps: the directory it is in (`.hookjournal`'s parent), or
/// the journal's own path when it is elsewhere (`HOOKJOURNAL_DIR`).
fn project_of(dir: &std::path::Path) -> String {
    match (dir.file_name(), dir.parent()) {
        (Some(n), Some(parent)) if n == ".hookjournal" => parent.display().to_string(),
        _ => dir.display().to_string(),
    }
}

/// Locally, `--by machine` and `--by project` are one row: this machine, or this journal's
/// project, holding the total.
fn one_row(key: String, rows: &[CostRow], total: &CostRow) -> Vec<CostRow> {
    if rows.is_empty() {
        return Vec::new();
    }
    vec![CostRow {
        key,
        ..total.clone()
    }]
}

/// The by-session rows summed per session's host (from the sessions index; a session it does
/// not know counts as `unknown`).
fn by_host(p: &mut Partial, rows: Vec<CostRow>) -> anyhow::Result<Vec<CostRow>> {
    let shards: BTreeSet<u8> = rows.iter().map(|r| index::shard_of(&r.key)).collect();
    for n in shards {
        p.load(&Partition::SessionIndex(n))?;
    }
    let host = |s: &str| {
        p.state
            .index
            .get(&index::shard_of(s))
            .and_then(|shard| shard.get(s))
            .map(|sum| sum.host.clone())
            .unwrap_or_else(|| "unknown".into())
    };
    Ok(report::regroup(rows, host))
}

/// `cost --by block`: every response in time order cut into 5-hour blocks (ccusage's rule);
/// `--since`/`--until` keep the blocks that start within them.
fn blocks(
    entries: Vec<projections::blocks::BlockEntry<'_>>,
    range: &Range,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    use projections::blocks;
    let now_ms = crate::clock::now_us() / 1000;
    let mut all = blocks::blocks(entries, now_ms);
    let (since, until) = range.days();
    all.retain(|b| {
        let day = crate::render::blocks::day(b.start_ms);
        since.as_deref().is_none_or(|s| day.as_str() >= s)
            && until.as_deref().is_none_or(|u| day.as_str() <= u)
    });
    // `max` is the most any finished block used, `--active` or not (ccusage takes it after
    // `--active`, where no finished block is left, and shows no limit).
    let limit = match args.token_limit.as_deref() {
        None => None,
        Some("max") => Some(blocks::max_finished_tokens(&all)).filter(|&n| n > 0),
        Some(n) => Some(n.replace(['_', ','], "").parse::<u64>().map_err(|_| {
            output::UsageError(format!("--token-limit {n}: a number of tokens, or max"))
        })?),
    };
    if args.active {
        all.retain(|b| b.active);
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            by: &'static str,
            blocks: Vec<crate::render::blocks::BlockJson<'a>>,
        }
        output::print_json(&Json {
            by: "block",
            blocks: all
                .iter()
                .map(|b| crate::render::blocks::json(b, now_ms, limit))
                .collect(),
        });
        return Ok(ExitCode::SUCCESS);
    }
    if args.active && all.is_empty() {
        println!("no active block: nothing was used in the last 5 hours");
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", crate::render::blocks::render(&all, now_ms, limit));
    Ok(ExitCode::SUCCESS)
}
