//! `hookjournal install` / `uninstall`: registers the universal handler in an agent's settings file,
//! and takes it out again. What differs between agents lives in one table (`HOSTS`); the edits are
//! functions over the settings document (`doc`: the file's own text, comments and all, edited in
//! place); the commands only read, diff and write files.

use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use projections::host::{HookFileFormat, Host};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod amp;
mod cline;
mod codex;
mod copilot_trust;
mod doc;
mod edit;
mod kilo;
mod kimi;
mod openclaw;
mod opencode;
mod pi;
pub mod program;
mod shim;
mod vibe;

use self::codex::{trust_codex_hooks, untrust_codex_hooks};
use self::copilot_trust::copilot_trust_note;
use self::doc::Doc;
use self::edit::*;
use engine::codex_trust;

/// `install` flags.
#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// Which settings file, and whether to only show the change.
    #[command(flatten)]
    pub target: Target,
    /// Also register `hookjournal statusline` as Claude Code's status line. One you already have
    /// is kept and chained: ours first, then yours.
    #[arg(long)]
    pub statusline: bool,
    /// With --statusline: record Claude Code's figures but show only your own status line.
    #[arg(long, requires = "statusline")]
    pub statusline_record_only: bool,
}

/// `uninstall` flags.
#[derive(clap::Args, Debug)]
pub struct UninstallArgs {
    /// Which settings file, and whether to only show the change.
    #[command(flatten)]
    pub target: Target,
}

/// Which settings file to edit, and whether to only show the change.
#[derive(clap::Args, Debug)]
pub struct Target {
    /// Which settings file.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// The agent whose settings to edit.
    #[arg(long, value_parser = host_values(), default_value = "claude")]
    pub host: Host,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Whose settings: the project's, the developer's own for this project, or the user's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The project's shared settings
    Project,
    /// Claude Code's .claude/settings.local.json (not committed)
    Local,
    /// Your settings for every project
    User,
}

/// The `--host` values: every host of the registry (`projections::hosts::HOSTS`), with the line
/// its module gives for `--help`.
fn host_values() -> impl clap::builder::TypedValueParser<Value = Host> {
    let values = projections::hosts::HOSTS
        .iter()
        .map(|m| clap::builder::PossibleValue::new(m.facts.name).help(m.install_help));
    let parser = clap::builder::PossibleValuesParser::new(values);
    clap::builder::TypedValueParser::map(parser, |name: String| Host::from_name(&name))
}

