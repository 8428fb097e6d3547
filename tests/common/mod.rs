//! Shared helpers for the end-to-end tests: run the real binary in a temp environment.
#![allow(dead_code)]

pub mod ccusage;
pub mod chat_server;
pub mod client;
pub mod harness;
pub mod http;
pub mod kill;
pub mod phoenix;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_hookjournal");

/// Debian's headless Chromium (`.ci/install-chromium.sh`), or why it is not there (a failure with
/// `HOOKJOURNAL_REQUIRE_CHROMIUM=1`).
pub fn chromium() -> Result<PathBuf, harness::Skip> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    found.map_or_else(
        || {
            harness::missing(
                "HOOKJOURNAL_REQUIRE_CHROMIUM",
                "no /usr/bin/chromium (bash .ci/install-chromium.sh)",
            )
        },
        Ok,
    )
}

/// Runs headless Chromium (its own empty profile, no background networking) on `url` with
/// `args` (`--dump-dom`, `--screenshot=…`, a window size), killed if it runs past `limit`;
/// returns (stdout, stderr).
pub fn headless_chromium(
    chrome: &Path,
    args: &[&str],
    url: &str,
    limit: std::time::Duration,
) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Where `.ci/install-*.sh` install the real clients: `HOOKJOURNAL_CI_CACHE`, else
/// `~/.cache/hookjournal-ci`.
pub fn ci_cache() -> Option<PathBuf> {
    std::env::var_os("HOOKJOURNAL_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/hookjournal-ci")))
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The user's hookjournal config directory the tests give a journal: beside it, so the tester's
/// own `~/.config/hookjournal` (config and trust store) never changes a result.
pub fn user_config_home(journal: &Path) -> PathBuf {
    journal
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(".xdg-config")
}

/// `$PATH` without the directories that hold a `hookjournal`: `install` prefers the one on PATH
/// when it is the same program, so a tester's own installed copy would change what it writes.
pub fn test_path() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("hookjournal").exists())
        .collect();
    std::env::join_paths(dirs).unwrap_or_default()
}

/// The registry of journals a journal's commands keep (`$XDG_STATE_HOME`): beside it, outside
/// its home, so no test sees the tester's own registry and no listing of the home changes.
pub fn state_home_beside(journal: &Path) -> PathBuf {
    journal
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(".xdg-state")
}

/// The home a journal's commands run with: beside it, empty unless a test fills it.
pub fn home_beside(journal: &Path) -> PathBuf {
    let home = journal
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(".home");
    let _ = std::fs::create_dir_all(&home);
    home
}

/// `hookjournal --journal J` in a cleared environment, as `TestEnvironment::command` runs it:
/// nothing of the tester's shell (an agent's own variables, a configured journal, a home with
/// settings, a locale) reaches the binary; HOME and the user config are beside the journal.
pub fn cmd(journal: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", test_path())
        .env("HOME", home_beside(journal))
        .env("XDG_CONFIG_HOME", user_config_home(journal))
        .env("XDG_STATE_HOME", state_home_beside(journal))
        // Seals where the tests expect them: drain work after the answer, in the hook itself.
        .env("HOOKJOURNAL_DRAINER", "inline")
        .env("NO_COLOR", "1");
    c.arg("--journal").arg(journal);
    c
}

/// Runs `hookjournal --journal J hook` with `payload` on stdin and `env` set.
pub fn hook(journal: &Path, payload: &[u8], env: &[(&str, &str)]) -> Output {
    let mut c = cmd(journal);
    c.arg("hook");
    for (k, v) in env {
        c.env(k, v);
    }
    feed(&mut c, payload)
}

