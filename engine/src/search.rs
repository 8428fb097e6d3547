//! `search`'s index: a full-text index (SQLite FTS5, compiled in) of the texts every event gives
//! (`projections::search::documents`), kept in the journal's `search/index.sqlite`.
//!
//! It is derived, never a second truth: it records the seq and hash of the last event it holds,
//! and every search first adds the events after it (the spool ingested first, as every read).
//! When that event's hash is no longer the log's (a journal restored or replaced), or the file
//! is damaged or of another version, it is rebuilt from the log. `search --rebuild` rebuilds it
//! at will. A journal this user cannot write (another user's), or one that came with a clone
//! and was not adopted (`hookjournal trust`), is indexed in memory for the one search. The file is opened beneath the journal's directory handle checks and with SQLite's
//! `NOFOLLOW`: a link planted at it is refused, not followed.

use crate::state;
use anyhow::{Context, Result};
use journal::door;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::Path;

/// The index's directory inside a journal's.
pub const DIR: &str = "search";
const FILE: &str = "index.sqlite";
/// Bumped when what is indexed changes: an index of another version is rebuilt.
const VERSION: i64 = 1;

/// One match.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Hit {
    /// The event's seq.
    pub seq: u64,
    /// When it was recorded, µs since the epoch.
    pub recorded_at_us: i64,
    /// Its session.
    pub session: Option<String>,
    /// Its host.
    pub host: String,
    /// Its kind's label (`Hook:UserPromptSubmit`, `TaskCommand`).
    pub kind: String,
    /// The field the text was under (`prompt`, `command`, `file_path`, …).
    pub field: String,
    /// The text around the match, the matched words between `«` and `»`.
    pub snippet: String,
    /// BM25 relevance (higher is better).
    pub score: f64,
}

/// What a search did besides finding.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Indexed {
    /// Events the index holds after this search.
    pub events: u64,
    /// Events added to it by this search.
    pub added: u64,
    /// Whether it was rebuilt from the log (new, damaged, another version, another history).
    pub rebuilt: bool,
    /// Whether it lives only in memory for this search (a journal this user cannot write).
    pub in_memory: bool,
}

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct Query<'a> {
    /// The words (all required; a trailing `*` is a prefix).
    pub text: &'a str,
    /// Only this session's events.
    pub session: Option<&'a str>,
    /// At most this many, best first.
    pub limit: usize,
    /// Throw the index away and build it again first.
    pub rebuild: bool,
}

/// Searches the journal in `dir`: the index brought up to the log's head first.
pub fn search(dir: &Path, q: &Query<'_>) -> Result<(Vec<Hit>, Indexed)> {
    let Some(fts) = projections::search::fts_query(q.text) else {
        anyhow::bail!("nothing to search for: give one or more words");
    };
    let view = state::open_log(dir, false)?;
    let (conn, in_memory) = open(dir)?;
    match find(&conn, &view.snap, q, &fts, q.rebuild) {
        Err(_) if !in_memory => {
            // A damaged index (a crash mid-write, a disk error) is derived: build it again.
            drop(conn);
            let _ = door::Dir::open_nofollow(&dir.join(DIR))
                .and_then(|d| d.remove_file(Path::new(FILE)));
            let (conn, in_memory) = open(dir)?;
            let (hits, mut indexed) = find(&conn, &view.snap, q, &fts, true)?;
            indexed.in_memory = in_memory;
            Ok((hits, indexed))
        }
        found => found.map(|(hits, mut indexed)| {
            indexed.in_memory = in_memory;
            (hits, indexed)
        }),
    }
}

fn find(
    conn: &Connection,
    snap: &journal::ReadSnapshot,
    q: &Query<'_>,
    fts: &str,
    rebuild: bool,
) -> Result<(Vec<Hit>, Indexed)> {
    let indexed = catch_up(conn, snap, rebuild)?;
    let mut stmt = conn.prepare(
        "SELECT seq, at_us, session, host, kind, field,
                snippet(docs, 0, '«', '»', '…', 16), bm25(docs)
         FROM docs WHERE docs MATCH ?1 AND (?2 IS NULL OR session = ?2)
         ORDER BY bm25(docs), seq DESC LIMIT ?3",
    )?;
    let fetch = q.limit.saturating_mul(4).max(q.limit) as i64;
    let rows = stmt.query_map(params![fts, q.session, fetch], |r| {
        Ok(Hit {
            seq: r.get::<_, i64>(0)? as u64,
            recorded_at_us: r.get(1)?,
            session: r.get(2)?,
            host: r.get(3)?,
            kind: r.get(4)?,
            field: r.get(5)?,
            snippet: r.get(6)?,
            // SQLite's bm25 is lower-is-better; shown the other way round.
            score: -r.get::<_, f64>(7)?,
        })
    })?;
    // A PostToolUse repeats its PreToolUse's input: the same text of a session is shown once,
    // at its best-ranked (then latest) event.
    let mut seen = std::collections::HashSet::new();
    let mut hits = Vec::with_capacity(q.limit);
    for hit in rows {
        let hit = hit?;
        if seen.insert((hit.session.clone(), hit.field.clone(), hit.snippet.clone())) {
            hits.push(hit);
            if hits.len() == q.limit {
                break;
            }
        }
    }
    Ok((hits, indexed))
}

