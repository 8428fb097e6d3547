//! `doctor`'s checks, as data: for each host in the host table, what its settings register of
//! hookjournal against what the table wants, whether the registered program exists and is this
//! hookjournal (the same file, or a copy of it: never run to ask, since a project's settings and
//! the program they name may come with a clone), and whether the host will run it (trust); then
//! the journal: its size, each host's last event, the spool, a stuck drainer and a `verify` of
//! the chain. Each problem comes with the command that fixes it. Nothing here writes, and nothing
//! here runs a program.

use crate::codex_trust;
use crate::registration::{self, Settings};
use projections::host::{HookFileFormat, Host, HostFacts, Scope, Trust};
use projections::hosts;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// As it should be.
    Ok,
    /// Worth knowing, nothing to fix (a host not set up here).
    Info,
    /// Something to fix: `fix` says how.
    Problem,
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Ok, info or problem.
    pub level: Level,
    /// What it is about: a host's product name, `journal`, `spool`, …
    pub topic: String,
    /// What was found, one line.
    pub text: String,
    /// The command (or step) that fixes a problem.
    pub fix: Option<String>,
}

fn ok(topic: &str, text: String) -> Finding {
    Finding {
        level: Level::Ok,
        topic: topic.into(),
        text,
        fix: None,
    }
}

fn info(topic: &str, text: String) -> Finding {
    Finding {
        level: Level::Info,
        topic: topic.into(),
        text,
        fix: None,
    }
}

fn problem(topic: &str, text: String, fix: String) -> Finding {
    Finding {
        level: Level::Problem,
        topic: topic.into(),
        text,
        fix: Some(fix),
    }
}

/// Where to look: a project's settings, or (`project: None`) the user's.
pub struct Where<'a> {
    /// The project, or `None` for the user's settings (`doctor --user`).
    pub project: Option<&'a Path>,
    /// The running binary's `--version` line (`hookjournal 0.1.0`).
    pub version: &'a str,
    /// The running binary (`std::env::current_exe`): a registered program is this hookjournal
    /// when it is this file or a copy of it, found without running it. `None`: unknown, and so
    /// nothing registered is verified.
    pub exe: Option<&'a Path>,
}

/// A settings, shim or hook file's text, `None` when it is missing or refused: read on its
/// ground (`door::read_on_ground`: beneath the project through no link, the user's own files
/// as the user links them), bounded and never blocking, so a FIFO or `/dev/zero` committed in
/// its place costs nothing.
fn read_text(project: Option<&Path>, path: &Path) -> Option<String> {
    journal::door::read_on_ground(project, path, journal::door::READ_CAP)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The order doctor reports hosts in: those whose settings file install edits first, then
/// OpenClaw's plugin, the shims, the hook scripts (each in the registry's order).
fn report_rank(facts: &HostFacts) -> u8 {
    match facts.install.map(|i| i.format) {
        Some(HookFileFormat::PluginDir) => 1,
        Some(HookFileFormat::ShimModule) => 2,
        Some(HookFileFormat::ScriptPerEvent) => 3,
        _ => 0,
    }
}

/// Every host's registration, as `install` would make it.
pub fn hosts(w: &Where) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut any = false;
    let mut registry: Vec<&HostFacts> = hosts::HOSTS
        .iter()
        .map(|m| m.facts)
        .filter(|f| f.install.is_some())
        .collect();
    registry.sort_by_key(|f| report_rank(f));
    for facts in registry {
        any |= match facts.install.map(|i| i.format) {
            Some(HookFileFormat::PluginDir) => openclaw(w, &mut out),
            Some(HookFileFormat::ShimModule) => shim(w, facts, &mut out),
            Some(HookFileFormat::ScriptPerEvent) => cline(w, &mut out),
            _ => host(w, &Host::from_name(facts.name), &mut out),
        };
    }
    if !any {
        let (what, fix) = match w.project {
            Some(p) => (
                format!("hookjournal is registered for no agent in {}", p.display()),
                "hookjournal install".to_string(),
            ),
            None => (
                "hookjournal is registered for no agent in your user settings".to_string(),
                "hookjournal install --scope user".to_string(),
            ),
        };
        out.push(problem("hosts", what, fix));
    }
    out
}

/// The `--scope` flag `install` takes for a settings file of `scope`.
fn scope_flag(scope: Scope) -> &'static str {
    match scope {
        Scope::Project => "",
        Scope::Local => " --scope local",
        Scope::User => " --scope user",
    }
}

fn install_cmd(h: &Host, scope: Scope) -> String {
    let host = if *h == Host::Claude {
        String::new()
    } else {
        format!(" --host {}", h.as_str())
    };
    format!("hookjournal install{host}{}", scope_flag(scope))
}

/// The user's config directory of a host (`$CODEX_HOME`, else `~/.codex`).
fn user_dir(facts: &HostFacts) -> Option<PathBuf> {
    let install = facts.install.as_ref()?;
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    install
        .config_dir_env
        .and_then(env)
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(install.user_config_dir)))
}

/// The host's settings files at `scopes` that exist, each read on its ground (the project's
/// through no link); one that does not parse is a problem.
fn settings_files(
    w: &Where,
    h: &Host,
    scopes: &[Scope],
    user: Option<&Path>,
    out: &mut Vec<Finding>,
) -> Vec<(Scope, PathBuf, Settings)> {
    let Some(install) = h.facts().install.as_ref() else {
        return Vec::new();
    };
    let project = w.project.unwrap_or(Path::new("."));
    let mut files = Vec::new();
    for &scope in scopes {
        let Some(path) = install.settings_path(scope, project, user) else {
            continue;
        };
        let ground = (scope != Scope::User).then_some(project);
        match Settings::read_on(ground, &path) {
            Ok(Some(s)) => files.push((scope, path, s)),
            Ok(None) => {}
            Err(e) => out.push(problem(
                h.facts().product,
                e,
                format!("correct the file, then `{}`", install_cmd(h, scope)),
            )),
        }
    }
    files
}

