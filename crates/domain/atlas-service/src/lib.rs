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

pub mod activity;
mod artifacts;
mod demo;
pub mod events;
pub mod intent_quality;
mod learn;
mod navigation;
mod pages;
mod recovery;
mod state;
mod stats;
pub mod test_runs;
mod transfer;
mod versions;
mod view;
mod ways;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atlas_graph::Graph;
use atlas_model::{AtlasError, Result};
use atlas_store::{Record, Store, StoreError};
use atlas_text::Embedder;
use parking_lot::{Mutex, RwLock};

pub use atlas_navigate::{
    AlternativePath, Basis, CandidateAction, FEATURES as GROUND_FEATURES, FailedCase,
    GroundingModel, HistoricalCases, MAX_ROUTE_STEPS, MAX_ROUTES, MapRoute, NextAction,
    NextActionRequest, NextActionResponse, PageSummary, PathInfo, PathStep, QueryPathRequest,
    QueryPathResponse, RagContext, RagContextRequest, RagContextResponse, RecommendedPath,
    RelevantPage, SuccessfulCase, SuggestedAction, doubt_in_english,
};
pub use demo::{DEMO_APP_ID, demo_graph};
pub use learn::*;
pub use pages::*;
pub use stats::*;
pub use transfer::ImportSummary;
pub use versions::*;
pub use view::*;
pub use ways::*;

use atlas_navigate::{DocTexts, Prepared};
use state::State;

/// How often the background checkpointer folds the journal into the readable files, and after how
/// many records it folds early.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointPolicy {
    /// How long after a change a checkpoint is written at the latest.
    pub interval: Duration,
    /// How many bytes of journal (what a restart replays beyond the files) trigger a
    /// checkpoint at the latest. Bytes, not records: a checkpoint rewrites whole apps, so its
    /// cost is the graph's size, and a report's record is a hundred bytes where a page's may be
    /// ten thousand.
    pub max_journal_bytes: u64,
}

impl Default for CheckpointPolicy {
    fn default() -> Self {
        CheckpointPolicy {
            interval: Duration::from_secs(30),
            max_journal_bytes: 64 << 20,
        }
    }
}

/// The longest the checkpointer waits between attempts while checkpoints fail.
pub const MAX_CHECKPOINT_BACKOFF: Duration = Duration::from_secs(600);

/// How the checkpoints have gone (`/healthz` shows it): all well, or failing since when and why.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckpointHealth {
    /// Checkpoints failed in a row.
    pub failures: u64,
    /// When the first of them failed (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<String>,
    /// Why the last one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Bytes of journal written since the last checkpoint began: what the next start replays
    /// beyond the files, at least.
    pub journal_bytes: u64,
}

