//! `install --host vibe` / `uninstall --host vibe`. Mistral Vibe reads hooks from
//! `<cwd>/.vibe/hooks.toml` — only in a folder the user trusted (`vibe --trust`, or the folder
//! in `~/.vibe/trusted_folders.toml`) — and from `~/.vibe/hooks.toml` (`$VIBE_HOME`): an array
//! of `[[hooks]]` tables (`name`, `type`, `command`, `match`, `timeout`, `strict`). So install
//! appends one table per event of the host table (`projections::hosts::VIBE`: `pre_tool`,
//! `post_tool`, `post_agent`), no `match` (every tool), named `hookjournal-<type>` — one name
//! in both files runs once, the project's (Vibe skips the user's duplicate) —, and keeps every
//! other line byte for byte (the table editing is Kimi's: `kimi::remove`); uninstall removes
//! the tables whose command is `hookjournal hook …` and nothing else. Install never trusts the
//! folder itself: that is the user's decision, said in its output (and by `doctor`).

use super::{hook_command, read_if_present, unified_diff, write_settings, Scope};
use crate::cli_util::CommandHelper;
use anyhow::{anyhow, Context};
use projections::hosts::VIBE;
use std::path::PathBuf;
use std::process::ExitCode;

/// The hooks file of `scope`: the project's `.vibe/hooks.toml`, or the user's
/// (`$VIBE_HOME/hooks.toml`, else `~/.vibe/hooks.toml`).
fn hooks_path(scope: Scope) -> anyhow::Result<PathBuf> {
    let install = VIBE.install.as_ref().expect("Vibe has install facts");
    if scope != Scope::User {
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let (project, _) = super::project_root(&cwd);
        return Ok(project.join(install.config_dir).join(install.project_file));
    }
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let dir = install
        .config_dir_env
        .and_then(env)
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
        .ok_or_else(|| anyhow!("$HOME is not set; cannot find Mistral Vibe's hooks.toml"))?;
    Ok(dir.join(install.user_file))
}

/// hookjournal's tables, one per registered event, as `add` appends them.
fn ours(command: &str) -> String {
    let command = toml::Value::String(command.to_string());
    VIBE.registered()
        .map(|(e, reg)| {
            format!(
                "\n[[hooks]]\nname = \"hookjournal-{0}\"\ntype = \"{0}\"\ncommand = {command}\ntimeout = {1}\n",
                e.name, reg.timeout_s
            )
        })
        .collect()
}

/// `text` (a Vibe hooks.toml) with hookjournal's tables for `command`: unchanged when they are
/// already its last lines; else any older ones removed and these appended. Errors when the
/// result would not parse, or its `hooks` would not be an array of tables.
pub(super) fn add(text: &str, command: &str) -> Result<String, String> {
    let tables = ours(command);
    if text.ends_with(&tables) && super::kimi::remove(text).1 == VIBE.registered().count() {
        return Ok(text.to_string());
    }
    let (mut out, _) = super::kimi::remove(text);
    out.push_str(&tables);
    let parsed: toml::Table =
        toml::from_str(&out).map_err(|e| format!("the hooks would not parse: {e}"))?;
    match parsed.get("hooks") {
        Some(toml::Value::Array(a)) if a.iter().all(|h| h.is_table()) => Ok(out),
        _ => Err("its `hooks` is not an array of [[hooks]] tables".into()),
    }
}

/// What install says of trust, for the project's file.
const TRUST_NOTE: &str = "Mistral Vibe runs .vibe/hooks.toml only in a trusted folder, and \
     only the one it starts in: trust this folder when Vibe asks (or start it with `vibe \
     --trust`; `vibe -p` never asks). Or install with --scope user (~/.vibe/hooks.toml runs \
     everywhere).";

