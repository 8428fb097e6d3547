//! Qoder CLI: what hookjournal knows of it (`QODER`) and its registry entry (`MODULE`).

use super::{ev, seen, tool, CONTEXT, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Qoder CLI's events: the 27 names of 1.1.52's `HookEvent` enum, every one Claude Code's, in
/// Claude's nested settings shape, timeouts in seconds ("Hook timed out after Ns"). Never
/// `WorktreeCreate` (Claude Code's, whose stdout must be a path). SessionEnd fires at the end of
/// every `-p` run (reason `other`); Notification, the subagent, compaction and permission events
/// were not seen headless (a subagent cannot start without Qoder's model catalog).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    tool("PermissionRequest", K::Other),
    ev("PermissionDenied", K::Other, 10),
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
    ev("Setup", K::Other, 10),
    ev("Elicitation", K::Other, 10),
    ev("ElicitationResult", K::Other, 10),
    ev("WorktreeRemove", K::Other, 10),
    seen("WorktreeCreate", K::Other),
];

/// Qoder CLI (1.1.52 measured, driven by its hidden `--fake-responses` model script:
/// `tests/fixtures/real-hosts/qodercli-1.1.52/FACTS.md`): a Claude Code descendant — Claude's
/// event names, payload fields and nested answers — whose hooks are in `.qoder/settings.json`,
/// `.qoder/settings.local.json` and `~/.qoder/settings.json` (`$QODER_CONFIG_DIR`), never in
/// `.claude/`. Its hook processes get `CLAUDE_PROJECT_DIR` beside its own `QODER_PROJECT_DIR`,
/// `QODER_HOOK_SOURCE` and `QODER_HOOK_VERSION`: the last two tell it from Claude Code (the
/// programs its Bash tool runs get `QODER_CLI` and `QODER_PID`, not those). Context reaches its
/// model as a `<system-reminder>` user block at SessionStart and UserPromptSubmit, appended to the
/// tool result after a tool; the flat form is ignored; a blocked Stop goes on with the reason as a
/// user message. Its PreCompact schema takes `additionalContext`, never seen to reach a summary
/// (no compaction runs headless with the scripted model): nothing is answered there. Its
/// transcript is Claude Code's format; the scripted model writes no usage into it.
pub const QODER: HostFacts = HostFacts {
    name: "qoder",
    product: "Qoder CLI",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["QODER_HOOK_SOURCE", "QODER_HOOK_VERSION"],
        measured: "Qoder CLI 1.1.52 sets QODER_HOOK_SOURCE=cli, QODER_HOOK_VERSION, \
                   QODER_PROJECT_DIR and CLAUDE_PROJECT_DIR for every hook process; the programs \
                   its Bash tool runs get QODER_CLI and QODER_PID, neither of the two",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: Some("agent_id"),
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // From its bundle: PreCompact (`trigger`, `custom_instructions`), PostCompact, then
    // SessionStart `compact`.
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: Some("compact"),
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // `~/.qoder/projects/<cwd, non-alphanumerics as "-">/<session>.jsonl`, named by every
    // payload: Claude Code's transcript format.
    session_file: super::claude::TRANSCRIPT,
    // Project hooks fired in a fresh home, nothing trusted.
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".qoder",
        user_config_dir: ".qoder",
        config_dir_env: Some("QODER_CONFIG_DIR"),
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Qoder CLI here (it reads .qoder/settings.json and settings.local.json \
                    of the folder it starts in; .claude/settings.json it ignores); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`qoder`).
    #[allow(non_upper_case_globals)]
    pub const Qoder: Host = Host::Known("qoder");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &QODER,
    wire: Wire::ClaudeShaped,
    install_help: "Qoder CLI (.qoder/settings.json, settings.local.json with --scope local, \
                   ~/.qoder/settings.json with --scope user)",
    cost_from: "its transcript (its scripted model, the only one runnable here, writes no usage)",
    tested: Some("1.1.52 (scripted model)"),
    bench: Some(BenchTurn {
        label: "Qoder CLI",
        what: "a Qoder CLI tool turn, its environment",
        dir: "qodercli-1.1.52",
        // Its Stop left out: it reads the transcript.
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "SessionStart-startup",
                "UserPromptSubmit",
                "PreToolUse-Bash",
                "PostToolUse-Bash",
                "PreToolUse-Read",
                "PostToolUse-Read",
            ],
        },
        session: "/session_id",
        replace: &[("/home/dev/.qoder", "/nonexistent/bench")],
        env: &[
            ("QODER_HOOK_SOURCE", "cli"),
            ("QODER_HOOK_VERSION", "1.1.52"),
            ("QODER_PROJECT_DIR", "/nonexistent/bench"),
            ("CLAUDE_PROJECT_DIR", "/nonexistent/bench"),
        ],
    }),
    shipped: &[],
};
