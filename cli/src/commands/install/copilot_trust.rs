//! Copilot CLI runs a repository's hooks (`.github/hooks/*.json`, and `.claude/settings.json`)
//! only in a folder the user trusted, and skips them silently otherwise (measured on 1.0.102).
//! Its trust lives in `trustedFolders` of `~/.copilot/config.json` (`$COPILOT_HOME`), a JSON file
//! Copilot rewrites with a `//` comment on top; an entry trusts the folder and every folder
//! below it. install only reads it: it says whether the project is trusted and how to trust it,
//! and never trusts a folder itself.

use super::doc::{prop, string_value, Doc};
use std::path::Path;

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
