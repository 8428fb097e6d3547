//! `install --host kimi` / `uninstall --host kimi`. Kimi CLI reads hooks only from the user's
//! `~/.kimi/config.toml` (`$KIMI_SHARE_DIR/config.toml`): an array of `[[hooks]]` tables
//! (`event`, `command`, `matcher`, `timeout`), beside the user's providers and their secrets. So
//! install appends one table per event of the host table (`projections::hosts::KIMI`: exactly
//! the 13 names Kimi accepts, for one other name makes Kimi refuse to start), with no matcher (an
//! empty one is every tool; Kimi's is a regex), and keeps every other line byte for byte;
//! uninstall removes the tables whose command is `hookjournal hook …` and nothing else. There is
//! no project file: `--scope user` only.

use super::{hook_command, read_if_present, unified_diff, write_settings, Scope};
use crate::cli_util::CommandHelper;
use anyhow::{anyhow, Context};
use engine::registration::is_hookjournal_command;
use projections::hosts::KIMI;
use std::path::PathBuf;
use std::process::ExitCode;

/// The user's Kimi config: `$KIMI_SHARE_DIR/config.toml`, else `~/.kimi/config.toml`.
fn config_path() -> anyhow::Result<PathBuf> {
    let install = KIMI.install.as_ref().expect("Kimi has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let dir = install
        .config_dir_env
        .and_then(env)
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
        .ok_or_else(|| anyhow!("$HOME is not set; cannot find Kimi CLI's config.toml"))?;
    Ok(dir.join(install.user_file))
}

/// One `[[hooks]]` table: where it starts and ends (line indexes, end excluded), and whether
/// its command is hookjournal's hook.
struct Table {
    start: usize,
    end: usize,
    ours: bool,
}

/// The `[[hooks]]` tables of `lines`: from their header to the next header (a line starting
/// with `[`) or the end.
fn tables(lines: &[&str]) -> Vec<Table> {
    let header = |l: &str| l.trim_start().starts_with('[');
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() != "[[hooks]]" {
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&n| header(lines[n]))
            .unwrap_or(lines.len());
        let body = lines[i + 1..end].join("\n");
        let ours = toml::from_str::<toml::Table>(&body).ok().is_some_and(|t| {
            t.get("command")
                .and_then(|c| c.as_str())
                .is_some_and(is_hookjournal_command)
        });
        out.push(Table {
            start: i,
            end,
            ours,
        });
    }
    out
}

