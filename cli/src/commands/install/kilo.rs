//! `install --host kilo` / `uninstall --host kilo`. Kilo Code is an OpenCode fork with OpenCode's
//! plugin API, loading plugins only from `.kilo/plugins/`, `.kilocode/plugins/` and
//! `~/.config/kilo/plugins/`: install writes OpenCode's shim (`opencode`) into `.kilo/plugins/`
//! (or `~/.config/kilo/plugins/`) with `"host":"kilo"` in its settings, forwarding Kilo's
//! registered hooks and events. Uninstall removes only a file install wrote.

use super::Scope;
use projections::hosts::KILO;
use std::path::{Path, PathBuf};

fn plugin_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    super::opencode::plugin_path_of(&KILO, "kilo", scope, project)
}

fn shim(exe: &Path, journal: Option<&Path>) -> String {
    super::opencode::shim_of(&KILO, Some(KILO.name), exe, journal)
}

/// The shim as install writes and uninstall removes it.
pub(super) const HOST: super::shim::ShimHost = super::shim::ShimHost {
    facts: &KILO,
    path: plugin_path,
    text: shim,
    ours: super::opencode::is_ours,
    noun: "plugin",
    events: "Kilo Code hooks and events",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Given a Kilo install, then the shim names host kilo and forwards Kilo's registered hooks
    /// (not `message.updated`: usage comes from kilo.db), into .kilo/plugins/.
    #[test]
    fn the_shim_runs_as_kilo_with_kilos_hooks() {
        let text = shim(Path::new("/bin/hj"), None);
        let v = super::super::shim::settings_in(&text, "const SETTINGS = ");
        assert_eq!(v["host"], "kilo");
        let names: Vec<&str> = v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), KILO.registered().count());
        assert!(names.contains(&"session.idle") && !names.contains(&"message.updated"));
        assert_eq!(
            plugin_path(Scope::Project, Path::new("/p")).unwrap(),
            PathBuf::from("/p/.kilo/plugins/hookjournal.js")
        );
    }
}
