//! The hosts hookjournal speaks to, one folder each, and the one registry of them (`HOSTS`).
//!
//! A host's folder holds everything that is that host's: its facts (`HostFacts`: events,
//! answers, payload fields, compaction, session file, trust, install), its payload parser where
//! its payload is not Claude Code's shape (`wire.rs`), the reader of the file it keeps per session,
//! and the files hookjournal ships for it (shims, plugins). Everything else — clap's `--host`
//! values, install, uninstall, doctor, the hosts matrix, the benchmark's and the fuzzer's host
//! rows — iterates `HOSTS`. Adding a host is its folder and one line here.

pub mod amp;
pub mod auggie;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod continue_cli;
pub mod copilot;
pub mod crush;
pub mod cursor;
pub mod droid;
pub mod gemini;
pub mod goose;
pub mod kilo;
pub mod kimi;
pub mod kiro;
pub mod letta;
pub mod openclaw;
pub mod opencode;
pub mod openhands;
pub mod pi;
pub mod qoder;
pub mod qwen;
pub mod vibe;
pub mod windsurf;

pub use self::{
    amp::AMP, auggie::AUGGIE, claude::CLAUDE, cline::CLINE, codex::CODEX, continue_cli::CONTINUE,
    copilot::COPILOT, crush::CRUSH, cursor::CURSOR, droid::DROID, gemini::GEMINI, goose::GOOSE,
    kilo::KILO, kimi::KIMI, kiro::KIRO, letta::LETTA, openclaw::OPENCLAW, opencode::OPENCODE,
    openhands::OPENHANDS, pi::PI, qoder::QODER, qwen::QWEN, vibe::VIBE, windsurf::WINDSURF,
};

use crate::event_kind::EventKind;
use crate::hook_event::HookEvent;
use crate::host::{
    AnswerShape, CompactionFacts, ContextForm, Host, HostEvent, HostFacts, ImpliedTool,
    PayloadFields, Registration, Trust, UnknownHost,
};
use std::fmt;
use std::str::FromStr;

/// How a host's payload becomes a `HookEvent`.
#[derive(Clone, Copy)]
pub enum Wire {
    /// Claude Code's payload shape (snake_case or camelCase fields, `hook_event_name`), read by
    /// `event::parse_named` with the host's facts: Claude Code and the hosts that copied it.
    ClaudeShaped,
    /// A shape of the host's own, read by its folder's parser (`bytes → HookEvent`).
    Own(fn(&[u8]) -> Option<HookEvent>),
}

/// A file hookjournal ships for a host's hooks (a shim, a plugin's code), as shipped: what
/// install writes and doctor compares an installed copy with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShippedFile {
    /// Its name where it is installed.
    pub name: &'static str,
    /// Its text as shipped (a shim's settings line as install leaves it blank).
    pub text: &'static str,
}

/// The payload files of a benchmark turn, in the order they are played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchFiles {
    /// Every `.json` file whose name starts with this, sorted by name (no event named); the
    /// first one's session id is the turn's (a later payload of another session keeps its own).
    Prefix(&'static str),
    /// These stems, in this order, in files named by `pattern` (`{}`: the stem); the event is
    /// the stem up to its first `-`, and each payload's own session id is the turn's.
    Listed {
        /// The file name, `{}` standing for the stem.
        pattern: &'static str,
        /// The stems.
        stems: &'static [&'static str],
    },
}

/// One tool turn of the host's real client that the benchmark (`bench/hook.rs`) times the hook
/// on, as the host runs it: payloads it recorded, the environment it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchTurn {
    /// How the row is labelled.
    pub label: &'static str,
    /// What the row times.
    pub what: &'static str,
    /// The recorded payloads' directory, under `tests/fixtures/real-hosts/`.
    pub dir: &'static str,
    /// Which of its files, in which order.
    pub files: BenchFiles,
    /// Where a payload holds the session id (a JSON pointer); it is made the round's own.
    pub session: &'static str,
    /// Text replaced in each payload after that, in order (`{dir}` in the replacement: the
    /// fixture directory; `{sid}`: the recorded session id).
    pub replace: &'static [(&'static str, &'static str)],
    /// The hook environment the host gives.
    pub env: &'static [(&'static str, &'static str)],
}

