//! End-to-end tests of `hookjournal install` / `uninstall`: the real binary, real-shaped settings
//! files of Claude Code, Codex CLI, Gemini CLI, Copilot CLI and Cursor, in temporary project and
//! home directories.

mod common;

use common::test_path;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hookjournal");

/// The common `TestEnvironment` (a cleared environment; the project and the home under one
/// temporary root; output normalised), with this file's shorthands.
struct TestEnv {
    env: common::TestEnvironment,
}

impl TestEnv {
    fn new() -> TestEnv {
        TestEnv {
            env: common::TestEnvironment::new(),
        }
    }

    fn project(&self, rel: &str) -> PathBuf {
        self.env.project.join(rel)
    }

    fn home(&self, rel: &str) -> PathBuf {
        self.env.home.join(rel)
    }

    /// The binary in the project directory, with nothing of the tester's environment.
    fn command(&self) -> Command {
        self.env.command(&self.env.project)
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `$ ARGS` over what the command printed, normalised (`CommandOutput::render`).
    fn transcript(&self, args: &[&str]) -> String {
        let out = self.env.run(args);
        without_trust_hashes(&format!(
            "$ hookjournal {}\n{}",
            args.join(" "),
            out.render()
        ))
    }

    /// A file's text, normalised.
    fn text(&self, path: &Path) -> String {
        without_trust_hashes(&self.env.normalize(&fs::read_to_string(path).unwrap()))
    }
}

/// `text` with each Codex trust hash as `sha256:[HASH]`: the hash covers the hook's command,
/// which names the binary under test by its absolute path, so it differs between checkouts.
/// (That Codex accepts the hashes is the real Codex test's to show.)
fn without_trust_hashes(text: &str) -> String {
    common::replace_pattern(text, &format!("sha256:{}", "x".repeat(64)), "sha256:[HASH]")
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Every (event, handler) pair of the settings file whose command runs `hookjournal hook`.
fn our_handlers(settings: &Value) -> Vec<(String, Value, Option<Value>)> {
    let mut out = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                let cmd = handler["command"].as_str().unwrap_or("");
                if cmd.contains("hookjournal\" hook") {
                    out.push((
                        event.clone(),
                        handler.clone(),
                        group.get("matcher").cloned(),
                    ));
                }
            }
        }
    }
    out
}

const CLAUDE_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "claude-sonnet-4-5",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)"],
    "defaultMode": "acceptEdits"
  },
  "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "NODE_ENV": "development"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check-bash.sh", "timeout": 5}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write \"$(jq -r .tool_input.file_path)\""}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude finished'"}]}],
    "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "cat docs/REMEMBER.md"}]}]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
  "includeCoAuthoredBy": false
}
"#;

const CODEX_HOOKS: &str = r#"{
  "description": "team hooks",
  "hooks": {
    "PreToolUse": [
      {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "python3 .codex/hooks/guard.py", "timeout": 30, "statusMessage": "Checking command"}]}
    ],
    "SessionStart": [
      {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "python3 .codex/hooks/context.py"}]}
    ]
  }
}
"#;

const GEMINI_SETTINGS: &str = r#"{
  "general": {"vimMode": true, "preferredEditor": "code"},
  "ui": {"theme": "GitHub"},
  "mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}},
  "hooksConfig": {"enabled": true, "notifications": true},
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file|replace", "hooks": [{"name": "secret-scan", "type": "command", "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/scan.sh", "timeout": 5000}]}
    ],
    "AfterAgent": [{"hooks": [{"name": "ding", "type": "command", "command": "paplay /usr/share/sounds/done.oga"}]}]
  }
}
"#;

struct Case {
    host: &'static str,
    file: &'static str,
    original: &'static str,
    events: usize,
    /// (event, expected timeout in the host's unit)
    timeouts: &'static [(&'static str, u64)],
    tool_event: &'static str,
}

const CASES: &[Case] = &[
    Case {
        host: "claude",
        file: ".claude/settings.json",
        original: CLAUDE_SETTINGS,
        events: 31,
        timeouts: &[
            ("SessionEnd", 2),
            ("UserPromptSubmit", 30),
            ("PreToolUse", 10),
        ],
        tool_event: "PreToolUse",
    },
    Case {
        host: "codex",
        file: ".codex/hooks.json",
        original: CODEX_HOOKS,
        events: 12,
        timeouts: &[
            ("SessionEnd", 2),
            ("UserPromptSubmit", 30),
            ("PostToolUse", 10),
        ],
        tool_event: "PostToolUse",
    },
    Case {
        host: "gemini",
        file: ".gemini/settings.json",
        original: GEMINI_SETTINGS,
        events: 8,
        timeouts: &[
            ("SessionEnd", 2000),
            ("BeforeAgent", 30000),
            ("BeforeTool", 10000),
        ],
        tool_event: "AfterTool",
    },
    Case {
        host: "droid",
        file: ".factory/settings.json",
        original: DROID_PLAIN,
        events: 9,
        timeouts: &[
            ("SessionEnd", 10),
            ("UserPromptSubmit", 30),
            ("PostToolUse", 10),
        ],
        tool_event: "PostToolUse",
    },
];

/// Factory Droid's settings with a custom model and a hook of the user's own, plain JSON.
const DROID_PLAIN: &str = r#"{
  "customModels": [{"model": "gpt-4.1", "baseUrl": "http://127.0.0.1:8000/v1", "apiKey": "x", "provider": "generic-chat-completion-api"}],
  "hooks": {
    "PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}]
  }
}
"#;

#[test]
fn install_twice_then_uninstall_round_trips_for_every_host() {
    for case in CASES {
        let env = TestEnv::new();
        let path = env.project(case.file);
        write(&path, case.original);
        let original: Value = serde_json::from_str(case.original).unwrap();

        let mut t = env.transcript(&["install", "--host", case.host]);
        t.push_str(&format!("$ cat {}\n{}", case.file, env.text(&path)));
        let once = fs::read(&path).unwrap();
        assert_eq!(
            fs::read(env.project(&format!("{}.bak", case.file))).unwrap(),
            case.original.as_bytes()
        );
        t.push_str(&env.transcript(&["install", "--host", case.host]));
        assert_eq!(
            fs::read(&path).unwrap(),
            once,
            "{}: a second install changed the file",
            case.host
        );

        let installed = read_json(&path);
        let ours = our_handlers(&installed);
        assert_eq!(
            ours.len(),
            case.events,
            "{}: one handler per event",
            case.host
        );
        let expected_cmd = format!("\"{BIN}\" hook --host {}", case.host);
        for (event, handler, _) in &ours {
            assert_eq!(handler["command"], expected_cmd.as_str(), "{}", event);
            assert_eq!(handler["type"], "command");
        }
        for (event, timeout) in case.timeouts {
            let (_, h, _) = ours
                .iter()
                .find(|(e, _, _)| e == event)
                .unwrap_or_else(|| panic!("{} {event}", case.host));
            assert_eq!(h["timeout"], *timeout, "{} {event}", case.host);
        }
        let (_, _, matcher) = ours.iter().find(|(e, _, _)| e == case.tool_event).unwrap();
        assert_eq!(matcher.as_ref().unwrap(), "*");

        // The user's own hooks and keys are all still there, first, and in their order.
        let mut without_ours = installed.clone();
        for groups in without_ours["hooks"].as_object_mut().unwrap().values_mut() {
            groups
                .as_array_mut()
                .unwrap()
                .retain(|g| !g.to_string().contains("hookjournal\\\" hook"));
        }
        without_ours["hooks"]
            .as_object_mut()
            .unwrap()
            .retain(|_, g| !g.as_array().unwrap().is_empty());
        assert_eq!(without_ours, original, "{}", case.host);
        let text = String::from_utf8(once).unwrap();
        assert!(
            text.starts_with("{\n  \"") && text.ends_with("}\n"),
            "{}: not 2-space pretty JSON",
            case.host
        );

        t.push_str(&env.transcript(&["uninstall", "--host", case.host]));
        assert_eq!(
            read_json(&path),
            original,
            "{}: uninstall did not restore the original",
            case.host
        );
        assert!(env.project(&format!("{}.bak", case.file)).exists());

        t.push_str(&env.transcript(&["uninstall", "--host", case.host]));
        assert_eq!(read_json(&path), original);
        common::assert_expected(&format!("install/round-trip-{}.txt", case.host), &t);
    }
}

#[test]
fn key_order_of_the_users_file_is_kept() {
    let env = TestEnv::new();
    let path = env.project(".claude/settings.json");
    write(&path, CLAUDE_SETTINGS);
    env.ok(&["install"]);
    let text = fs::read_to_string(&path).unwrap();
    let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    // Not alphabetical: the file's own order.
    assert!(
        at("$schema") < at("model")
            && at("model") < at("permissions")
            && at("permissions") < at("env")
    );
    assert!(
        at("env") < at("hooks")
            && at("hooks") < at("statusLine")
            && at("statusLine") < at("includeCoAuthoredBy")
    );
    assert!(at("PreToolUse") < at("PostToolUse") && at("PostToolUse") < at("Stop"));
}

