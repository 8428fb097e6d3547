//! The write-ahead log's record scan: whole records are read up to the first torn or damaged
//! one, which is named; never a panic. Each input is scanned as recorded and resealed (its
//! records' checksums made right, so mutations reach the envelope decoding behind them).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for bytes in [data.to_vec(), journal::fuzz::reseal_wal(data)] {
        if let Ok(s) = journal::fuzz::scan_wal(&bytes) {
            assert!(s.valid_len <= bytes.len() as u64);
            assert_eq!(
                s.damage.is_none(),
                s.valid_len == bytes.len() as u64,
                "{:?}",
                s.damage
            );
        }
    }
});
