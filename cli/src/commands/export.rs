//! `export --report …`: JSONL, one object a line, streamed. `--out FILE` is written atomically
//! (a FIFO or a device written through; see `outfile`).

use crate::cli_util::CommandHelper;
use crate::dates::Range;
use crate::eventjson;

use anyhow::{Context, Result};

use projections::report;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The reports `export` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Every event as recorded, hashes included (`import --events` restores it).
    Events,
    /// One row per session (as `sessions --json`).
    Sessions,
    /// One row per model response: tokens and USD.
    Cost,
    /// The notification log.
    Notifications,
    /// Every task, with its history.
    Tasks,
    /// Each session's execution snapshot (as `show --json`).
    Snapshots,
    /// Per-session metrics at each Stop and SessionEnd.
    SessionLog,
}

/// `export` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which report to write, one JSON object per line.
    #[arg(long, value_enum)]
    pub report: Report,
    /// Only this session (full id or its first characters).
    #[arg(long)]
    pub session: Option<String>,
    /// From this day (YYYY-MM-DD, inclusive) or RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    /// Up to this day (inclusive) or RFC 3339 time.
    #[arg(long)]
    pub until: Option<String>,
    /// Write here (atomically) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Mask secrets (API keys, tokens, private keys, passwords in URLs) in payload text.
    #[arg(long)]
    pub redact: bool,
    /// Salvage: export every event that can be read, skipping a damaged sealed segment's
    /// unreadable rest and events whose hash does not match their content, and name each skip
    /// on stderr (exit 3 when anything was skipped). `--report events` and `session-log`.
    #[arg(long)]
    pub skip_damaged: bool,
}

/// Writes the report, one JSON object a line.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let view = cmd.view()?;
    let filter = Filter {
        range: Range::new(args.since.as_deref(), args.until.as_deref())?,
        session: match &args.session {
            Some(s) => Some(engine::resolve_session(view.state.sessions.keys(), s)?),
            None => None,
        },
    };
    if args.skip_damaged && !matches!(args.report, Report::Events | Report::SessionLog) {
        eprintln!(
            "hookjournal: --skip-damaged works with --report events and session-log (the reports read from the log event by event)"
        );
        return Ok(ExitCode::from(2));
    }
    let mut out = Out::open(args.out.as_deref())?;
    let mut masked = 0usize;
    let mut skipped = Skipped::default();
    let salvage = args.skip_damaged.then_some(&mut skipped);
    let lines = if args.report == Report::Events {
        write_events(
            &view,
            &filter,
            &mut out.sink,
            args.redact.then_some(&mut masked),
            salvage,
        )?
    } else if args.report == Report::SessionLog {
        let mut lines = 0u64;
        let mut rows = Vec::new();
        for_each_event(&view, salvage, &mut |e| {
            if filter.session(e.session_id.as_deref()) && filter.range.contains(e.recorded_at_us) {
                rows.extend(engine::mirror::session_log_row(&e));
            }
            Ok(())
        })?;
        for mut v in rows {
            if args.redact {
                projections::redact::redact_json(&mut v, &mut masked);
            }
            write_row(&mut out.sink, &v)?;
            lines += 1;
        }
        lines
    } else {
        let mut lines = 0u64;
        report_rows(args.report, &view, &filter, cmd.settings(), &mut |mut v| {
            if args.redact {
                projections::redact::redact_json(&mut v, &mut masked);
            }
            write_row(&mut out.sink, &v)?;
            lines += 1;
            Ok(())
        })?;
        lines
    };
    out.finish(lines)?;
    if args.redact {
        eprintln!(
            "hookjournal: masked {}",
            crate::output::count(masked as u64, "secret")
        );
    }
    if skipped.places.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for p in &skipped.places {
        eprintln!("hookjournal: skipped {p}");
    }
    eprintln!(
        "hookjournal: exported every readable event; {} skipped in {} (`hookjournal verify` names the damage)",
        crate::output::count(skipped.events, "event"),
        crate::output::count(skipped.places.len() as u64, "place")
    );
    Ok(ExitCode::from(3))
}

/// One report row, a line of JSON; characters that could drive a terminal or reorder text are
/// escaped (`\u202e`), as in every `--json` output (the row parses back the same).
fn write_row(sink: &mut dyn Write, v: &serde_json::Value) -> Result<()> {
    let line = crate::output::json_safe(serde_json::to_string(v)?);
    sink.write_all(line.as_bytes())?;
    sink.write_all(b"\n")?;
    Ok(())
}

/// What a salvage skipped: one phrase per place, and how many events.
#[derive(Default)]
struct Skipped {
    places: Vec<String>,
    events: u64,
}

/// Every event of the view in seq order; with `salvage`, damaged segments' unreadable rests and
/// events whose hash does not match their content are skipped and noted instead.
fn for_each_event(
    view: &engine::state::View,
    salvage: Option<&mut Skipped>,
    f: &mut dyn FnMut(engine::log::Envelope) -> engine::log::Result<()>,
) -> Result<()> {
    let Some(skipped) = salvage else {
        view.snap.for_each(f)?;
        return Ok(());
    };
    let mut bad_hashes = Vec::new();
    let mut damaged = Vec::new();
    view.snap.for_each_salvaging(
        |e| {
            if e.compute_hash() != e.hash {
                bad_hashes.push(e.seq);
                return Ok(());
            }
            f(e)
        },
        |seg, next, err| {
            damaged.push((seg.clone(), next, err.to_string()));
        },
    )?;
    for (seg, next, why) in damaged {
        let name = seg
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        skipped.events += seg.last + 1 - next;
        skipped.places.push(format!(
            "seq {next}..{} of segment {name}: {}",
            seg.last,
            crate::output::one_line(&why)
        ));
    }
    for seq in bad_hashes {
        skipped.events += 1;
        skipped
            .places
            .push(format!("seq {seq}: its hash does not match its content"));
    }
    Ok(())
}

