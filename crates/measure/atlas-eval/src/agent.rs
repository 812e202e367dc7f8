//! `atlas eval agent`: the phone agent on DroidTask's demonstrated tasks, each run on the
//! simulated phone replaying the app's recording, with a scripted *ideal* model that answers
//! each step from the ground truth in the AutoGLM grammar (a tap at the ground-truth widget's
//! centre, a tap on the field then its text for an input, Back, finish at the end; some
//! answers wrapped in prose or tags, as real models write them).
//!
//! The conditions measure what the graph saves as a fleet meets an app: `model_only` (no graph);
//! then, on one graph taught the app's exploration, half of the app's tasks run in order, each new
//! to it (`graph_new_app`: the app has no record of trust yet), then again (`graph_repeat`, and
//! [`REPEAT_PASSES`]` - 1` more times, `graph_repeat_later`); then the other half's tasks, new to
//! the graph on an app it has a record of (`graph_new_task`), and their reruns. Twice, the
//! halves swapped, so every task is measured in each condition. A task succeeds when the run
//! finishes on the task's recorded final screen. A step the graph took on the fast path that is
//! not the ground truth's is counted as wrong: the app's record of trust exists to keep that
//! number under 5% of the steps, on every app.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use atlas_action::Action;
use atlas_device::{Point, Watched};
use atlas_device_sim::app::{Trigger, View};
use atlas_device_sim::update::Update;
use atlas_device_sim::{Phone, RecordedApp};
use atlas_llm::{Completion, Model, ModelError};
use atlas_progress::Progress;
use serde::Serialize;
use serde_json::Value;

use atlas_agent::ToolCaller;
use atlas_agent::graph::GraphLink;
use atlas_agent::phone::{AgentConfig, Chooser, Ending, PhoneAgent, RunReport, Unattended};
use atlas_guard::Guard;

use crate::mistakes::{Mistake, Mistakes, Then, wrong_action};
use crate::task_run::{
    AFTER_UPDATE, AFTER_UPDATE_REPEAT, FLEET_FIRST_HALF, FLEET_SECOND_HALF, GraphAnswer,
    MODEL_ONLY, MODEL_ONLY_UPDATED, NEW_APP, NEW_TASK, Offer, REPEAT, REPEAT_LATER, REPEAT_PASSES,
    TaskRun,
};
use crate::truth::{GroundTruth, IdealProgress, Truth, read_ground_truth, step_at, truth_on};

/// The model that knows the answer: it sees the phone's screen (as a vision model would) and
/// answers the ground truth's action for it.
struct IdealModel {
    phone: Arc<Mutex<Phone>>,
    task: GroundTruth,
    /// The update the phone's app had, if any.
    update: Option<Arc<Update>>,
    /// Its progress through the task (shared with the ideal planner, which plans from it).
    state: Arc<Mutex<IdealProgress>>,
    /// The mistakes it makes, if it makes any.
    mistakes: Option<Mistakes>,
}

/// Who plans over the graph's map on a screen the graph is not sure of.
#[derive(Debug, Clone, Default)]
pub enum Planning {
    /// Nobody: the agent asks its model.
    #[default]
    Off,
    /// The ideal planner ([`crate::planner`]): it chooses only among the routes listed, the
    /// one the recording walks next.
    Ideal,
    /// A model (an OpenAI-compatible endpoint).
    Model(atlas_llm::ModelConfig),
}

/// The screen a model is shown: the recorded state, its size, and its views.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// The recorded state's id.
    pub id: &'a str,
    /// Its width and height in pixels.
    pub size: (u32, u32),
    /// Its views (what a mistake taps instead).
    pub views: &'a [View],
}

/// The ideal model's reply on `screen` for `task` ([`ideal_action`]), written as real models
/// write answers — bare, in tags, or in prose, by turns, so the agent's reading of each is tested.
pub fn ideal_reply(
    task: &GroundTruth,
    screen: Shown<'_>,
    progress: &mut IdealProgress,
    update: Option<&Update>,
    mistakes: Option<&Mistakes>,
) -> String {
    let calls = progress.calls;
    let written = ideal_action(task, screen, progress, update, mistakes).to_grammar();
    match calls % 3 {
        0 => format!(
            "<think>The screen matches the task's next step.</think><answer>{written}</answer>"
        ),
        1 => written,
        _ => format!("I will do this next: {written}\nThat should move the task along."),
    }
}

