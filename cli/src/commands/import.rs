//! `import --events FILE`: rebuild a journal from an events export (same hashes, same chain head).
//! `import --transcripts DIR`: backfill usage from a Claude Code projects folder, deduplicated
//! against what the journal already holds.
//! `import --discover`: the same from every hosted agent's default folders under the home, for
//! this project's sessions (`engine::discover`).

use crate::cli_util::CommandHelper;
use crate::eventjson;
use anyhow::{Context, Result};
use engine::import;
use engine::log::{hex, Envelope};
use engine::Journal;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `import` flags.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["events", "transcripts", "discover"])))]
pub struct Args {
    /// An `export --report events` file (`-` for stdin). The journal must be empty.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// A Claude Code projects folder (`~/.claude/projects`, or one project inside it).
    #[arg(long)]
    pub transcripts: Option<PathBuf>,
    /// Find this project's sessions in the agents' own folders under the home (Claude Code,
    /// Codex, Gemini CLI, Qwen Code, Copilot CLI, OpenCode, Kilo Code; `CLAUDE_CONFIG_DIR`,
    /// `CODEX_HOME`, `GEMINI_DATA_DIR`, `QWEN_DATA_DIR`, `COPILOT_HOME`, `OPENCODE_DATA_DIR`,
    /// `KILO_DATA_DIR`, `XDG_DATA_HOME` honoured) and import their usage: what no hook saw.
    #[arg(long)]
    pub discover: bool,
}

/// Imports an events export into a new journal, or transcript usage into this one.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let segment_events = cmd.settings().hook.segment_events;
    import::run(cmd.dir(), segment_events, |j| {
        match (&args.events, &args.transcripts) {
            (Some(file), _) => import_events(j, file),
            (None, Some(folder)) => import_transcripts(j, folder),
            (None, None) => import_discovered(j),
        }
    })?;
    crate::cli_util::register(cmd.dir());
    Ok(ExitCode::SUCCESS)
}

/// The longest line an events export can hold: a payload at the 64 MiB cap, base64-encoded.
const MAX_LINE: u64 = 96 << 20;
/// Reads one line into `buf` (without its newline), refusing one longer than `MAX_LINE`.
/// `Ok(false)` at the end of the input.
fn read_line_capped(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, MAX_LINE + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if n as u64 > MAX_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "a line longer than {} MiB: not an events export",
                MAX_LINE >> 20
            ),
        ));
    }
    Ok(true)
}

/// Imports an events export (`import::events`): its lines read and parsed here, the progress
/// drawn.
fn import_events(j: &mut Journal, file: &Path) -> Result<()> {
    let mut len = 0;
    let mut reader: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        // A file the user names, read line by line with each line capped: a pipe or a device
        // (`<(…)`, `/dev/stdin`) streams as well as a file does.
        let f = std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
        len = f.metadata().map(|m| m.len()).unwrap_or(0);
        Box::new(std::io::BufReader::with_capacity(1 << 20, f))
    };
    let bar = crate::output::progress(len, "import");
    let mut line = Vec::new();
    let mut i = 0usize;
    let lines = std::iter::from_fn(|| loop {
        match read_line_capped(&mut reader, &mut line)
            .with_context(|| format!("reading {} line {}", file.display(), i + 1))
        {
            Err(e) => return Some(Err(e)),
            Ok(false) => return None,
            Ok(true) => {}
        }
        i += 1;
        bar.inc(line.len() as u64 + 1);
        let Ok(text) = std::str::from_utf8(&line) else {
            return Some(Err(anyhow::anyhow!(
                "{} line {i}: not UTF-8 text",
                file.display()
            )));
        };
        if text.trim().is_empty() {
            continue;
        }
        return Some(
            eventjson::read_line(text)
                .map(|env: Envelope| (i, env))
                .map_err(|e| anyhow::anyhow!("{} line {i}: {e}", file.display())),
        );
    });
    import::events(j, &file.display().to_string(), lines)?;
    bar.finish_and_clear();
    eprintln!(
        "hookjournal: imported {} events; chain head {}",
        j.head_seq(),
        &hex(&j.head_hash())[..16]
    );
    Ok(())
}

/// Imports transcript usage (`import::transcripts`), the progress drawn.
fn import_transcripts(j: &mut Journal, folder: &Path) -> Result<()> {
    let files = import::transcript_files(folder)?;
    let bar = crate::output::progress(files.len() as u64, "import");
    let imported = import::transcripts(j, &files, import::TRANSCRIPT_BATCH, &mut || bar.inc(1))?;
    bar.finish_and_clear();
    eprintln!(
        "hookjournal: imported {} responses' usage from {} transcripts",
        imported.usage_events(),
        files.len()
    );
    Ok(())
}

