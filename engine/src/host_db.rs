//! Reading a host's SQLite database (Kilo Code's `kilo.db`) from the hook, without ever writing
//! it or holding up the host that has it open: bounded in rows, bytes and time.
//!
//! How it is opened depends on what is beside it (measured with SQLite 3.40 and the bundled
//! one): a database in WAL mode keeps its newest commits in `<db>-wal` until a checkpoint, and
//! `immutable=1` reads the main file alone — a live session's messages are all in the WAL, so an
//! immutable read sees none of them. So:
//!
//! * `-wal` and `-shm` both there (the host has it open, or left it so): read-only
//!   (`SQLITE_OPEN_READ_ONLY`, `mode=ro`), through the `-shm` index as any WAL reader does — it
//!   never writes the database or the WAL (the `-shm`, the shared-memory index every reader of
//!   a WAL database takes its read mark in, is the one file it touches, and rebuilds when no
//!   process has the database open) and never blocks the host's writer (a WAL reader takes no
//!   lock a writer waits on; `busy_timeout` bounds the rare wait on a checkpoint);
//! * else `immutable=1`: no lock at all and no file created (a read-only open of a WAL database
//!   with no `-shm` would create `-wal` and `-shm` beside it), the main file being all there is.
//!
//! The deadline is checked at each row (the query is by the session's id, which Kilo's schema
//! indexes, with a row limit of its own).

use std::time::{Duration, Instant};

/// One row of text columns.
pub type Row = Vec<String>;

/// `path` as an SQLite URI with `query` (`%`, `?` and `#` escaped in the path).
fn uri(path: &str, query: &str) -> String {
    let mut out = String::from("file:");
    for c in path.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

fn is_file(path: &str) -> bool {
    journal::door::status(path).is_ok_and(|m| m.is_file())
}

/// Opens the database at `path` for reading as the module says; `None`: no regular file there,
/// or SQLite refused it.
fn open(path: &str, deadline: Instant) -> Option<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    if path.contains('\0') || !is_file(path) {
        return None;
    }
    let live = is_file(&format!("{path}-wal")) && is_file(&format!("{path}-shm"));
    let query = if live { "mode=ro" } else { "immutable=1" };
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(uri(path, query), flags).ok()?;
    let left = deadline.saturating_duration_since(Instant::now());
    conn.busy_timeout(left.min(Duration::from_millis(100)))
        .ok()?;
    Some(conn)
}

/// The rows `sql` selects with `params` from the database at `path`, each column as text: at
/// most `max_bytes` of text in all (the rows up to there), until `deadline`. `None`: the
/// database could not be opened or read (not there, not a database, busy past the deadline).
pub fn rows(
    path: &str,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
    max_bytes: usize,
    deadline: Instant,
) -> Option<Vec<Row>> {
    let conn = open(path, deadline)?;
    let mut stmt = conn.prepare(sql).ok()?;
    let columns = stmt.column_count();
    let mut found = stmt.query(params).ok()?;
    let (mut out, mut bytes) = (Vec::new(), 0usize);
    while let Ok(Some(r)) = found.next() {
        if Instant::now() >= deadline {
            break;
        }
        let row: Row = (0..columns)
            .map(|i| {
                r.get::<_, Option<String>>(i)
                    .ok()
                    .flatten()
                    .unwrap_or_default()
            })
            .collect();
        bytes += row.iter().map(String::len).sum::<usize>();
        if bytes > max_bytes {
            break;
        }
        out.push(row);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// Given a WAL database whose newest row is only in its WAL, held open by a writer: then the
    /// read sees it, and writes nothing (the files' sizes unchanged); once the writer closed it
    /// (no `-wal` left), the immutable read sees every row and creates no file.
    #[test]
    fn a_live_wal_database_is_read_whole_and_left_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("k.db");
        let path = db.to_str().unwrap();
        let w = rusqlite::Connection::open(&db).unwrap();
        w.pragma_update(None, "journal_mode", "wal").unwrap();
        w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        w.execute_batch("CREATE TABLE m(id TEXT); INSERT INTO m VALUES('a');")
            .unwrap();
        w.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
        w.execute("INSERT INTO m VALUES('b')", []).unwrap();
        let sizes = || {
            ["", "-wal"].map(|s| {
                std::fs::metadata(format!("{path}{s}"))
                    .map(|m| m.len())
                    .ok()
            })
        };
        let before = sizes();
        let got = rows(path, "SELECT id FROM m ORDER BY id", &[], 1 << 20, far()).unwrap();
        assert_eq!(got, [vec!["a".to_string()], vec!["b".to_string()]]);
        assert_eq!(sizes(), before);
        // The immutable read alone would not have seen 'b'.
        let imm = rusqlite::Connection::open_with_flags(
            uri(path, "immutable=1"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        let n: i64 = imm
            .query_row("SELECT count(*) FROM m", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "immutable=1 reads the main file alone");
        drop(imm);
        drop(w);
        assert!(!Path::new(&format!("{path}-wal")).exists());
        let got = rows(path, "SELECT id FROM m ORDER BY id", &[], 1 << 20, far()).unwrap();
        assert_eq!(got.len(), 2);
        assert!(!Path::new(&format!("{path}-wal")).exists(), "no file made");
        assert!(!Path::new(&format!("{path}-shm")).exists(), "no file made");
    }

    /// Given rows past the byte bound, then the rows up to it; a path that is no file, or no
    /// database, reads nothing; a path with `?` and `#` in it is read as that path.
    #[test]
    fn reads_are_bounded_and_paths_taken_as_they_are() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("a?b#c%d.db");
        let w = rusqlite::Connection::open(&db).unwrap();
        w.execute_batch("CREATE TABLE m(id TEXT); INSERT INTO m VALUES('aaaa'),('bbbb'),('cccc');")
            .unwrap();
        drop(w);
        let path = db.to_str().unwrap();
        let got = rows(path, "SELECT id FROM m ORDER BY id", &[], 9, far()).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(rows("/nonexistent/k.db", "SELECT 1", &[], 9, far()), None);
        let junk = tmp.path().join("junk.db");
        std::fs::write(&junk, b"not a database at all, not even close").unwrap();
        assert_eq!(
            rows(junk.to_str().unwrap(), "SELECT 1", &[], 9, far()),
            None
        );
        assert_eq!(
            rows(tmp.path().to_str().unwrap(), "SELECT 1", &[], 9, far()),
            None
        );
    }
}
