//! Policy settings (parsed from `.hookjournal/config.toml` by the cli; plain data here).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The default of `loop_agent_env`: the variable naming the looping agent.
pub const DEFAULT_LOOP_AGENT_ENV: &str = "RALPH_AGENT_ID";
/// The default of `task_command_env`: the variable naming the loop's task program.
pub const DEFAULT_TASK_COMMAND_ENV: &str = "RALPH_TASK_SCRIPT";

/// The policy settings (`[policy]` in `.hookjournal/config.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Tool calls and prompts since the last task-tool use before a reminder is due.
    pub reminder_threshold: u64,
    /// Tool calls and prompts between two reminders.
    pub reminder_cooldown: u64,
    /// Context pressure tiers, as fractions of the window.
    pub warning: f64,
    /// The critical tier.
    pub critical: f64,
    /// The emergency tier (Stop is blocked once at it).
    pub emergency: f64,
    /// Window assumed when the model does not say (1M-context models are recognised by name).
    pub context_window: u64,
    /// Characters of injected context (Claude caps it at 10,000).
    pub restore_budget: usize,
    /// Loop mode: fail the agent's task at PreCompact and stop the agent.
    pub loop_mode: bool,
    /// The environment variable naming the looping agent; when set, loop mode is on.
    pub loop_agent_env: String,
    /// Block Stop once at the emergency tier.
    pub block_stop_at_emergency: bool,
    /// Role name → priorities and files to re-read after compaction. An agent whose name (or
    /// type) contains a role's name has that role (`dev-3` → dev).
    pub roles: BTreeMap<String, RoleConfig>,
    /// Agent name fragment → role name, checked before the role names themselves
    /// (`reviewer = "qa"`: an agent called `code-reviewer-2` gets the qa role).
    pub role_names: BTreeMap<String, String>,
    /// Seconds an agent may stay silent while it holds a task before the task is released for
    /// another agent (at the next SessionStart, or by `hookjournal tasks release-stale`); 0: never.
    pub task_lease_secs: u64,
    /// The loop's own task program, called at a loop agent's PreCompact and SessionEnd to fail
    /// the agent's active tasks there too (`CMD list --status active --json`, then
    /// `CMD fail ID --reason …`). When unset, the program named by `task_command_env` is used.
    pub task_command: Option<String>,
    /// The environment variable naming the loop's task program.
    pub task_command_env: String,
}

/// Which of the session's own files a role re-reads after compaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RereadFrom {
    /// None of them (the role's fixed list only).
    #[default]
    None,
    /// Files edited, most recent first.
    Edited,
    /// Files read, most recent first.
    Read,
    /// Test files among those edited and read.
    Tests,
    /// Documents (Markdown, text, ADRs, anything under `docs/`) among those edited and read.
    Docs,
}

/// A role: what to keep through a compaction and what to re-read after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoleConfig {
    /// What the summary and the restored agent should keep first.
    pub priorities: Vec<String>,
    /// Files always worth re-reading (paths as the agent uses them).
    pub reread: Vec<String>,
    /// Which of the session's own files to re-read too.
    pub reread_from: RereadFrom,
}

fn role(priorities: &[&str], reread_from: RereadFrom) -> RoleConfig {
    RoleConfig {
        priorities: priorities.iter().map(|s| s.to_string()).collect(),
        reread: Vec::new(),
        reread_from,
    }
}

