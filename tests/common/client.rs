//! Running a real client for the end-to-end tests: spawned in its own process group with stdout
//! and stderr piped, read to the end, and the whole group killed past a bound (the client may
//! hang; the test then fails on what it printed, never waits forever).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a bounded run gave.
pub struct Run {
    /// `None`: killed at the bound.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// Whether it exited 0 within the bound.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Runs `cmd` (stdin as the caller set it) in a new process group, killing the group after
/// `bound`.
pub fn run_bounded(cmd: &mut Command, bound: Duration) -> Run {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let pgid = child.id();
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > bound {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}

/// A real client's world: a temporary directory holding its `home`, a git `project` with one
/// file (`name`, `text`) in it, and the `calls` directory a counting hook writes to. The project
/// path is canonical (clients report it so).
pub fn sandbox(
    name: &str,
    text: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    let calls = tmp.path().join("calls");
    for d in [&home, &project, &calls] {
        std::fs::create_dir_all(d).unwrap();
    }
    let project = project.canonicalize().unwrap();
    std::fs::write(project.join(name), text).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    assert!(git.success(), "git init");
    (tmp, home, project, calls)
}

/// The client's own `$TMPDIR`, inside its sandbox's `home`: what a client unpacks there (the
/// bun-built ones extract a native library at every start, 5.5 MB each) goes with the sandbox
/// instead of piling up in the machine's `/tmp`.
pub fn private_tmp(home: &std::path::Path) -> std::path::PathBuf {
    let dir = home.join(".tmp");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A real client's world for one test (`sandbox` with a README in its project) and the scripted
/// model server it talks to; a host's test adds its own settings and runs.
pub struct Sandbox<R> {
    pub tmp: tempfile::TempDir,
    pub home: std::path::PathBuf,
    pub project: std::path::PathBuf,
    pub calls: std::path::PathBuf,
    pub server: super::chat_server::Scripted<R>,
}

impl<R: std::fmt::Debug> Sandbox<R> {
    /// The sandbox, and the server `server` starts given the (canonical) project path.
    pub fn start(
        server: impl FnOnce(&std::path::Path) -> super::chat_server::Scripted<R>,
    ) -> Sandbox<R> {
        let (tmp, home, project, calls) = sandbox("README.md", "# demo project\n");
        let server = server(&project);
        Sandbox {
            tmp,
            home,
            project,
            calls,
            server,
        }
    }

    /// Where the test's recording hook script goes.
    pub fn recorder(&self) -> std::path::PathBuf {
        self.tmp.path().join("record.sh")
    }

    pub fn hj(&self, args: &[&str]) -> String {
        hj(&self.project, &self.home, args)
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.hj(args)).unwrap()
    }

    /// What the recording hook saw (`recorded_calls`).
    pub fn recorded(&self) -> Vec<(String, Vec<u8>)> {
        recorded_calls(&self.calls)
    }

    /// What a recording plugin saw (`recorded_names`).
    pub fn recorded_names(&self) -> Vec<(String, String)> {
        recorded_names(&self.calls)
    }

    pub fn events(&self) -> Vec<serde_json::Value> {
        journal_events(&self.project, &self.home)
    }

    /// Keeps the run's directory when `HOOKJOURNAL_E2E_KEEP` is set (`keep`).
    pub fn keep(self) {
        let requests = self.server.requests();
        keep(self.tmp, &requests);
    }
}

/// `hookjournal ARGS` as the client's user runs it: in `project`, with `home` and nothing else
/// of the tester's environment; asserts success, returns stdout.
pub fn hj(project: &std::path::Path, home: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(super::BIN)
        .args(args)
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookjournal {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The JSON files a recording hook or plugin saved in `calls`, sorted by name (their call order).
pub fn call_files(calls: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(calls)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    names
}

/// Every invocation a counting hook saved in `calls` (`NNN.<event>.json`, one file each):
/// (event, payload bytes), in start order.
pub fn recorded_calls(calls: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    call_files(calls)
        .into_iter()
        .map(|p| {
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let event = file.split('.').nth(1).unwrap_or("?").to_string();
            (event, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Every call a recording plugin saved in `calls` (one JSON file each, named so that they sort
/// in call order): (`name`, `session`), in that order.
pub fn recorded_names(calls: &std::path::Path) -> Vec<(String, String)> {
    call_files(calls)
        .into_iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            (
                v["name"].as_str().unwrap_or("").to_string(),
                v["session"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The last `n` characters of a client's output, for a failure message.
pub fn tail(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(n)..].iter().collect()
}

/// With `HOOKJOURNAL_E2E_KEEP` set, keeps a run's temporary directory (the client's home, its
/// project, the journal) with the model requests in `requests.jsonl`, and says where.
pub fn keep(tmp: tempfile::TempDir, requests: &[serde_json::Value]) {
    if std::env::var_os("HOOKJOURNAL_E2E_KEEP").is_none() {
        return;
    }
    let lines: String = requests.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(tmp.path().join("requests.jsonl"), lines).unwrap();
    eprintln!("kept {}", tmp.keep().display());
}

/// The journal's events, exported (the export ingests the spool first).
pub fn journal_events(project: &std::path::Path, home: &std::path::Path) -> Vec<serde_json::Value> {
    super::events_of(&hj(project, home, &["export", "--report", "events"]))
}

/// Every `recorded` invocation is in the journal's `events` exactly once, payload for payload,
/// as host `host`, and nothing is `Malformed`; each difference is pushed to `failures`. Returns
/// the invocations per event.
pub fn check_journaled(
    host: &str,
    recorded: &[(String, Vec<u8>)],
    events: &[serde_json::Value],
    failures: &mut Vec<String>,
) -> std::collections::BTreeMap<String, usize> {
    let journal = invocations(events);
    let (malformed, hosts) = malformed_and_hosts(host, &journal, failures);
    let mut a: Vec<&Vec<u8>> = recorded.iter().map(|r| &r.1).collect();
    let payloads: Vec<Vec<u8>> = journal.iter().map(|e| super::payload_bytes(e)).collect();
    let mut b: Vec<&Vec<u8>> = payloads.iter().collect();
    a.sort();
    b.sort();
    if a != b {
        failures.push(format!(
            "the recording hook saw {} invocations, the journal holds {}: {:?} vs {:?}",
            a.len(),
            b.len(),
            recorded.iter().map(|r| &r.0).collect::<Vec<_>>(),
            journal.iter().map(|e| &e["name"]).collect::<Vec<_>>()
        ));
    }
    let counts = per_name(recorded.iter().map(|r| &r.0));
    eprintln!(
        "invocations seen {}, journaled {} ({malformed} Malformed, hosts {hosts:?}): {counts:?}",
        recorded.len(),
        journal.len()
    );
    counts
}

/// `check_journaled` for a plugin host, whose recorder saw (name, session) rather than payload
/// bytes: every call is in the journal exactly once under its name and session.
pub fn check_named_journaled(
    host: &str,
    recorded: &[(String, String)],
    events: &[serde_json::Value],
    failures: &mut Vec<String>,
) -> std::collections::BTreeMap<String, usize> {
    let journal = invocations(events);
    let (malformed, hosts) = malformed_and_hosts(host, &journal, failures);
    let text = |e: &serde_json::Value, k: &str| e[k].as_str().unwrap_or("").to_string();
    let mut a: Vec<(String, String)> = recorded.to_vec();
    let mut b: Vec<(String, String)> = journal
        .iter()
        .map(|e| (text(e, "name"), text(e, "session_id")))
        .collect();
    a.sort();
    b.sort();
    if a != b {
        failures.push(format!(
            "the recording plugin saw {} calls, the journal holds {}: {:?} vs {:?}",
            a.len(),
            b.len(),
            recorded,
            journal.iter().map(|e| &e["name"]).collect::<Vec<_>>()
        ));
    }
    let counts = per_name(recorded.iter().map(|r| &r.0));
    eprintln!(
        "calls seen {}, journaled {} ({malformed} Malformed, hosts {hosts:?}): {counts:?}",
        recorded.len(),
        journal.len()
    );
    counts
}

/// The journal's hook invocations: `Hook` and `Malformed` events.
fn invocations(events: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "Hook" || e["kind"] == "Malformed")
        .collect()
}

/// How many invocations are `Malformed` and which hosts they were recorded as; a failure for
/// each Malformed one and for any host but `host`.
fn malformed_and_hosts<'a>(
    host: &str,
    journal: &[&'a serde_json::Value],
    failures: &mut Vec<String>,
) -> (usize, std::collections::BTreeMap<&'a str, usize>) {
    let malformed = journal.iter().filter(|e| e["kind"] == "Malformed").count();
    if malformed > 0 {
        failures.push(format!("{malformed} invocations journaled as Malformed"));
    }
    let mut hosts = std::collections::BTreeMap::new();
    for e in journal {
        *hosts.entry(e["host"].as_str().unwrap_or("")).or_insert(0) += 1;
    }
    if hosts.keys().any(|h| *h != host) {
        failures.push(format!("hosts recorded: {hosts:?}"));
    }
    (malformed, hosts)
}

fn per_name<'a>(
    names: impl Iterator<Item = &'a String>,
) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for name in names {
        *counts.entry(name.clone()).or_insert(0) += 1;
    }
    counts
}
