//! `hookjournal statusline`: the command Claude Code runs for its status line. stdin (the
//! statusline JSON) → one line on stdout, always exit 0.
//!
//! It never takes the journal's lock. Readings of Claude Code's own figures (cost, context) go to
//! the spool, only when they changed since the last one recorded for the session (kept in a tiny
//! file under `statusline/`). The journal facts it shows (task in progress, reminder due) come
//! from a cache file under `statusline/`, refreshed at most once a second by a detached child
//! (`--refresh-view`) that tries the lock once without waiting, reads three checkpoint
//! partitions and lets go.

use engine::log::NewEvent;
use engine::settings::Settings;
use projections::derived::{self, HostReported};
use projections::fold::{self, State};
use projections::session::SessionState;
use projections::statusline::{self, Facts, Input};
use projections::Kind;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

/// The statusline's flags (parsed leniently by hand, like the hook's: it must never fail).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also run this statusline command (the one you had) and print its output after ours.
    #[arg(long, value_name = "COMMAND")]
    pub chain: Option<String>,
    /// Record Claude Code's figures but print only the chained command's output.
    #[arg(long)]
    pub record_only: bool,
}

const DIR: &str = "statusline";
const STDIN_CAP: usize = 1 << 20;
/// How old the cached facts may get before a refresh is started.
const FRESH: Duration = Duration::from_millis(1000);
const CHAIN_TIMEOUT: Duration = Duration::from_secs(2);

struct Flags {
    journal: Option<PathBuf>,
    chain: Option<String>,
    record_only: bool,
    refresh: Option<String>,
}

fn parse_flags(argv: &[OsString]) -> Flags {
    let args: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut f = Flags {
        journal: None,
        chain: None,
        record_only: false,
        refresh: None,
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut value = |name: &str| -> Option<String> {
            if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                return Some(v.to_string());
            }
            if a == name {
                i += 1;
                return args.get(i).cloned();
            }
            None
        };
        if let Some(v) = value("--journal") {
            f.journal = Some(PathBuf::from(v));
        } else if let Some(v) = value("--chain") {
            f.chain = Some(v);
        } else if let Some(v) = value("--refresh-view") {
            f.refresh = Some(v);
        } else if a == "--record-only" {
            f.record_only = true;
        }
        i += 1;
    }
    f
}

/// Claude Code's status line, run from `main` before any argument parsing: always exits 0.
pub fn main_guarded(argv: Vec<OsString>) -> ExitCode {
    if crate::output::printed_help(&argv, "statusline") {
        return ExitCode::SUCCESS;
    }
    std::panic::set_hook(Box::new(|_| {}));
    let flags = parse_flags(&argv);
    if let Some(session) = &flags.refresh {
        let dir = crate::locate::journal_dir(flags.journal.as_deref(), true);
        let _ = std::panic::catch_unwind(|| refresh(&dir, session));
        return ExitCode::SUCCESS;
    }
    let line = std::panic::catch_unwind(|| run(&flags))
        .unwrap_or_else(|_| "hookjournal │ statusline error".to_string());
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// Reads stdin to EOF (the writer must never see a broken pipe), keeping the first `STDIN_CAP`
/// bytes; a larger input is unreadable.
fn read_stdin() -> Vec<u8> {
    let mut kept = Vec::new();
    let mut over = false;
    let mut buf = [0u8; 16 * 1024];
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) if kept.len() + n <= STDIN_CAP => kept.extend_from_slice(&buf[..n]),
            Ok(_) => over = true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if over {
        kept.clear();
    }
    kept
}

/// `--journal` > `$HOOKJOURNAL_DIR` > the workspace's project dir > `$CLAUDE_PROJECT_DIR` > the
/// nearest ancestor holding `.hookjournal/`.
fn journal_dir(flags: &Flags, input: Option<&Input>) -> PathBuf {
    if flags.journal.is_some() || std::env::var_os("HOOKJOURNAL_DIR").is_some_and(|v| !v.is_empty())
    {
        return crate::locate::journal_dir(flags.journal.as_deref(), true);
    }
    if let Some(p) = input.and_then(|i| i.project_dir.as_deref()) {
        return Path::new(p).join(crate::locate::DIR_NAME);
    }
    crate::locate::journal_dir(None, true)
}

