//! The DroidTask benchmark's files (AutoDroid, MobiCom 2024): per app, a random exploration
//! (`raw_utgs/<app>.yaml`) and tasks demonstrated by people (`user_tasks/<app>/taskN.yaml`).
//! Both are lists of records: the screen, the element acted on (`Choice`, -1 = done) and the
//! text typed (`Input`, `'null'` for a tap).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ImportError;
use crate::recording::{RecordedAction, RecordedStep, Recording};
use crate::state_html::{Element, parse_screen, title};

#[derive(Deserialize)]
struct RawFile {
    records: Vec<RawRecord>,
    #[serde(default)]
    task_name: Option<String>,
}

#[derive(Deserialize)]
struct RawRecord {
    #[serde(rename = "Choice")]
    choice: i64,
    #[serde(rename = "Input", default)]
    input: Option<serde_yaml::Value>,
    #[serde(rename = "State")]
    state: String,
    #[serde(default)]
    new_state_str: String,
}

/// What was done on a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepAction {
    /// A tap on the screen's element at this index.
    Tap(usize),
    /// This text typed into the element at this index.
    Input(usize, String),
    /// The task is done on this screen.
    Finish,
}

/// One screen and what was done on it.
#[derive(Debug, Clone)]
pub struct Step {
    /// The screen's elements, as its State HTML lists them.
    pub screen: Vec<Element>,
    /// What was done on it.
    pub action: StepAction,
    /// DroidTask's content hash of the screen (`new_state_str`).
    pub content_hash: String,
}

impl Step {
    /// The element acted on, if any.
    pub fn element(&self) -> Option<&Element> {
        match &self.action {
            StepAction::Tap(i) | StepAction::Input(i, _) => {
                self.screen.iter().find(|e| e.index == *i)
            }
            StepAction::Finish => None,
        }
    }
}

/// A recorded run: the exploration or one demonstrated task.
#[derive(Debug, Clone)]
pub struct Trace {
    /// `exploration` or the task file's stem (`task3`).
    pub name: String,
    /// The instruction, for a task.
    pub task: Option<String>,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

impl Trace {
    /// The trace in the shape every reader produces: widgets `{id: index, text: label, type: tag}`.
    pub fn recording(&self) -> Recording {
        Recording {
            name: self.name.clone(),
            task: self.task.clone(),
            steps: self.steps.iter().map(Step::recorded).collect(),
        }
    }
}

impl Step {
    /// The step as a recording's: the screen's widgets and the action on one of them.
    pub fn recorded(&self) -> RecordedStep {
        let position = |index: &usize| {
            self.screen
                .iter()
                .position(|e| e.index == *index)
                .unwrap_or(usize::MAX)
        };
        let action = match &self.action {
            // The Back key is an element of DroidTask's screens; to an agent it is the Back key.
            StepAction::Tap(i) if self.element().is_some_and(Element::is_back_key) => {
                RecordedAction::Back
            }
            StepAction::Tap(i) => RecordedAction::Tap(position(i)),
            StepAction::Input(i, text) => RecordedAction::Input(position(i), text.clone()),
            StepAction::Finish => RecordedAction::Finish,
        };
        RecordedStep {
            title: title(&self.screen),
            widgets: self.screen.iter().map(Element::widget).collect(),
            action,
        }
    }
}

/// One app's recordings.
#[derive(Debug, Clone)]
pub struct App {
    /// The app's folder name (`calendar`).
    pub name: String,
    /// Its random exploration.
    pub exploration: Trace,
    /// Its demonstrated tasks.
    pub tasks: Vec<Trace>,
}

fn read_trace(path: &Path, name: String) -> Result<Trace, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ImportError::io(path, e))?;
    let raw: RawFile =
        serde_yaml::from_str(&text).map_err(|e| ImportError::unreadable(path, "", e))?;
    let mut steps = Vec::with_capacity(raw.records.len());
    for (n, record) in raw.records.into_iter().enumerate() {
        let screen = parse_screen(&record.state)
            .map_err(|e| ImportError::unreadable(path, &format!("record {n}"), e))?;
        let input = match record.input {
            None | Some(serde_yaml::Value::Null) => None,
            Some(serde_yaml::Value::String(s)) if s == "null" => None,
            Some(serde_yaml::Value::String(s)) => Some(s),
            Some(other) => Some(
                serde_yaml::to_string(&other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            ),
        };
        let action = match (record.choice, input) {
            (c, _) if c < 0 => StepAction::Finish,
            (c, None) => StepAction::Tap(c as usize),
            (c, Some(text)) => StepAction::Input(c as usize, text),
        };
        if let StepAction::Tap(i) | StepAction::Input(i, _) = &action
            && !screen.iter().any(|e| e.index == *i)
        {
            return Err(ImportError::format(
                path,
                format!("record {n} acts on element {i}, which its screen lacks"),
            ));
        }
        steps.push(Step {
            screen,
            action,
            content_hash: record.new_state_str,
        });
    }
    Ok(Trace {
        name,
        task: raw.task_name.map(|t| t.trim().to_string()),
        steps,
    })
}

