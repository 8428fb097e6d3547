//! A scripted Anthropic Messages API server for the real-Claude-Code end-to-end test.
//!
//! * Served by the host tests' one loopback HTTP server (`common::http`: 127.0.0.1 only,
//!   keep-alive, every loop bounded, stopped when dropped); this file is the API alone.
//! * Each `POST /v1/messages` is answered from a script chosen by the request's *content*
//!   (the user's prompt text, the ids of the tool results it carries, the compaction prompt),
//!   never by counting requests. Responses stream as SSE like the real API: `message_start`,
//!   `content_block_start/delta/stop` (text via `text_delta`, tool calls via `input_json_delta`),
//!   `message_delta` (stop_reason + usage), `message_stop`, with a `request-id` header.
//! * Every exchange is recorded (method, path, body, the scripted kind, the usage answered,
//!   the phase the test was in) so the test can inspect what Claude Code really sent.

use crate::common::http::{self, Response};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

// ---------------------------------------------------------------- the script's vocabulary

/// The first prompt contains this marker; it starts the scripted tool sequence.
pub const START_MARKER: &str = "HJ-E2E-START";
/// The prompt the script gives the subagent (Agent tool) contains this marker.
pub const SUBAGENT_MARKER: &str = "HJ-E2E-SUBAGENT";
/// The prompt of the turn after the compaction.
pub const NEXT_PROMPT: &str = "what next?";
/// Claude Code's compaction request ends with a prompt containing this (2.1.197:
/// "Your task is to create a detailed summary of the conversation so far, ...").
pub const COMPACT_NEEDLE: &str = "detailed summary of the conversation";

pub const TASK_A_SUBJECT: &str = "Draft the hj-e2e notes file";
pub const TASK_B_SUBJECT: &str = "Review the hj-e2e notes file";
pub const NOTES_FILE: &str = "hj_e2e_notes.txt";
pub const MISSING_FILE: &str = "hj_e2e_missing.txt";
pub const BASH_COMMAND: &str = "echo hj-e2e-bash-ok";
pub const FINAL_TEXT: &str = "HJ-E2E: all scripted steps are done.";
pub const SUBAGENT_TEXT: &str = "HJ-E2E subagent reporting: hi.";
pub const SUMMARY_TEXT: &str =
    "HJ-E2E compact summary: two tasks were created, the notes file was written and edited.";
pub const AFTER_COMPACT_TEXT: &str = "HJ-E2E: nothing else to do after the compaction.";
/// The prompt of the forked turn (`--resume SID --fork-session`).
pub const FORK_PROMPT: &str = "HJ-E2E-FORK carry on in a fork.";
pub const FORK_TEXT: &str = "HJ-E2E: the fork carries on.";
/// The prompt of the turn that switches the model (`--resume FORK --model SWITCH_MODEL`).
pub const SWITCH_PROMPT: &str = "HJ-E2E-SWITCH carry on with another model.";
pub const SWITCH_TEXT: &str = "HJ-E2E: carrying on with the other model.";
/// Last scripted tool step of turn 1; the next main-chain request gets the final text.
pub const LAST_STEP: u32 = 8;

/// What a request was recognised as (and so how it was answered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Main chain of turn 1: answer with the tool calls of step N (1..=LAST_STEP).
    Step(u32),
    /// Main chain of turn 1 after the last tool step: the final text answer.
    Final,
    /// The subagent launched by step 7's Agent call.
    Subagent,
    /// Claude Code's /compact summary request.
    CompactSummary,
    /// The "what next?" turn after the compaction.
    AfterCompact,
    /// The forked turn.
    Fork,
    /// The turn after the model switch.
    Switch,
    /// Any other Messages request (title generation, side questions, unknown): a short text.
    Side,
    /// POST /v1/messages/count_tokens.
    CountTokens,
    /// HEAD/GET probes and anything else.
    Other,
}

/// Token usage of one scripted response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    /// 5-minute and 1-hour cache writes; `cache_creation_input_tokens` is their sum.
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub cache_read: u64,
    /// Send the `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}` split,
    /// as the Anthropic API does. Without it (API gateways, older API versions) Claude Code
    /// writes `cache_creation: {0, 0}` next to a non-zero `cache_creation_input_tokens` in the
    /// transcript and prices all of it as 5-minute writes.
    pub split: bool,
}

