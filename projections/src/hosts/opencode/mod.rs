//! OpenCode: what hookjournal knows of it (`OPENCODE`) and its registry entry (`MODULE`).

pub mod wire;

use super::{ev, K};
use super::{BenchFiles, BenchTurn, HostModule, ShippedFile, Wire};
use crate::host::*;

/// OpenCode's plugin hooks and bus events, as its shim plugin forwards them
/// (`{"hook_event_name", "host_time", "directory", "input", "output"}` for a hook, `"event"` for
/// a bus event; see `opencode`). Not the chatty ones: `message.part.*` (every streamed delta and
/// part state), `session.status`/`updated`/`diff`, `chat.params`/`headers`, `tool.definition`,
/// the `experimental.chat.*` transforms (every request, the title request included);
/// `message.updated` only for a completed assistant message (its tokens and cost). Timeouts are
/// the shim's per-call budgets (a hung hookjournal is killed, and OpenCode goes on).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("session.created", K::SessionStart, 10),
    ev("chat.message", K::Prompt, 30),
    ev("command.execute.before", K::Other, 10),
    ev("tool.execute.before", K::ToolPre, 10),
    ev("tool.execute.after", K::ToolPost, 10),
    ev("message.updated", K::Other, 10),
    ev("todo.updated", K::Other, 10),
    ev("permission.asked", K::Other, 10),
    ev("permission.replied", K::Other, 10),
    ev("command.executed", K::Other, 10),
    ev("experimental.session.compacting", K::PreCompact, 30),
    ev("session.compacted", K::PostCompact, 10),
    ev("session.idle", K::Stop, 10),
    ev("session.error", K::StopFailure, 10),
    ev("session.deleted", K::SessionEnd, 10),
];

/// OpenCode (1.18.33 measured; `tests/fixtures/real-hosts/opencode-1.18.33/FACTS.md`): in-process
/// plugins, no shell hooks, so `install` writes a shim plugin that forwards each hook to
/// `hookjournal hook --host opencode` and applies the answer by mutating the hook's `output`:
/// context appended to the prompt's last text part (`chat.message`), to the tool's output
/// (`tool.execute.after`), and to the compaction prompt (`experimental.session.compacting`'s
/// `context`). Its bus events only observe: a session start's text (startup tasks, a restore)
/// rides on the next prompt, nothing can block its idle, and nothing stops a loop agent.
pub const OPENCODE: HostFacts = HostFacts {
    name: "opencode",
    product: "OpenCode",
    events: EVENTS,
    answers: &[
        (K::Prompt, AnswerShape::Context),
        (K::ToolPost, AnswerShape::Context),
        (K::PreCompact, AnswerShape::Context),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "input.sessionID",
        agent_id: None,
        transcript_path: None,
        cwd: &["directory"],
    },
    compaction: CompactionFacts {
        before: Some("experimental.session.compacting"),
        after: Some("session.compacted"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // No file is read: its usage arrives with its completed assistant messages, and its session
    // database is never read (the shim names no transcript).
    session_file: super::claude::TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".opencode",
        user_config_dir: ".config/opencode",
        config_dir_env: None,
        project_file: "plugins/hookjournal.js",
        local_file: None,
        user_file: "plugins/hookjournal.js",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::ShimModule,
        next_step: "start OpenCode here (`opencode`, or `opencode run …`; it loads plugins at its \
                    start); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`opencode`).
    #[allow(non_upper_case_globals)]
    pub const OpenCode: Host = Host::Known("opencode");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &OPENCODE,
    wire: Wire::Own(wire::parse),
    install_help: "OpenCode (a plugin shim in .opencode/plugins/, or ~/.config/opencode/plugins/ with --scope user)",
    cost_from: "its completed assistant messages",
    tested: Some("1.18.33"),
    bench: Some(BenchTurn {
        label: "OpenCode",
        what: "what its shim forwarded of an OpenCode tool turn",
        dir: "opencode-1.18.33/shim",
        files: BenchFiles::Prefix("01."),
        session: "/input/sessionID",
        replace: &[],
        env: &[],
    }),
    shipped: &[ShippedFile {
        name: "hookjournal.js",
        text: include_str!("hookjournal.js"),
    }],
};