/// The number in `task12.yaml`, for natural order.
fn task_number(path: &Path) -> Option<u32> {
    path.file_stem()?
        .to_str()?
        .strip_prefix("task")?
        .parse()
        .ok()
}

/// Reads one app of a DroidTask folder (`raw_utgs/` and `user_tasks/` below `root`).
pub fn read_app(root: &Path, app: &str) -> Result<App, ImportError> {
    let mut exploration = read_trace(
        &root.join("raw_utgs").join(format!("{app}.yaml")),
        "exploration".into(),
    )?;
    // Some explorations carry a task_name ("utg", or a goal the random walk was seeded with);
    // a random walk demonstrates no instruction, so it is taught as plain steps.
    exploration.task = None;
    let task_dir = root.join("user_tasks").join(app);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&task_dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| task_number(p).is_some())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(ImportError::io(&task_dir, e)),
    };
    files.sort_by_key(|p| task_number(p));
    let tasks = files
        .iter()
        .map(|p| {
            read_trace(
                p,
                p.file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(App {
        name: app.to_string(),
        exploration,
        tasks,
    })
}

/// Every app of a DroidTask folder: those with an exploration in `raw_utgs/`, by name.
pub fn read_all(root: &Path) -> Result<Vec<App>, ImportError> {
    let dir = root.join("raw_utgs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| ImportError::io(&dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.path()
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
                .filter(|_| e.path().extension().is_some_and(|x| x == "yaml"))
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(ImportError::format(
            &dir,
            "no <app>.yaml explorations: not a DroidTask folder".into(),
        ));
    }
    names.iter().map(|n| read_app(root, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev_data() -> Option<PathBuf> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
        p.exists().then_some(p)
    }

    #[test]
    fn reads_a_task_with_taps_an_input_and_a_finish() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("raw_utgs")).unwrap();
        std::fs::create_dir_all(dir.path().join("user_tasks/cal")).unwrap();
        let screen = "<p id=0>Calendar</p>\n <button id=1 text='New Event'></button>\n <input id=2 >Title</input>\n <button id=3>go back</button>";
        let record = |choice: i64, input: &str| {
            format!(
                "- Choice: {choice}\n  Input: {input}\n  State: \"{}\"\n  new_state_str: abc\n",
                screen.replace('\n', "\\n")
            )
        };
        std::fs::write(
            dir.path().join("raw_utgs/cal.yaml"),
            format!("records:\n{}{}", record(1, "'null'"), record(3, "'null'")),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("user_tasks/cal/task2.yaml"),
            format!(
                "records:\n{}{}{}step_num: 3\ntask_name: create 'laundry'\n",
                record(1, "'null'"),
                record(2, "laundry"),
                record(-1, "'null'")
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("user_tasks/cal/task10.yaml"),
            format!("records:\n{}task_name: other\n", record(-1, "'null'")),
        )
        .unwrap();
        let apps = read_all(dir.path()).unwrap();
        assert_eq!(apps.len(), 1);
        let app = &apps[0];
        assert_eq!(app.exploration.steps.len(), 2);
        assert_eq!(
            app.tasks
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["task2", "task10"]
        );
        let task = &app.tasks[0];
        assert_eq!(task.task.as_deref(), Some("create 'laundry'"));
        assert_eq!(task.steps[0].action, StepAction::Tap(1));
        assert_eq!(task.steps[1].action, StepAction::Input(2, "laundry".into()));
        assert_eq!(task.steps[2].action, StepAction::Finish);
        assert_eq!(task.steps[1].element().unwrap().label(), "Title");
        // A choice naming an element the screen lacks is refused.
        std::fs::write(
            dir.path().join("user_tasks/cal/task3.yaml"),
            format!("records:\n{}", record(9, "'null'")),
        )
        .unwrap();
        assert!(
            read_all(dir.path())
                .unwrap_err()
                .to_string()
                .contains("lacks")
        );
    }

    #[test]
    fn reads_the_development_folder_when_present() {
        let Some(root) = dev_data() else { return };
        let apps = read_all(&root).unwrap();
        assert_eq!(apps.len(), 7);
        let tasks: usize = apps.iter().map(|a| a.tasks.len()).sum();
        assert_eq!(tasks, 93);
        assert!(apps.iter().all(|a| !a.exploration.steps.is_empty()));
    }
}
