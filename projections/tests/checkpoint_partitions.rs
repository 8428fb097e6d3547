//! The cost summary and the notification log are checkpoint partitions folded event by event:
//! given a log, what the checkpoint holds is exactly what a full replay builds — rewinds
//! included — and only the events that change them load them.

use journal::Envelope;
use projections::derived::TaskOp;
use projections::fold::{self, Partition, State};
use projections::replay;
use projections::scenario::Scenario;
use projections::{Kind, KindOf};

fn hook(session: &str, fields: &str) -> String {
    format!(r#"{{"session_id":"{session}","cwd":"/p",{fields}}}"#)
}

fn notification(session: &str, message: &str) -> String {
    hook(
        session,
        &format!(
            r#""hook_event_name":"Notification","notification_type":"idle_prompt","message":"{message}""#
        ),
    )
}

fn full_replay(log: &[Envelope]) -> State {
    let rewinds = replay::collect_rewinds(log).unwrap();
    replay::full_replay(log, rewinds, |_| {}).unwrap().state
}

fn messages(st: &State) -> Vec<String> {
    st.notifications().map(|n| n.message.clone()).collect()
}

#[test]
fn a_rewind_removes_the_sessions_later_notifications_and_keeps_the_rest() {
    let s = Scenario::default()
        .given_hook(&hook(
            "s1",
            r#""hook_event_name":"SessionStart","source":"startup""#,
        ))
        .given_hook(&notification("s1", "before")) // seq 2
        .given_hook(&notification("s2", "other session"))
        .given_hook(&notification("s1", "after")) // seq 4
        .given_rewind("s1", 2)
        .given_hook(&notification("s1", "later"));
    assert_eq!(
        messages(&s.state),
        ["before", "other session", "later"],
        "folded event by event"
    );
    assert_eq!(s.state.notifications, full_replay(&s.log).notifications);
}

#[test]
fn the_cost_summary_keeps_a_rewound_sessions_usage_as_the_full_replay_does() {
    let s = Scenario::default()
        .given_hook(&hook(
            "s1",
            r#""hook_event_name":"SessionStart","source":"startup""#,
        ))
        .given_usage("s1", "m1", "2026-11-01", 100)
        .given_usage("s1", "m2", "2026-11-02", 200)
        .given_usage("s1", "m2", "2026-11-02", 150) // a smaller reading of m2 changes nothing
        .given_rewind("s1", 1)
        .given_usage("s2", "m3", "2026-11-02", 50);
    let cost = s.state.cost_summary();
    let inputs: Vec<u64> = cost.by_key.values().map(|r| r.usage.input_tokens).collect();
    assert_eq!(inputs, [100, 200, 50], "money spent stays spent");
    assert_eq!(s.state.cost, full_replay(&s.log).cost);
    assert_eq!(s.state.totals, full_replay(&s.log).totals);
}

#[test]
fn only_the_events_that_change_them_load_the_cost_and_the_notifications() {
    let s = Scenario::default()
        .given_hook(&hook(
            "s1",
            r#""hook_event_name":"PreToolUse","tool_name":"Read""#,
        ))
        .given_hook(&notification("s1", "n"))
        .given_usage("s1", "m1", "2026-11-01", 1)
        .given_rewind("s1", 1)
        .given_task_command(TaskOp::Add, "T1", Some("a task"), None);
    let parts = |i: usize| fold::partitions_for(&s.log[i]);
    let cost = |i: usize| parts(i).iter().any(|p| matches!(p, Partition::Cost(_)));
    let chunks = |i: usize| -> Vec<Partition> {
        parts(i)
            .into_iter()
            .filter(|p| matches!(p, Partition::Notifications(_)))
            .collect()
    };
    let kinds: Vec<&str> = s.log.iter().map(|e| e.kind().name()).collect();
    assert_eq!(kinds[2], Kind::UsageObserved { cause: 0 }.name());
    assert!(!cost(0) && chunks(0).is_empty(), "an ordinary hook");
    assert_eq!(chunks(1), [Partition::Notifications(0)]);
    assert!(!cost(1));
    assert!(
        cost(2) && chunks(2).is_empty(),
        "a usage reading: one shard"
    );
    assert_eq!(
        parts(2).len(),
        5,
        "global, one cost shard, its session's cost totals shard, the session and its index shard"
    );
    let tasks = |i: usize| parts(i).contains(&Partition::Tasks);
    assert!(
        !(0..4).any(tasks),
        "only a task command or release folds into the journal-wide tasks"
    );
    assert!(tasks(4) && parts(4).contains(&Partition::TasksDone));
    assert_eq!(
        chunks(3),
        [Partition::Notifications(0)],
        "the rewound range's"
    );
    assert!(!cost(3));
}

#[test]
fn a_rewind_loads_every_notification_chunk_its_range_covers_and_no_other() {
    let rewind = |to_seq: u64, at: u64| Envelope {
        seq: at,
        recorded_at_us: 0,
        host: "cli".into(),
        kind: Kind::Rewound {
            session: "s".into(),
            to_seq,
        }
        .into(),
        session_id: Some("s".into()),
        agent_id: None,
        payload: b"{}".to_vec(),
        truncated: None,
        spooled: false,
        prev: journal::ZERO_HASH,
        hash: journal::ZERO_HASH,
    };
    let chunk = 1u64 << fold::NOTIFICATION_CHUNK_BITS;
    let chunks = |e: &Envelope| projections::fold::NotificationLog::chunks_changed_by(e);
    assert_eq!(chunks(&rewind(5, 9)), [0]);
    assert_eq!(chunks(&rewind(chunk - 2, 2 * chunk + 1)), [0, 1, 2]);
    assert_eq!(chunks(&rewind(chunk - 1, chunk + 1)), [1]);
    assert_eq!(chunks(&rewind(7, 8)), Vec::<u64>::new(), "nothing hidden");
}

#[test]
fn a_partition_the_checkpoint_does_not_hold_yet_starts_empty() {
    let mut st = State::default();
    assert!(!st.holds(&Partition::Cost(3)));
    st.load_partition(&Partition::Cost(3), None).unwrap();
    st.load_partition(&Partition::Notifications(0), None)
        .unwrap();
    assert_eq!(st.cost.keys().collect::<Vec<_>>(), [&3]);
    assert!(st.notifications[&0].is_empty());
    // A session it does not hold stays absent (it is created when an event folds into it).
    st.load_partition(&Partition::Session("s9".into()), None)
        .unwrap();
    assert!(!st.holds(&Partition::Session("s9".into())));
}

#[test]
fn a_global_record_of_another_layout_is_refused_so_the_checkpoint_is_rebuilt() {
    let mut g = fold::Global {
        layout: fold::LAYOUT - 1,
        ..Default::default()
    };
    let mut st = State::default();
    let bytes = |g: &fold::Global| {
        let s = State {
            global: g.clone(),
            ..Default::default()
        };
        s.encode_partition(&Partition::Global).unwrap()
    };
    let err = st.decode_partition(&Partition::Global, &bytes(&g));
    assert_eq!(
        err,
        Err("checkpoint partition `global` does not decode".into())
    );
    g.layout = fold::LAYOUT;
    assert_eq!(st.decode_partition(&Partition::Global, &bytes(&g)), Ok(()));
}
