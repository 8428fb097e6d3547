//! The settings: the user's own `config.toml` (`$XDG_CONFIG_HOME/hookjournal/`, else
//! `~/.config/hookjournal/`), the project's `.hookjournal/config.toml` over it, policy plus the
//! hook's own limits. A bad file is reported and ignored: the hook must still answer. A project
//! file came with the repository: what it may set is limited (`GUARDED`, `crate::trust`).

use projections::config::PolicyConfig;
use projections::pricing::{ModelPrice, PricingTable};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A journal's settings: `config.toml` (the user's own, laid under the project's; see the module
/// doc for what a project may set).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// What the hook answers and when.
    pub policy: PolicyConfig,
    /// The hook's limits and budgets.
    pub hook: HookLimits,
    /// Model name (or prefix) → prices in USD per million tokens.
    pub pricing: BTreeMap<String, ModelPrice>,
    /// Where `hookjournal ship` sends the journal.
    pub ship: ShipSettings,
    /// Live JSONL mirrors of the session and notification logs.
    pub mirror: MirrorSettings,
}

/// `[mirror]`: files kept in step with the journal, one JSON object a line, with the fields of
/// `export --report session-log` and `--report notifications`. Relative paths are taken from the
/// project (the journal directory's parent). Unset: no file is written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MirrorSettings {
    /// The session log's mirror (`export --report session-log` lines).
    pub session_log: Option<std::path::PathBuf>,
    /// The notification log's mirror (`export --report notifications` lines).
    pub notification_log: Option<std::path::PathBuf>,
}

impl MirrorSettings {
    /// Whether any mirror is configured.
    pub fn any(&self) -> bool {
        self.session_log.is_some() || self.notification_log.is_some()
    }
}

/// `[ship]`: targets of `hookjournal ship` (flags and environment variables come first).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShipSettings {
    /// PostgreSQL connection URL of the team store.
    pub postgres: Option<String>,
    /// OTLP/HTTP endpoint (records go to `URL/v1/logs`).
    pub otlp: Option<String>,
    /// This machine's name in the team store (default: the host name).
    pub machine: Option<String>,
}

/// `[hook]`: the hook's limits, each clamped to a safe range.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookLimits {
    /// How long a hook waits for the journal's lock before spooling, in ms.
    pub lock_wait_ms: u64,
    /// Payload cap in bytes; larger payloads keep their first bytes, length and hash.
    pub payload_cap: usize,
    /// Transcript bytes read per hook invocation (SessionEnd reads up to 4× this).
    pub transcript_read_max: usize,
    /// Spool files drained per invocation (the rest wait for the next one).
    pub drain_max: usize,
    /// How long one invocation may spend draining the spool, in ms (SessionEnd: half of it).
    pub drain_budget_ms: u64,
    /// Events the sled store may lag the write-ahead log before a hook starts a detached
    /// drainer (`hookjournal drain`) to ingest them.
    pub drain_lag: u64,
    /// Timeout of `git rev-parse`, in ms.
    pub git_timeout_ms: u64,
    /// Events per sealed segment.
    pub segment_events: u64,
    /// Record-only events (PreToolUse, Notification, …) go straight to the spool, without
    /// opening the store; the next process holding the lock ingests them in order.
    pub fast_path: bool,
    /// Time the loop's task program (`policy.task_command`) gets at a PreCompact, in ms
    /// (SessionEnd: at most 300, since its hooks share 1.5 s).
    pub task_command_timeout_ms: u64,
}

impl Default for HookLimits {
    fn default() -> Self {
        HookLimits {
            lock_wait_ms: 300,
            payload_cap: 16 << 20,
            transcript_read_max: 8 << 20,
            drain_max: 2_000,
            drain_budget_ms: 250,
            drain_lag: 256,
            git_timeout_ms: 400,
            segment_events: journal::DEFAULT_SEGMENT_EVENTS,
            fast_path: true,
            task_command_timeout_ms: 1_500,
        }
    }
}

