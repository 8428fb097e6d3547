//! What a host's settings file registers of hookjournal, read back: which events run a
//! `hookjournal hook` command, with which timeout, and which program. `install` recognises its own
//! entries with [`is_hookjournal_command`]; `doctor` compares what it reads with the host table;
//! the Claude Code plugin check looks at `enabledPlugins`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The binary's name, by which its entries are recognised wherever it lives.
pub const BINARY_NAME: &str = "hookjournal";

/// The plugin's name in Claude Code (`hookjournal@<marketplace>` in `enabledPlugins`).
pub const PLUGIN_NAME: &str = "hookjournal";

/// True for a command that runs a binary named `hookjournal` with the `hook` subcommand, wherever
/// the binary lives: re-installing after moving it replaces the old entries instead of adding new
/// ones.
pub fn is_hookjournal_command(cmd: &str) -> bool {
    hook_program(cmd).is_some()
}

/// The program of a `hookjournal hook …` command (unquoted), `None` for any other command.
pub fn hook_program(cmd: &str) -> Option<String> {
    let (program, rest) = split_program(cmd.trim_start())?;
    let named_ours = Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == BINARY_NAME || n == "hookjournal.exe");
    let rest = rest.trim_start();
    let hook = rest
        .strip_prefix("hook")
        .is_some_and(|after| after.is_empty() || after.starts_with(char::is_whitespace));
    (named_ours && hook).then_some(program)
}

/// Splits a shell command into its first word (unquoted) and the rest.
pub fn split_program(cmd: &str) -> Option<(String, &str)> {
    let mut chars = cmd.char_indices();
    let (_, first) = chars.next()?;
    let mut word = String::new();
    match first {
        '"' => {
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => word.push(chars.next()?.1),
                    '"' => return Some((word, &cmd[i + 1..])),
                    _ => word.push(c),
                }
            }
            None
        }
        // sh's single quotes, with `'\''` for a quote inside (as `install` writes a path).
        '\'' => {
            let mut at = 0;
            loop {
                let end = at + 1 + cmd[at + 1..].find('\'')?;
                word.push_str(&cmd[at + 1..end]);
                match cmd[end + 1..].strip_prefix("\\'") {
                    Some(rest) if rest.starts_with('\'') => {
                        word.push('\'');
                        at = cmd.len() - rest.len();
                    }
                    _ => return Some((word, &cmd[end + 1..])),
                }
            }
        }
        _ => {
            let end = cmd.find(char::is_whitespace).unwrap_or(cmd.len());
            Some((cmd[..end].to_string(), &cmd[end..]))
        }
    }
}

/// The second line of each Cline hook script `install` writes: how install, uninstall and doctor
/// know a hook file is hookjournal's (Cline has no settings file: a file per event is the
/// registration).
pub const CLINE_HOOK_MARKER: &str = "# hookjournal's Cline hook";

/// Whether a Cline hook file's text is a script `install` wrote.
pub fn is_cline_hook(text: &str) -> bool {
    text.lines()
        .nth(1)
        .is_some_and(|l| l.starts_with(CLINE_HOOK_MARKER))
}

/// The program a Cline hook script runs: its `exec hookjournal hook …` line's.
pub fn cline_hook_program(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("exec "))
        .and_then(hook_program)
}

/// One hookjournal handler found in a settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handler {
    /// The command as written.
    pub command: String,
    /// Its program (unquoted).
    pub program: String,
    /// The `timeout` as written (the host's unit).
    pub timeout: Option<u64>,
    /// The group's `matcher`.
    pub matcher: Option<String>,
}

/// A settings file as far as hookjournal is concerned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// hookjournal's handlers by event name.
    pub handlers: BTreeMap<String, Vec<Handler>>,
    /// The whole document (JSON with comments read as JSON).
    pub value: serde_json::Value,
}

impl Settings {
    /// Reads `path` (a file of the user's own: links followed): see `read_on`.
    pub fn read(path: &Path) -> Result<Option<Settings>, String> {
        Settings::read_on(None, path)
    }

