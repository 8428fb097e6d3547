//! The team store on PostgreSQL. Events are keyed by (journal_id, seq) and inserted with
//! `ON CONFLICT DO NOTHING`; the cursor (`hookjournal_cursor`) lives in the same database and
//! moves in the same transaction as each batch, so a shipper killed mid-batch leaves nothing
//! half-done and a rerun continues where the last commit stopped. Report rows (sessions, cost
//! records, tasks, notifications) are a fold of the shipped events, replaced per journal in the
//! transaction that ships the journal's head.

use super::mask_url;
use ::postgres::binary_copy::BinaryCopyInWriter;
use ::postgres::types::{ToSql, Type};
use ::postgres::{Client, Transaction};
use anyhow::{anyhow, bail, Context, Result};
use engine::log::{Envelope, Seq};
use engine::state;
use projections::fold::{Full, Rewinds};
use projections::{Kind, KindOf};
use std::borrow::Cow;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Key of the session-level advisory lock taken while migrating ("hjschema").
const SCHEMA_LOCK: i64 = 0x686a_7363_6865_6d61;

/// The schema, one migration per version, applied in order. Never edit a released migration:
/// append a new one.
pub const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE hookjournal_journals (
    journal_id       text PRIMARY KEY,
    machine          text NOT NULL,
    path             text,
    first_shipped_at timestamptz NOT NULL DEFAULT now(),
    last_shipped_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE hookjournal_cursor (
    journal_id  text PRIMARY KEY REFERENCES hookjournal_journals,
    shipped_seq bigint NOT NULL,
    head_hash   bytea NOT NULL,
    derived_seq bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE hookjournal_events (
    journal_id       text NOT NULL,
    seq              bigint NOT NULL,
    machine          text NOT NULL,
    recorded_at      timestamptz NOT NULL,
    recorded_at_us   bigint NOT NULL,
    host             text NOT NULL,
    kind             text NOT NULL,
    hook_event       text,
    reason           text,
    cause            bigint,
    rewind_session   text,
    rewind_to        bigint,
    session_id       text,
    agent_id         text,
    spooled          boolean NOT NULL,
    truncated_len    bigint,
    truncated_blake3 bytea,
    payload          jsonb,
    payload_bytes    bytea,
    redacted         boolean NOT NULL,
    prev             bytea NOT NULL,
    hash             bytea NOT NULL,
    PRIMARY KEY (journal_id, seq)
);
CREATE INDEX hookjournal_events_session ON hookjournal_events (session_id);
CREATE INDEX hookjournal_events_recorded_at ON hookjournal_events (recorded_at);
CREATE TABLE hookjournal_sessions (
    journal_id         text NOT NULL,
    session_id         text NOT NULL,
    machine            text NOT NULL,
    host               text,
    cwd                text,
    model              text,
    branch             text,
    status             text,
    tier               text,
    start_at           timestamptz,
    last_at            timestamptz,
    events             bigint NOT NULL,
    first_seq          bigint NOT NULL,
    last_seq           bigint NOT NULL,
    usd                double precision NOT NULL,
    input_tokens       bigint NOT NULL,
    output_tokens      bigint NOT NULL,
    cache_write_tokens bigint NOT NULL,
    cache_read_tokens  bigint NOT NULL,
    row                jsonb NOT NULL,
    PRIMARY KEY (journal_id, session_id)
);
CREATE TABLE hookjournal_cost (
    journal_id            text NOT NULL,
    record_key            text NOT NULL,
    machine               text NOT NULL,
    source                text NOT NULL,
    session_id            text NOT NULL,
    agent_id              text,
    model                 text NOT NULL,
    at                    timestamptz,
    day                   text,
    input_tokens          bigint NOT NULL,
    output_tokens         bigint NOT NULL,
    cache_write_5m_tokens bigint NOT NULL,
    cache_write_1h_tokens bigint NOT NULL,
    cache_read_tokens     bigint NOT NULL,
    total_tokens          bigint NOT NULL,
    cost_usd              double precision,
    PRIMARY KEY (journal_id, record_key)
);
CREATE INDEX hookjournal_cost_day ON hookjournal_cost (day);
CREATE TABLE hookjournal_tasks (
    journal_id  text NOT NULL,
    task_key    text NOT NULL,
    ord         bigint NOT NULL,
    machine     text NOT NULL,
    session_id  text,
    task_id     text NOT NULL,
    subject     text NOT NULL,
    status      text NOT NULL,
    owner       text,
    retry_count bigint NOT NULL,
    fail_reason text,
    updated_at  timestamptz,
    row         jsonb NOT NULL,
    PRIMARY KEY (journal_id, task_key)
);
CREATE TABLE hookjournal_notifications (
    journal_id text NOT NULL,
    seq        bigint NOT NULL,
    machine    text NOT NULL,
    at         timestamptz NOT NULL,
    session_id text,
    type       text NOT NULL,
    title      text,
    message    text NOT NULL,
    PRIMARY KEY (journal_id, seq)
);
CREATE VIEW hookjournal_cost_daily AS
    SELECT day, machine, model, session_id,
           count(*) FILTER (WHERE source = 'transcript') AS responses,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           sum(cache_write_5m_tokens + cache_write_1h_tokens) AS cache_write_tokens,
           sum(cache_read_tokens) AS cache_read_tokens, sum(total_tokens) AS total_tokens,
           sum(cost_usd) AS cost_usd
    FROM hookjournal_cost
    GROUP BY day, machine, model, session_id;
"#];

/// What one `ship --postgres` works with.
pub struct Target<'a> {
    pub url: &'a str,
    pub dir: &'a Path,
    pub journal_id: &'a str,
    pub machine: &'a str,
    pub redact: bool,
    pub batch: usize,
}

/// A round's outcome.
#[derive(Default)]
pub struct Round {
    pub shipped: u64,
    pub masked: usize,
    pub head: Seq,
    pub derived: bool,
}

/// Connects, with TLS when the server offers it (`sslmode=prefer`, the default) or the URL asks
/// for it. Certificates are always verified, against the public roots or, with `sslrootcert=FILE`
/// (as libpq names it), against the CA certificates in that PEM file.
pub fn connect(url: &str) -> Result<Client> {
    let (conn, rootcert) = split_rootcert(url);
    let tls = tls(rootcert.as_deref())?;
    Client::connect(&conn, tls).map_err(|e| {
        // The driver's message and its causes (a TLS handshake failure says why below it).
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        anyhow!(
            "connecting to {}: {}",
            mask_url(url),
            crate::output::one_line(&text)
        )
    })
}

fn tls(rootcert: Option<&str>) -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    match rootcert {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .with_context(|| format!("reading sslrootcert {path}"))?;
            for cert in certs {
                let cert = cert.with_context(|| format!("reading sslrootcert {path}"))?;
                roots
                    .add(cert)
                    .with_context(|| format!("a certificate in {path}"))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS setup")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Takes `sslrootcert` out of a connection string (the driver does not know the option).
fn split_rootcert(conn: &str) -> (String, Option<String>) {
    if conn.contains("://") {
        let Some((base, query)) = conn.split_once('?') else {
            return (conn.to_string(), None);
        };
        let mut root = None;
        let keep: Vec<&str> = query
            .split('&')
            .filter(|p| match p.strip_prefix("sslrootcert=") {
                Some(v) => {
                    root = Some(percent_decode(v));
                    false
                }
                None => true,
            })
            .collect();
        let rest = if keep.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", keep.join("&"))
        };
        return (rest, root);
    }
    let mut root = None;
    let keep: Vec<&str> = conn
        .split_whitespace()
        .filter(|p| match p.strip_prefix("sslrootcert=") {
            Some(v) => {
                root = Some(v.trim_matches('\'').to_string());
                false
            }
            None => true,
        })
        .collect();
    (keep.join(" "), root)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Creates or migrates the schema, under an advisory lock so that many shippers can start at
/// once. Fails when the database was migrated by a newer hookjournal.
pub fn migrate(c: &mut Client) -> Result<()> {
    c.execute("SELECT pg_advisory_lock($1)", &[&SCHEMA_LOCK])
        .context("taking the schema lock")?;
    let r = migrate_locked(c);
    let _ = c.execute("SELECT pg_advisory_unlock($1)", &[&SCHEMA_LOCK]);
    r
}

fn migrate_locked(c: &mut Client) -> Result<()> {
    c.batch_execute(
        "CREATE TABLE IF NOT EXISTS hookjournal_schema (
             version    integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .context("creating hookjournal_schema")?;
    let have = schema_version(c)?;
    if have as usize > MIGRATIONS.len() {
        bail!(
            "the database's hookjournal schema is version {have}, newer than this hookjournal knows ({}); upgrade hookjournal",
            MIGRATIONS.len()
        );
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(have as usize) {
        let version = i as i32 + 1;
        let mut tx = c.transaction()?;
        tx.batch_execute(sql)
            .with_context(|| format!("applying schema migration {version}"))?;
        tx.execute(
            "INSERT INTO hookjournal_schema (version) VALUES ($1)",
            &[&version],
        )?;
        tx.commit()?;
    }
    Ok(())
}

pub fn schema_version(c: &mut Client) -> Result<i32> {
    let row = c
        .query_one(
            "SELECT coalesce(max(version), 0) FROM hookjournal_schema",
            &[],
        )
        .context("reading hookjournal_schema")?;
    Ok(row.get(0))
}

/// Registers the journal and its cursor (at seq 0) if new; prepares the staging table.
pub fn prepare(c: &mut Client, t: &Target) -> Result<()> {
    c.execute(
        "INSERT INTO hookjournal_journals (journal_id, machine, path) VALUES ($1, $2, $3)
         ON CONFLICT (journal_id) DO UPDATE SET machine = EXCLUDED.machine, path = EXCLUDED.path",
        &[
            &t.journal_id,
            &clean(t.machine).as_ref(),
            &clean(&t.dir.display().to_string()).as_ref(),
        ],
    )?;
    c.execute(
        "INSERT INTO hookjournal_cursor (journal_id, shipped_seq, head_hash) VALUES ($1, 0, $2)
         ON CONFLICT (journal_id) DO NOTHING",
        &[&t.journal_id, &engine::log::ZERO_HASH.as_slice()],
    )?;
    c.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS hookjournal_stage (LIKE hookjournal_events)
         ON COMMIT DELETE ROWS",
    )?;
    Ok(())
}

struct Cursor {
    shipped: Seq,
    head: Vec<u8>,
    derived: Seq,
}

fn cursor(c: &mut impl ::postgres::GenericClient, id: &str, lock: bool) -> Result<Cursor> {
    let sql = if lock {
        "SELECT shipped_seq, head_hash, derived_seq FROM hookjournal_cursor WHERE journal_id = $1 FOR UPDATE"
    } else {
        "SELECT shipped_seq, head_hash, derived_seq FROM hookjournal_cursor WHERE journal_id = $1"
    };
    let row = c
        .query_one(sql, &[&id])
        .context("reading the shipping cursor")?;
    Ok(Cursor {
        shipped: row.get::<_, i64>(0) as Seq,
        head: row.get(1),
        derived: row.get::<_, i64>(2) as Seq,
    })
}

/// The journal and the team store disagree about history: retrying cannot help.
#[derive(Debug)]
pub struct Diverged(String);

impl std::fmt::Display for Diverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Diverged {}

fn diverged(id: &str, seq: Seq) -> anyhow::Error {
    anyhow::Error::new(Diverged(format!(
        "this journal no longer matches what was shipped as journal {id} (the hash chain differs at seq {seq}; was it recovered or rebuilt?): ship it under a new id by removing {} from the journal directory",
        super::JOURNAL_ID_FILE
    )))
}

/// One round: a snapshot under a short lock, then everything past the cursor in batches, the
/// last one together with the report rows of the whole fold.
pub fn ship_round(c: &mut Client, t: &Target) -> Result<Round> {
    let view = state::open_log(t.dir, true)?;
    let head = view.snap.head_seq;
    let cur = cursor(c, t.journal_id, false)?;
    if cur.shipped > head {
        return Err(diverged(t.journal_id, head));
    }
    let mut round = Round {
        head,
        ..Round::default()
    };
    if cur.shipped == head && cur.derived == head {
        return Ok(round);
    }
    let settings = engine::settings::Settings::load(t.dir).0;
    let mut full = Full::with_rewinds(Rewinds::from_list(&view.state.global.rewinds));
    let mut batch: Vec<Envelope> = Vec::with_capacity(t.batch);
    let bar = crate::output::progress(head - cur.shipped, "ship");
    super::stream(&view.snap, 0, Seq::MAX, |e| {
        full.apply(&e);
        if e.seq == cur.shipped && e.hash.as_slice() != cur.head.as_slice() {
            return Err(diverged(t.journal_id, e.seq));
        }
        if e.seq > cur.shipped {
            batch.push(e);
            if batch.len() >= t.batch {
                let (n, m) = ship_batch(c, t, &batch, None)?;
                round.shipped += n;
                round.masked += m;
                bar.inc(batch.len() as u64);
                batch.clear();
            }
        }
        Ok(())
    })?;
    let derived = Derived::build(&full, &settings, t, head);
    let (n, m) = ship_batch(c, t, &batch, Some(&derived))?;
    bar.finish_and_clear();
    round.shipped += n;
    round.masked += m + derived.masked;
    round.derived = true;
    Ok(round)
}

/// Ships `batch` (consecutive events) in one transaction with the cursor; with `derived`, also
/// replaces the journal's report rows. Returns the events inserted and the secrets masked.
fn ship_batch(
    c: &mut Client,
    t: &Target,
    batch: &[Envelope],
    derived: Option<&Derived>,
) -> Result<(u64, usize)> {
    let mut tx = c.transaction()?;
    let cur = cursor(&mut tx, t.journal_id, true)?;
    // Another shipper of the same journal may have moved the cursor since we read it.
    let todo: Vec<&Envelope> = batch.iter().filter(|e| e.seq > cur.shipped).collect();
    let mut masked = 0;
    let mut shipped_to = cur.shipped;
    if let Some(first) = todo.first() {
        if first.seq != cur.shipped + 1 {
            return Err(anyhow::Error::new(Diverged(format!(
                "the team store holds journal {} up to seq {}, but this journal continues at {}",
                t.journal_id, cur.shipped, first.seq
            ))));
        }
        if cur.shipped > 0 && first.prev.as_slice() != cur.head.as_slice() {
            return Err(diverged(t.journal_id, cur.shipped));
        }
        masked = copy_events(&mut tx, t, &todo)?;
        tx.execute(
            "INSERT INTO hookjournal_events SELECT * FROM hookjournal_stage ON CONFLICT DO NOTHING",
            &[],
        )
        .context("inserting events")?;
        if let Some(ms) = stall_ms() {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let last = todo.last().expect("non-empty");
        tx.execute(
            "UPDATE hookjournal_cursor SET shipped_seq = $2, head_hash = $3, updated_at = now()
             WHERE journal_id = $1",
            &[&t.journal_id, &(last.seq as i64), &last.hash.as_slice()],
        )?;
        shipped_to = last.seq;
    }
    if let Some(d) = derived {
        // Only a fold at least as new as the stored one, and never ahead of the events.
        if d.seq >= cur.derived && d.seq <= shipped_to {
            d.replace(&mut tx, t)?;
            tx.execute(
                "UPDATE hookjournal_cursor SET derived_seq = $2 WHERE journal_id = $1",
                &[&t.journal_id, &(d.seq as i64)],
            )?;
        }
    }
    tx.execute(
        "UPDATE hookjournal_journals SET last_shipped_at = now() WHERE journal_id = $1",
        &[&t.journal_id],
    )?;
    tx.commit().context("committing a batch")?;
    Ok((todo.len() as u64, masked))
}

/// A test hook: pause inside the batch transaction (after the insert, before the cursor moves),
/// so a test can kill the shipper at exactly that point.
fn stall_ms() -> Option<u64> {
    std::env::var("HOOKJOURNAL_SHIP_STALL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
}

/// PostgreSQL text cannot hold NUL.
fn clean(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(s)
    }
}

fn clean_opt(s: &Option<String>) -> Option<Cow<'_, str>> {
    s.as_deref().map(clean)
}

pub fn time_of_us(us: i64) -> SystemTime {
    if us >= 0 {
        UNIX_EPOCH + Duration::from_micros(us as u64)
    } else {
        UNIX_EPOCH - Duration::from_micros(us.unsigned_abs())
    }
}

fn time_of_rfc3339(ts: &str) -> Option<SystemTime> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| time_of_us(t.timestamp_micros()))
}

/// The payload as JSON when PostgreSQL's jsonb can hold it exactly as parsed (no `\u0000`).
fn payload_json(bytes: &[u8]) -> Option<serde_json::Value> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    match bytes.get(start) {
        Some(b'{') | Some(b'[') => {}
        _ => return None,
    }
    if bytes.windows(6).any(|w| w == b"\\u0000") {
        return None;
    }
    serde_json::from_slice(bytes).ok()
}

const EVENT_TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::TIMESTAMPTZ,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::BOOL,
    Type::INT8,
    Type::BYTEA,
    Type::JSONB,
    Type::BYTEA,
    Type::BOOL,
    Type::BYTEA,
    Type::BYTEA,
];

