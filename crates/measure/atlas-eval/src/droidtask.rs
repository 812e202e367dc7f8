//! AutoDroid's scoring on DroidTask, leave-one-task-out, through the tool interfaces only.
//!
//! For each task under test a fresh app id is taught the app's exploration and every *other*
//! task; then each ground-truth step is asked on its own (`get_next_action` with the task text and
//! a session, so the answer may use the steps already taken), scored as AutoDroid scores it, and
//! the ground-truth step reported, as an agent that went on would. An answer with no action and
//! `is_complete` false is "unsure": the moment a real agent asks its LLM; it counts as wrong.

use atlas_import::droidtask::{App, Step, StepAction};
use atlas_import::state_html::Element;
use atlas_progress::Progress;
use serde::Serialize;

use atlas_api::navigation::{NextAction, NextActionRequest, NextActionResponse};
use atlas_api::tools;
use atlas_client::{CallError, ToolCaller};

use crate::teach::{page_for_screen, report_step, teach_recording};

/// What the graph answered for one step, in the step's own terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Answer {
    /// A tap on the screen's element at this index.
    Tap {
        /// The element's index.
        element: usize,
    },
    /// Typing into the element at this index.
    Input {
        /// The element's index.
        element: usize,
        /// The text typed.
        text: String,
    },
    /// The task is done.
    Finish,
    /// No action and not complete.
    Unsure,
    /// An action naming nothing on this screen.
    Unresolved {
        /// The widget the answer named.
        widget: String,
    },
}

/// Counts for one kind of step, or all.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Tally {
    /// Steps scored.
    pub steps: usize,
    /// Steps answered right.
    pub correct: usize,
    /// Steps the graph was sure enough to answer.
    pub answered: usize,
}

impl Tally {
    fn add(&mut self, correct: bool, answered: bool) {
        self.steps += 1;
        self.correct += correct as usize;
        self.answered += answered as usize;
    }

    /// Correct among all steps.
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.steps)
    }

    /// Correct among the steps it answered.
    pub fn precision(&self) -> f64 {
        ratio(self.correct, self.answered)
    }

    /// The share of steps left unanswered.
    pub fn unsure_share(&self) -> f64 {
        ratio(self.steps - self.answered, self.steps)
    }

    fn merge(&mut self, other: &Tally) {
        self.steps += other.steps;
        self.correct += other.correct;
        self.answered += other.answered;
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// One step of a task, as the graph answered it.
#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    /// The step's index in its task, from 0.
    pub step: usize,
    /// What the person did, in words.
    pub expected: String,
    /// What the graph answered.
    pub answer: Answer,
    /// What the answer rested on (`memory`, `labels`, `path`), as the response said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
    /// The answer's own confidence, to see how well it is calibrated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Why the graph was unsure, as it told the agent (`error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_unsure: Option<String>,
    /// Whether the answer was the person's action.
    pub correct: bool,
    /// When unsure: the model's best candidate all the same, and whether it was right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess: Option<Answer>,
    /// Whether that guess was right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess_correct: Option<bool>,
    /// Where the right candidate stood in the model's order (0 = first), if among the candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_rank: Option<usize>,
    /// The model's three most likely candidates with their probabilities.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub likeliest: Vec<(Answer, f64)>,
    /// Every candidate the labels offered, as the model saw it, and whether each was right: what
    /// a model is fitted on (not written to the JSON report).
    #[serde(skip)]
    pub considered: Vec<Considered>,
}

/// One candidate answer of a step, as the evaluation scores it.
#[derive(Debug, Clone)]
pub struct Considered {
    /// The candidate.
    pub answer: Answer,
    /// Its features, in the grounding model's order.
    pub features: Vec<f64>,
    /// Whether it was the person's action.
    pub correct: bool,
}

