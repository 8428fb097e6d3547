//! Policy settings (parsed from `.hookjournal/config.toml` by the cli; plain data here).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Tool calls and prompts since the last task-tool use before a reminder is due.
    pub reminder_threshold: u64,
    /// Tool calls and prompts between two reminders.
    pub reminder_cooldown: u64,
    /// Context pressure tiers, as fractions of the window.
    pub warning: f64,
    pub critical: f64,
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
    /// Role name fragment → priorities and files to re-read after compaction.
    pub roles: BTreeMap<String, RoleConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoleConfig {
    pub priorities: Vec<String>,
    pub reread: Vec<String>,
}

fn role(priorities: &[&str], reread: &[&str]) -> RoleConfig {
    RoleConfig {
        priorities: priorities.iter().map(|s| s.to_string()).collect(),
        reread: reread.iter().map(|s| s.to_string()).collect(),
    }
}

impl Default for PolicyConfig {
    fn default() -> Self {
        let mut roles = BTreeMap::new();
        roles.insert(
            "scout".into(),
            role(
                &[
                    "Map the code before changing it",
                    "Report findings with file:line references",
                ],
                &[],
            ),
        );
        roles.insert(
            "dev".into(),
            role(
                &[
                    "Finish the in-progress task before starting another",
                    "Keep the build and tests green",
                ],
                &["files edited this session"],
            ),
        );
        roles.insert(
            "qa".into(),
            role(
                &[
                    "Re-run the failing tests first",
                    "Report each failure with its command and output",
                ],
                &["test files edited this session"],
            ),
        );
        roles.insert(
            "lead".into(),
            role(
                &[
                    "Keep the task board current",
                    "Unblock the agent with the oldest in-progress task",
                ],
                &[],
            ),
        );
        roles.insert(
            "architect".into(),
            role(
                &[
                    "Keep decisions and their reasons written down",
                    "Check changes against the agreed design",
                ],
                &["design documents"],
            ),
        );
        roles.insert(
            "debugger".into(),
            role(
                &[
                    "Reproduce the failure before changing code",
                    "Record the root cause when found",
                ],
                &["files read while reproducing"],
            ),
        );
        PolicyConfig {
            reminder_threshold: 10,
            reminder_cooldown: 10,
            warning: 0.70,
            critical: 0.85,
            emergency: 0.95,
            context_window: 200_000,
            restore_budget: 6_000,
            loop_mode: false,
            loop_agent_env: "RALPH_AGENT_ID".into(),
            block_stop_at_emergency: true,
            roles,
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
}
