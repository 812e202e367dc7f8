//! The Atlas service: seed 000's interfaces over the in-memory graph, made durable by a [`Store`].
//!
//! Every interface is one method of [`Atlas`] with a typed request (whose JSON Schema is derived
//! from the type) and a typed response; the tool registry (`atlas-registry`, above this crate)
//! registers each once, and the HTTP routes, the MCP tools and the chat page all serve it.
//!
//! Key design decision: **a write changes memory and enqueues its journal record under one lock,
//! then waits for durability outside it.** Order in the journal therefore equals order in
//! memory, concurrent writers share a group-committed fsync instead of queueing behind each
//! other's, and an answer of success is only sent once the record is on disk. Reads never wait for
//! the disk at all. A write the store then refuses is undone by reading the state again from
//! what is durable before the refusal is answered (`recovery.rs`).
//!
//! Each use case is one file, one step from here:
//!
//! | use case | interfaces | file |
//! |---|---|---|
//! | pages in: recognised, matched, added | `match_current_page`, `add_page`, `get_available_actions`, `observe_screen`'s recognition | `pages.rs` |
//! | learning from an agent's steps | `report_transition`, `end_session`, `register_intent`, `batch_add_transitions`, checks | `learn.rs` |
//! | where to go and what to do next | `query_path`, `get_next_action`, `get_rag_context`, the planner's map | `navigation.rs` |
//! | remembered ways | `get_ways`, `forget_way` | `ways.rs` |
//! | releases of an app | `record_app_version`, `get_app_diff` | `versions.rs` |
//! | the graph as a viewer draws it | `get_app_graph`, `get_page_details`, screenshots | `view.rs` |
//! | statistics and similar intents | `get_graph_stats`, `find_similar_intents` | `stats.rs` |
//! | one app's graph out and in | `export_app`, `import_app` | `transfer.rs` |
//! | test runs for the runs page | `report_test_run`, `get_test_runs` | `test_runs.rs` |
//! | what is learnt, live | `events`, recent activity | `events.rs`, `activity.rs` |
//!
//! And beneath them: the one write path (`writes.rs`), checkpoints and the disk
//! (`checkpoints.rs`), a refused write undone (`recovery.rs`), replicas followed
//! (`replicas.rs`), the in-memory state (`state.rs`).

// The use cases, each an `impl Atlas` of its own (see the table above).
mod learn;
mod navigation;
mod pages;
mod stats;
pub mod test_runs;
mod transfer;
mod versions;
mod view;
mod ways;

// What the use cases stand on.
pub mod activity;
mod artifacts;
mod checkpoints;
mod demo;
pub mod events;
mod recovery;
mod replicas;
mod setup;
mod state;
mod writes;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use atlas_graph::Graph;
use atlas_model::{AtlasError, Result};
use atlas_store::{Store, StoreError};
use atlas_text::Embedder;
use parking_lot::{Mutex, RwLock};

pub use atlas_navigate::{
    AlternativePath, Basis, CandidateAction, FEATURES as GROUND_FEATURES, FailedCase,
    GroundingModel, HistoricalCases, MAX_ROUTE_STEPS, MAX_ROUTES, MapRoute, NextAction,
    NextActionRequest, NextActionResponse, PageSummary, PathInfo, PathStep, QueryPathRequest,
    QueryPathResponse, RagContext, RagContextRequest, RagContextResponse, RecommendedPath,
    RelevantPage, SuccessfulCase, SuggestedAction, doubt_in_english,
};
pub use checkpoints::{CheckpointHealth, CheckpointPolicy, MAX_CHECKPOINT_BACKOFF};
pub use demo::{DEMO_APP_ID, DemoInstall, demo_app, demo_graph};
pub use learn::*;
pub use pages::*;
pub use setup::Missing;
pub use stats::*;
pub use transfer::ImportSummary;
pub use versions::*;
pub use view::*;
pub use ways::*;

use atlas_navigate::DocTexts;
use state::State;

