//! Billing blocks: the 5-hour windows a subscription's limits are counted in, by the rule
//! ccusage's `blocks` follows (so the two tools agree on the same files):
//!
//! * responses are taken in time order; a block starts at the **hour** of its first response
//!   (floored: 14:37 starts a 14:00 block) and lasts 5 hours;
//! * a response more than 5 hours after its block's start, **or** more than 5 hours after the
//!   previous response, starts a new block (at its own hour); in the second case a **gap** block
//!   (from 5 hours after the previous response to this one) stands between them;
//! * a block is **active** while `now` is under 5 hours after its last response and before its
//!   end;
//! * an active block's **burn rate** is its tokens (and USD) over the minutes between its first
//!   and last response, and its **projection** adds that rate over the minutes left (rounded);
//! * a token limit (a number, or `max`: the most tokens any finished block used) is `exceeds`
//!   when the projection is over it, `warning` over 80 % of it, `ok` otherwise.
//!
//! Pure: `now` is handed in.

use crate::cost_totals::CostRecord;
use crate::pricing::{ModelPrice, PricingTable};
use crate::transcript::Usage;
use serde::Serialize;
use std::collections::HashMap;

/// A block's length, and the gap that ends one: 5 hours, in milliseconds.
pub const BLOCK_MS: i64 = 5 * 3_600_000;
/// The share of a token limit past which a projection is a warning.
pub const WARNING_SHARE: f64 = 0.8;

/// One priced response with its time.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockEntry<'a> {
    /// When it was written, in milliseconds since the epoch.
    pub at_ms: i64,
    /// Its model.
    pub model: &'a str,
    /// Its usage.
    pub usage: Usage,
    /// Its cost; `None` when the model has no price (counted as 0, as ccusage does).
    pub usd: Option<f64>,
}

/// The cost summary's responses as block entries, in no order; a response without a readable
/// timestamp has no place in time and is left out.
pub fn entries<'a>(
    records: impl Iterator<Item = &'a CostRecord>,
    pricing: &PricingTable,
) -> Vec<BlockEntry<'a>> {
    let mut prices: HashMap<&str, Option<&ModelPrice>> = HashMap::new();
    records
        .filter_map(|r| {
            let at_ms = chrono::DateTime::parse_from_rfc3339(&r.timestamp)
                .ok()?
                .timestamp_millis();
            let price = *prices
                .entry(r.model.as_str())
                .or_insert_with(|| pricing.lookup(&r.model));
            Some(BlockEntry {
                at_ms,
                model: &r.model,
                usage: r.usage,
                usd: price.map(|p| p.cost(&r.usage)),
            })
        })
        .collect()
}

/// Tokens per minute and USD per hour of an active block.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BurnRate {
    /// All tokens (cache included) per minute.
    pub tokens_per_minute: f64,
    /// Input and output tokens (no cache) per minute.
    pub tokens_per_minute_for_indicator: f64,
    /// USD per hour.
    pub usd_per_hour: f64,
}

/// Where an active block ends if its burn rate holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Projection {
    /// Tokens at the block's end.
    pub total_tokens: u64,
    /// USD at the block's end (to the cent).
    pub usd: f64,
    /// Minutes left in the block.
    pub remaining_minutes: u64,
}

/// A projection beside a token limit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LimitStatus {
    /// The limit, in tokens.
    pub limit: u64,
    /// The projected tokens.
    pub projected: u64,
    /// The projection as a percentage of the limit.
    pub percent: f64,
    /// `ok`, `warning` (over 80 %) or `exceeds`.
    pub status: &'static str,
}

/// One block (or the gap between two).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Block {
    /// Its start (an hour, or for a gap 5 hours after the response before it), in ms.
    pub start_ms: i64,
    /// Its end (start + 5 hours; for a gap, the next response), in ms.
    pub end_ms: i64,
    /// Its last response, in ms (`None` for a gap).
    pub last_ms: Option<i64>,
    /// Its first response, in ms (`None` for a gap).
    pub first_ms: Option<i64>,
    /// Whether it is the block limits are counted in now.
    pub active: bool,
    /// Whether it is a gap of no use.
    pub gap: bool,
    /// Its responses.
    pub responses: u64,
    /// Their usage, summed.
    pub usage: Usage,
    /// Their cost (unpriced responses count 0).
    pub usd: f64,
    /// Responses whose model has no price.
    pub unpriced_responses: u64,
    /// The models, in the order they were first used.
    pub models: Vec<String>,
}

impl Block {
    fn open(start_ms: i64) -> Block {
        Block {
            start_ms,
            end_ms: start_ms.saturating_add(BLOCK_MS),
            last_ms: None,
            first_ms: None,
            active: false,
            gap: false,
            responses: 0,
            usage: Usage::default(),
            usd: 0.0,
            unpriced_responses: 0,
            models: Vec::new(),
        }
    }