/// One host: returns whether hookjournal is registered there at all.
fn host(w: &Where, h: &Host, out: &mut Vec<Finding>) -> bool {
    let facts = h.facts();
    let Some(install) = facts.install.as_ref() else {
        return false;
    };
    let topic = facts.product;
    let user = user_dir(facts);
    // Kimi CLI reads hooks from the user's config only, whatever the project.
    let user_only = install.user_only();
    let scopes: &[Scope] = match w.project {
        // Letta Code runs the handlers of all three of its files, the user's too: one there
        // beside the project's is journaled twice.
        Some(_) if *h == Host::Letta => &[Scope::Project, Scope::Local, Scope::User],
        Some(_) if !user_only => &[Scope::Project, Scope::Local],
        _ => &[Scope::User],
    };
    let mut files = settings_files(w, h, scopes, user.as_deref(), out);
    if *h == Host::Letta {
        letta_disabled(h, &files, out);
    }
    if install.format == HookFileFormat::OnlyHooks {
        for (scope, path, s) in &mut files {
            only_hooks(h, *scope, path, s, out);
        }
    }
    if install.format == HookFileFormat::GroupedRegex {
        regex_matchers(w, h, &files, out);
    }
    if install.format == HookFileFormat::KiroAgent {
        kiro_cached(h, &files, out);
    }
    let plugin = (*h == Host::Claude)
        .then(|| {
            registration::plugin_enabled_in(
                w.project,
                &registration::claude_settings_files(w.project),
            )
        })
        .flatten();
    let registering: Vec<&(Scope, PathBuf, Settings)> =
        files.iter().filter(|(_, _, s)| s.registers()).collect();
    if let Some((file, name)) = &plugin {
        out.push(ok(
            topic,
            format!(
                "the {name} plugin is enabled in {}: it registers every event",
                file.display()
            ),
        ));
        if let Some((scope, path, _)) = registering.first() {
            out.push(problem(
                topic,
                format!(
                    "{} registers hookjournal as well: every event would be journaled twice",
                    path.display()
                ),
                format!("hookjournal uninstall{}", scope_flag(*scope)),
            ));
        }
    }
    if registering.is_empty() {
        if plugin.is_none() {
            let shown = files
                .first()
                .map(|(_, p, _)| format!("{} does not register hookjournal", p.display()))
                .unwrap_or_else(|| "no settings file".into());
            let scope = if w.project.is_some() && !user_only {
                Scope::Project
            } else {
                Scope::User
            };
            out.push(info(
                topic,
                format!("not set up ({shown}; `{}` does it)", install_cmd(h, scope)),
            ));
        }
        return plugin.is_some();
    }
    if registering.len() > 1 {
        out.push(problem(
            topic,
            format!(
                "both {} and {} register hookjournal: every event is journaled twice",
                registering[0].1.display(),
                registering[1].1.display()
            ),
            format!("hookjournal uninstall{}", scope_flag(registering[1].0)),
        ));
    }
    for (scope, path, s) in &registering {
        registered_events(h, *scope, path, s, out);
        programs(w, h, *scope, s, out);
        trust(w, h, path, s, out);
    }
    true
}

/// Letta Code's `"hooks": {"disabled": true}` in any of its files turns every hook off, the
/// user's `"disabled": false` overriding the project's (its `areHooksDisabled`, 0.32.18).
fn letta_disabled(h: &Host, files: &[(Scope, PathBuf, Settings)], out: &mut Vec<Finding>) {
    let disabled = |s: &Settings| s.value.pointer("/hooks/disabled").and_then(|v| v.as_bool());
    let user = files.iter().find(|(scope, _, _)| *scope == Scope::User);
    if user.is_some_and(|(_, _, s)| disabled(s) == Some(false)) {
        return;
    }
    let user_first = user
        .into_iter()
        .chain(files.iter().filter(|f| f.0 != Scope::User));
    if let Some((_, path, _)) = user_first
        .into_iter()
        .find(|(_, _, s)| disabled(s) == Some(true))
    {
        out.push(problem(
            h.facts().product,
            format!(
                "{} sets \"hooks\": {{\"disabled\": true}}: {} runs no hook at all",
                path.display(),
                h.facts().product
            ),
            "take \"disabled\" out of its \"hooks\" (or set it false in ~/.letta/settings.json)"
                .to_string(),
        ));
    }
}

