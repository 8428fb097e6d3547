//! The HTML report (`report --html FILE`, `demo`): one self-contained file (inline CSS and SVG drawn here, no script,
//! no network: a CSP of `default-src 'none'`) with cost per day and per model, context use over
//! time per session with compactions, reminders and blocks marked, a timeline of each session
//! (prompts, tool calls, failures, and every answer with the event that caused it), and the task
//! board. Built from a full replay of the log, so it works on any journal and on a slice.

use crate::dates::Range;
use anyhow::{bail, Context, Result};
use engine::settings::Settings;
use engine::state;
use projections::fold::Full;
use projections::report::{self, CostBy, CostRow, Reconciled};
use projections::tasks::{Task, TaskStatus};
use projections::timeline::{MarkKind, SessionTimeline, Timelines};
use std::fmt::Write as _;
use std::path::Path;

/// Writes the report (atomically to a regular file; through to a FIFO or a device; see
/// `outfile`).
pub fn write(path: &Path, html: &str) -> Result<()> {
    use std::io::Write;
    let mut out = crate::outfile::OutFile::create(path)?;
    out.file()
        .write_all(html.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    out.commit()
}

/// The report of the journal in `dir`. A directory with no store yet is an empty journal.
/// `redact` masks secrets in every event's payload before anything is folded from it (so no
/// view, title, task or timeline item can show one), counting them.
pub fn build(
    dir: &Path,
    settings: &Settings,
    session: Option<&str>,
    range: Range,
    redact: Option<&mut usize>,
) -> Result<String> {
    if !dir.is_dir() {
        bail!(
            "no journal at {} (run `hookjournal install`, or pass --journal DIR)",
            dir.display()
        );
    }
    let has_store = state::has_events(dir);
    let (full, timelines, events) = if has_store {
        let view = state::open_view(dir)?;
        let rewinds = projections::fold::Rewinds::from_list(&view.state.global.rewinds);
        fold(&view.snap, rewinds, settings, session, range, redact)?
    } else if session.is_some() {
        bail!(
            "no session matches {:?} (the journal is empty)",
            session.unwrap_or("")
        );
    } else {
        (Full::default(), Timelines::default(), 0)
    };
    let shown = engine::fs::door::by_path::canonical(dir).unwrap_or_else(|_| dir.to_path_buf());
    let ctx = Ctx {
        dir: &shown,
        settings,
        range,
        session,
        events,
    };
    Ok(render(&ctx, &full, &timelines))
}

/// One registered journal for `report --all-projects`: its project's name, its directory and its
/// own settings (its prices, as its per-project report uses them).
pub struct ProjectJournal {
    pub project: String,
    pub dir: std::path::PathBuf,
    pub settings: Settings,
}

/// The report of every registered journal (`report --html --all-projects`): a table of the
/// projects (sessions, events, cost, tokens, open tasks, and their sums), then each project's
/// sections under its name — what its own report shows, its element ids prefixed so the page
/// holds each once. Each journal is read untouched (no lock, nothing written, foreign or not).
pub fn build_all(
    journals: &[ProjectJournal],
    range: Range,
    mut redact: Option<&mut usize>,
) -> Result<String> {
    let mut sections = String::new();
    let mut rows = String::new();
    let (mut sessions, mut events, mut usd_sum, mut tokens, mut open) = (0, 0, 0.0, 0, 0);
    for (i, j) in journals.iter().enumerate() {
        let (full, tl, n) = if state::has_events(&j.dir) {
            let snap = state::untouched_snapshot(&j.dir)?;
            let rewinds = state::collect_rewinds(&snap)?;
            fold(
                &snap,
                rewinds,
                &j.settings,
                None,
                range,
                redact.as_deref_mut(),
            )?
        } else {
            (Full::default(), Timelines::default(), 0)
        };
        let pricing = j.settings.pricing();
        let (since, until) = range.days();
        let cost = full.cost();
        let items = report::cost_items(&cost, &pricing);
        let (_, total) = report::cost_rows(
            &items,
            &cost.reported,
            CostBy::Day,
            since.as_deref(),
            until.as_deref(),
            None,
        );
        let tasks = full.state.all_tasks();
        let open_here = tasks.iter().filter(|t| t.status.is_open()).count();
        let n_sessions = full.state.sessions.len();
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{n_sessions}</td><td class=\"n\">{n}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{open_here}</td></tr>",
            esc(&j.project),
            esc(&j.dir.display().to_string()),
            usd(total.usd),
            crate::output::tokens(total.total_tokens),
        );
        sessions += n_sessions;
        events += n;
        usd_sum += total.usd;
        tokens += total.total_tokens;
        open += open_here;
        let ctx = Ctx {
            dir: &j.dir,
            settings: &j.settings,
            range,
            session: None,
            events: n,
        };
        let mut body_html = String::new();
        body(&mut body_html, &ctx, &full, &tl);
        let _ = write!(
            sections,
            "<section class=\"project\" id=\"p{i}\"><h2>{} <span class=\"why\">{}</span></h2>\n{}</section>\n",
            esc(&j.project),
            esc(&j.dir.display().to_string()),
            body_html.replace("id=\"", &format!("id=\"p{i}-"))
        );
    }
    let mut h = page_head();
    let (since, until) = range.days();
    let slice: Vec<String> = [
        since.map(|s| format!("since {s}")),
        until.map(|u| format!("until {u}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let _ = write!(
        h,
        "<header><h1>hookjournal report</h1><p>all projects · {} · {events} events{}</p></header>\n<main>\n",
        crate::output::count(journals.len() as u64, "journal"),
        if slice.is_empty() {
            String::new()
        } else {
            format!(" · {}", esc(&slice.join(", ")))
        }
    );
    let _ = writeln!(
        h,
        "<section id=\"projects\"><h2>Projects</h2><table class=\"projects\"><thead><tr><th>project</th><th>journal</th><th class=\"n\">sessions</th><th class=\"n\">events</th><th class=\"n\">cost</th><th class=\"n\">tokens</th><th class=\"n\">open tasks</th></tr></thead><tbody>{rows}</tbody><tfoot><tr><td>all</td><td></td><td class=\"n\">{sessions}</td><td class=\"n\">{events}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{open}</td></tr></tfoot></table></section>",
        usd(usd_sum),
        crate::output::tokens(tokens),
    );
    h.push_str(&sections);
    Ok(page_end(h))
}

/// The report's fold of a snapshot of the log: the state (kept to `session`, when given), the
/// timelines (kept to `range` and `session`), and the events the log holds. `redact` masks
/// secrets in every event before anything is folded from it, counting them.
fn fold(
    snap: &engine::log::ReadSnapshot,
    rewinds: projections::fold::Rewinds,
    settings: &Settings,
    session: Option<&str>,
    range: Range,
    mut redact: Option<&mut usize>,
) -> Result<(Full, Timelines, u64)> {
    let mut full = Full::with_rewinds(rewinds);
    snap.for_each(|e| {
        match redact.as_deref_mut() {
            Some(count) => full.apply(&masked(e, count)),
            None => full.apply(&e),
        }
        Ok(())
    })?;
    let sid = match session {
        Some(s) => Some(engine::resolve_session(full.state.sessions.keys(), s)?),
        None => None,
    };
    let mut tl = Timelines::default();
    let hidden = &full.rewinds;
    // Counted once, by the fold above.
    let mut uncounted = 0;
    snap.for_each(|e| {
        let e = match redact {
            Some(_) => masked(e, &mut uncounted),
            None => e,
        };
        let keep = range.contains(e.recorded_at_us)
            && sid
                .as_deref()
                .is_none_or(|s| e.session_id.as_deref() == Some(s))
            && !hidden.hides(&e);
        tl.apply(&e, &settings.policy, keep);
        Ok(())
    })?;
    Ok((filtered(full, sid.as_deref()), tl, snap.head_seq))
}

/// `e` with the secrets in its payload masked (`[REDACTED:<kind>]`), adding their number to
/// `count`. Masked JSON still parses, so the folds read the event as before.
fn masked(mut e: engine::log::Envelope, count: &mut usize) -> engine::log::Envelope {
    let text = String::from_utf8_lossy(&e.payload);
    let (text, n) = projections::redact::redact(&text);
    if n > 0 {
        *count += n;
        e.payload = text.into_owned().into_bytes();
    }
    e
}

/// Keeps only the chosen session's state (tasks: its own and the journal-wide ones).
fn filtered(mut full: Full, session: Option<&str>) -> Full {
    if let Some(s) = session {
        full.state.sessions.retain(|k, _| k == s);
        for c in full.state.cost.values_mut() {
            c.by_key.retain(|_, r| r.session == s);
        }
        for t in full.state.totals.values_mut() {
            t.rows.retain(|k, _| k.session == s);
            t.host.retain(|k, _| k == s);
            t.reported.retain(|k, _| k == s);
        }
    }
    full
}

struct Ctx<'a> {
    dir: &'a Path,
    settings: &'a Settings,
    range: Range,
    session: Option<&'a str>,
    events: u64,
}

/// HTML-escapes text from payloads, and drops what could reorder or hide it (bidi controls,
/// control characters other than newline and tab).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() || projections::statusline::is_bidi(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn usd(x: f64) -> String {
    crate::output::usd(x)
}