impl Usage {
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }
    pub fn add(&mut self, o: &Usage) {
        self.input += o.input;
        self.output += o.output;
        self.cache_write_5m += o.cache_write_5m;
        self.cache_write_1h += o.cache_write_1h;
        self.cache_read += o.cache_read;
    }
    fn to_json(self, output_tokens: u64) -> Value {
        let mut u = json!({
            "input_tokens": self.input,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": self.cache_write(),
            "cache_read_input_tokens": self.cache_read,
        });
        if self.split {
            u["cache_creation"] = json!({
                "ephemeral_5m_input_tokens": self.cache_write_5m,
                "ephemeral_1h_input_tokens": self.cache_write_1h,
            });
        }
        u
    }
}

/// The scripted usage of each kind of response. Distinct numbers everywhere, so that a
/// response counted twice or missed shows up in the totals. Step 2 and the subagent write to the
/// 1-hour cache (priced 2× input); the after-compaction answer comes without the
/// `cache_creation` split.
pub fn scripted_usage(kind: &Kind) -> Usage {
    let u = |input, output, cache_write_5m, cache_write_1h, cache_read, split| Usage {
        input,
        output,
        cache_write_5m,
        cache_write_1h,
        cache_read,
        split,
    };
    match kind {
        Kind::Step(k) => {
            let k = *k as u64;
            let cw5 = if k == 1 { 4000 } else { 150 + k };
            let cw1h = if k == 2 { 2500 } else { 0 };
            u(1000 + 7 * k, 30 + k, cw5, cw1h, 4000 * k, true)
        }
        Kind::Final => u(900, 25, 120, 0, 36000, true),
        Kind::Subagent => u(700, 33, 1200, 300, 0, true),
        Kind::CompactSummary => u(5000, 300, 0, 0, 0, true),
        Kind::AfterCompact => u(2000, 40, 300, 0, 1000, false),
        Kind::Fork => u(1500, 45, 210, 0, 2000, true),
        Kind::Switch => u(1100, 22, 130, 0, 3000, true),
        Kind::Side => u(50, 5, 0, 0, 0, true),
        Kind::CountTokens | Kind::Other => Usage::default(),
    }
}

/// One request/response exchange, as recorded.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// Order of arrival, from 1.
    pub n: u64,
    /// The phase the test had set when the request arrived (see `ModelServer::set_phase`).
    pub phase: usize,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Value>,
    pub kind: Kind,
    pub status: u16,
    /// For answered Messages requests: the usage, message id and request id we sent.
    pub usage: Option<Usage>,
    pub message_id: Option<String>,
    pub request_id: Option<String>,
    pub model: Option<String>,
}

impl Exchange {
    pub fn is_messages(&self) -> bool {
        self.method == "POST" && path_is(&self.path, "/v1/messages")
    }
    /// `max_tokens` of a Messages request.
    pub fn max_tokens(&self) -> Option<u64> {
        self.json.as_ref()?.get("max_tokens")?.as_u64()
    }
    /// One line for failure messages.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "#{} phase={} {} {} kind={:?}",
            self.n, self.phase, self.method, self.path, self.kind
        );
        if let Some(m) = &self.model {
            s.push_str(&format!(" model={m}"));
        }
        if let Some(mt) = self.max_tokens() {
            s.push_str(&format!(" max_tokens={mt}"));
        }
        if let Some(j) = &self.json {
            if let Some(msgs) = j.get("messages").and_then(Value::as_array) {
                s.push_str(&format!(" messages={}", msgs.len()));
                if let Some(last) = msgs.last() {
                    let p = prompt_texts(last).join(" | ");
                    s.push_str(&format!(" last-prompt={:?}", excerpt(&p, 100)));
                }
            }
        }
        s
    }
}

fn path_is(path: &str, want: &str) -> bool {
    let p = path.split('?').next().unwrap_or("");
    p == want
}

// ---------------------------------------------------------------- message inspection helpers

