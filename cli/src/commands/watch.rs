//! `watch`: a live terminal view of the journal (sessions, burn rate, context, tasks), redrawn
//! every `--interval` ms. Each frame reads the checkpoint under the journal's lock for a few
//! milliseconds, without priority and without draining the spool, so hooks are never made to
//! wait for it: when the lock is busy the frame keeps the last state. `q` or Ctrl-C quits;
//! `--once` prints one frame (for scripts and tests).

mod across;

use crate::cli_util::CommandHelper;
use crate::output::{self, escape};
use anyhow::Result;
use engine::settings::Settings;
use engine::{Journal, OpenOptions};
use projections::fold::State;
use projections::report;
use projections::tasks::TaskStatus;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `watch` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Milliseconds between frames.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub interval: u64,
    /// Print one frame and exit.
    #[arg(long)]
    pub once: bool,
    /// Every journal of yours (`status` says how many are registered), each read untouched and
    /// folded on as it grows, with a PROJECT column.
    #[arg(long)]
    pub all_projects: bool,
}

/// One read of the journal for a frame: `Ok(None)` when the lock was busy.
fn read_state(dir: &Path, settings: &Settings, wait: Duration) -> Result<Option<State>> {
    let opened = Journal::open(
        dir,
        &OpenOptions {
            wait,
            create: false,
            segment_events: settings.hook.segment_events,
            priority: false,
        },
    );
    let mut j = match opened {
        Ok(j) => j,
        Err(engine::Error::Busy) => return Ok(None),
        Err(engine::Error::NotFound(_)) => return Ok(Some(State::default())),
        Err(e) => return Err(anyhow::anyhow!("opening journal {}: {e}", dir.display())),
    };
    // Every acknowledged event: the spool ingested, the events the store copied from the log
    // folded in.
    engine::state::catch_up(&mut j)?;
    let st = engine::state::checkpoint(&j)?;
    drop(j);
    Ok(Some(st))
}

