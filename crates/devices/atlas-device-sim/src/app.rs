//! A recorded app: the screens a DroidBot run saved (`states/*.json`, full view trees) and the
//! transitions its events recorded (`events/*.json`: a click or typing on a view, a key, from one
//! screen to another), as DroidBot and DroidTask's demonstrations write them.

use std::collections::HashMap;
use std::path::Path;

use crate::SimError;

use serde::Deserialize;

use atlas_droidbot::EventFile;
pub use atlas_droidbot::View;

/// One recorded screen.
#[derive(Debug, Clone, Deserialize)]
pub struct Screen {
    /// The recording's id of the screen (DroidBot's `state_str`).
    pub state_str: String,
    /// What people call the screen (a graph's page name), when known.
    #[serde(default)]
    pub name: Option<String>,
    /// `package/activity` of the app in front.
    #[serde(default)]
    pub foreground_activity: String,
    /// The screen's width in pixels.
    #[serde(default)]
    pub width: u32,
    /// The screen's height in pixels.
    #[serde(default)]
    pub height: u32,
    /// The screen's views, as the recording dumped them.
    #[serde(default)]
    pub views: Vec<View>,
}

/// What moves the app from one screen to another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// A tap on the view with these bounds.
    Tap([[i64; 2]; 2]),
    /// This text typed into the view with these bounds.
    Type([[i64; 2]; 2], String),
    /// A key, by DroidBot's name (`BACK`).
    Key(String),
}

/// An app's version, as `dumpsys package` reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AppVersion {
    /// `versionName`.
    pub name: String,
    /// `versionCode`.
    pub code: u64,
}

/// A recording is of the app's first version, unless an update made it another.
impl Default for AppVersion {
    fn default() -> AppVersion {
        AppVersion {
            name: "1.0".into(),
            code: 1,
        }
    }
}

/// A recorded app, ready to replay.
#[derive(Clone)]
pub struct RecordedApp {
    /// The app's package.
    pub package: String,
    /// Its version.
    pub version: AppVersion,
    /// Every recorded screen, by `state_str`.
    pub screens: HashMap<String, Screen>,
    /// Where each trigger on each screen leads (screen, trigger) → screen.
    pub transitions: HashMap<(String, Trigger), String>,
    /// The first screen after a start of the app.
    pub launch: String,
    /// Every screen a recorded start of the app led to, `launch` first: a start may show a
    /// one-off screen (a permission, a welcome) the first time and the app's own later.
    pub starts: Vec<String>,
    /// The launcher the runs started from, if one was recorded.
    pub home: Option<String>,
}

/// The recordings under `dir`: itself when it is one (`states/`), else its sub-folders that
/// are (DroidTask's `user_tasks`, or the DroidTask folder holding it), in name order.
pub fn recording_folders(dir: &Path) -> Result<Vec<std::path::PathBuf>, SimError> {
    if dir.join("states").is_dir() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let root = if dir.join("user_tasks").is_dir() {
        dir.join("user_tasks")
    } else {
        dir.to_path_buf()
    };
    let mut found: Vec<_> = std::fs::read_dir(&root)
        .map_err(|source| SimError::Read {
            path: root.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("states").is_dir())
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(SimError::Incomplete {
            path: dir.to_path_buf(),
            what: "no recordings (folders with states/)",
        });
    }
    Ok(found)
}

impl RecordedApp {
    /// Reads a DroidBot output folder (`states/`, `events/`).
    pub fn read(dir: &Path) -> Result<RecordedApp, SimError> {
        let mut screens = HashMap::new();
        for path in json_files(&dir.join("states"))? {
            let screen: Screen = read_json(&path)?;
            screens.insert(screen.state_str.clone(), screen);
        }
        if screens.is_empty() {
            return Err(SimError::Incomplete {
                path: dir.to_path_buf(),
                what: "no states/*.json",
            });
        }
        let mut transitions = HashMap::new();
        let (mut launch, mut home) = (None, None);
        let mut starts: Vec<String> = Vec::new();
        for path in json_files(&dir.join("events"))? {
            // A run stopped mid-write leaves an empty or cut event file: that event is lost,
            // the rest of the recording stands.
            let file: EventFile = match read_json(&path) {
                Ok(file) => file,
                Err(e) => {
                    tracing::warn!("{e}: event skipped");
                    continue;
                }
            };
            let (Some(start), Some(stop)) = (file.start_state, file.stop_state) else {
                continue;
            };
            if !screens.contains_key(&start) || !screens.contains_key(&stop) {
                continue;
            }
            let bounds = file.event.view.as_ref().and_then(|v| v.bounds);
            let trigger = match (file.event.event_type.as_str(), bounds) {
                ("click" | "touch", Some(b)) => Trigger::Tap(b),
                ("set_text", Some(b)) => Trigger::Type(b, file.event.text.unwrap_or_default()),
                ("key", _) => Trigger::Key(file.event.name.unwrap_or_default()),
                ("intent", _) => {
                    launch.get_or_insert(stop.clone());
                    if !starts.contains(&stop) {
                        starts.push(stop);
                    }
                    continue;
                }
                ("kill_app", _) => {
                    home.get_or_insert(start);
                    continue;
                }
                _ => continue,
            };
            transitions.insert((start, trigger), stop);
        }
        let launch = launch
            .or_else(|| transitions.keys().next().map(|(s, _)| s.clone()))
            .ok_or_else(|| SimError::Incomplete {
                path: dir.to_path_buf(),
                what: "no recorded start of the app",
            })?;
        let package = screens[&launch]
            .foreground_activity
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        if starts.is_empty() {
            starts.push(launch.clone());
        }
        Ok(RecordedApp {
            package,
            version: AppVersion::default(),
            screens,
            transitions,
            launch,
            starts,
            home,
        })
    }
}

fn json_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, SimError> {
    let entries = std::fs::read_dir(dir).map_err(|source| SimError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SimError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| SimError::Json {
        path: path.to_path_buf(),
        source,
    })
}
