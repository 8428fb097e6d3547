//! goose: what hookjournal knows of it (`GOOSE`) and its registry entry (`MODULE`), from its
//! public source only (`crates/goose/src/hooks/mod.rs`, `plugins/discovery.rs`): **not run
//! here** (its CLI ships as a release binary, in no package registry reached here).

pub mod wire;

use super::{ev, K};
use super::{HostModule, Wire};
use crate::host::*;

/// goose's `HookEvent`s, as `hooks.json` names them; any other name is ignored at load. Its
/// file events fire beside the tool events of the same call: recorded only, so that a call is
/// not counted twice. No matcher is registered: goose compiles a rule's `matcher` as a regex,
/// and Claude Code's `*` is none (the rule is skipped).
pub(super) const EVENTS: &[HostEvent] = &[
    ev("SessionStart", K::SessionStart, 30),
    ev("SessionEnd", K::SessionEnd, 10),
    ev("UserPromptSubmit", K::Prompt, 30),
    ev("PreToolUse", K::ToolPre, 10),
    ev("PreToolUseResult", K::Other, 10),
    ev("PostToolUse", K::ToolPost, 10),
    ev("PostToolUseFailure", K::ToolFailure, 10),
    ev("BeforeReadFile", K::Other, 10),
    ev("AfterFileEdit", K::Other, 10),
    ev("BeforeShellExecution", K::Other, 10),
    ev("AfterShellExecution", K::Other, 10),
    ev("Stop", K::Stop, 10),
];

/// goose (its source; not run here): hooks only in plugins, `<plugin>/hooks/hooks.json` of every
/// enabled plugin — a project's `.agents/plugins/<name>/` or the user's
/// `~/.local/share/goose/plugins/<name>/`, enabled unless a settings file disables it —, Claude
/// Code's nested shape (`type:"command"`, `command`, `timeout` in seconds, a regex `matcher`). A
/// payload of its own (`wire`): the event in `event` (not `hook_event_name`), `session_id`,
/// `matcher_context`, `tool_call_id`, `tool_name`, `tool_input`, `tool_output`, `message`,
/// `last_assistant_message`, `working_dir`. It reads a hook's stdout only for a block (exit 2,
/// or `{"decision":"block"}`), an allow (`{"decision":"allow"}` or nothing) and a `banner`:
/// nothing reaches the model, and any other JSON at PreToolUse is a hook failure. hookjournal
/// answers nothing.
pub const GOOSE: HostFacts = HostFacts {
    name: "goose",
    product: "goose",
    events: EVENTS,
    answers: &[],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: None,
        cwd: &["working_dir"],
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
        config_dir: ".agents/plugins/hookjournal/hooks",
        user_config_dir: ".local/share/goose/plugins/hookjournal/hooks",
        config_dir_env: None,
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        format: HookFileFormat::Grouped,
        next_step: "start goose here (it loads the hooks of the plugins in .agents/plugins/; not \
                    tried here); check with `hookjournal status`.",
    }),
};

impl Host {
    /// The host as envelopes name it (`goose`).
    #[allow(non_upper_case_globals)]
    pub const Goose: Host = Host::Known("goose");
}

/// Its registry entry (`hosts::HOSTS`).
pub const MODULE: HostModule = HostModule {
    facts: &GOOSE,
    wire: Wire::Own(wire::parse),
    install_help:
        "goose (a plugin of hookjournal's, .agents/plugins/hookjournal/hooks/hooks.json; \
                   from its source, not run here)",
    cost_from: "none (no usage reaches its hooks)",
    tested: None,
    bench: None,
    shipped: &[],
};