    fn gap(after_ms: i64, next_ms: i64) -> Block {
        Block {
            start_ms: after_ms.saturating_add(BLOCK_MS),
            end_ms: next_ms,
            gap: true,
            ..Block::open(0)
        }
    }

    fn add(&mut self, e: &BlockEntry<'_>) {
        self.first_ms.get_or_insert(e.at_ms);
        self.last_ms = Some(e.at_ms);
        self.responses += 1;
        let (u, a) = (&mut self.usage, &e.usage);
        u.input_tokens += a.input_tokens;
        u.output_tokens += a.output_tokens;
        u.cache_write_5m += a.cache_write_5m;
        u.cache_write_1h += a.cache_write_1h;
        u.cache_read += a.cache_read;
        match e.usd {
            Some(x) => self.usd += x,
            None => self.unpriced_responses += 1,
        }
        if !self.models.iter().any(|m| m == e.model) {
            self.models.push(e.model.to_string());
        }
    }

    fn close(mut self, now_ms: i64) -> Block {
        self.active = self
            .last_ms
            .is_some_and(|last| now_ms - last < BLOCK_MS && now_ms < self.end_ms);
        self
    }

    /// The block's tokens, cache included.
    pub fn total_tokens(&self) -> u64 {
        self.usage.total()
    }

    /// An active block's burn rate (none when its responses span no time).
    pub fn burn_rate(&self) -> Option<BurnRate> {
        if !self.active || self.gap {
            return None;
        }
        let minutes = (self.last_ms? - self.first_ms?) as f64 / 60_000.0;
        if minutes <= 0.0 {
            return None;
        }
        let no_cache = (self.usage.input_tokens + self.usage.output_tokens) as f64;
        Some(BurnRate {
            tokens_per_minute: self.total_tokens() as f64 / minutes,
            tokens_per_minute_for_indicator: no_cache / minutes,
            usd_per_hour: self.usd / minutes * 60.0,
        })
    }

    /// Where an active block ends at its burn rate, seen at `now_ms`.
    pub fn projection(&self, now_ms: i64) -> Option<Projection> {
        let burn = self.burn_rate()?;
        let remaining = ((self.end_ms - now_ms) as f64 / 60_000.0).round();
        let tokens = self.total_tokens() as f64 + burn.tokens_per_minute * remaining;
        let usd = self.usd + burn.usd_per_hour / 60.0 * remaining;
        Some(Projection {
            total_tokens: tokens.round() as u64,
            usd: (usd * 100.0).round() / 100.0,
            remaining_minutes: remaining.max(0.0) as u64,
        })
    }
}

/// The blocks of `entries` (any order), oldest first, gaps between them, seen at `now_ms`.
pub fn blocks(mut entries: Vec<BlockEntry<'_>>, now_ms: i64) -> Vec<Block> {
    entries.sort_by_key(|e| e.at_ms);
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for e in &entries {
        if let Some(b) = cur.as_ref() {
            let last = b.last_ms.unwrap_or(b.start_ms);
            // ccusage also tests `since_last > 5 h` here; it never adds a case, as the last
            // response is never before the block's start.
            if e.at_ms - b.start_ms > BLOCK_MS {
                out.push(cur.take().expect("checked above").close(now_ms));
                if e.at_ms - last > BLOCK_MS {
                    out.push(Block::gap(last, e.at_ms));
                }
            }
        }
        cur.get_or_insert_with(|| Block::open(floor_to_hour(e.at_ms)))
            .add(e);
    }
    out.extend(cur.map(|b| b.close(now_ms)));
    out
}

fn floor_to_hour(ms: i64) -> i64 {
    ms - ms.rem_euclid(3_600_000)
}

/// The most tokens a finished block used (what `--token-limit max` means); 0 without one.
pub fn max_finished_tokens(blocks: &[Block]) -> u64 {
    blocks
        .iter()
        .filter(|b| !b.gap && !b.active)
        .map(Block::total_tokens)
        .max()
        .unwrap_or(0)
}

/// `limit` (tokens) beside a block's projection, as ccusage judges it.
pub fn limit_status(projection: &Projection, limit: u64) -> Option<LimitStatus> {
    if limit == 0 {
        return None;
    }
    let projected = projection.total_tokens;
    let status = if projected > limit {
        "exceeds"
    } else if projected as f64 > limit as f64 * WARNING_SHARE {
        "warning"
    } else {
        "ok"
    };
    Some(LimitStatus {
        limit,
        projected,
        percent: projected as f64 / limit as f64 * 100.0,
        status,
    })
}
