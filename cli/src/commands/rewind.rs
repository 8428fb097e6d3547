//! `rewind SESSION --to SEQ`: appends `Rewound{session, to_seq}`; every projection then ignores
//! the session's events after SEQ up to the rewind. The log is never edited. The checkpoint is
//! rebuilt by a full replay (`Transaction::finish_rebuilt`).

use crate::cli_util::CommandHelper;
use anyhow::{bail, Result};
use engine::state;
use engine::Journal;
use projections::{Kind, KindOf};

use std::process::ExitCode;

/// `rewind` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (or its first characters).
    pub session: String,
    /// The session's last event to keep: every projection ignores its later events. At least
    /// the session's first seq (a rewind keeps the session itself).
    #[arg(long, value_name = "SEQ")]
    pub to: u64,
}

/// Appends a `Rewound` event and says what it changes.
pub fn run(cmd: &CommandHelper, args: Args) -> Result<ExitCode> {
    // A journal that came with a clone takes nothing from a command until it is adopted
    // (`recover` still repairs one: it adds nothing of the user's).
    engine::trust::refuse_foreign(cmd.dir())?;
    let mut j: Journal = cmd.open_write()?;
    let state = state::checkpoint_or_rebuild(&mut j)?;
    let id = engine::resolve_session(state.sessions.keys(), &args.session)?;
    let s = &state.sessions[&id];
    let short = crate::output::escape(projections::short_id(&id));
    // Keeping the first event keeps the session itself (its host, start, first seq): a session
    // rewound to nothing would be a row of blanks and 1970 dates.
    if args.to < s.first_seq {
        bail!(
            "session {short} starts at seq {first}; --to must be at least {first} (a rewind keeps the session's first event)",
            first = s.first_seq
        );
    }
    // One pass over the log: every rewind of the session (as the full replay below counts
    // them; the checkpoint's own list leaves out a rewind that a later rewind's range covers),
    // then what this rewind would newly hide: the session's events after SEQ still counted.
    let snap = j.read_snapshot()?;
    let before = state::collect_rewinds(&snap)?;
    let mut mine = Vec::new();
    let (mut hidden, mut last_hidden, mut last_counted) = (0u64, 0, 0);
    snap.for_each(|e| {
        if e.session_id.as_deref() != Some(id.as_str()) {
            return Ok(());
        }
        if let Kind::Rewound { to_seq, .. } = &e.kind() {
            mine.push(format!("--to {to_seq} (recorded as seq {})", e.seq));
        } else if !before.hides(&e) {
            last_counted = e.seq;
            if e.seq > args.to {
                hidden += 1;
                last_hidden = e.seq;
            }
        }
        Ok(())
    })?;
    let earlier = earlier_rewinds(&mine);
    if hidden == 0 {
        println!(
            "session {short} has no events after seq {} that still count (its last counted event is seq {last_counted}): nothing to rewind, nothing recorded",
            args.to
        );
        if let Some(e) = earlier {
            println!("{e}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    drop(snap);
    // The rewind changes the past of the session's projections: the checkpoint is rebuilt.
    let mut tx = engine::Transaction::start(&mut j)?;
    tx.record(engine::ingest::event(
        chrono::Utc::now().timestamp_micros(),
        "cli",
        Some(&id),
        None,
        Kind::Rewound {
            session: id.clone(),
            to_seq: args.to,
        },
        b"{}".to_vec(),
    ));
    tx.finish_rebuilt()?;
    println!(
        "session {short} rewound to seq {}: {} of it (seq {}..{}) now ignored by every projection (recorded as seq {}; the log is not edited)",
        args.to,
        crate::output::count(hidden, "event"),
        args.to + 1,
        last_hidden,
        j.head_seq()
    );
    if let Some(e) = earlier {
        println!("{e}");
    }
    Ok(ExitCode::SUCCESS)
}

/// "Earlier rewinds of it still hold: …": a rewind adds to the earlier ones, never undoes them.
fn earlier_rewinds(mine: &[String]) -> Option<String> {
    (!mine.is_empty()).then(|| {
        format!(
            "Earlier rewinds of this session still hold: {}. Each ignores the session's events between its --to and itself.",
            mine.join(", ")
        )
    })
}