impl HookLimits {
    /// Clamps every limit into its bounds; returns one phrase per value changed. A hook runs
    /// inside a host's time budget (Claude Code gives SessionEnd hooks 1.5 s in all), so no
    /// setting may make it wait or read without end.
    pub fn clamp(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let mut bound = |name: &str, v: u64, lo: u64, hi: u64| -> u64 {
            let c = v.clamp(lo, hi);
            if c != v {
                out.push(format!(
                    "hook.{name} = {v} is out of range {lo}..={hi}, using {c}"
                ));
            }
            c
        };
        self.lock_wait_ms = bound("lock_wait_ms", self.lock_wait_ms, 0, 2_000);
        self.payload_cap = bound("payload_cap", self.payload_cap as u64, 256, 64 << 20) as usize;
        self.transcript_read_max = bound(
            "transcript_read_max",
            self.transcript_read_max as u64,
            64 << 10,
            64 << 20,
        ) as usize;
        self.drain_max = bound("drain_max", self.drain_max as u64, 1, 100_000) as usize;
        self.drain_budget_ms = bound("drain_budget_ms", self.drain_budget_ms, 10, 1_000);
        self.drain_lag = bound("drain_lag", self.drain_lag, 1, 1 << 20);
        self.git_timeout_ms = bound("git_timeout_ms", self.git_timeout_ms, 10, 2_000);
        self.segment_events = bound("segment_events", self.segment_events, 16, 1 << 20);
        self.task_command_timeout_ms = bound(
            "task_command_timeout_ms",
            self.task_command_timeout_ms,
            10,
            10_000,
        );
        out
    }
}

/// A setting that runs a program, stops an agent, or sends or writes data outside the journal:
/// honoured from the user's own configuration, and from a project's `config.toml` only once the
/// user trusted that file (`hookjournal trust`). Every other setting may come from the project.
pub struct Guarded {
    /// The key, `table.name`.
    pub key: &'static str,
    /// What it makes hookjournal do.
    pub does: &'static str,
    /// Its default (a value equal to it changes nothing, so needs no trust).
    default: fn() -> Option<toml::Value>,
}

/// Every guarded setting. A new setting that runs, stops or writes outside the journal belongs
/// here (the docs' trust model lists the same keys; `guarded_keys_are_documented` checks).
pub const GUARDED: &[Guarded] = &[
    Guarded {
        key: "policy.task_command",
        does: "runs a program",
        default: || None,
    },
    Guarded {
        key: "policy.task_command_env",
        does: "names the variable naming a program to run",
        default: || Some(projections::config::DEFAULT_TASK_COMMAND_ENV.into()),
    },
    Guarded {
        key: "policy.loop_agent_env",
        does: "turns loop mode on: stops agents, fails their tasks",
        default: || Some(projections::config::DEFAULT_LOOP_AGENT_ENV.into()),
    },
    Guarded {
        key: "policy.loop_mode",
        does: "stops agents at compaction",
        default: || Some(false.into()),
    },
    Guarded {
        key: "mirror.session_log",
        does: "writes a file outside the journal",
        default: || None,
    },
    Guarded {
        key: "mirror.notification_log",
        does: "writes a file outside the journal",
        default: || None,
    },
    Guarded {
        key: "ship.postgres",
        does: "sends the journal to a database",
        default: || None,
    },
    Guarded {
        key: "ship.otlp",
        does: "sends the journal to a receiver",
        default: || None,
    },
];

/// The most a `config.toml` may hold: far more than any real one, and a bound on what a link to
/// `/dev/zero` or a huge file can cost a hook.
pub const CONFIG_CAP: u64 = 256 << 10;

/// A configuration file as read: its text, its metadata (of the open file), and its parsed table.
struct ConfigFile {
    path: PathBuf,
    text: String,
    meta: std::fs::Metadata,
    table: toml::Table,
}