    /// Reads `path` on its ground: `Ok(None)` when it does not exist, `Err` (one line) when it
    /// does not parse or is refused. Bounded and never blocking (`door::read_on_ground`): the
    /// hook reads a project's `.claude/settings.json` on every event, and a repository can make
    /// it a FIFO, a link to `/dev/zero` or a link to a file elsewhere — beneath `project` no link
    /// is followed at any component; the user's own settings (often a dotfile manager's link)
    /// are read as linked.
    pub fn read_on(project: Option<&Path>, path: &Path) -> Result<Option<Settings>, String> {
        let read = journal::door::read_on_ground(project, path, journal::door::READ_CAP);
        let text = match read {
            Ok(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
            Ok(None) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Other => return Err(e.to_string()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        if path.extension().is_some_and(|e| e == "toml") {
            return Settings::parse_toml(&text)
                .map(Some)
                .map_err(|e| format!("{}: not valid TOML ({e})", path.display()));
        }
        Settings::parse(&text)
            .map(Some)
            .map_err(|e| format!("{}: not valid JSON ({e})", path.display()))
    }

    /// Reads a TOML config's `[[hooks]]` tables (`event`, `command`, `matcher`, `timeout`: Kimi
    /// CLI's `config.toml`; the event in `type`: Mistral Vibe's `hooks.toml`); `value` is the
    /// document as JSON.
    pub fn parse_toml(text: &str) -> Result<Settings, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let mut handlers: BTreeMap<String, Vec<Handler>> = BTreeMap::new();
        let hooks = table.get("hooks").and_then(|h| h.as_array());
        for h in hooks.into_iter().flatten() {
            let (Some(event), Some(command)) = (
                (h.get("event").or_else(|| h.get("type"))).and_then(|e| e.as_str()),
                h.get("command").and_then(|c| c.as_str()),
            ) else {
                continue;
            };
            let Some(program) = hook_program(command) else {
                continue;
            };
            handlers
                .entry(event.to_string())
                .or_default()
                .push(Handler {
                    command: command.to_string(),
                    program,
                    timeout: h
                        .get("timeout")
                        .and_then(|t| t.as_integer())
                        .and_then(|t| u64::try_from(t).ok()),
                    matcher: h
                        .get("matcher")
                        .and_then(|m| m.as_str())
                        .map(str::to_string),
                });
        }
        let value = serde_json::to_value(&table).map_err(|e| e.to_string())?;
        Ok(Settings { handlers, value })
    }

    /// Reads settings text (comments and trailing commas allowed).
    pub fn parse(text: &str) -> Result<Settings, String> {
        let value: Option<serde_json::Value> =
            jsonc_parser::parse_to_serde_value(text, &Default::default())
                .map_err(|e| e.to_string())?;
        let value = value.unwrap_or(serde_json::Value::Null);
        let mut handlers: BTreeMap<String, Vec<Handler>> = BTreeMap::new();
        let events = value.get("hooks").and_then(|h| h.as_object());
        for (event, groups) in events.into_iter().flatten() {
            for group in groups.as_array().into_iter().flatten() {
                // Copilot CLI's, Cursor's and Kiro CLI's files list handlers directly (`bash` or
                // `command`, `timeoutSec`, `timeout` or `timeout_ms`), not in groups.
                let flat = group.get("bash").or_else(|| group.get("command"));
                if let Some(command) = flat.and_then(|c| c.as_str()) {
                    if let Some(program) = hook_program(command) {
                        handlers.entry(event.clone()).or_default().push(Handler {
                            command: command.to_string(),
                            program,
                            timeout: group
                                .get("timeoutSec")
                                .or_else(|| group.get("timeout"))
                                .or_else(|| group.get("timeout_ms"))
                                .and_then(|t| t.as_u64()),
                            matcher: None,
                        });
                    }
                    continue;
                }
                let matcher = group.get("matcher").and_then(|m| m.as_str());
                for h in group
                    .get("hooks")
                    .and_then(|h| h.as_array())
                    .into_iter()
                    .flatten()
                {
                    let Some(command) = h.get("command").and_then(|c| c.as_str()) else {
                        continue;
                    };
                    let Some(program) = hook_program(command) else {
                        continue;
                    };
                    handlers.entry(event.clone()).or_default().push(Handler {
                        command: command.to_string(),
                        program,
                        timeout: h.get("timeout").and_then(|t| t.as_u64()),
                        matcher: matcher.map(str::to_string),
                    });
                }
            }
        }
        Ok(Settings { handlers, value })
    }

    /// The `hookjournal@<marketplace>` plugin this Claude Code settings file enables, if any.
    pub fn enabled_plugin(&self) -> Option<String> {
        self.value
            .get("enabledPlugins")
            .and_then(|p| p.as_object())?
            .iter()
            .find(|(k, v)| {
                k.split_once('@')
                    .is_some_and(|(name, _)| name == PLUGIN_NAME)
                    && v.as_bool() == Some(true)
            })
            .map(|(k, _)| k.clone())
    }

    /// Whether any hookjournal handler is registered.
    pub fn registers(&self) -> bool {
        !self.handlers.is_empty()
    }
}

/// Claude Code's settings files that can register hooks or enable plugins for a project: the
/// project's shared and local files, then the user's (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
pub fn claude_settings_files(project: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = project {
        out.push(p.join(".claude/settings.json"));
        out.push(p.join(".claude/settings.local.json"));
    }
    if let Some(dir) = claude_user_dir() {
        out.push(dir.join("settings.json"));
    }
    out
}

/// Claude Code's user directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_user_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    env("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".claude")))
}

/// The first of `files` that enables the hookjournal plugin, with the plugin's full name (each
/// read on its ground: beneath `project` through no link).
pub fn plugin_enabled_in(project: Option<&Path>, files: &[PathBuf]) -> Option<(PathBuf, String)> {
    files.iter().find_map(|f| {
        let s = Settings::read_on(project, f).ok()??;
        s.enabled_plugin().map(|p| (f.clone(), p))
    })
}

/// The first of `files` that registers a hookjournal hook (each read on its ground).
pub fn hooks_registered_in(project: Option<&Path>, files: &[PathBuf]) -> Option<PathBuf> {
    files.iter().find_map(|f| {
        let s = Settings::read_on(project, f).ok()??;
        s.registers().then(|| f.clone())
    })
}

/// What a registered program is, found without running it (a settings file, a shim or a hook
/// script may come with a clone, and so may the program it names: `doctor` runs none of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    /// The running binary itself: the same device and inode.
    This,
    /// A copy of the running binary: the same size and the same blake3 of its contents.
    Copy,
    /// Anything else: another version, another program, or one that could not be compared.
    Other,
}