/// The knowledge-graph service.
pub struct Atlas {
    state: RwLock<State>,
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    /// Label meanings for grounding, from the graph's embedder when it is e5.
    meaning: atlas_navigate::Meaning,
    /// A grounding model the operator fitted on their own apps, used instead of the shipped one.
    grounding: std::sync::OnceLock<GroundingModel>,
    /// Serialises checkpoints (the periodic one, an early one, the one at shutdown).
    checkpointing: Mutex<()>,
    /// How the last checkpoints went, for `/healthz` and the checkpointer's back-off.
    checkpoints: Mutex<CheckpointHealth>,
    policy: CheckpointPolicy,
    nudge: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    /// What was learned, for live viewers (`GET /api/v1/events`); see [`Atlas::events`].
    events: tokio::sync::broadcast::Sender<serde_json::Value>,
    /// The reports of the last hour, for viewers.
    activity: activity::Activity,
    /// Test runs as their runners report them, for the viewer's runs page.
    test_runs: test_runs::TestRuns,
    /// Asks for a big app's route tree: handed to each graph the state is read into.
    tree_wanted: atlas_graph::TreeWanted,
    /// When writes were last tried again after the store refused them (see
    /// [`Atlas::writes_ready`]).
    resumed_at: Mutex<Option<Instant>>,
}

/// A store's error as the service answers it, the one mapping of [`StoreError`]: 503 for a
/// refusal for now (the database away, the disk full: nothing was written; try again), else a
/// fault of ours while doing `what`.
fn store_failure(what: &str, e: StoreError) -> AtlasError {
    match e.is_transient() {
        true => AtlasError::away(what, e),
        false => AtlasError::fault(what, e),
    }
}

/// [`store_failure`] of reading or writing the store.
fn store_error(e: StoreError) -> AtlasError {
    store_failure("the store", e)
}

impl Atlas {
    /// Loads everything the store holds and folds any journal left by a crash.
    pub fn open(
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        policy: CheckpointPolicy,
    ) -> Result<Arc<Atlas>> {
        Atlas::open_saying(store, embedder, policy, true)
    }

    /// [`Atlas::open`], logging what it opened when `announce`.
    fn open_saying(
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        policy: CheckpointPolicy,
        announce: bool,
    ) -> Result<Arc<Atlas>> {
        let started = Instant::now();
        // Beside the loading, on the other core: no request should be the one that loads it.
        let dictionary = std::thread::Builder::new()
            .name("atlas-dictionary".into())
            .spawn(atlas_text::load_dictionary)
            .ok();
        let (mut state, replayed) = State::load(store.as_ref(), embedder.as_ref())?;
        match dictionary {
            Some(loading) => drop(loading.join()),
            None => atlas_text::load_dictionary(),
        }
        let (tree_wanted, trees_wanted) = std::sync::mpsc::channel();
        let tree_wanted = atlas_graph::TreeWanted(Arc::new(move || {
            let _ = tree_wanted.send(());
        }));
        state.graph.defer_route_trees(tree_wanted.clone());
        let atlas = Arc::new(Atlas {
            state: RwLock::new(state),
            store,
            meaning: atlas_navigate::Meaning::for_graph(&embedder),
            grounding: std::sync::OnceLock::new(),
            embedder,
            checkpointing: Mutex::new(()),
            checkpoints: Mutex::new(CheckpointHealth::default()),
            policy,
            nudge: Mutex::new(None),
            events: tokio::sync::broadcast::channel(events::BUFFERED).0,
            activity: Default::default(),
            test_runs: Default::default(),
            tree_wanted,
            resumed_at: Mutex::new(None),
        });
        // A checkpoint that fails stops nothing: what was acknowledged is in the journal, the
        // service answers from memory, and the checkpointer tries again.
        if replayed > 0
            && let Err(e) = atlas.checkpoint()
        {
            tracing::error!(
                "the checkpoint after replaying the journal failed ({e}); serving from the \
                 journal, and trying again"
            );
        }
        atlas.start_following();
        atlas.start_building_route_trees(trees_wanted);
        // A scratch graph (setup.rs) is opened for every setup: worth no line of the log.
        if !announce {
            return Ok(atlas);
        }
        tracing::info!(
            "opened {} ({} apps, {} pages, {} transitions; {replayed} journal records replayed) in {} ms",
            atlas.store.describe(),
            atlas.state.read().graph.apps().count(),
            atlas.state.read().graph.page_count(),
            atlas.state.read().graph.transition_count(),
            started.elapsed().as_millis()
        );
        Ok(atlas)
    }

