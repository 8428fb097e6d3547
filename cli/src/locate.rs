//! Where the journal is: `--journal DIR` > `$HOOKJOURNAL_DIR` > `$CLAUDE_PROJECT_DIR/.hookjournal`
//! (hook mode only: the variable leaks into child processes) > the nearest ancestor of the cwd
//! holding `.hookjournal/` > `./.hookjournal`.

use std::path::{Path, PathBuf};

pub const DIR_NAME: &str = ".hookjournal";

pub fn journal_dir(flag: Option<&Path>, hook_mode: bool) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("HOOKJOURNAL_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if hook_mode {
        if let Some(p) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|v| !v.is_empty()) {
            return PathBuf::from(p).join(DIR_NAME);
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    for dir in cwd.ancestors() {
        let candidate = dir.join(DIR_NAME);
        if candidate.is_dir() {
            return candidate;
        }
    }
    cwd.join(DIR_NAME)
}
