//! Storage for hookjournal: an append-only, blake3 hash-chained event log.
//!
//! The log is split into immutable *sealed segments* (flat files, one per few thousand events) and
//! a small *active* sled store that takes new appends and holds the projection checkpoint. Keeping
//! the active store small is what makes the hook's open cost independent of the journal's size.
//! This crate knows nothing about agents: payloads are bytes, a kind is a tag
//! fixed in the data and a small body (`kind`); what a tag means is the projections' business.

#![warn(missing_docs)]

mod archive;
pub mod checkpoint;
mod damage;
pub mod door;
mod envelope;
mod error;
pub mod files;
/// Entry points for the fuzz targets in `fuzz/` (not an API).
#[doc(hidden)]
pub mod fuzz;
pub mod hot;
pub mod incidents;
pub mod kind;
mod lock;
pub mod origin;
mod segment;
pub mod spool;
mod store;
mod verify;
mod wal;

pub use damage::{Damage, DamagePlace};
pub use envelope::{hex, unhex, Envelope, Hash, NewEvent, Seq, Truncation, ZERO_HASH};
pub use error::{ChainBreak, Error, Result};
pub use files::{write_atomic, Durability};
pub use kind::{Body, Tag, WireKind};
pub use segment::SegmentInfo;
pub use store::{
    ensure_dir, journal_size, Journal, Light, OpenOptions, Opened, ReadSnapshot, Recovered, Status,
    Tx, DEFAULT_SEGMENT_EVENTS,
};
pub use verify::{verify, verify_visiting, VerifyReport};

/// The mode of every directory the journal creates: the journal holds prompts and tool output,
/// so only its owner reads it.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every file the journal creates (owner read and write only).
pub const FILE_MODE: u32 = 0o600;
