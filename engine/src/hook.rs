//! The hook's transaction: bytes in → envelope → journal → fold → answer out. `run` is the whole
//! invocation behind the CLI's edge (stdin, env, stdout: `Edge`); `classify` turns its bytes into
//! the event to record (`Invocation`); `handle` is the transaction.

use crate::ingest::{self, Observation};
use crate::settings::Settings;
use crate::state::{Loaded, Source};
use crate::trace::mark;
use crate::writer::{write, Held, WriteError, Writer};
use journal::{spool, NewEvent, OpenOptions};
use projections::derived::{self, ResponseEmitted, SessionMetrics};
use projections::event::{self, Canonical, HookEvent};
use projections::host::{CallerEnv, Host};
use projections::policy;
use projections::{Kind, KindOf};
use std::path::Path;
use std::time::Duration;

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// What the hook prints (the answer, on stdout), and the work left for after it is out.
#[derive(Default)]
pub struct Handled {
    /// The one JSON object (or the text a host takes) to print, if any.
    pub stdout: Option<String>,
    /// What happens once the answer is out (`Handled::after_answer`).
    after: Option<After>,
}

/// The work a committed invocation leaves for after its answer: the mirrors (under the lock,
/// so they keep the log's order), then — the lock released — a loop agent's task release found
/// in a session file, following Copilot CLI's lagging session file, and the detached drainer.
struct After {
    held: Held,
    committed: Vec<journal::Envelope>,
    release_after: Option<&'static str>,
    cause: Option<journal::Seq>,
    due: bool,
    rebuild: bool,
}

impl Handled {
    /// Runs what the invocation left for after its answer (call it once the answer is out).
    pub fn after_answer(self, dir: &Path, settings: &Settings, inv: &Invocation) {
        let Some(after) = self.after else {
            return;
        };
        crate::mirror::write(dir, &settings.mirror, &after.committed);
        drop(after.held);
        if after.rebuild {
            crate::maintenance::spawn_rebuild(dir);
        }
        if let Some(reason) = after.release_after {
            release_found_compaction(dir, inv, reason, settings);
        }
        if let (Some(p), Some(cause)) = (inv.parsed.as_ref(), after.cause) {
            crate::ingest::follow_session_file(dir, p, cause);
        }
        if after.due {
            crate::maintenance::after_hook(dir, settings.hook.segment_events);
        }
        register(dir, inv, &after.committed);
    }
}

/// Keeps this journal's entry in the user's registry (`registry`): rewritten when missing,
/// older than a day, or at SessionEnd; otherwise one `lstat`.
fn register(dir: &Path, inv: &Invocation, committed: &[journal::Envelope]) {
    let end = inv
        .parsed
        .as_ref()
        .is_some_and(|p| matches!(p.canonical, Canonical::SessionEnd { .. }));
    if !end && !crate::registry::due(dir) {
        return;
    }
    // The last event this invocation committed, else this moment (it was recorded just now).
    let now = now_us();
    let last = committed.last().map_or(now, |e| e.recorded_at_us);
    // Best effort and quiet: a host may show the hook's stderr to the user on every call, and
    // a journal missing from the registry is only missing from `--all-projects` (`status` says
    // how many are registered; `install` and `import` say why one could not be).
    let _ = crate::registry::record(dir, Some(last), Some(last), now);
}

