//! The journal as OTLP/HTTP log records (protobuf, the official OpenTelemetry definitions), so
//! hook events land beside Claude Code's own telemetry in any collector. Attribute names follow
//! Claude Code's events (`session.id`, `cost_usd`, `input_tokens`, …) and the GenAI semantic
//! conventions (`gen_ai.usage.input_tokens`, …). The cursor is a file in the journal directory,
//! replaced atomically and moved only after a 2xx: from the journal's side every event is sent
//! until acknowledged, and each carries (`hookjournal.journal_id`, `hookjournal.seq`) for a
//! receiver to drop the rare resend.

use super::mask_url;
use anyhow::{anyhow, bail, Context, Result};
use engine::log::{hex, unhex, Envelope, Hash, Seq, ZERO_HASH};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::resource::v1::Resource;
use projections::derived;
use projections::{Kind, KindOf};
use prost::Message;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Records per request, and the payload bytes after which a request is sent early.
const MAX_RECORDS: usize = 512;
const MAX_BYTES: usize = 4 << 20;

pub struct Target<'a> {
    pub url: &'a str,
    pub dir: &'a Path,
    pub journal_id: &'a str,
    pub machine: &'a str,
    pub redact: bool,
    /// How long one request is retried before the command gives up (None: for ever).
    pub retry_for: Option<Duration>,
}

#[derive(Default)]
pub struct Round {
    pub shipped: u64,
    pub masked: usize,
    pub head: Seq,
}

/// `URL/v1/logs` (a URL already ending in `/v1/logs` or `/v1/traces` names the receiver).
pub fn logs_endpoint(url: &str) -> String {
    format!("{}/v1/logs", receiver(url))
}

/// `URL/v1/traces`, as `logs_endpoint`.
pub fn traces_endpoint(url: &str) -> String {
    format!("{}/v1/traces", receiver(url))
}

/// The receiver's base URL: `url` without a trailing `/v1/logs` or `/v1/traces`.
fn receiver(url: &str) -> &str {
    let u = url.trim_end_matches('/');
    u.strip_suffix("/v1/logs")
        .or_else(|| u.strip_suffix("/v1/traces"))
        .unwrap_or(u)
}

/// `DIR/otlp-<hash of the endpoint>.cursor`: one cursor per receiver and signal (the endpoint
/// names both).
pub fn cursor_path(dir: &Path, endpoint: &str) -> PathBuf {
    let h = blake3::hash(endpoint.as_bytes());
    dir.join(format!("otlp-{}.cursor", &h.to_hex()[..16]))
}

/// A cursor: the last seq a receiver acknowledged, its hash, and (traces) the seq a fold must
/// start from to rebuild the turns still open there (`seq + 1` when none is).
pub struct Cursor {
    /// The last event acknowledged (0: none).
    pub seq: Seq,
    /// Its hash.
    pub hash: Hash,
    /// Where the fold of the open turns starts.
    pub resume: Seq,
}

