//! `hookjournal install` / `uninstall`: registers the universal handler in an agent's settings file,
//! and takes it out again. What differs between agents lives in one table (`HOSTS`); the edits are
//! functions over the settings document (`doc`: the file's own text, comments and all, edited in
//! place); the commands only read, diff and write files.

use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod cline;
mod copilot_trust;
mod doc;
mod openclaw;
mod opencode;
mod pi;
pub mod program;

use self::doc::{prop, string_value, Doc};
use engine::codex_trust;
use engine::registration::{is_hookjournal_command, split_program};
use jsonc_parser::cst::{CstInputValue, CstLeafNode, CstNode, CstObject};
use projections::host::HookFileFormat;

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
    #[arg(long, value_enum, default_value_t = Host::Claude)]
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

/// The agents `install` registers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Code
    Claude,
    /// Codex CLI
    Codex,
    /// Gemini CLI
    Gemini,
    /// GitHub Copilot CLI (.github/hooks/hookjournal.json, or ~/.copilot/hooks/ with --scope user)
    Copilot,
    /// Cursor (.cursor/hooks.json)
    Cursor,
    /// OpenClaw (a plugin shim in its extensions, enabled in its openclaw.json)
    Openclaw,
    /// Qwen Code (.qwen/settings.json, or ~/.qwen/settings.json with --scope user)
    Qwen,
    /// OpenCode (a plugin shim in .opencode/plugins/, or ~/.config/opencode/plugins/ with --scope
    /// user)
    Opencode,
    /// Crush (crush.json, or ~/.config/crush/crush.json with --scope user)
    Crush,
    /// pi (an extension shim in .pi/extensions/, or ~/.pi/agent/extensions/ with --scope user)
    Pi,
    /// Factory Droid (.factory/settings.json, or ~/.factory/settings.json with --scope user)
    Droid,
    /// Cline CLI (one hook file per event in .clinerules/hooks/, or ~/.cline/hooks/ with --scope
    /// user)
    Cline,
}

