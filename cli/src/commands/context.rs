//! `context SESSION --for restore|compact`: exactly the text the hooks would inject.

use crate::cli_util::CommandHelper;

use projections::fold::Partition;
use projections::views::{self, Purpose};

use std::process::ExitCode;

/// Which injected text to print.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum For {
    /// What SessionStart injects after a compaction, /clear or resume
    Restore,
    /// What PreCompact hands to the compaction
    Compact,
}

/// `context` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (or its first characters).
    pub session: String,
    /// Which text.
    #[arg(long = "for", value_enum, default_value = "restore")]
    pub purpose: For,
    /// The compaction trigger (with --for compact).
    #[arg(long, default_value = "auto")]
    pub trigger: String,
    /// The SessionStart source (with --for restore): compact, clear or resume.
    #[arg(long, default_value = "compact")]
    pub source: String,
}

/// Prints the text the hook would inject now.
pub fn run(cmd: &CommandHelper, args: Args) -> anyhow::Result<ExitCode> {
    let settings = cmd.settings();
    // What the hook reads: the journal-wide record and tasks, the session, the one it continues.
    let mut p = engine::state::Partial::open(cmd.dir())?;
    p.load(&Partition::Global)?;
    p.load(&Partition::Tasks)?;
    let id = p.session(&args.session)?;
    if let Some(prev) = p.state.sessions[&id].continues.clone() {
        p.load(&Partition::Session(prev))?;
    }
    let state = p.into_state();
    let mut s = &state.sessions[&id];
    // After /clear the hook restores from the session that ended before this one.
    if matches!(args.purpose, For::Restore) && args.source == "clear" {
        if let Some(prev) = s.continues.as_ref().and_then(|p| state.sessions.get(p)) {
            s = prev;
        }
    }
    if matches!(args.purpose, For::Restore) && !views::has_facts(s) {
        eprintln!(
            "hookjournal: session {} has nothing to restore yet; the hook would inject nothing",
            crate::output::escape(projections::short_id(&s.id))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let purpose = match args.purpose {
        For::Restore => Purpose::Restore {
            source: &args.source,
        },
        For::Compact => Purpose::Compact {
            trigger: &args.trigger,
        },
    };
    let text = views::restore_text(&state, s, &settings.policy, purpose);
    println!("{}", crate::output::escape_text(&text));
    Ok(ExitCode::SUCCESS)
}
