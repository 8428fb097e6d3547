//! GitHub Copilot CLI: what hookjournal knows of it (`COPILOT`) and its registry entry (`MODULE`).

pub mod session_file;

use super::{ev, seen, unnamed, CONTEXT, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// GitHub Copilot CLI's events as its camelCase registrations name them (measured on 1.0.102,
/// `copilot -p`, all 15 fire): their payloads name no event, so install puts the name on the
/// command line (`hook --event NAME`), except `permissionRequest` (`hookName`) and
/// `notification` (`hook_event_name`). Its PascalCase registrations (and `.claude/settings.json`,
/// which it runs too) send Claude Code's names, read from Claude's table, plus the two here.
/// Timeouts in seconds (`timeoutSec`).
pub(super) const EVENTS: &[HostEvent] = &[
    unnamed("sessionStart", K::SessionStart, 30),
    unnamed("sessionEnd", K::SessionEnd, 10),
    unnamed("userPromptSubmitted", K::Prompt, 30),
    unnamed("userPromptTransformed", K::Other, 10),
    unnamed("preToolUse", K::ToolPre, 10),
    ev("permissionRequest", K::Other, 10),
    unnamed("postToolUse", K::ToolPost, 10),
    unnamed("postToolUseFailure", K::ToolFailure, 10),
    unnamed("preCompact", K::PreCompact, 30),
    unnamed("agentStop", K::Stop, 10),
    unnamed("subagentStart", K::SubagentStart, 10),
    unnamed("subagentStop", K::SubagentStop, 10),
    unnamed("errorOccurred", K::StopFailure, 10),
    ev("notification", K::Notification, 10),
    unnamed("preMcpToolCall", K::Other, 10),
    seen("ErrorOccurred", K::StopFailure),
    seen("PreMcpToolCall", K::Other),
];

/// GitHub Copilot CLI (measured on 1.0.102, `tests/copilot_cli.rs`): context as a flat
/// `additionalContext` at sessionStart (its own user message), userPromptSubmitted (appended
/// to the prompt) and postToolUse (appended to the tool result); a blocked agentStop starts a
/// new turn with the reason. Neither `continue:false` (prompt, tool, preCompact) nor any
/// answer to preCompact changes anything, and no hook follows a compaction: the restore goes
/// with the next prompt or tool result after its session file shows the compaction. A notification is never answered: its context starts
/// a new turn, and in `-p` mode every turn notifies again.
pub const COPILOT: HostFacts = HostFacts {
    name: "copilot",
    product: "Copilot CLI",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Flat,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["COPILOT_CLI", "COPILOT_PROJECT_DIR"],
        measured: "Copilot CLI 1.0.102 sets COPILOT_CLI=1 and COPILOT_PROJECT_DIR for every hook \
                   process (.github/hooks, ~/.copilot/hooks, .claude/settings.json); the programs \
                   its shell tool runs get COPILOT_CLI without COPILOT_PROJECT_DIR",
    }),
    payload: PayloadFields {
        session_id: "sessionId",
        agent_id: Some("agentId"),
        transcript_path: Some("transcriptPath"),
        cwd: &["cwd"],
    },
    // Its compaction runs while the turn goes on and ends in `session.compaction_complete` in
    // its session file, read at agentStop, preCompact, sessionEnd, and at prompts and tool
    // results while one announced is not there yet: counted at preCompact, or there when no
    // preCompact announced it. The restore goes with the next prompt or tool result after
    // preCompact: it lands after the compaction's summary (measured).
    compaction: CompactionFacts {
        before: Some("preCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        // Usage per model call, the context and the compactions (its sessionEnd names no file:
        // the session's own). A subagent's agentStop names its parent's file. A compaction ends
        // after its preCompact while the turn goes on: until the file shows it, prompts and tool
        // results read the file too (to restore after it).
        format: SessionFileFormat::CopilotEvents,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[K::Prompt, K::ToolPost],
        main_agent_only: true,
        path_from_session: true,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    trust: Trust::TrustedFolder,
    install: Some(InstallFacts {
        config_dir: ".github",
        user_config_dir: ".copilot",
        config_dir_env: Some("COPILOT_HOME"),
        project_file: "hooks/hookjournal.json",
        local_file: None,
        user_file: "hooks/hookjournal.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::CopilotFlat,
        next_step: "start Copilot CLI here (`copilot`, or `copilot -p …`); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`copilot`).
    #[allow(non_upper_case_globals)]
    pub const Copilot: Host = Host::Known("copilot");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &COPILOT,
    wire: Wire::ClaudeShaped,
    install_help: "GitHub Copilot CLI (.github/hooks/hookjournal.json, or ~/.copilot/hooks/ with --scope user)",
    cost_from: "its session's `events.jsonl`",
    tested: Some("1.0.102"),
    bench: Some(BenchTurn {
        label: "Copilot CLI",
        what: "a Copilot CLI tool turn, --event, its environment",
        dir: "copilot-1.0.102",
        // Its sessionEnd is left out: it starts the detached session-file follower.
        files: BenchFiles::Listed {
            pattern: "camel.{}.json",
            stems: &[
                "sessionStart-new",
                "userPromptSubmitted",
                "userPromptTransformed",
                "preToolUse-bash",
                "permissionRequest-bash",
                "postToolUse-bash",
                "preToolUse-view",
                "postToolUse-view",
                "agentStop",
            ],
        },
        session: "/sessionId",
        replace: &[("/home/dev/.copilot", "/nonexistent/bench")],
        env: &[
            ("COPILOT_CLI", "1"),
            ("COPILOT_PROJECT_DIR", "/nonexistent/bench"),
        ],
    }),
    shipped: &[],
};
