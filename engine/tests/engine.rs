//! The engine in-process, given/when/then: a journal directory, invocations handled by
//! `engine::hook::handle` and reads by `engine::state` — the spool backlog, a light writer's
//! cache miss, a stale checkpoint and concurrent writers. No binary runs: the drainer's and the
//! rebuild's work is done in this process (`maintenance::work_inline`).

use engine::hook::{handle, Invocation};
use engine::settings::Settings;
use engine::state::{self, CacheMiss};
use engine::writer::{write, Held, Writer};
use journal::NewEvent;
use projections::derived::{self, TaskCommand, TaskOp};
use projections::host::Host;
use projections::tasks::TaskRef;
use projections::{Kind, KindOf};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/events/claude")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `payload` with its session id and a marker set (a JSON object).
fn payload(name: &str, session: &str, marker: &str) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&fixture(name)).unwrap();
    v["session_id"] = session.into();
    v["engine_test_marker"] = marker.into();
    serde_json::to_vec(&v).unwrap()
}

/// An invocation as the CLI's hook builds it from a Claude Code payload.
fn invocation(bytes: &[u8]) -> Invocation {
    invocation_of(bytes, None)
}

/// An invocation run by loop agent `agent` (its `$RALPH_AGENT_ID`), if any.
fn invocation_of(bytes: &[u8], agent: Option<&str>) -> Invocation {
    let parsed = projections::event::parse(&Host::Claude, bytes).expect("a Claude Code payload");
    Invocation {
        ev: NewEvent {
            recorded_at_us: 1_764_000_000_000_000,
            host: "claude".into(),
            kind: Kind::Hook {
                name: parsed.name.clone(),
            }
            .into(),
            session_id: parsed.session_id.clone(),
            agent_id: agent.map(str::to_string),
            payload: bytes.to_vec(),
            truncated: None,
            spooled: false,
        },
        parsed: Some(parsed),
        agent_id: agent.map(str::to_string),
        host: "claude".into(),
    }
}

/// Handles one invocation as the hook process does; returns its answer.
fn hook(dir: &Path, bytes: &[u8]) -> Option<String> {
    engine::maintenance::work_inline();
    let settings = Settings::default();
    let inv = invocation(bytes);
    let handled = handle(dir, &settings, &inv, &|| "a panic".into());
    let out = handled.stdout.clone();
    handled.after_answer(dir, &settings, &inv);
    out
}

fn journal_dir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(".hookjournal");
    (t, dir)
}

fn spooled(dir: &Path) -> usize {
    journal::spool::list(dir).map(|l| l.len()).unwrap_or(0)
}

/// The markers of every hook event in the log, in order.
fn logged_markers(dir: &Path) -> Vec<String> {
    let j = state::open_read(dir).unwrap();
    let snap = j.read_snapshot().unwrap();
    drop(j);
    let mut out = Vec::new();
    snap.for_each(|e| {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&e.payload) {
            if let Some(m) = v["engine_test_marker"].as_str() {
                out.push(m.to_string());
            }
        }
        Ok(())
    })
    .unwrap();
    out
}

/// Given hooks whose events are only recorded (they went to the spool), when a command reads
/// the journal, then it ingests them first, in order, as the next writer would: the view holds
/// them in the log with their final seqs, and the spool is empty.
#[test]
fn a_reader_ingests_the_spool_before_it_shows_anything() {
    let (_t, dir) = journal_dir();
    assert_eq!(
        hook(&dir, &payload("PreToolUse-Bash.json", "s1", "a")),
        None
    );
    assert_eq!(
        hook(&dir, &payload("PreToolUse-Bash.json", "s1", "b")),
        None
    );
    assert_eq!(spooled(&dir), 2);

    let view = state::open_view(&dir).unwrap();
    assert_eq!(view.snap.head_seq, 2);
    assert_eq!(view.state.sessions["s1"].hook_events, 2);
    assert_eq!(spooled(&dir), 0, "a reader left the spool for later");
    assert_eq!(logged_markers(&dir), ["a", "b"]);
}

/// `status`'s figures as the store gives them (sled opened, the spool ingested).
fn status_from_store(dir: &Path) -> (journal::Status, usize) {
    let j = state::open_read(dir).unwrap();
    (j.status().unwrap(), state::session_count(&j).unwrap())
}