/// Reads a config file bounded and typed: a regular file only (a symbolic link is not followed,
/// a FIFO or device is not read), at most `CONFIG_CAP` bytes, UTF-8, valid TOML. `Ok(None)` when
/// there is none. An error is one phrase, never the file's content beyond a short escaped excerpt.
fn read_config(path: &Path) -> Result<Option<ConfigFile>, String> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    // Not followed, and a FIFO opens without waiting for a writer (it is refused below).
    let f = match journal::door::by_path::open_nofollow(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err("is a symbolic link, which is not followed".into())
        }
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    let meta = f.metadata().map_err(|e| format!("cannot be read ({e})"))?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let what = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(format!("is {what}, not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(CONFIG_CAP) as usize);
    f.take(CONFIG_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() as u64 > CONFIG_CAP {
        return Err(format!("is larger than {} KiB", CONFIG_CAP >> 10));
    }
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_string())?;
    let table = toml::from_str::<toml::Table>(&text).map_err(|e| toml_problem(&text, &e))?;
    Ok(Some(ConfigFile {
        path: path.to_path_buf(),
        text,
        meta,
        table,
    }))
}

/// A TOML or schema error as one phrase: its place and message, and at most 40 characters of
/// the offending text, escaped (never the file's lines, as toml's own rendering quotes them).
fn toml_problem(text: &str, e: &toml::de::Error) -> String {
    let mut out = String::from("is not valid");
    if let Some(span) = e.span() {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        out.push_str(&format!(": line {line}, column {col}"));
        let at: String = text
            .get(span.start..span.end.min(text.len()))
            .unwrap_or("")
            .chars()
            .take(40)
            .collect();
        if !at.trim().is_empty() {
            out.push_str(&format!(
                " (at `{}`)",
                projections::text::escape(at.lines().next().unwrap_or(""))
            ));
        }
    }
    out.push_str(&format!(
        ": {}",
        projections::text::one_line(e.message())
            .chars()
            .take(300)
            .collect::<String>()
    ));
    out
}

/// Looks a dotted key up in a table.
fn lookup<'a>(t: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let (table, name) = key.split_once('.')?;
    t.get(table)?.as_table()?.get(name)
}

fn remove(t: &mut toml::Table, key: &str) {
    if let Some((table, name)) = key.split_once('.') {
        if let Some(sub) = t.get_mut(table).and_then(|v| v.as_table_mut()) {
            sub.remove(name);
        }
    }
}

/// The guarded settings a table sets to something other than their default.
fn guarded_set(t: &toml::Table) -> Vec<&'static Guarded> {
    GUARDED
        .iter()
        .filter(|g| lookup(t, g.key).is_some_and(|v| Some(v) != (g.default)().as_ref()))
        .collect()
}

