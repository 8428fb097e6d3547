//! Report rows (for tables, `--json` and JSONL exports), computed from projection state.

use crate::config::PolicyConfig;
use crate::cost_totals::CostItem;
use crate::derived::SessionMetrics;
use crate::fold::CostSummary;
use crate::pricing::PricingTable;
use crate::reported::HostFigures;
use crate::session::SessionState;
use crate::transcript::Usage;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One row of `cost`: usage and cost of one session, day, month or model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CostRow {
    /// The session, day (`2026-11-03`), month (`2026-11`) or model.
    pub key: String,
    /// Cost in USD of the priced responses.
    pub usd: f64,
    /// Responses whose model has no price (their tokens are counted, their cost is not).
    pub unpriced_responses: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache write tokens (both TTLs).
    pub cache_write_tokens: u64,
    /// Cache read tokens.
    pub cache_read_tokens: u64,
    /// All tokens.
    pub total_tokens: u64,
    /// Deduplicated responses.
    pub responses: u64,
    /// The models seen, sorted.
    pub models: Vec<String>,
}

impl CostRow {
    fn add(&mut self, it: &CostItem<'_>) {
        let u = &it.usage;
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cache_write_tokens += u.cache_write();
        self.cache_read_tokens += u.cache_read;
        self.total_tokens += u.total();
        self.responses += it.responses;
        match it.usd {
            Some(x) => self.usd += x,
            None => self.unpriced_responses += it.responses,
        }
        if let Err(i) = self.models.binary_search_by(|m| m.as_str().cmp(it.model)) {
            self.models.insert(i, it.model.to_string());
        }
    }
}

/// The responses of a cost summary (a full replay's), priced one by one.
pub fn cost_items<'a>(c: &'a CostSummary, pricing: &PricingTable) -> Vec<CostItem<'a>> {
    crate::cost_totals::record_items(c.by_key.values(), pricing)
}

/// What `cost` groups by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostBy {
    /// Per session.
    Session,
    /// Per UTC day.
    Day,
    /// Per week (UTC days), weeks starting on the given day; the key is the week's first day.
    Week(chrono::Weekday),
    /// Per UTC month.
    Month,
    /// Per model.
    Model,
}

/// Cost rows grouped `by`, keeping items whose day is within [since, until] (inclusive, as
/// `YYYY-MM-DD`), and the total row. `reported` adds the sessions that reported their own cost
/// in payloads and have no transcript usage (by session only).
pub fn cost_rows(
    items: &[CostItem<'_>],
    reported: &BTreeMap<String, SessionMetrics>,
    by: CostBy,
    since: Option<&str>,
    until: Option<&str>,
    session: Option<&str>,
) -> (Vec<CostRow>, CostRow) {
    let mut rows: BTreeMap<std::borrow::Cow<'_, str>, CostRow> = BTreeMap::new();
    let mut total = CostRow {
        key: "total".into(),
        ..CostRow::default()
    };
    for it in items {
        let day = it.day;
        if since.is_some_and(|s| day < s)
            || until.is_some_and(|u| day > u)
            || session.is_some_and(|s| it.session != s)
        {
            continue;
        }
        let key = match by {
            CostBy::Session => it.session.into(),
            CostBy::Day => day.into(),
            CostBy::Week(start) => week_of(day, start).into(),
            CostBy::Month => day.get(..7).unwrap_or("unknown").into(),
            CostBy::Model => it.model.into(),
        };
        let key: std::borrow::Cow<'_, str> = key;
        rows.entry(key)
            .or_insert_with_key(|key| CostRow {
                key: key.to_string(),
                ..CostRow::default()
            })
            .add(it);
        total.add(it);
    }
    // Sessions that reported their own cost in payloads (no transcript usage).
    if by == CostBy::Session {
        for (s, m) in reported {
            if session.is_some_and(|x| x != s) || rows.contains_key(s.as_str()) {
                continue;
            }
            if let Some(usd) = m.payload.cost_usd {
                let row = CostRow {
                    key: s.clone(),
                    usd,
                    input_tokens: m.payload.tokens_in.unwrap_or(0),
                    output_tokens: m.payload.tokens_out.unwrap_or(0),
                    total_tokens: m.payload.tokens_in.unwrap_or(0)
                        + m.payload.tokens_out.unwrap_or(0),
                    models: m.payload.model.iter().cloned().collect(),
                    ..CostRow::default()
                };
                total.usd += usd;
                total.input_tokens += row.input_tokens;
                total.output_tokens += row.output_tokens;
                total.total_tokens += row.total_tokens;
                rows.insert(s.as_str().into(), row);
            }
        }
    }
    let mut rows: Vec<CostRow> = rows.into_values().collect();
    if by == CostBy::Session || by == CostBy::Model {
        costliest_first(&mut rows);
    }
    (rows, total)
}

/// The first day of the week `day` (`YYYY-MM-DD`) is in, weeks starting on `start`
/// (`unknown` stays `unknown`).
pub fn week_of(day: &str, start: chrono::Weekday) -> String {
    use chrono::Datelike;
    match chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d") {
        Ok(d) => {
            let back = d.weekday().days_since(start);
            (d - chrono::Days::new(u64::from(back))).to_string()
        }
        Err(_) => day.to_string(),
    }
}

