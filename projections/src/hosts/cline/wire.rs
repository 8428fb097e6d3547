//! The Cline CLI adapter. Cline runs one executable per event (`.clinerules/hooks/PreToolUse`, …)
//! with a payload of its own on stdin: the event in `hookName` (`agent_start`, `tool_call`,
//! `tool_result`, `agent_end`, …), the session in `sessionContext.rootSessionId` (the directory
//! of its session files; `taskId` is the run), the workspace in `workspaceInfo.rootPath` (and
//! `workspaceRoots`), the agent in `agent_id` with `parent_agent_id` set inside a subagent, the
//! tool call in `tool_call{id,name,input}` and its result in `tool_result{…,output}`. This reads
//! that payload into the canonical event (measured on 3.0.65, see
//! `tests/fixtures/real-hosts/cline-3.0.65/FACTS.md`).
//!
//! Usage: no payload carries it, nor names the session file that does; the engine finds that
//! file by the host table's rule and `cline_session` reads it.

use super::CLINE;
use crate::event_kind::EventKind;
use crate::hook_event::{Canonical, HookEvent};
use crate::host::Host;
use serde_json::{Map, Value};

fn st(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn obj<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    m.get(key).and_then(Value::as_object)
}

/// Parses a Cline CLI payload; `None` when it is no JSON object naming its event (`hookName`,
/// or `hook_event_name` in a hand-written one).
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let raw: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    let name = st(&raw, "hookName").or_else(|| st(&raw, "hook_event_name"))?;
    let session_id = obj(&raw, "sessionContext")
        .and_then(|c| st(c, "rootSessionId"))
        .or_else(|| st(&raw, "session_id"))
        .or_else(|| st(&raw, "taskId"));
    let cwd = obj(&raw, "workspaceInfo")
        .and_then(|w| st(w, "rootPath"))
        .or_else(|| {
            raw.get("workspaceRoots")
                .and_then(Value::as_array)
                .and_then(|r| r.first())
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        })
        .or_else(|| st(&raw, "cwd"));
    // The main agent has an id too; only a subagent's (one with a parent) is recorded.
    let agent_id = st(&raw, "parent_agent_id").and(st(&raw, "agent_id"));
    let kind = CLINE.event(&name).map(|e| e.kind);
    // A subagent's start, end and failure are the subagent's, not the session's.
    let meaning = match &agent_id {
        Some(id) => canonical(&name, kind, &raw).in_subagent(id, None),
        None => canonical(&name, kind, &raw),
    };
    Some(HookEvent {
        session_id,
        cwd,
        agent_id,
        ..HookEvent::new(name, Host::Cline, meaning)
    })
}

/// The tool a payload names: Cline's `tool_call` / `tool_result`, else Claude Code's fields (a
/// hand-written payload).
fn tool(raw: &Map<String, Value>, at: &str) -> (String, Option<Value>) {
    match obj(raw, at) {
        Some(call) => (
            st(call, "name").unwrap_or_default(),
            call.get("input").filter(|v| !v.is_null()).cloned(),
        ),
        None => (
            st(raw, "tool_name").unwrap_or_default(),
            raw.get("tool_input").filter(|v| !v.is_null()).cloned(),
        ),
    }
}

/// What a Cline event means, with its fields.
fn canonical(name: &str, kind: Option<EventKind>, raw: &Map<String, Value>) -> Canonical {
    match kind {
        Some(EventKind::SessionStart) => Canonical::SessionStart {
            source: if name == "agent_resume" {
                "resume"
            } else {
                "startup"
            }
            .into(),
        },
        Some(EventKind::SessionEnd) => Canonical::SessionEnd {
            reason: st(raw, "reason").unwrap_or_else(|| "other".into()),
        },
        Some(EventKind::Prompt) => Canonical::Prompt {
            text: obj(raw, "userPromptSubmit")
                .and_then(|p| st(p, "prompt"))
                .or_else(|| st(raw, "prompt"))
                .unwrap_or_default(),
        },
        Some(EventKind::ToolPre) => {
            let (tool, input) = tool(raw, "tool_call");
            Canonical::ToolPre { tool, input }
        }
        Some(EventKind::ToolPost) => {
            let (tool, input) = tool(raw, "tool_result");
            let result = obj(raw, "tool_result");
            let response = result
                .and_then(|r| r.get("output"))
                .or_else(|| raw.get("tool_response"))
                .filter(|v| !v.is_null())
                .cloned();
            match result.and_then(|r| r.get("error")).filter(|e| !e.is_null()) {
                Some(error) => Canonical::ToolFailure {
                    tool,
                    input,
                    error: error
                        .as_str()
                        .map_or_else(|| error.to_string(), str::to_string),
                },
                None => Canonical::ToolPost {
                    tool,
                    input,
                    response,
                },
            }
        }
        Some(EventKind::Stop) => Canonical::Stop {
            active: false,
            last_message: obj(raw, "turn").and_then(|t| st(t, "outputText")),
        },
        Some(EventKind::StopFailure) => Canonical::StopFailure {
            error: obj(raw, "error")
                .and_then(|e| st(e, "message"))
                .unwrap_or_else(|| "error".into()),
        },
        _ => Canonical::Other,
    }
}