impl CheckpointHealth {
    /// Whether the last checkpoint failed.
    pub fn failing(&self) -> bool {
        self.failures > 0
    }
}

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

    /// Builds records from the current state, applies them to memory and enqueues them in the
    /// journal, all under the write lock (so read-modify-write is atomic and journal order equals
    /// memory order); then waits, outside the lock, until they are durable.
    pub(crate) async fn commit_with<T>(
        &self,
        build: impl FnOnce(&State) -> Result<(Vec<Record>, T)>,
    ) -> Result<T> {
        self.commit_embedded(&HashMap::new(), build).await
    }

    /// [`Atlas::commit_with`], the records' texts found first among `ready` (from
    /// [`Atlas::embed_ahead`]), so the write lock is not held while a model embeds them.
    pub(crate) async fn commit_embedded<T>(
        &self,
        ready: &HashMap<String, Vec<f32>>,
        build: impl FnOnce(&State) -> Result<(Vec<Record>, T)>,
    ) -> Result<T> {
        let embedder = Prepared {
            inner: self.embedder.as_ref(),
            ready,
        };
        let (pending, value, learned, applied_after) = {
            let mut state = self.state.write();
            self.writes_ready(&mut state)?;
            let (records, value) = build(&state)?;
            if records.is_empty() {
                return Ok(value);
            }
            if let Some((kind, size)) = records.iter().find_map(Record::oversized) {
                return Err(AtlasError::invalid(
                    kind,
                    format!(
                        "the {kind} would take {size} bytes, over the {} bytes one entity may",
                        atlas_store::MAX_ENTITY_BYTES
                    ),
                ));
            }
            for record in &records {
                state.apply(record, &embedder)?;
            }
            let learned = events::of(&state.graph, &records, self.events.receiver_count() > 0);
            (
                self.store.append(records),
                value,
                learned,
                state.synced_failures,
            )
        };
        if let Err(e) = pending.wait().await {
            // Memory holds the refused write: it goes before the refusal is answered.
            self.catch_up(&mut self.state.write(), applied_after);
            return Err(store_failure("the write", e));
        }
        // Told once durable, so a viewer never shows what was not kept.
        for event in learned {
            let _ = self.events.send(event);
        }
        if self.store.journal_bytes() >= self.policy.max_journal_bytes {
            // Folding is slow I/O: ask the checkpointer thread rather than block this caller.
            if let Some(nudge) = self.nudge.lock().as_ref() {
                let _ = nudge.send(());
            }
        }
        Ok(value)
    }

    /// Folds every app changed since the last checkpoint into the store's files and trims the
    /// journal. When it fails, nothing acknowledged is lost: the changed apps stay to be folded
    /// by the next checkpoint, the journal keeps their records, and [`Atlas::checkpoint_health`]
    /// says so.
    pub fn checkpoint(&self) -> Result<()> {
        let _serial = self.checkpointing.lock();
        let outcome = self.fold_changes();
        let mut health = self.checkpoints.lock();
        match &outcome {
            Ok(()) => *health = CheckpointHealth::default(),
            Err(e) => {
                health.failures += 1;
                health
                    .failing_since
                    .get_or_insert_with(atlas_model::now_rfc3339);
                health.error = Some(e.to_string());
            }
        }
        outcome
    }

    /// How the checkpoints have gone: failing ones since when, and why.
    pub fn checkpoint_health(&self) -> CheckpointHealth {
        let mut health = self.checkpoints.lock().clone();
        health.journal_bytes = self.store.journal_bytes();
        health
    }

    fn fold_changes(&self) -> Result<()> {
        let (folding, images) = {
            let mut state = self.state.write();
            // Never fold a write the journal refused.
            let in_step_with = state.synced_failures;
            self.catch_up(&mut state, in_step_with);
            if self.store.write_failures() != state.synced_failures {
                return Err(AtlasError::unavailable(
                    "the checkpoint waits: a write failed and its state is being read again",
                ));
            }
            if !self.store.wants_checkpoints() {
                state.dirty.clear();
                return Ok(());
            }
            let keeps_images = self.store.keeps_images();
            if state.dirty.is_empty() && (!keeps_images || state.unimaged.is_empty()) {
                return Ok(());
            }
            let folding = match state.dirty.is_empty() {
                true => None,
                false => {
                    let cut = self.store.begin_checkpoint().map_err(store_error)?;
                    // The cut flushed the writes before it: one that failed is in memory.
                    if self.store.write_failures() != state.synced_failures {
                        return Err(AtlasError::unavailable(
                            "the checkpoint stopped: a write before it failed",
                        ));
                    }
                    Some((cut, state.take_dirty()))
                }
            };
            // Images of what is folded now, and of apps read from JSON whose files are current.
            let mut imaged = std::mem::take(&mut state.unimaged);
            if !keeps_images {
                imaged.clear();
            }
            if let Some((_, changed)) = &folding {
                imaged.extend(changed.iter().map(|app| app.app.app_id.clone()));
            }
            let images: Vec<(String, Vec<u8>)> = imaged
                .into_iter()
                .filter_map(|app_id| {
                    let image = state.image_of(&app_id, self.embedder.as_ref())?;
                    Some((app_id, image))
                })
                .collect();
            (folding, images)
        };
        if let Some((cut, changed)) = folding
            && let Err(e) = self.store.finish_checkpoint(cut, &changed)
        {
            // Folded again next time, the journal's records of the apps not folded yet with them.
            let mut state = self.state.write();
            state
                .dirty
                .extend(changed.into_iter().map(|app| app.app.app_id));
            return Err(store_error(e));
        }
        // An image not kept costs the next start-up time, never data: the files are folded.
        for (app_id, image) in images {
            if let Err(e) = self.store.keep_image(&app_id, &image) {
                tracing::warn!("no image of {app_id} for the next start-up: {e}");
            }
        }
        Ok(())
    }

    /// Why writes are refused now, if they are (a full disk, a failed write not yet behind
    /// it), in words that name no file: `/healthz` says so to anyone who can reach the port,
    /// and the server goes on serving reads.
    pub fn writes_refused(&self) -> Option<String> {
        if self.store.write_failures() != self.state.read().synced_failures {
            return Some("a write failed; the graph is read again from the store".into());
        }
        let refused = self.store.writable().err()?;
        Some(match refused {
            StoreError::Full { .. } | StoreError::NoSpace { .. } => {
                "the data folder's disk is full".into()
            }
            StoreError::DatabaseFull { .. } => "the database's disk is full".into(),
            StoreError::WriteFailed { cause, .. } => format!("a write to the disk failed: {cause}"),
            other => other.to_string(),
        })
    }

    /// The disk under the store, measured now (none for a database).
    pub fn disk(&self) -> Option<atlas_store::DiskSpace> {
        self.store.disk()
    }

    /// Whether the store takes writes now (see [`Store::available`]): `/healthz` says so, for a
    /// load balancer to send writers elsewhere.
    pub fn store_available(&self) -> bool {
        self.store.available()
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

    /// For a store other processes write too: applies what they (and this one) committed, on a
    /// thread of its own, as the store reports it; it stops when the service is dropped.
    fn start_following(self: &Arc<Self>) {
        let Some(changes) = self.store.follow() else {
            return;
        };
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("atlas-follow".into())
            .spawn(move || {
                for batch in changes {
                    let Some(atlas) = weak.upgrade() else { return };
                    atlas.apply_followed(batch);
                }
            })
            .expect("spawn follower");
    }

    /// Applies entities as the store now holds them, their texts embedded before the lock.
    fn apply_followed(&self, round: atlas_store::Followed) {
        let mut by_app: HashMap<String, Vec<(String, DocTexts)>> = HashMap::new();
        for record in round.rows() {
            let doc = match record {
                Record::Page(p) => (
                    atlas_navigate::page_key(&p.page_id),
                    DocTexts::of_page(&p.page_name, &p.description, &p.intents),
                ),
                Record::Intent(i) => (
                    atlas_navigate::intent_key(&i.intent_id),
                    DocTexts::of_intent(&i.intent_text, &i.keywords),
                ),
                _ => continue,
            };
            by_app
                .entry(record.app_id().to_string())
                .or_default()
                .push(doc);
        }
        let mut ready = HashMap::new();
        for (app_id, docs) in &by_app {
            match self.embed_ahead(app_id, docs) {
                Ok(vectors) => ready.extend(vectors),
                Err(e) => tracing::warn!("embedding followed changes: {e}"),
            }
        }
        let embedder = Prepared {
            inner: self.embedder.as_ref(),
            ready: &ready,
        };
        let mut state = self.state.write();
        // Settled under the write lock: no write of ours can slip between the overlay and this.
        let records = activity::as_reports(&state.graph, round.settle());
        for event in events::of(&state.graph, &records, self.events.receiver_count() > 0) {
            let _ = self.events.send(event);
        }
        for (app_id, report) in activity::Activity::reports_of(&records) {
            self.activity.remember(&app_id, report);
        }
        for record in records {
            if let Err(e) = state.apply(&record, &embedder) {
                tracing::warn!("a followed change did not apply: {e}");
            }
        }
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

    /// Starts the periodic checkpointer on its own thread; it stops when the service is dropped.
    /// After a failure it waits twice as long each time (up to [`MAX_CHECKPOINT_BACKOFF`]) and
    /// is not nudged early: each attempt starts a journal segment, and a disk that refuses the
    /// files should not also be filled with empty segments.
    pub fn start_checkpointer(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let interval = self.policy.interval;
        let (nudge, woken) = std::sync::mpsc::channel();
        *self.nudge.lock() = Some(nudge);
        std::thread::Builder::new()
            .name("atlas-checkpoint".into())
            .spawn(move || {
                let backoff = |failures: u32| {
                    interval
                        .saturating_mul(1 << failures.min(16))
                        .min(MAX_CHECKPOINT_BACKOFF.max(interval))
                };
                let mut failures = 0u32;
                loop {
                    let deadline = Instant::now() + backoff(failures);
                    loop {
                        let left = deadline.saturating_duration_since(Instant::now());
                        match woken.recv_timeout(left) {
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                            Ok(()) if failures == 0 => break,
                            Ok(()) => {}
                        }
                    }
                    let Some(atlas) = weak.upgrade() else { return };
                    match atlas.checkpoint() {
                        Ok(()) => failures = 0,
                        Err(e) => {
                            failures += 1;
                            tracing::error!(
                                "checkpoint failed ({failures} in a row): {e}; every acknowledged \
                                 write is in the journal; trying again in {} s",
                                backoff(failures).as_secs()
                            );
                        }
                    }
                    // Nudges sent while it ran asked for the checkpoint just made.
                    while woken.try_recv().is_ok() {}
                }
            })
            .expect("spawn checkpointer");
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
