//! Tests of the store: opening, commits, seals, recovery.

use super::*;
use crate::kind::{Body, WireKind};
use crate::verify::tests_support::{append, stop};

fn open(dir: &Path) -> Journal {
    crate::verify::tests_support::open(dir, DEFAULT_SEGMENT_EVENTS)
}

/// Given a journal whose checkpoint is replaced (a rebuild), when it is opened light, then
/// the hot cache holds the new checkpoint whole: a partition reads from it, and one the
/// checkpoint lacks is known absent (no sled open for either).
#[test]
fn a_replaced_checkpoint_is_in_the_hot_cache_whole() {
    let d = tempfile::tempdir().unwrap();
    let mut j = open(d.path());
    for i in 1..=3 {
        append(&mut j, i);
    }
    let parts: BTreeMap<Vec<u8>, Vec<u8>> = [
        (b"global".to_vec(), b"g".to_vec()),
        (b"sess:a".to_vec(), b"session a".to_vec()),
    ]
    .into_iter()
    .collect();
    j.replace_checkpoint(&parts).unwrap();
    drop(j);
    let opts = OpenOptions::default();
    let Opened::Light(l) = Journal::open_light(d.path(), &opts).unwrap() else {
        panic!("the hot cache is not current after a rebuild");
    };
    assert!(l.complete());
    assert_eq!(
        l.get_state(b"sess:a"),
        Lookup::Known(Some(b"session a".to_vec()))
    );
    assert_eq!(l.get_state(b"sess:b"), Lookup::Known(None));
}

#[test]
fn a_creation_killed_before_current_was_written_starts_clean() {
    let d = tempfile::tempdir().unwrap();
    // What a kill during sled's first open can leave: a store directory sled reads as corrupt.
    let half = d.path().join(active_name(1));
    fs::create_dir_all(&half).unwrap();
    fs::write(half.join("conf"), b"segment_size: 524288\n").unwrap();
    fs::write(half.join("db"), vec![0xAB; 4096]).unwrap();
    let mut j = open(d.path());
    let ev = NewEvent {
        recorded_at_us: 1,
        host: "claude".into(),
        kind: WireKind {
            tag: 9,
            body: Body::Empty,
        },
        session_id: None,
        agent_id: None,
        payload: b"{}".to_vec(),
        truncated: None,
        spooled: false,
    };
    let mut tx = j.begin();
    tx.push(ev);
    j.commit(tx).unwrap();
    drop(j);
    assert_eq!(open(d.path()).status().unwrap().events, 1);
}

#[test]
fn an_import_that_does_not_continue_the_chain_is_a_typed_break() {
    let a = tempfile::tempdir().unwrap();
    let mut j = open(a.path());
    for i in 1..=3 {
        append(&mut j, i);
    }
    let events = j.active_events().unwrap();
    let b = tempfile::tempdir().unwrap();
    let j2 = open(b.path());
    let mut tx = j2.begin();
    assert!(matches!(
        tx.push_sealed(events[1].clone()),
        Err(Error::BrokenChain(ChainBreak::Seq {
            expected: 1,
            found: 2
        }))
    ));
    let mut forged = events[0].clone();
    forged.prev = [7; 32];
    assert!(matches!(
        tx.push_sealed(forged),
        Err(Error::BrokenChain(ChainBreak::Prev { seq: 1, prev })) if prev == [7; 32]
    ));
    let mut altered = events[0].clone();
    altered.payload = b"{}".to_vec();
    let err = tx.push_sealed(altered).unwrap_err();
    assert_eq!(err.to_string(), "seq 1: hash does not match its content");
    assert_eq!(tx.push_sealed(events[0].clone()).unwrap(), 1);
    // A batch begun before another commit is refused, typed.
    let mut late = j.begin();
    late.push(NewEvent {
        recorded_at_us: 5,
        host: "claude".into(),
        kind: WireKind {
            tag: 9,
            body: Body::Empty,
        },
        session_id: None,
        agent_id: None,
        payload: b"{}".to_vec(),
        truncated: None,
        spooled: false,
    });
    append(&mut j, 4);
    assert!(matches!(j.commit(late), Err(Error::StaleTx)));
}

