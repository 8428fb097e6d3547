//! The hosts hookjournal speaks to, and what it knows about each of them: the event names it
//! sends and what they mean, which events take which kind of answer, which payload fields hold
//! what, how a compaction shows, what trust the host wants and where `install` writes.
//!
//! These are the shared types: each host's own facts are in its folder (`hosts::<name>`) and
//! the registry of them is `hosts::HOSTS`. The facts are data (`HostFacts`), read by the adapter
//! (`event::parse`), the policy (`policy::decide`) and the docs' tests; a host is stored in
//! envelopes by its name (`Host::as_str`), so the storage format knows nothing of this type.

use crate::event_kind::EventKind;
use std::fmt;
use std::path::{Path, PathBuf};

/// An agent that runs hookjournal's hook: one of the hosts of the registry (`hosts::HOSTS`), by
/// its name, or a host it does not know. Each host's folder names its own as an associated
/// constant (`Host::Claude`, `Host::Cline`, …), usable in patterns.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    /// A host of the registry, by its name (made by `Host::from_name` or a folder's constant).
    Known(&'static str),
    /// A host named on the command line (`--host NAME`) or in an imported event that hookjournal
    /// does not know, kept by its name: read with Claude Code's event names, answered only with
    /// what needs nothing host-specific (see `hosts::GENERIC`).
    Other(String),
}

impl Host {
    /// The host's name as envelopes store it and `--host` takes it (`claude`, `codex`, …).
    pub fn as_str(&self) -> &str {
        match self {
            Host::Known(name) => name,
            Host::Other(name) => name,
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the hosts hookjournal knows (`FromStr` is strict; for stored names,
/// which may be anything, use `Host::from_name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownHost(pub String);

impl std::error::Error for UnknownHost {}

/// The kinds of answer a hook can print, each honoured by some (host, event) pairs only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnswerShape {
    /// Text added to the model's context, in the form the host reads (`HostFacts::context`).
    Context,
    /// Plain text on stdout, appended to the compaction's summary request (Claude Code's
    /// PreCompact; it rejects `hookSpecificOutput` there).
    CompactionText,
    /// `{"decision":"block","reason":…}` at Stop: the agent goes on with the reason as its prompt.
    BlockStop,
    /// `{"continue":false,"stopReason":…}`: the agent stops (a loop agent at the context limit).
    StopAgent,
}

/// How an event name reads when the event names no tool itself (Cursor's shell and file
/// events): the tool it stands for, and the payload fields its input is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImpliedTool {
    /// `Bash`, input `{"command"}` from the payload's `command`.
    Shell,
    /// `Edit`, input `{"file_path","edits"}` from the payload's `file_path` and `edits`.
    FileEdit,
    /// `Read`, input `{"file_path"}` from the payload's `file_path`.
    FileRead,
}

impl ImpliedTool {
    /// The tool name the event is recorded as.
    pub fn tool(&self) -> &'static str {
        match self {
            ImpliedTool::Shell => "Bash",
            ImpliedTool::FileEdit => "Edit",
            ImpliedTool::FileRead => "Read",
        }
    }
}

/// How a host reads context from a hook's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextForm {
    /// `{"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}}` (Claude Code and the
    /// hosts that copied its protocol).
    Nested,
    /// `{"additionalContext":…}` at the top level: Copilot CLI 1.0.102 reads only that and
    /// ignores the nested form (measured, `tests/copilot_cli.rs`).
    Flat,
    /// `{"context":…}`, Crush's own output envelope (`version`, `decision`, `halt`, `reason`,
    /// `context`, `updated_input`; no `decision`: the tool goes through its permission flow as
    /// it would without the hook).
    Envelope,
    /// `{"contextModification":…}` (Cline CLI: added to the next request as a `<hook_context>`
    /// user message after the tool's result).
    Modification,
    /// `{"hook_specific_output":{"additional_context":…}}` (Mistral Vibe's `post_tool`: appended
    /// to the tool's result).
    SnakeNested,
    /// The text itself on stdout, no JSON (Kiro CLI: its `agentSpawn` and `userPromptSubmit`
    /// hooks' stdout goes into the model's context as it is, from its source). Read back from
    /// the journal it is plain text, as `CompactionText` is: the session counts it as injected on
    /// a host of this form (`Session::answered`).
    Plain,
}