/// The ideal model's action on `screen` for `task`: the ground truth's action there in the
/// AutoGLM grammar (a tap at the widget's centre, a tap on the field then its text for an input,
/// Back, finish at the end; Back on a screen off the task). With `mistakes`, on the share of
/// steps they decide, a plausible wrong action instead ([`crate::mistakes`]), each step at most
/// once a run, and a switch flipped by mistake flipped back next.
pub fn ideal_action(
    task: &GroundTruth,
    screen: Shown<'_>,
    progress: &mut IdealProgress,
    update: Option<&Update>,
    mistakes: Option<&Mistakes>,
) -> Action {
    let IdealProgress {
        from,
        tapped,
        calls,
        erred,
        then,
    } = *progress;
    let (w, h) = screen.size;
    let centre = |b: &[[i64; 2]; 2]| {
        let x = ((b[0][0] + b[1][0]) / 2).max(0) as u32;
        let y = ((b[0][1] + b[1][1]) / 2).max(0) as u32;
        Point { x, y }.relative(w, h)
    };
    let (here, truth) = truth_on(task, screen.id, from, update, mistakes.is_some());
    let right_tap = match &truth {
        Some(Truth::Tap(b) | Truth::Type(b, _)) => Some(*b),
        _ => None,
    };
    progress.calls = calls + 1;
    progress.then = None;
    if let Some(action) = after_mistake(then, here, right_tap, screen, progress) {
        return action;
    }
    let typing = matches!(truth, Some(Truth::Type(..))) && tapped == here;
    let mistake = match (mistakes, here, right_tap) {
        (Some(m), Some(i), Some(b)) if erred & (1 << i.min(63)) == 0 => m
            .decide(&task.name, screen.id, i)
            .and_then(|kind| match (kind, typing) {
                // A typo needs the typing; on a step that types nothing it is a wrong tap.
                (Mistake::Retype, true) => Some(kind),
                (Mistake::Retype, false) if matches!(truth, Some(Truth::Tap(_))) => {
                    Some(Mistake::NearWidget)
                }
                (_, true) | (Mistake::Retype, false) => None,
                (kind, false) => Some(kind),
            })
            .map(|kind| (i, kind, b)),
        _ => None,
    };
    if let Some((i, kind, b)) = mistake {
        progress.erred = erred | (1 << i.min(63));
        match kind {
            Mistake::Retype => {
                if let Some(Truth::Type(_, text)) = &truth {
                    progress.then = Some(Then::Retype(i));
                    return Action::Type {
                        text: crate::mistakes::typo(text),
                    };
                }
            }
            Mistake::RepeatedTap => {
                // The right tap now (the normal course below), the same point again next.
                progress.then = Some(Then::Repeat(centre(&b)));
            }
            kind => {
                let (action, flipped) = wrong_action(kind, screen.views, &b, screen.size);
                // After a needless Back the task stands a step earlier: a screen the task
                // shows twice (a dialog opened from it, then left) is the earlier step's until
                // the step is done.
                progress.from = if kind == Mistake::NeedlessBack {
                    i.saturating_sub(1)
                } else {
                    i
                };
                progress.then = match kind {
                    Mistake::Detour(n) => Some(Then::Detour(n.saturating_sub(1))),
                    Mistake::WrongChoiceKept => Some(Then::Finish),
                    _ => flipped.then_some(Then::Unflip(i)),
                };
                return action;
            }
        }
    }
    let (action, at) = match (here, truth) {
        // A screen the update put in the way: the way on, as a person reads it.
        (None, Some(Truth::Tap(b))) => (
            Action::Tap {
                element: centre(&b),
                message: None,
            },
            from,
        ),
        (None, _) => (Action::Back, from),
        (Some(i), truth) => match truth.as_ref().unwrap_or(&task.steps[i].1) {
            Truth::Finish => (
                Action::Finish {
                    message: "done".into(),
                },
                i,
            ),
            Truth::Back => (Action::Back, i + 1),
            Truth::Tap(b) => (
                Action::Tap {
                    element: centre(b),
                    message: None,
                },
                i + 1,
            ),
            Truth::Type(b, _) if tapped != Some(i) => (
                Action::Tap {
                    element: centre(b),
                    message: None,
                },
                i,
            ),
            Truth::Type(_, text) => (Action::Type { text: text.clone() }, i + 1),
        },
    };
    let next_tapped = match (&action, here) {
        (Action::Tap { .. }, Some(i)) if matches!(task.steps[i].1, Truth::Type(..)) => Some(i),
        _ => tapped,
    };
    progress.from = at;
    progress.tapped = next_tapped;
    action
}

/// What the model does because of the mistake it made on the step before (`then`), if that
/// decides this step: a switch flipped by mistake on this step's screen flipped back, a detour
/// gone on with off the task, a tap repeated, a finish where a wrong choice led. `None`: the
/// model goes on as it would have.
fn after_mistake(
    then: Option<Then>,
    here: Option<usize>,
    right_tap: Option<[[i64; 2]; 2]>,
    screen: Shown<'_>,
    progress: &mut IdealProgress,
) -> Option<Action> {
    match then? {
        Then::Unflip(i) if here == Some(i) => {
            right_tap.map(|b| wrong_action(Mistake::Toggle, screen.views, &b, screen.size).0)
        }
        Then::Detour(left) if here.is_none() && left > 0 => {
            // Deeper: the widget nearest the middle of a screen off the task.
            let (w, h) = (i64::from(screen.size.0), i64::from(screen.size.1));
            let middle = [[w / 2, h / 2], [w / 2 + 1, h / 2 + 1]];
            progress.then = Some(Then::Detour(left - 1));
            Some(wrong_action(Mistake::NearWidget, screen.views, &middle, screen.size).0)
        }
        Then::Repeat(element) => Some(Action::Tap {
            element,
            message: None,
        }),
        Then::Finish => Some(Action::Finish {
            message: "done".into(),
        }),
        _ => None,
    }
}

impl Model for IdealModel {
    fn name(&self) -> String {
        "ideal (ground truth)".into()
    }

