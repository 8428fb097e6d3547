//! Reading the outside world at ingestion, so projections never have to: transcript usage (read
//! incrementally from the offset the journal recorded), and the git branch.

use journal::{NewEvent, Seq};
use projections::derived::{self, ContextObserved, GitObserved, UsageObserved};
use projections::host::SessionFileFormat;
use projections::session::SessionState;
use projections::transcript;
use projections::Kind;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Reads up to `max` new bytes of a transcript from `offset`, until `deadline`. Returns (bytes,
/// start offset). A file shorter than the offset was rotated or rewritten: read it from the start
/// (the usage dedupe keys keep that from counting twice).
///
/// The path comes from a payload, so it may name anything: it is opened non-blocking (a FIFO
/// nobody writes must not hold the hook, and the journal's lock, forever) and read only when it
/// is a regular file. A read cut short by the deadline keeps what it has: only whole lines are
/// consumed, and the next hook reads on from there.
fn read_new(path: &Path, offset: u64, max: usize, deadline: Instant) -> Option<(Vec<u8>, u64)> {
    let mut f = journal::door::open_following(path).ok()?;
    let len = f.metadata().ok()?.len();
    let start = if len < offset { 0 } else { offset };
    if len == start {
        return Some((Vec::new(), start));
    }
    f.seek(SeekFrom::Start(start)).ok()?;
    let want = ((len - start) as usize).min(max);
    let mut buf = vec![0; want];
    let mut got = 0;
    while got < want && Instant::now() < deadline {
        let end = (got + (1 << 20)).min(want);
        match f.read(&mut buf[got..end]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    buf.truncate(got);
    Some((buf, start))
}

/// Transcript paths come from payloads: read only JSONL files.
fn acceptable(path: &str) -> bool {
    path.ends_with(".jsonl") && !path.contains('\0')
}

/// What a host file holds past the offset the session recorded for it.
struct New {
    bytes: Vec<u8>,
    /// Where `bytes` start (0 when the file was rewritten and is read again from the start).
    start: u64,
    /// The offset the session recorded.
    offset: u64,
}

/// The new bytes of a transcript, rollout or session file since the session's recorded offset;
/// `None` for a path not taken, a file that does not read, or nothing new.
fn read_since(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Option<New> {
    if !acceptable(path) {
        return None;
    }
    let offset = recorded_offset(session, path);
    let (bytes, start) = read_new(Path::new(path), offset, max, deadline)?;
    (!bytes.is_empty()).then_some(New {
        bytes,
        start,
        offset,
    })
}

/// Something read from outside for an event, to be recorded as an event it caused.
pub struct Observation {
    /// The kind of event it becomes, given its cause's seq.
    pub kind: fn(Seq) -> Kind,
    /// The event's body (JSON).
    pub body: Vec<u8>,
    /// A usage reading's value, which `body` encodes: the fold takes it from here instead of
    /// parsing the body back (`Observation::remember`).
    pub usage: Option<UsageObserved>,
}

impl Observation {
    /// A reading whose body the fold parses when it needs it.
    pub fn of(kind: fn(Seq) -> Kind, body: Vec<u8>) -> Observation {
        Observation {
            kind,
            body,
            usage: None,
        }
    }

    /// A usage reading, encoded, its value kept for the fold.
    fn usage(u: UsageObserved) -> Observation {
        Observation {
            kind: |cause| Kind::UsageObserved { cause },
            body: derived::body(&u),
            usage: Some(u),
        }
    }

    /// Hands a usage reading's value to the fold's memo (`derived::remember_usage`), just
    /// before its event is folded; returns the kind maker and the body.
    pub fn remember(self) -> (fn(Seq) -> Kind, Vec<u8>) {
        if let Some(u) = self.usage {
            derived::remember_usage(&self.body, u);
        }
        (self.kind, self.body)
    }
}

/// New usage and context readings from one transcript, deduplicated against what the session's
/// state already holds (largest usage per response wins).
pub fn transcript_events(
    session: Option<&SessionState>,
    path: &str,
    agent_id: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    let offset = recorded_offset(session, path);
    match read_transcript(path, offset, agent_id, max, deadline) {
        Some(read) => transcript_observations(session, read),
        None => Vec::new(),
    }
}

/// The offset the session recorded for a host file (0 when it has none).
pub fn recorded_offset(session: Option<&SessionState>, path: &str) -> u64 {
    session
        .and_then(|s| s.transcript_offsets.get(path))
        .copied()
        .unwrap_or(0)
}

/// A transcript's new lines, read and scanned into readings, not yet checked against the
/// session: the part of `transcript_events` that needs only the file's recorded offset, so an
/// import can run it ahead, on another thread (a file's offset changes only when that file is
/// read).
pub struct TranscriptRead {
    /// Each response's reading with its dedup key and its encoded body, in file order.
    readings: Vec<(String, UsageObserved, Vec<u8>)>,
    /// The context reading (main transcripts only).
    context: Option<Vec<u8>>,
}

/// Reads and scans a transcript's bytes past `offset` (a subagent's when `agent_id` is given);
/// `None` for a path not taken, a file that does not read, or nothing new.
pub fn read_transcript(
    path: &str,
    offset: u64,
    agent_id: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Option<TranscriptRead> {
    if !acceptable(path) {
        return None;
    }
    let (bytes, start) = read_new(Path::new(path), offset, max, deadline)?;
    if bytes.is_empty() {
        return None;
    }
    let scan = transcript::scan(&bytes);
    let end = start + scan.consumed as u64;
    let readings = scan
        .records
        .into_iter()
        .map(|record| {
            let key = format!("{}:{}", record.message_id, record.request_id);
            let u = UsageObserved {
                path: path.to_string(),
                offset: end,
                agent_id: agent_id.map(str::to_string),
                record,
            };
            let body = derived::body(&u);
            (key, u, body)
        })
        .collect();
    let ctx = if agent_id.is_none() {
        scan.context
    } else {
        None
    };
    let context = (end != offset || ctx.is_some()).then(|| {
        derived::body(&ContextObserved {
            path: path.to_string(),
            offset: end,
            tokens: ctx.as_ref().map(|c| c.tokens),
            model: ctx.map(|c| c.model),
            compressions: Vec::new(),
            window: None,
        })
    });
    Some(TranscriptRead { readings, context })
}

/// The usage and context readings of a scanned transcript that the session does not hold yet.
/// `session` is the state the read's offset came from, or a later one of the same session.
pub fn transcript_observations(
    session: Option<&SessionState>,
    read: TranscriptRead,
) -> Vec<Observation> {
    let mut out = Vec::new();
    for (key, u, body) in read.readings {
        // A fork's copy of its parent's response, already left to the parent.
        if session.is_some_and(|s| s.usage_copied.contains(&key)) {
            continue;
        }
        let known = session.and_then(|s| s.usage_by_key.get(&key));
        if let Some((_, old)) = known {
            if !transcript::larger(&u.record.usage, old) {
                continue;
            }
        }
        out.push(Observation {
            kind: |cause| Kind::UsageObserved { cause },
            body,
            usage: Some(u),
        });
    }
    if let Some(body) = read.context {
        out.push(Observation::of(
            |cause| Kind::ContextObserved { cause },
            body,
        ));
    }
    out
}

/// What a scanned host file (a rollout or session file) gives: the responses the session has
/// not counted (largest usage per key wins), the context reading, the compactions it has not
/// counted and the window the host reported; a reading whenever the read moved on.
struct FileReading {
    path: String,
    /// The offset the read reached, and the one the session had recorded.
    end: u64,
    offset: u64,
    records: Vec<transcript::UsageRecord>,
    tokens: Option<u64>,
    model: Option<String>,
    compressions: Vec<String>,
    window: Option<u64>,
    /// The subagent whose own file it is (its usage is the session's; its context is not).
    agent: Option<String>,
}

impl FileReading {
    fn observations(self, session: Option<&SessionState>) -> Vec<Observation> {
        let mut out = Vec::new();
        for record in self.records {
            let key = format!("{}:{}", record.message_id, record.request_id);
            if let Some((_, old)) = session.and_then(|s| s.usage_by_key.get(&key)) {
                if !transcript::larger(&record.usage, old) {
                    continue;
                }
            }
            out.push(Observation::usage(UsageObserved {
                path: self.path.clone(),
                offset: self.end,
                agent_id: self.agent.clone(),
                record,
            }));
        }
        let compressions: Vec<String> = self
            .compressions
            .into_iter()
            .filter(|id| session.is_none_or(|s| !s.compressions_seen.contains(id)))
            .collect();
        if self.end != self.offset || !compressions.is_empty() {
            out.push(Observation::of(
                |cause| Kind::ContextObserved { cause },
                derived::body(&ContextObserved {
                    path: self.path,
                    offset: self.end,
                    tokens: self.tokens,
                    model: self.model,
                    compressions,
                    window: self.window,
                }),
            ));
        }
        out
    }
}

/// New usage, the context and compactions from a host's session file of `format`, read from the
/// offset the journal recorded and deduplicated against the session's state: a request, a
/// response or a compaction counted already is left out. `agent`: the subagent whose own file
/// it is (Claude Code's transcript, Cline's messages file); `model`: the session's, for a Codex
/// rollout chunk that starts after the rollout's turn context.
pub fn session_file_events(
    format: SessionFileFormat,
    session: Option<&SessionState>,
    path: &str,
    agent: Option<&str>,
    model: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    if let Some(out) = read_their_own_way(format, session, path, agent, max, deadline) {
        return out;
    }
    let Some(New {
        bytes,
        start,
        offset,
    }) = read_since(session, path, max, deadline)
    else {
        return Vec::new();
    };
    let reading =
        |consumed: usize, records, context: Option<(u64, String)>, compressions, window| {
            FileReading {
                path: path.to_string(),
                end: start + consumed as u64,
                offset,
                records,
                tokens: context.as_ref().map(|c| c.0),
                model: context.map(|c| c.1),
                compressions,
                window,
                agent: None,
            }
        };
    let reading = match format {
        SessionFileFormat::CodexRollout => {
            let scan = projections::hosts::codex::rollout::scan(&bytes, model);
            // A request's key is the running total it brought its rollout to: two rollouts can
            // reach the same total (the same first request in two sessions), so the rollout
            // (its file name, which holds the thread id) completes the key, as ccusage counts
            // each file on its own.
            let rollout = Path::new(path)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(path);
            let mut records = scan.records;
            for r in &mut records {
                r.request_id = rollout.to_string();
            }
            let context = scan.context.map(|c| (c.tokens, c.model));
            let mut r = reading(scan.consumed, records, context, Vec::new(), None);
            r.model = r.model.or(scan.model);
            r
        }
        SessionFileFormat::GeminiChat => {
            let scan = projections::hosts::gemini::chat::scan(&bytes);
            let context = scan.context.map(|c| (c.tokens, c.model));
            reading(
                scan.consumed,
                scan.records,
                context,
                scan.compressions,
                None,
            )
        }
        SessionFileFormat::CopilotEvents => {
            let scan = projections::hosts::copilot::session_file::scan(&bytes);
            let context = scan.context.map(|c| (c.tokens, c.model));
            reading(
                scan.consumed,
                scan.records,
                context,
                scan.compactions,
                scan.window,
            )
        }
        // Qwen's and Kimi's compactions are told by their PreCompact hooks, not read here.
        SessionFileFormat::QwenChat | SessionFileFormat::KimiWire => {
            let (consumed, records, context, window) = usage_log(format, &bytes);
            reading(consumed, records, context, Vec::new(), window)
        }
        SessionFileFormat::ClaudeTranscript
        | SessionFileFormat::DroidSession
        | SessionFileFormat::ClineMessages
        | SessionFileFormat::OpenHandsState
        | SessionFileFormat::LettaMessages
        | SessionFileFormat::OpenCodeDb
        | SessionFileFormat::AuggieSession
        | SessionFileFormat::VibeStore => {
            unreachable!("read above")
        }
    };
    reading.observations(session)
}

/// A usage log's records, context and window (Qwen Code's chat, Kimi CLI's wire log), and the
/// bytes its complete lines take.
#[allow(clippy::type_complexity)]
fn usage_log(
    format: SessionFileFormat,
    bytes: &[u8],
) -> (
    usize,
    Vec<projections::transcript::UsageRecord>,
    Option<(u64, String)>,
    Option<u64>,
) {
    let (consumed, records, context, window) = match format {
        SessionFileFormat::KimiWire => {
            let s = projections::hosts::kimi::wire_log::scan(bytes);
            (s.consumed, s.records, s.context, s.window)
        }
        _ => {
            let s = projections::hosts::qwen::chat::scan(bytes);
            (s.consumed, s.records, s.context, s.window)
        }
    };
    (
        consumed,
        records,
        context.map(|c| (c.tokens, c.model)),
        window,
    )
}

/// The formats not read from the recorded offset by `session_file_events`: Claude Code's
/// transcript, Droid's session and Cline's messages file; `None` for the others.
fn read_their_own_way(
    format: SessionFileFormat,
    session: Option<&SessionState>,
    path: &str,
    agent: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Option<Vec<Observation>> {
    Some(match format {
        SessionFileFormat::ClaudeTranscript => {
            transcript_events(session, path, agent, max, deadline)
        }
        SessionFileFormat::DroidSession => droid_session_events(session, path, max, deadline),
        SessionFileFormat::ClineMessages => {
            cline_messages_events(session, path, agent, max, deadline)
        }
        SessionFileFormat::OpenHandsState => openhands_state_events(session, path, max, deadline),
        SessionFileFormat::LettaMessages => letta_messages_events(session, path, max, deadline),
        SessionFileFormat::OpenCodeDb => opencode_db_events(session, path, max, deadline),
        SessionFileFormat::AuggieSession => auggie_session_events(session, path, max, deadline),
        SessionFileFormat::VibeStore => vibe_store_events(session, path, max, deadline),
        _ => return None,
    })
}

/// Factory Droid's session (`droid_session`): the compactions and model its `.jsonl` shows since
/// the recorded offset, and the running totals of the `.settings.json` beside it, read whole (a
/// few hundred bytes, rewritten as the session goes): one record per session file, a larger
/// reading replacing the one the session holds.
fn droid_session_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    use projections::hosts::droid::session_file as droid_session;
    let Some(base) = path.strip_suffix(".jsonl").filter(|_| acceptable(path)) else {
        return Vec::new();
    };
    let offset = recorded_offset(session, path);
    let (bytes, start) =
        read_new(Path::new(path), offset, max, deadline).unwrap_or((Vec::new(), offset));
    let scan = droid_session::scan(&bytes);
    let file = Path::new(base)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(base);
    let settings = format!("{base}.settings.json");
    let totals = read_new(Path::new(&settings), 0, max, deadline)
        .and_then(|(b, _)| droid_session::totals(&b, file, scan.model.as_deref()));
    let model = scan
        .model
        .or_else(|| totals.as_ref().map(|t| t.record.model.clone()));
    FileReading {
        path: path.to_string(),
        end: start + scan.consumed as u64,
        offset,
        tokens: totals.as_ref().and_then(|t| t.context),
        records: totals.map(|t| t.record).into_iter().collect(),
        model: model.filter(|m| !m.is_empty()),
        compressions: scan.compactions,
        window: None,
        agent: None,
    }
    .observations(session)
}

/// A Mistral Vibe session store (`hosts::vibe::store`), a directory: `CURRENT`, its
/// generation's `manifest.json` and `projection-state.json`, the journal segment the manifest
/// names and `meta.json`, each read whole (up to `max` bytes) each time: one totals record per
/// session, a larger reading replacing the one the session holds.
fn vibe_store_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    use projections::hosts::vibe::store;
    let dir = Path::new(path);
    if path.contains('\0') || !dir.is_absolute() {
        return Vec::new();
    }
    let Some(id) = dir.file_name().and_then(|f| f.to_str()) else {
        return Vec::new();
    };
    let read = |rel: &str| read_new(&dir.join(rel), 0, max, deadline).map(|(b, _)| b);
    let Some(generation) = read("CURRENT").and_then(|b| store::generation(&b)) else {
        return Vec::new();
    };
    let gen_dir = format!("generations/{generation}");
    let segment = read(&format!("{gen_dir}/manifest.json")).and_then(|b| store::segment(&b));
    let snapshot = read(&format!("{gen_dir}/projection-state.json"))
        .map(|b| store::snapshot(&b))
        .unwrap_or_default();
    let journal = segment.as_deref().and_then(&read);
    let after = journal.as_deref().map(store::journal).unwrap_or_default();
    let model = read("meta.json").and_then(|b| store::model(&b));
    let record = store::totals(id, snapshot, after, model.as_deref());
    FileReading {
        path: path.to_string(),
        end: journal.map_or(0, |j| j.len() as u64),
        offset: recorded_offset(session, path),
        tokens: None,
        records: record.into_iter().collect(),
        model,
        compressions: Vec::new(),
        window: None,
        agent: None,
    }
    .observations(session)
}

/// Cline CLI's messages file (`cline_session`), one JSON document rewritten as the session
/// goes: read whole (up to `max` bytes: a larger one does not parse and gives nothing) each
/// time, its responses deduplicated by id against the session. The recorded offset is the
/// length read: a context reading is recorded when the file changed length.
fn cline_messages_events(
    session: Option<&SessionState>,
    path: &str,
    agent: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    if !path.ends_with(".messages.json") || path.contains('\0') {
        return Vec::new();
    }
    let Some((bytes, _)) = read_new(Path::new(path), 0, max, deadline) else {
        return Vec::new();
    };
    // The file's directory is the session's id.
    let id = Path::new(path)
        .parent()
        .and_then(Path::file_name)
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let scan = projections::hosts::cline::session_file::scan(&bytes, id);
    // A subagent's file (`spawn_agent`'s, beside the session's): its context is its own.
    let context = scan.context.filter(|_| agent.is_none());
    FileReading {
        path: path.to_string(),
        end: bytes.len() as u64,
        offset: recorded_offset(session, path),
        records: scan.records,
        tokens: context.as_ref().map(|c| c.tokens),
        model: context.map(|c| c.model).filter(|m| !m.is_empty()),
        compressions: Vec::new(),
        window: None,
        agent: agent.map(str::to_string),
    }
    .observations(session)
}

/// An OpenHands conversation's `base_state.json` (`hosts::openhands::base_state`), one JSON
/// document rewritten as the conversation goes: read whole (up to `max` bytes) each time, its
/// responses deduplicated by id against the session, as Cline's messages file is.
fn openhands_state_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    if !path.ends_with("/base_state.json") || path.contains('\0') {
        return Vec::new();
    }
    let Some((bytes, _)) = read_new(Path::new(path), 0, max, deadline) else {
        return Vec::new();
    };
    // The file's directory is the conversation's id.
    let id = Path::new(path)
        .parent()
        .and_then(Path::file_name)
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let scan = projections::hosts::openhands::base_state::scan(&bytes, id);
    FileReading {
        path: path.to_string(),
        end: bytes.len() as u64,
        offset: recorded_offset(session, path),
        records: scan.records,
        tokens: scan.context.as_ref().map(|c| c.tokens),
        model: scan.context.map(|c| c.model).filter(|m| !m.is_empty()),
        compressions: Vec::new(),
        window: scan.window,
        agent: None,
    }
    .observations(session)
}

/// Auggie's session record `sessions/<conversation_id>.json` (`hosts::auggie::session_file`),
/// one JSON document rewritten as the session goes: read whole (up to `max` bytes) each time,
/// its exchanges deduplicated by request id against the session, as OpenHands' file is.
fn auggie_session_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    if !path.ends_with(".json") || path.contains('\0') {
        return Vec::new();
    }
    let Some((bytes, _)) = read_new(Path::new(path), 0, max, deadline) else {
        return Vec::new();
    };
    // The file's name is the conversation's id.
    let id = Path::new(path)
        .file_stem()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let scan = projections::hosts::auggie::session_file::scan(&bytes, id);
    FileReading {
        path: path.to_string(),
        end: bytes.len() as u64,
        offset: recorded_offset(session, path),
        records: scan.records,
        tokens: scan.context.as_ref().map(|c| c.tokens),
        model: scan.context.map(|c| c.model).filter(|m| !m.is_empty()),
        compressions: Vec::new(),
        window: None,
        agent: None,
    }
    .observations(session)
}

/// Letta Code's local backend (`hosts::letta::messages`): `path` is its `conversations`
/// directory joined with the agent's id (the session; no payload names a conversation). The
/// conversations whose `messages.jsonl` the session read before, and of the most recently
/// changed others (`CONVERSATIONS_LOOKED_AT`) those whose `conversation.json` names the agent,
/// have their `messages.jsonl` read from the recorded offset, the agent's responses kept.
fn letta_messages_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    use projections::hosts::letta::messages;
    let path = Path::new(path);
    let (Some(dir), Some(agent)) = (path.parent(), path.file_name().and_then(|a| a.to_str()))
    else {
        return Vec::new();
    };
    let Ok(mut entries) = journal::door::by_path::read_dir(dir) else {
        return Vec::new();
    };
    entries.retain(|e| e.is_dir());
    entries.sort_by_key(|e| std::cmp::Reverse(e.st.st_mtime));
    let mut out = Vec::new();
    for (rank, e) in entries.iter().enumerate() {
        if Instant::now() >= deadline {
            break;
        }
        let conv = dir.join(e.file_name());
        let Some(file) = conv.join("messages.jsonl").to_str().map(str::to_string) else {
            continue;
        };
        // A conversation the session read before is read on wherever it ranks; another is
        // looked at among the most recent only.
        let known = session.is_some_and(|s| s.transcript_offsets.contains_key(&file));
        if !known && rank >= messages::CONVERSATIONS_LOOKED_AT {
            continue;
        }
        let ours = known
            || journal::door::read_following(&conv.join("conversation.json"), 1 << 20)
                .ok()
                .flatten()
                .and_then(|b| messages::conversation_agent(&b))
                .is_some_and(|a| a == agent);
        let Some(New {
            bytes,
            start,
            offset,
        }) = ours
            .then(|| read_since(session, &file, max, deadline))
            .flatten()
        else {
            continue;
        };
        let scan = messages::scan(&bytes, Some(agent));
        out.extend(
            FileReading {
                path: file,
                end: start + scan.consumed as u64,
                offset,
                records: scan.records,
                tokens: scan.context.as_ref().map(|c| c.tokens),
                model: scan.context.map(|c| c.model).filter(|m| !m.is_empty()),
                compressions: Vec::new(),
                window: None,
                agent: None,
            }
            .observations(session),
        );
    }
    out
}

/// Kilo Code's SQLite database (`hosts::kilo::db`, read by `host_db`: never written, never
/// holding up Kilo): the session's and its subagents' assistant messages, read whole each time
/// (at the turn's end), deduplicated by id against the session. The session is the one the
/// journal holds (no payload names the database); the recorded offset is the count of messages
/// with usage, so a context reading is recorded when it grew.
fn opencode_db_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    match session {
        Some(s) => opencode_db_session_events(session, &s.id, path, max, deadline),
        None => Vec::new(),
    }
}

