//! Factory Droid: what hookjournal knows of it (`DROID`) and its registry entry (`MODULE`).

pub mod session_file;

use super::{ev, tool, CONTEXT, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Factory Droid's events: the 9 names of 0.225's hook schema, Claude Code's all of them, in its
/// settings' shape, timeouts in seconds (default 60). Measured on 0.225.2 (`droid exec`):
/// UserPromptSubmit fires only where a prompt is submitted through its JSON-RPC session
/// (`--input-format stream-jsonrpc`, what its SDK and IDE clients use), not for `droid exec
/// PROMPT`; PostToolUse not for a tool that failed; PreCompact only for a compaction asked for
/// (`droid.compact_session`, `/compress`), none for one its token threshold starts.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
];

/// Factory Droid (`@factory/cli` 0.225.1, whose binary package is 0.225.2, measured;
/// `tests/fixtures/real-hosts/droid-0.225.1/FACTS.md`): Claude Code's event names, payloads and
/// nested answers, hooks in `.factory/settings.json`. It reads the nested context at
/// SessionStart, with a prompt and after a tool (each reaches the next model request), and a
/// blocked Stop goes on with the reason; context at PreCompact reaches nothing. `continue:false`
/// after a tool ends the turn (measured), so a loop agent whose compaction was announced or found
/// is stopped at its next tool result. No hook follows a compaction: the restore goes with the
/// next prompt or tool result after PreCompact, or after its session file shows a compaction its
/// threshold started. Told from Claude Code by its hooks' environment.
pub const DROID: HostFacts = HostFacts {
    name: "droid",
    product: "Factory Droid",
    events: EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::ToolPost, AnswerShape::StopAgent),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"],
        measured: "Factory Droid 0.225.2 sets DROID_PROJECT_DIR and FACTORY_PROJECT_DIR (and \
                   CLAUDE_PROJECT_DIR, proving nothing) for every hook process; the programs its \
                   Execute tool runs get neither",
    }),
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    // A compaction asked for: SessionStart `resume`, PreCompact (`trigger` says `auto` unless
    // instructions were given), the summary request; the session goes on under the same id. One
    // its threshold starts fires nothing and shows as a `compaction_state` line in the session
    // file (a compaction asked for writes its line in a new session file, not this one).
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: true,
        before_can_cancel: false,
    },
    // Its compactions and the session's token totals (summary requests included), read at the
    // end of a turn, before a compaction, at the session's end and after each tool (a threshold
    // compaction can happen mid-turn, while a tool runs: the restore then goes with the first
    // tool result after its line is written).
    session_file: SessionFileFacts {
        format: SessionFileFormat::DroidSession,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd, K::ToolPost],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    // Project hooks load with no trust step (measured in a fresh home).
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".factory",
        user_config_dir: ".factory",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start Droid here (`droid`, or `droid exec …`; it reads .factory/settings.json \
                    at its start); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`droid`).
    #[allow(non_upper_case_globals)]
    pub const Droid: Host = Host::Known("droid");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &DROID,
    wire: Wire::ClaudeShaped,
    install_help:
        "Factory Droid (.factory/settings.json, or ~/.factory/settings.json with --scope user)",
    cost_from: "its session's running totals",
    tested: Some("0.225.2"),
    bench: Some(BenchTurn {
        label: "Factory Droid",
        what: "a Factory Droid tool turn, its session files, its environment",
        dir: "droid-0.225.1",
        files: BenchFiles::Listed {
            pattern: "{}.json",
            stems: &[
                "SessionStart-startup",
                "UserPromptSubmit",
                "PreToolUse-Read",
                "PostToolUse-Read",
                "PreToolUse-Create",
                "PostToolUse-Create",
                "Stop",
            ],
        },
        session: "/session_id",
        // `transcript_path` names the fixture's real session files, so each PostToolUse and
        // Stop reads them as Droid's hooks do.
        replace: &[
            (
                "/home/dev/.factory/sessions/-home-dev-acme-api/__SID__",
                "{dir}/sessions/{sid}",
            ),
            ("/home/dev/acme-api", "/nonexistent/bench"),
        ],
        env: &[
            ("DROID_PROJECT_DIR", "/nonexistent/bench"),
            ("FACTORY_PROJECT_DIR", "/nonexistent/bench"),
        ],
    }),
    shipped: &[],
};