/// One host: its facts and what the code around the facts needs of it.
pub struct HostModule {
    /// What hookjournal knows about it.
    pub facts: &'static HostFacts,
    /// How its payload is read.
    pub wire: Wire,
    /// The line `install --host` shows for it.
    pub install_help: &'static str,
    /// Where the hosts matrix says its cost comes from.
    pub cost_from: &'static str,
    /// The version its real-client test drives; `None`: none can run here (the reason is in
    /// docs/hooks.md).
    pub tested: Option<&'static str>,
    /// The tool turn the benchmark times, if one is recorded.
    pub bench: Option<BenchTurn>,
    /// The files hookjournal ships for its hooks; the first is the one doctor compares.
    pub shipped: &'static [ShippedFile],
}

/// Every host hookjournal knows, in the order the docs, `--help` and the hosts matrix list them.
pub const HOSTS: &[&HostModule] = &[
    &claude::MODULE,
    &codex::MODULE,
    &gemini::MODULE,
    &copilot::MODULE,
    &cursor::MODULE,
    &openclaw::MODULE,
    &qwen::MODULE,
    &opencode::MODULE,
    &kilo::MODULE,
    &crush::MODULE,
    &pi::MODULE,
    &droid::MODULE,
    &cline::MODULE,
    &kimi::MODULE,
    &openhands::MODULE,
    &qoder::MODULE,
    &continue_cli::MODULE,
    &windsurf::MODULE,
    &goose::MODULE,
    &letta::MODULE,
    &auggie::MODULE,
    &vibe::MODULE,
    &kiro::MODULE,
    &amp::MODULE,
];

/// The module of a known host's name.
pub fn module(name: &str) -> Option<&'static HostModule> {
    HOSTS.iter().copied().find(|m| m.facts.name == name)
}

impl Host {
    /// Every host hookjournal knows, in registry order.
    pub fn known() -> impl Iterator<Item = Host> {
        HOSTS.iter().map(|m| Host::Known(m.facts.name))
    }

    /// The host a stored or given name denotes; a name hookjournal does not know is kept as
    /// `Other` (so it is stored again exactly as it was given).
    pub fn from_name(name: &str) -> Host {
        match module(name) {
            Some(m) => Host::Known(m.facts.name),
            None => Host::Other(name.to_string()),
        }
    }

    /// The host's module in the registry (`None`: a host hookjournal does not know).
    pub fn module(&self) -> Option<&'static HostModule> {
        match self {
            Host::Known(name) => module(name),
            Host::Other(_) => None,
        }
    }

    /// What hookjournal knows about this host.
    pub fn facts(&self) -> &'static HostFacts {
        self.module().map_or(&GENERIC, |m| m.facts)
    }

    /// Whether the host takes an answer of `shape` to the canonical event `kind`.
    pub fn answers(&self, kind: EventKind, shape: AnswerShape) -> bool {
        self.facts().answers.contains(&(kind, shape))
    }
}

impl fmt::Display for UnknownHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = HOSTS.iter().map(|m| m.facts.name).collect();
        write!(f, "unknown host {:?} (known: {})", self.0, names.join(", "))
    }
}

impl FromStr for Host {
    type Err = UnknownHost;

    fn from_str(s: &str) -> Result<Host, UnknownHost> {
        match Host::from_name(s) {
            Host::Other(name) => Err(UnknownHost(name)),
            known => Ok(known),
        }
    }
}

impl HostFacts {
    /// What an event name means on this host: its own name, else Claude Code's (read on every
    /// host); `None`: an unknown event (recorded as `Other`).
    pub fn meaning(&self, name: &str) -> Option<&'static HostEvent> {
        self.event(name).or_else(|| CLAUDE.event(name))
    }

    /// Whether `name` is this host's own and no event of Claude Code's (what host detection
    /// recognises it by).
    pub fn owns(&self, name: &str) -> bool {
        self.event(name).is_some() && CLAUDE.event(name).is_none()
    }
}

const fn ev(name: &'static str, kind: EventKind, timeout_s: u64) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s,
            tool_matcher: false,
            event_arg: false,
        }),
    }
}

