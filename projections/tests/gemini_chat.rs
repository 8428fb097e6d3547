//! Gemini CLI's session file, read as the hook reads it at ingestion: usage per response,
//! the context, and the compressions that really happened (files written by Gemini CLI 0.61.0).

use projections::hosts::gemini::chat::{scan, ChatScan};
use projections::pricing::PricingTable;
use projections::transcript::Usage;

fn chat(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/gemini-0.61.0-chats/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

#[test]
fn a_tool_run_counts_each_response_once_and_no_compression() {
    let bytes = chat("tool-run.jsonl");
    let s: ChatScan = scan(&bytes);
    // Responses with tool calls are written twice under one id: four responses, not six.
    let got: Vec<(&str, Usage, &str)> = s
        .records
        .iter()
        .map(|r| (&r.message_id[..8], r.usage, r.model.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("8a860976", usage(327, 12), "gemini-2.5-flash"),
            ("41f594bd", usage(504, 12), "gemini-2.5-flash"),
            ("34ebc1f0", usage(682, 12), "gemini-2.5-flash"),
            ("295c6f40", usage(988, 12), "gemini-2.5-flash"),
        ]
    );
    // The resume rewrote the history (`$set` of messages): no compression in it.
    assert!(s.compressions.is_empty());
    assert_eq!(s.context.as_ref().map(|c| c.tokens), Some(988));
    assert_eq!(s.consumed, bytes.len());
    let usd: f64 = s
        .records
        .iter()
        .map(|r| PricingTable::default().cost(&r.model, &r.usage).unwrap())
        .sum();
    let expected = (327.0 + 504.0 + 682.0 + 988.0) * 0.30e-6 + 48.0 * 2.50e-6;
    assert!((usd - expected).abs() < 1e-12, "{usd} vs {expected}");
}

#[test]
fn each_real_compression_shows_once_with_its_own_acknowledgement() {
    let bytes = chat("with-real-compression.jsonl");
    let s = scan(&bytes);
    assert_eq!(
        s.compressions,
        [
            "acfb34a4-3adb-4820-88d4-133423cbdf41",
            "ee4eb902-5a42-49a2-b076-a32557fa733c"
        ]
    );
    // The response after the last compression is the context now.
    assert_eq!(s.context.as_ref().map(|c| c.tokens), Some(900_000));
    assert_eq!(s.records.len(), 4);
}

#[test]
fn reading_in_chunks_finds_the_same_as_reading_at_once() {
    let bytes = chat("with-real-compression.jsonl");
    let whole = scan(&bytes);
    for cut in [1, 700, bytes.len() / 2, bytes.len() - 3] {
        let first = scan(&bytes[..cut]);
        let second = scan(&bytes[first.consumed..]);
        let mut compressions = first.compressions.clone();
        compressions.extend(second.compressions.clone());
        assert_eq!(compressions, whole.compressions, "cut at {cut}");
        let ids = |s: &ChatScan| {
            s.records
                .iter()
                .map(|r| r.message_id.clone())
                .collect::<Vec<_>>()
        };
        let mut all = ids(&first);
        all.extend(
            ids(&second)
                .into_iter()
                .filter(|id| !ids(&first).contains(id)),
        );
        assert_eq!(all, ids(&whole), "cut at {cut}");
    }
}
