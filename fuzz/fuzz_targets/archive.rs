//! An archive of cold partitions: a lookup (of its first key, and of one it lacks), the key
//! listing and a whole read; never a panic, never an allocation sized by a length field beyond
//! the file. As recorded, and resealed (its digest made right).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for bytes in [data.to_vec(), journal::fuzz::reseal_archive(data)] {
        // The first entry's key, as the file has it after its magic.
        let first = bytes
            .get(8..12)
            .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as usize)
            .and_then(|l| bytes.get(12..12usize.saturating_add(l)))
            .unwrap_or(b"s/1")
            .to_vec();
        for key in [&first[..], b"no such key"] {
            for r in journal::fuzz::decode_archive(&bytes, key, b"") {
                if let Err(e) = r {
                    assert!(e.contains(".cold"), "the error names the archive: {e}");
                }
            }
        }
    }
});