/// The figures of a status that differ from one journal read to the next only by what was read.
fn figures(
    st: &journal::Status,
    sessions: usize,
) -> (u64, String, usize, u64, Option<i64>, usize, usize) {
    (
        st.events,
        journal::hex(&st.head_hash),
        st.segments,
        st.active_events,
        st.last_recorded_at_us,
        st.spooled,
        sessions,
    )
}

/// Given hooks in three sessions (the hot cache current at the log's head), when `status` is
/// read, then its figures are the store's; given then every partition file of the cache damaged,
/// the figures are still the store's (a file that does not check is passed by, never believed);
/// given events of a fourth session waiting in the spool, they are ingested and counted first.
#[test]
fn status_from_the_hot_cache_is_the_stores_and_a_damaged_cache_is_passed_by() {
    let (_t, dir) = journal_dir();
    for s in ["s1", "s2", "s3"] {
        hook(&dir, &payload("SessionStart-startup.json", s, s));
        hook(&dir, &payload("UserPromptSubmit.json", s, s));
    }
    let read = state::read_status(&dir).unwrap();
    assert!(!read.readonly);
    let (st, n) = status_from_store(&dir);
    assert_eq!(figures(&read.status, read.sessions), figures(&st, n));
    assert_eq!(n, 3);

    for e in std::fs::read_dir(dir.join("hot")).unwrap().flatten() {
        if e.file_name() != "HEAD" {
            let mut b = std::fs::read(e.path()).unwrap();
            let last = b.len() - 1;
            b[last] ^= 0xff;
            std::fs::write(e.path(), b).unwrap();
        }
    }
    let read = state::read_status(&dir).unwrap();
    assert_eq!(read.sessions, 3);
    let (st, n) = status_from_store(&dir);
    assert_eq!(figures(&read.status, read.sessions), figures(&st, n));

    hook(&dir, &payload("PreToolUse-Bash.json", "s4", "a"));
    hook(&dir, &payload("PreToolUse-Bash.json", "s4", "b"));
    assert_eq!(spooled(&dir), 2);
    let read = state::read_status(&dir).unwrap();
    assert_eq!((read.sessions, read.status.spooled), (4, 0));
    assert_eq!(read.status.events, st.events + 2);
}