/// `rows` summed into the groups `group` puts their keys in (a session's host, a journal's
/// project), costliest first; each group's models sorted and once.
pub fn regroup(rows: Vec<CostRow>, group: impl Fn(&str) -> String) -> Vec<CostRow> {
    let mut out: BTreeMap<String, CostRow> = BTreeMap::new();
    for r in rows {
        let key = group(&r.key);
        let g = out.entry(key.clone()).or_insert_with(|| CostRow {
            key,
            ..CostRow::default()
        });
        g.usd += r.usd;
        g.unpriced_responses += r.unpriced_responses;
        g.input_tokens += r.input_tokens;
        g.output_tokens += r.output_tokens;
        g.cache_write_tokens += r.cache_write_tokens;
        g.cache_read_tokens += r.cache_read_tokens;
        g.total_tokens += r.total_tokens;
        g.responses += r.responses;
        for m in r.models {
            if let Err(i) = g.models.binary_search(&m) {
                g.models.insert(i, m);
            }
        }
    }
    let mut rows: Vec<CostRow> = out.into_values().collect();
    costliest_first(&mut rows);
    rows
}

/// Orders cost rows by USD, highest first (ties by key): the order of the by-session,
/// by-model (and team by-machine) tables.
pub fn costliest_first(rows: &mut [CostRow]) {
    rows.sort_by(|a, b| {
        b.usd
            .partial_cmp(&a.usd)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.key.cmp(&b.key))
    });
}

/// USD of a session's own usage (the hook-path view, from its checkpoint).
pub fn session_usd(s: &SessionState, pricing: &PricingTable) -> (f64, Usage) {
    let mut usd = 0.0;
    for (m, u) in s.usage_by_key.values() {
        usd += pricing.cost(m, u).unwrap_or(0.0);
    }
    (usd, s.usage_total())
}

/// One row of `sessions` / `export --report sessions` (and the team store's `row` column). The
/// fields are in alphabetical order, the order its JSON has always had.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionRow {
    /// The git branch last seen.
    pub branch: Option<String>,
    /// Cache-read input tokens.
    pub cache_read_tokens: u64,
    /// Cache-write input tokens (5 m and 1 h).
    pub cache_write_tokens: u64,
    /// Compactions so far.
    pub compactions: u64,
    /// The latest context reading, in tokens.
    pub context_tokens: u64,
    /// The share of the context window used (0..1, three decimals).
    pub context_used: f64,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// Hook events recorded.
    pub events: u64,
    /// The session's first event.
    pub first_seq: u64,
    /// The host's name (`claude`, `codex`, …).
    pub host: String,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// The session's last event.
    pub last_seq: u64,
    /// When its last event was recorded (µs since the epoch).
    pub last_us: i64,
    /// The model last seen.
    pub model: Option<String>,
    /// Open tasks of the session.
    pub open_tasks: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// User prompts.
    pub prompts: u64,
    /// The session's id.
    pub session_id: String,
    /// When its first event was recorded (µs since the epoch).
    pub start_us: i64,
    /// `active`, `idle`, `ended`, …
    pub status: String,
    /// The pressure tier: `ok`, `warning`, `critical`, `emergency`.
    pub tier: String,
    /// Tool calls.
    pub tool_calls: u64,
    /// USD from transcript usage (the host's own figure when no usage was read).
    pub usd: f64,
}