fn time(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

fn clock(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .map(|t| t.format("%H:%M:%S").to_string())
        .unwrap_or_default()
}

const CSS: &str = r#"
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--mute:#6b7383;--line:#e3e6eb;--blue:#2f6fde;--violet:#8a4fd8;--green:#2e9d5b;--amber:#d98a00;--red:#d23c3c}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header{background:#1d2330;color:#fff;padding:22px 32px}
header h1{margin:0;font-size:22px;font-weight:600;letter-spacing:.2px}
header p{margin:4px 0 0;color:#b7bfcc;font-size:13px}
main{padding:20px 32px 40px;max-width:1280px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 22px;margin:0 0 18px;box-shadow:0 1px 2px rgba(20,30,50,.04)}
h2{font-size:16px;margin:0 0 12px;font-weight:600}
h3{font-size:14px;margin:14px 0 8px;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;background:none;border:none;box-shadow:none;padding:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px}
.card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}
.card .k{color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
figure{margin:0}
figcaption{color:var(--mute);font-size:12px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.5px}
svg{display:block;max-width:100%;height:auto}
svg.chart-svg{width:100%}
svg text{font:11px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;fill:var(--mute)}
.empty{color:var(--mute);font-style:italic;margin:6px 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--mute);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.4px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.legend{display:flex;gap:16px;flex-wrap:wrap;color:var(--mute);font-size:12px;margin:6px 0 0}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:5px;vertical-align:-2px}
.timeline{list-style:none;margin:0;padding:0}
.timeline li{display:grid;grid-template-columns:70px 110px 1fr;gap:10px;padding:6px 0;border-bottom:1px solid var(--line)}
.timeline .t{color:var(--mute);font-variant-numeric:tabular-nums;font-size:12px}
.badge{display:inline-block;font-size:11px;font-weight:600;border-radius:10px;padding:1px 8px;color:#fff;background:#7a8394;text-align:center;align-self:start}
.k-prompt .badge{background:var(--blue)}.k-tool .badge{background:#5d6778}.k-failure .badge{background:var(--red)}
.k-answer .badge{background:var(--violet)}.k-compaction .badge{background:var(--amber)}.k-session .badge{background:var(--green)}
.k-notification .badge{background:#a07c2c}.k-stop .badge{background:#8a93a3}
.body b{font-weight:600}.body .txt{white-space:pre-wrap;word-break:break-word;color:#39404d}
.why{color:var(--mute);font-size:12px;margin-top:2px}
details{margin:0 0 10px}summary{cursor:pointer;font-weight:600;padding:4px 0}
.board{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}
.col{background:var(--bg);border-radius:8px;padding:10px;min-height:60px}
.col h3{margin:0 0 8px;font-size:12px;text-transform:uppercase;letter-spacing:.5px;color:var(--mute)}
.task{background:var(--card);border:1px solid var(--line);border-left:4px solid #9aa3b2;border-radius:6px;padding:7px 9px;margin:0 0 8px;font-size:13px}
.s-in_progress{border-left-color:var(--blue)}.s-completed{border-left-color:var(--green)}.s-failed{border-left-color:var(--red)}.s-pending{border-left-color:var(--amber)}
.task .id{color:var(--mute);font-size:11px}
.pos{color:var(--red)}.neg{color:var(--green)}
footer{color:var(--mute);font-size:12px;padding:0 32px 30px}
section.project{background:none;border:none;box-shadow:none;padding:0;margin:28px 0 0}
"#;

fn render(ctx: &Ctx, full: &Full, tl: &Timelines) -> String {
    let (since, until) = ctx.range.days();
    let mut slice = Vec::new();
    if let Some(s) = ctx.session {
        slice.push(format!("session {s}"));
    }
    if let Some(s) = &since {
        slice.push(format!("since {s}"));
    }
    if let Some(u) = &until {
        slice.push(format!("until {u}"));
    }
    let mut h = page_head();
    let _ = write!(
        h,
        "<header><h1>hookjournal report</h1><p>{} · {} events{}</p></header>\n<main>\n",
        esc(&ctx.dir.display().to_string()),
        ctx.events,
        if slice.is_empty() {
            String::new()
        } else {
            format!(" · {}", esc(&slice.join(", ")))
        }
    );
    body(&mut h, ctx, full, tl);
    page_end(h)
}

/// The page up to its `<body>`: the document, its policy (nothing loads from anywhere), the CSS.
fn page_head() -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    h.push_str("<title>hookjournal report</title><style>");
    h.push_str(CSS);
    h.push_str("</style></head><body>\n");
    h
}

/// The page's end: `</main>`, the footer, `</body>`.
fn page_end(mut h: String) -> String {
    h.push_str("</main>\n");
    let _ = writeln!(
        h,
        "<footer>hookjournal {} · every figure is a fold over the journal's events; costs are computed from transcript usage with the embedded price table, host figures are what Claude Code's statusline reported.</footer>\n</body></html>",
        env!("CARGO_PKG_VERSION")
    );
    h
}

/// One journal's sections: the summary cards, cost, context, sessions, timelines, task board.
fn body(h: &mut String, ctx: &Ctx, full: &Full, tl: &Timelines) {
    let pricing = ctx.settings.pricing();
    let (since, until) = ctx.range.days();
    let (since, until) = (since.as_deref(), until.as_deref());
    let cost = full.cost();
    let items = report::cost_items(&cost, &pricing);
    let (days, total) = report::cost_rows(&items, &cost.reported, CostBy::Day, since, until, None);
    let (models, _) = report::cost_rows(&items, &cost.reported, CostBy::Model, since, until, None);
    let st = &full.state;
    let facts = |s: &str| {
        st.sessions
            .get(s)
            .map(report::SessionFacts::of)
            .unwrap_or_default()
    };
    let (rec, rec_total) =
        report::reconcile(&items, &cost.reported, &cost.host, &facts, since, until);
    let mut sessions: Vec<_> = st.sessions.values().collect();
    sessions.sort_by_key(|s| s.first_seq);
    let tasks = st.all_tasks();
    summary_cards(h, &sessions, &tasks, &total, &rec_total);
    cost_section(h, &days, &models, &rec, &rec_total);
    context_section(h, ctx, &sessions, tl);
    sessions_table(h, &sessions, &pricing);
    timeline_section(h, &sessions, tl);
    task_board(h, &tasks);
}

/// The summary cards: sessions, cost, tokens, compactions, open tasks.
fn summary_cards(
    h: &mut String,
    sessions: &[&projections::session::SessionState],
    tasks: &[&Task],
    total: &report::CostRow,
    rec_total: &Reconciled,
) {
    let tokens: u64 = total.total_tokens;
    let compactions: u64 = sessions.iter().map(|s| s.compactions).sum();
    let open = tasks.iter().filter(|t| t.status.is_open()).count();
    h.push_str("<section class=\"cards\" id=\"summary\">");
    let mut card = |k: &str, v: String| {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div></div>",
            esc(k),
            esc(&v)
        );
    };
    card("sessions", sessions.len().to_string());
    card("cost (transcripts)", usd(total.usd));
    card(
        "cost (host reported)",
        rec_total.host_usd.map(usd).unwrap_or_else(|| "–".into()),
    );
    card("tokens", crate::output::tokens(tokens));
    card("compactions", compactions.to_string());
    card("open tasks", open.to_string());
    h.push_str("</section>\n");
}

/// Cost per day and per model, and the reconciliation with what the host reported.
fn cost_section(
    h: &mut String,
    days: &[report::CostRow],
    models: &[report::CostRow],
    rec: &[Reconciled],
    rec_total: &Reconciled,
) {
    h.push_str("<section id=\"cost\"><h2>Cost</h2><div class=\"grid2\">");
    h.push_str(
        "<figure id=\"chart-cost-day\" class=\"chart\"><figcaption>per day (UTC)</figcaption>",
    );
    h.push_str(&day_chart(days));
    h.push_str("</figure><figure id=\"chart-cost-model\" class=\"chart\"><figcaption>per model</figcaption>");
    h.push_str(&model_chart(models));
    h.push_str("</figure></div>");
    h.push_str(&reconciliation(rec, rec_total));
    h.push_str("</section>\n");
}

/// Context use over time, one chart per session with readings.
fn context_section(
    h: &mut String,
    ctx: &Ctx,
    sessions: &[&projections::session::SessionState],
    tl: &Timelines,
) {
    h.push_str("<section id=\"context\"><h2>Context use over time</h2>");
    let mut any = false;
    for (i, s) in sessions.iter().enumerate() {
        let Some(t) = tl.sessions.get(&s.id) else {
            continue;
        };
        if t.context.is_empty() && t.marks.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(
            h,
            "<figure class=\"chart context-chart\" id=\"context-{i}\"><figcaption>session {} · {}</figcaption>{}</figure>",
            esc(projections::short_id(&s.id)),
            esc(s.model.as_deref().or(t.model.as_deref()).unwrap_or("model unknown")),
            context_chart(t, &ctx.settings.policy)
        );
    }
    if !any {
        h.push_str("<figure class=\"chart context-chart\" id=\"context-none\">");
        h.push_str(&empty_chart(1100, 160, "no context readings yet"));
        h.push_str("</figure>");
    }
    h.push_str("<div class=\"legend\"><span><i style=\"background:#2f6fde\"></i>transcripts</span><span><i style=\"background:#8a4fd8\"></i>host (statusline)</span><span><i style=\"background:#d98a00\"></i>compaction</span><span><i style=\"background:#e0a800;border-radius:50%\"></i>task reminder</span><span><i style=\"background:#d23c3c\"></i>blocked</span><span><i style=\"background:#fde8e8\"></i>warning / critical / emergency tiers</span></div>");
    h.push_str("</section>\n");
}

/// One row per session.
fn sessions_table(
    h: &mut String,
    sessions: &[&projections::session::SessionState],
    pricing: &projections::pricing::PricingTable,
) {
    h.push_str("<section id=\"sessions\"><h2>Sessions</h2>");
    if sessions.is_empty() {
        h.push_str("<p class=\"empty\">no sessions recorded yet</p>");
    } else {
        h.push_str("<table><thead><tr><th>session</th><th>host</th><th>started</th><th>status</th><th>model</th><th class=\"n\">events</th><th class=\"n\">tools</th><th class=\"n\">compactions</th><th class=\"n\">cost</th></tr></thead><tbody>");
        for s in sessions {
            let (usd_s, _) = report::session_usd(s, pricing);
            let _ = write!(
                h,
                "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&s.id),
                esc(projections::short_id(&s.id)),
                esc(&s.host),
                time(s.first_at_us),
                s.status.as_str(),
                esc(s.model.as_deref().unwrap_or("-")),
                s.hook_events,
                s.tool_calls,
                s.compactions,
                usd(usd_s)
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>\n");
}

/// Each session's timeline, with why each answer was given.
fn timeline_section(
    h: &mut String,
    sessions: &[&projections::session::SessionState],
    tl: &Timelines,
) {
    h.push_str("<section id=\"timeline\"><h2>Timeline</h2>");
    let mut any = false;
    for s in sessions {
        let Some(t) = tl.sessions.get(&s.id) else {
            continue;
        };
        if t.items.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(
            h,
            "<details open class=\"session-timeline\"><summary>session {} · {} items{}</summary><ol class=\"timeline\">",
            esc(projections::short_id(&s.id)),
            t.items.len(),
            if t.dropped_items > 0 {
                format!(" (the {} earlier ones left out)", t.dropped_items)
            } else {
                String::new()
            }
        );
        for it in &t.items {
            let _ = write!(
                h,
                "<li class=\"item k-{}\" id=\"ev-{}\"><span class=\"t\" title=\"{}\">{}</span><span class=\"badge\">{}</span><div class=\"body\"><b>{}</b>",
                it.kind,
                it.seq,
                time(it.at_us),
                clock(it.at_us),
                it.kind,
                esc(&it.title)
            );
            if !it.text.is_empty() {
                let _ = write!(h, " <span class=\"txt\">{}</span>", esc(&it.text));
            }
            if let Some(w) = &it.why {
                let _ = write!(h, "<div class=\"why\">why: {}</div>", esc(w));
            }
            h.push_str("</div></li>");
        }
        h.push_str("</ol></details>");
    }
    if !any {
        h.push_str("<ol class=\"timeline\"></ol><p class=\"empty\">nothing happened yet</p>");
    }
    h.push_str("</section>\n");
}

/// The task board, one column per status.
fn task_board(h: &mut String, tasks: &[&Task]) {
    h.push_str("<section id=\"tasks\"><h2>Task board</h2><div class=\"board\">");
    for (status, title) in [
        (TaskStatus::Pending, "pending"),
        (TaskStatus::InProgress, "in progress"),
        (TaskStatus::Completed, "completed"),
        (TaskStatus::Failed, "failed"),
    ] {
        let mine: Vec<&&Task> = tasks.iter().filter(|t| t.status == status).collect();
        let _ = write!(
            h,
            "<div class=\"col\" data-status=\"{}\"><h3>{} · {}</h3>",
            status.as_str(),
            title,
            mine.len()
        );
        for t in mine {
            let _ = write!(
                h,
                "<div class=\"task s-{}\"><div class=\"id\">{}{}</div>{}{}</div>",
                t.status.as_str(),
                esc(&t.task_ref().display()),
                t.owner
                    .as_deref()
                    .map(|o| format!(" · {}", esc(o)))
                    .unwrap_or_default(),
                esc(&t.subject),
                t.fail_reason
                    .as_deref()
                    .map(|r| format!(
                        "<div class=\"why\">failed: {} (retries {})</div>",
                        esc(r),
                        t.retry_count
                    ))
                    .unwrap_or_default()
            );
        }
        h.push_str("</div>");
    }
    h.push_str("</div>");
    if tasks.is_empty() {
        h.push_str("<p class=\"empty\">no tasks</p>");
    }
    h.push_str("</section>\n");
}

fn reconciliation(rows: &[Reconciled], total: &Reconciled) -> String {
    if total.host_usd.is_none() {
        return String::new();
    }
    let mut h = String::from("<h3>Transcripts vs what the host reported</h3><table id=\"reconciliation\"><thead><tr><th>session</th><th class=\"n\">transcripts</th><th class=\"n\">host reported</th><th class=\"n\">difference</th><th>why</th></tr></thead><tbody>");
    for r in rows.iter().chain(std::iter::once(total)) {
        let diff = r
            .difference_usd
            .map(|d| {
                format!(
                    "<span class=\"{}\">{}{}</span>",
                    if d >= 0.0 { "pos" } else { "neg" },
                    if d >= 0.0 { "+" } else { "−" },
                    usd(d.abs())
                )
            })
            .unwrap_or_else(|| "–".into());
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(projections::short_id(&r.session)),
            usd(r.transcript_usd),
            r.host_usd.map(usd).unwrap_or_else(|| "–".into()),
            diff,
            esc(&r.explanation.join("; "))
        );
    }
    h.push_str("</tbody></table>");
    h
}

fn empty_chart(w: u32, hgt: u32, msg: &str) -> String {
    format!(
        "<svg class=\"chart-svg\" viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\"><rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"{}\" rx=\"8\" fill=\"#fafbfc\" stroke=\"#e3e6eb\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></svg>",
        w - 1,
        hgt - 1,
        w / 2,
        hgt / 2,
        esc(msg)
    )
}

/// A round axis maximum: 1, 2, 2.5 or 5 × 10ⁿ at or above `x`.
fn nice_max(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= x - 1e-12 {
            return m * p;
        }
    }
    10.0 * p
}

fn day_chart(days: &[CostRow]) -> String {
    let (w, hgt) = (540.0, 240.0);
    if days.is_empty() {
        return empty_chart(540, 240, "no usage recorded");
    }
    let (l, r, t, b) = (56.0, 12.0, 14.0, 40.0);
    let max = nice_max(days.iter().map(|d| d.usd).fold(0.0, f64::max));
    let mut s = format!("<svg class=\"chart-svg\" viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"cost per day\">");
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = t + (hgt - t - b) * (1.0 - i as f64 / 4.0);
        let label = if max < 10.0 {
            format!("${v:.2}")
        } else {
            format!("${v:.0}")
        };
        let _ = write!(s, "<line x1=\"{l}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eceef2\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", w - r, l - 6.0, y + 4.0, esc(&label));
    }
    let n = days.len() as f64;
    let slot = (w - l - r) / n;
    let bw = (slot * 0.7).min(48.0);
    let every = (days.len() / 10).max(1);
    for (i, d) in days.iter().enumerate() {
        let x = l + slot * i as f64 + (slot - bw) / 2.0;
        let bh = (hgt - t - b) * d.usd / max;
        let y = hgt - b - bh;
        let _ = write!(
            s,
            "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"{bh:.1}\" rx=\"3\" fill=\"#2f6fde\"><title>{}: {} ({} responses)</title></rect>",
            esc(&d.key),
            esc(&usd(d.usd)),
            d.responses
        );
        if i % every == 0 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + bw / 2.0,
                hgt - b + 16.0,
                esc(d.key.get(5..).unwrap_or(&d.key))
            );
        }
        if days.len() <= 12 {
            let _ = write!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"fill:#1d2330\">{}</text>", x + bw / 2.0, y - 4.0, esc(&usd(d.usd)));
        }
    }
    let _ = write!(
        s,
        "<line x1=\"{l}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#b9c0cc\"/></svg>",
        w - r,
        hgt - b,
        hgt - b
    );
    s
}

fn model_chart(models: &[CostRow]) -> String {
    if models.is_empty() {
        return empty_chart(540, 240, "no usage recorded");
    }
    let row_h = 30.0;
    let (w, l, r, t) = (540.0, 170.0, 70.0, 8.0);
    let hgt = t * 2.0 + row_h * models.len() as f64;
    let max = models.iter().map(|m| m.usd).fold(0.0, f64::max).max(1e-9);
    let colors = [
        "#2f6fde", "#8a4fd8", "#2e9d5b", "#d98a00", "#d23c3c", "#5d6778",
    ];
    let mut s = format!("<svg class=\"chart-svg\" viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"cost per model\">");
    for (i, m) in models.iter().enumerate() {
        let y = t + row_h * i as f64;
        let bw = (w - l - r) * m.usd / max;
        let name: String = m.key.chars().take(26).collect();
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" style=\"fill:#1d2330\">{}</text><rect class=\"bar\" x=\"{l}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"{}\"><title>{}: {} ({} tokens)</title></rect><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            l - 8.0,
            y + row_h / 2.0 + 4.0,
            esc(&name),
            y + 5.0,
            bw.max(1.0),
            row_h - 10.0,
            colors[i % colors.len()],
            esc(&m.key),
            esc(&usd(m.usd)),
            crate::output::tokens(m.total_tokens),
            l + bw.max(1.0) + 6.0,
            y + row_h / 2.0 + 4.0,
            esc(&usd(m.usd))
        );
    }
    s.push_str("</svg>");
    s
}

