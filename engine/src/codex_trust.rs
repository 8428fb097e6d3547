//! Trusting the hooks `install` wrote for Codex CLI, as its `/hooks` panel does: `codex exec` skips
//! a project or user hook silently unless the user's `config.toml` holds
//! `[hooks.state."<abs hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`
//! matching the hook as it is now.
//!
//! The hash (Codex 0.169.0, `hooks/src/engine/discovery.rs` `command_hook_hash` and
//! `config/src/fingerprint.rs` `version_for_toml`) is SHA-256 over the compact JSON, keys sorted,
//! of the hook's normalized identity: `{"event_name": <snake_case event>, "hooks": [{"async":
//! false, "command": …, "timeout": <seconds>, "type": "command"}], "matcher": …}`, the matcher
//! only where the event takes one and only when set, unset fields left out.

use sha2::{Digest, Sha256};

/// Codex's key label for an event name as hooks.json spells it; `None` for a name it does not know.
pub fn event_label(name: &str) -> Option<&'static str> {
    Some(match name {
        "SessionStart" => "session_start",
        "SessionEnd" => "session_end",
        "UserPromptSubmit" => "user_prompt_submit",
        "PreToolUse" => "pre_tool_use",
        "PermissionRequest" => "permission_request",
        "PostToolUse" => "post_tool_use",
        "PreCompact" => "pre_compact",
        "PostCompact" => "post_compact",
        "SubagentStart" => "subagent_start",
        "SubagentStop" => "subagent_stop",
        "Stop" => "stop",
        "Interrupt" => "interrupt",
        _ => return None,
    })
}

/// Events whose matcher Codex ignores (it hashes them without one).
fn takes_matcher(label: &str) -> bool {
    !matches!(label, "user_prompt_submit" | "stop" | "interrupt")
}