/// Which events and rows a report keeps: one session, a time range.
struct Filter {
    session: Option<String>,
    range: Range,
}

impl Filter {
    fn session(&self, s: Option<&str>) -> bool {
        self.session.as_deref().is_none_or(|want| s == Some(want))
    }
}

/// Where the report goes: stdout, or `--out` (see `outfile`: a regular file is replaced
/// atomically once complete, a FIFO or a device is written through, anything else refused).
struct Out {
    sink: Box<dyn Write>,
    file: Option<(crate::outfile::OutFile, PathBuf)>,
}

impl Out {
    fn open(path: Option<&std::path::Path>) -> Result<Out> {
        let Some(path) = path else {
            return Ok(Out {
                sink: Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout().lock())),
                file: None,
            });
        };
        let mut f = crate::outfile::OutFile::create(path)?;
        let w = f.file().try_clone().context("opening the report")?;
        Ok(Out {
            sink: Box::new(BufWriter::with_capacity(1 << 20, w)),
            file: Some((f, path.to_path_buf())),
        })
    }

    fn finish(mut self, lines: u64) -> Result<()> {
        self.sink.flush().context("writing the report")?;
        drop(self.sink);
        if let Some((f, path)) = self.file {
            f.commit()?;
            eprintln!(
                "hookjournal: wrote {} to {}",
                crate::output::count(lines, "line"),
                path.display()
            );
        }
        Ok(())
    }
}

/// `--report events`: every event as recorded, streamed (never all in memory).
fn write_events(
    view: &engine::state::View,
    filter: &Filter,
    mut sink: &mut dyn Write,
    mut masked: Option<&mut usize>,
    salvage: Option<&mut Skipped>,
) -> Result<u64> {
    let bar = crate::output::progress(view.snap.head_seq, "export");
    let (mut n, mut lines) = (0u64, 0u64);
    for_each_event(view, salvage, &mut |e| {
        n += 1;
        if n.is_multiple_of(8192) {
            bar.set_position(n);
        }
        if filter.session(e.session_id.as_deref()) && filter.range.contains(e.recorded_at_us) {
            eventjson::write_line(&mut sink, &e, masked.as_deref_mut()).map_err(|e| {
                engine::Error::Io {
                    context: "writing the report".into(),
                    cause: e,
                }
            })?;
            lines += 1;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    Ok(lines)
}

/// One model response's tokens and price (`--report cost`).
#[derive(serde::Serialize)]
struct CostRow<'a> {
    timestamp: &'a str,
    session_id: &'a str,
    agent_id: Option<&'a str>,
    model: &'a str,
    input_tokens: u64,
    output_tokens: u64,
    cache_write_5m_tokens: u64,
    cache_write_1h_tokens: u64,
    cache_read_tokens: u64,
    cost_usd: Option<f64>,
}

/// The rows of every report but `events`, in order, each handed to `emit` as it is made.
fn report_rows(
    report: Report,
    view: &engine::state::View,
    filter: &Filter,
    settings: &engine::settings::Settings,
    emit: &mut dyn FnMut(serde_json::Value) -> Result<()>,
) -> Result<()> {
    let pricing = settings.pricing();
    let cfg = &settings.policy;
    match report {
        Report::Events => unreachable!("events are streamed by write_events"),
        Report::Sessions | Report::Snapshots => {
            let mut sessions: Vec<_> = view
                .state
                .sessions
                .values()
                .filter(|s| filter.session(Some(&s.id)) && filter.range.contains(s.last_at_us))
                .collect();
            sessions.sort_by_key(|s| s.first_seq);
            for s in sessions {
                let mut v = if report == Report::Sessions {
                    serde_json::to_value(report::session_row(s, &pricing, cfg))?
                } else {
                    report::snapshot_json(s, &pricing, cfg)
                };
                v["start"] = crate::output::timestamp(s.first_at_us).into();
                v["last"] = crate::output::timestamp(s.last_at_us).into();
                emit(v)?;
            }
        }
        Report::Tasks => {
            for t in view.state.all_tasks() {
                // A task is in the range when it last changed within it.
                if !filter.session(t.session.as_deref())
                    || !filter.range.contains(t.changed_at_us())
                {
                    continue;
                }
                let mut v = serde_json::to_value(t)?;
                v["ref"] = t.task_ref().display().into();
                v["session_id"] = t.session.clone().into();
                emit(v)?;
            }
        }
        Report::Cost => {
            let full = view.full(|_| {})?;
            for r in full.cost().by_key.values() {
                if !filter.session(Some(&r.session)) || !filter.range.contains_ts(&r.timestamp) {
                    continue;
                }
                emit(serde_json::to_value(CostRow {
                    timestamp: &r.timestamp,
                    session_id: &r.session,
                    agent_id: r.agent_id.as_deref(),
                    model: &r.model,
                    input_tokens: r.usage.input_tokens,
                    output_tokens: r.usage.output_tokens,
                    cache_write_5m_tokens: r.usage.cache_write_5m,
                    cache_write_1h_tokens: r.usage.cache_write_1h,
                    cache_read_tokens: r.usage.cache_read,
                    cost_usd: pricing.cost(&r.model, &r.usage),
                })?)?;
            }
        }
        Report::Notifications => {
            let full = view.full(|_| {})?;
            for n in full.notifications() {
                if filter.session(n.session.as_deref()) && filter.range.contains(n.at_us) {
                    emit(engine::mirror::notification_row(n))?;
                }
            }
        }
        Report::SessionLog => unreachable!("the session log is read event by event in run"),
    }
    Ok(())
}
