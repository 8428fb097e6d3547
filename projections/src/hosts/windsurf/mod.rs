//! Windsurf's Cascade: what hookjournal knows of it (`WINDSURF`) and its registry entry
//! (`MODULE`), from its public hooks documentation only: **not run here** (an IDE, no headless
//! client a package registry ships).

pub mod wire;

use super::{ev, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Cascade's hook events, as its documentation names them (`agent_action_name`): before and
/// after a file read, a file write, a terminal command and an MCP tool call, before a prompt,
/// after a response (asynchronously; `_with_transcript` with the conversation), after a worktree
/// is set up. Its `hooks.json` entries take no timeout.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("pre_user_prompt", K::Prompt, 30),
    ev("pre_read_code", K::ToolPre, 10),
    ev("post_read_code", K::ToolPost, 10),
    ev("pre_write_code", K::ToolPre, 10),
    ev("post_write_code", K::ToolPost, 10),
    ev("pre_run_command", K::ToolPre, 10),
    ev("post_run_command", K::ToolPost, 10),
    ev("pre_mcp_tool_use", K::ToolPre, 10),
    ev("post_mcp_tool_use", K::ToolPost, 10),
    ev("post_cascade_response", K::Stop, 10),
    ev("post_cascade_response_with_transcript", K::Other, 10),
    ev("post_setup_worktree", K::Other, 10),
];

/// Windsurf's Cascade (its documentation, "Cascade Hooks"; not run here): hooks in
/// `.windsurf/hooks.json` of the workspace, `~/.codeium/windsurf/hooks.json` and a system file,
/// merged, `{"hooks":{EVENT:[{"command":…,"show_output":…}]}}`. A payload of its own (`wire`):
/// `agent_action_name` (the event), `trajectory_id` (the conversation), `execution_id`,
/// `timestamp`, and the action's `tool_info` (`command_line` and `cwd`, `file_path` and `edits`,
/// `mcp_server_name`/`mcp_tool_name`/`mcp_tool_arguments`, `user_prompt`, `response`). A
/// pre-hook blocks with exit code 2; stdout is shown to the user (`show_output`), never to the
/// model: nothing is answered. No usage reaches its hooks.
pub const WINDSURF: HostFacts = HostFacts {
    name: "windsurf",
    product: "Windsurf",
    events: EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "trajectory_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["tool_info.cwd"],
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
    trust: Trust::Unverified,
    install: Some(InstallFacts {
        config_dir: ".windsurf",
        user_config_dir: ".codeium/windsurf",
        config_dir_env: None,
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::WindsurfFlat,
        next_step: "open the workspace in Windsurf (Cascade reads .windsurf/hooks.json of the \
                    workspace root; not tried here); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`windsurf`).
    #[allow(non_upper_case_globals)]
    pub const Windsurf: Host = Host::Known("windsurf");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &WINDSURF,
    wire: Wire::Own(wire::parse),
    install_help: "Windsurf's Cascade (.windsurf/hooks.json, or ~/.codeium/windsurf/hooks.json \
                   with --scope user; from its documentation, not run here)",
    cost_from: "none (no usage reaches its hooks)",
    tested: None,
    bench: None,
    shipped: &[],
};
