//! `hookjournal install` / `uninstall`: registers the universal handler in an agent's settings file,
//! and takes it out again. What differs between agents lives in one table (`HOSTS`); the edits are
//! pure functions over an order-preserving JSON tree; the commands only read, diff and write files.

use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use self::json::{Json, Object};

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
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

#[derive(clap::Args, Debug)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub target: Target,
}

/// Which settings file to edit, and whether to only show the change.
#[derive(clap::Args, Debug)]
pub struct Target {
    /// project: the project's shared settings; local: Claude's .claude/settings.local.json (not
    /// committed); user: your settings for every project.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// The agent whose settings to edit.
    #[arg(long, value_enum, default_value_t = Host::Claude)]
    pub host: Host,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    Local,
    User,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    Claude,
    Codex,
    Gemini,
}

/// One hook event to register, with the time the host may give the handler.
struct Event {
    name: &'static str,
    /// Seconds; converted to the host's unit by `HostFacts::timeout_scale`.
    timeout_s: u64,
    /// Tool events take a matcher on the tool name: `"*"` means every tool.
    tool: bool,
}

const fn ev(name: &'static str, timeout_s: u64) -> Event {
    Event {
        name,
        timeout_s,
        tool: false,
    }
}
const fn tool(name: &'static str) -> Event {
    Event {
        name,
        timeout_s: 10,
        tool: true,
    }
}

/// Everything install/uninstall needs to know about one agent.
struct HostFacts {
    host: Host,
    /// The `--host` value, also passed on to `hookjournal hook --host`.
    name: &'static str,
    product: &'static str,
    /// Directory holding the settings file, in the project and in the user's home.
    config_dir: &'static str,
    /// Environment variable that moves the user-level config directory, if the host has one.
    config_dir_env: Option<&'static str>,
    project_file: &'static str,
    local_file: Option<&'static str>,
    user_file: &'static str,
    /// 1 where `timeout` is in seconds, 1000 where it is in milliseconds.
    timeout_scale: u64,
    /// Gemini shows hooks by `name` and enables/disables them by it (`/hooks disable hookjournal`).
    named_handlers: bool,
    events: &'static [Event],
    next_step: &'static str,
}

/// Claude Code. Never `WorktreeCreate` (its stdout must be a path) nor `MessageDisplay` (fires per
/// streamed chunk). SessionEnd shares a 1.5 s budget among all hooks: ours asks for 2 and finishes
/// far inside it. Context-building events get 30 s (Claude's own UserPromptSubmit default).
const CLAUDE_EVENTS: &[Event] = &[
    ev("SessionStart", 30),
    ev("SessionEnd", 2),
    ev("UserPromptSubmit", 30),
    tool("PreToolUse"),
    tool("PostToolUse"),
    tool("PostToolUseFailure"),
    ev("PostToolBatch", 10),
    tool("PermissionRequest"),
    ev("Notification", 10),
    ev("Stop", 10),
    ev("StopFailure", 10),
    ev("SubagentStart", 10),
    ev("SubagentStop", 10),
    ev("PreCompact", 30),
    ev("PostCompact", 10),
    ev("TaskCreated", 10),
    ev("TaskCompleted", 10),
    ev("TeammateIdle", 10),
    ev("InstructionsLoaded", 10),
    ev("ConfigChange", 10),
    ev("CwdChanged", 10),
    ev("FileChanged", 10),
];

/// Codex CLI (same shape as Claude, seconds; SessionEnd has a 1 s budget of its own). Older Codex
/// versions ignore event names they do not know, so SessionEnd is safe to list.
const CODEX_EVENTS: &[Event] = &[
    ev("SessionStart", 30),
    ev("SessionEnd", 2),
    ev("UserPromptSubmit", 30),
    tool("PreToolUse"),
    tool("PermissionRequest"),
    tool("PostToolUse"),
    ev("PreCompact", 30),
    ev("PostCompact", 10),
    ev("SubagentStart", 10),
    ev("SubagentStop", 10),
    ev("Stop", 10),
];

