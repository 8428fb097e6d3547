//! The event envelope and its place in the hash chain.

use crate::kind::WireKind;
use serde::{Deserialize, Serialize};

/// An event's position in the log: 1 for the first event, then one more for each.
pub type Seq = u64;
/// A blake3 hash: an event's place in the chain, a payload's digest.
pub type Hash = [u8; 32];
/// The `prev` of the first event (and the head hash of an empty journal).
pub const ZERO_HASH: Hash = [0; 32];

/// A payload over the cap keeps its first bytes; this records what the whole was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// The whole payload's length in bytes.
    pub original_len: u64,
    /// The blake3 of the whole payload.
    pub blake3: Hash,
}

/// An event before it has a place in the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    /// Microseconds since the Unix epoch, UTC.
    pub recorded_at_us: i64,
    /// The agent host, e.g. `claude`; `cli` for events written by commands.
    pub host: String,
    /// What the event is.
    pub kind: WireKind,
    /// The agent session it belongs to, if any.
    pub session_id: Option<String>,
    /// The looping agent's id (from the loop's environment), if any.
    pub agent_id: Option<String>,
    /// The hook's input bytes verbatim, or a derived kind's JSON body; capped.
    pub payload: Vec<u8>,
    /// Set when the payload was cut to the cap.
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
    /// Its position in the log.
    pub seq: Seq,
    /// Microseconds since the Unix epoch, UTC, when it was recorded.
    pub recorded_at_us: i64,
    /// The agent host, e.g. `claude`; `cli` for events written by commands.
    pub host: String,
    /// What the event is.
    pub kind: WireKind,
    /// The agent session it belongs to, if any.
    pub session_id: Option<String>,
    /// The looping agent's id (from the loop's environment), if any.
    pub agent_id: Option<String>,
    /// The hook's input bytes verbatim, or a derived kind's JSON body; capped.
    #[serde(deserialize_with = "byte_buf")]
    pub payload: Vec<u8>,
    /// Set when the payload was cut to the cap.
    pub truncated: Option<Truncation>,
    /// The event waited in the spool, so nothing was answered for it.
    pub spooled: bool,
    /// The hash of the event before it (`ZERO_HASH` for the first).
    pub prev: Hash,
    /// This event's hash: see `compute_hash`.
    pub hash: Hash,
}

/// Reads a payload as one run of bytes. Written as a sequence of `u8` (serde's way for a
/// `Vec<u8>`), bincode lays it out exactly as bytes (a length, then one byte each), but read
/// back as a sequence it went through serde one byte at a time: a fifth of a full replay.
fn byte_buf<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    struct Bytes;
    impl<'de> serde::de::Visitor<'de> for Bytes {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("bytes")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
        // A self-describing format (JSON) writes a `Vec<u8>` as an array of numbers.
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                v.push(b);
            }
            Ok(v)
        }
    }
    d.deserialize_byte_buf(Bytes)
}

#[derive(Serialize)]
struct Header<'a> {
    seq: Seq,
    recorded_at_us: i64,
    host: &'a str,
    kind: &'a WireKind,
    session_id: &'a Option<String>,
    agent_id: &'a Option<String>,
    truncated: &'a Option<Truncation>,
    spooled: bool,
}

pub(crate) fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Decodes a `T` from `bytes` (read from disk) with bincode, never allocating much more than
/// the bytes could hold. Unbounded, a damaged length prefix (one flipped byte of a spool file or
/// a segment record) asks for petabytes and aborts the process: the hook, `verify`, `recover`.
/// bincode's limit is a constant, so it is picked by the input's size: at least 4× the input
/// (its varints claim their decoded width) plus 1 KiB. Nothing the journal writes is near
/// 256 MiB (payloads are capped at 64 MiB at most): larger input is refused.
pub(crate) fn decode_bounded<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    fn with<T: serde::de::DeserializeOwned, const L: usize>(bytes: &[u8]) -> Result<T, String> {
        bincode::serde::decode_from_slice(bytes, bincode_config().with_limit::<L>())
            .map(|(v, _)| v)
            .map_err(|e| e.to_string())
    }
    match bytes.len().saturating_mul(4).saturating_add(1 << 10) {
        n if n <= 1 << 12 => with::<T, { 1 << 12 }>(bytes),
        n if n <= 1 << 16 => with::<T, { 1 << 16 }>(bytes),
        n if n <= 1 << 20 => with::<T, { 1 << 20 }>(bytes),
        n if n <= 1 << 24 => with::<T, { 1 << 24 }>(bytes),
        n if n <= 1 << 30 => with::<T, { 1 << 30 }>(bytes),
        _ => Err(format!(
            "{} bytes: larger than anything written",
            bytes.len()
        )),
    }
}