    fn complete(
        &self,
        _: &Value,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, ModelError> {
        let phone = self.phone.lock().unwrap_or_else(|e| e.into_inner());
        let screen = Shown {
            id: phone.current(),
            size: phone.screen_size(),
            views: phone.views(),
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let content = ideal_reply(
            &self.task,
            screen,
            &mut state,
            self.update.as_deref(),
            self.mistakes.as_ref(),
        );
        drop(phone);
        on_delta(&content);
        Ok(Completion {
            content,
            attempts: 1,
            ..Completion::default()
        })
    }
}

/// Runs `task` on a fresh phone of `app`; with the graph when `graph` is given (and then with
/// `planning`'s planner); the model errs as `mistakes` say.
pub fn run_task(
    (app, update): (&RecordedApp, Option<&Arc<Update>>),
    app_name: &str,
    task: &GroundTruth,
    condition: &str,
    graph: Option<GraphLink<'_>>,
    (planning, mistakes): (&Planning, Option<Mistakes>),
) -> anyhow::Result<TaskRun> {
    let start = task
        .steps
        .first()
        .and_then(|(s, _)| s.first())
        .ok_or_else(|| anyhow::anyhow!("a task without screens"))?;
    let phone = Arc::new(Mutex::new(Phone::new(app.clone(), Some(start))?));
    let device = atlas_device_sim::device::in_process(phone.clone(), &format!("sim-{app_name}"));
    // The recorded screen at the start of each step (when the agent takes its screenshot), so
    // each step of a report can be checked against the ground truth.
    let screens: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let progress = Arc::new(Mutex::new(IdealProgress::default()));
    let observed = Watched {
        inner: &device,
        on_screenshot: Box::new(|_| {
            let screen = phone
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .current()
                .to_string();
            // The model follows the run as a model reads its conversation: the steps the graph
            // took without it (its context says so) move it along the task too, so a screen the
            // task shows twice (its first and its last) is where the task is now.
            let mut at = progress.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = step_at(task, &screen, at.from) {
                at.from = i;
            }
            drop(at);
            screens
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(screen);
        }),
        skip_waits: true,
    };
    let planner = match graph {
        Some(_) => planner_of(planning, &phone, app, task, &progress),
        None => None,
    };
    let config = AgentConfig {
        model: Box::new(IdealModel {
            phone: phone.clone(),
            task: task.clone(),
            update: update.cloned(),
            state: progress.clone(),
            mistakes,
        }),
        planner,
        max_steps: task.steps.len() * 3 + 5,
        lang: "en".into(),
        knowledge: None,
        stop: Arc::new(AtomicBool::new(false)),
    };
    let person = Unattended { yes: true };
    let mut agent = PhoneAgent::new(
        &observed,
        &config,
        &person,
        Guard::new(Vec::new(), &task.instruction),
    );
    let fast_path = graph.as_ref().map(|g| g.fast_path);
    if let Some(graph) = graph {
        agent = agent.with_graph(graph);
    }
    let report = agent.run(&task.instruction);
    let last_screen = phone
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .current()
        .to_string();
    let final_states = &task.steps.last().expect("steps").0;
    let succeeded = report.ending == Ending::Finished && final_states.contains(&last_screen);
    drop(observed);
    let screens = screens.into_inner().unwrap_or_default();
    let (w, h) = phone
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .screen_size();
    let mut run = judge_run(
        (task, app),
        &report,
        &screens,
        (update.map(|u| u.as_ref()), (w, h), mistakes.is_some()),
        fast_path,
    );
    run.app = app_name.to_string();
    run.condition = condition.to_string();
    run.succeeded = succeeded;
    run.session = report.session.clone();
    Ok(run)
}

/// A run's steps judged against the ground truth (the views where `update` moved them, the
/// truth rewound after a needless Back when the model errs), with what the graph offered and
/// answered; its app, condition and success are the caller's to fill in.
fn judge_run(
    (task, app): (&GroundTruth, &RecordedApp),
    report: &RunReport,
    screens: &[String],
    (update, (w, h), rewind): (Option<&Update>, (u32, u32), bool),
    fast_path: Option<f64>,
) -> TaskRun {
    let (indices, owned): (Vec<Option<usize>>, Vec<Option<Truth>>) =
        truth_steps((task, app), screens, report, update, (w, h), rewind)
            .into_iter()
            .unzip();
    let truths: Vec<Option<&Truth>> = owned.iter().map(Option::as_ref).collect();
    let offers = offers(report, &indices, &truths, (w, h));
    let wrong = wrong_steps(report, &truths, (w, h), Chooser::Graph);
    let wrong_planned = wrong_steps(report, &truths, (w, h), Chooser::Plan);
    let answers = graph_answers(report, &truths, (w, h));
    let no_offer = fast_path.map_or_else(Vec::new, |threshold| {
        no_offers(report, &truths, (w, h), threshold)
    });
    let chosen: Vec<(bool, Option<Action>)> = report
        .steps
        .iter()
        .map(|s| (s.chosen_by == Chooser::Graph, s.action.clone()))
        .collect();
    let judged: Vec<Option<bool>> = report
        .steps
        .iter()
        .zip(&truths)
        .map(|(s, truth)| truth.map(|t| is_right(Some(t), s.action.clone(), (w, h))))
        .collect();
    let fast = crate::judge::fast_steps(&chosen, screens, &judged);
    // Without the graph, the run is the model alone's: what its steps were is kept.
    let model_steps = fast_path.is_none().then(|| {
        crate::task_run::ModelSteps(
            screens
                .iter()
                .cloned()
                .zip(report.steps.iter().map(|s| s.action.clone()))
                .collect(),
        )
    });
    TaskRun {
        app: String::new(),
        task: task.name.clone(),
        condition: String::new(),
        succeeded: false,
        steps: report.steps.len(),
        model_calls: report.model_calls,
        fast_path_steps: chosen_by(report, Chooser::Graph),
        wrong_fast_path_steps: wrong.len(),
        plan_calls: report.plan_calls,
        plan_steps: chosen_by(report, Chooser::Plan),
        wrong_plan_steps: wrong_planned.len(),
        mistaken_steps: judged.iter().filter(|j| **j == Some(false)).count(),
        wrong: wrong.into_iter().chain(wrong_planned).collect(),
        answers,
        no_offer,
        trail: trail(report, screens),
        offers,
        agent_ms_per_step: per_step(report, |s| s.agent_ms),
        graph_ms_per_step: per_step(report, |s| s.graph_ms),
        agent_ms: report
            .steps
            .iter()
            .map(|s| (s.agent_ms * 1000.0).round() / 1000.0)
            .collect(),
        ending: report.ending,
        update: None,
        run: 0,
        fast,
        model_steps,
        session: None,
    }
}

/// Who plans over the graph's map in a run with the graph.
fn planner_of(
    planning: &Planning,
    phone: &Arc<Mutex<Phone>>,
    app: &RecordedApp,
    task: &GroundTruth,
    progress: &Arc<Mutex<IdealProgress>>,
) -> Option<Box<dyn Model>> {
    match planning {
        Planning::Off => None,
        Planning::Ideal => Some(Box::new(crate::planner::IdealPlanner {
            phone: phone.clone(),
            app: app.clone(),
            task: task.clone(),
            progress: progress.clone(),
        })),
        Planning::Model(config) => Some(Box::new(config.clone())),
    }
}

/// Each step of a run: the recorded screen it started on, who chose the action, the action, and
/// the page the graph took the screen for.
fn trail(report: &RunReport, screens: &[String]) -> Vec<String> {
    report
        .steps
        .iter()
        .zip(screens)
        .map(|(step, screen)| {
            format!(
                "{} {:?} {} page {}",
                &screen[..screen.len().min(12)],
                step.chosen_by,
                step.action
                    .as_ref()
                    .map_or(String::new(), |a| a.to_dict().to_string()),
                step.graph.as_ref().map_or(String::new(), |g| format!(
                    "{} {} {}",
                    g["page"], g["basis"], g["trust"]
                ))
            )
        })
        .collect()
}

/// The steps `by` chose.
fn chosen_by(report: &RunReport, by: Chooser) -> usize {
    report.steps.iter().filter(|s| s.chosen_by == by).count()
}

/// The mean of `f` over the run's steps (0 for none).
fn per_step(report: &RunReport, f: impl Fn(&atlas_agent::phone::StepReport) -> f64) -> f64 {
    report.steps.iter().map(f).sum::<f64>() / report.steps.len().max(1) as f64
}

/// Whether `action` does what the ground truth does on a screen.
fn is_right(truth: Option<&Truth>, action: Option<Action>, (w, h): (u32, u32)) -> bool {
    match (truth, action) {
        (Some(Truth::Finish), Some(Action::Finish { .. })) => true,
        (Some(Truth::Back), Some(Action::Back)) => true,
        // A tap on the field an input goes into is the input's first half, as the model does it.
        (Some(Truth::Tap(b) | Truth::Type(b, _)), Some(Action::Tap { element, .. })) => {
            inside(b, &element, (w, h))
        }
        (Some(Truth::Type(_, text)), Some(Action::Type { text: typed })) => *text == typed,
        _ => false,
    }
}

/// The index of the ground truth's step for each step of a run (none where the run is off its
/// screens), and what the ground truth does there ([`truth_on`]). A step that did the ground
/// truth's action moves the run on to the next step, as the demonstration moved on: a screen the
/// recording lists for two steps (a switch flipped where the recorded state stays the same) is
/// the later one's once the earlier one's action was done.
fn truth_steps(
    (task, app): (&GroundTruth, &RecordedApp),
    screens: &[String],
    report: &RunReport,
    update: Option<&Update>,
    size: (u32, u32),
    rewind: bool,
) -> Vec<(Option<usize>, Option<Truth>)> {
    let mut from = 0;
    screens
        .iter()
        .zip(&report.steps)
        .map(|(screen, step)| {
            let (at, mut truth) = truth_on(task, screen, from, update, rewind);
            // On a screen the update added, Back is as right as the way on where it leads to the
            // same screen (a dialog dismissed either way).
            if matches!(step.action, Some(Action::Back))
                && let Some(update) = update
                && let Some(to) = update.pass_to(screen)
            {
                let back = (screen.clone(), Trigger::Key("BACK".into()));
                if app.transitions.get(&back).map(String::as_str) == Some(to) {
                    truth = Some(Truth::Back);
                }
            }
            let views = app.screens.get(screen).map_or(&[][..], |s| &s.views);
            let truth = truth.map(|t| match t {
                Truth::Tap(b) => Truth::Tap(tapped_view(b, views)),
                Truth::Type(b, text) => Truth::Type(tapped_view(b, views), text),
                other => other,
            });
            if let Some(i) = at {
                // A tap into the field is an input's first half; its text completes it.
                let typed = matches!(
                    step.action,
                    Some(Action::Type { .. } | Action::TypeName { .. })
                );
                let done = is_right(truth.as_ref(), step.action.clone(), size)
                    && (typed || !matches!(truth, Some(Truth::Type(..))));
                from = if done {
                    (i + 1).min(task.steps.len() - 1)
                } else {
                    i
                };
            }
            (at, truth)
        })
        .collect()
}

/// The bounds a demonstrated tap at the middle of `b` is judged by: the view that takes a tap
/// there, where that view holds `b` — as Android delivers a tap, to the innermost clickable view
/// under the point (a row takes the tap on its label), else the smallest view there. A tap on a
/// row's label and one on the row's middle are the same tap; a demonstration recorded with
/// bounds no view of its screen has (a view of the moment before) is judged by the view its tap
/// reaches. The phone tells taps apart by view, not by pixel.
fn tapped_view(b: [[i64; 2]; 2], views: &[View]) -> [[i64; 2]; 2] {
    let (x, y) = ((b[0][0] + b[1][0]) / 2, (b[0][1] + b[1][1]) / 2);
    let holds = |r: &[[i64; 2]; 2]| {
        r[0][0] <= b[0][0] && r[0][1] <= b[0][1] && r[1][0] >= b[1][0] && r[1][1] >= b[1][1]
    };
    let innermost = |takes: &dyn Fn(&View) -> bool| {
        views
            .iter()
            .filter(|v| v.is_shown() && v.contains(x, y) && takes(v))
            .min_by_key(|v| v.area())
            .and_then(|v| v.bounds)
    };
    innermost(&|v| v.clickable || v.checkable || v.long_clickable)
        .or_else(|| innermost(&|_| true))
        .filter(holds)
        .unwrap_or(b)
}

/// What the graph offered on each ground-truth step of a run (the first time the run stood on
/// it): the agent's side of the same-screens comparison ([`crate::same_screens`]).
fn offers(
    report: &RunReport,
    steps: &[Option<usize>],
    truths: &[Option<&Truth>],
    size: (u32, u32),
) -> Vec<Offer> {
    let mut seen = std::collections::HashSet::new();
    report
        .steps
        .iter()
        .zip(steps.iter().zip(truths))
        .filter_map(|(step, (at, truth))| {
            let at = (*at).filter(|i| seen.insert(*i))?;
            let graph = step.graph.as_ref();
            let resolved = graph
                .and_then(|g| g.get("resolved"))
                .and_then(Action::from_dict);
            Some(Offer {
                step: at,
                confidence: resolved
                    .as_ref()
                    .map(|_| graph.and_then(|g| g["confidence"].as_f64()).unwrap_or(0.0)),
                right: is_right(*truth, resolved, size),
            })
        })
        .collect()
}

/// What the graph answered on each step that it answered, taken or not: the curve of coverage
/// against precision that a fast-path threshold chooses a point on.
fn graph_answers(
    report: &RunReport,
    truths: &[Option<&Truth>],
    size: (u32, u32),
) -> Vec<GraphAnswer> {
    report
        .steps
        .iter()
        .zip(truths)
        .filter_map(|(step, truth)| {
            let graph = step.graph.as_ref()?;
            let action = Action::from_dict(graph.get("resolved")?)?;
            Some(GraphAnswer {
                confidence: graph["confidence"].as_f64().unwrap_or(0.0),
                basis: graph["basis"].as_str().unwrap_or_default().to_string(),
                right: truth.map(|_| is_right(*truth, Some(action), size)),
            })
        })
        .collect()
}

/// Why the graph offered nothing the agent could take on each step the model decided.
fn no_offers(
    report: &RunReport,
    truths: &[Option<&Truth>],
    size: (u32, u32),
    fast_path: f64,
) -> Vec<String> {
    report
        .steps
        .iter()
        .zip(truths)
        .filter(|(step, _)| step.chosen_by == Chooser::Model)
        .filter_map(|(step, truth)| {
            let graph = step.graph.as_ref()?;
            Some(why_no_offer(graph, *truth, size, fast_path))
        })
        .collect()
}

/// Why one step got no action the agent could take, as `observe_screen` answered it: the
/// screen taken for no page; the graph's doubt (its code: `no_way`, `same_label`, `unlikely`…)
/// or no way to a page that serves the task; an action that names no single widget on the
/// screen; a finish the graph guessed (only a remembered one is taken); or an action below the
/// fast path, which the ground truth says was right, wrong, or cannot tell (off the recording).
pub fn why_no_offer(
    graph: &Value,
    truth: Option<&Truth>,
    size: (u32, u32),
    fast_path: f64,
) -> String {
    let resolved = graph.get("resolved").and_then(Action::from_dict);
    if graph["page"].as_str().unwrap_or_default().is_empty() {
        return "no page for the screen".into();
    }
    if let Some(action) = resolved {
        let confidence = graph["confidence"].as_f64().unwrap_or(0.0);
        let verdict = match truth {
            None => "off the recording",
            Some(_) if is_right(truth, Some(action), size) => "right",
            Some(_) => "wrong",
        };
        return if confidence >= fast_path {
            format!("offered at the fast path but not taken, {verdict}")
        } else {
            format!("below the fast path, {verdict}")
        };
    }
    if !graph["suggested"].is_null() {
        return "an action naming no single widget on the screen".into();
    }
    let basis = graph["basis"].as_str().unwrap_or_default();
    match basis
        .strip_prefix("不确定(")
        .and_then(|r| r.split_once(')'))
    {
        Some((code, _)) => format!("unsure: {code}"),
        None if matches!(basis, "memory" | "labels" | "path") => {
            let verdict = match truth {
                None => "off the recording",
                Some(Truth::Finish) => "right",
                Some(_) => "wrong",
            };
            format!("a finish not remembered (never taken), {verdict}")
        }
        None if basis.is_empty() => "no answer".into(),
        None => format!("no way: {basis}"),
    }
}

/// Steps `by` chose (the fast path, or a planned route) that did not do what the ground truth
/// does on their screen.
fn wrong_steps(
    report: &RunReport,
    truths: &[Option<&Truth>],
    size: (u32, u32),
    by: Chooser,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (k, (step, truth)) in report.steps.iter().zip(truths).enumerate() {
        if step.chosen_by != by {
            continue;
        }
        let action = step.action.clone();
        if !is_right(*truth, action.clone(), size) {
            wrong.push(format!(
                "step {}: did {:?}, the ground truth {truth:?} (graph: {})",
                k + 1,
                action,
                step.graph.as_ref().map_or(String::new(), Value::to_string)
            ));
        }
    }
    wrong
}

fn inside(b: &[[i64; 2]; 2], element: &[u16; 2], (w, h): (u32, u32)) -> bool {
    let x = i64::from(element[0]) * i64::from(w) / 1000;
    let y = i64::from(element[1]) * i64::from(h) / 1000;
    x >= b[0][0] && x < b[1][0] && y >= b[0][1] && y < b[1][1]
}

/// A condition's totals.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConditionTotals {
    /// Tasks run.
    pub tasks: usize,
    /// Tasks finished.
    pub succeeded: usize,
    /// Calls to the model.
    pub model_calls: usize,
    /// Steps the graph took without the model.
    pub fast_path_steps: usize,
    /// Of those, steps the ground truth does otherwise.
    pub wrong_fast_path_steps: usize,
    /// Tasks `model_only` completed that this condition did not.
    pub lost: usize,
    /// Calls to the planner (counted in `model_calls` too).
    pub plan_calls: usize,
    /// Steps of routes the planner chose.
    pub plan_steps: usize,
    /// The model alone's calls on the same tasks (on the updated app after an update): what
    /// `model_calls` is measured against.
    pub model_only_calls: usize,
    /// Of those, steps the ground truth does otherwise.
    pub wrong_plan_steps: usize,
    /// Steps, whoever chose them, that did not do what the demonstration did on their screen.
    pub mistaken_steps: usize,
    /// The fast-path steps judged where the recording can, and the others beside the model
    /// alone ([`crate::judge`]).
    pub judged: crate::judge::Judged,
}

impl ConditionTotals {
    fn add(&mut self, run: &TaskRun, lost: bool, model_only_calls: usize) {
        self.judged.add(&run.fast);
        self.tasks += 1;
        self.model_only_calls += model_only_calls;
        self.succeeded += usize::from(run.succeeded);
        self.model_calls += run.model_calls;
        self.fast_path_steps += run.fast_path_steps;
        self.wrong_fast_path_steps += run.wrong_fast_path_steps;
        self.lost += usize::from(lost);
        self.plan_calls += run.plan_calls;
        self.plan_steps += run.plan_steps;
        self.wrong_plan_steps += run.wrong_plan_steps;
        self.mistaken_steps += run.mistaken_steps;
    }
}

/// What the k-th run of a sequence's tasks cost (over the tasks the model alone completes),
/// beside the model alone on the same tasks: how the cost falls as a fleet reruns its suite
/// and each app's record of trust grows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunTotals {
    /// `first_half` (tasks new on an app with no record), `second_half` (new on an app with
    /// one), `after_update`.
    pub sequence: String,
    /// Which run of the tasks (0: their first).
    pub run: usize,
    /// The run's totals.
    pub totals: ConditionTotals,
}