/// Runs `c` with `stdin` written to it and its stdout and stderr captured.
pub fn feed(c: &mut Command, stdin: &[u8]) -> Output {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Whether a hook's stderr says nothing, or only that its event was spooled for the next hook.
/// A hook bounds its time: on a loaded machine it can meet its drain deadline with older spooled
/// events still waiting, or a journal held by another process, and then spools its event, which
/// loses nothing (the tests read the journal after `drain`). Any other line is a real complaint.
pub fn quiet_or_spooled(stderr: &[u8]) -> bool {
    String::from_utf8_lossy(stderr).lines().all(|l| {
        l.starts_with("hookjournal: ") && l.ends_with("; event spooled for the next hook to ingest")
    })
}

/// Runs a CLI command, asserting success, returning stdout.
pub fn run(journal: &Path, args: &[&str]) -> String {
    let out = cmd(journal).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "hookjournal {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn run_json(journal: &Path, args: &[&str]) -> serde_json::Value {
    let s = run(journal, args);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{args:?} printed invalid JSON ({e}): {s}"))
}

/// Every line of `export --report events`, parsed, with the raw line kept under `"_line"` (the
/// export ingests the spool first; another user's journal is read as its log holds it).
pub fn events(journal: &Path) -> Vec<serde_json::Value> {
    events_of(&run(journal, &["export", "--report", "events"]))
}

/// The lines of an `export --report events` output, parsed, each raw line under `"_line"`.
pub fn events_of(export: &str) -> Vec<serde_json::Value> {
    export
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("valid JSONL");
            v["_line"] = l.into();
            v
        })
        .collect()
}

/// Every hook payload in the journal, with how often it appears.
pub fn payload_counts(journal: &Path) -> std::collections::BTreeMap<Vec<u8>, usize> {
    let mut m = std::collections::BTreeMap::new();
    for e in events(journal) {
        if e["kind"] == "Hook" {
            *m.entry(payload_bytes(&e)).or_insert(0) += 1;
        }
    }
    m
}

/// The raw payload bytes of an exported event line (exactly as recorded).
pub fn payload_bytes(line: &serde_json::Value) -> Vec<u8> {
    use base64::Engine;
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        payload: Option<&'a serde_json::value::RawValue>,
        payload_b64: Option<String>,
    }
    let text = line["_line"].as_str().expect("a line from events()");
    let raw: Raw = serde_json::from_str(text).unwrap();
    match (raw.payload, raw.payload_b64) {
        (Some(p), _) => p.get().as_bytes().to_vec(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
        _ => panic!("no payload in {text}"),
    }
}

/// The fixture session, played step by step with growing transcripts (as Claude Code would).
pub struct Played {
    pub root: tempfile::TempDir,
    pub journal: PathBuf,
    /// (step index, event name, stdout, stderr) for every hook invocation.
    pub outputs: Vec<(usize, String, String, String)>,
}

