//! The invariant that makes the hook path cheap and replay honest: a checkpoint built
//! incrementally (loading only the partitions each event touches, as the hook does) equals a full
//! replay from seq 1, byte for byte — with rewinds, spooled events, unknown events, derived events.

use journal::{Envelope, NewEvent, Seq, ZERO_HASH};
use projections::derived::{self, TaskCommand, TaskOp, TaskReleased};
use projections::fold::{self, Partition, State};
use projections::replay;
use projections::tasks::TaskRef;
use projections::{Kind, KindOf};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Step {
    Hook {
        session: u8,
        what: u8,
        arg: u8,
    },
    Usage {
        session: u8,
        msg: u8,
        tokens: u32,
    },
    Context {
        session: u8,
        tokens: u32,
    },
    Command {
        op: u8,
        task: u8,
        session: Option<u8>,
    },
    Release {
        task: u8,
        session: Option<u8>,
    },
    Reminder {
        session: u8,
    },
    Rewind {
        session: u8,
        back: u8,
    },
    Malformed,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u8..3, 0u8..20, 0u8..6).prop_map(|(session, what, arg)| Step::Hook { session, what, arg }),
        1 => (0u8..3, 0u8..6, 1u32..100_000).prop_map(|(session, msg, tokens)| Step::Usage { session, msg, tokens }),
        1 => (0u8..3, 1u32..200_000).prop_map(|(session, tokens)| Step::Context { session, tokens }),
        1 => (0u8..6, 1u8..4, proptest::option::of(0u8..3)).prop_map(|(op, task, session)| Step::Command { op, task, session }),
        1 => (1u8..4, proptest::option::of(0u8..3)).prop_map(|(task, session)| Step::Release { task, session }),
        1 => (0u8..3).prop_map(|session| Step::Reminder { session }),
        1 => (0u8..3, 0u8..20).prop_map(|(session, back)| Step::Rewind { session, back }),
        1 => Just(Step::Malformed),
    ]
}

