use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args, _journal: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
