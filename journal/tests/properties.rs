//! Property tests of the journal alone: any mix of batches appended in full or light, seals,
//! reopenings, recoveries and light writers dropped before they synced leaves a log that holds
//! exactly the events committed, in order, gap-free and hash-chained, and `verify` says valid.

mod common;

use common::{event, numbered};
use journal::{Journal, OpenOptions, Opened};
use proptest::prelude::*;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    /// A batch of this many events, committed on the store opened in full.
    Full(usize),
    /// A batch committed by a light writer (when the journal opens light), synced by `finish`.
    Light(usize),
    /// A light writer that commits without a sync and is dropped (its events are durable at
    /// drop too: the log is synced then).
    LightDropped(usize),
    /// Seal the active store into a segment.
    Seal,
    /// `recover`, which must find nothing lost.
    Recover,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..5).prop_map(Op::Full),
        4 => (1usize..5).prop_map(Op::Light),
        1 => (1usize..3).prop_map(Op::LightDropped),
        1 => Just(Op::Seal),
        1 => Just(Op::Recover),
    ]
}

fn options() -> OpenOptions {
    common::options(7)
}

/// Commits `n` events numbered from `*next` on a store opened in full.
fn full(dir: &Path, n: usize, next: &mut u64) {
    let mut j = Journal::open(dir, &options()).unwrap();
    let mut tx = j.begin();
    for _ in 0..n {
        *next += 1;
        tx.push(event(*next));
    }
    j.commit(tx).unwrap();
}

/// Commits `n` events through whatever `open_light` gives: light when the hot cache is current.
fn light(dir: &Path, n: usize, next: &mut u64, finish: bool) {
    match Journal::open_light(dir, &options()).unwrap() {
        Opened::Light(mut l) => {
            let mut tx = l.begin();
            for _ in 0..n {
                *next += 1;
                tx.push(event(*next));
            }
            l.commit_deferred(tx).unwrap();
            if finish {
                l.finish().unwrap();
            }
        }
        Opened::Full(mut j) => {
            let mut tx = j.begin();
            for _ in 0..n {
                *next += 1;
                tx.push(event(*next));
            }
            j.commit(tx).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Given any sequence of operations, when the journal is read, then it holds every
    /// committed event once, in commit order, with seqs 1..=n, and verifies.
    #[test]
    fn the_log_holds_exactly_what_was_committed(ops in prop::collection::vec(op(), 1..24)) {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("j");
        let mut next = 0u64;
        for op in &ops {
            match op {
                Op::Full(n) => full(&dir, *n, &mut next),
                Op::Light(n) => light(&dir, *n, &mut next, true),
                Op::LightDropped(n) => light(&dir, *n, &mut next, false),
                Op::Seal => {
                    if next > 0 {
                        let mut j = Journal::open(&dir, &options()).unwrap();
                        j.seal().unwrap();
                    }
                }
                Op::Recover => {
                    if next > 0 {
                        let r = Journal::recover(&dir, Duration::from_secs(10)).unwrap();
                        prop_assert!(r.lost.is_none(), "recover lost {:?} after {:?}", r.lost, ops);
                        prop_assert_eq!(r.head_seq, next);
                    }
                }
            }
        }
        let got = common::logged(&dir, &options());
        prop_assert_eq!(got, numbered(next), "after {:?}", ops);
        let report = journal::verify(&dir, Duration::from_secs(10), |_| {}).unwrap();
        prop_assert!(report.ok(), "{:?} after {:?}", report.damage, ops);
        prop_assert_eq!(report.events, next);
    }
}
