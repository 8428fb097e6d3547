//! OpenHands: what hookjournal knows of it (`OPENHANDS`) and its registry entry (`MODULE`).

pub mod base_state;
pub mod wire;

use super::{ev, tool, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// OpenHands' events: the six its `hooks.json` accepts. **Any other event key in that file (a
/// name it does not know, or one event spelled both ways) makes the whole file invalid, and
/// then OpenHands runs no hook at all** (a validation traceback, exit 0), so install registers
/// exactly these. Its timeouts are in seconds (default 60); its matcher is `*` for every tool.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    ev("Stop", K::Stop, 10),
    ev("SessionEnd", K::SessionEnd, 10),
];

/// OpenHands CLI (the Python `openhands` 1.16.0 measured, with openhands-sdk 1.21.0;
/// `tests/fixtures/real-hosts/openhands-1.16.0/FACTS.md`): a payload of its own (`wire`), hooks
/// in the first that exists of `<work dir>/.openhands/hooks.json` and `~/.openhands/hooks.json`
/// (never both), Claude Code's grouped format. It reads a **flat** answer only (`decision`,
/// `reason`, `additionalContext`, `continue`; `hookSpecificOutput` never): `additionalContext`
/// reaches the model at UserPromptSubmit only, appended to the user's message (so the task
/// reminder goes there); at SessionStart and PostToolUse it is dropped. A Stop `deny` makes the
/// agent go on and Stop fire again with nothing to tell it came back, so hookjournal never
/// blocks a Stop here. Its hook processes get `OPENHANDS_SESSION_ID`, `OPENHANDS_EVENT_TYPE` and
/// `OPENHANDS_PROJECT_DIR`, which the programs its terminal tool runs do not (a tmux server
/// with the CLI's own environment). Subagents (its `task` tool) fire no hook of the parent's.
/// Usage comes from the conversation's `base_state.json` (`base_state`): tokens and model per
/// response, priced by hookjournal.
pub const OPENHANDS: HostFacts = HostFacts {
    name: "openhands",
    product: "OpenHands",
    events: EVENTS,
    answers: &[(K::Prompt, AnswerShape::Context)],
    context: ContextForm::Flat,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &[
            "OPENHANDS_SESSION_ID",
            "OPENHANDS_EVENT_TYPE",
            "OPENHANDS_PROJECT_DIR",
        ],
        measured: "OpenHands 1.16.0 sets OPENHANDS_SESSION_ID, OPENHANDS_EVENT_TYPE and \
                   OPENHANDS_PROJECT_DIR for every hook process; its terminal tool's programs \
                   run in a tmux server with the CLI's own environment, without them",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["working_dir"],
    },
    // No compaction event: its condenser runs unannounced.
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // `conversations/<session id without dashes>/base_state.json` under
    // `$OPENHANDS_CONVERSATIONS_DIR`, `$OPENHANDS_PERSISTENCE_DIR/conversations` or
    // `~/.openhands/conversations`; complete at Stop and SessionEnd (0 tokens before). A
    // subagent's usage is in the parent's file (`task:…`), read there.
    session_file: SessionFileFacts {
        format: SessionFileFormat::OpenHandsState,
        read_at: &[K::Stop, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[
                ("OPENHANDS_CONVERSATIONS_DIR", ""),
                ("OPENHANDS_PERSISTENCE_DIR", "conversations"),
                ("HOME", ".openhands/conversations"),
            ],
            file: "{session_hex}/base_state.json",
            subagent_file: None,
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".openhands",
        user_config_dir: ".openhands",
        config_dir_env: None,
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::OnlyHooks,
        next_step: "start OpenHands here (it reads .openhands/hooks.json at each start, and then \
                    not ~/.openhands/hooks.json); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`openhands`).
    #[allow(non_upper_case_globals)]
    pub const OpenHands: Host = Host::Known("openhands");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &OPENHANDS,
    wire: Wire::Own(wire::parse),
    install_help: "OpenHands (.openhands/hooks.json, or ~/.openhands/hooks.json with --scope user; never both)",
    cost_from: "its conversation's `base_state.json` (found from `$HOME`)",
    tested: Some("1.16.0"),
    bench: Some(BenchTurn {
        label: "OpenHands",
        what: "an OpenHands tool turn, its environment",
        dir: "openhands-1.16.0",
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "SessionStart",
                "UserPromptSubmit",
                "PreToolUse-terminal",
                "PostToolUse-terminal",
                "PreToolUse-file_editor",
                "PostToolUse-file_editor",
            ],
        },
        session: "/session_id",
        replace: &[],
        env: &[
            ("OPENHANDS_SESSION_ID", "ec1af093-af86-4f58-a628-1b464ae9defc"),
            ("OPENHANDS_EVENT_TYPE", "PreToolUse"),
            ("OPENHANDS_PROJECT_DIR", "/home/dev/acme-api"),
        ],
    }),
    shipped: &[],
};