fn run(flags: &Flags) -> String {
    let bytes = read_stdin();
    let input = Input::parse(&bytes);
    let dir = journal_dir(flags, input.as_ref());
    let (settings, _) = Settings::load(&dir);
    let mut facts = None;
    // Nothing is written into a directory the hook would refuse (a link, another user's, one
    // hookjournal did not make that is no journal, a foreign journal).
    let usable = dir.is_dir()
        && crate::locate::refusal(&dir).is_none()
        && !matches!(
            engine::origin::status(&dir),
            engine::origin::Origin::Foreign(_)
        );
    if let (Some(i), true) = (&input, usable) {
        if let Some(sid) = &i.session_id {
            let base = dir.join(DIR);
            if ensure_private_dir(&base) {
                let name = file_stem(sid);
                if i.has_figures() {
                    let _ = record_if_changed(&dir, &base.join(format!("{name}.last")), sid, i);
                }
                facts = cached_facts(&dir, &base.join(format!("{name}.view")), sid);
            }
        }
    }
    let ours = statusline::render(input.as_ref(), facts.as_ref(), &settings.policy, color());
    let theirs = flags
        .chain
        .as_deref()
        .and_then(|c| run_chained(c, &bytes))
        .filter(|t| !t.trim().is_empty());
    match (flags.record_only, theirs) {
        (true, Some(t)) => t,
        (true, None) => String::new(),
        (false, Some(t)) => format!("{ours}\n{t}"),
        (false, None) => ours,
    }
}

fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Per-session file names: a hash of the id (session ids are never used as paths).
fn file_stem(session: &str) -> String {
    let h = blake3::hash(session.as_bytes());
    h.to_hex()[..16].to_string()
}

/// A private directory of our own in the journal's (a link in its place is never followed).
fn ensure_private_dir(p: &Path) -> bool {
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
        return false;
    };
    engine::fs::door::Dir::open_nofollow(parent)
        .and_then(|d| d.create_dir_all(Path::new(name), engine::fs::DIR_MODE))
        .is_ok()
}

/// The file `path` (in the statusline's own directory) opened to read and write in place,
/// created when missing: a regular file with one link the user owns, reached through no link
/// (`door::Dir::open_in_place`).
fn in_place(path: &Path) -> Option<std::fs::File> {
    let (parent, name) = (path.parent()?, path.file_name()?);
    engine::fs::door::Dir::open_nofollow(parent)
        .and_then(|d| d.open_in_place(Path::new(name), engine::fs::FILE_MODE))
        .ok()
}

/// Writes a reading to the spool when it differs from the last one recorded for the session.
/// The compare-and-write holds an flock on the session's own `.last` file (never the journal's
/// lock), so two statusline processes of one session do not both record the same change.
fn record_if_changed(dir: &Path, last_path: &Path, session: &str, input: &Input) -> Option<()> {
    let f = in_place(last_path)?;
    // SAFETY: flock on a descriptor we own; released when `f` closes.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return None;
    }
    let mut text = String::new();
    let _ = (&f).read_to_string(&mut text);
    let last: Option<HostReported> = serde_json::from_str(&text).ok();
    let reading = input.reading();
    if !statusline::changed(last.as_ref(), &reading) {
        return Some(());
    }
    let body = derived::body(&reading);
    let ev = NewEvent {
        recorded_at_us: chrono::Utc::now().timestamp_micros(),
        host: "claude".into(),
        kind: Kind::HostReported.into(),
        session_id: Some(session.to_string()),
        agent_id: None,
        payload: body.clone(),
        truncated: None,
        spooled: true,
    };
    engine::state::spool_event(dir, &ev).ok()?;
    f.set_len(0).ok()?;
    let mut w = &f;
    std::io::Seek::seek(&mut w, std::io::SeekFrom::Start(0)).ok()?;
    w.write_all(&body).ok()?;
    Some(())
}

