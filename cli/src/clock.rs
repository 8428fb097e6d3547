//! "Now" for the CLI's views (relative times such as "3m ago"). `HOOKJOURNAL_NOW=<RFC 3339>` pins
//! it, so a whole output can be compared in tests and reproduced in a bug report. Recorded times
//! (the hook's `recorded_at`, task commands, rewinds) always come from the real clock: a pinned
//! variable leaking into a session must never put false times into the log.

/// The instant the views measure against, in microseconds since the epoch. An unparseable
/// `HOOKJOURNAL_NOW` is ignored (the real clock is used).
pub fn now_us() -> i64 {
    std::env::var("HOOKJOURNAL_NOW")
        .ok()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s.trim()).ok())
        .map(|t| t.timestamp_micros())
        .unwrap_or_else(|| chrono::Utc::now().timestamp_micros())
}