/// `text` without hookjournal's `[[hooks]]` tables (each with the blank line `add` put before
/// it), and how many went. Every other line is kept as it was.
pub(super) fn remove(text: &str) -> (String, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let ours: Vec<Table> = tables(&lines).into_iter().filter(|t| t.ours).collect();
    if ours.is_empty() {
        return (text.to_string(), 0);
    }
    let mut keep = vec![true; lines.len()];
    for t in &ours {
        let mut end = t.end;
        // Trailing blank lines of the table go with it.
        while end > t.start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        keep[t.start..end].iter_mut().for_each(|k| *k = false);
        if t.start > 0 && lines[t.start - 1].trim().is_empty() {
            keep[t.start - 1] = false;
        }
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    (out, ours.len())
}

/// hookjournal's tables, one per registered event, as `add` appends them.
fn ours(command: &str) -> String {
    let command = toml::Value::String(command.to_string());
    KIMI.registered()
        .map(|(e, reg)| {
            format!(
                "\n[[hooks]]\nevent = \"{}\"\ncommand = {command}\ntimeout = {}\n",
                e.name, reg.timeout_s
            )
        })
        .collect()
}

/// `text` (a Kimi config.toml) with hookjournal's tables for `command`: unchanged when they are
/// already its last lines; else any older ones removed and these appended. Errors when the
/// result would not parse, or its `hooks` would not be an array of tables (a `hooks = […]` of
/// the user's).
pub(super) fn add(text: &str, command: &str) -> Result<String, String> {
    let tables = ours(command);
    if text.ends_with(&tables) && remove(text).1 == KIMI.registered().count() {
        return Ok(text.to_string());
    }
    let (mut out, _) = remove(text);
    out.push_str(&tables);
    let parsed: toml::Table =
        toml::from_str(&out).map_err(|e| format!("the hooks would not parse: {e}"))?;
    match parsed.get("hooks") {
        Some(toml::Value::Array(a)) if a.iter().all(|h| h.is_table()) => Ok(out),
        _ => Err("its `hooks` is not an array of [[hooks]] tables".into()),
    }
}

fn user_scope_only(scope: Scope) -> Option<ExitCode> {
    (scope != Scope::User).then(|| {
        eprintln!(
            "hookjournal: Kimi CLI reads hooks only from the user's ~/.kimi/config.toml (every \
             project): use --scope user"
        );
        ExitCode::from(2)
    })
}

/// `install --host kimi --scope user`.
pub fn install(cmd: &CommandHelper, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if let Some(code) = user_scope_only(scope) {
        return Ok(code);
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, _) = super::project_root(&cwd);
    let journal = super::shim_journal(cmd, scope, &cwd, &project);
    let program = super::program::for_this_binary()?;
    let command = hook_command(&program.path, KIMI.name, journal.as_deref())?;
    let path = config_path()?;
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
            "{} already registers hookjournal for Kimi CLI; nothing changed.",
            path.display()
        );
    } else {
        let backup = write_settings(&path, &after, before.is_some())?;
        println!(
            "Registered hookjournal for {} Kimi CLI events in {}{}.",
            KIMI.registered().count(),
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
    println!(
        "Note: Kimi CLI reads no hook's context (only a block), so hookjournal records it and \
         answers nothing."
    );
    let next = KIMI.install.as_ref().map_or("", |i| i.next_step);
    println!("Next: {next}");
    Ok(ExitCode::SUCCESS)
}

/// `uninstall --host kimi --scope user`: hookjournal's `[[hooks]]` tables; the rest stays.
pub fn uninstall(scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if let Some(code) = user_scope_only(scope) {
        return Ok(code);
    }
    remove_from(&config_path()?, dry_run)
}

/// Removes hookjournal's `[[hooks]]` tables from the TOML hooks file at `path` (Kimi's
/// `config.toml`, Vibe's `hooks.toml`), every other line kept; `--dry-run` shows the diff.
pub(super) fn remove_from(path: &std::path::Path, dry_run: bool) -> anyhow::Result<ExitCode> {
    let Some(before) = read_if_present(path)? else {
        println!("{} does not exist; nothing to remove.", path.display());
        return Ok(ExitCode::SUCCESS);
    };
    let (after, removed) = remove(&before);
    if removed == 0 {
        println!(
            "{} has no hookjournal hooks; nothing to remove.",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if dry_run {
        print!("{}", unified_diff(path, Some(&before), &after));
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    let backup = write_settings(path, &after, true)?;
    println!(
        "Removed {removed} hookjournal hooks from {}{}; the journal itself is untouched.",
        path.display(),
        backup
            .map(|b| format!(" (previous file kept as {})", b.display()))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINE: &str = "# my config\ndefault_model = \"mock\"\n\n[providers.mock]\ntype = \"kimi\"\napi_key = \"sk-secret\" # keep\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\n";

    #[test]
    fn add_keeps_the_users_lines_and_remove_gives_them_back() {
        let cmd = r#""/bin/hookjournal" hook --host kimi"#;
        let after = add(MINE, cmd).unwrap();
        assert!(after.starts_with(MINE), "every line of the user's kept");
        let t: toml::Table = toml::from_str(&after).unwrap();
        let hooks = t["hooks"].as_array().unwrap();
        assert_eq!(hooks.len(), 1 + 13);
        let names: Vec<&str> = hooks[1..]
            .iter()
            .map(|h| h["event"].as_str().unwrap())
            .collect();
        let accepted: Vec<&str> = KIMI.events.iter().map(|e| e.name).collect();
        assert_eq!(names, accepted, "exactly Kimi's 13 names");
        assert!(hooks[1..]
            .iter()
            .all(|h| h.get("matcher").is_none() && h["command"].as_str() == Some(cmd)));
        assert_eq!(add(&after, cmd).unwrap(), after, "idempotent");
        assert_eq!(remove(&after), (MINE.to_string(), 13));
        assert_eq!(remove(MINE), (MINE.to_string(), 0), "the user's hook stays");
    }

    #[test]
    fn a_users_inline_hooks_array_is_refused() {
        let e = add("hooks = []\n", "hookjournal hook --host kimi").unwrap_err();
        assert!(e.contains("parse") || e.contains("array"), "{e}");
    }
}