/// Records one invocation and decides its answer — the hook's whole transaction: an event the
/// policy never answers goes to the spool (no store opened); any other takes the lock (light
/// when the hot cache is current), drains the spool backlog, appends, folds, observes the
/// outside world the host's facts name, decides, commits, and — once the commit is durable —
/// removes the spool files it ingested. An error or a panic under the lock spools the
/// invocation instead (`panic_text` says what a caught panic was), so it is never lost.
pub fn handle(
    dir: &Path,
    settings: &Settings,
    inv: &Invocation,
    panic_text: &dyn Fn() -> String,
) -> Handled {
    // Events that are only recorded (never answered, nothing to read from outside) skip the
    // journal's store entirely: an atomic spool write, drained in order by the next process
    // that holds the lock (always before anything is answered from state).
    if settings.hook.fast_path && record_only(inv.parsed.as_ref()) {
        let mut spooled = inv.ev.clone();
        spooled.spooled = true;
        if journal::ensure_dir(dir)
            .and_then(|_| spool::write(dir, &spooled))
            .is_ok()
        {
            mark("spooled");
            return Handled::default();
        }
    }

    let outside = read_outside(inv, settings);
    let opts = open_options(inv.parsed.as_ref(), settings);
    mark("read");
    // Everything under the lock is guarded: an error or a panic before the commit spools the
    // invocation instead, so it is never lost.
    let backup = inv.ev.clone();
    let locked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        locked(dir, &opts, settings, inv, &outside)
    }));
    let done = match locked {
        Ok(Ok(Some(done))) => done,
        Ok(Ok(None)) => return answer_spooled(dir, inv, outside.external, settings),
        Ok(Err(e)) => {
            spool_instead(dir, backup, &format!("{e:#}"));
            return answer_spooled(dir, inv, outside.external, settings);
        }
        Err(_) => {
            spool_instead(dir, backup, &panic_text());
            return answer_spooled(dir, inv, outside.external, settings);
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
        rebuild,
    } = reply;
    // A light writer lets the next hook take the lock before it waits for the disk; its events
    // are acknowledged (the answer printed, the process ending well) only once they are synced.
    let due = held.drainer_due(settings.hook.drain_lag);
    let mut durable = true;
    if let Held::Light(light) = &mut held {
        if let Err(e) = light.finish() {
            durable = false;
            let why = format!(
                "{} was written but syncing it failed ({e})",
                described(&inv.ev)
            );
            journal::incidents::event_may_be_missing(dir, &why);
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
    if let Some(line) = stderr {
        eprintln!("{line}");
    }
    // The mirrors happen after the answer is out; sled's ingestion of the log, seals, archive
    // merges and filling the hot cache are left to a detached drainer (`hookjournal drain`).
    Handled {
        stdout: (!output.is_empty()).then_some(output),
        after: Some(After {
            held,
            committed,
            release_after,
            cause,
            due,
            rebuild,
        }),
    }
}

/// One invocation as read: the event to record, what the payload says (when it parsed), and the
/// loop agent running it.
pub struct Invocation {
    /// The event to record.
    pub ev: NewEvent,
    /// What the payload says, when it parsed.
    pub parsed: Option<HookEvent>,
    /// The loop agent running the hook (`$RALPH_AGENT_ID`, or the configured variable).
    pub agent_id: Option<String>,
    /// The host, by name.
    pub host: String,
}

/// An event as an incident names it: "a PostToolUse event of session S".
fn described(ev: &NewEvent) -> String {
    let name = match &ev.kind() {
        Kind::Hook { name } => name.clone(),
        other => other.label(),
    };
    match &ev.session_id {
        Some(s) => format!("a {name} event of session {s}"),
        None => format!("a {name} event"),
    }
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
            for line in crate::loop_tasks::report(&r) {
                eprintln!("{line}");
            }
            r
        }),
        _ => None,
    };
    let external = external.as_ref().map(|r| NewEvent {
        recorded_at_us: now_us(),
        host: inv.host.clone(),
        kind: Kind::ExternalRelease.into(),
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

/// How long the hook waits for the lock: less at SessionEnd, whose hooks share 1.5 s; longer
/// at SessionStart and PreCompact, whose answers (the restore, a loop agent's release) are what
/// the journal is for and come once per session or compaction: spooled, SessionStart would
/// answer without the state it restores (seen once, a concurrent hook holding the lock past
/// 300 ms on a machine at load 15).
fn lock_wait_ms(parsed: Option<&HookEvent>, settings: &Settings) -> u64 {
    let wait = settings.hook.lock_wait_ms;
    match parsed.map(|p| &p.canonical) {
        Some(Canonical::SessionEnd { .. }) => wait.min(400),
        Some(Canonical::SessionStart { .. } | Canonical::PreCompact { .. }) => {
            (wait * 4).min(2_000)
        }
        _ => wait,
    }
}

/// The journal's open for this invocation: its lock wait, and a store created when missing.
fn open_options(parsed: Option<&HookEvent>, settings: &Settings) -> OpenOptions {
    OpenOptions {
        wait: Duration::from_millis(lock_wait_ms(parsed, settings)),
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
) -> Handled {
    if let Some(mut e) = external {
        e.spooled = true;
        if let Err(err) = spool::write(dir, &e) {
            eprintln!("hookjournal: recording the loop's task release failed: {err}");
        }
    }
    match inv.parsed.as_ref() {
        Some(p) => answer_without_state(inv.agent_id.as_deref(), p, settings),
        None => Handled::default(),
    }
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
    for line in crate::loop_tasks::report(&r) {
        eprintln!("{line}");
    }
    let ev = NewEvent {
        recorded_at_us: now_us(),
        host: inv.host.clone(),
        kind: Kind::ExternalRelease.into(),
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
fn answer_without_state(agent: Option<&str>, p: &HookEvent, settings: &Settings) -> Handled {
    let Some(out) = policy::loop_answer(agent, p, &settings.policy) else {
        return Handled::default();
    };
    eprintln!(
        "hookjournal: agent {} reached the context limit; stopping the agent (its active task is released as the journal ingests this event)",
        agent.unwrap_or("(loop mode)")
    );
    Handled {
        stdout: Some(out.to_string()),
        after: None,
    }
}

/// Whether the policy can never answer this event and it needs no outside-world reads (an
/// unparsed payload and a served call are only recorded too).
fn record_only(parsed: Option<&HookEvent>) -> bool {
    parsed.is_none_or(HookEvent::is_record_only)
}

/// What the host's session files hold since the last read (the reads `projections::observe`
/// plans from the host table), and git, as events.
fn observe(
    loaded: &Loaded,
    p: &HookEvent,
    sid: &str,
    settings: &Settings,
    git: Option<projections::derived::GitObserved>,
) -> Vec<Observation> {
    let session = loaded.state.sessions.get(sid);
    let plan = projections::observe::plan(p, session);
    let deadline = std::time::Instant::now() + Duration::from_millis(plan.budget_ms);
    let mut out = Vec::new();
    for r in &plan.reads {
        let Some(path) = ingest::resolved_path(r) else {
            continue;
        };
        out.extend(ingest::session_file_events(
            r.format,
            session,
            &path,
            r.agent.as_deref(),
            r.model.as_deref(),
            settings.hook.transcript_read_max * r.scale as usize,
            deadline,
        ));
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
    let why = projections::text::one_line(why);
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
    /// The checkpoint was stale: a rebuild starts once the lock is let go.
    rebuild: bool,
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
    // Fault injection for the tests: a panic while the lock is held.
    let failpoint = std::env::var_os("HOOKJOURNAL_FAILPOINT").is_some_and(|v| v == "locked");
    let written = write(dir, opts, true, |j| {
        if failpoint {
            panic!("failpoint: locked");
        }
        answer(j, dir, settings, inv, outside)
    });
    match written {
        Ok((held, Some(reply))) => Ok(Some((held, reply))),
        Ok((_, None)) => Ok(None),
        // The journal could not be opened: the event waits in the spool.
        Err(WriteError::Open(e)) => {
            let why = match &e {
                journal::Error::Busy => "journal busy".to_string(),
                other => format!("cannot open journal {}: {other}", dir.display()),
            };
            spool_instead(dir, inv.ev.clone(), &why);
            Ok(None)
        }
        Err(WriteError::Work(e)) => Err(e),
    }
}

/// Drains the backlog, appends the invocation, folds, observes, decides and commits, on either
/// kind of journal. `Ok(None)`: spooled instead (a backlog is still being ingested).
fn answer(
    j: &mut dyn Writer,
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
        ev.session_id = projections::openclaw::resolve_session(
            &loaded.state.global.session_keys,
            &ev.host,
            &ev.payload,
        );
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
        return Ok(Some(Reply {
            drained,
            rebuild: true,
            ..Reply::default()
        }));
    }
    apply_invocation(&*j, &mut loaded, &env, parsed)?;

    let (output, stderr) = match parsed {
        Some(p) => observe_and_decide(&*j, &mut loaded, &mut tx, &env, p, settings, git)?,
        None => (String::new(), None),
    };
    mark("decided");
    // A loop agent's compaction that only the session file showed (Gemini CLI fires PreCompress
    // before every request; Copilot CLI's ends after preCompact): the task program runs after
    // the answer, outside the lock.
    let release_after = if external.is_none() {
        compaction_found_under_lock(parsed, inv, &env, &loaded)
    } else {
        None
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
        rebuild: false,
    }))
}

/// The invocation folded into the loaded state, with the sessions it continues loaded: at a
/// session start, the one last ended in the same directory; at a prompt that carries the restore
/// after a reset, the session it continues.
fn apply_invocation(
    j: &dyn Source,
    loaded: &mut Loaded,
    env: &journal::Envelope,
    parsed: Option<&HookEvent>,
) -> anyhow::Result<()> {
    if let Some(p) = parsed {
        if matches!(p.canonical, Canonical::SessionStart { .. }) {
            if let Some(prev) = p
                .cwd
                .as_ref()
                .and_then(|c| loaded.state.global.last_ended.get(c))
                .cloned()
            {
                loaded.session(j, &prev)?;
            }
        }
    }
    // Parsed once: the fold reads the invocation as the hook read it.
    loaded.state.apply_parsed(env, parsed);
    if let Some(prev) = env
        .session_id
        .as_ref()
        .and_then(|sid| loaded.state.sessions.get(sid))
        .filter(|s| s.prompt_carries.as_deref() == Some("clear"))
        .and_then(|s| s.continues.clone())
        .filter(|_| parsed.is_some_and(|p| projections::host::restores_at_prompt(&p.host)))
    {
        loaded.session(j, &prev)?;
    }
    Ok(())
}

/// Why a loop agent's tasks are released after the answer: a compaction this invocation found
/// in its host's session file (the host counts compactions from it), for an invocation with the
/// agent-id variable set.
fn compaction_found_under_lock(
    parsed: Option<&HookEvent>,
    inv: &Invocation,
    env: &journal::Envelope,
    loaded: &Loaded,
) -> Option<&'static str> {
    let p = parsed?;
    inv.agent_id.as_ref()?;
    let sid = env.session_id.as_ref()?;
    let found = p.host.facts().compaction.counted_from_session_file
        && loaded
            .state
            .sessions
            .get(sid)
            .is_some_and(|s| s.compression_seen_at == env.seq);
    found.then_some(policy::CONTEXT_LIMIT)
}

/// Ingests the spooled backlog in chunks, each committed before the next, within the hook's
/// budget (the time spent committing counts too). `None`: the budget ran out with events still
/// waiting; `Some` holds the spool files every chunk ingested, to be removed once the last
/// commit is durable (a light writer's chunks are synced only then). Files left by `None` are
/// found ingested and removed by a later writer.
fn drain_backlog(
    dir: &std::path::Path,
    j: &mut dyn Writer,
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
        let d = crate::state::drain(&*j, loaded, tx, want, deadline, &settings.policy)?;
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

/// The hook's command line, parsed leniently by the CLI (a hook never fails on an argument).
#[derive(Debug, Default)]
pub struct Flags {
    /// `--journal DIR`.
    pub journal: Option<std::path::PathBuf>,
    /// `--host NAME`: the host to assume when neither the payload nor the environment tells.
    pub host: Option<String>,
    /// `--plugin`: run by the Claude Code plugin.
    pub plugin: bool,
    /// `--event NAME`, for payloads that name none.
    pub event: Option<String>,
    /// The last argument when it is JSON (where Codex's legacy `notify` puts its payload).
    pub last_arg: Option<String>,
}

/// The hook process's edge, as the CLI holds it: stdin, the environment, stdout. Everything
/// between them is `run`'s.
pub trait Edge {
    /// Reads stdin to EOF, keeping at most `cap` bytes (and hashing all of them).
    fn read_stdin(&mut self, cap: usize) -> (Vec<u8>, Option<journal::Truncation>);
    /// A variable of the hook's environment.
    fn env(&self, name: &str) -> Option<std::ffi::OsString>;
    /// Prints `out` as one line on stdout, flushed.
    fn answer(&mut self, out: &str);
    /// Says, when stdin is a terminal, what the hook waits for.
    fn waiting_notice(&self);
    /// The message of a panic caught while the hook ran (spooled with its event).
    fn panic_message(&self) -> String;
}

/// One hook invocation, start to end: the plugin's deference to a settings registration, the
/// journal `dir` refused (`refusal`) or foreign, the settings, the payload read and classified,
/// the incidents an earlier hook left, the transaction (`handle`), the answer printed, then the
/// work left for after it (`Handled::after_answer`). Never fails: what goes wrong is one line
/// on stderr.
pub fn run(flags: &Flags, dir: &Path, refusal: Option<String>, edge: &mut dyn Edge) {
    if flags.plugin && defer_to_settings(edge) {
        return;
    }
    if let Some(why) = refusal {
        eprintln!("hookjournal: {why}");
        return;
    }
    // A journal that came with the repository (or from another machine or directory): nothing
    // from it reaches the agent, and nothing is added to it, until the user adopts it.
    if let journal::origin::Origin::Foreign(why) = journal::origin::status(dir) {
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
        // Read whatever the host: it is written to us, and left unread it could block the host.
        let start = reads_session_start(edge);
        if claude && start {
            edge.answer(&serde_json::json!({ "systemMessage": msg }).to_string());
        }
        return;
    }
    let (settings, warning) = Settings::load(dir);
    mark("settings");
    edge.waiting_notice();
    let inv = read_invocation(flags, &settings, edge);
    // Gemini CLI shows a hook's stderr to the user ("Hook system message") whenever stdout is
    // empty: a settings warning there would appear on every call. `hookjournal status` and every
    // other command report it.
    if inv.host != Host::Gemini.as_str() {
        for line in warning.iter().flat_map(|w| w.lines()) {
            eprintln!("hookjournal: {line}");
        }
    }
    // What an earlier hook could not keep, before this one adds anything of its own.
    say_missing_events(dir);
    let handled = handle(dir, &settings, &inv, &|| edge.panic_message());
    if let Some(out) = &handled.stdout {
        edge.answer(out);
    }
    handled.after_answer(dir, &settings, &inv);
    mark("close");
}

/// Whether the payload on stdin (read up to 1 MiB) is a SessionStart.
fn reads_session_start(edge: &mut dyn Edge) -> bool {
    let (payload, _) = edge.read_stdin(1 << 20);
    serde_json::from_slice::<serde_json::Value>(&payload)
        .is_ok_and(|v| v["hook_event_name"] == "SessionStart")
}

/// The plugin's hook beside a settings file that registers hookjournal as well: the settings'
/// handler journals every event, so this one does nothing — and says so, once a session, at
/// SessionStart (a `systemMessage` the user sees).
fn defer_to_settings(edge: &mut dyn Edge) -> bool {
    let project = edge.env("CLAUDE_PROJECT_DIR").map(std::path::PathBuf::from);
    let files = crate::registration::claude_settings_files(project.as_deref());
    let Some(file) = crate::registration::hooks_registered_in(project.as_deref(), &files) else {
        return false;
    };
    if reads_session_start(edge) {
        let msg = format!(
            "hookjournal: {} registers hookjournal and so does its Claude Code plugin; the plugin stays idle so that no event is journaled twice (`hookjournal uninstall` keeps only the plugin)",
            file.display()
        );
        edge.answer(&serde_json::json!({ "systemMessage": msg }).to_string());
    }
    true
}

/// Events an earlier hook could not make durable: said once, on stderr (one `stat` when none).
fn say_missing_events(dir: &Path) {
    for i in journal::incidents::take_unread(dir) {
        let at = chrono::DateTime::from_timestamp_millis(i.at_ms)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default();
        eprintln!(
            "hookjournal: an event may be missing from the journal: at {at}, {} (`hookjournal status` lists it)",
            projections::text::one_line(&i.text)
        );
    }
}

/// Reads stdin (or Codex's legacy `notify` argument), detects the host, parses the payload and
/// builds the event to record: `Malformed` when it does not parse.
fn read_invocation(flags: &Flags, settings: &Settings, edge: &mut dyn Edge) -> Invocation {
    let recorded_at_us = now_us();
    let (payload, truncated) = edge.read_stdin(settings.hook.payload_cap);
    let agent_id = edge
        .env(&settings.policy.loop_agent_env)
        .and_then(|v| v.into_string().ok())
        .filter(|a| !a.trim().is_empty());
    let caller = CallerEnv::read(|name| edge.env(name).is_some_and(|v| !v.is_empty()));
    classify(flags, recorded_at_us, payload, truncated, agent_id, &caller)
}

/// The invocation's bytes (stdin, or Codex's `notify` argument) as the event to record: the whole
/// of what the hook decides before it touches the journal, I/O aside (fuzzed: the CLI's `fuzz::classify_hook`).
pub fn classify(
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

#[cfg(test)]
mod tests {
    use super::lock_wait_ms;
    use crate::settings::Settings;
    use projections::event::{Canonical, HookEvent};
    use projections::host::Host;

    fn event(canonical: Canonical) -> HookEvent {
        HookEvent::new("E".into(), Host::Claude, canonical)
    }

    #[test]
    fn the_restore_and_a_compaction_wait_longer_for_the_lock_and_session_end_less() {
        // Given the default settings (lock_wait_ms = 300)
        let s = Settings::default();
        // Then SessionStart and PreCompact wait four times as long, SessionEnd no more than
        // 400 ms, and every other event (and an unparsed payload) the setting
        let start = event(Canonical::SessionStart {
            source: "compact".into(),
        });
        let compact = event(Canonical::PreCompact {
            trigger: "auto".into(),
            instructions: None,
        });
        let end = event(Canonical::SessionEnd {
            reason: "other".into(),
        });
        let prompt = event(Canonical::Prompt { text: "go".into() });
        assert_eq!(lock_wait_ms(Some(&start), &s), 1_200);
        assert_eq!(lock_wait_ms(Some(&compact), &s), 1_200);
        assert_eq!(lock_wait_ms(Some(&end), &s), 300);
        assert_eq!(lock_wait_ms(Some(&prompt), &s), 300);
        assert_eq!(lock_wait_ms(None, &s), 300);
        // And with a longer setting the long waits stop at 2 s and SessionEnd's at 400 ms
        let mut long = Settings::default();
        long.hook.lock_wait_ms = 1_000;
        assert_eq!(lock_wait_ms(Some(&start), &long), 2_000);
        assert_eq!(lock_wait_ms(Some(&end), &long), 400);
    }
}