#[test]
fn install_creates_missing_settings_and_a_private_journal() {
    let env = TestEnv::new();
    let mut t = env.transcript(&["install"]);
    let settings = read_json(&env.project(".claude/settings.json"));
    assert_eq!(our_handlers(&settings).len(), 31);
    assert!(
        !env.project(".claude/settings.json.bak").exists(),
        "nothing to back up"
    );
    assert_eq!(
        settings.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["hooks"]
    );

    let journal = env.project(".hookjournal");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&journal).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        fs::read_to_string(journal.join(".gitignore")).unwrap(),
        "*\n"
    );
    let ignore_mode = fs::metadata(journal.join(".gitignore"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(ignore_mode & 0o777, 0o600);

    // Uninstalling what install created leaves an empty object, not a broken file.
    t.push_str(&env.transcript(&["uninstall"]));
    common::assert_expected("install/into-a-new-project.txt", &t);
    assert_eq!(read_json(&env.project(".claude/settings.json")), json!({}));
    assert!(journal.is_dir(), "uninstall leaves the journal alone");
}

#[test]
fn scopes_choose_the_settings_file() {
    let env = TestEnv::new();
    env.ok(&["install", "--scope", "local"]);
    assert_eq!(
        our_handlers(&read_json(&env.project(".claude/settings.local.json"))).len(),
        31
    );
    assert!(!env.project(".claude/settings.json").exists());

    env.ok(&["install", "--scope", "user"]);
    assert_eq!(
        our_handlers(&read_json(&env.home(".claude/settings.json"))).len(),
        31
    );
    env.ok(&["install", "--scope", "user", "--host", "codex"]);
    assert_eq!(
        our_handlers(&read_json(&env.home(".codex/hooks.json"))).len(),
        12
    );
    env.ok(&["install", "--scope", "user", "--host", "gemini"]);
    assert_eq!(
        our_handlers(&read_json(&env.home(".gemini/settings.json"))).len(),
        8
    );

    env.ok(&["uninstall", "--scope", "user"]);
    assert_eq!(
        our_handlers(&read_json(&env.home(".claude/settings.json"))).len(),
        0
    );
    assert_eq!(
        our_handlers(&read_json(&env.project(".claude/settings.local.json"))).len(),
        31
    );

    let out = env.run(&["install", "--scope", "local", "--host", "codex"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!env.project(".codex").exists());
}

#[test]
fn explicit_journal_goes_into_the_command() {
    let env = TestEnv::new();
    env.ok(&["--journal", "j", "install"]);
    let settings = read_json(&env.project(".claude/settings.json"));
    let dir = env.project("j");
    let expected = format!(
        "\"{BIN}\" hook --host claude --journal \"{}\"",
        dir.display()
    );
    for (_, handler, _) in our_handlers(&settings) {
        assert_eq!(handler["command"], expected.as_str());
    }
    assert!(dir.join(".gitignore").exists());
    assert!(!env.project(".hookjournal").exists());
}

#[test]
fn reinstall_after_moving_the_binary_replaces_the_old_entries() {
    let env = TestEnv::new();
    let path = env.project(".claude/settings.json");
    write(
        &path,
        r#"{"hooks": {"Stop": [
            {"hooks": [{"type": "command", "command": "\"/old/place/hookjournal\" hook --host claude", "timeout": 10}]},
            {"hooks": [{"type": "command", "command": "say done"}]}
        ], "Notification": [{"hooks": [{"type": "command", "command": "/old/place/hookjournal hook"}]}]}}"#,
    );
    env.ok(&["install"]);
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("/old/place"), "{text}");
    assert!(text.contains("say done"));
    assert_eq!(our_handlers(&read_json(&path)).len(), 31);
}

#[test]
fn install_prefers_the_same_program_on_path_and_names_a_build_directory() {
    let env = TestEnv::new();
    // From the build directory, nothing on PATH: its path, with a note and the stable way.
    let mut t = env.transcript(&["install", "--scope", "local"]);

    // A copy of the same version on PATH (as `cargo install` puts it): that one is registered.
    let bin_dir = env.home(".cargo/bin");
    fs::create_dir_all(&bin_dir).unwrap();
    let installed = bin_dir.join("hookjournal");
    fs::copy(BIN, &installed).unwrap();
    let mut path = std::ffi::OsString::from(&bin_dir);
    path.push(":");
    path.push(test_path());
    // The test's root is in the tester's temporary directory, which the note names.
    let tmp = std::env::temp_dir();
    let out = env
        .command()
        .env("PATH", &path)
        .env("TMPDIR", &tmp)
        .args(["install", "--scope", "local"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let text = text.replace(
        &format!("temporary directory ({})", tmp.display()),
        "temporary directory ($TMPDIR)",
    );
    t.push_str(&format!(
        "$ PATH=~/.cargo/bin:$PATH hookjournal install --scope local\n{}",
        env.env.normalize(&text)
    ));
    common::assert_expected("install/the-program-on-path.txt", &t);
    let command = format!("\"{}\" hook --host claude", installed.display());
    let settings = read_json(&env.project(".claude/settings.local.json"));
    let registered: Vec<String> = our_handlers(&settings)
        .into_iter()
        .map(|(_, h, _)| h["command"].as_str().unwrap().to_string())
        .collect();
    assert!(!registered.is_empty() && registered.iter().all(|c| *c == command));
}

#[test]
fn invalid_settings_are_refused_and_left_alone() {
    // Each refused in one line naming the file, why, and (for JSONC errors) where.
    let bad_files: [(&str, &[&str]); 7] = [
        (
            "{\"model\": \"opus\",\n  \"hooks\": {\n",
            &["not valid JSON"],
        ),
        (
            "{\"hooks\": [\"not\", \"an\", \"object\"]}\n",
            &["\"hooks\" is not an object"],
        ),
        ("[1, 2]\n", &["not a JSON object"]),
        (
            "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n",
            &["not valid JSON", "Expected comma on line 2 column 18"],
        ),
        (
            "{\n  'model': 'opus'\n}\n",
            &["not valid JSON", "on line 2 column 3"],
        ),
        (
            "{\n  \"a\": 1,\n  /* open\n}\n",
            &[
                "not valid JSON",
                "Unterminated comment block on line 3 column 3",
            ],
        ),
        (
            "{\"a\": 1} {\"b\": 2}",
            &["not valid JSON", "line 1 column 10"],
        ),
    ];
    let mut t = String::new();
    for (text, reasons) in bad_files {
        for command in ["install", "uninstall"] {
            let env = TestEnv::new();
            let path = env.project(".claude/settings.json");
            write(&path, text);
            let out = env.env.run(&[command]);
            t.push_str(&format!(
                "$ hookjournal {command}  # on {text:?}\n{}",
                out.render()
            ));
            assert_eq!(out.code, Some(1), "{command} on {text:?}");
            assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
            for reason in reasons {
                assert!(
                    out.stderr.contains(reason),
                    "{reason:?} not in {}",
                    out.stderr
                );
            }
            assert_eq!(fs::read_to_string(&path).unwrap(), text);
            assert!(!env.project(".claude/settings.json.bak").exists());
            assert!(!env.project(".hookjournal").exists());
        }
    }
    common::assert_expected("install/invalid-settings.txt", &t);
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    // No settings file yet: nothing is created.
    let env = TestEnv::new();
    let mut t = env.transcript(&["install", "--dry-run"]);
    assert!(!env.project(".claude").exists());
    assert!(!env.project(".hookjournal").exists());

    // An existing file: byte-identical afterwards, no backup.
    for case in CASES {
        let env = TestEnv::new();
        let path = env.project(case.file);
        write(&path, case.original);
        let out = env.ok(&["install", "--host", case.host, "--dry-run"]);
        t.push_str(&env.transcript(&["install", "--host", case.host, "--dry-run"]));
        // Install only adds: a line it takes out comes back whole, with a comma added, or (a
        // one-line array) with an entry inserted before its closing bracket.
        let added: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| &l[1..])
            .collect();
        for removed in out
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        {
            let removed = &removed[1..];
            let open_end = &removed[..removed.rfind(']').unwrap_or(removed.len())];
            assert!(
                added.iter().any(|a| *a == removed
                    || *a == format!("{removed},")
                    || (a.starts_with(open_end) && a.len() > removed.len())),
                "install took out {removed:?}:\n{out}"
            );
        }
        assert_eq!(fs::read_to_string(&path).unwrap(), case.original);
        assert!(!env.project(&format!("{}.bak", case.file)).exists());

        env.ok(&["install", "--host", case.host]);
        let installed = fs::read(&path).unwrap();
        t.push_str(&env.transcript(&["uninstall", "--host", case.host, "--dry-run"]));
        assert_eq!(fs::read(&path).unwrap(), installed);
    }
    common::assert_expected("install/dry-run.txt", &t);
}

#[test]
fn never_registers_worktree_create_or_message_display() {
    let env = TestEnv::new();
    for host in ["claude", "codex", "gemini"] {
        env.ok(&["install", "--host", host]);
    }
    for file in [
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
    ] {
        let settings = read_json(&env.project(file));
        for (event, _, _) in our_handlers(&settings) {
            assert!(
                !matches!(event.as_str(), "WorktreeCreate" | "MessageDisplay"),
                "{file}: {event}"
            );
        }
        let text = fs::read_to_string(env.project(file)).unwrap();
        assert!(
            !text.contains("WorktreeCreate") && !text.contains("MessageDisplay"),
            "{file}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Files as people write them: comments, trailing commas, their own indentation and line ends.
// install keeps every byte of theirs; uninstall gives the file back byte for byte.

const CLAUDE_JSONC: &str = r#"// Team settings: keep hooks fast.
{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "claude-sonnet-4-5", // pinned for the release
  /* permissions reviewed in January */
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)",],
    "deny": ["Read(./.env)"],
  },

  "hooks": {
    "PreToolUse": [
      // lint every shell command
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]},
      // {"matcher": "Edit", "hooks": [{"type": "command", "command": "./old.sh"}]},
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}, // desktop ping
    ],
  },
  "includeCoAuthoredBy": false,
}
"#;

