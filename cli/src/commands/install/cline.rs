//! `install --host cline` / `uninstall --host cline`. Cline CLI has no settings file for hooks:
//! it runs every executable in its hooks directories named after one of its events
//! (`.clinerules/hooks/PreToolUse`, `~/.cline/hooks/TaskStart`, …). So install writes one small
//! shell script per event in the host table (`projections::hosts::CLINE`), each running
//! `hookjournal hook --host cline`; uninstall removes those files and only those. A file of that
//! name that is not hookjournal's (the user's own hook) is never touched: install leaves it and
//! says that event is not journaled, uninstall leaves it in place.

use super::{create_journal, project_line, project_root, unified_diff, Scope};
use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use engine::registration::{is_cline_hook as is_ours, CLINE_HOOK_MARKER as MARKER};
use projections::hosts::cline::cline_hook_file;
use projections::hosts::CLINE;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The hooks directory for `scope`: the project's `.clinerules/hooks`, or the user's
/// (`$CLINE_DIR/hooks`, else `~/.cline/hooks`).
fn hooks_dir(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    let install = CLINE.install.as_ref().expect("Cline has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match scope {
        Scope::Project => Ok(project.join(install.config_dir).join(install.project_file)),
        Scope::User => {
            let dir = install
                .config_dir_env
                .and_then(env)
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
                .ok_or_else(|| anyhow!("$HOME is not set; cannot find Cline's hooks directory"))?;
            Ok(dir.join(install.user_file))
        }
        Scope::Local => bail!("no local scope"),
    }
}

/// `text` in single quotes for sh.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The script for every event: the payload names the event itself (`hookName`).
fn script(exe: &Path, journal: Option<&Path>) -> String {
    let mut command = format!("exec {} hook --host cline", quoted(&exe.to_string_lossy()));
    if let Some(j) = journal {
        command.push_str(&format!(" --journal {}", quoted(&j.to_string_lossy())));
    }
    format!("#!/bin/sh\n{MARKER} (`hookjournal uninstall --host cline` removes it).\n{command}\n")
}

/// The hook files, one per registered event, in table order.
fn files(dir: &Path) -> Vec<PathBuf> {
    CLINE
        .registered()
        .filter_map(|(e, _)| cline_hook_file(e.name))
        .map(|f| dir.join(f))
        .collect()
}

/// `install --host cline [--scope project|user]`.
pub fn install(cmd: &CommandHelper, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope == Scope::Local {
        return Ok(local_scope_usage_error());
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let journal = super::shim_journal(cmd, scope, &cwd, &project);
    let program = super::program::for_this_binary()?;
    let after = script(&program.path, journal.as_deref());
    let dir = hooks_dir(scope, &project)?;
    let mut writes = Vec::new();
    let mut kept = Vec::new();
    for path in files(&dir) {
        match super::read_if_present(&path)? {
            Some(t) if !is_ours(&t) => kept.push(path),
            Some(t) if t == after => {}
            before => writes.push((path, before)),
        }
    }
    if scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    if dry_run {
        for (path, before) in &writes {
            print!("{}", unified_diff(path, before.as_deref(), &after));
        }
        kept_notes(&kept);
        super::dry_run_tail(journal.as_deref(), &program.notes);
        return Ok(ExitCode::SUCCESS);
    }
    let journal_note = match &journal {
        Some(j) => create_journal(j)?,
        None => None,
    };
    for (path, _) in &writes {
        super::write_file(path, &after, false, Some(0o755))?;
    }
    println!(
        "Wrote {} Cline hook files to {} ({} already there).",
        writes.len(),
        dir.display(),
        files(&dir).len() - writes.len() - kept.len()
    );
    kept_notes(&kept);
    println!("Command: {}", after.lines().nth(2).unwrap_or_default());
    match &journal {
        Some(j) => println!("Journal: {}", j.display()),
        None => println!("Journal: .hookjournal/ in each project, created by its first event."),
    }
    for note in program.notes.iter().chain(&journal_note) {
        println!("Note: {note}");
    }
    let next = CLINE.install.as_ref().map_or("", |i| i.next_step);
    println!("Next: {next}");
    Ok(ExitCode::SUCCESS)
}

/// Says which of the user's own hook files were left as they are.
fn kept_notes(kept: &[PathBuf]) {
    for path in kept {
        println!(
            "Kept {}: it is not hookjournal's (your own hook); that event is not journaled. \
             Cline runs every file of the event's name, so yours can move to a name with an \
             extension (`.sh`) and `install` be run again.",
            path.display()
        );
    }
}

/// `uninstall --host cline`: the hook files install wrote; the user's own and the journal stay.
pub fn uninstall(scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope == Scope::Local {
        return Ok(local_scope_usage_error());
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, _) = project_root(&cwd);
    let dir = hooks_dir(scope, &project)?;
    let mut ours = Vec::new();
    let mut kept = Vec::new();
    for path in files(&dir) {
        match super::read_if_present(&path)? {
            Some(t) if is_ours(&t) => ours.push(path),
            Some(_) => kept.push(path),
            None => {}
        }
    }
    for path in &kept {
        println!("Left {}: it is not hookjournal's.", path.display());
    }
    if ours.is_empty() {
        println!("hookjournal's Cline hooks are not installed; nothing to remove.");
        return Ok(ExitCode::SUCCESS);
    }
    if dry_run {
        for path in &ours {
            println!("Would remove {}.", path.display());
        }
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    for path in &ours {
        super::remove_file(path)?;
    }
    // The directories go only when nothing of the user's is left in them.
    if super::remove_dir_if_empty(&dir) && scope == Scope::Project {
        if let Some(parent) = dir.parent() {
            super::remove_dir_if_empty(parent);
        }
    }
    println!(
        "Removed {} Cline hook files from {}; the journal itself is untouched.",
        ours.len(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn local_scope_usage_error() -> ExitCode {
    eprintln!(
        "hookjournal: --scope local is Claude Code's .claude/settings.local.json; Cline has project and user scopes only"
    );
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_event_has_its_hook_file_and_the_script_is_recognised() {
        assert_eq!(files(Path::new("/h")).len(), CLINE.registered().count());
        let s = script(
            Path::new("/bin/it's hj"),
            Some(Path::new("/p/.hookjournal")),
        );
        assert!(is_ours(&s));
        assert_eq!(
            s.lines().nth(2),
            Some(r"exec '/bin/it'\''s hj' hook --host cline --journal '/p/.hookjournal'")
        );
        assert!(!is_ours("#!/bin/sh\necho mine\n"));
    }
}
