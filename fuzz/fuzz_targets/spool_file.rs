//! A spool file: an event, or an error naming the damage; never a panic. As recorded, and
//! resealed (its checksum made right).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = journal::fuzz::decode_spool(data) {
        assert!(e.contains(".spool"), "the error names the file: {e}");
    }
    let _ = journal::fuzz::decode_spool(&journal::fuzz::reseal_spool(data));
});
