//! The exploration queue as files (seed 001 §3.3): each candidate action of a state is a task
//! file in the state's `todos/`; taking it renames it into `processing/`, finishing it into
//! `completed/`. A rename is atomic, so after a crash or Ctrl-C every task is in exactly one
//! place, and the tasks left in `processing/` (the ones under way) go back to `todos/` on restart:
//! the exploration resumes where it stopped, nothing done twice, nothing lost.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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

fn path(state_dir: &Path, place: Place, id: &str) -> PathBuf {
    state_dir.join(place.dir()).join(format!("{id}.json"))
}

/// Whole or absent, never half (temporary file and rename); not fsynced: a power cut may bring
/// a task back to an earlier place, and a task done again is harmless where one lost is not.
fn write(path: &Path, task: &Task) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(task).map_err(std::io::Error::other)?;
    atlas_store::files::write_atomic(path, &bytes, false)
}

/// Writes a new task into `todos/`.
pub fn add(state_dir: &Path, task: &Task) -> std::io::Result<()> {
    fs::create_dir_all(state_dir.join("todos"))?;
    write(&path(state_dir, Place::Todos, &task.id), task)
}

/// Moves a task from `from` to `to` with its new status: the new content is written in place
/// first, then the file renamed, so the file is whole wherever a crash finds it.
pub fn move_task(state_dir: &Path, task: &Task, from: Place, to: Place) -> std::io::Result<()> {
    let old = path(state_dir, from, &task.id);
    write(&old, task)?;
    fs::create_dir_all(state_dir.join(to.dir()))?;
    fs::rename(&old, path(state_dir, to, &task.id))
}

/// The tasks of a state in one place.
pub fn read(state_dir: &Path, place: Place) -> std::io::Result<Vec<Task>> {
    let mut tasks = Vec::new();
    let Ok(entries) = fs::read_dir(state_dir.join(place.dir())) else {
        return Ok(tasks);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = fs::read(entry.path())?;
        match serde_json::from_slice::<Task>(&bytes) {
            Ok(task) => tasks.push(task),
            Err(e) => tracing::warn!("{}: not a task ({e}); left alone", entry.path().display()),
        }
    }
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(tasks)
}

/// Puts the tasks a stopped run left under way back into `todos/`; returns how many.
pub fn recover(state_dir: &Path) -> std::io::Result<usize> {
    let stuck = read(state_dir, Place::Processing)?;
    for task in &stuck {
        let back = Task {
            status: "pending".into(),
            ..task.clone()
        };
        move_task(state_dir, &back, Place::Processing, Place::Todos)?;
    }
    Ok(stuck.len())
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
        };
        add(dir.path(), &task).unwrap();
        let taken = Task {
            status: "processing".into(),
            ..task.clone()
        };
        move_task(dir.path(), &taken, Place::Todos, Place::Processing).unwrap();
        assert!(read(dir.path(), Place::Todos).unwrap().is_empty());
        assert_eq!(recover(dir.path()).unwrap(), 1);
        let back = read(dir.path(), Place::Todos).unwrap();
        assert_eq!(back, vec![task]);
        assert!(read(dir.path(), Place::Processing).unwrap().is_empty());
    }
}