/// The cached facts; a stale or missing cache starts a refresh in the background.
fn cached_facts(dir: &Path, view: &Path, session: &str) -> Option<Facts> {
    let fresh = engine::fs::door::age(view).is_some_and(|age| age < FRESH);
    // Read before a refresh is started: this call shows what the cache held, never a view a
    // fast refresher happened to finish meanwhile (a line that does not depend on a race).
    let text = engine::fs::files::read_small(view, 1 << 20).ok();
    if !fresh {
        spawn_refresh(dir, session);
    }
    serde_json::from_slice(&text?).ok()
}

fn spawn_refresh(dir: &Path, session: &str) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let _ = Command::new(exe)
        .arg("--journal")
        .arg(dir)
        .arg("statusline")
        .arg("--refresh-view")
        .arg(session)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// The detached refresher: one try at the lock (no waiting, no priority: hooks come first),
/// three partitions read, the cache rewritten atomically. When the lock is busy the old cache is
/// touched, so the next refresh waits another second.
fn refresh(dir: &Path, session: &str) {
    let base = dir.join(DIR);
    let stem = file_stem(session);
    let view = base.join(format!("{stem}.view"));
    // One refresher per session at a time.
    let Some(guard) = in_place(&base.join(format!("{stem}.refreshing"))) else {
        return;
    };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(guard.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return;
    }
    let (settings, _) = Settings::load(dir);
    let facts = read_facts(dir, session, &settings);
    match facts {
        Some(f) => {
            // A cache: rebuilt when lost, so not worth an fsync on this path.
            let _ = engine::fs::write_atomic(
                &base,
                &format!("{stem}.view"),
                &serde_json::to_vec(&f).unwrap_or_default(),
                engine::fs::Durability::Volatile,
            );
        }
        None => {
            let present = engine::fs::files::is_present(&view);
            if let Some(f) = present.then(|| in_place(&view)).flatten() {
                let _ = f.set_modified(std::time::SystemTime::now());
            } else {
                // No cache yet and no journal to read: an empty one, so a refresh is not
                // started on every call.
                let _ = engine::fs::files::write_marker(&view, b"{}");
            }
        }
    }
}

/// The facts from the hot cache when it is current and nothing waits in the spool (no sled open:
/// a statusline refreshes often); else from the store, once the spool is ingested and the log's
/// events it has not folded yet are folded in.
fn read_facts(dir: &Path, session: &str, settings: &Settings) -> Option<Facts> {
    let keys = [
        fold::GLOBAL_KEY.to_vec(),
        fold::TASKS_KEY.to_vec(),
        fold::session_key(session),
    ];
    let parts = engine::state::read_partitions_quick(dir, settings.hook.segment_events, &keys)?;
    facts_from(&parts, settings)
}

/// The facts from the global, tasks and session partitions' bytes.
fn facts_from(parts: &[Option<Vec<u8>>], settings: &Settings) -> Option<Facts> {
    let mut st = State::default();
    if let Some(b) = &parts[0] {
        st.global = fold::decode(b)?;
    }
    if let Some(b) = &parts[1] {
        st.tasks = fold::decode(b)?;
    }
    let s: Option<SessionState> = match &parts[2] {
        Some(b) => Some(fold::decode(b)?),
        None => None,
    };
    Some(statusline::facts(&st, s.as_ref(), &settings.policy))
}

/// Runs the user's own statusline command (`sh -c`, as Claude Code would) with the same input;
/// its first lines, or nothing after the timeout.
fn run_chained(command: &str, input: &[u8]) -> Option<String> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = (&mut stdout).take(64 * 1024).read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let deadline = std::time::Instant::now() + CHAIN_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let _ = writer.join();
    // A grandchild may keep the pipe open: do not wait for it past the deadline.
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let out = rx.recv_timeout(left.max(Duration::from_millis(50))).ok()?;
    let text = String::from_utf8_lossy(&out);
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}
