//! Cost totals: the cost summary's deduplicated responses summed per (session, UTC day, model,
//! subagent, context band), with the figures hosts reported per session, kept in 256 shards by
//! session (`crate::index::shard_of`). `cost` reads these few thousand rows instead of decoding
//! every response the log ever deduplicated.
//!
//! A row changes with its responses: a new response adds itself; a larger reading of a response
//! already counted ("the larger reading replaces", as in the cost summary) subtracts the record
//! it replaces and adds the new one. Both go to the shard of the session whose event carried the
//! reading, whoever owns the response (a fork re-reading its parent's response): rows are summed
//! across shards when read, so a shard may hold another session's (even negative) delta and the
//! sums stay exact. Like the cost summary, rewinds never hide these: money spent stays spent.
//!
//! Pricing by band is exact whenever every model's long-context threshold is a band bound
//! ([`crate::index::BAND_BOUNDS`]); [`CostTotals::items`] says when it is not (a price override),
//! and the caller prices the responses one by one instead.

use crate::derived::SessionMetrics;
use crate::index::{band_cost, band_of};
use crate::pricing::{ModelPrice, PricingTable};
use crate::reported::HostFigures;
use crate::transcript::Usage;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One response's usage, as the cost summary keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostRecord {
    /// Its session.
    pub session: String,
    /// The subagent whose transcript it came from.
    pub agent_id: Option<String>,
    /// The model.
    pub model: String,
    /// When it was written.
    pub timestamp: String,
    /// The usage (the largest reading).
    pub usage: Usage,
}

/// What a row sums over.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TotalsKey {
    /// The session that owns the responses (counted them first).
    pub session: String,
    /// The UTC day of the responses (`2026-11-03`; `unknown` without a timestamp).
    pub day: String,
    /// The model.
    pub model: String,
    /// The subagent whose transcript they came from.
    pub agent: Option<String>,
    /// Their context band (`crate::index::band_of`).
    pub band: u8,
}

/// Signed sums (a shard may hold a delta that another shard's row makes whole).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sums {
    /// Responses.
    pub responses: i64,
    /// Uncached input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache writes, 5-minute TTL.
    pub cache_write_5m: i64,
    /// Cache writes, 1-hour TTL.
    pub cache_write_1h: i64,
    /// Cache reads.
    pub cache_read: i64,
}

impl Sums {
    fn add(&mut self, u: &Usage, responses: i64, sign: i64) {
        let t = |x: u64| i64::try_from(x).unwrap_or(i64::MAX).wrapping_mul(sign);
        self.responses = self.responses.wrapping_add(responses * sign);
        self.input_tokens = self.input_tokens.wrapping_add(t(u.input_tokens));
        self.output_tokens = self.output_tokens.wrapping_add(t(u.output_tokens));
        self.cache_write_5m = self.cache_write_5m.wrapping_add(t(u.cache_write_5m));
        self.cache_write_1h = self.cache_write_1h.wrapping_add(t(u.cache_write_1h));
        self.cache_read = self.cache_read.wrapping_add(t(u.cache_read));
    }

    fn merge(&mut self, o: &Sums) {
        self.responses = self.responses.wrapping_add(o.responses);
        self.input_tokens = self.input_tokens.wrapping_add(o.input_tokens);
        self.output_tokens = self.output_tokens.wrapping_add(o.output_tokens);
        self.cache_write_5m = self.cache_write_5m.wrapping_add(o.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.wrapping_add(o.cache_write_1h);
        self.cache_read = self.cache_read.wrapping_add(o.cache_read);
    }

    fn is_zero(&self) -> bool {
        *self == Sums::default()
    }

    /// The usage summed (a negative sum, which only a partial merge can show, counts 0).
    pub fn usage(&self) -> Usage {
        let u = |x: i64| u64::try_from(x).unwrap_or(0);
        Usage {
            input_tokens: u(self.input_tokens),
            output_tokens: u(self.output_tokens),
            cache_write_5m: u(self.cache_write_5m),
            cache_write_1h: u(self.cache_write_1h),
            cache_read: u(self.cache_read),
        }
    }
}

/// One shard of the cost totals (or all of them merged).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostTotals {
    /// The responses' usage, summed.
    pub rows: BTreeMap<TotalsKey, Sums>,
    /// Sessions' own reported metrics (hosts that put cost in payloads): last value per session.
    pub reported: BTreeMap<String, SessionMetrics>,
    /// What the host itself reported per session (statusline readings), over every epoch.
    pub host: BTreeMap<String, HostFigures>,
}

/// The UTC date of an RFC 3339 timestamp (`2026-11-03T14:00:35.000Z` → `2026-11-03`).
pub fn day_of(ts: &str) -> &str {
    ts.get(..10).unwrap_or("unknown")
}

