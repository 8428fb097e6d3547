//! Codex runs a project's or a user's hooks only once they are trusted: install trusts the hooks
//! it wrote in the user's `config.toml` as Codex's `/hooks` would, and uninstall takes back only
//! the trust it wrote.

use super::{facts, settings_path_from_env, write_settings, Host, Scope};
use anyhow::anyhow;
use engine::codex_trust;
use engine::registration::is_hookjournal_command;
use std::path::{Path, PathBuf};

/// Codex runs a project or user hook only once it is trusted: the hooks just written are trusted
/// in the user's `config.toml` (`$CODEX_HOME`, else `~/.codex`) as `/hooks` would trust them.
pub(super) fn trust_codex_hooks(
    hooks_json: &Path,
    text: &str,
    command: &str,
    scope: Scope,
) -> anyhow::Result<()> {
    let facts = &facts(&Host::Codex);
    let home = settings_path_from_env(facts, Scope::User, hooks_json)?
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or_else(|| anyhow!("cannot find Codex's home"))?;
    let config = home.join("config.toml");
    let key_path = hooks_json.to_string_lossy();
    let Some(trusted) = codex_trust::ours(&key_path, text, command) else {
        println!(
            "Note: {} is not plain JSON; trust the hooks in Codex's /hooks yourself.",
            hooks_json.display()
        );
        return Ok(());
    };
    let before = super::read_if_present(&config)?;
    let after = codex_trust::apply(before.as_deref().unwrap_or(""), &trusted)
        .map_err(|e| anyhow!("{}: {e}; hooks not trusted", config.display()))?;
    if before.as_deref() != Some(after.as_str()) {
        write_settings(&config, &after, before.is_some())?;
    }
    if scope != Scope::User {
        if let Some(project) = hooks_json.parent().and_then(Path::parent) {
            let trusted = toml::from_str::<toml::Value>(&after).ok().is_some_and(|v| {
                v.get("projects")
                    .and_then(|p| p.get(project.to_string_lossy().as_ref()))
                    .and_then(|p| p.get("trust_level"))
                    .and_then(|t| t.as_str())
                    == Some("trusted")
            });
            if !trusted {
                println!(
                    "Note: Codex loads a project's hooks only when the project is trusted, and {} is \
                     not trusted in {}: trust it when Codex asks at its first start here, or add \
                     [projects.{}] trust_level = \"trusted\" there.",
                    project.display(),
                    config.display(),
                    toml::Value::String(project.to_string_lossy().into_owned())
                );
            }
        }
    }
    let whose = if scope == Scope::User {
        "every project"
    } else {
        "this project"
    };
    println!(
        "Trusted: {} hooks for {whose} in {} ([hooks.state] trusted_hash, as Codex's /hooks records \
         them); editing a hook makes Codex skip it until it is trusted again.",
        trusted.len(),
        config.display()
    );
    Ok(())
}

/// The user's Codex `config.toml` without the trust install wrote for hookjournal's handlers.
pub(super) struct Untrust {
    pub(super) config: PathBuf,
    pub(super) before: String,
    pub(super) after: String,
    pub(super) removed: usize,
}

/// The `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` tables of hookjournal's handlers
/// in `hooks_text` (the hooks.json at `hooks_json` before they are removed), each removed only
/// where its `trusted_hash` is the one install wrote for that handler; `None` when there are
/// none (or no config.toml).
pub(super) fn untrust_codex_hooks(
    hooks_json: &Path,
    hooks_text: &str,
) -> anyhow::Result<Option<Untrust>> {
    let facts = &facts(&Host::Codex);
    let Some(home) = settings_path_from_env(facts, Scope::User, hooks_json)?
        .and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return Ok(None);
    };
    let config = home.join("config.toml");
    let key_path = hooks_json.to_string_lossy();
    let Some(trusted) = codex_trust::handlers(&key_path, hooks_text, is_hookjournal_command) else {
        return Ok(None);
    };
    let Some(before) = super::read_if_present(&config)? else {
        return Ok(None);
    };
    let (after, removed) = codex_trust::remove(&before, &trusted)
        .map_err(|e| anyhow!("{}: {e}; nothing changed", config.display()))?;
    Ok((removed > 0).then_some(Untrust {
        config,
        before,
        after,
        removed,
    }))
}
