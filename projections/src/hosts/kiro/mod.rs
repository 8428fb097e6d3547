//! Kiro CLI: what hookjournal knows of it (`KIRO`) and its registry entry (`MODULE`), from the
//! public source of the Amazon Q Developer CLI it was renamed from (`aws/amazon-q-developer-cli`
//! at 15cc8f3, `crates/chat-cli/src/cli/agent/hook.rs`, `cli/chat/cli/hooks.rs`): **not run
//! here** (Kiro CLI needs an AWS Builder ID sign-in and Amazon's backend).

pub mod wire;

use super::{ev, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Its `HookTrigger`s, as an agent file names them (camelCase). `agentSpawn` runs once a chat
/// session (its output is cached for the session, whatever `cache_ttl_seconds` says); the others
/// run again only when `cache_ttl_seconds` is 0, the default, which install never changes.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("agentSpawn", K::SessionStart, 30),
    ev("userPromptSubmit", K::Prompt, 30),
    ev("preToolUse", K::ToolPre, 10),
    ev("postToolUse", K::ToolPost, 10),
    ev("stop", K::Stop, 10),
];

/// Kiro CLI (its source; not run here): hooks only in an agent file, `.kiro/agents/<name>.json`
/// of the workspace or `~/.kiro/agents/<name>.json` (the source's `.amazonq/cli-agents/`,
/// `~/.aws/amazonq/cli-agents/`), `{"hooks":{EVENT:[{"command":…,"timeout_ms":…,
/// "cache_ttl_seconds":…,"max_output_size":…,"matcher":…}]}}`, run by `bash -c`. The default
/// agent (`q_cli_default`) lives in memory: no file gives it hooks, so install writes an agent of
/// hookjournal's own (`hookjournal`), started with `--agent hookjournal` or made the default with
/// `chat.defaultAgent`. A payload of its own (`wire`): `hook_event_name`, `cwd`, `prompt`,
/// `tool_name`, `tool_input`, `tool_response` (`{"success":…,"result"|"error":[…]}`); no session
/// id, no transcript. It reads a hook's stdout as plain text into the model's context at
/// `agentSpawn` and `userPromptSubmit` (exit 0) and blocks a tool on exit 2 at `preToolUse`
/// (stderr to the model): hookjournal answers those two events with plain text (its restore, a
/// task reminder), nothing else (no other stdout is read).
pub const KIRO: HostFacts = HostFacts {
    name: "kiro",
    product: "Kiro CLI",
    events: EVENTS,
    answers: &[
        (K::SessionStart, AnswerShape::Context),
        (K::Prompt, AnswerShape::Context),
    ],
    context: ContextForm::Plain,
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
    trust: Trust::Unverified,
    install: Some(InstallFacts {
        config_dir: ".kiro/agents",
        user_config_dir: ".kiro/agents",
        config_dir_env: None,
        project_file: "hookjournal.json",
        local_file: None,
        user_file: "hookjournal.json",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::KiroAgent,
        next_step: "start `kiro-cli chat --agent hookjournal` here (or make it the default: \
                    `kiro-cli settings chat.defaultAgent hookjournal`; not tried here); check \
                    with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`kiro`).
    #[allow(non_upper_case_globals)]
    pub const Kiro: Host = Host::Known("kiro");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &KIRO,
    wire: Wire::Own(wire::parse),
    install_help: "Kiro CLI (an agent of hookjournal's, .kiro/agents/hookjournal.json, or \
                   ~/.kiro/agents/ with --scope user; from its source, not run here)",
    cost_from: "none (no usage reaches its hooks)",
    tested: None,
    bench: None,
    shipped: &[],
};