/// Identifies the program at `program` against the running binary at `exe` by file identity,
/// executing nothing. `program` is followed through links (the host's `exec` follows them too),
/// opened without blocking (a FIFO), and read only when it is a regular file of exactly `exe`'s
/// size, so the read is bounded by the running binary's own size.
pub fn identify(program: &Path, exe: &Path) -> std::io::Result<Identity> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let theirs = match journal::door::open_following(program) {
        Ok(f) => f,
        // A FIFO, a device, a directory: not a program, and not read.
        Err(e) if e.kind() == std::io::ErrorKind::Other => return Ok(Identity::Other),
        Err(e) => return Err(e),
    };
    let tm = theirs.metadata()?;
    let ours = journal::door::open_following(exe)?;
    let om = ours.metadata()?;
    if (tm.dev(), tm.ino()) == (om.dev(), om.ino()) {
        return Ok(Identity::This);
    }
    if tm.len() != om.len() {
        return Ok(Identity::Other);
    }
    let hash = |f: std::fs::File, len: u64| -> std::io::Result<blake3::Hash> {
        let mut h = blake3::Hasher::new();
        std::io::copy(&mut f.take(len), &mut h)?;
        Ok(h.finalize())
    };
    Ok(if hash(theirs, om.len())? == hash(ours, om.len())? {
        Identity::Copy
    } else {
        Identity::Other
    })
}

