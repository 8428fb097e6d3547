//! Kimi CLI: what hookjournal knows of it (`KIMI`) and its registry entry (`MODULE`).

pub mod wire_log;

use super::{ev, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Kimi CLI's events: the 13 names 1.52.0's config accepts. **Any other name in `[[hooks]]` and
/// Kimi refuses to start** (`Invalid configuration file …: hooks.N.event Input should be …`), so
/// install registers exactly these and nothing of Claude Code's it lacks. Its timeouts are in
/// seconds (1-600). Its matcher is a regex searched in the tool name (empty: every tool), so
/// install registers the tool events with none (Claude's `"*"` is no regex).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    ev("PreToolUse", K::ToolPre, 10),
    ev("PostToolUse", K::ToolPost, 10),
    ev("PostToolUseFailure", K::ToolFailure, 10),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("StopFailure", K::StopFailure, 10),
    ev("SubagentStart", K::SubagentStart, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
    ev("PostCompact", K::PostCompact, 10),
];

/// Kimi CLI (the Python `kimi-cli` 1.52.0 measured, run as `python -m kimi_cli.cli`;
/// `tests/fixtures/real-hosts/kimi-1.52.0/FACTS.md`): Claude Code's event names and snake_case
/// payload fields, but no `transcript_path`, no `permission_mode`, `tool_call_id` and a
/// `tool_output` that is a Python repr. Its hooks are only in the user's `~/.kimi/config.toml`
/// (`$KIMI_SHARE_DIR/config.toml`), `[[hooks]]` tables; no project file. Its hook processes get
/// the CLI's own environment and nothing added, so nothing but `--host kimi` on the registered
/// command (and the payload's shape after a tool) tells it from Claude Code. It reads only a
/// block (exit 2, or `permissionDecision:"deny"`): no `additionalContext` anywhere, Claude's
/// `decision:"block"` ignored. So hookjournal answers nothing on Kimi: no restore, no reminder
/// reaches its model. A subagent's events carry the parent's session id, unmarked. Its usage
/// comes from its `wire.jsonl` (`wire_log`), which names no model: tokens, no cost.
pub const KIMI: HostFacts = HostFacts {
    name: "kimi",
    product: "Kimi CLI",
    events: EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["cwd"],
    },
    // `/compact` and the automatic one (context >= 85 % of the model's size): PreCompact
    // `trigger`, then PostCompact; no SessionStart after it.
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: Some("PostCompact"),
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // Its usage is in `~/.kimi/sessions/<md5 of the cwd>/<session>/wire.jsonl` (StatusUpdate
    // records), a file no payload names: found as Kimi names it, under `$KIMI_SHARE_DIR`, else
    // `$HOME/.kimi`. At the Stop hook the turn's responses are written (its TurnEnd is not yet);
    // at SessionEnd, everything. A subagent's events are unmarked: its records are in the
    // parent's file, wrapped, and counted there.
    session_file: SessionFileFacts {
        format: SessionFileFormat::KimiWire,
        read_at: &[K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: false,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[("KIMI_SHARE_DIR", ""), ("HOME", ".kimi")],
            file: "sessions/{cwd_md5}/{session}/wire.jsonl",
            subagent_file: None,
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".kimi",
        user_config_dir: ".kimi",
        config_dir_env: Some("KIMI_SHARE_DIR"),
        project_file: "config.toml",
        local_file: None,
        user_file: "config.toml",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::KimiToml,
        next_step: "start Kimi CLI (it reads ~/.kimi/config.toml at its start, for every \
                    project); check with `hookjournal status` in the project.",
    }),
};

impl Host {
    /// The host as envelopes name it (`kimi`).
    #[allow(non_upper_case_globals)]
    pub const Kimi: Host = Host::Known("kimi");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &KIMI,
    wire: Wire::ClaudeShaped,
    install_help: "Kimi CLI (~/.kimi/config.toml [[hooks]]; user scope only: --scope user)",
    cost_from: "its session's wire.jsonl (tokens; it names no model)",
    tested: Some("1.52.0"),
    bench: Some(BenchTurn {
        label: "Kimi CLI",
        what: "a Kimi CLI tool turn",
        dir: "kimi-1.52.0",
        files: BenchFiles::Listed {
            pattern: "user.{}.json",
            stems: &[
                "SessionStart-startup",
                "UserPromptSubmit",
                "PreToolUse-Shell",
                "PostToolUse-Shell",
                "PreToolUse-ReadFile",
                "PostToolUse-ReadFile",
            ],
        },
        session: "/session_id",
        replace: &[],
        env: &[],
    }),
    shipped: &[],
};
