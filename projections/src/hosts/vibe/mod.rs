//! Mistral Vibe: what hookjournal knows of it (`VIBE`) and its registry entry (`MODULE`).

pub mod store;
pub mod wire;

use super::{ev, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Mistral Vibe's events: its three hook types (3.0.3). `pre_tool` fires per tool call before
/// the permission prompt, `post_tool` per tool call whose body ran (`tool_status` success,
/// failure or cancelled), `post_agent` once per turn after the final reply (and after each
/// subagent's turn). Nothing fires at a session's start, a prompt, a compaction or the end.
/// Its `timeout` is in seconds; a tool hook without `match` runs for every tool.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("pre_tool", K::ToolPre, 10),
    ev("post_tool", K::ToolPost, 10),
    ev("post_agent", K::Stop, 10),
];

/// Mistral Vibe (the PyPI `mistral-vibe` 3.0.3 measured, `vibe -p` against a loopback
/// OpenAI-compatible model; `tests/fixtures/real-hosts/mistral-vibe-3.0.3/FACTS.md`): a
/// payload of its own (`wire`: `hook_event_name` `pre_tool`/`post_tool`/`post_agent`,
/// `session_id`, `transcript_path` naming the session store's directory, `cwd`,
/// `parent_session_id`, qualified tool names such as `file_system.bash`), hooks as `[[hooks]]`
/// tables (`name`, `type`, `command`, `timeout`) in `<cwd>/.vibe/hooks.toml` — **run only in a
/// trusted folder** (`vibe --trust`, or the folder in `~/.vibe/trusted_folders.toml`) — and in
/// `~/.vibe/hooks.toml` (`$VIBE_HOME`); a name in both runs once, the project's. What reaches
/// the model is `post_tool`'s `hook_specific_output.additional_context`, appended to the
/// tool's result: the task reminder goes there, nothing anywhere else (a `post_agent` deny
/// would be a retry prompt, its decision is `deny`, not Claude's `block`). Its hook processes
/// get nothing of Vibe's but the launcher's `VIBE_APP_SERVER_BIN`, which every program under
/// it inherits: the event names tell it. Its usage is the session store's running totals
/// (`store`), priced by hookjournal (Vibe writes no cost).
pub const VIBE: HostFacts = HostFacts {
    name: "vibe",
    product: "Mistral Vibe",
    events: EVENTS,
    answers: &[(K::ToolPost, AnswerShape::Context)],
    context: ContextForm::SnakeNested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        // A directory: the session store (`store`), not a transcript file.
        transcript_path: Some("transcript_path"),
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
    // The session store, a directory (the payload's `transcript_path`): its running totals
    // (`store`), read after each tool and at the turn's end. A subagent keeps its own store, its
    // events the parent's session: skipped.
    session_file: SessionFileFacts {
        format: SessionFileFormat::VibeStore,
        read_at: &[K::ToolPost, K::ToolFailure, K::Stop],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: true,
        read_scale: 4,
        subagent_files: false,
        derived_path: None,
    },
    trust: Trust::TrustedFolder,
    install: Some(InstallFacts {
        config_dir: ".vibe",
        user_config_dir: ".vibe",
        config_dir_env: Some("VIBE_HOME"),
        project_file: "hooks.toml",
        local_file: None,
        user_file: "hooks.toml",
        timeout_scale: 1,
        named_handlers: true,
        format: HookFileFormat::VibeToml,
        next_step: "start Mistral Vibe in this folder (it reads .vibe/hooks.toml only when the \
                    folder is trusted: trust it when Vibe asks, or run `vibe --trust`; \
                    ~/.vibe/hooks.toml always); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`vibe`).
    #[allow(non_upper_case_globals)]
    pub const Vibe: Host = Host::Known("vibe");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &VIBE,
    wire: Wire::Own(wire::parse),
    install_help: "Mistral Vibe (.vibe/hooks.toml, run only in a trusted folder; ~/.vibe/hooks.toml with --scope user)",
    cost_from: "its session store's running totals (the payload's `transcript_path`)",
    tested: Some("3.0.3"),
    bench: Some(BenchTurn {
        label: "Mistral Vibe",
        what: "a Mistral Vibe tool turn",
        dir: "mistral-vibe-3.0.3",
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "pre_tool-bash",
                "post_tool-bash",
                "pre_tool-read_file",
                "post_tool-read_file",
            ],
        },
        session: "/session_id",
        replace: &[],
        env: &[],
    }),
    shipped: &[],
};
