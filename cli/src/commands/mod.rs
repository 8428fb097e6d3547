//! One module per command, each a thin layer over the journal and projections crates.

pub mod completions;
pub mod context;
pub mod cost;
pub mod demo;
pub mod doctor;
pub mod drain;
pub mod export;
pub mod follow;
pub mod hook;
pub mod import;
pub mod install;
pub mod man;
pub mod notifications;
pub mod recover;
pub mod replay;
pub mod report;
pub mod rewind;
pub mod search;
pub mod sessions;
pub mod ship;
pub mod show;
pub mod status;
pub mod statusline;
pub mod tasks;
pub mod trust;
pub mod verify;
pub mod watch;

use crate::cli_util::CommandHelper;
use crate::{Cli, Command};
use std::process::ExitCode;

/// Runs a parsed command line (the hook and the statusline never get here: they parse their own
/// arguments, leniently).
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let cmd = CommandHelper::new(cli.journal);
    // `--source` (or $HOOKJOURNAL_SOURCE, which other commands ignore): the team store.
    let explicit = cli.source.is_some();
    let source = cli
        .source
        .or_else(|| std::env::var("HOOKJOURNAL_SOURCE").ok())
        .filter(|s| !s.trim().is_empty());
    let team_view = match &cli.command {
        Command::Sessions(_) | Command::Cost(_) => true,
        Command::Tasks(a) => matches!(a.cmd, None | Some(tasks::Cmd::List)),
        _ => false,
    };
    if let Some(source) = source.filter(|_| explicit || team_view) {
        let url = crate::ship::team::resolve(&source, cmd.journal_arg())?;
        return match cli.command {
            Command::Sessions(a) => crate::ship::team::sessions(&url, a.json),
            Command::Cost(a) => crate::ship::team::cost(
                &url,
                a.by,
                a.start_of_week.into(),
                a.since.as_deref(),
                a.until.as_deref(),
                a.json,
            ),
            Command::Tasks(a) => crate::ship::team::tasks(
                &url,
                matches!(a.cmd, None | Some(tasks::Cmd::List)),
                a.status.as_deref(),
                a.agent.as_deref(),
                a.json,
            ),
            _ => anyhow::bail!("--source works with `sessions`, `cost` and `tasks` only"),
        };
    }
    // A foreign journal is read as it is, with a note (`install` says it too: the hooks it
    // registers will not use that journal); uninstall works on the project, and trust and
    // doctor say it themselves.
    let says_origin = matches!(
        cli.command,
        Command::Uninstall(_)
            | Command::Trust(_)
            | Command::Doctor(_)
            | Command::Demo(_)
            | Command::Completions(_)
            | Command::Man(_)
    );
    if !says_origin {
        cmd.note_origin();
    }
    match cli.command {
        Command::Hook(_) => unreachable!("the hook is dispatched before argument parsing"),
        Command::Install(a) => install::run_install(&cmd, a),
        Command::Uninstall(a) => install::run_uninstall(&cmd, a),
        Command::Status(a) => status::run(&cmd, a),
        Command::Trust(a) => trust::run(&cmd, a),
        Command::Sessions(a) => sessions::run(&cmd, a),
        Command::Show(a) => show::run(&cmd, a),
        Command::Replay(a) => replay::run(&cmd, a),
        Command::Search(a) => search::run(&cmd, a),
        Command::Export(a) => export::run(&cmd, a),
        Command::Import(a) => import::run(&cmd, a),
        Command::Cost(a) => cost::run(&cmd, a),
        Command::Tasks(a) => tasks::run(&cmd, a),
        Command::Notifications(a) => notifications::run(&cmd, a),
        Command::Context(a) => context::run(&cmd, a),
        Command::Rewind(a) => rewind::run(&cmd, a),
        Command::Verify(a) => verify::run(&cmd, a),
        Command::Recover(a) => recover::run(&cmd, a),
        Command::Ship(a) => ship::run(&cmd, a),
        Command::Demo(a) => demo::run(&cmd, a),
        Command::Doctor(a) => doctor::run(&cmd, a),
        Command::Report(a) => report::run(&cmd, a),
        Command::Watch(a) => watch::run(&cmd, a),
        Command::Drain(a) => drain::run(&cmd, a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
        Command::FollowSession(a) => follow::run(&cmd, a),
        Command::Statusline(_) => {
            unreachable!("the statusline is dispatched before argument parsing")
        }
    }
}
