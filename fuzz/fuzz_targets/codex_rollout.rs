//! A Codex rollout file: its requests' usage and models, what does not parse skipped; never a
//! panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = projections::hosts::codex::rollout::scan(data, None);
    let _ = projections::hosts::codex::rollout::scan(data, Some("gpt-5.5"));
});
