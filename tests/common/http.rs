//! The one loopback HTTP/1.1 server under every fake model server of the host tests (Claude
//! Code's messages API, Gemini's generateContent, Codex's responses, and the chat completions of
//! Copilot CLI, Qwen Code and OpenCode): 127.0.0.1 only, any free port, std only, keep-alive,
//! pipelined requests, `Content-Length` and chunked bodies, `HEAD` answered without a body. Each
//! test writes only its API: a handler from request to response, and its own record of the
//! conversation. Dropping the server stops it.

use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Upper bound on a server's life, whatever the test does.
const MAX_LIFETIME: Duration = Duration::from_secs(600);
/// A keep-alive connection idle this long is closed.
const MAX_IDLE: Duration = Duration::from_secs(120);
/// Largest request accepted (Claude Code's requests are ~120 KB).
const MAX_REQUEST: usize = 64 << 20;

/// One request as read.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// Its headers, names as sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, when it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// What a handler answers.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: &Value) -> Response {
        Response::new(status, "application/json", body.to_string())
    }

    /// 200 with server-sent events.
    pub fn sse(events: String) -> Response {
        Response::new(200, "text/event-stream", events)
    }

    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// With one more header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; stopped when dropped.
pub struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts on 127.0.0.1:0, answering every request with `handler` (one thread a connection).
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let st = stop.clone();
        let accept = std::thread::Builder::new()
            .name("model-server".into())
            .spawn(move || {
                let born = Instant::now();
                while !st.load(Ordering::SeqCst) && born.elapsed() < MAX_LIFETIME {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (st, h) = (st.clone(), handler.clone());
                            let _ = std::thread::Builder::new()
                                .name("model-conn".into())
                                .spawn(move || serve_connection(stream, &st, &*h));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            })
            .unwrap();
        Server {
            port,
            stop,
            accept: Some(accept),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn serve_connection(mut stream: TcpStream, stop: &AtomicBool, handler: &Handler) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    // Bounded: each iteration serves one request; stop, idle or EOF end the loop.
    for _ in 0..10_000 {
        let req = match read_request(&mut stream, &mut buf, stop) {
            Ok(Some(r)) => r,
            _ => return,
        };
        let response = handler(&req);
        if write_response(&mut stream, &response, req.method == "HEAD").is_err() {
            return;
        }
    }
}

/// Reads more bytes into `buf`. `Ok(false)` on EOF, or when the server stops or the connection
/// idles out.
fn fill(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
    idle_since: Instant,
) -> std::io::Result<bool> {
    let mut chunk = [0u8; 64 * 1024];
    loop {
        if stop.load(Ordering::SeqCst) || idle_since.elapsed() > MAX_IDLE {
            return Ok(false);
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > MAX_REQUEST {
                    return Err(std::io::Error::new(
                        ErrorKind::InvalidData,
                        "request too large",
                    ));
                }
                return Ok(true);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Reads one request from the connection (`buf` keeps the bytes of a pipelined next one).
fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
) -> std::io::Result<Option<Request>> {
    let idle_since = Instant::now();
    let head_end = loop {
        if let Some(p) = find(buf, b"\r\n\r\n") {
            break p;
        }
        if !fill(stream, buf, stop, idle_since)? {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    buf.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let mut parts = lines.next().unwrap_or("").split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut req = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let line_end = loop {
                if let Some(p) = find(buf, b"\r\n") {
                    break p;
                }
                if !fill(stream, buf, stop, idle_since)? {
                    return Ok(None);
                }
            };
            let size_str = String::from_utf8_lossy(&buf[..line_end]).into_owned();
            let size =
                usize::from_str_radix(size_str.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(|_| std::io::Error::new(ErrorKind::InvalidData, "bad chunk size"))?;
            buf.drain(..line_end + 2);
            while buf.len() < size + 2 {
                if !fill(stream, buf, stop, idle_since)? {
                    return Ok(None);
                }
            }
            req.body.extend_from_slice(&buf[..size]);
            buf.drain(..size + 2);
            if size == 0 {
                break;
            }
        }
    } else {
        let len: usize = req
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if len > MAX_REQUEST {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                "request too large",
            ));
        }
        while buf.len() < len {
            if !fill(stream, buf, stop, idle_since)? {
                return Ok(None);
            }
        }
        req.body = buf.drain(..len).collect();
    }
    Ok(Some(req))
}

fn write_response(stream: &mut TcpStream, r: &Response, head_only: bool) -> std::io::Result<()> {
    let reason = match r.status {
        200 => "OK",
        404 => "Not Found",
        400 => "Bad Request",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: keep-alive\r\nCache-Control: no-cache\r\n",
        r.status,
        r.content_type,
        r.body.len()
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(&r.body)?;
    }
    stream.flush()
}