/// How `install` registers the handler for one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registration {
    /// Seconds the host may give the handler (converted by `InstallFacts::timeout_scale`).
    pub timeout_s: u64,
    /// Tool events take a matcher on the tool name: `"*"`, every tool.
    pub tool_matcher: bool,
    /// The payload names no event (Copilot CLI's camelCase registrations): the command line
    /// does, `hook --event NAME`.
    pub event_arg: bool,
}

/// One event name a host sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostEvent {
    /// The name as the host sends it in `hook_event_name`.
    pub name: &'static str,
    /// What it means (`EventKind::Other`: recorded, never answered).
    pub kind: EventKind,
    /// For tool events that name no tool: the tool they stand for.
    pub implied_tool: Option<ImpliedTool>,
    /// How `install` registers it; `None`: never registered (see `never_registered` reasons in
    /// docs/hooks.md), or the host is not installed by hookjournal.
    pub register: Option<Registration>,
}

/// The payload fields that hold the ids and paths hookjournal reads. (The adapter reads every
/// field name it knows on every host; these are the ones each host is known to send.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadFields {
    /// The session (conversation) id.
    pub session_id: &'static str,
    /// The subagent's id, on events that run inside a subagent.
    pub agent_id: Option<&'static str>,
    /// The session's transcript.
    pub transcript_path: Option<&'static str>,
    /// The project directory, first field that has it first.
    pub cwd: &'static [&'static str],
}

/// How the host's context compaction shows in its hook events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionFacts {
    /// The event fired before the context is compacted (its `trigger` is `manual` or `auto`).
    pub before: Option<&'static str>,
    /// The event fired after it (Claude Code's carries `compact_summary`).
    pub after: Option<&'static str>,
    /// The SessionStart `source` the session continues with after a compaction, if known.
    pub restart_source: Option<&'static str>,
    /// Whether `before` also fires when nothing is compacted (Gemini CLI fires PreCompress
    /// before every model request): then it announces nothing, and a compaction is known only
    /// once the host's session file shows it.
    pub before_fires_without_compaction: bool,
    /// Whether the host's session file shows its compactions, and is read for them: a
    /// compaction is counted there unless `before` announced it (Gemini CLI's never does;
    /// Copilot CLI's preCompact does, and its `.claude/settings.json` handlers may never see
    /// one). Neither host follows a compaction with an event: the restore goes with the next
    /// context it takes after the compaction is announced or shown.
    pub counted_from_session_file: bool,
    /// Whether a `continue:false` answer to `before` stops the compaction (Codex CLI: the turn
    /// is interrupted and nothing is compacted): then the compaction is counted at `after`, which
    /// fires only once the context was compacted.
    pub before_can_cancel: bool,
}

/// The format of the file a host keeps per session (what `engine::ingest` reads it with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionFileFormat {
    /// Claude Code's transcript JSONL (also read for hosts that name a transcript of that shape).
    ClaudeTranscript,
    /// Codex CLI's rollout JSONL.
    CodexRollout,
    /// Gemini CLI's chat file.
    GeminiChat,
    /// Copilot CLI's `session-state/<id>/events.jsonl`.
    CopilotEvents,
    /// Qwen Code's `projects/<cwd>/chats/<session>.jsonl`.
    QwenChat,
    /// Factory Droid's `sessions/<cwd>/<session>.jsonl` (its compactions) and the
    /// `<session>.settings.json` beside it (the session's running token totals).
    DroidSession,
    /// Cline CLI's `sessions/<session>/<session>.messages.json`, one JSON document read whole.
    ClineMessages,
    /// Kimi CLI's `sessions/<md5 of the cwd>/<session>/wire.jsonl` (its `StatusUpdate` records).
    KimiWire,
    /// An OpenHands conversation's `base_state.json`, one JSON document read whole.
    OpenHandsState,
    /// Letta Code's local backend: the `messages.jsonl` of each of the agent's conversations
    /// under a `conversations` directory (the derived path names the directory).
    LettaMessages,
    /// An OpenCode-family SQLite database (Kilo Code's `kilo.db`): its `session` and `message`
    /// rows, read read-only (`hosts::kilo::db`).
    OpenCodeDb,
    /// Auggie's session record `sessions/<conversation_id>.json`, one JSON document read whole
    /// (`hosts::auggie::session_file`).
    AuggieSession,
    /// A Mistral Vibe session store, a directory (`hosts::vibe::store`): its latest generation's
    /// running totals and the journal segment after it.
    VibeStore,
}

