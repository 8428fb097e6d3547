//! Imports, each one engine call: an events export rebuilt into a journal (same hashes, same
//! chain head), and usage backfilled from session files (a Claude Code projects folder, or what
//! `discover` finds in every hosted agent's default places), deduplicated against what the
//! journal holds, committed batch by batch straight into sealed segments. The CLI reads the
//! export's lines and draws the progress; the transactions are here.

use crate::ingest;
use crate::state::{self, Loaded, Source};
use anyhow::{bail, Context, Result};
use journal::{Envelope, Journal, OpenOptions};
use projections::host::SessionFileFormat;
use projections::Kind;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::discover::SessionFile;

/// The most of one session file read by an import: a larger file is read this far (whole lines),
/// and the next import reads on from there.
pub const FILE_CAP: usize = 1 << 30;

/// What a session-file import did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Usage readings imported, per file (in the order given).
    pub usage: Vec<usize>,
    /// The sessions of the files no hook event was ever recorded for ("from files only").
    pub files_only: std::collections::BTreeSet<String>,
}

impl Imported {
    /// Usage readings imported in all.
    pub fn usage_events(&self) -> usize {
        self.usage.iter().sum()
    }
}

/// Opens `dir` for an import (created when missing) and runs `work` on it; a journal this
/// import created is removed again when `work` fails, so a retry starts from nothing.
pub fn run<T>(
    dir: &Path,
    segment_events: u64,
    work: impl FnOnce(&mut Journal) -> Result<T>,
) -> Result<T> {
    let opts = OpenOptions {
        wait: Duration::from_secs(10),
        create: true,
        segment_events,
        priority: true,
    };
    let existed = dir.exists();
    crate::trust::refuse_foreign(dir)?;
    let mut j =
        Journal::open(dir, &opts).with_context(|| format!("opening journal {}", dir.display()))?;
    match work(&mut j) {
        Ok(t) => Ok(t),
        Err(e) => {
            drop(j);
            if !existed {
                let _ = journal::door::by_path::remove_tree(dir);
            }
            Err(e)
        }
    }
}

/// Events per committed batch of an events import: each batch is one sealed segment.
const BATCH: usize = 4096;

/// Events per committed batch of a transcript import (each one sealed segment): memory holds
/// about two batches' events and sessions (and the cost shards, written at the end). A batch
/// costs its own events and a fixed ~20 ms to switch stores (fsyncs, a new sled store), so
/// batches of 2,048 made the 1 GB corpus import a third slower; 32,768 gained nothing more.
pub const TRANSCRIPT_BATCH: usize = 8_192;

/// Transcripts read and scanned ahead of the one being folded.
const AHEAD: usize = 8;

/// Imports an events export, given as its lines' `(line number, envelope)` (`label` names the
/// file in errors). A journal that already holds the file's first events (an import that was
/// killed) is completed, not refused; one holding other events is refused. The checkpoint is
/// marked stale for the whole import and rebuilt from the log at the end, so a kill anywhere
/// leaves a journal that the rerun (or any reader) completes.
pub fn events(
    j: &mut Journal,
    label: &str,
    lines: impl Iterator<Item = Result<(usize, Envelope)>>,
) -> Result<()> {
    let (have, have_hash) = (j.head_seq(), j.head_hash());
    let mut tx = j.begin();
    let mut matched_prefix = have == 0;
    let mut stale = false;
    for line in lines {
        let (i, env) = line?;
        if env.seq <= have {
            if env.seq == have && env.hash == have_hash {
                matched_prefix = true;
            }
            continue;
        }
        if !matched_prefix {
            bail!(
                "journal {} already holds {have} events that are not this file's first {have}; import --events needs an empty journal (or one this file was being imported into)",
                j.dir().display()
            );
        }
        if !stale {
            journal::checkpoint::mark_stale(j.dir(), "an import is in progress")?;
            stale = true;
        }
        tx.push_sealed(env)
            .map_err(|e| anyhow::anyhow!("{label} line {i}: {e}"))?;
        if tx.events().len() >= BATCH {
            j.commit_as_segment(std::mem::replace(&mut tx, j.begin()))?;
            tx = j.begin();
        }
    }
    if !matched_prefix {
        bail!(
            "journal {} already holds {have} events that are not this file's first {have}",
            j.dir().display()
        );
    }
    j.commit_as_segment(tx)?;
    if stale || journal::checkpoint::stale_reason(j.dir()).is_some() {
        state::rebuild_checkpoint(j)?;
    }
    j.seal_if_full()?;
    Ok(())
}

