//! Claude Code's statusline: its JSON input read leniently, the journal facts the line shows
//! (computed from a checkpoint, then cached by the cli), and the line itself. Pure.

use crate::config::PolicyConfig;
use crate::derived::HostReported;
use crate::fold::State;
use crate::session::SessionState;
use crate::tasks::TaskStatus;
use crate::views::{self, Tier};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the statusline input says (every field optional; a field of the wrong type is absent).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    /// The session id.
    pub session_id: Option<String>,
    /// The model's id.
    pub model_id: Option<String>,
    /// The model's display name.
    pub model_name: Option<String>,
    /// The project directory.
    pub project_dir: Option<String>,
    /// The session's cost so far (USD).
    pub cost_usd: Option<f64>,
    /// The session's duration.
    pub duration_ms: Option<f64>,
    /// Time spent in API requests.
    pub api_duration_ms: Option<f64>,
    /// Tokens in the context window (input + cache reads + cache writes of the last request).
    pub context_tokens: Option<u64>,
    /// The window's size.
    pub context_window: Option<u64>,
    /// Percent of the window used.
    pub used_percentage: Option<f64>,
    /// Whether the context is past 200k tokens.
    pub exceeds_200k_tokens: Option<bool>,
    /// Percent of the 5-hour rate limit used.
    pub five_hour_pct: Option<f64>,
    /// Percent of the 7-day rate limit used.
    pub seven_day_pct: Option<f64>,
    /// The host's version.
    pub version: Option<String>,
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_f64().filter(|x| x.is_finite())
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

impl Input {
    /// `None` when the bytes are not a JSON object.
    pub fn parse(bytes: &[u8]) -> Option<Input> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        if !v.is_object() {
            return None;
        }
        let cw = |k: &str| num(&v, &["context_window", k]);
        let usage = |k: &str| num(&v, &["context_window", "current_usage", k]);
        let context_tokens = match (
            usage("input_tokens"),
            usage("cache_creation_input_tokens"),
            usage("cache_read_input_tokens"),
        ) {
            (None, None, None) => None,
            (a, b, c) => Some((a.unwrap_or(0.0) + b.unwrap_or(0.0) + c.unwrap_or(0.0)) as u64),
        };
        let context_window = cw("context_window_size")
            .map(|w| w as u64)
            .filter(|w| *w > 0);
        let used_percentage = cw("used_percentage").or_else(|| {
            let (t, w) = (context_tokens?, context_window?);
            Some(t as f64 * 100.0 / w as f64)
        });
        Some(Input {
            session_id: text(&v, &["session_id"]),
            model_id: text(&v, &["model", "id"]).or_else(|| text(&v, &["model"])),
            model_name: text(&v, &["model", "display_name"]),
            project_dir: text(&v, &["workspace", "project_dir"]),
            cost_usd: num(&v, &["cost", "total_cost_usd"]).filter(|c| *c >= 0.0),
            duration_ms: num(&v, &["cost", "total_duration_ms"]),
            api_duration_ms: num(&v, &["cost", "total_api_duration_ms"]),
            context_tokens,
            context_window,
            used_percentage: used_percentage.map(|p| p.clamp(0.0, 100.0)),
            exceeds_200k_tokens: v.get("exceeds_200k_tokens").and_then(Value::as_bool),
            five_hour_pct: num(&v, &["rate_limits", "five_hour", "used_percentage"]),
            seven_day_pct: num(&v, &["rate_limits", "seven_day", "used_percentage"]),
            version: text(&v, &["version"]),
        })
    }

    /// The figures worth recording. Two readings are "the same" when these are equal, except
    /// for durations, which tick with the clock.
    pub fn reading(&self) -> HostReported {
        HostReported {
            source: "statusline".into(),
            cost_usd: self.cost_usd,
            duration_ms: self.duration_ms,
            api_duration_ms: self.api_duration_ms,
            context_tokens: self.context_tokens,
            context_window: self.context_window,
            used_percentage: self.used_percentage.map(|p| (p * 100.0).round() / 100.0),
            model: self.model_id.clone(),
            exceeds_200k_tokens: self.exceeds_200k_tokens,
            version: self.version.clone(),
        }
    }

    /// Whether the input carries any figure worth recording (cost, context).
    pub fn has_figures(&self) -> bool {
        self.cost_usd.is_some() || self.context_tokens.is_some() || self.used_percentage.is_some()
    }
}

