//! `ship` end to end: a real PostgreSQL server started here on loopback (initdb into a temp dir),
//! three journals ("machines") shipping at once, one killed mid-batch and rerun; team views
//! read back; `--follow`; and an OTLP/HTTP receiver written here that decodes the requests with
//! the official OpenTelemetry protobuf definitions, through an outage.
//!
//! Needs PostgreSQL's server binaries (`initdb`, `postgres`; Debian: postgresql-15). Without
//! them the runner reports the PostgreSQL tests ignored, unless HOOKJOURNAL_REQUIRE_POSTGRES=1
//! (set by .ci/run), which makes them required.

mod common;
use common::harness::{missing, Ran, Skip};

use common::{cmd, run, run_json};
use journal::NewEvent;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, KeyValue};
use projections::Kind;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// A PostgreSQL server of our own.

struct PgServer {
    child: Child,
    port: u16,
    /// With TLS: the CA certificate that signed the server's.
    ca: Option<PathBuf>,
    start: Start,
    _dir: tempfile::TempDir,
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PgServer {
    fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:not-a-secret@127.0.0.1:{}/{db}",
            self.port
        )
    }
    fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).expect("connect to test server")
    }
}

fn pg_bindir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("HOOKJOURNAL_PG_BINDIR") {
        return Some(PathBuf::from(d));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("postgres").is_file()).then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

