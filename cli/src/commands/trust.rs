//! `trust`: adopt the journal and honour the project's `config.toml` in full, as it is now. A
//! foreign journal (one that came with the repository, or from another machine or directory) is
//! adopted: its origin marker is written for this directory, so hooks record into it and what it
//! holds reaches the agent again. Settings that run programs, stop agents or write outside the
//! journal are ignored in a project file until its owner trusts it here (the file's path and
//! content hash go to the user's trust store, as direnv's `allow` does); a change to the file
//! makes it untrusted again. `--revoke` forgets the file's trust (not the journal's adoption).

use crate::cli_util::CommandHelper;
use anyhow::{bail, Result};
use std::process::ExitCode;

/// `trust` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Forget the trust: the file's guarded settings are ignored again.
    #[arg(long)]
    pub revoke: bool,
}

/// Adopts a foreign journal, and trusts (or with `--revoke`, distrusts) its `config.toml`.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    let path = cmd.dir().join("config.toml");
    let shown = crate::output::escape(&path.display().to_string());
    if args.revoke {
        let n = engine::trust::revoke(&path)?;
        if n == 0 {
            println!("{shown} was not trusted: nothing to revoke");
        } else {
            println!("{shown} is no longer trusted: its guarded settings are ignored again");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let adopted = match engine::origin::status(cmd.dir()) {
        engine::origin::Origin::Foreign(why) => {
            // Only its owner adopts a journal (root would leave a file the owner's journal
            // counts as a stranger's).
            if engine::fs::files::owner(cmd.dir()) != Some(engine::fs::files::euid()) {
                bail!(
                    "{} is foreign and not yours: only its owner can adopt it",
                    crate::output::escape(&cmd.dir().display().to_string())
                );
            }
            engine::origin::mark(cmd.dir())?;
            println!(
                "adopted {} as this directory's journal (it was foreign: {why}): hooks record into it, and what it holds reaches the agent",
                crate::output::escape(&cmd.dir().display().to_string())
            );
            true
        }
        _ => false,
    };
    if adopted && !engine::fs::files::is_present(&path) {
        return Ok(ExitCode::SUCCESS);
    }
    let (text, guarded) = match engine::settings::for_trust(&path) {
        Ok(x) => x,
        Err(why) => bail!("{}; not trusted", crate::output::escape(&why)),
    };
    let name = engine::trust::trust(&path, text.as_bytes())?;
    println!(
        "trusted {shown} as it is now (blake3 {}…); any change to it makes it untrusted again",
        &name[..16]
    );
    if guarded.is_empty() {
        println!("it sets nothing that needs trust: all of it applied already");
    } else {
        println!("it now sets:");
        let width = guarded
            .iter()
            .map(|g| g.guarded.key.len() + g.value().chars().count() + 3)
            .max()
            .unwrap_or(0);
        for g in &guarded {
            let kv = format!("{} = {}", g.guarded.key, g.value());
            println!("  {kv:width$}  {}", g.guarded.does);
        }
    }
    Ok(ExitCode::SUCCESS)
}