/// The six built-in roles (replaced whole by any `[policy.roles.*]` table).
fn builtin_roles() -> BTreeMap<String, RoleConfig> {
    let mut roles = BTreeMap::new();
    roles.insert(
        "scout".into(),
        role(
            &[
                "Map the code before changing it",
                "Report findings with file:line references",
            ],
            RereadFrom::Read,
        ),
    );
    roles.insert(
        "dev".into(),
        role(
            &[
                "Finish the in-progress task before starting another",
                "Keep the build and tests green",
            ],
            RereadFrom::Edited,
        ),
    );
    roles.insert(
        "qa".into(),
        role(
            &[
                "Re-run the failing tests first",
                "Report each failure with its command and output",
            ],
            RereadFrom::Tests,
        ),
    );
    roles.insert(
        "lead".into(),
        role(
            &[
                "Keep the task board current",
                "Unblock the agent with the oldest in-progress task",
            ],
            RereadFrom::None,
        ),
    );
    roles.insert(
        "architect".into(),
        role(
            &[
                "Keep decisions and their reasons written down",
                "Check changes against the agreed design",
            ],
            RereadFrom::Docs,
        ),
    );
    roles.insert(
        "debugger".into(),
        role(
            &[
                "Reproduce the failure before changing code",
                "Record the root cause when found",
            ],
            RereadFrom::Read,
        ),
    );
    roles
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            reminder_threshold: 10,
            reminder_cooldown: 10,
            warning: 0.70,
            critical: 0.85,
            emergency: 0.95,
            context_window: 200_000,
            restore_budget: 6_000,
            loop_mode: false,
            loop_agent_env: DEFAULT_LOOP_AGENT_ENV.into(),
            block_stop_at_emergency: true,
            roles: builtin_roles(),
            role_names: BTreeMap::new(),
            task_lease_secs: 2 * 3600,
            task_command: None,
            task_command_env: DEFAULT_TASK_COMMAND_ENV.into(),
        }
    }
}

impl PolicyConfig {
    /// Clamps values a user could set to something harmful (e.g. a budget past Claude's cap).
    pub fn sanitized(mut self) -> Self {
        self.restore_budget = self.restore_budget.clamp(200, 9_500);
        self.reminder_threshold = self.reminder_threshold.max(1);
        self.context_window = self.context_window.max(1);
        self
    }

    /// Checks the settings; returns one line per problem, and the settings with every refused
    /// value replaced by its default (a hook must still answer, and answer sensibly).
    pub fn validated(mut self) -> (Self, Vec<String>) {
        let d = PolicyConfig::default();
        let mut problems = Vec::new();
        let tiers = [
            ("warning", self.warning),
            ("critical", self.critical),
            ("emergency", self.emergency),
        ];
        let mut tiers_ok = true;
        for (name, v) in tiers {
            if !(v > 0.0 && v <= 1.0) {
                problems.push(format!(
                    "policy.{name} = {v} is not a fraction of the context window (0 < {name} <= 1)"
                ));
                tiers_ok = false;
            }
        }
        for pair in tiers.windows(2) {
            let ((a, x), (b, y)) = (pair[0], pair[1]);
            if tiers_ok && x >= y {
                problems.push(format!("policy.{a} = {x} must be below policy.{b} = {y}"));
                tiers_ok = false;
            }
        }
        if !tiers_ok {
            problems.push(format!(
                "context tiers refused; using warning {}, critical {}, emergency {}",
                d.warning, d.critical, d.emergency
            ));
            self.warning = d.warning;
            self.critical = d.critical;
            self.emergency = d.emergency;
        }
        let known: Vec<&str> = self.roles.keys().map(String::as_str).collect();
        let unknown: Vec<(String, String)> = self
            .role_names
            .iter()
            .filter(|(_, role)| !self.roles.contains_key(role.as_str()))
            .map(|(name, role)| (name.clone(), role.clone()))
            .collect();
        for (name, role) in unknown {
            problems.push(format!(
                "policy.role_names.{name} = {role:?} names no role (roles: {}); ignored",
                known.join(", ")
            ));
            self.role_names.remove(&name);
        }
        if self.reminder_cooldown == 0 {
            problems.push(
                "policy.reminder_cooldown = 0 would remind on every prompt and tool call; using 1"
                    .into(),
            );
            self.reminder_cooldown = 1;
        }
        (self.sanitized(), problems)
    }
}
