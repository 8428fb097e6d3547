//! One event as `replay` and `demo` name it.

use engine::log::Envelope;
use projections::derived::{self, ResponseEmitted};
use projections::event::Canonical;
use projections::{Kind, KindOf};

pub fn clip(s: &str) -> String {
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A one-line summary of what an event says.
pub fn summary(e: &Envelope) -> String {
    match &e.kind() {
        Kind::Hook { .. } => {
            let Some(ev) = projections::event::from_envelope(e) else {
                return String::new();
            };
            if let Some(call) = ev.tool_call() {
                return format!("{} {}", call.name, clip(&call.subject));
            }
            match ev.canonical {
                Canonical::Prompt { text } => format!("\"{}\"", clip(&text)),
                Canonical::SessionStart { source } => source,
                Canonical::SessionEnd { reason } => reason,
                Canonical::PreCompact { trigger, .. } | Canonical::PostCompact { trigger, .. } => {
                    trigger
                }
                Canonical::Notification { message, .. } => clip(&message),
                _ => String::new(),
            }
        }
        Kind::Malformed { reason } => format!("{reason} ({} bytes)", e.payload.len()),
        Kind::UsageObserved { .. } => derived::parse::<derived::UsageObserved>(&e.payload)
            .map(|u| {
                format!(
                    "{} in={} out={} cache_w={} cache_r={}",
                    u.record.model,
                    u.record.usage.input_tokens,
                    u.record.usage.output_tokens,
                    u.record.usage.cache_write(),
                    u.record.usage.cache_read
                )
            })
            .unwrap_or_default(),
        Kind::ContextObserved { .. } => derived::parse::<derived::ContextObserved>(&e.payload)
            .map(|c| {
                format!(
                    "context {} tokens",
                    c.tokens.map(|t| t.to_string()).unwrap_or("-".into())
                )
            })
            .unwrap_or_default(),
        Kind::ResponseEmitted { .. } => derived::parse::<ResponseEmitted>(&e.payload)
            .map(|r| clip(&r.output))
            .unwrap_or_default(),
        Kind::Rewound { session, to_seq } => {
            format!("session {} to seq {to_seq}", projections::short_id(session))
        }
        _ => clip(&String::from_utf8_lossy(&e.payload)),
    }
}
