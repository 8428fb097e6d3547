//! Where a `--out FILE`-like flag writes (`export --out`, `report --html`). A regular file, or a
//! new one, is written to a temporary file beside it and renamed over it once complete, so a
//! reader never sees half a report. Anything else is never renamed over: a FIFO or a character
//! device (`/dev/null`, a terminal, `/dev/stdout`) is written through, and a directory, a block
//! device, a socket or a symbolic link to anything else is refused in one line. Renaming over
//! `/dev/null` as root replaced the system's null device with a regular file.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// An output being written.
pub struct OutFile {
    file: std::fs::File,
    path: PathBuf,
    /// The temporary file renamed over `path` at `commit`, and whether `path` existed.
    tmp: Option<(tempfile::TempPath, bool)>,
}

fn kind(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

impl OutFile {
    /// Opens `path` for a whole new content (see the module's rules).
    pub fn create(path: &Path) -> Result<OutFile> {
        let shown = || crate::output::escape(&path.display().to_string());
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => bail!("{}: {e}", shown()),
        };
        let through = |ft: std::fs::FileType| ft.is_fifo() || ft.is_char_device();
        match meta.as_ref().map(|m| m.file_type()) {
            None => Self::beside(path, false),
            Some(ft) if ft.is_file() => Self::beside(path, true),
            Some(ft) if through(ft) => Self::through(path),
            Some(ft) if ft.is_symlink() => {
                // A link to a FIFO or a terminal (`/dev/stdout`) is written through; a link to
                // a file is refused rather than replaced (or followed to wherever it points).
                let target = std::fs::read_link(path)
                    .map(|t| crate::output::escape(&t.display().to_string()))
                    .unwrap_or_default();
                match std::fs::metadata(path) {
                    Ok(m) if through(m.file_type()) => Self::through(path),
                    _ => bail!(
                        "{} is a symbolic link (to {target}): give the file itself (for stdout, \
                         leave the flag out where the command has one); nothing written",
                        shown()
                    ),
                }
            }
            Some(ft) => bail!(
                "{} is {}: give a file name; nothing written",
                shown(),
                kind(ft)
            ),
        }
    }

    fn beside(path: &Path, exists: bool) -> Result<OutFile> {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".hookjournal-out-")
            .tempfile_in(parent)
            .with_context(|| format!("creating a temporary file in {}", parent.display()))?;
        let (file, tmp) = tmp.into_parts();
        Ok(OutFile {
            file,
            path: path.to_path_buf(),
            tmp: Some((tmp, exists)),
        })
    }

    fn through(path: &Path) -> Result<OutFile> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(OutFile {
            file,
            path: path.to_path_buf(),
            tmp: None,
        })
    }

    /// Where the bytes go.
    pub fn file(&mut self) -> &mut std::fs::File {
        &mut self.file
    }

    /// The output complete: synced and renamed into place (a new file never over one that
    /// appeared meanwhile).
    pub fn commit(self) -> Result<()> {
        let OutFile {
            mut file,
            path,
            tmp,
        } = self;
        file.flush()
            .with_context(|| format!("writing {}", path.display()))?;
        let Some((tmp, existed)) = tmp else {
            return Ok(());
        };
        file.sync_all().ok();
        drop(file);
        let done = if existed {
            tmp.persist(&path)
        } else {
            tmp.persist_noclobber(&path)
        };
        done.map_err(|e| anyhow::anyhow!("writing {}: {}", path.display(), e.error))?;
        Ok(())
    }
}
