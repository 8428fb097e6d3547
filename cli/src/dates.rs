//! `--since` / `--until`: a day (`2026-11-03`, inclusive) or an RFC 3339 instant.

use anyhow::{bail, Result};
use chrono::{DateTime, NaiveDate};

#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub since_us: Option<i64>,
    pub until_us: Option<i64>,
}

fn parse(s: &str, end: bool) -> Result<i64> {
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let t = if end {
            d.and_hms_micro_opt(23, 59, 59, 999_999)
        } else {
            d.and_hms_opt(0, 0, 0)
        };
        return Ok(t.expect("valid time").and_utc().timestamp_micros());
    }
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => Ok(t.timestamp_micros()),
        Err(_) => bail!("{s:?} is not a date (YYYY-MM-DD) or an RFC 3339 time"),
    }
}

impl Range {
    pub fn new(since: Option<&str>, until: Option<&str>) -> Result<Range> {
        Ok(Range {
            since_us: since.map(|s| parse(s, false)).transpose()?,
            until_us: until.map(|s| parse(s, true)).transpose()?,
        })
    }
    pub fn contains(&self, at_us: i64) -> bool {
        self.since_us.is_none_or(|s| at_us >= s) && self.until_us.is_none_or(|u| at_us <= u)
    }
    /// The bounds as UTC days, for grouping by day.
    pub fn days(&self) -> (Option<String>, Option<String>) {
        let day =
            |us: i64| DateTime::from_timestamp_micros(us).map(|t| t.format("%Y-%m-%d").to_string());
        (self.since_us.and_then(day), self.until_us.and_then(day))
    }
    /// Whether an RFC 3339 timestamp string is within the range (unparseable: kept).
    pub fn contains_ts(&self, ts: &str) -> bool {
        match DateTime::parse_from_rfc3339(ts) {
            Ok(t) => self.contains(t.timestamp_micros()),
            Err(_) => true,
        }
    }
}
