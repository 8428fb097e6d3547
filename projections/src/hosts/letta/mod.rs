//! Letta Code: what hookjournal knows of it (`LETTA`) and its registry entry (`MODULE`).

pub mod messages;
pub mod wire;

use super::{ev, tool, K};
use super::{BenchFiles, BenchTurn, HostModule, Wire};
use crate::host::*;

/// Letta Code's events: the eleven names of its `HOOK_EVENTS` (0.32.18). **Headless (`letta
/// -p`) fires only the tool events**: PreToolUse, PostToolUse (also for a failed tool, its
/// `tool_result.status` "error") and PostToolUseFailure after it; the others fire in the TUI
/// only (SubagentStop is defined and never called; PreCompact only at a compaction). Its
/// timeouts are in milliseconds (`timeout: 15` kills the hook after 15 ms; install writes
/// them scaled). Tool events match `matcher` as an anchored regex, `"*"` every tool.
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    tool("PreToolUse", K::ToolPre),
    tool("PostToolUse", K::ToolPost),
    tool("PostToolUseFailure", K::ToolFailure),
    tool("PermissionRequest", K::Other),
    ev("Notification", K::Notification, 10),
    ev("Stop", K::Stop, 10),
    ev("SubagentStop", K::SubagentStop, 10),
    ev("PreCompact", K::PreCompact, 30),
];

/// Letta Code (the npm `@letta-ai/letta-code` 0.32.18 measured, `--backend local` against a
/// loopback LM Studio-compatible model; `tests/fixtures/real-hosts/letta-code-0.32.18/FACTS.md`):
/// a payload of its own (`wire`: `event_type`, `working_directory`, `agent_id`; no session id,
/// the agent is the session), hooks in Claude Code's grouped format in
/// `.letta/settings.local.json`, `.letta/settings.json` and `~/.letta/settings.json` (all three
/// run, in that order; `.claude/settings.json` is not read), timeouts in milliseconds. What
/// reaches the model is PostToolUse's (and PostToolUseFailure's) `additionalContext`, nested
/// or flat, appended to the tool's result as `[Hook feedback]:` — so the task reminder goes
/// there; UserPromptSubmit and SessionStart stdout are collected in the TUI only, a PreToolUse
/// `permissionDecision` is ignored. Its hook processes get `LETTA_HOOK_EVENT`,
/// `LETTA_WORKING_DIR` and `LETTA_AGENT_ID`; the programs its Bash tool runs get the last only.
/// Usage comes from the agent's conversations' `messages.jsonl` (`messages`): tokens and
/// model per response, priced by hookjournal (Letta writes a cost of 0 for a local provider).
pub const LETTA: HostFacts = HostFacts {
    name: "letta",
    product: "Letta Code",
    events: EVENTS,
    answers: &[(K::ToolPost, AnswerShape::Context)],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: Some(CallerEvidence {
        env: &["LETTA_HOOK_EVENT", "LETTA_WORKING_DIR", "LETTA_AGENT_ID"],
        measured: "Letta Code 0.32.18 sets LETTA_HOOK_EVENT, LETTA_WORKING_DIR and \
                   LETTA_AGENT_ID (and AGENT_ID, USER_CWD) for every hook process; the programs \
                   its Bash tool runs get LETTA_AGENT_ID, never LETTA_HOOK_EVENT nor \
                   LETTA_WORKING_DIR",
    }),
    payload: PayloadFields {
        session_id: "agent_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["working_directory"],
    },
    // PreCompact fires at a compaction in the TUI (`context_length`, `max_context_length`);
    // nothing follows it.
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    // `conversations/*/messages.jsonl` under `$LETTA_LOCAL_BACKEND_DIR` or
    // `~/.letta/lc-local-backend` (the local backend's; a Letta server keeps its own): the
    // engine reads those of the agent's conversations (`conversation.json`'s `agent_id`), each
    // from where it stopped. An assistant message is written before its tool's hooks run, so
    // every response but the turn's last (after its last tool) is counted by the tool events,
    // the only ones `-p` fires.
    session_file: SessionFileFacts {
        format: SessionFileFormat::LettaMessages,
        read_at: &[K::ToolPost, K::Stop, K::PreCompact, K::SessionEnd],
        read_while_compacting: &[],
        main_agent_only: true,
        path_from_session: false,
        read_scale: 1,
        subagent_files: false,
        derived_path: Some(DerivedPath {
            dirs: &[
                ("LETTA_LOCAL_BACKEND_DIR", ""),
                ("HOME", ".letta/lc-local-backend"),
            ],
            file: "conversations/{session}",
            subagent_file: None,
        }),
    },
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: ".letta",
        user_config_dir: ".letta",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1000,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step:
            "start Letta Code here (it reads .letta/settings.local.json, .letta/settings.json \
                    and ~/.letta/settings.json at each start, all three); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`letta`).
    #[allow(non_upper_case_globals)]
    pub const Letta: Host = Host::Known("letta");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &LETTA,
    wire: Wire::Own(wire::parse),
    install_help: "Letta Code (.letta/settings.json, .letta/settings.local.json with --scope local, ~/.letta/settings.json with --scope user)",
    cost_from: "its agent's conversations' `messages.jsonl` (found from `$HOME`)",
    tested: Some("0.32.18"),
    bench: Some(BenchTurn {
        label: "Letta Code",
        what: "a Letta Code tool turn, its environment",
        dir: "letta-code-0.32.18",
        files: BenchFiles::Listed {
            pattern: "project.{}.json",
            stems: &[
                "PreToolUse-Bash",
                "PostToolUse-Bash",
                "PreToolUse-Read",
                "PostToolUse-Read",
            ],
        },
        session: "/agent_id",
        replace: &[],
        env: &[
            ("LETTA_HOOK_EVENT", "PreToolUse"),
            ("LETTA_WORKING_DIR", "/home/dev/acme-api"),
            (
                "LETTA_AGENT_ID",
                "agent-local-eb36f983-376f-4d8b-8eb5-edead8e2d6e9",
            ),
        ],
    }),
    shipped: &[],
};
