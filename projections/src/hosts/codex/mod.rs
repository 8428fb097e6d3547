//! Codex CLI: what hookjournal knows of it (`CODEX`) and its registry entry (`MODULE`).

pub mod rollout;

use super::{ev, tool, CONTEXT, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Codex CLI's events (same shape as Claude's, seconds; SessionEnd has a 1 s budget of its own).
/// Older Codex versions ignore event names they do not know, so SessionEnd is safe to list.
/// `Interrupt` fires after a hook answered `continue:false`.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PermissionRequest", K::Other),
    tool("PostToolUse", K::ToolPost),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("Stop", K::Stop, 10),
    ev("Interrupt", K::Other, 10),
];

/// Codex CLI: context; Stop can be blocked (JSON or nothing, never plain text); it honours
/// `continue:false` (then fires `Interrupt`).
pub const CODEX: HostFacts = HostFacts {
    name: "codex",
    product: "Codex CLI",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // Measured on 0.169.0 (`tests/codex_cli.rs`): PreCompact, the summary request, PostCompact,
    // then SessionStart `source: "compact"` whose context reaches the next request.
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: true,
    },
    session_file: SessionFileFacts {
        // Usage per request and the context; a subagent's own events name its own rollout,
        // whose usage is not the session's context.
        format: SessionFileFormat::CodexRollout,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: true,
        derived_path: None,
    },
    trust: Trust::TrustedHooks,
    install: Some(InstallFacts {
        config_dir: ".codex",
        user_config_dir: ".codex",
        config_dir_env: Some("CODEX_HOME"),
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Codex here (the hooks are trusted in its config.toml as /hooks would \
                    trust them; a project's hooks also need the project trusted); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`codex`).
    #[allow(non_upper_case_globals)]
    pub const Codex: Host = Host::Known("codex");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CODEX,
    wire: Wire::ClaudeShaped,
    install_help: "Codex CLI",
    cost_from: "its rollout file",
    tested: Some("0.169.0"),
    bench: None,
    shipped: &[],
};
