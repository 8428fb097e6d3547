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
        let stream = request.body["stream"] == true;
        let a = answer(&request);
        let n = served.fetch_add(1, Ordering::SeqCst) + 1;
        if !stream {
            // A request that does not ask for a stream (OpenHands') gets the whole completion.
            return Response::json(200, &completion(model, n, a));
        }
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

/// The completion of answer `a` (the `n`th) as one JSON object, for a request not streamed: the
/// delta as the message (its tool calls without their stream `index`), with the usage.
fn completion(model: &str, n: usize, a: Answer) -> Value {
    let mut message = a.delta;
    if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for c in calls {
            c.as_object_mut().map(|o| o.remove("index"));
        }
    }
    json!({"id": format!("chatcmpl-hj-{n}"), "object": "chat.completion", "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": a.finish}],
        "usage": {"prompt_tokens": a.prompt_tokens, "completion_tokens": a.output_tokens,
            "total_tokens": a.prompt_tokens + a.output_tokens,
            "prompt_tokens_details": {"cached_tokens": a.cached_tokens}}})
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

/// One response's usage, as the server reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    pub output: u64,
}

impl Usage {
    /// Its price at `price` (USD per token: input, cached input, output).
    pub fn usd(&self, price: [f64; 3]) -> f64 {
        (self.prompt - self.cached) as f64 * price[0]
            + self.cached as f64 * price[1]
            + self.output as f64 * price[2]
    }
}

/// One request the scripted server answered: its body, who sent it (as the test tells them
/// apart: the agent, a summariser, a title generator…) and the usage reported.
#[derive(Clone, Debug)]
pub struct Exchange<R> {
    pub request: Value,
    pub role: R,
    pub usage: Usage,
}

/// The server a host test scripts: `role` tells who sent a request, `reply` answers it given the
/// exchanges before it (the delta, the finish reason, the usage to report); every exchange is
/// kept, in order. Serving while held.
pub struct Scripted<R> {
    pub port: u16,
    exchanges: std::sync::Arc<std::sync::Mutex<Vec<Exchange<R>>>>,
    _http: Server,
}

impl<R: Clone + Send + 'static> Scripted<R> {
    pub fn start(
        model: &'static str,
        role: impl Fn(&Request) -> R + Send + Sync + 'static,
        reply: impl Fn(&Value, &R, &[Exchange<R>]) -> (Value, &'static str, Usage)
            + Send
            + Sync
            + 'static,
    ) -> Scripted<R> {
        let exchanges = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let ex = exchanges.clone();
        let http = start(model, move |request| {
            let mut all = ex.lock().unwrap();
            let role = role(request);
            let (delta, finish, usage) = reply(&request.body, &role, &all);
            all.push(Exchange {
                request: request.body.clone(),
                role,
                usage,
            });
            Answer {
                delta,
                finish,
                prompt_tokens: usage.prompt,
                cached_tokens: usage.cached,
                output_tokens: usage.output,
            }
        });
        Scripted {
            port: http.port,
            exchanges,
            _http: http,
        }
    }

    /// Every exchange so far, in order.
    pub fn exchanges(&self) -> Vec<Exchange<R>> {
        self.exchanges.lock().unwrap().clone()
    }
}

impl<R: std::fmt::Debug> Scripted<R> {
    /// Each request with who sent it, for a kept run's `requests.jsonl` (`client::keep`).
    pub fn requests(&self) -> Vec<Value> {
        self.exchanges
            .lock()
            .unwrap()
            .iter()
            .map(|e| json!({"role": format!("{:?}", e.role), "request": e.request}))
            .collect()
    }
}
