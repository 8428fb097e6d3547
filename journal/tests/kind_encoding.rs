//! The bytes a kind is stored as are part of every stored hash. Through 0.1 a kind was a Rust
//! enum, written by bincode as its variant index and fields; `Legacy` below is that enum, copied
//! as it was and never to be edited. Every tag it wrote must encode, byte for byte, as it did.

use journal::kind::{frozen_shape, Body, FROZEN};
use journal::WireKind;
use serde::{Deserialize, Serialize};

/// `journal::Kind` as 0.1 declared it (docs dropped). The declaration order was the tag.
#[derive(Serialize, Deserialize)]
enum Legacy {
    Hook { name: String },
    Malformed { reason: String },
    UsageObserved { cause: u64 },
    ContextObserved { cause: u64 },
    SessionMetrics { cause: u64 },
    ResponseEmitted { cause: u64 },
    ReminderIssued { cause: u64 },
    TaskReleased { cause: u64 },
    Rewound { session: String, to_seq: u64 },
    TaskCommand,
    GitObserved { cause: u64 },
    Checkpoint { cause: u64 },
    HostReported,
    ExternalRelease,
}

fn bytes<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode::config::standard()).unwrap()
}

#[test]
fn every_tag_0_1_wrote_encodes_as_0_1_wrote_it() {
    let text = "PreToolUse ✓".to_string();
    let seq = 1_234_567u64;
    let pairs = [
        (
            Legacy::Hook { name: text.clone() },
            0,
            Body::Text(text.clone()),
        ),
        (
            Legacy::Malformed {
                reason: text.clone(),
            },
            1,
            Body::Text(text.clone()),
        ),
        (Legacy::UsageObserved { cause: seq }, 2, Body::Seq(seq)),
        (Legacy::ContextObserved { cause: seq }, 3, Body::Seq(seq)),
        (Legacy::SessionMetrics { cause: seq }, 4, Body::Seq(seq)),
        (Legacy::ResponseEmitted { cause: seq }, 5, Body::Seq(seq)),
        (Legacy::ReminderIssued { cause: seq }, 6, Body::Seq(seq)),
        (Legacy::TaskReleased { cause: seq }, 7, Body::Seq(seq)),
        (
            Legacy::Rewound {
                session: text.clone(),
                to_seq: seq,
            },
            8,
            Body::TextSeq(text.clone(), seq),
        ),
        (Legacy::TaskCommand, 9, Body::Empty),
        (Legacy::GitObserved { cause: seq }, 10, Body::Seq(seq)),
        (Legacy::Checkpoint { cause: seq }, 11, Body::Seq(seq)),
        (Legacy::HostReported, 12, Body::Empty),
        (Legacy::ExternalRelease, 13, Body::Empty),
    ];
    assert_eq!(pairs.len(), FROZEN.len());
    for (legacy, tag, body) in pairs {
        let old = bytes(&legacy);
        let wire = WireKind { tag, body };
        assert_eq!(bytes(&wire), old, "tag {tag} encodes differently from 0.1");
        let (back, _): (WireKind, usize) =
            bincode::serde::decode_from_slice(&old, bincode::config::standard()).unwrap();
        assert_eq!(back, wire, "tag {tag} reads back differently");
        assert_eq!(frozen_shape(tag), Some(wire.body.shape()));
    }
    assert_eq!(frozen_shape(FROZEN.len() as u32), None);
}
