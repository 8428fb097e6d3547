//! The event envelope and its place in the hash chain.

use serde::{Deserialize, Serialize};

pub type Seq = u64;
pub type Hash = [u8; 32];
pub const ZERO_HASH: Hash = [0; 32];

/// What an event is. `Hook` and `Malformed` come from outside; the others are written by the tool
/// itself in the same atomic batch as the event that caused them (`cause`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Hook {
        name: String,
    },
    Malformed {
        reason: String,
    },
    UsageObserved {
        cause: Seq,
    },
    ContextObserved {
        cause: Seq,
    },
    SessionMetrics {
        cause: Seq,
    },
    ResponseEmitted {
        cause: Seq,
    },
    ReminderIssued {
        cause: Seq,
    },
    TaskReleased {
        cause: Seq,
    },
    Rewound {
        session: String,
        to_seq: Seq,
    },
    TaskCommand,
    GitObserved {
        cause: Seq,
    },
    Checkpoint {
        cause: Seq,
    },
    /// The host's own figures (Claude Code's statusline: cost, context), recorded when they change.
    HostReported,
    /// What an outside program did on the journal's behalf (a loop's own task program releasing
    /// an agent's tasks). Recorded by the process that ran it, with or without the lock.
    ExternalRelease,
}

impl Kind {
    /// A short label, e.g. `Hook:PreToolUse`, `UsageObserved`.
    pub fn label(&self) -> String {
        match self {
            Kind::Hook { name } => format!("Hook:{name}"),
            Kind::Malformed { .. } => "Malformed".into(),
            other => other.name().into(),
        }
    }

    /// The variant name alone.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Hook { .. } => "Hook",
            Kind::Malformed { .. } => "Malformed",
            Kind::UsageObserved { .. } => "UsageObserved",
            Kind::ContextObserved { .. } => "ContextObserved",
            Kind::SessionMetrics { .. } => "SessionMetrics",
            Kind::ResponseEmitted { .. } => "ResponseEmitted",
            Kind::ReminderIssued { .. } => "ReminderIssued",
            Kind::TaskReleased { .. } => "TaskReleased",
            Kind::Rewound { .. } => "Rewound",
            Kind::TaskCommand => "TaskCommand",
            Kind::GitObserved { .. } => "GitObserved",
            Kind::Checkpoint { .. } => "Checkpoint",
            Kind::HostReported => "HostReported",
            Kind::ExternalRelease => "ExternalRelease",
        }
    }

    pub fn cause(&self) -> Option<Seq> {
        match self {
            Kind::UsageObserved { cause }
            | Kind::ContextObserved { cause }
            | Kind::SessionMetrics { cause }
            | Kind::ResponseEmitted { cause }
            | Kind::ReminderIssued { cause }
            | Kind::TaskReleased { cause }
            | Kind::GitObserved { cause }
            | Kind::Checkpoint { cause } => Some(*cause),
            _ => None,
        }
    }
}

/// A payload over the cap keeps its first bytes; this records what the whole was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    pub original_len: u64,
    pub blake3: Hash,
}

/// An event before it has a place in the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    /// Microseconds since the Unix epoch, UTC.
    pub recorded_at_us: i64,
    pub host: String,
    pub kind: Kind,
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub payload: Vec<u8>,
    pub truncated: Option<Truncation>,
    /// The event waited in the spool (the lock was busy), so nothing was answered for it.
    pub spooled: bool,
}

impl NewEvent {
    /// Applies the payload cap: keeps the first `cap` bytes plus the length and hash of the whole.
    pub fn capped(mut self, cap: usize) -> Self {
        if self.payload.len() > cap && self.truncated.is_none() {
            self.truncated = Some(Truncation {
                original_len: self.payload.len() as u64,
                blake3: *blake3::hash(&self.payload).as_bytes(),
            });
            self.payload.truncate(cap);
        }
        self
    }
}

/// An event in the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: Seq,
    pub recorded_at_us: i64,
    pub host: String,
    pub kind: Kind,
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub payload: Vec<u8>,
    pub truncated: Option<Truncation>,
    pub spooled: bool,
    pub prev: Hash,
    pub hash: Hash,
}