/// Every transcript under a Claude Code projects `folder`; none is an error.
pub fn transcript_files(folder: &Path) -> Result<Vec<SessionFile>> {
    let mut out = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = journal::door::Dir::open(&d)
            .and_then(|h| h.entries())
            .with_context(|| format!("reading {}", d.display()))?;
        for (name, st) in rd {
            let p = d.join(name);
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "jsonl") {
                let stem = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let parent = p
                    .parent()
                    .and_then(|x| x.file_name())
                    .map(|s| s.to_string_lossy().into_owned());
                if parent.as_deref() == Some("subagents") {
                    let session = p
                        .parent()
                        .and_then(|x| x.parent())
                        .and_then(|x| x.file_name())
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.push(claude_transcript(
                        session,
                        Some(stem.trim_start_matches("agent-").to_string()),
                        p,
                    ));
                } else {
                    out.push(claude_transcript(stem, None, p));
                }
            }
        }
    }
    out.sort_by(|a, b| (a.agent.is_some(), &a.path).cmp(&(b.agent.is_some(), &b.path)));
    if out.is_empty() {
        bail!("no .jsonl transcripts under {}", folder.display());
    }
    Ok(out)
}

fn claude_transcript(session: String, agent: Option<String>, path: PathBuf) -> SessionFile {
    SessionFile {
        host: "claude",
        format: projections::host::SessionFileFormat::ClaudeTranscript,
        session,
        agent,
        path,
    }
}

/// Imports session files' usage (Claude Code's transcripts read ahead on a thread of their own,
/// the other hosts' files by their `ingest` readers as they are folded), each event under its
/// file's host. Events are committed in batches of `batch` usage readings (with the
/// sessions they changed), each straight into a sealed segment (`Journal::commit_as_segment`),
/// the checkpoint marked stale ("an import is in progress") meanwhile:
/// the cost shards stay in memory and are written once, in the last batch, after which the marker
/// goes. A batch therefore costs its own events only, not a rewrite of cost shards that grow with
/// the whole history. A kill anywhere leaves the marker:
/// the rerun (like any reader) rebuilds the checkpoint from the log first, so the sessions' offsets
/// and readings say what was imported, and it goes on from there.
/// `progress` is called once per file read.
pub fn transcripts(
    j: &mut Journal,
    files: &[SessionFile],
    batch: usize,
    progress: &mut dyn FnMut(),
) -> Result<Imported> {
    if journal::checkpoint::stale_reason(j.dir()).is_some() {
        state::rebuild_checkpoint(j)?;
    }
    state::fold_unfolded(j)?;
    let now = chrono::Utc::now().timestamp_micros();
    // Loaded before the marker, so it reads the (consistent) checkpoint as it stands.
    let mut loaded = Loaded::new(j)?;
    let mut tx = j.begin();
    let mut imported = Imported {
        usage: vec![0; files.len()],
        ..Imported::default()
    };
    let mut in_batch = 0usize;
    let mut stale = false;
    // No host is waiting on an import.
    let deadline = std::time::Instant::now() + Duration::from_secs(3600);
    let shared = Shared::new(j);
    // Three threads: one reads and scans the files (most of an import's parsing) up to `AHEAD`
    // files ahead; this one dedups and folds them in order; one commits each full batch (writes
    // its segment and store) while this one folds the next.
    std::thread::scope(|scope| -> Result<()> {
        let (jobs, reads) = spawn_reader(scope, deadline);
        let shared = &shared;
        let (commits, acks, writer) = spawn_writer(scope, shared);
        let mut in_flight = false;
        let mut fold_all = || -> Result<()> {
            let mut queued = 0;
            for (i, file) in files.iter().enumerate() {
                // Queued with the offset the checkpoint holds now: only this file's own
                // readings move it, and they are folded after it is read.
                while queued < files.len() && queued < i + AHEAD {
                    jobs.send(read_job(&mut loaded, shared, &files[queued])?)
                        .context("the transcript reader stopped")?;
                    queued += 1;
                }
                let read = reads.recv().context("the transcript reader stopped")?;
                progress();
                let session = &file.session;
                loaded.session(shared, session)?;
                let obs = observations(file, read, loaded.state.sessions.get(session), deadline);
                let (pushed, usage) =
                    push_observations(&mut loaded, shared, &mut tx, file, obs, now)?;
                if loaded
                    .state
                    .sessions
                    .get(session)
                    .is_some_and(|s| s.hook_events == 0)
                {
                    imported.files_only.insert(session.clone());
                }
                in_batch += pushed;
                imported.usage[i] += usage;
                // Streamed: a full batch of events is committed (a file's events are never
                // split: its session's offsets stay consistent), its envelopes let go.
                if in_batch >= batch {
                    if !stale {
                        journal::checkpoint::mark_stale(&shared.dir, "an import is in progress")?;
                        stale = true;
                    }
                    loaded.release_sessions(&mut tx);
                    // One batch in flight: the one before is committed, and what this one
                    // writes is read from it until it is.
                    if in_flight && acks.recv().is_err() {
                        return Ok(());
                    }
                    shared.pending(&tx);
                    let next = tx.following();
                    if commits.send(std::mem::replace(&mut tx, next)).is_err() {
                        return Ok(());
                    }
                    in_flight = true;
                    in_batch = 0;
                }
            }
            if in_flight {
                let _ = acks.recv();
            }
            Ok(())
        };
        let folded = fold_all();
        drop(commits);
        // The writer's error first: a fold that stopped because the writer did says less.
        writer
            .join()
            .map_err(|_| anyhow::anyhow!("the import's writer thread stopped unexpectedly"))??;
        folded
    })?;
    finish_import(shared.into_journal(), &mut loaded, tx, stale)?;
    // Freeing what the fold built takes a while and answers nothing.
    std::thread::spawn(move || drop(loaded));
    Ok(imported)
}

