//! `replay`: the debugger. Event by event, with the projection changes each event caused; with
//! `--verify`, every recorded answer is recomputed from replayed state and compared (the engine
//! is `projections::replay::Replayer`; this is its I/O and display).

use crate::cli_util::CommandHelper;
use crate::output::{self, escape};
use crate::render::replay::{clip, summary};
use anyhow::Result;
use engine::log::Envelope;
use engine::state;
use projections::fold::{CostRecord, Full};
use projections::replay::Replayer;
use projections::{Kind, KindOf, KINDS};
use serde_json::{json, Value};
use std::collections::BTreeMap;

use std::process::ExitCode;

/// `replay` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this session's events (full id or its first characters).
    #[arg(long)]
    pub session: Option<String>,
    /// Start at this seq (inclusive; default: the first event).
    #[arg(long, value_name = "SEQ")]
    pub from: Option<u64>,
    /// Stop at this seq (inclusive; default: the last event).
    #[arg(long, value_name = "SEQ")]
    pub to: Option<u64>,
    /// Only events of this kind (`Hook`, `Hook:Stop`, `ResponseEmitted`, …).
    #[arg(long)]
    pub kind: Option<String>,
    /// Recompute every recorded answer and report differences (exit 3 if any).
    #[arg(long)]
    pub verify: bool,
    /// Print one JSON object per event (JSONL) for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

const QUIET: &[&str] = &[
    "last_seq",
    "last_at_us",
    "hook_events",
    "first_seq",
    "first_at_us",
    "usage_by_key",
    "transcript_offsets",
    "updated_seq",
];

fn diff_values(prefix: &str, a: &Value, b: &Value, out: &mut Vec<(String, Value, Value)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, vb) in y {
                if QUIET.contains(&k.as_str()) {
                    continue;
                }
                let va = x.get(k).unwrap_or(&Value::Null);
                if va != vb {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    if prefix.split('.').count() < 3 && va.is_object() && vb.is_object() {
                        diff_values(&p, va, vb, out);
                    } else {
                        out.push((p, va.clone(), vb.clone()));
                    }
                }
            }
        }
        _ => out.push((prefix.to_string(), a.clone(), b.clone())),
    }
}

/// The projection changes an event caused: its session's state, the task store, cost, notifications.
pub fn changes(e: &Envelope, before: &Full, after: &Full) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    for sid in projections::fold::State::sessions_touched(e) {
        let Some(a) = before
            .state
            .sessions
            .get(&sid)
            .map(|s| serde_json::to_value(s).unwrap_or_default())
        else {
            if after.state.sessions.contains_key(&sid) {
                out.push((
                    format!("session {}", projections::short_id(&sid)),
                    Value::Null,
                    json!("created"),
                ));
            }
            continue;
        };
        let b = after
            .state
            .sessions
            .get(&sid)
            .map(|s| serde_json::to_value(s).unwrap_or_default())
            .unwrap_or(json!({}));
        diff_values(
            &format!("session {}", projections::short_id(&sid)),
            &a,
            &b,
            &mut out,
        );
    }
    if before.state.tasks != after.state.tasks {
        let a = serde_json::to_value(&before.state.tasks).unwrap_or_default();
        let b = serde_json::to_value(&after.state.tasks).unwrap_or_default();
        diff_values("journal tasks", &a, &b, &mut out);
    }
    let responses = |f: &Full| f.state.cost.values().map(|c| c.by_key.len()).sum::<usize>();
    fn by_key(f: &Full) -> Vec<(&u8, &BTreeMap<String, CostRecord>)> {
        f.state
            .cost
            .iter()
            .map(|(n, c)| (n, &c.by_key))
            .filter(|(_, m)| !m.is_empty())
            .collect()
    }
    if by_key(before) != by_key(after) {
        out.push((
            "cost".into(),
            json!(responses(before)),
            json!(responses(after)),
        ));
    }
    let notified = |f: &Full| f.notifications().count();
    if notified(before) != notified(after) {
        out.push((
            "notifications".into(),
            json!(notified(before)),
            json!(notified(after)),
        ));
    }
    out
}

fn short_value(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    clip(&s)
}

