//! Live mirrors of the session log and the notification log: JSONL files that tools written for
//! hand-made hook scripts can keep tailing. Each line has the fields of the matching `export`
//! report. They are appended by whichever process committed the events, after its answer is out,
//! so they never sit on a hook's critical path; being copies, they are not fsynced, and
//! `export --report session-log|notifications` rebuilds them whole from the journal.

use crate::settings::MirrorSettings;
use journal::Envelope;
use projections::derived::{self, SessionMetrics};
use projections::fold::NotificationEntry;
use projections::{Kind, KindOf};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One line of the session log (a Stop or SessionEnd's metrics), as `export --report session-log`.
pub fn session_log_row(e: &Envelope) -> Option<Value> {
    if !matches!(e.kind(), Kind::SessionMetrics { .. }) {
        return None;
    }
    let m: SessionMetrics = derived::parse(&e.payload)?;
    let u = &m.usage;
    Some(json!({
        "timestamp": projections::text::timestamp(e.recorded_at_us), "session_id": e.session_id, "event": m.at,
        "cost_usd": m.payload.cost_usd.or(m.usd), "duration_ms": m.duration_ms,
        "tokens_in": m.payload.tokens_in.unwrap_or(u.input_tokens + u.cache_write() + u.cache_read),
        "tokens_out": m.payload.tokens_out.unwrap_or(u.output_tokens),
        "model": m.payload.model.clone().or(m.model.clone()), "branch": m.branch, "seq": e.seq,
    }))
}

/// One line of the notification log, as `export --report notifications`.
pub fn notification_row(n: &NotificationEntry) -> Value {
    json!({
        "timestamp": projections::text::timestamp(n.at_us), "session_id": n.session, "type": n.kind,
        "title": n.title, "message": n.message, "seq": n.seq,
    })
}

/// A mirror opened to append: a relative path beneath the project (the journal directory's
/// parent), an absolute one beneath the directory it names, through the door (`journal::door`):
/// no link followed at any component beneath that directory, only a regular file with one link
/// that the user owns (a repository can commit `.session-log.jsonl -> ~/.bashrc`, and the
/// mirror's lines hold recorded text).
fn open(dir: &Path, p: &Path) -> std::io::Result<std::fs::File> {
    let (base, rel) = if p.is_absolute() {
        let name = p
            .file_name()
            .ok_or_else(|| std::io::Error::other("names no file"))?;
        (
            p.parent().unwrap_or(Path::new("/")).to_path_buf(),
            PathBuf::from(name),
        )
    } else {
        let project = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        (project, p.to_path_buf())
    };
    journal::door::Dir::open(&base)?.append(&rel, 0o666)
}

fn append(dir: &Path, p: &Path, lines: &[Value]) -> std::io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut buf = Vec::new();
    for v in lines {
        // As `export` writes the same rows: unsafe characters escaped, the same values.
        let line = projections::text::json_safe(v.to_string());
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
    }
    let mut f = open(dir, p)?;
    // One write of whole lines: O_APPEND keeps concurrent writers' lines apart.
    f.write_all(&buf)
}

/// Appends the rows of `committed` events to the configured mirrors. Errors are one line each on
/// stderr: a mirror is a convenience, and never fails the command that committed the events.
pub fn write(dir: &Path, settings: &MirrorSettings, committed: &[Envelope]) {
    if let Some(p) = &settings.session_log {
        let rows: Vec<Value> = committed.iter().filter_map(session_log_row).collect();
        if let Err(e) = append(dir, p, &rows) {
            eprintln!("hookjournal: mirror {}: {e}", p.display());
        }
    }
    if let Some(p) = &settings.notification_log {
        let rows: Vec<Value> = committed
            .iter()
            .filter_map(NotificationEntry::from_event)
            .map(|n| notification_row(&n))
            .collect();
        if let Err(e) = append(dir, p, &rows) {
            eprintln!("hookjournal: mirror {}: {e}", p.display());
        }
    }
}
