//! Billing blocks, given/when/then: responses cut into 5-hour blocks by ccusage's rule (a block
//! starts at its first response's hour; a response over 5 hours after the block's start or after
//! the previous response opens the next; a gap block stands where 5 hours passed unused), the
//! active block, its burn rate and projection, and a token limit beside it.

use projections::blocks::{self, Block, BlockEntry};
use projections::transcript::Usage;

const H: i64 = 3_600_000;
const M: i64 = 60_000;
/// 2026-11-03T00:00:00Z.
const DAY: i64 = 1_793_664_000_000;

fn entry(at_ms: i64, model: &'static str, output: u64) -> BlockEntry<'static> {
    BlockEntry {
        at_ms,
        model,
        usage: Usage {
            input_tokens: 100,
            output_tokens: output,
            cache_write_5m: 0,
            cache_write_1h: 0,
            cache_read: 1_000,
        },
        usd: Some(0.5),
    }
}

fn starts(b: &[Block]) -> Vec<(i64, bool)> {
    b.iter().map(|b| ((b.start_ms - DAY) / M, b.gap)).collect()
}

#[test]
fn a_block_starts_at_the_hour_of_its_first_response_and_lasts_five_hours() {
    // Given responses at 10:37, 11:10 and 14:50 (under 5 h after 10:00), then 15:20 (over 5 h
    // after 10:00, not after 14:50).
    let e = vec![
        entry(DAY + 10 * H + 37 * M, "a", 10),
        entry(DAY + 15 * H + 20 * M, "a", 10),
        entry(DAY + 11 * H + 10 * M, "b", 10),
        entry(DAY + 14 * H + 50 * M, "a", 10),
    ];
    // When they are cut into blocks long after.
    let b = blocks::blocks(e, DAY + 48 * H);
    // Then two blocks, 10:00 and 15:00, with no gap; the first holds three responses and its
    // models in the order first used.
    assert_eq!(starts(&b), [(10 * 60, false), (15 * 60, false)]);
    assert_eq!(b[0].responses, 3);
    assert_eq!(b[0].models, ["a", "b"]);
    assert_eq!(b[0].end_ms, DAY + 15 * H);
    assert_eq!(b[0].last_ms, Some(DAY + 14 * H + 50 * M));
    assert_eq!(b[0].total_tokens(), 3 * 1_110);
    assert!((b[0].usd - 1.5).abs() < 1e-12);
    assert!(b.iter().all(|b| !b.active));
}

#[test]
fn five_hours_unused_is_a_gap_block_between_two() {
    // Given a response at 09:05 and the next at 16:30 (7 h 25 m later).
    let e = vec![
        entry(DAY + 9 * H + 5 * M, "a", 1),
        entry(DAY + 16 * H + 30 * M, "a", 1),
    ];
    // When cut.
    let b = blocks::blocks(e, DAY + 48 * H);
    // Then 09:00, a gap from 14:05 (5 h after the last response) to 16:30, and 16:00.
    assert_eq!(
        starts(&b),
        [(9 * 60, false), (14 * 60 + 5, true), (16 * 60, false)]
    );
    assert_eq!(b[1].end_ms, DAY + 16 * H + 30 * M);
    assert_eq!(b[1].responses, 0);
}

#[test]
fn exactly_five_hours_after_the_start_stays_in_the_block() {
    // Given responses at 10:00 and 15:00 sharp (not over 5 h).
    let e = vec![entry(DAY + 10 * H, "a", 1), entry(DAY + 15 * H, "a", 1)];
    let b = blocks::blocks(e, DAY + 48 * H);
    // Then one block.
    assert_eq!(starts(&b), [(10 * 60, false)]);
}

#[test]
fn the_active_block_has_a_burn_rate_a_projection_and_a_limit_status() {
    // Given responses at 20:10 and 20:40 (30 minutes apart, 2 × 1,110 tokens, $1), seen at 21:00.
    let e = vec![
        entry(DAY + 20 * H + 10 * M, "a", 10),
        entry(DAY + 20 * H + 40 * M, "a", 10),
    ];
    let now = DAY + 21 * H;
    let b = blocks::blocks(e, now);
    // Then the 20:00 block is active until 01:00.
    assert_eq!(b.len(), 1);
    assert!(b[0].active);
    // Its rate: 2,220 tokens over 30 minutes = 74/min; 220 of them no cache; $1 in 30 m = $2/h.
    let rate = b[0].burn_rate().unwrap();
    assert!((rate.tokens_per_minute - 74.0).abs() < 1e-9);
    assert!((rate.tokens_per_minute_for_indicator - 220.0 / 30.0).abs() < 1e-9);
    assert!((rate.usd_per_hour - 2.0).abs() < 1e-9);
    // Its projection: 240 minutes left → 2,220 + 74 × 240 tokens, $1 + $8.
    let p = b[0].projection(now).unwrap();
    assert_eq!(p.remaining_minutes, 240);
    assert_eq!(p.total_tokens, 2_220 + 74 * 240);
    assert!((p.usd - 9.0).abs() < 1e-9);
    // Beside limits: over it, over 80 % of it, well under it.
    let status = |limit| blocks::limit_status(&p, limit).unwrap().status;
    assert_eq!(status(19_000), "exceeds");
    assert_eq!(status(21_000), "warning");
    assert_eq!(status(100_000), "ok");
    assert!(blocks::limit_status(&p, 0).is_none());
}

#[test]
fn a_block_is_no_longer_active_five_hours_after_its_last_response_or_past_its_end() {
    let e = || vec![entry(DAY + 10 * H + 5 * M, "a", 1)];
    // Seen at 14:59 it is active; at 15:00 its end has come.
    assert!(blocks::blocks(e(), DAY + 14 * H + 59 * M)[0].active);
    assert!(!blocks::blocks(e(), DAY + 15 * H)[0].active);
    // A block with a single response has no burn rate, so no projection.
    let b = blocks::blocks(e(), DAY + 11 * H);
    assert!(b[0].burn_rate().is_none());
    assert!(b[0].projection(DAY + 11 * H).is_none());
}

#[test]
fn max_is_the_most_tokens_a_finished_block_used() {
    // Given a finished block of 2 responses, one of 1, and an active one of 3.
    let e = vec![
        entry(DAY + H, "a", 10),
        entry(DAY + H + M, "a", 10),
        entry(DAY + 8 * H, "a", 10),
        entry(DAY + 20 * H, "a", 10),
        entry(DAY + 20 * H + M, "a", 10),
        entry(DAY + 20 * H + 2 * M, "a", 10),
    ];
    let b = blocks::blocks(e, DAY + 21 * H);
    assert!(b.last().unwrap().active);
    // Then max is the first block's: the active one does not count.
    assert_eq!(blocks::max_finished_tokens(&b), 2 * 1_110);
    assert_eq!(blocks::max_finished_tokens(&[]), 0);
}
