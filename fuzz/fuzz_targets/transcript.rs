//! A Claude Code transcript (JSONL): usage and context, lines that do not parse counted and
//! skipped; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = projections::transcript::scan(data);
});
