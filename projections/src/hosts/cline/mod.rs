//! Cline CLI: what hookjournal knows of it (`CLINE`) and its registry entry (`MODULE`).

pub mod session_file;
pub mod wire;

use super::{ev, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Cline CLI's hooks, by the `hookName` its payloads carry; install writes the hook file each is
/// run from (`hook_file`). Not its PreCompact file: 3.0.65 maps it to no event and never runs it.
/// Timeouts are Cline's own (30 s for every hook); the registration's is not written anywhere.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("agent_start", K::SessionStart, 30),
    ev("agent_resume", K::SessionStart, 30),
    ev("prompt_submit", K::Prompt, 30),
    ev("tool_call", K::ToolPre, 30),
    ev("tool_result", K::ToolPost, 30),
    ev("agent_end", K::Stop, 30),
    ev("agent_abort", K::Other, 30),
    ev("agent_error", K::StopFailure, 30),
    ev("session_shutdown", K::SessionEnd, 30),
];

/// The file Cline CLI runs for one of its events (`HOOK_CONFIG_FILE_EVENT_MAP` of 3.0.65).
pub fn cline_hook_file(event: &str) -> Option<&'static str> {
    Some(match event {
        "agent_start" => "TaskStart",
        "agent_resume" => "TaskResume",
        "prompt_submit" => "UserPromptSubmit",
        "tool_call" => "PreToolUse",
        "tool_result" => "PostToolUse",
        "agent_end" => "TaskComplete",
        "agent_abort" => "TaskCancel",
        "agent_error" => "TaskError",
        "session_shutdown" => "SessionShutdown",
        _ => return None,
    })
}

/// Cline CLI (3.0.65 measured; `tests/fixtures/real-hosts/cline-3.0.65/FACTS.md`): one executable
/// per event, its payload on stdin, `{"cancel","contextModification","errorMessage"}` on stdout.
/// `contextModification` reaches the model after a tool (PreToolUse's and PostToolUse's go into
/// the next request; hookjournal answers at PostToolUse). Its run-start hooks are fire-and-forget
/// (their answer is dropped), no hook announces a compaction (the PreCompact file is never run),
/// and nothing can block its end or stop it at a compaction (see docs/hooks.md).
pub const CLINE: HostFacts = HostFacts {
    name: "cline",
    product: "Cline CLI",
    events: EVENTS,
    answers: &[(K::ToolPost, AnswerShape::Context)],
    context: ContextForm::Modification,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["CLINE_BUILD_ENV", "CLINE_CONNECTOR_CLI_LAUNCH"],
        measured: "Cline CLI 3.0.65 sets CLINE_BUILD_ENV and CLINE_CONNECTOR_CLI_LAUNCH for every \
                   hook process; the programs its run_commands tool runs get \
                   CLINE_CONNECTOR_CLI_LAUNCH without CLINE_BUILD_ENV",
    }),
    payload: PayloadFields {
        session_id: "sessionContext.rootSessionId",
        agent_id: Some("agent_id"),
        transcript_path: None,
        cwd: &["workspaceInfo.rootPath", "workspaceRoots"],
    },
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // Usage per response of the lead agent and the context, in
    // `~/.cline/data/sessions/<id>/<id>.messages.json` (a `spawn_agent` subagent's in
    // `<id>/<agent id>.messages.json` beside it), which no payload names: found from the
    // hook's environment as the CLI finds it, read whole at the run's end (every response is
    // there by then) and at shutdown: not after each tool, where parsing the whole growing file
    // would cost every tool call (the context for the pressure notice is the last run's).
    session_file: SessionFileFacts {
        format: SessionFileFormat::ClineMessages,
        read_at: &[K::Stop, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[
                ("CLINE_SESSION_DATA_DIR", ""),
                ("CLINE_DATA_DIR", "sessions"),
                ("CLINE_DIR", "data/sessions"),
                ("HOME", ".cline/data/sessions"),
            ],
            file: "{session}/{session}.messages.json",
            subagent_file: Some("{session}/{agent}.messages.json"),
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".clinerules",
        user_config_dir: ".cline",
        config_dir_env: Some("CLINE_DIR"),
        project_file: "hooks",
        local_file: None,
        user_file: "hooks",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::ScriptPerEvent,
        next_step: "start Cline here (`cline \"…\"`; it finds the hook files at each run); check \
                    with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`cline`).
    #[allow(non_upper_case_globals)]
    pub const Cline: Host = Host::Known("cline");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CLINE,
    wire: Wire::Own(wire::parse),
    install_help: "Cline CLI (one hook file per event in .clinerules/hooks/, or ~/.cline/hooks/ with --scope user)",
    cost_from: "its session's `messages.json` (found from `$HOME` or `$CLINE_DIR`)",
    tested: Some("3.0.65"),
    bench: Some(BenchTurn {
        label: "Cline CLI",
        what: "a Cline CLI tool turn, its environment",
        dir: "cline-3.0.65/payloads",
        files: BenchFiles::Prefix("0"),
        session: "/sessionContext/rootSessionId",
        replace: &[],
        env: &[
            ("CLINE_BUILD_ENV", "production"),
            ("CLINE_CONNECTOR_CLI_LAUNCH", "{}"),
        ],
    }),
    shipped: &[],
};
