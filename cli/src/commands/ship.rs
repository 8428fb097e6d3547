//! `ship --postgres URL | --otlp URL [--follow]`: copies the journal to a team store and/or an
//! OpenTelemetry receiver (traces in the GenAI conventions, and log records), exactly once from
//! the journal's side (see `crate::ship`).

use crate::cli_util::CommandHelper;
use crate::ship::{self, mask_url, otlp, pg, traces};
use anyhow::{bail, Result};

use std::process::ExitCode;
use std::time::Duration;

/// `ship` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// PostgreSQL URL of the team store (default: $HOOKJOURNAL_POSTGRES_URL, then `postgres` in
    /// the `[ship]` table of config.toml). Prefer those two: a password on the command line is
    /// visible to other users.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// OTLP/HTTP receiver: one trace per turn is POSTed to URL/v1/traces and every event as a
    /// log record to URL/v1/logs (default: $HOOKJOURNAL_OTLP_URL, then `otlp` in `[ship]`).
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// What to send the OTLP receiver: `traces`, `logs`, or `traces,logs` (the default). By
    /// default a receiver that refuses one (Phoenix answers 405 to logs) gets the other, and ship
    /// says so once; a signal named here and refused is an error.
    #[arg(long, value_name = "SIGNALS", value_delimiter = ',')]
    pub otlp_signals: Option<Vec<Signal>>,
    /// Put the turn's prompt and final answer, and each tool call's input and result, in the
    /// traces (`input.value`, `output.value`, `gen_ai.input.messages`, …); masked with --redact.
    #[arg(long)]
    pub content: bool,
    /// Keep shipping as the journal grows (stop with Ctrl-C: nothing half-done stays behind).
    #[arg(long)]
    pub follow: bool,
    /// With --follow, the pause between rounds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub poll_ms: u64,
    /// Mask secrets (API keys, tokens, private keys, passwords in URLs) in everything shipped.
    #[arg(long)]
    pub redact: bool,
    /// This machine's name in the team store (default: `machine` in `[ship]`, then the host name).
    #[arg(long)]
    pub machine: Option<String>,
    /// Events per PostgreSQL transaction.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub batch: usize,
    /// How long an OTLP request is retried before ship gives up, in seconds (with --follow it
    /// retries for ever).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub retry_for: u64,
}

/// An OTLP signal.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Signal {
    /// One trace per turn, in the GenAI semantic conventions (`/v1/traces`).
    Traces,
    /// Every event as a log record (`/v1/logs`).
    Logs,
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

/// Ships the journal to the team store and/or an OTLP receiver, once or following.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let dir = cmd.dir();
    let settings = cmd.settings();
    let (pg_url, otlp_url) = urls(&args, settings)?;
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    // The journal must exist before it gets an identity.
    drop(cmd.open_write()?);
    let journal_id = ship::journal_id(dir)?;
    let machine = nonempty(args.machine.clone())
        .or_else(|| nonempty(settings.ship.machine.clone()))
        .unwrap_or_else(ship::hostname);

    let pg_target = pg_url.as_deref().map(|url| pg::Target {
        url,
        dir,
        journal_id: &journal_id,
        machine: &machine,
        redact: args.redact,
        batch: args.batch,
    });
    let otlp_target = otlp_url.as_deref().map(|url| otlp::Target {
        url,
        dir,
        journal_id: &journal_id,
        machine: &machine,
        redact: args.redact,
        retry_for: (!args.follow).then_some(Duration::from_secs(args.retry_for)),
    });
    let _otlp_lock = match &otlp_target {
        Some(t) => Some(otlp::lock_cursor(dir, t.url)?),
        None => None,
    };
    let mut shipper = Shipper {
        client: match &pg_target {
            Some(t) => Some(pg_open(t)?),
            None => None,
        },
        pg: pg_target,
        otlp: otlp_target,
        agent: otlp::agent(),
        redact: args.redact,
        signals: args
            .otlp_signals
            .clone()
            .unwrap_or_else(|| vec![Signal::Traces, Signal::Logs]),
        // Given by the user (not the default): a refusal is then an error.
        chosen: args.otlp_signals.is_some(),
        content: args.content,
        live: None,
        refused: Default::default(),
    };
    println!("journal {journal_id} (machine {machine})");
    let mut first = true;
    let mut backoff = args.poll_ms;
    loop {
        let round = shipper.round(first);
        if !args.follow {
            round?;
            break;
        }
        match round {
            Ok(()) => backoff = args.poll_ms,
            // History disagrees: retrying cannot help.
            Err(e) if e.is::<pg::Diverged>() => return Err(e),
            Err(e) => {
                eprintln!(
                    "hookjournal: {}; retrying in {} ms",
                    crate::output::one_line(&format!("{e:#}")),
                    backoff
                );
                if shipper.client.as_ref().is_some_and(|c| !c.is_closed())
                    && is_connection_error(&e)
                {
                    shipper.client = None;
                }
                ship::pause(backoff);
                backoff = (backoff.max(100) * 2).min(30_000);
                continue;
            }
        }
        first = false;
        ship::pause(args.poll_ms);
    }
    Ok(ExitCode::SUCCESS)
}