/// The reader thread's job for `f`: read from the offset its session holds now.
fn read_job(loaded: &mut Loaded, shared: &Shared<'_>, f: &SessionFile) -> Result<ReadJob> {
    loaded.session(shared, &f.session)?;
    let p = f.path.to_string_lossy().into_owned();
    let offset = ingest::recorded_offset(loaded.state.sessions.get(&f.session), &p);
    let transcript = f.format == SessionFileFormat::ClaudeTranscript;
    Ok((p, offset, f.agent.clone(), transcript))
}

/// A file's readings the session does not hold: a Claude Code transcript's from what the
/// reader thread read ahead, another host's read now by its `ingest` reader.
fn observations(
    file: &SessionFile,
    read: Option<ingest::TranscriptRead>,
    known: Option<&projections::session::SessionState>,
    deadline: std::time::Instant,
) -> Vec<ingest::Observation> {
    match read {
        Some(read) => ingest::transcript_observations(known, read),
        None if file.format == SessionFileFormat::ClaudeTranscript => Vec::new(),
        // One database holds every session: the file names its session, which the journal
        // may not hold yet.
        None if file.format == SessionFileFormat::OpenCodeDb => ingest::opencode_db_session_events(
            known,
            &file.session,
            &file.path.to_string_lossy(),
            FILE_CAP,
            deadline,
        ),
        None => ingest::session_file_events(
            file.format,
            known,
            &file.path.to_string_lossy(),
            file.agent.as_deref(),
            None,
            FILE_CAP,
            deadline,
        ),
    }
}

/// What an import's reader thread is asked for: a file, the offset to read it from, its
/// subagent, and whether it is a Claude Code transcript (the only files read ahead: another
/// host's file is read on the folding thread, `None` sent for it).
type ReadJob = (String, u64, Option<String>, bool);