/// `install --host vibe [--scope user]`.
pub fn install(cmd: &CommandHelper, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope == Scope::Local {
        eprintln!(
            "hookjournal: Mistral Vibe has no local hooks file: use the project's (the default) \
             or --scope user"
        );
        return Ok(ExitCode::from(2));
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, _) = super::project_root(&cwd);
    // The journal named only when given: else the hook finds the project's from where Vibe runs.
    let journal = super::shim_journal(cmd, Scope::User, &cwd, &project);
    let program = super::program::for_this_binary()?;
    let command = hook_command(&program.path, VIBE.name, journal.as_deref())?;
    let path = hooks_path(scope)?;
    let before = read_if_present(&path)?;
    let after = add(before.as_deref().unwrap_or(""), &command)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", path.display()))?;
    if dry_run {
        print!("{}", unified_diff(&path, before.as_deref(), &after));
        super::dry_run_tail(journal.as_deref(), &program.notes);
        return Ok(ExitCode::SUCCESS);
    }
    let journal_note = match &journal {
        Some(j) => super::create_journal(j)?,
        None => None,
    };
    if before.as_deref() == Some(after.as_str()) {
        println!(
            "{} already registers hookjournal for Mistral Vibe; nothing changed.",
            path.display()
        );
    } else {
        let backup = write_settings(&path, &after, before.is_some())?;
        println!(
            "Registered hookjournal for {} Mistral Vibe events in {}{}.",
            VIBE.registered().count(),
            path.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
    }
    println!("Command: {command}");
    match &journal {
        Some(j) => println!("Journal: {}", j.display()),
        None => println!("Journal: .hookjournal/ in each project, created by its first event."),
    }
    for note in program.notes.iter().chain(&journal_note) {
        println!("Note: {note}");
    }
    if scope != Scope::User {
        println!("Note: {TRUST_NOTE}");
    }
    println!(
        "Note: Mistral Vibe reads context only after a tool (post_tool's additional_context): \
         the task reminder goes there; nothing is answered at the turn's end."
    );
    let next = VIBE.install.as_ref().map_or("", |i| i.next_step);
    println!("Next: {next}");
    Ok(ExitCode::SUCCESS)
}

/// `uninstall --host vibe [--scope user]`: hookjournal's `[[hooks]]` tables; the rest stays.
pub fn uninstall(scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    super::kimi::remove_from(&hooks_path(scope)?, dry_run)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINE: &str = "# my hooks\n[[hooks]]\nname = \"lint\"\ntype = \"post_agent\" # after each turn\ncommand = \"make lint\"\ntimeout = 30.0\n";

    /// Given the user's hooks.toml, install appends exactly Vibe's three types, named, with no
    /// matcher, keeping every line of the user's; again, nothing changes; uninstall gives the
    /// file back.
    #[test]
    fn add_keeps_the_users_lines_and_remove_gives_them_back() {
        let cmd = r#""/bin/hookjournal" hook --host vibe"#;
        let after = add(MINE, cmd).unwrap();
        assert!(after.starts_with(MINE), "every line of the user's kept");
        let t: toml::Table = toml::from_str(&after).unwrap();
        let hooks = t["hooks"].as_array().unwrap();
        assert_eq!(hooks.len(), 1 + 3);
        let types: Vec<(&str, &str)> = hooks[1..]
            .iter()
            .map(|h| (h["name"].as_str().unwrap(), h["type"].as_str().unwrap()))
            .collect();
        assert_eq!(
            types,
            [
                ("hookjournal-pre_tool", "pre_tool"),
                ("hookjournal-post_tool", "post_tool"),
                ("hookjournal-post_agent", "post_agent")
            ]
        );
        assert!(hooks[1..]
            .iter()
            .all(|h| h.get("match").is_none() && h["command"].as_str() == Some(cmd)));
        assert_eq!(add(&after, cmd).unwrap(), after, "idempotent");
        assert_eq!(super::super::kimi::remove(&after), (MINE.to_string(), 3));
        assert_eq!(add("", cmd).unwrap().trim_start(), ours(cmd).trim_start());
    }

    #[test]
    fn a_users_inline_hooks_array_is_refused() {
        let e = add("hooks = []\n", "hookjournal hook --host vibe").unwrap_err();
        assert!(e.contains("parse") || e.contains("array"), "{e}");
    }
}
