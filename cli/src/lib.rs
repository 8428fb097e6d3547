//! The `hookjournal` command line as a library (the jj split): the binary is `main.rs`, a few lines
//! calling [`main`]. Parsing the command line, the [`cli_util::CommandHelper`] every command
//! receives (the journal's location, its settings, the read views), and one module per command
//! under [`commands`], each a thin layer over the `journal` and `projections` crates. Every error
//! leaves as one line on stderr.

#![warn(missing_docs)]

pub mod cli_util;
mod clock;
pub mod commands;
mod dates;
mod eventjson;
/// Entry points for the fuzz targets in `fuzz/` (not an API).
#[doc(hidden)]
pub mod fuzz;
mod locate;
mod outfile;
mod output;
mod render;
mod ship;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "hookjournal",
    version,
    about = "An event-sourced journal for AI coding agent hooks"
)]
/// The command line, as clap parses it.
pub struct Cli {
    /// Journal directory (default: $HOOKJOURNAL_DIR, then $CLAUDE_PROJECT_DIR/.hookjournal in hook
    /// mode, then the nearest ancestor holding .hookjournal/, then ./.hookjournal).
    #[arg(long, global = true, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Read `sessions`, `cost` and `tasks` from a team store instead of the journal: a
    /// postgres:// URL, or `postgres` for $HOOKJOURNAL_POSTGRES_URL / `[ship] postgres` (default:
    /// $HOOKJOURNAL_SOURCE).
    #[arg(long = "source", id = "team_source", value_name = "URL")]
    pub source: Option<String>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command but the hook and the statusline, which parse their own arguments.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// The universal hook handler: stdin → journal → stdout. Always exits 0.
    Hook(commands::hook::Args),
    /// Register `hookjournal hook` in an agent's settings.
    ///
    /// Edits the project's settings at its root: the nearest directory from here up holding
    /// .hookjournal/, .claude, .codex, .gemini or .git (your home directory never counts), else
    /// this directory. Creates the project's journal there, so `hookjournal status` works at once.
    Install(commands::install::InstallArgs),
    /// Remove hookjournal's own entries from an agent's settings.
    ///
    /// Finds the project's settings as `install` does. The journal is left alone.
    Uninstall(commands::install::UninstallArgs),
    /// Is everything in place? Each agent's registration, the journal, the spool, the chain.
    ///
    /// One line per check; each problem names the command that fixes it. Exit 0 when healthy,
    /// 1 otherwise.
    Doctor(commands::doctor::Args),
    /// Events, sessions, segments, size, last event, chain state.
    Status(commands::status::Args),
    /// Adopt a foreign journal; honour the project's config.toml in full, as it is now (or --revoke).
    ///
    /// A journal that came with the repository, or from another machine or directory, is
    /// foreign: hooks record nothing into it and inject nothing from it until you adopt it
    /// here. Settings that run programs, stop agents or write outside the journal apply from a
    /// project's config.toml only once you trust it here; a change to the file makes it
    /// untrusted again.
    Trust(commands::trust::Args),
    /// One row per session.
    Sessions(commands::sessions::Args),
    /// The execution snapshot of a session.
    Show(commands::show::Args),
    /// Event by event, with the projection changes each event caused.
    Replay(commands::replay::Args),
    /// Find prompts, tool inputs and outputs, paths, commands, notifications and tasks.
    ///
    /// Every word is required (`word*` matches words starting so); matches are ranked by
    /// relevance, each with its seq, time, session and field. The index is derived from the
    /// journal (`.hookjournal/search/`), brought up to date by each search, rebuilt at will.
    Search(commands::search::Args),
    /// Write a JSONL report.
    Export(commands::export::Args),
    /// Rebuild a journal from an events export, or backfill usage from transcripts or the agents' own files.
    Import(commands::import::Args),
    /// Tokens and USD by session, day, week, month, 5-hour block, model, host or project.
    Cost(commands::cost::Args),
    /// The task store.
    Tasks(commands::tasks::Args),
    /// The notification log.
    Notifications(commands::notifications::Args),
    /// The exact text the hooks would inject.
    Context(commands::context::Args),
    /// Make every projection ignore a session's events after SEQ.
    Rewind(commands::rewind::Args),
    /// Check the hash chain, segments and projections.
    Verify(commands::verify::Args),
    /// Replace an active store that cannot be opened, continuing from the last sealed segment.
    Recover(commands::recover::Args),
    /// Ship the journal to a team store on PostgreSQL and/or an OTLP/HTTP receiver.
    Ship(commands::ship::Args),
    /// Play a bundled sample session into a temporary journal and show every view.
    Demo(commands::demo::Args),
    /// Claude Code's status line: one line from its JSON on stdin; records its cost and context.
    Statusline(commands::statusline::Args),
    /// Write a self-contained HTML report: cost, context over time, timelines, task board.
    Report(commands::report::Args),
    /// A live terminal view: sessions, burn rate, context, tasks (q quits).
    Watch(commands::watch::Args),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    ///
    /// bash: `hookjournal completions bash > ~/.local/share/bash-completion/completions/hookjournal`;
    /// zsh: `_hookjournal` in a directory on $fpath; fish:
    /// `~/.config/fish/completions/hookjournal.fish`.
    Completions(commands::completions::Args),
    /// Print the manual page (roff), or write one page per command with --dir.
    ///
    /// `hookjournal man --dir ~/.local/share/man/man1`, then `man hookjournal`.
    Man(commands::man::Args),
    /// Do now the upkeep a hook leaves to a background run: ingest the spool, catch the store up
    /// with the log, seal a full store, fill the hot cache.
    ///
    /// No one needs to run it: every command ingests the spool before it reads or writes, and a
    /// hook starts it detached when the store lags. Exit 0 when the journal is busy (left for
    /// the next run).
    Drain(commands::drain::Args),
    /// Reads the rest of a Copilot CLI session's file once it is written (started by the hook).
    #[command(hide = true)]
    FollowSession(commands::follow::Args),
}

/// The whole program: `main.rs` returns what this returns.
pub fn main() -> ExitCode {
    // The hook must never fail loudly: it parses its own arguments leniently.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match subcommand(&argv).as_deref() {
        Some("hook") => return commands::hook::main_guarded(argv),
        Some("statusline") => return commands::statusline::main_guarded(argv),
        _ => {}
    }
    // Commands printing to a closed pipe (`| head`) end quietly, like other Unix tools, instead
    // of failing on the write. (The hook keeps Rust's default: a write error is ignored there.)
    // SAFETY: restoring the default disposition of SIGPIPE before any thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // A panic is a bug, but still one line on stderr and exit 1, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("hookjournal: {}", output::panic_text(info));
    }));
    match std::panic::catch_unwind(|| commands::run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            eprintln!("hookjournal: {}", output::one_line(&format!("{e:#}")));
            let usage = e.downcast_ref::<output::UsageError>().is_some();
            ExitCode::from(if usage { 2 } else { 1 })
        }
        Err(_) => ExitCode::from(1),
    }
}

/// The subcommand of `hookjournal [--journal DIR] CMD …`: the hook and the statusline parse their
/// own flags, leniently (they must never fail on an argument).
fn subcommand(argv: &[std::ffi::OsString]) -> Option<String> {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let a = a.to_string_lossy();
        if a == "--journal" {
            i += 2;
        } else if a.starts_with("--journal=") {
            i += 1;
        } else {
            return Some(a.into_owned());
        }
    }
    None
}