/// The thread that reads and scans the transcripts, up to `AHEAD` files ahead of the fold.
fn spawn_reader<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    deadline: std::time::Instant,
) -> (
    std::sync::mpsc::SyncSender<ReadJob>,
    std::sync::mpsc::Receiver<Option<ingest::TranscriptRead>>,
) {
    let (jobs, jobs_rx) = std::sync::mpsc::sync_channel::<ReadJob>(AHEAD);
    let (reads_tx, reads) = std::sync::mpsc::sync_channel::<Option<ingest::TranscriptRead>>(AHEAD);
    scope.spawn(move || {
        for (path, offset, agent, transcript) in jobs_rx {
            let read = transcript
                .then(|| {
                    ingest::read_transcript(&path, offset, agent.as_deref(), FILE_CAP, deadline)
                })
                .flatten();
            if reads_tx.send(read).is_err() {
                return;
            }
        }
    });
    (jobs, reads)
}

/// The thread that commits each full batch (its segment and store), acknowledging each, while
/// the fold goes on with the next.
#[allow(clippy::type_complexity)]
fn spawn_writer<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    shared: &'scope Shared<'_>,
) -> (
    std::sync::mpsc::SyncSender<journal::Tx>,
    std::sync::mpsc::Receiver<()>,
    std::thread::ScopedJoinHandle<'scope, Result<()>>,
) {
    let (commits, commits_rx) = std::sync::mpsc::sync_channel::<journal::Tx>(0);
    let (acks_tx, acks) = std::sync::mpsc::sync_channel::<()>(1);
    let writer = scope.spawn(move || -> Result<()> {
        for tx in commits_rx {
            shared.journal().commit_as_segment(tx)?;
            if acks_tx.send(()).is_err() {
                break;
            }
        }
        Ok(())
    });
    (commits, acks, writer)
}

/// One file's observations, pushed (unhashed: the writer knows the head the batch continues)
/// under its host and session, and folded. Returns (events pushed, usage events among them).
fn push_observations(
    loaded: &mut Loaded,
    shared: &Shared<'_>,
    tx: &mut journal::Tx,
    file: &SessionFile,
    obs: Vec<ingest::Observation>,
    now: i64,
) -> Result<(usize, usize)> {
    let (mut pushed, mut usage) = (0, 0);
    for o in obs {
        let (kind, body) = o.remember();
        // Backfilled events have no hook invocation as their cause: cause 0.
        let kind = kind(0);
        usage += matches!(kind, Kind::UsageObserved { .. }) as usize;
        pushed += 1;
        tx.push_unhashed(ingest::event(
            now,
            file.host,
            Some(&file.session),
            None,
            kind,
            body,
        ));
        loaded.fold(shared, tx.events().last().expect("pushed"))?;
    }
    Ok((pushed, usage))
}

/// The import's last batch and the checkpoint: written back (or rebuilt whole when a partition
/// did not read), the in-progress mark cleared, and the whole import sealed, so readers stream
/// it from segments (a bulk import is history).
fn finish_import(
    j: &mut Journal,
    loaded: &mut Loaded,
    mut tx: journal::Tx,
    stale: bool,
) -> Result<()> {
    for w in &loaded.warnings {
        eprintln!("hookjournal: {w}");
    }
    if loaded.stale.is_some() {
        // A partition that did not read: the events are kept, the checkpoint rebuilt whole.
        j.commit_as_segment(tx)?;
        state::rebuild_checkpoint(j)?;
    } else {
        loaded.write_back(&mut tx);
        j.commit_as_segment(tx)?;
        if stale {
            journal::checkpoint::clear_stale(j.dir())?;
        }
    }
    j.seal().map_err(Into::into)
}

/// The journal an import's folding thread reads partitions from while its writer thread
/// commits: each read takes the lock for itself, and a partition of the batch being committed
/// is read from that batch.
struct Shared<'a> {
    dir: PathBuf,
    journal: std::sync::Mutex<&'a mut Journal>,
    pending: std::sync::Mutex<std::collections::HashMap<Vec<u8>, Option<Vec<u8>>>>,
}

