//! Property tests of the journal alone: any mix of batches appended in full or light, seals,
//! reopenings, recoveries and light writers dropped before they synced leaves a log that holds
//! exactly the events committed, in order, gap-free and hash-chained, and `verify` says valid.

use journal::{Body, Journal, NewEvent, OpenOptions, Opened, WireKind};
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
    OpenOptions {
        create: true,
        segment_events: 7,
        wait: Duration::from_secs(10),
        ..OpenOptions::default()
    }
}

fn event(i: u64) -> NewEvent {
    NewEvent {
        recorded_at_us: i as i64,
        host: "claude".into(),
        kind: WireKind {
            tag: 0,
            body: Body::Text("Stop".into()),
        },
        session_id: Some(format!("s{}", i % 3)),
        agent_id: None,
        payload: format!("{{\"i\":{i}}}").into_bytes(),
        truncated: None,
        spooled: false,
    }
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

/// What the log holds: (seq, payload) in order.
fn logged(dir: &Path) -> Vec<(u64, Vec<u8>)> {
    let j = Journal::open(dir, &options()).unwrap();
    let snap = j.read_snapshot().unwrap();
    drop(j);
    let mut out = Vec::new();
    snap.for_each(|e| {
        out.push((e.seq, e.payload));
        Ok(())
    })
    .unwrap();
    out
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
        let got = logged(&dir);
        let want: Vec<(u64, Vec<u8>)> = (1..=next)
            .map(|i| (i, format!("{{\"i\":{i}}}").into_bytes()))
            .collect();
        prop_assert_eq!(got, want, "after {:?}", ops);
        let report = journal::verify(&dir, Duration::from_secs(10), |_| {}).unwrap();
        prop_assert!(report.ok(), "{:?} after {:?}", report.damage, ops);
        prop_assert_eq!(report.events, next);
    }
}