/// A session's row.
pub fn session_row(s: &SessionState, pricing: &PricingTable, cfg: &PolicyConfig) -> SessionRow {
    let sum = crate::index::SessionSummary::of(s);
    let usd = sum
        .usd(pricing)
        .unwrap_or_else(|| session_usd(s, pricing).0);
    summary_row(&s.id, &sum, usd, cfg)
}

/// One row of `sessions` from the session's summary in the index and its USD (`usd`, or the
/// exact per-request sum when the summary cannot price it).
pub fn summary_row(
    id: &str,
    sum: &crate::index::SessionSummary,
    usd: f64,
    cfg: &PolicyConfig,
) -> SessionRow {
    let (tier, used) = sum.pressure(cfg);
    let usage = sum.usage_total();
    SessionRow {
        session_id: id.to_string(),
        host: sum.host.clone(),
        cwd: sum.cwd.clone(),
        first_seq: sum.first_seq,
        last_seq: sum.last_seq,
        start_us: sum.first_at_us,
        last_us: sum.last_at_us,
        events: sum.hook_events,
        status: sum.status.clone(),
        tier: tier.as_str().to_string(),
        context_tokens: sum.pressure.tokens,
        context_used: (used * 1000.0).round() / 1000.0,
        model: sum.model.clone(),
        branch: sum.branch.clone(),
        tool_calls: sum.tool_calls,
        prompts: sum.prompts,
        compactions: sum.compactions,
        open_tasks: sum.open_tasks(),
        usd,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_write_tokens: usage.cache_write(),
        cache_read_tokens: usage.cache_read,
    }
}

/// The execution snapshot of a session as data (`show --json`, `export --report snapshots`).
pub fn snapshot_json(
    s: &SessionState,
    pricing: &PricingTable,
    cfg: &PolicyConfig,
) -> serde_json::Value {
    let mut v = serde_json::to_value(session_row(s, pricing, cfg)).unwrap_or_default();
    let tasks: Vec<&crate::tasks::Task> = s.tasks.tasks.values().collect();
    let extra = serde_json::json!({
        "agent_role": s.agent_role,
        "loop_agent": s.loop_agent,
        "end_reason": s.end_reason,
        "last_prompts": s.prompts,
        "in_progress": s.in_progress().iter().map(|t| &t.subject).collect::<Vec<_>>(),
        "tasks": tasks,
        "files_read": s.files_read,
        "files_edited": s.files_edited,
        "commits": s.commits,
        "failed_tool_calls": s.failed_tools,
        "subagents": s.subagents,
        "compact_triggers": s.compact_triggers,
        "last_compact_summary": s.last_compact_summary,
        "plan": s.plan,
        "last_assistant_message": s.last_assistant_message,
        "reminder": s.reminder,
        "continues": s.continues,
        "usage_copied": s.usage_copied.len(),
        "served": s.served,
        "mcp_servers": s.mcp_servers,
        "resumed": s.resumed,
        "host_reported": s.host_reported,
    });
    if let (Some(a), Some(b)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in b {
            a.insert(k.clone(), x.clone());
        }
    }
    v
}

