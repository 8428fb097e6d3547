//! What the journal crate's integration tests share: open options with small segments, a
//! numbered event whose payload names its number, and the log read back as (seq, payload).

use journal::{Body, Journal, NewEvent, OpenOptions, WireKind};
use std::path::Path;
use std::time::Duration;

/// Creating, sealing every `segment_events`, waiting for the lock as long as a loaded machine
/// may need.
pub fn options(segment_events: u64) -> OpenOptions {
    OpenOptions {
        create: true,
        segment_events,
        wait: Duration::from_secs(30),
        ..OpenOptions::default()
    }
}

/// Event number `i`: payload `{"i":i}`, in one of three sessions.
pub fn event(i: u64) -> NewEvent {
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

/// What events 1..=n look like in the log: (seq, payload), seq = number.
pub fn numbered(n: u64) -> Vec<(u64, Vec<u8>)> {
    (1..=n)
        .map(|i| (i, format!("{{\"i\":{i}}}").into_bytes()))
        .collect()
}

/// What the log holds: (seq, payload) in order.
pub fn logged(dir: &Path, options: &OpenOptions) -> Vec<(u64, Vec<u8>)> {
    let j = Journal::open(dir, options).unwrap();
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
