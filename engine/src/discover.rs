//! Finding the session files hosted agents keep in their default places under the home, for
//! `import --discover`: which files, of which host, belong to this project (the session's working
//! directory is the project or under it), and under which session id the hooks name them.
//!
//! The folders are the user's own agents', but they are still walked through directory handles
//! (`door::Dir`): no link beneath a folder is followed (a link is skipped), only regular files
//! are read, and a file's head is read bounded to tell what it is. A file that does not say is
//! skipped with a one-line note, never an error.

use journal::door::Dir;
use projections::host::SessionFileFormat;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A session file to import: its host, format, session and subagent ids, and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The host's registry name (`claude`, `codex`, …): the events' host.
    pub host: &'static str,
    /// How the file is read.
    pub format: SessionFileFormat,
    /// The session it is the file of, as the host's hooks name it.
    pub session: String,
    /// The subagent whose own file it is (a Claude Code subagent's transcript).
    pub agent: Option<String>,
    /// Where it is.
    pub path: PathBuf,
}

/// The bytes of a file's head read to tell its session and working directory: a Codex
/// rollout's first line carries the model's whole instructions (tens of KiB).
const HEAD: u64 = 1 << 20;

/// Folders walked at most this deep below a host's root (Codex: `sessions/YYYY/MM/DD`).
const DEPTH: usize = 5;

/// One host's folder, looked at: what was found there, and what was skipped, and why.
#[derive(Debug, Default)]
pub struct Folder {
    /// The host's registry name.
    pub host: &'static str,
    /// The folder walked.
    pub root: PathBuf,
    /// This project's session files found under it.
    pub files: Vec<SessionFile>,
    /// One line per file or folder skipped (a link, a file whose head does not say).
    pub notes: Vec<String>,
}

