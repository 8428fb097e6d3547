//! `show SESSION`: the execution snapshot.

use crate::cli_util::CommandHelper;
use crate::output;
use crate::render::show::render;

use std::process::ExitCode;

/// `show` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (or its first characters).
    pub session: String,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Prints one session's execution snapshot.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    // One session's partition, not the whole checkpoint.
    let mut p = engine::state::Partial::open(cmd.dir())?;
    let id = p.session(&args.session)?;
    let state = p.into_state();
    let s = &state.sessions[&id];
    let pricing = settings.pricing();
    if args.json {
        output::print_json(&projections::report::snapshot_json(
            s,
            &pricing,
            &settings.policy,
        ));
    } else {
        print!("{}", render(s, &pricing, &settings.policy));
    }
    Ok(ExitCode::SUCCESS)
}