#[derive(Serialize)]
struct Header<'a> {
    seq: Seq,
    recorded_at_us: i64,
    host: &'a str,
    kind: &'a Kind,
    session_id: &'a Option<String>,
    agent_id: &'a Option<String>,
    truncated: &'a Option<Truncation>,
    spooled: bool,
}

pub(crate) fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

impl Envelope {
    /// Places `ev` after `prev` at `seq`, computing its hash.
    pub fn seal(ev: NewEvent, seq: Seq, prev: Hash) -> Envelope {
        let mut env = Envelope {
            seq,
            recorded_at_us: ev.recorded_at_us,
            host: ev.host,
            kind: ev.kind,
            session_id: ev.session_id,
            agent_id: ev.agent_id,
            payload: ev.payload,
            truncated: ev.truncated,
            spooled: ev.spooled,
            prev,
            hash: ZERO_HASH,
        };
        env.hash = env.compute_hash();
        env
    }

    /// blake3(prev ‖ header ‖ payload). The header is the bincode of every field but the payload
    /// and the two hashes, so changing any byte of any field breaks the chain.
    pub fn compute_hash(&self) -> Hash {
        let header = Header {
            seq: self.seq,
            recorded_at_us: self.recorded_at_us,
            host: &self.host,
            kind: &self.kind,
            session_id: &self.session_id,
            agent_id: &self.agent_id,
            truncated: &self.truncated,
            spooled: self.spooled,
        };
        let header = bincode::serde::encode_to_vec(&header, bincode_config())
            .expect("encoding a header into a Vec cannot fail");
        let mut h = blake3::Hasher::new();
        h.update(&self.prev);
        h.update(&(header.len() as u64).to_le_bytes());
        h.update(&header);
        h.update(&self.payload);
        *h.finalize().as_bytes()
    }

    pub fn encode(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode_config())
            .expect("encoding an envelope into a Vec cannot fail")
    }

    pub fn decode(bytes: &[u8]) -> Result<Envelope, String> {
        bincode::serde::decode_from_slice(bytes, bincode_config())
            .map(|(e, _)| e)
            .map_err(|e| e.to_string())
    }

    pub fn recorded_at_secs(&self) -> f64 {
        self.recorded_at_us as f64 / 1e6
    }
}

/// The inverse of `hex`: 64 hex digits → a hash.
pub fn unhex(s: &str) -> Option<Hash> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

pub fn hex(h: &Hash) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(payload: &[u8]) -> NewEvent {
        NewEvent {
            recorded_at_us: 1,
            host: "claude".into(),
            kind: Kind::Hook {
                name: "Stop".into(),
            },
            session_id: Some("s".into()),
            agent_id: None,
            payload: payload.to_vec(),
            truncated: None,
            spooled: false,
        }
    }

    #[test]
    fn any_changed_field_changes_the_hash() {
        let a = Envelope::seal(ev(b"{}"), 1, ZERO_HASH);
        let mut b = a.clone();
        b.session_id = Some("t".into());
        assert_ne!(a.hash, b.compute_hash());
        let mut c = a.clone();
        c.payload = b"{ }".to_vec();
        assert_ne!(a.hash, c.compute_hash());
        let mut d = a.clone();
        d.seq = 2;
        assert_ne!(a.hash, d.compute_hash());
        assert_eq!(a.hash, a.compute_hash());
    }

    #[test]
    fn cap_keeps_prefix_length_and_hash_of_whole() {
        let big = vec![b'x'; 100];
        let e = ev(&big).capped(10);
        assert_eq!(e.payload.len(), 10);
        let t = e.truncated.unwrap();
        assert_eq!(t.original_len, 100);
        assert_eq!(t.blake3, *blake3::hash(&big).as_bytes());
    }

    #[test]
    fn envelope_round_trips_through_bincode() {
        let a = Envelope::seal(ev(b"\xff\x00raw"), 7, [3; 32]);
        assert_eq!(Envelope::decode(&a.encode()).unwrap(), a);
    }
}