/// Auggie's matchers: a regex on the tool events (`"*"` is an invalid one and matches nothing),
/// none on the others (one there is reported as unsupported configuration, on `--print`'s
/// stdout). And, to a user of Auggie (`~/.augment` exists), a `.claude/settings.json`
/// registration in a project Auggie's files do not register in: Auggie reads no hooks there.
fn regex_matchers(
    w: &Where,
    h: &Host,
    files: &[(Scope, PathBuf, Settings)],
    out: &mut Vec<Finding>,
) {
    let facts = h.facts();
    for (scope, path, s) in files {
        let events = s.value.get("hooks").and_then(|v| v.as_object());
        for (event, groups) in events.into_iter().flatten() {
            let tool = facts
                .event(event)
                .and_then(|e| e.register)
                .is_some_and(|r| r.tool_matcher);
            let matchers = groups
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("matcher"));
            for m in matchers {
                let fix = format!("`{}` (or correct the matcher)", install_cmd(h, *scope));
                let text = match (tool, m.as_str()) {
                    (true, Some("*")) => format!(
                        "{}: {event}'s matcher \"*\" matches no tool ({} takes a regex: \".*\" is every tool)",
                        path.display(),
                        facts.product
                    ),
                    (true, _) => continue,
                    (false, _) => format!(
                        "{}: a matcher on {event}, which takes none: {} reports unsupported configuration",
                        path.display(),
                        facts.product
                    ),
                };
                out.push(problem(facts.product, text, fix));
            }
        }
    }
    let Some(project) = w.project else { return };
    // Said only to a user of the host (its user directory exists): to everyone else a line
    // about an agent they do not run is noise.
    let user_of_host = user_dir(facts).is_some_and(|d| d.is_dir());
    if !user_of_host || files.iter().any(|(_, _, s)| s.registers()) {
        return;
    }
    let claude = project.join(".claude/settings.json");
    if Settings::read_on(Some(project), &claude).is_ok_and(|s| s.is_some_and(|s| s.registers())) {
        out.push(info(
            facts.product,
            format!(
                "{} registers hookjournal, but {} reads no hooks there",
                claude.display(),
                facts.product
            ),
        ));
    }
}

/// Kiro CLI's cache: a hookjournal entry with `cache_ttl_seconds` above 0 is answered from the
/// cache for that long after a run, and not run (its source's `HookExecutor`): those invocations
/// are never journaled.
fn kiro_cached(h: &Host, files: &[(Scope, PathBuf, Settings)], out: &mut Vec<Finding>) {
    let facts = h.facts();
    for (scope, path, s) in files {
        let events = s.value.get("hooks").and_then(|v| v.as_object());
        for (event, entries) in events.into_iter().flatten() {
            let cached = (entries.as_array().into_iter().flatten())
                .filter(|e| {
                    (e.get("command").and_then(|c| c.as_str()))
                        .is_some_and(registration::is_hookjournal_command)
                })
                .filter_map(|e| e.get("cache_ttl_seconds").and_then(|t| t.as_u64()))
                .find(|ttl| *ttl > 0);
            if let Some(ttl) = cached {
                out.push(problem(
                    facts.product,
                    format!(
                        "{}: {event}'s hookjournal entry sets cache_ttl_seconds {ttl}: {} \
                         reuses the last output for {ttl} s and does not run the hook (those \
                         invocations are never journaled)",
                        path.display(),
                        facts.product
                    ),
                    format!("`{}` (or remove cache_ttl_seconds)", install_cmd(h, *scope)),
                ));
            }
        }
    }
}

/// A hooks file the host rejects whole for one event key it does not take (OpenHands: then it
/// runs no hook at all): a name in the events (under `hooks`, or at the top level without it)
/// that is none of its own (PascalCase or snake_case), or one event spelled both ways. And
/// events at the top level beside `hooks`, which it ignores (their handlers never run). The
/// handlers of an event spelled in snake_case are counted as the event's.
fn only_hooks(h: &Host, scope: Scope, path: &Path, s: &mut Settings, out: &mut Vec<Finding>) {
    let facts = h.facts();
    let snake = |name: &str| {
        let mut o = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                o.push('_');
            }
            o.push(c.to_ascii_lowercase());
        }
        o
    };
    let event_of = |k: &str| {
        facts
            .events
            .iter()
            .find(|e| e.name == k || snake(e.name) == k)
            .map(|e| e.name)
    };
    let Some(root) = s.value.as_object() else {
        return;
    };
    let wrapped = root.get("hooks").and_then(|v| v.as_object());
    let events = wrapped.unwrap_or(root);
    let mut odd: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for k in events.keys() {
        match event_of(k) {
            Some(e) if seen.contains(&e) => odd.push(format!("{k} (the same event twice)")),
            Some(e) => seen.push(e),
            None => odd.push(k.clone()),
        }
    }
    let fix = |what: &str| format!("{what}, then `{}`", install_cmd(h, scope));
    let handlers = std::mem::take(&mut s.handlers);
    for (k, mut hs) in handlers {
        let name = event_of(&k).map_or(k, str::to_string);
        s.handlers.entry(name).or_default().append(&mut hs);
    }
    if !odd.is_empty() {
        out.push(problem(
            facts.product,
            format!(
                "{} holds what {} rejects ({}): it runs no hook at all",
                path.display(),
                facts.product,
                odd.join(", ")
            ),
            fix("take it out of the file"),
        ));
    }
    let ignored: Vec<&str> = match wrapped {
        Some(_) => root
            .keys()
            .filter(|k| *k != "hooks" && event_of(k).is_some())
            .map(String::as_str)
            .collect(),
        None => Vec::new(),
    };
    if !ignored.is_empty() {
        out.push(problem(
            facts.product,
            format!(
                "{} lists {} beside \"hooks\": {} ignores them there",
                path.display(),
                ignored.join(", "),
                facts.product
            ),
            fix("move them into \"hooks\""),
        ));
    }
}