/// A session's cost as the transcripts show it beside what the host itself reported.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Reconciled {
    /// The session (`total` for the total row).
    pub session: String,
    /// Cost of the session's transcript usage.
    pub transcript_usd: f64,
    /// The host's own figure: the statusline's readings summed over epochs, else a cost a hook
    /// payload carried.
    pub host_usd: Option<f64>,
    /// `statusline` or `payload`.
    pub host_source: Option<String>,
    /// host − transcript.
    pub difference_usd: Option<f64>,
    /// Times the host's counter started again (compaction, a resumed process).
    pub host_epochs: u32,
    /// The session's compactions.
    pub compactions: u64,
    /// Why the figures differ, most likely first (empty when they agree).
    pub explanation: Vec<String>,
}

/// Differences under this are rounding.
const AGREE_USD: f64 = 0.000_5;

/// Per session and in total: transcript-derived cost beside the host's own, with the difference
/// named. Sessions are those with transcript usage or host figures (filtered like `cost_rows`).
pub fn reconcile(
    items: &[CostItem<'_>],
    reported: &BTreeMap<String, SessionMetrics>,
    host: &BTreeMap<String, HostFigures>,
    facts: &dyn Fn(&str) -> SessionFacts,
    since: Option<&str>,
    until: Option<&str>,
) -> (Vec<Reconciled>, Reconciled) {
    let TranscriptCosts {
        mut by,
        unpriced,
        agents_with_usage,
    } = transcript_costs(items, since, until);
    host_costs(&mut by, reported, host, since, until);
    let total = compare(&mut by, facts, &unpriced, &agents_with_usage);
    let mut rows: Vec<Reconciled> = by.into_values().collect();
    rows.sort_by(|a, b| {
        b.transcript_usd
            .partial_cmp(&a.transcript_usd)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.session.cmp(&b.session))
    });
    (rows, total)
}

/// What the reconciliation reads of a session besides its cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionFacts {
    /// Its compactions (their summary requests are in no transcript).
    pub compactions: u64,
    /// Its subagents.
    pub subagents: usize,
}

impl SessionFacts {
    /// A session's facts from its state.
    pub fn of(s: &SessionState) -> SessionFacts {
        SessionFacts {
            compactions: s.compactions,
            subagents: s.subagents.len(),
        }
    }
}

/// What the transcripts say per session: cost, responses without a price, subagents with usage.
struct TranscriptCosts {
    by: BTreeMap<String, Reconciled>,
    unpriced: BTreeMap<String, u64>,
    agents_with_usage: BTreeMap<String, Vec<String>>,
}

fn transcript_costs(
    items: &[CostItem<'_>],
    since: Option<&str>,
    until: Option<&str>,
) -> TranscriptCosts {
    // Summed by session in a hash map (items come in no order), then sorted once.
    let mut by: HashMap<&str, (f64, u64, Vec<&str>)> = HashMap::new();
    for it in items {
        let day = it.day;
        if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
            continue;
        }
        let e = by.entry(it.session).or_default();
        match it.usd {
            Some(x) => e.0 += x,
            None => e.1 += it.responses,
        }
        if let Some(a) = it.agent {
            if !e.2.contains(&a) {
                e.2.push(a);
            }
        }
    }
    let mut out = TranscriptCosts {
        by: BTreeMap::new(),
        unpriced: BTreeMap::new(),
        agents_with_usage: BTreeMap::new(),
    };
    let mut sessions: Vec<_> = by.into_iter().collect();
    sessions.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (s, (usd, unpriced, agents)) in sessions {
        if unpriced > 0 {
            out.unpriced.insert(s.to_string(), unpriced);
        }
        if !agents.is_empty() {
            out.agents_with_usage.insert(
                s.to_string(),
                agents.into_iter().map(str::to_string).collect(),
            );
        }
        out.by.insert(
            s.to_string(),
            Reconciled {
                session: s.to_string(),
                transcript_usd: usd,
                ..Reconciled::default()
            },
        );
    }
    out
}

