//! Setups written whole: the demo app and the imports are built on a scratch graph in memory,
//! through the same interfaces an agent uses, then written here as one atomic append.
//!
//! A setup makes hundreds of writes. Made one by one on the real store, a stop between two of
//! them (a Ctrl-C during the first `serve --demo`, a deploy during an import) leaves half a
//! setup that looks whole: an app of 3 pages that a second start takes for the demo and keeps.
//! Built on [`Atlas::scratch`] and written by [`Atlas::add_missing`] or [`Atlas::write_changes`],
//! the store holds the whole setup or nothing of it, and a setup found incomplete (one an older
//! Atlas left half made) is completed by writing what it lacks.

use std::sync::Arc;

use atlas_model::Result;
use atlas_store::AppData;
use atlas_store::scratch::Scratch;

use crate::{Atlas, CheckpointPolicy, ImportSummary};

/// What a setup's app lacks in the graph, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    /// Pages of the setup the graph lacks, of all it has.
    pub pages: (usize, usize),
    /// Transitions, the same way.
    pub transitions: (usize, usize),
    /// Intents, the same way.
    pub intents: (usize, usize),
}

impl Missing {
    /// Whether the graph lacks nothing of the setup.
    pub fn is_none(&self) -> bool {
        self.pages.0 + self.transitions.0 + self.intents.0 == 0
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p, t, i) = (self.pages, self.transitions, self.intents);
        write!(
            f,
            "{} of {} pages, {} of {} transitions and {} of {} intents missing",
            p.0, p.1, t.0, t.1, i.0, i.1
        )
    }
}

impl Atlas {
    /// A graph in memory with this one's embedder, whose writes go nowhere: a setup is built on
    /// it, then written here whole.
    pub fn scratch(&self) -> Result<Arc<Atlas>> {
        Atlas::scratch_with(self.embedder.clone())
    }

    /// A scratch graph with `embedder`: the entities a setup makes are the same whatever embeds
    /// them (vectors are the indexes', never the records'), so a setup whose steps search
    /// nothing is built fastest on the lexical one.
    pub fn scratch_with(embedder: Arc<dyn atlas_text::Embedder>) -> Result<Arc<Atlas>> {
        Atlas::open_saying(
            Arc::new(Scratch),
            embedder,
            CheckpointPolicy::default(),
            false,
        )
    }

    /// What this graph lacks of `built`, an app made on a scratch graph.
    pub fn missing(&self, built: &AppData) -> Missing {
        let Ok(current) = self.export_app(&built.app.app_id) else {
            return Missing {
                pages: (built.pages.len(), built.pages.len()),
                transitions: (built.transitions.len(), built.transitions.len()),
                intents: (built.intents.len(), built.intents.len()),
            };
        };
        let lacking = |built: usize, new: usize| (new, built);
        Missing {
            pages: lacking(
                built.pages.len(),
                count_new(&built.pages, &current.pages, |p| &p.page_id),
            ),
            transitions: lacking(
                built.transitions.len(),
                count_new(&built.transitions, &current.transitions, |t| {
                    &t.transition_id
                }),
            ),
            intents: lacking(
                built.intents.len(),
                count_new(&built.intents, &current.intents, |i| &i.intent_id),
            ),
        }
    }

    /// Writes, as one atomic append, the entities of `built` that this graph's app lacks (all of
    /// them where it has no such app): what the graph holds already stays as it is, agents'
    /// statistics included. Nothing when it lacks nothing.
    pub async fn add_missing(&self, built: AppData) -> Result<Option<ImportSummary>> {
        let Ok(current) = self.export_app(&built.app.app_id) else {
            return self.import_app(built).await.map(Some);
        };
        let lacking = AppData {
            app: current.app.clone(),
            pages: only_new(built.pages, &current.pages, |p| &p.page_id),
            intents: only_new(built.intents, &current.intents, |i| &i.intent_id),
            transitions: only_new(built.transitions, &current.transitions, |t| {
                &t.transition_id
            }),
            traces: only_new(built.traces, &current.traces, |t| &t.trace_id),
        };
        if lacking.pages.is_empty()
            && lacking.intents.is_empty()
            && lacking.transitions.is_empty()
            && lacking.traces.is_empty()
        {
            return Ok(None);
        }
        self.import_app(lacking).await.map(Some)
    }

    /// Writes, as one atomic append, what a setup changed: the entities of `after` that differ
    /// from `before` (the app as the scratch graph was given it) or are new.
    pub async fn write_changes(&self, before: &AppData, after: AppData) -> Result<ImportSummary> {
        let changed = AppData {
            app: after.app,
            pages: only_changed(after.pages, &before.pages, |p| &p.page_id),
            intents: only_changed(after.intents, &before.intents, |i| &i.intent_id),
            transitions: only_changed(after.transitions, &before.transitions, |t| &t.transition_id),
            traces: only_changed(after.traces, &before.traces, |t| &t.trace_id),
        };
        self.import_app(changed).await
    }
}

/// How many items of `built` have a key none of `held` has.
fn count_new<T>(built: &[T], held: &[T], key: impl Fn(&T) -> &String) -> usize {
    let held: std::collections::HashSet<&String> = held.iter().map(&key).collect();
    built
        .iter()
        .filter(|item| !held.contains(key(item)))
        .count()
}

/// The items of `built` whose key none of `held` has.
fn only_new<T>(built: Vec<T>, held: &[T], key: impl Fn(&T) -> &String) -> Vec<T> {
    let held: std::collections::HashSet<&String> = held.iter().map(&key).collect();
    built
        .into_iter()
        .filter(|item| !held.contains(key(item)))
        .collect()
}

/// The items of `after` that `before` lacks or holds otherwise.
fn only_changed<T: PartialEq>(after: Vec<T>, before: &[T], key: impl Fn(&T) -> &String) -> Vec<T> {
    let before: std::collections::HashMap<&String, &T> =
        before.iter().map(|item| (key(item), item)).collect();
    after
        .into_iter()
        .filter(|item| before.get(key(item)).is_none_or(|was| *was != item))
        .collect()
}
