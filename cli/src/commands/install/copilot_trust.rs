//! Copilot CLI runs a repository's hooks (`.github/hooks/*.json`, and `.claude/settings.json`)
//! only in a folder the user trusted, and skips them silently otherwise (measured on 1.0.102).
//! Its trust lives in `trustedFolders` of `~/.copilot/config.json` (`$COPILOT_HOME`), a JSON file
//! Copilot rewrites with a `//` comment on top; an entry trusts the folder and every folder
//! below it. install only reads it: it says whether the project is trusted and how to trust it,
//! and never trusts a folder itself.

use super::doc::{prop, string_value, Doc};
use super::{facts, settings_path_from_env, Host, Scope};
use anyhow::anyhow;
use std::path::Path;

/// Copilot CLI runs a repository's hooks only in a trusted folder, silently skipping them
/// otherwise: says whether `project` is trusted in its `config.json`, and how to trust it. It
/// never trusts the folder itself.
pub(super) fn copilot_trust_note(project: &Path) -> anyhow::Result<()> {
    let facts = &facts(&Host::Copilot);
    let home = settings_path_from_env(facts, Scope::User, project)?
        .and_then(|p| p.parent().and_then(Path::parent).map(Path::to_path_buf))
        .ok_or_else(|| anyhow!("cannot find Copilot CLI's home"))?;
    let config = home.join("config.json");
    let text = super::read_if_present(&config)?.unwrap_or_default();
    match trusted_by(&text, project) {
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

/// The `trustedFolders` entry of `config` (the file's text) that covers `project`, if any.
pub fn trusted_by(config: &str, project: &Path) -> Option<String> {
    let doc = Doc::parse(config).ok()?;
    let root = doc.root_object().ok()??;
    let folders = prop(&root, "trustedFolders")?.array_value()?;
    folders
        .elements()
        .iter()
        .filter_map(string_value)
        .find(|entry| {
            let entry = Path::new(entry.trim_end_matches('/'));
            entry.is_absolute() && project.starts_with(entry)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_trusts_its_folder_and_every_folder_below() {
        let config = "// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"trustedFolders\": [\n    \"/home/dev/work/\",\n    \"relative\"\n  ],\n  \"firstLaunchAt\": \"2026-03-11T00:00:00.000Z\"\n}\n";
        assert_eq!(
            trusted_by(config, Path::new("/home/dev/work/acme-api")).as_deref(),
            Some("/home/dev/work/")
        );
        assert_eq!(
            trusted_by(config, Path::new("/home/dev/work")).as_deref(),
            Some("/home/dev/work/")
        );
        assert_eq!(trusted_by(config, Path::new("/home/dev/workshop")), None);
        assert_eq!(trusted_by(config, Path::new("/relative")), None);
        assert_eq!(trusted_by("{}", Path::new("/x")), None);
        assert_eq!(trusted_by("not json", Path::new("/x")), None);
    }
}
