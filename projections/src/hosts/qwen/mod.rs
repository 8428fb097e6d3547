//! Qwen Code: what hookjournal knows of it (`QWEN`) and its registry entry (`MODULE`).

pub mod chat;

use super::{ev, seen, tool, CONTEXT, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Qwen Code's events: the 22 names of 0.24.4's `HookEventName` (it skips any other name as
/// invalid), Claude Code's where they are Claude's, in its settings' shape, timeouts in seconds.
/// Never `MessageDisplay`: it fires again and again while a reply streams (its bundle: "called
/// repeatedly as the assistant's reply streams"). SessionEnd fires only at `/clear` headless;
/// PermissionRequest and PermissionDenied never in `-p` (a headless agent is not offered the
/// tools that ask); TodoCreated and TodoCompleted fire twice per todo (`phase` validation, then
/// postWrite).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    ev("UserPromptExpansion", K::Other, 10),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    ev("PostToolBatch", K::Other, 10),
    tool("PermissionRequest", K::Other),
    ev("PermissionDenied", K::Other, 10),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("StopFailure", K::StopFailure, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
    ev("SessionDelete", K::Other, 10),
    ev("TodoCreated", K::Other, 10),
    ev("TodoCompleted", K::Other, 10),
    ev("InstructionsLoaded", K::Other, 10),
    seen("MessageDisplay", K::Other),
];

/// Qwen Code (0.24.4 measured; `tests/fixtures/real-hosts/qwen-0.24.4/FACTS.md`): Claude Code's
/// event names and snake_case fields plus Gemini's top-level `timestamp`, hooks in
/// `.qwen/settings.json`. It reads Claude's nested context only (the flat one is ignored): at
/// SessionStart into the system prompt, with a prompt, after a tool, and at PreCompact into the
/// compression prompt ("Additional Instructions"); a blocked Stop goes on with the reason as the
/// prompt. It ignores `continue:false` (at PreCompact and after a tool alike, measured), so a loop
/// agent's task is released at a compaction but the agent is not stopped. Recognised by its hooks' environment, so a Qwen payload is never taken for Gemini's.
pub const QWEN: HostFacts = HostFacts {
    name: "qwen",
    product: "Qwen Code",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::Context),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: true,
    caller: Some(CallerEvidence {
        env: &["QWEN_CODE_CLI", "QWEN_PROJECT_DIR"],
        measured:
            "Qwen Code 0.24.4 sets QWEN_CODE_CLI and QWEN_PROJECT_DIR for every hook process; \
                   the programs its shell tool runs get QWEN_CODE_CLI (and QWEN_CODE_SESSION_ID) \
                   without QWEN_PROJECT_DIR",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // PreCompact fires only for a compression that runs (manual `/compress` or auto), then
    // PostCompact and SessionStart `compact`: its answer replaces the startup one in the system
    // prompt from the second request after the compression on (measured: tests/qwen_code.rs).
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // Usage per response of the main agent and the context (a subagent's requests are not
    // written there; its SubagentStop names the parent's file). The turn's last response is
    // written behind the Stop hook: `follow-session` reads it once it is there.
    session_file: SessionFileFacts {
        format: SessionFileFormat::QwenChat,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    // Folder trust is off by default: project hooks load in any folder. Where a user turned it
    // on (`security.folderTrust.enabled`), an untrusted folder's hooks are skipped silently.
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".qwen",
        user_config_dir: ".qwen",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Qwen Code here (it reads .qwen/settings.json of the folder it starts \
                    in, not of the repository's root); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`qwen`).
    #[allow(non_upper_case_globals)]
    pub const Qwen: Host = Host::Known("qwen");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &QWEN,
    wire: Wire::ClaudeShaped,
    install_help: "Qwen Code (.qwen/settings.json, or ~/.qwen/settings.json with --scope user)",
    cost_from: "its chat file",
    tested: Some("0.24.4"),
    bench: Some(BenchTurn {
        label: "Qwen Code",
        what: "a Qwen Code tool turn, its environment",
        dir: "qwen-0.24.4",
        // The empty-prompt UserPromptSubmit after its tool batch included; its Stop left out: it
        // starts the detached session-file follower.
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "SessionStart-startup",
                "UserPromptSubmit",
                "PreToolUse-run_shell_command",
                "PostToolUse-run_shell_command",
                "PostToolBatch",
                "UserPromptSubmit-empty",
                "PreToolUse-read_file",
                "PostToolUse-read_file",
            ],
        },
        session: "/session_id",
        replace: &[("/home/dev/.qwen", "/nonexistent/bench")],
        env: &[
            ("QWEN_CODE_CLI", "/nonexistent/bench/cli-entry.js"),
            ("QWEN_PROJECT_DIR", "/nonexistent/bench"),
        ],
    }),
    shipped: &[],
};