impl<'a> Shared<'a> {
    fn new(j: &'a mut Journal) -> Shared<'a> {
        Shared {
            dir: j.dir().to_path_buf(),
            journal: std::sync::Mutex::new(j),
            pending: Default::default(),
        }
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, &'a mut Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `tx` is handed to the writer: its partitions are read from it until the next batch is.
    fn pending(&self, tx: &journal::Tx) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.clear();
        p.extend(
            tx.state_writes()
                .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec))),
        );
    }

    fn into_journal(self) -> &'a mut Journal {
        self.journal.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl Source for Shared<'_> {
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn get_partition(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = pending.get(key) {
            return Ok(v.clone());
        }
        drop(pending);
        Ok(self.journal().get_state(key)?)
    }
    fn is_hot(&self, key: &[u8]) -> Result<bool> {
        Ok(self.journal().is_hot(key)?)
    }
    fn was_drained(&self, spool_id: &str) -> Result<bool> {
        Ok(self.journal().was_drained(spool_id)?)
    }
    fn unfolded(&self) -> Result<Vec<Envelope>> {
        Ok(self.journal().unfolded()?)
    }
    fn fills_cache(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use journal::OpenOptions;

    /// The transcript corpus imported in batches of one usage event and in one batch: the same
    /// checkpoint, and it equals a full replay of the imported log.
    #[test]
    fn a_transcript_import_in_batches_builds_the_checkpoint_of_one_batch() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/transcripts-corpus/projects");
        let dir = tempfile::tempdir().unwrap();
        let opts = OpenOptions {
            create: true,
            ..OpenOptions::default()
        };
        let mut checkpoints = Vec::new();
        for (name, batch) in [("one", usize::MAX), ("many", 1)] {
            let mut j = Journal::open(&dir.path().join(name), &opts).unwrap();
            let files = transcript_files(&corpus).unwrap();
            transcripts(&mut j, &files, batch, &mut || {}).unwrap();
            let cp = state::checkpoint_whole(&j).unwrap();
            let snap = j.read_snapshot().unwrap();
            let rewinds = state::collect_rewinds(&snap).unwrap();
            let full = state::full_replay(&snap, rewinds, |_| {}).unwrap();
            assert_eq!(
                projections::fold::partition_diff(&cp, &full.state),
                Vec::<String>::new(),
                "{name}"
            );
            assert!(cp.cost_summary().by_key.len() > 100, "{name}");
            checkpoints.push(cp);
        }
        assert_eq!(checkpoints[0].cost_summary(), checkpoints[1].cost_summary());
        // Sessions equal but for the import's clock.
        let read = |st: &projections::fold::State| -> Vec<_> {
            st.sessions
                .values()
                .map(|s| (s.usage_by_key.clone(), s.transcript_offsets.clone()))
                .collect()
        };
        assert_eq!(read(&checkpoints[0]), read(&checkpoints[1]));
    }

    /// Given a partition committed as `old` and a batch writing it as `new` handed to the writer
    /// (not committed yet), the folding thread reads `new`; a partition the batch deletes reads
    /// as absent; others read from the journal.
    #[test]
    fn the_fold_reads_a_partition_of_the_batch_in_flight_from_that_batch() {
        let dir = tempfile::tempdir().unwrap();
        let opts = OpenOptions {
            create: true,
            ..OpenOptions::default()
        };
        let mut j = Journal::open(dir.path(), &opts).unwrap();
        let mut tx = j.begin();
        for k in [&b"a"[..], b"b", b"c"] {
            tx.put_state(k, b"old".to_vec());
        }
        j.commit(tx).unwrap();
        let shared = Shared::new(&mut j);
        let mut tx = shared.journal().begin();
        tx.put_state(b"a", b"new".to_vec());
        tx.delete_state(b"b");
        shared.pending(&tx);
        let read = |k: &[u8]| shared.get_partition(k).unwrap();
        assert_eq!(read(b"a"), Some(b"new".to_vec()));
        assert_eq!(read(b"b"), None);
        assert_eq!(read(b"c"), Some(b"old".to_vec()));
        shared.journal().commit_as_segment(tx).unwrap();
        shared.pending(&shared.journal().begin());
        assert_eq!(read(b"a"), Some(b"new".to_vec()));
        assert_eq!(read(b"b"), None);
    }
}
