//! Context pressure: how full a session's window is, by the configured fractions, from its
//! context readings (`session::Pressure`) and model. The session views (`views::pressure`) and
//! the sessions index (`index::SessionSummary::pressure`) both read it here.

use crate::config::PolicyConfig;
use crate::session::Pressure;

/// Context pressure: how full the window is, by the configured fractions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Below the warning fraction.
    Ok,
    /// At the warning fraction.
    Warning,
    /// At the critical fraction.
    Critical,
    /// At the emergency fraction.
    Emergency,
}

impl Tier {
    /// The tier of a window `used` this full (a fraction), by the configured fractions.
    pub fn of(used: f64, cfg: &PolicyConfig) -> Tier {
        if used >= cfg.emergency {
            Tier::Emergency
        } else if used >= cfg.critical {
            Tier::Critical
        } else if used >= cfg.warning {
            Tier::Warning
        } else {
            Tier::Ok
        }
    }

    /// Its name (`ok`, `warning`, `critical`, `emergency`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Tier::Ok => "ok",
            Tier::Warning => "warning",
            Tier::Critical => "critical",
            Tier::Emergency => "emergency",
        }
    }
}

/// The context window of a model: 1M for 1M-context variants, else the configured default.
pub fn window_for(model: Option<&str>, cfg: &PolicyConfig) -> u64 {
    match model {
        Some(m) if m.contains("[1m]") || m.contains("-1m") || m.ends_with("1m") => 1_000_000,
        _ => cfg.context_window,
    }
}

/// The window a session's readings ran under: the host's, else its model's.
pub fn window_of(p: &Pressure, model: Option<&str>, cfg: &PolicyConfig) -> u64 {
    p.window
        .filter(|w| *w > 0)
        .unwrap_or_else(|| window_for(p.model.as_deref().or(model), cfg))
}

/// `pressure_with` from a session's context readings and last model alone (the sessions index
/// keeps only those).
pub fn pressure_of(
    p: &Pressure,
    model: Option<&str>,
    cfg: &PolicyConfig,
    extra: u64,
) -> (Tier, f64) {
    let window = window_of(p, model, cfg);
    let used = (p.tokens + p.injected + extra) as f64 / window as f64;
    (Tier::of(used, cfg), used)
}