/// Totals per condition.
pub type Conditions = std::collections::BTreeMap<String, ConditionTotals>;

/// The whole evaluation: per condition, and every run.
#[derive(Debug, Clone, Serialize)]
pub struct AgentEval {
    /// Every task, per condition.
    pub conditions: Conditions,
    /// The same over the tasks the model alone completes: where the ideal model cannot finish
    /// a task (its recorded screens do not replay), no condition can, and its calls say nothing
    /// about what the graph saves.
    pub solvable: Conditions,
    /// [`AgentEval::solvable`] per app: the fast path's precision is to hold on every app.
    pub per_app: std::collections::BTreeMap<String, Conditions>,
    /// Per app, and over all apps (`all`): each run of each sequence, in order.
    pub by_run: std::collections::BTreeMap<String, Vec<RunTotals>>,
    /// Per app, after an update: the steps its tasks took until the graph's fast path acted
    /// again (none when it never did).
    pub steps_to_trust: std::collections::BTreeMap<String, Option<usize>>,
    /// Tasks left out, and why.
    pub skipped: Vec<String>,
    /// The agent's own mean time per step.
    pub agent_ms_per_step: f64,
    /// The part of it spent asking the graph.
    pub graph_ms_per_step: f64,
    /// The median step's own time, and the median of the steps after a task's first: the
    /// first asks the graph about a task it has not seen, which embeds the instruction.
    pub agent_ms_p50: f64,
    /// The median of the steps after a task's first.
    pub agent_ms_p50_after_first: f64,
    /// On tasks new to the graph: of all steps, the share the graph answered with a confidence
    /// of at least each threshold, and how many of those answers were right (on the screens
    /// the task's recording has a step for) — what `--fast-path` trades.
    pub new_task_curve: Vec<crate::loao::CurvePoint>,
    /// On tasks new to the graph, the steps the model decided, by why the graph offered no
    /// action the agent could take.
    pub new_task_no_offer: std::collections::BTreeMap<String, usize>,
    /// On the ground-truth steps the new-task runs stood on: the agent's offers beside
    /// `eval droidtask`'s answers on the same steps.
    pub same_screens: crate::same_screens::SameScreens,
    /// The fleet condition, each app's first and second half of tasks ([`crate::fleet`]).
    pub fleet: Vec<crate::fleet::FleetHalf>,
    /// Every run.
    pub runs: Vec<TaskRun>,
}