/// The events registered against the table's: missing, stale, a timeout that differs.
fn registered_events(h: &Host, scope: Scope, path: &Path, s: &Settings, out: &mut Vec<Finding>) {
    let facts = h.facts();
    let topic = facts.product;
    let scale = facts.install.as_ref().map_or(1, |i| i.timeout_scale);
    let want: BTreeMap<&str, u64> = facts
        .registered()
        .map(|(e, r)| (e.name, r.timeout_s * scale))
        .collect();
    let missing: Vec<&str> = want
        .keys()
        .filter(|e| !s.handlers.contains_key(**e))
        .copied()
        .collect();
    let stale: Vec<&str> = s
        .handlers
        .keys()
        .filter(|e| !want.contains_key(e.as_str()))
        .map(String::as_str)
        .collect();
    let timed = facts.install.is_some_and(|i| i.format.timed());
    let timeouts: Vec<&str> = s
        .handlers
        .iter()
        .filter(|_| timed)
        .filter(|(e, hs)| {
            want.get(e.as_str())
                .is_some_and(|t| hs.iter().any(|x| x.timeout != Some(*t)))
        })
        .map(|(e, _)| e.as_str())
        .collect();
    let fix = install_cmd(h, scope);
    let shown = path.display();
    let list = |v: &[&str]| v.join(", ");
    if missing.is_empty() && stale.is_empty() && timeouts.is_empty() {
        out.push(ok(
            topic,
            format!(
                "{shown} registers hookjournal for all {} events",
                want.len()
            ),
        ));
    }
    if !missing.is_empty() {
        out.push(problem(
            topic,
            format!(
                "{shown} does not register {} of the {} events ({})",
                missing.len(),
                want.len(),
                list(&missing)
            ),
            fix.clone(),
        ));
    }
    if !stale.is_empty() {
        out.push(problem(
            topic,
            format!(
                "{shown} registers hookjournal for events it no longer wants ({})",
                list(&stale)
            ),
            fix.clone(),
        ));
    }
    if !timeouts.is_empty() {
        out.push(problem(
            topic,
            format!(
                "{shown} gives hookjournal other timeouts than it wants ({})",
                list(&timeouts)
            ),
            fix,
        ));
    }
}

/// Each program the handlers run: it exists, is executable and is this hookjournal.
fn programs(w: &Where, h: &Host, scope: Scope, s: &Settings, out: &mut Vec<Finding>) {
    let topic = h.facts().product;
    let seen = once_each(s.handlers.values().flatten().map(|x| x.program.as_str()));
    for program in seen {
        out.push(program_finding(topic, program, w, install_cmd(h, scope)));
    }
}

/// Each item once, in the order it first appears: programs are listed by the first event that
/// runs them, an order that does not depend on where the programs live (sorting their paths
/// would).
fn once_each<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Whether `program` exists, is executable and is this hookjournal: the running binary or a copy
/// of it (`registration::identify`). It is never run: a handler such as
/// `/proc/self/cwd/tools/hookjournal hook` names a program the repository committed, and asking
/// it for `--version` would run it.
fn program_finding(topic: &str, program: &str, w: &Where, fix: String) -> Finding {
    use registration::Identity;
    use std::os::unix::fs::PermissionsExt;
    let path = Path::new(program);
    if !path.is_absolute() {
        return ok(
            topic,
            format!("the hook runs `{program}`, found on the host's PATH"),
        );
    }
    match journal::door::open_following(path).and_then(|f| f.metadata()) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => problem(
            topic,
            format!("the hook runs {program}, which does not exist: every hook fails"),
            fix,
        ),
        Err(_) => problem(
            topic,
            format!("the hook runs {program}, which is not an executable file: every hook fails"),
            fix,
        ),
        Ok(m) if !m.is_file() || m.permissions().mode() & 0o111 == 0 => problem(
            topic,
            format!("the hook runs {program}, which is not an executable file: every hook fails"),
            fix,
        ),
        Ok(_) => match w.exe.map(|exe| registration::identify(path, exe)) {
            Some(Ok(Identity::This | Identity::Copy)) => {
                ok(topic, format!("the hook runs {program} ({})", w.version))
            }
            _ => problem(
                topic,
                format!(
                    "not verified: {program}, which the hook runs, is not this hookjournal \
                     (neither this file nor a copy; doctor runs nothing to ask it)"
                ),
                fix,
            ),
        },
    }
}

/// Whether the host will run the hooks: Codex's hook and project trust, Copilot's and
/// Gemini's folder trust.
fn trust(w: &Where, h: &Host, path: &Path, s: &Settings, out: &mut Vec<Finding>) {
    let facts = h.facts();
    match facts.trust {
        Trust::TrustedHooks => codex_trust(w, h, path, out),
        Trust::TrustedFolder if *h == Host::Copilot => copilot_folder_trust(w, facts, out),
        Trust::TrustedFolder if *h == Host::Vibe => vibe_folder_trust(w, facts, path, out),
        Trust::TrustedFolder => gemini_folder_trust(w, facts, path, s, out),
        Trust::None | Trust::Unverified => {}
    }
}

/// Codex CLI: each hook trusted by its hash in `config.toml`, and the project trusted.
fn codex_trust(w: &Where, h: &Host, path: &Path, out: &mut Vec<Finding>) {
    let facts = h.facts();
    let topic = facts.product;
    let config = user_dir(facts).map(|d| d.join("config.toml"));
    let toml: toml::Value = config
        .as_ref()
        .and_then(|c| read_text(w.project, c))
        .and_then(|t| toml::from_str(&t).ok())
        .unwrap_or(toml::Value::Table(Default::default()));
    let shown = config
        .as_ref()
        .map_or("config.toml".into(), |c| c.display().to_string());
    let text = read_text(w.project, path).unwrap_or_default();
    let key_path = path.to_string_lossy();
    let trusted = codex_trust::handlers(&key_path, &text, registration::is_hookjournal_command)
        .unwrap_or_default();
    let untrusted = trusted
        .iter()
        .filter(|t| {
            toml.get("hooks")
                .and_then(|x| x.get("state"))
                .and_then(|x| x.get(&t.key))
                .and_then(|x| x.get("trusted_hash"))
                .and_then(|x| x.as_str())
                != Some(t.hash.as_str())
        })
        .count();
    if untrusted == 0 {
        out.push(ok(
            topic,
            format!("its {} hooks are trusted in {shown}", trusted.len()),
        ));
    } else {
        let scope = if w.project.is_some() {
            Scope::Project
        } else {
            Scope::User
        };
        out.push(problem(
            topic,
            format!(
                "{untrusted} of its {} hooks are not trusted in {shown}: Codex skips them silently",
                trusted.len()
            ),
            install_cmd(h, scope),
        ));
    }
    if let Some(p) = w.project {
        let level = toml
            .get("projects")
            .and_then(|x| x.get(p.to_string_lossy().as_ref()))
            .and_then(|x| x.get("trust_level"))
            .and_then(|x| x.as_str());
        if level == Some("trusted") {
            out.push(ok(topic, format!("the project is trusted in {shown}")));
        } else {
            out.push(problem(
                topic,
                format!("the project is not trusted in {shown}: Codex loads none of its hooks"),
                format!("start `codex` in {} and trust the project", p.display()),
            ));
        }
    }
}