/// Where a host's session file is when no payload names it: under the first directory of
/// `dirs` whose environment variable the hook process has (an absolute path, joined with its
/// suffix), at `file` with `{session}` replaced by the session id (`{session_hex}` by the id
/// without its dashes: OpenHands' conversation folders; `{cwd_md5}` by the MD5, in hex, of the
/// payload's cwd: Kimi CLI's session folders). The engine reads the
/// environment; the rule is data here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedPath {
    /// (variable, suffix), first set one wins.
    pub dirs: &'static [(&'static str, &'static str)],
    /// The file under it.
    pub file: &'static str,
    /// A subagent's own file under it (`{agent}`: the subagent's id), when it has one.
    pub subagent_file: Option<&'static str>,
}

/// The file a host keeps per session (usage per model call, the context, compactions), and when
/// the hook reads it: data the pure plan (`observe::plan`) turns into reads the engine executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionFileFacts {
    /// Its format.
    pub format: SessionFileFormat,
    /// The events at which the hook reads it (the payload's `transcript_path`).
    pub read_at: &'static [EventKind],
    /// Events at which it is read too while a compaction the host announced is not in the file
    /// yet (Copilot CLI compacts while the turn goes on; the restore follows what the file shows).
    pub read_while_compacting: &'static [EventKind],
    /// Whether a subagent's own events skip it (their payload names the parent's file, whose
    /// usage is the parent's, or a file whose usage is not the session's context).
    pub main_agent_only: bool,
    /// Whether the session's recorded path stands in when the payload names none (Copilot CLI's
    /// sessionEnd names none).
    pub path_from_session: bool,
    /// Bytes read at once, as a multiple of `hook.transcript_read_max` (at SessionEnd: 4).
    pub read_scale: u64,
    /// Whether subagents keep transcripts of their own: read at SubagentStop (the path it names)
    /// and caught up at the session's reads (they lag their SubagentStop).
    pub subagent_files: bool,
    /// Where the file is when the payload names none (`None`: only where a payload names it).
    pub derived_path: Option<DerivedPath>,
}

/// What the host wants before project hooks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Nothing: hooks in the settings load at the next session start.
    None,
    /// The project folder must be trusted.
    TrustedFolder,
    /// Each new project hook must be trusted in the host (`/hooks`); Codex records it as a
    /// `trusted_hash` in `~/.codex/config.toml`, and `codex exec` skips untrusted hooks silently.
    /// `install` writes that trust itself (Codex 0.169.0's hash, `install/codex_trust.rs`); a
    /// project's hooks load only in a trusted project besides.
    TrustedHooks,
    /// Not established (hookjournal does not install for this host).
    Unverified,
}

/// The settings file `install` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The project's shared settings.
    Project,
    /// The project's settings for this user only (Claude Code's `settings.local.json`).
    Local,
    /// The user's settings for every project.
    User,
}

/// How a host's hooks file lists a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookFileFormat {
    /// `{"hooks":{EVENT:[{"matcher":…,"hooks":[{"type":"command","command":…,"timeout":…}]}]}}`
    /// (Claude Code, Codex CLI, Gemini CLI).
    Grouped,
    /// `{"version":1,"hooks":{EVENT:[{"type":"command","bash":…,"timeoutSec":…}]}}` (Copilot CLI).
    CopilotFlat,
    /// `{"version":1,"hooks":{EVENT:[{"command":…,"timeout":…}]}}` (Cursor).
    CursorFlat,
    /// `{"hooks":{EVENT:[{"name":…,"command":…,"timeout":…}]}}`, no `version`, no matcher (every
    /// tool) (Crush's `crush.json`).
    CrushFlat,
    /// No settings file: one executable per event in a hooks directory, named after the event
    /// (Cline CLI; `install::cline` writes them).
    ScriptPerEvent,
    /// No settings file: one module the host loads into its own process (a shim), its settings
    /// one line in it (OpenCode's plugin, pi's extension; `install::shim` writes it).
    ShimModule,
    /// No settings file: a plugin directory of hookjournal's files, enabled in the host's own
    /// config (OpenClaw; `install::openclaw` writes it).
    PluginDir,
    /// `[[hooks]]` tables (`event`, `command`, `timeout`) in a TOML config of the host's own,
    /// every other table kept as it is (Kimi CLI's `~/.kimi/config.toml`; `install::kimi`
    /// writes them).
    KimiToml,
    /// `Grouped`, in a file whose events must be the host's own and nothing else (OpenHands'
    /// `hooks.json`: one unknown event key and it runs no hook at all). Install refuses a file it
    /// cannot keep that way; doctor names one the host rejects.
    OnlyHooks,
    /// `{"hooks":{EVENT:[{"command":…,"show_output":false}]}}`: no version, no matcher, no
    /// timeout (Windsurf's Cascade, from its documentation).
    WindsurfFlat,
    /// `Grouped`, the tool events matched by a regex of every tool (`".*"`) and the other events
    /// with no `matcher` at all (Auggie: `"*"` is an invalid regex there and matches nothing, and
    /// a matcher on a non-tool event is reported as unsupported configuration).
    GroupedRegex,
    /// `[[hooks]]` tables (`name`, `type`, `command`, `timeout`) in a hooks file of TOML, every
    /// other line kept as it is (Mistral Vibe's `.vibe/hooks.toml`, `~/.vibe/hooks.toml`;
    /// `install::vibe` writes them).
    VibeToml,
    /// `{"hooks":{EVENT:[{"command":…,"timeout_ms":…}]}}` in an agent file of Kiro CLI's: no
    /// matcher (every tool), no `cache_ttl_seconds` (a cached hook does not run); a new file is
    /// an agent of hookjournal's own (`name`, every tool), removed at uninstall when nothing else
    /// was added to it.
    KiroAgent,
}

