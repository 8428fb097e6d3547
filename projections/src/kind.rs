//! The event vocabulary: every kind an event can be, its wire tag, its fields and whether another
//! event causes it — declared once, in `vocabulary!` below. The journal stores only the tag and
//! the fields (`journal::WireKind`); `replay --kind`, imports and docs read `KINDS`.
//!
//! A new kind takes the next free tag (never a used one: journals hold them) and edits only this
//! file. Tags 0–13 were a Rust enum's declaration order in 0.1; the journal keeps their encoding.

use journal::{Body, Envelope, NewEvent, Seq, Tag, WireKind};

/// One entry of the vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The kind's name, as `replay --kind` and exports spell it.
    pub name: &'static str,
    /// Its number on the wire.
    pub tag: Tag,
    /// Written by the tool for another event, whose seq is its `cause`.
    pub caused: bool,
}

/// The fields of a kind, as a tuple, to and from the journal's body shapes.
trait Fields: Sized {
    fn into_body(self) -> Body;
    fn from_body(body: Body) -> Option<Self>;
}

impl Fields for () {
    fn into_body(self) -> Body {
        Body::Empty
    }
    fn from_body(body: Body) -> Option<Self> {
        matches!(body, Body::Empty).then_some(())
    }
}

impl Fields for (String,) {
    fn into_body(self) -> Body {
        Body::Text(self.0)
    }
    fn from_body(body: Body) -> Option<Self> {
        match body {
            Body::Text(t) => Some((t,)),
            _ => None,
        }
    }
}

impl Fields for (Seq,) {
    fn into_body(self) -> Body {
        Body::Seq(self.0)
    }
    fn from_body(body: Body) -> Option<Self> {
        match body {
            Body::Seq(n) => Some((n,)),
            _ => None,
        }
    }
}

impl Fields for (String, Seq) {
    fn into_body(self) -> Body {
        Body::TextSeq(self.0, self.1)
    }
    fn from_body(body: Body) -> Option<Self> {
        match body {
            Body::TextSeq(t, n) => Some((t, n)),
            _ => None,
        }
    }
}

