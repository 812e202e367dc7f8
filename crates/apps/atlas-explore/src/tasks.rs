//! The exploration queue as files (seed 001 §3.3): each candidate action of a state is a task
//! file in the state's `todos/`; taking it moves it into `processing/`, finishing it into
//! `completed/`. The files are the page's own ([`atlas_store::files::Artifacts`]): in its folder
//! on a data folder, where a move is a rename and so atomic, or in a database's files table. A
//! crash leaves every task in one place, or (where a move is a copy and a removal) in two, which
//! [`recover`] settles for the place further on; the tasks left in `processing/` (the ones under
//! way) go back to `todos/` on restart: the exploration resumes where it stopped, nothing done
//! twice, nothing lost.

use std::collections::HashSet;

use atlas_store::StoreError;
use atlas_store::files::Files;
use serde::{Deserialize, Serialize};

use atlas_browser::template::normalize_url;

/// One candidate action of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Its id.
    pub id: String,
    /// The element it acts on.
    pub selector: String,
    /// click, type, navigate or scroll.
    pub action: String,
    /// The action's parameters.
    #[serde(default)]
    pub parameters: serde_json::Value,
    /// 1..10, higher first.
    pub priority: u8,
    /// Why it is a candidate.
    #[serde(default)]
    pub reason: String,
    /// It would delete, pay, order, sign out or create content.
    #[serde(default)]
    pub is_destructive: bool,
    /// When it was queued (RFC 3339).
    pub created_at: String,
    /// pending, processing, completed or failed.
    pub status: String,
    /// Beyond the seed: what came of it (the state it led to, or why it failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Beyond the seed: the route template it leads to, where the task says beforehand (a
    /// link's target, a form sent by GET); a task that leads to a kind of page already known
    /// waits behind those that may lead to a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leads_to: Option<String>,
}

/// What identifies a task across releases: its action, its label, and what it sends — where a
/// link leads, where a form posts with which fields — else its element. Two releases' tasks of
/// one key do the same thing, so the outcome known of one is the other's: a link moved elsewhere
/// on the page, or a page around a form that changed, leaves it the same.
pub fn task_key(task: &Task) -> String {
    action_key(&task.action, &task.selector, &task.parameters)
}

