//! `hookjournal hook`: the universal handler. bytes in → envelope → journal → fold → answer out.
//!
//! It always exits 0 and prints one JSON object or nothing: bad input is journaled as
//! `Malformed`, a busy journal means the event is spooled, and any internal error or panic is
//! one line on stderr. The lock is held only for the append itself.
//!
//! This file is the process's edge: argv parsed, stdin read, the environment looked up, the
//! answer printed. Everything between is one engine call, `engine::hook::run`.

use engine::hook::{Edge, Flags};
use engine::log::{NewEvent, Truncation};
use engine::trace::Trace;
use projections::event::HookEvent;
use projections::host::CallerEnv;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The hook's flags (parsed leniently by hand: a hook must not fail on an unexpected argument).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// auto, claude, codex, gemini, copilot, cursor, openclaw, qwen, opencode, crush, pi, droid or
    /// cline: the host to assume when neither the payload nor the hook's environment tells.
    #[arg(long, default_value = "auto")]
    pub host: String,
    /// Run by the Claude Code plugin: when a settings file registers hookjournal too, it defers
    /// to that registration (answers nothing, records nothing) and says so at SessionStart.
    #[arg(long)]
    pub plugin: bool,
    /// The event, for payloads that name none (Copilot CLI's camelCase hooks).
    #[arg(long)]
    pub event: Option<String>,
}

fn parse_flags(argv: &[OsString]) -> Flags {
    let mut f = Flags {
        journal: None,
        host: None,
        plugin: false,
        event: None,
        last_arg: None,
    };
    let args: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(v) = a.strip_prefix("--journal=") {
            f.journal = Some(PathBuf::from(v));
        } else if a == "--journal" {
            f.journal = args.get(i + 1).map(PathBuf::from);
            i += 1;
        } else if let Some(v) = a.strip_prefix("--host=") {
            f.host = Some(v.to_string());
        } else if a == "--host" {
            f.host = args.get(i + 1).cloned();
            i += 1;
        } else if a == "--plugin" {
            f.plugin = true;
        } else if let Some(v) = a.strip_prefix("--event=") {
            f.event = Some(v.to_string());
        } else if a == "--event" {
            f.event = args.get(i + 1).cloned();
            i += 1;
        }
        i += 1;
    }
    f.last_arg = args
        .last()
        .filter(|a| a.trim_start().starts_with('{'))
        .cloned();
    f
}

static PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The hook, run from `main` before any argument parsing: always exits 0.
pub fn main_guarded(argv: Vec<OsString>) -> ExitCode {
    if crate::output::printed_help(&argv, "hook") {
        return ExitCode::SUCCESS;
    }
    // A panic is caught, reported as one line, and the invocation spooled (see `run`).
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut p) = PANIC.lock() {
            *p = Some(crate::output::panic_text(info));
        }
    }));
    match std::panic::catch_unwind(|| run(&argv)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!(
            "hookjournal: {}",
            crate::output::one_line(&format!("{e:#}"))
        ),
        Err(_) => eprintln!("hookjournal: {}", panic_message()),
    }
    ExitCode::SUCCESS
}

fn panic_message() -> String {
    PANIC
        .lock()
        .ok()
        .and_then(|mut p| p.take())
        .map(|m| crate::output::one_line(&m))
        .unwrap_or_else(|| "internal error".into())
}

/// Reads stdin to EOF, keeping at most `cap` bytes but hashing all of them.
fn read_stdin(cap: usize) -> (Vec<u8>, Option<Truncation>) {
    let mut stdin = std::io::stdin().lock();
    // Read straight into the kept bytes (no zeroed 64 KB buffer: its 16 page faults and memset
    // were 8% of a hook's instructions, issue 43). An error keeps what was read.
    let mut kept = Vec::with_capacity(cap.min(16 * 1024));
    let _ = (&mut stdin).take(cap as u64).read_to_end(&mut kept);
    if kept.len() < cap {
        return (kept, None);
    }
    // At the cap: the rest is counted and hashed with what was kept, never kept.
    let mut hasher = blake3::Hasher::new();
    hasher.update(&kept);
    let mut total = kept.len() as u64;
    let mut buf = [0u8; 8 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                total += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let truncated = (total > kept.len() as u64).then(|| Truncation {
        original_len: total,
        blake3: *hasher.finalize().as_bytes(),
    });
    (kept, truncated)
}

/// The hook process's stdin, environment and stdout, as `engine::hook::run` reaches them.
struct Process;

impl Edge for Process {
    fn read_stdin(&mut self, cap: usize) -> (Vec<u8>, Option<Truncation>) {
        read_stdin(cap)
    }
    fn env(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
    fn answer(&mut self, out: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{out}");
        let _ = stdout.flush();
    }
    fn waiting_notice(&self) {
        crate::output::hook_waiting_notice();
    }
    fn panic_message(&self) -> String {
        panic_message()
    }
}

fn run(argv: &[OsString]) -> anyhow::Result<()> {
    let _trace = Trace::start();
    let flags = parse_flags(argv);
    let dir = crate::locate::journal_dir(flags.journal.as_deref(), true);
    let refusal = crate::locate::refusal(&dir);
    engine::hook::run(&flags, &dir, refusal, &mut Process);
    Ok(())
}

/// What the hook records for `payload` (on stdin; `args` its command line, where Codex's `notify`
/// puts its JSON; `env`, the hook environment's variables that are set): the event, and whether
/// the payload parsed as a hook event (for the fuzz target `hook_payload`).
#[doc(hidden)]
pub fn classify_for_fuzzing(
    args: &[&str],
    payload: &[u8],
    env: &[&str],
) -> (NewEvent, Option<HookEvent>) {
    let argv: Vec<OsString> = std::iter::once("hookjournal")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let caller = CallerEnv::read(|name| env.contains(&name));
    let inv = engine::hook::classify(
        &parse_flags(&argv),
        0,
        payload.to_vec(),
        None,
        None,
        &caller,
    );
    (inv.ev, inv.parsed)
}
