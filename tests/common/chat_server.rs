//! A loopback chat-completions server (OpenAI's API, streamed as server-sent events) on the
//! shared HTTP server (`http`), for the real-client tests of the hosts that take such an
//! endpoint (Copilot CLI, Qwen Code, OpenCode). Each test scripts its replies and keeps its own
//! record of the conversation; the server answers `GET` (the model list) itself.

use super::http::{self, Response, Server};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One request as the server read it.
pub struct Request {
    /// Its headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Its JSON body (`null` when it is not JSON).
    pub body: Value,
}

impl Request {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the test answers a request with: the message's delta (text or tool calls), the finish
/// reason, and the usage reported.
pub struct Answer {
    pub delta: Value,
    pub finish: &'static str,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// Starts the server on 127.0.0.1 for `model`; `answer` scripts each `POST`. Keep the server
/// while the client runs: dropping it stops it.
pub fn start(
    model: &'static str,
    answer: impl Fn(&Request) -> Answer + Send + Sync + 'static,
) -> Server {
    let served = AtomicUsize::new(0);
    Server::start(move |req: &http::Request| {
        if req.method != "POST" {
            let models = json!({"object": "list", "data": [{"id": model, "object": "model"}]});
            return Response::json(200, &models);
        }
        let request = Request {
            headers: (req.headers.iter())
                .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
                .collect(),
            body: req.json().unwrap_or(Value::Null),
        };
        let a = answer(&request);
        let n = served.fetch_add(1, Ordering::SeqCst) + 1;
        Response::sse(events(model, n, a))
    })
}

/// The streamed completion of answer `a` (the `n`th): its delta, then the finish with the usage.
fn events(model: &str, n: usize, a: Answer) -> String {
    let usage = json!({"prompt_tokens": a.prompt_tokens, "completion_tokens": a.output_tokens,
        "total_tokens": a.prompt_tokens + a.output_tokens,
        "prompt_tokens_details": {"cached_tokens": a.cached_tokens}});
    let chunk = |delta: Value, finish: Value, usage: Option<&Value>| {
        let mut c = json!({"id": format!("chatcmpl-hj-{n}"), "object": "chat.completion.chunk",
            "created": 1, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(u) = usage {
            c["usage"] = u.clone();
        }
        format!("data: {c}\n\n")
    };
    chunk(a.delta, Value::Null, None)
        + &chunk(json!({}), json!(a.finish), Some(&usage))
        + "data: [DONE]\n\n"
}

/// The delta of an assistant message calling tool `name` with `args` (call number `n`).
pub fn tool_call(n: usize, name: &str, args: &Value) -> Value {
    let call = json!({"index": 0, "id": format!("call_hj_{n}"), "type": "function",
        "function": {"name": name, "arguments": args.to_string()}});
    json!({"role": "assistant", "content": null, "tool_calls": [call]})
}

/// The delta of an assistant message saying `text`.
pub fn text(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}