pub fn read_cursor(path: &Path) -> Result<Cursor> {
    match engine::fs::files::read_small(path, 4096)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
    {
        Ok(s) => {
            let mut it = s.split_whitespace();
            let (Some(seq), Some(hash)) = (it.next(), it.next()) else {
                bail!("{} is not a cursor (\"SEQ HASH\")", path.display());
            };
            let seq: Seq = seq
                .parse()
                .map_err(|_| anyhow!("{} is not a cursor", path.display()))?;
            let hash = unhex(hash).ok_or_else(|| anyhow!("{} is not a cursor", path.display()))?;
            let resume = match it.next() {
                Some(r) => r
                    .parse()
                    .map_err(|_| anyhow!("{} is not a cursor", path.display()))?,
                None => seq + 1,
            };
            Ok(Cursor { seq, hash, resume })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Cursor {
            seq: 0,
            hash: ZERO_HASH,
            resume: 1,
        }),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Replaces the cursor atomically (temp file, fsync, rename).
fn write_cursor(dir: &Path, path: &Path, seq: Seq, hash: &Hash) -> Result<()> {
    write_cursor_resuming(dir, path, seq, hash, None)
}

/// `write_cursor`, with where a fold of the open turns starts (traces).
pub fn write_cursor_resuming(
    dir: &Path,
    path: &Path,
    seq: Seq,
    hash: &Hash,
    resume: Option<Seq>,
) -> Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".otlp-cursor.")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temp file in {}", dir.display()))?;
    match resume {
        Some(r) => writeln!(tmp.as_file_mut(), "{seq} {} {r}", hex(hash))?,
        None => writeln!(tmp.as_file_mut(), "{seq} {}", hex(hash))?,
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// One shipper per journal and receiver at a time: an exclusive `flock` held while it runs.
pub struct CursorLock(#[allow(dead_code)] std::fs::File);

pub fn lock_cursor(dir: &Path, url: &str) -> Result<CursorLock> {
    let path = cursor_path(dir, &logs_endpoint(url)).with_extension("lock");
    let name = path.file_name().expect("a cursor file name");
    let f = engine::fs::door::Dir::open_nofollow(dir)
        .and_then(|d| d.open_in_place(Path::new(name), engine::fs::FILE_MODE))
        .with_context(|| format!("opening {}", path.display()))?;
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!(
            "another `hookjournal ship --otlp` is shipping this journal to {}",
            mask_url(url)
        );
    }
    Ok(CursorLock(f))
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// One round: everything past the cursor, request by request, the cursor moved after each 2xx.
pub fn ship_round(agent: &ureq::Agent, t: &Target) -> Result<Round> {
    let endpoint = logs_endpoint(t.url);
    let cursor = cursor_path(t.dir, &endpoint);
    let Cursor {
        seq: done,
        hash: done_hash,
        ..
    } = read_cursor(&cursor)?;
    let view = engine::state::open_log(t.dir, false)?;
    let head = view.snap.head_seq;
    let mut round = Round {
        head,
        ..Round::default()
    };
    if done > head {
        bail!(
            "{} says seq {done} was sent, but the journal ends at {head}: was it rebuilt? remove that file to send everything again",
            cursor.display()
        );
    }
    if done == head {
        return Ok(round);
    }
    let pricing = engine::settings::Settings::load(t.dir).0.pricing();
    let resource = resource(t);
    let mut records: Vec<LogRecord> = Vec::new();
    let mut bytes = 0usize;
    let mut last: Option<(Seq, Hash)> = None;
    let observed = now_nanos();
    super::stream(&view.snap, done.max(1), head, |e| {
        if e.seq == done {
            if e.hash != done_hash {
                bail!(
                        "{} does not match this journal at seq {done} (the hash differs): remove it to send everything again",
                        cursor.display()
                    );
            }
            return Ok(());
        }
        let (rec, masked) = record(&e, t, &pricing, observed);
        round.masked += masked;
        bytes += e.payload.len();
        records.push(rec);
        last = Some((e.seq, e.hash));
        if records.len() >= MAX_RECORDS || bytes >= MAX_BYTES {
            let n = records.len() as u64;
            send(agent, &endpoint, t, &resource, std::mem::take(&mut records))?;
            let (seq, hash) = last.expect("a record was added");
            write_cursor(t.dir, &cursor, seq, &hash)?;
            round.shipped += n;
            bytes = 0;
        }
        Ok(())
    })?;
    if !records.is_empty() {
        let n = records.len() as u64;
        send(agent, &endpoint, t, &resource, records)?;
        let (seq, hash) = last.expect("records were added");
        write_cursor(t.dir, &cursor, seq, &hash)?;
        round.shipped += n;
    }
    Ok(round)
}

fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub fn kv(key: &str, v: Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    }
}

pub fn s(v: impl Into<String>) -> Value {
    Value::StringValue(v.into())
}

pub fn resource(t: &Target) -> Resource {
    Resource {
        attributes: vec![
            kv("service.name", s("hookjournal")),
            kv("service.version", s(env!("CARGO_PKG_VERSION"))),
            kv("host.name", s(t.machine)),
            kv("hookjournal.journal_id", s(t.journal_id)),
        ],
        ..Default::default()
    }
}

/// `UsageObserved` → `usage_observed`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// One event as a log record: envelope fields and, for usage and session metrics, the token
/// and cost attributes under Claude Code's and the GenAI conventions' names.
pub fn record(
    e: &Envelope,
    t: &Target,
    pricing: &projections::pricing::PricingTable,
    observed: u64,
) -> (LogRecord, usize) {
    let event_name = event_name(e);
    let mut a = envelope_attrs(e, t);
    kind_attrs(&mut a, e, pricing);
    let (payload, masked) = super::shipped_payload(e, t.redact);
    if t.redact {
        a.push(kv("hookjournal.redacted", Value::BoolValue(masked > 0)));
    }
    let body = match String::from_utf8(payload) {
        Ok(text) => Value::StringValue(text),
        Err(b) => Value::BytesValue(b.into_bytes()),
    };
    let malformed = matches!(e.kind(), Kind::Malformed { .. });
    let rec = LogRecord {
        time_unix_nano: (e.recorded_at_us.max(0) as u64) * 1000,
        observed_time_unix_nano: observed,
        severity_number: if malformed {
            SeverityNumber::Warn as i32
        } else {
            SeverityNumber::Info as i32
        },
        severity_text: if malformed { "WARN" } else { "INFO" }.into(),
        body: Some(AnyValue { value: Some(body) }),
        attributes: a,
        event_name,
        ..Default::default()
    };
    (rec, masked)
}

/// `hookjournal.<kind in snake case>`.
fn event_name(e: &Envelope) -> String {
    format!("hookjournal.{}", snake(e.kind().name()))
}

/// The attributes every record has: the envelope's identity, kind, cause and flags.
fn envelope_attrs(e: &Envelope, t: &Target) -> Vec<KeyValue> {
    let mut a = vec![
        kv("event.name", s(event_name(e))),
        kv("hookjournal.journal_id", s(t.journal_id)),
        kv("hookjournal.seq", Value::IntValue(e.seq as i64)),
        kv("hookjournal.kind", s(e.kind().label())),
        kv("hookjournal.host", s(e.host.clone())),
        kv("hookjournal.hash", s(hex(&e.hash))),
    ];
    if let Some(sid) = &e.session_id {
        a.push(kv("session.id", s(sid.clone())));
    }
    if let Some(agent) = &e.agent_id {
        a.push(kv("gen_ai.agent.id", s(agent.clone())));
    }
    match &e.kind() {
        Kind::Hook { name } => a.push(kv("hookjournal.hook_event_name", s(name.clone()))),
        Kind::Malformed { reason } => a.push(kv("hookjournal.reason", s(reason.clone()))),
        Kind::Rewound { session, to_seq } => {
            a.push(kv("hookjournal.rewind.session", s(session.clone())));
            a.push(kv(
                "hookjournal.rewind.to_seq",
                Value::IntValue(*to_seq as i64),
            ));
        }
        _ => {}
    }
    if let Some(c) = e.kind().cause() {
        a.push(kv("hookjournal.cause", Value::IntValue(c as i64)));
    }
    if e.spooled {
        a.push(kv("hookjournal.spooled", Value::BoolValue(true)));
    }
    if let Some(tr) = &e.truncated {
        a.push(kv(
            "hookjournal.truncated.original_len",
            Value::IntValue(tr.original_len as i64),
        ));
    }
    a
}

/// A model response's usage as OTel attributes (ours and the GenAI semantic conventions').
fn usage_attrs(
    a: &mut Vec<KeyValue>,
    model: &str,
    u: &projections::transcript::Usage,
    usd: Option<f64>,
) {
    if !model.is_empty() {
        a.push(kv("model", s(model)));
        a.push(kv("gen_ai.response.model", s(model)));
        if model.starts_with("claude") {
            a.push(kv("gen_ai.provider.name", s("anthropic")));
        }
    }
    a.push(kv("input_tokens", Value::IntValue(u.input_tokens as i64)));
    a.push(kv("output_tokens", Value::IntValue(u.output_tokens as i64)));
    a.push(kv(
        "cache_read_tokens",
        Value::IntValue(u.cache_read as i64),
    ));
    a.push(kv(
        "cache_creation_tokens",
        Value::IntValue(u.cache_write() as i64),
    ));
    a.push(kv(
        "gen_ai.usage.input_tokens",
        Value::IntValue((u.input_tokens + u.cache_read + u.cache_write()) as i64),
    ));
    a.push(kv(
        "gen_ai.usage.output_tokens",
        Value::IntValue(u.output_tokens as i64),
    ));
    if let Some(x) = usd {
        a.push(kv("cost_usd", Value::DoubleValue(x)));
    }
}

/// The usage attributes of a usage reading or a session's metrics.
fn kind_attrs(a: &mut Vec<KeyValue>, e: &Envelope, pricing: &projections::pricing::PricingTable) {
    match &e.kind() {
        Kind::UsageObserved { .. } => {
            if let Some(u) = derived::parse::<derived::UsageObserved>(&e.payload) {
                let r = &u.record;
                usage_attrs(a, &r.model, &r.usage, pricing.cost(&r.model, &r.usage));
                a.push(kv("gen_ai.response.id", s(r.message_id.clone())));
                if !r.request_id.is_empty() {
                    a.push(kv("request_id", s(r.request_id.clone())));
                }
            }
        }
        Kind::SessionMetrics { .. } => {
            if let Some(m) = derived::parse::<derived::SessionMetrics>(&e.payload) {
                let model = m
                    .payload
                    .model
                    .clone()
                    .or(m.model.clone())
                    .unwrap_or_default();
                usage_attrs(a, &model, &m.usage, m.payload.cost_usd.or(m.usd));
                if let Some(d) = m.payload.duration_ms.or(m.duration_ms) {
                    a.push(kv("duration_ms", Value::DoubleValue(d)));
                }
            }
        }
        _ => {}
    }
}

/// POSTs one request of log records (`post`), and says what the receiver rejected.
fn send(
    agent: &ureq::Agent,
    endpoint: &str,
    t: &Target,
    resource: &Resource,
    records: Vec<LogRecord>,
) -> Result<()> {
    let req = ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(resource.clone()),
            scope_logs: vec![ScopeLogs {
                scope: Some(scope()),
                log_records: records,
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let bytes = post(agent, endpoint, t.retry_for, &req.encode_to_vec())?;
    if let Ok(r) = ExportLogsServiceResponse::decode(&bytes[..]) {
        if let Some(p) = r.partial_success.filter(|p| p.rejected_log_records > 0) {
            eprintln!(
                "hookjournal: the OTLP receiver rejected {} record(s): {}",
                p.rejected_log_records,
                crate::output::one_line(&p.error_message)
            );
        }
    }
    Ok(())
}

/// The instrumentation scope of everything hookjournal sends.
pub fn scope() -> InstrumentationScope {
    InstrumentationScope {
        name: "hookjournal".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    }
}

/// A receiver that answered a request with a status a retry cannot change (a 4xx but 408 and
/// 429): it does not take this signal, or not from us.
#[derive(Debug)]
pub struct Refused {
    /// The endpoint, its credentials masked.
    pub endpoint: String,
    /// The HTTP status.
    pub status: u16,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the OTLP receiver {} answered HTTP {}: not retried",
            self.endpoint, self.status
        )
    }
}

impl std::error::Error for Refused {}

/// POSTs one protobuf request body, retrying connection failures, 408, 429 and 5xx with
/// exponential backoff for at most `retry_for` (`None`: for ever); returns the 2xx answer's body.
pub fn post(
    agent: &ureq::Agent,
    endpoint: &str,
    retry_for: Option<Duration>,
    body: &[u8],
) -> Result<Vec<u8>> {
    let started = Instant::now();
    let mut delay = Duration::from_millis(100);
    let mut warned = false;
    loop {
        let outcome = agent
            .post(endpoint)
            .header("Content-Type", "application/x-protobuf")
            .send(body);
        let why = match outcome {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                if (200..300).contains(&status) {
                    return Ok(resp.body_mut().read_to_vec().unwrap_or_default());
                }
                if status != 429 && status != 408 && !(500..600).contains(&status) {
                    return Err(anyhow::Error::new(Refused {
                        endpoint: mask_url(endpoint),
                        status,
                    }));
                }
                format!("HTTP {status}")
            }
            Err(e) => crate::output::one_line(&e.to_string()),
        };
        if retry_for.is_some_and(|limit| started.elapsed() >= limit) {
            bail!(
                "the OTLP receiver {} is unavailable ({why}) after {}s of retries; the cursor is kept, rerun to continue",
                mask_url(endpoint),
                started.elapsed().as_secs()
            );
        }
        if !warned {
            eprintln!(
                "hookjournal: OTLP receiver {} unavailable ({why}); retrying with backoff",
                mask_url(endpoint)
            );
            warned = true;
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_secs(10));
    }
}
