//! `.hookjournal/config.toml`: policy settings plus the hook's own limits. A bad file is reported
//! and the defaults are used: the hook must still answer.

use projections::config::PolicyConfig;
use projections::pricing::{ModelPrice, PricingTable};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub policy: PolicyConfig,
    pub hook: HookLimits,
    /// Model name (or prefix) → prices in USD per million tokens.
    pub pricing: BTreeMap<String, ModelPrice>,
    /// Where `hookjournal ship` sends the journal.
    pub ship: ShipSettings,
    /// Live JSONL mirrors of the session and notification logs.
    pub mirror: MirrorSettings,
}

/// `[mirror]`: files kept in step with the journal, one JSON object a line, with the fields of
/// `export --report session-log` and `--report notifications`. Relative paths are taken from the
/// project (the journal directory's parent). Unset: no file is written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MirrorSettings {
    pub session_log: Option<std::path::PathBuf>,
    pub notification_log: Option<std::path::PathBuf>,
}

impl MirrorSettings {
    pub fn any(&self) -> bool {
        self.session_log.is_some() || self.notification_log.is_some()
    }
}

/// `[ship]`: targets of `hookjournal ship` (flags and environment variables come first).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShipSettings {
    /// PostgreSQL connection URL of the team store.
    pub postgres: Option<String>,
    /// OTLP/HTTP endpoint (records go to `URL/v1/logs`).
    pub otlp: Option<String>,
    /// This machine's name in the team store (default: the host name).
    pub machine: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookLimits {
    /// How long a hook waits for the journal's lock before spooling, in ms.
    pub lock_wait_ms: u64,
    /// Payload cap in bytes; larger payloads keep their first bytes, length and hash.
    pub payload_cap: usize,
    /// Transcript bytes read per hook invocation (SessionEnd reads up to 4× this).
    pub transcript_read_max: usize,
    /// Spool files drained per invocation (the rest wait for the next one).
    pub drain_max: usize,
    /// How long one invocation may spend draining the spool, in ms (SessionEnd: half of it).
    pub drain_budget_ms: u64,
    /// Events the sled store may lag the write-ahead log before a hook starts a detached
    /// drainer (`hookjournal drain`) to ingest them.
    pub drain_lag: u64,
    /// Timeout of `git rev-parse`, in ms.
    pub git_timeout_ms: u64,
    /// Events per sealed segment.
    pub segment_events: u64,
    /// Record-only events (PreToolUse, Notification, …) go straight to the spool, without
    /// opening the store; the next process holding the lock ingests them in order.
    pub fast_path: bool,
    /// Time the loop's task program (`policy.task_command`) gets at a PreCompact, in ms
    /// (SessionEnd: at most 300, since its hooks share 1.5 s).
    pub task_command_timeout_ms: u64,
}

impl Default for HookLimits {
    fn default() -> Self {
        HookLimits {
            lock_wait_ms: 300,
            payload_cap: 16 << 20,
            transcript_read_max: 8 << 20,
            drain_max: 2_000,
            drain_budget_ms: 250,
            drain_lag: 256,
            git_timeout_ms: 400,
            segment_events: journal::DEFAULT_SEGMENT_EVENTS,
            fast_path: true,
            task_command_timeout_ms: 1_500,
        }
    }
}

impl HookLimits {
    /// Clamps every limit into its bounds; returns one phrase per value changed. A hook runs
    /// inside a host's time budget (Claude Code gives SessionEnd hooks 1.5 s in all), so no
    /// setting may make it wait or read without end.
    pub fn clamp(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let mut bound = |name: &str, v: u64, lo: u64, hi: u64| -> u64 {
            let c = v.clamp(lo, hi);
            if c != v {
                out.push(format!(
                    "hook.{name} = {v} is out of range {lo}..={hi}, using {c}"
                ));
            }
            c
        };
        self.lock_wait_ms = bound("lock_wait_ms", self.lock_wait_ms, 0, 2_000);
        self.payload_cap = bound("payload_cap", self.payload_cap as u64, 256, 64 << 20) as usize;
        self.transcript_read_max = bound(
            "transcript_read_max",
            self.transcript_read_max as u64,
            64 << 10,
            64 << 20,
        ) as usize;
        self.drain_max = bound("drain_max", self.drain_max as u64, 1, 100_000) as usize;
        self.drain_budget_ms = bound("drain_budget_ms", self.drain_budget_ms, 10, 1_000);
        self.drain_lag = bound("drain_lag", self.drain_lag, 1, 1 << 20);
        self.git_timeout_ms = bound("git_timeout_ms", self.git_timeout_ms, 10, 2_000);
        self.segment_events = bound("segment_events", self.segment_events, 16, 1 << 20);
        self.task_command_timeout_ms = bound(
            "task_command_timeout_ms",
            self.task_command_timeout_ms,
            10,
            10_000,
        );
        out
    }
}

impl Settings {
    /// Reads `DIR/config.toml`. Returns the settings and, for a bad file, a warning: one line per
    /// problem, each naming the file (refused values are replaced by their defaults).
    pub fn load(dir: &Path) -> (Settings, Option<String>) {
        let path = dir.join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Settings::default(), None)
            }
            Err(e) => {
                return (
                    Settings::default(),
                    Some(format!(
                        "cannot read {}: {e}; using defaults",
                        path.display()
                    )),
                )
            }
        };
        match toml::from_str::<Settings>(&text) {
            Ok(mut s) => {
                let (policy, mut problems) = s.policy.validated();
                s.policy = policy;
                problems.extend(s.hook.clamp());
                let warning = (!problems.is_empty()).then(|| {
                    problems
                        .iter()
                        .map(|p| format!("{}: {p}", path.display()))
                        .collect::<Vec<_>>()
                        .join("\n")
                });
                (s, warning)
            }
            Err(e) => (
                Settings::default(),
                Some(format!(
                    "{} is not valid: {}; using defaults",
                    path.display(),
                    crate::output::one_line(&e.to_string())
                )),
            ),
        }
    }

    pub fn pricing(&self) -> PricingTable {
        let mut t = PricingTable::default();
        for (name, price) in &self.pricing {
            t = t.with_override(name, price.clone());
        }
        t
    }
}

/// `Settings::load` for CLI commands: a bad file is reported (one line on stderr) and the
/// defaults are used.
pub fn load_reporting(dir: &Path) -> Settings {
    let (settings, warning) = Settings::load(dir);
    for line in warning.iter().flat_map(|w| w.lines()) {
        eprintln!("hookjournal: {line}");
    }
    settings
}