fn copy_events(tx: &mut Transaction, t: &Target, events: &[&Envelope]) -> Result<usize> {
    let sink = tx
        .copy_in(
            "COPY hookjournal_stage (journal_id, seq, machine, recorded_at, recorded_at_us, host, kind,
             hook_event, reason, cause, rewind_session, rewind_to, session_id, agent_id, spooled,
             truncated_len, truncated_blake3, payload, payload_bytes, redacted, prev, hash)
             FROM STDIN BINARY",
        )
        .context("starting COPY")?;
    let mut w = BinaryCopyInWriter::new(sink, EVENT_TYPES);
    let mut masked = 0;
    for e in events {
        let (payload, n) = super::shipped_payload(e, t.redact);
        masked += n;
        let json = payload_json(&payload);
        let bytes: Option<&[u8]> = if json.is_none() { Some(&payload) } else { None };
        let kind = e.kind();
        let (hook, reason, cause, rewind) = match &kind {
            Kind::Hook { name } => (Some(clean(name)), None, None, None),
            Kind::Malformed { reason } => (None, Some(clean(reason)), None, None),
            Kind::Rewound { session, to_seq } => {
                (None, None, None, Some((clean(session), *to_seq as i64)))
            }
            k => (None, None, k.cause().map(|c| c as i64), None),
        };
        let (rw_session, rw_to) = match rewind {
            Some((s, to)) => (Some(s), Some(to)),
            None => (None, None),
        };
        let trunc_len = e.truncated.as_ref().map(|x| x.original_len as i64);
        let trunc_hash = e.truncated.as_ref().map(|x| x.blake3.to_vec());
        let host = clean(&e.host);
        let session = clean_opt(&e.session_id);
        let agent = clean_opt(&e.agent_id);
        let values: [&(dyn ToSql + Sync); 22] = [
            &t.journal_id,
            &(e.seq as i64),
            &t.machine,
            &time_of_us(e.recorded_at_us),
            &e.recorded_at_us,
            &host.as_ref(),
            &kind.name(),
            &hook.as_deref(),
            &reason.as_deref(),
            &cause,
            &rw_session.as_deref(),
            &rw_to,
            &session.as_deref(),
            &agent.as_deref(),
            &e.spooled,
            &trunc_len,
            &trunc_hash,
            &json,
            &bytes,
            &(t.redact && n > 0),
            &e.prev.as_slice(),
            &e.hash.as_slice(),
        ];
        w.write(&values).context("COPY of events")?;
    }
    w.finish().context("finishing COPY of events")?;
    Ok(masked)
}

