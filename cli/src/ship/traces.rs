//! The journal as OTLP/HTTP traces in the OpenTelemetry GenAI semantic conventions (protobuf to
//! `URL/v1/traces`): one trace per turn, folded by `projections::traces`. Trace and span ids are
//! derived from the journal's id and each span's key (the seqs and host ids it is made of), so a
//! re-ship, a lost cursor or a second machine shipping the same journal sends the same ids, and
//! a receiver that keeps one span per id (Phoenix, Tempo, Jaeger) adds none. The cursor is the
//! logs' own kind of file, per endpoint: the last seq whose finished turns were acknowledged, and
//! where a fold must start to rebuild the turns still open there.

use super::otlp::{self, kv, s, Cursor, Target};
use anyhow::{bail, Result};
use engine::log::{Hash, Seq};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value::Value, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span::{Event, SpanKind as OtlpKind},
    status::StatusCode,
    ResourceSpans, ScopeSpans, Span, Status,
};
use projections::traces::{Attr, Options, SpanKind, Traces, Turn};
use projections::KindOf;
use prost::Message;

/// Spans per request.
const MAX_SPANS: usize = 1024;

/// A fold kept between the rounds of `ship --follow`: the turns open at `upto`.
pub struct Live {
    traces: Traces,
    upto: Seq,
}

/// What one round sent.
#[derive(Default)]
pub struct Round {
    /// Turns (traces) sent.
    pub traces: u64,
    /// Spans sent.
    pub spans: u64,
    /// Secrets masked.
    pub masked: usize,
    /// The journal's head.
    pub head: Seq,
}

/// Sends every turn that ended since the cursor, request by request, moving the cursor after
/// each 2xx. `live` keeps the fold across the rounds of one `ship --follow`.
pub fn ship_round(
    agent: &ureq::Agent,
    t: &Target,
    options: Options,
    live: &mut Option<Live>,
) -> Result<Round> {
    let endpoint = otlp::traces_endpoint(t.url);
    let cursor_file = otlp::cursor_path(t.dir, &endpoint);
    let cursor = otlp::read_cursor(&cursor_file)?;
    let view = engine::state::open_log(t.dir, false)?;
    let head = view.snap.head_seq;
    let mut round = Round {
        head,
        ..Round::default()
    };
    if cursor.seq > head {
        bail!(
            "{} says seq {} was sent, but the journal ends at {head}: was it rebuilt? remove that file to send everything again",
            cursor_file.display(),
            cursor.seq
        );
    }
    if cursor.seq == head {
        return Ok(round);
    }
    let pricing = engine::settings::Settings::load(t.dir).0.pricing();
    let mut traces = match live.take() {
        Some(l) if l.upto == cursor.seq => l.traces,
        _ => rebuild(&view.snap, &cursor, options, &pricing, &cursor_file)?,
    };
    // The cursor at `seq`: its finished turns acknowledged, the open ones begun at RESUME.
    let save = |traces: &Traces, seq: Seq, hash: &Hash| {
        let resume = traces.resume_from().unwrap_or(seq + 1);
        otlp::write_cursor_resuming(t.dir, &cursor_file, seq, hash, Some(resume))
    };
    let mut pending: Vec<Turn> = Vec::new();
    let mut spans = 0usize;
    let mut last: Option<(Seq, Hash)> = None;
    super::stream(&view.snap, cursor.seq + 1, head, |e| {
        // A hook event begins a new commit: whatever the last one recorded for a turn that
        // ended (the usage its stop's transcript read found) is folded, so those turns are whole.
        if matches!(e.kind(), projections::Kind::Hook { .. }) {
            for turn in traces.take_finished() {
                spans += turn.spans.len();
                pending.push(turn);
            }
            if let (true, Some((seq, hash))) = (spans >= MAX_SPANS, last) {
                send_turns(
                    agent,
                    &endpoint,
                    t,
                    &mut round,
                    std::mem::take(&mut pending),
                )?;
                spans = 0;
                save(&traces, seq, &hash)?;
            }
        }
        traces.apply(&e, &pricing);
        last = Some((e.seq, e.hash));
        Ok(())
    })?;
    pending.extend(traces.take_finished());
    send_turns(agent, &endpoint, t, &mut round, pending)?;
    if let Some((seq, hash)) = last {
        save(&traces, seq, &hash)?;
    }
    *live = Some(Live { traces, upto: head });
    Ok(round)
}

/// The fold as it stood at the cursor: the events from where the open turns began, up to the
/// cursor (whose hash must match), with the turns that ended by then dropped (they were sent).
fn rebuild(
    snap: &engine::log::ReadSnapshot,
    cursor: &Cursor,
    options: Options,
    pricing: &projections::pricing::PricingTable,
    file: &std::path::Path,
) -> Result<Traces> {
    let mut traces = Traces::new(options);
    if cursor.seq == 0 {
        return Ok(traces);
    }
    // From where the oldest open turn began; no earlier than the cursor's own event, whose hash
    // is checked (and which is folded only when an open turn holds it).
    let from = cursor.resume.clamp(1, cursor.seq);
    super::stream(snap, from, cursor.seq, |e| {
        if e.seq == cursor.seq && e.hash != cursor.hash {
            bail!(
                "{} does not match this journal at seq {} (the hash differs): remove it to send everything again",
                file.display(),
                cursor.seq
            );
        }
        if e.seq >= cursor.resume {
            traces.apply(&e, pricing);
        }
        Ok(())
    })?;
    drop(traces.take_finished());
    Ok(traces)
}

