//! Kilo Code: what hookjournal knows of it (`KILO`) and its registry entry (`MODULE`).

pub mod db;
pub mod wire;

use super::{ev, seen, K};
use super::{BenchFiles, BenchTurn, HostModule, ShippedFile, Wire};
use crate::host::*;

/// Kilo Code's plugin hooks and bus events, as hookjournal's OpenCode shim forwards them from
/// inside Kilo (OpenCode's plugin API, the same argument shapes). As for OpenCode, not the
/// chatty ones; and not `message.updated` either: Kilo's usage is read from its database at the
/// turn's end (`db`), so no hook runs per assistant message. `session.drained` (after
/// `session.idle`) and `message.part.removed` are Kilo's own: seen, not registered.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("session.created", K::SessionStart, 10),
    ev("chat.message", K::Prompt, 30),
    ev("command.execute.before", K::Other, 10),
    ev("tool.execute.before", K::ToolPre, 10),
    ev("tool.execute.after", K::ToolPost, 10),
    ev("todo.updated", K::Other, 10),
    ev("permission.asked", K::Other, 10),
    ev("permission.replied", K::Other, 10),
    ev("command.executed", K::Other, 10),
    ev("experimental.session.compacting", K::PreCompact, 30),
    ev("session.compacted", K::PostCompact, 10),
    ev("session.idle", K::Stop, 10),
    ev("session.error", K::StopFailure, 10),
    ev("session.deleted", K::SessionEnd, 10),
    seen("message.updated", K::Other),
    seen("session.drained", K::Other),
    seen("message.part.removed", K::Other),
];

/// Kilo Code CLI (7.7.9 measured; `tests/fixtures/real-hosts/kilo-7.7.9/FACTS.md`): an OpenCode
/// fork, in-process plugins with OpenCode's API, loaded only from `.kilo/plugins/`,
/// `.kilocode/plugins/` and `~/.config/kilo/plugins/` (never `.opencode/plugins/`). `install`
/// writes OpenCode's shim there with `"host":"kilo"` in its settings, so it runs `hookjournal
/// hook --host kilo` and says `"host":"kilo"` in each payload; its answers are OpenCode's (the
/// prompt's last text part, the tool's output, the compaction prompt). Kilo sets `KILO=1` *and*
/// `OPENCODE=1` for its plugins and every program they or its shell start: `OPENCODE=1` proves
/// nothing, and `KILO` is read only to tell an OpenCode-shaped payload (OpenCode's own shim
/// copied into `.kilo/plugins/`) from OpenCode's. Usage is only in its SQLite database,
/// `~/.local/share/kilo/kilo.db`, read read-only at the turn's end (`db`).
pub const KILO: HostFacts = HostFacts {
    name: "kilo",
    product: "Kilo Code",
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
    // OpenCode's (measured on 7.7.9 by `tests/kilo.rs`: an auto-compaction after a step at the
    // model's limit, `experimental.session.compacting` then `session.compacted`, and the
    // restore reaching the model with the next prompt).
    compaction: CompactionFacts {
        before: Some("experimental.session.compacting"),
        after: Some("session.compacted"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // `kilo.db` under `$XDG_DATA_HOME/kilo` or `~/.local/share/kilo`: the session's and its
    // subagents' (child sessions') assistant messages, read at the turn's end, before a
    // compaction and at a deletion; never per tool.
    session_file: SessionFileFacts {
        format: SessionFileFormat::OpenCodeDb,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 1,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[("XDG_DATA_HOME", "kilo"), ("HOME", ".local/share/kilo")],
            file: "kilo.db",
            subagent_file: None,
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".kilo",
        user_config_dir: ".config/kilo",
        config_dir_env: None,
        project_file: "plugins/hookjournal.js",
        local_file: None,
        user_file: "plugins/hookjournal.js",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::ShimModule,
        next_step: "start Kilo here (`kilo`, or `kilo run …`; it loads plugins at its start); \
                    check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`kilo`).
    #[allow(non_upper_case_globals)]
    pub const Kilo: Host = Host::Known("kilo");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &KILO,
    wire: Wire::Own(wire::parse),
    install_help: "Kilo Code (OpenCode's plugin shim in .kilo/plugins/, or ~/.config/kilo/plugins/ with --scope user)",
    cost_from: "its SQLite database `kilo.db` (read-only, at the turn's end)",
    tested: Some("7.7.9"),
    bench: Some(BenchTurn {
        label: "Kilo Code",
        what: "what OpenCode's shim forwarded of a Kilo Code tool turn",
        dir: "kilo-7.7.9",
        files: BenchFiles::Prefix("hj-shim."),
        session: "/input/sessionID",
        replace: &[],
        env: &[("KILO", "1"), ("OPENCODE", "1")],
    }),
    // OpenCode's shim: one file for both (install sets its host).
    shipped: &[ShippedFile {
        name: "hookjournal.js",
        text: include_str!("../opencode/hookjournal.js"),
    }],
};
