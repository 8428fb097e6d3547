//! What every command shares, handed to it as one [`CommandHelper`] (jj's `cli_util`): where the
//! journal is, its settings, and the ways of reading it. A command file is then a thin layer: its
//! arguments, one call here for what it reads, and its rendering.

use engine::settings::{self, Settings};
use engine::state::{self, View};
use engine::Journal;
use projections::fold::State;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

/// The global arguments and what is derived from them, computed once, on first use.
pub struct CommandHelper {
    journal_arg: Option<PathBuf>,
    dir: OnceCell<PathBuf>,
    settings: OnceCell<settings::Loaded>,
    noted: OnceCell<()>,
}

impl CommandHelper {
    /// A helper for `--journal DIR` (or none: the journal is then located as documented on `Cli`).
    pub fn new(journal_arg: Option<PathBuf>) -> CommandHelper {
        CommandHelper {
            journal_arg,
            dir: OnceCell::new(),
            settings: OnceCell::new(),
            noted: OnceCell::new(),
        }
    }

    /// `--journal DIR` as given, for the commands that locate a project rather than a journal
    /// (`install`, the team views).
    pub fn journal_arg(&self) -> Option<&Path> {
        self.journal_arg.as_deref()
    }

    /// The journal directory this command works on (it need not exist yet).
    pub fn dir(&self) -> &Path {
        self.dir
            .get_or_init(|| crate::locate::journal_dir(self.journal_arg.as_deref(), false))
    }

    /// The journal's settings; a problem in `config.toml` is one line per problem on stderr,
    /// printed once.
    pub fn settings(&self) -> &Settings {
        &self.config().settings
    }

    /// The settings with where they came from: the user's and the project's files, and the
    /// project's guarded settings that were ignored (for `status`, and one day `doctor`).
    pub fn config(&self) -> &settings::Loaded {
        self.settings
            .get_or_init(|| settings::report(settings::Loaded::for_journal(self.dir())))
    }

    /// Says once, on stderr, that the journal is foreign (it came with the repository, or from
    /// another machine or directory): it is read as it is, but hooks record nothing into it and
    /// inject nothing from it until `hookjournal trust` adopts it.
    pub fn note_origin(&self) {
        self.noted.get_or_init(|| {
            if let engine::origin::Origin::Foreign(why) = engine::origin::status(self.dir()) {
                eprintln!(
                    "hookjournal: note: {} is foreign: {}; it is read as it is, but hooks record nothing into it and inject nothing from it until `hookjournal trust` adopts it",
                    crate::output::escape(&self.dir().display().to_string()),
                    why
                );
            }
        });
    }

    /// The checkpoint (every projection as of the last event), rebuilt from the log if stale.
    pub fn checkpoint(&self) -> anyhow::Result<State> {
        state::read_checkpoint(self.dir())
    }

    /// The log and the checkpoint, as one consistent snapshot.
    pub fn view(&self) -> anyhow::Result<View> {
        state::open_view(self.dir())
    }

    /// The log for a command that replays it; `need_rewinds` when the answer depends on rewinds
    /// (a quiescent journal is then still read without opening the active store).
    pub fn log(&self, need_rewinds: bool) -> anyhow::Result<View> {
        state::open_log(self.dir(), need_rewinds)
    }

    /// The journal opened for a command that only reads (nothing ingested), or an error naming
    /// why it cannot be.
    pub fn open_read(&self) -> anyhow::Result<Journal> {
        state::open_read(self.dir())
    }

    /// The journal opened for a command that writes (the spool ingested first), or an error
    /// naming why it cannot be.
    pub fn open_write(&self) -> anyhow::Result<Journal> {
        state::open_and_drain(self.dir(), false)
    }
}

/// One registered journal, as `--all-projects` reads it.
pub struct Registered {
    /// The project's name (its column in the views).
    pub project: String,
    /// The journal's directory.
    pub dir: PathBuf,
}

impl Registered {
    /// The journal read untouched (no lock, nothing written, foreign or not).
    pub fn open(&self) -> anyhow::Result<engine::state::Partial> {
        engine::state::Partial::open_untouched(&self.dir)
    }

    /// The journal's own settings (its prices), as its per-project views use them.
    pub fn settings(&self) -> Settings {
        settings::Loaded::for_journal(&self.dir).settings
    }
}

/// Every journal in the user's registry, for `--all-projects`: one moved or deleted since it
/// was registered is dropped with one line on stderr (and its entry removed).
pub fn registered() -> Vec<Registered> {
    let listing = engine::registry::list();
    for gone in &listing.dropped {
        eprintln!(
            "hookjournal: {} ({}) moved or deleted, dropped from the registry",
            crate::output::escape(&gone.project),
            crate::output::escape(&gone.path.display().to_string())
        );
    }
    for why in &listing.unreadable {
        eprintln!("hookjournal: the registry: {}", crate::output::escape(why));
    }
    listing
        .journals
        .into_iter()
        .map(|e| Registered {
            project: e.project,
            dir: e.path,
        })
        .collect()
}

/// Records the journal at `dir` in the user's registry (`install` and `import` created or
/// filled it); a failure is one line on stderr, the command's work stands.
pub fn register(dir: &Path) {
    if let Err(e) = engine::registry::record(dir, None, None, crate::clock::now_us()) {
        eprintln!(
            "hookjournal: the registry of journals: {}",
            crate::output::escape(&format!("{e:#}"))
        );
    }
}