/// Evaluates the agent on the apps of a DroidTask folder. The graph conditions teach through
/// `caller` under app ids `{prefix}{app}.{task}` (the task itself never taught before its run).
pub fn evaluate(
    root: &Path,
    apps: &[atlas_import::droidtask::App],
    caller: &dyn ToolCaller,
    prefix: &str,
    options: &AgentOptions,
    progress: &dyn Progress,
) -> anyhow::Result<AgentEval> {
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    for app in apps {
        let (app_runs, left_out) = evaluate_app(root, app, caller, prefix, options, progress)?;
        runs.extend(app_runs);
        skipped.extend(left_out);
    }
    Ok(AgentEval::from_runs(runs, skipped))
}

/// How `atlas eval agent` runs its agents.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// The fast path's target (`--fast-path`).
    pub fast_path: f64,
    /// Who plans over the graph's map.
    pub planning: Planning,
    /// After the fleet's runs, update each app with this seed and run its tasks again.
    pub update: Option<u64>,
    /// How many times each task is rerun after its first run, before the update and after it
    /// ([`REPEAT_PASSES`] unless said).
    pub reruns: Option<usize>,
    /// The model errs on a share of its steps (`--mistakes P --seed S`), in every condition.
    pub mistakes: Option<Mistakes>,
    /// Each run with the graph is judged as a test runner judges a test, and its verdict sent
    /// (`report_verdict`): true unless `--no-verdicts`, which leaves the graph the agents' word.
    pub verdicts: bool,
}

