//! Leave-one-app-out: the grounding model fitted, calibrated and thresholded on the other apps
//! only, then asked about the held-out app's steps — the figures to expect on an app nobody has
//! fitted anything to.
//!
//! The candidates and their features come from the service's own explained answers (the
//! evaluation asks with `explain`), and the choice is [`atlas_rank::Model::decide`], the function
//! the service answers with, so the only thing that differs from the server's in-sample answers
//! is what the model was fitted on.

use atlas_import::droidtask::{App, Step};
use atlas_rank::{
    Calibration, FitOptions, Group, Model, Ranker, best_two, threshold_for_precision,
    threshold_holding_in_each_group,
};
use serde::Serialize;

use crate::droidtask::{Answer, AppScores, Report, Scores, StepResult, TaskResult, score};

/// How the models are fitted.
#[derive(Debug, Clone, Copy)]
pub struct Fitting {
    /// The precision when sure the threshold is chosen to keep, on apps held out of the fit.
    pub precision: f64,
    /// How the ranker is fitted.
    pub options: FitOptions,
    /// How the threshold is chosen from the held-out answers.
    pub threshold: ThresholdRule,
}

impl Default for Fitting {
    fn default() -> Self {
        Fitting {
            precision: 0.95,
            options: FitOptions::default(),
            threshold: ThresholdRule::default(),
        }
    }
}

/// How the threshold is chosen from the answers of rankers fitted without each app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThresholdRule {
    /// All apps' answers pooled; the precision expected from their calibrated confidences.
    #[default]
    Pooled,
    /// Each app's answers on their own, counted: the threshold at which every app that answers
    /// at least `min_answers` steps keeps the precision (see
    /// [`atlas_rank::threshold_holding_in_each_group`]).
    ByApp {
        /// Answers below which an app says nothing at a threshold.
        min_answers: usize,
    },
}

/// The held-out figures, and the model fitted on every app (to ship).
#[derive(Debug, Clone, Serialize)]
pub struct LeaveOneAppOut {
    /// Every app together, each answered by the model fitted without it.
    pub total: Scores,
    /// Each app.
    pub apps: Vec<AppScores>,
    /// Each app's steps as answered by the model fitted without it.
    pub tasks: Vec<TaskResult>,
    /// Calibrated confidence and correctness of every labelled answer, held out: the
    /// precision/coverage curve.
    pub curve: Vec<CurvePoint>,
    /// The model fitted on every app.
    #[serde(skip)]
    pub model: Model,
}

/// Answering at or above `threshold` keeps `precision` and answers `coverage` of all steps.
#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    /// The calibrated confidence answered at or above.
    pub threshold: f64,
    /// The share of all steps answered.
    pub coverage: f64,
    /// The share of those answered right.
    pub precision: f64,
}

fn groups<'a>(tasks: impl Iterator<Item = &'a TaskResult>) -> Vec<Group> {
    tasks
        .flat_map(|t| &t.steps)
        .filter(|s| !s.considered.is_empty())
        .map(|s| Group {
            candidates: s.considered.iter().map(|c| c.features.clone()).collect(),
            right: s.considered.iter().position(|c| c.correct),
        })
        .collect()
}

/// (the ranker's best probability, its runner-up's, whether the best is right) for each step.
fn top_scores(ranker: &Ranker, tasks: &[&TaskResult]) -> Vec<(f64, f64, bool)> {
    tasks
        .iter()
        .flat_map(|t| &t.steps)
        .filter(|s| !s.considered.is_empty())
        .map(|s| {
            let xs: Vec<Vec<f64>> = s.considered.iter().map(|c| c.features.clone()).collect();
            let p = ranker.probabilities(&xs);
            let (best, second) = best_two(&p).expect("candidates");
            let second = second.map_or(0.0, |s| p[s]);
            (p[best], second, s.considered[best].correct)
        })
        .collect()
}

