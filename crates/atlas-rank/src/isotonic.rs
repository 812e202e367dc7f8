//! Isotonic regression (pool adjacent violators): the most faithful monotone map from a score to
//! the share of right answers at that score, with no shape assumed.

use serde::{Deserialize, Serialize};

/// A non-decreasing step function through the pooled blocks' mean scores, linear between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Isotonic {
    /// Block mean scores, increasing.
    pub x: Vec<f64>,
    /// The share right in each block, non-decreasing.
    pub y: Vec<f64>,
}

impl Isotonic {
    /// Fits the map on (score, right) pairs. Blocks keep at least `min_block` pairs, so a single
    /// lucky answer does not claim certainty for its score.
    pub fn fit(pairs: &[(f64, bool)], min_block: usize) -> Isotonic {
        let mut sorted: Vec<(f64, bool)> = pairs.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        // (sum of scores, sum right, count)
        let mut blocks: Vec<(f64, f64, f64)> = Vec::new();
        for (score, right) in sorted {
            blocks.push((score, right as u8 as f64, 1.0));
            loop {
                let n = blocks.len();
                if n < 2 {
                    break;
                }
                let (a, b) = (blocks[n - 2], blocks[n - 1]);
                let violates = a.1 / a.2 >= b.1 / b.2;
                let small = a.2 < min_block as f64;
                if violates || small {
                    blocks.pop();
                    blocks[n - 2] = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
                } else {
                    break;
                }
            }
        }
        // A last block below the minimum joins the one before it.
        while blocks.len() >= 2 && blocks.last().is_some_and(|b| b.2 < min_block as f64) {
            let b = blocks.pop().expect("two blocks");
            let a = blocks.last_mut().expect("one block");
            *a = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
        }
        Isotonic {
            x: blocks.iter().map(|b| b.0 / b.2).collect(),
            y: blocks.iter().map(|b| b.1 / b.2).collect(),
        }
    }

    /// The calibrated value of `score`.
    pub fn apply(&self, score: f64) -> f64 {
        let n = self.x.len();
        if n == 0 {
            return score;
        }
        if score <= self.x[0] {
            return self.y[0];
        }
        if score >= self.x[n - 1] {
            return self.y[n - 1];
        }
        let i = self.x.partition_point(|x| *x <= score);
        let (x0, x1, y0, y1) = (self.x[i - 1], self.x[i], self.y[i - 1], self.y[i]);
        y0 + (y1 - y0) * (score - x0) / (x1 - x0).max(f64::EPSILON)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_is_monotone_and_matches_the_share_right() {
        let pairs: Vec<(f64, bool)> = (0..100)
            .map(|i| (i as f64 / 100.0, i % 10 < i / 10))
            .collect();
        let iso = Isotonic::fit(&pairs, 5);
        assert!(iso.y.windows(2).all(|w| w[0] <= w[1]), "{iso:?}");
        assert!(iso.apply(0.0) < 0.2 && iso.apply(0.99) > 0.8, "{iso:?}");
        // Pairs that contradict the order are pooled into one block of their mean.
        let flat = Isotonic::fit(&[(0.1, true), (0.9, false)], 1);
        assert_eq!(flat.y, vec![0.5]);
    }
}