/// Where each host keeps its files, from the home and the hosts' own variables (those ccusage
/// reads too): `CLAUDE_CONFIG_DIR` (a comma-separated list), `CODEX_HOME`, `GEMINI_DATA_DIR`,
/// `QWEN_DATA_DIR`, `COPILOT_HOME`, `OPENCODE_DATA_DIR`, `KILO_DATA_DIR` (else their folders under
/// `XDG_DATA_HOME`, else `~/.local/share`).
pub struct Roots {
    /// `(host, folder)`, in the order they are read.
    pub folders: Vec<(&'static str, PathBuf)>,
}

impl Roots {
    /// The roots for `home` and the variables `var` gives.
    pub fn new(home: &Path, var: impl Fn(&str) -> Option<OsString>) -> Roots {
        let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let mut folders = Vec::new();
        match var("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
            Some(dirs) => {
                for d in dirs.to_string_lossy().split(',').map(str::trim) {
                    if !d.is_empty() {
                        folders.push(("claude", Path::new(d).join("projects")));
                    }
                }
            }
            None => {
                folders.push(("claude", home.join(".config/claude/projects")));
                folders.push(("claude", home.join(".claude/projects")));
            }
        }
        let codex = set("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        folders.push(("codex", codex.join("sessions")));
        folders.push(("codex", codex.join("archived_sessions")));
        let gemini = set("GEMINI_DATA_DIR").unwrap_or_else(|| home.join(".gemini"));
        folders.push(("gemini", gemini.join("tmp")));
        let qwen = set("QWEN_DATA_DIR").unwrap_or_else(|| home.join(".qwen"));
        folders.push(("qwen", qwen.join("projects")));
        let copilot = set("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot"));
        folders.push(("copilot", copilot.join("session-state")));
        // OpenCode and Kilo Code keep every session in one SQLite database in their data folder.
        let data = set("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
        for (host, var) in [("opencode", "OPENCODE_DATA_DIR"), ("kilo", "KILO_DATA_DIR")] {
            folders.push((host, set(var).unwrap_or_else(|| data.join(host))));
        }
        Roots { folders }
    }

    /// The roots of this process's home and variables.
    pub fn from_env() -> Roots {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        Roots::new(&home, |k| std::env::var_os(k))
    }
}

/// Every root's session files that belong to `project`, a folder missing from the disk left out.
pub fn discover(roots: &Roots, project: &Path) -> Vec<Folder> {
    let projects = project_paths(project);
    let mut out = Vec::new();
    for (host, root) in &roots.folders {
        let Ok(dir) = Dir::open(root) else { continue };
        let mut folder = Folder {
            host,
            root: root.clone(),
            ..Folder::default()
        };
        if let Some(db) = database_of(host) {
            sessions_in_db(host, &dir, db, &projects, &mut folder);
            out.push(folder);
            continue;
        }
        let mut found = Vec::new();
        walk(&dir, Path::new(""), 0, &mut found, &mut folder.notes);
        for rel in found {
            match identify(host, &dir, &rel, &projects) {
                Ok(Some(f)) => folder.files.push(f),
                Ok(None) => {}
                Err(why) => folder
                    .notes
                    .push(format!("skipped {}: {why}", root.join(&rel).display())),
            }
        }
        folder
            .files
            .sort_by(|a, b| (a.agent.is_some(), &a.path).cmp(&(b.agent.is_some(), &b.path)));
        out.push(folder);
    }
    out
}

/// The SQLite database a host keeps all its sessions in, in its data folder.
fn database_of(host: &str) -> Option<&'static str> {
    match host {
        "opencode" => Some("opencode.db"),
        "kilo" => Some("kilo.db"),
        _ => None,
    }
}

/// How long listing a database's sessions may take (it is read as the hook reads it: read-only,
/// never holding up the host that has it open).
const DB_LIST_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The most text of session ids and folders listed from one database.
const DB_LIST_BYTES: usize = 16 << 20;

/// OpenCode's or Kilo Code's `db` in `dir`: one [`SessionFile`] per top-level session started in
/// the project (its subagents' child sessions are read with it). A link is noted, not opened.
fn sessions_in_db(
    host: &'static str,
    dir: &Dir,
    db: &str,
    projects: &[PathBuf],
    folder: &mut Folder,
) {
    use projections::hosts::kilo::db as kdb;
    let path = dir.path().join(db);
    let kind = dir.entries().ok().and_then(|es| {
        es.into_iter()
            .find(|(n, _)| n.as_os_str() == db)
            .map(|(_, st)| st.st_mode & libc::S_IFMT)
    });
    match kind {
        Some(libc::S_IFREG) => {}
        Some(libc::S_IFLNK) => {
            let why = "a link, which is not followed";
            folder
                .notes
                .push(format!("skipped {}: {why}", path.display()));
            return;
        }
        _ => return,
    }
    let p = path.to_string_lossy();
    let deadline = std::time::Instant::now() + DB_LIST_TIME;
    let limit = kdb::MAX_SESSIONS;
    let params: [&dyn rusqlite::ToSql; 1] = [&limit];
    let Some(rows) = crate::host_db::rows(&p, kdb::SESSIONS, &params, DB_LIST_BYTES, deadline)
    else {
        let why = "not a database its sessions could be read from";
        folder
            .notes
            .push(format!("skipped {}: {why}", path.display()));
        return;
    };
    for row in rows {
        let [id, directory]: [String; 2] = match row.try_into() {
            Ok(r) => r,
            Err(_) => continue,
        };
        if in_project(&directory, projects) {
            folder.files.push(SessionFile {
                host,
                format: SessionFileFormat::OpenCodeDb,
                session: id,
                agent: None,
                path: path.clone(),
            });
        }
    }
}

/// The project as given and as the kernel resolves it (a session names the one it saw).
fn project_paths(project: &Path) -> Vec<PathBuf> {
    let mut out = vec![project.to_path_buf()];
    if let Ok(c) = journal::door::by_path::canonical(project) {
        if c != project {
            out.push(c);
        }
    }
    out
}

/// Whether a session's working directory is the project or under it.
fn in_project(cwd: &str, projects: &[PathBuf]) -> bool {
    let cwd = Path::new(cwd);
    cwd.is_absolute() && projects.iter().any(|p| cwd.starts_with(p))
}

/// The `.jsonl` files beneath `dir` (relative to the root), no link followed: a link is noted.
fn walk(root: &Dir, rel: &Path, depth: usize, out: &mut Vec<PathBuf>, notes: &mut Vec<String>) {
    let here = if rel.as_os_str().is_empty() {
        None
    } else {
        match root.open_dir(rel) {
            Ok(d) => Some(d),
            Err(e) => {
                notes.push(format!("skipped {}: {e}", root.path().join(rel).display()));
                return;
            }
        }
    };
    let entries = match here.as_ref().unwrap_or(root).entries() {
        Ok(e) => e,
        Err(e) => {
            notes.push(format!("skipped {}: {e}", root.path().join(rel).display()));
            return;
        }
    };
    let mut entries = entries;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, st) in entries {
        let p = rel.join(&name);
        match st.st_mode & libc::S_IFMT {
            libc::S_IFDIR if depth < DEPTH => walk(root, &p, depth + 1, out, notes),
            libc::S_IFREG if p.extension().is_some_and(|e| e == "jsonl") => out.push(p),
            libc::S_IFLNK if is_session_like(&p) => notes.push(format!(
                "skipped {}: a link, which is not followed",
                root.path().join(&p).display()
            )),
            _ => {}
        }
    }
}