/// The live view, redrawn as the journal changes (or once).
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    if args.all_projects {
        return across::run(&args);
    }
    let dir = cmd.dir();
    if !dir.is_dir() {
        anyhow::bail!(
            "no journal at {} (run `hookjournal install`, or pass --journal DIR)",
            dir.display()
        );
    }
    let settings = cmd.settings();
    let live = !args.once && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if !live {
        // One frame may wait a little longer for the lock (still without priority).
        let Some(st) = read_state(dir, settings, Duration::from_secs(5))? else {
            anyhow::bail!(
                "journal {} is busy (its lock was held for 5 s)",
                dir.display()
            );
        };
        print!(
            "{}",
            frame(dir, settings, &st, crate::clock::now_us(), None)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let _term = RawTerminal::enter();
    let mut last = State::default();
    let mut busy;
    loop {
        match read_state(dir, settings, Duration::from_millis(50)) {
            Ok(Some(st)) => {
                last = st;
                busy = false;
            }
            Ok(None) => busy = true,
            Err(e) => {
                drop(_term);
                return Err(e);
            }
        }
        let note = busy.then_some("journal busy: showing the previous frame");
        let text = frame(dir, settings, &last, crate::clock::now_us(), note);
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\x1b[H\x1b[2J{}", text.replace('\n', "\r\n"));
        let _ = out.flush();
        if wait_for_quit(Duration::from_millis(args.interval)) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One frame of text (no colour unless the terminal takes it).
pub fn frame(
    dir: &Path,
    settings: &Settings,
    st: &State,
    now_us: i64,
    note: Option<&str>,
) -> String {
    let pricing = settings.pricing();
    let cfg = &settings.policy;
    let mut o = String::new();
    let spooled = engine::state::spooled(dir);
    o.push_str(&output::bold(&format!(
        "hookjournal watch · {} · {}",
        dir.display(),
        chrono::DateTime::from_timestamp_micros(now_us)
            .map(|t| t.format("%H:%M:%S").to_string())
            .unwrap_or_default()
    )));
    o.push('\n');
    if let Some(n) = note {
        o.push_str(&output::dim(n));
        o.push('\n');
    }
    let mut sessions: Vec<_> = st.sessions.values().collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.last_at_us));
    let mut t = output::Table::new(&[
        ("SESSION", output::Align::Left),
        ("STATUS", output::Align::Left),
        ("LAST", output::Align::Left),
        ("CONTEXT", output::Align::Left),
        ("TIER", output::Align::Left),
        ("COST", output::Align::Right),
        ("$/H", output::Align::Right),
        ("TASK", output::Align::Left),
    ]);
    let (mut total, mut burn, mut active) = (0.0, 0.0, 0);
    for s in sessions.iter().take(12) {
        let row = SessionRow::of(st, s, &pricing, cfg);
        if row.live {
            burn += row.rate;
            active += 1;
        }
        t.row(row.cells(s, now_us));
    }
    for s in &sessions {
        let (usd, _) = report::session_usd(s, &pricing);
        total += s.host_reported.total_cost().unwrap_or(0.0).max(usd);
    }
    if t.is_empty() {
        o.push_str("no sessions yet\n");
    } else {
        o.push_str(&t.render());
    }
    let tasks = st.all_tasks();
    let open: Vec<_> = tasks.iter().filter(|t| t.status.is_open()).collect();
    o.push_str(&format!(
        "\n{} ({active} live) · {} · burn {}/h · {} · {} · {spooled} waiting in the spool\n",
        output::count(sessions.len() as u64, "session"),
        output::usd(total),
        output::usd(burn),
        output::count(open.len() as u64, "open task"),
        output::count(st.global.last_seq, "event"),
    ));
    if !open.is_empty() {
        o.push_str(&format!("\n{}\n", output::bold("open tasks")));
        for t in open.iter().take(10) {
            o.push_str(&format!(
                "  {:<12} {:<12} {}\n",
                escape(&t.task_ref().display()),
                output::tint(t.status.as_str()),
                escape(&t.subject)
            ));
        }
    }
    o.push_str(&output::dim("\nq or Ctrl-C quits\n"));
    o
}

/// One session's line of the live view: what it cost, how fast, how full, what it works on.
struct SessionRow {
    usd: f64,
    rate: f64,
    live: bool,
    used: f64,
    tier: projections::views::Tier,
    task: String,
}

impl SessionRow {
    fn of(
        st: &State,
        s: &projections::session::SessionState,
        pricing: &projections::pricing::PricingTable,
        cfg: &projections::config::PolicyConfig,
    ) -> SessionRow {
        let (usd, _) = report::session_usd(s, pricing);
        let usd = s.host_reported.total_cost().unwrap_or(0.0).max(usd);
        let (tier, used) = projections::views::pressure(s, cfg);
        // The host's own reading, when it is newer than the journal's.
        let used = s
            .host_reported
            .used_percentage
            .filter(|_| s.host_reported.seq > s.pressure.seq)
            .map(|p| p / 100.0)
            .unwrap_or(used);
        let hours = (s.last_at_us - s.first_at_us).max(60_000_000) as f64 / 3.6e9;
        let task = projections::views::open_tasks_for(st, s)
            .into_iter()
            .find(|t| t.status == TaskStatus::InProgress)
            .map(|t| format!("[{}] {}", t.id, t.subject))
            .unwrap_or_default();
        SessionRow {
            usd,
            rate: usd / hours,
            live: s.status.as_str() != "ended",
            used,
            tier,
            task,
        }
    }

    fn cells(&self, s: &projections::session::SessionState, now_us: i64) -> Vec<String> {
        vec![
            projections::short_id(&s.id).to_string(),
            s.status.as_str().to_string(),
            output::relative(s.last_at_us, now_us),
            format!(
                "{} {:>3.0}%",
                projections::statusline::bar(self.used * 100.0),
                self.used * 100.0
            ),
            self.tier.as_str().to_string(),
            output::usd(self.usd),
            if self.live {
                output::usd(self.rate)
            } else {
                "-".into()
            },
            self.task.chars().take(40).collect(),
        ]
    }
}

/// The terminal in non-canonical, no-echo mode on the alternate screen, restored on drop.
struct RawTerminal {
    saved: Option<libc::termios>,
}

impl RawTerminal {
    fn enter() -> RawTerminal {
        // SAFETY: tcgetattr/tcsetattr on stdin with a termios we own.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                None
            } else {
                let mut raw = t;
                raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
                raw.c_cc[libc::VMIN] = 0;
                raw.c_cc[libc::VTIME] = 0;
                libc::tcsetattr(0, libc::TCSANOW, &raw);
                Some(t)
            }
        };
        print!("\x1b[?1049h\x1b[?25l");
        let _ = std::io::stdout().flush();
        RawTerminal { saved }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        print!("\x1b[?25h\x1b[?1049l");
        let _ = std::io::stdout().flush();
        if let Some(t) = &self.saved {
            // SAFETY: restoring the attributes saved by `enter`.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, t) };
        }
    }
}

/// Waits up to `d` for a key; true when it is `q` or Ctrl-C (ISIG is off, so it arrives as 0x03).
fn wait_for_quit(d: Duration) -> bool {
    let deadline = std::time::Instant::now() + d;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut pfd = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one pollfd we own.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n <= 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        // SAFETY: reading into a buffer we own.
        let r = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if r <= 0 {
            return false;
        }
        if buf[..r as usize]
            .iter()
            .any(|b| matches!(b, b'q' | b'Q' | 0x03))
        {
            return true;
        }
    }
}