/// `over` laid on `base`: tables merge key by key, anything else (and `policy.roles`, which
/// replaces the built-in roles whole) is replaced.
fn merge(base: &mut toml::Table, over: toml::Table, path: &str) {
    for (k, v) in over {
        let here = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if here != "policy.roles" => {
                merge(b, o, &here)
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// A guarded setting a project file sets, with its value there.
pub struct Ignored {
    /// The setting.
    pub guarded: &'static Guarded,
    raw: toml::Value,
}

impl Ignored {
    /// The value as TOML, escaped and cut to 60 characters (rendered only when shown: the hook
    /// names the keys alone).
    pub fn value(&self) -> String {
        let mut value = projections::text::escape(&self.raw.to_string());
        if value.chars().count() > 60 {
            value = value.chars().take(59).collect::<String>() + "…";
        }
        value
    }
}

/// The settings in force for a journal: the defaults, the user's own `config.toml` over them,
/// the project's over those (its guarded settings only when the user trusted the file).
pub struct Loaded {
    /// What applies.
    pub settings: Settings,
    /// One line per problem, each naming its file.
    pub problems: Vec<String>,
    /// The project file (`DIR/config.toml`).
    pub project: PathBuf,
    /// The user's file, when there is one.
    pub user: Option<PathBuf>,
    /// Guarded settings the project file sets that were ignored, and why.
    pub ignored: Vec<Ignored>,
    /// Why they were ignored (not trusted, or not fit to be trusted).
    pub ignored_because: Option<String>,
    /// Guarded settings the project file sets, honoured because the user trusted the file.
    pub trusted: Vec<Ignored>,
}

fn shown(t: &toml::Table, g: &'static Guarded) -> Ignored {
    Ignored {
        guarded: g,
        raw: lookup(t, g.key)
            .cloned()
            .unwrap_or(toml::Value::Boolean(false)),
    }
}

/// Settings from one table: its schema checked (the spanned error comes from its text), its
/// values validated, each problem naming the file.
fn typed(f: &ConfigFile, table: toml::Table, problems: &mut Vec<String>) -> Option<Settings> {
    match table.try_into::<Settings>() {
        Ok(s) => Some(s),
        Err(e) => {
            // The table lost the places: the text has them.
            let p = match toml::from_str::<Settings>(&f.text) {
                Err(e) => toml_problem(&f.text, &e),
                Ok(_) => format!("is not valid: {}", projections::text::one_line(e.message())),
            };
            problems.push(format!("{} {p}; using defaults", f.path.display()));
            None
        }
    }
}

impl Loaded {
    /// Loads the settings of the journal in `dir`.
    pub fn for_journal(dir: &Path) -> Loaded {
        Loaded::with_user_file(dir, crate::trust::user_config())
    }

    fn with_user_file(dir: &Path, user_file: Option<PathBuf>) -> Loaded {
        let project = dir.join("config.toml");
        let mut problems = Vec::new();
        let mut read = |path: &Path| match read_config(path) {
            Ok(f) => f,
            Err(p) => {
                problems.push(format!("{} {p}; using defaults", path.display()));
                None
            }
        };
        let user = user_file.as_deref().and_then(&mut read);
        let proj = read(&project);
        let mut out = Loaded {
            settings: Settings::default(),
            problems,
            project,
            user: None,
            ignored: Vec::new(),
            ignored_because: None,
            trusted: Vec::new(),
        };
        // The user's own file: all of it applies, but only if it is theirs alone.
        let user = user.and_then(|f| match crate::trust::unfit(&f.meta) {
            Some(why) => {
                out.problems
                    .push(format!("{} {why}; ignored", f.path.display()));
                None
            }
            None => Some(f),
        });
        let user_table = user
            .as_ref()
            .and_then(|f| typed(f, f.table.clone(), &mut out.problems).map(|_| f.table.clone()));
        out.user = user.as_ref().map(|f| f.path.clone());
        let mut proj = proj;
        let mut proj_table = proj.as_mut().and_then(|f| {
            let mut t = std::mem::take(&mut f.table);
            let guarded = guarded_set(&t);
            if !guarded.is_empty() {
                // Only here is the trust store read: a file that sets nothing guarded needs none.
                let refusal = crate::trust::unfit(&f.meta);
                if refusal.is_none()
                    && crate::trust::is_trusted(&f.path, f.text.as_bytes(), &f.meta)
                {
                    out.trusted = guarded.iter().map(|g| shown(&t, g)).collect();
                } else {
                    out.ignored = guarded.iter().map(|g| shown(&t, g)).collect();
                    out.ignored_because = Some(match refusal {
                        Some(why) => format!("the file {why}"),
                        None => "not trusted".into(),
                    });
                    for g in &guarded {
                        remove(&mut t, g.key);
                    }
                }
            }
            // Checked on its own, so a bad project file is ignored whole.
            match &user_table {
                None => Some(t),
                Some(_) => typed(f, t.clone(), &mut out.problems).map(|_| t),
            }
        });
        let settings = match (user_table, proj_table.take()) {
            (None, None) => Some(Settings::default()),
            (Some(t), None) => t.try_into::<Settings>().ok(),
            (None, Some(t)) => proj.as_ref().and_then(|f| typed(f, t, &mut out.problems)),
            (Some(mut base), Some(t)) => {
                merge(&mut base, t, "");
                base.try_into::<Settings>().ok()
            }
        };
        let mut s = settings.unwrap_or_default();
        let (policy, mut found) = s.policy.validated();
        s.policy = policy;
        found.extend(s.hook.clamp());
        let named = match (&out.user, &proj) {
            (Some(u), Some(p)) => format!("{} + {}", u.display(), p.path.display()),
            (Some(u), None) => u.display().to_string(),
            (None, _) => out.project.display().to_string(),
        };
        out.problems
            .extend(found.into_iter().map(|p| format!("{named}: {p}")));
        out.settings = s;
        out
    }

    /// The one line saying which project settings were ignored, when any were.
    pub fn ignored_line(&self) -> Option<String> {
        let why = self.ignored_because.as_deref()?;
        let keys: Vec<&str> = self.ignored.iter().map(|i| i.guarded.key).collect();
        Some(format!(
            "{}: ignored {} ({why}: settings that run programs, stop agents or write outside the journal apply only from your own config or a project config you trusted with `hookjournal trust`)",
            self.project.display(),
            keys.join(", ")
        ))
    }

    /// Every line to report: the problems, then the ignored settings.
    pub fn warning(&self) -> Option<String> {
        let lines: Vec<String> = self
            .problems
            .iter()
            .cloned()
            .chain(self.ignored_line())
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

/// A project file as `hookjournal trust` sees it before trusting it: read as a hook reads it,
/// the running user's alone, valid. Returns its text and the guarded settings it sets.
pub fn for_trust(path: &Path) -> Result<(String, Vec<Ignored>), String> {
    let f = read_config(path)
        .map_err(|p| format!("{} {p}", path.display()))?
        .ok_or_else(|| format!("there is no {}: nothing to trust", path.display()))?;
    if let Some(why) = crate::trust::unfit(&f.meta) {
        return Err(format!("{} {why}", path.display()));
    }
    let mut problems = Vec::new();
    if let Some(p) = typed(&f, f.table.clone(), &mut problems)
        .is_none()
        .then(|| problems.join("; "))
    {
        return Err(p.trim_end_matches("; using defaults").to_string());
    }
    let shown = guarded_set(&f.table)
        .into_iter()
        .map(|g| shown(&f.table, g))
        .collect();
    Ok((f.text, shown))
}

impl Settings {
    /// The settings in force for the journal in `dir` (see [`Loaded`]) and, when anything was
    /// refused or ignored, the lines saying so (one per problem, each naming its file).
    pub fn load(dir: &Path) -> (Settings, Option<String>) {
        let l = Loaded::for_journal(dir);
        let w = l.warning();
        (l.settings, w)
    }

    /// The embedded prices with this configuration's overrides.
    pub fn pricing(&self) -> PricingTable {
        let mut t = PricingTable::default();
        for (name, price) in &self.pricing {
            t = t.with_override(name, price.clone());
        }
        t
    }
}

/// `Settings::load` for CLI commands: a problem is one line on stderr and the defaults are used.
pub fn load_reporting(dir: &Path) -> Settings {
    report(Loaded::for_journal(dir)).settings
}

/// Prints a load's problems and ignored settings on stderr, one line each.
pub fn report(l: Loaded) -> Loaded {
    for line in l.warning().iter().flat_map(|w| w.lines()) {
        eprintln!("hookjournal: {line}");
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(project: Option<&str>, user: Option<&str>) -> (tempfile::TempDir, Loaded) {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("j");
        std::fs::create_dir_all(&j).unwrap();
        if let Some(p) = project {
            std::fs::write(j.join("config.toml"), p).unwrap();
        }
        let user_file = d.path().join("user.toml");
        if let Some(u) = user {
            std::fs::write(&user_file, u).unwrap();
        }
        let l = Loaded::with_user_file(&j, Some(user_file));
        (d, l)
    }

    #[test]
    fn guarded_keys_are_documented() {
        let doc = include_str!("../../docs/hooks.md");
        for g in GUARDED {
            let name = g.key.split_once('.').unwrap().1;
            assert!(
                doc.contains(&format!("`{}`", g.key)) || doc.contains(name),
                "{}",
                g.key
            );
        }
    }

    #[test]
    fn an_untrusted_project_file_keeps_its_harmless_settings_and_loses_the_guarded_ones() {
        let (_d, l) = load(
            Some("[policy]\nreminder_threshold = 3\ntask_command = \"./x\"\nloop_mode = true\n[mirror]\nsession_log = \"../out\"\n"),
            None,
        );
        assert_eq!(l.settings.policy.reminder_threshold, 3);
        assert_eq!(l.settings.policy.task_command, None);
        assert!(!l.settings.policy.loop_mode);
        assert!(l.settings.mirror.session_log.is_none());
        let keys: Vec<&str> = l.ignored.iter().map(|i| i.guarded.key).collect();
        assert_eq!(
            keys,
            [
                "policy.task_command",
                "policy.loop_mode",
                "mirror.session_log"
            ]
        );
        assert!(l.ignored_line().unwrap().contains("not trusted"));
    }

    #[test]
    fn a_guarded_setting_at_its_default_needs_no_trust() {
        let (_d, l) = load(
            Some("[policy]\nloop_agent_env = \"RALPH_AGENT_ID\"\nloop_mode = false\ntask_command_env = \"RALPH_TASK_SCRIPT\"\n"),
            None,
        );
        assert!(l.ignored.is_empty());
        assert!(l.warning().is_none());
    }

    #[test]
    fn the_users_own_file_applies_whole_and_the_project_lays_over_it() {
        let (_d, l) = load(
            Some("[policy]\nreminder_threshold = 3\ntask_command = \"./planted\"\n"),
            Some("[policy]\nreminder_threshold = 7\nreminder_cooldown = 4\ntask_command = \"/home/me/task\"\n[mirror]\nsession_log = \"/home/me/log.jsonl\"\n"),
        );
        let p = &l.settings.policy;
        assert_eq!(
            p.reminder_threshold, 3,
            "the project's harmless setting wins"
        );
        assert_eq!(
            p.reminder_cooldown, 4,
            "the user's stays where the project is silent"
        );
        assert_eq!(
            p.task_command.as_deref(),
            Some("/home/me/task"),
            "never the planted one"
        );
        assert_eq!(
            l.settings.mirror.session_log.as_deref(),
            Some(Path::new("/home/me/log.jsonl"))
        );
        assert_eq!(l.ignored.len(), 1);
    }

    #[test]
    fn a_bad_project_file_is_ignored_whole_and_the_users_still_applies() {
        let (_d, l) = load(
            Some("[policy]\nreminder_treshold = 3\n"),
            Some("[policy]\nreminder_threshold = 7\n"),
        );
        assert_eq!(l.settings.policy.reminder_threshold, 7);
        assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
        assert!(l.problems[0].contains("line 2, column 1 (at `reminder_treshold`)"));
    }

    #[test]
    fn special_files_are_not_read_and_links_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().join("id_ed25519");
        std::fs::write(
            &secret,
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
        )
        .unwrap();
        type Make<'a> = Box<dyn Fn(&Path) + 'a>;
        let cases: Vec<(&str, Make, &str)> = vec![
            (
                "link",
                Box::new(|p: &Path| std::os::unix::fs::symlink(&secret, p).unwrap()),
                "is a symbolic link, which is not followed",
            ),
            (
                "zero",
                Box::new(|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
                "is a symbolic link, which is not followed",
            ),
            (
                "fifo",
                Box::new(|p: &Path| {
                    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }),
                "is a FIFO, not a regular file",
            ),
            (
                "dir",
                Box::new(|p: &Path| std::fs::create_dir(p).unwrap()),
                "is a directory, not a regular file",
            ),
            (
                "big",
                Box::new(|p: &Path| {
                    std::fs::write(p, "#".repeat(CONFIG_CAP as usize + 1)).unwrap()
                }),
                "is larger than 256 KiB",
            ),
        ];
        for (name, make, want) in cases {
            let p = d.path().join(name);
            make(&p);
            let t = std::time::Instant::now();
            let err = read_config(&p)
                .err()
                .unwrap_or_else(|| panic!("{name} was read"));
            assert_eq!(err, want, "{name}");
            assert!(t.elapsed() < std::time::Duration::from_secs(1), "{name}");
        }
    }

    #[test]
    fn a_parse_error_quotes_at_most_a_short_escaped_excerpt() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        let key = format!("\u{1b}[2J{}", "k".repeat(200));
        std::fs::write(&p, format!("-----BEGIN PRIVATE KEY-----\n{key}\n")).unwrap();
        let err = read_config(&p).err().unwrap();
        assert!(!err.contains("BEGIN PRIVATE KEY-----\n"), "{err}");
        assert!(!err.contains('\u{1b}') && !err.contains('\n'), "{err}");
        assert!(err.len() < 500, "{err}");
    }
}