/// A name that could be a session file or a folder of them (a link to note, not to follow).
fn is_session_like(p: &Path) -> bool {
    p.extension().is_none_or(|e| e == "jsonl")
}

/// A file under a host's root, being told: what it is, and how to name what it says.
struct Candidate<'a> {
    host: &'static str,
    root: &'a Dir,
    rel: &'a Path,
    /// Its name without `.jsonl`.
    stem: String,
    /// Its path's components below the root.
    parts: Vec<String>,
}

impl Candidate<'_> {
    fn file(
        &self,
        format: SessionFileFormat,
        session: String,
        agent: Option<String>,
    ) -> SessionFile {
        SessionFile {
            host: self.host,
            format,
            session,
            agent,
            path: self.root.path().join(self.rel),
        }
    }

    fn head(&self) -> Result<Vec<u8>, String> {
        self.root
            .read_head(self.rel, HEAD)
            .map_err(|e| e.to_string())
    }
}

/// The answer about one file: this project's session file, another project's (`None`), or a
/// file that does not say (`Err`, why).
type Told = Result<Option<SessionFile>, String>;

/// What `rel` under a host's root is.
fn identify(host: &'static str, root: &Dir, rel: &Path, projects: &[PathBuf]) -> Told {
    let c = Candidate {
        host,
        root,
        rel,
        stem: rel
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        parts: rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect(),
    };
    match host {
        "claude" => claude(&c, projects),
        "codex" => codex(&c, projects),
        "gemini" => gemini(&c, projects),
        "qwen" => qwen(&c, projects),
        "copilot" => copilot(&c, projects),
        _ => Ok(None),
    }
}

/// Claude Code: `<folder>/<session>.jsonl`, `<folder>/<session>/subagents/agent-<id>.jsonl`,
/// the folder named after the working directory (every character not a letter or digit a
/// dash): another project's folder is not opened; a transcript's first `cwd` decides.
fn claude(c: &Candidate, projects: &[PathBuf]) -> Told {
    let (session, agent) = match c.parts.as_slice() {
        [_, _] => (c.stem.clone(), None),
        [_, s, sub, _] if sub == "subagents" => (
            s.clone(),
            Some(c.stem.trim_start_matches("agent-").to_string()),
        ),
        _ => return Ok(None),
    };
    let folder = &c.parts[0];
    if !projects
        .iter()
        .any(|p| claude_folder_may_hold(folder, &sanitized(p)))
    {
        return Ok(None);
    }
    let ours = match first_field(&c.head()?, "cwd") {
        Some(cwd) => in_project(&cwd, projects),
        // A transcript holding no message yet: its folder says.
        None => projects.iter().any(|p| *folder == sanitized(p)),
    };
    Ok(ours.then(|| c.file(SessionFileFormat::ClaudeTranscript, session, agent)))
}

