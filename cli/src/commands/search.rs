//! `search QUERY`: every prompt, tool input and output, file path, command, notification and task
//! of the journal, ranked by relevance, each with its session, time and seq.

use crate::cli_util::CommandHelper;
use crate::output::{self, Align, Table};
use engine::search::{Hit, Query};
use std::process::ExitCode;

/// `search` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The words to look for (all of them; `word*` for words starting so).
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Only this session's events (its id or first characters).
    #[arg(long)]
    pub session: Option<String>,
    /// At most this many matches, best first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Replace secrets (keys, tokens, passwords) in the snippets with `[REDACTED:kind]`.
    #[arg(long)]
    pub redact: bool,
    /// Throw the search index away and build it again from the log first.
    #[arg(long)]
    pub rebuild: bool,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Searches the journal.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let text = args.query.join(" ");
    let session = match args.session.as_deref() {
        Some(s) => Some(engine::state::Partial::open(cmd.dir())?.session(s)?),
        None => None,
    };
    let (mut hits, indexed) = engine::search::search(
        cmd.dir(),
        &Query {
            text: &text,
            session: session.as_deref(),
            limit: args.limit,
            rebuild: args.rebuild,
        },
    )?;
    if args.redact {
        hits.iter_mut().for_each(redact);
    }
    if indexed.rebuilt && indexed.added > 0 && !indexed.in_memory {
        eprintln!(
            "hookjournal: search index built from {}",
            output::count(indexed.added, "event")
        );
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            query: &'a str,
            hits: &'a [Hit],
            indexed: engine::search::Indexed,
        }
        output::print_json(&Json {
            query: &text,
            hits: &hits,
            indexed,
        });
        return Ok(ExitCode::SUCCESS);
    }
    if hits.is_empty() {
        println!(
            "no match for {text:?} in {}",
            output::count(indexed.events, "event")
        );
        return Ok(ExitCode::from(1));
    }
    print!("{}", render(&hits));
    println!(
        "\n{} of {}; `hookjournal show S --at SEQ` shows the session then, `hookjournal replay --session S --from SEQ` the event in its place",
        match hits.len() {
            1 => "1 match".to_string(),
            n => format!("{n} matches"),
        },
        output::count(indexed.events, "event")
    );
    Ok(ExitCode::SUCCESS)
}

/// A hit's snippet with secrets masked (the markers taken out first, so none splits a secret).
fn redact(h: &mut Hit) {
    let plain = h.snippet.replace(['«', '»'], "");
    let (masked, n) = projections::redact::redact(&plain);
    if n > 0 {
        h.snippet = masked.into_owned();
    }
}

fn render(hits: &[Hit]) -> String {
    let mut t = Table::new(&[
        ("SEQ", Align::Right),
        ("RECORDED (UTC)", Align::Left),
        ("SESSION", Align::Left),
        ("KIND", Align::Left),
        ("FIELD", Align::Left),
        ("MATCH", Align::Left),
    ]);
    for h in hits {
        let at = chrono::DateTime::from_timestamp_micros(h.recorded_at_us)
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default();
        let snippet: String = h.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        t.row(vec![
            h.seq.to_string(),
            at,
            h.session
                .as_deref()
                .map(projections::short_id)
                .unwrap_or("-")
                .to_string(),
            h.kind.clone(),
            h.field.clone(),
            output::escape_text(&snippet),
        ]);
    }
    t.render()
}