/// Copilot CLI: the folder under an entry of `trustedFolders` in `config.json`.
fn copilot_folder_trust(w: &Where, facts: &HostFacts, out: &mut Vec<Finding>) {
    let topic = facts.product;
    if let Some(p) = w.project {
        let file = user_dir(facts).map(|d| d.join("config.json"));
        let shown = file
            .as_ref()
            .map_or("config.json".into(), |f| f.display().to_string());
        if copilot_trusts(file.as_deref(), p) {
            out.push(ok(topic, format!("the folder is trusted in {shown}")));
        } else {
            out.push(problem(
                topic,
                format!(
                    "the folder is not trusted in {shown}: Copilot CLI skips its hooks silently"
                ),
                format!(
                    "start `copilot` in {} and trust the folder (or --trust-folder)",
                    p.display()
                ),
            ));
        }
    }
}

/// Gemini CLI: the folder trusted in `trustedFolders.json`, and hooks not disabled.
fn gemini_folder_trust(
    w: &Where,
    facts: &HostFacts,
    path: &Path,
    s: &Settings,
    out: &mut Vec<Finding>,
) {
    let topic = facts.product;
    if let Some(p) = w.project {
        let file = user_dir(facts).map(|d| d.join("trustedFolders.json"));
        let shown = file
            .as_ref()
            .map_or("trustedFolders.json".into(), |f| f.display().to_string());
        if gemini_trusts(file.as_deref(), p) {
            out.push(ok(topic, format!("the folder is trusted in {shown}")));
        } else {
            out.push(problem(
                topic,
                format!("the folder is not trusted in {shown}: Gemini CLI runs no project hook"),
                format!(
                    "start `gemini` in {} and trust the folder (or /permissions)",
                    p.display()
                ),
            ));
        }
    }
    let disabled = s
        .value
        .get("hooksConfig")
        .and_then(|c| c.get("enabled"))
        .and_then(|e| e.as_bool())
        == Some(false);
    if disabled {
        out.push(problem(
            topic,
            format!(
                "{} sets hooksConfig.enabled to false: no hook runs",
                path.display()
            ),
            format!("set hooksConfig.enabled to true in {}", path.display()),
        ));
    }
}

/// Copilot CLI's `config.json` (`trustedFolders`): an entry trusts the folder and every folder
/// below it.
fn copilot_trusts(file: Option<&Path>, project: &Path) -> bool {
    let Some(v) = file
        .and_then(|f| read_text(None, f))
        .and_then(|t| Settings::parse(&t).ok())
        .map(|s| s.value)
    else {
        return false;
    };
    v.get("trustedFolders")
        .and_then(|f| f.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str())
        .any(|entry| {
            let entry = Path::new(entry.trim_end_matches('/'));
            entry.is_absolute() && project.starts_with(entry)
        })
}

/// Gemini CLI's `trustedFolders.json`: `TRUST_FOLDER` trusts a folder and what is under it,
/// `TRUST_PARENT` its parent and what is under that; `DO_NOT_TRUST` nothing.
/// Mistral Vibe: a project's `.vibe/hooks.toml` runs only in a trusted folder — the folder or
/// its closest ancestor listed in `~/.vibe/trusted_folders.toml` (`trusted`, `untrusted`), or
/// `vibe --trust` for one run (`vibe -p` never asks). The user's file runs everywhere.
fn vibe_folder_trust(w: &Where, facts: &HostFacts, path: &Path, out: &mut Vec<Finding>) {
    let Some(p) = w.project.filter(|p| path.starts_with(p)) else {
        return;
    };
    let topic = facts.product;
    let file = user_dir(facts).map(|d| d.join("trusted_folders.toml"));
    let shown = file
        .as_ref()
        .map_or("trusted_folders.toml".into(), |f| f.display().to_string());
    let lists: Option<toml::Table> = file
        .as_deref()
        .and_then(|f| read_text(None, f))
        .and_then(|t| toml::from_str(&t).ok());
    let listed = |key: &str, dir: &Path| {
        (lists.as_ref())
            .and_then(|l| l.get(key))
            .and_then(|v| v.as_array())
            .is_some_and(|a| a.iter().any(|v| v.as_str().map(Path::new) == Some(dir)))
    };
    // The closest decision wins, the folder's own first.
    let decision = p.ancestors().find_map(|dir| {
        (listed("trusted", dir) || listed("untrusted", dir)).then(|| listed("trusted", dir))
    });
    if decision == Some(true) {
        out.push(ok(topic, format!("the folder is trusted in {shown}")));
    } else {
        out.push(problem(
            topic,
            format!(
                "the folder is not trusted in {shown}: Mistral Vibe runs no hook of \
                 .vibe/hooks.toml here (but for `vibe --trust`)"
            ),
            format!(
                "start `vibe` in {} and trust the folder, run `vibe --trust`, or install with \
                 --scope user",
                p.display()
            ),
        ));
    }
}

