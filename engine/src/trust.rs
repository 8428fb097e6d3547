//! Who may configure what. The user's own configuration lives in their config directory
//! (`$XDG_CONFIG_HOME/hookjournal/`, else `~/.config/hookjournal/`); a project's
//! `.hookjournal/config.toml` came with the repository, so the settings that run programs, stop
//! agents or send data outside the journal (`GUARDED` in `settings.rs`) are honoured from it only
//! once the user has trusted that exact file with `hookjournal trust`, as direnv's `allow` does.
//!
//! The trust store is one empty-of-secrets file per trusted (path, content) pair,
//! `trusted/<blake3>`, holding the path: checking trust is one `stat`, and a changed file hashes
//! to a name that is not there.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The user's hookjournal directory: `$XDG_CONFIG_HOME/hookjournal` (when absolute), else
/// `$HOME/.config/hookjournal`; `None` without either.
pub fn user_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(&h).join(".config"))
    })?;
    Some(base.join("hookjournal"))
}

/// The user's own configuration file (it need not exist).
pub fn user_config() -> Option<PathBuf> {
    user_dir().map(|d| d.join("config.toml"))
}

fn store_dir() -> Option<PathBuf> {
    user_dir().map(|d| d.join("trusted"))
}

/// The record's name: the hash of the file's absolute path and its whole content.
fn record_name(path: &Path, content: &[u8]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut h = blake3::Hasher::new();
    h.update(b"hookjournal trust v1\0");
    h.update(path.as_os_str().as_bytes());
    h.update(b"\0");
    h.update(content);
    h.finalize().to_hex().to_string()
}

/// Why a file cannot be trusted whatever the store says: it must be the running user's and
/// writable by them alone (anyone else who can write it could change what runs).
pub fn unfit(meta: &std::fs::Metadata) -> Option<String> {
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Some(format!(
            "is owned by uid {}, not by you (uid {me})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "is writable by others (mode {:04o}; `chmod go-w` it)",
            meta.mode() & 0o7777
        ));
    }
    None
}

/// The absolute path a config is trusted under: its directory resolved, the file name kept (the
/// file itself is never a link: it is read with `O_NOFOLLOW`).
pub fn trust_path(file: &Path) -> std::io::Result<PathBuf> {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file.file_name().unwrap_or_default();
    Ok(journal::door::by_path::canonical(dir)?.join(name))
}

/// Whether the user trusted exactly this content at this path (and it is theirs alone).
pub fn is_trusted(file: &Path, content: &[u8], meta: &std::fs::Metadata) -> bool {
    if unfit(meta).is_some() {
        return false;
    }
    let (Some(store), Ok(path)) = (store_dir(), trust_path(file)) else {
        return false;
    };
    store.join(record_name(&path, content)).is_file()
}

/// Records trust in `content` at `file` (replacing any earlier record of the same path).
/// Returns the record's name.
pub fn trust(file: &Path, content: &[u8]) -> anyhow::Result<String> {
    let store = store_dir().ok_or_else(|| {
        anyhow::anyhow!("no place for the trust store: set $HOME or $XDG_CONFIG_HOME")
    })?;
    let path = trust_path(file)?;
    revoke_path(&store, &path)?;
    journal::door::create_dirs(&store, 0o700)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", store.display()))?;
    let name = record_name(&path, content);
    let record = {
        use std::os::unix::ffi::OsStrExt;
        [path.as_os_str().as_bytes(), b"\n"].concat()
    };
    journal::write_atomic(&store, &name, &record, journal::Durability::Durable)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", store.display()))?;
    Ok(name)
}

/// Forgets every trust recorded for `file` (whatever its content was). Returns how many.
pub fn revoke(file: &Path) -> anyhow::Result<usize> {
    let Some(store) = store_dir() else {
        return Ok(0);
    };
    revoke_path(&store, &trust_path(file)?)
}

fn revoke_path(store: &Path, path: &Path) -> anyhow::Result<usize> {
    use std::os::unix::ffi::OsStrExt;
    let listed = journal::door::Dir::open(store).and_then(|d| Ok((d.entries()?, d)));
    let (entries, d) = match listed {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => anyhow::bail!("reading {}: {e}", store.display()),
    };
    let mut want = path.as_os_str().as_bytes().to_vec();
    want.push(b'\n');
    let mut n = 0;
    for (name, _) in entries {
        // A record is a small regular file named by its 64-digit hash, read through no link.
        let name = Path::new(&name);
        let named = name.as_os_str().len() == 64
            && d.read_if_present(name, 1 << 16)
                .is_ok_and(|body| body.as_deref() == Some(&want[..]));
        if named {
            d.remove_file(name)
                .map_err(|e| anyhow::anyhow!("removing {}: {e}", store.join(name).display()))?;
            n += 1;
        }
    }
    Ok(n)
}

/// A foreign journal (it came with the repository, or from another machine or directory) takes
/// no event from a command, as from a hook, until `hookjournal trust` adopts it: a task added to
/// a stranger's journal would be injected into whoever adopts it next.
pub fn refuse_foreign(dir: &std::path::Path) -> anyhow::Result<()> {
    if let journal::origin::Origin::Foreign(why) = journal::origin::status(dir) {
        anyhow::bail!(
            "{} is foreign ({why}): nothing is written into it until `hookjournal trust` adopts it",
            dir.display()
        );
    }
    Ok(())
}
