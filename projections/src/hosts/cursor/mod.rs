//! Cursor: what hookjournal knows of it (`CURSOR`) and its registry entry (`MODULE`).

use super::{ev, implied, seen, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Cursor's events (camelCase, seconds). Cursor ignores a whole `.cursor/hooks.json` that names
/// one event it does not know, so install registers only names its hooks documentation lists
/// (the 20 of `cursor.com/docs/hooks`): the generic tool events, not the shell, file and MCP
/// ones besides them (each tool call would be counted twice), nor Tab or thought events.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("sessionStart", K::SessionStart, 30),
    ev("sessionEnd", K::SessionEnd, 10),
    ev("beforeSubmitPrompt", K::Prompt, 30),
    ev("preToolUse", K::ToolPre, 10),
    ev("postToolUse", K::ToolPost, 10),
    ev("postToolUseFailure", K::ToolFailure, 10),
    ev("subagentStart", K::SubagentStart, 10),
    ev("subagentStop", K::SubagentStop, 10),
    ev("preCompact", K::PreCompact, 30),
    ev("stop", K::Stop, 10),
    implied("beforeShellExecution", K::ToolPre, ImpliedTool::Shell),
    implied("afterShellExecution", K::ToolPost, ImpliedTool::Shell),
    implied("afterFileEdit", K::ToolPost, ImpliedTool::FileEdit),
    implied("beforeReadFile", K::ToolPre, ImpliedTool::FileRead),
    seen("afterAgentResponse", K::Other),
    seen("afterAgentThought", K::Other),
    seen("beforeMCPExecution", K::Other),
    seen("afterMCPExecution", K::Other),
];

/// Cursor: recorded, never answered (hookjournal gives it no context). A handler registered
/// for Claude Code that Cursor runs (it loads `.claude/settings*.json` when third-party hooks
/// are on) is told apart by `CURSOR_VERSION` (Cursor's hooks documentation; not measured here).
pub const CURSOR: HostFacts = HostFacts {
    name: "cursor",
    product: "Cursor",
    events: EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["CURSOR_VERSION"],
        measured: "Cursor's hooks documentation (every hook process gets CURSOR_VERSION); not measured here",
    }),
    payload: PayloadFields {
        session_id: "conversation_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd", "workspace_roots"],
    },
    compaction: CompactionFacts {
        before: Some("preCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: super::claude::TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".cursor",
        user_config_dir: ".cursor",
        config_dir_env: None,
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::CursorFlat,
        next_step: "start a new Cursor agent chat here (Cursor reads .cursor/hooks.json for each \
                    session; its Hooks settings list them); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`cursor`).
    #[allow(non_upper_case_globals)]
    pub const Cursor: Host = Host::Known("cursor");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CURSOR,
    wire: Wire::ClaudeShaped,
    install_help: "Cursor (.cursor/hooks.json)",
    cost_from: "none (no usage reaches its hooks)",
    tested: None,
    bench: None,
    shipped: &[],
};