/// The content blocks of a message (a string content becomes one text block).
pub fn blocks(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

/// The text of a text block.
pub fn block_text(block: &Value) -> Option<&str> {
    if block.get("type").and_then(Value::as_str) == Some("text") {
        block.get("text").and_then(Value::as_str)
    } else {
        None
    }
}

/// The texts of a message the *user* typed (text blocks that are not `<system-reminder>`s,
/// hook outputs, local-command wrappers or caveats).
pub fn prompt_texts(message: &Value) -> Vec<String> {
    blocks(message)
        .iter()
        .filter_map(block_text)
        .map(str::trim)
        .filter(|t| {
            !t.is_empty()
                && !t.starts_with("<system-reminder>")
                && !t.starts_with("<local-command")
                && !t.starts_with("<command-")
        })
        .map(String::from)
        .collect()
}

/// All text blocks of a request's messages, with (message index, block index, role).
pub fn all_text_blocks(request: &Value) -> Vec<(usize, usize, String, String)> {
    let mut out = Vec::new();
    if let Some(msgs) = request.get("messages").and_then(Value::as_array) {
        for (i, m) in msgs.iter().enumerate() {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            for (j, b) in blocks(m).iter().enumerate() {
                if let Some(t) = block_text(b) {
                    out.push((i, j, role.clone(), t.to_string()));
                }
            }
        }
    }
    out
}

/// Text content of a tool_result block (string or array of text blocks).
fn tool_result_text(block: &Value) -> String {
    match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(block_text)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `toolu_hj_<step>_<n>` → step.
fn scripted_step_of(tool_use_id: &str) -> Option<u32> {
    let rest = tool_use_id.strip_prefix("toolu_hj_")?;
    rest.split('_').next()?.parse().ok()
}

/// The first `#<id>` token in a text ("Task #1 created successfully: ...").
fn hash_id(text: &str) -> Option<String> {
    let at = text.find('#')?;
    let id: String = text[at + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    if id.is_empty() {
        None
    } else {
        Some(id)
    }
}

pub fn excerpt(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}…")
    }
}

// ---------------------------------------------------------------- the script

/// Decide what a Messages request is, by content.
pub fn classify(req: &Value) -> Kind {
    let msgs = match req.get("messages").and_then(Value::as_array) {
        Some(m) if !m.is_empty() => m,
        _ => return Kind::Side,
    };
    let last = &msgs[msgs.len() - 1];
    let prompt = prompt_texts(last).join("\n");
    if prompt.contains(COMPACT_NEEDLE) {
        return Kind::CompactSummary;
    }
    let scripted_results: Vec<u32> = blocks(last)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .filter_map(scripted_step_of)
        .collect();
    if let Some(step) = scripted_results.iter().max() {
        return if *step >= LAST_STEP {
            Kind::Final
        } else {
            Kind::Step(step + 1)
        };
    }
    if prompt.contains(SUBAGENT_MARKER) {
        return Kind::Subagent;
    }
    if prompt.contains(START_MARKER) {
        return Kind::Step(1);
    }
    if prompt.trim() == NEXT_PROMPT {
        return Kind::AfterCompact;
    }
    if prompt.contains(FORK_PROMPT) {
        return Kind::Fork;
    }
    if prompt.contains(SWITCH_PROMPT) {
        return Kind::Switch;
    }
    Kind::Side
}

/// Task ids Claude Code gave the two TaskCreate calls of step 1, read from their results.
fn created_task_ids(req: &Value) -> (String, String) {
    let mut a = None;
    let mut b = None;
    if let Some(msgs) = req.get("messages").and_then(Value::as_array) {
        for m in msgs {
            for blk in blocks(m) {
                if blk.get("type").and_then(Value::as_str) != Some("tool_result") {
                    continue;
                }
                let id = blk.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                if id == "toolu_hj_1_0" {
                    a = hash_id(&tool_result_text(&blk));
                } else if id == "toolu_hj_1_1" {
                    b = hash_id(&tool_result_text(&blk));
                }
            }
        }
    }
    (
        a.unwrap_or_else(|| "1".into()),
        b.unwrap_or_else(|| "2".into()),
    )
}

enum Block {
    Text(String),
    Tool {
        id: String,
        name: &'static str,
        input: Value,
    },
}

fn tool(step: u32, n: u32, name: &'static str, input: Value) -> Block {
    Block::Tool {
        id: format!("toolu_hj_{step}_{n}"),
        name,
        input,
    }
}

/// The content of the scripted answer to a request of this kind.
fn script(kind: &Kind, req: &Value, project: &Path) -> (Vec<Block>, &'static str) {
    let notes = project.join(NOTES_FILE).to_string_lossy().into_owned();
    let missing = project.join(MISSING_FILE).to_string_lossy().into_owned();
    let step_text = |k: u32| Block::Text(format!("HJ-E2E step {k}."));
    match kind {
        Kind::Step(k) => {
            let k = *k;
            let (task_a, _task_b) = if k >= 2 {
                created_task_ids(req)
            } else {
                (String::new(), String::new())
            };
            let tools = match k {
                1 => vec![
                    tool(
                        1,
                        0,
                        "TaskCreate",
                        json!({
                            "subject": TASK_A_SUBJECT,
                            "description": format!("Create {NOTES_FILE} with a greeting"),
                            "activeForm": "Drafting the notes file",
                        }),
                    ),
                    tool(
                        1,
                        1,
                        "TaskCreate",
                        json!({
                            "subject": TASK_B_SUBJECT,
                            "description": format!("Read {NOTES_FILE} again and check it"),
                        }),
                    ),
                ],
                2 => vec![tool(
                    2,
                    0,
                    "TaskUpdate",
                    json!({"taskId": task_a, "status": "in_progress"}),
                )],
                3 => vec![tool(
                    3,
                    0,
                    "Bash",
                    json!({"command": BASH_COMMAND, "description": "Print a marker"}),
                )],
                4 => vec![tool(
                    4,
                    0,
                    "Write",
                    json!({"file_path": notes, "content": "hello from the hj e2e test\n"}),
                )],
                5 => vec![tool(
                    5,
                    0,
                    "Edit",
                    json!({"file_path": notes, "old_string": "hello", "new_string": "hello (edited)"}),
                )],
                6 => vec![tool(6, 0, "Read", json!({"file_path": missing}))],
                7 => vec![tool(
                    7,
                    0,
                    "Agent",
                    json!({
                        "description": "Say hi",
                        "prompt": format!("{SUBAGENT_MARKER}: reply with one short sentence."),
                        "subagent_type": "general-purpose",
                    }),
                )],
                _ => vec![tool(
                    k,
                    0,
                    "TaskUpdate",
                    json!({"taskId": task_a, "status": "completed"}),
                )],
            };
            let mut v = vec![step_text(k)];
            v.extend(tools);
            (v, "tool_use")
        }
        Kind::Final => (vec![Block::Text(FINAL_TEXT.into())], "end_turn"),
        Kind::Subagent => (vec![Block::Text(SUBAGENT_TEXT.into())], "end_turn"),
        Kind::CompactSummary => (
            vec![Block::Text(format!(
                "<analysis>HJ-E2E analysis.</analysis>\n<summary>{SUMMARY_TEXT}</summary>"
            ))],
            "end_turn",
        ),
        Kind::AfterCompact => (vec![Block::Text(AFTER_COMPACT_TEXT.into())], "end_turn"),
        Kind::Fork => (vec![Block::Text(FORK_TEXT.into())], "end_turn"),
        Kind::Switch => (vec![Block::Text(SWITCH_TEXT.into())], "end_turn"),
        _ => (vec![Block::Text("OK".into())], "end_turn"),
    }
}

fn sse(out: &mut Vec<u8>, event: &str, data: Value) {
    out.extend_from_slice(format!("event: {event}\ndata: {data}\n\n").as_bytes());
}

fn stream_body(
    message_id: &str,
    model: &str,
    content: &[Block],
    stop: &str,
    usage: Usage,
) -> Vec<u8> {
    let mut out = Vec::new();
    sse(
        &mut out,
        "message_start",
        json!({
            "type": "message_start",
            "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": usage.to_json(1),
            }
        }),
    );
    for (i, b) in content.iter().enumerate() {
        match b {
            Block::Text(t) => {
                sse(
                    &mut out,
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                // Two deltas, as a real stream would split it.
                let cut = t
                    .char_indices()
                    .nth(t.chars().count() / 2)
                    .map(|(p, _)| p)
                    .unwrap_or(0);
                for part in [&t[..cut], &t[cut..]] {
                    if !part.is_empty() {
                        sse(
                            &mut out,
                            "content_block_delta",
                            json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": part}}),
                        );
                    }
                }
            }
            Block::Tool { id, name, input } => {
                sse(
                    &mut out,
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                let js = input.to_string();
                let cut = js
                    .char_indices()
                    .nth(js.chars().count() / 2)
                    .map(|(p, _)| p)
                    .unwrap_or(0);
                for part in [&js[..cut], &js[cut..]] {
                    sse(
                        &mut out,
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": part}}),
                    );
                }
            }
        }
        sse(
            &mut out,
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    sse(
        &mut out,
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": usage.to_json(usage.output),
        }),
    );
    sse(&mut out, "message_stop", json!({"type": "message_stop"}));
    out
}

fn message_json(
    message_id: &str,
    model: &str,
    content: &[Block],
    stop: &str,
    usage: Usage,
) -> Value {
    let content: Vec<Value> = content
        .iter()
        .map(|b| match b {
            Block::Text(t) => json!({"type": "text", "text": t}),
            Block::Tool { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        })
        .collect();
    json!({
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": usage.to_json(usage.output),
    })
}

// ---------------------------------------------------------------- the server

struct Shared {
    phase: AtomicUsize,
    counter: AtomicU64,
    log: Mutex<Vec<Exchange>>,
    project: PathBuf,
}

/// The scripted messages API on the shared loopback server (`common::http`).
pub struct ModelServer {
    pub port: u16,
    shared: Arc<Shared>,
    /// Serving while the test holds it.
    _http: http::Server,
}

impl ModelServer {
    /// Start on 127.0.0.1:0. `project` is the directory the scripted Write/Edit/Read target.
    pub fn start(project: &Path) -> std::io::Result<ModelServer> {
        let shared = Arc::new(Shared {
            phase: AtomicUsize::new(0),
            counter: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
            project: project.to_path_buf(),
        });
        let sh = shared.clone();
        let http = http::Server::start(move |req| answer(req, &sh));
        Ok(ModelServer {
            port: http.port,
            shared,
            _http: http,
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Requests arriving from now on are recorded with this phase.
    pub fn set_phase(&self, phase: usize) {
        self.shared.phase.store(phase, Ordering::SeqCst);
    }

    /// A copy of every exchange so far, in order of arrival.
    pub fn exchanges(&self) -> Vec<Exchange> {
        let mut v = self
            .shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        v.sort_by_key(|e| e.n);
        v
    }
}

/// One request answered as the script says, and recorded.
fn answer(req: &http::Request, sh: &Shared) -> Response {
    let n = sh.counter.fetch_add(1, Ordering::SeqCst) + 1;
    let phase = sh.phase.load(Ordering::SeqCst);
    let json: Option<Value> = req.json();
    let mut ex = Exchange {
        n,
        phase,
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.clone(),
        body: req.body.clone(),
        json: json.clone(),
        kind: Kind::Other,
        status: 200,
        usage: None,
        message_id: None,
        request_id: None,
        model: None,
    };
    let request_id = format!("req_hj_{n:04}");
    let response = if req.method == "POST" && path_is(&req.path, "/v1/messages/count_tokens") {
        ex.kind = Kind::CountTokens;
        let body = json!({"input_tokens": (req.body.len() / 4).max(1)});
        Response::json(200, &body).header("request-id", request_id)
    } else if req.method == "POST" && path_is(&req.path, "/v1/messages") {
        match &json {
            Some(j) => {
                let kind = classify(j);
                let usage = scripted_usage(&kind);
                let model = j
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or("claude-sonnet-4-5-20250929")
                    .to_string();
                let message_id = format!("msg_hj_{n:04}");
                let (content, stop) = script(&kind, j, &sh.project);
                ex.kind = kind;
                ex.usage = Some(usage);
                ex.message_id = Some(message_id.clone());
                ex.request_id = Some(request_id.clone());
                ex.model = Some(model.clone());
                let response = if j.get("stream").and_then(Value::as_bool).unwrap_or(false) {
                    let body = stream_body(&message_id, &model, &content, stop, usage);
                    Response::new(200, "text/event-stream", body)
                } else {
                    let body = message_json(&message_id, &model, &content, stop, usage);
                    Response::json(200, &body)
                };
                response.header("request-id", request_id)
            }
            None => {
                ex.status = 400;
                let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "body is not JSON"}});
                Response::json(400, &body).header("request-id", request_id)
            }
        }
    } else if req.method == "HEAD" || req.method == "GET" {
        // Connectivity probes (Claude Code sends `HEAD /` before its first request).
        Response::new(200, "application/json", "{}")
    } else {
        ex.status = 404;
        let body = json!({"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}});
        Response::json(404, &body)
    };
    sh.log.lock().unwrap_or_else(|e| e.into_inner()).push(ex);
    response
}
