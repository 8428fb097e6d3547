//! The sessions index: each session's summary prices, lists and counts it as the session's own
//! state does, so `sessions`, `tasks` and `status` read the index and no session.

use projections::config::PolicyConfig;
use projections::fold::{self, Partition};
use projections::index::{self, SessionSummary, BAND_BOUNDS};
use projections::pricing::{LongContext, ModelPrice, PricingTable};
use projections::report;
use projections::scenario::Scenario;
use projections::session::SessionState;
use projections::transcript::Usage;

/// Models with every kind of long-context tier, one without, and one unpriced.
const MODELS: [&str; 6] = [
    "claude-sonnet-4-5-20250929",
    "claude-haiku-5-5",
    "gpt-5.4",
    "gemini-2.5-pro",
    "claude-opus-4-1",
    "some-unpriced-model",
];

/// A session with one request of each model just below, at and just above every band bound.
fn session_across_every_threshold() -> SessionState {
    let mut s = SessionState::new("s1");
    let mut n = 0;
    for model in MODELS {
        for bound in BAND_BOUNDS {
            for context in [bound - 1, bound, bound + 1, 5 * bound] {
                n += 1;
                let usage = Usage {
                    input_tokens: context / 4,
                    cache_write_5m: context / 8,
                    cache_write_1h: context / 8,
                    cache_read: context - context / 4 - 2 * (context / 8),
                    output_tokens: 1_000 + n,
                };
                assert_eq!(usage.context_tokens(), context);
                s.usage_by_key
                    .insert(format!("m{n}:r{n}"), (model.to_string(), usage));
            }
        }
    }
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn every_long_context_threshold_of_the_embedded_prices_is_a_band_bound() {
    // Given the embedded price table, then each tier's threshold is where the bands split.
    for (model, price) in PricingTable::embedded_models() {
        if let Some(tier) = &price.long_context {
            assert!(
                BAND_BOUNDS.contains(&tier.threshold_tokens),
                "{model}: threshold {} is not in BAND_BOUNDS, so the index would price it wrong",
                tier.threshold_tokens
            );
        }
    }
}

#[test]
fn a_summary_prices_a_session_as_its_requests_on_both_sides_of_every_threshold() {
    // Given requests around every bound, of tiered, untiered and unpriced models,
    let s = session_across_every_threshold();
    let pricing = PricingTable::default();
    // when priced from the summary's bands,
    let banded = SessionSummary::of(&s).usd(&pricing).expect("priceable");
    // then the dollars are the per-request sum's.
    let exact = report::session_usd(&s, &pricing).0;
    assert!(exact > 0.0);
    assert!(close(banded, exact), "{banded} vs {exact}");
}

#[test]
fn a_price_override_with_another_threshold_is_priced_from_the_session_itself() {
    // Given an override whose long-context tier starts at 150k, between two bounds,
    let s = session_across_every_threshold();
    let mut price = ModelPrice::standard(3.0, 15.0);
    price.long_context = Some(LongContext::standard(150_000, 6.0, 22.5));
    let pricing = PricingTable::default().with_override("gpt-5.4", price);
    // when the summary is asked, then it cannot say,
    assert_eq!(SessionSummary::of(&s).usd(&pricing), None);
    // and the session's row is priced per request instead.
    let row = report::session_row(&s, &pricing, &PolicyConfig::default());
    assert!(close(row.usd, report::session_usd(&s, &pricing).0));
}

#[test]
fn a_session_without_transcript_usage_is_priced_at_what_its_host_reported() {
    let s = SessionState::new("s1");
    assert_eq!(
        SessionSummary::of(&s).usd(&PricingTable::default()),
        Some(0.0)
    );
}

#[test]
fn the_index_shard_holds_the_folded_sessions_summary_and_its_length_prefix_counts_them() {
    // Given two sessions folded event by event (the hook's way),
    let s = Scenario::default()
        .given_hook(
            r#"{"session_id":"s1","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}"#,
        )
        .given_hook(
            r#"{"session_id":"s2","cwd":"/q","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
        )
        .given_usage("s1", "m1", "2026-11-01", 100);
    // then each session's shard holds its summary, as the session's own state gives it,
    let parts: std::collections::BTreeMap<_, _> = s.state.partitions().into_iter().collect();
    for id in ["s1", "s2"] {
        let key = Partition::SessionIndex(index::shard_of(id)).key();
        let shard: index::IndexShard = fold::decode(&parts[&key]).expect("decodes");
        assert_eq!(shard[id], SessionSummary::of(&s.state.sessions[id]));
        assert_eq!(index::shard_len(&parts[&key]), Some(shard.len()));
    }
    // and the summary's row is the session's row.
    let pricing = PricingTable::default();
    let cfg = PolicyConfig::default();
    let sum = SessionSummary::of(&s.state.sessions["s1"]);
    assert_eq!(
        report::summary_row("s1", &sum, sum.usd(&pricing).unwrap(), &cfg),
        report::session_row(&s.state.sessions["s1"], &pricing, &cfg)
    );
    assert_eq!(sum.usage_total().input_tokens, 100);
}

/// Given a session with tasks (one finished, one with a description), when its summary is
/// encoded and decoded, then its tasks read back as the board lists them (no description, no
/// history), its open tasks are counted without decoding them, and a session without tasks
/// keeps no bytes for them.
#[test]
fn the_summarys_tasks_read_back_as_the_board_lists_them() {
    let s = Scenario::default().given_hooks(&[
        r#"{"session_id":"s1","hook_event_name":"TaskCreated","task_id":"1","task_subject":"Write the parser","task_description":"long text"}"#,
        r#"{"session_id":"s1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"Ship it"}"#,
        r#"{"session_id":"s1","hook_event_name":"TaskCompleted","task_id":"2","task_subject":"Ship it"}"#,
        r#"{"session_id":"s2","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
    ]);
    let sum = SessionSummary::of(&s.state.sessions["s1"]);
    let bytes = bincode::serde::encode_to_vec(&sum, bincode::config::standard()).unwrap();
    let back: SessionSummary = fold::decode(&bytes).expect("a summary decodes");
    assert_eq!(back, sum);
    let tasks = back.tasks.decode();
    let own: Vec<_> = s.state.sessions["s1"].tasks.tasks.values().collect();
    assert_eq!(tasks.len(), 2);
    for (t, o) in tasks.iter().zip(own) {
        assert_eq!((&t.id, &t.subject, t.status), (&o.id, &o.subject, o.status));
        assert_eq!((&t.description, t.history.len()), (&None, 0));
    }
    assert_eq!(back.open_tasks(), 1);
    assert_eq!(
        SessionSummary::of(&s.state.sessions["s2"]).tasks,
        index::TaskLines::default()
    );
}
