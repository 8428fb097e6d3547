//! A sealed segment, read whole with its digest checked, without it, and streamed: events, or an
//! error naming the segment; never a panic. As recorded, and resealed (its digest made right).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for bytes in [data.to_vec(), journal::fuzz::reseal_segment(data)] {
        for r in journal::fuzz::decode_segment(&bytes) {
            if let Err(e) = r {
                assert!(e.contains("segment"), "the error names the segment: {e}");
            }
        }
    }
});
