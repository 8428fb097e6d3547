//! `hookjournal doctor`, whole outputs: a healthy project, then one project per problem kind —
//! each problem one line naming the command that fixes it, exit 1 — and `--json`, `--user`.

mod common;
use common::{assert_expected, replace_pattern, CommandOutput, TestEnvironment};
use std::fs;

/// A project (a git checkout) with hookjournal installed for Claude Code and one event journaled.
fn installed() -> TestEnvironment {
    let env = TestEnvironment::new();
    fs::create_dir_all(env.project.join(".git")).unwrap();
    let out = env.run(&["install"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let session_start =
        br#"{"hook_event_name":"SessionStart","session_id":"s1","source":"startup","cwd":"/p"}"#;
    let hook = env.run_shell(
        &registered_command(&env),
        &env.project.clone(),
        &[("CLAUDE_PROJECT_DIR", env.project.to_str().unwrap())],
        session_start,
    );
    assert_eq!(hook.code, Some(0), "{}", hook.render());
    env
}

/// A project (a git checkout) with `install --host H` run for each of `hosts`.
fn installed_for(hosts: &[&str]) -> TestEnvironment {
    let env = TestEnvironment::new();
    fs::create_dir_all(env.project.join(".git")).unwrap();
    for host in hosts {
        let out = env.run(&["install", "--host", host]);
        assert_eq!(out.code, Some(0), "{}", out.render());
    }
    env
}

/// `doctor` as installed for `hosts`, then after `change`, compared whole with `expected`.
fn before_and_after(hosts: &[&str], expected: &str, change: impl FnOnce(&TestEnvironment)) {
    let env = installed_for(hosts);
    let installed = doctor(&env, &[]);
    change(&env);
    let changed = doctor(&env, &[]);
    assert_expected(
        expected,
        &format!("{installed}---- changed ----\n{changed}"),
    );
}

/// The command `install` registered for SessionStart.
fn registered_command(env: &TestEnvironment) -> String {
    let v = settings(env);
    v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string()
}

fn settings(env: &TestEnvironment) -> serde_json::Value {
    let text = fs::read_to_string(env.project.join(".claude/settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn write_settings(env: &TestEnvironment, v: &serde_json::Value) {
    fs::write(
        env.project.join(".claude/settings.json"),
        serde_json::to_string_pretty(v).unwrap(),
    )
    .unwrap();
}

/// `doctor ARGS`, with what differs between runs replaced: the journal's size and how long ago
/// its last event was.
fn doctor(env: &TestEnvironment, args: &[&str]) -> String {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    let out: CommandOutput = env.run(&all);
    let text = out.render();
    let text = replace_pattern(&text, "d.d MiB", "[SIZE] MiB");
    replace_pattern(&text, "(ds ago)", "(just now)")
}

#[test]
fn a_healthy_project_says_so_and_exits_0() {
    let env = installed();
    let out = doctor(&env, &[]);
    assert_expected("doctor/healthy.txt", &out);
    assert!(out.ends_with("healthy\n"), "{out}");
}

#[test]
fn an_auggie_user_is_told_auggie_reads_no_claude_registration_and_no_one_else_is() {
    let env = installed();
    assert!(!doctor(&env, &[]).contains("reads no hooks there"));
    fs::create_dir_all(env.home.join(".augment")).unwrap();
    let out = doctor(&env, &[]);
    let line = out
        .lines()
        .find(|l| l.contains("Auggie"))
        .unwrap_or_default();
    assert_eq!(
        line,
        "--  Auggie: $TEST_ENV/project/.claude/settings.json registers hookjournal, but Auggie reads no hooks there",
        "{out}"
    );
}

#[test]
fn nothing_installed_names_install() {
    let env = TestEnvironment::new();
    fs::create_dir_all(env.project.join(".git")).unwrap();
    assert_expected("doctor/nothing-installed.txt", &doctor(&env, &[]));
}

#[test]
fn a_missing_and_a_stale_event_and_a_changed_timeout_are_named() {
    let env = installed();
    let mut v = settings(&env);
    let hooks = v["hooks"].as_object_mut().unwrap();
    hooks.remove("PostCompact");
    hooks.remove("SessionEnd");
    let stop = hooks["Stop"].clone();
    hooks.insert("OldEvent".into(), stop);
    v["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 600.into();
    write_settings(&env, &v);
    assert_expected("doctor/events.txt", &doctor(&env, &[]));
}

#[test]
fn a_registered_program_that_is_gone_or_not_this_one_is_named_and_a_copy_is_not() {
    let env = installed();
    let text = fs::read_to_string(env.project.join(".claude/settings.json")).unwrap();
    let gone = text.replace(common::BIN, "/nonexistent/bin/hookjournal");
    fs::write(env.project.join(".claude/settings.json"), &gone).unwrap();
    let first = doctor(&env, &[]);

    // Another program (an older hookjournal, say) is not run to ask its version.
    let old = env.root().join("old/hookjournal");
    let ran = env.root().join("old-ran");
    fs::create_dir_all(old.parent().unwrap()).unwrap();
    fs::write(
        &old,
        format!(
            "#!/bin/sh\ntouch '{}'\necho 'hookjournal 0.0.9'\n",
            ran.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&old, fs::Permissions::from_mode(0o755)).unwrap();
    let older = text.replace(common::BIN, old.to_str().unwrap());
    fs::write(env.project.join(".claude/settings.json"), older).unwrap();
    let second = doctor(&env, &[]);
    assert!(!ran.exists(), "doctor ran {}", old.display());

    // A copy of this binary elsewhere is this hookjournal (same contents).
    let copy = env.root().join("copy/hookjournal");
    fs::create_dir_all(copy.parent().unwrap()).unwrap();
    fs::copy(common::BIN, &copy).unwrap();
    let copied = text.replace(common::BIN, copy.to_str().unwrap());
    fs::write(env.project.join(".claude/settings.json"), copied).unwrap();
    let third = doctor(&env, &[]);
    assert_expected(
        "doctor/program.txt",
        &format!("{first}---- another program ----\n{second}---- a copy ----\n{third}"),
    );
}

#[test]
fn a_drainer_that_died_marked_running_is_named() {
    let env = installed();
    let journal = env.project.join(".hookjournal");
    fs::write(journal.join("drain.running"), "999999999").unwrap();
    let touched = std::process::Command::new("touch")
        .args(["-d", "2 hours ago"])
        .arg(journal.join("drain.running"))
        .status()
        .unwrap();
    assert!(touched.success());
    let out = doctor(&env, &[]);
    let out = replace_pattern(&out, "started dddd s ago", "started [N] s ago");
    assert_expected("doctor/drainer.txt", &out);
}

#[test]
fn an_event_a_hook_could_not_make_durable_is_named_with_its_time_and_reason() {
    let env = installed();
    // What a hook writes when its final sync fails (journal::incidents), at a fixed time.
    fs::write(
        env.project.join(".hookjournal/incidents"),
        "1763000000000 may-be-missing a PostToolUse event of session s1 was written but syncing it failed (No space left on device (os error 28))\n\
         1763000001000 repaired the write-ahead log's mirror was rewritten from the log\n",
    )
    .unwrap();
    let out = doctor(&env, &[]);
    let out = replace_pattern(&out, "(dddd days ago)", "(N days ago)");
    assert_expected("doctor/incident.txt", &out);
}

#[test]
fn a_project_setting_ignored_until_trusted_is_named_with_the_command() {
    let env = installed();
    // A cloned repository's config: a program to run and a file to append to.
    fs::write(
        env.project.join(".hookjournal/config.toml"),
        "[policy]\ntask_command = \"./x\"\n[mirror]\nsession_log = \"../out.jsonl\"\n",
    )
    .unwrap();
    assert_expected("doctor/untrusted-config.txt", &doctor(&env, &[]));
}

#[test]
fn copilot_cli_registration_and_folder_trust_are_checked() {
    let env = installed_for(&["copilot"]);
    let untrusted = doctor(&env, &[]);
    // Trusted as Copilot records it (a comment on top, the folder's parent).
    fs::create_dir_all(env.home.join(".copilot")).unwrap();
    fs::write(
        env.home.join(".copilot/config.json"),
        format!(
            "// managed by Copilot\n{{\"trustedFolders\": [{:?}]}}\n",
            env.project.parent().unwrap().display().to_string()
        ),
    )
    .unwrap();
    let trusted = doctor(&env, &[]);
    assert_expected(
        "doctor/copilot.txt",
        &format!("{untrusted}---- trusted ----\n{trusted}"),
    );
}

#[test]
fn the_plugin_and_the_settings_both_registering_is_named() {
    let env = installed();
    fs::create_dir_all(env.home.join(".claude")).unwrap();
    fs::write(
        env.home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"hookjournal@hookjournal": true}}"#,
    )
    .unwrap();
    assert_expected("doctor/plugin-and-settings.txt", &doctor(&env, &[]));
}

#[test]
fn codex_untrusted_hooks_and_project_and_gemini_untrusted_folder_are_named() {
    let env = installed();
    for host in ["codex", "gemini"] {
        let out = env.run(&["install", "--host", host]);
        assert_eq!(out.code, Some(0), "{}", out.render());
    }
    // Codex: install trusted the hooks, not the project; a changed config forgets the hooks.
    let config = env.home.join(".codex/config.toml");
    let first = doctor(&env, &[]);
    fs::write(&config, "").unwrap();
    let second = doctor(&env, &[]);
    assert_expected(
        "doctor/trust.txt",
        &format!("{first}---- Codex's config.toml emptied ----\n{second}"),
    );
}

#[test]
fn json_output_and_user_scope() {
    let env = installed();
    let out = env.run(&["doctor", "--json"]);
    assert_eq!(out.code, Some(0), "{}", out.render());
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["healthy"], true);
    assert_eq!(v["problems"], 0);
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["level"] != "problem"));
    let user = doctor(&env, &["--user"]);
    assert_expected("doctor/user.txt", &user);
}

/// OpenCode's and pi's shims (their hooks run in the host's own process): each found where
/// install wrote it, with the program its settings name; a file of the user's own at that path
/// is no registration; a shim whose program is gone, or whose code is another hookjournal's, is
/// a problem naming the install.
#[test]
fn the_opencode_and_pi_shims_are_found_with_their_program() {
    before_and_after(&["opencode", "pi"], "doctor/shims.txt", |env| {
        // pi's shim naming a program that is gone; OpenCode's replaced by a plugin of the user's.
        let pi = env.project.join(".pi/extensions/hookjournal.ts");
        let text = fs::read_to_string(&pi).unwrap();
        let gone = text.replacen("\"command\":\"", "\"command\":\"/nonexistent/", 1);
        assert_ne!(gone, text, "the settings line names the program");
        // …and whose code is not this hookjournal's (an older one's).
        let older = gone.replacen("\n", "\n// a line an older shim had\n", 1);
        fs::write(&pi, older).unwrap();
        fs::write(
            env.project.join(".opencode/plugins/hookjournal.js"),
            "export const Mine = async () => ({});\n",
        )
        .unwrap();
    });
}

/// Cline's hook scripts (one executable per event, no settings file): found where install wrote
/// them, with the program they run; a script gone, one not executable and one naming a program
/// that is gone are problems naming their fix; a file of the user's own under an event's name is
/// said and left.
#[test]
fn clines_hook_scripts_are_found_with_their_program() {
    use std::os::unix::fs::PermissionsExt;
    before_and_after(&["cline"], "doctor/cline.txt", |env| {
        let hooks = env.project.join(".clinerules/hooks");
        fs::remove_file(hooks.join("TaskCancel")).unwrap();
        fs::set_permissions(hooks.join("PreToolUse"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(hooks.join("TaskError"), "#!/bin/sh\necho mine\n").unwrap();
        let start = hooks.join("TaskStart");
        let text = fs::read_to_string(&start).unwrap();
        let gone = text.replacen("exec '", "exec '/nonexistent", 1);
        assert_ne!(gone, text, "the script runs the program with exec");
        fs::write(&start, gone).unwrap();
    });
}

/// OpenClaw's plugin (user-wide, in its state directory): found enabled, with the program its
/// settings name; plugin code that is not this hookjournal's (an older one's) is a problem
/// naming the install.
#[test]
fn openclaws_plugin_is_found_and_older_plugin_code_is_named() {
    before_and_after(&["openclaw"], "doctor/openclaw.txt", |env| {
        let code = env.home.join(".openclaw/extensions/hookjournal/index.js");
        let text = fs::read_to_string(&code).unwrap();
        fs::write(
            &code,
            text.replacen('\n', "\n// a line an older plugin had\n", 1),
        )
        .unwrap();
    });
}