impl HookFileFormat {
    /// Whether an entry carries a timeout (Cascade's take none: doctor checks no timeout there).
    pub fn timed(&self) -> bool {
        !matches!(self, HookFileFormat::WindsurfFlat)
    }

    /// Whether a new file starts with `"version": 1` (and a file left with nothing else is
    /// removed at uninstall): Copilot CLI's and Cursor's hook files.
    pub fn versioned(&self) -> bool {
        matches!(
            self,
            HookFileFormat::CopilotFlat | HookFileFormat::CursorFlat
        )
    }
}

/// Where and how `install` registers the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstallFacts {
    /// Directory holding the settings file in the project.
    pub config_dir: &'static str,
    /// Directory holding the user's settings in their home (`.copilot` where the project's is
    /// `.github`; else the same as `config_dir`).
    pub user_config_dir: &'static str,
    /// Environment variable that moves the user-level config directory, if the host has one.
    pub config_dir_env: Option<&'static str>,
    /// The settings file in the project's `config_dir`.
    pub project_file: &'static str,
    /// The per-user file in the project's `config_dir`, if the host has one.
    pub local_file: Option<&'static str>,
    /// The settings file in the user's config directory.
    pub user_file: &'static str,
    /// 1 where `timeout` is in seconds, 1000 where it is in milliseconds.
    pub timeout_scale: u64,
    /// Handlers carry a `name` the host shows and toggles them by (Gemini:
    /// `/hooks disable hookjournal`).
    pub named_handlers: bool,
    /// How the file lists a handler.
    pub format: HookFileFormat,
    /// What to do after installing.
    pub next_step: &'static str,
}

impl InstallFacts {
    /// Whether the host reads hooks from the user's config only (Kimi CLI): `install` takes
    /// `--scope user` alone.
    pub fn user_only(&self) -> bool {
        self.format == HookFileFormat::KimiToml
    }

    /// The settings file for `scope`, given the project and the user's config directory (the
    /// home's `config_dir`, or where `config_dir_env` moves it); `None` when the host has no
    /// such scope or no user directory is given.
    pub fn settings_path(
        &self,
        scope: Scope,
        project: &Path,
        user_dir: Option<&Path>,
    ) -> Option<PathBuf> {
        match scope {
            Scope::Project => Some(project.join(self.config_dir).join(self.project_file)),
            Scope::Local => self
                .local_file
                .map(|f| project.join(self.config_dir).join(f)),
            Scope::User => user_dir.map(|d| d.join(self.user_file)),
        }
    }
}

/// What shows, in a hook process's environment, that this host runs it: every variable named is
/// set (and not empty). Only variables the host sets for its hook processes and not for the
/// programs its tools run count (those leak into any agent started from its shell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallerEvidence {
    /// The variables, all of them set.
    pub env: &'static [&'static str],
    /// Where that was established.
    pub measured: &'static str,
}

/// Gemini CLI sets it for its hooks; it only breaks a tie with Claude Code's payload shape.
const GEMINI_TIE_BREAK: &str = "GEMINI_SESSION_ID";
/// Claude Code's session variable: it leaks into every process Claude Code starts, so it only
/// counts against Gemini's tie-break.
const CLAUDE_SESSION: &str = "CLAUDE_CODE_SESSION_ID";
/// Kilo Code sets it (with `OPENCODE=1`) for its plugins and every program they or its shell
/// start: it only tells a payload of OpenCode's shim run by Kilo from one run by OpenCode.
const KILO_MARK: &str = "KILO";