/// Given a light writer whose work needs a partition the hot cache lacks, when it reports the
/// cache miss, then nothing it did is committed and the same work runs again on the store,
/// under the same lock.
#[test]
fn a_cache_miss_drops_the_light_attempt_and_does_the_work_on_the_store() {
    let (_t, dir) = journal_dir();
    hook(&dir, &payload("SessionStart-startup.json", "s1", "start"));
    assert_eq!(logged_markers(&dir), ["start"]);

    let mut attempts = Vec::new();
    let opts = state::cli_open_options(&dir, false);
    let (mut held, ()) = write(&dir, &opts, true, |w: &mut dyn Writer| {
        let full = w.full().is_some();
        attempts.push(full);
        let mut tx = w.begin();
        tx.push(
            invocation(&payload(
                "PreToolUse-Bash.json",
                "s1",
                if full { "full" } else { "light" },
            ))
            .ev,
        );
        if !full {
            return Err(anyhow::Error::new(CacheMiss));
        }
        w.commit(tx)?;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e:?}"));
    held.finish().unwrap();
    assert!(matches!(held, Held::Full(_)));
    drop(held);
    assert_eq!(attempts, [false, true]);
    assert_eq!(logged_markers(&dir), ["start", "full"]);
}

/// Given a checkpoint marked stale, when a hook that would be answered comes (the session
/// restarting after a compaction), then it is journaled but answered with nothing (no answer
/// from state that cannot be trusted), and the checkpoint is rebuilt from the log: afterwards it
/// equals a full replay and the next compaction's restart is answered again.
#[test]
fn a_stale_checkpoint_answers_nothing_and_is_rebuilt_from_the_log() {
    let (_t, dir) = journal_dir();
    hook(&dir, &payload("SessionStart-startup.json", "s1", "start"));
    hook(&dir, &payload("UserPromptSubmit.json", "s1", "prompt"));
    hook(&dir, &payload("PreCompact-auto.json", "s1", "compact"));
    journal::checkpoint::mark_stale(&dir, "a test").unwrap();

    assert_eq!(
        hook(&dir, &payload("SessionStart-compact.json", "s1", "resume")),
        None
    );
    // The hook started the rebuild (here: did it) once it let go of the lock.
    assert_eq!(journal::checkpoint::stale_reason(&dir), None);
    assert_eq!(
        logged_markers(&dir),
        ["start", "prompt", "compact", "resume"]
    );

    let j = state::open_read(&dir).unwrap();
    let snap = j.read_snapshot().unwrap();
    let checkpoint = state::checkpoint_whole(&j).unwrap();
    drop(j);
    let rewinds = state::collect_rewinds(&snap).unwrap();
    let replayed = state::full_replay(&snap, rewinds, |_| {}).unwrap();
    assert_eq!(
        projections::fold::partition_diff(&checkpoint, &replayed.state),
        Vec::<String>::new()
    );
    hook(
        &dir,
        &payload("PreCompact-auto.json", "s1", "compact again"),
    );
    let restored = hook(
        &dir,
        &payload("SessionStart-compact.json", "s1", "resume again"),
    );
    assert!(
        restored
            .as_deref()
            .is_some_and(|a| a.contains("additionalContext")),
        "{restored:?}"
    );
}

/// Given four writers handling hooks at once (record-only ones spooled, answering ones under the
/// lock), when they are done and the spool is drained, then every invocation is in the log
/// exactly once, in each writer's order, and the chain verifies.
#[test]
fn concurrent_writers_lose_and_duplicate_nothing() {
    let (_t, dir) = journal_dir();
    hook(&dir, &payload("SessionStart-startup.json", "s0", "start"));
    let names = [
        "PreToolUse-Bash.json",
        "UserPromptSubmit.json",
        "PostToolUse-Write.json",
    ];
    std::thread::scope(|s| {
        for w in 0..4 {
            let dir = &dir;
            s.spawn(move || {
                for i in 0..15 {
                    let marker = format!("w{w}-{i:02}");
                    hook(
                        dir,
                        &payload(names[i % names.len()], &format!("s{w}"), &marker),
                    );
                }
            });
        }
    });
    engine::maintenance::drain(&dir, 1000).unwrap();
    assert_eq!(spooled(&dir), 0);
    let logged = logged_markers(&dir);
    assert_eq!(logged.len(), 61, "{logged:?}");
    for w in 0..4 {
        let mine: Vec<&String> = logged
            .iter()
            .filter(|m| m.starts_with(&format!("w{w}-")))
            .collect();
        let want: Vec<String> = (0..15).map(|i| format!("w{w}-{i:02}")).collect();
        assert_eq!(mine, want.iter().collect::<Vec<_>>(), "writer {w}");
    }
    let report = journal::verify(&dir, std::time::Duration::from_secs(10), |_| {}).unwrap();
    assert!(report.ok(), "{:?}", report.damage);
}

/// One step of a run: a hook (by one of four sessions, maybe a loop agent's, maybe while a
/// reader holds the journal so that it must spool), or a read.
#[derive(Clone, Debug)]
enum Step {
    Hook {
        event: usize,
        session: usize,
        agent: bool,
        busy: bool,
    },
    Read,
}

/// Record-only events (the tool calls, spooled by the fast path) and answering ones (a prompt, a
/// compaction that stops a loop agent and releases its task, a restart, a stop).
const EVENTS: [&str; 6] = [
    "PreToolUse-Bash.json",
    "PostToolUse-Write.json",
    "UserPromptSubmit.json",
    "PreCompact-auto.json",
    "SessionStart-startup.json",
    "Stop.json",
];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..EVENTS.len(), 0..4usize, any::<bool>(), any::<bool>()).prop_map(
            |(event, session, agent, busy)| Step::Hook { event, session, agent, busy }
        ),
        1 => Just(Step::Read),
    ]
}

/// Holds the journal's lock as a long reader would: a hook then cannot take it and spools.
fn hold_lock(dir: &Path) -> std::fs::File {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("lock"))
        .unwrap();
    assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
    f
}

