//! `doctor`: is everything in place? Each host's registration against the host table (events,
//! the program — this hookjournal's file or a copy, never run to ask —, the host's trust), then the journal (size, each host's last event,
//! the spool, a stuck drainer, the chain). One line per check; each problem names the command
//! that fixes it. Exit 0 when healthy, 1 otherwise. The checks are `engine::doctor`'s.

use crate::cli_util::CommandHelper;
use crate::output::{escape, relative, timestamp};
use engine::doctor::{self, Level, Where};
use std::process::ExitCode;

/// `doctor` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Check your user settings (every project) instead of this project's.
    #[arg(long)]
    pub user: bool,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Runs every check and prints one line each.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from);
    let (project, _) = crate::locate::project_root(&cwd, home.as_deref());
    let version = format!("hookjournal {}", env!("CARGO_PKG_VERSION"));
    let exe = std::env::current_exe().ok();
    let w = Where {
        project: (!args.user).then_some(project.as_path()),
        version: &version,
        exe: exe.as_deref(),
    };
    let now = crate::clock::now_us();
    let ago = |at: i64| format!("{} ({})", timestamp(at), relative(at, now));
    let mut findings = doctor::hosts(&w);
    findings.extend(doctor::config(cmd.config()));
    findings.extend(doctor::journal(cmd.dir(), &ago));
    let problems = findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    if args.json {
        crate::output::print_json(&serde_json::json!({
            "healthy": problems == 0,
            "problems": problems,
            "scope": if args.user { "user" } else { "project" },
            "project": w.project,
            "checks": findings,
        }));
    } else {
        match w.project {
            Some(p) => println!("{version}, project {}", escape(&p.display().to_string())),
            None => println!("{version}, your user settings"),
        }
        for f in &findings {
            let mark = match f.level {
                Level::Ok => "ok  ",
                Level::Info => "--  ",
                Level::Problem => "FIX ",
            };
            let fix = f
                .fix
                .as_ref()
                .map(|x| format!(" → {x}"))
                .unwrap_or_default();
            println!("{mark}{}: {}{}", f.topic, escape(&f.text), escape(&fix));
        }
        match problems {
            0 => println!("healthy"),
            n => println!("{}", crate::output::count(n as u64, "problem")),
        }
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
