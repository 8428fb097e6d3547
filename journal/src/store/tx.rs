//! A batch of appends and checkpoint writes.

use super::*;

/// A batch of appends and checkpoint writes that lands atomically, or not at all.
pub struct Tx {
    pub(super) next_seq: Seq,
    pub(super) prev: Hash,
    pub(super) events: Vec<Envelope>,
    pub(super) state: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub(super) drained: Vec<String>,
    pub(super) folded: bool,
    /// Partitions only the hot cache gets (loaded, unchanged: the store has them already).
    pub(super) cached: Vec<(Vec<u8>, Vec<u8>)>,
    /// The writer kept the checkpoint (its `state` holds every partition its events changed).
    pub(super) checkpointed: bool,
    /// The first event pushed by `push_unhashed`: it and those after it are hashed at commit.
    pub(super) unhashed: Option<usize>,
}

impl Tx {
    /// An empty batch continuing the chain after (`seq`, `hash`).
    pub(super) fn after(seq: Seq, hash: Hash) -> Tx {
        Tx {
            next_seq: seq + 1,
            prev: hash,
            events: Vec::new(),
            state: Vec::new(),
            drained: Vec::new(),
            folded: false,
            cached: Vec::new(),
            checkpointed: false,
            unhashed: None,
        }
    }
    /// Appends an event; returns its seq (for the `cause` of derived events).
    pub fn push(&mut self, ev: NewEvent) -> Seq {
        assert!(
            self.unhashed.is_none(),
            "Tx::push after Tx::push_unhashed: the chain's previous hash is not known yet"
        );
        let seq = self.next_seq;
        let env = Envelope::seal(ev, seq, self.prev);
        self.prev = env.hash;
        self.next_seq += 1;
        self.events.push(env);
        seq
    }
    /// Appends an already sealed envelope (import), checking it continues the chain exactly.
    pub fn push_sealed(&mut self, env: Envelope) -> Result<Seq> {
        assert!(
            self.unhashed.is_none(),
            "Tx::push_sealed after Tx::push_unhashed: the chain's previous hash is not known yet"
        );
        ChainBreak::check(&env, self.next_seq, &self.prev).map_err(Error::BrokenChain)?;
        let seq = env.seq;
        self.prev = env.hash;
        self.next_seq += 1;
        self.events.push(env);
        Ok(seq)
    }
    /// Appends an event whose hash the commit computes, continuing the journal's head then (on
    /// whichever thread commits): for a bulk writer that folds on one thread while another
    /// commits the batch before. Until the commit its `prev` and `hash` are zero; after it, only
    /// `push_unhashed` appends to this batch. Returns its seq.
    pub fn push_unhashed(&mut self, ev: NewEvent) -> Seq {
        let seq = self.next_seq;
        self.unhashed.get_or_insert(self.events.len());
        self.events.push(Envelope::at(ev, seq, ZERO_HASH));
        self.next_seq += 1;
        seq
    }
    /// Computes the hashes `push_unhashed` left, the chain continuing `head` (the journal's head
    /// hash, which the batch continues).
    pub(super) fn chain(&mut self, head: Hash) {
        let Some(from) = self.unhashed.take() else {
            return;
        };
        let mut prev = from.checked_sub(1).map_or(head, |i| self.events[i].hash);
        for e in &mut self.events[from..] {
            e.prev = prev;
            e.hash = e.compute_hash();
            prev = e.hash;
        }
        self.prev = prev;
    }
    /// Writes checkpoint partition `key`.
    pub fn put_state(&mut self, key: &[u8], value: Vec<u8>) {
        self.state.push((key.to_vec(), Some(value)));
    }
    /// Deletes checkpoint partition `key` (archived copies included).
    pub fn delete_state(&mut self, key: &[u8]) {
        self.state.push((key.to_vec(), None));
    }
    /// Marks a spool file as ingested by this batch.
    pub fn drained(&mut self, spool_id: &str) {
        self.drained.push(spool_id.to_string());
    }
    /// Says that this batch's checkpoint writes include `Journal::unfolded` events.
    pub fn folded_unfolded(&mut self) {
        self.folded = true;
    }
    /// Says that `put_state` holds every partition this batch's events change, so the hot
    /// cache stays current. A batch with events that does not say so makes the cache stale.
    pub fn checkpointed(&mut self) {
        self.checkpointed = true;
    }
    /// A partition the writer loaded and did not change, for the hot cache only.
    pub fn cache_state(&mut self, key: &[u8], value: Vec<u8>) {
        self.cached.push((key.to_vec(), value));
    }
    /// An empty batch continuing the chain after this one: what a writer that hands batches to
    /// another thread, to be committed in order, builds next.
    pub fn following(&self) -> Tx {
        let mut next = Tx::after(self.next_seq - 1, self.prev);
        // The previous hash is known only once this batch is committed.
        if self.unhashed.is_some() {
            next.unhashed = Some(0);
        }
        next
    }
    /// The checkpoint partitions this batch writes (`None`: deleted), in order.
    pub fn state_writes(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.state.iter().map(|(k, v)| (k.as_slice(), v.as_deref()))
    }
    /// The events appended so far, sealed (with their seqs and hashes).
    pub fn events(&self) -> &[Envelope] {
        &self.events
    }
    /// Whether committing the batch would change nothing.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.state.is_empty() && self.drained.is_empty() && !self.folded
    }
}