/// A `tasks` command, committed as the CLI commits it.
fn task_command(dir: &Path, op: TaskOp, id: &str, agent: &str) {
    let mut j = state::open_and_drain(dir, true).unwrap();
    let mut loaded = state::Loaded::new(&j).unwrap();
    let mut tx = j.begin();
    let c = TaskCommand {
        op,
        task: TaskRef::global(id),
        subject: Some(format!("task {id}")),
        description: None,
        agent: Some(agent.to_string()),
        reason: None,
    };
    tx.push(engine::ingest::event(
        1_764_000_000_000_000,
        "cli",
        None,
        Some(agent),
        Kind::TaskCommand,
        derived::body(&c),
    ));
    let env = tx.events().last().unwrap().clone();
    loaded.fold(&j, &env).unwrap();
    loaded.write_back(&mut tx);
    j.commit(tx).unwrap();
}

/// What the read commands answer from, each read as its command reads it: the log as `export`
/// and `replay` show it (seq, hash, kind, session, spooled), the checkpoint `tasks`, `show` and
/// `context` read, the partitions `sessions`, `cost` and `notifications` read, and the full fold
/// `cost --by` and `report` take.
#[derive(Debug, PartialEq)]
struct Reads {
    log: Vec<(u64, String, String, Option<String>, bool)>,
    checkpoint: projections::fold::State,
    partial: projections::fold::State,
    full: projections::fold::State,
}

/// `from`'s journal copied whole to `to` (no process holds it): a second reader of the same
/// journal, as it was, spool and all.
fn copy_journal(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_journal(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Each read as its command reads it, each from its own copy of the journal as it is now, so
/// that no read finds the spool another one ingested.
fn reads(dir: &Path) -> Reads {
    let copies = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let to = copies.path().join(name).join(".hookjournal");
        copy_journal(dir, &to);
        to
    };
    let view = state::open_view(&copy("view")).unwrap();
    let mut log = Vec::new();
    view.snap
        .for_each(|e| {
            log.push((
                e.seq,
                journal::hex(&e.hash),
                e.kind().label(),
                e.session_id.clone(),
                e.spooled,
            ));
            Ok(())
        })
        .unwrap();
    let full = state::open_log(&copy("log"), true)
        .unwrap()
        .full(|_| {})
        .unwrap()
        .state;
    let mut p = state::Partial::open(&copy("partial")).unwrap();
    p.load_index().unwrap();
    p.load_totals().unwrap();
    p.load_cost().unwrap();
    p.load(&projections::fold::Partition::Tasks).unwrap();
    Reads {
        log,
        checkpoint: state::read_checkpoint(&copy("checkpoint")).unwrap(),
        partial: p.into_state(),
        full,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Given four loop agents each holding a task, when hooks of every kind run in any order —
    /// record-only ones spooled by the fast path, answering ones spooled because a reader holds
    /// the journal — with reads between them, then every read shows what the same read shows
    /// after the spool is drained by a writer: the same log (seqs and hashes), the same
    /// sessions, tasks (each release) and costs.
    #[test]
    fn every_read_equals_the_same_read_after_a_full_drain(
        steps in proptest::collection::vec(step(), 1..12)
    ) {
        engine::maintenance::work_inline();
        let (_t, dir) = journal_dir();
        for a in 0..4 {
            let (id, agent) = (format!("T{}", a + 1), format!("dev-{a}"));
            task_command(&dir, TaskOp::Add, &id, &agent);
            task_command(&dir, TaskOp::Claim, &id, &agent);
        }
        let mut settings = Settings::default();
        settings.hook.lock_wait_ms = 0;
        for (i, s) in steps.iter().chain([&Step::Read]).enumerate() {
            match s {
                Step::Hook { event, session, agent, busy } => {
                    let bytes = payload(EVENTS[*event], &format!("s{session}"), &format!("m{i}"));
                    let agent = agent.then(|| format!("dev-{session}"));
                    let inv = invocation_of(&bytes, agent.as_deref());
                    let held = busy.then(|| hold_lock(&dir));
                    let handled = handle(&dir, &settings, &inv, &|| "a panic".into());
                    drop(held);
                    handled.after_answer(&dir, &settings, &inv);
                }
                Step::Read => {
                    let now = reads(&dir);
                    engine::maintenance::drain(&dir, 1000).unwrap();
                    prop_assert_eq!(spooled(&dir), 0);
                    prop_assert_eq!(now, reads(&dir));
                }
            }
        }
    }
}
