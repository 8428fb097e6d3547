//! A real Arize Phoenix for the traces tests: started on loopback (HTTP and gRPC), read back
//! through its REST API.

use super::harness::{missing, Skip};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Phoenix's Python (`$HOOKJOURNAL_PHOENIX_PYTHON`, else the CI cache's virtual environment).
pub fn phoenix_python() -> Result<PathBuf, Skip> {
    let found = std::env::var_os("HOOKJOURNAL_PHOENIX_PYTHON")
        .map(PathBuf::from)
        .or_else(|| super::ci_cache().map(|c| c.join("phoenix-20.26.1/bin/python")))
        .filter(|p| p.exists());
    found.map_or_else(
        || {
            missing(
                "HOOKJOURNAL_REQUIRE_PHOENIX",
                "no Arize Phoenix (bash .ci/install-phoenix.sh)",
            )
        },
        Ok,
    )
}

/// A free loopback port (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Phoenix server of the test's own, killed when dropped.
pub struct Phoenix {
    pub child: Child,
    pub port: u16,
    pub grpc: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Phoenix {
    /// Starts Phoenix with its HTTP and gRPC listeners on 127.0.0.1 and its database in a temp
    /// directory; waits (up to 180 s: ~20 s on a quiet machine) until it answers.
    pub fn start(python: &Path) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let (port, grpc) = (free_port(), free_port());
        let launcher =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/traces/phoenix_on_loopback.py");
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let child = Command::new(python)
            .arg(launcher)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start phoenix");
        let mut p = Phoenix {
            child,
            port,
            grpc,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if get(p.port, "/v1/projects").is_some() {
                break;
            }
            if let Some(status) = p.child.try_wait().unwrap() {
                panic!("phoenix exited ({status}):\n{}", p.log());
            }
            assert!(
                Instant::now() < deadline,
                "phoenix did not answer within 180 s:\n{}",
                p.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        p
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("phoenix.log")).unwrap_or_default()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span of the default project.
    pub fn spans(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/v1/projects/default/spans?limit=1000&cursor={c}"),
                None => "/v1/projects/default/spans?limit=1000".to_string(),
            };
            let page = get(self.port, &path).expect("spans");
            out.extend(page["data"].as_array().cloned().unwrap_or_default());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return out,
            }
        }
    }

    /// Waits until Phoenix holds a span of every trace in `traces` (it inserts what it received
    /// in the background), then returns every span.
    pub fn spans_once_holding(&self, traces: &[String]) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans();
            let held: std::collections::BTreeSet<&str> = spans
                .iter()
                .filter_map(|s| s["context"]["trace_id"].as_str())
                .collect();
            if traces.iter().all(|t| held.contains(t.as_str())) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix did not hold traces {traces:?} within 60 s (it holds {held:?})"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// GET `path` from the server on `port`: the JSON body of a 200, else `None`.
pub fn get(port: u16, path: &str) -> Option<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut resp = agent
        .get(&format!("http://127.0.0.1:{port}{path}"))
        .call()
        .ok()?;
    if resp.status().as_u16() != 200 {
        return None;
    }
    let text = resp.body_mut().read_to_string().ok()?;
    serde_json::from_str(&text).ok()
}

/// The TCP ports of `pid`'s listening sockets, with whether each is bound to loopback only.
pub fn listeners(pid: u32) -> BTreeMap<u16, bool> {
    let inodes: std::collections::BTreeSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    l.strip_prefix("socket:[")?
                        .strip_suffix(']')
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address, st == 0A (LISTEN), inode
            if f.len() < 10 || f[3] != "0A" || !inodes.contains(f[9]) {
                continue;
            }
            let (addr, port) = f[1].split_once(':').unwrap();
            let port = u16::from_str_radix(port, 16).unwrap();
            let loopback = matches!(
                addr,
                // 127.0.0.1; ::1; ::ffff:127.0.0.1 (as the kernel prints them)
                "0100007F"
                    | "00000000000000000000000001000000"
                    | "0000000000000000FFFF00000100007F"
            );
            out.insert(port, loopback);
        }
    }
    out
}

/// An attribute of a span as Phoenix returns it, as an integer (0 when absent).
pub fn attr_i64(span: &Value, key: &str) -> i64 {
    span["attributes"][key].as_i64().unwrap_or(0)
}

pub fn kind_of(span: &Value) -> String {
    span["span_kind"].as_str().unwrap_or_default().to_string()
}

/// The trace ids of the agent roots, in start order.
pub fn roots(spans: &[Value]) -> Vec<&Value> {
    let mut r: Vec<&Value> = spans
        .iter()
        .filter(|s| s["parent_id"].is_null() && kind_of(s) == "AGENT")
        .collect();
    r.sort_by_key(|s| attr_i64(s, "hookjournal.first_seq"));
    r
}
