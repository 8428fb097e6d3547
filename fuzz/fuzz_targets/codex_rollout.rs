//! A Codex rollout file: its requests' usage and models, what does not parse skipped; never a
//! panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = projections::codex_rollout::scan(data, None);
    let _ = projections::codex_rollout::scan(data, Some("gpt-5.5"));
});
