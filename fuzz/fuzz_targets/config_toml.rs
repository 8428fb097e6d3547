//! `config.toml` as every command (the hook first) loads it: settings, with a one-line-per-problem
//! warning naming the file for what it refused; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (clean, warning) = hookjournal_cli::fuzz::load_settings(data);
    if let Some(w) = warning {
        assert!(!clean);
        assert!(w.lines().all(|l| l.contains("config.toml")), "{w}");
    }
});
