//! `hookjournal hook`: the universal handler. bytes in → envelope → journal → fold → answer out.
//!
//! It always exits 0 and prints one JSON object or nothing: bad input is journaled as
//! `Malformed`, a busy journal means the event is spooled, and any internal error or panic is
//! one line on stderr. The lock is held only for the append itself.

use crate::ingest::{self, Observation};
use crate::settings::Settings;
use crate::state_io::{Loaded, Source};
use journal::{spool, Journal, Kind, NewEvent, OpenOptions};
use projections::derived::{self, ResponseEmitted, SessionMetrics};
use projections::event::{self, Canonical, HookEvent};
use projections::host::Host;
use projections::policy;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The hook's flags (parsed leniently by hand: a hook must not fail on an unexpected argument).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// auto, claude, codex, gemini, copilot, cursor, openclaw or qwen: the host to assume
    /// when neither the payload nor the hook's environment tells.
    #[arg(long, default_value = "auto")]
    pub host: String,
    /// The event, for payloads that name none (Copilot CLI's camelCase hooks).
    #[arg(long)]
    pub event: Option<String>,
}

struct Flags {
    journal: Option<PathBuf>,
    host: Option<String>,
    event: Option<String>,
    last_arg: Option<String>,
}

fn parse_flags(argv: &[OsString]) -> Flags {
    let mut f = Flags {
        journal: None,
        host: None,
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

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// `HOOKJOURNAL_TRACE=1`: phase timings on stderr (for profiling the hook path), printed when
/// the guard `Trace` that `run` holds is dropped. `mark` works from anywhere on the hook's thread.
struct Trace;

type Marks = Option<(std::time::Instant, Vec<(&'static str, std::time::Duration)>)>;

thread_local! {
    static MARKS: std::cell::RefCell<Marks> = const { std::cell::RefCell::new(None) };
}

impl Trace {
    fn start() -> Trace {
        if std::env::var_os("HOOKJOURNAL_TRACE").is_some() {
            MARKS.with(|m| *m.borrow_mut() = Some((std::time::Instant::now(), Vec::new())));
        }
        Trace
    }
}

/// Records that phase `what` ended now (nothing unless `HOOKJOURNAL_TRACE` is set).
fn mark(what: &'static str) {
    MARKS.with(|m| {
        if let Some((t0, v)) = &mut *m.borrow_mut() {
            v.push((what, t0.elapsed()));
        }
    });
}

impl Drop for Trace {
    fn drop(&mut self) {
        if let Some((_, v)) = MARKS.with(|m| m.borrow_mut().take()) {
            let parts: Vec<String> = v
                .iter()
                .map(|(w, d)| format!("{w} {:.2}", d.as_secs_f64() * 1000.0))
                .collect();
            eprintln!("hookjournal trace (ms since start): {}", parts.join(", "));
        }
    }
}

/// One invocation as read: the event to record, what the payload says (when it parsed), and the
/// loop agent running it.
struct Invocation {
    ev: NewEvent,
    parsed: Option<HookEvent>,
    agent_id: Option<String>,
    host: String,
}

fn run(argv: &[OsString]) -> anyhow::Result<()> {
    let _trace = Trace::start();
    let flags = parse_flags(argv);
    let dir = crate::locate::journal_dir(flags.journal.as_deref(), true);
    if let Some(why) = crate::locate::refusal(&dir) {
        eprintln!("hookjournal: {why}");
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

    // Events that are only recorded (never answered, nothing to read from outside) skip the
    // journal's store entirely: an atomic spool write, drained in order by the next process
    // that holds the lock (always before anything is answered from state).
    if settings.hook.fast_path && record_only(inv.parsed.as_ref()) {
        let mut spooled = inv.ev.clone();
        spooled.spooled = true;
        if journal::ensure_dir(&dir)
            .and_then(|_| spool::write(&dir, &spooled))
            .is_ok()
        {
            mark("spooled");
            return Ok(());
        }
    }

    let outside = read_outside(&inv, &settings);
    let opts = open_options(inv.parsed.as_ref(), &settings);
    mark("read");
    // Everything under the lock is guarded: an error or a panic before the commit spools the
    // invocation instead, so it is never lost.
    let backup = inv.ev.clone();
    let locked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        locked(&dir, &opts, &settings, &inv, &outside)
    }));
    let done = match locked {
        Ok(Ok(Some(done))) => done,
        Ok(Ok(None)) => return answer_spooled(&dir, &inv, outside.external, &settings),
        Ok(Err(e)) => {
            spool_instead(&dir, backup, &format!("{e:#}"));
            return answer_spooled(&dir, &inv, outside.external, &settings);
        }
        Err(_) => {
            spool_instead(&dir, backup, &panic_message());
            return answer_spooled(&dir, &inv, outside.external, &settings);
        }
    };
    let (mut held, reply) = done;
    let Reply {
        output,
        stderr,
        committed,
        release_after,
        drained,
        cause,
    } = reply;
    // A light writer lets the next hook take the lock before it waits for the disk; its events
    // are acknowledged (the answer printed, the process ending well) only once they are synced.
    let due = held.drainer_due(&settings);
    let mut durable = true;
    if let Held::Light(light) = &mut held {
        if let Err(e) = light.finish() {
            durable = false;
            let why = format!(
                "{} was written but syncing it failed ({e})",
                described(&inv.ev)
            );
            journal::incidents::event_may_be_missing(&dir, &why);
            eprintln!(
                "hookjournal: {why}; `hookjournal verify` tells whether it survived, and `hookjournal status` keeps saying so"
            );
        }
        mark("synced");
    }
    // The spool files this commit ingested are removed only now that their events are durable
    // in the log: until then they are the other copy.
    if durable {
        for entry in &drained {
            let _ = spool::remove(entry);
        }
    }
    if !output.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(output.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
    if let Some(line) = stderr {
        eprintln!("{line}");
    }
    // The mirrors happen after the answer is out; sled's ingestion of the log, seals, archive
    // merges and filling the hot cache are left to a detached drainer (`hookjournal drain`).
    crate::mirror::write(&dir, &settings.mirror, &committed);
    drop(held);
    if let Some(reason) = release_after {
        release_found_compaction(&dir, &inv, reason, &settings);
    }
    if let (Some(p), Some(cause)) = (inv.parsed.as_ref(), cause) {
        ingest::follow_session_file(&dir, p, cause);
    }
    if due {
        crate::commands::drain::after_hook(&dir, settings.hook.segment_events);
    }
    say_missing_events(&dir);
    mark("close");
    Ok(())
}

/// An event as an incident names it: "a PostToolUse event of session S".
fn described(ev: &NewEvent) -> String {
    let name = match &ev.kind {
        Kind::Hook { name } => name.clone(),
        other => other.label(),
    };
    match &ev.session_id {
        Some(s) => format!("a {name} event of session {s}"),
        None => format!("a {name} event"),
    }
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
    let (mut payload, mut truncated) = read_stdin(settings.hook.payload_cap);

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
    let host = match (&notify, flags.host.as_deref()) {
        (Some(_), None | Some("auto")) => Host::Codex,
        (_, hint) => event::detect_host_with(&payload, hint, &ingest::caller_env()),
    };
    let parsed: Option<HookEvent> = if truncated.is_none() && notify.is_none() {
        event::parse_named(&host, &payload, flags.event.as_deref())
    } else {
        None
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
    let agent_id = std::env::var(&settings.policy.loop_agent_env)
        .ok()
        .filter(|a| !a.trim().is_empty());
    let ev = NewEvent {
        recorded_at_us,
        host: host.to_string(),
        kind,
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

/// What the hook reads or does outside the journal, before taking its lock: the loop's own task
/// program (recorded as an `ExternalRelease` event) and the git branch at Stop and SessionEnd.
struct Outside {
    external: Option<NewEvent>,
    git: Option<projections::derived::GitObserved>,
}

fn read_outside(inv: &Invocation, settings: &Settings) -> Outside {
    let parsed = inv.parsed.as_ref();
    let loop_reason = parsed
        .and_then(|p| policy::loop_release_reason(inv.agent_id.as_deref(), p, &settings.policy));
    let external = match (loop_reason, &inv.agent_id, parsed) {
        (Some(reason), Some(agent), Some(p)) => task_program(settings).map(|program| {
            let budget = if session_end_event(p) {
                settings.hook.task_command_timeout_ms.min(300)
            } else {
                settings.hook.task_command_timeout_ms
            };
            let r = crate::loop_tasks::release(
                &program,
                agent,
                &p.name,
                reason,
                Duration::from_millis(budget),
            );
            for e in &r.errors {
                eprintln!("hookjournal: the loop's task program: {e}");
            }
            r
        }),
        _ => None,
    };
    let external = external.as_ref().map(|r| NewEvent {
        recorded_at_us: now_us(),
        host: inv.host.clone(),
        kind: Kind::ExternalRelease,
        session_id: inv.ev.session_id.clone(),
        agent_id: inv.ev.agent_id.clone(),
        payload: derived::body(r),
        truncated: None,
        spooled: false,
    });
    let git = match parsed.map(|p| &p.canonical) {
        Some(Canonical::Stop { .. } | Canonical::SessionEnd { .. }) => Some(ingest::git_branch(
            parsed.and_then(|p| p.cwd.as_deref()),
            Duration::from_millis(settings.hook.git_timeout_ms),
        )),
        _ => None,
    };
    Outside { external, git }
}

/// How long the hook waits for the lock: less at SessionEnd, whose hooks share 1.5 s.
fn open_options(parsed: Option<&HookEvent>, settings: &Settings) -> OpenOptions {
    let wait = if parsed.is_some_and(session_end_event) {
        settings.hook.lock_wait_ms.min(400)
    } else {
        settings.hook.lock_wait_ms
    };
    OpenOptions {
        wait: Duration::from_millis(wait),
        create: true,
        segment_events: settings.hook.segment_events,
        priority: false,
    }
}

/// The invocation waits in the spool: the loop's task release is spooled beside it, and an
/// answer that needs no state is still given.
fn answer_spooled(
    dir: &std::path::Path,
    inv: &Invocation,
    external: Option<NewEvent>,
    settings: &Settings,
) -> anyhow::Result<()> {
    if let Some(mut e) = external {
        e.spooled = true;
        if let Err(err) = spool::write(dir, &e) {
            eprintln!("hookjournal: recording the loop's task release failed: {err}");
        }
    }
    if let Some(p) = inv.parsed.as_ref() {
        answer_without_state(inv.agent_id.as_deref(), p, settings);
    }
    Ok(())
}

/// The loop's task program: configured, or named by its environment variable.
fn task_program(settings: &Settings) -> Option<String> {
    let p = &settings.policy;
    p.task_command
        .clone()
        .or_else(|| std::env::var(&p.task_command_env).ok())
        .filter(|c| !c.trim().is_empty())
}

/// Runs the loop's task program for a compaction found under the lock, after the answer, and
/// spools what it did (`ExternalRelease`) for the next process to ingest: the journal's own
/// release of the agent's tasks is already committed with the answer.
fn release_found_compaction(
    dir: &std::path::Path,
    inv: &Invocation,
    reason: &'static str,
    settings: &Settings,
) {
    let (Some(program), Some(agent), Some(p)) =
        (task_program(settings), &inv.agent_id, inv.parsed.as_ref())
    else {
        return;
    };
    let r = crate::loop_tasks::release(
        &program,
        agent,
        &p.name,
        reason,
        Duration::from_millis(settings.hook.task_command_timeout_ms),
    );
    for e in &r.errors {
        eprintln!("hookjournal: the loop's task program: {e}");
    }
    let ev = NewEvent {
        recorded_at_us: now_us(),
        host: inv.host.clone(),
        kind: Kind::ExternalRelease,
        session_id: inv.ev.session_id.clone(),
        agent_id: inv.ev.agent_id.clone(),
        payload: derived::body(&r),
        truncated: None,
        spooled: true,
    };
    if let Err(e) = spool::write(dir, &ev) {
        eprintln!("hookjournal: recording what the loop's task program did: {e}");
    }
}

fn session_end_event(p: &HookEvent) -> bool {
    matches!(p.canonical, Canonical::SessionEnd { .. })
}

/// A spooled loop agent's PreCompact is still stopped: that answer needs no state. Its task is
/// released when the spooled event is ingested (`policy::decide_spooled`).
fn answer_without_state(agent: Option<&str>, p: &HookEvent, settings: &Settings) {
    let Some(out) = policy::loop_answer(agent, p, &settings.policy) else {
        return;
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}");
    let _ = stdout.flush();
    eprintln!(
        "hookjournal: agent {} reached the context limit; stopping the agent (its active task is released as the journal ingests this event)",
        agent.unwrap_or("(loop mode)")
    );
}

/// Whether the policy can never answer this event and it needs no outside-world reads (an
/// unparsed payload and a served call are only recorded too).
fn record_only(parsed: Option<&HookEvent>) -> bool {
    parsed.is_none_or(|p| p.canonical.is_record_only() || p.served)
}

/// Transcript usage, context, git and metrics, as events (Stop, SubagentStop, PreCompact, SessionEnd).
fn observe(
    loaded: &Loaded,
    p: &HookEvent,
    sid: &str,
    settings: &Settings,
    git: Option<projections::derived::GitObserved>,
) -> Vec<Observation> {
    let session = loaded.state.sessions.get(sid);
    let max = settings.hook.transcript_read_max;
    // Transcript reads share one budget (SessionEnd hooks share 1.5 s in Claude Code).
    let deadline = std::time::Instant::now()
        + Duration::from_millis(if matches!(p.canonical, Canonical::SessionEnd { .. }) {
            500
        } else {
            300
        });
    let mut out = Vec::new();
    match &p.canonical {
        // Copilot CLI's session file (its sessionEnd names none: the session's own): usage per
        // model call, the context and the compactions. A subagent's agentStop names its
        // parent's file. A compaction ends after its preCompact, while the turn goes on: until
        // the file shows it, prompts and tool results read the file too (to restore after it).
        _ if p.host == Host::Copilot => {
            let at = p.agent_id.is_none()
                && match p.canonical {
                    Canonical::Stop { .. } | Canonical::PreCompact { .. } => true,
                    Canonical::SessionEnd { .. } => true,
                    Canonical::Prompt { .. } | Canonical::ToolPost { .. } => {
                        session.is_some_and(|s| s.awaits_compaction())
                    }
                    _ => false,
                };
            let path = p
                .transcript_path
                .as_deref()
                .or(session.and_then(|s| s.transcript_path.as_deref()));
            if let Some(path) = path.filter(|_| at) {
                out.extend(ingest::copilot_session_events(
                    session,
                    path,
                    max * 4,
                    deadline,
                ));
            }
        }
        // Gemini CLI's session file: usage, context and the compressions that happened. Its
        // PreCompress fires before every model request; AfterTool too, so a compression (written
        // before the request that follows it) is found at the next tool's end.
        Canonical::Stop { .. }
        | Canonical::PreCompact { .. }
        | Canonical::SessionEnd { .. }
        | Canonical::ToolPost { .. }
            if p.host == Host::Gemini =>
        {
            if let Some(path) = p.transcript_path.as_deref() {
                out.extend(ingest::gemini_chat_events(session, path, max * 4, deadline));
            }
        }
        // Codex CLI's rollout: usage per request and the context (a subagent's own events name
        // its own rollout; its usage is not the session's context).
        Canonical::Stop { .. } | Canonical::PreCompact { .. } | Canonical::SessionEnd { .. }
            if p.host == Host::Codex && p.agent_id.is_none() =>
        {
            if let Some(path) = p.transcript_path.as_deref() {
                let model = session
                    .and_then(|s| s.model.as_deref())
                    .or(p.model.as_deref());
                out.extend(ingest::codex_rollout_events(
                    session,
                    path,
                    model,
                    max * 4,
                    deadline,
                ));
            }
        }
        Canonical::Stop { .. } | Canonical::PreCompact { .. } | Canonical::SessionEnd { .. } => {
            let max = if matches!(p.canonical, Canonical::SessionEnd { .. }) {
                max * 4
            } else {
                max
            };
            if let Some(path) = p.transcript_path.as_deref() {
                // A subagent's own Stop still names the main transcript.
                out.extend(ingest::transcript_events(
                    session, path, None, max, deadline,
                ));
            }
            // Subagent transcripts lag their SubagentStop: catch up on what they wrote since.
            for (path, agent) in session
                .map(|s| &s.subagent_transcripts)
                .into_iter()
                .flatten()
            {
                out.extend(ingest::transcript_events(
                    session,
                    path,
                    Some(agent),
                    max,
                    deadline,
                ));
            }
        }
        Canonical::SubagentStop {
            agent_id,
            transcript,
            ..
        } => {
            if let Some(path) = transcript.as_deref() {
                out.extend(ingest::transcript_events(
                    session,
                    path,
                    Some(agent_id),
                    max,
                    deadline,
                ));
            }
        }
        _ => {}
    }
    if let Some(g) = git {
        out.push(Observation::of(
            |cause| Kind::GitObserved { cause },
            derived::body(&g),
        ));
    }
    out
}

/// Spools an invocation the store could not take (busy, an error, a panic).
fn spool_instead(dir: &std::path::Path, mut ev: NewEvent, why: &str) {
    ev.spooled = true;
    let why = crate::output::one_line(why);
    match spool::write(dir, &ev) {
        Ok(_) => eprintln!("hookjournal: {why}; event spooled for the next hook to ingest"),
        Err(e) => {
            let what = format!(
                "{} could not be recorded: {why}; spooling failed too ({e})",
                described(&ev)
            );
            journal::incidents::event_may_be_missing(dir, &what);
            eprintln!("hookjournal: {what}; event lost");
        }
    }
}

/// The journal (still locked) and the reply.
type Answered = (Held, Reply);

/// What the part under the lock gives back.
#[derive(Default)]
struct Reply {
    /// The answer (stdout).
    output: String,
    /// Its stderr line.
    stderr: Option<String>,
    /// The events committed (for the mirrors; empty when none is configured).
    committed: Vec<journal::Envelope>,
    /// Why the loop's own task program must release the agent's tasks after the answer: a
    /// compaction found under the lock (Gemini CLI's session file), where the program could not
    /// run before it (see `release_found_compaction`).
    release_after: Option<&'static str>,
    /// Spool files the commit ingested (or found ingested), removed once it is durable.
    drained: Vec<spool::SpoolEntry>,
    /// The invocation's place in the log, once committed with its answer.
    cause: Option<journal::Seq>,
}

/// The journal as the hook holds it until the answer is out.
pub(crate) enum Held {
    /// Opened without sled (the hot cache answered).
    Light(journal::Light),
    /// Opened in full.
    Full(Journal),
}

impl Held {
    /// Whether work the hook leaves to a detached drainer is due: the sled store lags the log,
    /// the active store is full, or the hot cache is incomplete.
    fn drainer_due(&self, settings: &Settings) -> bool {
        match self {
            Held::Light(l) => crate::commands::drain::due_after_light(l, settings.hook.drain_lag),
            Held::Full(j) => j.needs_seal() || !j.hot_complete(),
        }
    }
}

/// A journal the hook can write: opened in full, or light (see `journal::Light`).
pub(crate) trait Writer: Source {
    fn begin(&self) -> journal::Tx;
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()>;
}

impl Writer for Journal {
    fn begin(&self) -> journal::Tx {
        Journal::begin(self)
    }
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()> {
        Journal::commit(self, tx)
    }
}

impl Writer for journal::Light {
    fn begin(&self) -> journal::Tx {
        journal::Light::begin(self)
    }
    /// Synced by `Light::finish` once the lock is released (see `run`).
    fn commit(&mut self, tx: journal::Tx) -> journal::Result<()> {
        journal::Light::commit_deferred(self, tx)
    }
}

/// The part under the journal's lock: drain, append, fold, observe, decide, commit.
/// `Ok(None)`: the event was spooled instead (busy, or older spooled events still wait).
///
/// The journal is opened light when its hot cache is current (no sled: the common case), and
/// in full otherwise; a light attempt that misses the cache is dropped before it commits its
/// invocation, and the same work is done again on the store opened under the same lock.
fn locked(
    dir: &std::path::Path,
    opts: &OpenOptions,
    settings: &Settings,
    inv: &Invocation,
    outside: &Outside,
) -> anyhow::Result<Option<Answered>> {
    let opened = match Journal::open_light(dir, opts) {
        Ok(o) => o,
        Err(e) => {
            let why = match &e {
                journal::Error::Busy => "journal busy".to_string(),
                other => format!("cannot open journal {}: {other}", dir.display()),
            };
            spool_instead(dir, inv.ev.clone(), &why);
            return Ok(None);
        }
    };
    // Fault injection for the tests: a panic while the lock is held.
    if std::env::var_os("HOOKJOURNAL_FAILPOINT").is_some_and(|v| v == "locked") {
        panic!("failpoint: locked");
    }
    let mut j = match opened {
        journal::Opened::Light(mut light) => {
            mark("open light");
            match answer(&mut light, dir, settings, inv, outside) {
                Ok(Some(reply)) => return Ok(Some((Held::Light(light), reply))),
                Ok(None) => return Ok(None),
                Err(e) if crate::state_io::is_cache_miss(&e) => {
                    mark("cache miss");
                    light.upgrade()?
                }
                Err(e) => return Err(e),
            }
        }
        journal::Opened::Full(j) => j,
    };
    mark("open");
    let answered = answer(&mut j, dir, settings, inv, outside)?;
    mark("commit");
    Ok(answered.map(|reply| (Held::Full(j), reply)))
}

/// Drains the backlog, appends the invocation, folds, observes, decides and commits, on either
/// kind of journal. `Ok(None)`: spooled instead (a backlog is still being ingested).
fn answer<W: Writer>(
    j: &mut W,
    dir: &std::path::Path,
    settings: &Settings,
    inv: &Invocation,
    outside: &Outside,
) -> anyhow::Result<Option<Reply>> {
    let ev = inv.ev.clone();
    let parsed = inv.parsed.as_ref();
    let external = outside.external.clone();
    let git = outside.git.clone();
    let mut loaded = Loaded::lean(&*j)?;
    mark("global");
    let mut tx = j.begin();
    let Some(drained) = drain_backlog(dir, j, &mut loaded, &mut tx, settings, parsed)? else {
        // Older spooled events still wait: this one queues behind them, in arrival order.
        spool_instead(dir, ev, "a backlog of spooled events is being ingested");
        return Ok(None);
    };
    mark("backlog");

    // The invocation itself; an event that names only its host's session key belongs to the
    // session the log last saw that key with.
    let mut ev = ev;
    if ev.session_id.is_none() {
        ev.session_id =
            projections::openclaw::resolve_session(&loaded.state.global, &ev.host, &ev.payload);
    }
    tx.push(ev);
    let env = tx.events().last().expect("just pushed").clone();
    loaded.for_event(&*j, &env)?;
    mark("loaded");
    if loaded.stale.is_some() {
        // The checkpoint cannot be trusted: record the event, answer nothing, and let a
        // detached process rebuild the checkpoint from the log.
        for w in &loaded.warnings {
            eprintln!("hookjournal: {w}");
        }
        if let Some(e) = external {
            tx.push(e);
        }
        j.commit(tx)?;
        crate::commands::recover::spawn_rebuild(dir);
        return Ok(Some(Reply {
            drained,
            ..Reply::default()
        }));
    }
    if let Some(p) = parsed {
        if matches!(p.canonical, Canonical::SessionStart { .. }) {
            if let Some(prev) = p
                .cwd
                .as_ref()
                .and_then(|c| loaded.state.global.last_ended.get(c))
                .cloned()
            {
                loaded.session(&*j, &prev)?;
            }
        }
    }
    loaded.state.apply(&env);
    // A prompt that carries the restore after a reset reads the session it continues.
    if let Some(prev) = env
        .session_id
        .as_ref()
        .and_then(|sid| loaded.state.sessions.get(sid))
        .filter(|s| s.prompt_carries.as_deref() == Some("clear"))
        .and_then(|s| s.continues.clone())
        .filter(|_| parsed.is_some_and(|p| projections::host::restores_at_prompt(&p.host)))
    {
        loaded.session(&*j, &prev)?;
    }

    let (output, stderr) = match parsed {
        Some(p) => observe_and_decide(&*j, &mut loaded, &mut tx, &env, p, settings, git)?,
        None => (String::new(), None),
    };
    mark("decided");
    // A loop agent's compaction that only the session file showed (Gemini CLI fires PreCompress
    // before every request; Copilot CLI's ends after preCompact): the task program runs after
    // the answer, outside the lock.
    let release_after = match (parsed, &inv.agent_id, &env.session_id) {
        (Some(p), Some(_), Some(sid))
            if external.is_none()
                && p.host.facts().compaction.counted_from_session_file
                && loaded
                    .state
                    .sessions
                    .get(sid)
                    .is_some_and(|s| s.compression_seen_at == env.seq) =>
        {
            Some(policy::CONTEXT_LIMIT)
        }
        _ => None,
    };
    // What the loop's task program did: its own group, after the answer's events.
    if let Some(e) = external {
        tx.push(e);
        let env = tx.events().last().expect("just pushed").clone();
        loaded.state.apply(&env);
    }
    for w in &loaded.warnings {
        eprintln!("hookjournal: {w}");
    }
    loaded.write_back(&mut tx);
    mark("encoded");
    let committed = if settings.mirror.any() {
        tx.events().to_vec()
    } else {
        Vec::new()
    };
    j.commit(tx)?;
    mark("written");
    Ok(Some(Reply {
        output,
        stderr,
        committed,
        release_after,
        drained,
        cause: Some(env.seq),
    }))
}

/// Ingests the spooled backlog in chunks, each committed before the next, within the hook's
/// budget (the time spent committing counts too). `None`: the budget ran out with events still
/// waiting; `Some` holds the spool files every chunk ingested, to be removed once the last
/// commit is durable (a light writer's chunks are synced only then). Files left by `None` are
/// found ingested and removed by a later writer.
fn drain_backlog<W: Writer>(
    dir: &std::path::Path,
    j: &mut W,
    loaded: &mut Loaded,
    tx: &mut journal::Tx,
    settings: &Settings,
    parsed: Option<&HookEvent>,
) -> anyhow::Result<Option<Vec<spool::SpoolEntry>>> {
    let budget = if parsed.is_some_and(session_end_event) {
        // SessionEnd hooks share 1.5 s in Claude Code.
        settings.hook.drain_budget_ms / 2
    } else {
        settings.hook.drain_budget_ms
    };
    let deadline = std::time::Instant::now() + Duration::from_millis(budget);
    const CHUNK: usize = 256;
    let mut taken = 0;
    let mut ingested = Vec::new();
    loop {
        let want = CHUNK.min(settings.hook.drain_max.saturating_sub(taken).max(1));
        let d = crate::state_io::drain(&*j, loaded, tx, want, deadline, &settings.policy)?;
        taken += d.done.len();
        ingested.extend(d.done);
        if !d.more {
            return Ok(Some(ingested));
        }
        loaded.write_back(tx);
        let chunk = std::mem::replace(tx, j.begin());
        let mirrored = if settings.mirror.any() {
            chunk.events().to_vec()
        } else {
            Vec::new()
        };
        j.commit(chunk)?;
        // A backlog chunk is already off this hook's answer: its mirror lines go now.
        crate::mirror::write(dir, &settings.mirror, &mirrored);
        if std::time::Instant::now() >= deadline || taken >= settings.hook.drain_max {
            return Ok(None);
        }
        *tx = j.begin();
    }
}

/// Outside-world observations (transcript usage, git, the session's metrics) as events caused by
/// this one, then the policy's decision and the answer it prints, also recorded. Returns the
/// answer (stdout) and its stderr line.
#[allow(clippy::too_many_arguments)]
fn observe_and_decide(
    j: &dyn Source,
    loaded: &mut Loaded,
    tx: &mut journal::Tx,
    env: &journal::Envelope,
    p: &HookEvent,
    settings: &Settings,
    git: Option<projections::derived::GitObserved>,
) -> anyhow::Result<(String, Option<String>)> {
    let seq = env.seq;
    let Some(sid) = env.session_id.clone() else {
        return Ok((String::new(), None));
    };
    let with_metrics = git.is_some();
    for o in observe(loaded, p, &sid, settings, git) {
        let (kind, body) = o.remember();
        loaded.push_caused(j, tx, env, kind(seq), body)?;
    }
    // Stop and SessionEnd: the session's metrics, from its state after this read.
    if with_metrics {
        if let Some(metrics) = session_metrics(loaded, p, &sid, settings) {
            loaded.push_caused(
                j,
                tx,
                env,
                Kind::SessionMetrics { cause: seq },
                derived::body(&metrics),
            )?;
        }
    }
    if policy::reads_tasks(&loaded.state, env, p, &settings.policy) {
        loaded.tasks(j)?;
    }
    let decision = policy::decide(&loaded.state, env, p, &settings.policy);
    for d in &decision.events {
        let (kind, body) = d.kind_and_body(seq);
        loaded.push_caused(j, tx, env, kind, body)?;
    }
    let output = decision.output_text();
    let stderr = decision.stderr.clone();
    if !output.is_empty() || stderr.is_some() {
        let body = derived::body(&ResponseEmitted {
            output: output.clone(),
            stderr: stderr.clone(),
            policy: settings.policy.clone(),
        });
        loaded.push_caused(j, tx, env, Kind::ResponseEmitted { cause: seq }, body)?;
    }
    Ok((output, stderr))
}

/// A session's metrics at Stop or SessionEnd, from its state after this event's reads.
fn session_metrics(
    loaded: &Loaded,
    p: &HookEvent,
    sid: &str,
    settings: &Settings,
) -> Option<SessionMetrics> {
    let s = loaded.state.sessions.get(sid)?;
    let (usd, usage) = projections::report::session_usd(s, &settings.pricing());
    Some(SessionMetrics {
        at: if session_end_event(p) {
            "session_end"
        } else {
            "stop"
        }
        .into(),
        payload: p.metrics.clone(),
        usage,
        usd: Some(usd),
        model: s.model.clone(),
        branch: s.branch.clone(),
        duration_ms: p.metrics.duration_ms,
    })
}