const CODEX_JSONC: &str = r#"{
    /* hooks for Codex */
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup|resume",
                "hooks": [{"type": "command", "command": "python3 .codex/hooks/context.py"}]
            }
        ] // context first
    }
}
"#;

const GEMINI_JSONC: &str = "{\n\t// UI\n\t\"ui\": {\"theme\": \"GitHub\",},\n\t\"hooksConfig\": {\"enabled\": true},\n\t\"hooks\": {\n\t\t\"BeforeTool\": [\n\t\t\t{\"matcher\": \"write_file\", \"hooks\": [{\"name\": \"scan\", \"type\": \"command\", \"command\": \"./scan.sh\", \"timeout\": 5000}]},\n\t\t],\n\t},\n}\n";

/// The plain fixtures in other styles: CRLF line ends, four-space indentation, one line.
fn styles(original: &str) -> Vec<String> {
    let mut out = vec![original.to_string(), original.replace('\n', "\r\n")];
    if serde_json::from_str::<Value>(original).is_ok() {
        let four = original
            .lines()
            .map(|l| {
                let n = l.len() - l.trim_start_matches(' ').len();
                format!("{}{}\n", " ".repeat(2 * n), &l[n..])
            })
            .collect::<String>();
        out.push(four);
        let value: Value = serde_json::from_str(original).unwrap();
        out.push(serde_json::to_string(&value).unwrap());
    }
    out
}

/// The comments of `text`, from their opening `//` or `/*` to the end of their line (none in a
/// file that is plain JSON, where `//` can only be inside a string).
fn comments(text: &str) -> Vec<&str> {
    if serde_json::from_str::<Value>(text).is_ok() {
        return Vec::new();
    }
    text.lines()
        .filter_map(|l| l.find("//").or_else(|| l.find("/*")).map(|i| &l[i..]))
        .collect()
}

#[test]
fn install_then_uninstall_gives_back_the_original_bytes() {
    let files: &[(&str, &[&str], &str, usize)] = &[
        ("claude", &[], ".claude/settings.json", 31),
        (
            "claude",
            &["--scope", "local"],
            ".claude/settings.local.json",
            31,
        ),
        (
            "claude",
            &["--scope", "user"],
            "~/.claude/settings.json",
            31,
        ),
        ("codex", &[], ".codex/hooks.json", 12),
        ("codex", &["--scope", "user"], "~/.codex/hooks.json", 12),
        ("gemini", &[], ".gemini/settings.json", 8),
        ("gemini", &["--scope", "user"], "~/.gemini/settings.json", 8),
    ];
    for (host, scope, file, events) in files {
        let (plain, jsonc) = match *host {
            "claude" => (CLAUDE_SETTINGS, CLAUDE_JSONC),
            "codex" => (CODEX_HOOKS, CODEX_JSONC),
            _ => (GEMINI_SETTINGS, GEMINI_JSONC),
        };
        // Every style in the project file; the other scopes' files are edited the same way.
        let originals = if scope.is_empty() {
            let mut all = styles(plain);
            all.extend(styles(jsonc));
            all.extend(["{}".to_string(), "{}\n".to_string()]);
            all
        } else {
            vec![plain.to_string(), jsonc.to_string()]
        };
        for original in originals {
            let env = TestEnv::new();
            let path = match file.strip_prefix("~/") {
                Some(rel) => env.home(rel),
                None => env.project(file),
            };
            write(&path, &original);
            let args = |cmd: &'static str| {
                let mut a = vec![cmd, "--host", host];
                a.extend(scope.iter());
                a
            };
            let what = format!("{host} {scope:?} on {original:?}");

            env.ok(&args("install"));
            let installed = fs::read_to_string(&path).unwrap();
            let ours = serde_json::to_string(&format!("\"{BIN}\" hook --host {host}")).unwrap();
            assert_eq!(
                installed.matches(&ours).count(),
                *events,
                "{what}:\n{installed}"
            );
            for comment in comments(&original) {
                assert!(installed.contains(comment), "{what}: lost {comment:?}");
            }
            if original.contains('\r') {
                assert!(!installed.replace("\r\n", "").contains('\n'), "{what}");
            }
            env.ok(&args("install"));
            assert_eq!(fs::read_to_string(&path).unwrap(), installed, "{what}");

            let out = env.ok(&args("uninstall"));
            assert!(
                out.contains(&format!("Removed {events} hookjournal hooks")),
                "{out}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), original, "{what}");
        }
    }
}

/// Our group as install writes it in a four-space file: `pad` is the indentation of its `{`.
fn codex_group(pad: &str, timeout: u64, tool: bool) -> String {
    let cmd = serde_json::to_string(&format!("\"{BIN}\" hook --host codex")).unwrap();
    let matcher = if tool {
        format!("{pad}    \"matcher\": \"*\",\n")
    } else {
        String::new()
    };
    format!(
        "{{\n{matcher}{pad}    \"hooks\": [\n{pad}        {{\n{pad}            \"type\": \"command\",\n{pad}            \"command\": {cmd},\n{pad}            \"timeout\": {timeout}\n{pad}        }}\n{pad}    ]\n{pad}}}"
    )
}

#[test]
fn install_writes_only_its_entries_in_the_files_own_style() {
    let env = TestEnv::new();
    let path = env.project(".codex/hooks.json");
    write(&path, CODEX_JSONC);
    env.ok(&["install", "--host", "codex"]);

    let event = |name: &str, timeout: u64, tool: bool| {
        format!(
            "        \"{name}\": [\n            {}\n        ]",
            codex_group("            ", timeout, tool)
        )
    };
    let added = [
        event("SessionEnd", 2, false),
        event("UserPromptSubmit", 30, false),
        event("PreToolUse", 10, true),
        event("PermissionRequest", 10, true),
        event("PostToolUse", 10, true),
        event("PreCompact", 30, false),
        event("PostCompact", 10, false),
        event("SubagentStart", 10, false),
        event("SubagentStop", 10, false),
        event("Stop", 10, false),
        event("Interrupt", 10, false),
    ]
    .join(",\n");
    let expected = format!(
        r#"{{
    /* hooks for Codex */
    "hooks": {{
        "SessionStart": [
            {{
                "matcher": "startup|resume",
                "hooks": [{{"type": "command", "command": "python3 .codex/hooks/context.py"}}]
            }},
            {}
        ], // context first
{added}
    }}
}}
"#,
        codex_group("            ", 30, false)
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), expected);
}

