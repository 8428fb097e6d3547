//! A command's transaction, after jj's `start_transaction` → mutate → `tx.finish`: started on a
//! journal opened for writing (in full, or light through `writer::write`), events pushed and
//! folded into the partitions they touch, then finished in one call that writes the changed
//! partitions back and commits (a full journal's commit is synced before it returns; a light
//! one's by `writer::Held::finish`, exactly as the hook's). Commands never hold a `journal::Tx`.

use crate::state::Loaded;
use crate::writer::Writer;
use anyhow::Result;
use journal::{Envelope, NewEvent};
use projections::fold::State;

/// Events on their way into the journal, with the checkpoint partitions they fold into.
pub struct Transaction<'j> {
    writer: &'j mut dyn Writer,
    tx: journal::Tx,
    loaded: Loaded,
}

impl<'j> Transaction<'j> {
    /// Starts a transaction with the global record and the journal-wide tasks loaded (what every
    /// writer but the hook reads).
    pub fn start(writer: &'j mut dyn Writer) -> Result<Transaction<'j>> {
        crate::trust::refuse_foreign(writer.dir())?;
        let loaded = Loaded::new(&*writer)?;
        Ok(Transaction::with(writer, loaded))
    }

    /// Starts a transaction with the global record alone (the journal-wide tasks are loaded when
    /// an event folds into them).
    pub fn start_lean(writer: &'j mut dyn Writer) -> Result<Transaction<'j>> {
        crate::trust::refuse_foreign(writer.dir())?;
        let loaded = Loaded::lean(&*writer)?;
        Ok(Transaction::with(writer, loaded))
    }

    fn with(writer: &'j mut dyn Writer, loaded: Loaded) -> Transaction<'j> {
        let tx = writer.begin();
        Transaction { writer, tx, loaded }
    }

    /// The state loaded so far, folded forward over what was pushed.
    pub fn state(&self) -> &State {
        &self.loaded.state
    }

    /// Replaces the loaded state (a caller that folded a trial copy keeps it).
    pub fn set_state(&mut self, state: State) {
        self.loaded.state = state;
    }

    /// Why the checkpoint cannot be trusted, when it cannot (nothing is written back then).
    pub fn stale(&self) -> Option<&str> {
        self.loaded.stale.as_deref()
    }

    /// Loads session `id`'s partition (and its index shard).
    pub fn load_session(&mut self, id: &str) -> Result<()> {
        self.loaded.session(&*self.writer, id)
    }

    /// Loads every shard of the sessions index.
    pub fn load_index(&mut self) -> Result<()> {
        self.loaded.index(&*self.writer)
    }

    /// Pushes an event and folds it, loading first what it folds into.
    pub fn push(&mut self, event: NewEvent) -> Result<()> {
        let env = self.record(event);
        self.loaded.fold(&*self.writer, &env)
    }

    /// Pushes an event without folding it, loading what it would fold into; returns its
    /// envelope (a caller that decides from a trial fold whether it changes anything).
    pub fn record(&mut self, event: NewEvent) -> Envelope {
        self.tx.push(event);
        self.tx.events().last().expect("just pushed").clone()
    }

    /// Loads the partitions `env` folds into (for a trial fold of a recorded event).
    pub fn load_for(&mut self, env: &Envelope) -> Result<()> {
        self.loaded.for_event(&*self.writer, env)
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.tx.is_empty()
    }

    /// What went wrong reading partitions, one line each.
    pub fn warnings(&self) -> &[String] {
        &self.loaded.warnings
    }

    /// Writes the changed partitions back and commits. Returns whether anything was committed
    /// (an empty transaction commits nothing).
    pub fn finish(mut self) -> Result<bool> {
        if self.tx.is_empty() {
            return Ok(false);
        }
        self.loaded.write_back(&mut self.tx);
        self.writer.commit(self.tx)?;
        Ok(true)
    }

    /// Commits the events, then rebuilds the whole checkpoint from the log (an event that
    /// changes the past of the projections: a rewind). The journal must be open in full.
    pub fn finish_rebuilt(self) -> Result<()> {
        let Transaction { writer, tx, .. } = self;
        writer.commit(tx)?;
        let j = writer
            .full()
            .ok_or_else(|| anyhow::anyhow!("a rebuild needs the journal open in full"))?;
        crate::state::rebuild_checkpoint(j)
    }
}
