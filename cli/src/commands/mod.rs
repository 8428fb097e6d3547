//! One module per command, each a thin layer over the journal and projections crates.

pub mod context;
pub mod cost;
pub mod demo;
pub mod export;
pub mod hook;
pub mod import;
pub mod install;
pub mod notifications;
pub mod recover;
pub mod replay;
pub mod report;
pub mod rewind;
pub mod sessions;
pub mod ship;
pub mod show;
pub mod status;
pub mod statusline;
pub mod tasks;
pub mod verify;
pub mod watch;

use crate::{Cli, Command};
use std::process::ExitCode;

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let j = cli.journal;
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
        let url = crate::ship::team::resolve(&source, j.as_deref())?;
        return match cli.command {
            Command::Sessions(a) => crate::ship::team::sessions(&url, a),
            Command::Cost(a) => crate::ship::team::cost(&url, a),
            Command::Tasks(a) => crate::ship::team::tasks(&url, a),
            _ => anyhow::bail!("--source works with `sessions`, `cost` and `tasks` only"),
        };
    }
    match cli.command {
        Command::Hook(_) => unreachable!("the hook is dispatched before argument parsing"),
        Command::Install(a) => install::run_install(a, j),
        Command::Uninstall(a) => install::run_uninstall(a, j),
        Command::Status(a) => status::run(a, j),
        Command::Sessions(a) => sessions::run(a, j),
        Command::Show(a) => show::run(a, j),
        Command::Replay(a) => replay::run(a, j),
        Command::Export(a) => export::run(a, j),
        Command::Import(a) => import::run(a, j),
        Command::Cost(a) => cost::run(a, j),
        Command::Tasks(a) => tasks::run(a, j),
        Command::Notifications(a) => notifications::run(a, j),
        Command::Context(a) => context::run(a, j),
        Command::Rewind(a) => rewind::run(a, j),
        Command::Verify(a) => verify::run(a, j),
        Command::Recover(a) => recover::run(a, j),
        Command::Ship(a) => ship::run(a, j),
        Command::Demo(a) => demo::run(a, j),
        Command::Report(a) => report::run(a, j),
        Command::Watch(a) => watch::run(a, j),
        Command::Statusline(_) => {
            unreachable!("the statusline is dispatched before argument parsing")
        }
    }
}
