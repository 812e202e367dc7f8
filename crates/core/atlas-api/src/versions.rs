//! Versions of an app (see `atlas_model::versions`): a release recorded with what was checked in
//! it, and what changed between two.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use atlas_model::{
    AppDiff, AppVersion, DiffPage, DiffTransition, IntentChanges, IntentPathChange, PageChange,
    PageChanges, TransitionChanges, VersionSource,
};

/// `record_app_version`: a version of an app, and what was found in it: pages and transitions
/// seen in it (checked, unchanged: an explorer does not act again where it knows the outcome),
/// and those a check found gone. A gone page takes its transitions and the intents it serves
/// with it; nothing is deleted.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RecordAppVersionRequest {
    /// The app.
    pub app_id: String,
    /// The version's name (`2.6.0`); a new one becomes the app's current version.
    pub version: String,
    /// Where the name came from (default `reported`).
    #[serde(default)]
    pub source: Option<VersionSource>,
    /// Pages seen in this version (their ids).
    #[serde(default)]
    pub seen_pages: Vec<String>,
    /// Transitions seen in this version (their ids).
    #[serde(default)]
    pub seen_transitions: Vec<String>,
    /// Pages this version was found without (their ids).
    #[serde(default)]
    pub gone_pages: Vec<String>,
    /// Transitions this version was found without (their ids).
    #[serde(default)]
    pub gone_transitions: Vec<String>,
}

/// What `record_app_version` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecordAppVersionResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// The app's current version after the call.
    pub current_version: String,
    /// Whether the version was new to the app.
    pub new_version: bool,
    /// Pages, transitions and intents marked seen in the version (that were not yet).
    pub marked_seen: usize,
    /// Pages, transitions and intents marked gone (with what went with the pages named).
    pub marked_gone: usize,
}

/// `get_app_diff`: what changed between two versions of an app.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct AppDiffRequest {
    /// The app.
    pub app_id: String,
    /// The older version (default: the one before `to_version`).
    #[serde(default)]
    pub from_version: Option<String>,
    /// The newer version (default: the current one).
    #[serde(default)]
    pub to_version: Option<String>,
}
