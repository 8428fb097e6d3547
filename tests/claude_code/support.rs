//! Process, file and JSON helpers for the real-Claude-Code end-to-end test (std + serde_json).

use serde_json::Value;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// Where the pinned Claude Code executable is expected when HOOKJOURNAL_CLAUDE_BIN is unset.
/// The version `.ci/install-claude-code.sh` pins.
pub const PINNED: &str = "2.1.197";

/// The version the test runs: `$HOOKJOURNAL_CLAUDE_VERSION` (CI runs it at the pinned version
/// and at the newest it installs), else the pinned one.
pub fn version() -> String {
    std::env::var("HOOKJOURNAL_CLAUDE_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| PINNED.to_string())
}

/// Whether this version reports `total_cost_usd` summed over a session's `--resume` turns
/// (2.1.330 does, 2.1.197 does not; the versions between were not measured).
pub fn reports_cumulative_cost() -> bool {
    let v: Vec<u64> = version()
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    v > vec![2, 1, 197]
}

/// Where `.ci/install-claude-code.sh` puts that version's binary: its cache directory
/// (`$HOOKJOURNAL_CI_CACHE`, default `~/.cache/hookjournal-ci`), else `target/claude-code`.
pub fn default_claude_bin() -> PathBuf {
    let rel = "node_modules/@anthropic-ai/claude-code-linux-x64/claude";
    let cache = std::env::var_os("HOOKJOURNAL_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/hookjournal-ci"))
        });
    if let Some(c) = cache {
        let p = c.join(format!("claude-code-{}", version())).join(rel);
        if p.is_file() {
            return p;
        }
    }
    workspace_root().join("target/claude-code").join(rel)
}

/// `$HOOKJOURNAL_CLAUDE_BIN`, else the copy `.ci/install-claude-code.sh` installs.
/// Err(reason) when it is missing or does not run.
pub fn find_claude() -> Result<(PathBuf, String), String> {
    let path = match std::env::var_os("HOOKJOURNAL_CLAUDE_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => default_claude_bin(),
    };
    if !path.is_file() {
        return Err(format!("{} does not exist", path.display()));
    }
    let out = run_captured(
        Command::new(&path).arg("--version"),
        Duration::from_secs(30),
    )
    .map_err(|e| format!("{} --version: {e}", path.display()))?;
    if !out.status.map(|s| s.success()).unwrap_or(false) {
        return Err(format!(
            "{} --version failed: {}",
            path.display(),
            out.stderr.trim()
        ));
    }
    Ok((path, out.stdout.trim().to_string()))
}

pub struct Outcome {
    /// None when the process was killed for running past its deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.status.map(|s| s.success()).unwrap_or(false)
    }
    pub fn describe(&self) -> String {
        format!(
            "status={} elapsed={:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            match self.status {
                Some(s) => format!("{s}"),
                None => "KILLED (timeout)".into(),
            },
            self.elapsed,
            crate::server::excerpt(&self.stdout, 4000),
            crate::server::excerpt(&self.stderr, 4000)
        )
    }
}

/// Run `cmd` in its own process group with stdin closed and stdout/stderr sent to temporary
/// files (never pipes: hook and tool children may inherit and hold them open). Past
/// `timeout`, the whole process group is killed (only processes this test started).
pub fn run_captured(cmd: &mut Command, timeout: Duration) -> std::io::Result<Outcome> {
    run_captured_with_input(cmd, None, timeout)
}

/// `run_captured` with `input` as stdin (from a file, so nothing blocks on a pipe).
pub fn run_captured_with_input(
    cmd: &mut Command,
    input: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<Outcome> {
    let dir = tempfile::tempdir()?;
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    let stdin = match input {
        Some(bytes) => {
            let in_path = dir.path().join("stdin");
            fs::write(&in_path, bytes)?;
            Stdio::from(fs::File::open(&in_path)?)
        }
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(fs::File::create(&out_path)?)
        .stderr(fs::File::create(&err_path)?)
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if start.elapsed() > timeout {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    Ok(Outcome {
        status,
        stdout: String::from_utf8_lossy(&fs::read(&out_path).unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default()).into_owned(),
        elapsed,
    })
}

/// The JSON object printed by `claude -p ... --output-format json` (the last line that parses).
pub fn parse_result(stdout: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(stdout.trim()) {
        if v.is_object() {
            return Some(v);
        }
    }
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object)
        })
}

/// Parse JSONL, keeping (line number, error) for lines that do not parse.
pub fn parse_jsonl(text: &str) -> (Vec<Value>, Vec<(usize, String)>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => ok.push(v),
            Err(e) => bad.push((i + 1, format!("{e}: {}", crate::server::excerpt(line, 200)))),
        }
    }
    (ok, bad)
}

/// JSON with object keys sorted at every level: equal values give equal strings whatever
/// the key order of their source.
pub fn canonical(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String((*k).clone()).to_string());
                    out.push(':');
                    walk(&m[*k], out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    walk(v, &mut s);
    s
}

/// Standard or URL-safe base64, padding optional.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' => continue,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// One hook invocation as seen by the recording hook.
#[derive(Clone, Debug)]
#[allow(dead_code)]
pub struct Recorded {
    /// File name (starts with the invocation's start time in ns, so names sort by start).
    pub name: String,
    pub raw: Vec<u8>,
    pub json: Option<Value>,
    /// Selected environment variables the hook process received (`K=V` lines).
    pub env: String,
}

impl Recorded {
    pub fn event(&self) -> String {
        self.json
            .as_ref()
            .and_then(|j| j.get("hook_event_name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    }
    pub fn str_field(&self, k: &str) -> Option<&str> {
        self.json.as_ref()?.get(k)?.as_str()
    }
    /// "SessionStart(compact)", "PostToolUse(Write)", "PreCompact(manual)", ...
    pub fn label(&self) -> String {
        let ev = self.event();
        // `agent_type` names a subagent only with an `agent_id`; without one it is the session's
        // own agent (`claude --agent NAME`), on every event.
        let subagent = self
            .str_field("agent_id")
            .and_then(|_| self.str_field("agent_type"));
        let detail = ["tool_name", "source", "trigger", "reason"]
            .iter()
            .find_map(|k| self.str_field(k))
            .or(subagent);
        match detail {
            Some(d) => format!("{ev}({d})"),
            None => ev,
        }
    }
}

/// Every invocation the recording hook saved in `dir`, in start order.
pub fn read_recorded(dir: &Path) -> Vec<Recorded> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let raw = fs::read(dir.join(&name)).unwrap_or_default();
            let json = serde_json::from_slice(&raw).ok();
            let env = fs::read_to_string(dir.join(format!("{name}.env"))).unwrap_or_default();
            Recorded {
                name,
                raw,
                json,
                env,
            }
        })
        .collect()
}

/// Wait until the number of files in `dir` stops changing (hooks of a finished Claude process
/// may still be writing), within `max`.
pub fn settle(dir: &Path, max: Duration) {
    let start = Instant::now();
    let count = || fs::read_dir(dir).map(|r| r.count()).unwrap_or(0);
    let mut last = count();
    let mut stable_since = Instant::now();
    while start.elapsed() < max {
        std::thread::sleep(Duration::from_millis(50));
        let c = count();
        if c != last {
            last = c;
            stable_since = Instant::now();
        } else if stable_since.elapsed() > Duration::from_millis(300) {
            return;
        }
    }
}