/// Whether `new` differs from the last recorded reading in anything but the clock.
pub fn changed(last: Option<&HostReported>, new: &HostReported) -> bool {
    let Some(last) = last else {
        return true;
    };
    let strip = |r: &HostReported| HostReported {
        duration_ms: None,
        api_duration_ms: None,
        ..r.clone()
    };
    strip(last) != strip(new)
}

/// The journal facts the line shows, as the cli caches them between refreshes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Facts {
    /// The task in progress (`[id] subject`), if any.
    pub in_progress: Option<String>,
    /// Open tasks (the session's and the journal-wide ones for it).
    pub open_tasks: u64,
    /// A task reminder is due (tool calls and prompts since the last task-tool use).
    pub reminder_due: bool,
    /// Tool calls and prompts since the last task-tool use.
    pub since_task_use: u64,
    /// The session's compactions.
    pub compactions: u64,
    /// The journal's last seq when the facts were read.
    pub head_seq: u64,
}

/// Facts of session `s` (None: the journal does not know the session yet) in state `st`.
pub fn facts(st: &State, s: Option<&SessionState>, cfg: &PolicyConfig) -> Facts {
    let mut f = Facts {
        head_seq: st.global.last_seq,
        ..Facts::default()
    };
    let Some(s) = s else {
        let open: Vec<_> = st.tasks.open().collect();
        f.open_tasks = open.len() as u64;
        f.in_progress = open
            .iter()
            .find(|t| t.status == TaskStatus::InProgress)
            .map(|t| format!("[{}] {}", t.id, t.subject));
        return f;
    };
    let open = views::open_tasks_for(st, s);
    f.open_tasks = open.len() as u64;
    f.in_progress = open
        .iter()
        .find(|t| t.status == TaskStatus::InProgress)
        .map(|t| format!("[{}] {}", t.id, t.subject));
    let r = &s.reminder;
    f.since_task_use = r.since_task_use;
    f.reminder_due = !open.is_empty()
        && r.since_task_use >= cfg.reminder_threshold
        && r.last_reminder_at
            .is_none_or(|at| r.since_task_use >= at + cfg.reminder_cooldown);
    f.compactions = s.compactions;
    f
}

/// Removes what could drive a terminal or reorder text: control characters and bidi controls.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control() && !is_bidi(*c))
        .collect()
}

/// Whether `c` is a bidirectional-text control.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

fn clip(s: &str, n: usize) -> String {
    let s = clean(s);
    if s.chars().count() <= n {
        return s;
    }
    let mut out: String = s.chars().take(n - 1).collect();
    out.push('…');
    out
}

fn tier_of(pct: f64, cfg: &PolicyConfig) -> Tier {
    Tier::of(pct / 100.0, cfg)
}

/// A ten-cell bar.
pub fn bar(pct: f64) -> String {
    let filled = ((pct / 10.0).round() as usize).min(10);
    format!("{}{}", "█".repeat(filled), "░".repeat(10 - filled))
}

