//! The hook's whole in-process classification (what it records, before the journal): it never
//! panics, records the invocation's bytes verbatim, and as `Malformed` (with a reason) when
//! nothing else fits. What parses is then folded and answered by the policy, as the hook does
//! under its lock (`projections::scenario`), a few events in a row: the input is split at
//! `\n\x00` into the payloads of one session's invocations.
#![no_main]
use projections::{Kind, KindOf};
use libfuzzer_sys::fuzz_target;
use projections::host::Host;
use projections::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    let mut scenario = Scenario::default();
    for (i, payload) in data.split(|&b| b == 0).take(8).enumerate() {
        let payload = payload.strip_suffix(b"\n").unwrap_or(payload);
        // The command lines and hook environments hosts give (Copilot CLI's camelCase hooks
        // name their event on the command line; Copilot and Qwen Code are told by the env).
        let hosts: &[(&[&str], &[&str])] = &[
            (&["hook"], &[]),
            (&["hook", "--host", "codex"], &[]),
            (&["hook", "--host", "gemini"], &["GEMINI_SESSION_ID"]),
            (&["hook", "--host", "openclaw"], &[]),
            (&["hook", "--host", "copilot", "--event", "preToolUse"], &["COPILOT_CLI", "COPILOT_PROJECT_DIR"]),
            (&["hook", "--host", "claude"], &["COPILOT_CLI", "COPILOT_PROJECT_DIR"]),
            (&["hook"], &["QWEN_CODE_CLI", "QWEN_PROJECT_DIR"]),
        ];
        let (args, env) = hosts[i % hosts.len()];
        let (ev, parsed) = hookjournal_cli::fuzz::classify_hook(args, payload, env);
        assert_eq!(ev.payload, payload, "the payload is recorded verbatim");
        match &ev.kind() {
            Kind::Hook { name } => assert!(parsed.as_ref().is_some_and(|p| &p.name == name)),
            Kind::Malformed { reason } => {
                assert!(parsed.is_none());
                assert!(!reason.is_empty(), "a Malformed event says why");
            }
            other => panic!("the hook recorded {other:?} for an invocation"),
        }
        // Codex's legacy notify: the JSON as the last argument, stdin empty.
        if let Ok(text) = std::str::from_utf8(payload) {
            let (ev, _) = hookjournal_cli::fuzz::classify_hook(&["hook", text], b"", &[]);
            assert!(matches!(
                ev.kind(),
                Kind::Hook { .. } | Kind::Malformed { .. }
            ));
        }
        // The scenario reads the payload as the fold reads a stored event: with the event name
        // its kind holds (what `--event` named, for Copilot CLI's camelCase hooks).
        if let (Some(_), Ok(text), Kind::Hook { name }) =
            (parsed, std::str::from_utf8(payload), ev.kind())
        {
            scenario = scenario
                .host(Host::from_name(&ev.host))
                .named(&name)
                .given_hook(text);
        }
    }
});