/// `sha256:<hex>` of a command hook's normalized identity. Written out by hand, so the key order
/// cannot depend on how serde_json is built.
pub fn trust_hash(label: &str, matcher: Option<&str>, command: &str, timeout_s: u64) -> String {
    let s = |v: &str| serde_json::Value::from(v).to_string();
    let mut identity = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{},"type":"command"}}]"#,
        s(label),
        s(command),
        timeout_s.max(1)
    );
    if let Some(m) = matcher.filter(|_| takes_matcher(label)) {
        identity.push_str(&format!(r#","matcher":{}"#, s(m)));
    }
    identity.push('}');
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// One hook to trust: its state key and its hash.
#[derive(Debug, PartialEq, Eq)]
pub struct Trusted {
    /// `<hooks.json path>:<event>:<group>:<handler>`.
    pub key: String,
    /// `sha256:…`.
    pub hash: String,
}

/// The handlers running `command` in a hooks.json (`text`, at `path`), each with its key and hash.
/// `None`: the file is not plain JSON (Codex reads only that).
pub fn ours(path: &str, text: &str, command: &str) -> Option<Vec<Trusted>> {
    handlers(path, text, |c| c == command)
}

/// The handlers whose command `is_ours` accepts, each with its key and hash (computed from its
/// own command); `None` as for [`ours`].
pub fn handlers(path: &str, text: &str, is_ours: impl Fn(&str) -> bool) -> Option<Vec<Trusted>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut out = Vec::new();
    let Some(events) = v.get("hooks").and_then(|h| h.as_object()) else {
        return Some(out);
    };
    for (name, groups) in events {
        let Some(label) = event_label(name) else {
            continue;
        };
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(|m| m.as_str());
            let handlers = group.get("hooks").and_then(|h| h.as_array());
            for (i, h) in handlers.into_iter().flatten().enumerate() {
                let Some(command) = h.get("command").and_then(|c| c.as_str()) else {
                    continue;
                };
                if !is_ours(command) || h.get("type").and_then(|t| t.as_str()) != Some("command") {
                    continue;
                }
                let timeout = h.get("timeout").and_then(|t| t.as_u64()).unwrap_or(600);
                out.push(Trusted {
                    key: format!("{path}:{label}:{g}:{i}"),
                    hash: trust_hash(label, matcher, command, timeout),
                });
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Some(out)
}

/// `text` (a config.toml) with each hook's `trusted_hash` set: an existing
/// `[hooks.state."<key>"]` table gets its `trusted_hash` line replaced (or added), a missing one
/// is appended. Everything else is kept byte for byte. Errors when the result would not parse.
pub fn apply(text: &str, trusted: &[Trusted]) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for t in trusted {
        let header = format!("[hooks.state.{}]", toml_key(&t.key));
        let value = format!("trusted_hash = {}", toml_key(&t.hash));
        match lines.iter().position(|l| l.trim() == header) {
            Some(at) => {
                let end = lines[at + 1..]
                    .iter()
                    .position(|l| l.trim_start().starts_with('['))
                    .map(|n| at + 1 + n)
                    .unwrap_or(lines.len());
                match (at + 1..end).find(|&n| {
                    lines[n]
                        .split_once('=')
                        .is_some_and(|(k, _)| k.trim() == "trusted_hash")
                }) {
                    Some(n) => lines[n] = value,
                    None => lines.insert(at + 1, value),
                }
            }
            None => {
                if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                    lines.push(String::new());
                }
                lines.push(header);
                lines.push(value);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    match toml::from_str::<toml::Value>(&out) {
        Ok(_) => Ok(out),
        Err(e) => Err(format!("the trusted hooks would not parse: {e}")),
    }
}

/// `text` (a config.toml) without the `[hooks.state."<key>"]` tables of `trusted` whose
/// `trusted_hash` is the one given (a table trusting something else at that key is kept), and
/// how many went. A removed table takes its key lines and one blank line beside it (the one
/// `apply` added); every other line is kept byte for byte. Errors when the result would not parse.
pub fn remove(text: &str, trusted: &[Trusted]) -> Result<(String, usize), String> {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut removed = 0;
    for t in trusted {
        let header = format!("[hooks.state.{}]", toml_key(&t.key));
        let Some(at) = lines.iter().position(|l| l.trim() == header) else {
            continue;
        };
        // The table's own lines: keys and values up to a blank line, a comment or a header.
        let end = lines[at + 1..]
            .iter()
            .position(|l| {
                let l = l.trim();
                l.is_empty() || l.starts_with('#') || l.starts_with('[')
            })
            .map(|n| at + 1 + n)
            .unwrap_or(lines.len());
        let hash = lines[at + 1..end].iter().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "trusted_hash").then(|| v.trim())
        });
        if hash != Some(toml_key(&t.hash).as_str()) {
            continue;
        }
        let blank = |l: &&str| l.trim().is_empty();
        let (from, to) = if lines.get(end).is_some_and(blank) {
            (at, end + 1)
        } else if at > 0 && blank(&lines[at - 1]) {
            (at - 1, end)
        } else {
            (at, end)
        };
        lines.drain(from..to);
        removed += 1;
    }
    let out: String = lines.concat();
    match toml::from_str::<toml::Value>(&out) {
        Ok(_) => Ok((out, removed)),
        Err(e) => Err(format!("without the trusted hooks it would not parse: {e}")),
    }
}

/// A TOML basic string.
fn toml_key(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash real Codex 0.169.0 accepted: with it (and the project trusted) `codex exec` ran the
    /// Stop hook install wrote; without it, none.
    #[test]
    fn hash_is_the_one_codex_accepted() {
        let command = r#""/work/wt-h/target/debug/hookjournal" hook --host codex"#;
        assert_eq!(
            trust_hash("stop", None, command, 10),
            "sha256:253d6aa5c2f635a1192563afe42e582448fc7e2a63f249aa3178c2e1a4296069"
        );
        // Stop takes no matcher: Codex hashes it without one.
        assert_eq!(
            trust_hash("stop", Some("*"), command, 10),
            trust_hash("stop", None, command, 10)
        );
        assert_ne!(
            trust_hash("pre_tool_use", Some("*"), command, 10),
            trust_hash("pre_tool_use", None, command, 10)
        );
    }

    #[test]
    fn apply_replaces_adds_and_keeps_the_rest() {
        let before = "model = \"gpt-5.5\" # mine\n\n[hooks.state.\"/p/.codex/hooks.json:stop:0:0\"]\nenabled = true\ntrusted_hash = \"sha256:old\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n";
        let t = [
            Trusted {
                key: "/p/.codex/hooks.json:stop:0:0".into(),
                hash: "sha256:new".into(),
            },
            Trusted {
                key: "/p/.codex/hooks.json:pre_tool_use:1:0".into(),
                hash: "sha256:x".into(),
            },
        ];
        let after = apply(before, &t).unwrap();
        assert_eq!(
            after,
            "model = \"gpt-5.5\" # mine\n\n[hooks.state.\"/p/.codex/hooks.json:stop:0:0\"]\nenabled = true\ntrusted_hash = \"sha256:new\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/p/.codex/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:x\"\n"
        );
        assert_eq!(apply(&after, &t).unwrap(), after, "idempotent");
    }

    #[test]
    fn remove_gives_back_what_apply_changed_and_keeps_what_is_not_ours() {
        let before = "# my settings\nmodel = \"gpt-5.5\" # mine\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/p/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:users\"\n# a note\n";
        let t = [
            Trusted {
                key: "/p/.codex/hooks.json:stop:1:0".into(),
                hash: "sha256:a".into(),
            },
            Trusted {
                key: "/p/.codex/hooks.json:pre_tool_use:0:0".into(),
                hash: "sha256:b".into(),
            },
        ];
        let installed = apply(before, &t).unwrap();
        assert_eq!(remove(&installed, &t).unwrap(), (before.to_string(), 2));
        // The user's trust at a key of ours, with another hash: kept.
        let mine = [Trusted {
            key: "/p/.codex/hooks.json:stop:0:0".into(),
            hash: "sha256:ours".into(),
        }];
        assert_eq!(remove(before, &mine).unwrap(), (before.to_string(), 0));
        // In the middle of the file, between the user's tables.
        let middle = "a = 1\n\n[hooks.state.\"/p/.codex/hooks.json:stop:1:0\"]\ntrusted_hash = \"sha256:a\"\n\n[x]\nb = 2\n";
        assert_eq!(
            remove(middle, &t).unwrap(),
            ("a = 1\n\n[x]\nb = 2\n".to_string(), 1)
        );
    }

    #[test]
    fn finds_our_handlers_with_their_positions() {
        let text = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]},{"hooks":[{"type":"command","command":"hj","timeout":10}]}],"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"hj","timeout":10}]}]}}"#;
        let got = ours("/p/.codex/hooks.json", text, "hj").unwrap();
        let keys: Vec<&str> = got.iter().map(|t| t.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "/p/.codex/hooks.json:pre_tool_use:0:0",
                "/p/.codex/hooks.json:stop:1:0"
            ]
        );
        assert_eq!(got[1].hash, trust_hash("stop", None, "hj", 10));
    }
}
