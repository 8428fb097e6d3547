//! `install --host openclaw` / `uninstall --host openclaw`. OpenClaw runs no shell hooks: its
//! hooks are JS plugin callbacks. So install writes a small shim plugin (`openclaw/index.js`,
//! embedded here) into OpenClaw's extensions directory, with `hookjournal.json` beside it naming
//! this binary, the journal and the hooks to forward (from the host facts table), and enables it
//! in OpenClaw's JSON5 config (`plugins.entries.hookjournal`, plus `plugins.allow` when the user
//! keeps an allowlist), edited in place. Uninstall removes exactly those.

use super::doc::{prop, string_value, Doc};
use super::{create_journal, project_line, project_root, unified_diff, write_settings, Scope};
use crate::cli_util::CommandHelper;
use anyhow::{anyhow, bail, Context};
use jsonc_parser::cst::{CstInputValue, CstNode, CstObject};
use projections::hosts::OPENCLAW;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The plugin's id, its directory name under `extensions/`, and its key in `plugins.entries`.
const PLUGIN_ID: &str = "hookjournal";

/// The shim's files, as install writes them (besides the generated `hookjournal.json`), shipped
/// in the host's folder.
const SHIM: &[projections::hosts::ShippedFile] = projections::hosts::openclaw::MODULE.shipped;

/// The generated settings file the shim reads.
const SETTINGS_FILE: &str = "hookjournal.json";

/// Where OpenClaw keeps its state and config: `$OPENCLAW_STATE_DIR` (else `~/.openclaw`), and
/// `$OPENCLAW_CONFIG_PATH` (else `openclaw.json` in the state directory).
struct Paths {
    config: PathBuf,
    plugin_dir: PathBuf,
}

