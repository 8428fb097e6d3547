//! The edits `install` and `uninstall` make: functions over a settings document (`doc`), for
//! the status line (ours, or ours chained with the user's own) and for the hook handlers, and
//! the warnings an edit cannot fix. They read no file and print nothing.

use super::doc::{prop, string_value, Doc};
use super::{Event, HostFacts, Scope, BINARY_NAME};
use engine::registration::{is_hookjournal_command, split_program};
use jsonc_parser::cst::{CstInputValue, CstLeafNode, CstNode, CstObject};
use projections::host::HookFileFormat;
use projections::host::Host;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// The status line (Claude Code's `statusLine`): ours, or ours chained with the user's own.

/// Words of a command as `shell_quote` writes them (plain, or double-quoted with `\` escapes).
pub(super) fn shell_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut rest = cmd.trim_start();
    while !rest.is_empty() {
        let (w, r) = split_program(rest)?;
        words.push(w);
        rest = r.trim_start();
    }
    Some(words)
}

pub(super) fn is_our_statusline(cmd: &str) -> bool {
    let Some((program, rest)) = split_program(cmd.trim_start()) else {
        return false;
    };
    Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == BINARY_NAME)
        && rest.trim_start().starts_with("statusline")
}

/// The user's own command that ours chains, if any.
pub(super) fn chained_of(cmd: &str) -> Option<String> {
    let words = shell_words(cmd)?;
    let i = words.iter().position(|w| w == "--chain")?;
    words.get(i + 1).cloned()
}

/// Sets `statusLine` to ours, chaining a command the user already had (its other keys stay).
/// Re-installing keeps the chained command. Returns the command registered.
pub(super) fn install_statusline(
    doc: &mut Doc,
    base: &str,
    record_only: bool,
) -> Result<String, String> {
    let existing = match doc.root_object()? {
        Some(root) => match prop(&root, "statusLine") {
            None => None,
            Some(p) => {
                let o = p.object_value().ok_or("\"statusLine\" is not an object")?;
                let command = prop(&o, "command")
                    .and_then(|c| c.value())
                    .and_then(|v| string_value(&v).map(|s| (v, s)));
                Some(command.ok_or("\"statusLine\" has no command to chain")?)
            }
        },
        None => None,
    };
    let theirs = match &existing {
        Some((_, c)) if is_our_statusline(c) => chained_of(c),
        Some((_, c)) => Some(c.clone()),
        None => None,
    };
    let mut command = base.to_string();
    if let Some(t) = &theirs {
        if record_only {
            command.push_str(" --record-only");
        }
        command.push_str(" --chain ");
        command.push_str(&quote_str(t));
    }
    match existing {
        Some((node, _)) => doc.replace(&node, &command.as_str().into())?,
        None => doc.append_to_root(
            "statusLine",
            &CstInputValue::Object(vec![
                ("type".into(), "command".into()),
                ("command".into(), command.as_str().into()),
            ]),
        )?,
    }
    Ok(command)
}

/// Takes our status line out: the user's chained command comes back, or the key goes.
/// Returns what was done, `None` when the status line was not ours.
pub(super) fn remove_statusline(doc: &mut Doc) -> Result<Option<String>, String> {
    let Ok(Some(root)) = doc.root_object() else {
        return Ok(None);
    };
    let Some(status) = prop(&root, "statusLine") else {
        return Ok(None);
    };
    let Some((node, cmd)) = status
        .object_value()
        .and_then(|o| prop(&o, "command"))
        .and_then(|c| c.value())
        .and_then(|v| string_value(&v).map(|s| (v, s)))
    else {
        return Ok(None);
    };
    if !is_our_statusline(&cmd) {
        return Ok(None);
    }
    Ok(Some(match chained_of(&cmd) {
        Some(theirs) => {
            doc.replace(&node, &theirs.as_str().into())?;
            format!("Restored your own status line: {theirs}")
        }
        None => {
            doc.remove(&status.into())?;
            "Removed hookjournal's status line.".into()
        }
    }))
}

