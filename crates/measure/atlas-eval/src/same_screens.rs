//! The graph's answers on the same screens, two ways: as the agent got them (`eval agent`'s
//! `graph_new_task`: its own history, the action resolved on the live screen) and as
//! `eval droidtask` asks them (each ground-truth step on its recorded screen, after the recorded
//! steps). Where the two part, what the ranker knows does not reach the agent.

use serde::Serialize;

use crate::droidtask::{Answer, TaskResult};
use crate::loao::CurvePoint;
use crate::task_run::TaskRun;

/// Both sides on the ground-truth steps the agent's new-task runs stood on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SameScreens {
    /// The steps compared.
    pub steps: usize,
    /// Of those, the share where `eval droidtask`'s first guess (sure or not) is right.
    pub droidtask_first_guess_right: f64,
    /// Of those, the share where its first guess is a right finish (which the agent takes only
    /// where a remembered session finished).
    pub droidtask_right_finish: f64,
    /// The agent's offers by confidence: the share of the steps offered an action at or above
    /// each threshold, and the precision of those.
    pub agent: Vec<CurvePoint>,
    /// `eval droidtask`'s first guesses by confidence on the same steps.
    pub droidtask: Vec<CurvePoint>,
}

/// Pairs each new-task run's offers with `eval droidtask`'s answer on the same step of the same
/// task.
pub fn compare(runs: &[TaskRun], droidtask: &[TaskResult]) -> SameScreens {
    let mut agent = Vec::new();
    let mut asked = Vec::new();
    let (mut steps, mut right, mut finish) = (0, 0, 0);
    for run in runs.iter().filter(|r| r.condition == "graph_new_task") {
        let Some(task) = droidtask
            .iter()
            .find(|t| t.app == run.app && t.task == run.task)
        else {
            continue;
        };
        for offer in &run.offers {
            let Some(step) = task.steps.iter().find(|s| s.step == offer.step) else {
                continue;
            };
            steps += 1;
            let (guess, guess_right) = match &step.answer {
                Answer::Unsure => (step.guess.as_ref(), step.guess_correct.unwrap_or(false)),
                answer => (Some(answer), step.correct),
            };
            right += usize::from(guess_right);
            finish += usize::from(guess_right && guess == Some(&Answer::Finish));
            if let Some(c) = offer.confidence {
                agent.push((c, offer.right));
            }
            if guess.is_some() {
                asked.push((step.confidence.unwrap_or(0.0), guess_right));
            }
        }
    }
    let share = |n: usize| n as f64 / steps.max(1) as f64;
    SameScreens {
        steps,
        droidtask_first_guess_right: share(right),
        droidtask_right_finish: share(finish),
        agent: crate::loao::curve(&agent, steps),
        droidtask: crate::loao::curve(&asked, steps),
    }
}