/// [`opencode_db_events`] for the session `id` of the database, which the journal may not hold
/// yet (`import --discover` finds it in the database itself).
pub fn opencode_db_session_events(
    session: Option<&SessionState>,
    id: &str,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    use projections::hosts::kilo::db;
    if !path.ends_with(".db") {
        return Vec::new();
    }
    let limit = db::MAX_MESSAGES;
    let cap = max as i64;
    let params: [&dyn rusqlite::ToSql; 3] = [&id, &limit, &cap];
    let Some(found) = crate::host_db::rows(path, db::MESSAGES, &params, max, deadline) else {
        return Vec::new();
    };
    let rows: Vec<db::Row> = found
        .into_iter()
        .filter_map(|r| {
            let [id, session_id, data]: [String; 3] = r.try_into().ok()?;
            Some(db::Row {
                id,
                session_id,
                data,
            })
        })
        .collect();
    let scan = db::scan(&rows, id);
    FileReading {
        path: path.to_string(),
        end: scan.records.len() as u64,
        offset: recorded_offset(session, path),
        records: scan.records,
        tokens: scan.context.as_ref().map(|c| c.tokens),
        model: scan.context.map(|c| c.model).filter(|m| !m.is_empty()),
        compressions: Vec::new(),
        window: None,
        agent: None,
    }
    .observations(session)
}

