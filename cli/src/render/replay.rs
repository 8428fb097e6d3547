//! One event as `replay` and `demo` name it.

use engine::log::Envelope;
use projections::derived::{self, ResponseEmitted};
use projections::{Kind, KindOf};
use serde_json::Value;

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
        Kind::Hook { name } => {
            let v: Value = serde_json::from_slice(&e.payload).unwrap_or(Value::Null);
            let tool = v.get("tool_name").and_then(Value::as_str);
            let detail = match name.as_str() {
                "UserPromptSubmit" => v
                    .get("prompt")
                    .and_then(Value::as_str)
                    .map(|p| format!("\"{}\"", clip(p))),
                "SessionStart" => v.get("source").and_then(Value::as_str).map(str::to_string),
                "SessionEnd" => v.get("reason").and_then(Value::as_str).map(str::to_string),
                "PreCompact" | "PostCompact" => {
                    v.get("trigger").and_then(Value::as_str).map(str::to_string)
                }
                "Notification" => v.get("message").and_then(Value::as_str).map(clip),
                _ => tool.map(|t| {
                    let input = v.get("tool_input");
                    let arg = input
                        .and_then(|i| {
                            ["file_path", "command", "pattern", "subject", "taskId"]
                                .iter()
                                .find_map(|k| i.get(*k).and_then(|x| x.as_str()))
                        })
                        .map(clip)
                        .unwrap_or_default();
                    let status = input
                        .and_then(|i| i.get("status"))
                        .and_then(Value::as_str)
                        .map(|s| format!(" → {s}"))
                        .unwrap_or_default();
                    format!("{t} {arg}{status}")
                }),
            };
            detail.unwrap_or_default()
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
