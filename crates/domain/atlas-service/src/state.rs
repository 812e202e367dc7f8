//! The service's in-memory state: the graph, its text index, and which apps changed since the
//! last checkpoint.

use std::collections::HashSet;

use atlas_graph::{AppGraph, Graph, GraphError};
use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_model::{AtlasError, Result};
use atlas_store::{AppData, LoadSink, Record, Store};
use atlas_text::Embedder;

use atlas_navigate::TextIndex;

/// The layout of [`State::image_of`]'s images; an image of another is not read.
const IMAGE_VERSION: u32 = 2;

pub(crate) struct State {
    pub(crate) graph: Graph,
    pub(crate) text: TextIndex,
    pub(crate) dirty: HashSet<String>,
    /// Apps read from JSON, not from an image: the next checkpoint writes their images.
    pub(crate) unimaged: HashSet<String>,
    /// The store's count of failed writes ([`Store::write_failures`]) when this state was read
    /// or last known to hold only durable writes: when the store's count moves on, memory may
    /// hold a refused write, and is read again before the next write or checkpoint.
    pub(crate) synced_failures: u64,
}

fn graph_error(e: GraphError) -> AtlasError {
    match e {
        GraphError::UnknownPage(p) => AtlasError::PageNotFound(p),
        GraphError::UnknownTransition(t) => {
            AtlasError::NotFound(format!("transition not found: {t}"))
        }
        GraphError::UnknownApp(a) => AtlasError::NotFound(format!("app not found: {a}")),
        GraphError::CrossApp { .. } => AtlasError::invalid("to_page", e.to_string()),
        GraphError::TooManyTransitions(_) => AtlasError::fault("adding a transition", e),
    }
}

