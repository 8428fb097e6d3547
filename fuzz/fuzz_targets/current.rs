//! `CURRENT` and the `ACTIVE_EMPTY` marker (the input split at its first NUL): the store named,
//! or an error that says `CURRENT` is damaged; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (current, marker) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let (named, _) = journal::fuzz::parse_current(current, marker);
    match named {
        Ok(Some(name)) => assert!(name.starts_with("active-") && !name.contains('/')),
        Ok(None) => {}
        Err(e) => assert!(e.contains("CURRENT"), "{e}"),
    }
});
