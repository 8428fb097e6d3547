//! `cost`: tokens and USD by session, day, month or model.

use crate::cli_util::CommandHelper;
use crate::dates::Range;
use crate::output;
use crate::render::cost::{render, render_reconciliation, By};
use engine::state::Partial;
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
}

/// Prints tokens and USD, grouped.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let dir = cmd.dir();
    let settings = cmd.settings();
    let range = Range::new(args.since.as_deref(), args.until.as_deref())?;
    let pricing = settings.pricing();
    let mut p = Partial::open(dir)?;
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
    let by = match args.by {
        By::Session => CostBy::Session,
        By::Day => CostBy::Day,
        By::Month => CostBy::Month,
        By::Model => CostBy::Model,
        By::Machine => CostBy::Day,
    };
    let (since, until) = range.days();
    let (rows, total) = report::cost_rows(
        &items,
        &totals.reported,
        by,
        since.as_deref(),
        until.as_deref(),
        None,
    );
    let rows = if matches!(args.by, By::Machine) {
        machine_rows(cmd.settings(), &rows, &total)
    } else {
        rows
    };
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

/// Locally, `--by machine` is one row: this machine (as `ship` names it), holding the total.
fn machine_rows(
    settings: &engine::settings::Settings,
    rows: &[CostRow],
    total: &CostRow,
) -> Vec<CostRow> {
    if rows.is_empty() {
        return Vec::new();
    }
    let machine = settings
        .ship
        .machine
        .clone()
        .unwrap_or_else(crate::ship::hostname);
    vec![CostRow {
        key: machine,
        ..total.clone()
    }]
}
