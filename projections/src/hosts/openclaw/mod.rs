//! OpenClaw: what hookjournal knows of it (`OPENCLAW`) and its registry entry (`MODULE`).

pub mod wire;

use super::{ev, seen, K};
use super::{HostModule, ShippedFile, Wire};
use crate::host::*;

/// OpenClaw's plugin hooks, as its shim plugin forwards them (`{"hook_event_name", "host_time",
/// "event", "ctx"}`; see `openclaw`). Not `llm_input` (the whole prompt and history, every model
/// call), nor message, gateway or subagent hooks. `before_message_write` and
/// `tool_result_persist` carry only the `sessionKey` (resolved to the session at ingestion).
/// Timeouts are the shim's per-handler budgets; `before_tool_call` fails closed on a timeout.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("session_start", K::SessionStart, 30),
    ev("session_end", K::SessionEnd, 10),
    ev("before_reset", K::Other, 10),
    ev("before_prompt_build", K::Prompt, 30),
    ev("before_agent_run", K::Other, 10),
    ev("before_tool_call", K::ToolPre, 10),
    ev("after_tool_call", K::ToolPost, 10),
    ev("tool_result_persist", K::Other, 10),
    ev("before_message_write", K::Other, 10),
    ev("before_agent_finalize", K::Stop, 10),
    ev("agent_end", K::Other, 10),
    ev("llm_output", K::Other, 10),
    ev("before_compaction", K::PreCompact, 30),
    ev("after_compaction", K::PostCompact, 10),
    seen("llm_input", K::Other),
];

/// OpenClaw: its session and compaction hooks are observe-only, so what Claude Code gets at
/// SessionStart (restore, startup tasks) reaches the model at the next `before_prompt_build`
/// (`prependContext`), with the pressure notice and task reminders; an emergency Stop is a
/// `before_agent_finalize` revision. Nothing can stop it at a compaction (see docs/hooks.md).
pub const OPENCLAW: HostFacts = HostFacts {
    name: "openclaw",
    product: "OpenClaw",
    events: EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::Stop, AnswerShape::BlockStop),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "ctx.sessionId",
        agent_id: None,
        transcript_path: None,
        cwd: &["ctx.workspaceDir", "event.cwd"],
    },
    compaction: CompactionFacts {
        before: Some("before_compaction"),
        after: Some("after_compaction"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: super::claude::TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".openclaw",
        user_config_dir: ".openclaw",
        config_dir_env: Some("OPENCLAW_STATE_DIR"),
        project_file: "openclaw.json",
        local_file: None,
        user_file: "openclaw.json",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::PluginDir,
        next_step: "restart the OpenClaw gateway (`openclaw gateway run`) so it loads the \
                    hookjournal plugin; check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`openclaw`).
    #[allow(non_upper_case_globals)]
    pub const OpenClaw: Host = Host::Known("openclaw");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &OPENCLAW,
    wire: Wire::Own(wire::parse),
    install_help: "OpenClaw (a plugin shim in its extensions, enabled in its openclaw.json)",
    cost_from: "its `llm_output` hook",
    tested: Some("2026.9.6"),
    bench: None,
    shipped: &[
        ShippedFile {
            name: "index.js",
            text: include_str!("plugin/index.js"),
        },
        ShippedFile {
            name: "package.json",
            text: include_str!("plugin/package.json"),
        },
        ShippedFile {
            name: "openclaw.plugin.json",
            text: include_str!("plugin/openclaw.plugin.json"),
        },
    ],
};
