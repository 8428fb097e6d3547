//! `install --host opencode` / `uninstall --host opencode`. OpenCode runs no shell hooks: its
//! plugins are JS modules it loads from `.opencode/plugins/` (and `~/.config/opencode/plugins/`)
//! into its own process. So install writes one small shim plugin there, `hookjournal.js`
//! (shipped in the host's folder, `projections/src/hosts/opencode/`), its settings line naming this binary, the journal
//! and the hooks and events to forward (from the host facts table). Uninstall removes that file,
//! and only a file install wrote.

use super::Scope;
use anyhow::{anyhow, bail};
use projections::host::HostFacts;
use projections::hosts::OPENCODE;
use std::path::{Path, PathBuf};

/// The shim as shipped; install replaces its settings line.
const SHIM: &str = projections::hosts::opencode::MODULE.shipped[0].text;
/// The shim's first line: how uninstall knows the file is hookjournal's.
const MARKER: &str = "// hookjournal's OpenCode shim";
/// The settings line install writes.
const SETTINGS_LINE: &str = "const SETTINGS = {};";

/// The plugin file for `scope`: the project's, or the user's (`$XDG_CONFIG_HOME`, else
/// `~/.config`).
fn plugin_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    plugin_path_of(&OPENCODE, "opencode", scope, project)
}

/// The plugin file of an OpenCode-family host (`xdg`: its folder under `$XDG_CONFIG_HOME`).
pub(super) fn plugin_path_of(
    facts: &HostFacts,
    xdg: &str,
    scope: Scope,
    project: &Path,
) -> anyhow::Result<PathBuf> {
    let install = facts
        .install
        .as_ref()
        .expect("a shim host has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match scope {
        Scope::Project => Ok(project.join(install.config_dir).join(install.project_file)),
        Scope::User => {
            let config = env("XDG_CONFIG_HOME")
                .map(|c| PathBuf::from(c).join(xdg))
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(install.user_config_dir)))
                .ok_or_else(|| {
                    anyhow!("$HOME is not set; cannot find {}'s config", facts.product)
                })?;
            Ok(config.join(install.user_file))
        }
        Scope::Local => bail!("no local scope"),
    }
}

/// The shim with its settings: the binary, the journal (none: the project's own, found from
/// where OpenCode runs), and each hook or event with its budget.
fn shim(exe: &Path, journal: Option<&Path>) -> String {
    shim_of(&OPENCODE, None, exe, journal)
}

/// The shim as an OpenCode-family host runs it: `host` (none: OpenCode) is the `--host` it
/// passes and the `host` its payloads say; the hooks are `facts`' registered ones.
pub(super) fn shim_of(
    facts: &HostFacts,
    host: Option<&str>,
    exe: &Path,
    journal: Option<&Path>,
) -> String {
    let scale = facts.install.as_ref().map_or(1000, |i| i.timeout_scale);
    let hooks: Vec<serde_json::Value> = facts
        .registered()
        .map(|(e, r)| serde_json::json!({ "name": e.name, "timeoutMs": r.timeout_s * scale }))
        .collect();
    let mut settings = serde_json::json!({ "command": exe.to_string_lossy(), "hooks": hooks });
    if let Some(h) = host {
        settings["host"] = h.into();
    }
    if let Some(j) = journal {
        settings["journal"] = j.to_string_lossy().into();
    }
    SHIM.replacen(SETTINGS_LINE, &format!("const SETTINGS = {settings};"), 1)
}

/// Whether `text` is a shim install wrote.
pub(super) fn is_ours(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// The shim as install writes and uninstall removes it.
pub(super) const HOST: super::shim::ShimHost = super::shim::ShimHost {
    facts: &OPENCODE,
    path: plugin_path,
    text: shim,
    ours: is_ours,
    noun: "plugin",
    events: "OpenCode hooks and events",
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
        let v = super::super::shim::settings_in(&text, "const SETTINGS = ");
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