/// The targets: with an explicit `--postgres` or `--otlp`, only that one; otherwise every one
/// configured (flags, then environment, then `[ship]` in config.toml).
fn urls(
    args: &Args,
    settings: &engine::settings::Settings,
) -> Result<(Option<String>, Option<String>)> {
    let pg_url = nonempty(args.postgres.clone())
        .or_else(|| nonempty(std::env::var("HOOKJOURNAL_POSTGRES_URL").ok()))
        .or_else(|| nonempty(settings.ship.postgres.clone()));
    let otlp_url = nonempty(args.otlp.clone())
        .or_else(|| nonempty(std::env::var("HOOKJOURNAL_OTLP_URL").ok()))
        .or_else(|| nonempty(settings.ship.otlp.clone()));
    let (pg_url, otlp_url) = match (&args.postgres, &args.otlp) {
        (Some(_), None) => (pg_url, None),
        (None, Some(_)) => (None, otlp_url),
        _ => (pg_url, otlp_url),
    };
    if pg_url.is_none() && otlp_url.is_none() {
        bail!("nothing to ship to: pass --postgres URL or --otlp URL (or set HOOKJOURNAL_POSTGRES_URL / HOOKJOURNAL_OTLP_URL, or [ship] in config.toml)");
    }
    Ok((pg_url, otlp_url))
}

/// The targets of one `ship` run and the PostgreSQL connection it keeps between rounds.
struct Shipper<'a> {
    pg: Option<pg::Target<'a>>,
    client: Option<postgres::Client>,
    otlp: Option<otlp::Target<'a>>,
    agent: ureq::Agent,
    redact: bool,
    signals: Vec<Signal>,
    /// `--otlp-signals` was given: a signal the receiver refuses is an error, not a note.
    chosen: bool,
    content: bool,
    /// The traces fold kept between the rounds of `--follow`.
    live: Option<traces::Live>,
    /// The signals the receiver refused (said once).
    refused: std::collections::BTreeSet<Signal>,
}

impl Shipper<'_> {
    /// Ships what each target has not acknowledged yet; reports a target's round when it
    /// shipped something (or on the first round).
    fn round(&mut self, first: bool) -> Result<()> {
        if let Some(t) = &self.pg {
            // A follower reconnects after losing the server.
            if self.client.as_ref().is_none_or(|c| c.is_closed()) {
                self.client = Some(pg_open(t)?);
            }
            let c = self.client.as_mut().expect("connected");
            let r = pg::ship_round(c, t)?;
            if first || r.shipped > 0 {
                report(
                    "PostgreSQL",
                    t.url,
                    r.shipped,
                    r.masked,
                    r.head,
                    self.redact,
                );
            }
        }
        if let Some(t) = &self.otlp {
            let mut failed = None;
            for signal in self.signals.clone() {
                if self.refused.contains(&signal) {
                    continue;
                }
                let shipped = match signal {
                    Signal::Traces => {
                        let options = projections::traces::Options {
                            content: self.content,
                        };
                        traces::ship_round(&self.agent, t, options, &mut self.live).map(|r| {
                            if first || r.spans > 0 {
                                report_traces(t.url, &r, self.redact);
                            }
                        })
                    }
                    Signal::Logs => otlp::ship_round(&self.agent, t).map(|r| {
                        if first || r.shipped > 0 {
                            report("OTLP", t.url, r.shipped, r.masked, r.head, self.redact);
                        }
                    }),
                };
                match shipped {
                    Ok(()) => {}
                    Err(e) => match e.downcast_ref::<otlp::Refused>() {
                        // Sent by default and refused: the other signal goes on, said once.
                        Some(r) if !self.chosen && self.refused.len() + 1 < self.signals.len() => {
                            eprintln!(
                                "hookjournal: {} does not take OTLP {} (HTTP {}): sending the rest (`--otlp-signals` chooses)",
                                r.endpoint,
                                signal_name(signal),
                                r.status
                            );
                            self.refused.insert(signal);
                        }
                        _ => failed = failed.or(Some(e)),
                    },
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(())
    }
}

fn signal_name(s: Signal) -> &'static str {
    match s {
        Signal::Traces => "traces",
        Signal::Logs => "logs",
    }
}

fn report_traces(url: &str, r: &traces::Round, redact: bool) {
    let secrets = if redact {
        format!(", {} secret(s) masked", r.masked)
    } else {
        String::new()
    };
    println!(
        "OTLP traces {}: shipped {} span(s) in {} trace(s), up to seq {}{secrets}",
        mask_url(url),
        r.spans,
        r.traces,
        r.head
    );
}

fn report(what: &str, url: &str, shipped: u64, masked: usize, head: u64, redact: bool) {
    let secrets = if redact {
        format!(", {masked} secret(s) masked")
    } else {
        String::new()
    };
    println!(
        "{what} {}: shipped {shipped} event(s), up to seq {head}{secrets}",
        mask_url(url)
    );
}

fn pg_open(t: &pg::Target) -> Result<postgres::Client> {
    let mut c = pg::connect(t.url)?;
    pg::migrate(&mut c)?;
    pg::prepare(&mut c, t)?;
    Ok(c)
}

fn is_connection_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<postgres::Error>()
            .is_some_and(|p| p.is_closed() || p.as_db_error().is_none())
    })
}
