//! Shipping the journal beyond one machine: to a team store on PostgreSQL (`pg`), as OTLP log
//! records (`otlp`) and as OTLP traces in the GenAI conventions (`traces`), each exactly once from
//! the journal's side thanks to a durable cursor; and the team views that read the store back
//! (`team`). Never on the hook path: only `ship` and
//! `--source` reach here.

pub mod otlp;
pub mod pg;
pub mod team;
pub mod traces;

use anyhow::{Context, Result};
use engine::log::Envelope;
use std::io::Write;
use std::path::Path;

/// The journal's stable identity in shared stores: `DIR/journal-id`, created once, atomically.
pub const JOURNAL_ID_FILE: &str = "journal-id";

/// This journal's id, creating the file (random, 0600, never replaced) on first use. Two
/// shippers starting at once agree: the file is linked into place only if absent.
pub fn journal_id(dir: &Path) -> Result<String> {
    let path = dir.join(JOURNAL_ID_FILE);
    if let Some(id) = read_id(&path)? {
        return Ok(id);
    }
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` is valid for its length; getrandom writes at most that much.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        return Err(std::io::Error::last_os_error())
            .context("getting random bytes for a journal id");
    }
    // A version-4 UUID: what databases and log backends expect an id to look like.
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let id = format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    );
    let mut tmp = tempfile::Builder::new()
        .prefix(".journal-id.")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temp file in {}", dir.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        let f = tmp.as_file_mut();
        f.set_permissions(std::fs::Permissions::from_mode(engine::fs::FILE_MODE))?;
        writeln!(f, "{id}")?;
        f.sync_all()?;
    }
    match tmp.persist_noclobber(&path) {
        Ok(_) => Ok(id),
        // Another shipper won the race: its id is the journal's.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            read_id(&path)?.with_context(|| format!("{} is empty", path.display()))
        }
        Err(e) => Err(e.error).with_context(|| format!("writing {}", path.display())),
    }
}

fn read_id(path: &Path) -> Result<Option<String>> {
    match engine::fs::files::read_small(path, 4096)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
    {
        Ok(s) => {
            let id = s.trim();
            let ok = !id.is_empty()
                && id.len() <= 64
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                anyhow::bail!(
                    "{} does not hold a journal id (letters, digits, - and _)",
                    path.display()
                );
            }
            Ok(Some(id.to_string()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The host name (the default machine name).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // truncates, and we stop at the first NUL either way.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        if !name.is_empty() {
            return name;
        }
    }
    "unknown".into()
}

/// A connection string or URL fit for messages: the password (URL userinfo, `password=`
/// keyword, `password` query parameter) becomes `***`.
pub fn mask_url(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let rest = &out[rest_start..];
        let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..auth_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                out.replace_range(rest_start + colon + 1..rest_start + at, "***");
            }
        }
    }
    // `password=…` as a query parameter or a key/value connection-string keyword.
    let lower = out.to_ascii_lowercase();
    let mut masked = String::with_capacity(out.len());
    let mut i = 0;
    while let Some(pos) = lower[i..].find("password=") {
        let start = i + pos + "password=".len();
        masked.push_str(&out[i..start]);
        masked.push_str("***");
        let tail = &out[start..];
        let end = if let Some(quoted) = tail.strip_prefix('\'') {
            quoted.find('\'').map(|e| e + 2).unwrap_or(tail.len())
        } else {
            tail.find(['&', ' ', '#']).unwrap_or(tail.len())
        };
        i = start + end;
    }
    masked.push_str(&out[i..]);
    masked
}

/// What is shipped of an event's payload, redacted when asked: the bytes and how many secrets
/// were masked.
pub fn shipped_payload(e: &Envelope, redact: bool) -> (Vec<u8>, usize) {
    if !redact {
        return (e.payload.clone(), 0);
    }
    let text = String::from_utf8_lossy(&e.payload);
    let (masked, n) = projections::redact::redact(&text);
    if n == 0 {
        (e.payload.clone(), 0)
    } else {
        (masked.into_owned().into_bytes(), n)
    }
}

/// Masks secrets in every string of a JSON value; returns how many.
pub fn redact_json(v: &mut serde_json::Value) -> usize {
    let mut n = 0;
    projections::redact::redact_json(v, &mut n);
    n
}

/// `--follow`'s pause between rounds; a round that finds nothing new costs one short lock.
/// Streams the events `from..=to` of a snapshot through `f`; the first error `f` returns stops
/// the stream and is returned as it is (not as a journal read error).
pub fn stream(
    snap: &engine::log::ReadSnapshot,
    from: engine::log::Seq,
    to: engine::log::Seq,
    mut f: impl FnMut(Envelope) -> Result<()>,
) -> Result<()> {
    let mut failed = None;
    let r = snap.for_each_in(from, to, |e| {
        f(e).map_err(|err| {
            failed = Some(err);
            engine::Error::Stopped
        })
    });
    if let Some(err) = failed {
        return Err(err);
    }
    r.context("reading the journal")
}

pub fn pause(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms.max(10)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_passwords_in_urls_and_keywords() {
        assert_eq!(
            mask_url("postgres://alice:s3cr%40t@db.example:5432/team?sslmode=disable"),
            "postgres://alice:***@db.example:5432/team?sslmode=disable"
        );
        assert_eq!(
            mask_url("postgres://alice@db/team"),
            "postgres://alice@db/team"
        );
        assert_eq!(
            mask_url("postgres://db/team?user=a&password=hunter2&x=1"),
            "postgres://db/team?user=a&password=***&x=1"
        );
        assert_eq!(
            mask_url("host=db password='a b' user=x"),
            "host=db password=*** user=x"
        );
        assert_eq!(
            mask_url("http://u:p@collector:4318"),
            "http://u:***@collector:4318"
        );
    }

    #[test]
    fn journal_id_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let a = journal_id(dir.path()).unwrap();
        let b = journal_id(dir.path()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 36);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(JOURNAL_ID_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
