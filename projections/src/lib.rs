//! Pure folds over the hookjournal event log: host adapters (raw payload → canonical event),
//! projections (state), views (texts and reports) and the hook policy (state × event → answer).
//! No files, no clock, no environment, no processes: same events in, same state out.
#![warn(missing_docs)]

pub mod across;
pub mod answer;
pub mod blocks;
pub mod codec;
pub mod config;
pub mod cost_totals;
pub mod derived;
pub mod event;
pub mod event_kind;
pub mod fold;
pub mod hook_event;
pub mod host;
pub mod hosts;
pub mod hosts_matrix;
pub mod index;
pub mod kind;
pub mod observe;
pub mod policy;
pub mod pressure;
pub mod pricing;
pub mod redact;
pub mod replay;
pub mod report;
pub mod reported;
pub mod scenario;
pub mod search;
pub mod session;
pub mod statusline;
pub mod tasks;
pub mod text;
pub mod timeline;
pub mod tool_call;
pub mod traces;
pub mod transcript;
pub mod views;

pub use kind::{Kind, KindOf, KINDS};

/// OpenClaw's payload reader under its old path, for the engine's hook and state code that
/// resolve its session (`hosts::openclaw::wire` is its place).
pub use hosts::openclaw::wire as openclaw;

/// The first 8 characters of an id, for tables and task references.
pub fn short_id(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}
