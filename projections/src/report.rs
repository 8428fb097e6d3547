//! Report rows (for tables, `--json` and JSONL exports), computed from projection state.

use crate::config::PolicyConfig;
use crate::fold::{CostRecord, CostSummary};
use crate::pricing::PricingTable;
use crate::session::SessionState;
use crate::transcript::Usage;
use crate::views;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CostRow {
    pub key: String,
    pub usd: f64,
    /// Responses whose model has no price (their tokens are counted, their cost is not).
    pub unpriced_responses: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_read_tokens: u64,
    pub total_tokens: u64,
    pub responses: u64,
    pub models: Vec<String>,
}

impl CostRow {
    fn add(&mut self, r: &CostRecord, usd: Option<f64>) {
        let u = &r.usage;
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cache_write_tokens += u.cache_write();
        self.cache_read_tokens += u.cache_read;
        self.total_tokens += u.total();
        self.responses += 1;
        match usd {
            Some(x) => self.usd += x,
            None => self.unpriced_responses += 1,
        }
        if !self.models.contains(&r.model) {
            self.models.push(r.model.clone());
            self.models.sort();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostBy {
    Session,
    Day,
    Month,
    Model,
}

/// The UTC date of an RFC 3339 timestamp (`2026-11-03T14:00:35.000Z` → `2026-11-03`).
fn day_of(ts: &str) -> &str {
    ts.get(..10).unwrap_or("unknown")
}

/// Cost rows grouped `by`, keeping records whose day is within [since, until] (inclusive, as
/// `YYYY-MM-DD`), and the total row.
pub fn cost_rows(
    c: &CostSummary,
    pricing: &PricingTable,
    by: CostBy,
    since: Option<&str>,
    until: Option<&str>,
    session: Option<&str>,
) -> (Vec<CostRow>, CostRow) {
    let mut rows: BTreeMap<String, CostRow> = BTreeMap::new();
    let mut total = CostRow {
        key: "total".into(),
        ..CostRow::default()
    };
    for r in c.by_key.values() {
        let day = day_of(&r.timestamp);
        if since.is_some_and(|s| day < s)
            || until.is_some_and(|u| day > u)
            || session.is_some_and(|s| r.session != s)
        {
            continue;
        }
        let key = match by {
            CostBy::Session => r.session.clone(),
            CostBy::Day => day.to_string(),
            CostBy::Month => day.get(..7).unwrap_or("unknown").to_string(),
            CostBy::Model => r.model.clone(),
        };
        let usd = pricing.cost(&r.model, &r.usage);
        rows.entry(key.clone())
            .or_insert_with(|| CostRow {
                key,
                ..CostRow::default()
            })
            .add(r, usd);
        total.add(r, usd);
    }
    // Sessions that reported their own cost in payloads (no transcript usage).
    if by == CostBy::Session {
        for (s, m) in &c.reported {
            if session.is_some_and(|x| x != s) || rows.contains_key(s) {
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
                rows.insert(s.clone(), row);
            }
        }
    }
    let mut rows: Vec<CostRow> = rows.into_values().collect();
    if by == CostBy::Session || by == CostBy::Model {
        rows.sort_by(|a, b| {
            b.usd
                .partial_cmp(&a.usd)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.key.cmp(&b.key))
        });
    }
    (rows, total)
}

/// USD of a session's own usage (the hook-path view, from its checkpoint).
pub fn session_usd(s: &SessionState, pricing: &PricingTable) -> (f64, Usage) {
    let mut usd = 0.0;
    for (m, u) in s.usage_by_key.values() {
        usd += pricing.cost(m, u).unwrap_or(0.0);
    }
    (usd, s.usage_total())
}

/// One row of `sessions` / `export --report sessions`.
pub fn session_row(
    s: &SessionState,
    pricing: &PricingTable,
    cfg: &PolicyConfig,
) -> serde_json::Value {
    let (usd, usage) = session_usd(s, pricing);
    let (tier, used) = views::pressure(s, cfg);
    let usd = if s.usage_by_key.is_empty() {
        s.metrics
            .as_ref()
            .and_then(|m| m.payload.cost_usd)
            .unwrap_or(0.0)
    } else {
        usd
    };
    serde_json::json!({
        "session_id": s.id,
        "host": s.host,
        "cwd": s.cwd,
        "first_seq": s.first_seq,
        "last_seq": s.last_seq,
        "start_us": s.first_at_us,
        "last_us": s.last_at_us,
        "events": s.hook_events,
        "status": s.status.as_str(),
        "tier": tier.as_str(),
        "context_tokens": s.pressure.tokens,
        "context_used": (used * 1000.0).round() / 1000.0,
        "model": s.model,
        "branch": s.branch,
        "tool_calls": s.tool_calls,
        "prompts": s.prompt_count,
        "compactions": s.compactions,
        "open_tasks": s.tasks.open().count(),
        "usd": usd,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_write_tokens": usage.cache_write(),
        "cache_read_tokens": usage.cache_read,
    })
}

/// The execution snapshot of a session as data (`show --json`, `export --report snapshots`).
pub fn snapshot_json(
    s: &SessionState,
    pricing: &PricingTable,
    cfg: &PolicyConfig,
) -> serde_json::Value {
    let mut v = session_row(s, pricing, cfg);
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
    });
    if let (Some(a), Some(b)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in b {
            a.insert(k.clone(), x.clone());
        }
    }
    v
}