impl Envelope {
    /// Places `ev` after `prev` at `seq`, computing its hash.
    pub fn seal(ev: NewEvent, seq: Seq, prev: Hash) -> Envelope {
        let mut env = Envelope::at(ev, seq, prev);
        env.hash = env.compute_hash();
        env
    }

    /// `ev` at `seq` after `prev`, its hash not computed yet (zero).
    pub(crate) fn at(ev: NewEvent, seq: Seq, prev: Hash) -> Envelope {
        Envelope {
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
        }
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
        let mut buf = Vec::with_capacity(256);
        bincode::serde::encode_into_std_write(&header, &mut buf, bincode_config())
            .expect("encoding a header into a Vec cannot fail");
        let header = buf;
        let mut h = blake3::Hasher::new();
        h.update(&self.prev);
        h.update(&(header.len() as u64).to_le_bytes());
        h.update(&header);
        h.update(&self.payload);
        *h.finalize().as_bytes()
    }

    /// The envelope's bincode, as segments, the log and the store hold it.
    pub(crate) fn encode(&self) -> Vec<u8> {
        // Sized once: grown from empty, a 2 KB envelope was reallocated nine times.
        let mut out = Vec::with_capacity(self.payload.len() + 256);
        bincode::serde::encode_into_std_write(self, &mut out, bincode_config())
            .expect("encoding an envelope into a Vec cannot fail");
        out
    }

    /// The inverse of `encode`; the error says why the bytes are not an envelope.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Envelope, String> {
        decode_bounded(bytes)
    }
}

/// The inverse of `hex`: 64 hex digits (either case) → a hash.
pub fn unhex(s: &str) -> Option<Hash> {
    blake3::Hash::from_hex(s).ok().map(|h| *h.as_bytes())
}

/// A hash as 64 lowercase hex digits (blake3's own rendering).
pub fn hex(h: &Hash) -> String {
    blake3::Hash::from_bytes(*h).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(payload: &[u8]) -> NewEvent {
        NewEvent {
            recorded_at_us: 1,
            host: "claude".into(),
            kind: WireKind {
                tag: 0,
                body: crate::kind::Body::Text("Stop".into()),
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
    fn hex_is_64_lowercase_digits_and_unhex_reverses_it() {
        let h: Hash = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5);
        let s = hex(&h);
        let by_hand: String = h.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(s, by_hand);
        assert_eq!(unhex(&s), Some(h));
        assert_eq!(unhex(&s.to_uppercase()), Some(h));
        assert_eq!(unhex(&s[..63]), None);
        assert_eq!(unhex(&format!("{}g", &s[..63])), None);
        assert_eq!(hex(&ZERO_HASH), "0".repeat(64));
    }

    /// The payload is read as bytes but written as serde writes any `Vec<u8>`: the same bytes
    /// on disk as every earlier build wrote and reads.
    #[test]
    fn the_payload_reads_as_bytes_what_a_sequence_of_u8_wrote() {
        #[derive(Serialize)]
        struct AsSeq<'a>(&'a Vec<u8>);
        for payload in [
            Vec::new(),
            b"{}".to_vec(),
            (0..=255u8).cycle().take(70_000).collect(),
        ] {
            let a = Envelope::seal(ev(&payload), 9, [1; 32]);
            let seq = bincode::serde::encode_to_vec(AsSeq(&a.payload), bincode_config()).unwrap();
            let bytes =
                bincode::serde::encode_to_vec(serde_bytes_like(&a.payload), bincode_config())
                    .unwrap();
            assert_eq!(seq, bytes);
            assert_eq!(Envelope::decode(&a.encode()).unwrap(), a);
        }
    }

    /// Serialises as serde's bytes (what `deserialize_byte_buf` reads).
    fn serde_bytes_like(b: &[u8]) -> impl Serialize + '_ {
        struct B<'a>(&'a [u8]);
        impl Serialize for B<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        B(b)
    }

    #[test]
    fn envelope_round_trips_through_bincode() {
        let a = Envelope::seal(ev(b"\xff\x00raw"), 7, [3; 32]);
        assert_eq!(Envelope::decode(&a.encode()).unwrap(), a);
    }
}
