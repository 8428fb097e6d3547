//! The agents' settings files as install and uninstall edit them (Claude Code, Codex and Gemini
//! CLI JSON with comments, OpenClaw JSON5, Codex's config.toml trust entries): each edit is done
//! or refused with a reason, install never writes a file that does not parse; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for r in hookjournal_cli::fuzz::edit_settings(&text) {
        if let Err(e) = r {
            assert!(!e.contains("does not parse"), "{e}");
        }
    }
});
