//! `hookjournal hook`: the universal handler. bytes in → envelope → journal → fold → answer out.
//!
//! It always exits 0 and prints one JSON object or nothing: bad input is journaled as
//! `Malformed`, a busy journal means the event is spooled, and any internal error or panic is
//! one line on stderr. The lock is held only for the append itself.

use engine::hook::Invocation;
use engine::settings::Settings;
use engine::trace::{mark, Trace};
use journal::NewEvent;
use projections::event::{self, HookEvent};
use projections::host::{CallerEnv, Host};
use projections::Kind;
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

struct Flags {
    journal: Option<PathBuf>,
    host: Option<String>,
    plugin: bool,
    event: Option<String>,
    last_arg: Option<String>,
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
fn read_stdin(cap: usize) -> (Vec<u8>, Option<journal::Truncation>) {
    let mut stdin = std::io::stdin().lock();
    let mut kept = Vec::new();
    let mut hasher = blake3::Hasher::new();
    let mut total = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                total += n as u64;
                if kept.len() < cap {
                    let take = n.min(cap - kept.len());
                    kept.extend_from_slice(&buf[..take]);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let truncated = (total > kept.len() as u64).then(|| journal::Truncation {
        original_len: total,
        blake3: *hasher.finalize().as_bytes(),
    });
    (kept, truncated)
}

/// The plugin's hook beside a settings file that registers hookjournal as well: the settings'
/// handler journals every event, so this one does nothing — and says so, once a session, at
/// SessionStart (a `systemMessage` the user sees).
fn defer_to_settings() -> bool {
    let project = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from);
    let files = engine::registration::claude_settings_files(project.as_deref());
    let Some(file) = engine::registration::hooks_registered_in(&files) else {
        return false;
    };
    let (payload, _) = read_stdin(1 << 20);
    let start = serde_json::from_slice::<serde_json::Value>(&payload)
        .is_ok_and(|v| v["hook_event_name"] == "SessionStart");
    if start {
        let msg = format!(
            "hookjournal: {} registers hookjournal and so does its Claude Code plugin; the plugin stays idle so that no event is journaled twice (`hookjournal uninstall` keeps only the plugin)",
            file.display()
        );
        println!("{}", serde_json::json!({ "systemMessage": msg }));
    }
    true
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

fn run(argv: &[OsString]) -> anyhow::Result<()> {
    let _trace = Trace::start();
    let flags = parse_flags(argv);
    if flags.plugin && defer_to_settings() {
        return Ok(());
    }
    let dir = crate::locate::journal_dir(flags.journal.as_deref(), true);
    if let Some(why) = crate::locate::refusal(&dir) {
        eprintln!("hookjournal: {why}");
        return Ok(());
    }
    // A journal that came with the repository (or from another machine or directory): nothing
    // from it reaches the agent, and nothing is added to it, until the user adopts it.
    if let journal::origin::Origin::Foreign(why) = journal::origin::status(&dir) {
        let msg = format!(
            "hookjournal: {} is foreign: {why}; nothing is recorded into it or injected from it until `hookjournal trust` adopts it",
            dir.display()
        );
        eprintln!("{msg}");
        // Claude Code shows a SessionStart `systemMessage` to the user (not to the model): an
        // upgraded user's journal from before origin markers is not left idle unseen.
        let claude = flags
            .host
            .as_deref()
            .is_none_or(|h| h == Host::Claude.as_str());
        let (payload, _) = read_stdin(1 << 20);
        let start = serde_json::from_slice::<serde_json::Value>(&payload)
            .is_ok_and(|v| v["hook_event_name"] == "SessionStart");
        if claude && start {
            println!("{}", serde_json::json!({ "systemMessage": msg }));
        }
        return Ok(());
    }
    let (settings, warning) = Settings::load(&dir);
    mark("settings");
    crate::output::hook_waiting_notice();
    let inv = read_invocation(&flags, &settings);
    // Gemini CLI shows a hook's stderr to the user ("Hook system message") whenever stdout is
    // empty: a settings warning there would appear on every call. `hookjournal status` and every
    // other command report it.
    if inv.host != Host::Gemini.as_str() {
        for line in warning.iter().flat_map(|w| w.lines()) {
            eprintln!("hookjournal: {line}");
        }
    }

    // What an earlier hook could not keep, before this one adds anything of its own.
    say_missing_events(&dir);
    let handled = engine::hook::handle(&dir, &settings, &inv, &panic_message);
    if let Some(out) = &handled.stdout {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{out}");
        let _ = stdout.flush();
    }
    handled.after_answer(&dir, &settings, &inv);
    mark("close");
    Ok(())
}

/// Events an earlier hook could not make durable: said once, on stderr (one `stat` when none).
fn say_missing_events(dir: &std::path::Path) {
    for i in journal::incidents::take_unread(dir) {
        let at = chrono::DateTime::from_timestamp_millis(i.at_ms)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        eprintln!(
            "hookjournal: an event may be missing from the journal: at {at}, {} (`hookjournal status` lists it)",
            crate::output::one_line(&i.text)
        );
    }
}

/// Reads stdin (or Codex's legacy `notify` argument), detects the host, parses the payload and
/// builds the event to record: `Malformed` when it does not parse.
fn read_invocation(flags: &Flags, settings: &Settings) -> Invocation {
    let recorded_at_us = now_us();
    let (payload, truncated) = read_stdin(settings.hook.payload_cap);
    let agent_id = std::env::var(&settings.policy.loop_agent_env)
        .ok()
        .filter(|a| !a.trim().is_empty());
    let caller = engine::ingest::caller_env();
    classify(flags, recorded_at_us, payload, truncated, agent_id, &caller)
}

/// The invocation's bytes (stdin, or Codex's `notify` argument) as the event to record: the whole
/// of what the hook decides before it touches the journal, I/O aside (fuzzed: `crate::fuzz`).
fn classify(
    flags: &Flags,
    recorded_at_us: i64,
    mut payload: Vec<u8>,
    mut truncated: Option<journal::Truncation>,
    agent_id: Option<String>,
    caller: &CallerEnv,
) -> Invocation {
    // Codex's legacy `notify` passes its JSON as the last argument, with empty stdin.
    let mut notify: Option<(String, Option<String>)> = None;
    if payload.iter().all(u8::is_ascii_whitespace) {
        if let Some(arg) = flags
            .last_arg
            .as_deref()
            .and_then(event::codex_notify_payload)
        {
            notify = Some(notify_name_and_thread(&arg));
            payload = arg;
            truncated = None;
        }
    }
    // The payload is read once: the host it comes from and the event it is.
    let (host, parsed): (Host, Option<HookEvent>) = match (&notify, flags.host.as_deref()) {
        (Some(_), None | Some("auto")) => (Host::Codex, None),
        (None, hint) if truncated.is_none() => {
            event::read(&payload, hint, caller, flags.event.as_deref())
        }
        (_, hint) => (event::detect_host_with(&payload, hint, caller), None),
    };
    let (kind, session_id) = match (&notify, &parsed) {
        (Some((name, thread)), _) => (Kind::Hook { name: name.clone() }, thread.clone()),
        (None, Some(ev)) => (
            Kind::Hook {
                name: ev.name.clone(),
            },
            ev.session_id.clone(),
        ),
        (None, None) => {
            let reason = if truncated.is_some() {
                "payload over the size cap (truncated)".to_string()
            } else {
                event::malformed_reason(&payload).unwrap_or_else(|| "unreadable payload".into())
            };
            (Kind::Malformed { reason }, None)
        }
    };
    let ev = NewEvent {
        recorded_at_us,
        host: host.to_string(),
        kind: kind.into(),
        session_id,
        agent_id: agent_id.clone(),
        payload,
        truncated,
        spooled: false,
    };
    Invocation {
        ev,
        parsed,
        agent_id,
        host: host.to_string(),
    }
}

/// A `notify` payload's event name (`type`) and thread id.
fn notify_name_and_thread(arg: &[u8]) -> (String, Option<String>) {
    let v: serde_json::Value = serde_json::from_slice(arg).unwrap_or_default();
    let name = v
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("notify")
        .to_string();
    let thread = v
        .get("thread-id")
        .and_then(|t| t.as_str())
        .map(str::to_string);
    (name, thread)
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
    let inv = classify(
        &parse_flags(&argv),
        0,
        payload.to_vec(),
        None,
        None,
        &caller,
    );
    (inv.ev, inv.parsed)
}