/// Where a planned read is: the path the payload named, or one derived under the first
/// directory the hook's environment gives (`host::DerivedPath`; only an absolute one is
/// taken). `None`: no such directory.
pub fn resolved_path(r: &projections::observe::Read) -> Option<String> {
    let Some(dirs) = r.under else {
        return Some(r.path.clone());
    };
    dirs.iter().find_map(|(var, suffix)| {
        let dir = std::env::var_os(var).filter(|d| Path::new(d).is_absolute())?;
        let path = Path::new(&dir).join(suffix).join(&r.path);
        path.to_str().map(str::to_string)
    })
}

/// After a hook event whose host writes its session file behind its hooks was recorded as event
/// `cause`, a detached `hookjournal follow-session` reads the file's last lines once they are there
/// (see `commands::follow`): Copilot CLI's after its sessionEnd (the main agent's), and Qwen Code's
/// after its Stop (the turn's last response is written a moment after the Stop hook starts,
/// measured on 0.24.4). It is started and not waited for; nothing for any other host or event,
/// nor where hooks start no detached work (`HOOKJOURNAL_DRAINER=inline` or `off`, as in the
/// tests).
pub fn follow_session_file(dir: &Path, p: &projections::event::HookEvent, cause: Seq) {
    use projections::event::Canonical;
    use projections::host::Host;
    if std::env::var("HOOKJOURNAL_DRAINER").is_ok_and(|v| v == "inline" || v == "off") {
        return;
    }
    let behind = p.agent_id.is_none()
        && match p.host {
            Host::Copilot => matches!(p.canonical, Canonical::SessionEnd { .. }),
            Host::Qwen => matches!(p.canonical, Canonical::Stop { .. }),
            _ => false,
        };
    let Some(session) = p.session_id.as_deref().filter(|_| behind) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    use std::os::unix::process::CommandExt;
    let _ = Command::new(exe)
        .arg("--journal")
        .arg(dir)
        .arg("follow-session")
        .arg("--session")
        .arg(session)
        .arg("--cause")
        .arg(cause.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
}

/// The hook process's environment as host detection reads it (`projections::host::CallerEnv`):
/// which of the few variables it names are set. A handful of lookups, on every hook.
pub fn caller_env() -> projections::host::CallerEnv {
    projections::host::CallerEnv::read(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// What `git rev-parse --abbrev-ref HEAD` says: read from the repository's `HEAD` file when it
/// is a plain one (microseconds, where starting git costs milliseconds on every Stop), else by
/// running git directly (no shell), killed after `timeout`.
pub fn git_branch(cwd: Option<&str>, timeout: Duration) -> GitObserved {
    if let Some(dir) = cwd {
        if !Path::new(dir).is_dir() {
            return GitObserved {
                branch: None,
                error: Some("the session's cwd does not exist here".into()),
            };
        }
    }
    let start = match cwd {
        Some(d) => PathBuf::from(d),
        None => std::env::current_dir().unwrap_or_default(),
    };
    match head_file(&start) {
        Head::Branch(branch) => GitObserved {
            branch: Some(branch),
            error: None,
        },
        // A FIFO or a device where `HEAD` should be: git would hang on it too.
        Head::Refused(why) => GitObserved {
            branch: None,
            error: Some(why),
        },
        Head::AskGit => run_git_branch(cwd, timeout),
    }
}

/// What the repository's files say of its branch.
enum Head {
    Branch(String),
    /// Git must be asked (see `branch_from_head_file`).
    AskGit,
    /// `.git` or `HEAD` is not a regular file of a sane size (an unpacked archive can hold a FIFO
    /// or a link to `/dev/zero` there): nothing is read, and git is not asked either.
    Refused(String),
}

/// How much `.git` (a `gitdir:` line) or `HEAD` may hold: a few lines at most.
const HEAD_CAP: u64 = 4096;

/// The branch named by the `HEAD` of the repository holding `dir` (`HEAD` when detached, as
/// `rev-parse --abbrev-ref` says), read from the files. `None` when git must be asked: no
/// `.git` found, `GIT_DIR` set, a reftable repository (its `HEAD` file names
/// `refs/heads/.invalid`), or anything unexpected.
#[cfg(test)]
fn branch_from_head_file(dir: &Path) -> Option<String> {
    match head_file(dir) {
        Head::Branch(b) => Some(b),
        _ => None,
    }
}

/// See `branch_from_head_file`. The files are read bounded and without blocking
/// (`journal::door::read_on_ground`): regular files of at most `HEAD_CAP` bytes, through no link
/// beneath the repository's top.
fn head_file(dir: &Path) -> Head {
    if std::env::var_os("GIT_DIR").is_some() {
        return Head::AskGit;
    }
    let Some(top) = dir.ancestors().find(|d| d.join(".git").exists()) else {
        return Head::AskGit;
    };
    // Beneath the repository's top through no link at any component (a clone commits its
    // `.git` as it likes); a worktree's git directory elsewhere is read as its `.git` file names it.
    let read = |p: &Path| match journal::door::read_on_ground(Some(top), p, HEAD_CAP) {
        Ok(Some(b)) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Ok(None) => Err(Head::AskGit),
        Err(e) if e.kind() == std::io::ErrorKind::Other => Err(Head::Refused(e.to_string())),
        Err(_) => Err(Head::AskGit),
    };
    let dot_git = top.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        // A worktree or submodule: `.git` is a file saying `gitdir: <path>`.
        let text = match read(&dot_git) {
            Ok(t) => t,
            Err(h) => return h,
        };
        let Some(target) = text.strip_prefix("gitdir:") else {
            return Head::AskGit;
        };
        top.join(target.trim())
    };
    let head = match read(&git_dir.join("HEAD")) {
        Ok(t) => t,
        Err(h) => return h,
    };
    let head = head.trim_end_matches(['\n', '\r']);
    if let Some(branch) = head.strip_prefix("ref: refs/heads/") {
        let branch = branch.trim();
        return if !branch.is_empty() && branch != ".invalid" {
            Head::Branch(branch.to_string())
        } else {
            Head::AskGit
        };
    }
    let detached = matches!(head.len(), 40 | 64) && head.bytes().all(|b| b.is_ascii_hexdigit());
    if detached {
        Head::Branch("HEAD".to_string())
    } else {
        Head::AskGit
    }
}

/// `git rev-parse --abbrev-ref HEAD`, run directly (no shell), killed after `timeout`.
fn run_git_branch(cwd: Option<&str>, timeout: Duration) -> GitObserved {
    // Found on absolute `PATH` entries only: an empty entry (the current directory) or a
    // relative one would run the repository's own `git`.
    let Some(git) = journal::door::find_program("git", std::env::var_os("PATH").as_deref()) else {
        return GitObserved {
            branch: None,
            error: Some("git: not found on the absolute entries of PATH".into()),
        };
    };
    let mut cmd = Command::new(git);
    cmd.args(["rev-parse", "--abbrev-ref", "HEAD"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // The session's own directory; when it is gone here, no branch rather than a wrong one.
    // (No cwd in the payload: the hook runs in the project directory, as hosts start it.)
    if let Some(dir) = cwd {
        if !Path::new(dir).is_dir() {
            return GitObserved {
                branch: None,
                error: Some("the session's cwd does not exist here".into()),
            };
        }
        cmd.current_dir(dir);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return GitObserved {
                branch: None,
                error: Some(format!("git: {e}")),
            }
        }
    };
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                if let Some(mut so) = child.stdout.take() {
                    let _ = so.read_to_string(&mut out);
                }
                let branch = out.trim().to_string();
                return if status.success() && !branch.is_empty() {
                    GitObserved {
                        branch: Some(branch),
                        error: None,
                    }
                } else {
                    GitObserved {
                        branch: None,
                        error: Some(format!("git exited with {status}")),
                    }
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return GitObserved {
                    branch: None,
                    error: Some(format!("git timed out after {} ms", timeout.as_millis())),
                };
            }
            Err(e) => {
                return GitObserved {
                    branch: None,
                    error: Some(format!("git: {e}")),
                }
            }
        }
    }
}

/// A derived event: `kind` and `body`, recorded at `now_us` for `host`, `session` and `agent`.
pub fn event(
    now_us: i64,
    host: &str,
    session: Option<&str>,
    agent: Option<&str>,
    kind: Kind,
    body: Vec<u8>,
) -> NewEvent {
    NewEvent {
        recorded_at_us: now_us,
        host: host.to_string(),
        kind: kind.into(),
        session_id: session.map(str::to_string),
        agent_id: agent.map(str::to_string),
        payload: body,
        truncated: None,
        spooled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    /// Given a local backend holding two agents' conversations, when the hook reads the
    /// agent's, then only its conversation's responses count, each once: read again with
    /// nothing new, nothing; a line appended, only it.
    #[test]
    fn letta_reads_the_agents_own_conversations_from_where_it_stopped() {
        let d = tempfile::tempdir().unwrap();
        let convs = d.path().join("conversations");
        let line = |agent: &str, conv: &str, id: &str| {
            format!(
                "{{\"type\":\"message\",\"timestamp\":\"2026-12-01T22:23:19.639Z\",\"message\":{{\"id\":\"m\",\"role\":\"assistant\",\"model\":\"gpt-4.1\",\"responseId\":\"{id}\",\"usage\":{{\"input\":900,\"output\":12,\"cacheRead\":100,\"cacheWrite\":0}},\"metadata\":{{\"agent_id\":\"{agent}\",\"conversation_id\":\"{conv}\"}}}}}}\n"
            )
        };
        for (dir, agent, conv) in [
            ("c1", "agent-a", "local-conv-1"),
            ("c2", "agent-b", "local-conv-2"),
        ] {
            let c = convs.join(dir);
            std::fs::create_dir_all(&c).unwrap();
            std::fs::write(
                c.join("conversation.json"),
                format!("{{\"id\":\"{conv}\",\"agent_id\":\"{agent}\"}}"),
            )
            .unwrap();
            std::fs::write(
                c.join("messages.jsonl"),
                line(agent, conv, &format!("r-{dir}")),
            )
            .unwrap();
        }
        let path = convs.join("agent-a");
        let path = path.to_str().unwrap();
        let later = || Instant::now() + Duration::from_secs(5);
        let read = |s: Option<&SessionState>| {
            session_file_events(
                SessionFileFormat::LettaMessages,
                s,
                path,
                None,
                None,
                1 << 20,
                later(),
            )
        };
        let usage = |obs: &[Observation]| -> Vec<String> {
            obs.iter()
                .filter_map(|o| o.usage.as_ref())
                .map(|u| u.record.message_id.clone())
                .collect()
        };
        let first = read(None);
        assert_eq!(usage(&first), ["r-c1"]);
        let mut s = SessionState::default();
        let file = convs
            .join("c1/messages.jsonl")
            .to_str()
            .unwrap()
            .to_string();
        let len = std::fs::metadata(&file).unwrap().len();
        s.transcript_offsets.insert(file.clone(), len);
        assert!(usage(&read(Some(&s))).is_empty(), "nothing new");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        std::io::Write::write_all(&mut f, line("agent-a", "local-conv-1", "r-next").as_bytes())
            .unwrap();
        assert_eq!(usage(&read(Some(&s))), ["r-next"]);
        // Another agent's id: its own conversation only.
        let other = convs.join("agent-b");
        let obs = session_file_events(
            SessionFileFormat::LettaMessages,
            None,
            other.to_str().unwrap(),
            None,
            None,
            1 << 20,
            later(),
        );
        assert_eq!(usage(&obs), ["r-c2"]);
    }

    fn asked(dir: &Path) -> Option<String> {
        run_git_branch(dir.to_str(), Duration::from_secs(10)).branch
    }

    #[test]
    fn the_head_file_says_what_git_says_on_a_branch_detached_and_in_a_worktree() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
        git(&repo, &["checkout", "-q", "-b", "feature/x"]);
        let sub = repo.join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(branch_from_head_file(&sub).as_deref(), Some("feature/x"));
        assert_eq!(branch_from_head_file(&sub), asked(&sub));

        git(&repo, &["checkout", "-q", "--detach"]);
        assert_eq!(branch_from_head_file(&repo).as_deref(), Some("HEAD"));
        assert_eq!(branch_from_head_file(&repo), asked(&repo));

        let wt = d.path().join("wt");
        git(
            &repo,
            &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
        );
        assert_eq!(branch_from_head_file(&wt).as_deref(), Some("side"));
        assert_eq!(branch_from_head_file(&wt), asked(&wt));
    }

    #[test]
    fn git_is_asked_when_the_head_file_cannot_say() {
        let d = tempfile::tempdir().unwrap();
        // No repository at all (the temp dir's ancestors hold none).
        assert_eq!(branch_from_head_file(d.path()), None);
        // A reftable repository's HEAD file.
        let git_dir = d.path().join(".git");
        std::fs::create_dir(&git_dir).unwrap();
        std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/.invalid\n").unwrap();
        assert_eq!(branch_from_head_file(d.path()), None);
        // Something unexpected.
        std::fs::write(git_dir.join("HEAD"), "garbage\n").unwrap();
        assert_eq!(branch_from_head_file(d.path()), None);
    }

    #[test]
    fn a_fifo_a_device_or_a_link_at_head_is_refused_without_reading_or_asking_git() {
        let d = tempfile::tempdir().unwrap();
        let git_dir = d.path().join(".git");
        std::fs::create_dir(&git_dir).unwrap();
        std::os::unix::fs::symlink("/dev/zero", git_dir.join("HEAD")).unwrap();
        let started = Instant::now();
        let seen = git_branch(d.path().to_str(), Duration::from_secs(10));
        assert_eq!(seen.branch, None);
        let error = seen.error.unwrap();
        assert!(error.contains("symbolic link"), "{error}");
        // A link to a file elsewhere is not followed either: its text is never read.
        std::fs::remove_file(git_dir.join("HEAD")).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("HEAD"), "ref: refs/heads/theirs\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("HEAD"), git_dir.join("HEAD")).unwrap();
        let seen = git_branch(d.path().to_str(), Duration::from_secs(10));
        assert_eq!(seen.branch, None);
        assert!(seen.error.unwrap().contains("symbolic link"));
        std::fs::remove_file(git_dir.join("HEAD")).unwrap();
        let c = std::ffi::CString::new(git_dir.join("HEAD").into_os_string().into_encoded_bytes())
            .unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let seen = git_branch(d.path().to_str(), Duration::from_secs(10));
        assert!(seen.error.unwrap().contains("a FIFO"));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
