//! A transition's success statistics, apart from the transition: what reports add to, what the
//! planner's costs come from, and what a store with several writers adds up.

use serde::{Deserialize, Serialize};

use crate::Transition;

/// A transition's counters, or what one change added to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Successes.
    pub success: u64,
    /// Failures.
    pub fail: u64,
    /// Latency, in milliseconds, summed so the average stays exact.
    pub latency_total_ms: f64,
    /// Latency samples.
    pub latency_samples: u64,
}

impl Counts {
    /// A transition's counters as they stand.
    pub fn of(t: &Transition) -> Counts {
        Counts {
            success: t.success_count,
            fail: t.fail_count,
            latency_total_ms: t.latency_total_ms,
            latency_samples: t.latency_samples,
        }
    }

    /// Adds these counts to a transition's counters.
    pub fn add_to(&self, t: &mut Transition) {
        t.success_count += self.success;
        t.fail_count += self.fail;
        t.latency_total_ms += self.latency_total_ms;
        t.latency_samples += self.latency_samples;
    }

    /// These counts and `more` together.
    pub fn add(&mut self, more: Counts) {
        self.success += more.success;
        self.fail += more.fail;
        self.latency_total_ms += more.latency_total_ms;
        self.latency_samples += more.latency_samples;
    }

    /// What was added to `earlier` counters to make these (none where they did not grow).
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            success: self.success.saturating_sub(earlier.success),
            fail: self.fail.saturating_sub(earlier.fail),
            latency_total_ms: (self.latency_total_ms - earlier.latency_total_ms).max(0.0),
            latency_samples: self.latency_samples.saturating_sub(earlier.latency_samples),
        }
    }

    /// Laplace-smoothed success rate: an edge seen once is not yet certain, and an edge never
    /// reported (a hand-made or imported one) reads as 0.5 plus the evidence for it.
    pub fn smoothed_success_rate(&self) -> f64 {
        (self.success as f64 + 1.0) / ((self.success + self.fail) as f64 + 2.0)
    }

    /// The raw rate seed 000 reports; an edge with no reports counts as working.
    pub fn success_rate(&self) -> f64 {
        let total = self.success + self.fail;
        if total == 0 {
            1.0
        } else {
            self.success as f64 / total as f64
        }
    }

    /// The mean reported latency (0 when none was).
    pub fn avg_latency_ms(&self) -> f64 {
        if self.latency_samples == 0 {
            0.0
        } else {
            self.latency_total_ms / self.latency_samples as f64
        }
    }
}