/// The candidates an explained answer lists, in the order of the service's feature names.
fn considered(
    screen: &[Element],
    expected: &StepAction,
    response: &NextActionResponse,
) -> Vec<Considered> {
    response
        .candidates
        .iter()
        .filter_map(|c| {
            let features = c.features.as_ref()?;
            let answer = answer_of(screen, c.action.as_ref(), c.is_complete);
            Some(Considered {
                correct: is_correct(expected, &answer),
                features: atlas_service::GROUND_FEATURES
                    .iter()
                    .map(|name| features.get(*name).copied().unwrap_or(0.0))
                    .collect(),
                answer,
            })
        })
        .collect()
}

/// One task, step by step.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    /// The app.
    pub app: String,
    /// The task file's stem (`task3`).
    pub task: String,
    /// The task, in the person's words.
    pub instruction: String,
    /// Every step of it answered right.
    pub completed: bool,
    /// Each step scored.
    pub steps: Vec<StepResult>,
}

/// AutoDroid's scores of a set of tasks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scores {
    /// Every step.
    pub all: Tally,
    /// Taps.
    pub tap: Tally,
    /// Typing.
    pub input: Tally,
    /// The last step, "the task is done".
    pub finish: Tally,
    /// Tasks scored.
    pub tasks: usize,
    /// Tasks completed (every step right).
    pub completed: usize,
}

impl Scores {
    /// The share of tasks completed.
    pub fn completion(&self) -> f64 {
        ratio(self.completed, self.tasks)
    }

    pub(crate) fn merge(&mut self, other: &Scores) {
        self.all.merge(&other.all);
        self.tap.merge(&other.tap);
        self.input.merge(&other.input);
        self.finish.merge(&other.finish);
        self.tasks += other.tasks;
        self.completed += other.completed;
    }
}

/// One app's scores.
#[derive(Debug, Clone, Serialize)]
pub struct AppScores {
    /// The app.
    pub app: String,
    /// Its scores.
    pub scores: Scores,
}

/// `atlas eval droidtask`'s report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Every app together.
    pub total: Scores,
    /// Each app.
    pub apps: Vec<AppScores>,
    /// Each task.
    pub tasks: Vec<TaskResult>,
    /// Which screens became the same page, each app with everything taught.
    pub identity: Vec<Identity>,
}

/// Which screens became the same page, for one app with everything taught.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Identity {
    /// The app.
    pub app: String,
    /// Screens taught.
    pub screens: usize,
    /// Distinct content hashes (DroidTask's `new_state_str`).
    pub content_states: usize,
    /// Pages they became.
    pub pages: usize,
    /// Pages holding screens whose actionable labels differ (a merge that may be wrong).
    pub pages_with_differing_actions: usize,
}