/// Given three events in the active store, when a batch of four unhashed events (and a
/// partition) is committed as a segment, then the chain is the one four ordinary commits
/// make, the events are in two segments and nowhere else, and the partition reads; a batch
/// whose switch failed (a kill before `CURRENT` switches) is gone whole at the next open,
/// and commits again.
#[test]
fn a_batch_committed_as_a_segment_is_the_same_chain_or_nothing() {
    let d = tempfile::tempdir().unwrap();
    let plain = d.path().join("plain");
    let mut p = crate::verify::tests_support::open(&plain, 100);
    for i in 1..=7 {
        append(&mut p, i);
    }
    let want = (p.head_seq(), p.head_hash());
    drop(p);

    let bulk = d.path().join("bulk");
    let mut j = crate::verify::tests_support::open(&bulk, 100);
    for i in 1..=3 {
        append(&mut j, i);
    }
    let batch = |j: &Journal| {
        let mut tx = j.begin();
        for i in 4..=7 {
            tx.push_unhashed(stop(i));
        }
        assert_eq!(tx.events()[3].hash, ZERO_HASH);
        tx.put_state(b"k", b"v".to_vec());
        tx
    };
    // The next store cannot be made: the seal of the first three goes through, the batch's
    // segment is written, `CURRENT` never switches.
    let blocker = bulk.join(active_name(8));
    fs::write(&blocker, b"").unwrap();
    assert!(j.commit_as_segment(batch(&j)).is_err());
    drop(j);
    fs::remove_file(&blocker).unwrap();
    let mut j = crate::verify::tests_support::open(&bulk, 100);
    assert_eq!((j.head_seq(), j.get_state(b"k").unwrap()), (3, None));
    let segs = |dir: &Path| -> Vec<(Seq, Seq)> {
        segment::list(&dir.join(SEGMENTS))
            .unwrap()
            .iter()
            .map(|s| (s.first, s.last))
            .collect()
    };
    assert_eq!(segs(&bulk), [(1, 3)]);

    j.commit_as_segment(batch(&j)).unwrap();
    assert_eq!((j.head_seq(), j.head_hash()), want);
    assert_eq!(j.get_state(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(j.active_events().unwrap(), Vec::<Envelope>::new());
    drop(j);
    assert_eq!(segs(&bulk), [(1, 3), (4, 7)]);
    let report = crate::verify(&bulk, Duration::from_secs(5), |_| {}).unwrap();
    assert!(report.ok(), "{:?}", report.damage);
    let j = crate::verify::tests_support::open(&bulk, 100);
    assert_eq!((j.head_seq(), j.head_hash()), want);
    assert_eq!(j.get_state(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_seal_leaves_one_store_one_log_and_no_rotation_marker() {
    let d = tempfile::tempdir().unwrap();
    let mut j = crate::verify::tests_support::open(d.path(), 5);
    for i in 1..=7 {
        append(&mut j, i);
        assert_eq!(j.seal_if_full().unwrap(), i == 5);
    }
    assert!(!d.path().join(ROTATING).exists());
    let current = fs::read_to_string(d.path().join(CURRENT)).unwrap();
    let stores: Vec<String> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("active-"))
        .collect();
    assert_eq!(stores, [current.trim().to_string()]);
    assert_eq!(wal::list(d.path()).unwrap().len(), 1);
}

#[test]
fn recover_names_a_damaged_last_segment_by_its_place() {
    let d = tempfile::tempdir().unwrap();
    let mut j = crate::verify::tests_support::open(d.path(), 5);
    for i in 1..=7 {
        append(&mut j, i);
        j.seal_if_full().unwrap();
    }
    drop(j);
    let seg = segment::list(&d.path().join(SEGMENTS)).unwrap().remove(0);
    let mut bytes = fs::read(&seg.path).unwrap();
    bytes[20] ^= 1;
    fs::write(&seg.path, bytes).unwrap();
    match Journal::recover(d.path(), Duration::from_secs(1)) {
        Err(Error::Corrupt {
            place: DamagePlace::Segment(name),
            what,
        }) => {
            assert_eq!(name, "00000000000000000001-00000000000000000005.seg");
            assert!(what.starts_with("the last sealed segment"), "{what}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unfinished_sled_snapshot_left_by_a_kill_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let mut j = open(d.path());
    for i in 1..=5 {
        append(&mut j, i);
    }
    drop(j);
    drop(open(d.path())); // sled writes a snapshot at open once its log has advanced
    let store = d
        .path()
        .join(fs::read_to_string(d.path().join(CURRENT)).unwrap());
    let snap = fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("snap.")
        })
        .expect("sled wrote a snapshot");
    // What a kill between sled's write and its rename leaves: half a newer snapshot.
    let bytes = fs::read(&snap).unwrap();
    fs::write(
        store.join("snap.FFFFFFFFFFFFFFF0.generating"),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    let j = open(d.path());
    assert_eq!(j.head_seq(), 5);
    assert_eq!(j.active_events().unwrap().len(), 5);
}

#[test]
fn a_store_that_lost_its_tail_is_healed_from_the_log_and_the_events_marked_unfolded() {
    let d = tempfile::tempdir().unwrap();
    let mut j = open(d.path());
    for i in 1..=3 {
        append(&mut j, i);
    }
    // A batch the log holds and the store does not (a kill between the two writes).
    let mut tx = j.begin();
    tx.push(NewEvent {
        recorded_at_us: 4,
        host: "claude".into(),
        kind: WireKind {
            tag: 0,
            body: Body::Text("Stop".into()),
        },
        session_id: None,
        agent_id: None,
        payload: b"{}".to_vec(),
        truncated: None,
        spooled: false,
    });
    let ev = tx.events[0].clone();
    j.wal.append(&[&ev], &[]).unwrap();
    drop(j);
    let j = open(d.path());
    assert_eq!(j.head_seq(), 4);
    assert_eq!(j.unfolded().unwrap(), vec![ev]);
}

/// Events committed the way hooks commit them: to the log alone (the light path), after
/// `n` events the store holds.
fn light_journal(dir: &Path, n: u64, light: u64) -> Vec<Envelope> {
    let mut j = open(dir);
    for i in 1..=n {
        append(&mut j, i);
    }
    let mut tx = j.begin();
    for i in n + 1..=n + light {
        tx.push(stop(i));
    }
    let evs = tx.events.clone();
    // What a light writer does: the log gets the batch, sled does not.
    j.wal.append(&evs.iter().collect::<Vec<_>>(), &[]).unwrap();
    drop(j);
    evs
}

/// Given a flipped byte inside the log while its mirror is whole, and events only the log
/// and mirror hold, when the journal is opened in full, then every event is there (the
/// record is taken from the mirror): no panic, no fork, nothing lost.
#[test]
fn a_flipped_byte_inside_the_log_costs_nothing_when_its_mirror_is_whole() {
    let d = tempfile::tempdir().unwrap();
    let light = light_journal(d.path(), 3, 4);
    let log = wal::path(d.path(), 1);
    let mut bytes = fs::read(&log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    fs::write(&log, &bytes).unwrap();
    let j = open(d.path());
    assert_eq!((j.head_seq(), j.head_hash()), (7, light[3].hash));
    assert_eq!(j.active_events().unwrap().len(), 7);
    assert_eq!(
        fs::read(&log).unwrap(),
        fs::read(wal::mirror_path(d.path(), 1)).unwrap()
    );
    drop(j);
    let report = crate::verify(d.path(), Duration::from_secs(5), |_| {}).unwrap();
    assert!(report.ok(), "{:?}", report.damage);
}

/// The same flip in both copies: the events after it cannot be chained. The open refuses
/// nothing and panics nowhere; what the copies held past the flip is kept aside and said to
/// be possibly missing.
#[test]
fn a_flip_in_both_copies_keeps_what_follows_aside_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    light_journal(d.path(), 3, 4);
    let mut bytes = fs::read(wal::path(d.path(), 1)).unwrap();
    let at = bytes.len() * 3 / 4;
    bytes[at] ^= 0x20;
    fs::write(wal::path(d.path(), 1), &bytes).unwrap();
    fs::write(wal::mirror_path(d.path(), 1), &bytes).unwrap();
    let j = open(d.path());
    assert!(j.head_seq() >= 3, "{}", j.head_seq());
    let kept = fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("damaged-"))
        .count();
    assert_eq!(kept, 2);
    assert!(!crate::incidents::take_unread(d.path()).is_empty());
}

/// Given a log that lost its last records while the store holds them (both copies cut
/// short: the store is ahead), when it is opened, then the log is rewritten from the store
/// and the repair is noted. Both copies deleted is refused until `recover` rewrites them.
#[test]
fn a_store_ahead_of_the_log_rewrites_the_log_and_a_deleted_log_waits_for_recover() {
    let d = tempfile::tempdir().unwrap();
    let mut j = open(d.path());
    for i in 1..=5 {
        append(&mut j, i);
    }
    let head = j.head_hash();
    drop(j);
    // Five appends, five batches of one record of the same size: keep the first two.
    let two = {
        let b = fs::read(wal::path(d.path(), 1)).unwrap();
        b[..b.len() / 5 * 2].to_vec()
    };
    fs::write(wal::path(d.path(), 1), &two).unwrap();
    fs::write(wal::mirror_path(d.path(), 1), &two).unwrap();
    assert_eq!(wal::scan(&wal::path(d.path(), 1)).unwrap().events.len(), 2);
    let j = open(d.path());
    assert_eq!((j.head_seq(), j.head_hash()), (5, head));
    drop(j);
    assert_eq!(wal::scan(&wal::path(d.path(), 1)).unwrap().events.len(), 5);
    let said = crate::incidents::read(d.path());
    assert!(
        said.iter()
            .any(|i| i.text.contains("rewritten from the store")),
        "{said:?}"
    );

    fs::remove_file(wal::path(d.path(), 1)).unwrap();
    fs::remove_file(wal::mirror_path(d.path(), 1)).unwrap();
    assert!(matches!(
        Journal::open(d.path(), &OpenOptions::default()),
        Err(Error::Corrupt {
            place: DamagePlace::Wal(_),
            ..
        })
    ));
    let report = crate::verify(d.path(), Duration::from_secs(5), |_| {}).unwrap();
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.what.starts_with("missing, with its mirror")),
        "{:?}",
        report.damage
    );
    let r = Journal::recover(d.path(), Duration::from_secs(5)).unwrap();
    assert!(r.rewrote_log && !r.rebuilt_store, "{r:?}");
    let j = open(d.path());
    assert_eq!((j.head_seq(), j.head_hash()), (5, head));
}

/// Given a light writer that ingested a spool file in a batch that made the hot cache stale,
/// its file not removed yet (a light writer removes it after the lock is released and the log
/// synced), when a full writer opens meanwhile and refills the cache (a detached drainer does),
/// then the next light writer still knows the file was ingested: it must not ingest it again.
#[test]
fn a_spool_file_a_light_writer_ingested_stays_drained_across_a_full_writer() {
    let d = tempfile::tempdir().unwrap();
    let mut j = open(d.path());
    append(&mut j, 1);
    j.replace_checkpoint(&BTreeMap::new()).unwrap();
    drop(j);
    let ev = stop(2);
    let id = spool::write(d.path(), &ev).unwrap();
    let opts = OpenOptions::default();
    let Opened::Light(mut l) = Journal::open_light(d.path(), &opts).unwrap() else {
        panic!("the hot cache is not current");
    };
    // A batch that does not keep the checkpoint (its partitions are not written back): the
    // cache is made stale, to be refilled by a drainer.
    let mut tx = l.begin();
    tx.push(ev);
    tx.drained(&id);
    l.commit_deferred(tx).unwrap();
    l.finish().unwrap();
    // The spool file is still there: its removal is the light writer's next step.
    let mut full = Journal::open(d.path(), &opts).unwrap();
    assert!(full.was_drained(&id).unwrap());
    // The drainer folds what the store copied from the log, then fills the cache.
    let mut tx = full.begin();
    tx.folded_unfolded();
    tx.checkpointed();
    full.commit(tx).unwrap();
    full.fill_hot().unwrap();
    assert!(full.hot_complete());
    drop(full);
    let Opened::Light(l) = Journal::open_light(d.path(), &opts).unwrap() else {
        panic!("the hot cache is not current after fill_hot");
    };
    assert!(
        l.drained().contains(&id),
        "the ingested spool file {id} is not known drained: {:?}",
        l.drained()
    );
}
