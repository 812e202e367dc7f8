//! The conditional logit: P(candidate c of a step) = exp(w·x_c) / Σ exp(w·x_d), fitted by
//! Newton's method with an L2 penalty on standardised features.

use serde::{Deserialize, Serialize};

use crate::Group;

/// How a [`Ranker`] is fitted.
#[derive(Debug, Clone, Copy)]
pub struct FitOptions {
    /// The L2 penalty on standardised weights, per step learned from. It keeps weights of
    /// features that rarely fire from growing without bound on a few hundred steps.
    pub l2: f64,
    /// Newton steps at most.
    pub max_iterations: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            l2: 0.02,
            max_iterations: 50,
        }
    }
}

/// One weight per feature, on the features' own scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranker {
    /// One per feature, in the features' order.
    pub weights: Vec<f64>,
}

impl Ranker {
    /// Each candidate's probability of being the step's right one.
    pub fn probabilities(&self, candidates: &[Vec<f64>]) -> Vec<f64> {
        let scores: Vec<f64> = candidates.iter().map(|x| dot(&self.weights, x)).collect();
        softmax(&scores)
    }

    /// Fits the weights on `groups` (those without a right candidate teach nothing here).
    pub fn fit(groups: &[Group], dims: usize, options: FitOptions) -> Ranker {
        let learnable: Vec<&Group> = groups
            .iter()
            .filter(|g| g.right.is_some() && g.candidates.len() > 1)
            .collect();
        // Standardise each feature over all candidates, so one penalty suits every feature.
        let all = learnable.iter().flat_map(|g| &g.candidates);
        let count = all.clone().count().max(1) as f64;
        let mut mean = vec![0.0; dims];
        for x in all.clone() {
            for (m, v) in mean.iter_mut().zip(x) {
                *m += v / count;
            }
        }
        let mut scale = vec![0.0; dims];
        for x in all {
            for ((s, v), m) in scale.iter_mut().zip(x).zip(&mean) {
                *s += (v - m) * (v - m) / count;
            }
        }
        let scale: Vec<f64> = scale
            .iter()
            .map(|v| if *v > 1e-12 { v.sqrt() } else { 1.0 })
            .collect();
        let standard: Vec<(Vec<Vec<f64>>, usize)> = learnable
            .iter()
            .map(|g| {
                let xs = g
                    .candidates
                    .iter()
                    .map(|x| {
                        x.iter()
                            .zip(&mean)
                            .zip(&scale)
                            .map(|((v, m), s)| (v - m) / s)
                            .collect()
                    })
                    .collect();
                (xs, g.right.expect("filtered"))
            })
            .collect();
        let lambda = options.l2 * standard.len().max(1) as f64;
        let mut w = vec![0.0; dims];
        let mut loss = penalised_loss(&standard, &w, lambda);
        for _ in 0..options.max_iterations {
            let (gradient, hessian) = derivatives(&standard, &w, lambda);
            let Some(step) = solve(hessian, &gradient) else {
                break;
            };
            // Backtracking keeps each Newton step a descent.
            let mut t = 1.0;
            let mut improved = false;
            while t > 1e-4 {
                let trial: Vec<f64> = w.iter().zip(&step).map(|(a, d)| a - t * d).collect();
                let trial_loss = penalised_loss(&standard, &trial, lambda);
                if trial_loss <= loss {
                    let gain = loss - trial_loss;
                    w = trial;
                    loss = trial_loss;
                    improved = gain > 1e-9;
                    break;
                }
                t /= 2.0;
            }
            if !improved {
                break;
            }
        }
        // Back to the features' own scale; the means cancel within a softmax.
        Ranker {
            weights: w.iter().zip(&scale).map(|(w, s)| w / s).collect(),
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn softmax(scores: &[f64]) -> Vec<f64> {
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exp: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
    let total: f64 = exp.iter().sum();
    exp.iter().map(|e| e / total).collect()
}

fn penalised_loss(groups: &[(Vec<Vec<f64>>, usize)], w: &[f64], lambda: f64) -> f64 {
    let data: f64 = groups
        .iter()
        .map(|(xs, right)| {
            let p = softmax(&xs.iter().map(|x| dot(w, x)).collect::<Vec<_>>());
            -(p[*right].max(1e-300)).ln()
        })
        .sum();
    data + 0.5 * lambda * dot(w, w)
}

/// The gradient and Hessian of the penalised negative log-likelihood.
fn derivatives(
    groups: &[(Vec<Vec<f64>>, usize)],
    w: &[f64],
    lambda: f64,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let d = w.len();
    let mut gradient: Vec<f64> = w.iter().map(|x| lambda * x).collect();
    let mut hessian = vec![vec![0.0; d]; d];
    for (i, row) in hessian.iter_mut().enumerate() {
        row[i] = lambda;
    }
    for (xs, right) in groups {
        let p = softmax(&xs.iter().map(|x| dot(w, x)).collect::<Vec<_>>());
        let mut expected = vec![0.0; d];
        for (x, pc) in xs.iter().zip(&p) {
            for (e, v) in expected.iter_mut().zip(x) {
                *e += pc * v;
            }
        }
        for (g, (e, v)) in gradient.iter_mut().zip(expected.iter().zip(&xs[*right])) {
            *g += e - v;
        }
        for (x, pc) in xs.iter().zip(&p) {
            if *pc < 1e-12 {
                continue;
            }
            for a in 0..d {
                let xa = pc * (x[a] - expected[a]);
                if xa == 0.0 {
                    continue;
                }
                for b in 0..d {
                    hessian[a][b] += xa * (x[b] - expected[b]);
                }
            }
        }
    }
    (gradient, hessian)
}

/// Solves `a x = b` for a symmetric positive definite `a` (Cholesky); `None` when it is not.
fn solve(mut a: Vec<Vec<f64>>, b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    for j in 0..n {
        // Subtracted term by term, in order, as the fitted models were computed.
        let diagonal = a[j][..j].iter().fold(a[j][j], |d, x| d - x * x);
        if diagonal <= 0.0 {
            return None;
        }
        let diagonal = diagonal.sqrt();
        a[j][j] = diagonal;
        for i in j + 1..n {
            let v = a[i][..j]
                .iter()
                .zip(&a[j][..j])
                .fold(a[i][j], |v, (x, y)| v - x * y);
            a[i][j] = v / diagonal;
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut v = b[i];
        for k in 0..i {
            v -= a[i][k] * y[k];
        }
        y[i] = v / a[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let mut v = y[i];
        for k in i + 1..n {
            v -= a[k][i] * x[k];
        }
        x[i] = v / a[i][i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps whose right candidate is the one with the larger first feature, the second feature
    /// being noise: the fitted weight of the first must dominate and rank unseen steps right.
    #[test]
    fn it_learns_which_feature_tells_the_right_candidate() {
        let mut seed = 7u64;
        let mut noise = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let groups: Vec<Group> = (0..200)
            .map(|_| {
                let candidates: Vec<Vec<f64>> =
                    (0..4).map(|_| vec![noise(), noise() * 3.0]).collect();
                let right = (0..4)
                    .max_by(|a, b| candidates[*a][0].total_cmp(&candidates[*b][0]))
                    .unwrap();
                Group {
                    candidates,
                    right: Some(right),
                }
            })
            .collect();
        let ranker = Ranker::fit(&groups, 2, FitOptions::default());
        assert!(
            ranker.weights[0] > 5.0 * ranker.weights[1].abs(),
            "{:?}",
            ranker.weights
        );
        let p = ranker.probabilities(&[vec![0.9, 0.0], vec![0.1, 3.0]]);
        assert!(p[0] > 0.8, "{p:?}");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn cholesky_solves_a_small_system() {
        let x = solve(vec![vec![4.0, 2.0], vec![2.0, 3.0]], &[2.0, 1.0]).unwrap();
        assert!((x[0] - 0.5).abs() < 1e-12 && x[1].abs() < 1e-12, "{x:?}");
        assert!(solve(vec![vec![0.0]], &[1.0]).is_none());
    }
}