/// The labels one can act on, values aside: what tells two screens apart for an agent.
fn actions_of(screen: &[Element]) -> std::collections::BTreeSet<String> {
    screen
        .iter()
        .filter(|e| e.tag != "p" && !e.is_input() && !e.label().is_empty())
        .map(|e| {
            e.label()
                .split("<br>")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect()
}

/// Teaches everything of `app` under `app_id` and measures page identity.
fn identity(caller: &dyn ToolCaller, app: &App, app_id: &str) -> Result<Identity, CallError> {
    let mut by_page: std::collections::HashMap<
        String,
        std::collections::BTreeSet<std::collections::BTreeSet<String>>,
    > = Default::default();
    let mut hashes = std::collections::HashSet::new();
    let mut screens = 0;
    for trace in std::iter::once(&app.exploration).chain(&app.tasks) {
        let taught = teach_recording(
            caller,
            app_id,
            &trace.recording(),
            &format!("identity-{}", trace.name),
        )?;
        for (step, page) in trace.steps.iter().zip(&taught.pages) {
            screens += 1;
            hashes.insert(step.content_hash.clone());
            by_page
                .entry(page.clone())
                .or_default()
                .insert(actions_of(&step.screen));
        }
    }
    Ok(Identity {
        app: app.name.clone(),
        screens,
        content_states: hashes.len(),
        pages: by_page.len(),
        pages_with_differing_actions: by_page.values().filter(|sets| sets.len() > 1).count(),
    })
}

fn describe(action: &StepAction) -> String {
    match action {
        StepAction::Tap(i) => format!("tap {i}"),
        StepAction::Input(i, t) => format!("input {i} {t:?}"),
        StepAction::Finish => "finish".into(),
    }
}

/// The element an answered action names on this screen: by its label first (indices shift as
/// lists change), by index when the label is absent or ambiguous.
fn resolve(screen: &[Element], action: &NextAction) -> Option<usize> {
    if action.action_type == "back" {
        return screen.iter().find(|e| e.is_back_key()).map(|e| e.index);
    }
    let text = action.widget_text.trim();
    let id = action.widget_id.as_str();
    let input = action.action_type == "input";
    let by_index = || {
        id.parse::<usize>()
            .ok()
            .filter(|i| screen.iter().any(|e| e.index == *i))
    };
    if text.is_empty() {
        return by_index();
    }
    let labelled = |same: &dyn Fn(&str) -> bool| -> Vec<&Element> {
        screen
            .iter()
            .filter(|e| same(e.label()) && (!input || e.is_input()))
            .collect()
    };
    let mut by_label = labelled(&|label| same_words(label, text));
    if by_label.is_empty() {
        // A list item's first line names it; the lines under it (size, date) change.
        by_label = labelled(&|label| same_words(first_line(label), first_line(text)));
    }
    if by_label.is_empty() && text.chars().count() >= 20 {
        // A long label is recorded cut short on some screens.
        by_label = labelled(&|label| label.starts_with(text) || text.starts_with(label.trim()));
    }
    match by_label.as_slice() {
        [one] => Some(one.index),
        // A field shows what was typed into it, so an agent finds it by its place.
        [] if input => by_index().filter(|i| screen.iter().any(|e| e.index == *i && e.is_input())),
        // A label the screen does not show is not on this screen, whatever the index says.
        [] => None,
        several => id
            .parse::<usize>()
            .ok()
            .and_then(|i| several.iter().find(|e| e.index == i))
            .or(several.first())
            .map(|e| e.index),
    }
}

/// Labels compared as the words they show: line breaks and runs of spaces are layout.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// A label's first line: list items put their name there, and a long label is cut short
/// differently from screen to screen after it.
fn first_line(label: &str) -> &str {
    label.split(['\n', '<']).next().unwrap_or(label).trim()
}

/// What an answer (its action, or that the task is complete) does on this screen.
pub(crate) fn answer_of(screen: &[Element], action: Option<&NextAction>, complete: bool) -> Answer {
    let Some(action) = action else {
        return if complete {
            Answer::Finish
        } else {
            Answer::Unsure
        };
    };
    match resolve(screen, action) {
        None => Answer::Unresolved {
            widget: action.widget_text.clone(),
        },
        Some(element) if action.action_type == "input" => Answer::Input {
            element,
            text: action.input_text.clone(),
        },
        Some(element) => Answer::Tap { element },
    }
}

pub(crate) fn is_correct(expected: &StepAction, answer: &Answer) -> bool {
    match (expected, answer) {
        (StepAction::Finish, Answer::Finish) => true,
        (StepAction::Tap(e), Answer::Tap { element }) => e == element,
        (StepAction::Input(e, t), Answer::Input { element, text }) => e == element && t == text,
        _ => false,
    }
}

/// Evaluates one task of `app` with everything else of the app taught under `app_id`.
fn evaluate_task(
    caller: &dyn ToolCaller,
    app: &App,
    held_out: usize,
    app_id: &str,
) -> Result<TaskResult, CallError> {
    teach_recording(caller, app_id, &app.exploration.recording(), "exploration")?;
    for (i, task) in app.tasks.iter().enumerate() {
        if i != held_out {
            teach_recording(
                caller,
                app_id,
                &task.recording(),
                &format!("demo-{}", task.name),
            )?;
        }
    }
    let task = &app.tasks[held_out];
    let instruction = task.task.clone().unwrap_or_default();
    let session = format!("test-{}", task.name);
    let mut steps = Vec::new();
    let recorded = task.recording();
    // An agent meets a screen only when it gets there: each screen is matched (or added) when its
    // step is asked, so nothing of the task's later screens is in the graph before then.
    let page_of = |j: usize| -> Result<String, CallError> {
        let s = &recorded.steps[j];
        Ok(page_for_screen(caller, app_id, &s.title, &s.widgets, true)?.unwrap_or_default())
    };
    let mut current = page_of(0)?;
    for (j, step) in task.steps.iter().enumerate() {
        let asked = NextActionRequest {
            current_page: current.clone(),
            intent: instruction.clone(),
            app_id: Some(app_id.to_string()),
            session_id: Some(session.clone()),
            app_version: None,
            explain: true,
        };
        let response = atlas_api::ask::<tools::GetNextAction>(caller, &asked)?;
        let answer = answer_of(&step.screen, response.action.as_ref(), response.is_complete);
        let correct = is_correct(&step.action, &answer);
        let basis = response.basis.map(|b| b.as_str().to_string());
        let confidence = response.action.as_ref().map(|a| a.confidence);
        let why_unsure = (answer == Answer::Unsure)
            .then(|| response.error.clone())
            .flatten();
        let considered = considered(&step.screen, &step.action, &response);
        steps.push(StepResult {
            step: j,
            expected: describe(&step.action),
            answer,
            basis,
            confidence: confidence.or(response.confidence),
            why_unsure,
            correct,
            guess: None,
            guess_correct: None,
            right_rank: None,
            likeliest: Vec::new(),
            considered,
        });
        // The agent goes on with the ground-truth step, and says so.
        if j + 1 < recorded.steps.len() {
            let next = page_of(j + 1)?;
            report_step(
                caller,
                app_id,
                &current,
                &recorded.steps[j],
                &next,
                &session,
                Some(&instruction),
            )?;
            current = next;
        }
    }
    Ok(TaskResult {
        app: app.name.clone(),
        task: task.name.clone(),
        instruction,
        completed: steps.iter().all(|s| s.correct),
        steps,
    })
}

pub(crate) fn score(results: &[TaskResult], all_steps: &[&Step]) -> Scores {
    let mut s = Scores::default();
    let mut k = 0;
    for result in results {
        s.tasks += 1;
        s.completed += result.completed as usize;
        for r in &result.steps {
            let answered = !matches!(r.answer, Answer::Unsure);
            s.all.add(r.correct, answered);
            match &all_steps[k].action {
                StepAction::Tap(_) => s.tap.add(r.correct, answered),
                StepAction::Input(..) => s.input.add(r.correct, answered),
                StepAction::Finish => s.finish.add(r.correct, answered),
            }
            k += 1;
        }
    }
    s
}

/// Runs the whole evaluation. `app_prefix` keeps the apps it creates apart from others.
pub fn evaluate(
    caller: &dyn ToolCaller,
    apps: &[App],
    app_prefix: &str,
    progress: &dyn Progress,
) -> Result<Report, CallError> {
    let mut total = Scores::default();
    let mut per_app = Vec::new();
    let mut tasks = Vec::new();
    let mut identities = Vec::new();
    for app in apps {
        identities.push(identity(
            caller,
            app,
            &format!("{app_prefix}{}.identity", app.name),
        )?);
        let mut results = Vec::new();
        progress.stage(
            &format!("{}: each task asked, taught the others", app.name),
            Some(app.tasks.len() as u64),
        );
        for held_out in 0..app.tasks.len() {
            let app_id = format!("{app_prefix}{}.{}", app.name, app.tasks[held_out].name);
            results.push(evaluate_task(caller, app, held_out, &app_id)?);
            progress.advance(1);
        }
        let steps: Vec<&Step> = app.tasks.iter().flat_map(|t| &t.steps).collect();
        let scores = score(&results, &steps);
        total.merge(&scores);
        per_app.push(AppScores {
            app: app.name.clone(),
            scores,
        });
        tasks.extend(results);
    }
    Ok(Report {
        total,
        apps: per_app,
        tasks,
        identity: identities,
    })
}