/// Sends turns in requests of at most `MAX_SPANS` spans, each turn whole in one request.
fn send_turns(
    agent: &ureq::Agent,
    endpoint: &str,
    t: &Target,
    round: &mut Round,
    turns: Vec<Turn>,
) -> Result<()> {
    let mut batch: Vec<Turn> = Vec::new();
    let mut n = 0;
    for turn in turns {
        n += turn.spans.len();
        batch.push(turn);
        if n >= MAX_SPANS {
            send(agent, endpoint, t, round, std::mem::take(&mut batch))?;
            n = 0;
        }
    }
    if !batch.is_empty() {
        send(agent, endpoint, t, round, batch)?;
    }
    Ok(())
}

/// One request: the turns grouped by host (a resource each).
fn send(
    agent: &ureq::Agent,
    endpoint: &str,
    t: &Target,
    round: &mut Round,
    turns: Vec<Turn>,
) -> Result<()> {
    let mut by_host: std::collections::BTreeMap<String, Vec<Span>> = Default::default();
    let (mut traces, mut spans) = (0u64, 0u64);
    for turn in &turns {
        traces += 1;
        let out = by_host.entry(turn.host.clone()).or_default();
        for span in &turn.spans {
            let (span, masked) = encode(t, turn, span);
            round.masked += masked;
            spans += 1;
            out.push(span);
        }
    }
    let req = ExportTraceServiceRequest {
        resource_spans: by_host
            .into_iter()
            .map(|(host, spans)| ResourceSpans {
                resource: Some(resource(t, &host)),
                scope_spans: vec![ScopeSpans {
                    scope: Some(otlp::scope()),
                    spans,
                    ..Default::default()
                }],
                ..Default::default()
            })
            .collect(),
    };
    let bytes = otlp::post(agent, endpoint, t.retry_for, &req.encode_to_vec())?;
    if let Ok(r) = ExportTraceServiceResponse::decode(&bytes[..]) {
        if let Some(p) = r.partial_success.filter(|p| p.rejected_spans > 0) {
            eprintln!(
                "hookjournal: the OTLP receiver rejected {} span(s): {}",
                p.rejected_spans,
                crate::output::one_line(&p.error_message)
            );
        }
    }
    round.traces += traces;
    round.spans += spans;
    Ok(())
}

/// The resource of a host's spans: hookjournal, the machine, the journal, the agent host.
fn resource(t: &Target, host: &str) -> Resource {
    let mut r = otlp::resource(t);
    r.attributes.push(kv("hookjournal.agent.host", s(host)));
    r
}

/// The first `N` bytes of blake3 over the journal's id, a domain and a key.
fn id<const N: usize>(journal_id: &str, domain: &str, key: &str) -> [u8; N] {
    let mut h = blake3::Hasher::new();
    for part in [journal_id, domain, key] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let mut out = [0u8; N];
    out.copy_from_slice(&h.finalize().as_bytes()[..N]);
    out
}

/// The trace id of a turn and the span id of a span key, in this journal.
pub fn trace_id(journal_id: &str, turn_key: &str) -> [u8; 16] {
    id(journal_id, "trace", turn_key)
}

/// See `trace_id`.
pub fn span_id(journal_id: &str, span_key: &str) -> [u8; 8] {
    id(journal_id, "span", span_key)
}

/// A span as OTLP: ids derived, attributes (strings masked with `--redact`), events, status.
fn encode(t: &Target, turn: &Turn, sp: &projections::traces::Span) -> (Span, usize) {
    let mut masked = 0;
    let mut attr = |(k, v): &(String, Attr)| -> KeyValue {
        let v = match v {
            Attr::Str(x) if t.redact => {
                let (m, n) = projections::redact::redact(x);
                masked += n;
                Value::StringValue(m.into_owned())
            }
            Attr::Str(x) => Value::StringValue(x.clone()),
            Attr::Int(i) => Value::IntValue(*i),
            Attr::Double(d) => Value::DoubleValue(*d),
            Attr::Bool(b) => Value::BoolValue(*b),
        };
        kv(k, v)
    };
    let mut attributes: Vec<KeyValue> = sp.attrs.iter().map(&mut attr).collect();
    attributes.push(kv("hookjournal.journal_id", s(t.journal_id)));
    let events = sp
        .events
        .iter()
        .map(|e| Event {
            time_unix_nano: nanos(e.at_us),
            name: e.name.clone(),
            attributes: e.attrs.iter().map(&mut attr).collect(),
            ..Default::default()
        })
        .collect();
    let status = match &sp.error {
        Some(why) => {
            let message = if t.redact {
                let (m, n) = projections::redact::redact(why);
                masked += n;
                m.into_owned()
            } else {
                why.clone()
            };
            Status {
                code: StatusCode::Error as i32,
                message,
            }
        }
        None => Status {
            code: StatusCode::Ok as i32,
            message: String::new(),
        },
    };
    let span = Span {
        trace_id: trace_id(t.journal_id, &turn.key).to_vec(),
        span_id: span_id(t.journal_id, &sp.key).to_vec(),
        parent_span_id: sp
            .parent
            .as_deref()
            .map(|p| span_id(t.journal_id, p).to_vec())
            .unwrap_or_default(),
        name: sp.name.clone(),
        kind: match sp.kind {
            SpanKind::Chat => OtlpKind::Client,
            SpanKind::Agent | SpanKind::Tool => OtlpKind::Internal,
        } as i32,
        start_time_unix_nano: nanos(sp.start_us),
        end_time_unix_nano: nanos(sp.end_us.max(sp.start_us)),
        attributes,
        events,
        status: Some(status),
        ..Default::default()
    };
    (span, masked)
}

fn nanos(us: i64) -> u64 {
    (us.max(0) as u64) * 1000
}