/// A typo in `--kind` must not pass for "no events match".
fn check_kind(k: &str) -> std::result::Result<(), String> {
    let hook_event = k.strip_prefix("Hook:").is_some_and(|n| !n.is_empty());
    if hook_event || Kind::named(k).is_some() {
        return Ok(());
    }
    let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    Err(format!(
        "--kind {k:?} is not an event kind; valid: {}, or Hook:<event> (e.g. Hook:Stop)",
        names.join(", ")
    ))
}

/// Prints the log event by event with what each changed, or recomputes every answer.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    if let Some(Err(e)) = args.kind.as_deref().map(check_kind) {
        eprintln!("hookjournal: {e}");
        return Ok(ExitCode::from(2));
    }
    let settings = cmd.settings();
    let view = cmd.view()?;
    let session = match &args.session {
        Some(s) => Some(engine::resolve_session(view.state.sessions.keys(), s)?),
        None => None,
    };
    let from = args.from.unwrap_or(1);
    let to = args.to.unwrap_or(u64::MAX);
    let kind = args.kind.clone();
    let bar = crate::output::progress(view.snap.head_seq, "replay");
    // For display only: which events a later rewind hides (the fold itself learns of a rewind
    // when it happens, as the hook did).
    let all_rewinds = state::collect_rewinds(&view.snap)?;
    let log = state::SnapLog(&view.snap);
    let mut rep = Replayer::new(&log, args.verify.then_some(&settings.policy));
    let json = args.json;
    let mut shown = 0u64;
    rep.run(|e, before, after| {
        if e.seq % 4096 == 0 {
            bar.set_position(e.seq);
        }
        if e.seq < from || e.seq > to || session.as_ref().is_some_and(|s| e.session_id.as_ref() != Some(s)) {
            return;
        }
        let ek = e.kind();
        if let Some(k) = &kind {
            let label = ek.label();
            if !(label == *k || ek.name() == k) {
                return;
            }
        }
        shown += 1;
        let hidden = all_rewinds.hides(e);
        let ch = changes(e, before, after);
        if json {
            let v = json!({
                "seq": e.seq, "recorded_at": output::timestamp(e.recorded_at_us), "kind": ek.label(), "session_id": e.session_id,
                "cause": ek.cause(), "summary": summary(e), "hidden_by_rewind": hidden,
                "changes": ch.iter().map(|(f, a, b)| json!({"field": f, "before": a, "after": b})).collect::<Vec<_>>(),
            });
            println!("{}", output::json_safe(v.to_string()));
        } else {
            let t = &output::timestamp(e.recorded_at_us)[11..19];
            let sid = e.session_id.as_deref().map(projections::short_id).unwrap_or("-");
            let cause = ek.cause().map(|c| format!(" ←{c}")).unwrap_or_default();
            let h = if hidden { " (rewound)" } else { "" };
            println!("{:>7}  {t}  {:<8}  {}{cause}{h}  {}", e.seq, escape(sid), output::bold(&escape(&ek.label())), escape(&summary(e)));
            for (f, a, b) in ch.iter().take(12) {
                println!("{:>9}↳ {}: {} → {}", "", escape(f), escape(&short_value(a)), escape(&short_value(b)));
            }
        }
    })?;
    bar.finish_and_clear();
    if args.verify {
        if json {
            println!(
                "{}",
                output::json_safe(json!({"verified_answers": rep.verified, "differences": rep.differences.iter().map(|d| json!({"seq": d.seq, "what": d.what})).collect::<Vec<_>>()}).to_string())
            );
        } else {
            for d in &rep.differences {
                println!("difference at seq {}: {}", d.seq, escape(&d.what));
            }
            println!(
                "replay --verify: {} recomputed from replayed state, {}",
                output::count(rep.verified, "answer"),
                output::count(rep.differences.len() as u64, "difference")
            );
        }
        if !rep.differences.is_empty() {
            return Ok(ExitCode::from(3));
        }
    } else if !json && shown == 0 {
        println!("no events match");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_lists_every_event_kind() {
        // `--kind` takes exactly the vocabulary's names.
        for k in KINDS {
            assert!(check_kind(k.name).is_ok(), "{}", k.name);
        }
        assert!(check_kind("Hook:PreToolUse").is_ok());
        assert!(check_kind("Hook:").is_err());
        assert!(check_kind("Bogus").is_err());
    }
}
