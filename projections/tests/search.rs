//! What an event gives `search`, given/when/then: every string of any host's payload under its
//! own key, bookkeeping keys left out, a huge output capped, derived kinds giving nothing; and
//! a person's words turned into a query the index cannot misread.

use journal::{Envelope, WireKind};
use projections::kind::Kind;
use projections::search::{documents, fts_query, Doc, EVENT_CAP};

fn hook(payload: &str) -> Envelope {
    let mut e = Envelope {
        seq: 1,
        recorded_at_us: 0,
        host: "claude".into(),
        kind: Kind::Hook {
            name: "PostToolUse".into(),
        }
        .into(),
        session_id: Some("s".into()),
        agent_id: None,
        payload: payload.as_bytes().to_vec(),
        truncated: None,
        spooled: false,
        prev: [0; 32],
        hash: [0; 32],
    };
    e.hash[0] = 1;
    e
}

fn fields(docs: &[Doc]) -> Vec<(&str, &str)> {
    docs.iter()
        .map(|d| (d.field.as_str(), d.text.as_str()))
        .collect()
}

#[test]
fn every_string_of_a_payload_is_indexed_under_its_key_but_bookkeeping() {
    // Given a Claude PostToolUse with ids, a transcript path and a cwd beside the words.
    let e = hook(
        r#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse",
            "tool_name":"Bash","tool_input":{"command":"git commit -m 'limiter'"},
            "tool_response":{"stdout":"1 file changed","stderr":""},"tool_use_id":"toolu_1"}"#,
    );
    // When its documents are taken, then the tool's name, command and output are there, and
    // none of the ids, paths or names every event of the session shares (nor empty strings).
    assert_eq!(
        fields(&documents(&e)),
        [
            ("command", "git commit -m 'limiter'"),
            ("tool_name", "Bash"),
            ("stdout", "1 file changed")
        ]
    );
}

#[test]
fn another_hosts_shape_is_read_the_same_way() {
    // Given a Cline PostToolUse (its own nesting and keys).
    let e = hook(
        r#"{"clineVersion":"3.0.65","hookName":"PostToolUse","taskId":"t1",
            "postToolUse":{"toolName":"write_to_file","parameters":{"path":"src/lib.rs"},"result":"ok"}}"#,
    );
    let docs = documents(&e);
    // Then its path and tool are found under their own keys.
    assert!(fields(&docs).contains(&("path", "src/lib.rs")));
    assert!(fields(&docs).contains(&("toolName", "write_to_file")));
}

#[test]
fn items_of_one_key_are_one_document_and_a_huge_output_is_capped() {
    let big = "y".repeat(EVENT_CAP * 2);
    let e = hook(&format!(
        r#"{{"filenames":["a.rs","b.rs"],"tool_response":{{"stdout":"{big}"}}}}"#
    ));
    let docs = documents(&e);
    assert_eq!(fields(&docs)[0], ("filenames", "a.rs\nb.rs"));
    let total: usize = docs.iter().map(|d| d.text.len()).sum();
    assert!(total <= EVENT_CAP, "{total} bytes indexed");
}

#[test]
fn a_payload_that_is_not_json_is_text_and_derived_kinds_give_nothing() {
    let mut e = hook("not json: segfault in parser");
    assert_eq!(
        fields(&documents(&e)),
        [("text", "not json: segfault in parser")]
    );
    e.kind = WireKind::from(Kind::UsageObserved { cause: 1 });
    e.payload = br#"{"model":"claude-opus-4-1"}"#.to_vec();
    assert!(documents(&e).is_empty());
}

#[test]
fn words_become_quoted_terms_so_punctuation_is_never_query_syntax() {
    assert_eq!(
        fts_query("rate limit").as_deref(),
        Some(r#""rate" "limit""#)
    );
    assert_eq!(
        fts_query(r#"fix(api) "quoted" NOT x-y"#).as_deref(),
        Some(r#""fix(api)" """quoted""" "NOT" "x-y""#)
    );
    assert_eq!(fts_query("limit*").as_deref(), Some(r#""limit"*"#));
    assert_eq!(fts_query("  * ").as_deref(), None);
    assert_eq!(fts_query("").as_deref(), None);
}