/// The host's own figure per session: its statusline readings, else a cost a payload carried.
/// A session the transcripts do not show counts when its last reading is in the range.
fn host_costs(
    by: &mut BTreeMap<String, Reconciled>,
    reported: &BTreeMap<String, SessionMetrics>,
    host: &BTreeMap<String, HostFigures>,
    since: Option<&str>,
    until: Option<&str>,
) {
    let in_range = |at_us: i64| {
        let day = chrono_day(at_us);
        !(since.is_some_and(|s| day.as_str() < s) || until.is_some_and(|u| day.as_str() > u))
    };
    for (s, h) in host {
        if let Some(usd) = h.total_cost() {
            if !by.contains_key(s) && !in_range(h.at_us) {
                continue;
            }
            let e = by.entry(s.clone()).or_insert_with(|| Reconciled {
                session: s.clone(),
                ..Reconciled::default()
            });
            e.host_usd = Some(usd);
            e.host_source = Some("statusline".into());
            e.host_epochs = h.epochs;
        }
    }
    for (s, m) in reported {
        if let (Some(usd), Some(e)) = (m.payload.cost_usd, by.get_mut(s)) {
            if e.host_usd.is_none() {
                e.host_usd = Some(usd);
                e.host_source = Some("payload".into());
            }
        }
    }
}

/// Differences and their explanations per session, and the total (which compares only the
/// sessions the host reported on).
fn compare(
    by: &mut BTreeMap<String, Reconciled>,
    facts: &dyn Fn(&str) -> SessionFacts,
    unpriced: &BTreeMap<String, u64>,
    agents_with_usage: &BTreeMap<String, Vec<String>>,
) -> Reconciled {
    let mut total = Reconciled {
        session: "total".into(),
        ..Reconciled::default()
    };
    let mut host_total = None::<f64>;
    for e in by.values_mut() {
        let f = facts(&e.session);
        e.compactions = f.compactions;
        total.transcript_usd += e.transcript_usd;
        total.compactions += e.compactions;
        let Some(host) = e.host_usd else {
            continue;
        };
        *host_total.get_or_insert(0.0) += host;
        let diff = host - e.transcript_usd;
        e.difference_usd = Some(diff);
        e.explanation = explain(
            diff,
            e,
            f.subagents,
            unpriced.get(&e.session).copied().unwrap_or(0),
            agents_with_usage.get(&e.session).map(Vec::len).unwrap_or(0),
        );
    }
    total.host_usd = host_total;
    if let Some(h) = host_total {
        let t: f64 = by
            .values()
            .filter(|e| e.host_usd.is_some())
            .map(|e| e.transcript_usd)
            .sum();
        total.difference_usd = Some(h - t);
    }
    total
}

fn chrono_day(at_us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(at_us)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn explain(
    diff: f64,
    e: &Reconciled,
    subagents: usize,
    unpriced: u64,
    agents_with_usage: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    if diff.abs() < AGREE_USD {
        return out;
    }
    if diff > 0.0 {
        if e.compactions > 0 {
            out.push(format!(
                "compaction summary requests are in no transcript ({} compaction{})",
                e.compactions,
                if e.compactions == 1 { "" } else { "s" }
            ));
        }
        if subagents > agents_with_usage {
            out.push(format!(
                "subagent usage not read from transcripts ({} of {subagents} subagents)",
                subagents - agents_with_usage
            ));
        }
        if unpriced > 0 {
            out.push(format!("{unpriced} responses of models without a price"));
        }
        if out.is_empty() {
            out.push(
                "requests the transcripts do not show (a transcript not read yet, or one the host does not write)"
                    .into(),
            );
        }
    } else {
        if e.host_epochs > 1 {
            out.push(format!(
                "the host's counter started again {} times and readings between a reset and the next reading are lost",
                e.host_epochs - 1
            ));
        }
        out.push(
            "the host counts only what its statusline saw (readings started late, or the session was resumed in a new process)"
                .into(),
        );
    }
    out
}
