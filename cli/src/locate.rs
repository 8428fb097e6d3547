//! Where the journal is: `--journal DIR` > `$HOOKJOURNAL_DIR` > `$CLAUDE_PROJECT_DIR/.hookjournal`
//! (hook mode only: the variable leaks into child processes) > the nearest ancestor of the cwd
//! holding `.hookjournal/` > `./.hookjournal`. And where `install` finds the project it edits.

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
            let project = PathBuf::from(p);
            // A project directory that does not exist is not created (with every parent) just to
            // hold a journal: the event goes where the readers look from the cwd, so nothing is lost.
            if project.is_dir() {
                return project.join(DIR_NAME);
            }
            let dir = nearest_from_cwd();
            eprintln!(
                "hookjournal: $CLAUDE_PROJECT_DIR {} is not a directory; journaling in {}",
                project.display(),
                dir.display()
            );
            return dir;
        }
    }
    nearest_from_cwd()
}

/// The nearest ancestor of the cwd holding a `.hookjournal/` this user may use, else
/// `./.hookjournal`. One another user owns (pre-created in a shared directory, say) or that is
/// a link is passed over: it is not this user's journal (root takes a user's own, `usable`).
fn nearest_from_cwd() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    for dir in cwd.ancestors() {
        let candidate = dir.join(DIR_NAME);
        if usable(&candidate) {
            return candidate;
        }
    }
    cwd.join(DIR_NAME)
}

/// Whether `dir` is a real directory (not a link) this user owns; for root, also another user's
/// journal in that user's own directory that only its owner can write (root working in a user's
/// project), never one planted in a directory someone else owns (a shared `/tmp`, say) or open to
/// others: root's events would be that user's to read.
fn usable(dir: &Path) -> bool {
    let Some(m) = lstat(dir) else {
        return false;
    };
    let me = engine::fs::files::euid();
    is_dir(&m) && (m.st_uid == me || (me == 0 && foreign_refusal(dir, &m).is_none()))
}

/// `path`'s status as itself (`engine::fs::door::lstat`), `None` when missing or unreadable.
fn lstat(path: &Path) -> Option<libc::stat> {
    engine::fs::door::lstat(path).ok().flatten()
}

fn is_dir(m: &libc::stat) -> bool {
    m.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// Why root must not record in `dir`, another user's journal: others can write to it, or it sits
/// in a directory its owner does not own.
fn foreign_refusal(dir: &Path, m: &libc::stat) -> Option<String> {
    if m.st_mode & 0o022 != 0 {
        return Some(format!(
            "{} belongs to another user (uid {}) and others can write to it; nothing is recorded there",
            dir.display(),
            m.st_uid
        ));
    }
    let parent_owner = dir.parent().and_then(lstat).map(|p| p.st_uid);
    (parent_owner != Some(m.st_uid)).then(|| {
        format!(
            "{} belongs to another user (uid {}) in a directory that user does not own; nothing is recorded there",
            dir.display(),
            m.st_uid
        )
    })
}

/// Why `dir` cannot be this user's journal (`None`: it can, or it does not exist yet): said
/// by the hook, which then records nothing there.
pub fn refusal(dir: &Path) -> Option<String> {
    let m = lstat(dir)?;
    let me = engine::fs::files::euid();
    if m.st_mode & libc::S_IFMT == libc::S_IFLNK {
        Some(format!(
            "{} is a symbolic link; the journal is never reached through one, so nothing is recorded",
            dir.display()
        ))
    } else if !is_dir(&m) {
        Some(format!(
            "{} is not a directory; nothing is recorded",
            dir.display()
        ))
    } else if m.st_uid != me && me != 0 {
        Some(format!(
            "{} belongs to another user (uid {}); nothing is recorded there",
            dir.display(),
            m.st_uid
        ))
    } else if m.st_uid != me {
        foreign_refusal(dir, &m)
    } else {
        engine::fs::files::check_adoptable(dir)
            .err()
            .map(|e| format!("{e}; nothing is recorded"))
    }
}

/// What marks a project's root for `install`, in the order they are reported.
const PROJECT_MARKERS: &[&str] = &[DIR_NAME, ".claude", ".codex", ".gemini", ".git"];

/// The project `install` edits when run in `cwd`: the nearest directory, `cwd` itself or above,
/// holding `.hookjournal/`, an agent's `.claude`/`.codex`/`.gemini`, or `.git` (with the marker
/// found); `cwd` itself when none does. The walk stops below `home`: `~/.claude` and its kin are
/// the user's own settings, never a project's.
pub fn project_root(cwd: &Path, home: Option<&Path>) -> (PathBuf, Option<&'static str>) {
    for dir in cwd.ancestors() {
        if home.is_some_and(|h| h == dir) {
            break;
        }
        if let Some(m) = PROJECT_MARKERS.iter().find(|m| dir.join(m).exists()) {
            return (dir.to_path_buf(), Some(m));
        }
    }
    (cwd.to_path_buf(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_is_the_nearest_marked_ancestor_below_home() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let proj = home.join("proj");
        let sub = proj.join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        // Nothing marks the project: the cwd itself (never ~, whose .claude is the user's).
        assert_eq!(project_root(&sub, Some(&home)), (sub.clone(), None));
        std::fs::create_dir(proj.join(".git")).unwrap();
        assert_eq!(
            project_root(&sub, Some(&home)),
            (proj.clone(), Some(".git"))
        );
        std::fs::create_dir(proj.join("src/.claude")).unwrap();
        assert_eq!(
            project_root(&sub, Some(&home)),
            (proj.join("src"), Some(".claude"))
        );
        assert_eq!(project_root(&home, Some(&home)), (home.clone(), None));
    }
}
