//! `man`: the manual page, generated from the clap definition (clap_mangen): `hookjournal.1` on
//! stdout, or with `--dir` that page and one per command (`hookjournal-install.1`, …).

use anyhow::Context;
use clap::CommandFactory;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `man` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write hookjournal.1 and a page per command (hookjournal-install.1, …) into this directory
    /// (e.g. ~/.local/share/man/man1) instead of printing hookjournal.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints or writes the pages.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cli = crate::Cli::command();
    match args.dir {
        None => clap_mangen::Man::new(cli)
            .render(&mut std::io::stdout())
            .context("writing the manual page")?,
        Some(dir) => {
            let written = write_pages(&dir, cli)?;
            println!(
                "wrote {written} pages to {} (`man hookjournal` reads them when the directory is a man1/ on the manual path)",
                crate::output::escape(&dir.display().to_string())
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The main page and one per visible command, as files in `dir`; returns how many.
fn write_pages(dir: &Path, cli: clap::Command) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut n = 0;
    let mut write = |name: String, cmd: clap::Command| -> anyhow::Result<()> {
        let path = dir.join(format!("{name}.1"));
        let mut out = crate::outfile::OutFile::create(&path)?;
        clap_mangen::Man::new(cmd)
            .title(name)
            .render(out.file())
            .with_context(|| format!("writing {}", path.display()))?;
        out.commit()?;
        n += 1;
        Ok(())
    };
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("hookjournal-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("hookjournal {}", sub.get_name()));
        write(name, page)?;
    }
    write("hookjournal".into(), cli)?;
    Ok(n)
}