pub fn play_session(env: &[(&str, &str)]) -> Played {
    let root = tempfile::tempdir().unwrap();
    let journal = root.path().join("journal");
    let outputs = play_steps(&root.path().join("cs"), |payload, e| {
        let mut all = e.to_vec();
        all.extend_from_slice(env);
        hook(&journal, payload, &all)
    })
    .into_iter()
    .enumerate()
    .map(|(i, (event, out))| {
        assert!(out.status.success(), "step {i} exited {:?}", out.status);
        (
            i,
            event,
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    })
    .collect();
    Played {
        root,
        journal,
        outputs,
    }
}

/// The fixture session's steps, each run by `run_hook(payload, step env)` after the transcripts
/// under `fx` have grown to what Claude Code had written by then; returns (event name, output).
pub fn play_steps(
    fx: &Path,
    mut run_hook: impl FnMut(&[u8], &[(&str, &str)]) -> Output,
) -> Vec<(String, Output)> {
    let src = fixtures().join("claude-session");
    let tr = "transcripts/projects/-home-dev-acme-api";
    let sid = "db5b5fab-8f4d-3e27-dda1-494c73cf256d";
    let sub_path = format!("{tr}/{sid}/subagents/agent-a41536363f6724ba0.jsonl");
    let main_src = std::fs::read_to_string(src.join(format!("{tr}/{sid}.jsonl"))).unwrap();
    let sub_src = std::fs::read_to_string(src.join(&sub_path)).unwrap();
    let main = fx.join(format!("{tr}/{sid}.jsonl"));
    let sub = fx.join(&sub_path);
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    let take = |text: &str, n: &serde_json::Value| {
        text.split_inclusive('\n')
            .take(n.as_u64().unwrap() as usize)
            .collect::<String>()
    };
    let steps = std::fs::read_to_string(src.join("session.steps.jsonl")).unwrap();
    let mut outputs = Vec::new();
    for line in steps.lines() {
        let step: serde_json::Value = serde_json::from_str(line).unwrap();
        std::fs::write(&main, take(&main_src, &step["transcript_lines"])).unwrap();
        std::fs::write(&sub, take(&sub_src, &step["subagent_lines"])).unwrap();
        let payload = step["hook"]
            .to_string()
            .replace("__FIXTURES__", &fx.to_string_lossy());
        let e: Vec<(&str, &str)> = step["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
            .collect();
        let event = step["hook"]["hook_event_name"]
            .as_str()
            .unwrap()
            .to_string();
        outputs.push((event, run_hook(payload.as_bytes(), &e)));
    }
    outputs
}

/// A fresh user's world, for whole-output tests: an empty `$HOME` and an empty project
/// directory under one temp root, a process environment cleared of everything but `PATH`, and
/// output normalised so it can be compared as a whole (as jj's `TestEnvironment` does): the temp
/// root reads `$TEST_ENV`, the binary `$BIN` (its build directory `$TARGET_DIR`), recorded times `[TIME]` / `[SECOND]` / `[MINUTE]` / `[CLOCK]` /
/// `[US]`, and any literal registered with `redact`. Recorded times come from the real clock (the
/// hook's `recorded_at`); "now" for relative times is pinned with `set_env("HOOKJOURNAL_NOW", …)`.
pub struct TestEnvironment {
    root: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    env: Vec<(String, String)>,
    redactions: Vec<(String, String)>,
    ages: bool,
}

/// What one command printed, and how it exited.
pub struct CommandOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

impl CommandOutput {
    /// Stdout, then `[stderr]` and stderr when there is any, then `[exit status: N]` unless 0.
    pub fn render(&self) -> String {
        let mut s = self.stdout.clone();
        if !self.stderr.is_empty() {
            s.push_str("[stderr]\n");
            s.push_str(&self.stderr);
        }
        if self.code != Some(0) {
            let code = self
                .code
                .map_or("killed by a signal".into(), |c| c.to_string());
            s.push_str(&format!("[exit status: {code}]\n"));
        }
        s
    }
}

impl Default for TestEnvironment {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnvironment {
    pub fn new() -> TestEnvironment {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        TestEnvironment {
            root,
            home,
            project,
            env: Vec::new(),
            redactions: Vec::new(),
            ages: false,
        }
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// `$XDG_STATE_HOME` of every command (the registry of journals lives beneath it): in the
    /// temp root, outside the home.
    pub fn state_home(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// Sets a variable for every later command (e.g. `HOOKJOURNAL_NOW`).
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
    }

    /// Shows `literal` as `placeholder` in every normalised output.
    pub fn redact(&mut self, literal: &str, placeholder: &str) {
        self.redactions.push((literal.into(), placeholder.into()));
    }

    /// Shows relative times ("9h ago") as `[AGO]`: for views of events recorded by hooks, whose
    /// times come from the real clock, so that their age varies by run. (A pinned now earlier
    /// than the run's events would show dates: see `pin_now_ahead`.)
    pub fn normalize_ages(&mut self) {
        self.ages = true;
    }

    /// "Now" pinned 5 h 30 min after the real clock, ages shown as `[AGO]`: for views whose
    /// relative times are of events recorded by hooks. Far from a unit's boundary, every age
    /// reads "5h ago", so a table's columns are as wide in every run (an age of "9s ago" beside
    /// one of "10s ago" would not be).
    pub fn pin_now_ahead(&mut self) {
        let now = chrono::Utc::now() + chrono::Duration::minutes(5 * 60 + 30);
        self.set_env(
            "HOOKJOURNAL_NOW",
            &now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
        self.normalize_ages();
    }

    /// The binary with a cleared environment, run in `cwd`.
    pub fn command(&self, cwd: &Path) -> Command {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("PATH", test_path())
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.state_home())
            .env("NO_COLOR", "1")
            .env("HOOKJOURNAL_DRAINER", "inline")
            .current_dir(cwd)
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Runs `hookjournal ARGS` in the project directory.
    pub fn run(&self, args: &[&str]) -> CommandOutput {
        self.run_in(&self.project.clone(), args)
    }

    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> CommandOutput {
        let out = self.command(cwd).args(args).output().unwrap();
        self.output(out)
    }

    /// Runs `sh -c COMMAND` in `cwd` with `stdin`: a hook command exactly as an agent runs it.
    pub fn run_shell(
        &self,
        command: &str,
        cwd: &Path,
        env: &[(&str, &str)],
        stdin: &[u8],
    ) -> CommandOutput {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(command)
            .env_clear()
            .env("PATH", test_path())
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.state_home())
            .env("NO_COLOR", "1")
            .env("HOOKJOURNAL_DRAINER", "inline")
            .current_dir(cwd);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let out = feed(&mut c, stdin);
        self.output(out)
    }

    /// `hookjournal hook` as Claude Code runs it for this project (`CLAUDE_PROJECT_DIR` set, in
    /// the project), `payload` on stdin; the raw output.
    pub fn hook_raw(&self, payload: &[u8], env: &[(&str, &str)]) -> Output {
        let mut c = self.command(&self.project);
        c.arg("hook").env("CLAUDE_PROJECT_DIR", &self.project);
        for (k, v) in env {
            c.env(k, v);
        }
        feed(&mut c, payload)
    }

    /// The raw (not normalised) stdout of `hookjournal ARGS` in the project, which must succeed.
    pub fn raw(&self, args: &[&str]) -> String {
        let out = self.command(&self.project).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `raw`, parsed as JSON (read raw: normalised times are not JSON).
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let text = self.raw(args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?} ({e}): {text}"))
    }

    /// Every event in the project's journal, parsed, each raw line under `"_line"`, as `export`
    /// writes them (the spool ingested first; another user's journal is read as its log holds
    /// it).
    pub fn journaled(&self) -> Vec<serde_json::Value> {
        events_of(&self.raw(&["export", "--report", "events"]))
    }

    /// Every hook payload in the project's journal, with how often it appears.
    pub fn journaled_payloads(&self) -> std::collections::BTreeMap<Vec<u8>, usize> {
        let mut m = std::collections::BTreeMap::new();
        for e in self.journaled() {
            if e["kind"] == "Hook" {
                *m.entry(payload_bytes(&e)).or_insert(0) += 1;
            }
        }
        m
    }

    /// Runs `hookjournal ARGS` in the project and appends `$ hookjournal ARGS` and its whole
    /// output to `t` (`step`).
    pub fn step(&self, t: &mut String, args: &[&str]) -> CommandOutput {
        let out = self.run(args);
        step(t, &format!("hookjournal {}", args.join(" ")), &out);
        out
    }

    /// `hook_raw`, normalised.
    pub fn hook(&self, payload: &[u8], env: &[(&str, &str)]) -> CommandOutput {
        let out = self.hook_raw(payload, env);
        self.output(out)
    }

    /// The project's journal (where a hook run by `hook` records): for the journal-level helpers
    /// (`events`, `run_json`) and for planting damage.
    pub fn journal(&self) -> PathBuf {
        self.project.join(".hookjournal")
    }

    /// The fixture session (`play_steps`) played into this project's journal, with its
    /// transcripts under `$TEST_ENV/cs`: one block per hook, its event name over what it printed.
    pub fn play_claude_session(&self) -> String {
        let fx = self.root().join("cs");
        play_steps(&fx, |payload, e| self.hook_raw(payload, e))
            .into_iter()
            .enumerate()
            .map(|(i, (event, out))| format!("--- {i} {event}\n{}", self.output(out).render()))
            .collect()
    }

    fn output(&self, out: Output) -> CommandOutput {
        CommandOutput {
            stdout: self.normalize(&String::from_utf8_lossy(&out.stdout)),
            stderr: self.normalize(&String::from_utf8_lossy(&out.stderr)),
            code: out.status.code(),
        }
    }

    /// Replaces what differs between runs and machines with placeholders.
    pub fn normalize(&self, text: &str) -> String {
        let mut s = text.to_string();
        for (lit, ph) in &self.redactions {
            s = s.replace(lit.as_str(), ph);
        }
        s = s.replace(BIN, "$BIN");
        // The build directory the binary is in (`install` names it): `<target>/debug/hookjournal`.
        if let Some(target) = Path::new(BIN).parent().and_then(Path::parent) {
            s = s.replace(target.to_str().unwrap(), "$TARGET_DIR");
        }
        let root = self.root.path();
        if let Ok(canonical) = root.canonicalize() {
            s = s.replace(canonical.to_str().unwrap(), "$TEST_ENV");
        }
        s = s.replace(root.to_str().unwrap(), "$TEST_ENV");
        s = replace_pattern(&s, "dddd-dd-ddTdd:dd:dd.dddZ", "[TIME]");
        s = replace_pattern(&s, "dddd-dd-dd dd:dd:dd", "[SECOND]");
        s = replace_pattern(&s, "dddd-dd-dd dd:dd", "[MINUTE]");
        // `replay`'s time of day, and microsecond fields of JSON output.
        s = replace_pattern(&s, "  dd:dd:dd  ", "  [CLOCK]  ");
        if self.ages {
            s = replace_ages(&s);
        }
        s = replace_pattern(&s, "_us\": dddddddddddddddd", "_us\": [US]");
        replace_pattern(&s, "_us\":dddddddddddddddd", "_us\":[US]")
    }
}

/// Appends `$ SHOWN`, then what the command printed (`CommandOutput::render`) and a blank line,
/// to a transcript compared whole.
pub fn step(t: &mut String, shown: &str, out: &CommandOutput) {
    t.push_str(&format!("$ {shown}\n{}\n", out.render()));
}

/// Replaces every "<digits><s|m|h|d> ago" with "[AGO]".
fn replace_ages(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" ago") {
        let head = &rest[..at];
        let unit = head.strip_suffix(['s', 'm', 'h', 'd']);
        let digits = unit.map_or(0, |u| {
            u.len() - u.trim_end_matches(|c: char| c.is_ascii_digit()).len()
        });
        if digits > 0 {
            out.push_str(&head[..head.len() - digits - 1]);
            out.push_str("[AGO]");
        } else {
            out.push_str(head);
            out.push_str(" ago");
        }
        rest = &rest[at + 4..];
    }
    out.push_str(rest);
    out
}

/// Replaces every match of `pattern` (`d` = an ASCII digit, `x` = a lowercase hex digit,
/// anything else itself) with `with`.
pub fn replace_pattern(text: &str, pattern: &str, with: &str) -> String {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let matches_at = |i: usize| {
        t.len() >= i + p.len()
            && p.iter().zip(&t[i..]).all(|(pc, tc)| match pc {
                b'd' => tc.is_ascii_digit(),
                b'x' => tc.is_ascii_digit() || (b'a'..=b'f').contains(tc),
                c => c == tc,
            })
    };
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if matches_at(i) {
            out.extend_from_slice(with.as_bytes());
            i += p.len();
        } else {
            out.push(t[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("replaced ASCII within UTF-8")
}

/// Compares `actual` with `tests/expected/NAME` as a whole. `HOOKJOURNAL_BLESS=1 cargo test …`
/// writes the file instead (review the diff before committing it).
pub fn assert_expected(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/expected")
        .join(name);
    if std::env::var_os("HOOKJOURNAL_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing; run with HOOKJOURNAL_BLESS=1 to write it",
            path.display()
        )
    });
    if expected != actual {
        let diff = similar::TextDiff::from_lines(expected.as_str(), actual)
            .unified_diff()
            .header("expected", "actual")
            .to_string();
        panic!(
            "output differs from {} (HOOKJOURNAL_BLESS=1 rewrites it):\n{diff}",
            path.display()
        );
    }
}
