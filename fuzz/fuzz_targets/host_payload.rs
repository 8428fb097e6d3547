//! Every host's payload parser (every host of `projections::hosts::HOSTS`) and host detection: whatever the bytes, a host is detected, each
//! parser answers (an event or none), and a payload that does not parse has a reason.
#![no_main]
use libfuzzer_sys::fuzz_target;
use projections::event;
use projections::host::Host;

fuzz_target!(|data: &[u8]| {
    // Every host of the registry, as a hint and as the sender, and a host it does not know.
    let hints = [None, Some("auto"), Some("other")]
        .into_iter()
        .chain(projections::hosts::HOSTS.iter().map(|m| Some(m.facts.name)));
    for hint in hints {
        let host = event::detect_host(data, hint);
        let _ = host.as_str();
        let _ = event::parse(&host, data);
    }
    for host in Host::known().chain([Host::from_name("other")]) {
        if let Some(ev) = event::parse(&host, data) {
            let _ = (ev.canonical.kind(), ev.canonical.is_record_only());
        }
    }
    let _ = event::malformed_reason(data);
    let _ = event::event_name(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = event::codex_notify_payload(text);
    }
});