/// Double-quotes a string for POSIX sh (see `shell_quote`).
pub(super) fn quote_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------------------------
// The edits: functions over the settings document (see `doc`).

/// Makes `doc` register `command` for every event of the host, exactly once, after the user's own
/// hooks; every other key, hook, comment and blank of the file stays as it was. A new file of a
/// host whose format has a version (Copilot CLI, Cursor) starts with `"version": 1`.
pub(super) fn install_handler(
    doc: &mut Doc,
    facts: &HostFacts,
    command: &str,
) -> Result<(), String> {
    let spelled;
    let facts = if facts.install.format == HookFileFormat::OnlyHooks {
        let snake = only_hooks(doc, facts)?;
        spelled = HostFacts {
            host: facts.host.clone(),
            name: facts.name,
            product: facts.product,
            install: facts.install,
            events: (facts.events.iter())
                .map(|e| Event {
                    name: if snake { snake_case(e.name) } else { e.name },
                    reg: e.reg,
                })
                .collect(),
        };
        &spelled
    } else {
        facts
    };
    if let Some(hooks) = hooks_object(doc)? {
        for event in &facts.events {
            if prop(&hooks, event.name)
                .is_some_and(|p| !matches!(p.value(), Some(v) if v.as_array().is_some()))
            {
                return Err(format!("\"hooks\".\"{}\" is not an array", event.name));
            }
        }
    }
    remove_handlers(doc)?;
    if hooks_object(doc)?.is_none() {
        if facts.install.format.versioned() && doc.root_object()?.is_none() {
            doc.append_to_root("version", &1.into())?;
        }
        if facts.install.format == HookFileFormat::KiroAgent && doc.root_object()?.is_none() {
            for (key, value) in kiro_agent() {
                doc.append_to_root(key, &value)?;
            }
        }
        let all = facts
            .events
            .iter()
            .map(|e| {
                let groups = CstInputValue::Array(vec![handler_entry(facts, e, command)]);
                (e.name.to_string(), groups)
            })
            .collect();
        return doc.append_to_root("hooks", &CstInputValue::Object(all));
    }
    for event in &facts.events {
        // Looked up again for each event: an edit re-parses the file.
        let hooks = hooks_object(doc)?.ok_or("\"hooks\" went missing")?;
        let entry = handler_entry(facts, event, command);
        match prop(&hooks, event.name).and_then(|p| p.array_value()) {
            Some(entries) => doc.append_element(&entries, &entry)?,
            None => doc.append_prop(&hooks, event.name, &CstInputValue::Array(vec![entry]))?,
        }
    }
    Ok(())
}