/// A model fitted on `train` (tasks of several apps): the ranker on all of them; its calibration
/// and threshold on what rankers fitted without each app said of that app.
pub fn fit_model(train: &[&TaskResult], fitting: Fitting) -> Model {
    let dims = atlas_service::GROUND_FEATURES.len();
    let mut apps: Vec<&str> = train.iter().map(|t| t.app.as_str()).collect();
    apps.sort();
    apps.dedup();
    let mut by_app = Vec::new();
    for app in &apps {
        let inner: Vec<&TaskResult> = train.iter().copied().filter(|t| t.app != *app).collect();
        let ranker = Ranker::fit(&groups(inner.iter().copied()), dims, fitting.options);
        let held: Vec<&TaskResult> = train.iter().copied().filter(|t| t.app == *app).collect();
        by_app.push(top_scores(&ranker, &held));
    }
    let held_out_scores: Vec<(f64, f64, bool)> = by_app.iter().flatten().copied().collect();
    let calibration = Calibration::fit(&held_out_scores);
    let calibrated = |scores: &[(f64, f64, bool)]| -> Vec<(f64, bool)> {
        scores
            .iter()
            .map(|(best, second, right)| (calibration.apply(*best, *second), *right))
            .collect()
    };
    let threshold = match fitting.threshold {
        ThresholdRule::Pooled => {
            let pooled: Vec<f64> = calibrated(&held_out_scores)
                .into_iter()
                .map(|(c, _)| c)
                .collect();
            threshold_for_precision(&pooled, fitting.precision)
        }
        ThresholdRule::ByApp { min_answers } => {
            let groups: Vec<Vec<(f64, bool)>> = by_app.iter().map(|s| calibrated(s)).collect();
            threshold_holding_in_each_group(&groups, fitting.precision, min_answers)
        }
    }
    .unwrap_or(2.0);
    Model {
        features: atlas_service::GROUND_FEATURES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ranker: Ranker::fit(&groups(train.iter().copied()), dims, fitting.options),
        calibration,
        threshold,
        note: format!(
            "fitted on {} ({} steps); calibration and threshold (precision {}) from leave-one-app-out predictions",
            apps.join(", "),
            train.iter().map(|t| t.steps.len()).sum::<usize>(),
            fitting.precision
        ),
    }
}

/// `step` answered by `model` (answers not read from labels stay as the server gave them), and
/// the model's calibrated confidence in its best candidate with whether that one is right.
fn answered_by(model: &Model, step: &StepResult) -> (StepResult, Option<(f64, bool)>) {
    let mut out = step.clone();
    out.considered = Vec::new();
    let xs: Vec<Vec<f64>> = step.considered.iter().map(|c| c.features.clone()).collect();
    let Some(decision) = model.decide(&xs) else {
        return (out, None);
    };
    let best = &step.considered[decision.best];
    out.confidence = Some(decision.confidence);
    let p = model.ranker.probabilities(&xs);
    out.right_rank = step
        .considered
        .iter()
        .position(|c| c.correct)
        .map(|r| p.iter().filter(|q| **q > p[r]).count());
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|a, b| p[*b].total_cmp(&p[*a]));
    out.likeliest = order
        .iter()
        .take(3)
        .map(|&i| {
            (
                step.considered[i].answer.clone(),
                (p[i] * 1000.0).round() / 1000.0,
            )
        })
        .collect();
    if decision.sure {
        out.answer = best.answer.clone();
        out.correct = best.correct;
        out.why_unsure = None;
    } else {
        out.answer = Answer::Unsure;
        out.correct = false;
        out.guess = Some(best.answer.clone());
        out.guess_correct = Some(best.correct);
    }
    (out, Some((decision.confidence, best.correct)))
}

/// Runs leave-one-app-out over an in-sample report (one made with explained answers).
pub fn leave_one_app_out(report: &Report, apps: &[App], fitting: Fitting) -> LeaveOneAppOut {
    let mut total = Scores::default();
    let mut per_app = Vec::new();
    let mut tasks = Vec::new();
    let mut held_out = Vec::new();
    for app in apps {
        let train: Vec<&TaskResult> = report.tasks.iter().filter(|t| t.app != app.name).collect();
        let model = fit_model(&train, fitting);
        let results: Vec<TaskResult> = report
            .tasks
            .iter()
            .filter(|t| t.app == app.name)
            .map(|t| {
                let steps: Vec<StepResult> = t
                    .steps
                    .iter()
                    .map(|s| {
                        let (answered, scored) = answered_by(&model, s);
                        held_out.extend(scored);
                        answered
                    })
                    .collect();
                TaskResult {
                    completed: steps.iter().all(|s| s.correct),
                    steps,
                    ..t.clone()
                }
            })
            .collect();
        let steps: Vec<&Step> = app.tasks.iter().flat_map(|t| &t.steps).collect();
        let scores = score(&results, &steps);
        total.merge(&scores);
        per_app.push(AppScores {
            app: app.name.clone(),
            scores,
        });
        tasks.extend(results);
    }
    let all_steps = report.tasks.iter().map(|t| t.steps.len()).sum::<usize>();
    let curve = curve(&held_out, all_steps);
    let everything: Vec<&TaskResult> = report.tasks.iter().collect();
    LeaveOneAppOut {
        total,
        apps: per_app,
        tasks,
        curve,
        model: fit_model(&everything, fitting),
    }
}

/// Precision and coverage at a range of thresholds.
pub(crate) fn curve(scored: &[(f64, bool)], all_steps: usize) -> Vec<CurvePoint> {
    [0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98]
        .iter()
        .map(|&threshold| {
            let above: Vec<&(f64, bool)> = scored.iter().filter(|(c, _)| *c >= threshold).collect();
            let right = above.iter().filter(|(_, r)| *r).count();
            CurvePoint {
                threshold,
                coverage: above.len() as f64 / all_steps.max(1) as f64,
                precision: if above.is_empty() {
                    0.0
                } else {
                    right as f64 / above.len() as f64
                },
            }
        })
        .collect()
}
