//! The variant order of `Kind` is part of every stored hash (bincode writes the variant index):
//! inserting a variant anywhere but the end would break every existing chain. This pins it.

use journal::Kind;

#[test]
fn kind_variant_indices_never_move() {
    let all = [
        (Kind::Hook { name: "x".into() }, 0u8),
        (Kind::Malformed { reason: "x".into() }, 1),
        (Kind::UsageObserved { cause: 1 }, 2),
        (Kind::ContextObserved { cause: 1 }, 3),
        (Kind::SessionMetrics { cause: 1 }, 4),
        (Kind::ResponseEmitted { cause: 1 }, 5),
        (Kind::ReminderIssued { cause: 1 }, 6),
        (Kind::TaskReleased { cause: 1 }, 7),
        (
            Kind::Rewound {
                session: "s".into(),
                to_seq: 1,
            },
            8,
        ),
        (Kind::TaskCommand, 9),
        (Kind::GitObserved { cause: 1 }, 10),
        (Kind::Checkpoint { cause: 1 }, 11),
        (Kind::HostReported, 12),
        (Kind::ExternalRelease, 13),
    ];
    for (kind, index) in &all {
        let bytes = bincode::serde::encode_to_vec(kind, bincode::config::standard()).unwrap();
        assert_eq!(bytes[0], *index, "{} moved", kind.name());
        // Every variant is listed here: a new one must be added (at the end).
        match kind {
            Kind::Hook { .. }
            | Kind::Malformed { .. }
            | Kind::UsageObserved { .. }
            | Kind::ContextObserved { .. }
            | Kind::SessionMetrics { .. }
            | Kind::ResponseEmitted { .. }
            | Kind::ReminderIssued { .. }
            | Kind::TaskReleased { .. }
            | Kind::Rewound { .. }
            | Kind::TaskCommand
            | Kind::GitObserved { .. }
            | Kind::Checkpoint { .. }
            | Kind::HostReported
            | Kind::ExternalRelease => {}
        }
    }
}
