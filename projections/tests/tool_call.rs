//! A tool call as the domain reads it (`projections::tool_call`), given each host's tool name,
//! input and result: its kind, the files it read or edited (absolute against the session's
//! directory), the command it ran, the commit that made, and its one-line subject.

use projections::event;
use projections::host::Host;
use projections::tool_call::{ToolCall, ToolKind};
use serde_json::json;

fn call(tool: &str, input: serde_json::Value, response: serde_json::Value) -> ToolCall {
    ToolCall::read(tool, &input, &response, Some("/work/app"))
}

#[test]
fn given_claude_codes_edit_and_read_when_read_then_each_names_its_file() {
    let edit = call(
        "Edit",
        json!({"file_path": "/work/app/src/lib.rs"}),
        json!({}),
    );
    assert_eq!(edit.kind, ToolKind::Edit);
    assert_eq!(edit.edited, ["/work/app/src/lib.rs"]);
    assert!(edit.read.is_empty());
    assert_eq!(edit.subject, "/work/app/src/lib.rs");

    let read = call("Read", json!({"file_path": "README.md"}), json!({}));
    assert_eq!(
        (read.kind, read.read),
        (ToolKind::Read, vec!["/work/app/README.md".to_string()])
    );
}

#[test]
fn given_a_git_commit_in_a_shell_tool_when_read_then_the_commit_is_its_hash_and_message() {
    let bash = call(
        "Bash",
        json!({"command": "git commit -m 'Fix the parser'"}),
        json!({"stdout": "[main 1a2b3c4] Fix the parser\n 1 file changed"}),
    );
    assert_eq!(bash.kind, ToolKind::Shell);
    assert_eq!(
        bash.command.as_deref(),
        Some("git commit -m 'Fix the parser'")
    );
    assert_eq!(
        bash.commit,
        Some(("1a2b3c4".to_string(), "Fix the parser".to_string()))
    );
    // The same output from a tool that runs no shell is no commit.
    let other = call(
        "Read",
        json!({"command": "git commit"}),
        json!({"stdout": "[main 1a2b3c4] Fix the parser"}),
    );
    assert_eq!(other.commit, None);
}

#[test]
fn given_codexs_patch_and_clines_lists_when_read_then_every_file_is_named_in_order() {
    let patch =
        "*** Begin Patch\n*** Update File: src/a.rs\n*** Add File: /tmp/b.rs\n*** End Patch";
    let codex = call("apply_patch", json!({"command": patch}), json!({}));
    assert_eq!(codex.kind, ToolKind::Edit);
    assert_eq!(codex.edited, ["/work/app/src/a.rs", "/tmp/b.rs"]);

    let cline = call(
        "read_files",
        json!({"files": [{"path": "notes.txt"}, {"path": "/etc/hosts"}]}),
        json!([]),
    );
    assert_eq!(cline.kind, ToolKind::Read);
    assert_eq!(cline.read, ["/work/app/notes.txt", "/etc/hosts"]);
    assert_eq!(cline.subject, "/work/app/notes.txt");

    let commands = call(
        "run_commands",
        json!({"commands": ["cargo fmt", "cargo test"]}),
        json!([]),
    );
    assert_eq!(commands.kind, ToolKind::Shell);
    assert_eq!(commands.subject, "cargo fmt; cargo test");
}

#[test]
fn given_a_directory_view_and_a_web_fetch_when_read_then_no_file_is_read() {
    let auggie = call(
        "view",
        json!({"path": "src", "type": "directory"}),
        json!({}),
    );
    assert!(auggie.read.is_empty());
    assert_eq!(auggie.kind, ToolKind::Other);
    let web = call("WebFetch", json!({"url": "https://example.com"}), json!({}));
    assert_eq!(
        (web.kind, web.subject.as_str()),
        (ToolKind::Web, "https://example.com")
    );
}

#[test]
fn given_a_stored_payload_when_its_event_is_read_then_its_call_has_the_hosts_id_and_outcome() {
    let pre = br#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/work/app","tool_name":"mcp__github__search","tool_use_id":"toolu_1","tool_input":{"query":"rate limit"}}"#;
    let ev = event::parse(&Host::Claude, pre).unwrap();
    let c = ev.tool_call().unwrap();
    assert_eq!(c.id.as_deref(), Some("toolu_1"));
    assert_eq!((c.kind, c.ok), (ToolKind::Mcp, None));
    assert_eq!(c.subject, "rate limit");

    let failed = br#"{"hook_event_name":"PostToolUseFailure","session_id":"s","cwd":"/work/app","tool_name":"Edit","tool_use_id":"toolu_2","tool_input":{"file_path":"x.rs"},"error":"no match"}"#;
    let c = event::parse(&Host::Claude, failed)
        .unwrap()
        .tool_call()
        .unwrap();
    assert_eq!(c.ok, Some(false));
    assert_eq!(c.edited, ["/work/app/x.rs"]);

    let prompt = br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hi"}"#;
    assert_eq!(
        event::parse(&Host::Claude, prompt).unwrap().tool_call(),
        None
    );
}

#[test]
fn given_kiro_clis_tools_when_read_then_its_reads_writes_commands_and_mcp_tools_are_told() {
    let read = call(
        "fs_read",
        json!({"operations": [{"mode": "Line", "path": "/work/app/src/server.ts"}]}),
        json!({}),
    );
    assert_eq!(
        (read.kind, read.read),
        (ToolKind::Read, vec!["/work/app/src/server.ts".to_string()])
    );
    let write = call(
        "fs_write",
        json!({"command": "create", "path": "notes.md"}),
        json!({}),
    );
    assert_eq!(
        (write.kind, write.edited),
        (ToolKind::Edit, vec!["/work/app/notes.md".to_string()])
    );
    let bash = call("execute_bash", json!({"command": "npm test"}), json!({}));
    assert_eq!(
        (bash.kind, bash.command.as_deref()),
        (ToolKind::Shell, Some("npm test"))
    );
    assert_eq!(
        call("@git/git_status", json!({}), json!({})).kind,
        ToolKind::Mcp
    );
}

#[test]
fn given_a_call_that_names_a_file_when_read_then_its_subject_is_the_file() {
    let write = call(
        "fs_write",
        json!({"command": "create", "path": "notes.md"}),
        json!({}),
    );
    assert_eq!(write.subject, "/work/app/notes.md");
}