#[test]
fn dry_run_on_a_commented_file_only_adds_lines() {
    let env = TestEnv::new();
    let path = env.project(".claude/settings.json");
    write(&path, CLAUDE_JSONC);
    let out = env.ok(&["install", "--dry-run"]);
    assert!(out.contains(&format!("+++ {}", path.display())), "{out}");
    let removed: Vec<_> = out
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    assert!(removed.is_empty(), "{out}");
    assert!(
        out.contains("\n       // lint every shell command\n"),
        "{out}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), CLAUDE_JSONC);

    env.ok(&["install"]);
    let out = env.ok(&["uninstall", "--dry-run"]);
    assert!(
        out.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count()
            == 0,
        "{out}"
    );
}

#[test]
fn statusline_round_trips_in_a_commented_file() {
    let env = TestEnv::new();
    let path = env.project(".claude/settings.json");
    let original = CLAUDE_JSONC.replace(
        "  \"includeCoAuthoredBy\": false,\n",
        "  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line \\\"$PWD\\\"\"}, // mine\n  \"includeCoAuthoredBy\": false,\n",
    );
    write(&path, &original);
    env.ok(&["install", "--statusline"]);
    let installed = fs::read_to_string(&path).unwrap();
    assert!(installed.contains("statusline --chain"), "{installed}");
    assert!(installed.contains("}, // mine\n"), "{installed}");
    let out = env.ok(&["uninstall"]);
    assert!(out.contains("Restored your own status line"), "{out}");
    assert_eq!(fs::read_to_string(&path).unwrap(), original);

    // Without one of the user's: ours is added, then taken out again.
    let env = TestEnv::new();
    let path = env.project(".claude/settings.json");
    write(&path, CLAUDE_JSONC);
    env.ok(&["install", "--statusline"]);
    env.ok(&["uninstall"]);
    assert_eq!(fs::read_to_string(&path).unwrap(), CLAUDE_JSONC);
}

/// Codex runs a project hook only when its hash is trusted in ~/.codex/config.toml (and the project
/// is trusted): install writes the trust as /hooks would, keeps the user's config, says what it
/// did and what is still needed, and stays idempotent.
#[test]
fn codex_install_trusts_its_hooks_in_the_users_config() {
    let env = TestEnv::new();
    write(
        &env.home(".codex/config.toml"),
        "model = \"gpt-5.5\" # mine\n\n[hooks.state.\"/elsewhere/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:kept\"\n",
    );
    let out = env.ok(&["install", "--host", "codex"]);
    let config = fs::read_to_string(env.home(".codex/config.toml")).unwrap();
    let hooks = fs::read_to_string(env.project(".codex/hooks.json")).unwrap();
    let project = env.env.project.as_path().canonicalize().unwrap();
    let v: toml::Value = toml::from_str(&config).unwrap();
    let state = v["hooks"]["state"].as_table().unwrap();
    assert!(
        config.starts_with("model = \"gpt-5.5\" # mine\n"),
        "{config}"
    );
    assert_eq!(
        state["/elsewhere/.codex/hooks.json:stop:0:0"]["trusted_hash"].as_str(),
        Some("sha256:kept")
    );
    let ours: Vec<&String> = state
        .keys()
        .filter(|k| !k.starts_with("/elsewhere"))
        .collect();
    assert_eq!(ours.len(), 12, "{ours:?}");
    let hooks_json = format!("{}/.codex/hooks.json", project.display());
    for label in [
        "session_start",
        "user_prompt_submit",
        "pre_tool_use",
        "stop",
        "interrupt",
    ] {
        let key = format!("{hooks_json}:{label}:0:0");
        let hash = state.get(&key).and_then(|s| s["trusted_hash"].as_str());
        assert!(
            hash.is_some_and(|h| h.starts_with("sha256:") && h.len() == 71),
            "{key}: {hash:?}\n{config}"
        );
    }
    assert!(
        out.contains("Trusted: 12 hooks for this project in"),
        "{out}"
    );
    assert!(
        out.contains("not trusted in") && out.contains("trust_level = \"trusted\""),
        "{out}"
    );
    // Again: nothing changes.
    env.ok(&["install", "--host", "codex"]);
    assert_eq!(
        fs::read_to_string(env.home(".codex/config.toml")).unwrap(),
        config
    );
    assert_eq!(
        fs::read_to_string(env.project(".codex/hooks.json")).unwrap(),
        hooks
    );
}

/// `uninstall --host codex` takes back the trust install wrote in the user's config.toml: only
/// the `[hooks.state."<hooks.json>:…"]` tables of hookjournal's own handlers, the user's
/// settings, comments and trust of their own hooks kept byte for byte (project and user scope;
/// `--dry-run` shows both diffs and writes nothing).
#[test]
fn codex_uninstall_removes_the_trust_install_wrote_and_nothing_else() {
    for scope in [&[][..], &["--scope", "user"][..]] {
        let env = TestEnv::new();
        let project = env.env.project.as_path().canonicalize().unwrap();
        let hooks = if scope.is_empty() {
            env.project(".codex/hooks.json")
        } else {
            env.home(".codex/hooks.json")
        };
        write(&hooks, CODEX_HOOKS);
        let hooks_key = if scope.is_empty() {
            format!("{}/.codex/hooks.json", project.display())
        } else {
            hooks.display().to_string()
        };
        let original = format!(
            "# my Codex settings\nmodel = \"gpt-5.5\" # mine\n\n[projects.{p}]\ntrust_level = \"trusted\"\n\n\
             # the team's guard, trusted in /hooks\n[hooks.state.\"{hooks_key}:pre_tool_use:0:0\"]\n\
             trusted_hash = \"sha256:team-guard\"\n\n[hooks.state.\"/elsewhere/.codex/hooks.json:stop:0:0\"]\n\
             enabled = false\ntrusted_hash = \"sha256:kept\"\n",
            p = toml::Value::String(project.display().to_string())
        );
        let config = env.home(".codex/config.toml");
        write(&config, &original);
        let args = |cmd: &'static str| {
            let mut a = vec![cmd, "--host", "codex"];
            a.extend(scope.iter());
            a
        };
        let out = env.ok(&args("install"));
        assert!(out.contains("Trusted: 12 hooks"), "{out}");
        let installed = fs::read_to_string(&config).unwrap();
        assert_eq!(installed.matches(&hooks_key).count(), 13, "{installed}");

        let mut dry = args("uninstall");
        dry.push("--dry-run");
        let out = env.ok(&dry);
        assert!(
            out.contains("config.toml")
                && out.contains(&format!("-[hooks.state.\"{hooks_key}:stop:")),
            "{out}"
        );
        assert_eq!(fs::read_to_string(&config).unwrap(), installed);

        let out = env.ok(&args("uninstall"));
        assert!(
            out.contains("Untrusted: removed the 12 [hooks.state] entries install wrote"),
            "{out}"
        );
        assert_eq!(fs::read_to_string(&config).unwrap(), original, "{scope:?}");
        assert_eq!(fs::read_to_string(&hooks).unwrap(), CODEX_HOOKS);
        // Nothing of ours left: a second uninstall changes nothing.
        let out = env.ok(&args("uninstall"));
        assert!(out.contains("nothing to remove"), "{out}");
        assert_eq!(fs::read_to_string(&config).unwrap(), original);
    }
}

/// The event names Cursor's hooks documentation lists (cursor.com/docs/hooks): one name outside
/// them makes Cursor ignore the whole file.
const CURSOR_EVENTS: [&str; 20] = [
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "afterAgentResponse",
    "afterAgentThought",
    "preCompact",
    "stop",
    "beforeTabFileRead",
    "afterTabFileEdit",
];

/// A user's own Cursor hooks, as people write them.
const CURSOR_HOOKS: &str = r#"{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [
      { "command": "./hooks/guard.sh" }
    ],
    "stop": [{"command": "say done", "timeout": 5}]
  }
}
"#;

#[test]
fn cursor_install_names_only_events_cursor_knows_and_uninstall_gives_the_bytes_back() {
    let env = TestEnv::new();
    let path = env.project(".cursor/hooks.json");
    write(&path, CURSOR_HOOKS);
    env.ok(&["install", "--host", "cursor"]);
    let installed = read_json(&path);
    assert_eq!(installed["version"], 1);
    let hooks = installed["hooks"].as_object().unwrap();
    for event in hooks.keys() {
        assert!(CURSOR_EVENTS.contains(&event.as_str()), "{event}");
    }
    let ours: Vec<(&String, &Value)> = hooks
        .iter()
        .flat_map(|(e, list)| list.as_array().unwrap().iter().map(move |h| (e, h)))
        .filter(|(_, h)| {
            h["command"]
                .as_str()
                .unwrap()
                .contains("hookjournal\" hook")
        })
        .collect();
    assert_eq!(ours.len(), 10);
    for (event, h) in &ours {
        assert_eq!(
            h["command"],
            format!("\"{BIN}\" hook --host cursor"),
            "{event}"
        );
        assert!(h["timeout"].is_u64(), "{event}");
        assert_eq!(h.as_object().unwrap().len(), 2, "{event}: {h}");
    }
    // The user's own stay, first.
    assert_eq!(installed["hooks"]["stop"][0]["command"], "say done");
    env.ok(&["install", "--host", "cursor"]);
    env.ok(&["uninstall", "--host", "cursor"]);
    assert_eq!(fs::read_to_string(&path).unwrap(), CURSOR_HOOKS);

    // A file install created goes again with uninstall: the project is as it was.
    let env = TestEnv::new();
    let path = env.project(".cursor/hooks.json");
    env.ok(&["install", "--host", "cursor"]);
    assert!(read_json(&path)["hooks"]["sessionStart"].is_array());
    let out = env.ok(&["uninstall", "--host", "cursor"]);
    assert!(out.contains("it held only hookjournal's 10 hooks"), "{out}");
    assert!(!path.exists());
}

