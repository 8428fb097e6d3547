//! Amp (Sourcegraph's agent): what hookjournal knows of it (`AMP`) and its registry entry
//! (`MODULE`), from its plugin API as its CLI prints it (`amp plugins show-docs`, 0.0.1790142911-
//! g7618fb): **not run here** (every thread runs on Amp's backend, behind a sign-in).

pub mod wire;

use super::{ev, K};
use super::{HostModule, ShippedFile, Wire};
use crate::host::*;

/// Amp's plugin events (`PluginEventMap`), as its shim forwards them (`{"host":"amp",
/// "hook_event_name", "host_time", "cwd", "session_id", "event"}`; see `amp`). Not
/// `changes.prompt` (its Ship button's prompt, before the user sees it). Timeouts are the shim's
/// per-call budgets (a hung hookjournal is killed, and Amp goes on).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("session.start", K::SessionStart, 10),
    ev("agent.start", K::Prompt, 30),
    ev("tool.call", K::ToolPre, 10),
    ev("tool.result", K::ToolPost, 10),
    ev("agent.end", K::Stop, 10),
];

/// Amp (its plugin API; not run here): TypeScript plugins run by Bun, from `.amp/plugins/*.ts`
/// and `~/.config/amp/plugins/*.ts`, subscribing with `amp.on(name, handler)`; no shell hooks, so
/// `install` writes a shim plugin that forwards each event to `hookjournal hook --host amp`. The
/// thread is the session (`event.thread.id`). Context is taken at `agent.start` only, as a
/// message appended to the user's (`{message:{content, display:false}}`): the restore and the
/// task list ride on the first prompt of a thread (`session.start` takes no answer). `tool.call`
/// is always allowed; `tool.result` could rewrite the tool's output and `agent.end` start a new
/// turn: hookjournal does neither. No compaction event, no usage reach a plugin.
pub const AMP: HostFacts = HostFacts {
    name: "amp",
    product: "Amp",
    events: EVENTS,
    answers: &[(K::Prompt, AnswerShape::Context)],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: SessionFileFacts {
        read_at: &[],
        ..super::claude::TRANSCRIPT
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".amp",
        user_config_dir: ".config/amp",
        config_dir_env: None,
        project_file: "plugins/hookjournal.ts",
        local_file: None,
        user_file: "plugins/hookjournal.ts",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::ShimModule,
        next_step:
            "start Amp here (it loads .amp/plugins/ at its start, or run `plugins: reload`; \
                    not tried here); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`amp`).
    #[allow(non_upper_case_globals)]
    pub const Amp: Host = Host::Known("amp");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &AMP,
    wire: Wire::Own(wire::parse),
    install_help: "Amp (a plugin shim in .amp/plugins/, or ~/.config/amp/plugins/ with --scope \
                   user; from its plugin API, not run here)",
    cost_from: "none (no usage reaches its plugins)",
    tested: None,
    bench: None,
    shipped: &[ShippedFile {
        name: "hookjournal.ts",
        text: include_str!("hookjournal.ts"),
    }],
};
