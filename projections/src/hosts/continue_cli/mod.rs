//! Continue's CLI (`cn`): what hookjournal knows of it (`CONTINUE`) and its registry entry
//! (`MODULE`). 1.5.47 loads hooks and fires none.

use super::{ev, seen, tool, K};
use super::{HostModule, Wire};
use crate::host::*;

/// The 17 event names cn 1.5.47's hook loader knows (Claude Code's), in Claude's nested shape,
/// timeouts in seconds (`timeout * 1e3` in its runner). Never `WorktreeCreate` (Claude Code's,
/// whose stdout must be a path).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    tool("PermissionRequest", K::Other),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("ConfigChange", K::Other, 10),
    ev("TeammateIdle", K::Other, 10),
    ev("TaskCompleted", K::TaskCompleted, 10),
    ev("WorktreeRemove", K::Other, 10),
    seen("WorktreeCreate", K::Other),
];

/// Continue's CLI (`@continuedev/cli` 1.5.47 run here against a loopback model;
/// `tests/fixtures/real-hosts/continue-1.5.47/FACTS.md`): it loads Claude Code's nested `hooks`
/// from `~/.claude/settings.json`, `~/.continue/settings.json` (`$CONTINUE_GLOBAL_DIR`),
/// `.claude/settings.json`, `.continue/settings.json` and both `settings.local.json`, merged, and
/// **fires none**: nothing in its bundle calls its `fireEvent`, and the module that builds the
/// payloads is not in it (1.5.45 the same). Its (unreached) runner gives a hook
/// `CLAUDE_PROJECT_DIR` and `CONTINUE_PROJECT_DIR` (the cwd), the second set nowhere else (its
/// tools' processes get cn's environment): that names it. Nothing is answered until a release
/// runs its hooks and what it reads of an answer is measured.
pub const CONTINUE: HostFacts = HostFacts {
    name: "continue",
    product: "Continue CLI",
    events: EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["CONTINUE_PROJECT_DIR"],
        measured: "Continue's cn 1.5.47 sets CONTINUE_PROJECT_DIR (with CLAUDE_PROJECT_DIR) in \
                   its hook runner only (its bundle; the runner is never reached in 1.5.47)",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        // Its runner would send `transcript_path: ""`; its session file is its own JSON
        // (`~/.continue/sessions/<id>.json`), not read.
        transcript_path: None,
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        read_at: &[],
        ..super::claude::TRANSCRIPT
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".continue",
        user_config_dir: ".continue",
        config_dir_env: Some("CONTINUE_GLOBAL_DIR"),
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "cn 1.5.47 loads these hooks and runs none: nothing is recorded until a \
                    release of Continue's CLI fires them (it also runs .claude/settings.json's: \
                    install for one of the two); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`continue`).
    #[allow(non_upper_case_globals)]
    pub const Continue: Host = Host::Known("continue");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CONTINUE,
    wire: Wire::ClaudeShaped,
    install_help: "Continue's CLI, cn (.continue/settings.json; 1.5.47 loads hooks and fires none)",
    cost_from: "none: cn 1.5.47 loads its hooks and fires none",
    tested: None,
    bench: None,
    shipped: &[],
};
