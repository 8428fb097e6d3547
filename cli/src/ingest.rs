//! Reading the outside world at ingestion, so projections never have to: transcript usage (read
//! incrementally from the offset the journal recorded), and the git branch.

use journal::{Kind, NewEvent, Seq};
use projections::derived::{self, ContextObserved, GitObserved, UsageObserved};
use projections::session::SessionState;
use projections::transcript;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
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
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let len = meta.len();
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
    let offset = session
        .and_then(|s| s.transcript_offsets.get(path))
        .copied()
        .unwrap_or(0);
    let (bytes, start) = read_new(Path::new(path), offset, max, deadline)?;
    (!bytes.is_empty()).then_some(New {
        bytes,
        start,
        offset,
    })
}

pub struct Observation {
    pub kind: fn(Seq) -> Kind,
    pub body: Vec<u8>,
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
    let Some(New {
        bytes,
        start,
        offset,
    }) = read_since(session, path, max, deadline)
    else {
        return Vec::new();
    };
    let scan = transcript::scan(&bytes);
    let end = start + scan.consumed as u64;
    let mut out = Vec::new();
    for record in scan.records {
        let key = format!("{}:{}", record.message_id, record.request_id);
        // A fork's copy of its parent's response, already left to the parent.
        if session.is_some_and(|s| s.usage_copied.contains(&key)) {
            continue;
        }
        let known = session.and_then(|s| s.usage_by_key.get(&key));
        if let Some((_, old)) = known {
            if !transcript::larger(&record.usage, old) {
                continue;
            }
        }
        out.push(Observation {
            kind: |cause| Kind::UsageObserved { cause },
            body: derived::body(&UsageObserved {
                path: path.to_string(),
                offset: end,
                agent_id: agent_id.map(str::to_string),
                record,
            }),
        });
    }
    if end != offset || agent_id.is_none() && scan.context.is_some() {
        let ctx = if agent_id.is_none() {
            scan.context
        } else {
            None
        };
        out.push(Observation {
            kind: |cause| Kind::ContextObserved { cause },
            body: derived::body(&ContextObserved {
                path: path.to_string(),
                offset: end,
                tokens: ctx.as_ref().map(|c| c.tokens),
                model: ctx.map(|c| c.model),
                compressions: Vec::new(),
            }),
        });
    }
    out
}

/// New usage and context from Codex CLI's rollout file (`codex_rollout`), read from the offset
/// the journal recorded; a request counted already is left out. `model`: the session's, for a
/// chunk that starts after the rollout's turn context.
pub fn codex_rollout_events(
    session: Option<&SessionState>,
    path: &str,
    model: Option<&str>,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    let Some(New {
        bytes,
        start,
        offset,
    }) = read_since(session, path, max, deadline)
    else {
        return Vec::new();
    };
    let scan = projections::codex_rollout::scan(&bytes, model);
    let end = start + scan.consumed as u64;
    let mut out = Vec::new();
    for record in scan.records {
        let key = format!("{}:{}", record.message_id, record.request_id);
        if session.is_some_and(|s| s.usage_by_key.contains_key(&key)) {
            continue;
        }
        out.push(Observation {
            kind: |cause| Kind::UsageObserved { cause },
            body: derived::body(&UsageObserved {
                path: path.to_string(),
                offset: end,
                agent_id: None,
                record,
            }),
        });
    }
    if end != offset {
        out.push(Observation {
            kind: |cause| Kind::ContextObserved { cause },
            body: derived::body(&ContextObserved {
                path: path.to_string(),
                offset: end,
                tokens: scan.context.as_ref().map(|c| c.tokens),
                model: scan.context.map(|c| c.model).or(scan.model),
                compressions: Vec::new(),
            }),
        });
    }
    out
}

/// New usage, context and compressions from Gemini CLI's session file (`gemini_chat`), read from
/// the offset the journal recorded, deduplicated against the session's state: a response counted
/// already (largest usage wins) and a compression counted already are left out.
pub fn gemini_chat_events(
    session: Option<&SessionState>,
    path: &str,
    max: usize,
    deadline: Instant,
) -> Vec<Observation> {
    let Some(New {
        bytes,
        start,
        offset,
    }) = read_since(session, path, max, deadline)
    else {
        return Vec::new();
    };
    let scan = projections::gemini_chat::scan(&bytes);
    let end = start + scan.consumed as u64;
    let mut out = Vec::new();
    for record in scan.records {
        let key = format!("{}:{}", record.message_id, record.request_id);
        if let Some((_, old)) = session.and_then(|s| s.usage_by_key.get(&key)) {
            if !transcript::larger(&record.usage, old) {
                continue;
            }
        }
        out.push(Observation {
            kind: |cause| Kind::UsageObserved { cause },
            body: derived::body(&UsageObserved {
                path: path.to_string(),
                offset: end,
                agent_id: None,
                record,
            }),
        });
    }
    let compressions: Vec<String> = scan
        .compressions
        .into_iter()
        .filter(|id| session.is_none_or(|s| !s.compressions_seen.contains(id)))
        .collect();
    if end != offset || !compressions.is_empty() {
        out.push(Observation {
            kind: |cause| Kind::ContextObserved { cause },
            body: derived::body(&ContextObserved {
                path: path.to_string(),
                offset: end,
                tokens: scan.context.as_ref().map(|c| c.tokens),
                model: scan.context.map(|c| c.model),
                compressions,
            }),
        });
    }
    out
}

/// `git rev-parse --abbrev-ref HEAD`, run directly (no shell), killed after `timeout`.
pub fn git_branch(cwd: Option<&str>, timeout: Duration) -> GitObserved {
    let mut cmd = Command::new("git");
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
        kind,
        session_id: session.map(str::to_string),
        agent_id: agent.map(str::to_string),
        payload: body,
        truncated: None,
        spooled: false,
    }
}
