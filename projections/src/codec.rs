//! The checkpoint's codec: every stored partition is encoded with bincode 2's standard
//! configuration (serde).

use serde::{Deserialize, Serialize};

/// Encodes a checkpoint partition.
pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode::config::standard()).expect("state encodes")
}

/// Decodes a checkpoint partition; `None` when the bytes do not decode.
pub fn decode<T: for<'de> Deserialize<'de>>(b: &[u8]) -> Option<T> {
    bincode::serde::decode_from_slice(b, bincode::config::standard())
        .ok()
        .map(|(v, _)| v)
}
