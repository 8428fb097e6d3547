//! Claude Code: what hookjournal knows of it (`CLAUDE`) and its registry entry (`MODULE`).

use super::{ev, seen, tool, CONTEXT, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Claude Code's transcript, read at Stop, PreCompact and SessionEnd; subagents' at SubagentStop.
pub const TRANSCRIPT: SessionFileFacts = SessionFileFacts {
    format: SessionFileFormat::ClaudeTranscript,
    read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
    read_while_compacting: &[],
    main_agent_only: false,
    path_from_session: false,
    read_scale: 1,
    subagent_files: true,
    derived_path: None,
};

/// Claude Code's events. Never `WorktreeCreate` (its stdout must be a path) nor `MessageDisplay`
/// (fires per streamed chunk). SessionEnd shares a 1.5 s budget among all hooks: ours asks for 2
/// and finishes far inside it. Context-building events get 30 s (Claude's own UserPromptSubmit
/// default).
pub(crate) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 2),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    ev("PostToolBatch", K::Other, 10),
    tool("PermissionRequest", K::Other),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("StopFailure", K::StopFailure, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("TaskCreated", K::TaskCreated, 10),
    ev("TaskCompleted", K::TaskCompleted, 10),
    ev("TeammateIdle", K::Other, 10),
    ev("InstructionsLoaded", K::Other, 10),
    ev("ConfigChange", K::Other, 10),
    ev("CwdChanged", K::Other, 10),
    ev("FileChanged", K::Other, 10),
    // In 2.1.197 and 2.1.330 alike.
    ev("UserPromptExpansion", K::Other, 10),
    ev("PermissionDenied", K::Other, 10),
    ev("Setup", K::Other, 10),
    ev("Elicitation", K::Other, 10),
    ev("ElicitationResult", K::Other, 10),
    ev("WorktreeRemove", K::Other, 10),
    // New in 2.1.330. The pinned 2.1.197 does not send them and runs every other hook all the
    // same when settings name them (measured: tests/claude_code.rs registers this table).
    ev("PreModelSwitch", K::Other, 10),
    ev("PostModelSwitch", K::Other, 10),
    ev("DirectoryAdded", K::Other, 10),
    seen("WorktreeCreate", K::Other),
    seen("MessageDisplay", K::Other),
];

/// Claude Code: context; its summariser takes PreCompact's text; Stop can be blocked; a loop
/// agent is stopped at PreCompact (Claude Code 2.1.197 passes that JSON to the summariser as
/// text instead: the task release does not depend on it).
pub const CLAUDE: HostFacts = HostFacts {
    name: "claude",
    product: "Claude Code",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::CompactionText),
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
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".claude",
        user_config_dir: ".claude",
        config_dir_env: Some("CLAUDE_CONFIG_DIR"),
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Claude Code here (hooks load at session start; /hooks lists them); \
                    check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`claude`).
    #[allow(non_upper_case_globals)]
    pub const Claude: Host = Host::Known("claude");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CLAUDE,
    wire: Wire::ClaudeShaped,
    install_help: "Claude Code",
    cost_from: "its transcript",
    tested: Some("2.1.330 (and 2.1.197)"),
    bench: None,
    shipped: &[],
};