/// Who the evaluation's verdicts say judged.
pub const JUDGE: &str = "atlas eval agent";

/// Sends the judge's verdict on a run with the graph, as a test runner would: passed when it
/// finished on the task's last screen.
fn send_verdict(caller: &dyn ToolCaller, run: &TaskRun, truth: &GroundTruth) -> anyhow::Result<()> {
    let Some(session) = &run.session else {
        return Ok(());
    };
    let reason = if run.succeeded {
        "finished on the task's last screen".to_string()
    } else {
        format!(
            "ended ({:?}) on a screen that is not the task's last",
            run.ending
        )
    };
    let verdict = session.verdict(&truth.instruction, run.succeeded, &reason, JUDGE);
    atlas_client::GraphClient::new(caller).report_verdict(&verdict)?;
    Ok(())
}

/// One app's runs under every condition, and the tasks left out; `progress` counts each run.
pub fn evaluate_app(
    root: &Path,
    app: &atlas_import::droidtask::App,
    caller: &dyn ToolCaller,
    prefix: &str,
    options: &AgentOptions,
    progress: &dyn Progress,
) -> anyhow::Result<(Vec<TaskRun>, Vec<String>)> {
    let AgentOptions {
        update: update_seed,
        reruns,
        mistakes,
        ..
    } = *options;
    let mut runs = Vec::new();
    let dir = root.join("user_tasks").join(&app.name);
    let recorded = RecordedApp::read(&dir)?;
    let (truths, left_out) = read_ground_truth(&dir)?;
    let skipped = left_out
        .into_iter()
        .map(|t| format!("{}/{t}", app.name))
        .collect();
    let passes = 1 + reruns.unwrap_or(REPEAT_PASSES);
    let updated_runs = if update_seed.is_some() { 1 + passes } else { 0 };
    progress.stage(
        &format!(
            "{}: each task without the graph, then as a fleet meets the app{}",
            app.name,
            if update_seed.is_some() {
                ", then after an update"
            } else {
                ""
            }
        ),
        Some(((1 + passes + updated_runs + 1) * truths.len()) as u64),
    );
    let original = (&recorded, None);
    for truth in &truths {
        runs.push(run_task(
            original,
            &app.name,
            truth,
            MODEL_ONLY,
            None,
            (&Planning::Off, mistakes),
        )?);
        progress.advance(1);
    }
    // The graph conditions, as a fleet meets an app: one graph, taught the app's exploration,
    // runs half of its tasks (each new to it, on an app it has no record of yet), then reruns
    // them; then the other half's tasks come, new to the graph on an app it has a record of, and
    // are rerun in turn.
    let graph = format!("{prefix}{}.graph", app.name);
    crate::teach::teach_recording(caller, &graph, &app.exploration.recording(), "exploration")?;
    let half = truths.len().div_ceil(2);
    let sequence = |tasks: &[GroundTruth], new: &str, runs: &mut Vec<TaskRun>| {
        for pass in 0..passes {
            let condition = match pass {
                0 => new,
                1 => REPEAT,
                _ => REPEAT_LATER,
            };
            for truth in tasks {
                runs.push(fleet_run(
                    caller, &graph, original, app, truth, condition, pass, options,
                )?);
                progress.advance(1);
            }
        }
        Ok::<(), anyhow::Error>(())
    };
    sequence(&truths[..half], NEW_APP, &mut runs)?;
    sequence(&truths[half..], NEW_TASK, &mut runs)?;
    // Then the app is updated, and its tasks rerun on the same graph: the model alone on the new
    // version first (what an update costs without the graph), then the fleet.
    if let Some(seed) = update_seed {
        let (next, update) = updated_app(&recorded, &truths, seed)?;
        progress.note(&format!(
            "{} updated to {}: {}",
            app.name,
            update.version.name,
            update.summary()
        ));
        let update = Arc::new(update);
        let updated = (&next, Some(&update));
        for truth in &truths {
            runs.push(run_task(
                updated,
                &app.name,
                truth,
                MODEL_ONLY_UPDATED,
                None,
                (&Planning::Off, mistakes),
            )?);
            progress.advance(1);
        }
        for pass in 0..passes {
            let condition = if pass == 0 {
                AFTER_UPDATE
            } else {
                AFTER_UPDATE_REPEAT
            };
            for truth in &truths {
                let mut run = fleet_run(
                    caller, &graph, updated, app, truth, condition, pass, options,
                )?;
                run.update = Some(update.changes.clone());
                runs.push(run);
                progress.advance(1);
            }
        }
    }
    let fleet = format!("{prefix}{}.fleet", app.name);
    for (k, truth) in truths.iter().enumerate() {
        let half = if k < half {
            FLEET_FIRST_HALF
        } else {
            FLEET_SECOND_HALF
        };
        runs.push(fleet_condition_run(
            (caller, &fleet),
            (original, &app.name),
            truth,
            half,
            options,
        )?);
        progress.advance(1);
    }
    Ok((runs, skipped))
}