#[test]
fn copilot_install_writes_its_own_file_with_each_unnamed_event_on_the_command_line() {
    let env = TestEnv::new();
    fs::create_dir(env.project(".git")).unwrap();
    let out = env.ok(&["install", "--host", "copilot"]);
    let path = env.project(".github/hooks/hookjournal.json");
    let v = read_json(&path);
    assert_eq!(v["version"], 1);
    let hooks = v["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 15);
    for (event, list) in hooks {
        let h = &list[0];
        let bash = h["bash"].as_str().unwrap();
        assert_eq!(h["type"], "command", "{event}");
        assert!(h["timeoutSec"].is_u64(), "{event}");
        // permissionRequest (`hookName`) and notification (`hook_event_name`) name themselves.
        let named = matches!(event.as_str(), "permissionRequest" | "notification");
        let expected = if named {
            format!("\"{BIN}\" hook --host copilot")
        } else {
            format!("\"{BIN}\" hook --host copilot --event {event}")
        };
        assert_eq!(bash, expected);
    }
    // Not trusted, said exactly, and never trusted by install.
    assert!(out.contains("is not in trustedFolders of"), "{out}");
    assert!(!env.home(".copilot/config.json").exists());
    write(
        &env.home(".copilot/config.json"),
        &format!(
            "// User settings belong in settings.json.\n{{\n  \"trustedFolders\": [\"{}\"]\n}}\n",
            env.env.project.as_path().display()
        ),
    );
    let before = fs::read(env.home(".copilot/config.json")).unwrap();
    let out = env.ok(&["install", "--host", "copilot"]);
    assert!(out.contains("is trusted by Copilot CLI"), "{out}");
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(fs::read(env.home(".copilot/config.json")).unwrap(), before);

    let out = env.ok(&["uninstall", "--host", "copilot"]);
    assert!(out.contains("held only hookjournal's 15 hooks"), "{out}");
    assert!(!path.exists());

    // User scope: ~/.copilot/hooks (no trust needed), or $COPILOT_HOME/hooks.
    env.ok(&["install", "--host", "copilot", "--scope", "user"]);
    assert!(env.home(".copilot/hooks/hookjournal.json").exists());
    let moved = env.home("copilot-home");
    let out = env
        .command()
        .args(["install", "--host", "copilot", "--scope", "user"])
        .env("COPILOT_HOME", &moved)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(moved.join("hooks/hookjournal.json").exists());
}

#[test]
fn installing_for_copilot_beside_claude_codes_settings_says_both_would_journal() {
    let env = TestEnv::new();
    env.ok(&["install", "--host", "claude"]);
    let out = env.ok(&["install", "--host", "copilot"]);
    assert!(
        out.contains("Copilot CLI also runs the hookjournal hooks of")
            && out.contains(".claude/settings.json")
            && out.contains("journaled twice"),
        "{out}"
    );
    let out = env.ok(&["install", "--host", "claude"]);
    assert!(
        out.contains("Copilot CLI also runs the hookjournal hooks of this file"),
        "{out}"
    );
}

/// The first steps with Copilot CLI and with Cursor, compared as whole outputs: install (trust
/// stated), events as the hosts send them through the very commands install registered, what
/// the journal shows, uninstall.
#[test]
fn copilot_and_cursor_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("e5b35fae-3457-462b-a3ca-a979873f818a", "[COPILOT-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let mut t = String::new();
    let out = env.run(&["install", "--host", "copilot"]);
    common::step(&mut t, "hookjournal install --host copilot", &out);
    let hooks = fs::read_to_string(project.join(".github/hooks/hookjournal.json")).unwrap();
    t.push_str(&format!(
        "$ cat .github/hooks/hookjournal.json\n{}\n",
        env.normalize(&hooks)
    ));
    let registered: Value = serde_json::from_str(&hooks).unwrap();
    let fixture = |stem: &str| {
        fs::read_to_string(
            common::fixtures().join(format!("real-hosts/copilot-1.0.102/{stem}.json")),
        )
        .unwrap()
        .replace("/home/dev/acme-api", project.to_str().unwrap())
        .replace("/home/dev/.copilot", "/nonexistent/.copilot")
    };
    for (event, stem) in [
        ("sessionStart", "camel.sessionStart-new"),
        ("userPromptSubmitted", "camel.userPromptSubmitted"),
        ("preToolUse", "camel.preToolUse-bash"),
        ("permissionRequest", "camel.permissionRequest-bash"),
        ("postToolUse", "camel.postToolUse-bash"),
        ("agentStop", "camel.agentStop"),
        ("sessionEnd", "camel.sessionEnd-complete"),
    ] {
        let command = registered["hooks"][event][0]["bash"].as_str().unwrap();
        let out = env.run_shell(command, &project, &[], fixture(stem).as_bytes());
        common::step(
            &mut t,
            &format!("({event}) {}", env.normalize(command)),
            &out,
        );
    }
    let out = env.run(&["show", "e5b35fae"]);
    common::step(&mut t, "hookjournal show e5b35fae", &out);
    let out = env.run(&["uninstall", "--host", "copilot"]);
    common::step(&mut t, "hookjournal uninstall --host copilot", &out);

    let out = env.run(&["install", "--host", "cursor"]);
    common::step(&mut t, "hookjournal install --host cursor", &out);
    let hooks = fs::read_to_string(project.join(".cursor/hooks.json")).unwrap();
    let registered: Value = serde_json::from_str(&hooks).unwrap();
    for event in [
        "sessionStart",
        "beforeSubmitPrompt",
        "preToolUse",
        "postToolUse",
        "stop",
        "sessionEnd",
    ] {
        let payload =
            fs::read_to_string(common::fixtures().join(format!("events/cursor/{event}.json")))
                .unwrap()
                .replace("/home/dev/acme-api", project.to_str().unwrap());
        let command = registered["hooks"][event][0]["command"].as_str().unwrap();
        let out = env.run_shell(command, &project, &[], payload.as_bytes());
        common::step(
            &mut t,
            &format!("({event}) {}", env.normalize(command)),
            &out,
        );
    }
    let out = env.run(&["show", "c-77"]);
    common::step(&mut t, "hookjournal show c-77", &out);
    let out = env.run(&["uninstall", "--host", "cursor"]);
    common::step(&mut t, "hookjournal uninstall --host cursor", &out);
    common::assert_expected("install-copilot-cursor.txt", &t);
}

/// `$HOOKJOURNAL_DIR` comes right after `--journal` for every command (README): the OpenClaw
/// plugin journals there, not into the project.
#[test]
fn openclaw_install_journals_where_hookjournal_dir_says() {
    let env = TestEnv::new();
    let state = env.home("openclaw-state");
    let journal = env.home("journals/acme");
    let run = |extra: &[(&str, &Path)]| {
        let mut c = env.command();
        c.args(["install", "--host", "openclaw"])
            .env("OPENCLAW_STATE_DIR", &state);
        for (k, v) in extra {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let said = run(&[("HOOKJOURNAL_DIR", &journal)]);
    let settings = read_json(&state.join("extensions/hookjournal/hookjournal.json"));
    assert_eq!(settings["journal"], journal.to_str().unwrap(), "{said}");
    assert!(
        journal.join("CURRENT").exists() || journal.is_dir(),
        "{said}"
    );
    assert!(!env.project(".hookjournal").exists());
    // Without it, the project's journal.
    run(&[]);
    let settings = read_json(&state.join("extensions/hookjournal/hookjournal.json"));
    assert_eq!(
        settings["journal"],
        env.project(".hookjournal").to_str().unwrap()
    );
}

/// The user's own Qwen Code settings: comments, a model setting and a hook of their own.
const QWEN_SETTINGS: &str = r#"{
  // mine
  "model": { "name": "qwen3-coder-plus" },
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "say done", "timeout": 5 } ] }
    ]
  }
}
"#;