fn paint(s: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// The line: model │ context bar, percent and tier │ cost │ task in progress │ reminder marker.
/// `input` None means the input was unreadable; the line still says something.
pub fn render(
    input: Option<&Input>,
    facts: Option<&Facts>,
    cfg: &PolicyConfig,
    color: bool,
) -> String {
    let sep = if color {
        " \x1b[2m│\x1b[0m "
    } else {
        " │ "
    };
    let Some(i) = input else {
        return format!("hookjournal{sep}statusline input unreadable");
    };
    let mut parts = Vec::new();
    let model = i
        .model_name
        .as_deref()
        .or(i.model_id.as_deref())
        .map(|m| clip(m, 24))
        .unwrap_or_else(|| "?".into());
    parts.push(paint(&model, "1", color));
    parts.push(context_segment(i, cfg, color));
    if let Some(c) = i.cost_usd {
        parts.push(if c < 10.0 {
            format!("${c:.2}")
        } else {
            format!("${c:.1}")
        });
    }
    let mut limits = Vec::new();
    if let Some(p) = i.five_hour_pct {
        limits.push(format!("5h {p:.0}%"));
    }
    if let Some(p) = i.seven_day_pct {
        limits.push(format!("7d {p:.0}%"));
    }
    if !limits.is_empty() {
        parts.push(limits.join(" "));
    }
    if let Some(f) = facts {
        parts.extend(task_segments(f, color));
    }
    parts.join(sep)
}

/// The context bar, percent and tier, colored by tier.
fn context_segment(i: &Input, cfg: &PolicyConfig, color: bool) -> String {
    let Some(pct) = i.used_percentage else {
        return format!("{} ?%", bar(0.0));
    };
    let tier = tier_of(pct, cfg);
    let code = match tier {
        Tier::Ok => "32",
        Tier::Warning => "33",
        Tier::Critical => "31",
        Tier::Emergency => "1;31",
    };
    let big = if i.exceeds_200k_tokens == Some(true) {
        " >200k"
    } else {
        ""
    };
    paint(
        &format!("{} {:.0}% {}{big}", bar(pct), pct, tier.as_str()),
        code,
        color,
    )
}

/// The task in progress (else the count of open tasks) and the reminder marker.
fn task_segments(f: &Facts, color: bool) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(t) = &f.in_progress {
        parts.push(format!("▶ {}", clip(t, 40)));
    } else if f.open_tasks > 0 {
        parts.push(format!(
            "{} open task{}",
            f.open_tasks,
            if f.open_tasks == 1 { "" } else { "s" }
        ));
    }
    if f.reminder_due {
        parts.push(paint(
            &format!("⚑ tasks untouched for {} steps", f.since_task_use),
            "33",
            color,
        ));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_shape_renders_every_segment() {
        let i = Input::parse(br#"{"session_id":"s","model":{"id":"claude-opus-4-1","display_name":"Opus"},
            "cost":{"total_cost_usd":0.4213,"total_duration_ms":1000},
            "context_window":{"context_window_size":200000,"current_usage":{"input_tokens":10,"cache_creation_input_tokens":90000,"cache_read_input_tokens":50000,"output_tokens":5},"used_percentage":70.2}}"#).unwrap();
        assert_eq!(i.context_tokens, Some(140_010));
        let f = Facts {
            in_progress: Some("[2] Wire limiter\u{202e} into /login\x1b[2J".into()),
            open_tasks: 2,
            reminder_due: true,
            since_task_use: 12,
            ..Facts::default()
        };
        assert_eq!(
            render(Some(&i), Some(&f), &PolicyConfig::default(), false),
            "Opus │ ███████░░░ 70% warning │ $0.42 │ ▶ [2] Wire limiter into /login[2J │ ⚑ tasks untouched for 12 steps"
        );
    }

    #[test]
    fn durations_alone_are_not_a_change() {
        let a = Input::parse(br#"{"cost":{"total_cost_usd":1.0,"total_duration_ms":1}}"#).unwrap();
        let b = Input::parse(br#"{"cost":{"total_cost_usd":1.0,"total_duration_ms":9}}"#).unwrap();
        let c = Input::parse(br#"{"cost":{"total_cost_usd":1.5,"total_duration_ms":9}}"#).unwrap();
        assert!(!changed(Some(&a.reading()), &b.reading()));
        assert!(changed(Some(&a.reading()), &c.reading()));
        assert!(changed(None, &a.reading()));
    }
}
