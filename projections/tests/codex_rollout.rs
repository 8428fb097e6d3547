//! Codex CLI's rollout file, read as the hook reads it at ingestion (files written by Codex CLI
//! 0.169.0): one record per request, repeated readings and the empty one after a compaction not
//! counted again, priced at OpenAI's rates.

use projections::hosts::codex::rollout::scan;
use projections::pricing::PricingTable;

fn rollout(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/fixtures/real-hosts/codex-0.169.0-rollouts/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn inputs(name: &str) -> Vec<(String, u64, u64, String)> {
    scan(&rollout(name), None)
        .records
        .into_iter()
        .map(|r| {
            (
                r.message_id,
                r.usage.input_tokens,
                r.usage.output_tokens,
                r.model,
            )
        })
        .collect()
}

#[test]
fn each_request_is_counted_once_with_the_turns_model() {
    let m = "gpt-5.1-codex".to_string();
    assert_eq!(
        inputs("tool-run.jsonl"),
        [
            ("codex-total:5419".into(), 5407, 12, m.clone()),
            ("codex-total:11017".into(), 5586, 12, m.clone()),
            ("codex-total:16784".into(), 5755, 12, m.clone()),
            ("codex-total:22811".into(), 6015, 12, m.clone()),
        ]
    );
    let s = scan(&rollout("tool-run.jsonl"), None);
    assert_eq!(s.context.map(|c| c.tokens), Some(6015));
    let usd: f64 = s
        .records
        .iter()
        .map(|r| PricingTable::default().cost(&r.model, &r.usage).unwrap())
        .sum();
    let expected = (5407.0 + 5586.0 + 5755.0 + 6015.0) * 1.25e-6 + 48.0 * 10e-6;
    assert!((usd - expected).abs() < 1e-12, "{usd} vs {expected}");
}

#[test]
fn readings_repeated_and_emptied_by_a_compaction_are_not_counted_again() {
    let got: Vec<u64> = inputs("with-compaction.jsonl")
        .iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(got, [7078, 7387, 7190, 7499]);
}

#[test]
fn a_chunk_after_the_turn_context_takes_the_callers_model() {
    let bytes = rollout("tool-run.jsonl");
    // After line 20: the turn_context (line 6) and two of the four readings are before it.
    let cut = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(19)
        .unwrap()
        .0
        + 1;
    let first = scan(&bytes[..cut], None);
    let second = scan(&bytes[cut..], first.model.as_deref());
    assert_eq!(first.model.as_deref(), Some("gpt-5.1-codex"));
    assert!(second.records.iter().all(|r| r.model == "gpt-5.1-codex"));
    assert_eq!(first.records.len() + second.records.len(), 4);
}