/// The report rows of one fold, ready to replace the journal's previous ones.
struct Derived {
    seq: Seq,
    masked: usize,
    sessions: Vec<projections::report::SessionRow>,
    tasks: Vec<projections::tasks::Task>,
    cost: Vec<CostRecordRow>,
    notifications: Vec<projections::fold::NotificationEntry>,
}

struct CostRecordRow {
    key: String,
    source: &'static str,
    session: String,
    agent: Option<String>,
    model: String,
    at: Option<SystemTime>,
    day: Option<String>,
    usage: projections::transcript::Usage,
    total: u64,
    usd: Option<f64>,
}

impl Derived {
    fn build(full: &Full, settings: &engine::settings::Settings, t: &Target, seq: Seq) -> Derived {
        let pricing = settings.pricing();
        let mut masked = 0;
        let mut sessions: Vec<_> = full.state.sessions.values().collect();
        sessions.sort_by_key(|s| s.first_seq);
        let sessions = sessions
            .into_iter()
            .map(|s| {
                let row = projections::report::session_row(s, &pricing, &settings.policy);
                if !t.redact {
                    return row;
                }
                // Masked as JSON, like every row shipped, then typed again.
                let mut v = serde_json::to_value(&row).unwrap_or_default();
                masked += super::redact_json(&mut v);
                serde_json::from_value(v).unwrap_or(row)
            })
            .collect();
        let tasks = full
            .state
            .all_tasks()
            .into_iter()
            .map(|task| {
                let mut task = task.clone();
                if t.redact {
                    let mut v = serde_json::to_value(&task).unwrap_or_default();
                    let n = super::redact_json(&mut v);
                    if n > 0 {
                        if let Ok(back) = serde_json::from_value(v) {
                            masked += n;
                            task = back;
                        }
                    }
                }
                task
            })
            .collect();
        let mut cost: Vec<CostRecordRow> = full
            .cost()
            .by_key
            .iter()
            .map(|(k, r)| CostRecordRow {
                key: k.clone(),
                source: "transcript",
                session: r.session.clone(),
                agent: r.agent_id.clone(),
                model: r.model.clone(),
                at: time_of_rfc3339(&r.timestamp),
                day: Some(r.timestamp.get(..10).unwrap_or("unknown").to_string()),
                usage: r.usage,
                total: r.usage.total(),
                usd: pricing.cost(&r.model, &r.usage),
            })
            .collect();
        // Sessions that reported their own cost in payloads (see `report::cost_rows`).
        for (s, m) in &full.cost().reported {
            if let Some(usd) = m.payload.cost_usd {
                let usage = projections::transcript::Usage {
                    input_tokens: m.payload.tokens_in.unwrap_or(0),
                    output_tokens: m.payload.tokens_out.unwrap_or(0),
                    ..Default::default()
                };
                cost.push(CostRecordRow {
                    key: format!("reported:{s}"),
                    source: "reported",
                    session: s.clone(),
                    agent: None,
                    model: m.payload.model.clone().unwrap_or_default(),
                    at: None,
                    day: None,
                    total: usage.input_tokens + usage.output_tokens,
                    usage,
                    usd: Some(usd),
                });
            }
        }
        let mut notifications: Vec<_> = full.notifications().cloned().collect();
        if t.redact {
            for n in &mut notifications {
                for text in [&mut n.message].into_iter().chain(n.title.as_mut()) {
                    let (m, k) = projections::redact::redact(text);
                    if k > 0 {
                        masked += k;
                        *text = m.into_owned();
                    }
                }
            }
        }
        Derived {
            seq,
            masked,
            sessions,
            tasks,
            cost,
            notifications,
        }
    }

