//! The redaction corpus (see `tests/common/redaction_corpus.rs`): every secret kind, in every
//! context it reaches the journal by, is masked whole and counted once; every look-alike comes
//! back byte for byte. And two properties: redacting twice changes nothing more, and text
//! changes only where a secret was.

#[path = "../../tests/common/redaction_corpus.rs"]
mod corpus;

use corpus::{contexts, lookalikes, pieces, secrets};
use projections::redact::redact;
use proptest::prelude::*;
use std::borrow::Cow;

#[test]
fn the_corpus_is_as_big_as_promised() {
    let s = secrets();
    assert!(s.len() >= 49, "{} secrets", s.len());
    assert!(lookalikes().len() >= 17);
    let kinds: std::collections::BTreeSet<_> = s.iter().map(|x| x.kind).collect();
    assert!(kinds.len() >= 40, "{} kinds: {kinds:?}", kinds.len());
}

#[test]
fn every_secret_is_masked_whole_in_every_context() {
    let mut failures = Vec::new();
    for s in secrets() {
        for (context, text) in contexts(&s.line, s.url) {
            let (out, n) = redact(&text);
            let marker = format!("[REDACTED:{}]", s.kind);
            let leaked: Vec<&str> = pieces(&s.secret)
                .into_iter()
                .filter(|p| out.contains(p))
                .collect();
            let kept = s.keep.is_none_or(|k| {
                // Kept verbatim, or JSON-escaped when the context is a JSON payload.
                let json = serde_json::to_string(k).unwrap();
                out.contains(k) || out.contains(&json[1..json.len() - 1])
            });
            if n != 1 || !out.contains(&marker) || !leaked.is_empty() || !kept {
                failures.push(format!(
                    "{} in {context}: masked {n}, leaked {:?}, kept {kept}\n  in:  {text}\n  out: {out}",
                    s.kind,
                    leaked.first()
                ));
            }
            if context != "env text" && context != "url" {
                serde_json::from_str::<serde_json::Value>(&out)
                    .unwrap_or_else(|e| panic!("{} in {context}: {e}\n{out}", s.kind));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn look_alikes_are_left_byte_for_byte() {
    let mut failures = Vec::new();
    for l in lookalikes() {
        for (context, text) in contexts(l, true) {
            let (out, n) = redact(&text);
            if n != 0 || !matches!(out, Cow::Borrowed(_)) {
                failures.push(format!(
                    "{context}: {n} masked\n  in:  {text}\n  out: {out}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn all_secrets_in_one_payload_are_counted() {
    let all = secrets();
    let text: String = all.iter().map(|s| format!("{}\n", s.line)).collect();
    let payload =
        serde_json::json!({"hook_event_name": "PostToolUse", "tool_response": {"stdout": text}})
            .to_string();
    let (out, n) = redact(&payload);
    assert_eq!(n, all.len(), "{out}");
    for s in &all {
        for p in pieces(&s.secret) {
            assert!(!out.contains(p), "{}: {p} survived", s.kind);
        }
    }
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
}

/// Pieces of text: secrets, look-alikes, and noise with the characters that matter (quotes,
/// backslashes, escapes, ANSI codes, `=`, `:`, `%`).
fn piece() -> impl Strategy<Value = String> {
    let secrets: Vec<String> = secrets().into_iter().map(|s| s.line).collect();
    let looks: Vec<String> = lookalikes().into_iter().map(String::from).collect();
    prop_oneof![
        prop::sample::select(secrets),
        prop::sample::select(looks),
        "[ -~\\n\\t\"\\\\é\u{1b}]{0,16}",
        "(password|TOKEN|_key|Key|secret|Bearer |://u:|ghp_|AKIA|sk-|-----BEGIN PRIVATE KEY-----|%3D|=|: ){1,3}[A-Za-z0-9+/=_-]{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Redacting masked text again finds nothing, whatever the text is made of.
    #[test]
    fn redaction_is_idempotent(parts in prop::collection::vec(piece(), 0..6)) {
        let text = parts.concat();
        let (once, _) = redact(&text);
        let (twice, n) = redact(&once);
        prop_assert_eq!(n, 0, "{}", once);
        prop_assert!(matches!(twice, Cow::Borrowed(_)));
    }

    /// Outside the markers, the output is the input: each stretch between markers appears in the
    /// input, in order, and the markers account for the count.
    #[test]
    fn only_matches_change(parts in prop::collection::vec(piece(), 0..6)) {
        let text = parts.concat();
        let (out, n) = redact(&text);
        if n == 0 {
            prop_assert!(matches!(out, Cow::Borrowed(_)));
            prop_assert_eq!(out.as_ref(), text.as_str());
            return Ok(());
        }
        let mut rest = text.as_str();
        let mut markers = 0;
        let mut o = out.as_ref();
        loop {
            let (before, after) = match o.find("[REDACTED:") {
                Some(i) => (&o[..i], Some(&o[i..])),
                None => (o, None),
            };
            if markers == 0 {
                prop_assert!(rest.starts_with(before), "{:?} does not start {:?}", before, rest);
            }
            let at = rest.find(before);
            prop_assert!(at.is_some(), "{:?} is not in the input", before);
            rest = &rest[at.unwrap() + before.len()..];
            match after {
                Some(a) => {
                    let close = a.find(']').unwrap();
                    o = &a[close + 1..];
                    markers += 1;
                }
                None => {
                    prop_assert!(text.ends_with(before));
                    break;
                }
            }
        }
        prop_assert_eq!(markers, n);
    }
}

/// Text made of candidates that are all rejected (`sk-sk-sk-…`, `TOKEN=$TOKEN=$…`): each
/// rejected match is at most a few hundred bytes long, so this is linear, not quadratic (with
/// unbounded matches this test runs for many minutes).
#[test]
fn long_runs_of_rejected_candidates_do_not_go_quadratic() {
    for unit in [
        "sk-",
        "TOKEN=$",
        "_key=aaaa",
        "x_KEY=zzzzzzzzzzzzzzzzzzzzzzzzzzz_",
        "aghp_",
        "hf_abcdefghijklmnopqrstuvwxyzabcdefgh",
    ] {
        let text = unit.repeat((64 << 10) / unit.len());
        let (out, n) = redact(&text);
        assert_eq!(n, 0, "{unit}");
        assert!(matches!(out, Cow::Borrowed(_)));
    }
}