/// Codex: `rollout-*.jsonl` anywhere under `sessions/` (`YYYY/MM/DD`) or `archived_sessions/`,
/// its first line the `session_meta` naming the thread and its working directory.
fn codex(c: &Candidate, projects: &[PathBuf]) -> Told {
    if !c.stem.starts_with("rollout-") {
        return Ok(None);
    }
    let meta = first_line(&c.head()?)
        .filter(|v| v["type"] == "session_meta")
        .ok_or("its first line is not a session_meta record")?;
    let p = &meta["payload"];
    let id = p["id"]
        .as_str()
        .or(p["session_id"].as_str())
        .ok_or("its session_meta names no session")?;
    let cwd = p["cwd"]
        .as_str()
        .ok_or("its session_meta names no working directory")?;
    Ok(in_project(cwd, projects)
        .then(|| c.file(SessionFileFormat::CodexRollout, id.to_string(), None)))
}

/// Gemini CLI: `<project>/chats/session-*.jsonl`, the first line naming the session and the
/// project by the SHA-256 of its root; the project's folder's `.project_root`, where there is
/// one, names the root itself (and may be under the project).
fn gemini(c: &Candidate, projects: &[PathBuf]) -> Told {
    let [slug, chats, _] = c.parts.as_slice() else {
        return Ok(None);
    };
    if chats != "chats" || !c.stem.starts_with("session-") {
        return Ok(None);
    }
    let first = first_line(&c.head()?).ok_or("its first line is not a chat header")?;
    let id = first["sessionId"]
        .as_str()
        .ok_or("its first line names no session")?;
    let marker = c
        .root
        .read_if_present(&Path::new(slug).join(".project_root"), 64 << 10)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string());
    let ours = match marker {
        Some(root) => in_project(&root, projects),
        None => first["projectHash"]
            .as_str()
            .is_some_and(|h| projects.iter().any(|p| *h == sha256_hex(p))),
    };
    Ok(ours.then(|| c.file(SessionFileFormat::GeminiChat, id.to_string(), None)))
}

/// Qwen Code: `<folder>/chats/<session>.jsonl`, every record naming its `cwd` and session.
fn qwen(c: &Candidate, projects: &[PathBuf]) -> Told {
    let [_, chats, _] = c.parts.as_slice() else {
        return Ok(None);
    };
    if chats != "chats" {
        return Ok(None);
    }
    let head = c.head()?;
    let Some(cwd) = first_field(&head, "cwd") else {
        return Ok(None);
    };
    let id = first_field(&head, "sessionId").unwrap_or_else(|| c.stem.clone());
    Ok(in_project(&cwd, projects).then(|| c.file(SessionFileFormat::QwenChat, id, None)))
}

/// GitHub Copilot CLI: `<session>/events.jsonl`, its first line the `session.start` naming the
/// session and its working directory.
fn copilot(c: &Candidate, projects: &[PathBuf]) -> Told {
    let [_, name] = c.parts.as_slice() else {
        return Ok(None);
    };
    if name != "events.jsonl" {
        return Ok(None);
    }
    let start = first_line(&c.head()?)
        .filter(|v| v["type"] == "session.start")
        .ok_or("its first line is not a session.start record")?;
    let d = &start["data"];
    let id = d["sessionId"]
        .as_str()
        .ok_or("its session.start names no session")?;
    let cwd = d["context"]["cwd"]
        .as_str()
        .ok_or("its session.start names no working directory")?;
    Ok(in_project(cwd, projects)
        .then(|| c.file(SessionFileFormat::CopilotEvents, id.to_string(), None)))
}

