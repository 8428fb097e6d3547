//! Hook payloads for the policy's given/when/then tests: Claude Code's shapes, in session `S`.
#![allow(dead_code)] // each test file uses some of them

pub const S: &str = "sess-0001-aaaa";

/// A Claude Code payload of session `S`: `event` plus `fields` (a JSON object's inner text).
pub fn hook(event: &str, fields: &str) -> String {
    let sep = if fields.is_empty() { "" } else { "," };
    format!(
        r#"{{"hook_event_name":"{event}","session_id":"{S}","cwd":"/proj","transcript_path":"/t/{S}.jsonl"{sep}{fields}}}"#
    )
}

pub fn start(source: &str) -> String {
    hook("SessionStart", &format!(r#""source":"{source}""#))
}

pub fn prompt(text: &str) -> String {
    hook("UserPromptSubmit", &format!(r#""prompt":"{text}""#))
}

pub fn tool(name: &str, input: &str) -> String {
    hook(
        "PostToolUse",
        &format!(r#""tool_name":"{name}","tool_input":{input},"tool_response":{{}}"#),
    )
}

pub fn edit(path: &str) -> String {
    tool("Edit", &format!(r#"{{"file_path":"{path}"}}"#))
}

pub fn read(path: &str) -> String {
    tool("Read", &format!(r#"{{"file_path":"{path}"}}"#))
}

pub fn precompact(trigger: &str) -> String {
    hook("PreCompact", &format!(r#""trigger":"{trigger}""#))
}

pub fn task_create(id: &str, subject: &str) -> String {
    hook(
        "PostToolUse",
        &format!(
            r#""tool_name":"TaskCreate","tool_input":{{"subject":"{subject}"}},"tool_response":{{"task":{{"id":"{id}"}}}}"#
        ),
    )
}

pub fn task_update(id: &str, status: &str) -> String {
    tool(
        "TaskUpdate",
        &format!(r#"{{"taskId":"{id}","status":"{status}"}}"#),
    )
}
