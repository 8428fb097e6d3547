//! `watch --all-projects`: every registered journal in one live view. Each is read untouched (no
//! lock, nothing written, foreign or not) and folded on from the seq it had reached, so a frame
//! reads only what each log gained since the last one; a rewind among the new events, or a log
//! that no longer continues (a `recover`), folds it again from its start.

use super::{wait_for_quit, Args, RawTerminal, SessionRow};
use crate::output::{self, escape};
use anyhow::Result;
use engine::settings::Settings;
use projections::fold::Full;
use projections::{Kind, KindOf};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// One registered journal as the view follows it.
struct Followed {
    project: String,
    dir: PathBuf,
    settings: Settings,
    full: Full,
    /// The last seq folded.
    seq: u64,
    /// Events waiting in its spool (not shown until a command runs in its project).
    spooled: usize,
}

impl Followed {
    /// Folds what the journal's log gained since the last frame.
    fn catch_up(&mut self) -> Result<()> {
        if !engine::state::has_events(&self.dir) {
            self.spooled = engine::state::spooled(&self.dir);
            return Ok(());
        }
        let (snap, spooled) = engine::state::untouched_snapshot_quiet(&self.dir)?;
        self.spooled = spooled;
        let mut new = Vec::new();
        let mut again = snap.head_seq < self.seq;
        if !again {
            snap.for_each_in(self.seq + 1, u64::MAX, |e| {
                again |= matches!(e.kind(), Kind::Rewound { .. });
                new.push(e);
                Ok(())
            })?;
        }
        if again {
            self.full =
                engine::state::full_replay(&snap, engine::state::collect_rewinds(&snap)?, |_| {})?;
        } else {
            for e in &new {
                self.full.apply(e);
            }
        }
        self.seq = snap.head_seq;
        Ok(())
    }
}

/// The live view of every registered journal (or one frame).
pub(super) fn run(args: &Args) -> Result<ExitCode> {
    let mut journals: Vec<Followed> = crate::cli_util::registered()
        .into_iter()
        .map(|r| Followed {
            settings: r.settings(),
            project: r.project,
            dir: r.dir,
            full: Full::default(),
            seq: 0,
            spooled: 0,
        })
        .collect();
    let live = !args.once && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let mut note = None;
    let _term = live.then(RawTerminal::enter);
    loop {
        for j in &mut journals {
            if let Err(e) = j.catch_up() {
                if !live {
                    return Err(e);
                }
                note = Some(format!("{}: {e:#}", j.project));
            }
        }
        let text = frame(&journals, crate::clock::now_us(), note.as_deref());
        if !live {
            print!("{text}");
            return Ok(ExitCode::SUCCESS);
        }
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\x1b[H\x1b[2J{}", text.replace('\n', "\r\n"));
        let _ = out.flush();
        if wait_for_quit(Duration::from_millis(args.interval)) {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// One frame: the sessions of every journal, last active first, with their project; the
/// totals across them; every project's open tasks.
fn frame(journals: &[Followed], now_us: i64, note: Option<&str>) -> String {
    let mut o = String::new();
    o.push_str(&output::bold(&format!(
        "hookjournal watch · all projects ({}) · {}",
        journals.len(),
        chrono::DateTime::from_timestamp_micros(now_us)
            .map(|t| t.format("%H:%M:%S").to_string())
            .unwrap_or_default()
    )));
    o.push('\n');
    if let Some(n) = note {
        o.push_str(&output::dim(&escape(n)));
        o.push('\n');
    }
    let mut sessions: Vec<_> = journals
        .iter()
        .flat_map(|j| j.full.state.sessions.values().map(move |s| (j, s)))
        .collect();
    sessions.sort_by_key(|(_, s)| std::cmp::Reverse(s.last_at_us));
    let mut t = output::Table::new(&[
        ("PROJECT", output::Align::Left),
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
    for (i, (j, s)) in sessions.iter().enumerate() {
        let row = SessionRow::of(&j.full.state, s, &j.settings.pricing(), &j.settings.policy);
        total += row.usd;
        if row.live {
            burn += row.rate;
            active += 1;
        }
        if i < 12 {
            let mut cells = vec![escape(&j.project)];
            cells.extend(row.cells(s, now_us));
            t.row(cells);
        }
    }
    if t.is_empty() {
        o.push_str("no sessions yet\n");
    } else {
        o.push_str(&t.render());
    }
    let open: Vec<_> = journals
        .iter()
        .flat_map(|j| {
            j.full
                .state
                .all_tasks()
                .into_iter()
                .filter(|t| t.status.is_open())
                .map(move |t| (j, t))
        })
        .collect();
    let events: u64 = journals.iter().map(|j| j.seq).sum();
    let spooled: usize = journals.iter().map(|j| j.spooled).sum();
    o.push_str(&format!(
        "\n{} ({active} live) · {} · burn {}/h · {} · {} · {spooled} waiting in the spool\n",
        output::count(sessions.len() as u64, "session"),
        output::usd(total),
        output::usd(burn),
        output::count(open.len() as u64, "open task"),
        output::count(events, "event"),
    ));
    if !open.is_empty() {
        o.push_str(&format!("\n{}\n", output::bold("open tasks")));
        for (j, t) in open.iter().take(10) {
            o.push_str(&format!(
                "  {:<12} {:<12} {:<12} {}\n",
                escape(&j.project),
                escape(&t.task_ref().display()),
                output::tint(t.status.as_str()),
                escape(&t.subject)
            ));
        }
    }
    o.push_str(&output::dim("\nq or Ctrl-C quits\n"));
    o
}