    fn replace(&self, tx: &mut Transaction, t: &Target) -> Result<()> {
        for table in [
            "hookjournal_sessions",
            "hookjournal_cost",
            "hookjournal_tasks",
            "hookjournal_notifications",
        ] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE journal_id = $1"),
                &[&t.journal_id],
            )?;
        }
        self.copy_sessions(tx, t.journal_id, t.machine)?;
        self.copy_cost(tx, t.journal_id, t.machine)?;
        self.copy_tasks(tx, t.journal_id, t.machine)?;
        self.copy_notifications(tx, t.journal_id, t.machine)
    }

    /// The sessions table, one row per session.
    fn copy_sessions(&self, tx: &mut Transaction, id: &str, machine: &str) -> Result<()> {
        let sink = tx.copy_in(
            "COPY hookjournal_sessions (journal_id, session_id, machine, host, cwd, model, branch,
             status, tier, start_at, last_at, events, first_seq, last_seq, usd, input_tokens,
             output_tokens, cache_write_tokens, cache_read_tokens, row) FROM STDIN BINARY",
        )?;
        use Type as T;
        let mut w = BinaryCopyInWriter::new(
            sink,
            &[
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TIMESTAMPTZ,
                T::TIMESTAMPTZ,
                T::INT8,
                T::INT8,
                T::INT8,
                T::FLOAT8,
                T::INT8,
                T::INT8,
                T::INT8,
                T::INT8,
                T::JSONB,
            ],
        );
        for r in &self.sessions {
            let row = json_without_nul(&serde_json::to_value(r).unwrap_or_default());
            w.write(&[
                &id,
                &clean(&r.session_id).as_ref(),
                &machine,
                &clean(&r.host).as_ref(),
                &clean_opt(&r.cwd).as_deref(),
                &clean_opt(&r.model).as_deref(),
                &clean_opt(&r.branch).as_deref(),
                &r.status.as_str(),
                &r.tier.as_str(),
                &time_of_us(r.start_us),
                &time_of_us(r.last_us),
                &(r.events as i64),
                &(r.first_seq as i64),
                &(r.last_seq as i64),
                &r.usd,
                &(r.input_tokens as i64),
                &(r.output_tokens as i64),
                &(r.cache_write_tokens as i64),
                &(r.cache_read_tokens as i64),
                &row,
            ])?;
        }
        w.finish()?;
        Ok(())
    }

    /// The cost table, one row per model response.
    fn copy_cost(&self, tx: &mut Transaction, id: &str, machine: &str) -> Result<()> {
        let sink = tx.copy_in(
            "COPY hookjournal_cost (journal_id, record_key, machine, source, session_id, agent_id,
             model, at, day, input_tokens, output_tokens, cache_write_5m_tokens,
             cache_write_1h_tokens, cache_read_tokens, total_tokens, cost_usd) FROM STDIN BINARY",
        )?;
        use Type as T;
        let mut w = BinaryCopyInWriter::new(
            sink,
            &[
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TIMESTAMPTZ,
                T::TEXT,
                T::INT8,
                T::INT8,
                T::INT8,
                T::INT8,
                T::INT8,
                T::INT8,
                T::FLOAT8,
            ],
        );
        for r in &self.cost {
            let u = &r.usage;
            w.write(&[
                &id,
                &clean(&r.key).as_ref(),
                &machine,
                &r.source,
                &clean(&r.session).as_ref(),
                &clean_opt(&r.agent).as_deref(),
                &clean(&r.model).as_ref(),
                &r.at,
                &r.day,
                &(u.input_tokens as i64),
                &(u.output_tokens as i64),
                &(u.cache_write_5m as i64),
                &(u.cache_write_1h as i64),
                &(u.cache_read as i64),
                &(r.total as i64),
                &r.usd,
            ])?;
        }
        w.finish()?;
        Ok(())
    }

    /// The tasks table, one row per task, in board order.
    fn copy_tasks(&self, tx: &mut Transaction, id: &str, machine: &str) -> Result<()> {
        let sink = tx.copy_in(
            "COPY hookjournal_tasks (journal_id, task_key, ord, machine, session_id, task_id,
             subject, status, owner, retry_count, fail_reason, updated_at, row) FROM STDIN BINARY",
        )?;
        use Type as T;
        let mut w = BinaryCopyInWriter::new(
            sink,
            &[
                T::TEXT,
                T::TEXT,
                T::INT8,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::INT8,
                T::TEXT,
                T::TIMESTAMPTZ,
                T::JSONB,
            ],
        );
        for (i, task) in self.tasks.iter().enumerate() {
            let key = format!("{}:{}", task.session.as_deref().unwrap_or(""), task.id);
            let row = json_without_nul(&serde_json::to_value(task).unwrap_or_default());
            w.write(&[
                &id,
                &clean(&key).as_ref(),
                &(i as i64),
                &machine,
                &clean_opt(&task.session).as_deref(),
                &clean(&task.id).as_ref(),
                &clean(&task.subject).as_ref(),
                &task.status.as_str(),
                &clean_opt(&task.owner).as_deref(),
                &(task.retry_count as i64),
                &clean_opt(&task.fail_reason).as_deref(),
                &task.history.last().map(|h| time_of_us(h.at_us)),
                &row,
            ])?;
        }
        w.finish()?;
        Ok(())
    }

    /// The notification log.
    fn copy_notifications(&self, tx: &mut Transaction, id: &str, machine: &str) -> Result<()> {
        let sink = tx.copy_in(
            "COPY hookjournal_notifications (journal_id, seq, machine, at, session_id, type, title,
             message) FROM STDIN BINARY",
        )?;
        use Type as T;
        let mut w = BinaryCopyInWriter::new(
            sink,
            &[
                T::TEXT,
                T::INT8,
                T::TEXT,
                T::TIMESTAMPTZ,
                T::TEXT,
                T::TEXT,
                T::TEXT,
                T::TEXT,
            ],
        );
        for n in &self.notifications {
            w.write(&[
                &id,
                &(n.seq as i64),
                &machine,
                &time_of_us(n.at_us),
                &clean_opt(&n.session).as_deref(),
                &clean(&n.kind).as_ref(),
                &clean_opt(&n.title).as_deref(),
                &clean(&n.message).as_ref(),
            ])?;
        }
        w.finish()?;
        Ok(())
    }
}

