//! `install --host amp` / `uninstall --host amp`. Amp runs no shell hooks: its plugins are
//! TypeScript modules it runs with Bun from `.amp/plugins/` (and `~/.config/amp/plugins/`). So
//! install writes one small shim plugin there, `hookjournal.ts` (shipped in the host's folder,
//! `projections/src/hosts/amp/`), its settings line naming this binary, the journal and the
//! events to forward (from the host facts table). Uninstall removes that file, and only a file
//! install wrote.

use super::Scope;
use projections::hosts::AMP;
use std::path::{Path, PathBuf};

/// The shim as shipped; install replaces its settings line.
const SHIM: &str = projections::hosts::amp::MODULE.shipped[0].text;
/// The shim's first line: how uninstall knows the file is hookjournal's.
const MARKER: &str = "// hookjournal's Amp shim";
/// The settings line install writes (pi's).
#[cfg(test)]
use super::pi::SETTINGS_LINE;

/// The plugin file for `scope`: the project's, or the user's (`~/.config/amp/plugins/`).
fn plugin_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    super::pi::plugin_path_of(&AMP, scope, project, "Amp's plugin directory")
}

/// The shim with its settings: the binary, the journal (none: the project's own, found from
/// where Amp runs), and each event with its budget (pi's shim settings, the same line).
fn shim(exe: &Path, journal: Option<&Path>) -> String {
    super::pi::shim_of(&AMP, SHIM, exe, journal)
}

/// Whether `text` is a shim install wrote.
fn is_ours(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// The shim as install writes and uninstall removes it.
pub(super) const HOST: super::shim::ShimHost = super::shim::ShimHost {
    facts: &AMP,
    path: plugin_path,
    text: shim,
    ours: is_ours,
    noun: "plugin",
    events: "Amp events",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_gets_its_settings_and_every_registered_hook() {
        assert!(SHIM.starts_with(MARKER));
        assert_eq!(SHIM.matches(SETTINGS_LINE).count(), 1);
        let text = shim(Path::new("/bin/hj"), Some(Path::new("/p/.hookjournal")));
        assert!(!text.contains(SETTINGS_LINE));
        let v = super::super::shim::settings_in(&text, "const SETTINGS: any = ");
        assert_eq!(v["command"], "/bin/hj");
        assert_eq!(v["journal"], "/p/.hookjournal");
        assert_eq!(
            v["hooks"].as_array().unwrap().len(),
            AMP.registered().count()
        );
        // Every event the shim applies an answer at is one the table forwards.
        for name in ["agent.start", "tool.call"] {
            assert!(AMP.event(name).is_some(), "{name}");
            assert!(SHIM.contains(&format!("name === \"{name}\"")), "{name}");
        }
    }
}
