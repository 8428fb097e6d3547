//! Pure folds over the hookjournal event log: host adapters (raw payload → canonical event),
//! projections (state), views (texts and reports) and the hook policy (state × event → answer).
//! No files, no clock, no environment, no processes: same events in, same state out.

pub mod pricing;
pub mod redact;
pub mod transcript;
