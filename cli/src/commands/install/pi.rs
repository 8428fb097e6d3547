//! `install --host pi` / `uninstall --host pi`. pi runs no shell hooks: its extensions are
//! TypeScript modules it loads from `.pi/extensions/` (and `~/.pi/agent/extensions/`, or
//! `$PI_CODING_AGENT_DIR/extensions/`) into its own process. So install writes one small shim
//! extension there, `hookjournal.ts` (shipped in the host's folder, `projections/src/hosts/pi/`), its settings line
//! naming this binary, the journal and the events to forward (from the host facts table).
//! Uninstall removes that file, and only a file install wrote.

use super::Scope;
use anyhow::{anyhow, bail};
use projections::host::HostFacts;
use projections::hosts::PI;
use std::path::{Path, PathBuf};

/// The shim as shipped; install replaces its settings line.
const SHIM: &str = projections::hosts::pi::MODULE.shipped[0].text;
/// The shim's first line: how uninstall knows the file is hookjournal's.
const MARKER: &str = "// hookjournal's pi shim";
/// The settings line install writes.
pub(super) const SETTINGS_LINE: &str = "const SETTINGS: any = {};";

/// The extension file for `scope`: the project's, or the user's (`$PI_CODING_AGENT_DIR`, else
/// `~/.pi/agent`).
fn plugin_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    plugin_path_of(&PI, scope, project, "pi's agent directory")
}

/// The shim file of a host whose facts name it (pi's, Amp's) for `scope`: the project's, or the
/// user's (the facts' directory variable, else the directory under `$HOME`); `what` names the
/// user's directory when `$HOME` is not set.
pub(super) fn plugin_path_of(
    facts: &HostFacts,
    scope: Scope,
    project: &Path,
    what: &str,
) -> anyhow::Result<PathBuf> {
    let install = facts
        .install
        .as_ref()
        .expect("a shim host has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match scope {
        Scope::Project => Ok(project.join(install.config_dir).join(install.project_file)),
        Scope::User => {
            let config = install
                .config_dir_env
                .and_then(env)
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
                .ok_or_else(|| anyhow!("$HOME is not set; cannot find {what}"))?;
            Ok(config.join(install.user_file))
        }
        Scope::Local => bail!("no local scope"),
    }
}

/// The shim with its settings: the binary, the journal (none: the project's own, found from
/// where pi runs), and each event with its budget.
fn shim(exe: &Path, journal: Option<&Path>) -> String {
    shim_of(&PI, SHIM, exe, journal)
}

/// A TypeScript shim (pi's, Amp's) with its settings line written: the binary, the journal, and
/// each event the facts register with its budget in milliseconds.
pub(super) fn shim_of(facts: &HostFacts, shim: &str, exe: &Path, journal: Option<&Path>) -> String {
    let scale = facts.install.as_ref().map_or(1000, |i| i.timeout_scale);
    let hooks: Vec<serde_json::Value> = facts
        .registered()
        .map(|(e, r)| serde_json::json!({ "name": e.name, "timeoutMs": r.timeout_s * scale }))
        .collect();
    let mut settings = serde_json::json!({ "command": exe.to_string_lossy(), "hooks": hooks });
    if let Some(j) = journal {
        settings["journal"] = j.to_string_lossy().into();
    }
    shim.replacen(
        SETTINGS_LINE,
        &format!("const SETTINGS: any = {settings};"),
        1,
    )
}

/// Whether `text` is a shim install wrote.
fn is_ours(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// The shim as install writes and uninstall removes it.
pub(super) const HOST: super::shim::ShimHost = super::shim::ShimHost {
    facts: &PI,
    path: plugin_path,
    text: shim,
    ours: is_ours,
    noun: "extension",
    events: "pi events",
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
            PI.registered().count()
        );
        // Every event the shim applies an answer at is one the table forwards.
        for name in ["before_agent_start", "tool_result"] {
            assert!(PI.event(name).is_some(), "{name}");
            assert!(SHIM.contains(&format!("name === \"{name}\"")), "{name}");
        }
    }
}