/// Gemini CLI (milliseconds). Not BeforeModel, AfterModel or BeforeToolSelection: they fire on
/// every model request (AfterModel on every streamed chunk), carry the whole conversation, and the
/// handler has nothing to record or answer there that the agent and tool events do not give.
const GEMINI_EVENTS: &[Event] = &[
    ev("SessionStart", 30),
    ev("SessionEnd", 2),
    ev("BeforeAgent", 30),
    ev("AfterAgent", 10),
    tool("BeforeTool"),
    tool("AfterTool"),
    ev("PreCompress", 30),
    ev("Notification", 10),
];

const HOSTS: &[HostFacts] = &[
    HostFacts {
        host: Host::Claude,
        name: "claude",
        product: "Claude Code",
        config_dir: ".claude",
        config_dir_env: Some("CLAUDE_CONFIG_DIR"),
        project_file: "settings.json",
        local_file: Some("settings.local.json"),
        user_file: "settings.json",
        timeout_scale: 1,
        named_handlers: false,
        events: CLAUDE_EVENTS,
        next_step: "start Claude Code here (hooks load at session start; /hooks lists them); \
                    check with `hookjournal status`.",
    },
    HostFacts {
        host: Host::Codex,
        name: "codex",
        product: "Codex CLI",
        config_dir: ".codex",
        config_dir_env: Some("CODEX_HOME"),
        project_file: "hooks.json",
        local_file: None,
        user_file: "hooks.json",
        timeout_scale: 1,
        named_handlers: false,
        events: CODEX_EVENTS,
        next_step: "start Codex here and trust the new hooks in /hooks (project hooks run only in \
                    trusted projects); check with `hookjournal status`.",
    },
    HostFacts {
        host: Host::Gemini,
        name: "gemini",
        product: "Gemini CLI",
        config_dir: ".gemini",
        config_dir_env: None,
        project_file: "settings.json",
        local_file: None,
        user_file: "settings.json",
        timeout_scale: 1000,
        named_handlers: true,
        events: GEMINI_EVENTS,
        next_step: "start Gemini CLI here (/hooks panel lists the hooks); check with \
                    `hookjournal status`.",
    },
];

fn facts(host: Host) -> &'static HostFacts {
    HOSTS
        .iter()
        .find(|f| f.host == host)
        .expect("every host has a row in HOSTS")
}

/// The name hookjournal's own entries are recognised by (plus the `hook` subcommand after it).
const BINARY_NAME: &str = "hookjournal";