fn hook_payload(sid: &str, what: u8, arg: u8) -> String {
    let cwd = if arg.is_multiple_of(2) { "/p0" } else { "/p1" };
    let body = match what {
        0 => format!(r#""hook_event_name":"SessionStart","source":"{}""#, ["startup", "compact", "clear", "resume"][arg as usize % 4]),
        1 => format!(r#""hook_event_name":"UserPromptSubmit","prompt":"do thing {arg}""#),
        2 => format!(r#""hook_event_name":"PostToolUse","tool_name":"TaskCreate","tool_input":{{"subject":"task {arg}"}},"tool_response":{{"task":{{"id":"{arg}"}}}}"#),
        3 => format!(r#""hook_event_name":"PostToolUse","tool_name":"TaskUpdate","tool_input":{{"taskId":"{arg}","status":"{}"}}"#, ["pending", "in_progress", "completed", "deleted"][arg as usize % 4]),
        4 => format!(r#""hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{{"file_path":"/f{arg}.rs"}}"#),
        5 => format!(r#""hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":"/f{arg}.rs"}}"#),
        6 => format!(r#""hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"git commit -m x"}},"tool_response":{{"stdout":"[main abc{arg}def] msg {arg}"}}"#),
        7 => r#""hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"boom\nline two""#.to_string(),
        8 => format!(r#""hook_event_name":"Notification","notification_type":"idle_prompt","message":"m{arg}""#),
        9 => r#""hook_event_name":"Stop","stop_hook_active":false"#.to_string(),
        10 => format!(r#""hook_event_name":"SubagentStart","agent_id":"a{arg}","agent_type":"Explore""#),
        11 => format!(r#""hook_event_name":"SubagentStop","agent_id":"a{arg}","agent_type":"Explore","agent_transcript_path":"/t/a{arg}.jsonl""#),
        12 => r#""hook_event_name":"PreCompact","trigger":"auto""#.to_string(),
        13 => r#""hook_event_name":"PostCompact","trigger":"auto","compact_summary":"summary""#.to_string(),
        14 => format!(r#""hook_event_name":"TaskCreated","task_id":"{arg}","task_subject":"created {arg}""#),
        15 => format!(r#""hook_event_name":"TaskCompleted","task_id":"{arg}""#),
        16 => r#""hook_event_name":"SessionEnd","reason":"clear""#.to_string(),
        17 => r#""hook_event_name":"SomethingNew","whatever":[1,2]"#.to_string(),
        18 => r#""hook_event_name":"PostToolUse","tool_name":"TodoWrite","tool_input":{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}"#.to_string(),
        _ => r#""hook_event_name":"PreToolUse","tool_name":"Grep""#.to_string(),
    };
    format!(r#"{{"session_id":"{sid}","cwd":"{cwd}",{body}}}"#)
}

fn build(steps: &[(Step, bool)]) -> Vec<Envelope> {
    let mut out: Vec<Envelope> = Vec::new();
    for (i, (s, spooled)) in steps.iter().enumerate() {
        let seq = out.len() as Seq + 1;
        let prev = out.last().map(|e| e.hash).unwrap_or(ZERO_HASH);
        let sid = |n: u8| format!("s{n}");
        let (kind, session, payload): (Kind, Option<String>, Vec<u8>) = match s {
            Step::Hook { session, what, arg } => {
                let p = hook_payload(&sid(*session), *what, *arg);
                let name = projections::event::event_name(p.as_bytes()).unwrap();
                (Kind::Hook { name }, Some(sid(*session)), p.into_bytes())
            }
            Step::Usage {
                session,
                msg,
                tokens,
            } => {
                let body = format!(
                    r#"{{"path":"/t/{s}.jsonl","offset":{i},"agent_id":null,"record":{{"message_id":"m{msg}","request_id":"r{msg}","model":"claude-sonnet-4-5","timestamp":"2026-11-0{d}T10:00:00Z","usage":{{"input_tokens":{tokens},"output_tokens":7,"cache_write_5m":1,"cache_write_1h":0,"cache_read":3}},"sidechain":false}}}}"#,
                    s = sid(*session),
                    d = 1 + msg % 3
                );
                (
                    Kind::UsageObserved {
                        cause: seq.saturating_sub(1),
                    },
                    Some(sid(*session)),
                    body.into_bytes(),
                )
            }
            Step::Context { session, tokens } => {
                let body = format!(
                    r#"{{"path":"/t/{}.jsonl","offset":{i},"tokens":{tokens},"model":"claude-sonnet-4-5"}}"#,
                    sid(*session)
                );
                (
                    Kind::ContextObserved {
                        cause: seq.saturating_sub(1),
                    },
                    Some(sid(*session)),
                    body.into_bytes(),
                )
            }
            Step::Command { op, task, session } => {
                let c = TaskCommand {
                    op: [
                        TaskOp::Add,
                        TaskOp::Start,
                        TaskOp::Done,
                        TaskOp::Fail,
                        TaskOp::Reopen,
                        TaskOp::Delete,
                    ][*op as usize % 6],
                    task: TaskRef {
                        session: session.map(sid),
                        id: if session.is_some() {
                            task.to_string()
                        } else {
                            format!("T{task}")
                        },
                    },
                    subject: Some(format!("cli task {task}")),
                    description: None,
                    agent: Some("agent-7".into()),
                    reason: Some("because".into()),
                };
                (Kind::TaskCommand, None, derived::body(&c))
            }
            Step::Release { task, session } => {
                let r = TaskReleased {
                    task: TaskRef {
                        session: session.map(sid),
                        id: if session.is_some() {
                            task.to_string()
                        } else {
                            format!("T{task}")
                        },
                    },
                    reason: "context limit reached".into(),
                    agent: Some("agent-7".into()),
                };
                (
                    Kind::TaskReleased {
                        cause: seq.saturating_sub(1),
                    },
                    session.map(sid),
                    derived::body(&r),
                )
            }
            Step::Reminder { session } => (
                Kind::ReminderIssued {
                    cause: seq.saturating_sub(1),
                },
                Some(sid(*session)),
                br#"{"open_tasks":[],"since_task_use":3}"#.to_vec(),
            ),
            Step::Rewind { session, back } => {
                let to = seq.saturating_sub(1 + *back as u64);
                (
                    Kind::Rewound {
                        session: sid(*session),
                        to_seq: to,
                    },
                    Some(sid(*session)),
                    b"{}".to_vec(),
                )
            }
            Step::Malformed => (
                Kind::Malformed {
                    reason: "not JSON".into(),
                },
                None,
                b"\xff{".to_vec(),
            ),
        };
        let ev = NewEvent {
            recorded_at_us: 1_000 * i as i64,
            host: "claude".into(),
            kind: kind.into(),
            session_id: session,
            agent_id: None,
            payload,
            truncated: None,
            spooled: *spooled,
        };
        out.push(Envelope::seal(ev, seq, prev));
    }
    out
}

/// Full replay from seq 1 (rewinds collected first), as `verify` does.
fn full_replay(events: &[Envelope]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let rewinds = replay::collect_rewinds(events).unwrap();
    let full = replay::full_replay(events, rewinds, |_| {}).unwrap();
    full.state.partitions().into_iter().collect()
}

/// The hook's way: per event, load only the touched partitions from the store (one the store
/// does not hold starts empty), apply, and write back only those (a partition it did not load,
/// like the finished tasks for an ordinary hook, is never written from a partial state). A
/// rewind rebuilds the checkpoint by full replay (the `rewind` command's way) — all but the cost
/// shards and the notification chunks, which fold the rewind themselves: that is what this test
/// holds them to.
fn incremental(events: &[Envelope]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut store: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let mut st = State::default();
        for p in fold::partitions_for(e) {
            st.load_partition(&p, store.get(&p.key()).map(Vec::as_slice))
                .unwrap();
        }
        st.apply(e);
        let loaded: Vec<Vec<u8>> = fold::partitions_for(e).iter().map(|p| p.key()).collect();
        let parts: BTreeMap<Vec<u8>, Vec<u8>> = st.partitions().into_iter().collect();
        for k in &loaded {
            match parts.get(k) {
                Some(v) => store.insert(k.clone(), v.clone()),
                // A loaded partition the state no longer has (every finished task reopened).
                None => store.remove(k),
            };
        }
        if matches!(e.kind(), Kind::Rewound { .. }) {
            let folded = |k: &Vec<u8>| {
                matches!(
                    Partition::from_key(k),
                    Some(
                        Partition::Cost(_) | Partition::CostTotals(_) | Partition::Notifications(_)
                    )
                )
            };
            let mut rebuilt = full_replay(&events[..=i]);
            rebuilt.retain(|k, _| !folded(k));
            rebuilt.extend(store.into_iter().filter(|(k, _)| folded(k)));
            store = rebuilt;
        }
    }
    store
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn incremental_checkpoint_equals_full_replay(steps in proptest::collection::vec((step(), any::<bool>()), 1..120)) {
        let events = build(&steps);
        let a = incremental(&events);
        let b = full_replay(&events);
        prop_assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (k, v) in &b {
            prop_assert!(a.get(k) == Some(v), "partition {} differs", String::from_utf8_lossy(k));
        }
    }
}

#[test]
fn a_checkpoint_is_a_fixed_point_of_encoding() {
    let steps: Vec<(Step, bool)> = (0..40)
        .map(|i| {
            (
                Step::Hook {
                    session: (i % 3) as u8,
                    what: (i % 20) as u8,
                    arg: (i % 6) as u8,
                },
                false,
            )
        })
        .collect();
    let events = build(&steps);
    let parts = full_replay(&events);
    let v: Vec<(Vec<u8>, Vec<u8>)> = parts.clone().into_iter().collect();
    let again: BTreeMap<_, _> = State::from_partitions(&v)
        .unwrap()
        .partitions()
        .into_iter()
        .collect();
    assert_eq!(parts, again);
}
