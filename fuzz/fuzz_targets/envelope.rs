//! An envelope's bincode, as every journal file holds it: an envelope or an error; never a
//! panic, never an allocation sized by a length prefix beyond the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use projections::KindOf;

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = journal::fuzz::decode_envelope(data) {
        let _ = (env.compute_hash(), env.kind().label());
    }
});
