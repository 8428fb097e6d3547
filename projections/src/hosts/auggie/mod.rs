//! Auggie (Augment's CLI): what hookjournal knows of it (`AUGGIE`) and its registry entry
//! (`MODULE`).

pub mod session_file;
pub mod wire;

use super::{ev, tool, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Auggie's seven events (0.36.0): `PromptSubmit`, not UserPromptSubmit. `matcher` is a regex on
/// the tool name at PreToolUse/PostToolUse only (`".*"` every tool; `"*"` is an invalid regex and
/// matches nothing); the other five take no `matcher` (one there is reported as unsupported
/// configuration, printed on `--print`'s stdout). Timeouts in milliseconds. In `--print`,
/// Notification never fired.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("PromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
];

/// Auggie (the npm `@augmentcode/auggie` 0.36.0 measured, `--print` against a loopback stand-in
/// for Augment's backend: `tests/fixtures/real-hosts/auggie-0.36.0/FACTS.md`): a payload of its
/// own (`wire`: `conversation_id`, `workspace_roots`, pretty-printed; Cursor's field names with
/// Claude Code's event names, told from Cursor's by those names and no `cursor_version`), hooks
/// in Claude Code's grouped format in `~/.augment/settings.json`, `.augment/settings.json` and
/// `.augment/settings.local.json` of the workspace root (all run, concurrently;
/// `.claude/settings.json` is not read), timeouts in milliseconds, tool matchers regexes. Hooks
/// run only when the tenant's `enable_hooks` flag is on. What reaches the model in `--print` is
/// PostToolUse's `additionalContext`, nested or flat, appended to the tool's result as
/// `\n\n[Hook Context]\n…` — so the task reminder goes there; SessionStart's and PromptSubmit's
/// context is not sent, a Stop block does not continue. Its hook processes get
/// `AUGMENT_HOOK_EVENT`, `AUGMENT_CONVERSATION_ID` and `AUGMENT_PROJECT_DIR`; the programs its
/// `launch-process` tool runs get `AUGMENT_AGENT=1`, none of the three. Usage comes from the
/// session record `~/.augment/sessions/<conversation_id>.json` (`session_file`): tokens per
/// exchange, priced by hookjournal by `agentState.modelId`.
pub const AUGGIE: HostFacts = HostFacts {
    name: "auggie",
    product: "Auggie",
    events: EVENTS,
    answers: &[(K::ToolPost, AnswerShape::Context)],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &[
            "AUGMENT_HOOK_EVENT",
            "AUGMENT_CONVERSATION_ID",
            "AUGMENT_PROJECT_DIR",
        ],
        measured: "Auggie 0.36.0 sets AUGMENT_HOOK_EVENT, AUGMENT_CONVERSATION_ID and \
                   AUGMENT_PROJECT_DIR (and AUGMENT_TOOL_NAME at tool events) for every hook \
                   process; the programs its launch-process tool runs get AUGMENT_AGENT=1, none \
                   of the three",
    }),
    payload: PayloadFields {
        session_id: "conversation_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["workspace_roots"],
    },
    // No compaction event in 0.36.0.
    compaction: CompactionFacts {
        before: None,
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // `~/.augment/sessions/<conversation_id>.json` (`--augment-cache-dir` moves `~/.augment`;
    // no variable does): complete at Stop (every exchange of the turn) and SessionEnd, read
    // whole, bounded.
    session_file: SessionFileFacts {
        format: SessionFileFormat::AuggieSession,
        read_at: &[K::Stop, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 4,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[("HOME", ".augment")],
            file: "sessions/{session}.json",
            subagent_file: None,
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".augment",
        user_config_dir: ".augment",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::GroupedRegex,
        next_step: "start Auggie here (it reads .augment/settings.json, settings.local.json of \
                    the workspace root and ~/.augment/settings.json at each start; hooks run \
                    only where the tenant enables them); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`auggie`).
    #[allow(non_upper_case_globals)]
    pub const Auggie: Host = Host::Known("auggie");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &AUGGIE,
    wire: Wire::Own(wire::parse),
    install_help: "Auggie (.augment/settings.json, settings.local.json with --scope local, ~/.augment/settings.json with --scope user)",
    cost_from: "its session record `~/.augment/sessions/<id>.json` (found from `$HOME`)",
    tested: Some("0.36.0 (loopback backend)"),
    bench: Some(BenchTurn {
        label: "Auggie",
        what: "an Auggie tool turn, its environment",
        dir: "auggie-0.36.0",
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "SessionStart",
                "PromptSubmit",
                "PreToolUse-launch-process",
                "PostToolUse-launch-process",
                "PreToolUse-view",
                "PostToolUse-view",
            ],
        },
        session: "/conversation_id",
        replace: &[],
        env: &[
            ("AUGMENT_HOOK_EVENT", "PreToolUse"),
            (
                "AUGMENT_CONVERSATION_ID",
                "2536fee0-b933-4573-ac64-9397771e3b85",
            ),
            ("AUGMENT_PROJECT_DIR", "/home/dev/acme-api"),
        ],
    }),
    shipped: &[],
};
