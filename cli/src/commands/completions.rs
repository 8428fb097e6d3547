//! `completions SHELL`: the shell's completion script for every command and flag, generated from
//! the same clap definition the binary parses (clap_complete), so it never falls behind.

use clap::CommandFactory;
use std::process::ExitCode;

/// `completions` arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script on stdout.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut cli = crate::Cli::command();
    clap_complete::generate(args.shell, &mut cli, "hookjournal", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