/// Qwen Code from install to uninstall, compared as whole outputs: the change install makes to
/// the user's `.qwen/settings.json`, Qwen Code 0.24.4's real payloads (one tool turn, with the
/// empty-prompt UserPromptSubmit after its tool batch) through the very command install
/// registered with the hook environment Qwen gives it, what the journal shows (usage from its
/// session file), and uninstall giving the file's bytes back; then the user scope.
#[test]
fn qwen_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("37eb0d32-8f93-463b-82f6-f980ef3566d9", "[QWEN-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let settings = project.join(".qwen/settings.json");
    write(&settings, QWEN_SETTINGS);
    let mut t = String::new();
    let out = env.run(&["install", "--host", "qwen", "--dry-run"]);
    common::step(&mut t, "hookjournal install --host qwen --dry-run", &out);
    let out = env.run(&["install", "--host", "qwen"]);
    common::step(&mut t, "hookjournal install --host qwen", &out);
    let out = env.run(&["tasks", "add", "Migrate the billing tables"]);
    common::step(
        &mut t,
        "hookjournal tasks add \"Migrate the billing tables\"",
        &out,
    );
    // The user's comment kept, the rest read as JSON.
    let text = fs::read_to_string(&settings).unwrap();
    assert!(text.starts_with("{\n  // mine\n"), "{text}");
    let registered: Value = serde_json::from_str(&text.replacen("  // mine\n", "", 1)).unwrap();
    let home = env.home.to_str().unwrap().to_string();
    let dir = common::fixtures().join("real-hosts/qwen-0.24.4");
    let fixture = |stem: &str| {
        fs::read_to_string(dir.join(format!("{stem}.json")))
            .unwrap()
            .replace("/home/dev/acme-api", project.to_str().unwrap())
            .replace("/home/dev", &home)
    };
    // Qwen's session file of a tool turn, where the payloads' transcript_path says.
    let transcript: Value = serde_json::from_str(&fixture("project.Stop")).unwrap();
    let transcript = Path::new(transcript["transcript_path"].as_str().unwrap());
    fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    fs::copy(dir.join("chats/tool-run.jsonl"), transcript).unwrap();
    // What Qwen Code 0.24.4 sets for every hook process (project.*.env), `CLAUDE_PROJECT_DIR`
    // and `GEMINI_PROJECT_DIR` included.
    let cli = "/opt/qwen/node_modules/@qwen-code/qwen-code/cli-entry.js";
    let p = project.to_str().unwrap();
    let hook_env = [
        ("QWEN_CODE_CLI", cli),
        ("QWEN_PROJECT_DIR", p),
        (
            "QWEN_CODE_SESSION_ID",
            "37eb0d32-8f93-463b-82f6-f980ef3566d9",
        ),
        ("CLAUDE_PROJECT_DIR", p),
        ("GEMINI_PROJECT_DIR", p),
    ];
    for (event, stem) in [
        ("SessionStart", "project.SessionStart-startup"),
        ("UserPromptSubmit", "project.UserPromptSubmit"),
        ("PreToolUse", "project.PreToolUse-run_shell_command"),
        ("PostToolUse", "project.PostToolUse-run_shell_command"),
        ("PostToolBatch", "project.PostToolBatch"),
        ("UserPromptSubmit", "project.UserPromptSubmit-empty"),
        ("Stop", "project.Stop"),
    ] {
        let group = registered["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["hooks"][0]["command"].as_str().unwrap().contains(BIN))
            .unwrap();
        let command = group["hooks"][0]["command"].as_str().unwrap();
        let out = env.run_shell(command, &project, &hook_env, fixture(stem).as_bytes());
        common::step(
            &mut t,
            &format!("({stem}) {}", env.normalize(command)),
            &out,
        );
    }
    let out = env.run(&["show", "37eb0d32"]);
    common::step(&mut t, "hookjournal show 37eb0d32", &out);
    let out = env.run(&["uninstall", "--host", "qwen"]);
    common::step(&mut t, "hookjournal uninstall --host qwen", &out);
    assert_eq!(fs::read_to_string(&settings).unwrap(), QWEN_SETTINGS);

    let out = env.run(&["install", "--host", "qwen", "--scope", "user"]);
    common::step(&mut t, "hookjournal install --host qwen --scope user", &out);
    let user = env.home.join(".qwen/settings.json");
    let installed = read_json(&user);
    assert_eq!(
        installed["hooks"].as_object().unwrap().len(),
        21,
        "{installed}"
    );
    let out = env.run(&["uninstall", "--host", "qwen", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal uninstall --host qwen --scope user",
        &out,
    );
    let out = env.run(&["install", "--host", "qwen", "--scope", "local"]);
    common::step(
        &mut t,
        "hookjournal install --host qwen --scope local",
        &out,
    );
    common::assert_expected("install-qwen.txt", &t);
}

/// OpenCode: install writes its shim plugin (this binary, the project's journal, every hook and
/// event the host table forwards), a second install changes nothing, a file of the user's at that
/// path is never overwritten nor removed, uninstall removes the shim and leaves the user's other
/// plugins; the user scope is `~/.config/opencode/plugins/`.
#[test]
fn opencode_install_writes_its_shim_and_uninstall_removes_only_it() {
    let env = TestEnv::new();
    let shim = env.project(".opencode/plugins/hookjournal.js");
    let out = env.ok(&["install", "--host", "opencode", "--dry-run"]);
    assert!(out.contains("+// hookjournal's OpenCode shim"), "{out}");
    assert!(!shim.exists());
    let out = env.ok(&["install", "--host", "opencode"]);
    assert!(
        out.contains("Wrote the hookjournal plugin (15 OpenCode hooks and events)"),
        "{out}"
    );
    let text = fs::read_to_string(&shim).unwrap();
    let settings = text
        .lines()
        .find_map(|l| l.strip_prefix("const SETTINGS = "))
        .unwrap()
        .trim_end_matches(';');
    let settings: Value = serde_json::from_str(settings).unwrap();
    assert_eq!(settings["command"], BIN);
    let journal = env.project(".hookjournal");
    assert_eq!(settings["journal"], journal.to_str().unwrap());
    assert!(journal.is_dir());
    let names: Vec<&str> = settings["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    let table: Vec<&str> = projections::hosts::OPENCODE
        .registered()
        .map(|(e, _)| e.name)
        .collect();
    assert_eq!(names, table);
    env.ok(&["install", "--host", "opencode"]);
    assert_eq!(fs::read_to_string(&shim).unwrap(), text);
    // The user's own plugin beside it stays; uninstall removes only the shim.
    let mine = env.project(".opencode/plugins/mine.js");
    write(&mine, "export const Mine = async () => ({});\n");
    let out = env.ok(&["uninstall", "--host", "opencode"]);
    assert!(out.contains("Removed the plugin"), "{out}");
    assert!(!shim.exists() && mine.exists());
    let out = env.ok(&["uninstall", "--host", "opencode"]);
    assert!(out.contains("not installed"), "{out}");
    // A file of the user's named like the shim is neither overwritten nor removed.
    write(&shim, "export const Other = async () => ({});\n");
    assert!(!env.run(&["install", "--host", "opencode"]).status.success());
    assert!(!env
        .run(&["uninstall", "--host", "opencode"])
        .status
        .success());
    assert_eq!(
        fs::read_to_string(&shim).unwrap(),
        "export const Other = async () => ({});\n"
    );
    // The user scope: every project's own journal, found from where OpenCode runs.
    let out = env.ok(&["install", "--host", "opencode", "--scope", "user"]);
    let user = env.home(".config/opencode/plugins/hookjournal.js");
    assert!(out.contains(user.to_str().unwrap()), "{out}");
    assert!(!fs::read_to_string(&user).unwrap().contains("\"journal\""));
    env.ok(&["uninstall", "--host", "opencode", "--scope", "user"]);
    assert!(!user.exists());
    let out = env.run(&["install", "--host", "opencode", "--scope", "local"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The user's own Crush config: plain JSON (Crush refuses a `crush.json` with comments), a
/// provider and a hook of their own.
const CRUSH_SETTINGS: &str = r#"{
  "$schema": "https://charm.land/crush.json",
  "providers": {
    "local": { "type": "openai-compat", "base_url": "http://127.0.0.1:8080/v1", "models": [] }
  },
  "hooks": {
    "PreToolUse": [
      { "matcher": "^bash$", "command": "./hooks/no-rm-rf.sh" }
    ]
  }
}
"#;

/// The PreToolUse payloads Crush's source builds (`crush-0.96.1/payloads`) in project `p`, then
/// four more reads of the same session: the tenth call is due the reminder.
fn crush_calls(p: &str) -> Vec<(String, String)> {
    let dir = common::fixtures().join("real-hosts/crush-0.96.1/payloads");
    let mut payloads: Vec<(String, String)> = [
        "01.PreToolUse-view",
        "02.PreToolUse-bash",
        "03.PreToolUse-edit",
        "04.PreToolUse-write",
        "05.PreToolUse-multiedit",
        "06.PreToolUse-mcp",
    ]
    .iter()
    .map(|stem| {
        let text = fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap();
        (stem.to_string(), text.replace("/work/proj", p))
    })
    .collect();
    let first = payloads[0].1.clone();
    for i in 7..=10 {
        let text = first.replace("notes.txt", &format!("f{i}.txt"));
        payloads.push((format!("{i:02}.PreToolUse-view"), text));
    }
    payloads
}

/// Crush from install to uninstall, compared as whole outputs: the change install makes to the
/// user's `crush.json`, the PreToolUse payloads Crush's source builds (Crush itself cannot be
/// installed here: tests/fixtures/real-hosts/crush-0.96.1/FACTS.md) through the very command
/// install registered with the environment Crush gives its hooks, the tenth call answered with
/// the task reminder in Crush's envelope, what the journal shows, and uninstall giving the file's
/// bytes back; then the user scope.
#[test]
fn crush_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("5b1c7e2a-9d40-4f3e-8a61-0c2d4e6f8a10", "[CRUSH-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let settings = project.join("crush.json");
    write(&settings, CRUSH_SETTINGS);
    let mut t = String::new();
    let out = env.run(&["install", "--host", "crush", "--dry-run"]);
    common::step(&mut t, "hookjournal install --host crush --dry-run", &out);
    let out = env.run(&["install", "--host", "crush"]);
    common::step(&mut t, "hookjournal install --host crush", &out);
    let out = env.run(&["tasks", "add", "Cut the release"]);
    common::step(&mut t, "hookjournal tasks add \"Cut the release\"", &out);
    let registered = read_json(&settings);
    let handlers = registered["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(handlers.len(), 2, "{registered}");
    let command = handlers[1]["command"].as_str().unwrap().to_string();
    let p = project.to_str().unwrap();
    let payloads = crush_calls(p);
    for (stem, payload) in &payloads {
        let v: Value = serde_json::from_str(payload).unwrap();
        let tool = v["tool_name"].as_str().unwrap();
        // What Crush's hook runner sets for every hook process (payloads/PreToolUse.env).
        let mut hook_env = vec![
            ("CRUSH", "1"),
            ("AGENT", "crush"),
            ("AI_AGENT", "crush"),
            ("CRUSH_EVENT", "PreToolUse"),
            ("CRUSH_TOOL_NAME", tool),
            ("CRUSH_SESSION_ID", "5b1c7e2a-9d40-4f3e-8a61-0c2d4e6f8a10"),
            ("CRUSH_CWD", p),
            ("CRUSH_PROJECT_DIR", p),
        ];
        if let Some(path) = v["tool_input"]["file_path"].as_str() {
            hook_env.push(("CRUSH_TOOL_INPUT_FILE_PATH", path));
        }
        if let Some(cmd) = v["tool_input"]["command"].as_str() {
            hook_env.push(("CRUSH_TOOL_INPUT_COMMAND", cmd));
        }
        let out = env.run_shell(&command, &project, &hook_env, payload.as_bytes());
        common::step(
            &mut t,
            &format!("({stem}) {}", env.normalize(&command)),
            &out,
        );
    }
    let out = env.run(&["show", "5b1c7e2a"]);
    common::step(&mut t, "hookjournal show 5b1c7e2a", &out);
    let out = env.run(&["uninstall", "--host", "crush"]);
    common::step(&mut t, "hookjournal uninstall --host crush", &out);
    assert_eq!(fs::read_to_string(&settings).unwrap(), CRUSH_SETTINGS);

    let out = env.run(&["install", "--host", "crush", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal install --host crush --scope user",
        &out,
    );
    let user = env.home.join(".config/crush/crush.json");
    let installed = read_json(&user);
    assert_eq!(
        installed["hooks"]["PreToolUse"][0]["name"], "hookjournal",
        "{installed}"
    );
    let out = env.run(&["uninstall", "--host", "crush", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal uninstall --host crush --scope user",
        &out,
    );
    let out = env.run(&["install", "--host", "crush", "--scope", "local"]);
    common::step(
        &mut t,
        "hookjournal install --host crush --scope local",
        &out,
    );
    common::assert_expected("install-crush.txt", &t);
}

/// pi: install writes its shim extension (this binary, the project's journal, every event the
/// host table forwards) beside the user's own extensions, and a second install changes nothing;
/// the shim's command answers pi 0.73.1's recorded events (the startup tasks with the first
/// prompt, the restore with the prompt after the compaction); uninstall removes only the shim, and
/// never a file of the user's at its path; the user scope is `~/.pi/agent/extensions/`, or
/// `$PI_CODING_AGENT_DIR/extensions/`.
#[test]
fn pi_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("01a2155e-40b1-7498-a1bd-e0f62977d990", "[PI-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let mine = project.join(".pi/extensions/mine.ts");
    write(&mine, "export default function (pi) {}\n");
    let shim = project.join(".pi/extensions/hookjournal.ts");
    let mut t = String::new();
    for args in [
        &["install", "--host", "pi", "--dry-run"][..],
        &["install", "--host", "pi"],
        &["tasks", "add", "Migrate the billing tables"],
    ] {
        let out = env.run(args);
        common::step(&mut t, &format!("hookjournal {}", args.join(" ")), &out);
    }
    let text = fs::read_to_string(&shim).unwrap();
    let settings: Value = serde_json::from_str(
        text.lines()
            .find_map(|l| l.strip_prefix("const SETTINGS: any = "))
            .unwrap()
            .trim_end_matches(';'),
    )
    .unwrap();
    let names: Vec<&str> = settings["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    let table: Vec<&str> = projections::hosts::PI
        .registered()
        .map(|(e, _)| e.name)
        .collect();
    assert_eq!(names, table);
    env.run(&["install", "--host", "pi"]);
    assert_eq!(fs::read_to_string(&shim).unwrap(), text);
    pi_shim_answers(&env, &settings, &mut t);
    for args in [
        &["show", "01a2155e"][..],
        &["uninstall", "--host", "pi", "--dry-run"],
        &["uninstall", "--host", "pi"],
        &["uninstall", "--host", "pi"],
    ] {
        let out = env.run(args);
        common::step(&mut t, &format!("hookjournal {}", args.join(" ")), &out);
    }
    assert!(!shim.exists() && mine.exists());
    // A file of the user's named like the shim is neither overwritten nor removed.
    write(&shim, "export default function (pi) {}\n");
    for args in [
        &["install", "--host", "pi"][..],
        &["uninstall", "--host", "pi"],
    ] {
        let out = env.run(args);
        common::step(&mut t, &format!("hookjournal {}", args.join(" ")), &out);
    }
    assert_eq!(
        fs::read_to_string(&shim).unwrap(),
        "export default function (pi) {}\n"
    );
    // The user scope: every project's own journal, found from where pi runs.
    let out = env.run(&["install", "--host", "pi", "--scope", "user"]);
    common::step(&mut t, "hookjournal install --host pi --scope user", &out);
    let user = env.home.join(".pi/agent/extensions/hookjournal.ts");
    assert!(!fs::read_to_string(&user).unwrap().contains("\"journal\""));
    let out = env.run(&["uninstall", "--host", "pi", "--scope", "user"]);
    common::step(&mut t, "hookjournal uninstall --host pi --scope user", &out);
    assert!(!user.exists());
    let agent_dir = env.root().join("pi-agent");
    env.set_env("PI_CODING_AGENT_DIR", agent_dir.to_str().unwrap());
    let out = env.run(&["install", "--host", "pi", "--scope", "user"]);
    common::step(
        &mut t,
        "PI_CODING_AGENT_DIR=$TEST_ENV/pi-agent hookjournal install --host pi --scope user",
        &out,
    );
    assert!(agent_dir.join("extensions/hookjournal.ts").exists());
    let out = env.run(&["install", "--host", "pi", "--scope", "local"]);
    common::step(&mut t, "hookjournal install --host pi --scope local", &out);
    common::assert_expected("install-pi.txt", &t);
}

/// Runs the command the shim runs (`settings`: its settings line) for pi 0.73.1's recorded events
/// in the project, each step's output into `t`.
fn pi_shim_answers(env: &common::TestEnvironment, settings: &Value, t: &mut String) {
    let project = env.project.clone();
    // What the shim runs for each event, with pi's recorded payloads.
    let command = format!(
        "'{}' hook --host pi --journal '{}'",
        settings["command"].as_str().unwrap(),
        settings["journal"].as_str().unwrap()
    );
    let home = env.home.to_str().unwrap().to_string();
    let dir = common::fixtures().join("real-hosts/pi-0.73.1/shim");
    for stem in [
        "01.session_start",
        "02.before_agent_start",
        "03.tool_call",
        "04.tool_result",
        "09.turn_end",
        "10.agent_end",
        "11.session_shutdown",
        "12.session_start",
        "13.session_before_compact",
        "14.session_compact",
        "15.before_agent_start",
    ] {
        let payload = fs::read_to_string(dir.join(format!("{stem}.json")))
            .unwrap()
            .replace("/home/dev/acme-api", project.to_str().unwrap())
            .replace("/home/dev", &home);
        let out = env.run_shell(&command, &project, &[], payload.as_bytes());
        let shown = format!("({stem}) {}", env.normalize(&command));
        t.push_str(&format!("$ {shown}\n{}\n", out.render()));
    }
}

/// The user's own Droid settings: comments, a custom model and a hook of their own.
const DROID_SETTINGS: &str = r#"// mine
{
  "customModels": [
    { "model": "gpt-4.1", "baseUrl": "http://127.0.0.1:8000/v1", "apiKey": "x", "provider": "generic-chat-completion-api" }
  ],
  /* my own */
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "say done", "timeout": 5 } ] }
    ]
  }
}
"#;

/// Factory Droid from install to uninstall, compared as whole outputs: the change install makes
/// to the user's `.factory/settings.json`, Droid 0.225.2's real payloads (a tool turn) through
/// the very command install registered, with the hook environment Droid gives it, what the
/// journal shows (usage from its session file), and uninstall giving the file's bytes back; then
/// the user scope, and the local scope Droid does not have.
#[test]
fn droid_from_install_to_uninstall() {
    let sid = "e5a8d496-cf7c-44e6-bdaa-8c3360ca2958";
    let mut env = common::TestEnvironment::new();
    env.redact(sid, "[DROID-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let settings = project.join(".factory/settings.json");
    write(&settings, DROID_SETTINGS);
    let mut t = String::new();
    let out = env.run(&["install", "--host", "droid", "--dry-run"]);
    common::step(&mut t, "hookjournal install --host droid --dry-run", &out);
    let out = env.run(&["install", "--host", "droid"]);
    common::step(&mut t, "hookjournal install --host droid", &out);
    let out = env.run(&["tasks", "add", "Migrate the billing tables"]);
    common::step(
        &mut t,
        "hookjournal tasks add \"Migrate the billing tables\"",
        &out,
    );
    // The user's comments kept, the rest read as JSON.
    let text = fs::read_to_string(&settings).unwrap();
    assert!(text.starts_with("// mine\n{\n"), "{text}");
    assert!(text.contains("  /* my own */\n"), "{text}");
    let json = text
        .replacen("// mine\n", "", 1)
        .replacen("/* my own */", "", 1);
    let registered: Value = serde_json::from_str(&json).unwrap();
    let home = env.home.to_str().unwrap().to_string();
    let dir = common::fixtures().join("real-hosts/droid-0.225.1");
    let fixture = |stem: &str| {
        fs::read_to_string(dir.join(format!("{stem}.json")))
            .unwrap()
            .replace("/home/dev/acme-api", project.to_str().unwrap())
            .replace("-home-dev-acme-api", "-project")
            .replace("/home/dev", &home)
    };
    // Droid's session files, where the payloads' transcript_path says.
    let transcript: Value = serde_json::from_str(&fixture("Stop")).unwrap();
    let transcript = Path::new(transcript["transcript_path"].as_str().unwrap());
    fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    // Its log as it stood in turn one, before the compaction its threshold started.
    let log = fs::read_to_string(dir.join(format!("sessions/{sid}.jsonl"))).unwrap();
    let turn_one: String = log
        .lines()
        .take_while(|l| !l.contains("\"compaction_state\""))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(transcript, turn_one).unwrap();
    fs::copy(
        dir.join(format!("sessions/{sid}.settings.json")),
        transcript.with_extension("settings.json"),
    )
    .unwrap();
    // What Droid 0.225.2 sets for every hook process (the fixtures' `.env`).
    let p = project.to_str().unwrap();
    let hook_env = [
        ("DROID_PROJECT_DIR", p),
        ("FACTORY_PROJECT_DIR", p),
        ("CLAUDE_PROJECT_DIR", p),
        ("DROID_PLUGIN_ROOT", "/PLUGIN_ROOT_NOT_EXPANDED_ERROR"),
    ];
    for (event, stem) in [
        ("SessionStart", "SessionStart-startup"),
        ("UserPromptSubmit", "UserPromptSubmit"),
        ("PreToolUse", "PreToolUse-Read"),
        ("PostToolUse", "PostToolUse-Read"),
        ("PreToolUse", "PreToolUse-Create"),
        ("PostToolUse", "PostToolUse-Create"),
        ("Stop", "Stop"),
    ] {
        let group = registered["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["hooks"][0]["command"].as_str().unwrap().contains(BIN))
            .unwrap();
        let command = group["hooks"][0]["command"].as_str().unwrap();
        let out = env.run_shell(command, &project, &hook_env, fixture(stem).as_bytes());
        common::step(
            &mut t,
            &format!("({stem}) {}", env.normalize(command)),
            &out,
        );
    }
    let out = env.run(&["show", "e5a8d496"]);
    common::step(&mut t, "hookjournal show e5a8d496", &out);
    let out = env.run(&["uninstall", "--host", "droid"]);
    common::step(&mut t, "hookjournal uninstall --host droid", &out);
    assert_eq!(fs::read_to_string(&settings).unwrap(), DROID_SETTINGS);

    let out = env.run(&["install", "--host", "droid", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal install --host droid --scope user",
        &out,
    );
    let user = env.home.join(".factory/settings.json");
    let installed = read_json(&user);
    assert_eq!(
        installed["hooks"].as_object().unwrap().len(),
        9,
        "{installed}"
    );
    let out = env.run(&["uninstall", "--host", "droid", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal uninstall --host droid --scope user",
        &out,
    );
    let out = env.run(&["install", "--host", "droid", "--scope", "local"]);
    common::step(
        &mut t,
        "hookjournal install --host droid --scope local",
        &out,
    );
    common::assert_expected("install-droid.txt", &t);
}

/// Cline CLI from install to uninstall, compared as whole outputs: install writes one script per
/// event in `.clinerules/hooks/` and leaves the user's own hook file of an event's name as it is
/// (saying that event is not journaled); Cline 3.0.65's real payloads run through the script it
/// wrote, with the environment Cline gives its hooks; what the journal shows; uninstall removes
/// only its own files (the directory is back byte for byte); then the user scope.
#[test]
fn cline_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("1795654254352_3i7th", "[CLINE-SESSION]");
    let project = env.project.clone();
    std::fs::create_dir(project.join(".git")).unwrap();
    let hooks = project.join(".clinerules/hooks");
    let mine = hooks.join("TaskComplete");
    write(&mine, "#!/bin/sh\nsay done\n");
    let mut t = String::new();
    let out = env.run(&["install", "--host", "cline", "--dry-run"]);
    common::step(&mut t, "hookjournal install --host cline --dry-run", &out);
    assert!(!hooks.join("TaskStart").exists());
    let out = env.run(&["install", "--host", "cline"]);
    common::step(&mut t, "hookjournal install --host cline", &out);
    let out = env.run(&["install", "--host", "cline"]);
    common::step(&mut t, "hookjournal install --host cline (again)", &out);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "#!/bin/sh\nsay done\n");
    let out = env.run(&["tasks", "add", "Migrate the billing tables"]);
    common::step(
        &mut t,
        "hookjournal tasks add \"Migrate the billing tables\"",
        &out,
    );
    let dir = common::fixtures().join("real-hosts/cline-3.0.65/payloads");
    let p = project.to_str().unwrap();
    let fixture = |stem: &str| {
        fs::read_to_string(dir.join(format!("{stem}.json")))
            .unwrap()
            .replace("/tmp/clprobe/proj", p)
    };
    let launch = format!(
        r#"{{"launcher":"/opt/cline/bin/cline","connectArgsPrefix":["connect"],"cwd":"{p}"}}"#
    );
    let hook_env = [
        ("CLINE_BUILD_ENV", "production"),
        ("CLINE_CONNECTOR_CLI_LAUNCH", launch.as_str()),
    ];
    for (file, stem) in [
        ("TaskStart", "01.TaskStart"),
        ("PreToolUse", "02.PreToolUse"),
        ("PostToolUse", "03.PostToolUse"),
    ] {
        let script = hooks.join(file);
        let out = env.run_shell(
            &format!("'{}'", script.display()),
            &project,
            &hook_env,
            fixture(stem).as_bytes(),
        );
        common::step(&mut t, &format!("({stem}) .clinerules/hooks/{file}"), &out);
    }
    let out = env.run(&["show", "1795654254352_3i7th"]);
    common::step(&mut t, "hookjournal show 1795654254352_3i7th", &out);
    let out = env.run(&["uninstall", "--host", "cline", "--dry-run"]);
    common::step(&mut t, "hookjournal uninstall --host cline --dry-run", &out);
    let out = env.run(&["uninstall", "--host", "cline"]);
    common::step(&mut t, "hookjournal uninstall --host cline", &out);
    let left: Vec<_> = fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["TaskComplete"]);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "#!/bin/sh\nsay done\n");

    let out = env.run(&["install", "--host", "cline", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal install --host cline --scope user",
        &out,
    );
    let user = env.home.join(".cline/hooks");
    assert_eq!(fs::read_dir(&user).unwrap().count(), 9);
    let out = env.run(&["uninstall", "--host", "cline", "--scope", "user"]);
    common::step(
        &mut t,
        "hookjournal uninstall --host cline --scope user",
        &out,
    );
    assert!(!user.exists());
    let out = env.run(&["install", "--host", "cline", "--scope", "local"]);
    common::step(
        &mut t,
        "hookjournal install --host cline --scope local",
        &out,
    );
    common::assert_expected("install-cline.txt", &t);
}

/// An agent of the user's own in Kiro CLI's format, with a hook of theirs.
const KIRO_AGENT: &str = r#"{
  "name": "reviewer",
  "description": "Reviews diffs",
  "tools": ["fs_read", "execute_bash"],
  "hooks": {
    "preToolUse": [{"matcher": "execute_bash", "command": "guard.sh", "timeout_ms": 5000}]
  }
}
"#;

/// Kiro CLI (from its source, not run here): install writes an agent of hookjournal's own
/// (`name`, every tool, the five events with `timeout_ms` and no matcher); the command it
/// registers journals the payloads written from Kiro's serializer as `kiro` and answers
/// `agentSpawn` with plain text; doctor names a `cache_ttl_seconds` on hookjournal's entry;
/// uninstall removes the file it created, and leaves a user's agent file as it was.
#[test]
fn kiro_from_install_to_uninstall() {
    let env = common::TestEnvironment::new();
    let project = env.project.clone();
    let agent = project.join(".kiro/agents/hookjournal.json");
    let mut t = String::new();
    env.step(&mut t, &["install", "--host", "kiro"]);
    t.push_str(&format!(
        "$ cat .kiro/agents/hookjournal.json\n{}\n",
        env.normalize(&fs::read_to_string(&agent).unwrap())
    ));
    let registered = read_json(&agent);
    assert_eq!(registered["name"], "hookjournal");
    assert_eq!(registered["tools"], json!(["*"]));
    let entry = &registered["hooks"]["preToolUse"][0];
    assert_eq!(entry["timeout_ms"], 10000, "{registered}");
    assert!(entry.get("matcher").is_none() && entry.get("cache_ttl_seconds").is_none());
    let command = entry["command"].as_str().unwrap().to_string();
    env.step(&mut t, &["tasks", "add", "Cut the release"]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/documented/kiro");
    let mut stems: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    stems.sort();
    let p = project.to_str().unwrap();
    for path in &stems {
        let payload = fs::read_to_string(path)
            .unwrap()
            .replace("/home/dev/acme-api", p);
        // Kiro sets only USER_PROMPT for a hook (at its prompt events).
        let out = env.run_shell(&command, &project, &[], payload.as_bytes());
        let stem = path.file_stem().unwrap().to_string_lossy();
        common::step(
            &mut t,
            &format!("({stem}) {}", env.normalize(&command)),
            &out,
        );
    }
    env.step(&mut t, &["sessions"]);
    // A cached hook does not run: doctor says so.
    let cached = fs::read_to_string(&agent).unwrap().replacen(
        "\"timeout_ms\": 10000",
        "\"timeout_ms\": 10000, \"cache_ttl_seconds\": 60",
        1,
    );
    assert!(cached.contains("cache_ttl_seconds"), "{cached}");
    write(&agent, &cached);
    env.step(&mut t, &["doctor"]);
    env.step(&mut t, &["uninstall", "--host", "kiro"]);
    // The agent install wrote holds nothing else (the TTL was on hookjournal's entry): it goes.
    assert!(!agent.exists(), "the agent install wrote is removed");
    // A user's own agent file at that path: its keys kept, and given back as it was.
    write(&agent, KIRO_AGENT);
    env.step(&mut t, &["install", "--host", "kiro"]);
    let mine = read_json(&agent);
    assert_eq!(mine["name"], "reviewer");
    assert_eq!(mine["hooks"]["preToolUse"].as_array().unwrap().len(), 2);
    env.step(&mut t, &["uninstall", "--host", "kiro"]);
    assert_eq!(fs::read_to_string(&agent).unwrap(), KIRO_AGENT);
    common::assert_expected("install-kiro.txt", &t);
}

/// Amp (from its plugin API, not run here): install writes the shim plugin (this binary, every
/// event the host table forwards) and a second install changes nothing; the payloads written
/// from Amp's types, as the shim forwards them, are journaled as `amp` and its first prompt gets
/// the open tasks; doctor finds the shim; uninstall removes it, and never a plugin of the user's
/// own at that path.
#[test]
fn amp_from_install_to_uninstall() {
    let mut env = common::TestEnvironment::new();
    env.redact("T-5f0c8e2a-61d4-4b7e-9a3c-2d8f4e6a1b90", "[AMP-THREAD]");
    let project = env.project.clone();
    let shim = project.join(".amp/plugins/hookjournal.ts");
    let mut t = String::new();
    env.step(&mut t, &["install", "--host", "amp"]);
    let first = fs::read_to_string(&shim).unwrap();
    assert!(first.starts_with("// hookjournal's Amp shim"));
    env.step(&mut t, &["install", "--host", "amp"]);
    assert_eq!(fs::read_to_string(&shim).unwrap(), first);
    env.step(&mut t, &["tasks", "add", "Cut the release"]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/documented/amp");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let p = project.to_str().unwrap();
    let command = format!("\"{BIN}\" hook --host amp");
    for path in &paths {
        let payload = fs::read_to_string(path)
            .unwrap()
            .replace("/home/dev/acme-api", p);
        let out = env.run_shell(&command, &project, &[], payload.as_bytes());
        let stem = path.file_stem().unwrap().to_string_lossy();
        common::step(
            &mut t,
            &format!("({stem}) {}", env.normalize(&command)),
            &out,
        );
    }
    env.step(&mut t, &["sessions"]);
    env.step(&mut t, &["uninstall", "--host", "amp"]);
    assert!(!shim.exists());
    write(&shim, "export default function (amp) {}\n");
    env.step(&mut t, &["install", "--host", "amp"]);
    env.step(&mut t, &["uninstall", "--host", "amp"]);
    assert_eq!(
        fs::read_to_string(&shim).unwrap(),
        "export default function (amp) {}\n"
    );
    common::assert_expected("install-amp.txt", &t);
}
