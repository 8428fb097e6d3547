//! A loopback chat-completions server (OpenAI's API, streamed as server-sent events): the HTTP
//! plumbing the real-client tests of the hosts that take such an endpoint share (Copilot CLI,
//! Qwen Code, OpenCode). Each test scripts its replies and keeps its own record of the
//! conversation; the server answers `GET` (the model list) itself.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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

/// Starts the server on 127.0.0.1 for `model`; `answer` scripts each `POST`. Returns the port.
pub fn start(
    model: &'static str,
    answer: impl Fn(&Request) -> Answer + Send + Sync + 'static,
) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(answer);
    let served = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (answer, served) = (answer.clone(), served.clone());
            std::thread::spawn(move || {
                let _ = serve(stream, model, &*answer, &served);
            });
        }
    });
    port
}

fn serve(
    mut stream: TcpStream,
    model: &str,
    answer: &dyn Fn(&Request) -> Answer,
    served: &AtomicUsize,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(());
    }
    let method = line.split_whitespace().next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    if method != "POST" {
        let models = json!({"object": "list", "data": [{"id": model, "object": "model"}]});
        return respond(&mut stream, "application/json", &models.to_string());
    }
    let request = Request {
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let a = answer(&request);
    let n = served.fetch_add(1, Ordering::SeqCst) + 1;
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
    let sse = chunk(a.delta, Value::Null, None)
        + &chunk(json!({}), json!(a.finish), Some(&usage))
        + "data: [DONE]\n\n";
    respond(&mut stream, "text/event-stream", &sse)
}

fn respond(stream: &mut TcpStream, ctype: &str, body: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
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
