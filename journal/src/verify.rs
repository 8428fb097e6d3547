//! `verify`: the hash chain, segment integrity and storage damage, reported where found.

use crate::envelope::{hex, Envelope, Hash, Seq, ZERO_HASH};
use crate::store::{Journal, OpenOptions};
use crate::{segment, Error, Result};
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The first seq affected, when known.
    pub seq: Option<Seq>,
    /// Where: a segment file name or `active store`.
    pub place: String,
    pub what: String,
}

#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    pub events: u64,
    pub segments: usize,
    pub head_hash: Hash,
    pub damage: Vec<Damage>,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.damage.is_empty()
    }
}

struct Chain {
    expect_seq: Seq,
    prev: Hash,
}

impl Chain {
    fn check(&mut self, e: &Envelope, place: &str) -> Option<Damage> {
        let dmg = |what: String| {
            Some(Damage {
                seq: Some(e.seq),
                place: place.to_string(),
                what,
            })
        };
        let out = if e.seq != self.expect_seq {
            dmg(format!("expected seq {}, found seq {} (an event was deleted, reordered or duplicated)", self.expect_seq, e.seq))
        } else if e.prev != self.prev {
            dmg(format!("prev hash {} does not match the hash of seq {} (broken chain)", &hex(&e.prev)[..16], e.seq.saturating_sub(1)))
        } else if e.compute_hash() != e.hash {
            dmg("content does not match its hash (the event was altered)".into())
        } else {
            None
        };
        self.expect_seq = e.seq + 1;
        self.prev = e.hash;
        out
    }
}

/// Checks the whole journal. Damage is collected (first per place), never panicked on.
pub fn verify(dir: &Path, wait: Duration, mut progress: impl FnMut(u64)) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let j = match Journal::open(dir, &OpenOptions { wait, ..OpenOptions::default() }) {
        Ok(j) => j,
        Err(e @ (Error::Busy | Error::NotFound(_))) => return Err(e),
        Err(e) => {
            report.damage.push(Damage {
                seq: None,
                place: "active store".into(),
                what: format!("cannot be opened: {e}"),
            });
            return Ok(report);
        }
    };
    let snap = match j.read_snapshot() {
        Ok(s) => s,
        Err(e) => {
            report.damage.push(Damage {
                seq: None,
                place: "active store".into(),
                what: e.to_string(),
            });
            return Ok(report);
        }
    };
    drop(j);
    report.segments = snap.segments.len();
    report.head_hash = snap.head_hash;
    let mut chain = Chain {
        expect_seq: 1,
        prev: ZERO_HASH,
    };
    for seg in &snap.segments {
        let place = seg.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if seg.first != chain.expect_seq {
            report.damage.push(Damage {
                seq: Some(chain.expect_seq),
                place: place.clone(),
                what: format!("segments leave a gap: expected seq {}, segment starts at {}", chain.expect_seq, seg.first),
            });
        }
        match segment::read_all(seg) {
            Ok(events) => {
                let mut first_bad = None;
                for e in &events {
                    if let Some(d) = chain.check(e, &place) {
                        first_bad.get_or_insert(d);
                    }
                }
                report.damage.extend(first_bad);
                report.events += events.len() as u64;
            }
            Err(e) => {
                report.damage.push(Damage {
                    seq: Some(seg.first),
                    place,
                    what: e.to_string(),
                });
                chain.expect_seq = seg.last + 1;
                chain.prev = ZERO_HASH;
            }
        }
        progress(report.events);
    }
    let mut first_bad = None;
    for e in &snap.active {
        if let Some(d) = chain.check(e, "active store") {
            first_bad.get_or_insert(d);
        }
    }
    report.events += snap.active.len() as u64;
    report.damage.extend(first_bad);
    if report.damage.is_empty() && (chain.expect_seq - 1 != snap.head_seq || chain.prev != snap.head_hash) {
        report.damage.push(Damage {
            seq: Some(chain.expect_seq),
            place: "active store".into(),
            what: format!("head record says seq {} but the log ends at seq {}", snap.head_seq, chain.expect_seq - 1),
        });
    }
    progress(report.events);
    Ok(report)
}