fn context_chart(tl: &SessionTimeline, cfg: &projections::config::PolicyConfig) -> String {
    let (w, hgt) = (1180.0, 230.0);
    let (l, r, t, b) = (44.0, 16.0, 16.0, 28.0);
    let t0 = tl.first_at_us;
    let t1 = tl.last_at_us.max(t0 + 1);
    let x = |us: i64| l + (w - l - r) * (us - t0) as f64 / (t1 - t0) as f64;
    let y = |pct: f64| t + (hgt - t - b) * (1.0 - pct.clamp(0.0, 100.0) / 100.0);
    let mut s = format!("<svg class=\"chart-svg\" viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"context use over time\">");
    // Tier bands.
    for (from, to, color) in [
        (cfg.warning * 100.0, cfg.critical * 100.0, "#fff6e0"),
        (cfg.critical * 100.0, cfg.emergency * 100.0, "#fdeaea"),
        (cfg.emergency * 100.0, 100.0, "#f9d6d6"),
    ] {
        let _ = write!(
            s,
            "<rect x=\"{l}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/>",
            y(to),
            w - l - r,
            y(from) - y(to)
        );
    }
    for p in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let _ = write!(s, "<line x1=\"{l}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eceef2\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{p:.0}%</text>", w - r, y(p), y(p), l - 6.0, y(p) + 4.0);
    }
    let _ = write!(
        s,
        "<text x=\"{l}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
        hgt - 8.0,
        esc(&time(t0)),
        w - r,
        hgt - 8.0,
        esc(&time(t1))
    );
    for (src, color, dash) in [
        ("transcript", "#2f6fde", ""),
        ("host", "#8a4fd8", " stroke-dasharray=\"5 4\""),
    ] {
        let pts: Vec<_> = tl.context.iter().filter(|p| p.source == src).collect();
        if pts.is_empty() {
            continue;
        }
        let path: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.at_us), y(p.pct)))
            .collect();
        let _ = write!(s, "<polyline class=\"context-line\" data-source=\"{src}\" points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-linejoin=\"round\"{dash}/>", path.join(" "));
        for p in pts {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{} · {:.1}%{}</title></circle>",
                x(p.at_us),
                y(p.pct),
                esc(&time(p.at_us)),
                p.pct,
                p.tokens.map(|t| format!(" · {} tokens ({src})", crate::output::tokens(t))).unwrap_or_default()
            );
        }
    }
    for m in &tl.marks {
        let mx = x(m.at_us);
        let title = format!("<title>{} · {}</title>", esc(&time(m.at_us)), esc(&m.label));
        let _ = match m.kind {
            MarkKind::Compaction => write!(s, "<g class=\"mark mark-compaction\"><line x1=\"{mx:.1}\" x2=\"{mx:.1}\" y1=\"{t}\" y2=\"{}\" stroke=\"#d98a00\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/><rect x=\"{:.1}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"#d98a00\"/>{title}</g>", hgt - b, mx - 6.0, t - 6.0),
            MarkKind::Reminder => write!(s, "<g class=\"mark mark-reminder\"><circle cx=\"{mx:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"#e0a800\" stroke=\"#fff\" stroke-width=\"1.5\"/>{title}</g>", hgt - b - 8.0),
            MarkKind::Block => write!(s, "<g class=\"mark mark-block\"><path d=\"M{:.1},{:.1} l7,12 h-14 z\" fill=\"#d23c3c\"/>{title}</g>", mx, hgt - b - 20.0),
        };
    }
    let _ = write!(
        s,
        "<line x1=\"{l}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#b9c0cc\"/></svg>",
        w - r,
        hgt - b,
        hgt - b
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_text_is_escaped_and_bidi_controls_dropped() {
        assert_eq!(
            esc("<script>alert('x')</script>&\u{202e}\x1b[2J\n"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;[2J\n"
        );
    }

    #[test]
    fn axis_maxima_are_round() {
        assert_eq!(nice_max(0.54), 1.0);
        assert_eq!(nice_max(0.21), 0.25);
        assert_eq!(nice_max(3.2), 5.0);
        assert_eq!(nice_max(0.0), 1.0);
    }

    #[test]
    fn an_empty_state_still_has_every_section() {
        let settings = Settings::default();
        let ctx = Ctx {
            dir: Path::new("/j"),
            settings: &settings,
            range: Range::new(None, None).unwrap(),
            session: None,
            events: 0,
        };
        let h = render(&ctx, &Full::default(), &Timelines::default());
        for id in [
            "summary",
            "cost",
            "chart-cost-day",
            "chart-cost-model",
            "context",
            "timeline",
            "tasks",
        ] {
            assert!(h.contains(&format!("id=\"{id}\"")), "{id} missing");
        }
    }
}