/// An event name as OpenHands also takes it, in snake_case (`PreToolUse` → `pre_tool_use`).
fn snake_case(name: &'static str) -> &'static str {
    match name {
        "PreToolUse" => "pre_tool_use",
        "PostToolUse" => "post_tool_use",
        "UserPromptSubmit" => "user_prompt_submit",
        "SessionStart" => "session_start",
        "SessionEnd" => "session_end",
        "Stop" => "stop",
        other => other,
    }
}

/// Checks a file of a host that rejects it whole for one event key it does not take
/// (OpenHands: then it runs no hook at all), and says in which spelling install writes its
/// events there: snake_case where every event the file lists is (`pre_tool_use`), else
/// PascalCase. Refused when install cannot keep the file valid: a file without the `hooks`
/// wrapper (OpenHands reads its events at the top level then, and ignores them beside the
/// `hooks` install would add), a name in `hooks` that is none of the host's events, or the two
/// spellings mixed (ours beside one would be an event twice). Keys beside `hooks` it ignores.
fn only_hooks(doc: &Doc, facts: &HostFacts) -> Result<bool, String> {
    let Some(root) = doc.root_object()? else {
        return Ok(false);
    };
    let Some(hooks) = hooks_object(doc)? else {
        if let Some(name) = root.properties().first().and_then(|p| p.decoded_name()) {
            return Err(format!(
                "its events are at the top level (\"{name}\"), without the \"hooks\" wrapper: \
                 beside the \"hooks\" install adds, {} would ignore them; move them into \
                 \"hooks\": {{…}} first",
                facts.product
            ));
        }
        return Ok(false);
    };
    let names: Vec<String> = (hooks.properties().iter())
        .map(|p| p.decoded_name().unwrap_or_default())
        .collect();
    let pascal = |n: &String| facts.events.iter().any(|e| e.name == n);
    let snake = |n: &String| facts.events.iter().any(|e| snake_case(e.name) == n);
    let all_snake = !names.is_empty() && names.iter().all(snake);
    if let Some(name) = names.iter().find(|n| !pascal(n) && !all_snake) {
        return Err(format!(
            "{} runs no hook if \"hooks\" holds an event it does not know, or one spelled \
             twice: install writes {} (or all in snake_case) and cannot keep \"{name}\" beside \
             them",
            facts.product,
            facts
                .events
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(all_snake)
}

/// The `hooks` object; `None` when the file has none.
pub(super) fn hooks_object(doc: &Doc) -> Result<Option<CstObject>, String> {
    let Some(root) = doc.root_object()? else {
        return Ok(None);
    };
    match prop(&root, "hooks") {
        None => Ok(None),
        Some(p) => p
            .object_value()
            .map(Some)
            .ok_or_else(|| "\"hooks\" is not an object".into()),
    }
}

/// One event's entry in the host's format: Claude Code's group (`{matcher?, hooks: [{type,
/// command, timeout}]}`), or Copilot CLI's and Cursor's flat handler. Where the payload names no
/// event (Copilot's camelCase hooks), the command names it: `… hook --host copilot --event NAME`.
pub(super) fn handler_entry(facts: &HostFacts, event: &Event, command: &str) -> CstInputValue {
    let command = if event.reg.event_arg {
        format!("{command} --event {}", event.name)
    } else {
        command.to_string()
    };
    let timeout: CstInputValue = (event.reg.timeout_s * facts.install.timeout_scale).into();
    let handler = match facts.install.format {
        HookFileFormat::CopilotFlat => {
            return CstInputValue::Object(vec![
                ("type".into(), "command".into()),
                ("bash".into(), command.as_str().into()),
                ("timeoutSec".into(), timeout),
            ])
        }
        HookFileFormat::CursorFlat => {
            return CstInputValue::Object(vec![
                ("command".into(), command.as_str().into()),
                ("timeout".into(), timeout),
            ])
        }
        // No matcher: Crush runs a handler without one for every tool.
        HookFileFormat::CrushFlat => {
            return CstInputValue::Object(vec![
                ("name".into(), BINARY_NAME.into()),
                ("command".into(), command.as_str().into()),
                ("timeout".into(), timeout),
            ])
        }
        // Cascade's entries take a command and whether its output is shown, nothing else.
        HookFileFormat::WindsurfFlat => {
            return CstInputValue::Object(vec![
                ("command".into(), command.as_str().into()),
                ("show_output".into(), false.into()),
            ])
        }
        // Kiro CLI's entries: no matcher (every tool), no `cache_ttl_seconds` (0, its default:
        // a cached hook does not run), the timeout in milliseconds.
        HookFileFormat::KiroAgent => {
            return CstInputValue::Object(vec![
                ("command".into(), command.as_str().into()),
                ("timeout_ms".into(), timeout),
            ])
        }
        // Cline's hook files are scripts (`install::cline`), never an entry in a settings file.
        HookFileFormat::Grouped
        | HookFileFormat::GroupedRegex
        | HookFileFormat::OnlyHooks
        | HookFileFormat::ScriptPerEvent
        | HookFileFormat::ShimModule
        | HookFileFormat::PluginDir
        | HookFileFormat::KimiToml
        | HookFileFormat::VibeToml => {
            let mut handler = Vec::new();
            if facts.install.named_handlers {
                handler.push(("name".to_string(), BINARY_NAME.into()));
            }
            handler.push(("type".into(), "command".into()));
            handler.push(("command".into(), command.as_str().into()));
            handler.push(("timeout".into(), timeout));
            handler
        }
    };
    let mut group = Vec::new();
    if event.reg.tool_matcher {
        // Auggie's matcher is a regex: `"*"` is an invalid one there and matches nothing.
        let every = match facts.install.format {
            HookFileFormat::GroupedRegex => ".*",
            _ => "*",
        };
        group.push(("matcher".to_string(), every.into()));
    }
    group.push((
        "hooks".into(),
        CstInputValue::Array(vec![CstInputValue::Object(handler)]),
    ));
    CstInputValue::Object(group)
}

/// Removes every hookjournal handler; a group, an event or the `hooks` object left empty by that is
/// removed too. Returns how many handlers went. Entries of shapes we do not know are left alone.
pub(super) fn remove_handlers(doc: &mut Doc) -> Result<usize, String> {
    let mut removed = 0;
    // One handler at a time, the tree looked up again after each edit.
    while let Some(hooks) = hooks_object(doc)? {
        let Some(target) = next_removal(&hooks) else {
            break;
        };
        doc.remove(&target)?;
        removed += 1;
    }
    Ok(removed)
}

/// The first hookjournal handler under `hooks`, widened to what its removal empties: its group
/// when it is the group's only handler, then the event, then `hooks` itself.
pub(super) fn next_removal(hooks: &CstObject) -> Option<CstNode> {
    let events = hooks.properties();
    for event in &events {
        let Some(groups) = event.array_value() else {
            continue;
        };
        let group_nodes = groups.elements();
        for group in &group_nodes {
            // Copilot CLI's and Cursor's files list handlers directly under the event.
            if is_our_handler(group) {
                return Some(if group_nodes.len() > 1 {
                    group.clone()
                } else if events.len() > 1 {
                    event.clone().into()
                } else {
                    hooks.parent()?.into()
                });
            }
            let Some(handlers) = group
                .as_object()
                .and_then(|g| prop(&g, "hooks"))
                .and_then(|h| h.array_value())
            else {
                continue;
            };
            let handler_nodes = handlers.elements();
            let Some(ours) = handler_nodes.iter().find(|h| is_our_handler(h)) else {
                continue;
            };
            return Some(if handler_nodes.len() > 1 {
                ours.clone()
            } else if group_nodes.len() > 1 {
                group.clone()
            } else if events.len() > 1 {
                event.clone().into()
            } else {
                hooks.parent()?.into()
            });
        }
    }
    None
}

/// A handler running `hookjournal hook`: its `command` (Copilot CLI's: `bash`).
pub(super) fn is_our_handler(handler: &CstNode) -> bool {
    let Some(h) = handler.as_object() else {
        return false;
    };
    ["command", "bash"].iter().any(|key| {
        prop(&h, key)
            .and_then(|c| c.value())
            .and_then(|v| string_value(&v))
            .is_some_and(|cmd| is_hookjournal_command(&cmd))
    })
}

/// Whether all the file holds is `"version": 1` (what install starts a Copilot CLI or Cursor
/// file with): uninstall then removes the file rather than leave that.
pub(super) fn only_version(doc: &Doc) -> bool {
    doc.root_object().ok().flatten().is_some_and(|root| {
        let props = root.properties();
        props.len() == 1 && prop(&root, "version").is_some()
    })
}

/// What a new Kiro CLI agent file of hookjournal's starts with, before its `hooks`: Kiro requires
/// `name` (and rejects a key it does not know); an agent listing no `tools` would have none.
fn kiro_agent() -> Vec<(&'static str, CstInputValue)> {
    vec![
        ("name", BINARY_NAME.into()),
        (
            "description",
            "Kiro's tools, with every hook invocation journaled by hookjournal".into(),
        ),
        ("tools", CstInputValue::Array(vec!["*".into()])),
    ]
}

/// Whether a Kiro CLI agent file holds no more than install started it with (`kiro_agent`):
/// uninstall then removes the file rather than leave an agent nobody asked for.
pub(super) fn only_kiro_agent(doc: &Doc) -> bool {
    doc.root_object().ok().flatten().is_some_and(|root| {
        let ours: Vec<&str> = kiro_agent().iter().map(|(k, _)| *k).collect();
        let named_ours = prop(&root, "name")
            .and_then(|n| n.value())
            .and_then(|v| string_value(&v))
            .is_some_and(|n| n == BINARY_NAME);
        named_ours
            && (root.properties().iter())
                .all(|p| p.decoded_name().is_some_and(|n| ours.contains(&n.as_str())))
    })
}

/// Things the user should know after installing that the edit itself cannot fix.
pub(super) fn warnings(facts: &HostFacts, scope: Scope, doc: &Doc) -> Vec<String> {
    let mut out = Vec::new();
    if facts.host == Host::Claude && scope == Scope::Project {
        out.push(
            ".claude/settings.json is usually committed and the command holds this machine's path; \
             `--scope local` keeps it in your own .claude/settings.local.json."
                .to_string(),
        );
    }
    if facts.host == Host::Gemini {
        let disabled = doc
            .root_object()
            .ok()
            .flatten()
            .and_then(|r| prop(&r, "hooksConfig"))
            .and_then(|c| c.object_value())
            .and_then(|c| prop(&c, "enabled"))
            .and_then(|e| e.value())
            .is_some_and(|e| matches!(e, CstNode::Leaf(CstLeafNode::BooleanLit(b)) if !b.value()));
        if disabled {
            out.push(
                "this file sets hooksConfig.enabled to false: Gemini CLI will not run any hook."
                    .into(),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::facts;
    use super::*;

    const CMD: &str = "\"/opt/bin/hookjournal\" hook --host claude";

    fn parse(s: &str) -> Doc {
        Doc::parse(s).unwrap()
    }
    /// The document as serde_json reads it (for inputs without comments).
    fn value(d: &Doc) -> serde_json::Value {
        serde_json::from_str(d.text()).unwrap()
    }

    const USER_SETTINGS: &str = r#"{
      "model": "opus",
      "permissions": {"allow": ["Bash(git:*)"], "deny": []},
      "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
      },
      "env": {"FOO": "1"}
    }"#;

    /// The same settings as a person writes JSONC: comments, trailing commas, tabs.
    const USER_JSONC: &str = "// project settings\n{\n\t\"model\": \"opus\", // fast enough\n\t\"hooks\": {\n\t\t/* lint before bash */\n\t\t\"PreToolUse\": [\n\t\t\t{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]},\n\t\t],\n\n\t\t\"Stop\": [{\"hooks\": []}],\n\t},\n}\n";

    fn user_settings() -> Doc {
        parse(USER_SETTINGS)
    }

    #[test]
    fn every_host_registers_from_the_table_and_no_forbidden_event() {
        for host in [Host::Claude, Host::Codex, Host::Gemini] {
            let f = facts(&host);
            assert_eq!(f.name, host.as_str());
            for e in &f.events {
                assert!(
                    !matches!(e.name, "WorktreeCreate" | "MessageDisplay"),
                    "{} {}",
                    f.name,
                    e.name
                );
            }
        }
        assert_eq!(facts(&Host::Claude).events.len(), 31);
        assert_eq!(facts(&Host::Codex).events.len(), 12);
        assert_eq!(facts(&Host::Gemini).events.len(), 8);
    }

    #[test]
    fn install_adds_one_group_per_event_after_the_users_own() {
        let mut s = user_settings();
        install_handler(&mut s, &facts(&Host::Claude), CMD).unwrap();
        let v = value(&s);
        assert_eq!(
            v["hooks"].as_object().unwrap().len(),
            facts(&Host::Claude).events.len()
        );
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(pre[1]["matcher"], "*");
        assert_eq!(pre[1]["hooks"][0]["command"], CMD);
        assert_eq!(v["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 2);
        assert!(v["hooks"]["SessionEnd"][0].get("matcher").is_none());
        assert_eq!(v["permissions"]["allow"][0], "Bash(git:*)");
    }

    #[test]
    fn install_keeps_key_order() {
        let mut s = user_settings();
        install_handler(&mut s, &facts(&Host::Claude), CMD).unwrap();
        let text = s.text();
        let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("model") < pos("permissions"));
        assert!(pos("permissions") < pos("hooks"));
        assert!(pos("hooks") < pos("env"));
        assert!(pos("PreToolUse") < pos("Stop") && pos("Stop") < pos("SessionStart"));
    }

    #[test]
    fn install_is_idempotent_and_replaces_a_moved_binary() {
        let mut once = user_settings();
        install_handler(&mut once, &facts(&Host::Claude), CMD).unwrap();
        let mut twice = parse(once.text());
        install_handler(&mut twice, &facts(&Host::Claude), CMD).unwrap();
        assert_eq!(once.text(), twice.text());

        let moved = "\"/home/me/.cargo/bin/hookjournal\" hook --host claude";
        install_handler(&mut twice, &facts(&Host::Claude), moved).unwrap();
        let text = twice.text();
        assert!(!text.contains("/opt/bin/hookjournal"));
        assert_eq!(
            text.matches("/home/me/.cargo/bin/hookjournal").count(),
            facts(&Host::Claude).events.len()
        );
    }

    #[test]
    fn uninstall_gives_back_the_original_bytes() {
        for original in [
            USER_SETTINGS,
            USER_JSONC,
            "{}",
            "{\"model\": \"opus\"}\n",
            "",
        ] {
            for f in [Host::Claude, Host::Codex, Host::Gemini].map(|h| facts(&h)) {
                let f = &f;
                let mut s = parse(original);
                install_handler(&mut s, f, CMD).unwrap();
                assert_ne!(s.text(), original);
                let mut s = parse(s.text());
                assert_eq!(remove_handlers(&mut s).unwrap(), f.events.len());
                let expected = if original.is_empty() {
                    "{}\n"
                } else {
                    original
                };
                assert_eq!(s.text(), expected, "{} on {original:?}", f.name);
                assert_eq!(remove_handlers(&mut s).unwrap(), 0);
            }
        }
    }

    #[test]
    fn install_keeps_comments_and_follows_the_files_indentation() {
        let mut s = parse(USER_JSONC);
        install_handler(&mut s, &facts(&Host::Codex), CMD).unwrap();
        let text = s.text();
        // Everything the user wrote is still there, in order, around our entries.
        let mut rest = text;
        for part in [
            "// project settings\n{\n\t\"model\": \"opus\", // fast enough\n\t\"hooks\": {\n",
            "\t\t/* lint before bash */\n\t\t\"PreToolUse\": [\n",
            "\t\t],\n\n\t\t\"Stop\": [{\"hooks\": []}, {\"hooks\": [{\"type\": \"command\", ",
            "\t},\n}\n",
        ] {
            let at = rest
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} is gone from\n{text}"));
            rest = &rest[at + part.len()..];
        }
        // Our group in the user's PreToolUse, a level of tabs deeper, with trailing commas as
        // the file writes them.
        assert!(
            text.contains(&format!(
                "\t\t\t{{\"matcher\": \"Bash\", \"hooks\": [{{\"type\": \"command\", \"command\": \"./lint.sh\"}}]}},\n\t\t\t{{\n\t\t\t\t\"matcher\": \"*\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": {},\n\t\t\t\t\t\t\"timeout\": 10,\n\t\t\t\t\t}},\n\t\t\t\t],\n\t\t\t}},\n\t\t],\n",
                serde_json::to_string(CMD).unwrap()
            )),
            "{text}"
        );
        let mut s = parse(text);
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), USER_JSONC);
    }

    #[test]
    fn uninstall_drops_an_event_array_it_emptied() {
        // As before the CST: an event array left empty by removing ours goes, even one the user
        // had written empty (nothing in the file tells the two apart).
        let original =
            "{\n  \"hooks\": {\n    \"PreToolUse\": [],\n    \"Stop\": [\"x\"]\n  }\n}\n";
        let mut s = parse(original);
        install_handler(&mut s, &facts(&Host::Claude), CMD).unwrap();
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), original.replace("\n    \"PreToolUse\": [],", ""));
    }

    #[test]
    fn uninstall_removes_a_hooks_object_it_emptied() {
        let original = "{\n  \"model\": \"opus\"\n}\n";
        let mut s = parse(original);
        install_handler(&mut s, &facts(&Host::Codex), CMD).unwrap();
        remove_handlers(&mut s).unwrap();
        assert_eq!(s.text(), original);
    }

    #[test]
    fn uninstall_keeps_a_users_hook_sharing_our_group() {
        let mut s = parse(&format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": {}}}, {{"type": "command", "command": "say hi"}}]}}]}}}}"#,
            serde_json::to_string(CMD).unwrap()
        ));
        assert_eq!(remove_handlers(&mut s).unwrap(), 1);
        assert_eq!(
            s.text(),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}"#
        );
    }

    #[test]
    fn gemini_gets_milliseconds_and_a_name_and_keeps_its_config_keys() {
        let mut s = parse(r#"{"hooks": {"disabled": ["x"]}, "hooksConfig": {"enabled": true}}"#);
        install_handler(&mut s, &facts(&Host::Gemini), CMD).unwrap();
        let v = value(&s);
        assert_eq!(v["hooks"]["disabled"][0], "x");
        let h = &v["hooks"]["SessionEnd"][0]["hooks"][0];
        assert_eq!(h["timeout"], 2000);
        assert_eq!(h["name"], "hookjournal");
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 10000);
        assert_eq!(v["hooks"]["BeforeTool"][0]["matcher"], "*");
        assert!(v["hooks"].get("BeforeModel").is_none());
        assert!(warnings(&facts(&Host::Gemini), Scope::Project, &s).is_empty());
        let off = parse("{\"hooksConfig\": {\"enabled\": false}}");
        assert_eq!(
            warnings(&facts(&Host::Gemini), Scope::Project, &off).len(),
            1
        );
    }

    #[test]
    fn refuses_shapes_it_cannot_edit() {
        for bad in [
            r#"[]"#,
            r#"{"hooks": []}"#,
            r#"{"hooks": null}"#,
            r#"{"hooks": {"Stop": {}}}"#,
        ] {
            let mut s = parse(bad);
            assert!(
                install_handler(&mut s, &facts(&Host::Claude), CMD).is_err(),
                "{bad}"
            );
            assert_eq!(s.text(), bad);
        }
        assert!(remove_handlers(&mut parse(r#"{"hooks": 3}"#)).is_err());
    }

    #[test]
    fn statusline_round_trips_through_a_users_own() {
        let original = "{\n  // mine\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo \\\"hi\\\" $HOME\", \"padding\": 1},\n}\n";
        let mut s = parse(original);
        let base = "\"/opt/bin/hookjournal\" statusline";
        let cmd = install_statusline(&mut s, base, false).unwrap();
        assert_eq!(cmd, format!("{base} --chain \"echo \\\"hi\\\" \\$HOME\""));
        assert_eq!(
            install_statusline(&mut parse(s.text()), base, false).unwrap(),
            cmd
        );
        let restored = remove_statusline(&mut s).unwrap().unwrap();
        assert!(restored.starts_with("Restored your own"), "{restored}");
        assert_eq!(s.text(), original);

        let mut s = parse(USER_JSONC);
        install_statusline(&mut s, base, false).unwrap();
        assert_eq!(
            remove_statusline(&mut s).unwrap().as_deref(),
            Some("Removed hookjournal's status line.")
        );
        assert_eq!(s.text(), USER_JSONC);
    }

    #[test]
    fn recognises_our_commands_only() {
        for ours in [
            CMD,
            "hookjournal hook",
            "/usr/local/bin/hookjournal hook --host codex",
            "\"/path with space/hookjournal\" hook --host gemini --journal \"/j\"",
            "'/opt/hookjournal' hook",
            "\"/we\\\"ird/hookjournal\" hook",
        ] {
            assert!(is_hookjournal_command(ours), "{ours}");
        }
        for theirs in [
            "./lint.sh",
            "hookjournal status",
            "hookjournal hooks",
            "/bin/not-hookjournal hook",
            "echo hookjournal hook",
            "\"/unterminated/hookjournal hook",
            "",
        ] {
            assert!(!is_hookjournal_command(theirs), "{theirs}");
        }
    }
}