/// Imports the usage of this project's sessions found in the agents' own folders
/// (`discover::discover`): one line per folder read, the files skipped noted, then the total and
/// the sessions no hook saw.
fn import_discovered(j: &mut Journal) -> Result<()> {
    let dir = std::path::absolute(j.dir()).unwrap_or_else(|_| j.dir().to_path_buf());
    let project = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let folders = engine::discover::discover(&engine::discover::Roots::from_env(), &project);
    let files: Vec<_> = folders.iter().flat_map(|f| f.files.clone()).collect();
    let bar = crate::output::progress(files.len() as u64, "import");
    let imported = if files.is_empty() {
        import::Imported::default()
    } else {
        import::transcripts(j, &files, import::TRANSCRIPT_BATCH, &mut || bar.inc(1))?
    };
    bar.finish_and_clear();
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let shown = |p: &Path| match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    };
    let mut at = 0;
    for f in &folders {
        let usage: usize = imported
            .usage
            .get(at..at + f.files.len())
            .map_or(0, |u| u.iter().sum());
        at += f.files.len();
        for note in &f.notes {
            eprintln!("hookjournal: {note}");
        }
        eprintln!(
            "hookjournal: {} {}: {}, {usage} responses' usage",
            f.host,
            shown(&f.root),
            crate::output::count(f.files.len() as u64, "session file"),
        );
    }
    eprintln!(
        "hookjournal: imported {} responses' usage from {} of this project ({}); {} no hook saw (`sessions` shows them as `files`)",
        imported.usage_events(),
        crate::output::count(files.len() as u64, "session file"),
        project.display(),
        crate::output::count(imported.files_only.len() as u64, "session"),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::log::{NewEvent, ReadSnapshot};
    use engine::OpenOptions;
    use projections::Kind;
    use proptest::prelude::*;
    use std::time::Duration;

    fn kind(k: u8, name: &str, seq: u64) -> Kind {
        match k % 6 {
            0 => Kind::Hook {
                name: name.to_string(),
            },
            1 => Kind::Malformed {
                reason: format!("bad {name}"),
            },
            2 => Kind::UsageObserved { cause: seq },
            3 => Kind::ResponseEmitted { cause: seq },
            4 => Kind::TaskCommand,
            _ => Kind::Rewound {
                session: name.to_string(),
                to_seq: seq,
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// export → import reproduces the same chain head, for random events (any payload bytes,
        /// pretty JSON, binary, empty; every kind; truncation; spooled; several segments).
        #[test]
        fn export_then_import_reproduces_the_chain_head(
            events in proptest::collection::vec(
                (any::<u8>(), "[A-Za-z]{1,12}", proptest::collection::vec(any::<u8>(), 0..200), any::<bool>(), any::<bool>(), proptest::option::of("[a-z0-9-]{1,20}")),
                1..60,
            ),
            segment in 3u64..25,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let a = dir.path().join("a");
            let opts = OpenOptions { create: true, segment_events: segment, ..OpenOptions::default() };
            let mut j = Journal::open(&a, &opts).unwrap();
            for (i, (k, name, bytes, json, spooled, session)) in events.iter().enumerate() {
                let payload = if *json { format!("{{\"n\": \"{name}\",\n \"i\": {i}}}").into_bytes() } else { bytes.clone() };
                let mut tx = j.begin();
                tx.push(NewEvent {
                    recorded_at_us: 1_700_000_000_000_000 + i as i64,
                    host: "claude".into(),
                    kind: kind(*k, name, i as u64).into(),
                    session_id: session.clone(),
                    agent_id: (k % 3 == 0).then(|| "agent-7".to_string()),
                    payload,
                    truncated: None,
                    spooled: *spooled,
                }.capped(150));
                j.commit(tx).unwrap();
                j.seal_if_full().unwrap();
            }
            let head = (j.head_seq(), j.head_hash());
            drop(j);
            let snap = ReadSnapshot::take(&a, Duration::from_secs(5)).unwrap();
            let file = dir.path().join("events.jsonl");
            let mut out = Vec::new();
            snap.for_each(|e| {
                eventjson::write_line(&mut out, &e, None).unwrap();
                Ok(())
            }).unwrap();
            std::fs::write(&file, &out).unwrap();
            let b = dir.path().join("b");
            let mut jb = Journal::open(&b, &opts).unwrap();
            import_events(&mut jb, &file).unwrap();
            prop_assert_eq!((jb.head_seq(), jb.head_hash()), head);
            drop(jb);
            let report = engine::log::verify(&b, Duration::from_secs(5), |_| {}).unwrap();
            prop_assert!(report.ok(), "{:?}", report.damage);
        }
    }
}
