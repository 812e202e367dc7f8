//! What the explorer keeps of a site (its states, each with the way to it from the start and its
//! page's files) and what a run reports; read and written by the loop ([`crate::explorer`]) and
//! by the files made for people ([`crate::artifacts`]).

use std::path::PathBuf;
use std::sync::Arc;

use atlas_store::files::Files;
use serde::{Deserialize, Serialize};

use crate::ExploreError;

/// What a run did, and where its time went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExploreReport {
    /// The app the site is kept under.
    pub app_id: String,
    /// Tabs that worked.
    pub tabs: usize,
    /// States known.
    pub states: usize,
    /// States found by this run.
    pub new_states: usize,
    /// Transitions reported.
    pub transitions: usize,
    /// Actions taken.
    pub actions: usize,
    /// Documents the tabs loaded (going to a state, following a link, sending a form).
    pub loads: usize,
    /// Kinds of page known (states not gone): each a route template and its structure.
    pub kinds: usize,
    /// Other addresses kept as examples of a kind.
    pub examples: usize,
    /// Actions that failed.
    pub failed_actions: usize,
    /// Destructive tasks recorded and left undone.
    pub destructive_recorded: usize,
    /// Tasks left in the queue.
    pub pending_tasks: usize,
    /// Tasks a stopped run had under way, put back in the queue.
    pub resumed_tasks: usize,
    /// The run, in seconds.
    pub seconds: f64,
    /// Time in the browser (navigation, reading, acting, screenshots) and in Atlas (the
    /// service's writes, the folder's files, fingerprints), summed over the tabs.
    pub browser_seconds: f64,
    /// Atlas's share.
    pub atlas_seconds: f64,
    /// What ended the run (a budget, or the queue ran dry).
    pub stopped_by: String,
    /// The version of the site the run explored.
    pub version: String,
    /// What the run found of a site the folder knew (a re-exploration), none for a first or
    /// resumed exploration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseReport>,
}

/// What a re-exploration found of the states it knew.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReleaseReport {
    /// The version explored now.
    pub version: String,
    /// The version the states were explored in before.
    pub previous: Option<String>,
    /// Known pages showing the same.
    pub same: usize,
    /// Known pages showing something else (their names).
    pub changed: Vec<String>,
    /// Known pages no way reaches any more (their names): marked gone, kept.
    pub gone: Vec<String>,
    /// Known pages whose recorded way (their navigation script's steps) the release left as it
    /// was.
    pub ways_kept: usize,
    /// Known pages whose way's steps the release moved (their names): the way and its script
    /// now take the new locators ([`crate::routes`]).
    pub ways_repaired: Vec<String>,
    /// Known pages whose way has a step the release no longer offers (their names): the way
    /// and its script now go by the page's address.
    pub ways_replaced: Vec<String>,
}

impl ExploreReport {
    /// New states found a minute.
    pub fn new_states_per_minute(&self) -> f64 {
        self.new_states as f64 * 60.0 / self.seconds.max(1e-9)
    }

    /// The share of page loads that found a new kind of page: how much of the budget went to
    /// what is new.
    pub fn new_load_share(&self) -> f64 {
        self.new_states as f64 / self.loads.max(1) as f64
    }

    /// Atlas's time as a share of Atlas's and the browser's.
    pub fn atlas_share(&self) -> f64 {
        self.atlas_seconds / (self.atlas_seconds + self.browser_seconds).max(1e-9)
    }

    /// What the run found, and where its time went, in two lines.
    pub fn summary(&self) -> String {
        let release = self.release.as_ref().map_or_else(String::new, |r| {
            format!(
                "\nrelease {} (before: {}): {} pages the same, {} changed, {} gone, {} new; \
                 recorded ways: {} kept, {} repaired, {} replaced by the address",
                r.version,
                r.previous.as_deref().unwrap_or("none"),
                r.same,
                r.changed.len(),
                r.gone.len(),
                self.new_states,
                r.ways_kept,
                r.ways_repaired.len(),
                r.ways_replaced.len()
            )
        });
        let runs = format!(
            "explored {}: {} states, kinds of page ({} new; {} other addresses kept as their examples), {} transitions, {} actions ({} failed), \
             {} page loads ({:.0}% of them found a new kind), {} pending, {} destructive recorded and not executed; stopped by {}\n\
             {:.1} s with {} tab(s): {:.1} new states a minute; time in the browser {:.1} s, in Atlas {:.2} s ({:.1}% of the two)",
            self.app_id,
            self.states,
            self.new_states,
            self.examples,
            self.transitions,
            self.actions,
            self.failed_actions,
            self.loads,
            self.new_load_share() * 100.0,
            self.pending_tasks,
            self.destructive_recorded,
            self.stopped_by,
            self.seconds,
            self.tabs,
            self.new_states_per_minute(),
            self.browser_seconds,
            self.atlas_seconds,
            100.0 * self.atlas_share()
        );
        runs + &release
    }
}