macro_rules! vocabulary {
    ($(
        $(#[doc = $doc:literal])*
        $tag:literal $($caused:ident)? => $name:ident $({
            $( $(#[doc = $fdoc:literal])* $field:ident : $ty:ty ),* $(,)?
        })?
    ),* $(,)?) => {
        /// What an event is. `Hook` and `Malformed` come from outside; the others are written by
        /// the tool itself, the caused ones in the same atomic batch as the event that caused
        /// them (`cause`).
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Kind {
            $(
                $(#[doc = $doc])*
                $name $({ $( $(#[doc = $fdoc])* $field: $ty ),* })?,
            )*
            /// A tag this build does not know (written by a newer one), kept as it was stored.
            Unknown(WireKind),
        }

        /// Every kind, in tag order: the one list of kind names.
        pub const KINDS: &[KindInfo] = &[
            $( KindInfo { name: stringify!($name), tag: $tag, caused: vocabulary!(@caused $($caused)?) }, )*
        ];

        impl Kind {
            /// The kind's entry in `KINDS` (`None` for `Unknown`).
            pub fn info(&self) -> Option<&'static KindInfo> {
                let tag = match self {
                    $( Kind::$name { .. } => $tag, )*
                    Kind::Unknown(_) => return None,
                };
                KINDS.iter().find(|k| k.tag == tag)
            }

            /// The kind as the journal stores it.
            pub fn to_wire(&self) -> WireKind {
                match self {
                    $( Kind::$name $({ $($field),* })? => WireKind {
                        tag: $tag,
                        body: Fields::into_body(($($($field.clone(),)*)?)),
                    }, )*
                    Kind::Unknown(w) => w.clone(),
                }
            }

            /// The kind a stored tag and body are; `Unknown` for a tag not in `KINDS` (or, never
            /// written by hookjournal, a known tag with a body of another shape).
            pub fn from_wire(w: &WireKind) -> Kind {
                match w.tag {
                    $( $tag => {
                        type F = ($($($ty,)*)?);
                        match <F as Fields>::from_body(w.body.clone()) {
                            Some(f) => {
                                let ($($($field,)*)?) = f;
                                Kind::$name $({ $($field),* })?
                            }
                            None => Kind::Unknown(w.clone()),
                        }
                    } )*
                    _ => Kind::Unknown(w.clone()),
                }
            }

            /// One value of every kind (fields at their defaults), for tests and docs.
            pub fn examples() -> Vec<Kind> {
                vec![ $( Kind::$name $({ $($field: <$ty>::default()),* })?, )* ]
            }
        }
    };
    (@caused caused) => { true };
    (@caused) => { false };
}

vocabulary! {
    /// A hook invocation whose input is a JSON object with a string `hook_event_name`.
    0 => Hook {
        /// The event name as the host sent it, e.g. `PreToolUse`.
        name: String,
    },
    /// An invocation whose input is not a hook event (its bytes are kept).
    1 => Malformed {
        /// Why it is not, e.g. `no hook_event_name`.
        reason: String,
    },
    /// One API response's token usage, new or grown, read from a transcript for the `cause`
    /// event (0 for `import --transcripts`).
    2 caused => UsageObserved {
        /// The event that led to it.
        cause: Seq,
    },
    /// How far a transcript read for the `cause` event reached, and how full the context was.
    3 caused => ContextObserved {
        /// The event that led to it.
        cause: Seq,
    },
    /// The session's totals after the transcript reads made for the `cause` event.
    4 caused => SessionMetrics {
        /// The event that led to it.
        cause: Seq,
    },
    /// Exactly what the hook printed for the `cause` event, and the policy it decided under.
    5 caused => ResponseEmitted {
        /// The event that led to it.
        cause: Seq,
    },
    /// A task reminder the policy found due at the `cause` event.
    6 caused => ReminderIssued {
        /// The event that led to it.
        cause: Seq,
    },
    /// A loop agent's in-progress task, failed and released for retry at the `cause` event.
    7 caused => TaskReleased {
        /// The event that led to it.
        cause: Seq,
    },
    /// `hookjournal rewind`: projections ignore the session's events after `to_seq` up to here.
    8 => Rewound {
        /// The session rewound.
        session: String,
        /// The last event whose effect is kept.
        to_seq: Seq,
    },
    /// A change to the task store made from the CLI (`hookjournal tasks`).
    9 => TaskCommand,
    /// The branch of the session's working directory, read for the `cause` event.
    10 caused => GitObserved {
        /// The event that led to it.
        cause: Seq,
    },
    /// The session's restore text just before the compaction the `cause` event announced.
    11 caused => Checkpoint {
        /// The event that led to it.
        cause: Seq,
    },
    /// The host's own figures (Claude Code's statusline: cost, context), recorded when they change.
    12 => HostReported,
    /// What an outside program did on the journal's behalf (a loop's own task program releasing
    /// an agent's tasks). Recorded by the process that ran it, with or without the lock.
    13 => ExternalRelease,
}

impl Kind {
    /// The kind's name (`Unknown` for a tag this build does not know).
    pub fn name(&self) -> &'static str {
        self.info().map_or("Unknown", |k| k.name)
    }

    /// A short label, e.g. `Hook:PreToolUse`, `UsageObserved`, `Unknown:21`.
    pub fn label(&self) -> String {
        match self {
            Kind::Hook { name } => format!("Hook:{name}"),
            Kind::Unknown(w) => format!("Unknown:{}", w.tag),
            other => other.name().into(),
        }
    }

    /// The event this one was derived from, for the caused kinds.
    pub fn cause(&self) -> Option<Seq> {
        if !self.info()?.caused {
            return None;
        }
        match self.to_wire().body {
            Body::Seq(cause) => Some(cause),
            _ => None,
        }
    }

    /// The kind of a stored event.
    pub fn of(env: &Envelope) -> Kind {
        Kind::from_wire(&env.kind)
    }

    /// The `KINDS` entry named `name`.
    pub fn named(name: &str) -> Option<&'static KindInfo> {
        KINDS.iter().find(|k| k.name == name)
    }
}

impl From<Kind> for WireKind {
    fn from(k: Kind) -> WireKind {
        match k {
            Kind::Unknown(w) => w,
            k => k.to_wire(),
        }
    }
}

/// `env.kind()`: the vocabulary's reading of a stored event's kind.
pub trait KindOf {
    /// The event's kind.
    fn kind(&self) -> Kind;
}

impl KindOf for Envelope {
    fn kind(&self) -> Kind {
        Kind::from_wire(&self.kind)
    }
}

impl KindOf for NewEvent {
    fn kind(&self) -> Kind {
        Kind::from_wire(&self.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_never_move() {
        // The tags are in every stored hash: this list may only grow.
        let fixed = [
            ("Hook", 0),
            ("Malformed", 1),
            ("UsageObserved", 2),
            ("ContextObserved", 3),
            ("SessionMetrics", 4),
            ("ResponseEmitted", 5),
            ("ReminderIssued", 6),
            ("TaskReleased", 7),
            ("Rewound", 8),
            ("TaskCommand", 9),
            ("GitObserved", 10),
            ("Checkpoint", 11),
            ("HostReported", 12),
            ("ExternalRelease", 13),
        ];
        for (name, tag) in fixed {
            let k = Kind::named(name).unwrap_or_else(|| panic!("{name} is gone"));
            assert_eq!(k.tag, tag, "{name} moved");
        }
    }

    #[test]
    fn tags_and_names_are_unique() {
        for (i, a) in KINDS.iter().enumerate() {
            for b in &KINDS[i + 1..] {
                assert_ne!(a.tag, b.tag, "{} and {} share a tag", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn every_kind_round_trips_through_the_journals_encoding() {
        let all = Kind::examples();
        assert_eq!(all.len(), KINDS.len());
        for (k, info) in all.iter().zip(KINDS) {
            assert_eq!(k.name(), info.name);
            let w = k.to_wire();
            // A frozen tag's body must have the shape 0.1 wrote (the journal refuses another).
            if let Some(shape) = journal::kind::frozen_shape(w.tag) {
                assert_eq!(shape, w.body.shape(), "{}", info.name);
            }
            let bytes = bincode::serde::encode_to_vec(&w, bincode::config::standard()).unwrap();
            let (back, _): (WireKind, usize) =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
            assert_eq!(&Kind::from_wire(&back), k);
            assert_eq!(k.cause().is_some(), info.caused, "{}", info.name);
        }
    }

    #[test]
    fn a_tag_this_build_does_not_know_is_kept_as_it_was() {
        let w = WireKind {
            tag: 99,
            body: Body::Seq(4),
        };
        let k = Kind::from_wire(&w);
        assert_eq!(k, Kind::Unknown(w.clone()));
        assert_eq!(k.name(), "Unknown");
        assert_eq!(k.label(), "Unknown:99");
        assert_eq!(k.cause(), None);
        assert_eq!(WireKind::from(k), w);
    }
}
