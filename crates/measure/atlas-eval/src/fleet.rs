//! The fleet condition of `atlas eval agent`: an app's tasks run one after another on one graph
//! that knows only what the agents before reported (their screens, steps and finished runs, from
//! the same dumps the next agent sees), measured on the first half of the tasks and on the second:
//! what the graph learns from a fleet shows as the second half's gain.

use serde::Serialize;

use crate::task_run::{FLEET_FIRST_HALF, FLEET_SECOND_HALF, TaskRun};

/// One half of one app's tasks (or of every app's, `app` `all`).
#[derive(Debug, Clone, Serialize)]
pub struct FleetHalf {
    /// The app, or `all`.
    pub app: String,
    /// `first` or `second`.
    pub half: String,
    /// Tasks run.
    pub tasks: usize,
    /// Tasks finished on their recorded final screen.
    pub succeeded: usize,
    /// Model calls.
    pub model_calls: usize,
    /// `model_only`'s calls on the same tasks.
    pub model_only_calls: usize,
    /// Steps the graph took without the model, and of those the wrong ones.
    pub fast_path_steps: usize,
    /// See `fast_path_steps`.
    pub wrong_fast_path_steps: usize,
    /// The ground-truth steps the runs stood on.
    pub steps: usize,
    /// The share of them the graph offered an action on (at any confidence).
    pub offered: f64,
    /// The share of those offers that were the ground truth's.
    pub precision: f64,
}

/// Each app's halves, then every app's together.
pub fn halves(runs: &[TaskRun]) -> Vec<FleetHalf> {
    let mut apps: Vec<&str> = runs
        .iter()
        .filter(|r| is_fleet(r))
        .map(|r| r.app.as_str())
        .collect();
    apps.dedup();
    let mut out = Vec::new();
    for app in apps.iter().copied().map(Some).chain([None]) {
        for (half, condition) in [("first", FLEET_FIRST_HALF), ("second", FLEET_SECOND_HALF)] {
            let of = |r: &&TaskRun| app.is_none_or(|a| r.app == a);
            let fleet: Vec<&TaskRun> = runs
                .iter()
                .filter(of)
                .filter(|r| r.condition == condition)
                .collect();
            let model_only_calls = runs
                .iter()
                .filter(of)
                .filter(|r| r.condition == "model_only")
                .filter(|r| fleet.iter().any(|f| f.task == r.task && f.app == r.app))
                .map(|r| r.model_calls)
                .sum();
            let offers: Vec<_> = fleet.iter().flat_map(|r| &r.offers).collect();
            let offered: Vec<_> = offers.iter().filter(|o| o.confidence.is_some()).collect();
            let right = offered.iter().filter(|o| o.right).count();
            out.push(FleetHalf {
                app: app.unwrap_or("all").to_string(),
                half: half.to_string(),
                tasks: fleet.len(),
                succeeded: fleet.iter().filter(|r| r.succeeded).count(),
                model_calls: fleet.iter().map(|r| r.model_calls).sum(),
                model_only_calls,
                fast_path_steps: fleet.iter().map(|r| r.fast_path_steps).sum(),
                wrong_fast_path_steps: fleet.iter().map(|r| r.wrong_fast_path_steps).sum(),
                steps: offers.len(),
                offered: offered.len() as f64 / offers.len().max(1) as f64,
                precision: right as f64 / offered.len().max(1) as f64,
            });
        }
    }
    out
}

fn is_fleet(run: &TaskRun) -> bool {
    run.condition == FLEET_FIRST_HALF || run.condition == FLEET_SECOND_HALF
}