/// An event whose payload names no event: install puts its name on the command line.
const fn unnamed(name: &'static str, kind: EventKind, timeout_s: u64) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s,
            tool_matcher: false,
            event_arg: true,
        }),
    }
}

const fn tool(name: &'static str, kind: EventKind) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: Some(Registration {
            timeout_s: 10,
            tool_matcher: true,
            event_arg: false,
        }),
    }
}

/// An event hookjournal reads but does not register.
const fn seen(name: &'static str, kind: EventKind) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: None,
        register: None,
    }
}

const fn implied(name: &'static str, kind: EventKind, t: ImpliedTool) -> HostEvent {
    HostEvent {
        name,
        kind,
        implied_tool: Some(t),
        register: None,
    }
}

use EventKind as K;

/// Context at session start, with a prompt and after a tool.
const CONTEXT: [(EventKind, AnswerShape); 3] = [
    (K::SessionStart, AnswerShape::Context),
    (K::Prompt, AnswerShape::Context),
    (K::ToolPost, AnswerShape::Context),
];

/// A host hookjournal does not know (`Host::Other`): Claude Code's event names, context answers
/// and a loop agent's stop; nothing that needs host-specific support (text at compaction, a
/// blocked Stop).
pub const GENERIC: HostFacts = HostFacts {
    name: "",
    product: "an unknown host",
    events: claude::EVENTS,
    answers: &[
        CONTEXT[0],
        CONTEXT[1],
        CONTEXT[2],
        (K::PreCompact, AnswerShape::StopAgent),
    ],
    context: ContextForm::Nested,
    empty_prompt_continues_turn: false,
    caller: None,
    payload: PayloadFields {
        session_id: "session_id",
        agent_id: None,
        transcript_path: Some("transcript_path"),
        cwd: &["cwd"],
    },
    compaction: CompactionFacts {
        before: Some("PreCompact"),
        after: None,
        restart_source: None,
        before_fires_without_compaction: false,
        counted_from_session_file: false,
        before_can_cancel: false,
    },
    session_file: claude::TRANSCRIPT,
    trust: Trust::Unverified,
    install: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn every_folder_constant_is_a_registered_host_and_names_are_unique() {
        let consts = [
            Host::Claude,
            Host::Codex,
            Host::Gemini,
            Host::Copilot,
            Host::Cursor,
            Host::OpenClaw,
            Host::Qwen,
            Host::OpenCode,
            Host::Crush,
            Host::Pi,
            Host::Droid,
            Host::Cline,
            Host::Kimi,
            Host::OpenHands,
            Host::Letta,
            Host::Auggie,
        ];
        for h in &consts {
            assert!(h.module().is_some(), "{h} is in no registry line");
        }
        let mut names: Vec<&str> = HOSTS.iter().map(|m| m.facts.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), HOSTS.len(), "a name registered twice");
        for m in HOSTS {
            assert!(m.facts.install.is_some(), "{} installs", m.facts.name);
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_kept() {
        for h in Host::known() {
            assert_eq!(Host::from_name(h.as_str()), h);
            assert_eq!(h.as_str().parse::<Host>(), Ok(h.clone()));
            assert_eq!(h.to_string(), h.facts().name);
        }
        assert_eq!(Host::from_name("auto"), Host::Other("auto".into()));
        assert_eq!(Host::from_name("Claude").as_str(), "Claude");
        assert_eq!(
            "cli".parse::<Host>(),
            Err(UnknownHost("cli".into())),
            "FromStr is strict"
        );
    }

    #[test]
    fn every_event_name_is_listed_once_per_host() {
        for f in [
            &CLAUDE, &CODEX, &GEMINI, &COPILOT, &CURSOR, &OPENCLAW, &QWEN, &OPENCODE, &CRUSH, &PI,
            &DROID, &CLINE, &KIMI, &OPENHANDS, &LETTA, &AUGGIE,
        ] {
            for e in f.events {
                assert_eq!(f.events.iter().filter(|x| x.name == e.name).count(), 1);
            }
            // A host's own name never means something else under Claude's name.
            for e in f.events {
                if let Some(c) = CLAUDE.event(e.name) {
                    assert_eq!(c.kind, e.kind, "{} {}", f.name, e.name);
                }
            }
        }
    }

    #[test]
    fn install_paths_per_scope() {
        let p = Path::new("/p");
        let home = Path::new("/h/.claude");
        let c = CLAUDE.install.unwrap();
        assert_eq!(
            c.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.claude/settings.json"))
        );
        assert_eq!(
            c.settings_path(Scope::Local, p, None),
            Some(PathBuf::from("/p/.claude/settings.local.json"))
        );
        assert_eq!(
            c.settings_path(Scope::User, p, Some(home)),
            Some(PathBuf::from("/h/.claude/settings.json"))
        );
        let x = CODEX.install.unwrap();
        assert_eq!(x.settings_path(Scope::Local, p, None), None);
        assert_eq!(
            x.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.codex/hooks.json"))
        );
        let q = QWEN.install.unwrap();
        assert_eq!(
            q.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.qwen/settings.json"))
        );
        assert_eq!(
            q.settings_path(Scope::User, p, Some(Path::new("/h/.qwen"))),
            Some(PathBuf::from("/h/.qwen/settings.json"))
        );
        assert_eq!(q.settings_path(Scope::Local, p, None), None);
        assert_eq!(QWEN.registered().count(), 21);
        let k = CRUSH.install.unwrap();
        assert_eq!(
            k.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/crush.json"))
        );
        assert_eq!(
            k.settings_path(Scope::User, p, Some(Path::new("/h/.config/crush"))),
            Some(PathBuf::from("/h/.config/crush/crush.json"))
        );
        assert_eq!(k.settings_path(Scope::Local, p, None), None);
        assert_eq!(CRUSH.registered().count(), 1);
        let d = DROID.install.unwrap();
        assert_eq!(
            d.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.factory/settings.json"))
        );
        assert_eq!(
            d.settings_path(Scope::User, p, Some(Path::new("/h/.factory"))),
            Some(PathBuf::from("/h/.factory/settings.json"))
        );
        assert_eq!(d.settings_path(Scope::Local, p, None), None);
        assert_eq!(DROID.registered().count(), 9);
        let g = COPILOT.install.unwrap();
        assert_eq!(
            g.settings_path(Scope::Project, p, None),
            Some(PathBuf::from("/p/.github/hooks/hookjournal.json"))
        );
        assert_eq!(
            g.settings_path(Scope::User, p, Some(Path::new("/h/.copilot"))),
            Some(PathBuf::from("/h/.copilot/hooks/hookjournal.json"))
        );
    }

    #[test]
    fn the_environment_names_the_caller_only_with_all_its_variables() {
        let env = |vars: &[&str]| CallerEnv::read(|n| vars.contains(&n));
        assert_eq!(env(&[]).caller(), None);
        // Copilot's shell tool gives the programs it runs COPILOT_CLI alone.
        assert_eq!(env(&["COPILOT_CLI"]).caller(), None);
        assert_eq!(
            env(&[
                "COPILOT_CLI",
                "COPILOT_PROJECT_DIR",
                "CLAUDE_CODE_SESSION_ID"
            ])
            .caller(),
            Some(Host::Copilot)
        );
        assert_eq!(env(&["QWEN_CODE_CLI"]).caller(), None);
        assert_eq!(
            env(&["QWEN_CODE_CLI", "QWEN_PROJECT_DIR"]).caller(),
            Some(Host::Qwen)
        );
        // Droid's Execute tool gives the programs it runs neither of its two.
        assert_eq!(
            env(&["CLAUDE_PROJECT_DIR", "DROID_PROJECT_DIR"]).caller(),
            None
        );
        assert_eq!(
            env(&["DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"]).caller(),
            Some(Host::Droid)
        );
        assert_eq!(env(&["CURSOR_VERSION"]).caller(), Some(Host::Cursor));
        // Crush's bash tool gives its programs none of its hook variables.
        assert_eq!(env(&["CRUSH_EVENT"]).caller(), None);
        assert_eq!(
            env(&["CRUSH_EVENT", "CRUSH_PROJECT_DIR"]).caller(),
            Some(Host::Crush)
        );
        assert!(env(&["GEMINI_SESSION_ID"]).gemini_tie_break());
        assert!(!env(&["GEMINI_SESSION_ID", "CLAUDE_CODE_SESSION_ID"]).gemini_tie_break());
    }
}