/// What `path --version` prints (first line), given two seconds; `None` when it does not run.
/// `install` asks the `hookjournal` on an absolute `PATH` entry; `doctor` never runs anything.
pub fn version_of(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    out.lines().next().map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_handlers_with_comments_and_the_plugin() {
        let s = Settings::parse(
            r#"// mine
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"},
                {"type": "command", "command": "\"/a b/hookjournal\" hook --host claude", "timeout": 10}]}],
              "PreToolUse": [{"matcher": "*", "hooks": [{"command": "hookjournal hook"}]}]},
             "enabledPlugins": {"other@x": true, "hookjournal@hookjournal": true},}"#,
        )
        .unwrap();
        assert_eq!(s.handlers.len(), 2);
        assert_eq!(s.handlers["Stop"][0].program, "/a b/hookjournal");
        assert_eq!(s.handlers["Stop"][0].timeout, Some(10));
        assert_eq!(s.handlers["PreToolUse"][0].matcher.as_deref(), Some("*"));
        assert_eq!(
            s.enabled_plugin().as_deref(),
            Some("hookjournal@hookjournal")
        );
        assert!(Settings::parse("{").is_err());
        assert!(!Settings::parse("").unwrap().registers());
    }

    #[test]
    fn a_single_quoted_program_may_hold_a_quote_as_sh_writes_it() {
        // Given a program path with a quote in it, quoted for sh as install quotes it,
        let cmd = r"'/opt/it'\''s here/hookjournal' hook --host cline";
        // when the command is split, then the quote is part of the program.
        assert_eq!(
            split_program(cmd),
            Some((
                "/opt/it's here/hookjournal".to_string(),
                " hook --host cline"
            ))
        );
        assert_eq!(
            hook_program(cmd).as_deref(),
            Some("/opt/it's here/hookjournal")
        );
        assert_eq!(
            split_program("'/a/hookjournal' hook"),
            Some(("/a/hookjournal".to_string(), " hook"))
        );
        assert_eq!(split_program("'/a/hookjournal hook"), None);
    }

    #[test]
    fn a_program_is_identified_by_its_file_never_by_running_it() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("hookjournal");
        std::fs::write(&exe, b"\x7fELF this build").unwrap();
        let copy = d.path().join("copy");
        std::fs::copy(&exe, &copy).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&exe, &link).unwrap();
        // Another program: a script that would leave a mark if it ran.
        let other = d.path().join("other");
        let mark = d.path().join("ran");
        std::fs::write(&other, format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(identify(&exe, &exe).unwrap(), Identity::This);
        assert_eq!(identify(&link, &exe).unwrap(), Identity::This);
        assert_eq!(identify(&copy, &exe).unwrap(), Identity::Copy);
        assert_eq!(identify(&other, &exe).unwrap(), Identity::Other);
        assert_eq!(identify(&fifo, &exe).unwrap(), Identity::Other);
        assert!(!mark.exists());
    }

    #[test]
    fn a_cline_hook_script_is_known_by_its_marker_and_names_its_program() {
        let script = "#!/bin/sh\n# hookjournal's Cline hook (`hookjournal uninstall --host cline` removes it).\nexec '/bin/it'\\''s hj/hookjournal' hook --host cline --journal '/p/.hookjournal'\n";
        assert!(is_cline_hook(script));
        assert_eq!(
            cline_hook_program(script).as_deref(),
            Some("/bin/it's hj/hookjournal")
        );
        assert!(!is_cline_hook("#!/bin/sh\necho mine\n"));
        assert_eq!(cline_hook_program("#!/bin/sh\nexec my-tool\n"), None);
    }
}
