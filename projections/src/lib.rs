//! Pure folds over the hookjournal event log: host adapters (raw payload → canonical event),
//! projections (state), views (texts and reports) and the hook policy (state × event → answer).
//! No files, no clock, no environment, no processes: same events in, same state out.
#![warn(missing_docs)]

pub mod answer;
pub mod blocks;
pub mod cline;
pub mod cline_session;
pub mod codec;
pub mod codex_rollout;
pub mod config;
pub mod copilot_session;
pub mod cost_totals;
pub mod derived;
pub mod droid_session;
pub mod event;
pub mod event_kind;
pub mod fold;
pub mod gemini_chat;
pub mod hook_event;
pub mod host;
pub mod hosts_matrix;
pub mod index;
pub mod kind;
pub mod observe;
pub mod openclaw;
pub mod opencode;
pub mod pi;
pub mod policy;
pub mod pressure;
pub mod pricing;
pub mod qwen_chat;
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
pub mod traces;
pub mod transcript;
pub mod views;

pub use kind::{Kind, KindOf, KINDS};

/// The first 8 characters of an id, for tables and task references.
pub fn short_id(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}
