//! Gemini CLI: what hookjournal knows of it (`GEMINI`) and its registry entry (`MODULE`).

pub mod chat;

use super::{ev, seen, tool, CONTEXT, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Gemini CLI's events (milliseconds). Not BeforeModel, AfterModel or BeforeToolSelection: they
/// fire on every model request (AfterModel on every streamed chunk), carry the whole
/// conversation, and the handler has nothing to record or answer there that the agent and tool
/// events do not give.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("BeforeAgent", K::Prompt, 30),
    ev("AfterAgent", K::Stop, 10),
    tool("BeforeTool", K::ToolPre),
    tool("AfterTool", K::ToolPost),
    ev("PreCompress", K::PreCompact, 30),
    ev("Notification", K::Notification, 10),
    seen("BeforeModel", K::Other),
    seen("AfterModel", K::Other),
    seen("BeforeToolSelection", K::Other),
];

/// Gemini CLI: context; no text at compaction, no blocked Stop. It ignores PreCompress's output
/// (0.61.0 does not read it) and honours `continue:false` at BeforeAgent, AfterTool and
/// AfterAgent: a loop agent is stopped there, after its compaction was found.
pub const GEMINI: HostFacts = HostFacts {
    name: "gemini",
    product: "Gemini CLI",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::Prompt, AnswerShape::StopAgent),
        (K::ToolPost, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::StopAgent),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("PreCompress"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: true,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        // Usage, context and the compressions that happened. PreCompress fires before every
        // model request, AfterTool too: a compression (written before the request that follows
        // it) is found at the next tool's end.
        format: SessionFileFormat::GeminiChat,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd, K::ToolPost],
        read_while_compacting: &[],
        main_agent_only: false,
        path_from_session: false,
        read_scale: 4,
        subagent_files: true,
        derived_path: None,
    },
    trust: Trust::TrustedFolder,
    install: Some(InstallFacts {
        config_dir: ".gemini",
        user_config_dir: ".gemini",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1000,
        named_handlers: true,
        format: HookFileFormat::Grouped,
        next_step: "Gemini CLI runs project hooks only in a trusted folder: trust this folder when \
                    it asks (or with /permissions; it is recorded in ~/.gemini/trustedFolders.json). \
                    In an untrusted folder, headless runs (`gemini -p`) included, no project hook \
                    runs. Then start Gemini CLI here (/hooks lists the hooks); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`gemini`).
    #[allow(non_upper_case_globals)]
    pub const Gemini: Host = Host::Known("gemini");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &GEMINI,
    wire: Wire::ClaudeShaped,
    install_help: "Gemini CLI",
    cost_from: "its chat file",
    tested: Some("0.61.0"),
    bench: None,
    shipped: &[],
};
