//! The pi coding agent: what hookjournal knows of it (`PI`) and its registry entry (`MODULE`).

pub mod wire;

use super::{ev, K};
use super::{BenchFiles, BenchTurn, HostModule, ShippedFile, Wire};
use crate::host::*;

/// pi's extension events, as its shim extension forwards them (`{"host":"pi",
/// "hook_event_name", "host_time", "cwd", "session_id", "session_file", "context_usage",
/// "event"}`; see `pi`). Not the chatty ones: `context` and `before_provider_request` (every
/// model request), `message_*` and `tool_execution_*` (every streamed message and tool state),
/// `turn_start`, `agent_start`, `input` (the prompt again, before its expansion). Timeouts are the
/// shim's per-call budgets (a hung hookjournal is killed, and pi goes on).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("session_start", K::SessionStart, 10),
    ev("before_agent_start", K::Prompt, 30),
    ev("tool_call", K::ToolPre, 10),
    ev("tool_result", K::ToolPost, 10),
    ev("turn_end", K::Other, 10),
    ev("agent_end", K::Stop, 10),
    ev("session_before_compact", K::PreCompact, 30),
    ev("session_compact", K::PostCompact, 10),
    ev("session_shutdown", K::SessionEnd, 10),
];

/// pi (0.73.1 measured; `tests/fixtures/real-hosts/pi-0.73.1/FACTS.md`): in-process extensions,
/// no shell hooks, so `install` writes a shim extension that forwards each event to `hookjournal
/// hook --host pi` and applies the answer as the handler's return value: context becomes a
/// message of the prompt (`before_agent_start`'s `message`, stored in the session and sent to
/// the model) or is appended to the tool's result (`tool_result`'s `content`). Its session and
/// compaction events take no context (`session_before_compact` can only cancel the compaction
/// or replace its summary whole): a restore rides on the next prompt, which pi starts right
/// after it compacts. `agent_end` cannot be blocked, and nothing stops a loop agent.
pub const PI: HostFacts = HostFacts {
    name: "pi",
    product: "pi",
    events: EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::ToolPost, AnswerShape::Context),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    // `PI_CODING_AGENT=true` is set for pi's whole process, so every tool's process has it too.
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("session_before_compact"),
        after: Some("session_compact"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // No file is read: usage arrives with `turn_end`; the session file
    // (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`) is named in every payload.
    session_file: super::claude::TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".pi",
        user_config_dir: ".pi/agent",
        config_dir_env: Some("PI_CODING_AGENT_DIR"),
        project_file: "extensions/hookjournal.ts",
        local_file: None,
        user_file: "extensions/hookjournal.ts",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::ShimModule,
        next_step: "start pi here (`pi`, or `pi -p …`; it loads extensions at its start); check \
                    with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`pi`).
    #[allow(non_upper_case_globals)]
    pub const Pi: Host = Host::Known("pi");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &PI,
    wire: Wire::Own(wire::parse),
    install_help:
        "pi (an extension shim in .pi/extensions/, or ~/.pi/agent/extensions/ with --scope user)",
    cost_from: "each `turn_end`",
    tested: Some("0.73.1"),
    bench: Some(BenchTurn {
        label: "pi",
        what: "what its shim forwarded of a pi tool turn",
        dir: "pi-0.73.1/shim",
        files: BenchFiles::Prefix("0"),
        session: "/session_id",
        replace: &[],
        env: &[],
    }),
    shipped: &[ShippedFile {
        name: "hookjournal.ts",
        text: include_str!("hookjournal.ts"),
    }],
};
