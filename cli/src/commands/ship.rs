//! `ship --postgres URL | --otlp URL [--follow]`: copies the journal to a team store and/or an
//! OpenTelemetry collector, exactly once from the journal's side (see `crate::ship`).

use crate::cli_util::CommandHelper;
use crate::ship::{self, mask_url, otlp, pg};
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
    /// OTLP/HTTP receiver; records are POSTed to URL/v1/logs (default: $HOOKJOURNAL_OTLP_URL,
    /// then `otlp` in `[ship]`).
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
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
            let r = otlp::ship_round(&self.agent, t)?;
            if first || r.shipped > 0 {
                report("OTLP", t.url, r.shipped, r.masked, r.head, self.redact);
            }
        }
        Ok(())
    }
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
