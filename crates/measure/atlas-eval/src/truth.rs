//! DroidTask's ground truth: what the person did on each screen of a demonstrated task, read from
//! its events and task files, and where on it a screen of the simulated phone stands.

use anyhow::Context;
use std::collections::HashMap;
use std::path::Path;

use atlas_device_sim::update::Update;
use atlas_import::droidbot::{Event, EventFile};

/// What the person did on one screen of a demonstration.
#[derive(Debug, Clone, PartialEq)]
pub enum Truth {
    /// A tap inside these bounds.
    Tap([[i64; 2]; 2]),
    /// This text typed into the view with these bounds.
    Type([[i64; 2]; 2], String),
    /// The Back key.
    Back,
    /// The task is done.
    Finish,
}

/// One demonstrated task: its screens (DroidBot state ids) and what was done on each.
#[derive(Debug, Clone)]
pub struct GroundTruth {
    /// The task file's stem.
    pub name: String,
    /// The task, in the person's words.
    pub instruction: String,
    /// Each step: the screens it may start on, and what the person did there.
    pub steps: Vec<(Vec<String>, Truth)>,
}

/// The demonstrated tasks of one app folder (`user_tasks/<app>`), in task order; a task whose
/// steps the recorded events do not link is left out (named in the second list).
pub fn read_ground_truth(dir: &Path) -> anyhow::Result<(Vec<GroundTruth>, Vec<String>)> {
    let mut events: HashMap<(String, String), Event> = HashMap::new();
    let events_dir = dir.join("events");
    for entry in std::fs::read_dir(&events_dir).with_context(|| events_dir.display().to_string())? {
        let path = entry?.path();
        let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        // An event file cut short by a stopped run is skipped, as the simulator skips it.
        let Ok(file) = serde_json::from_str::<EventFile>(&text) else {
            continue;
        };
        if let (Some(a), Some(b)) = (file.start_state, file.stop_state) {
            events.insert((a, b), file.event);
        }
    }
    let mut files: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let n = p
                .file_stem()?
                .to_str()?
                .strip_prefix("task")?
                .parse()
                .ok()?;
            (p.extension()? == "yaml").then_some((n, p))
        })
        .collect();
    files.sort();
    let (mut tasks, mut skipped) = (Vec::new(), Vec::new());
    for (_, path) in files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        let raw: serde_yaml::Value =
            serde_yaml::from_str(&text).with_context(|| path.display().to_string())?;
        let states = |r: &serde_yaml::Value| -> Vec<String> {
            match &r["state_str"] {
                serde_yaml::Value::String(s) => vec![s.clone()],
                serde_yaml::Value::Sequence(list) => list
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            }
        };
        let records = raw["records"].as_sequence().cloned().unwrap_or_default();
        let mut steps = Vec::new();
        let mut linked = true;
        for (i, record) in records.iter().enumerate() {
            let here = states(record);
            let truth = if record["Choice"].as_i64().unwrap_or(-1) < 0 {
                Truth::Finish
            } else {
                let next = records.get(i + 1).map(states).unwrap_or_default();
                let event = here
                    .iter()
                    .rev()
                    .flat_map(|a| next.iter().map(move |b| (a.clone(), b.clone())))
                    .find_map(|k| events.get(&k));
                let bounds = event.and_then(|e| e.view.as_ref()?.bounds);
                let kind = event.map(|e| (e.event_type.as_str(), e.name.as_deref()));
                match (kind, bounds) {
                    (Some(("key", Some("BACK"))), _) => Truth::Back,
                    (Some(("click", _)), Some(b)) => Truth::Tap(b),
                    (Some(("set_text", _)), Some(b)) => {
                        let text = event.and_then(|e| e.text.clone()).unwrap_or_default();
                        Truth::Type(b, text)
                    }
                    _ => {
                        linked = false;
                        break;
                    }
                }
            };
            steps.push((here, truth));
        }
        if linked && !steps.is_empty() {
            tasks.push(GroundTruth {
                name,
                instruction: raw["task_name"]
                    .as_str()
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                steps,
            });
        } else {
            skipped.push(name);
        }
    }
    Ok((tasks, skipped))
}

/// Where on the ground truth a screen is, and what the ground truth does there: the first step
/// at or after `from` shown on it, its action with the views where `update` moved them; on a
/// screen the update added, no step and the tap that goes on (none — Back — where it goes on to
/// a screen the task does not go to from here).
/// With `rewind` (a run where the model errs), a screen of an earlier step is that step's again:
/// a needless Back goes back a step, and the demonstration's action there is what is right.
pub(crate) fn truth_on(
    task: &GroundTruth,
    screen: &str,
    from: usize,
    update: Option<&Update>,
    rewind: bool,
) -> (Option<usize>, Option<Truth>) {
    if let Some(update) = update
        && let Some(pass) = update.pass(screen)
    {
        // The way on, where it goes where the task goes; otherwise a screen reached by another
        // way (a wrong tap, someone else's step), which a person leaves by Back.
        let onward = update
            .pass_to(screen)
            .is_some_and(|to| update.pass(to).is_some() || step_at(task, to, from).is_some());
        return (None, onward.then_some(Truth::Tap(pass)));
    }
    let at = step_at(task, screen, from).or_else(|| step_at(task, screen, 0).filter(|_| rewind));
    let truth = at.map(|i| {
        let moved = |b: &[[i64; 2]; 2]| update.map_or(*b, |u| u.bounds(screen, *b));
        match &task.steps[i].1 {
            Truth::Tap(b) => Truth::Tap(moved(b)),
            Truth::Type(b, text) => Truth::Type(moved(b), text.clone()),
            other => other.clone(),
        }
    });
    (at, truth)
}

/// Where on the ground truth a screen is: the first step at or after `from` shown on it.
pub(crate) fn step_at(task: &GroundTruth, screen: &str, from: usize) -> Option<usize> {
    (from..task.steps.len()).find(|&i| task.steps[i].0.iter().any(|s| s == screen))
}

/// How far the ideal model is through a task: the step it expects next, the input step whose
/// field it already tapped, and its calls so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IdealProgress {
    /// The first ground-truth step it may be on.
    pub from: usize,
    /// The input step whose field it tapped (its text is typed next).
    pub tapped: Option<usize>,
    /// Answers given.
    pub calls: usize,
    /// The steps it erred on (bit i: step i), with `--mistakes`: each at most once a run.
    pub erred: u64,
    /// What it does next because of a mistake on the step before (a switch to flip back, a
    /// detour to go on with…).
    pub then: Option<crate::mistakes::Then>,
}
