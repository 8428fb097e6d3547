//! What the host itself reported (Claude Code's statusline figures), folded per session.
//!
//! Claude Code's cost counter drops back at compaction (and when a resumed session starts a new
//! process): every drop opens a new *epoch*, and the host's total is the sum of the epochs' maxima.

use crate::derived::HostReported;
use journal::Seq;
use serde::{Deserialize, Serialize};

/// A session's host-reported figures over every reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFigures {
    /// Readings folded.
    pub readings: u64,
    /// The last cost reading.
    pub last_cost: Option<f64>,
    /// The largest cost of the current epoch.
    pub epoch_max: f64,
    /// Sum of the maxima of the epochs before the current one.
    pub closed_cost: f64,
    /// Epochs seen (1 once there is a cost reading).
    pub epochs: u32,
    /// Tokens in the context window, as last reported.
    pub context_tokens: Option<u64>,
    /// The window's size, as last reported.
    pub context_window: Option<u64>,
    /// Percent of the window used, as last reported.
    pub used_percentage: Option<f64>,
    /// The model, as last reported.
    pub model: Option<String>,
    /// The session's duration, as last reported.
    pub duration_ms: Option<f64>,
    /// The latest reading's event.
    pub seq: Seq,
    /// The latest reading's time (µs).
    pub at_us: i64,
}

impl HostFigures {
    /// Folds one reading: a cost below the last one opens a new epoch.
    pub fn apply(&mut self, seq: Seq, at_us: i64, r: &HostReported) {
        self.readings += 1;
        self.seq = seq;
        self.at_us = at_us;
        if let Some(c) = r.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            match self.last_cost {
                // A drop (beyond rounding) is the host starting its counter again.
                Some(last) if c + 1e-9 < last => {
                    self.closed_cost += self.epoch_max;
                    self.epoch_max = c;
                    self.epochs += 1;
                }
                Some(_) => self.epoch_max = self.epoch_max.max(c),
                None => {
                    self.epoch_max = c;
                    self.epochs = 1;
                }
            }
            self.last_cost = Some(c);
        }
        if r.context_tokens.is_some() {
            self.context_tokens = r.context_tokens;
        }
        if r.context_window.is_some() {
            self.context_window = r.context_window;
        }
        if r.used_percentage.is_some() {
            self.used_percentage = r.used_percentage;
        }
        if r.model.is_some() {
            self.model = r.model.clone();
        }
        if r.duration_ms.is_some() {
            self.duration_ms = r.duration_ms;
        }
    }

    /// The host's cost over every epoch; `None` when it never reported one.
    pub fn total_cost(&self) -> Option<f64> {
        (self.epochs > 0).then_some(self.closed_cost + self.epoch_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(c: f64) -> HostReported {
        HostReported {
            source: "statusline".into(),
            cost_usd: Some(c),
            ..HostReported::default()
        }
    }

    #[test]
    fn a_drop_opens_an_epoch_and_totals_sum_the_maxima() {
        let mut h = HostFigures::default();
        assert_eq!(h.total_cost(), None);
        for (i, c) in [0.1, 0.4, 0.9, 0.02, 0.3].iter().enumerate() {
            h.apply(i as u64 + 1, 0, &cost(*c));
        }
        assert_eq!(h.epochs, 2);
        assert!((h.total_cost().unwrap() - 1.2).abs() < 1e-9);
        // The same reading again changes nothing.
        h.apply(9, 0, &cost(0.3));
        assert!((h.total_cost().unwrap() - 1.2).abs() < 1e-9);
    }

    #[test]
    fn readings_without_cost_keep_the_context() {
        let mut h = HostFigures::default();
        h.apply(
            1,
            0,
            &HostReported {
                context_tokens: Some(5),
                used_percentage: Some(2.5),
                ..HostReported::default()
            },
        );
        assert_eq!(h.total_cost(), None);
        assert_eq!(h.context_tokens, Some(5));
        assert_eq!(h.used_percentage, Some(2.5));
    }
}