/// The variables of a hook process's environment that host detection reads (`names`), as the
/// CLI found them: set and not empty. Built by the CLI (`ingest::caller_env`), so detection
/// itself stays a function of its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallerEnv {
    set: Vec<&'static str>,
}

impl CallerEnv {
    /// Every variable detection reads: each known host's `caller` evidence, and the Gemini
    /// tie-break's two.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Host::known()
            .filter_map(|h| h.facts().caller)
            .flat_map(|c| c.env.iter().copied())
            .chain([GEMINI_TIE_BREAK, CLAUDE_SESSION, KILO_MARK])
    }

    /// The environment as `is_set` says: whether a variable is set and not empty.
    pub fn read(is_set: impl Fn(&str) -> bool) -> CallerEnv {
        let mut set: Vec<&'static str> = Self::names().filter(|n| is_set(n)).collect();
        set.dedup();
        CallerEnv { set }
    }

    fn has(&self, name: &str) -> bool {
        self.set.contains(&name)
    }

    /// The known host (in table order) whose every `caller` variable is set: the host that runs
    /// this hook process.
    pub fn caller(&self) -> Option<Host> {
        Host::known().find(|h| {
            h.facts()
                .caller
                .is_some_and(|c| c.env.iter().all(|v| self.has(v)))
        })
    }

    /// A payload that looks like Claude Code's is Gemini CLI's: `GEMINI_SESSION_ID` is set and
    /// Claude Code's session variable is not.
    pub fn gemini_tie_break(&self) -> bool {
        self.has(GEMINI_TIE_BREAK) && !self.has(CLAUDE_SESSION)
    }

    /// A payload of OpenCode's shim is Kilo Code's: `KILO` is set (`OPENCODE=1` proves nothing,
    /// Kilo sets it too).
    pub fn kilo_runs_it(&self) -> bool {
        self.has(KILO_MARK)
    }
}

/// Everything hookjournal knows about one host.
#[derive(Debug, PartialEq, Eq)]
pub struct HostFacts {
    /// The name envelopes store and `--host` takes (empty for `GENERIC`).
    pub name: &'static str,
    /// The product, as the docs name it.
    pub product: &'static str,
    /// The event names it sends, in registration order.
    pub events: &'static [HostEvent],
    /// The (canonical event, answer) pairs it honours; everything else is answered with nothing.
    pub answers: &'static [(EventKind, AnswerShape)],
    /// How it reads context.
    pub context: ContextForm,
    /// Whether a prompt event with an empty prompt is the host going on with the turn, not the
    /// user (Qwen Code fires UserPromptSubmit with `prompt:""` after every tool batch): it is
    /// recorded and never answered, and no prompt of the session.
    pub empty_prompt_continues_turn: bool,
    /// What shows in a hook's environment that this host runs it (checked before `--host`, see
    /// `event::detect_host`); `None`: nothing reliable.
    pub caller: Option<CallerEvidence>,
    /// Where the payload holds ids and paths.
    pub payload: PayloadFields,
    /// How a compaction shows.
    pub compaction: CompactionFacts,
    /// The file it keeps per session, and when the hook reads it.
    pub session_file: SessionFileFacts,
    /// What it wants before project hooks run.
    pub trust: Trust,
    /// How `install` registers the handler; `None`: not installed by hookjournal.
    pub install: Option<InstallFacts>,
}

impl HostFacts {
    /// The host's own event of this name.
    pub fn event(&self, name: &str) -> Option<&'static HostEvent> {
        self.events.iter().find(|e| e.name == name)
    }

    /// Whether the host tells when a tool has run (an after-tool event of its own or Claude's);
    /// where it does not (Crush), its before-tool event is the call, counted there.
    pub fn sees_tool_results(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.kind, EventKind::ToolPost | EventKind::ToolFailure))
    }

    /// The events `install` registers, in order (none for a host it does not install for).
    pub fn registered(&self) -> impl Iterator<Item = (&'static HostEvent, Registration)> {
        let installed = self.install.is_some();
        self.events
            .iter()
            .filter(move |_| installed)
            .filter_map(|e| e.register.map(|r| (e, r)))
    }
}

/// Whether this host restores at the next prompt instead of at SessionStart (it takes context
/// with a prompt, not when a session starts).
pub fn restores_at_prompt(host: &Host) -> bool {
    host.answers(EventKind::Prompt, AnswerShape::Context)
        && !host.answers(EventKind::SessionStart, AnswerShape::Context)
}