impl State {
    /// Everything durable in `store`: each app (its image when current), then the journal
    /// replayed over them; with the number of journal records replayed.
    pub(crate) fn load(store: &dyn Store, embedder: &dyn Embedder) -> Result<(State, usize)> {
        let failures = store.write_failures();
        let mut state = State {
            graph: Graph::new(),
            text: TextIndex::default(),
            dirty: HashSet::new(),
            unimaged: HashSet::new(),
            synced_failures: failures,
        };
        /// Takes each app the store reads into the state: its image when it has one.
        struct Loader<'a> {
            state: &'a mut State,
            embedder: &'a dyn Embedder,
            keeps_images: bool,
            failed: Option<AtlasError>,
        }
        impl LoadSink for Loader<'_> {
            fn image(&mut self, image: &[u8]) -> bool {
                self.failed.is_none() && self.state.load_image(image, self.embedder)
            }
            fn app(&mut self, data: AppData) {
                if self.failed.is_some() {
                    return;
                }
                let app_id = data.app.app_id.clone();
                match self.state.load_app(data, self.embedder) {
                    Ok(()) if self.keeps_images => {
                        self.state.unimaged.insert(app_id);
                    }
                    Ok(()) => {}
                    Err(e) => self.failed = Some(e),
                }
            }
        }
        let mut loader = Loader {
            state: &mut state,
            embedder,
            keeps_images: store.keeps_images(),
            failed: None,
        };
        let journal = store
            .load_each(&mut loader)
            .map_err(|e| crate::store_failure("reading the store", e))?;
        if let Some(e) = loader.failed {
            return Err(e);
        }
        let replayed = journal.len();
        for record in journal {
            state.apply(&record, embedder)?;
        }
        Ok((state, replayed))
    }

    pub(crate) fn load_app(&mut self, data: AppData, embedder: &dyn Embedder) -> Result<()> {
        let app_id = data.app.app_id.clone();
        self.graph.upsert_app(data.app);
        self.graph
            .reserve(&app_id, data.pages.len(), data.transitions.len());
        for page in data.pages {
            self.text.index_page(&page, embedder)?;
            self.graph.upsert_page(page).map_err(graph_error)?;
        }
        for intent in data.intents {
            self.text.index_intent(&intent, embedder)?;
            self.graph.upsert_intent(intent).map_err(graph_error)?;
        }
        for t in &data.transitions {
            self.graph.upsert_transition(t).map_err(graph_error)?;
        }
        for t in data.traces {
            self.graph.upsert_trace(t).map_err(graph_error)?;
        }
        self.graph.shrink_to_fit(&app_id);
        Ok(())
    }

    /// One app as an image (see [`State::load_image`]): its graph, then its text documents.
    pub(crate) fn image_of(&self, app_id: &str, embedder: &dyn Embedder) -> Option<Vec<u8>> {
        let app = self.graph.app(app_id)?;
        let mut w = ImageWriter::new();
        w.u32(IMAGE_VERSION);
        app.write_image(&mut w);
        self.text.write_app_image(app_id, embedder, &mut w);
        Some(w.into_bytes())
    }

    /// Takes an app from an image [`State::image_of`] made: false, the graph unchanged, when the
    /// image is of another version, damaged, or of an app already loaded (the caller then loads
    /// the app's data, which indexes its texts over whatever this left). Vectors another
    /// embedder made are not taken: the app's texts are indexed anew from its graph.
    pub(crate) fn load_image(&mut self, image: &[u8], embedder: &dyn Embedder) -> bool {
        let mut r = ImageReader::new(image);
        let graph = match r.u32() {
            Ok(IMAGE_VERSION) => AppGraph::read_image(&mut r),
            Ok(other) => Err(ImageError::invalid(format!("image version {other}"))),
            Err(e) => Err(e),
        };
        let graph = match graph {
            Ok(graph) if self.graph.app(graph.app_id()).is_none() => graph,
            Ok(_) => return false,
            Err(e) => {
                tracing::warn!("an app's image was not used: {e}");
                return false;
            }
        };
        let app_id = graph.app_id().to_string();
        if let Err(e) = self.text.read_app_image(&app_id, embedder, &mut r) {
            tracing::info!("indexing {app_id}'s texts anew: {e}");
            if self.index_texts(&graph, embedder).is_err() {
                return false;
            }
        }
        self.graph.insert_app_graph(graph)
    }

    fn index_texts(&mut self, graph: &AppGraph, embedder: &dyn Embedder) -> Result<()> {
        for page in graph.pages() {
            self.text.index_page(page, embedder)?;
        }
        for intent in graph.intents() {
            self.text.index_intent(intent, embedder)?;
        }
        Ok(())
    }

    /// Applies one whole-entity record (a live write or a replayed one). By reference: a live
    /// write's records go on to the store, and a transition is read into its row, not kept.
    pub(crate) fn apply(&mut self, record: &Record, embedder: &dyn Embedder) -> Result<()> {
        if !self.dirty.contains(record.app_id()) {
            self.dirty.insert(record.app_id().to_string());
        }
        match record {
            Record::App(app) => {
                self.graph.upsert_app(app.clone());
            }
            Record::Page(page) => {
                self.text.index_page(page, embedder)?;
                self.graph.upsert_page(page.clone()).map_err(graph_error)?;
            }
            Record::Intent(intent) => {
                self.text.index_intent(intent, embedder)?;
                self.graph
                    .upsert_intent(intent.clone())
                    .map_err(graph_error)?;
            }
            Record::Transition(t) | Record::Counted { transition: t, .. } => {
                self.graph.upsert_transition(t).map_err(graph_error)?;
            }
            Record::Trace(t) => {
                self.graph.upsert_trace(t.clone()).map_err(graph_error)?;
            }
            Record::Stepped(step) => {
                self.graph
                    .change_trace(
                        &step.app_id,
                        &step.trace_id,
                        || step.new_trace(),
                        |trace| step.apply_to(trace),
                    )
                    .map_err(graph_error)?;
            }
            Record::Added(a) => {
                self.graph
                    .add_counts(
                        &a.app_id,
                        &a.transition_id,
                        a.added,
                        a.reason.as_deref(),
                        a.at,
                    )
                    .map_err(graph_error)?;
            }
        }
        Ok(())
    }

    /// The full data of every app changed since the last call, for a checkpoint.
    pub(crate) fn take_dirty(&mut self) -> Vec<AppData> {
        let dirty = std::mem::take(&mut self.dirty);
        dirty
            .iter()
            .filter_map(|app_id| self.graph.app(app_id))
            .map(app_data)
            .collect()
    }
}

/// One app's whole graph in the store's shape (for checkpoints and exports).
pub(crate) fn app_data(app: &atlas_graph::AppGraph) -> AppData {
    AppData {
        app: app.app.clone(),
        pages: app.pages().to_vec(),
        intents: app.intents().cloned().collect(),
        transitions: app.transitions().map(|t| t.to_transition()).collect(),
        traces: app.traces().cloned().collect(),
    }
}
