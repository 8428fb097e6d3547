//! `--since` / `--until`: a day (`2026-11-03`, inclusive) or an RFC 3339 instant.

use crate::output::UsageError;
use anyhow::{bail, Result};
use chrono::{DateTime, NaiveDate};

#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub since_us: Option<i64>,
    pub until_us: Option<i64>,
}

/// A day (`YYYY-MM-DD`, four-digit year) or an RFC 3339 instant, in microseconds; `end` takes a
/// day's last microsecond. A bad value is a usage error (exit 2), naming the flag.
fn parse(flag: &str, s: &str, end: bool) -> Result<i64> {
    let day_shaped = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if day_shaped {
        if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            let t = if end {
                d.and_hms_micro_opt(23, 59, 59, 999_999)
            } else {
                d.and_hms_opt(0, 0, 0)
            };
            return Ok(t.expect("valid time").and_utc().timestamp_micros());
        }
    }
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => Ok(t.timestamp_micros()),
        Err(_) => Err(UsageError(format!(
            "{flag} \"{}\" is not a date (YYYY-MM-DD) or an RFC 3339 time",
            crate::output::escape(s)
        ))
        .into()),
    }
}

impl Range {
    pub fn new(since: Option<&str>, until: Option<&str>) -> Result<Range> {
        let r = Range {
            since_us: since.map(|s| parse("--since", s, false)).transpose()?,
            until_us: until.map(|s| parse("--until", s, true)).transpose()?,
        };
        if let (Some(a), Some(b), Some(s), Some(u)) = (r.since_us, r.until_us, since, until) {
            if a > b {
                bail!(UsageError(format!(
                    "--since {} is after --until {}: nothing can be in that range",
                    crate::output::escape(s),
                    crate::output::escape(u)
                )));
            }
        }
        Ok(r)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_instants_parse_and_anything_else_is_a_usage_error() {
        assert!(Range::new(Some("2026-11-01"), Some("2026-11-01T10:00:00Z")).is_ok());
        for bad in [
            "not-a-date",
            "2026-02-30",
            "2026-1-5",
            "+2026-01-01",
            "20260101",
            "",
        ] {
            let e = Range::new(Some(bad), None).unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{bad}: {e}");
            assert!(e.to_string().starts_with("--since \""), "{e}");
        }
        let e = Range::new(Some("2026-11-02"), Some("2026-11-01")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--since 2026-11-02 is after --until 2026-11-01: nothing can be in that range"
        );
    }
}