/// The index file, or one in memory when the journal is not this user's to write.
fn open(dir: &Path) -> Result<(Connection, bool)> {
    let on_disk = || -> Result<Connection> {
        let journal =
            door::Dir::open_nofollow(dir).with_context(|| format!("opening {}", dir.display()))?;
        journal.create_dir_all(Path::new(DIR), 0o700)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(dir.join(DIR).join(FILE), flags)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // The index is derived: a crash mid-write at worst damages it, and then it is rebuilt.
        conn.pragma_update(None, "journal_mode", "MEMORY")?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        Ok(conn)
    };
    // A journal of another user's, or one that came with a clone (not adopted by `trust`), gets
    // no file of ours.
    let owned = journal::files::owner(dir) == Some(journal::files::euid())
        && matches!(journal::origin::status(dir), journal::origin::Origin::Ours);
    if owned {
        if let Ok(conn) = on_disk() {
            return Ok((conn, false));
        }
        // Not a database (damaged, or planted): the name is removed (a link as a link) and the
        // index made anew.
        let removed = door::Dir::open_nofollow(&dir.join(DIR))
            .and_then(|d| d.remove_file(Path::new(FILE)))
            .is_ok();
        if removed {
            if let Ok(conn) = on_disk() {
                return Ok((conn, false));
            }
        }
    }
    Ok((Connection::open_in_memory()?, true))
}

fn create(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS meta;
         CREATE VIRTUAL TABLE docs USING fts5(
             text, seq UNINDEXED, at_us UNINDEXED, session UNINDEXED, host UNINDEXED,
             kind UNINDEXED, field UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
         CREATE TABLE meta(key TEXT PRIMARY KEY, value);",
    )?;
    conn.execute(
        "INSERT INTO meta VALUES ('version', ?1), ('seq', 0), ('hash', ''), ('events', 0)",
        params![VERSION],
    )?;
    Ok(())
}

fn meta<T: rusqlite::types::FromSql>(conn: &Connection, key: &str) -> Option<T> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .ok()
        .flatten()
}

/// Whether the index at `seq`/`hash` is a prefix of the log in `snap`.
fn still_the_log(snap: &journal::ReadSnapshot, seq: u64, hash: &str) -> Result<bool> {
    if seq == 0 {
        return Ok(true);
    }
    if seq > snap.head_seq {
        return Ok(false);
    }
    if seq == snap.head_seq {
        // Nothing new since the last search: the head is at hand, no segment is read.
        return Ok(journal::hex(&snap.head_hash) == hash);
    }
    let mut found = None;
    snap.for_each_in(seq, seq, |e| {
        found = Some(journal::hex(&e.hash));
        Ok(())
    })?;
    Ok(found.as_deref() == Some(hash))
}

/// Adds the log's events after the index's last one (all of them when it is new, of another
/// version or another history, or damaged).
fn catch_up(conn: &Connection, snap: &journal::ReadSnapshot, rebuild: bool) -> Result<Indexed> {
    let version: Option<i64> = meta(conn, "version");
    let (seq, hash): (u64, String) = (
        meta::<i64>(conn, "seq").unwrap_or(0) as u64,
        meta(conn, "hash").unwrap_or_default(),
    );
    let fresh = rebuild || version != Some(VERSION) || !still_the_log(snap, seq, &hash)?;
    let from = if fresh {
        create(conn)?;
        1
    } else {
        seq + 1
    };
    let mut added = 0u64;
    if from <= snap.head_seq {
        let tx = conn.unchecked_transaction()?;
        {
            let mut ins = tx.prepare(
                "INSERT INTO docs (text, seq, at_us, session, host, kind, field)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut failed = None;
            snap.for_each_in(from, snap.head_seq, |e| {
                let kind = projections::kind::Kind::of(&e).label();
                for d in projections::search::documents(&e) {
                    if let Err(err) = ins.execute(params![
                        d.text,
                        e.seq as i64,
                        e.recorded_at_us,
                        e.session_id,
                        e.host,
                        kind,
                        d.field
                    ]) {
                        failed.get_or_insert(err);
                    }
                }
                added += 1;
                Ok(())
            })?;
            if let Some(err) = failed {
                return Err(err).context("adding events to the search index");
            }
        }
        let head = journal::hex(&snap.head_hash);
        tx.execute(
            "UPDATE meta SET value = CASE key WHEN 'seq' THEN ?1 WHEN 'hash' THEN ?2
                 WHEN 'events' THEN value + ?3 ELSE value END",
            params![snap.head_seq as i64, head, added as i64],
        )?;
        tx.commit()?;
    }
    Ok(Indexed {
        events: meta::<i64>(conn, "events").unwrap_or(0) as u64,
        added,
        rebuilt: fresh,
        in_memory: false,
    })
}