impl CostTotals {
    /// The row key of a response record.
    fn key_of(r: &CostRecord) -> TotalsKey {
        TotalsKey {
            session: r.session.clone(),
            day: day_of(&r.timestamp).to_string(),
            model: r.model.clone(),
            agent: r.agent_id.clone(),
            band: band_of(r.usage.context_tokens()),
        }
    }

    fn count(&mut self, r: &CostRecord, sign: i64) {
        let key = Self::key_of(r);
        let row = self.rows.entry(key).or_default();
        row.add(&r.usage, 1, sign);
        if row.is_zero() {
            let key = Self::key_of(r);
            self.rows.remove(&key);
        }
    }

    /// A response counted for the first time (`old` is `None`), or a larger reading that
    /// replaced `old`.
    pub fn replace(&mut self, old: Option<&CostRecord>, new: &CostRecord) {
        if let Some(o) = old {
            self.count(o, -1);
        }
        self.count(new, 1);
    }

    /// The shards' totals merged: rows of the same key summed, the per-session figures (one
    /// shard per session) joined. A session's rows are all in its own shard but for the deltas
    /// a fork's readings left in the fork's: only those few are looked up.
    pub fn merged(shards: impl IntoIterator<Item = (u8, CostTotals)>) -> Merged {
        let mut out = Merged::default();
        let mut foreign: BTreeMap<TotalsKey, Sums> = BTreeMap::new();
        for (n, t) in shards {
            for (k, v) in t.rows {
                if crate::index::shard_of(&k.session) == n {
                    out.rows.push((k, v));
                } else {
                    foreign.entry(k).or_default().merge(&v);
                }
            }
            out.reported.extend(t.reported);
            out.host.extend(t.host);
        }
        if !foreign.is_empty() {
            for (k, v) in &mut out.rows {
                if let Some(d) = foreign.remove(k) {
                    v.merge(&d);
                }
            }
            out.rows.extend(foreign);
            out.rows.retain(|(_, v)| !v.is_zero());
        }
        out
    }
}

/// Every shard's totals, merged: each key once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Merged {
    /// The rows, in no particular order.
    pub rows: Vec<(TotalsKey, Sums)>,
    /// Sessions' own reported metrics, by session.
    pub reported: BTreeMap<String, SessionMetrics>,
    /// What the hosts reported per session.
    pub host: BTreeMap<String, HostFigures>,
}

impl Merged {
    /// The rows as priced items; `None` when a model's long-context threshold is not a band
    /// bound (a price override), so the bands cannot tell which responses exceed it.
    pub fn items(&self, pricing: &PricingTable) -> Option<Vec<CostItem<'_>>> {
        let mut prices: HashMap<&str, Option<&ModelPrice>> = HashMap::new();
        let mut out = Vec::with_capacity(self.rows.len());
        for (k, s) in &self.rows {
            let price = *prices
                .entry(k.model.as_str())
                .or_insert_with(|| pricing.lookup(&k.model));
            let usage = s.usage();
            let usd = match price {
                None => None,
                Some(p) => Some(band_cost(p, k.band, &usage)?),
            };
            out.push(CostItem {
                session: &k.session,
                day: &k.day,
                model: &k.model,
                agent: k.agent.as_deref(),
                usage,
                responses: u64::try_from(s.responses).unwrap_or(0),
                usd,
            });
        }
        Some(out)
    }
}

/// Responses of one session, day, model and subagent, priced: one response of the cost summary,
/// or one row of the cost totals.
#[derive(Clone, Debug, PartialEq)]
pub struct CostItem<'a> {
    /// The session that owns them.
    pub session: &'a str,
    /// Their UTC day.
    pub day: &'a str,
    /// Their model.
    pub model: &'a str,
    /// The subagent whose transcript they came from.
    pub agent: Option<&'a str>,
    /// Their usage, summed.
    pub usage: Usage,
    /// How many responses.
    pub responses: u64,
    /// Their cost; `None` when the model has no price.
    pub usd: Option<f64>,
}

/// The cost summary's responses as priced items, one per response (each model looked up once).
pub fn record_items<'a>(
    records: impl Iterator<Item = &'a CostRecord>,
    pricing: &PricingTable,
) -> Vec<CostItem<'a>> {
    let mut prices: HashMap<&str, Option<&ModelPrice>> = HashMap::new();
    records
        .map(|r| {
            let price = *prices
                .entry(r.model.as_str())
                .or_insert_with(|| pricing.lookup(&r.model));
            CostItem {
                session: &r.session,
                day: day_of(&r.timestamp),
                model: &r.model,
                agent: r.agent_id.as_deref(),
                usage: r.usage,
                responses: 1,
                usd: price.map(|p| p.cost(&r.usage)),
            }
        })
        .collect()
}
