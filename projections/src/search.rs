//! What an event gives `search`: the texts a person looks for later — prompts, tool inputs and
//! outputs, file paths, commands (and the commit messages in them), notifications, task titles
//! and notes — each with the name of the field it came from. Every host's payload is read the
//! same way: every string in it, under its own key, except the bookkeeping keys (ids, the
//! transcript's path, the event's name), which match every query of a session and mean nothing.
//!
//! Pure: the engine keeps the index (a derived file, rebuilt from the log at will); this says only
//! what each event contributes to it.

use crate::kind::Kind;
use journal::Envelope;

/// One text of an event, under the key it came from (`prompt`, `command`, `file_path`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The field: the JSON key the text was under (`text` for a payload that is not JSON).
    pub field: String,
    /// The text.
    pub text: String,
}

/// How much of one event is indexed: a tool output of megabytes is searched in its first 64 KiB.
pub const EVENT_CAP: usize = 64 << 10;

/// Keys whose strings are bookkeeping, not words anyone searches for.
const SKIPPED: &[&str] = &[
    "session_id",
    "sessionId",
    "conversation_id",
    "generation_id",
    "transcript_path",
    "hook_event_name",
    "hookEventName",
    "event_type",
    "cwd",
    "working_dir",
    "working_directory",
    "tool_use_id",
    "tool_call_id",
    "toolCallId",
    "agent_id",
    "agent_transcript_path",
    "permission_mode",
    "timestamp",
    "id",
    "uuid",
];

/// The texts `env` gives the index (none for the derived kinds: usage, context, answers,
/// checkpoints repeat what their cause said or hold no words).
pub fn documents(env: &Envelope) -> Vec<Doc> {
    match Kind::of(env) {
        Kind::Hook { .. } | Kind::TaskCommand | Kind::ExternalRelease => payload_docs(&env.payload),
        Kind::Malformed { .. } => vec![Doc {
            field: "text".into(),
            text: capped(&String::from_utf8_lossy(&env.payload), EVENT_CAP).to_string(),
        }],
        _ => Vec::new(),
    }
}

fn payload_docs(payload: &[u8]) -> Vec<Doc> {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(payload) else {
        return vec![Doc {
            field: "text".into(),
            text: capped(&String::from_utf8_lossy(payload), EVENT_CAP).to_string(),
        }];
    };
    let mut out = Vec::new();
    let mut budget = EVENT_CAP;
    walk(&v, "text", &mut out, &mut budget);
    out
}

fn walk(v: &serde_json::Value, key: &str, out: &mut Vec<Doc>, budget: &mut usize) {
    use serde_json::Value as V;
    if *budget == 0 {
        return;
    }
    match v {
        V::String(s) if !s.trim().is_empty() => {
            // Texts of one field are joined (a newline between): one row per field, not per
            // array item.
            let joined = out.iter().position(|d| d.field == key);
            let sep = usize::from(joined.is_some());
            if *budget <= sep {
                *budget = 0;
                return;
            }
            let text = capped(s, *budget - sep);
            *budget -= text.len() + sep;
            match joined {
                Some(i) => {
                    let d = &mut out[i];
                    d.text.push('\n');
                    d.text.push_str(text);
                }
                None => out.push(Doc {
                    field: key.to_string(),
                    text: text.to_string(),
                }),
            }
        }
        V::Array(items) => items.iter().for_each(|x| walk(x, key, out, budget)),
        V::Object(map) => {
            for (k, x) in map {
                if !SKIPPED.contains(&k.as_str()) {
                    walk(x, k, out, budget);
                }
            }
        }
        _ => {}
    }
}

/// `s` cut to at most `cap` bytes, on a character boundary.
fn capped(s: &str, cap: usize) -> &str {
    if s.len() <= cap {
        return s;
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A query as the index's phrase search: each word quoted (so `rate-limit` or `fix(api)` is text,
/// not query syntax), all of them required, a trailing `*` kept as a prefix search. `None` when
/// the query has no word.
pub fn fts_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query
        .split_whitespace()
        .filter_map(|w| {
            let (word, prefix) = match w.strip_suffix('*') {
                Some(stem) => (stem, true),
                None => (w, false),
            };
            let word = word.replace('"', "\"\"");
            (!word.is_empty()).then(|| format!("\"{word}\"{}", if prefix { "*" } else { "" }))
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}
