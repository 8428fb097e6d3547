use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct InstallArgs {}
#[derive(clap::Args, Debug)]
pub struct UninstallArgs {}

pub fn run_install(_args: InstallArgs, _journal: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
pub fn run_uninstall(_args: UninstallArgs, _journal: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