pub fn run_install(cmd: &CommandHelper, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let t = args.target;
    let facts = facts(t.host);
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let Some(path) = settings_path_from_env(facts, t.scope, &project)? else {
        return Ok(local_scope_usage_error(facts));
    };
    // An explicit --journal goes into the command, or the hook would look for the journal elsewhere.
    let explicit_journal = cmd.journal_arg().map(|j| absolute(&cwd, j));
    let exe = std::env::current_exe().context("finding the running hookjournal binary")?;
    let command = hook_command(&exe, facts.name, explicit_journal.as_deref())?;

    let before = read_settings(&path)?;
    let mut settings = before.as_ref().map(|(_, v)| v.clone()).unwrap_or_default();
    install_handler(&mut settings, facts, &command)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    let mut statusline = None;
    if args.statusline {
        if t.host != Host::Claude {
            eprintln!(
                "hookjournal: --statusline is Claude Code's status line; {} has none",
                facts.product
            );
            return Ok(ExitCode::from(2));
        }
        let base = statusline_base(&exe, explicit_journal.as_deref())?;
        statusline = Some(
            install_statusline(&mut settings, &base, args.statusline_record_only)
                .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?,
        );
    }
    let after = render(&settings);
    let before_text = before.as_ref().map(|(text, _)| text.as_str());

    // User scope serves every project: each gets its own journal when its first event arrives.
    let journal_dir = match (explicit_journal, t.scope) {
        (Some(j), _) => Some(j),
        (None, Scope::User) => None,
        (None, _) => Some(project.join(crate::locate::DIR_NAME)),
    };

    if t.scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    if t.dry_run {
        print!("{}", unified_diff(&path, before_text, &after));
        if before_text == Some(after.as_str()) {
            println!(
                "{} already registers hookjournal; nothing would change.",
                path.display()
            );
        }
        if let Some(dir) = journal_dir.filter(|d| !d.exists()) {
            println!("Would create the journal {}.", dir.display());
        }
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }

    let journal_note = match &journal_dir {
        Some(dir) => create_journal(dir)?,
        None => None,
    };
    if before_text == Some(after.as_str()) {
        println!(
            "{} already registers hookjournal for {}; nothing changed.",
            path.display(),
            facts.product
        );
    } else {
        let backup = write_settings(&path, &after, before.is_some())?;
        println!(
            "Registered hookjournal for {} {} events in {}{}.",
            facts.events.len(),
            facts.product,
            path.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
    }
    println!("Command: {command}");
    if let Some(line) = &statusline {
        println!("Status line: {line}");
    }
    match &journal_dir {
        Some(dir) => println!("Journal: {}", dir.display()),
        None => println!("Journal: .hookjournal/ in each project, created by its first event."),
    }
    if let Some(note) = journal_note {
        println!("Note: {note}");
    }
    for warning in warnings(facts, t.scope, &settings) {
        println!("Note: {warning}");
    }
    // Hosts read project settings where they start: from a subdirectory, that is the project.
    let next = if project != cwd && t.scope != Scope::User {
        facts
            .next_step
            .replacen(" here", &format!(" in {}", project.display()), 1)
    } else {
        facts.next_step.to_string()
    };
    println!("Next: {next}");
    Ok(ExitCode::SUCCESS)
}

pub fn run_uninstall(_cmd: &CommandHelper, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let t = args.target;
    let facts = facts(t.host);
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let Some(path) = settings_path_from_env(facts, t.scope, &project)? else {
        return Ok(local_scope_usage_error(facts));
    };
    if t.scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    let Some((before_text, mut settings)) = read_settings(&path)? else {
        println!("{} does not exist; nothing to remove.", path.display());
        return Ok(ExitCode::SUCCESS);
    };
    let removed = remove_handlers(&mut settings)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    let restored = remove_statusline(&mut settings);
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
    let after = render(&settings);
    if t.dry_run {
        print!("{}", unified_diff(&path, Some(&before_text), &after));
        println!("Dry run: nothing written.");
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
            .config_dir_env
            .and_then(std::env::var_os)
            .filter(|v| !v.is_empty());
        match moved {
            Some(dir) => Some(PathBuf::from(dir)),
            None => {
                let home = std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .ok_or_else(|| anyhow!("$HOME is not set; cannot find the user settings"))?;
                Some(Path::new(&home).join(facts.config_dir))
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
        Scope::Project => Some(project.join(facts.config_dir).join(facts.project_file)),
        Scope::Local => facts
            .local_file
            .map(|f| project.join(facts.config_dir).join(f)),
        Scope::User => user_dir.map(|d| d.join(facts.user_file)),
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

/// True for a command that runs a binary named `hookjournal` with the `hook` subcommand, wherever the
/// binary lives: re-installing after moving it replaces the old entries instead of adding new ones.
fn is_hookjournal_command(cmd: &str) -> bool {
    let Some((program, rest)) = split_program(cmd.trim_start()) else {
        return false;
    };
    let named_ours = Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == BINARY_NAME || n == "hookjournal.exe");
    let rest = rest.trim_start();
    named_ours
        && rest
            .strip_prefix("hook")
            .is_some_and(|after| after.is_empty() || after.starts_with(char::is_whitespace))
}

/// Splits a shell command into its first word (unquoted) and the rest.
fn split_program(cmd: &str) -> Option<(String, &str)> {
    let mut chars = cmd.char_indices();
    let (_, first) = chars.next()?;
    let mut word = String::new();
    match first {
        '"' => {
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => word.push(chars.next()?.1),
                    '"' => return Some((word, &cmd[i + 1..])),
                    _ => word.push(c),
                }
            }
            None
        }
        '\'' => {
            let end = cmd[1..].find('\'')? + 1;
            Some((cmd[1..end].to_string(), &cmd[end + 1..]))
        }
        _ => {
            let end = cmd.find(char::is_whitespace).unwrap_or(cmd.len());
            Some((cmd[..end].to_string(), &cmd[end..]))
        }
    }
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
fn install_statusline(
    settings: &mut Json,
    base: &str,
    record_only: bool,
) -> Result<String, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the top level is not a JSON object")?;
    let theirs = match root.get("statusLine") {
        None => None,
        Some(Json::Object(o)) => match o.get("command") {
            Some(Json::String(c)) if is_our_statusline(c) => chained_of(c),
            Some(Json::String(c)) => Some(c.clone()),
            _ => return Err("\"statusLine\" has no command to chain".into()),
        },
        Some(_) => return Err("\"statusLine\" is not an object".into()),
    };
    let mut command = base.to_string();
    if let Some(t) = &theirs {
        if record_only {
            command.push_str(" --record-only");
        }
        command.push_str(" --chain ");
        command.push_str(&quote_str(t));
    }
    match root.get_mut("statusLine") {
        Some(Json::Object(o)) => o.insert("command", Json::from(command.as_str())),
        _ => {
            let mut o = Object::default();
            o.insert("type", Json::from("command"));
            o.insert("command", Json::from(command.as_str()));
            root.insert("statusLine", Json::Object(o));
        }
    }
    Ok(command)
}

/// Takes our status line out: the user's chained command comes back, or the key goes.
/// Returns what was done, `None` when the status line was not ours.
fn remove_statusline(settings: &mut Json) -> Option<String> {
    let root = settings.as_object_mut()?;
    let Some(Json::Object(o)) = root.get_mut("statusLine") else {
        return None;
    };
    let Some(Json::String(cmd)) = o.get("command") else {
        return None;
    };
    if !is_our_statusline(cmd) {
        return None;
    }
    match chained_of(cmd) {
        Some(theirs) => {
            o.insert("command", Json::from(theirs.as_str()));
            Some(format!("Restored your own status line: {theirs}"))
        }
        None => {
            root.remove("statusLine");
            Some("Removed hookjournal's status line.".into())
        }
    }
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
// The edits: pure functions over the settings tree.

/// Makes `settings` register `command` for every event of the host, exactly once, after the
/// user's own hooks; every other key and hook stays as it was.
fn install_handler(settings: &mut Json, facts: &HostFacts, command: &str) -> Result<(), String> {
    let root = settings
        .as_object_mut()
        .ok_or("the top level is not a JSON object")?;
    match root.get("hooks") {
        None => root.insert("hooks", Json::Object(Object::default())),
        Some(Json::Object(hooks)) => {
            for event in facts.events {
                if hooks
                    .get(event.name)
                    .is_some_and(|v| !matches!(v, Json::Array(_)))
                {
                    return Err(format!("\"hooks\".\"{}\" is not an array", event.name));
                }
            }
        }
        Some(_) => return Err("\"hooks\" is not an object".into()),
    }
    remove_handlers(settings)?;
    let root = settings.as_object_mut().expect("checked above");
    if root.get("hooks").is_none() {
        root.insert("hooks", Json::Object(Object::default()));
    }
    let Some(Json::Object(hooks)) = root.get_mut("hooks") else {
        unreachable!("checked above")
    };
    for event in facts.events {
        let group = matcher_group(facts, event, command);
        match hooks.get_mut(event.name) {
            Some(Json::Array(groups)) => groups.push(group),
            _ => hooks.insert(event.name, Json::Array(vec![group])),
        }
    }
    Ok(())
}

fn matcher_group(facts: &HostFacts, event: &Event, command: &str) -> Json {
    let mut handler = Object::default();
    if facts.named_handlers {
        handler.insert("name", Json::from(BINARY_NAME));
    }
    handler.insert("type", Json::from("command"));
    handler.insert("command", Json::from(command));
    handler.insert(
        "timeout",
        Json::Number((event.timeout_s * facts.timeout_scale).into()),
    );
    let mut group = Object::default();
    if event.tool {
        group.insert("matcher", Json::from("*"));
    }
    group.insert("hooks", Json::Array(vec![Json::Object(handler)]));
    Json::Object(group)
}

/// Removes every hookjournal handler; a group, an event or the `hooks` object left empty by that is
/// removed too. Returns how many handlers went. Entries of shapes we do not know are left alone.
fn remove_handlers(settings: &mut Json) -> Result<usize, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the top level is not a JSON object")?;
    let hooks = match root.get_mut("hooks") {
        None => return Ok(0),
        Some(Json::Object(hooks)) => hooks,
        Some(_) => return Err("\"hooks\" is not an object".into()),
    };
    let mut removed = 0;
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Json::Array(groups) = groups else {
            continue;
        };
        let before = removed;
        groups.retain_mut(|group| {
            let Some(Json::Array(handlers)) =
                group.as_object_mut().and_then(|g| g.get_mut("hooks"))
            else {
                return true;
            };
            let n = handlers.len();
            handlers.retain(|h| !is_our_handler(h));
            removed += n - handlers.len();
            !(handlers.is_empty() && n > 0)
        });
        if groups.is_empty() && removed > before {
            emptied_events.push(event.clone());
        }
    }
    for event in &emptied_events {
        hooks.remove(event);
    }
    if hooks.is_empty() && removed > 0 {
        root.remove("hooks");
    }
    Ok(removed)
}

fn is_our_handler(handler: &Json) -> bool {
    match handler.as_object().and_then(|h| h.get("command")) {
        Some(Json::String(cmd)) => is_hookjournal_command(cmd),
        _ => false,
    }
}

/// Things the user should know after installing that the edit itself cannot fix.
fn warnings(facts: &HostFacts, scope: Scope, settings: &Json) -> Vec<String> {
    let mut out = Vec::new();
    if facts.host == Host::Claude && scope == Scope::Project {
        out.push(
            ".claude/settings.json is usually committed and the command holds this machine's path; \
             `--scope local` keeps it in your own .claude/settings.local.json."
                .to_string(),
        );
    }
    if facts.host == Host::Gemini {
        let disabled = settings
            .as_object()
            .and_then(|r| r.get("hooksConfig"))
            .and_then(Json::as_object)
            .and_then(|c| c.get("enabled"))
            .is_some_and(|e| *e == Json::Bool(false));
        if disabled {
            out.push(
                "this file sets hooksConfig.enabled to false: Gemini CLI will not run any hook."
                    .into(),
            );
        }
    }
    out
}

/// Pretty JSON, two-space indent, trailing newline.
fn render(settings: &Json) -> String {
    let mut s = serde_json::to_string_pretty(settings).expect("a JSON tree always serializes");
    s.push('\n');
    s
}

// ---------------------------------------------------------------------------------------------
// Files.

/// The file's text and tree, `None` if it does not exist. Whitespace-only counts as `{}`.
fn read_settings(path: &Path) -> anyhow::Result<Option<(String, Json)>> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow!("{}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some((text, Json::Object(Object::default()))));
    }
    match serde_json::from_str::<Json>(&text) {
        Ok(v) => Ok(Some((text, v))),
        Err(e) => bail!("{}: not valid JSON ({e}); nothing changed", path.display()),
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

// ---------------------------------------------------------------------------------------------

/// A JSON tree that keeps object keys in file order, so rewriting a user's settings file does not
/// reorder it. (serde_json's `preserve_order` would do the same, but a feature flag changes
/// `serde_json::Value` for every crate in the build, and the other crates' output with it.)
mod json {
    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
    use std::fmt;

    #[derive(Clone, Debug, PartialEq)]
    pub enum Json {
        Null,
        Bool(bool),
        Number(serde_json::Number),
        String(String),
        Array(Vec<Json>),
        Object(Object),
    }

    /// Keys in insertion order; inserting an existing key replaces its value in place.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Object(Vec<(String, Json)>);

    impl Default for Json {
        fn default() -> Self {
            Json::Object(Object::default())
        }
    }

    impl From<&str> for Json {
        fn from(s: &str) -> Self {
            Json::String(s.to_string())
        }
    }

    impl Json {
        pub fn as_object(&self) -> Option<&Object> {
            match self {
                Json::Object(o) => Some(o),
                _ => None,
            }
        }
        pub fn as_object_mut(&mut self) -> Option<&mut Object> {
            match self {
                Json::Object(o) => Some(o),
                _ => None,
            }
        }
    }

    impl Object {
        pub fn get(&self, key: &str) -> Option<&Json> {
            self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
        }
        pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
            self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
        }
        pub fn insert(&mut self, key: &str, value: Json) {
            match self.get_mut(key) {
                Some(slot) => *slot = value,
                None => self.0.push((key.to_string(), value)),
            }
        }
        pub fn remove(&mut self, key: &str) -> Option<Json> {
            let i = self.0.iter().position(|(k, _)| k == key)?;
            Some(self.0.remove(i).1)
        }
        pub fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
        pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Json)> {
            self.0.iter_mut().map(|(k, v)| (&*k, v))
        }
    }

    impl Serialize for Json {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Json::Null => s.serialize_unit(),
                Json::Bool(b) => s.serialize_bool(*b),
                Json::Number(n) => n.serialize(s),
                Json::String(v) => s.serialize_str(v),
                Json::Array(items) => {
                    let mut seq = s.serialize_seq(Some(items.len()))?;
                    for item in items {
                        seq.serialize_element(item)?;
                    }
                    seq.end()
                }
                Json::Object(o) => {
                    let mut map = s.serialize_map(Some(o.0.len()))?;
                    for (k, v) in &o.0 {
                        map.serialize_entry(k, v)?;
                    }
                    map.end()
                }
            }
        }
    }

    impl<'de> Deserialize<'de> for Json {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(JsonVisitor)
        }
    }

    struct JsonVisitor;

    impl<'de> Visitor<'de> for JsonVisitor {
        type Value = Json;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_unit<E>(self) -> Result<Json, E> {
            Ok(Json::Null)
        }
        fn visit_none<E>(self) -> Result<Json, E> {
            Ok(Json::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
            Json::deserialize(d)
        }
        fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
            Ok(Json::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
            Ok(Json::Number(n.into()))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
            Ok(Json::Number(n.into()))
        }
        fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
            serde_json::Number::from_f64(n)
                .map(Json::Number)
                .ok_or_else(|| E::custom("number out of range"))
        }
        fn visit_str<E>(self, s: &str) -> Result<Json, E> {
            Ok(Json::String(s.to_string()))
        }
        fn visit_string<E>(self, s: String) -> Result<Json, E> {
            Ok(Json::String(s))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(Json::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
            let mut o = Object::default();
            while let Some((k, v)) = map.next_entry::<String, Json>()? {
                o.insert(&k, v); // a repeated key keeps its first position and its last value
            }
            Ok(Json::Object(o))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "\"/opt/bin/hookjournal\" hook --host claude";

    fn parse(s: &str) -> Json {
        serde_json::from_str(s).unwrap()
    }
    fn value(j: &Json) -> serde_json::Value {
        serde_json::to_value(j).unwrap()
    }

    fn user_settings() -> Json {
        parse(
            r#"{
              "model": "opus",
              "permissions": {"allow": ["Bash(git:*)"], "deny": []},
              "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
              },
              "env": {"FOO": "1"}
            }"#,
        )
    }

    #[test]
    fn every_host_has_one_row_and_no_forbidden_event() {
        for host in [Host::Claude, Host::Codex, Host::Gemini] {
            assert_eq!(HOSTS.iter().filter(|f| f.host == host).count(), 1);
        }
        for f in HOSTS {
            for e in f.events {
                assert!(
                    !matches!(e.name, "WorktreeCreate" | "MessageDisplay"),
                    "{} {}",
                    f.name,
                    e.name
                );
            }
        }
        assert_eq!(CLAUDE_EVENTS.len(), 22);
        assert_eq!(CODEX_EVENTS.len(), 11);
    }

    #[test]
    fn install_adds_one_group_per_event_after_the_users_own() {
        let mut s = user_settings();
        install_handler(&mut s, facts(Host::Claude), CMD).unwrap();
        let v = value(&s);
        assert_eq!(v["hooks"].as_object().unwrap().len(), CLAUDE_EVENTS.len());
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
        install_handler(&mut s, facts(Host::Claude), CMD).unwrap();
        let text = render(&s);
        let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("model") < pos("permissions"));
        assert!(pos("permissions") < pos("hooks"));
        assert!(pos("hooks") < pos("env"));
        assert!(pos("PreToolUse") < pos("Stop") && pos("Stop") < pos("SessionStart"));
    }

    #[test]
    fn install_is_idempotent_and_replaces_a_moved_binary() {
        let mut once = user_settings();
        install_handler(&mut once, facts(Host::Claude), CMD).unwrap();
        let mut twice = once.clone();
        install_handler(&mut twice, facts(Host::Claude), CMD).unwrap();
        assert_eq!(render(&once), render(&twice));

        let moved = "\"/home/me/.cargo/bin/hookjournal\" hook --host claude";
        install_handler(&mut twice, facts(Host::Claude), moved).unwrap();
        let text = render(&twice);
        assert!(!text.contains("/opt/bin/hookjournal"));
        assert_eq!(
            text.matches("/home/me/.cargo/bin/hookjournal").count(),
            CLAUDE_EVENTS.len()
        );
    }

    #[test]
    fn uninstall_restores_the_original() {
        let original = user_settings();
        let mut s = original.clone();
        install_handler(&mut s, facts(Host::Claude), CMD).unwrap();
        assert_eq!(remove_handlers(&mut s).unwrap(), CLAUDE_EVENTS.len());
        assert_eq!(render(&s), render(&original));
        assert_eq!(remove_handlers(&mut s).unwrap(), 0);
    }

    #[test]
    fn uninstall_removes_a_hooks_object_it_emptied() {
        let original = parse(r#"{"model": "opus"}"#);
        let mut s = original.clone();
        install_handler(&mut s, facts(Host::Codex), CMD).unwrap();
        remove_handlers(&mut s).unwrap();
        assert_eq!(s, original);
    }

    #[test]
    fn uninstall_keeps_a_users_hook_sharing_our_group() {
        let mut s = parse(&format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": {}}}, {{"type": "command", "command": "say hi"}}]}}]}}}}"#,
            serde_json::to_string(CMD).unwrap()
        ));
        assert_eq!(remove_handlers(&mut s).unwrap(), 1);
        assert_eq!(
            value(&s),
            serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}})
        );
    }

    #[test]
    fn gemini_gets_milliseconds_and_a_name_and_keeps_its_config_keys() {
        let mut s = parse(r#"{"hooks": {"disabled": ["x"]}, "hooksConfig": {"enabled": true}}"#);
        install_handler(&mut s, facts(Host::Gemini), CMD).unwrap();
        let v = value(&s);
        assert_eq!(v["hooks"]["disabled"][0], "x");
        let h = &v["hooks"]["SessionEnd"][0]["hooks"][0];
        assert_eq!(h["timeout"], 2000);
        assert_eq!(h["name"], "hookjournal");
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 10000);
        assert_eq!(v["hooks"]["BeforeTool"][0]["matcher"], "*");
        assert!(v["hooks"].get("BeforeModel").is_none());
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
            let before = s.clone();
            assert!(
                install_handler(&mut s, facts(Host::Claude), CMD).is_err(),
                "{bad}"
            );
            assert_eq!(s, before, "{bad}");
        }
        assert!(remove_handlers(&mut parse(r#"{"hooks": 3}"#)).is_err());
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
        let claude = facts(Host::Claude);
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
            settings_path(facts(Host::Codex), Scope::Project, p, None).unwrap(),
            Path::new("/p/.codex/hooks.json")
        );
        assert!(settings_path(facts(Host::Codex), Scope::Local, p, None).is_none());
        assert_eq!(
            settings_path(facts(Host::Gemini), Scope::Project, p, None).unwrap(),
            Path::new("/p/.gemini/settings.json")
        );
    }

    #[test]
    fn json_tree_keeps_order_and_duplicate_keys_like_serde_json() {
        let j = parse(r#"{"z": 1, "a": {"y": [1.5, null, true], "b": "s"}, "z": 2}"#);
        assert_eq!(
            serde_json::to_string(&j).unwrap(),
            r#"{"z":2,"a":{"y":[1.5,null,true],"b":"s"}}"#
        );
        assert_eq!(render(&parse("{}")), "{}\n");
    }
}