/// jsonb cannot hold `\u0000`: such characters become U+FFFD in report rows.
fn json_without_nul(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::String(s) if s.contains('\0') => {
            serde_json::Value::String(s.replace('\0', "\u{fffd}"))
        }
        serde_json::Value::Array(a) => a.iter().map(json_without_nul).collect(),
        serde_json::Value::Object(o) => o
            .iter()
            .map(|(k, x)| (clean(k).into_owned(), json_without_nul(x)))
            .collect(),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslrootcert_is_taken_out_of_the_connection_string() {
        assert_eq!(
            split_rootcert("postgres://u:p@h/db?sslmode=require&sslrootcert=%2Ftmp%2Fca.pem"),
            (
                "postgres://u:p@h/db?sslmode=require".to_string(),
                Some("/tmp/ca.pem".to_string())
            )
        );
        assert_eq!(
            split_rootcert("postgres://h/db?sslrootcert=/ca.pem"),
            ("postgres://h/db".to_string(), Some("/ca.pem".to_string()))
        );
        assert_eq!(
            split_rootcert("host=h sslrootcert=/ca.pem user=u"),
            ("host=h user=u".to_string(), Some("/ca.pem".to_string()))
        );
        assert_eq!(
            split_rootcert("postgres://h/db"),
            ("postgres://h/db".to_string(), None)
        );
    }

    #[test]
    fn payloads_are_jsonb_only_when_jsonb_holds_them() {
        assert!(payload_json(b"{\"a\":1}").is_some());
        assert!(payload_json(b"\n  [1,2]\n").is_some());
        assert!(payload_json(b"{\"a\":\"x\\u0000y\"}").is_none());
        assert!(payload_json(b"{\"a\":").is_none());
        assert!(payload_json(b"\"just a string\"").is_none());
        assert!(payload_json(b"\xff\xfe").is_none());
    }
}
