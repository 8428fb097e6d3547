//! A tool call as the domain reads it: which tool, what kind of work, the files it read or
//! edited, the command it ran, the commit that made, and a one-line subject — read once from
//! the host's tool name, input and result (`Canonical::ToolPre`/`ToolPost`/`ToolFailure`), so
//! the session fold, `replay` and the timeline ask the call, not the payload's keys.

use crate::event::{Canonical, HookEvent};
use serde_json::Value;

/// The kind of work a tool call does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads files.
    Read,
    /// Writes, edits, patches or deletes files.
    Edit,
    /// Runs a shell command.
    Shell,
    /// Searches files or names (grep, glob).
    Search,
    /// Fetches or searches the web.
    Web,
    /// The host's task or to-do list.
    Task,
    /// An MCP server's tool.
    Mcp,
    /// Anything else.
    #[default]
    Other,
}

/// One tool call, read from its event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolCall {
    /// The host's id of the call, the same before and after it; `None` when the host sends none.
    pub id: Option<String>,
    /// The tool's name, as the host calls it.
    pub name: String,
    /// What kind of work it does.
    pub kind: ToolKind,
    /// The files it read, absolute against the session's directory, in the order named.
    pub read: Vec<String>,
    /// The files it wrote, edited, patched or deleted, the same way.
    pub edited: Vec<String>,
    /// The shell command it ran.
    pub command: Option<String>,
    /// The commit a `git commit` made: hash and message, from the command's output.
    pub commit: Option<(String, String)>,
    /// The plan it proposed (Claude Code's `ExitPlanMode`).
    pub plan: Option<String>,
    /// What the call is about in one line: a path, a command, a pattern, a URL, a task.
    pub subject: String,
    /// Whether it succeeded: `None` before it ran.
    pub ok: Option<bool>,
}

impl HookEvent {
    /// The tool call a tool event is about (`None` for other events), paths made absolute
    /// against the event's own directory.
    pub fn tool_call(&self) -> Option<ToolCall> {
        self.tool_call_in(self.cwd.as_deref())
    }

    /// `tool_call`, relative paths made absolute against `cwd`.
    pub fn tool_call_in(&self, cwd: Option<&str>) -> Option<ToolCall> {
        let (tool, input, response, ok) = match &self.canonical {
            Canonical::ToolPre { tool, input } => (tool, input, &None, None),
            Canonical::ToolPost {
                tool,
                input,
                response,
            } => (tool, input, response, Some(true)),
            Canonical::ToolFailure { tool, input, .. } => (tool, input, &None, Some(false)),
            _ => return None,
        };
        let mut call = ToolCall::read(
            tool,
            input.as_ref().unwrap_or(&Value::Null),
            response.as_ref().unwrap_or(&Value::Null),
            cwd,
        );
        call.id = self.tool_call_id.clone();
        call.ok = ok;
        if self.mcp_server.is_some() {
            call.kind = ToolKind::Mcp;
        }
        Some(call)
    }
}

impl ToolCall {
    /// A call of `tool` with `input` that returned `response` (`Null` when it has not run),
    /// relative paths made absolute against `cwd`.
    pub fn read(tool: &str, input: &Value, response: &Value, cwd: Option<&str>) -> ToolCall {
        let mut call = ToolCall {
            name: tool.to_string(),
            kind: kind_of(tool),
            ..ToolCall::default()
        };
        // Codex's apply_patch names its files inside the patch.
        if tool == "apply_patch" {
            let patch = str_at(input, &["command", "patch", "input"]).or(input.as_str());
            for path in patch.map(patch_files).unwrap_or_default() {
                call.edited.push(absolute(&path, cwd));
            }
        }
        // Auggie's remove-files names the files it deletes in `file_paths`.
        if tool == "remove-files" {
            let paths = input.get("file_paths").and_then(Value::as_array);
            for path in paths.into_iter().flatten().filter_map(Value::as_str) {
                call.edited.push(absolute(path, cwd));
            }
        }
        // Cline CLI's read_files names its files in a list (`files[].path`, or `paths`), Kiro
        // CLI's fs_read in its operations (`operations[].path`).
        if tool == "read_files" || tool == "fs_read" {
            for path in listed_files(input) {
                call.read.push(absolute(&path, cwd));
            }
        }
        match file_of(tool, input, response, cwd) {
            Some((true, path)) => call.edited.push(path),
            Some((false, path)) => call.read.push(path),
            None => {}
        }
        if !call.edited.is_empty() {
            call.kind = ToolKind::Edit;
        } else if !call.read.is_empty() {
            call.kind = ToolKind::Read;
        }
        if call.kind == ToolKind::Shell {
            // Cline CLI's run_commands runs a list of them.
            let listed = input.get("commands").and_then(Value::as_array).map(|c| {
                let c: Vec<&str> = c.iter().filter_map(Value::as_str).collect();
                c.join("; ")
            });
            call.command = str_at(input, &["command", "cmd"])
                .map(str::to_string)
                .or(listed);
            call.commit = commit_made(call.command.as_deref().unwrap_or_default(), response);
        }
        if tool == "ExitPlanMode" {
            call.plan = str_at(input, &["plan"]).map(str::to_string);
        }
        // The file the call read or edited first (absolute); else the input's own words; else
        // the command (Cline's command list).
        call.subject = call
            .edited
            .first()
            .or(call.read.first())
            .cloned()
            .or_else(|| Some(subject(input)).filter(|s| !s.is_empty()))
            .or_else(|| call.command.clone())
            .unwrap_or_default();
        call
    }
}