/// A run of the fleet condition: the app's tasks one after another on one graph (`fleet`) that
/// nothing was taught but what the agents before reported, from the same dumps they see.
fn fleet_condition_run(
    (caller, fleet): (&dyn ToolCaller, &str),
    (app, app_name): ((&RecordedApp, Option<&Arc<Update>>), &str),
    truth: &GroundTruth,
    half: &str,
    options: &AgentOptions,
) -> anyhow::Result<TaskRun> {
    let session = format!("fleet-{}", truth.name);
    let link = GraphLink::new(caller, Some(fleet.to_string()), options.fast_path, &session);
    let model = (&options.planning, options.mistakes);
    let run = run_task(app, app_name, truth, half, Some(link), model)?;
    if options.verdicts {
        send_verdict(caller, &run, truth)?;
    }
    Ok(run)
}

/// The app's next release, seeded: its changes land on the steps the tasks take.
fn updated_app(
    recorded: &RecordedApp,
    truths: &[GroundTruth],
    seed: u64,
) -> anyhow::Result<(RecordedApp, Update)> {
    let steps: Vec<(String, atlas_device_sim::app::Trigger)> = truths
        .iter()
        .flat_map(|t| t.steps.iter())
        .filter_map(|(screens, truth)| match truth {
            Truth::Tap(b) => Some((
                screens.first()?.clone(),
                atlas_device_sim::app::Trigger::Tap(*b),
            )),
            _ => None,
        })
        .collect();
    Ok(atlas_device_sim::update::update(recorded, seed, &steps)?)
}

/// One run of a fleet's on `graph` (session `{pass}-{task}`, `u{pass}-{task}` on the updated
/// app); a first run without success is followed by one with the model alone, so that reruns
/// have a finished session to replay.
#[allow(clippy::too_many_arguments)]
fn fleet_run(
    caller: &dyn ToolCaller,
    graph: &str,
    app: (&RecordedApp, Option<&Arc<Update>>),
    named: &atlas_import::droidtask::App,
    truth: &GroundTruth,
    condition: &str,
    pass: usize,
    options: &AgentOptions,
) -> anyhow::Result<TaskRun> {
    let updated = if app.1.is_some() { "u" } else { "" };
    let session = format!("{updated}{pass}-{}", truth.name);
    let link = GraphLink::new(caller, Some(graph.to_string()), options.fast_path, &session);
    let mut run = run_task(
        app,
        &named.name,
        truth,
        condition,
        Some(link),
        (&options.planning, options.mistakes),
    )?;
    run.run = pass;
    if options.verdicts {
        send_verdict(caller, &run, truth)?;
    }
    if pass == 0 && !run.succeeded {
        let session = format!("{updated}{pass}-learn-{}", truth.name);
        let link = GraphLink::new(caller, Some(graph.to_string()), f64::INFINITY, &session);
        let learning = run_task(
            app,
            &named.name,
            truth,
            "learning",
            Some(link),
            (&Planning::Off, options.mistakes),
        )?;
        if options.verdicts {
            send_verdict(caller, &learning, truth)?;
        }
    }
    Ok(run)
}

impl AgentEval {
    /// Totals, times and the graph's curve over `runs` (of any apps, however they were run).
    pub fn from_runs(mut runs: Vec<TaskRun>, skipped: Vec<String>) -> AgentEval {
        crate::judge::compare_with_model_alone(&mut runs, |run| {
            if run.after_update() {
                MODEL_ONLY_UPDATED
            } else {
                MODEL_ONLY
            }
        });
        let solved_by = |condition: &str| -> std::collections::HashSet<(&str, &str)> {
            runs.iter()
                .filter(|r| r.condition == condition && r.succeeded)
                .map(|r| (r.app.as_str(), r.task.as_str()))
                .collect()
        };
        let solved = solved_by(MODEL_ONLY);
        // After an update, what the model alone does on the new version is the measure.
        let solved_updated = solved_by(MODEL_ONLY_UPDATED);
        let alone = AloneCalls::of(&runs);
        let mut conditions = Conditions::new();
        let mut solvable = Conditions::new();
        let mut per_app = std::collections::BTreeMap::<String, Conditions>::new();
        for run in &runs {
            let model_did = run.model_alone_did(&solved, &solved_updated);
            let lost = model_did && !run.succeeded;
            let base = alone.of_task(run);
            conditions
                .entry(run.condition.clone())
                .or_default()
                .add(run, lost, base);
            if model_did {
                solvable
                    .entry(run.condition.clone())
                    .or_default()
                    .add(run, lost, base);
                per_app
                    .entry(run.app.clone())
                    .or_default()
                    .entry(run.condition.clone())
                    .or_default()
                    .add(run, lost, base);
            }
        }
        let by_run = by_run(&runs, &solved, &solved_updated, &alone);
        let steps: usize = runs.iter().map(|r| r.steps).sum();
        let per_step = |ms: fn(&TaskRun) -> f64| {
            runs.iter().map(|r| ms(r) * r.steps as f64).sum::<f64>() / steps.max(1) as f64
        };
        let agent_ms_per_step = per_step(|r| r.agent_ms_per_step);
        let graph_ms_per_step = per_step(|r| r.graph_ms_per_step);
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0)
        };
        let agent_ms_p50 = median(runs.iter().flat_map(|r| r.agent_ms.clone()).collect());
        let agent_ms_p50_after_first = median(
            runs.iter()
                .flat_map(|r| r.agent_ms.iter().skip(1).copied())
                .collect(),
        );
        let mut steps_to_trust = std::collections::BTreeMap::new();
        for run in runs
            .iter()
            .filter(|r| r.condition.starts_with(AFTER_UPDATE))
        {
            let entry = steps_to_trust.entry(run.app.clone()).or_insert((0, None));
            if entry.1.is_none() {
                match run.trail.iter().position(|t| t.contains(" Graph ")) {
                    Some(k) => entry.1 = Some(entry.0 + k),
                    None => entry.0 += run.steps,
                }
            }
        }
        let steps_to_trust = steps_to_trust
            .into_iter()
            .map(|(app, (_, found))| (app, found))
            .collect();
        let new_task: Vec<&TaskRun> = runs.iter().filter(|r| r.condition == NEW_TASK).collect();
        let scored: Vec<(f64, bool)> = new_task
            .iter()
            .flat_map(|r| {
                r.answers
                    .iter()
                    .filter_map(|a| a.right.map(|right| (a.confidence, right)))
            })
            .collect();
        let new_task_curve = crate::loao::curve(&scored, new_task.iter().map(|r| r.steps).sum());
        let mut new_task_no_offer = std::collections::BTreeMap::new();
        for why in new_task.iter().flat_map(|r| &r.no_offer) {
            *new_task_no_offer.entry(why.clone()).or_default() += 1;
        }
        AgentEval {
            conditions,
            solvable,
            per_app,
            by_run,
            steps_to_trust,
            skipped,
            agent_ms_per_step,
            graph_ms_per_step,
            agent_ms_p50,
            agent_ms_p50_after_first,
            new_task_curve,
            new_task_no_offer,
            same_screens: Default::default(),
            fleet: crate::fleet::halves(&runs),
            runs,
        }
    }
}