fn paths() -> anyhow::Result<Paths> {
    let install = OPENCLAW
        .install
        .as_ref()
        .expect("OpenClaw has install facts");
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let state = match install.config_dir_env.and_then(env) {
        Some(dir) => PathBuf::from(dir),
        None => env("HOME")
            .map(|h| PathBuf::from(h).join(install.config_dir))
            .ok_or_else(|| anyhow!("HOME is not set; set OPENCLAW_STATE_DIR"))?,
    };
    let config = env("OPENCLAW_CONFIG_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| state.join(install.user_file));
    Ok(Paths {
        config,
        plugin_dir: state.join("extensions").join(PLUGIN_ID),
    })
}

/// The `hookjournal.json` the shim reads: the binary, the journal, and each hook with its budget.
fn shim_settings(exe: &Path, journal: &Path) -> String {
    let scale = OPENCLAW.install.as_ref().map_or(1000, |i| i.timeout_scale);
    let hooks: Vec<serde_json::Value> = OPENCLAW
        .registered()
        .map(|(e, r)| serde_json::json!({ "name": e.name, "timeoutMs": r.timeout_s * scale }))
        .collect();
    let v = serde_json::json!({
        "command": exe.to_string_lossy(),
        "journal": journal.to_string_lossy(),
        "hooks": hooks,
    });
    let mut text = serde_json::to_string_pretty(&v).expect("settings serialise");
    text.push('\n');
    text
}

/// `install --host openclaw`.
pub fn install(cmd: &CommandHelper, scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope != Scope::Project {
        return Ok(scope_usage_error());
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let (project, marker) = project_root(&cwd);
    // The shim passes its journal on every call: `--journal`, else `$HOOKJOURNAL_DIR` (as every
    // command finds it), else the project's.
    let journal = cmd
        .journal_arg()
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os("HOOKJOURNAL_DIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .map(|j| super::absolute(&cwd, &j))
        .unwrap_or_else(|| project.join(crate::locate::DIR_NAME));
    let program = super::program::for_this_binary()?;
    let exe = &program.path;
    let p = paths()?;

    let before = read_config(&p.config)?;
    let before_text = before.as_ref().map(|d| d.text().to_string());
    let mut doc = match before {
        Some(doc) => doc,
        None => Doc::parse_json5("").map_err(|e| anyhow!(e))?,
    };
    enable(&mut doc).map_err(|e| anyhow!("{}: {e}; nothing changed", p.config.display()))?;
    let after = doc.text().to_string();

    print!("{}", project_line(&project, marker, &cwd));
    let mut files: Vec<(PathBuf, String)> = SHIM
        .iter()
        .map(|f| (p.plugin_dir.join(f.name), f.text.to_string()))
        .collect();
    files.push((
        p.plugin_dir.join(SETTINGS_FILE),
        shim_settings(exe, &journal),
    ));
    if dry_run {
        print!(
            "{}",
            unified_diff(&p.config, before_text.as_deref(), &after)
        );
        for (path, _) in &files {
            println!("Would write {}.", path.display());
        }
        if !journal.exists() {
            println!("Would create the journal {}.", journal.display());
        }
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    let journal_note = create_journal(&journal)?;
    for (path, text) in &files {
        if super::read_if_present(path).ok().flatten().as_deref() != Some(text) {
            write_settings(path, text, false)?;
        }
    }
    println!(
        "Wrote the hookjournal plugin ({} OpenClaw hooks) to {}.",
        OPENCLAW.registered().count(),
        p.plugin_dir.display()
    );
    if before_text.as_deref() == Some(after.as_str()) {
        println!(
            "{} already enables the hookjournal plugin; nothing changed.",
            p.config.display()
        );
    } else {
        let backup = write_settings(&p.config, &after, before_text.is_some())?;
        println!(
            "Enabled it in {}{}.",
            p.config.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
    }
    println!(
        "Command: {} hook --host openclaw --journal {}",
        exe.display(),
        journal.display()
    );
    for note in &program.notes {
        println!("Note: {note}");
    }
    println!("Journal: {}", journal.display());
    if let Some(note) = journal_note {
        println!("Note: {note}");
    }
    let next = OPENCLAW.install.as_ref().map_or("", |i| i.next_step);
    println!("Next: {next}");
    Ok(ExitCode::SUCCESS)
}

/// `uninstall --host openclaw`: the config entries and the plugin's files; the journal stays.
pub fn uninstall(scope: Scope, dry_run: bool) -> anyhow::Result<ExitCode> {
    if scope != Scope::Project {
        return Ok(scope_usage_error());
    }
    let p = paths()?;
    let files: Vec<PathBuf> = SHIM
        .iter()
        .map(|f| f.name)
        .chain([SETTINGS_FILE])
        .map(|name| p.plugin_dir.join(name))
        .filter(|f| f.exists())
        .collect();
    let mut change = None;
    if let Some(mut doc) = read_config(&p.config)? {
        let before = doc.text().to_string();
        let removed = disable(&mut doc)
            .map_err(|e| anyhow!("{}: {e}; nothing changed", p.config.display()))?;
        if removed > 0 {
            change = Some((before, doc.text().to_string()));
        }
    }
    if change.is_none() && files.is_empty() {
        println!("hookjournal's OpenClaw plugin is not installed; nothing to remove.");
        return Ok(ExitCode::SUCCESS);
    }
    if dry_run {
        if let Some((before, after)) = &change {
            print!("{}", unified_diff(&p.config, Some(before), after));
        }
        for f in &files {
            println!("Would remove {}.", f.display());
        }
        println!("Dry run: nothing written.");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some((_, after)) = &change {
        let backup = write_settings(&p.config, after, true)?;
        println!(
            "Disabled the hookjournal plugin in {}{}.",
            p.config.display(),
            backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default()
        );
    }
    for f in &files {
        super::remove_file(f)?;
    }
    // The directory goes only when nothing of the user's is left in it.
    super::remove_dir_if_empty(&p.plugin_dir);
    if !files.is_empty() {
        println!("Removed the plugin from {}.", p.plugin_dir.display());
    }
    println!("The journal itself is untouched.");
    Ok(ExitCode::SUCCESS)
}

fn scope_usage_error() -> ExitCode {
    eprintln!(
        "hookjournal: OpenClaw has one config (its state directory's openclaw.json); install --host openclaw takes no --scope (it journals into this project's journal, or --journal DIR)"
    );
    ExitCode::from(2)
}

/// The config as a document, `None` if it does not exist.
fn read_config(path: &Path) -> anyhow::Result<Option<Doc>> {
    let Some(text) = super::read_if_present(path)? else {
        return Ok(None);
    };
    match Doc::parse_json5(&text) {
        Ok(doc) => Ok(Some(doc)),
        Err(e) => bail!("{}: not valid JSON5 ({e}); nothing changed", path.display()),
    }
}

/// `plugins.entries.hookjournal`: enabled, with the conversation hooks it needs.
fn entry() -> CstInputValue {
    CstInputValue::Object(vec![
        ("enabled".into(), true.into()),
        (
            "hooks".into(),
            CstInputValue::Object(vec![("allowConversationAccess".into(), true.into())]),
        ),
    ])
}

/// The object at `key` of `object`: `Ok(None)` when absent, an error when it is something else.
fn object_prop(object: &CstObject, key: &str, path: &str) -> Result<Option<CstObject>, String> {
    match prop(object, key) {
        None => Ok(None),
        Some(p) => p
            .object_value()
            .map(Some)
            .ok_or_else(|| format!("\"{path}\" is not an object")),
    }
}

fn plugins(doc: &Doc) -> Result<Option<CstObject>, String> {
    match doc.root_object()? {
        None => Ok(None),
        Some(root) => object_prop(&root, "plugins", "plugins"),
    }
}

fn entries(doc: &Doc) -> Result<Option<CstObject>, String> {
    match plugins(doc)? {
        None => Ok(None),
        Some(p) => object_prop(&p, "entries", "plugins.entries"),
    }
}

/// Makes the config enable the plugin, exactly once; every other key and comment stays.
fn enable(doc: &mut Doc) -> Result<(), String> {
    disable(doc)?;
    let ours = CstInputValue::Object(vec![(PLUGIN_ID.into(), entry())]);
    match (plugins(doc)?, entries(doc)?) {
        (None, _) => doc.append_to_root(
            "plugins",
            &CstInputValue::Object(vec![("entries".into(), ours)]),
        )?,
        (Some(p), None) => doc.append_prop(&p, "entries", &ours)?,
        (Some(_), Some(e)) => doc.append_prop(&e, PLUGIN_ID, &entry())?,
    }
    // An allowlist the user keeps must name the plugin too (without one, every plugin may load).
    let plugins = plugins(doc)?.ok_or("\"plugins\" went missing")?;
    if let Some(allow) = prop(&plugins, "allow") {
        let list = allow
            .array_value()
            .ok_or("\"plugins.allow\" is not an array")?;
        doc.append_element(&list, &PLUGIN_ID.into())?;
    }
    Ok(())
}

/// Removes what `enable` adds: the entry, the allowlist's item, and `entries`/`plugins` when
/// that leaves them empty. Returns how many things went.
fn disable(doc: &mut Doc) -> Result<usize, String> {
    let mut removed = 0;
    if let Some(e) = entries(doc)? {
        if let Some(p) = prop(&e, PLUGIN_ID) {
            let only = e.properties().len() == 1;
            let plugins = plugins(doc)?.ok_or("\"plugins\" went missing")?;
            let target: CstNode = match (only, plugins.properties().len() == 1) {
                (true, true) => plugins
                    .parent()
                    .ok_or("\"plugins\" has no property")?
                    .into(),
                (true, false) => e.parent().ok_or("\"entries\" has no property")?.into(),
                _ => p.into(),
            };
            doc.remove(&target)?;
            removed += 1;
        }
    }
    while let Some(item) = allow_item(doc)? {
        doc.remove(&item)?;
        removed += 1;
    }
    Ok(removed)
}

/// The plugin's item in `plugins.allow`, if it has one.
fn allow_item(doc: &Doc) -> Result<Option<CstNode>, String> {
    let Some(plugins) = plugins(doc)? else {
        return Ok(None);
    };
    let Some(list) = prop(&plugins, "allow").and_then(|a| a.array_value()) else {
        return Ok(None);
    };
    Ok(list
        .elements()
        .into_iter()
        .find(|e| string_value(e).as_deref() == Some(PLUGIN_ID)))
}

/// `enable` then `disable` on an OpenClaw config's text (JSON5), for the fuzz target
/// `settings_files`: each edit refused (an error) or done, and the enabled text still a config.
pub(super) fn edit_for_fuzzing(text: &str) -> Result<String, String> {
    let mut doc = Doc::parse_json5(text)?;
    enable(&mut doc)?;
    let mut again = Doc::parse_json5(doc.text())
        .map_err(|e| format!("enable wrote a config that does not parse: {e}"))?;
    disable(&mut again)?;
    Ok(again.text().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let mut doc = Doc::parse_json5(text).unwrap();
        enable(&mut doc).unwrap();
        let installed = doc.text().to_string();
        let mut again = Doc::parse_json5(&installed).unwrap();
        enable(&mut again).unwrap();
        assert_eq!(again.text(), installed, "install is idempotent");
        disable(&mut doc).unwrap();
        // A file install created keeps its empty object, as for the other hosts.
        let expected = if text.is_empty() { "{}\n" } else { text };
        assert_eq!(doc.text(), expected, "uninstall gives the file back");
        installed
    }

    #[test]
    fn install_enables_the_plugin_and_uninstall_gives_the_file_back() {
        let installed = round_trip("");
        let v: serde_json::Value = serde_json::from_str(&installed).unwrap();
        assert_eq!(v["plugins"]["entries"]["hookjournal"]["enabled"], true);
        assert_eq!(
            v["plugins"]["entries"]["hookjournal"]["hooks"]["allowConversationAccess"],
            true
        );
        assert!(v["plugins"].get("allow").is_none());
    }

    #[test]
    fn a_json5_config_keeps_its_settings_comments_and_allowlist() {
        let user = "// my gateway\n{\n  gateway: { mode: 'local', port: 18789 },\n  plugins: {\n    allow: ['memory-core'],\n    entries: {\n      'memory-core': { enabled: true }, // keep\n    },\n  },\n}\n";
        let installed = round_trip(user);
        assert!(installed.contains("// my gateway") && installed.contains("// keep"));
        assert!(installed.contains("gateway: { mode: 'local', port: 18789 }"));
        let doc = Doc::parse_json5(&installed).unwrap();
        assert!(allow_item(&doc).unwrap().is_some(), "{installed}");
        assert!(prop(&entries(&doc).unwrap().unwrap(), "memory-core").is_some());
        assert!(prop(&entries(&doc).unwrap().unwrap(), PLUGIN_ID).is_some());
    }

    #[test]
    fn a_config_whose_plugins_is_not_an_object_is_refused() {
        let mut doc = Doc::parse_json5("{ plugins: [] }").unwrap();
        assert!(enable(&mut doc).unwrap_err().contains("not an object"));
    }

    #[test]
    fn the_shim_is_told_every_hook_the_table_registers_with_its_budget() {
        let text = shim_settings(Path::new("/bin/hj"), Path::new("/p/.hookjournal"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let names: Vec<&str> = v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"before_prompt_build") && names.contains(&"after_compaction"));
        assert!(!names.contains(&"llm_input"));
        assert_eq!(v["hooks"][0]["timeoutMs"], 30000);
        assert_eq!(v["journal"], "/p/.hookjournal");
    }
}