/// Runs a PostgreSQL binary, as `nobody` when we are root (the server refuses to run as root).
fn pg_command(bin: &Path, as_nobody: bool) -> Command {
    if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(bin);
        c
    } else {
        Command::new(bin)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a server, or says why not (PostgreSQL is not installed).
fn pg_server() -> Result<PgServer, Skip> {
    pg_server_with(false)
}

fn chown_nobody(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
}

/// A CA and a server certificate for 127.0.0.1, made with the openssl CLI (a dependency of
/// Debian's postgresql packages).
fn make_certs(dir: &Path, root: bool) -> PathBuf {
    let sh = |script: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sh(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout ca.key -out ca.crt -days 2 -subj /CN=hookjournal-test-ca",
    );
    sh(
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout server.key -out server.csr -subj /CN=127.0.0.1",
    );
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    sh(
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
        -out server.crt -days 2 -extfile ext.cnf",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    if root {
        chown_nobody(&dir.join("server.key"));
        chown_nobody(&dir.join("server.crt"));
    }
    dir.join("ca.crt")
}

fn pg_server_with(ssl: bool) -> Result<PgServer, Skip> {
    let Some(bindir) = pg_bindir() else {
        return missing(
            "HOOKJOURNAL_REQUIRE_POSTGRES",
            "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (bash .ci/install-postgres.sh)",
        );
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let dir = tempfile::tempdir().unwrap();
    if root {
        // nobody:nogroup must own the data and socket directory.
        chown_nobody(dir.path());
    }
    let ca = ssl.then(|| make_certs(dir.path(), root));
    let out = pg_command(&bindir.join("initdb"), root)
        .arg("-D")
        .arg(dir.path().join("data"))
        .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        .current_dir("/")
        .output()
        .expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Start {
        bindir,
        root,
        ssl,
        dir: dir.path().to_path_buf(),
    };
    for _ in 0..5 {
        let port = free_port();
        if let Some(child) = start.run(port) {
            return Ok(PgServer {
                child,
                port,
                ca,
                start,
                _dir: dir,
            });
        }
    }
    panic!(
        "postgres did not start: {}",
        std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default()
    );
}

/// How to (re)start the server of a data directory.
struct Start {
    bindir: PathBuf,
    root: bool,
    ssl: bool,
    dir: PathBuf,
}

impl Start {
    /// Starts the server on `port` and waits until it answers; None if it exits first.
    fn run(&self, port: u16) -> Option<Child> {
        let dir = &self.dir;
        let log = std::fs::File::create(dir.join("server.log")).unwrap();
        let mut child = pg_command(&self.bindir.join("postgres"), self.root)
            .arg("-D")
            .arg(dir.join("data"))
            .arg("-k")
            .arg(dir)
            .args(["-p", &port.to_string(), "-h", "127.0.0.1"])
            .args(["-c", "fsync=off", "-c", "max_connections=60"])
            .args(if self.ssl {
                vec![
                    "-c".to_string(),
                    "ssl=on".to_string(),
                    "-c".to_string(),
                    format!("ssl_cert_file={}", dir.join("server.crt").display()),
                    "-c".to_string(),
                    format!("ssl_key_file={}", dir.join("server.key").display()),
                ]
            } else {
                Vec::new()
            })
            .current_dir("/")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start postgres");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = child.try_wait() {
                return None; // port taken, or a startup failure
            }
            let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
            if postgres::Client::connect(&url, postgres::NoTls).is_ok() {
                return Some(child);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }
}

impl PgServer {
    /// Stops the server (every connection drops).
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
    /// Starts it again on the same port, with the same data.
    fn restart(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(child) = self.start.run(self.port) {
                self.child = child;
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "postgres did not restart"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Journals to ship.

const SECRET: &str = "sk-ant-api03-Zm9vYmFyYmF6cXV4cXV1eHp5enp5enp5enp5";

/// Spools `n` hook events of session `session` (the next reader ingests them in order).
fn spool_hooks(dir: &Path, session: &str, n: usize, start_us: i64) {
    let names = [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Notification",
    ];
    for i in 0..n {
        let name = if i == 0 {
            "SessionStart"
        } else {
            names[i % names.len()]
        };
        let mut payload = serde_json::json!({
            "session_id": session,
            "hook_event_name": name,
            "cwd": "/home/dev/acme",
        });
        match name {
            "PreToolUse" | "PostToolUse" => {
                payload["tool_name"] = "Bash".into();
                let cmd = if i == 5 {
                    format!("curl -H 'x-api-key: {SECRET}' https://api.example")
                } else {
                    format!("cargo test --test t{i}")
                };
                payload["tool_input"] = serde_json::json!({ "command": cmd });
            }
            "UserPromptSubmit" => payload["prompt"] = format!("step {i}").into(),
            "Notification" => {
                payload["message"] = format!("waiting for input ({i})").into();
                payload["notification_type"] = "idle_prompt".into();
            }
            _ => payload["source"] = "startup".into(),
        }
        let ev = NewEvent {
            recorded_at_us: start_us + i as i64 * 1_000_000,
            host: "claude".into(),
            kind: Kind::Hook { name: name.into() }.into(),
            session_id: Some(session.into()),
            agent_id: None,
            payload: serde_json::to_vec(&payload).unwrap(),
            truncated: None,
            spooled: true,
        };
        journal::spool::write(dir, &ev).unwrap();
    }
}

/// A journal with `n` hook events of one session, the usage of two real transcripts (cost),
/// and a task.
fn make_journal(root: &Path, m: usize, n: usize) -> PathBuf {
    let j = root.join(format!("m{m}/.hookjournal"));
    let corpus = common::fixtures().join("transcripts-corpus/projects/-home-dev-acme-api");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let tr = root.join(format!("m{m}/transcripts/projects/-home-dev-acme-api"));
    std::fs::create_dir_all(&tr).unwrap();
    for f in files.iter().skip(2 * (m % 3)).take(2) {
        std::fs::copy(f, tr.join(f.file_name().unwrap())).unwrap();
    }
    run(
        &j,
        &["tasks", "add", &format!("ship the release from m{m}")],
    );
    run(
        &j,
        &[
            "import",
            "--transcripts",
            root.join(format!("m{m}/transcripts")).to_str().unwrap(),
        ],
    );
    spool_hooks(
        &j,
        &format!("5e551000-0000-4000-8000-00000000000{m}"),
        n,
        1_790_000_000_000_000 + m as i64 * 3_600_000_000,
    );
    run(&j, &["status"]); // drains the spool
    j
}

/// The journal's head once its spool is ingested (as `ship`, a writer, ingests it first).
fn head(j: &Path) -> i64 {
    run(j, &["drain"]);
    run_json(j, &["status", "--json"])["events"]
        .as_i64()
        .unwrap()
}

fn ship(j: &Path, args: &[&str]) -> Command {
    let mut c = cmd(j);
    c.arg("ship").args(args);
    c.env_remove("HOOKJOURNAL_POSTGRES_URL")
        .env_remove("HOOKJOURNAL_OTLP_URL")
        .env_remove("HOOKJOURNAL_SOURCE")
        .env_remove("HOOKJOURNAL_SHIP_STALL_MS");
    c
}

fn ok(out: std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn team(url: &str, j: &Path, args: &[&str]) -> String {
    let out = cmd(j).arg("--source").arg(url).args(args).output().unwrap();
    ok(out, &format!("--source {args:?}"))
}

fn cursor(c: &mut postgres::Client, journal_id: &str) -> i64 {
    c.query_opt(
        "SELECT shipped_seq FROM hookjournal_cursor WHERE journal_id = $1",
        &[&journal_id],
    )
    .ok()
    .flatten()
    .map(|r| r.get(0))
    .unwrap_or(0)
}

fn journal_id(j: &Path) -> String {
    std::fs::read_to_string(j.join("journal-id"))
        .unwrap()
        .trim()
        .to_string()
}

// ---------------------------------------------------------------------------------------------

fn three_machines_ship_at_once_one_killed_mid_batch_every_event_once() -> Ran {
    let pg = pg_server()?;
    let root = tempfile::tempdir().unwrap();
    let journals: Vec<PathBuf> = (1..=3)
        .map(|m| make_journal(root.path(), m, 1500))
        .collect();
    let heads: Vec<i64> = journals.iter().map(|j| head(j)).collect();
    let url = pg.url("postgres");

    // Machines 1 and 2 ship normally; machine 3 pauses inside each batch transaction (after its
    // insert, before the cursor moves) and is killed there once a first batch has committed.
    let spawn = |j: &Path, m: usize, stall: bool| -> Child {
        let mut c = ship(j, &["--postgres", &url, "--batch", "200", "--machine"]);
        c.arg(format!("m{m}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if stall {
            c.env("HOOKJOURNAL_SHIP_STALL_MS", "400");
        }
        c.spawn().unwrap()
    };
    let a = spawn(&journals[0], 1, false);
    // A second shipper of the same journal at the same time: they share its cursor.
    let a2 = spawn(&journals[0], 1, false);
    let b = spawn(&journals[1], 2, false);
    let mut k = spawn(&journals[2], 3, true);
    let mut c = pg.client("postgres");
    let started = Instant::now();
    let id3 = loop {
        if let Ok(id) = std::fs::read_to_string(journals[2].join("journal-id")) {
            let id = id.trim().to_string();
            if cursor(&mut c, &id) > 0 {
                break id;
            }
        }
        if let Some(status) = k.try_wait().unwrap() {
            let mut err = String::new();
            k.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("machine 3's shipper exited ({status}) before its first commit: {err}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "machine 3 never committed a batch"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(150)); // inside the next batch's pause
                                                    // SAFETY: signalling our own child.
    unsafe { libc::kill(k.id() as i32, libc::SIGKILL) };
    k.wait().unwrap();
    ok(a.wait_with_output().unwrap(), "ship m1");
    ok(a2.wait_with_output().unwrap(), "ship m1 (twice at once)");
    ok(b.wait_with_output().unwrap(), "ship m2");

    // The killed batch left nothing: events stored == cursor, short of the head.
    let shipped3 = cursor(&mut c, &id3);
    let stored3: i64 = c
        .query_one(
            "SELECT count(*) FROM hookjournal_events WHERE journal_id = $1",
            &[&id3],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored3, shipped3, "a killed batch left rows behind");
    assert!(
        shipped3 < heads[2],
        "machine 3 finished before it was killed"
    );
    assert_eq!(shipped3 % 200, 0, "cursor moves batch by batch");

    // Rerun: continues from the cursor.
    let out = ok(
        ship(
            &journals[2],
            &["--postgres", &url, "--batch", "200", "--machine", "m3"],
        )
        .output()
        .unwrap(),
        "rerun m3",
    );
    assert!(
        out.contains(&format!("shipped {} event(s)", heads[2] - shipped3)),
        "{out}"
    );
    // And again: nothing new.
    let again = ok(
        ship(&journals[0], &["--postgres", &url, "--machine", "m1"])
            .output()
            .unwrap(),
        "ship m1 again",
    );
    assert!(again.contains("shipped 0 event(s)"), "{again}");

    // Every event exactly once, gap-free, with the chain intact.
    for (j, h) in journals.iter().zip(&heads) {
        let id = journal_id(j);
        let r = c
            .query_one(
                "SELECT count(*), count(DISTINCT seq), min(seq), max(seq) FROM hookjournal_events WHERE journal_id = $1",
                &[&id],
            )
            .unwrap();
        let (n, d, lo, hi): (i64, i64, i64, i64) = (r.get(0), r.get(1), r.get(2), r.get(3));
        assert_eq!((n, d, lo, hi), (*h, *h, 1, *h), "journal {id}");
        let broken: i64 = c
            .query_one(
                "SELECT count(*) FROM hookjournal_events a JOIN hookjournal_events b
                 ON a.journal_id = b.journal_id AND b.seq = a.seq + 1
                 WHERE a.journal_id = $1 AND a.hash <> b.prev",
                &[&id],
            )
            .unwrap()
            .get(0);
        assert_eq!(broken, 0);
        assert_eq!(cursor(&mut c, &id), *h);
    }
    // Payloads are jsonb where they are JSON.
    let tool: i64 = c
        .query_one(
            "SELECT count(*) FROM hookjournal_events WHERE payload->>'tool_name' = 'Bash'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(tool >= 3 * 700, "{tool}");

    // Team cost == the sum of the local ones, by every grouping.
    let j0 = &journals[0];
    for by in ["session", "day", "model", "machine", "month"] {
        let t = run_json(j0, &["--source", &url, "cost", "--by", by, "--json"]);
        let mut want = (0.0f64, 0u64, 0u64, 0u64);
        for j in &journals {
            let l = run_json(j, &["cost", "--by", by, "--json"]);
            want.0 += l["total"]["usd"].as_f64().unwrap();
            want.1 += l["total"]["input_tokens"].as_u64().unwrap();
            want.2 += l["total"]["output_tokens"].as_u64().unwrap();
            want.3 += l["total"]["total_tokens"].as_u64().unwrap();
        }
        let got = &t["total"];
        assert!(want.0 > 0.0 && want.3 > 0, "the fixture has usage");
        assert!(
            (got["usd"].as_f64().unwrap() - want.0).abs() < 1e-9,
            "by {by}: team {} vs local sum {}",
            got["usd"],
            want.0
        );
        assert_eq!(got["input_tokens"].as_u64().unwrap(), want.1, "by {by}");
        assert_eq!(got["output_tokens"].as_u64().unwrap(), want.2, "by {by}");
        assert_eq!(got["total_tokens"].as_u64().unwrap(), want.3, "by {by}");
    }
    // By machine: one row per machine, equal to that machine's local total.
    let t = run_json(j0, &["--source", &url, "cost", "--by", "machine", "--json"]);
    let rows: BTreeMap<String, f64> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["usd"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 3, "{t}");
    for (m, j) in journals.iter().enumerate() {
        let l = run_json(j, &["cost", "--by", "day", "--json"]);
        let usd = rows[&format!("m{}", m + 1)];
        assert!((usd - l["total"]["usd"].as_f64().unwrap()).abs() < 1e-9);
    }
    let table = team(&url, j0, &["cost", "--by", "machine"]);
    assert!(table.starts_with("MACHINE "), "{table}");
    assert!(
        table.contains("\nm1 ") && table.contains("\nm3 "),
        "{table}"
    );

    // Team sessions list every session of every machine.
    let want: BTreeSet<String> = journals
        .iter()
        .flat_map(|j| {
            run_json(j, &["sessions", "--json"])
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["session_id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let got: BTreeSet<String> = run_json(j0, &["--source", &url, "sessions", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_id"].as_str().unwrap().to_string())
        .collect();
    assert!(want.len() >= 6, "{want:?}");
    assert_eq!(got, want);
    let table = team(&url, j0, &["sessions"]);
    assert!(
        table.contains(&format!("{} sessions", want.len())),
        "{table}"
    );
    let local = run(j0, &["sessions"]);
    assert_eq!(table.lines().next(), local.lines().next(), "same header");

    // Team tasks: one per machine.
    let tasks = team(&url, j0, &["tasks"]);
    for m in 1..=3 {
        assert!(
            tasks.contains(&format!("ship the release from m{m}")),
            "{tasks}"
        );
    }
    // Notifications are report rows too.
    let notes: i64 = c
        .query_one("SELECT count(*) FROM hookjournal_notifications", &[])
        .unwrap()
        .get(0);
    assert!(notes >= 3 * 300, "{notes}");
    Ok(())
}

/// A child process that is killed if the test fails before it is taken back.
struct Reaped(Option<Child>);

/// A child's stderr as it arrives (read on a thread): a test waits for what the child says
/// instead of sleeping for long enough.
struct Stderr(Arc<Mutex<String>>);

impl Stderr {
    fn of(child: &mut Child) -> Stderr {
        let text = Arc::new(Mutex::new(String::new()));
        let mut from = child.stderr.take().expect("stderr piped");
        let into = text.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Stderr(text)
    }

    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// How often the child has said `what` so far.
    fn count(&self, what: &str) -> usize {
        self.text().matches(what).count()
    }

    /// Waits (60 s at most) until the child has said `what` more than `seen` times.
    fn wait_for(&self, what: &str, seen: usize) {
        let started = Instant::now();
        while self.count(what) <= seen {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never said {what:?}: {}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn follow_ships_as_the_journal_grows_and_team_views_match_local_ones() -> Ran {
    let mut pg = pg_server()?;
    pg.client("postgres")
        .batch_execute("CREATE DATABASE follow")
        .unwrap();
    let url = pg.url("follow");
    let root = tempfile::tempdir().unwrap();
    let j = make_journal(root.path(), 4, 300);
    let mut follower = Reaped(Some(
        ship(&j, &["--follow", "--poll-ms", "100", "--redact"])
            .env("HOOKJOURNAL_POSTGRES_URL", &url)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let follower_err = Stderr::of(follower.0.as_mut().unwrap());
    let mut c = pg.client("follow");
    let wait_for = |c: &mut postgres::Client, want: i64| {
        let started = Instant::now();
        loop {
            let id = std::fs::read_to_string(j.join("journal-id")).unwrap_or_default();
            let derived: Option<i64> = c
                .query_opt(
                    "SELECT derived_seq FROM hookjournal_cursor WHERE journal_id = $1",
                    &[&id.trim()],
                )
                .ok()
                .flatten()
                .map(|r| r.get(0));
            if cursor(c, id.trim()) == want && derived == Some(want) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "follower did not reach seq {want}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let h1 = head(&j);
    wait_for(&mut c, h1);
    // The journal grows (hooks spool; the follower's short lock drains them).
    spool_hooks(
        &j,
        "5e551000-0000-4000-8000-0000000000ff",
        120,
        1_795_000_000_000_000,
    );
    run(&j, &["tasks", "add", "a task added while following"]);
    let h2 = head(&j);
    assert!(h2 >= h1 + 121);
    wait_for(&mut c, h2);
    // The server goes away (SIGKILL: no clean shutdown) while the journal keeps growing; the
    // follower retries, reconnects once it is back, and ships the rest.
    let retries = follower_err.count("retrying in");
    pg.stop();
    spool_hooks(
        &j,
        "5e551000-0000-4000-8000-0000000000fe",
        30,
        1_795_100_000_000_000,
    );
    let h3 = head(&j);
    // Back only once the follower has met the outage and said it retries.
    follower_err.wait_for("retrying in", retries);
    pg.restart();
    let mut c = pg.client("follow");
    wait_for(&mut c, h3);
    let follower = follower.0.take().unwrap();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(follower.id() as i32, libc::SIGTERM) };
    follower.wait_with_output().unwrap();
    let err = follower_err.text();
    assert!(err.contains("retrying in"), "{err}");
    assert!(!err.contains("not-a-secret"), "{err}");

    // One journal in this database: the team views print exactly what the local ones print.
    let envs = [("HOOKJOURNAL_POSTGRES_URL", url.as_str())];
    let via_env = |args: &[&str]| {
        let mut c = cmd(&j);
        c.args(["--source", "postgres"]).args(args);
        for (k, v) in envs {
            c.env(k, v);
        }
        ok(c.output().unwrap(), &format!("{args:?}"))
    };
    for by in ["model", "day", "session", "month"] {
        assert_eq!(
            via_env(&["cost", "--by", by]),
            run(&j, &["cost", "--by", by]),
            "cost --by {by}"
        );
    }
    assert_eq!(via_env(&["tasks"]), run(&j, &["tasks"]));
    // $HOOKJOURNAL_SOURCE: the team views read the store, other commands the journal.
    let with_source = |args: &[&str]| {
        let out = cmd(&j)
            .args(args)
            .env("HOOKJOURNAL_SOURCE", &url)
            .output()
            .unwrap();
        ok(out, &format!("HOOKJOURNAL_SOURCE {args:?}"))
    };
    assert_eq!(
        with_source(&["cost", "--by", "model"]),
        run(&j, &["cost", "--by", "model"])
    );
    assert!(with_source(&["status"]).contains("events"));
    let mut team_json: serde_json::Value =
        serde_json::from_str(&via_env(&["tasks", "--status", "pending", "--json"])).unwrap();
    for t in team_json.as_array_mut().unwrap() {
        let o = t.as_object_mut().unwrap();
        assert!(o.remove("machine").is_some() && o.remove("journal_id").is_some());
    }
    assert_eq!(
        team_json,
        run_json(&j, &["tasks", "--status", "pending", "--json"])
    );
    // --redact: the secret in a payload never reached the database.
    let leaked: i64 = c
        .query_one(
            "SELECT count(*) FROM hookjournal_events
             WHERE position($1 in coalesce(payload::text, '') || encode(coalesce(payload_bytes, ''), 'escape')) > 0",
            &[&SECRET],
        )
        .unwrap()
        .get(0);
    assert_eq!(leaked, 0, "a secret was shipped despite --redact");
    let redacted: i64 = c
        .query_one(
            "SELECT count(*) FROM hookjournal_events WHERE redacted",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(redacted >= 1);
    // Another journal claiming this one's identity (a rebuilt or copied journal): its hash
    // chain differs, so nothing is mixed in and the command says why.
    let other = make_journal(root.path(), 8, 50);
    std::fs::copy(j.join("journal-id"), other.join("journal-id")).unwrap();
    let before: i64 = c
        .query_one("SELECT count(*) FROM hookjournal_events", &[])
        .unwrap()
        .get(0);
    let out = ship(&other, &["--postgres", &url]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("hash chain differs"), "{err}");
    let after: i64 = c
        .query_one("SELECT count(*) FROM hookjournal_events", &[])
        .unwrap()
        .get(0);
    assert_eq!(before, after);
    // A store migrated by a newer hookjournal is left alone, by ship and by the team views.
    c.batch_execute("INSERT INTO hookjournal_schema (version) VALUES (99)")
        .unwrap();
    for args in [
        vec!["ship", "--postgres", url.as_str()],
        vec!["--source", url.as_str(), "sessions"],
    ] {
        let out = cmd(&j).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("newer"), "{err}");
    }
    // A write through --source is refused.
    let out = cmd(&j)
        .args(["--source", &url, "tasks", "add", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    Ok(())
}

fn connection_errors_never_print_the_password() {
    let root = tempfile::tempdir().unwrap();
    let j = root.path().join(".hookjournal");
    run(&j, &["tasks", "add", "x"]);
    let port = free_port();
    let url = format!("postgres://alice:hunter2-secret@127.0.0.1:{port}/team");
    for args in [
        vec!["ship", "--postgres", url.as_str()],
        vec!["--source", url.as_str(), "sessions"],
    ] {
        let out = cmd(&j).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(!err.contains("hunter2"), "password printed: {err}");
        assert!(err.contains("alice:***@127.0.0.1"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // Same through the environment.
    let out = cmd(&j)
        .args(["ship"])
        .env("HOOKJOURNAL_POSTGRES_URL", &url)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(!err.contains("hunter2") && err.contains("***"), "{err}");
}

fn postgres_over_tls_verifies_the_server_certificate() -> Ran {
    let pg = pg_server_with(true)?;
    let ca = pg.ca.clone().unwrap();
    let root = tempfile::tempdir().unwrap();
    let j = make_journal(root.path(), 9, 40);
    let h = head(&j);
    // Trusting the test CA: shipped over TLS (sslmode=require fails without it).
    let url = format!(
        "{}?sslmode=require&sslrootcert={}",
        pg.url("postgres"),
        ca.display()
    );
    let out = ok(
        ship(&j, &["--postgres", &url]).output().unwrap(),
        "ship over TLS",
    );
    assert!(out.contains(&format!("shipped {h} event(s)")), "{out}");
    let got = team(&url, &j, &["sessions", "--json"]);
    assert!(
        got.contains("5e551000-0000-4000-8000-000000000009"),
        "{got}"
    );
    // Not trusting it (public roots only): refused, before anything is sent.
    let url = format!("{}?sslmode=require", pg.url("postgres"));
    let out = ship(&j, &["--postgres", &url]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    assert!(!err.contains("not-a-secret"), "{err}");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// OTLP.

#[derive(Default)]
struct Received {
    /// (journal_id, seq) → the record's attributes and body, for every accepted record.
    records: Vec<(String, i64, BTreeMap<String, Value>, String)>,
    resources: BTreeSet<Vec<(String, String)>>,
    /// Requests answered 503 (the outage) and accepted.
    refused: usize,
    accepted: usize,
    bad: Vec<String>,
}

fn attr_map(kvs: &[KeyValue]) -> BTreeMap<String, Value> {
    kvs.iter()
        .filter_map(|kv| Some((kv.key.clone(), kv.value.clone()?.value?)))
        .collect()
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// A minimal OTLP/HTTP logs receiver: answers 503 to the first `outage` requests, then 200.
fn handle(mut s: TcpStream, state: &Mutex<Received>, outage: usize) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut len = 0usize;
    let mut ctype = String::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().unwrap(),
            "content-type" => ctype = v.trim().to_string(),
            _ => {}
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    let mut st = state.lock().unwrap();
    if !line.starts_with("POST /v1/logs ") || ctype != "application/x-protobuf" {
        st.bad.push(format!("{} {ctype}", line.trim()));
    }
    let status = if st.refused < outage {
        st.refused += 1;
        "503 Service Unavailable"
    } else {
        match ExportLogsServiceRequest::decode(&body[..]) {
            Ok(req) => {
                st.accepted += 1;
                for rl in &req.resource_logs {
                    let res = rl.resource.as_ref().unwrap();
                    st.resources.insert(
                        attr_map(&res.attributes)
                            .iter()
                            .map(|(k, v)| (k.clone(), text(Some(v))))
                            .collect(),
                    );
                    for sl in &rl.scope_logs {
                        for rec in &sl.log_records {
                            let a = attr_map(&rec.attributes);
                            let id = text(a.get("hookjournal.journal_id"));
                            let seq = match a.get("hookjournal.seq") {
                                Some(Value::IntValue(i)) => *i,
                                _ => -1,
                            };
                            let body = text(rec.body.as_ref().and_then(|b| b.value.as_ref()));
                            st.records.push((id, seq, a, body));
                        }
                    }
                }
                "200 OK"
            }
            Err(e) => {
                st.bad.push(format!("undecodable request: {e}"));
                "400 Bad Request"
            }
        }
    };
    drop(st);
    let _ = write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

fn receiver(listener: TcpListener, state: Arc<Mutex<Received>>, outage: usize) {
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            handle(s, &state, outage);
        }
    });
}

fn otlp_receiver_gets_every_event_once_with_attributes_across_an_outage() {
    let root = tempfile::tempdir().unwrap();
    let j = make_journal(root.path(), 5, 1300);
    let h = head(&j);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let state = Arc::new(Mutex::new(Received::default()));

    // The receiver is down (connection refused) when shipping starts, comes up after a while
    // and then answers 503 three times.
    let mut shipper = ship(
        &j,
        &[
            "--otlp",
            &url,
            "--otlp-signals",
            "logs",
            "--redact",
            "--machine",
            "laptop-5",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Up only once the shipper has found it down.
    Stderr::of(&mut shipper).wait_for("unavailable", 0);
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    receiver(listener, state.clone(), 3);
    let out = shipper.wait_with_output().unwrap();
    let stdout = ok(out, "ship --otlp");
    assert!(
        stdout.contains(&format!("shipped {h} event(s)")),
        "{stdout}"
    );

    let id = journal_id(&j);
    {
        let st = state.lock().unwrap();
        assert!(st.bad.is_empty(), "{:?}", st.bad);
        assert_eq!(st.refused, 3);
        let seqs: Vec<i64> = st.records.iter().map(|r| r.1).collect();
        let unique: BTreeSet<i64> = seqs.iter().copied().collect();
        assert_eq!(seqs.len(), unique.len(), "an event arrived twice");
        assert_eq!(unique, (1..=h).collect::<BTreeSet<i64>>(), "events missing");
        assert!(st.records.iter().all(|r| r.0 == id));
        // Resource attributes.
        assert_eq!(st.resources.len(), 1);
        let res: BTreeMap<String, String> = st
            .resources
            .iter()
            .next()
            .unwrap()
            .iter()
            .cloned()
            .collect();
        assert_eq!(res["service.name"], "hookjournal");
        assert_eq!(res["host.name"], "laptop-5");
        assert_eq!(res["hookjournal.journal_id"], id);
        // Record attributes, by kind.
        let mut usage = 0;
        for (_, seq, a, body) in &st.records {
            assert!(a.contains_key("event.name"), "seq {seq}");
            assert!(!body.contains(SECRET), "seq {seq}: secret shipped");
            let kind = text(a.get("hookjournal.kind"));
            if let Some(name) = kind.strip_prefix("Hook:") {
                assert_eq!(text(a.get("event.name")), "hookjournal.hook");
                assert!(a.contains_key("session.id"), "seq {seq}");
                assert_eq!(text(a.get("hookjournal.hook_event_name")), name);
            }
            if kind == "UsageObserved" {
                usage += 1;
                assert_eq!(text(a.get("event.name")), "hookjournal.usage_observed");
                for k in [
                    "session.id",
                    "model",
                    "gen_ai.response.model",
                    "gen_ai.usage.input_tokens",
                    "gen_ai.usage.output_tokens",
                    "input_tokens",
                    "output_tokens",
                    "cache_read_tokens",
                    "cache_creation_tokens",
                    "cost_usd",
                ] {
                    assert!(a.contains_key(k), "seq {seq} lacks {k}: {a:?}");
                }
            }
        }
        assert!(usage > 0);
    }

    // Nothing new: nothing sent. Then only the new events.
    let before = state.lock().unwrap().records.len();
    let again = ok(
        ship(&j, &["--otlp", &url, "--otlp-signals", "logs"])
            .output()
            .unwrap(),
        "ship again",
    );
    assert!(again.contains("shipped 0 event(s)"), "{again}");
    assert_eq!(state.lock().unwrap().records.len(), before);
    spool_hooks(
        &j,
        "5e551000-0000-4000-8000-0000000000aa",
        40,
        1_796_000_000_000_000,
    );
    let more = ok(
        ship(&j, &["--otlp", &url, "--otlp-signals", "logs"])
            .output()
            .unwrap(),
        "ship more",
    );
    assert!(more.contains("shipped 40 event(s)"), "{more}");
    let st = state.lock().unwrap();
    let seqs: Vec<i64> = st.records.iter().map(|r| r.1).collect();
    let unique: BTreeSet<i64> = seqs.iter().copied().collect();
    assert_eq!(seqs.len(), unique.len());
    assert_eq!(unique.len() as i64, h + 40);
}

fn otlp_gives_up_after_retry_for_and_keeps_the_cursor() {
    let root = tempfile::tempdir().unwrap();
    let j = make_journal(root.path(), 6, 30);
    let url = format!("http://u:pw-secret@127.0.0.1:{}", free_port());
    let out = ship(
        &j,
        &["--otlp", &url, "--otlp-signals", "logs", "--retry-for", "1"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("pw-secret"), "{err}");
    assert!(err.contains("cursor is kept"), "{err}");
    // No cursor was written: nothing was acknowledged.
    let cursors: Vec<_> = std::fs::read_dir(&j)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cursor"))
        .collect();
    assert!(cursors.is_empty());
}

/// Throughput of `ship --postgres` at 100k events (run with `--ignored --nocapture`).
fn ship_throughput_100k_events() -> Ran {
    let pg = pg_server()?;
    let root = tempfile::tempdir().unwrap();
    let j = make_journal(root.path(), 7, 100_000);
    let h = head(&j);
    let started = Instant::now();
    let out = ok(
        ship(&j, &["--postgres", &pg.url("postgres")])
            .output()
            .unwrap(),
        "ship",
    );
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "shipped {h} events in {secs:.2}s: {:.0} events/s ({out})",
        h as f64 / secs
    );
    let _ = std::io::stderr().flush();
    Ok(())
}

harness_main!(
    three_machines_ship_at_once_one_killed_mid_batch_every_event_once,
    follow_ships_as_the_journal_grows_and_team_views_match_local_ones,
    connection_errors_never_print_the_password,
    postgres_over_tls_verifies_the_server_certificate,
    otlp_receiver_gets_every_event_once_with_attributes_across_an_outage,
    otlp_gives_up_after_retry_for_and_keeps_the_cursor,
    #[ignore]
    ship_throughput_100k_events,
);
