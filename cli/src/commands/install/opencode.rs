//! `install --host opencode` / `uninstall --host opencode`. OpenCode runs no shell hooks: its
//! plugins are JS modules it loads from `.opencode/plugins/` (and `~/.config/opencode/plugins/`)
//! into its own process. So install writes one small shim plugin there, `hookjournal.js`
//! (`opencode/hookjournal.js`, embedded here), its settings line naming this binary, the journal
//! and the hooks and events to forward (from the host facts table). Uninstall removes that file,
//! and only a file install wrote.

use super::{create_journal, project_line, project_root, unified_diff, write_settings, Scope};
use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use projections::host::OPENCODE;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The shim as shipped; install replaces its settings line.
const SHIM: &str = include_str!("opencode/hookjournal.js");
/// The shim's first line: how uninstall knows the file is hookjournal's.
const MARKER: &str = "// hookjournal's OpenCode shim";
/// The settings line install writes.
const SETTINGS_LINE: &str = "const SETTINGS = {};";

/// The plugin file for `scope`: the project's, or the user's (`$XDG_CONFIG_HOME`, else
/// `~/.config`).
fn plugin_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    let install = OPENCODE
        .install
        .as_ref()
        .expect("OpenCode has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match scope {
        Scope::Project => Ok(project.join(install.config_dir).join(install.project_file)),
        Scope::User => {
            let config = env("XDG_CONFIG_HOME")
                .map(|c| PathBuf::from(c).join("opencode"))
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
                .ok_or_else(|| anyhow!("$HOME is not set; cannot find OpenCode's config"))?;
            Ok(config.join(install.user_file))
        }
        Scope::Local => bail!("no local scope"),
    }
}

/// The shim with its settings: the binary, the journal (none: the project's own, found from
/// where OpenCode runs), and each hook or event with its budget.
fn shim(exe: &Path, journal: Option<&Path>) -> String {
    let scale = OPENCODE.install.as_ref().map_or(1000, |i| i.timeout_scale);
    let hooks: Vec<serde_json::Value> = OPENCODE
        .registered()
        .map(|(e, r)| serde_json::json!({ "name": e.name, "timeoutMs": r.timeout_s * scale }))
        .collect();
    let mut settings = serde_json::json!({ "command": exe.to_string_lossy(), "hooks": hooks });
    if let Some(j) = journal {
        settings["journal"] = j.to_string_lossy().into();
    }
    SHIM.replacen(SETTINGS_LINE, &format!("const SETTINGS = {settings};"), 1)
}

/// Whether `text` is a shim install wrote.
fn is_ours(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// `install --host opencode [--scope project|user]`.
pub fn install(cmd: &CommandHelper, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope == Scope::Local {
        return Ok(local_scope_usage_error());
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    let journal = super::shim_journal(cmd, scope, &cwd, &project);
    // A path that lasts (the same program on PATH is preferred), with a note where it will not.
    let program = super::program::for_this_binary()?;
    let exe = &program.path;
    let path = plugin_path(scope, &project)?;
    let before = super::read_if_present(&path)?;
    if before.as_deref().is_some_and(|t| !is_ours(t)) {
        bail!(
            "{} exists and is not hookjournal's shim; nothing changed",
            path.display()
        );
    }
    let after = shim(exe, journal.as_deref());
    if scope != Scope::User {
        print!("{}", project_line(&project, marker, &cwd));
    }
    if dry_run {
        print!("{}", unified_diff(&path, before.as_deref(), &after));
        super::dry_run_tail(journal.as_deref(), &program.notes);
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
        "Wrote the hookjournal plugin ({} OpenCode hooks and events) to {}.",
        OPENCODE.registered().count(),
        path.display()
    );
    super::shim_report(
        "opencode",
        exe,
        journal.as_deref(),
        program.notes.iter().chain(&journal_note),
        OPENCODE.install.as_ref().map_or("", |i| i.next_step),
    );
    Ok(ExitCode::SUCCESS)
}

/// `uninstall --host opencode`: the shim install wrote; the journal stays.
pub fn uninstall(scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope == Scope::Local {
        return Ok(local_scope_usage_error());
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, _) = project_root(&cwd);
    let path = plugin_path(scope, &project)?;
    super::remove_shim(&path, "OpenCode plugin", "plugin", is_ours, dry_run)
}

fn local_scope_usage_error() -> ExitCode {
    eprintln!(
        "hookjournal: --scope local is Claude Code's .claude/settings.local.json; OpenCode has project and user scopes only"
    );
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_gets_its_settings_and_every_registered_hook() {
        assert!(SHIM.starts_with(MARKER));
        assert_eq!(SHIM.matches(SETTINGS_LINE).count(), 1);
        let text = shim(Path::new("/bin/hj"), Some(Path::new("/p/.hookjournal")));
        assert!(!text.contains(SETTINGS_LINE));
        let line = text
            .lines()
            .find(|l| l.starts_with("const SETTINGS = "))
            .unwrap();
        let json = line
            .trim_start_matches("const SETTINGS = ")
            .trim_end_matches(';');
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["command"], "/bin/hj");
        assert_eq!(v["journal"], "/p/.hookjournal");
        assert_eq!(
            v["hooks"].as_array().unwrap().len(),
            OPENCODE.registered().count()
        );
        // Every hook the shim applies an answer at is one the table forwards.
        for name in [
            "chat.message",
            "tool.execute.after",
            "experimental.session.compacting",
        ] {
            assert!(OPENCODE.event(name).is_some(), "{name}");
            assert!(SHIM.contains(&format!("hook(\"{name}\"")), "{name}");
        }
    }
}
