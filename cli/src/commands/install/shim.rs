//! Hosts whose hooks run in their own process, through one file hookjournal writes (OpenCode's
//! plugin, pi's extension): installing it, reporting it, and removing only a file install wrote.

use super::*;

/// A host whose hooks run in its own process, as one file hookjournal writes (OpenCode's plugin,
/// pi's extension): where it goes, its text, how install's own file is told apart, and how the
/// messages name it.
pub(super) struct ShimHost {
    pub(super) facts: &'static projections::host::HostFacts,
    pub(super) path: fn(Scope, &Path) -> anyhow::Result<PathBuf>,
    pub(super) text: fn(&Path, Option<&Path>) -> String,
    pub(super) ours: fn(&str) -> bool,
    /// "plugin", "extension".
    pub(super) noun: &'static str,
    /// What its events are called: "OpenCode hooks and events".
    pub(super) events: &'static str,
}

impl ShimHost {
    /// `install --host H [--scope project|user]`: the shim written (a file of the user's own at
    /// its path is never replaced), the journal created, what it runs said.
    pub(super) fn install(
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
    pub(super) fn uninstall(&self, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
        if scope == Scope::Local {
            return Ok(self.local_scope_usage_error());
        }
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let (project, _) = project_root(&cwd);
        let path = (self.path)(scope, &project)?;
        let what = format!("{} {}", self.facts.product, self.noun);
        remove_shim(&path, &what, self.noun, self.ours, dry_run)
    }

    pub(super) fn local_scope_usage_error(&self) -> ExitCode {
        eprintln!(
            "hookjournal: --scope local is Claude Code's .claude/settings.local.json; {} has project and user scopes only",
            self.facts.product
        );
        ExitCode::from(2)
    }
}

/// What an install of a shim (OpenCode's plugin, pi's extension) says after writing it: the
/// command it runs, the journal, the notes, the host's next step.
pub(super) fn shim_report(
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
pub(super) fn remove_shim(
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
    super::remove_file(path)?;
    if let Some(dir) = path.parent() {
        super::remove_dir_if_empty(dir);
    }
    println!(
        "Removed the {noun} {}; the journal itself is untouched.",
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The settings object a shim's text declares on the line starting `decl` (its first line that
/// does), for the shims' tests.
#[cfg(test)]
pub(super) fn settings_in(text: &str, decl: &str) -> serde_json::Value {
    let line = text.lines().find(|l| l.starts_with(decl)).unwrap();
    let json = line.trim_start_matches(decl).trim_end_matches(';');
    serde_json::from_str(json).unwrap()
}