type Solved<'a> = std::collections::HashSet<(&'a str, &'a str)>;

/// The model alone's calls on each task, on the app and on its update.
struct AloneCalls {
    original: HashMap<(String, String), usize>,
    updated: HashMap<(String, String), usize>,
}

impl AloneCalls {
    fn of(runs: &[TaskRun]) -> AloneCalls {
        let calls = |condition: &str| {
            runs.iter()
                .filter(|r| r.condition == condition)
                .map(|r| ((r.app.clone(), r.task.clone()), r.model_calls))
                .collect()
        };
        AloneCalls {
            original: calls(MODEL_ONLY),
            updated: calls(MODEL_ONLY_UPDATED),
        }
    }

    /// The model alone's calls on `run`'s task, on the same version of the app.
    fn of_task(&self, run: &TaskRun) -> usize {
        let calls = if run.after_update() {
            &self.updated
        } else {
            &self.original
        };
        calls
            .get(&(run.app.clone(), run.task.clone()))
            .copied()
            .unwrap_or(0)
    }
}

impl TaskRun {
    /// Whether the run was on the updated app.
    fn after_update(&self) -> bool {
        self.condition == MODEL_ONLY_UPDATED || self.condition.starts_with(AFTER_UPDATE)
    }

    /// Whether the model alone completed this run's task on the same version of the app.
    fn model_alone_did(&self, solved: &Solved, solved_updated: &Solved) -> bool {
        let solved = if self.after_update() {
            solved_updated
        } else {
            solved
        };
        solved.contains(&(self.app.as_str(), self.task.as_str()))
    }
}

/// [`AgentEval::by_run`]: the graph conditions' runs of the tasks the model alone completes, by
/// sequence and run, per app and over all apps.
fn by_run(
    runs: &[TaskRun],
    solved: &Solved,
    solved_updated: &Solved,
    alone: &AloneCalls,
) -> std::collections::BTreeMap<String, Vec<RunTotals>> {
    let first_half: Solved = runs
        .iter()
        .filter(|r| r.condition == NEW_APP)
        .map(|r| (r.app.as_str(), r.task.as_str()))
        .collect();
    let mut totals = std::collections::BTreeMap::<(&str, &str, usize), RunTotals>::new();
    for run in runs {
        let sequence = match run.condition.as_str() {
            AFTER_UPDATE | AFTER_UPDATE_REPEAT => "after_update",
            NEW_APP | NEW_TASK | REPEAT | REPEAT_LATER
                if first_half.contains(&(run.app.as_str(), run.task.as_str())) =>
            {
                "first_half"
            }
            NEW_APP | NEW_TASK | REPEAT | REPEAT_LATER => "second_half",
            _ => continue,
        };
        if !run.model_alone_did(solved, solved_updated) {
            continue;
        }
        for app in [run.app.as_str(), "all"] {
            totals
                .entry((app, sequence, run.run))
                .or_insert_with(|| RunTotals {
                    sequence: sequence.to_string(),
                    run: run.run,
                    ..RunTotals::default()
                })
                .totals
                .add(run, !run.succeeded, alone.of_task(run));
        }
    }
    let mut by_app = std::collections::BTreeMap::<String, Vec<RunTotals>>::new();
    for ((app, _, _), run) in totals {
        by_app.entry(app.to_string()).or_default().push(run);
    }
    by_app
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_without_an_offer_is_told_by_its_cause() {
        let size = (1000, 2000);
        let tap = Truth::Tap([[100, 100], [300, 200]]);
        let why = |graph: Value, truth: Option<&Truth>| why_no_offer(&graph, truth, size, 0.95);
        assert_eq!(why(json!({"page": ""}), None), "no page for the screen");
        let unsure = json!({"page": "p", "suggested": null, "resolved": null,
            "basis": "不确定(same_label): 多个控件显示相同文字“OK”"});
        assert_eq!(why(unsure, Some(&tap)), "unsure: same_label");
        let no_way = json!({"page": "p", "suggested": null, "basis": "未找到匹配的意图"});
        assert_eq!(why(no_way, None), "no way: 未找到匹配的意图");
        let unresolved =
            json!({"page": "p", "suggested": {"action_type": "click"}, "resolved": null});
        assert_eq!(
            why(unresolved, Some(&tap)),
            "an action naming no single widget on the screen"
        );
        // A tap at (200, 150) in pixels is (200, 75) in relative coordinates on 1000 × 2000.
        let low = |at: [u32; 2], confidence: f64| {
            json!({"page": "p", "suggested": {"action_type": "click"}, "confidence": confidence,
                "resolved": Action::Tap { element: [at[0] as u16, at[1] as u16], message: None }.to_dict()})
        };
        assert_eq!(
            why(low([200, 75], 0.5), Some(&tap)),
            "below the fast path, right"
        );
        assert_eq!(
            why(low([900, 900], 0.5), Some(&tap)),
            "below the fast path, wrong"
        );
        assert_eq!(
            why(low([200, 75], 0.5), None),
            "below the fast path, off the recording"
        );
        let finish = json!({"page": "p", "suggested": null, "resolved": null, "basis": "path"});
        assert_eq!(
            why(finish.clone(), Some(&Truth::Finish)),
            "a finish not remembered (never taken), right"
        );
        assert_eq!(
            why(finish, Some(&tap)),
            "a finish not remembered (never taken), wrong"
        );
    }
}