/// Claude Code's folder name for a working directory: each character not an ASCII letter or
/// digit a dash.
fn sanitized(p: &Path) -> String {
    p.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Whether a Claude Code project folder may be the project's or one under it (a long name is
/// cut and given a hash by Claude Code: its first 200 characters are compared).
fn claude_folder_may_hold(folder: &str, project: &str) -> bool {
    let cut = |s: &str| s.chars().take(200).collect::<String>();
    let (f, p) = (cut(folder), cut(project));
    f == p || f.starts_with(&format!("{p}-")) || (f.len() == 200 && p.starts_with(&f))
}

fn sha256_hex(p: &Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(p.to_string_lossy().as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The head's first complete line, as JSON.
fn first_line(head: &[u8]) -> Option<Value> {
    let end = head.iter().position(|&b| b == b'\n')?;
    serde_json::from_slice(&head[..end]).ok()
}

/// The first string value of top-level `field` among the head's complete lines.
fn first_field(head: &[u8], field: &str) -> Option<String> {
    let end = head.iter().rposition(|&b| b == b'\n')?;
    head[..end].split(|&b| b == b'\n').find_map(|line| {
        let v: Value = serde_json::from_slice(line).ok()?;
        v.get(field)?.as_str().map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_folder_is_the_projects_or_one_under_it() {
        let p = sanitized(Path::new("/home/dev/proj"));
        assert_eq!(p, "-home-dev-proj");
        assert!(claude_folder_may_hold("-home-dev-proj", &p));
        assert!(claude_folder_may_hold("-home-dev-proj-api", &p));
        assert!(!claude_folder_may_hold("-home-dev-projects", &p));
        assert!(!claude_folder_may_hold("-home-dev", &p));
    }

    /// Given a home holding this project's Claude Code session and its subagent's transcript, a
    /// Codex rollout started in a folder under the project, another project's of each and a
    /// link, when discovered, then this project's three files are found, under the hooks' session
    /// ids, and the link is noted.
    #[test]
    fn discover_finds_this_projects_files_and_their_sessions() {
        let d = tempfile::tempdir().unwrap();
        let (home, project) = (d.path().join("home"), d.path().join("proj"));
        let line = |cwd: &Path| format!("{{\"type\":\"user\",\"cwd\":\"{}\"}}\n", cwd.display());
        let ours = home.join(".claude/projects").join(sanitized(&project));
        let theirs = home
            .join(".claude/projects")
            .join(sanitized(&d.path().join("other")));
        std::fs::create_dir_all(ours.join("s1/subagents")).unwrap();
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(ours.join("s1.jsonl"), line(&project)).unwrap();
        std::fs::write(ours.join("s1/subagents/agent-a7.jsonl"), line(&project)).unwrap();
        std::fs::write(theirs.join("s2.jsonl"), line(&d.path().join("other"))).unwrap();
        std::os::unix::fs::symlink(theirs.join("s2.jsonl"), ours.join("s3.jsonl")).unwrap();
        let day = home.join(".codex/sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        let meta = |id: &str, cwd: &Path| {
            format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{id}\",\"cwd\":\"{}\"}}}}\n",
                cwd.display()
            )
        };
        std::fs::write(
            day.join("rollout-a.jsonl"),
            meta("t1", &project.join("src")),
        )
        .unwrap();
        std::fs::write(
            day.join("rollout-b.jsonl"),
            meta("t2", &d.path().join("other")),
        )
        .unwrap();
        let roots = Roots::new(&home, |_| None);
        let folders = discover(&roots, &project);
        let found: Vec<(&str, &str, Option<&str>)> = folders
            .iter()
            .flat_map(|f| &f.files)
            .map(|f| (f.host, f.session.as_str(), f.agent.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("claude", "s1", None),
                ("claude", "s1", Some("a7")),
                ("codex", "t1", None)
            ]
        );
        let notes: Vec<&String> = folders.iter().flat_map(|f| &f.notes).collect();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].ends_with("s3.jsonl: a link, which is not followed"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_working_directory_under_the_project_is_the_projects() {
        let ps = vec![PathBuf::from("/home/dev/proj")];
        assert!(in_project("/home/dev/proj", &ps));
        assert!(in_project("/home/dev/proj/src", &ps));
        assert!(!in_project("/home/dev/project", &ps));
        assert!(!in_project("proj", &ps));
    }
}