impl Host {
    /// The host in the host facts table.
    fn table(self) -> projections::host::Host {
        match self {
            Host::Claude => projections::host::Host::Claude,
            Host::Codex => projections::host::Host::Codex,
            Host::Gemini => projections::host::Host::Gemini,
            Host::Copilot => projections::host::Host::Copilot,
            Host::Cursor => projections::host::Host::Cursor,
            Host::Openclaw => projections::host::Host::OpenClaw,
            Host::Qwen => projections::host::Host::Qwen,
            Host::Opencode => projections::host::Host::OpenCode,
            Host::Crush => projections::host::Host::Crush,
            Host::Pi => projections::host::Host::Pi,
            Host::Droid => projections::host::Host::Droid,
            Host::Cline => projections::host::Host::Cline,
        }
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

fn facts(host: Host) -> HostFacts {
    let table = host.table().facts();
    HostFacts {
        host,
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

/// Registers the hook in a host's settings (and the status line), creating the journal.
pub fn run_install(cmd: &CommandHelper, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let t = args.target;
    if args.statusline && t.host != Host::Claude {
        eprintln!(
            "hookjournal: --statusline is Claude Code's status line; {} has none",
            t.host.table().facts().product
        );
        return Ok(ExitCode::from(2));
    }
    // The hosts whose hooks are files of hookjournal's own (a plugin, a shim, scripts).
    match t.host {
        Host::Openclaw => return openclaw::install(cmd, t.scope, t.dry_run),
        Host::Opencode => return opencode::install(cmd, t.scope, t.dry_run),
        Host::Pi => return pi::install(cmd, t.scope, t.dry_run),
        Host::Cline => return cline::install(cmd, t.scope, t.dry_run),
        _ => {}
    }
    let facts = &facts(t.host);
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
    let (file, plugin) = engine::registration::plugin_enabled_in(&files)?;
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
    if facts.host.table().facts().trust == projections::host::Trust::TrustedHooks {
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

/// A file's text, `None` when it does not exist.
fn read_if_present(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
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

/// A host whose hooks run in its own process, as one file hookjournal writes (OpenCode's plugin,
/// pi's extension): where it goes, its text, how install's own file is told apart, and how the
/// messages name it.
struct ShimHost {
    facts: &'static projections::host::HostFacts,
    path: fn(Scope, &Path) -> anyhow::Result<PathBuf>,
    text: fn(&Path, Option<&Path>) -> String,
    ours: fn(&str) -> bool,
    /// "plugin", "extension".
    noun: &'static str,
    /// What its events are called: "OpenCode hooks and events".
    events: &'static str,
}

impl ShimHost {
    /// `install --host H [--scope project|user]`: the shim written (a file of the user's own at
    /// its path is never replaced), the journal created, what it runs said.
    fn install(
        &self,
        cmd: &CommandHelper,
        scope: Scope,
        dry_run: bool,
    ) -> anyhow::Result<ExitCode> {
        if scope == Scope::Local {
            return Ok(self.local_scope_usage_error());
        }
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let (project, marker) = project_root(&cwd);
        let journal = shim_journal(cmd, scope, &cwd, &project);
        // A path that lasts (the same program on PATH is preferred), with a note where it will not.
        let program = program::for_this_binary()?;
        let exe = &program.path;
        let path = (self.path)(scope, &project)?;
        let before = read_if_present(&path)?;
        if before.as_deref().is_some_and(|t| !(self.ours)(t)) {
            anyhow::bail!(
                "{} exists and is not hookjournal's shim; nothing changed",
                path.display()
            );
        }
        let after = (self.text)(exe, journal.as_deref());
        if scope != Scope::User {
            print!("{}", project_line(&project, marker, &cwd));
        }
        if dry_run {
            print!("{}", unified_diff(&path, before.as_deref(), &after));
            dry_run_tail(journal.as_deref(), &program.notes);
            return Ok(ExitCode::SUCCESS);
        }
        let journal_note = match &journal {
            Some(j) => create_journal(j)?,
            None => None,
        };
        if before.as_deref() != Some(after.as_str()) {
            write_settings(&path, &after, false)?;
        }
        println!(
            "Wrote the hookjournal {} ({} {}) to {}.",
            self.noun,
            self.facts.registered().count(),
            self.events,
            path.display()
        );
        shim_report(
            self.facts.name,
            exe,
            journal.as_deref(),
            program.notes.iter().chain(&journal_note),
            self.facts.install.as_ref().map_or("", |i| i.next_step),
        );
        Ok(ExitCode::SUCCESS)
    }

    /// `uninstall --host H`: the shim install wrote; the journal stays.
    fn uninstall(&self, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
        if scope == Scope::Local {
            return Ok(self.local_scope_usage_error());
        }
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let (project, _) = project_root(&cwd);
        let path = (self.path)(scope, &project)?;
        let what = format!("{} {}", self.facts.product, self.noun);
        remove_shim(&path, &what, self.noun, self.ours, dry_run)
    }

    fn local_scope_usage_error(&self) -> ExitCode {
        eprintln!(
            "hookjournal: --scope local is Claude Code's .claude/settings.local.json; {} has project and user scopes only",
            self.facts.product
        );
        ExitCode::from(2)
    }
}

/// What an install of a shim (OpenCode's plugin, pi's extension) says after writing it: the
/// command it runs, the journal, the notes, the host's next step.
fn shim_report(
    host: &str,
    exe: &Path,
    journal: Option<&Path>,
    notes: impl Iterator<Item = impl std::fmt::Display>,
    next_step: &str,
) {
    match journal {
        Some(j) => {
            println!(
                "Command: {} hook --host {host} --journal {}",
                exe.display(),
                j.display()
            );
            println!("Journal: {}", j.display());
        }
        None => {
            println!("Command: {} hook --host {host}", exe.display());
            println!("Journal: .hookjournal/ in each project, created by its first event.");
        }
    }
    for note in notes {
        println!("Note: {note}");
    }
    println!("Next: {next_step}");
}

/// `uninstall` of a shim at `path` (`what`: "OpenCode plugin", `noun`: "plugin"): only a file
/// `ours` says install wrote goes, and its directory only when nothing else is left in it; the
/// journal stays.
fn remove_shim(
    path: &Path,
    what: &str,
    noun: &str,
    ours: fn(&str) -> bool,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let Some(text) = read_if_present(path)? else {
        println!("hookjournal's {what} is not installed; nothing to remove.");
        return Ok(ExitCode::SUCCESS);
    };
    if !ours(&text) {
        anyhow::bail!(
            "{} is not hookjournal's shim; nothing changed",
            path.display()
        );
    }
    if dry_run {
        println!("Would remove {}.", path.display());
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
    println!(
        "Removed the {noun} {}; the journal itself is untouched.",
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Codex runs a project or user hook only once it is trusted: the hooks just written are trusted
/// in the user's `config.toml` (`$CODEX_HOME`, else `~/.codex`) as `/hooks` would trust them.
fn trust_codex_hooks(
    hooks_json: &Path,
    text: &str,
    command: &str,
    scope: Scope,
) -> anyhow::Result<()> {
    let facts = &facts(Host::Codex);
    let home = settings_path_from_env(facts, Scope::User, hooks_json)?
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or_else(|| anyhow!("cannot find Codex's home"))?;
    let config = home.join("config.toml");
    let key_path = hooks_json.to_string_lossy();
    let Some(trusted) = codex_trust::ours(&key_path, text, command) else {
        println!(
            "Note: {} is not plain JSON; trust the hooks in Codex's /hooks yourself.",
            hooks_json.display()
        );
        return Ok(());
    };
    let before = match fs::read_to_string(&config) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", config.display())),
    };
    let after = codex_trust::apply(before.as_deref().unwrap_or(""), &trusted)
        .map_err(|e| anyhow!("{}: {e}; hooks not trusted", config.display()))?;
    if before.as_deref() != Some(after.as_str()) {
        write_settings(&config, &after, before.is_some())?;
    }
    if scope != Scope::User {
        if let Some(project) = hooks_json.parent().and_then(Path::parent) {
            let trusted = toml::from_str::<toml::Value>(&after).ok().is_some_and(|v| {
                v.get("projects")
                    .and_then(|p| p.get(project.to_string_lossy().as_ref()))
                    .and_then(|p| p.get("trust_level"))
                    .and_then(|t| t.as_str())
                    == Some("trusted")
            });
            if !trusted {
                println!(
                    "Note: Codex loads a project's hooks only when the project is trusted, and {} is \
                     not trusted in {}: trust it when Codex asks at its first start here, or add \
                     [projects.{}] trust_level = \"trusted\" there.",
                    project.display(),
                    config.display(),
                    toml::Value::String(project.to_string_lossy().into_owned())
                );
            }
        }
    }
    let whose = if scope == Scope::User {
        "every project"
    } else {
        "this project"
    };
    println!(
        "Trusted: {} hooks for {whose} in {} ([hooks.state] trusted_hash, as Codex's /hooks records \
         them); editing a hook makes Codex skip it until it is trusted again.",
        trusted.len(),
        config.display()
    );
    Ok(())
}

/// Copilot CLI runs a repository's hooks only in a trusted folder, silently skipping them
/// otherwise: says whether `project` is trusted in its `config.json`, and how to trust it. It
/// never trusts the folder itself.
fn copilot_trust_note(project: &Path) -> anyhow::Result<()> {
    let facts = &facts(Host::Copilot);
    let home = settings_path_from_env(facts, Scope::User, project)?
        .and_then(|p| p.parent().and_then(Path::parent).map(Path::to_path_buf))
        .ok_or_else(|| anyhow!("cannot find Copilot CLI's home"))?;
    let config = home.join("config.json");
    let text = match fs::read_to_string(&config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", config.display())),
    };
    match copilot_trust::trusted_by(&text, project) {
        Some(entry) => println!(
            "Trust: {} is trusted by Copilot CLI ({} lists {entry} in trustedFolders), so it runs \
             these hooks.",
            project.display(),
            config.display()
        ),
        None => println!(
            "Note: Copilot CLI runs a repository's hooks only in a trusted folder and skips them \
             silently otherwise, and {} is not in trustedFolders of {}. Trust it when Copilot \
             asks at its first start here (it records the folder there), or start it with \
             --trust-folder (that session only), or set COPILOT_ALLOW_ALL=true; or install with \
             --scope user (~/.copilot/hooks need no trust). hookjournal does not trust folders \
             for you.",
            project.display(),
            config.display()
        ),
    }
    Ok(())
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
    let claude = &self::facts(Host::Claude);
    let claude_files: Vec<PathBuf> = [Scope::Project, Scope::Local]
        .into_iter()
        .filter_map(|s| settings_path(claude, s, project, None))
        .filter(|p| ours(p))
        .collect();
    let others: Vec<(&str, PathBuf)> = [Host::Copilot, Host::Cursor]
        .into_iter()
        .map(self::facts)
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
    match t.host {
        Host::Openclaw => return openclaw::uninstall(t.scope, t.dry_run),
        Host::Opencode => return opencode::uninstall(t.scope, t.dry_run),
        Host::Pi => return pi::uninstall(t.scope, t.dry_run),
        Host::Cline => return cline::uninstall(t.scope, t.dry_run),
        _ => {}
    }
    let facts = &facts(t.host);
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
    let untrust = if facts.host.table().facts().trust == projections::host::Trust::TrustedHooks
        && removed > 0
    {
        untrust_codex_hooks(&path, &before_text)?
    } else {
        None
    };
    // A Copilot CLI or Cursor file that held only our hooks goes, as it came.
    let emptied = facts.install.format.versioned() && only_version(&doc);
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
        fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
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

/// The user's Codex `config.toml` without the trust install wrote for hookjournal's handlers.
struct Untrust {
    config: PathBuf,
    before: String,
    after: String,
    removed: usize,
}

/// The `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` tables of hookjournal's handlers
/// in `hooks_text` (the hooks.json at `hooks_json` before they are removed), each removed only
/// where its `trusted_hash` is the one install wrote for that handler; `None` when there are
/// none (or no config.toml).
fn untrust_codex_hooks(hooks_json: &Path, hooks_text: &str) -> anyhow::Result<Option<Untrust>> {
    let facts = &facts(Host::Codex);
    let Some(home) = settings_path_from_env(facts, Scope::User, hooks_json)?
        .and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return Ok(None);
    };
    let config = home.join("config.toml");
    let key_path = hooks_json.to_string_lossy();
    let Some(trusted) = codex_trust::handlers(&key_path, hooks_text, is_hookjournal_command) else {
        return Ok(None);
    };
    let before = match fs::read_to_string(&config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", config.display())),
    };
    let (after, removed) = codex_trust::remove(&before, &trusted)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", config.display()))?;
    Ok((removed > 0).then_some(Untrust {
        config,
        before,
        after,
        removed,
    }))
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

// ---------------------------------------------------------------------------------------------
// The status line (Claude Code's `statusLine`): ours, or ours chained with the user's own.

/// `"<abs path>" statusline [--journal "<dir>"]`.
fn statusline_base(exe: &Path, journal: Option<&Path>) -> anyhow::Result<String> {
    let mut cmd = format!("{} statusline", shell_quote(exe)?);
    if let Some(dir) = journal {
        cmd.push_str(" --journal ");
        cmd.push_str(&shell_quote(dir)?);
    }
    Ok(cmd)
}

/// Words of a command as `shell_quote` writes them (plain, or double-quoted with `\` escapes).
fn shell_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut rest = cmd.trim_start();
    while !rest.is_empty() {
        let (w, r) = split_program(rest)?;
        words.push(w);
        rest = r.trim_start();
    }
    Some(words)
}

fn is_our_statusline(cmd: &str) -> bool {
    let Some((program, rest)) = split_program(cmd.trim_start()) else {
        return false;
    };
    Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == BINARY_NAME)
        && rest.trim_start().starts_with("statusline")
}

/// The user's own command that ours chains, if any.
fn chained_of(cmd: &str) -> Option<String> {
    let words = shell_words(cmd)?;
    let i = words.iter().position(|w| w == "--chain")?;
    words.get(i + 1).cloned()
}

/// Sets `statusLine` to ours, chaining a command the user already had (its other keys stay).
/// Re-installing keeps the chained command. Returns the command registered.
fn install_statusline(doc: &mut Doc, base: &str, record_only: bool) -> Result<String, String> {
    let existing = match doc.root_object()? {
        Some(root) => match prop(&root, "statusLine") {
            None => None,
            Some(p) => {
                let o = p.object_value().ok_or("\"statusLine\" is not an object")?;
                let command = prop(&o, "command")
                    .and_then(|c| c.value())
                    .and_then(|v| string_value(&v).map(|s| (v, s)));
                Some(command.ok_or("\"statusLine\" has no command to chain")?)
            }
        },
        None => None,
    };
    let theirs = match &existing {
        Some((_, c)) if is_our_statusline(c) => chained_of(c),
        Some((_, c)) => Some(c.clone()),
        None => None,
    };
    let mut command = base.to_string();
    if let Some(t) = &theirs {
        if record_only {
            command.push_str(" --record-only");
        }
        command.push_str(" --chain ");
        command.push_str(&quote_str(t));
    }
    match existing {
        Some((node, _)) => doc.replace(&node, &command.as_str().into())?,
        None => doc.append_to_root(
            "statusLine",
            &CstInputValue::Object(vec![
                ("type".into(), "command".into()),
                ("command".into(), command.as_str().into()),
            ]),
        )?,
    }
    Ok(command)
}

/// Takes our status line out: the user's chained command comes back, or the key goes.
/// Returns what was done, `None` when the status line was not ours.
fn remove_statusline(doc: &mut Doc) -> Result<Option<String>, String> {
    let Ok(Some(root)) = doc.root_object() else {
        return Ok(None);
    };
    let Some(status) = prop(&root, "statusLine") else {
        return Ok(None);
    };
    let Some((node, cmd)) = status
        .object_value()
        .and_then(|o| prop(&o, "command"))
        .and_then(|c| c.value())
        .and_then(|v| string_value(&v).map(|s| (v, s)))
    else {
        return Ok(None);
    };
    if !is_our_statusline(&cmd) {
        return Ok(None);
    }
    Ok(Some(match chained_of(&cmd) {
        Some(theirs) => {
            doc.replace(&node, &theirs.as_str().into())?;
            format!("Restored your own status line: {theirs}")
        }
        None => {
            doc.remove(&status.into())?;
            "Removed hookjournal's status line.".into()
        }
    }))
}

/// Double-quotes a string for POSIX sh (see `shell_quote`).
fn quote_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------------------------
// The edits: functions over the settings document (see `doc`).

/// Makes `doc` register `command` for every event of the host, exactly once, after the user's own
/// hooks; every other key, hook, comment and blank of the file stays as it was. A new file of a
/// host whose format has a version (Copilot CLI, Cursor) starts with `"version": 1`.
fn install_handler(doc: &mut Doc, facts: &HostFacts, command: &str) -> Result<(), String> {
    if let Some(hooks) = hooks_object(doc)? {
        for event in &facts.events {
            if prop(&hooks, event.name)
                .is_some_and(|p| !matches!(p.value(), Some(v) if v.as_array().is_some()))
            {
                return Err(format!("\"hooks\".\"{}\" is not an array", event.name));
            }
        }
    }
    remove_handlers(doc)?;
    if hooks_object(doc)?.is_none() {
        if facts.install.format.versioned() && doc.root_object()?.is_none() {
            doc.append_to_root("version", &1.into())?;
        }
        let all = facts
            .events
            .iter()
            .map(|e| {
                let groups = CstInputValue::Array(vec![handler_entry(facts, e, command)]);
                (e.name.to_string(), groups)
            })
            .collect();
        return doc.append_to_root("hooks", &CstInputValue::Object(all));
    }
    for event in &facts.events {
        // Looked up again for each event: an edit re-parses the file.
        let hooks = hooks_object(doc)?.ok_or("\"hooks\" went missing")?;
        let entry = handler_entry(facts, event, command);
        match prop(&hooks, event.name).and_then(|p| p.array_value()) {
            Some(entries) => doc.append_element(&entries, &entry)?,
            None => doc.append_prop(&hooks, event.name, &CstInputValue::Array(vec![entry]))?,
        }
    }
    Ok(())
}

/// The `hooks` object; `None` when the file has none.
fn hooks_object(doc: &Doc) -> Result<Option<CstObject>, String> {
    let Some(root) = doc.root_object()? else {
        return Ok(None);
    };
    match prop(&root, "hooks") {
        None => Ok(None),
        Some(p) => p
            .object_value()
            .map(Some)
            .ok_or_else(|| "\"hooks\" is not an object".into()),
    }
}

/// One event's entry in the host's format: Claude Code's group (`{matcher?, hooks: [{type,
/// command, timeout}]}`), or Copilot CLI's and Cursor's flat handler. Where the payload names no
/// event (Copilot's camelCase hooks), the command names it: `… hook --host copilot --event NAME`.
fn handler_entry(facts: &HostFacts, event: &Event, command: &str) -> CstInputValue {
    let command = if event.reg.event_arg {
        format!("{command} --event {}", event.name)
    } else {
        command.to_string()
    };
    let timeout: CstInputValue = (event.reg.timeout_s * facts.install.timeout_scale).into();
    let handler = match facts.install.format {
        HookFileFormat::CopilotFlat => {
            return CstInputValue::Object(vec![
                ("type".into(), "command".into()),
                ("bash".into(), command.as_str().into()),
                ("timeoutSec".into(), timeout),
            ])
        }
        HookFileFormat::CursorFlat => {
            return CstInputValue::Object(vec![
                ("command".into(), command.as_str().into()),
                ("timeout".into(), timeout),
            ])
        }
        // No matcher: Crush runs a handler without one for every tool.
        HookFileFormat::CrushFlat => {
            return CstInputValue::Object(vec![
                ("name".into(), BINARY_NAME.into()),
                ("command".into(), command.as_str().into()),
                ("timeout".into(), timeout),
            ])
        }
        // Cline's hook files are scripts (`install::cline`), never an entry in a settings file.
        HookFileFormat::Grouped | HookFileFormat::ScriptPerEvent => {
            let mut handler = Vec::new();
            if facts.install.named_handlers {
                handler.push(("name".to_string(), BINARY_NAME.into()));
            }
            handler.push(("type".into(), "command".into()));
            handler.push(("command".into(), command.as_str().into()));
            handler.push(("timeout".into(), timeout));
            handler
        }
    };
    let mut group = Vec::new();
    if event.reg.tool_matcher {
        group.push(("matcher".to_string(), "*".into()));
    }
    group.push((
        "hooks".into(),
        CstInputValue::Array(vec![CstInputValue::Object(handler)]),
    ));
    CstInputValue::Object(group)
}

/// Removes every hookjournal handler; a group, an event or the `hooks` object left empty by that is
/// removed too. Returns how many handlers went. Entries of shapes we do not know are left alone.
fn remove_handlers(doc: &mut Doc) -> Result<usize, String> {
    let mut removed = 0;
    // One handler at a time, the tree looked up again after each edit.
    while let Some(hooks) = hooks_object(doc)? {
        let Some(target) = next_removal(&hooks) else {
            break;
        };
        doc.remove(&target)?;
        removed += 1;
    }
    Ok(removed)
}

/// The first hookjournal handler under `hooks`, widened to what its removal empties: its group
/// when it is the group's only handler, then the event, then `hooks` itself.
fn next_removal(hooks: &CstObject) -> Option<CstNode> {
    let events = hooks.properties();
    for event in &events {
        let Some(groups) = event.array_value() else {
            continue;
        };
        let group_nodes = groups.elements();
        for group in &group_nodes {
            // Copilot CLI's and Cursor's files list handlers directly under the event.
            if is_our_handler(group) {
                return Some(if group_nodes.len() > 1 {
                    group.clone()
                } else if events.len() > 1 {
                    event.clone().into()
                } else {
                    hooks.parent()?.into()
                });
            }
            let Some(handlers) = group
                .as_object()
                .and_then(|g| prop(&g, "hooks"))
                .and_then(|h| h.array_value())
            else {
                continue;
            };
            let handler_nodes = handlers.elements();
            let Some(ours) = handler_nodes.iter().find(|h| is_our_handler(h)) else {
                continue;
            };
            return Some(if handler_nodes.len() > 1 {
                ours.clone()
            } else if group_nodes.len() > 1 {
                group.clone()
            } else if events.len() > 1 {
                event.clone().into()
            } else {
                hooks.parent()?.into()
            });
        }
    }
    None
}

/// A handler running `hookjournal hook`: its `command` (Copilot CLI's: `bash`).
fn is_our_handler(handler: &CstNode) -> bool {
    let Some(h) = handler.as_object() else {
        return false;
    };
    ["command", "bash"].iter().any(|key| {
        prop(&h, key)
            .and_then(|c| c.value())
            .and_then(|v| string_value(&v))
            .is_some_and(|cmd| is_hookjournal_command(&cmd))
    })
}

/// Whether all the file holds is `"version": 1` (what install starts a Copilot CLI or Cursor
/// file with): uninstall then removes the file rather than leave that.
fn only_version(doc: &Doc) -> bool {
    doc.root_object().ok().flatten().is_some_and(|root| {
        let props = root.properties();
        props.len() == 1 && prop(&root, "version").is_some()
    })
}

/// Things the user should know after installing that the edit itself cannot fix.
fn warnings(facts: &HostFacts, scope: Scope, doc: &Doc) -> Vec<String> {
    let mut out = Vec::new();
    if facts.host == Host::Claude && scope == Scope::Project {
        out.push(
            ".claude/settings.json is usually committed and the command holds this machine's path; \
             `--scope local` keeps it in your own .claude/settings.local.json."
                .to_string(),
        );
    }
    if facts.host == Host::Gemini {
        let disabled = doc
            .root_object()
            .ok()
            .flatten()
            .and_then(|r| prop(&r, "hooksConfig"))
            .and_then(|c| c.object_value())
            .and_then(|c| prop(&c, "enabled"))
            .and_then(|e| e.value())
            .is_some_and(|e| matches!(e, CstNode::Leaf(CstLeafNode::BooleanLit(b)) if !b.value()));
        if disabled {
            out.push(
                "this file sets hooksConfig.enabled to false: Gemini CLI will not run any hook."
                    .into(),
            );
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Files.

/// The file as a document, `None` if it does not exist. Comments and trailing commas are fine.
fn read_settings(path: &Path) -> anyhow::Result<Option<Doc>> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow!("{}: {e}", path.display())),
    };
    match Doc::parse(&text) {
        Ok(doc) => Ok(Some(doc)),
        Err(e) => bail!(
            "{}: not valid JSON ({e}; comments and trailing commas are fine); nothing changed",
            path.display()
        ),
    }
}

/// Writes `text` to `path` atomically (same-directory temp file, fsync, rename), first copying the
/// previous file to `<file>.bak`. A symlinked settings file is written through to its target.
/// Returns the backup's path.
fn write_settings(path: &Path, text: &str, had_previous: bool) -> anyhow::Result<Option<PathBuf>> {
    let real = if had_previous {
        fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    let dir = real
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;

    let mut backup = None;
    if had_previous {
        let mut name = real.file_name().unwrap_or_default().to_os_string();
        name.push(".bak");
        let bak = real.with_file_name(name);
        fs::copy(&real, &bak)
            .with_context(|| format!("backing up {} to {}", real.display(), bak.display()))?;
        backup = Some(bak);
    }

    let mut tmp = tempfile::Builder::new()
        .prefix(".hookjournal-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    let permissions = match fs::metadata(&real) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            fs::Permissions::from_mode(0o644)
        }
    };
    tmp.as_file()
        .set_permissions(permissions)
        .with_context(|| format!("setting the mode of {}", tmp.path().display()))?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("syncing {}", tmp.path().display()))?;
    tmp.persist(&real)
        .map_err(|e| anyhow!("replacing {}: {}", real.display(), e.error))?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(backup)
}

/// Creates the journal (private to its owner, with a `.gitignore` of `*`), store included, so
/// that `status` and every reader work before the first event arrives. An existing journal is left as it is; one that does not open is reported, and
/// the settings are still written (the hooks spool what they cannot append).
fn create_journal(dir: &Path) -> anyhow::Result<Option<String>> {
    let opts = |create| journal::OpenOptions {
        create,
        ..journal::OpenOptions::default()
    };
    match journal::Journal::open(dir, &opts(false)) {
        Ok(_) => Ok(None),
        Err(journal::Error::NotFound(_)) => {
            journal::Journal::open(dir, &opts(true))
                .with_context(|| format!("creating the journal {}", dir.display()))?;
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
            install_handler(&mut doc, &facts(host), command)?;
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

    const CMD: &str = "\"/opt/bin/hookjournal\" hook --host claude";

    fn parse(s: &str) -> Doc {
        Doc::parse(s).unwrap()
    }
    /// The document as serde_json reads it (for inputs without comments).
    fn value(d: &Doc) -> serde_json::Value {
        serde_json::from_str(d.text()).unwrap()
    }

    const USER_SETTINGS: &str = r#"{
      "model": "opus",
      "permissions": {"allow": ["Bash(git:*)"], "deny": []},
      "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
      },
      "env": {"FOO": "1"}
    }"#;

    /// The same settings as a person writes JSONC: comments, trailing commas, tabs.
    const USER_JSONC: &str = "// project settings\n{\n\t\"model\": \"opus\", // fast enough\n\t\"hooks\": {\n\t\t/* lint before bash */\n\t\t\"PreToolUse\": [\n\t\t\t{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]},\n\t\t],\n\n\t\t\"Stop\": [{\"hooks\": []}],\n\t},\n}\n";

    fn user_settings() -> Doc {
        parse(USER_SETTINGS)
    }

    #[test]
    fn every_host_registers_from_the_table_and_no_forbidden_event() {
        for host in [Host::Claude, Host::Codex, Host::Gemini] {
            let f = facts(host);
            assert_eq!(f.name, host.table().as_str());
            for e in &f.events {
                assert!(
                    !matches!(e.name, "WorktreeCreate" | "MessageDisplay"),
                    "{} {}",
                    f.name,
                    e.name
                );
            }
        }
        assert_eq!(facts(Host::Claude).events.len(), 31);
        assert_eq!(facts(Host::Codex).events.len(), 12);
        assert_eq!(facts(Host::Gemini).events.len(), 8);
    }

    #[test]
    fn install_adds_one_group_per_event_after_the_users_own() {
        let mut s = user_settings();
        install_handler(&mut s, &facts(Host::Claude), CMD).unwrap();
        let v = value(&s);
        assert_eq!(
            v["hooks"].as_object().unwrap().len(),
            facts(Host::Claude).events.len()
        );
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(pre[1]["matcher"], "*");
        assert_eq!(pre[1]["hooks"][0]["command"], CMD);
        assert_eq!(v["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 2);
        assert!(v["hooks"]["SessionEnd"][0].get("matcher").is_none());
        assert_eq!(v["permissions"]["allow"][0], "Bash(git:*)");
    }

    #[test]
    fn install_keeps_key_order() {
        let mut s = user_settings();
        install_handler(&mut s, &facts(Host::Claude), CMD).unwrap();
        let text = s.text();
        let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("model") < pos("permissions"));
        assert!(pos("permissions") < pos("hooks"));
        assert!(pos("hooks") < pos("env"));
        assert!(pos("PreToolUse") < pos("Stop") && pos("Stop") < pos("SessionStart"));
    }

    #[test]
    fn install_is_idempotent_and_replaces_a_moved_binary() {
        let mut once = user_settings();
        install_handler(&mut once, &facts(Host::Claude), CMD).unwrap();
        let mut twice = parse(once.text());
        install_handler(&mut twice, &facts(Host::Claude), CMD).unwrap();
        assert_eq!(once.text(), twice.text());

        let moved = "\"/home/me/.cargo/bin/hookjournal\" hook --host claude";
        install_handler(&mut twice, &facts(Host::Claude), moved).unwrap();
        let text = twice.text();
        assert!(!text.contains("/opt/bin/hookjournal"));
        assert_eq!(
            text.matches("/home/me/.cargo/bin/hookjournal").count(),
            facts(Host::Claude).events.len()
        );
    }

    #[test]
    fn uninstall_gives_back_the_original_bytes() {
        for original in [
            USER_SETTINGS,
            USER_JSONC,
            "{}",
            "{\"model\": \"opus\"}\n",
            "",
        ] {
            for f in [Host::Claude, Host::Codex, Host::Gemini].map(facts) {
                let f = &f;
                let mut s = parse(original);
                install_handler(&mut s, f, CMD).unwrap();
                assert_ne!(s.text(), original);
                let mut s = parse(s.text());
                assert_eq!(remove_handlers(&mut s).unwrap(), f.events.len());
                let expected = if original.is_empty() {
                    "{}\n"
                } else {
                    original
                };
                assert_eq!(s.text(), expected, "{} on {original:?}", f.name);
                assert_eq!(remove_handlers(&mut s).unwrap(), 0);
            }
        }
    }

    #[test]
    fn install_keeps_comments_and_follows_the_files_indentation() {
        let mut s = parse(USER_JSONC);
        install_handler(&mut s, &facts(Host::Codex), CMD).unwrap();
        let text = s.text();
        // Everything the user wrote is still there, in order, around our entries.
        let mut rest = text;
        for part in [
            "// project settings\n{\n\t\"model\": \"opus\", // fast enough\n\t\"hooks\": {\n",
            "\t\t/* lint before bash */\n\t\t\"PreToolUse\": [\n",
            "\t\t],\n\n\t\t\"Stop\": [{\"hooks\": []}, {\"hooks\": [{\"type\": \"command\", ",
            "\t},\n}\n",
        ] {
            let at = rest
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} is gone from\n{text}"));
            rest = &rest[at + part.len()..];
        }
        // Our group in the user's PreToolUse, a level of tabs deeper, with trailing commas as
        // the file writes them.
        assert!(
            text.contains(&format!(
                "\t\t\t{{\"matcher\": \"Bash\", \"hooks\": [{{\"type\": \"command\", \"command\": \"./lint.sh\"}}]}},\n\t\t\t{{\n\t\t\t\t\"matcher\": \"*\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": {},\n\t\t\t\t\t\t\"timeout\": 10,\n\t\t\t\t\t}},\n\t\t\t\t],\n\t\t\t}},\n\t\t],\n",
                serde_json::to_string(CMD).unwrap()
            )),
            "{text}"
        );
        let mut s = parse(text);
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), USER_JSONC);
    }

    #[test]
    fn uninstall_drops_an_event_array_it_emptied() {
        // As before the CST: an event array left empty by removing ours goes, even one the user
        // had written empty (nothing in the file tells the two apart).
        let original =
            "{\n  \"hooks\": {\n    \"PreToolUse\": [],\n    \"Stop\": [\"x\"]\n  }\n}\n";
        let mut s = parse(original);
        install_handler(&mut s, &facts(Host::Claude), CMD).unwrap();
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), original.replace("\n    \"PreToolUse\": [],", ""));
    }

    #[test]
    fn uninstall_removes_a_hooks_object_it_emptied() {
        let original = "{\n  \"model\": \"opus\"\n}\n";
        let mut s = parse(original);
        install_handler(&mut s, &facts(Host::Codex), CMD).unwrap();
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), original);
    }

    #[test]
    fn uninstall_keeps_a_users_hook_sharing_our_group() {
        let mut s = parse(&format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": {}}}, {{"type": "command", "command": "say hi"}}]}}]}}}}"#,
            serde_json::to_string(CMD).unwrap()
        ));
        assert_eq!(remove_handlers(&mut s).unwrap(), 1);
        assert_eq!(
            s.text(),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}"#
        );
    }

    #[test]
    fn gemini_gets_milliseconds_and_a_name_and_keeps_its_config_keys() {
        let mut s = parse(r#"{"hooks": {"disabled": ["x"]}, "hooksConfig": {"enabled": true}}"#);
        install_handler(&mut s, &facts(Host::Gemini), CMD).unwrap();
        let v = value(&s);
        assert_eq!(v["hooks"]["disabled"][0], "x");
        let h = &v["hooks"]["SessionEnd"][0]["hooks"][0];
        assert_eq!(h["timeout"], 2000);
        assert_eq!(h["name"], "hookjournal");
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 10000);
        assert_eq!(v["hooks"]["BeforeTool"][0]["matcher"], "*");
        assert!(v["hooks"].get("BeforeModel").is_none());
        assert!(warnings(&facts(Host::Gemini), Scope::Project, &s).is_empty());
        let off = parse("{\"hooksConfig\": {\"enabled\": false}}");
        assert_eq!(
            warnings(&facts(Host::Gemini), Scope::Project, &off).len(),
            1
        );
    }

    #[test]
    fn refuses_shapes_it_cannot_edit() {
        for bad in [
            r#"[]"#,
            r#"{"hooks": []}"#,
            r#"{"hooks": null}"#,
            r#"{"hooks": {"Stop": {}}}"#,
        ] {
            let mut s = parse(bad);
            assert!(
                install_handler(&mut s, &facts(Host::Claude), CMD).is_err(),
                "{bad}"
            );
            assert_eq!(s.text(), bad);
        }
        assert!(remove_handlers(&mut parse(r#"{"hooks": 3}"#)).is_err());
    }

    #[test]
    fn statusline_round_trips_through_a_users_own() {
        let original = "{\n  // mine\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo \\\"hi\\\" $HOME\", \"padding\": 1},\n}\n";
        let mut s = parse(original);
        let base = "\"/opt/bin/hookjournal\" statusline";
        let cmd = install_statusline(&mut s, base, false).unwrap();
        assert_eq!(cmd, format!("{base} --chain \"echo \\\"hi\\\" \\$HOME\""));
        assert_eq!(
            install_statusline(&mut parse(s.text()), base, false).unwrap(),
            cmd
        );
        let restored = remove_statusline(&mut s).unwrap().unwrap();
        assert!(restored.starts_with("Restored your own"), "{restored}");
        assert_eq!(s.text(), original);

        let mut s = parse(USER_JSONC);
        install_statusline(&mut s, base, false).unwrap();
        assert_eq!(
            remove_statusline(&mut s).unwrap().as_deref(),
            Some("Removed hookjournal's status line.")
        );
        assert_eq!(s.text(), USER_JSONC);
    }

    #[test]
    fn recognises_our_commands_only() {
        for ours in [
            CMD,
            "hookjournal hook",
            "/usr/local/bin/hookjournal hook --host codex",
            "\"/path with space/hookjournal\" hook --host gemini --journal \"/j\"",
            "'/opt/hookjournal' hook",
            "\"/we\\\"ird/hookjournal\" hook",
        ] {
            assert!(is_hookjournal_command(ours), "{ours}");
        }
        for theirs in [
            "./lint.sh",
            "hookjournal status",
            "hookjournal hooks",
            "/bin/not-hookjournal hook",
            "echo hookjournal hook",
            "\"/unterminated/hookjournal hook",
            "",
        ] {
            assert!(!is_hookjournal_command(theirs), "{theirs}");
        }
    }

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
        let claude = &facts(Host::Claude);
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
            settings_path(&facts(Host::Codex), Scope::Project, p, None).unwrap(),
            Path::new("/p/.codex/hooks.json")
        );
        assert!(settings_path(&facts(Host::Codex), Scope::Local, p, None).is_none());
        assert_eq!(
            settings_path(&facts(Host::Gemini), Scope::Project, p, None).unwrap(),
            Path::new("/p/.gemini/settings.json")
        );
    }
}