/// How install writes a host's hooks, from its install facts (`HookFileFormat`): a settings file
/// it edits (`edit`), or files of hookjournal's own, each written by its host's writer here.
enum Writer {
    Settings,
    Shim(&'static shim::ShimHost),
    OpenClawPlugin,
    ScriptPerEvent,
    KimiToml,
    VibeToml,
}

/// The hosts whose hooks are a shim file of hookjournal's own, by the registry's name.
const SHIM_WRITERS: [&shim::ShimHost; 4] = [&opencode::HOST, &kilo::HOST, &pi::HOST, &amp::HOST];

fn writer(host: &Host) -> Writer {
    match host.facts().install.map(|i| i.format) {
        Some(HookFileFormat::ShimModule) => SHIM_WRITERS
            .into_iter()
            .find(|s| s.facts.name == host.as_str())
            .map_or(Writer::Settings, Writer::Shim),
        Some(HookFileFormat::PluginDir) => Writer::OpenClawPlugin,
        Some(HookFileFormat::ScriptPerEvent) => Writer::ScriptPerEvent,
        Some(HookFileFormat::KimiToml) => Writer::KimiToml,
        Some(HookFileFormat::VibeToml) => Writer::VibeToml,
        _ => Writer::Settings,
    }
}

/// One hook event to register: its name, with the time the host may give the handler and whether
/// it takes a tool matcher.
struct Event {
    name: &'static str,
    reg: projections::host::Registration,
}

/// What install/uninstall need of one agent, read from the host facts table
/// (`projections::host`), which the adapters, the policy and docs/hooks.md read too.
struct HostFacts {
    host: Host,
    /// The `--host` value, also passed on to `hookjournal hook --host`.
    name: &'static str,
    product: &'static str,
    /// Where the settings live, the timeout unit, named handlers, the next step.
    install: &'static projections::host::InstallFacts,
    /// The events registered, in order.
    events: Vec<Event>,
}

fn facts(host: &Host) -> HostFacts {
    let table = host.facts();
    HostFacts {
        host: host.clone(),
        name: table.name,
        product: table.product,
        install: table
            .install
            .as_ref()
            .expect("every host install takes has its install facts"),
        events: table
            .registered()
            .map(|(e, reg)| Event { name: e.name, reg })
            .collect(),
    }
}

/// The name hookjournal's own entries are recognised by (plus the `hook` subcommand after it).
const BINARY_NAME: &str = "hookjournal";

/// `install` for the hosts whose hooks are files of hookjournal's own (a plugin, a shim,
/// scripts) or a TOML file of the host's own (Kimi's, Vibe's), by their writer; `None`: a
/// settings file `run_install` edits.
fn install_own_file(cmd: &CommandHelper, t: &Target) -> Option<anyhow::Result<ExitCode>> {
    Some(match writer(&t.host) {
        Writer::OpenClawPlugin => openclaw::install(cmd, t.scope, t.dry_run),
        Writer::Shim(shim) => shim.install(cmd, t.scope, t.dry_run),
        Writer::ScriptPerEvent => cline::install(cmd, t.scope, t.dry_run),
        Writer::KimiToml => kimi::install(cmd, t.scope, t.dry_run),
        Writer::VibeToml => vibe::install(cmd, t.scope, t.dry_run),
        Writer::Settings => return None,
    })
}

/// Registers the hook in a host's settings (and the status line), creating the journal.
pub fn run_install(cmd: &CommandHelper, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let t = args.target;
    if args.statusline && t.host != Host::Claude {
        eprintln!(
            "hookjournal: --statusline is Claude Code's status line; {} has none",
            t.host.facts().product
        );
        return Ok(ExitCode::from(2));
    }
    if let Some(done) = install_own_file(cmd, &t) {
        return done;
    }
    let facts = &facts(&t.host);
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let Some(path) = settings_path_from_env(facts, t.scope, &project)? else {
        return Ok(local_scope_usage_error(facts));
    };
    if t.host == Host::Claude {
        if let Some(said) = claude_plugin_registers(&project) {
            println!("{said}");
            return Ok(ExitCode::SUCCESS);
        }
    }
    // An explicit --journal goes into the command, or the hook would look for the journal elsewhere.
    let explicit_journal = cmd.journal_arg().map(|j| absolute(&cwd, j));
    let program = program::for_this_binary()?;
    let exe = &program.path;
    let command = hook_command(exe, facts.name, explicit_journal.as_deref())?;

    let before = read_settings(&path)?;
    let before_text = before.as_ref().map(|doc| doc.text().to_string());
    let mut doc = match before {
        Some(doc) => doc,
        None => Doc::parse("").map_err(|e| anyhow!(e))?,
    };
    install_handler(&mut doc, facts, &command)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    let mut statusline = None;
    if args.statusline {
        let base = statusline_base(exe, explicit_journal.as_deref())?;
        statusline = Some(
            install_statusline(&mut doc, &base, args.statusline_record_only)
                .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?,
        );
    }
    let after = doc.text().to_string();
    let before_text = before_text.as_deref();

    // User scope serves every project: each gets its own journal when its first event arrives.
    let journal_dir = match (explicit_journal, t.scope) {
        (Some(j), _) => Some(j),
        (None, Scope::User) => None,
        (None, _) => Some(project.join(crate::locate::DIR_NAME)),
    };

    if t.scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    let change = Change {
        path: &path,
        before: before_text,
        after: &after,
        journal_dir: journal_dir.as_deref(),
    };
    if t.dry_run {
        change.show_dry_run(&program.notes);
        return Ok(ExitCode::SUCCESS);
    }
    let journal_note = match &journal_dir {
        Some(dir) => create_journal(dir)?,
        None => None,
    };
    change.write(facts)?;
    trust_after_write(facts, t.scope, &path, &after, &command, &project)?;
    print_command(facts, &command, &program.notes, statusline.as_deref());
    match &journal_dir {
        Some(dir) => println!("Journal: {}", dir.display()),
        None => println!("Journal: .hookjournal/ in each project, created by its first event."),
    }
    if let Some(note) = journal_note {
        println!("Note: {note}");
    }
    for warning in warnings(facts, t.scope, &doc) {
        println!("Note: {warning}");
    }
    if let Some(overlap) = claude_settings_overlap(facts, &project, t.scope) {
        println!("Note: {overlap}");
    }
    if let Some(shadow) = user_file_shadowed(facts, t.scope, &cwd) {
        println!("Note: {shadow}");
    }
    println!("Next: {}", next_step(facts, t.scope, &project, &cwd));
    Ok(ExitCode::SUCCESS)
}

/// The command registered, with the notes on the program it runs and the status line.
fn print_command(facts: &HostFacts, command: &str, notes: &[String], statusline: Option<&str>) {
    // Copilot CLI's camelCase payloads name no event: the command names it (`handler_entry`).
    let event_arg = if facts.events.iter().any(|e| e.reg.event_arg) {
        " --event EVENT (where the payload names none)"
    } else {
        ""
    };
    println!("Command: {command}{event_arg}");
    for note in notes {
        println!("Note: {note}");
    }
    if let Some(line) = statusline {
        println!("Status line: {line}");
    }
}

/// What Claude Code's enabled hookjournal plugin means for an install into settings: nothing is
/// registered (every event would be journaled twice). `None` when no such plugin is enabled.
fn claude_plugin_registers(project: &Path) -> Option<String> {
    let files = engine::registration::claude_settings_files(Some(project));
    let (file, plugin) = engine::registration::plugin_enabled_in(Some(project), &files)?;
    Some(format!(
        "Claude Code's {plugin} plugin is enabled in {}: it already runs the hook for every event, so nothing is registered here (every event would be journaled twice). To register in settings instead: `claude plugin uninstall {plugin}`, then `hookjournal install` again.",
        file.display()
    ))
}

/// The host's next step after an install. Hosts read project settings where they start: from a
/// subdirectory, that is the project.
fn next_step(facts: &HostFacts, scope: Scope, project: &Path, cwd: &Path) -> String {
    if project != cwd && scope != Scope::User {
        facts
            .install
            .next_step
            .replacen(" here", &format!(" in {}", project.display()), 1)
    } else {
        facts.install.next_step.to_string()
    }
}

/// What a host needs after its hooks are written to be run at all: Codex's hooks trusted in its
/// config, Copilot CLI's folder trust stated.
fn trust_after_write(
    facts: &HostFacts,
    scope: Scope,
    path: &Path,
    after: &str,
    command: &str,
    project: &Path,
) -> anyhow::Result<()> {
    if facts.host.facts().trust == projections::host::Trust::TrustedHooks {
        trust_codex_hooks(path, after, command, scope)?;
    }
    if facts.host == Host::Copilot && scope == Scope::Project {
        copilot_trust_note(project)?;
    }
    Ok(())
}

/// The journal a shim or hook script of hookjournal's own names (OpenCode, pi, Cline): an explicit
/// one (`--journal`, `$HOOKJOURNAL_DIR`), else the project's (user scope: none, each project's
/// own, found from where the host runs).
fn shim_journal(cmd: &CommandHelper, scope: Scope, cwd: &Path, project: &Path) -> Option<PathBuf> {
    let explicit = cmd
        .journal_arg()
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os("HOOKJOURNAL_DIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .map(|j| absolute(cwd, &j));
    match (explicit, scope) {
        (Some(j), _) => Some(j),
        (None, Scope::User) => None,
        (None, _) => Some(project.join(crate::locate::DIR_NAME)),
    }
}

/// The end of a dry run's report: the journal it would create, the notes on the program, and
/// that nothing was written.
fn dry_run_tail(journal: Option<&Path>, notes: &[String]) {
    if let Some(j) = journal.filter(|j| !j.exists()) {
        println!("Would create the journal {}.", j.display());
    }
    for note in notes {
        println!("Note: {note}");
    }
    println!("Dry run: nothing written.");
}

/// Copilot CLI and Cursor also run the hooks of `.claude/settings*.json` (Cursor when its
/// third-party hooks are on): with both installs in a project, each event those hooks see is
/// journaled twice. Says so, for either install.
fn claude_settings_overlap(facts: &HostFacts, project: &Path, scope: Scope) -> Option<String> {
    if scope == Scope::User {
        return None;
    }
    let ours = |path: &Path| {
        read_settings(path)
            .ok()
            .flatten()
            .and_then(|mut doc| remove_handlers(&mut doc).ok())
            .is_some_and(|n| n > 0)
    };
    let claude = &self::facts(&Host::Claude);
    let claude_files: Vec<PathBuf> = [Scope::Project, Scope::Local]
        .into_iter()
        .filter_map(|s| settings_path(claude, s, project, None))
        .filter(|p| ours(p))
        .collect();
    let others: Vec<(&str, PathBuf)> = [Host::Copilot, Host::Cursor]
        .into_iter()
        .map(|h| self::facts(&h))
        .filter_map(|f| Some((f.product, settings_path(&f, Scope::Project, project, None)?)))
        .filter(|(_, p)| ours(p))
        .collect();
    let names = |files: &[PathBuf]| {
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match facts.host {
        Host::Copilot | Host::Cursor if !claude_files.is_empty() => Some(format!(
            "{} also runs the hookjournal hooks of {}: each event it sends both is journaled \
             twice. Keep one: `hookjournal uninstall --host claude` (or --scope local), or this \
             install.",
            facts.product,
            names(&claude_files)
        )),
        Host::Claude if !others.is_empty() => {
            Some(format!(
            "{} also run{} the hookjournal hooks of this file, besides their own ({}): each event \
             they send both is journaled twice.",
            others.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(" and "),
            if others.len() == 1 { "s" } else { "" },
            names(&others.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>())
        ))
        }
        _ => None,
    }
}

/// OpenHands reads the first hooks file that exists, the work dir's before the user's: a user
/// install made where the work dir has its own file never runs there. Says so.
fn user_file_shadowed(facts: &HostFacts, scope: Scope, cwd: &Path) -> Option<String> {
    if scope != Scope::User || facts.install.format != HookFileFormat::OnlyHooks {
        return None;
    }
    let project = settings_path(facts, Scope::Project, cwd, None)?;
    project.exists().then(|| {
        format!(
            "{} reads {} here, and then not your user file: its hooks do not run in this \
             folder (`hookjournal install --host {}` registers them there).",
            facts.product,
            project.display(),
            facts.name
        )
    })
}

/// A settings file before and after `install`, and the journal it will create.
struct Change<'a> {
    path: &'a Path,
    before: Option<&'a str>,
    after: &'a str,
    journal_dir: Option<&'a Path>,
}

impl Change<'_> {
    /// `--dry-run`: the diff, and what would be created; nothing written.
    fn show_dry_run(&self, notes: &[String]) {
        print!("{}", unified_diff(self.path, self.before, self.after));
        if self.before == Some(self.after) {
            println!(
                "{} already registers hookjournal; nothing would change.",
                self.path.display()
            );
        }
        if let Some(dir) = self.journal_dir.filter(|d| !d.exists()) {
            println!("Would create the journal {}.", dir.display());
        }
        for note in notes {
            println!("Note: {note}");
        }
        println!("Dry run: nothing written.");
    }

    /// Writes the file (unless it already says this) and says what was registered.
    fn write(&self, facts: &HostFacts) -> anyhow::Result<()> {
        if self.before == Some(self.after) {
            println!(
                "{} already registers hookjournal for {}; nothing changed.",
                self.path.display(),
                facts.product
            );
            return Ok(());
        }
        let backup = write_settings(self.path, self.after, self.before.is_some())?;
        println!(
            "Registered hookjournal for {} {} events in {}{}.",
            facts.events.len(),
            facts.product,
            self.path.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
        Ok(())
    }
}

/// Removes hookjournal's own entries from a host's settings.
pub fn run_uninstall(_cmd: &CommandHelper, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let t = args.target;
    // The hosts whose hooks are files of hookjournal's own (a plugin, a shim, scripts).
    match writer(&t.host) {
        Writer::OpenClawPlugin => return openclaw::uninstall(t.scope, t.dry_run),
        Writer::Shim(shim) => return shim.uninstall(t.scope, t.dry_run),
        Writer::ScriptPerEvent => return cline::uninstall(t.scope, t.dry_run),
        Writer::KimiToml => return kimi::uninstall(t.scope, t.dry_run),
        Writer::VibeToml => return vibe::uninstall(t.scope, t.dry_run),
        Writer::Settings => {}
    }
    let facts = &facts(&t.host);
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let Some(path) = settings_path_from_env(facts, t.scope, &project)? else {
        return Ok(local_scope_usage_error(facts));
    };
    if t.scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    let Some(mut doc) = read_settings(&path)? else {
        println!("{} does not exist; nothing to remove.", path.display());
        return Ok(ExitCode::SUCCESS);
    };
    let before_text = doc.text().to_string();
    let removed = remove_handlers(&mut doc)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    let restored = remove_statusline(&mut doc)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    if let Some(r) = &restored {
        println!("{r}");
    }
    if removed == 0 && restored.is_none() {
        println!(
            "{} has no hookjournal hooks; nothing to remove.",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let after = doc.text().to_string();
    let untrust =
        if facts.host.facts().trust == projections::host::Trust::TrustedHooks && removed > 0 {
            untrust_codex_hooks(&path, &before_text)?
        } else {
            None
        };
    // A Copilot CLI or Cursor file that held only our hooks goes, as it came.
    let emptied = facts.install.format.versioned() && only_version(&doc)
        || facts.install.format == HookFileFormat::KiroAgent && edit::only_kiro_agent(&doc);
    if t.dry_run {
        if emptied {
            print!("{}", unified_diff(&path, Some(&before_text), ""));
            println!(
                "Would remove {}: it holds nothing but hookjournal's hooks.",
                path.display()
            );
            println!("Dry run: nothing written.");
            return Ok(ExitCode::SUCCESS);
        }
        print!("{}", unified_diff(&path, Some(&before_text), &after));
        if let Some(u) = &untrust {
            print!("{}", unified_diff(&u.config, Some(&u.before), &u.after));
        }
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    if emptied {
        remove_file(&path)?;
        println!(
            "Removed {} (it held only hookjournal's {removed} hook{}); the journal itself is untouched.",
            path.display(),
            if removed == 1 { "" } else { "s" },
        );
        return Ok(ExitCode::SUCCESS);
    }
    let backup = write_settings(&path, &after, true)?;
    println!(
        "Removed {removed} hookjournal hook{} from {}{}; the journal itself is untouched.",
        if removed == 1 { "" } else { "s" },
        path.display(),
        backup
            .map(|b| format!(" (previous file kept as {})", b.display()))
            .unwrap_or_default()
    );
    if let Some(u) = untrust {
        let backup = write_settings(&u.config, &u.after, true)?;
        println!(
            "Untrusted: removed the {} [hooks.state] entr{} install wrote for them from {}{}; \
             the rest of it is unchanged.",
            u.removed,
            if u.removed == 1 { "y" } else { "ies" },
            u.config.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn local_scope_usage_error(facts: &HostFacts) -> ExitCode {
    eprintln!(
        "hookjournal: --scope local is Claude Code's .claude/settings.local.json; {} has project and user scopes only",
        facts.product
    );
    ExitCode::from(2)
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

// ---------------------------------------------------------------------------------------------
// Where the settings file is.

fn settings_path_from_env(
    facts: &HostFacts,
    scope: Scope,
    cwd: &Path,
) -> anyhow::Result<Option<PathBuf>> {
    let user_dir = if scope == Scope::User {
        let moved = facts
            .install
            .config_dir_env
            .and_then(std::env::var_os)
            .filter(|v| !v.is_empty());
        match moved {
            Some(dir) => Some(PathBuf::from(dir)),
            None => {
                let home = std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .ok_or_else(|| anyhow!("$HOME is not set; cannot find the user settings"))?;
                Some(Path::new(&home).join(facts.install.user_config_dir))
            }
        }
    } else {
        None
    };
    Ok(settings_path(facts, scope, cwd, user_dir.as_deref()))
}

/// The settings file for `scope`; `None` when the host has no such scope.
fn settings_path(
    facts: &HostFacts,
    scope: Scope,
    project: &Path,
    user_dir: Option<&Path>,
) -> Option<PathBuf> {
    match scope {
        Scope::Project => Some(
            project
                .join(facts.install.config_dir)
                .join(facts.install.project_file),
        ),
        Scope::Local => facts
            .install
            .local_file
            .map(|f| project.join(facts.install.config_dir).join(f)),
        Scope::User => user_dir.map(|d| d.join(facts.install.user_file)),
    }
}

// ---------------------------------------------------------------------------------------------
// The command we register, and how we recognise it again.

/// `"<abs path>" hook --host <host> [--journal "<dir>"]`, quoted for the `sh -c` the hosts run.
fn hook_command(exe: &Path, host: &str, journal: Option<&Path>) -> anyhow::Result<String> {
    let mut cmd = format!("{} hook --host {host}", shell_quote(exe)?);
    if let Some(dir) = journal {
        cmd.push_str(" --journal ");
        cmd.push_str(&shell_quote(dir)?);
    }
    Ok(cmd)
}

/// Double-quotes a path for POSIX sh, escaping the four characters that stay special inside.
fn shell_quote(p: &Path) -> anyhow::Result<String> {
    let s = p.to_str().ok_or_else(|| {
        anyhow!(
            "{} is not valid UTF-8; settings files are JSON text",
            p.display()
        )
    })?;
    Ok(quote_str(s))
}

/// `"<abs path>" statusline [--journal "<dir>"]`.
fn statusline_base(exe: &Path, journal: Option<&Path>) -> anyhow::Result<String> {
    let mut cmd = format!("{} statusline", shell_quote(exe)?);
    if let Some(dir) = journal {
        cmd.push_str(" --journal ");
        cmd.push_str(&shell_quote(dir)?);
    }
    Ok(cmd)
}

// ---------------------------------------------------------------------------------------------
// Files, through the door (`engine::fs::door`).
//
// A project is ground a cloned repository controls: its settings, their backups and every
// directory on the way beneath the project root are reached with no link followed (one is
// refused in one line naming it; nothing is written). The user's home is the user's own: a link
// the user owns to a file the user owns (a dotfile manager's) is followed and said so, but never
// one at a backup or temp name. Every read is bounded and never blocks on a FIFO or a device.

/// Where a file install reads or writes is: beneath the project (the project root's handle), or
/// in the user's own home and config directories.
enum Ground {
    Project { root: PathBuf, rel: PathBuf },
    Home,
}

/// The ground `path` is on: beneath the project install works in (never the home directory
/// itself), else the user's own.
fn ground_of(path: &Path) -> Ground {
    let Ok(cwd) = std::env::current_dir() else {
        return Ground::Home;
    };
    let (root, _) = project_root(&cwd);
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    if home.is_some_and(|h| Path::new(&h) == root) {
        return Ground::Home;
    }
    match path.strip_prefix(&root) {
        Ok(rel) if !rel.as_os_str().is_empty() => Ground::Project {
            rel: rel.to_path_buf(),
            root,
        },
        _ => Ground::Home,
    }
}

/// The one-line error of a refused or failed file operation: the door's own refusals name the
/// file already.
fn file_error(path: &Path, doing: &str, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::Other {
        anyhow!("{e}; nothing written")
    } else {
        anyhow!("{doing} {}: {e}", path.display())
    }
}

/// A file's text, `None` when it does not exist: bounded (`engine::fs::door::READ_CAP`), a regular
/// file only, never blocking; beneath the project, through no link.
fn read_if_present(path: &Path) -> anyhow::Result<Option<String>> {
    let bytes = match ground_of(path) {
        Ground::Project { root, rel } => engine::fs::door::Dir::open(&root)
            .and_then(|d| d.read_if_present(&rel, engine::fs::door::READ_CAP)),
        Ground::Home => engine::fs::door::read_following(path, engine::fs::door::READ_CAP),
    }
    .map_err(|e| file_error(path, "reading", e))?;
    Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// The name of `path`'s backup (`<file>.bak`).
fn backup_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut bak = name.to_os_string();
    bak.push(".bak");
    bak
}

/// The directory handle a file is written through, its name there, and the path it has.
struct WritePlace {
    dir: engine::fs::door::Dir,
    name: std::ffi::OsString,
    real: PathBuf,
    /// The link in the home it was reached through, if any.
    via: Option<PathBuf>,
}

/// Where writing `path` lands: beneath the project through no link (missing directories made
/// beneath the root's handle); in the home, the file itself, or the target of a link the user
/// owns to a regular file the user owns (said so).
fn write_place(path: &Path) -> anyhow::Result<WritePlace> {
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{} names no file", path.display()))?
        .to_os_string();
    let open_err = |e| file_error(path, "opening the directory of", e);
    match ground_of(path) {
        Ground::Project { root, rel } => {
            let top = engine::fs::door::Dir::open(&root).map_err(open_err)?;
            let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(parent) => top.create_dir_all(parent, 0o755).map_err(open_err)?,
                None => top,
            };
            Ok(WritePlace {
                dir,
                name,
                real: path.to_path_buf(),
                via: None,
            })
        }
        Ground::Home => {
            let parent = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            engine::fs::door::create_dirs(parent, 0o755)
                .with_context(|| format!("creating {}", parent.display()))?;
            let dir = engine::fs::door::Dir::open(parent).map_err(open_err)?;
            let st = dir.lstat(Path::new(&name)).map_err(open_err)?;
            if st.is_none_or(|st| st.st_mode & libc::S_IFMT != libc::S_IFLNK) {
                return Ok(WritePlace {
                    dir,
                    name,
                    real: path.to_path_buf(),
                    via: None,
                });
            }
            // A dotfile manager's link: followed when the user owns it and what it points at.
            let real = engine::fs::door::own_link_target(path).map_err(open_err)?;
            let dir = engine::fs::door::Dir::open(real.parent().unwrap_or(Path::new("/")))
                .map_err(open_err)?;
            let name = real.file_name().unwrap_or_default().to_os_string();
            Ok(WritePlace {
                dir,
                name,
                real,
                via: Some(path.to_path_buf()),
            })
        }
    }
}

/// Refuses a backup name that is a link or anything but a regular file (a repository can commit
/// `settings.json.bak -> ~/.bashrc`): checked before anything is written.
fn check_backup_name(
    dir: &engine::fs::door::Dir,
    name: &std::ffi::OsStr,
    shown: &Path,
) -> anyhow::Result<()> {
    let bak = backup_name(name);
    match dir.lstat(Path::new(&bak)) {
        Ok(Some(st)) if st.st_mode & libc::S_IFMT != libc::S_IFREG => bail!(
            "{} is {}, which is never written through; nothing written",
            shown.with_file_name(&bak).display(),
            if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
                "a symbolic link"
            } else {
                "not a regular file"
            }
        ),
        Ok(_) => Ok(()),
        Err(e) => Err(file_error(shown, "checking the backup of", e)),
    }
}

/// Writes `text` to `path` atomically (a new file beside it, synced, renamed over it inside the
/// same directory handle), first keeping the previous file as `<file>.bak` the same way (a new
/// file renamed into place: whatever was at that name is replaced, never written through).
/// Returns the backup's path.
fn write_settings(path: &Path, text: &str, had_previous: bool) -> anyhow::Result<Option<PathBuf>> {
    write_file(path, text, had_previous, None)
}

/// `write_settings` with the new file's mode (`None`: the previous file's, else 0644).
fn write_file(
    path: &Path,
    text: &str,
    had_previous: bool,
    mode: Option<u32>,
) -> anyhow::Result<Option<PathBuf>> {
    let WritePlace {
        dir,
        name,
        real,
        via,
    } = write_place(path)?;
    let name = Path::new(&name);
    let current = dir
        .lstat(name)
        .map_err(|e| file_error(&real, "reading", e))?
        .filter(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG);
    let old_mode = current.map(|st| st.st_mode & 0o7777);
    let mut backup = None;
    if had_previous {
        check_backup_name(&dir, name.as_os_str(), &real)?;
        let before = dir
            .read(name, engine::fs::door::READ_CAP)
            .map_err(|e| file_error(&real, "backing up", e))?;
        let bak = backup_name(name.as_os_str());
        dir.replace(Path::new(&bak), old_mode.unwrap_or(0o600), &before)
            .map_err(|e| file_error(&real, "backing up", e))?;
        backup = Some(real.with_file_name(bak));
    }
    dir.replace(name, mode.or(old_mode).unwrap_or(0o644), text.as_bytes())
        .map_err(|e| file_error(&real, "replacing", e))?;
    if let Some(link) = via {
        println!(
            "Note: {} is a link of yours; its target {} was written.",
            link.display(),
            real.display()
        );
    }
    Ok(backup)
}

/// The handle of `path`'s directory: beneath the project through no link, in the home as named.
fn parent_dir(path: &Path) -> std::io::Result<engine::fs::door::Dir> {
    match ground_of(path) {
        Ground::Project { root, rel } => engine::fs::door::Dir::open(&root).and_then(|d| match rel
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            Some(p) => d.open_dir(p),
            None => Ok(d),
        }),
        Ground::Home => engine::fs::door::Dir::open(path.parent().unwrap_or(Path::new("."))),
    }
}

/// Removes the file `path` (a link is removed itself, never what it points at); beneath the
/// project, through no link on the way.
fn remove_file(path: &Path) -> anyhow::Result<()> {
    let name = path.file_name().unwrap_or_default();
    parent_dir(path)
        .and_then(|d| d.remove_file(Path::new(name)))
        .map_err(|e| file_error(path, "removing", e))
}

/// Removes the directory `path` if it is empty; whether it went.
fn remove_dir_if_empty(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default();
    parent_dir(path).is_ok_and(|d| d.remove_dir(Path::new(name)).is_ok())
}

/// The file as a document, `None` if it does not exist. Comments and trailing commas are fine.
/// Beneath the project, its backup name is checked too, before anything is written.
fn read_settings(path: &Path) -> anyhow::Result<Option<Doc>> {
    let Some(text) = read_if_present(path)? else {
        return Ok(None);
    };
    if let Ground::Project { .. } = ground_of(path) {
        let dir = parent_dir(path).map_err(|e| file_error(path, "reading", e))?;
        check_backup_name(&dir, path.file_name().unwrap_or_default(), path)?;
    }
    match Doc::parse(&text) {
        Ok(doc) => Ok(Some(doc)),
        Err(e) => bail!(
            "{}: not valid JSON ({e}; comments and trailing commas are fine); nothing changed",
            path.display()
        ),
    }
}

/// Creates the journal (private to its owner, with a `.gitignore` of `*`), store included, so
/// that `status` and every reader work before the first event arrives. An existing journal is left as it is; one that does not open is reported, and
/// the settings are still written (the hooks spool what they cannot append).
fn create_journal(dir: &Path) -> anyhow::Result<Option<String>> {
    let opts = |create| engine::OpenOptions {
        create,
        ..engine::OpenOptions::default()
    };
    match engine::Journal::open(dir, &opts(false)) {
        Ok(_) => Ok(None),
        Err(engine::Error::NotFound(_)) => {
            engine::Journal::open(dir, &opts(true))
                .with_context(|| format!("creating the journal {}", dir.display()))?;
            crate::cli_util::register(dir);
            Ok(None)
        }
        Err(e) => Ok(Some(format!(
            "the journal {} exists but does not open ({e}); run `hookjournal verify`",
            dir.display()
        ))),
    }
}

/// The project install edits (see `locate::project_root`), found from `$HOME` and the cwd.
fn project_root(cwd: &Path) -> (PathBuf, Option<&'static str>) {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    crate::locate::project_root(cwd, home.as_deref())
}

/// "Project: DIR (it holds .git; you are in DIR/sub)" when install works above the cwd.
fn project_line(project: &Path, marker: Option<&str>, cwd: &Path) -> String {
    match marker {
        Some(m) if project != cwd => format!(
            "Project: {} (it holds {m}; you are in {})\n",
            project.display(),
            cwd.display()
        ),
        _ => String::new(),
    }
}

fn unified_diff(path: &Path, before: Option<&str>, after: &str) -> String {
    let old_name = if before.is_some() {
        path.display().to_string()
    } else {
        "/dev/null".into()
    };
    similar::TextDiff::from_lines(before.unwrap_or(""), after)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &path.display().to_string())
        .to_string()
}

/// What install and uninstall make of a settings file's `text`, for the fuzz target
/// `settings_files`: for each host, install's edit (with the status line on Claude Code), which
/// must leave a file that parses, then uninstall's edit of that; OpenClaw's config enabled and
/// disabled; and Codex's trust entries applied to and removed from `text` read as a config.toml.
/// An error is a refusal (a shape the edit does not know); a panic is a bug.
#[doc(hidden)]
pub fn edit_for_fuzzing(text: &str) -> Vec<Result<String, String>> {
    let command = "'/usr/local/bin/hookjournal' hook --host x";
    let mut out: Vec<Result<String, String>> = [Host::Claude, Host::Codex, Host::Gemini]
        .into_iter()
        .map(|host| {
            let mut doc = Doc::parse(text)?;
            install_handler(&mut doc, &facts(&host), command)?;
            if host == Host::Claude {
                install_statusline(&mut doc, "'/usr/local/bin/hookjournal' statusline", true)?;
            }
            let installed = doc.text().to_string();
            let mut again = Doc::parse(&installed)
                .map_err(|e| format!("install wrote settings that do not parse: {e}"))?;
            assert!(
                codex_trust::handlers("hooks.json", &installed, |c| c == command)
                    .is_none_or(|t| host != Host::Codex || !t.is_empty()),
                "Codex's trust finds none of the handlers install wrote"
            );
            remove_handlers(&mut again)?;
            remove_statusline(&mut again)?;
            Ok(again.text().to_string())
        })
        .collect();
    out.push(openclaw::edit_for_fuzzing(text));
    let trusted = codex_trust::handlers("hooks.json", text, |_| true).unwrap_or_default();
    out.push(
        codex_trust::apply(text, &trusted)
            .and_then(|applied| codex_trust::remove(&applied, &trusted).map(|(back, _)| back)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::registration::{is_hookjournal_command, split_program};

    #[test]
    fn hook_command_quotes_for_sh_and_round_trips() {
        let cmd = hook_command(
            Path::new("/a b/$x`y\"/hookjournal"),
            "claude",
            Some(Path::new("/j d")),
        )
        .unwrap();
        assert_eq!(
            cmd,
            r#""/a b/\$x\`y\"/hookjournal" hook --host claude --journal "/j d""#
        );
        assert!(is_hookjournal_command(&cmd));
        assert_eq!(split_program(&cmd).unwrap().0, "/a b/$x`y\"/hookjournal");
    }

    #[test]
    fn settings_paths_follow_the_table() {
        let p = Path::new("/p");
        let u = Path::new("/home/me/.claude");
        let claude = &facts(&Host::Claude);
        assert_eq!(
            settings_path(claude, Scope::Project, p, None).unwrap(),
            Path::new("/p/.claude/settings.json")
        );
        assert_eq!(
            settings_path(claude, Scope::Local, p, None).unwrap(),
            Path::new("/p/.claude/settings.local.json")
        );
        assert_eq!(
            settings_path(claude, Scope::User, p, Some(u)).unwrap(),
            Path::new("/home/me/.claude/settings.json")
        );
        assert_eq!(
            settings_path(&facts(&Host::Codex), Scope::Project, p, None).unwrap(),
            Path::new("/p/.codex/hooks.json")
        );
        assert!(settings_path(&facts(&Host::Codex), Scope::Local, p, None).is_none());
        assert_eq!(
            settings_path(&facts(&Host::Gemini), Scope::Project, p, None).unwrap(),
            Path::new("/p/.gemini/settings.json")
        );
    }
}
