//! Crush: what hookjournal knows of it (`CRUSH`) and its registry entry (`MODULE`).

use super::{ev, K};
use super::{HostModule, Wire};
use crate::host::*;

/// Crush's events: the one its hook runner fires (`hooks.EventPreToolUse`, before every tool
/// call of the top-level agent; a subagent's own calls fire none). Registered without a matcher
/// (every tool). Claude Code's names are read too (`HostFacts::meaning`), should a later build
/// send them.
pub(super) const EVENTS: &[HostEvent] = &[ev("PreToolUse", K::ToolPre, 10)];

/// Crush (`@charmland/crush` 0.96.1 pinned; not run here: its npm package downloads the binary
/// from the project's release page at install, which this machine cannot reach; the facts are
/// read from its source, `tests/fixtures/real-hosts/crush-0.96.1/FACTS.md`). Shell hooks in
/// `crush.json` (`{"hooks":{"PreToolUse":[{"name","matcher","command","timeout"}]}}`, timeouts in
/// seconds); the payload is `{"event","session_id","cwd","tool_name","tool_input"}` (its event
/// name in `event`, not `hook_event_name`), with `CRUSH_EVENT`, `CRUSH_SESSION_ID`, `CRUSH_CWD`,
/// `CRUSH_PROJECT_DIR` and `CRUSH_TOOL_*` in the environment. Its answer envelope's `context` is
/// appended to the tool's result, so reminders ride on the next tool call. No prompt, stop,
/// session or compaction event: no restore after a compaction, no pressure notice (no usage
/// reaches a hook; its usage is in its SQLite `.crush/crush.db`, which hookjournal does not
/// read), no blocked stop, no stopped loop agent.
pub const CRUSH: HostFacts = HostFacts {
    name: "crush",
    product: "Crush",
    events: EVENTS,
    answers: &[(K::ToolPre, AnswerShape::Context)],
    context: ContextForm::Envelope,
    empty_prompt_continues_turn: false,
    // Its hook runner adds them to every hook process; its bash tool gives the programs it runs
    // only `CRUSH=1`, `AGENT=crush`, `AI_AGENT=crush`.
    caller: Some(CallerEvidence {
        env: &["CRUSH_EVENT", "CRUSH_PROJECT_DIR"],
        measured:
            "Crush's source (internal/hooks/input.go BuildEnv, internal/shell CrushEnvMarkers \
                   at 37f36e9, after v0.90.0): every hook process gets CRUSH_EVENT and \
                   CRUSH_PROJECT_DIR, its bash tool's programs neither; not measured here",
    }),
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
    // No file is read: its sessions and usage are in SQLite (`.crush/crush.db`), and its payload
    // names no transcript.
    session_file: super::claude::TRANSCRIPT,
    trust: Trust::None,
    install: Some(InstallFacts {
        config_dir: "",
        user_config_dir: ".config/crush",
        config_dir_env: Some("CRUSH_GLOBAL_CONFIG"),
        project_file: "crush.json",
        local_file: None,
        user_file: "crush.json",
        timeout_scale: 1,
        named_handlers: true,
        format: HookFileFormat::CrushFlat,
        next_step: "start Crush here (`crush`, or `crush run …`; it reads crush.json and \
                    .crush.json from here up to the repository's root at its start); check with \
                    `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`crush`).
    #[allow(non_upper_case_globals)]
    pub const Crush: Host = Host::Known("crush");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &CRUSH,
    wire: Wire::ClaudeShaped,
    install_help: "Crush (crush.json, or ~/.config/crush/crush.json with --scope user)",
    cost_from: "none (only in its SQLite database)",
    tested: None,
    bench: None,
    shipped: &[],
};