/// The key of an action (a task, or a step of a recorded way) across releases: see
/// [`task_key`].
pub fn action_key(action: &str, selector: &str, p: &serde_json::Value) -> String {
    let label = p["label"].as_str().unwrap_or_default();
    let place = match (p["href"].as_str(), p["fields"].as_array()) {
        (Some(href), _) => normalize_url(href),
        (None, Some(fields)) => {
            // Fields by the names they are sent under: their selectors are the page's layout.
            let mut sent: Vec<String> = fields
                .iter()
                .map(|f| {
                    format!(
                        "{}:{}",
                        f["name"].as_str().unwrap_or_default(),
                        f["type"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            sent.sort();
            format!(
                "{} {}",
                p["action"].as_str().map(normalize_url).unwrap_or_default(),
                sent.join(",")
            )
        }
        (None, None) => selector.to_string(),
    };
    format!("{action}\u{1f}{label}\u{1f}{place}")
}

/// Where a task file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `todos/`: waiting.
    Todos,
    /// `processing/`: a tab is on it.
    Processing,
    /// `completed/`: done or failed.
    Completed,
}

impl Place {
    fn dir(self) -> &'static str {
        match self {
            Place::Todos => "todos",
            Place::Processing => "processing",
            Place::Completed => "completed",
        }
    }
}

fn name(place: Place, id: &str) -> String {
    format!("{}/{id}.json", place.dir())
}

/// Whole or absent, never half; not made durable at once: a power cut may bring a task back to
/// an earlier place, and a task done again is harmless where one lost is not.
fn write(files: &dyn Files, name: &str, task: &Task) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(task).map_err(|e| StoreError::caused("", e))?;
    files.write_soon(name, &bytes)
}

/// Writes a new task into `todos/`.
pub fn add(files: &dyn Files, task: &Task) -> Result<(), StoreError> {
    write(files, &name(Place::Todos, &task.id), task)
}

/// Moves a task from `from` to `to` with its new status: the new content is written in place
/// first, then the file moved, so the file is whole wherever a crash finds it.
pub fn move_task(files: &dyn Files, task: &Task, from: Place, to: Place) -> Result<(), StoreError> {
    let old = name(from, &task.id);
    write(files, &old, task)?;
    files.rename(&old, &name(to, &task.id))
}

/// Removes the task `id` from `place`.
pub fn discard(files: &dyn Files, place: Place, id: &str) -> Result<(), StoreError> {
    files.remove(&name(place, id))
}

/// The tasks of a state in one place, by id.
pub fn read(files: &dyn Files, place: Place) -> Result<Vec<Task>, StoreError> {
    let mut tasks = Vec::new();
    for file in files.list(place.dir())? {
        if !file.ends_with(".json") {
            continue;
        }
        let Some(bytes) = files.read(&file)? else {
            continue;
        };
        match serde_json::from_slice::<Task>(&bytes) {
            Ok(task) => tasks.push(task),
            Err(e) => tracing::warn!("{file}: not a task ({e}); left alone"),
        }
    }
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(tasks)
}

/// Settles what a stopped run left: a task found in two places keeps the one further on, and
/// the tasks under way go back into `todos/`. Returns how many went back.
pub fn recover(files: &dyn Files) -> Result<usize, StoreError> {
    let completed: HashSet<String> = read(files, Place::Completed)?
        .into_iter()
        .map(|t| t.id)
        .collect();
    let mut back = 0;
    for task in read(files, Place::Processing)? {
        if completed.contains(&task.id) {
            discard(files, Place::Processing, &task.id)?;
            continue;
        }
        let pending = Task {
            status: "pending".into(),
            ..task
        };
        move_task(files, &pending, Place::Processing, Place::Todos)?;
        back += 1;
    }
    for task in read(files, Place::Todos)? {
        if completed.contains(&task.id) {
            discard(files, Place::Todos, &task.id)?;
        }
    }
    Ok(back)
}

/// A task of `action` on `selector` not yet numbered nor written (its id `t`): what a check
/// builds to compare with the tasks a page's folder holds.
pub fn pending(selector: &str, action: &str, parameters: serde_json::Value) -> Task {
    Task {
        id: "t".into(),
        selector: selector.into(),
        action: action.into(),
        parameters,
        priority: 5,
        reason: String::new(),
        is_destructive: false,
        created_at: String::new(),
        status: "pending".into(),
        outcome: None,
        leads_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_in_one_place_and_processing_goes_back_on_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let task = Task {
            id: "task_001".into(),
            selector: "#go".into(),
            action: "click".into(),
            parameters: serde_json::json!({}),
            priority: 5,
            reason: "a link".into(),
            is_destructive: false,
            created_at: "2026-01-31T16:10:00Z".into(),
            status: "pending".into(),
            outcome: None,
            leads_to: None,
        };
        let files = atlas_store::files::Folder::new(dir.path());
        let files: &dyn Files = &files;
        add(files, &task).unwrap();
        let taken = Task {
            status: "processing".into(),
            ..task.clone()
        };
        move_task(files, &taken, Place::Todos, Place::Processing).unwrap();
        assert!(read(files, Place::Todos).unwrap().is_empty());
        assert_eq!(recover(files).unwrap(), 1);
        let back = read(files, Place::Todos).unwrap();
        assert_eq!(back, vec![task]);
        assert!(read(files, Place::Processing).unwrap().is_empty());
    }

    #[test]
    fn a_task_a_crash_left_in_two_places_keeps_the_one_further_on() {
        let dir = tempfile::tempdir().unwrap();
        let files = atlas_store::files::Folder::new(dir.path());
        let files: &dyn Files = &files;
        let task = |id: &str, status: &str| Task {
            id: id.into(),
            selector: "#go".into(),
            action: "click".into(),
            parameters: serde_json::json!({}),
            priority: 5,
            reason: String::new(),
            is_destructive: false,
            created_at: "2026-01-31T16:10:00Z".into(),
            status: status.into(),
            outcome: None,
            leads_to: None,
        };
        // A move that copied and did not get to remove: done, and also still under way or waiting.
        for (place, status) in [
            (Place::Processing, "processing"),
            (Place::Completed, "completed"),
        ] {
            write(files, &name(place, "task_001"), &task("task_001", status)).unwrap();
        }
        for (place, status) in [(Place::Todos, "pending"), (Place::Completed, "failed")] {
            write(files, &name(place, "task_002"), &task("task_002", status)).unwrap();
        }
        write(
            files,
            &name(Place::Processing, "task_003"),
            &task("task_003", "processing"),
        )
        .unwrap();
        assert_eq!(recover(files).unwrap(), 1, "only task_003 was under way");
        let ids = |place| -> Vec<String> {
            read(files, place)
                .unwrap()
                .into_iter()
                .map(|t| t.id)
                .collect()
        };
        assert_eq!(ids(Place::Completed), ["task_001", "task_002"]);
        assert_eq!(ids(Place::Todos), ["task_003"]);
        assert!(ids(Place::Processing).is_empty());
    }
}
