//! hookjournal's Claude Code plugin (`plugins/hookjournal`, listed by the marketplace in
//! `.claude-plugin/marketplace.json`): its `hooks/hooks.json` registers exactly what
//! `install --host claude` registers (the one host table; `HOOKJOURNAL_BLESS=1` regenerates it),
//! its launcher answers nothing and says so once when no binary is found, `claude plugin validate
//! --strict` passes, and the real Claude Code installs it from this checkout into a fresh HOME,
//! runs a scripted session against the loopback model server with every invocation journaled and
//! the restore reaching the model, then uninstalls it leaving nothing behind.
//!
//! The real-client tests need Claude Code (`bash .ci/install-claude-code.sh`;
//! `HOOKJOURNAL_REQUIRE_CLAUDE=1` makes its absence a failure, as CI sets it).

mod common;
use common::harness::{missing, Ran};
#[path = "claude_code/server.rs"]
#[allow(dead_code)]
mod server;
#[path = "claude_code/support.rs"]
#[allow(dead_code)]
mod support;

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const PLUGIN_COMMAND: &str = "\"${CLAUDE_PLUGIN_ROOT}/bin/hookjournal-hook\"";

fn root() -> PathBuf {
    support::workspace_root()
}

/// hooks.json as the plugin must have it: `install --host claude`'s registration, the command
/// being the plugin's launcher.
fn expected_hooks_json() -> String {
    let env = common::TestEnvironment::new();
    let out = env.run(&["install", "--scope", "local"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let text = fs::read_to_string(env.project.join(".claude/settings.local.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for groups in v["hooks"].as_object_mut().unwrap().values_mut() {
        for g in groups.as_array_mut().unwrap() {
            for h in g["hooks"].as_array_mut().unwrap() {
                h["command"] = PLUGIN_COMMAND.into();
            }
        }
    }
    let doc = json!({
        "description": "hookjournal journals every hook event (generated from hookjournal's host table: tests/claude_plugin.rs)",
        "hooks": v["hooks"],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap();
    s.push('\n');
    s
}

fn plugin_hooks_json_registers_what_install_registers() {
    let want = expected_hooks_json();
    let path = root().join("plugins/hookjournal/hooks/hooks.json");
    if std::env::var_os("HOOKJOURNAL_BLESS").is_some_and(|v| v == "1") {
        fs::write(&path, &want).unwrap();
    }
    let have = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} differs from what `install --host claude` registers (HOOKJOURNAL_BLESS=1 regenerates it):\n{}",
        path.display(),
        similar::TextDiff::from_lines(&have, &want).unified_diff()
    );
}

/// Runs the launcher with nothing to find: no PATH hookjournal, an empty HOME.
fn run_launcher(home: &Path, stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new("sh")
        .arg(root().join("plugins/hookjournal/bin/hookjournal-hook"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        // The journal goes where the hook runs: never into the source tree.
        .current_dir(home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn launcher_without_a_binary_answers_nothing_and_says_so_once() {
    let home = tempfile::tempdir().unwrap();
    let payload = r#"{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}"#;
    let first = run_launcher(home.path(), payload);
    assert!(first.status.success());
    let said: Value = serde_json::from_slice(&first.stdout).expect("one JSON line");
    let line = said["systemMessage"].as_str().unwrap();
    assert!(line.contains("no hookjournal binary found"), "{line}");
    assert!(first.stderr.is_empty());
    for _ in 0..2 {
        let again = run_launcher(home.path(), payload);
        assert!(again.status.success());
        assert!(again.stdout.is_empty() && again.stderr.is_empty());
    }
    // With a binary found, the hook runs; without one later, it is said once again.
    let bin = home.path().join(".cargo/bin/hookjournal");
    fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(common::BIN, &bin).unwrap();
    let found = run_launcher(home.path(), "not json");
    assert!(found.status.success(), "{found:?}");
    fs::remove_file(&bin).unwrap();
    assert!(!run_launcher(home.path(), payload).stdout.is_empty());
}

fn claude() -> Result<PathBuf, String> {
    // The plugin system as the issue measured it: Claude Code 2.1.330, unless told otherwise.
    if std::env::var_os("HOOKJOURNAL_CLAUDE_VERSION").is_none() {
        std::env::set_var("HOOKJOURNAL_CLAUDE_VERSION", "2.1.330");
    }
    support::find_claude().map(|(p, _)| p)
}

fn claude_cmd(claude: &Path, home: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(claude);
    cmd.current_dir(cwd).env_clear();
    for k in ["PATH", "LANG", "LC_ALL"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    cmd.env("HOME", home)
        .env("TMPDIR", common::client::private_tmp(home))
        .env("TERM", "dumb")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    cmd
}

fn plugin(claude: &Path, home: &Path, args: &[&str]) -> support::Outcome {
    let out = support::run_captured(
        claude_cmd(claude, home, home).arg("plugin").args(args),
        Duration::from_secs(60),
    )
    .expect("spawn claude");
    assert!(out.ok(), "claude plugin {args:?}: {}", out.describe());
    out
}

fn claude_plugin_validate_strict_passes() -> Ran {
    let claude = match claude() {
        Ok(c) => c,
        Err(why) => {
            return missing(
                "HOOKJOURNAL_REQUIRE_CLAUDE",
                format!("real Claude Code not installed: {why}"),
            )
        }
    };
    let home = tempfile::tempdir().unwrap();
    for dir in [root(), root().join("plugins/hookjournal")] {
        let out = plugin(
            &claude,
            home.path(),
            &["validate", "--strict", dir.to_str().unwrap()],
        );
        println!("{}", out.stdout);
    }
    Ok(())
}

fn real_claude_code_installs_the_plugin_journals_every_hook_and_uninstalls_cleanly() -> Ran {
    let claude = match claude() {
        Ok(c) => c,
        Err(why) => {
            return missing(
                "HOOKJOURNAL_REQUIRE_CLAUDE",
                format!("real Claude Code not installed: {why}"),
            )
        }
    };
    let tmp = tempfile::Builder::new()
        .prefix("hj-plugin-")
        .tempdir()
        .unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (home, project, calls) = (base.join("home"), base.join("project"), base.join("calls"));
    for d in [&home, &calls, &project.join(".claude/agents")] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(
        project.join(".claude/agents/dev.md"),
        "---\nname: dev\ndescription: Implements the tasks of this project.\n---\nYou implement tasks.\n",
    )
    .unwrap();
    // A recording hook of the user's own for every event the plugin registers: each invocation
    // of the plugin's hook must have its event journaled.
    let recorder = base.join("record.sh");
    fs::write(
        &recorder,
        format!("#!/bin/sh\nf=$(mktemp '{}/'$(date +%s%N)-XXXXXX) || exit 0\ncat > \"$f\"\nmv \"$f\" \"$f.json\"\nexit 0\n", calls.display()),
    )
    .unwrap();
    let plugin_hooks: Value = serde_json::from_str(
        &fs::read_to_string(root().join("plugins/hookjournal/hooks/hooks.json")).unwrap(),
    )
    .unwrap();
    let mut hooks = serde_json::Map::new();
    for (event, groups) in plugin_hooks["hooks"].as_object().unwrap() {
        let mut g = groups[0].clone();
        g["hooks"][0]["command"] = format!("sh '{}'", recorder.display()).into();
        hooks.insert(event.clone(), json!([g]));
    }
    fs::write(
        project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&json!({ "hooks": hooks })).unwrap(),
    )
    .unwrap();

    // The marketplace from this checkout, the plugin from it, into the fresh HOME.
    let checkout = root();
    plugin(
        &claude,
        &home,
        &["marketplace", "add", checkout.to_str().unwrap()],
    );
    plugin(&claude, &home, &["install", "hookjournal@hookjournal"]);
    let listed = plugin(&claude, &home, &["list"]);
    println!("claude plugin list:\n{}", listed.stdout);

    // A scripted session: a tool turn, /compact, "what next?".
    let server = server::ModelServer::start(&project).expect("model server");
    let turn = |prompt: &str, resume: Option<&str>| {
        let mut cmd = claude_cmd(&claude, &home, &project);
        cmd.arg("-p").arg(prompt);
        match resume {
            Some(sid) => cmd.args(["--resume", sid]),
            None => cmd.args(["--agent", "dev"]),
        };
        cmd.args([
            "--allowedTools",
            "TaskCreate TaskUpdate Write Edit Bash Read",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--output-format",
            "json",
        ])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "dummy-key-for-the-local-model-server")
        .env("HOOKJOURNAL_BIN", common::BIN)
        .env("SHELL", "/bin/sh");
        let out = support::run_captured(&mut cmd, Duration::from_secs(90)).expect("spawn claude");
        assert!(out.ok(), "claude -p {prompt:?}: {}", out.describe());
        support::parse_result(&out.stdout).expect("a result")
    };
    server.set_phase(0);
    let prompt = format!(
        "{} Create two tasks, then write and edit {}.",
        server::START_MARKER,
        server::NOTES_FILE
    );
    let first = turn(&prompt, None);
    let sid = first["session_id"].as_str().unwrap().to_string();
    support::settle(&calls, Duration::from_secs(3));
    server.set_phase(1);
    turn("/compact", Some(&sid));
    support::settle(&calls, Duration::from_secs(3));
    server.set_phase(2);
    turn(server::NEXT_PROMPT, Some(&sid));
    support::settle(&calls, Duration::from_secs(3));
    server.set_phase(3);

    // Every invocation journaled: the recorder's payloads and the journal's Hook events agree.
    let recorded = support::read_recorded(&calls);
    let journal = project.join(".hookjournal");
    let events = common::events(&journal);
    let hooks_journaled: Vec<&Value> = events.iter().filter(|e| e["kind"] == "Hook").collect();
    let mut by_event = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for r in &recorded {
        by_event.entry(r.event()).or_default().0 += 1;
    }
    for e in &hooks_journaled {
        let name = e["name"]
            .as_str()
            .or(e["hook"].as_str())
            .unwrap_or("?")
            .to_string();
        by_event.entry(name).or_default().1 += 1;
    }
    println!(
        "plugin session: {} hook invocations recorded, {} journaled; by event (recorded, journaled): {by_event:?}",
        recorded.len(),
        hooks_journaled.len()
    );
    assert!(!recorded.is_empty());
    assert_eq!(hooks_journaled.len(), recorded.len(), "{by_event:?}");
    // Byte for byte, but for the line end Claude Code may add after the JSON.
    let trim = |b: &[u8]| b.trim_ascii_end().to_vec();
    let mut want: Vec<Vec<u8>> = recorded.iter().map(|r| trim(&r.raw)).collect();
    let mut have: Vec<Vec<u8>> = hooks_journaled
        .iter()
        .map(|e| trim(&common::payload_bytes(e)))
        .collect();
    want.sort();
    have.sort();
    let same = want.iter().filter(|w| have.contains(w)).count();
    if same != want.len() {
        let w = want.iter().find(|w| !have.contains(w)).unwrap();
        println!(
            "recorded, not journaled byte for byte: {}",
            String::from_utf8_lossy(&w[..w.len().min(400)])
        );
        let h = have.iter().find(|h| !want.contains(h)).unwrap();
        println!(
            "journaled: {}",
            String::from_utf8_lossy(&h[..h.len().min(400)])
        );
    }
    assert!(
        want == have,
        "the journaled payloads differ from the recorded ones ({same} of {} the same)",
        want.len()
    );

    // The restore reached the model: a request after the compaction carries it.
    let restored = server
        .exchanges()
        .iter()
        .filter(|x| x.phase == 2 && x.is_messages())
        .any(|x| String::from_utf8_lossy(&x.body).contains("hookjournal: state of session"));
    assert!(
        restored,
        "no request after /compact carries hookjournal's restore text"
    );

    // Uninstalled, nothing of the plugin is left.
    plugin(&claude, &home, &["uninstall", "hookjournal@hookjournal"]);
    plugin(&claude, &home, &["marketplace", "remove", "hookjournal"]);
    let listed = plugin(&claude, &home, &["list"]);
    assert!(!listed.stdout.contains("hookjournal"), "{}", listed.stdout);
    // Claude Code 2.1.330 keeps an uninstalled plugin's files in its own cache
    // (`~/.claude/plugins/cache/<marketplace>/<plugin>/<version>`, measured): not registered, never
    // run; every other trace (settings, installed and known lists) must be gone.
    let cache = home.join(".claude/plugins/cache");
    println!(
        "after uninstall, Claude Code's plugin cache still holds: {}",
        cache.join("hookjournal").exists()
    );
    let mut left = Vec::new();
    find_mentions(&home.join(".claude"), &mut left);
    left.retain(|p| !p.starts_with(&cache));
    println!("after uninstall, files naming hookjournal under ~/.claude: {left:?}");
    assert!(left.is_empty(), "{left:?}");
    Ok(())
}

/// Files and directories under `dir` whose name or (settings/plugin JSON) content names the
/// plugin; transcripts and session state are the session's own, not the plugin's.
fn find_mentions(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            "projects"
                | "tasks"
                | "todos"
                | "shell-snapshots"
                | "session-env"
                | "statsig"
                | "file-history"
        ) {
            continue;
        }
        if name.contains("hookjournal") {
            out.push(p.clone());
        }
        if p.is_dir() {
            find_mentions(&p, out);
        } else if name.ends_with(".json")
            && fs::read_to_string(&p)
                .is_ok_and(|t| t.contains("hookjournal@") || t.contains("plugins/hookjournal"))
        {
            out.push(p);
        }
    }
}

harness_main!(
    plugin_hooks_json_registers_what_install_registers,
    launcher_without_a_binary_answers_nothing_and_says_so_once,
    claude_plugin_validate_strict_passes,
    real_claude_code_installs_the_plugin_journals_every_hook_and_uninstalls_cleanly,
);
