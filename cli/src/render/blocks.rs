//! `cost --by block`: the 5-hour billing blocks as a table, the active block's burn rate and
//! projection, a token limit beside it; and the same as JSON.

use crate::output::{self, Align, Table};
use projections::blocks::{limit_status, Block, BurnRate, LimitStatus, Projection};

/// An instant in ms as `2026-11-03T14:00Z`.
fn at(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%MZ").to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The UTC day of an instant in ms (`2026-11-03`).
pub fn day(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Minutes as `2h 13m`.
fn span(minutes: i64) -> String {
    let m = minutes.max(0);
    if m >= 60 {
        format!("{}h {}m", m / 60, m % 60)
    } else {
        format!("{m}m")
    }
}

fn duration_cell(b: &Block, now_ms: i64) -> String {
    if b.gap {
        return format!("({}h gap)", (b.end_ms - b.start_ms) / 3_600_000);
    }
    if b.active {
        return format!(
            "ACTIVE, {} left",
            span((b.end_ms - now_ms).div_euclid(60_000))
        );
    }
    span(b.last_ms.unwrap_or(b.start_ms).saturating_sub(b.start_ms) / 60_000)
}

/// The blocks table; `limit` adds each block's share of it.
pub fn render(blocks: &[Block], now_ms: i64, limit: Option<u64>) -> String {
    if blocks.is_empty() {
        return "no usage recorded yet (usage is read from transcripts at Stop, SubagentStop, PreCompact and SessionEnd)\n".into();
    }
    let mut headers = vec![
        ("BLOCK START", Align::Left),
        ("DURATION", Align::Left),
        ("MODELS", Align::Left),
        ("RESPONSES", Align::Right),
        ("TOTAL TOKENS", Align::Right),
    ];
    if limit.is_some() {
        headers.push(("OF LIMIT", Align::Right));
    }
    headers.push(("COST", Align::Right));
    let mut t = Table::new(&headers);
    for b in blocks {
        let mut cells = vec![at(b.start_ms), duration_cell(b, now_ms)];
        if b.gap {
            cells.extend(["-".to_string(), "-".into(), "-".into()]);
            cells.extend(limit.map(|_| "-".to_string()));
            cells.push("-".into());
        } else {
            cells.push(b.models.join(", "));
            cells.push(output::tokens(b.responses));
            cells.push(output::tokens(b.total_tokens()));
            cells.extend(limit.map(|l| percent(b.total_tokens(), l)));
            let mut usd = output::usd(b.usd);
            if b.unpriced_responses > 0 {
                usd.push_str(&format!(" (+{} unpriced)", b.unpriced_responses));
            }
            cells.push(usd);
        }
        t.row(cells);
    }
    let mut out = t.render();
    if let Some(b) = blocks.iter().find(|b| b.active) {
        out.push_str(&render_active(b, now_ms, limit));
    }
    out
}

fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", n as f64 / of as f64 * 100.0)
    }
}

/// The active block in words: elapsed and left, burn rate, projection, the limit.
pub fn render_active(b: &Block, now_ms: i64, limit: Option<u64>) -> String {
    let mut out = format!(
        "\n{} started {}: {} elapsed, {} left (ends {})\n",
        output::bold("active block"),
        at(b.start_ms),
        span((now_ms - b.start_ms) / 60_000),
        span((b.end_ms - now_ms).div_euclid(60_000)),
        at(b.end_ms),
    );
    out.push_str(&format!(
        "  so far     {} tokens, {}\n",
        output::tokens(b.total_tokens()),
        output::usd(b.usd)
    ));
    let Some(rate) = b.burn_rate() else {
        out.push_str("  burn rate  - (one response so far)\n");
        return out;
    };
    out.push_str(&format!(
        "  burn rate  {} tokens/min, {}/h\n",
        output::tokens(rate.tokens_per_minute.round() as u64),
        output::usd(rate.usd_per_hour)
    ));
    if let Some(p) = b.projection(now_ms) {
        out.push_str(&format!(
            "  projected  {} tokens, {} by the block's end\n",
            output::tokens(p.total_tokens),
            output::usd(p.usd)
        ));
        if let Some(s) = limit.and_then(|l| limit_status(&p, l)) {
            out.push_str(&format!(
                "  limit      {} tokens: {} used, {} projected ({})\n",
                output::tokens(s.limit),
                percent(b.total_tokens(), s.limit),
                percent(s.projected, s.limit),
                s.status.to_uppercase()
            ));
        }
    }
    out
}

/// One block as `cost --by block --json` prints it.
#[derive(serde::Serialize)]
pub struct BlockJson<'a> {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end.
    pub end: String,
    /// RFC 3339 time of the last response (none for a gap).
    pub last_response: Option<String>,
    /// Whether it is the active block.
    pub active: bool,
    /// Whether it is a gap.
    pub gap: bool,
    /// Responses.
    pub responses: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache write tokens.
    pub cache_write_tokens: u64,
    /// Cache read tokens.
    pub cache_read_tokens: u64,
    /// All tokens.
    pub total_tokens: u64,
    /// USD (unpriced responses count 0).
    pub usd: f64,
    /// Responses whose model has no price.
    pub unpriced_responses: u64,
    /// Models in the order first used.
    pub models: &'a [String],
    /// The active block's burn rate.
    pub burn_rate: Option<BurnRate>,
    /// The active block's projection.
    pub projection: Option<Projection>,
    /// The projection beside `--token-limit`.
    pub token_limit: Option<LimitStatus>,
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// `b` as JSON, seen at `now_ms`, beside `limit`.
pub fn json(b: &Block, now_ms: i64, limit: Option<u64>) -> BlockJson<'_> {
    let projection = b.projection(now_ms);
    BlockJson {
        start: rfc3339(b.start_ms),
        end: rfc3339(b.end_ms),
        last_response: b.last_ms.map(rfc3339),
        active: b.active,
        gap: b.gap,
        responses: b.responses,
        input_tokens: b.usage.input_tokens,
        output_tokens: b.usage.output_tokens,
        cache_write_tokens: b.usage.cache_write(),
        cache_read_tokens: b.usage.cache_read,
        total_tokens: b.total_tokens(),
        usd: b.usd,
        unpriced_responses: b.unpriced_responses,
        models: &b.models,
        burn_rate: b.burn_rate(),
        projection,
        token_limit: projection
            .as_ref()
            .and_then(|p| limit.and_then(|l| limit_status(p, l))),
    }
}
