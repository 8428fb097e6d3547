//! The Windsurf (Cascade) adapter, from its hooks documentation (not run here): the event in
//! `agent_action_name`, the conversation in `trajectory_id`, the action in `tool_info` —
//! `command_line` and `cwd` (a terminal command, read as `Bash`), `file_path` and `edits` (a file
//! read as `Read`, a write as `Edit`), `mcp_server_name`, `mcp_tool_name` and
//! `mcp_tool_arguments` (an MCP tool, `mcp__<server>__<tool>` as Claude Code names one),
//! `user_prompt`, `response` (the turn's end).

use super::WINDSURF;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde_json::{json, Map, Value};

fn st(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Parses a Cascade payload; `None` when it is no JSON object naming its event
/// (`agent_action_name`, or `hook_event_name` in a hand-written one, whose Claude Code fields are
/// read where Cascade's are missing).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    let name = st(&raw, "agent_action_name").or_else(|| st(&raw, "hook_event_name"))?;
    let empty = Map::new();
    let info = raw
        .get("tool_info")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let kind = WINDSURF.event(&name).map(|e| e.kind);
    let meaning = canonical(&name, kind, info, &raw);
    Some(HookEvent {
        session_id: st(&raw, "trajectory_id").or_else(|| st(&raw, "session_id")),
        cwd: st(info, "cwd").or_else(|| st(&raw, "cwd")),
        model: st(&raw, "model_name"),
        mcp_server: st(info, "mcp_server_name"),
        // No `tool_call_id`: `execution_id` is the hook run's, not said to be the same before
        // and after an action.
        ..HookEvent::new(name, Host::Windsurf, meaning)
    })
}

/// The tool an action stands for, and its input in Claude Code's field names.
fn tool(name: &str, info: &Map<String, Value>) -> (String, Option<Value>) {
    let field = |k: &str| info.get(k).filter(|v| !v.is_null()).cloned();
    let action = name.trim_start_matches("pre_").trim_start_matches("post_");
    match action {
        "run_command" => (
            "Bash".into(),
            Some(json!({"command": field("command_line"), "cwd": field("cwd")})),
        ),
        "read_code" => (
            "Read".into(),
            Some(json!({"file_path": field("file_path")})),
        ),
        "write_code" => (
            "Edit".into(),
            Some(json!({"file_path": field("file_path"), "edits": field("edits")})),
        ),
        "mcp_tool_use" => (
            format!(
                "mcp__{}__{}",
                st(info, "mcp_server_name").unwrap_or_default(),
                st(info, "mcp_tool_name").unwrap_or_default()
            ),
            field("mcp_tool_arguments"),
        ),
        _ => (String::new(), None),
    }
}

/// What a Cascade action means, with its fields.
fn canonical(
    name: &str,
    kind: Option<EventKind>,
    info: &Map<String, Value>,
    raw: &Map<String, Value>,
) -> Canonical {
    match kind {
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: st(info, "user_prompt")
                .or_else(|| st(raw, "prompt"))
                .unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => {
            let (tool, input) = tool(name, info);
            Canonical::ToolPre { tool, input }
        }
        Some(EventKind::ToolPost) => {
            let (tool, input) = tool(name, info);
            Canonical::ToolPost {
                tool,
                input,
                response: info.get("mcp_result").filter(|v| !v.is_null()).cloned(),
            }
        }
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: st(info, "response"),
        },
        _ => Canonical::Other,
    }
}