fn gemini_trusts(file: Option<&Path>, project: &Path) -> bool {
    let Some(v) = file
        .and_then(|f| read_text(None, f))
        .and_then(|t| Settings::parse(&t).ok())
        .map(|s| s.value)
    else {
        return false;
    };
    v.as_object().into_iter().flatten().any(|(k, level)| {
        let k = Path::new(k);
        match level.as_str() {
            Some("TRUST_FOLDER") => project.starts_with(k),
            Some("TRUST_PARENT") => k.parent().is_some_and(|p| project.starts_with(p)),
            _ => false,
        }
    })
}

/// A host whose hooks run in its own process (OpenCode's plugins, pi's extensions): the shim
/// `install` wrote, at project or user scope, and the program its settings line names. A file of
/// the user's own at that path is not hookjournal's: not a registration.
fn shim(w: &Where, facts: &HostFacts, out: &mut Vec<Finding>) -> bool {
    let Some(install) = facts.install.as_ref() else {
        return false;
    };
    let user = user_dir(facts);
    let scope = if w.project.is_some() {
        Scope::Project
    } else {
        Scope::User
    };
    let project = w.project.unwrap_or(Path::new("."));
    let Some(path) = install.settings_path(scope, project, user.as_deref()) else {
        return false;
    };
    let Some(text) = read_text(w.project, &path) else {
        return false;
    };
    if !text.starts_with("// hookjournal's ") {
        return false;
    }
    // The settings line install wrote: `const SETTINGS… = {…};`.
    let settings = text
        .lines()
        .find(|l| l.starts_with("const SETTINGS"))
        .and_then(|l| Some(&l[l.find('{')?..=l.rfind('}')?]))
        .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok());
    let fix = install_cmd(&Host::from_name(facts.name), scope);
    out.push(ok(
        facts.product,
        format!("the hookjournal shim is in {}", path.display()),
    ));
    if let Some(p) = another_shim(facts, &path, &text, &fix) {
        out.push(p);
    }
    match settings.as_ref().and_then(|s| s["command"].as_str()) {
        Some(program) => out.push(program_finding(facts.product, program, w, fix)),
        None => out.push(problem(
            facts.product,
            format!("{} names no program", path.display()),
            fix,
        )),
    }
    true
}

/// A problem when the shim's code at `path` is not what this binary ships for the host (an older
/// hookjournal installed it, or it was edited): what changed since does not run.
fn another_shim(facts: &HostFacts, path: &Path, text: &str, fix: &str) -> Option<Finding> {
    let shipped = hosts::module(facts.name)?.shipped.first()?.text;
    (without_settings(shipped) != without_settings(text)).then(|| {
        problem(
            facts.product,
            format!(
                "{} is another hookjournal's shim (older, or changed): what this one's does \
                 differently does not run",
                path.display()
            ),
            fix.to_string(),
        )
    })
}

/// A shim's code without its settings line (the one line install writes).
fn without_settings(code: &str) -> Vec<&str> {
    code.lines()
        .filter(|l| !l.starts_with("const SETTINGS"))
        .collect()
}

/// Cline's hook files in its hooks directory, by what each is.
#[derive(Default)]
struct ClineScripts {
    /// The program each of hookjournal's scripts runs (`None`: it names none).
    ours: Vec<Option<String>>,
    /// Events with no file at all.
    missing: Vec<&'static str>,
    /// Events whose file is the user's own.
    own: Vec<&'static str>,
    /// hookjournal's scripts that are not executable (Cline skips them).
    idle: Vec<&'static str>,
}

impl ClineScripts {
    /// The scripts in `dir`, each read on its ground (`read_text`): a FIFO or a link committed
    /// under an event's name is read as no file at all.
    fn read(project: Option<&Path>, dir: &Path) -> ClineScripts {
        use std::os::unix::fs::PermissionsExt;
        let mut found = ClineScripts::default();
        for file in hosts::CLINE
            .registered()
            .filter_map(|(e, _)| hosts::cline::cline_hook_file(e.name))
        {
            let path = dir.join(file);
            match read_text(project, &path) {
                Some(text) if registration::is_cline_hook(&text) => {
                    let runs = journal::files::open_read(&path)
                        .and_then(|f| f.metadata())
                        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
                    if !runs {
                        found.idle.push(file);
                    }
                    found.ours.push(registration::cline_hook_program(&text));
                }
                Some(_) => found.own.push(file),
                None => found.missing.push(file),
            }
        }
        found
    }
}