/// One step of the way from the root to a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// click, type, navigate or scroll.
    pub action: String,
    /// The element acted on.
    pub selector: String,
    /// The action's parameters (a label, the values typed).
    #[serde(default)]
    pub parameters: serde_json::Value,
}

impl Step {
    /// The step a task is, taken.
    pub fn of(task: &crate::tasks::Task) -> Step {
        Step {
            action: task.action.clone(),
            selector: task.selector.clone(),
            parameters: task.parameters.clone(),
        }
    }
}

/// A state as the explorer keeps it (`.atlas/explore.json` of the site's folder).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    /// Its page in the graph.
    pub page_id: String,
    /// Its page's name.
    pub name: String,
    /// Its page's folder on a data folder, for people to open (none in a database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Its page's files (in its folder, or a database's files table), found when the state is
    /// made or read again; not saved with it.
    #[serde(skip)]
    pub files: PageFiles,
    /// Its DOM fingerprint (seed 001 §6).
    pub fingerprint: String,
    /// What near-duplicates share ([`Identity`]'s key), and the link targets they mostly
    /// share.
    #[serde(default)]
    pub key: String,
    /// The link targets it shows, sorted.
    #[serde(default)]
    pub links: Vec<String>,
    /// Its layout, for grouping alike pages.
    pub template: String,
    /// Its route template: the kind of page it is ([`atlas_browser::template::route_template`]);
    /// computed from its address for a state saved before routes were kept.
    #[serde(default)]
    pub route: String,
    /// Its element structure as tag paths ([`atlas_browser::template::shape`]); read again from its
    /// `dom.json` for a state saved before shapes were kept.
    #[serde(default)]
    pub shape: Vec<u32>,
    /// Other addresses of its kind that showed it (items of a list: rows, tickets, pages), at
    /// most `--max-similar`, also named in its folder's `examples.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Its address.
    pub url: String,
    /// Actions from the start.
    pub depth: u32,
    /// The way to it from the start.
    pub path: Vec<Step>,
    /// Its tasks were queued (not a template seen too often, not at the depth limit).
    pub expanded: bool,
    /// The transitions its tasks led to, by the task's key across releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edges: Vec<Edge>,
    /// A release was found without it (it is kept, and not visited again).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
}

/// An address that showed a state's kind of page (another item of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The address.
    pub url: String,
    /// Its title.
    pub title: String,
}

/// A transition a state's task led to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Edge {
    /// The task's key across releases (`release::task_key`).
    pub key: String,
    /// The page it led to.
    pub to: String,
    /// The transition in the graph.
    pub transition_id: String,
}

/// A state's files ([`Artifacts::page_files`]).
#[derive(Clone, Default)]
pub struct PageFiles(Option<Arc<dyn Files>>);

impl PageFiles {
    /// A state's files.
    pub fn new(files: Arc<dyn Files>) -> PageFiles {
        PageFiles(Some(files))
    }

    /// The files, once they were found.
    pub fn get(&self) -> Result<&dyn Files, ExploreError> {
        self.0
            .as_deref()
            .ok_or_else(|| ExploreError::Invalid("a state without its page's files".into()))
    }
}

impl std::fmt::Debug for PageFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "PageFiles"
        } else {
            "PageFiles(none yet)"
        })
    }
}

/// Whether a run over saved states re-explores them as a release (rather than resuming a run
/// that was stopped): the run before it ended, or the version given is not the one they were
/// explored in.
pub(crate) fn is_release(saved_version: Option<&str>, ended: bool, given: Option<&str>) -> bool {
    ended || given.is_some_and(|g| saved_version != Some(g))
}