    /// The vectors of the texts that documents of `app_id` about to be written (index key and
    /// texts) will be indexed by, computed before any lock is taken: none for a lexical embedder,
    /// which costs nothing, nor for a document whose texts are indexed already.
    pub(crate) fn embed_ahead(
        &self,
        app_id: &str,
        docs: &[(String, DocTexts)],
    ) -> Result<HashMap<String, Vec<f32>>> {
        if self.embedder.is_lexical() {
            return Ok(HashMap::new());
        }
        let mut all: Vec<String> = {
            let state = self.state.read();
            docs.iter()
                .filter(|(key, texts)| !state.text.is_embedded(app_id, key, texts))
                .flat_map(|(_, texts)| texts.all(self.embedder.as_ref()))
                .collect()
        };
        all.sort_unstable();
        all.dedup();
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let vectors = self
            .embedder
            .embed(&refs)
            .map_err(|e| AtlasError::embedding("the texts", e))?;
        Ok(all.into_iter().zip(vectors).collect())
    }

    /// Reads a grounding model (the JSON `atlas eval droidtask --fit-out` writes) for
    /// [`Atlas::use_grounding_model`].
    pub fn read_grounding_model(text: &str) -> Result<GroundingModel> {
        GroundingModel::from_json(text, GROUND_FEATURES)
            .map_err(|e| AtlasError::invalid("grounding_model", e.to_string()))
    }

    /// Answers grounded questions with `model` (one `atlas eval droidtask --fit-out` wrote, say,
    /// on the operator's own apps) instead of the model this build ships. Set once, at start-up.
    pub fn use_grounding_model(&self, model: GroundingModel) -> Result<()> {
        model
            .check(GROUND_FEATURES)
            .map_err(|e| AtlasError::invalid("grounding_model", e.to_string()))?;
        self.grounding.set(model).map_err(|_| {
            AtlasError::invalid("grounding_model", "a grounding model is already in use")
        })
    }

    /// The embedder the graph's texts are embedded with.
    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    /// Runs `f` over the graph under the read lock.
    pub fn read<R>(&self, f: impl FnOnce(&Graph) -> R) -> R {
        f(&self.state.read().graph)
    }

    /// A page of an app as it stands now.
    pub(crate) fn page(&self, app_id: &str, page_id: &str) -> Option<atlas_model::Page> {
        self.read(|g| g.app(app_id).and_then(|a| a.page(page_id)).cloned())
    }

    /// Builds the route trees big apps' questions wish for (see
    /// [`atlas_graph::Graph::defer_route_trees`]) on a thread of its own, so no request waits for
    /// a tree; a writer waits for one tree's build at most. The thread ends with the service (the
    /// graph holds the channel's only sender).
    fn start_building_route_trees(self: &Arc<Self>, wanted: std::sync::mpsc::Receiver<()>) {
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("atlas-route-trees".into())
            .spawn(move || {
                while wanted.recv().is_ok() {
                    while wanted.try_recv().is_ok() {}
                    let Some(atlas) = weak.upgrade() else { return };
                    // One tree per read lock: a writer waits for one tree's build at most.
                    while atlas.state.read().graph.build_wanted_tree() {}
                }
            })
            .expect("spawn route tree builder");
    }

    /// The test runs reported to this process (`report_test_run`, `get_test_runs`).
    pub fn test_runs(&self) -> &test_runs::TestRuns {
        &self.test_runs
    }

    /// What the graph learns from now on, as JSON events (`{"type": "report" | "transition" |
    /// "page" | "intent" | "app", "app_id", …}`), each once it is durable, this process's writes
    /// and (on a shared store) the other replicas' alike. The channel keeps the last
    /// [`events::BUFFERED`] events per receiver: a receiver that falls further behind is told it
    /// lagged, and writers never wait for it.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<serde_json::Value> {
        self.events.subscribe()
    }
}

/// Appends the texts of `more` that `list` does not hold yet, in their order (a page's intents,
/// an intent's keywords: told again, they are merged, never doubled).
pub(crate) fn add_missing(list: &mut Vec<String>, more: &[String]) {
    for text in more {
        if !list.contains(text) {
            list.push(text.clone());
        }
    }
}

pub use atlas_navigate::DEFAULT_MAX_STEPS;