/// Cline's hook scripts (Cline runs the executable named after each event in its hooks
/// directory): those `install` wrote, that each is executable, and the program they run. A file of
/// the user's own under an event's name stays theirs (install keeps it): that event is not
/// journaled, which is said, not a problem.
fn cline(w: &Where, out: &mut Vec<Finding>) -> bool {
    let facts = &hosts::CLINE;
    let topic = facts.product;
    let Some(install) = facts.install.as_ref() else {
        return false;
    };
    let scope = if w.project.is_some() {
        Scope::Project
    } else {
        Scope::User
    };
    let project = w.project.unwrap_or(Path::new("."));
    let Some(dir) = install.settings_path(scope, project, user_dir(facts).as_deref()) else {
        return false;
    };
    let ClineScripts {
        ours,
        missing,
        own,
        idle,
    } = ClineScripts::read(w.project, &dir);
    if ours.is_empty() {
        return false;
    }
    let fix = install_cmd(&Host::Cline, scope);
    let total = ours.len() + missing.len() + own.len();
    out.push(ok(
        topic,
        format!(
            "hookjournal's hook scripts are in {} ({} of {total} events)",
            dir.display(),
            ours.len()
        ),
    ));
    if !missing.is_empty() {
        out.push(problem(
            topic,
            format!(
                "no hook script for {}: {} not journaled",
                missing.join(", "),
                if missing.len() == 1 {
                    "that event is"
                } else {
                    "those events are"
                }
            ),
            fix.clone(),
        ));
    }
    if !idle.is_empty() {
        out.push(problem(
            topic,
            format!(
                "{} not executable: Cline does not run {}",
                idle.join(", "),
                if idle.len() == 1 { "it" } else { "them" }
            ),
            format!(
                "chmod +x {}",
                idle.iter()
                    .map(|f| dir.join(f).display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ));
    }
    for file in own {
        out.push(info(
            topic,
            format!(
                "{} is your own hook: that event is not journaled",
                dir.join(file).display()
            ),
        ));
    }
    for program in once_each(ours) {
        match program {
            Some(p) => out.push(program_finding(topic, &p, w, fix.clone())),
            None => out.push(problem(
                topic,
                "a hook script of hookjournal's runs no hookjournal program".into(),
                fix.clone(),
            )),
        }
    }
    true
}

/// OpenClaw's shim plugin (user-wide): its settings name the program; the plugin must be enabled.
fn openclaw(w: &Where, out: &mut Vec<Finding>) -> bool {
    let facts = &hosts::OPENCLAW;
    let topic = facts.product;
    let Some(state) = user_dir(facts) else {
        return false;
    };
    let shim = state.join("extensions/hookjournal/hookjournal.json");
    let Some(settings) =
        read_text(None, &shim).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return false;
    };
    let config = std::env::var_os("OPENCLAW_CONFIG_PATH")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| state.join("openclaw.json"));
    let enabled = Settings::read(&config).ok().flatten().is_some_and(|s| {
        s.value
            .pointer("/plugins/entries/hookjournal/enabled")
            .and_then(|e| e.as_bool())
            != Some(false)
            && s.value.pointer("/plugins/entries/hookjournal").is_some()
    });
    let fix = "hookjournal install --host openclaw".to_string();
    if enabled {
        out.push(ok(
            topic,
            format!("the hookjournal plugin is enabled in {}", config.display()),
        ));
    } else {
        out.push(problem(
            topic,
            format!(
                "the hookjournal plugin is not enabled in {}",
                config.display()
            ),
            fix.clone(),
        ));
    }
    let code = state.join("extensions/hookjournal/index.js");
    if let Some(p) = read_text(None, &code).and_then(|text| another_shim(facts, &code, &text, &fix))
    {
        out.push(p);
    }
    if let Some(program) = settings.get("command").and_then(|c| c.as_str()) {
        out.push(program_finding(topic, program, w, fix));
    }
    true
}

/// The journal at `dir`: size, each host's last event (relative to `now_us` by `ago`), the
/// spool, a stuck drainer, the chain.
pub fn journal(dir: &Path, ago: &dyn Fn(i64) -> String) -> Vec<Finding> {
    let mut out = Vec::new();
    let report = match journal::verify(dir, Duration::from_secs(10), |_| {}) {
        Ok(r) => r,
        Err(journal::Error::NotFound(_)) => {
            out.push(problem(
                "journal",
                format!("no journal at {}", dir.display()),
                "hookjournal install (it creates the journal), or run from the project".into(),
            ));
            return out;
        }
        Err(e) => {
            out.push(problem(
                "journal",
                format!("{} does not open: {e}", dir.display()),
                "hookjournal verify, then hookjournal recover".into(),
            ));
            return out;
        }
    };
    if let journal::origin::Origin::Foreign(why) = journal::origin::status(dir) {
        out.push(problem(
            "origin",
            format!(
                "{} is foreign: {why}; hooks record nothing into it and inject nothing from it",
                dir.display()
            ),
            "hookjournal trust (once you know the journal is yours)".into(),
        ));
    }
    out.push(ok(
        "journal",
        format!(
            "{}: {} event{}, {:.1} MiB",
            dir.display(),
            report.events,
            if report.events == 1 { "" } else { "s" },
            dir_bytes(dir) as f64 / (1 << 20) as f64
        ),
    ));
    out.extend(last_events(dir, ago));
    out.push(spool_finding(dir));
    out.push(drainer(dir));
    out.extend(incidents(dir, ago));
    if report.damage.is_empty() {
        out.push(ok(
            "verify",
            format!(
                "chain valid: {} event{} in {} sealed segment{} + the active store",
                report.events,
                if report.events == 1 { "" } else { "s" },
                report.segments,
                if report.segments == 1 { "" } else { "s" }
            ),
        ));
    } else {
        let first = &report.damage[0];
        out.push(problem(
            "verify",
            format!(
                "{} problem(s), first: {}: {}",
                report.damage.len(),
                first.place,
                first.what
            ),
            "hookjournal recover (then hookjournal verify)".into(),
        ));
    }
    out
}