/// The kind a tool's name says, before its input is read (an edit or a read is also told by
/// the files it names).
fn kind_of(tool: &str) -> ToolKind {
    // Claude Code's `mcp__server__tool`, Kiro CLI's `@server/tool`.
    if tool.starts_with("mcp__") || (tool.starts_with('@') && tool.contains('/')) {
        return ToolKind::Mcp;
    }
    match tool {
        "Bash" | "run_shell_command" | "bash" | "exec" | "Execute" | "Shell" | "terminal"
        | "launch-process" | "run_commands" | "execute_bash" | "execute_cmd" => ToolKind::Shell,
        "Grep"
        | "Glob"
        | "LS"
        | "grep"
        | "glob"
        | "search_file_content"
        | "list_directory"
        | "search_files"
        | "list_files"
        | "codebase-retrieval"
        | "ls"
        | "find" => ToolKind::Search,
        "WebFetch" | "WebSearch" | "web_fetch" | "google_web_search" | "web-fetch"
        | "web-search" | "webfetch" | "websearch" => ToolKind::Web,
        "TaskCreate"
        | "TaskUpdate"
        | "TodoWrite"
        | "TaskList"
        | "TaskGet"
        | "write_todos"
        | "todowrite"
        | "todoread"
        | "view_tasklist"
        | "reorganize_tasklist"
        | "update_tasks"
        | "add_tasks" => ToolKind::Task,
        _ => ToolKind::Other,
    }
}

/// What a call is about in one line: the first of the input's path, command, pattern, task
/// subject or id, URL, query, description or prompt, and a status it sets (` → completed`).
fn subject(input: &Value) -> String {
    let about = str_at(
        input,
        &[
            "file_path",
            "command",
            "pattern",
            "subject",
            "taskId",
            "path",
            "absolute_path",
            "filePath",
            "notebook_path",
            "url",
            "query",
            "description",
            "prompt",
        ],
    )
    .unwrap_or_default();
    match str_at(input, &["status"]) {
        Some(status) => format!("{about} → {status}"),
        None => about.to_string(),
    }
}

fn str_at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// The commit a shell command made: `git commit` (also `git -c … commit`) and its output.
fn commit_made(cmd: &str, response: &Value) -> Option<(String, String)> {
    if !(cmd.contains("git commit") || (cmd.contains("git -c") && cmd.contains(" commit"))) {
        return None;
    }
    let out = str_at(
        response,
        &[
            "stdout",
            "output",
            "llmContent",
            "textResultForLlm",
            "text_result_for_llm",
        ],
    )
    .map(str::to_string)
    .or_else(|| response.as_str().map(str::to_string))
    .unwrap_or_default();
    parse_commit(&out)
}

/// Tools that read and edit files, and the file: absolute where the tool's response names it
/// (Gemini CLI's `returnDisplay.filePath`; its `write_file` input path is relative), else the
/// input's path, made absolute against the session's directory when it is relative (OpenClaw's
/// `read`, `write`, `edit` and `apply_patch` name theirs relative to the workspace). Copilot
/// CLI's are `view`, `create` and `edit` (`path`); Factory Droid's `Create` (`file_path`).
fn file_of(
    tool: &str,
    input: &Value,
    response: &Value,
    cwd: Option<&str>,
) -> Option<(bool, String)> {
    let edit = matches!(
        tool,
        "Edit"
            | "Write"
            | "MultiEdit"
            | "NotebookEdit"
            | "write_file"
            | "replace"
            | "edit_file"
            | "write"
            | "edit"
            | "multiedit"
            | "create"
            | "Create"
            | "apply_patch"
            | "WriteFile"
            | "StrReplaceFile"
            | "save-file"
            | "str-replace-editor"
            | "fs_write"
    );
    let read = matches!(
        tool,
        "Read" | "read_file" | "NotebookRead" | "read" | "view" | "ReadFile"
    );
    // OpenHands' `file_editor` reads with its `view` command and edits with the others.
    let (edit, read) = match (tool, input.get("command").and_then(Value::as_str)) {
        ("file_editor", Some("view")) => (false, true),
        ("file_editor", Some(_)) => (true, false),
        // Auggie's `view` lists a directory with `type: "directory"`: no file read.
        ("view", _) if input.get("type").and_then(Value::as_str) == Some("directory") => {
            (false, false)
        }
        _ => (edit, read),
    };
    if !edit && !read {
        return None;
    }
    let path = response
        .get("returnDisplay")
        .and_then(|d| str_at(d, &["filePath"]))
        .filter(|p| p.starts_with('/'))
        .or_else(|| {
            str_at(
                input,
                &[
                    "file_path",
                    "notebook_path",
                    "path",
                    "absolute_path",
                    "filePath",
                ],
            )
        })?;
    Some((edit, absolute(path, cwd)))
}

/// The files a list-taking read names: `files[].path` or `paths[]` (Cline CLI's read_files),
/// `operations[].path` (Kiro CLI's fs_read).
fn listed_files(input: &Value) -> Vec<String> {
    let files = input
        .get("files")
        .or_else(|| input.get("operations"))
        .and_then(Value::as_array);
    let paths = input.get("paths").and_then(Value::as_array);
    files
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("path").and_then(Value::as_str))
        .chain(paths.into_iter().flatten().filter_map(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// A path as given, made absolute against `cwd` when it is relative.
fn absolute(path: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(dir) if !path.starts_with('/') && !path.is_empty() => format!(
            "{}/{}",
            dir.trim_end_matches('/'),
            path.trim_start_matches("./")
        ),
        _ => path.to_string(),
    }
}

/// The files an apply_patch patch adds, updates, deletes or moves to, in order.
fn patch_files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let path = [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|p| line.strip_prefix(p))
        .map(str::trim)
        .filter(|p| !p.is_empty());
        if let Some(p) = path {
            if !out.iter().any(|x| x == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

pub use crate::session::parse_commit;
