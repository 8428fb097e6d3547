//! The cost totals: `cost` reads rows summed per (session, day, model, subagent, band) instead of
//! every response; whatever the readings (repeated, larger, re-read by a fork, across every
//! long-context threshold, unpriced), the rows say what the responses one by one say.

use journal::{Envelope, NewEvent, Seq, ZERO_HASH};
use projections::fold::{Full, State};
use projections::pricing::PricingTable;
use projections::report::{self, CostBy, CostRow, SessionFacts};
use projections::Kind;
use proptest::prelude::*;

/// Models with a long-context tier at each band bound, one without, and one unpriced.
const MODELS: [&str; 5] = [
    "claude-sonnet-4-5-20250929",
    "gemini-2.5-pro",
    "gpt-5.4",
    "claude-opus-4-1",
    "some-unpriced-model",
];

#[derive(Clone, Debug)]
struct Reading {
    session: u8,
    msg: u8,
    model: u8,
    agent: Option<u8>,
    day: u8,
    context: u32,
    output: u32,
}

fn reading() -> impl Strategy<Value = Reading> {
    (
        0u8..4,
        0u8..12,
        0u8..5,
        proptest::option::of(0u8..2),
        1u8..4,
        prop_oneof![
            1u32..300_000,
            Just(100_000u32),
            Just(100_001),
            Just(200_000),
            Just(200_001),
            Just(272_000),
            Just(272_001)
        ],
        0u32..20_000,
    )
        .prop_map(
            |(session, msg, model, agent, day, context, output)| Reading {
                session,
                msg,
                model,
                agent,
                day,
                context,
                output,
            },
        )
}

fn events(readings: &[Reading]) -> Vec<Envelope> {
    let mut out: Vec<Envelope> = Vec::new();
    for (i, r) in readings.iter().enumerate() {
        let seq = out.len() as Seq + 1;
        let prev = out.last().map(|e| e.hash).unwrap_or(ZERO_HASH);
        let input = r.context / 2;
        let cw = r.context / 8;
        let cr = r.context - input - cw;
        let body = format!(
            r#"{{"path":"/t/s{s}.jsonl","offset":{i},"agent_id":{agent},"record":{{"message_id":"m{m}","request_id":"r{m}","model":"{model}","timestamp":"2026-11-0{d}T10:00:00Z","usage":{{"input_tokens":{input},"output_tokens":{o},"cache_write_5m":{cw},"cache_write_1h":0,"cache_read":{cr}}},"sidechain":false}}}}"#,
            s = r.session,
            agent = r
                .agent
                .map(|a| format!("\"a{a}\""))
                .unwrap_or_else(|| "null".into()),
            m = r.msg,
            model = MODELS[usize::from(r.model)],
            d = r.day,
            o = r.output,
        );
        let ev = NewEvent {
            recorded_at_us: 1_000 * i as i64,
            host: "claude".into(),
            kind: Kind::UsageObserved { cause: 0 }.into(),
            session_id: Some(format!("s{}", r.session)),
            agent_id: None,
            payload: body.into_bytes(),
            truncated: None,
            spooled: false,
        };
        out.push(Envelope::seal(ev, seq, prev));
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn same_row(a: &CostRow, b: &CostRow) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.key, &b.key);
    prop_assert!(close(a.usd, b.usd), "{}: {} vs {}", a.key, a.usd, b.usd);
    prop_assert_eq!(
        (
            a.responses,
            a.unpriced_responses,
            a.input_tokens,
            a.output_tokens,
            a.cache_write_tokens,
            a.cache_read_tokens,
            a.total_tokens,
            &a.models
        ),
        (
            b.responses,
            b.unpriced_responses,
            b.input_tokens,
            b.output_tokens,
            b.cache_write_tokens,
            b.cache_read_tokens,
            b.total_tokens,
            &b.models
        )
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Given any readings, when they are folded, then the totals' rows give the same cost rows
    /// and reconciliation as the responses priced one by one, for every grouping and range.
    #[test]
    fn totals_price_like_the_responses_one_by_one(readings in proptest::collection::vec(reading(), 1..80)) {
        let mut full = Full::default();
        for e in events(&readings) {
            full.apply(&e);
        }
        let pricing = PricingTable::default();
        let summary = full.cost();
        let one_by_one = report::cost_items(&summary, &pricing);
        let mut state: State = full.state.clone();
        let totals = state.take_cost_totals();
        let rows = totals.items(&pricing).expect("every embedded threshold is a band bound");
        prop_assert!(rows.len() <= one_by_one.len());
        let none = Default::default();
        for by in [CostBy::Session, CostBy::Day, CostBy::Month, CostBy::Model] {
            for (since, until) in [(None, None), (Some("2026-11-02"), None), (None, Some("2026-11-02"))] {
                let (a, ta) = report::cost_rows(&rows, &none, by, since, until, None);
                let (b, tb) = report::cost_rows(&one_by_one, &none, by, since, until, None);
                prop_assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(&b) {
                    same_row(x, y)?;
                }
                same_row(&ta, &tb)?;
            }
        }
        let facts = |_: &str| SessionFacts::default();
        let (a, ta) = report::reconcile(&rows, &none, &Default::default(), &facts, None, None);
        let (b, tb) = report::reconcile(&one_by_one, &none, &Default::default(), &facts, None, None);
        prop_assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            prop_assert_eq!(&x.session, &y.session);
            prop_assert!(close(x.transcript_usd, y.transcript_usd));
        }
        prop_assert!(close(ta.transcript_usd, tb.transcript_usd));
    }
}

/// Given a response read at 150k tokens and then again larger, past 200k, by a fork, when the
/// totals are read, then it counts once, owned by the session that read it first, in the
/// long-context band: the fork's shard holds the move (minus the first reading, plus the
/// second), and the merged row is the larger reading alone.
#[test]
fn a_larger_reading_by_a_fork_moves_the_response_to_its_band_once() {
    let first = Reading {
        session: 0,
        msg: 1,
        model: 0,
        agent: None,
        day: 1,
        context: 150_000,
        output: 10,
    };
    let fork = Reading {
        session: 3,
        context: 250_000,
        output: 20,
        ..first.clone()
    };
    let mut full = Full::default();
    for e in events(&[first, fork]) {
        full.apply(&e);
    }
    let mut st = full.state.clone();
    let totals = st.take_cost_totals();
    let rows: Vec<_> = totals.rows.iter().collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (k, v) = rows[0];
    assert_eq!((k.session.as_str(), k.band, v.responses), ("s0", 2, 1));
    assert_eq!(v.usage().context_tokens(), 250_000);
    assert_eq!(v.output_tokens, 20);
    let pricing = PricingTable::default();
    let items = totals.items(&pricing).unwrap();
    let summary = full.cost();
    let one = report::cost_items(&summary, &pricing);
    assert!(close(items[0].usd.unwrap(), one[0].usd.unwrap()));
}