/// The configuration: files that do not load, and settings a project file sets that are
/// ignored until the user trusts the file (they run programs, stop agents or write outside the
/// journal).
pub fn config(loaded: &crate::settings::Loaded) -> Vec<Finding> {
    let mut out: Vec<Finding> = loaded
        .problems
        .iter()
        .map(|p| {
            problem(
                "config",
                projections::text::one_line(p),
                "fix the file (hookjournal status shows what applies)".into(),
            )
        })
        .collect();
    if let Some(why) = &loaded.ignored_because {
        let keys: Vec<&str> = loaded.ignored.iter().map(|i| i.guarded.key).collect();
        out.push(problem(
            "config",
            format!(
                "{} ignores {} ({why}): {}",
                loaded.project.display(),
                if keys.len() == 1 {
                    "1 setting".to_string()
                } else {
                    format!("{} settings", keys.len())
                },
                keys.join(", ")
            ),
            "review the file, then hookjournal trust".into(),
        ));
    }
    if out.is_empty() {
        let trusted = if loaded.trusted.is_empty() {
            String::new()
        } else {
            format!(
                "; trusted: {}",
                loaded
                    .trusted
                    .iter()
                    .map(|i| i.guarded.key)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push(ok("config", format!("every setting applies{trusted}")));
    }
    out
}

/// Each host's last event, from the sessions index (no session partition is read).
fn last_events(dir: &Path, ago: &dyn Fn(i64) -> String) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    if let Ok(mut p) = crate::state::Partial::open(dir) {
        if p.load_index().is_ok() {
            for (_, s) in p.state.summaries_by_start() {
                let at = last.entry(s.host.clone()).or_insert(s.last_at_us);
                *at = (*at).max(s.last_at_us);
            }
        }
    }
    if last.is_empty() {
        out.push(info("last event", "none yet".into()));
    }
    for (h, at) in &last {
        let product = Host::from_name(h).facts().product;
        let product = if product.is_empty() {
            h.as_str()
        } else {
            product
        };
        out.push(ok("last event", format!("{product}: {}", ago(*at))));
    }
    out
}

/// The spool: events a hook could not append; the next writer ingests them.
fn spool_finding(dir: &Path) -> Finding {
    let spooled = journal::spool::list(dir).unwrap_or_default();
    let oldest = journal::spool::oldest_age(dir);
    match oldest {
        None => ok("spool", "empty".into()),
        Some(age) if age < Duration::from_secs(300) => ok(
            "spool",
            format!(
                "{} event(s) waiting, to be ingested by the next writer",
                spooled.len()
            ),
        ),
        Some(age) => problem(
            "spool",
            format!(
                "{} event(s) waiting, the oldest for {} min: nothing has ingested them",
                spooled.len(),
                age.as_secs() / 60
            ),
            "hookjournal drain".into(),
        ),
    }
}

/// Events a hook acknowledged but could not make durable (`journal::incidents`): each may be
/// missing, said with its time and reason; `verify` tells whether it survived.
fn incidents(dir: &Path, ago: &dyn Fn(i64) -> String) -> Vec<Finding> {
    let all = journal::incidents::read(dir);
    let missing: Vec<_> = all
        .iter()
        .filter(|i| i.severity == journal::incidents::Severity::MayBeMissing)
        .collect();
    if missing.is_empty() {
        return vec![ok("incidents", "no event may be missing".into())];
    }
    missing
        .iter()
        .rev()
        .take(5)
        .map(|i| {
            problem(
                "incidents",
                format!(
                    "{}: an event may be missing: {}",
                    ago(i.at_ms * 1000),
                    projections::text::one_line(&i.text)
                ),
                "hookjournal verify (it tells whether it survived; hookjournal status lists every incident)".into(),
            )
        })
        .collect()
}

/// A drainer a hook started holds `drain.running` while it runs (a few seconds at most): one
/// older than a minute is stuck, or died without removing it (then no other is started for 30 s
/// after each hook, and sled lags the log).
fn drainer(dir: &Path) -> Finding {
    let marker = dir.join(crate::maintenance::DRAINING);
    let age = journal::door::age(&marker);
    match age {
        Some(age) if age > Duration::from_secs(60) => {
            let pid = journal::files::read_small(&marker, 64).unwrap_or_default();
            let pid = String::from_utf8_lossy(&pid);
            let pid = pid.trim();
            let alive = !pid.is_empty() && Path::new("/proc").join(pid).exists();
            let (what, fix) = if alive {
                (
                    format!(
                        "process {pid} has been draining for {} s: stuck",
                        age.as_secs()
                    ),
                    format!("kill {pid}; hookjournal drain"),
                )
            } else {
                (
                    format!(
                        "a drainer started {} s ago died without finishing",
                        age.as_secs()
                    ),
                    "hookjournal drain".to_string(),
                )
            };
            problem("drainer", what, fix)
        }
        Some(_) => ok("drainer", "running".into()),
        None => ok("drainer", "none running, none stuck".into()),
    }
}

/// The bytes of every file under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    journal::door::Dir::open_nofollow(dir).map_or(0, |d| handle_bytes(&d))
}

/// The bytes of every file beneath the handle `d`, through no link.
fn handle_bytes(d: &journal::door::Dir) -> u64 {
    let Ok(entries) = d.entries() else {
        return 0;
    };
    entries
        .iter()
        .map(|(name, st)| match st.st_mode & libc::S_IFMT {
            libc::S_IFDIR => d
                .open_dir(Path::new(name))
                .map_or(0, |sub| handle_bytes(&sub)),
            libc::S_IFREG => st.st_size as u64,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::once_each;

    #[test]
    fn programs_are_listed_once_in_the_order_they_first_appear() {
        // Given programs named by events in order, one of them twice, the later sorting first.
        let named = [
            "/w/hookjournal",
            "/nonexistent/w/hookjournal",
            "/w/hookjournal",
        ];
        // When each is listed once
        let listed = once_each(named);
        // Then the first event's program comes first, whatever its path sorts as.
        assert_eq!(listed, ["/w/hookjournal", "/nonexistent/w/hookjournal"]);
    }
}
