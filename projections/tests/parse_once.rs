//! The hook parses its payload once and hands the parsed event to the fold
//! (`State::apply_parsed`), so what it parsed must be what the fold would read from the stored
//! envelope (`event::from_envelope`): for every payload of every host in the fixtures, given the
//! same host and event name, both readings are equal.

use journal::{Envelope, ZERO_HASH};
use projections::event::{self, HookEvent};
use projections::host::Host;
use projections::Kind;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Every `.json` payload under `dir`, recursively.
fn payloads(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            payloads(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// The envelope the hook stores for a parsed invocation.
fn stored(host: &Host, parsed: &HookEvent, payload: &[u8]) -> Envelope {
    Envelope {
        seq: 1,
        prev: ZERO_HASH,
        hash: ZERO_HASH,
        recorded_at_us: 0,
        host: host.to_string(),
        kind: Kind::Hook {
            name: parsed.name.clone(),
        }
        .into(),
        session_id: parsed.session_id.clone(),
        agent_id: None,
        payload: payload.to_vec(),
        truncated: None,
        spooled: false,
    }
}

#[test]
fn the_hooks_parse_is_the_folds_for_every_fixture_payload() {
    let hosts = [
        ("events/claude", "claude"),
        ("events/codex", "codex"),
        ("events/cursor", "cursor"),
        ("events/gemini", "gemini"),
        ("real-hosts/claude-2.1.330-payloads", "claude"),
        ("real-hosts/codex-0.169.0-payloads", "codex"),
        ("real-hosts/gemini-0.61.0-payloads", "gemini"),
        ("real-hosts/copilot-1.0.102", "copilot"),
        ("real-hosts/qwen-0.24.4", "qwen"),
        ("real-hosts/qodercli-1.1.52", "qoder"),
        ("real-hosts/opencode-1.18.33/shim", "opencode"),
    ];
    let mut checked = 0;
    for (dir, hint) in hosts {
        let mut files = Vec::new();
        payloads(&fixtures().join(dir), &mut files);
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            let host = event::detect_host(&bytes, Some(hint));
            // Copilot's camelCase payloads name no event: the command line gives it.
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let given = stem
                .strip_prefix("camel.")
                .or_else(|| stem.strip_prefix("user."))
                .map(|e| e.split('-').next().unwrap().to_string());
            let Some(parsed) = event::parse_named(&host, &bytes, given.as_deref()) else {
                continue;
            };
            let env = stored(&host, &parsed, &bytes);
            assert_eq!(
                event::from_envelope(&env).as_ref(),
                Some(&parsed),
                "{}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} payloads parsed");
}

/// The hook reads its payload once (`event::read`): the host and the event it finds are those
/// that detecting (`detect_host_with`) and then parsing (`parse_named`) find, for every payload
/// under the fixtures (real hosts', written ones and bad ones), with every hint.
#[test]
fn reading_once_is_detecting_then_parsing_for_every_fixture_payload() {
    let mut files = Vec::new();
    payloads(&fixtures(), &mut files);
    let bad = fixtures().join("bad");
    if let Ok(rd) = std::fs::read_dir(&bad) {
        files.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    let env = projections::host::CallerEnv::default();
    let hints = [None, Some("auto"), Some("other")]
        .into_iter()
        .chain(projections::hosts::HOSTS.iter().map(|m| Some(m.facts.name)));
    let hints: Vec<Option<&str>> = hints.collect();
    let mut checked = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for hint in &hints {
            for given in [None, Some("preToolUse")] {
                let host = event::detect_host_with(&bytes, *hint, &env);
                let parsed = event::parse_named(&host, &bytes, given);
                assert_eq!(
                    event::read(&bytes, *hint, &env, given),
                    (host, parsed),
                    "{} with {hint:?}, {given:?}",
                    f.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} readings compared");
}
