//! A Gemini CLI chat session file: its requests and compressions, what does not parse skipped;
//! never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = projections::hosts::gemini::chat::scan(data);
});
