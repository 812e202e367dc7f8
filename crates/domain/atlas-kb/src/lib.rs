//! Knowledge bases for agents: datasets of documents, split into segments, searched by words and
//! by meaning — what Dify's `/v1/datasets/{id}/retrieve` serves and a phone agent's
//! GET_KNOWLEDGE_DATA asks.
//!
//! Key design decision: **a dataset is an immutable snapshot swapped whole.** A write builds the
//! dataset's new documents and index beside the old ones, makes the files durable, then swaps one
//! `Arc`; searches hold the snapshot they started with and never wait for a write. Datasets are
//! small next to their readers (a customer-service table, a manual), so rebuilding one dataset's
//! index per write costs less than an incremental index would cost every search.

mod copy;
pub mod demo;
mod edit;
mod error;
mod filter;
mod kept;
mod model;
pub mod split;
mod store;
mod tags;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use atlas_progress::{Progress, Quiet};
use atlas_store::files::{Files, Folder};
use atlas_text::Embedder;
use parking_lot::{Mutex, RwLock};

pub use atlas_search::SearchMethod;
use atlas_search::{SegmentIndex, Vectors};
pub use copy::Copied;
pub use edit::DocumentStatus;
pub use edit::{MAX_SEGMENTS_PER_CALL, SegmentInput};
pub use error::KbError;
pub use filter::{Condition, MetadataFilter};
pub use model::{BUILT_IN_FIELDS, Dataset, Document, MetadataField, Segment};
use split::SourceKind;
pub use tags::Tag;

/// Dify's limit on a query's length, in characters.
pub const MAX_QUERY_CHARS: usize = atlas_api::dify::limits::QUERY_CHARS;
/// The most records one search returns.
pub const MAX_TOP_K: usize = atlas_api::dify::limits::TOP_K;

pub use atlas_search::DENSE_SEMANTIC_WEIGHT;

/// How one search runs; [`Default`] is Dify's defaults with hybrid search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Keyword, semantic or hybrid.
    pub method: SearchMethod,
    /// Records at most.
    pub top_k: usize,
    /// Hits below this score are dropped (Dify's `score_threshold` when enabled).
    pub score_threshold: Option<f64>,
    /// The vector score's share in hybrid search (Dify's `vector_weight`); by default
    /// [`DENSE_SEMANTIC_WEIGHT`] with a dense embedder and 0.5 with a lexical one, whose vectors
    /// only restate the words.
    pub semantic_weight: Option<f64>,
    /// Only documents whose metadata pass it.
    pub filter: Option<MetadataFilter>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            method: SearchMethod::Hybrid,
            top_k: 4,
            score_threshold: None,
            semantic_weight: None,
            filter: None,
        }
    }
}

/// One search result.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The segment.
    pub segment: Segment,
    /// Its document.
    pub document_id: String,
    /// The document's name.
    pub document_name: String,
    /// What the document was made from.
    pub document_kind: String,
    /// The document's metadata.
    pub document_metadata: serde_json::Map<String, serde_json::Value>,
    /// Its fused score, between 0 and 1.
    pub score: f64,
    /// How many searches have returned this segment, this one included.
    pub hit_count: u64,
    /// The document's creation, in Unix seconds.
    pub created_at: i64,
}

/// A dataset as listed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DatasetSummary {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// Its documents.
    pub document_count: usize,
    /// Its segments.
    pub segment_count: usize,
    /// Characters in all segments (Dify's `word_count`).
    pub word_count: usize,
    /// Unix seconds.
    pub created_at: i64,
}

/// A document as listed or just added.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentSummary {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it was made from.
    pub kind: String,
    /// Its segments.
    pub segment_count: usize,
    /// Characters in its segments (Dify's `word_count`).
    pub word_count: usize,
    /// Searches that returned one of its segments (Dify's `hit_count`).
    pub hit_count: u64,
    /// Its metadata.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Unix seconds.
    pub created_at: i64,
    /// Whether retrieval may return it.
    pub enabled: bool,
    /// Whether it is archived.
    pub archived: bool,
}

impl DocumentSummary {
    fn of(d: &Document, hits: &HitCounts) -> Self {
        DocumentSummary {
            id: d.id.clone(),
            name: d.name.clone(),
            kind: d.kind.clone(),
            segment_count: d.segments.len(),
            word_count: d.segments.iter().map(|s| s.word_count).sum(),
            hit_count: d.segments.iter().map(|s| hits.count(&s.id)).sum(),
            metadata: d.metadata.clone(),
            created_at: d.created_at,
            enabled: d.enabled,
            archived: d.archived,
        }
    }
}

/// One dataset's snapshot: its documents, where each indexed segment lives, and the index.
struct Snapshot {
    dataset: Dataset,
    documents: Vec<Document>,
    locations: Vec<(usize, usize)>,
    /// Shared by snapshots that change no segment (a rename, metadata, tags).
    index: Arc<SegmentIndex>,
    hits: Arc<HitCounts>,
    /// Whether the dataset's vectors file holds this snapshot's vectors (see `kept.rs`).
    vectors_kept: std::sync::atomic::AtomicBool,
}

impl Snapshot {
    fn summary(&self) -> DatasetSummary {
        DatasetSummary {
            id: self.dataset.id.clone(),
            name: self.dataset.name.clone(),
            description: self.dataset.description.clone(),
            document_count: self.documents.len(),
            segment_count: self.locations.len(),
            word_count: self
                .documents
                .iter()
                .flat_map(|d| &d.segments)
                .map(|seg| seg.word_count)
                .sum(),
            created_at: self.dataset.created_at,
        }
    }

    /// Keeps this snapshot's vectors in its dataset's file, once (see `kept.rs`).
    fn keep_vectors(&self, files: &dyn Files, embedder: &dyn Embedder) -> Result<(), KbError> {
        if embedder.is_lexical() || self.vectors_kept.load(Ordering::Relaxed) {
            return Ok(());
        }
        // A segment left to its words (opened deferred, not embedded yet) has no vectors to
        // keep, and an entry without them would pass for embedded at the next opening.
        if (0..self.locations.len()).any(|entry| self.index.vectors(entry).is_none()) {
            return Ok(());
        }
        let segments = self.locations.iter().enumerate().map(|(entry, &(d, s))| {
            let segment = &self.documents[d].segments[s];
            let vectors = self.index.vectors(entry).unwrap_or_default();
            (segment.id.as_str(), texts_of(segment), vectors)
        });
        kept::write(files, &self.dataset.id, &embedder.name(), segments)?;
        self.vectors_kept.store(true, Ordering::Relaxed);
        Ok(())
    }
}

/// What the embedder is given for a segment: the searched text, and the answer apart when the
/// segment is a question and its answer.
fn texts_of(segment: &model::Segment) -> kept::Texts<'_> {
    (
        segment.searched_text(),
        segment.question.as_ref().map(|_| segment.content.as_str()),
    )
}

/// Hit counts by segment id; counted in memory and written by [`KnowledgeBase::flush`] and with
/// every write to the dataset.
#[derive(Default)]
struct HitCounts {
    counts: RwLock<HashMap<String, Arc<AtomicU64>>>,
    dirty: std::sync::atomic::AtomicBool,
}

impl HitCounts {
    fn counter(&self, segment: &str) -> Arc<AtomicU64> {
        if let Some(c) = self.counts.read().get(segment) {
            return c.clone();
        }
        self.counts
            .write()
            .entry(segment.to_string())
            .or_default()
            .clone()
    }

    fn count(&self, segment: &str) -> u64 {
        self.counts
            .read()
            .get(segment)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn snapshot(&self) -> HashMap<String, u64> {
        self.counts
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.load(Ordering::Relaxed)))
            .filter(|(_, v)| *v > 0)
            .collect()
    }
}

/// The knowledge bases of one folder or database: datasets, their documents and segments,
/// searchable.
pub struct KnowledgeBase {
    /// Where the datasets are kept (the folder, or the shared database).
    files: Arc<dyn Files>,
    /// The OS lock on the folder's `lock` that makes this its one writer (none in a database,
    /// where every replica writes and follows the others).
    _lock: Option<std::fs::File>,
    /// False when opened read-only.
    writable: bool,
    embedder: Arc<dyn Embedder>,
    datasets: RwLock<HashMap<String, Arc<Snapshot>>>,
    /// Datasets whose segments [`KnowledgeBase::open_deferred`] left unembedded.
    deferred: Mutex<Vec<String>>,
    /// Writes one at a time, so two writers never build from the same old snapshot. Held only
    /// to build and publish: a document's new segments are embedded before it is taken.
    writing: Mutex<()>,
    /// Set by [`KnowledgeBase::stop`]: embedding still under way is abandoned.
    stopping: std::sync::atomic::AtomicBool,
    /// The knowledge tags (see `tags.rs`).
    tags: RwLock<Vec<Tag>>,
    /// Whether each dataset's vectors are kept in a file beside it (a folder's one writer or
    /// its readers; replicas sharing a database do not, as a file one writes the others follow).
    keeps_vectors: bool,
}

/// The most segments one document may have: a 10 MB text at 500 characters a segment fits;
/// more pieces than that is a table to split into several documents.
pub const MAX_DOCUMENT_SEGMENTS: usize = 30_000;

/// A snapshot of `documents`; segments that `previous` already indexed keep their vectors, and
/// those in `ready` (by segment id, embedded before the write began) take theirs from it; the
/// embedder makes the rest, telling `progress`.
fn build(
    dataset: Dataset,
    documents: Vec<Document>,
    hits: Arc<HitCounts>,
    embedder: &dyn Embedder,
    (previous, ready): (Option<&Snapshot>, &HashMap<String, Vectors>),
    progress: &dyn Progress,
) -> Result<Snapshot, KbError> {
    let mut locations = Vec::new();
    let mut texts = Vec::new();
    for (d, doc) in documents.iter().enumerate() {
        for (s, segment) in doc.segments.iter().enumerate() {
            locations.push((d, s));
            texts.push(texts_of(segment));
        }
    }
    let indexed: HashMap<&str, usize> = previous
        .map(|p| {
            p.locations
                .iter()
                .enumerate()
                .map(|(entry, &(d, s))| (p.documents[d].segments[s].id.as_str(), entry))
                .collect()
        })
        .unwrap_or_default();
    let known = |i: usize| {
        let (d, s) = locations[i];
        let id = documents[d].segments[s].id.as_str();
        if let Some(vectors) = ready.get(id) {
            return Some(vectors.clone());
        }
        previous?.index.vectors(*indexed.get(id)?)
    };
    let index = Arc::new(
        SegmentIndex::build_with(&texts, embedder, &known, progress).map_err(KbError::Embed)?,
    );
    Ok(Snapshot {
        dataset,
        documents,
        locations,
        index,
        hits,
        vectors_kept: Default::default(),
    })
}

/// A dataset as kept, with its hit counts, indexed: segments `previous` had keep their vectors,
/// and so do those whose vectors `kept` holds. With `defer`, the others are not embedded now:
/// they are found by their words alone until [`KnowledgeBase::embed_deferred`] embeds them.
/// Also whether any segment was deferred.
fn indexed(
    stored: store::Stored,
    embedder: &dyn Embedder,
    previous: Option<&Snapshot>,
    mut kept: kept::Kept,
    progress: &dyn Progress,
    defer: bool,
) -> Result<(Snapshot, bool), KbError> {
    let hits = Arc::new(HitCounts::default());
    for (segment, count) in stored.hits {
        hits.counter(&segment).store(count, Ordering::Relaxed);
    }
    let mut ready: HashMap<String, Vectors> = stored
        .documents
        .iter()
        .flat_map(|d| &d.segments)
        .filter_map(|s| Some((s.id.clone(), kept.take(&s.id, texts_of(s))?)))
        .collect();
    let segments: usize = stored.documents.iter().map(|d| d.segments.len()).sum();
    // Every segment served, and no entry left over for a segment no longer there.
    let served_all = ready.len() == segments && kept.is_empty();
    let deferred = defer && ready.len() < segments && !embedder.is_lexical();
    if deferred {
        for segment in stored.documents.iter().flat_map(|d| &d.segments) {
            ready.entry(segment.id.clone()).or_insert((None, None));
        }
    }
    let snapshot = build(
        stored.dataset,
        stored.documents,
        hits,
        embedder,
        (previous, &ready),
        progress,
    )?;
    // The file holds exactly these vectors: nothing to write until the dataset changes.
    snapshot.vectors_kept.store(served_all, Ordering::Relaxed);
    Ok((snapshot, deferred))
}

fn valid_id(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok()
}

impl KnowledgeBase {
    /// Opens (or starts) the knowledge base kept in `root` as its one writer, indexing every
    /// dataset found there. Another process holding it (a running `atlas serve`) is
    /// [`KbError::Locked`]: two writers would each miss the other's documents.
    pub fn open(root: &Path, embedder: Arc<dyn Embedder>) -> Result<KnowledgeBase, KbError> {
        Self::open_with(root, embedder, &Quiet)
    }

    /// [`KnowledgeBase::open`], telling `progress` of the segments it embeds: those whose
    /// vectors no file keeps (see `kept.rs`) — all of them the first time a model opens a
    /// dataset.
    pub fn open_with(
        root: &Path,
        embedder: Arc<dyn Embedder>,
        progress: &dyn Progress,
    ) -> Result<KnowledgeBase, KbError> {
        std::fs::create_dir_all(root)?;
        let lock = store::lock(root)?;
        let opened = Self::load(
            Arc::new(Folder::new(root)),
            embedder,
            Some(lock),
            true,
            progress,
            false,
        )?;
        // Kept now, so a process that ends without flushing (killed) still starts fast next.
        // The file only saves work: one that cannot be written (a full disk) is no reason not to
        // open, and the next flush tries again.
        let _ = opened.keep_vectors();
        Ok(opened)
    }

    /// [`KnowledgeBase::open`] without embedding: segments whose vectors no file keeps are found
    /// by their words alone until [`KnowledgeBase::embed_deferred`] embeds them, so that a server
    /// answers at once (on a folder opened before with the same model, there are none).
    pub fn open_deferred(
        root: &Path,
        embedder: Arc<dyn Embedder>,
    ) -> Result<KnowledgeBase, KbError> {
        std::fs::create_dir_all(root)?;
        let lock = store::lock(root)?;
        let files = Arc::new(Folder::new(root));
        Self::load(files, embedder, Some(lock), true, &Quiet, true)
    }

    /// Embeds the segments [`KnowledgeBase::open_deferred`] left to their words, dataset by
    /// dataset, and keeps their vectors; the number of datasets done.
    pub fn embed_deferred(&self) -> Result<usize, KbError> {
        let deferred = std::mem::take(&mut *self.deferred.lock());
        for id in &deferred {
            self.reload_dataset(id)?;
        }
        self.keep_vectors()?;
        Ok(deferred.len())
    }

    /// Opens the knowledge base kept in `files` that other processes write too (a database
    /// shared by replicas): no lock; each process follows the others' writes through
    /// [`KnowledgeBase::reload_dataset`] and [`KnowledgeBase::reload_tags`].
    pub fn open_shared(
        files: Arc<dyn Files>,
        embedder: Arc<dyn Embedder>,
    ) -> Result<KnowledgeBase, KbError> {
        Self::load(files, embedder, None, true, &Quiet, false)
    }

    /// Opens the knowledge base in `root` for searching only, beside a writer if there is one;
    /// every change is [`KbError::ReadOnly`] and hit counts are not written.
    pub fn open_read_only(
        root: &Path,
        embedder: Arc<dyn Embedder>,
    ) -> Result<KnowledgeBase, KbError> {
        Self::load(
            Arc::new(Folder::new(root)),
            embedder,
            None,
            false,
            &Quiet,
            false,
        )
    }

    /// `keeps_vectors` follows from the lock: a folder's writer holds one, and its readers are
    /// not writable; replicas have neither.
    fn load(
        files: Arc<dyn Files>,
        embedder: Arc<dyn Embedder>,
        lock: Option<std::fs::File>,
        writable: bool,
        progress: &dyn Progress,
        defer: bool,
    ) -> Result<KnowledgeBase, KbError> {
        let keeps_vectors = lock.is_some() || !writable;
        let mut datasets = HashMap::new();
        let mut deferred = Vec::new();
        for stored in store::load(files.as_ref())? {
            let kept = match keeps_vectors && !embedder.is_lexical() {
                true => kept::read(files.as_ref(), &stored.dataset.id, &embedder.name()),
                false => kept::Kept::default(),
            };
            let (snapshot, later) =
                indexed(stored, embedder.as_ref(), None, kept, progress, defer)?;
            if later {
                deferred.push(snapshot.dataset.id.clone());
            }
            datasets.insert(snapshot.dataset.id.clone(), Arc::new(snapshot));
        }
        Ok(KnowledgeBase {
            keeps_vectors,
            tags: RwLock::new(tags::load(files.as_ref())?),
            files,
            _lock: lock,
            writable,
            embedder,
            datasets: RwLock::new(datasets),
            deferred: Mutex::new(deferred),
            writing: Mutex::new(()),
            stopping: Default::default(),
        })
    }

    /// Reads the dataset `id` again as kept (another process changed it): segments it indexed
    /// already keep their vectors; a dataset no longer kept is dropped.
    pub fn reload_dataset(&self, id: &str) -> Result<(), KbError> {
        let _writing = self.writing.lock();
        let Some(stored) = store::load_one(self.files.as_ref(), id)? else {
            self.datasets.write().remove(id);
            return Ok(());
        };
        let previous = self.datasets.read().get(id).cloned();
        let (snapshot, _) = indexed(
            stored,
            self.embedder.as_ref(),
            previous.as_deref(),
            kept::Kept::default(),
            &Quiet,
            false,
        )?;
        self.datasets
            .write()
            .insert(id.to_string(), Arc::new(snapshot));
        Ok(())
    }

    /// Reads the knowledge tags again as kept.
    pub fn reload_tags(&self) -> Result<(), KbError> {
        let _writing = self.writing.lock();
        *self.tags.write() = tags::load(self.files.as_ref())?;
        Ok(())
    }

    /// The writer's turn, or ReadOnly.
    fn write_turn(&self) -> Result<parking_lot::MutexGuard<'_, ()>, KbError> {
        if !self.writable {
            return Err(KbError::ReadOnly);
        }
        Ok(self.writing.lock())
    }

    fn snapshot(&self, id: &str) -> Result<Arc<Snapshot>, KbError> {
        self.datasets
            .read()
            .get(id)
            .cloned()
            .ok_or(KbError::DatasetNotFound)
    }

    /// Creates a dataset with a new id and API key.
    pub fn create_dataset(&self, name: &str, description: &str) -> Result<Dataset, KbError> {
        let key = format!("dataset-{}", uuid::Uuid::new_v4().simple());
        self.create_dataset_with(&model::new_id(), name, description, &key)
    }

    /// Creates a dataset with a given id (a UUID, as Dify's routes require) and API key; the
    /// same id and key again is a no-op, so a demo can be set up on every start.
    pub fn create_dataset_with(
        &self,
        id: &str,
        name: &str,
        description: &str,
        api_key: &str,
    ) -> Result<Dataset, KbError> {
        if !valid_id(id) {
            return Err(error::invalid(format!(
                "dataset id must be a UUID, not {id:?}"
            )));
        }
        let name = error::valid_name(
            name,
            "a dataset name",
            atlas_api::dify::limits::DATASET_NAME,
        )?;
        if api_key.trim().len() < 8 {
            return Err(error::invalid("an API key is at least 8 characters"));
        }
        let _writing = self.write_turn()?;
        if let Some(existing) = self.datasets.read().get(id) {
            return if existing.dataset.api_key == api_key {
                Ok(existing.dataset.clone())
            } else {
                Err(KbError::Conflict(format!("dataset {id} exists")))
            };
        }
        let dataset = Dataset {
            id: id.to_string(),
            name: name.to_string(),
            description: description.to_string(),
            api_key: api_key.to_string(),
            created_at: model::now(),
            metadata_fields: Vec::new(),
            tag_ids: Vec::new(),
            built_in_field_enabled: false,
        };
        store::write_json(self.files.as_ref(), &store::dataset_file(id), &dataset)?;
        let snapshot = build(
            dataset.clone(),
            Vec::new(),
            Arc::default(),
            self.embedder.as_ref(),
            (None, &HashMap::new()),
            &Quiet,
        )?;
        self.datasets
            .write()
            .insert(id.to_string(), Arc::new(snapshot));
        Ok(dataset)
    }

    /// The embedder's name, as datasets report their embedding model.
    pub fn embedder_name(&self) -> String {
        self.embedder.name()
    }

    /// Every dataset, oldest first.
    pub fn datasets(&self) -> Vec<DatasetSummary> {
        let mut list: Vec<DatasetSummary> =
            self.datasets.read().values().map(|s| s.summary()).collect();
        list.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.name.cmp(&b.name)));
        list
    }

    /// A dataset as listed.
    pub fn dataset_summary(&self, id: &str) -> Result<DatasetSummary, KbError> {
        Ok(self.snapshot(id)?.summary())
    }

    /// A dataset, whole.
    pub fn dataset(&self, id: &str) -> Result<Dataset, KbError> {
        Ok(self.snapshot(id)?.dataset.clone())
    }

    /// Deletes a dataset and its documents.
    pub fn delete_dataset(&self, id: &str) -> Result<(), KbError> {
        let _writing = self.write_turn()?;
        self.snapshot(id)?;
        store::remove(self.files.as_ref(), id)?;
        self.datasets.write().remove(id);
        Ok(())
    }

    /// Whether `key` may read dataset `id`. An unknown dataset is `DatasetNotFound`, a wrong key
    /// `Unauthorized`.
    pub fn authorize(&self, id: &str, key: &str) -> Result<(), KbError> {
        let snapshot = self.snapshot(id)?;
        if snapshot.dataset.api_key == key {
            Ok(())
        } else {
            Err(KbError::Unauthorized)
        }
    }

    /// Whether `key` is some dataset's own key.
    pub fn is_dataset_key(&self, key: &str) -> bool {
        self.datasets
            .read()
            .values()
            .any(|s| s.dataset.api_key == key)
    }

    /// Document `id` of `dataset` and its 1-based position in the dataset.
    pub fn document(&self, dataset: &str, id: &str) -> Result<(usize, DocumentSummary), KbError> {
        let snapshot = self.snapshot(dataset)?;
        let at = snapshot
            .documents
            .iter()
            .position(|d| d.id == id)
            .ok_or(KbError::DocumentNotFound)?;
        Ok((
            at + 1,
            DocumentSummary::of(&snapshot.documents[at], &snapshot.hits),
        ))
    }

    /// A dataset's documents, as listed.
    pub fn documents(&self, dataset: &str) -> Result<Vec<DocumentSummary>, KbError> {
        let snapshot = self.snapshot(dataset)?;
        Ok(snapshot
            .documents
            .iter()
            .map(|d| DocumentSummary::of(d, &snapshot.hits))
            .collect())
    }

    /// Adds a document made of `bytes`; its kind from `kind` or else the name's extension.
    pub fn add_document(
        &self,
        dataset: &str,
        name: &str,
        bytes: &[u8],
        kind: Option<SourceKind>,
        metadata: serde_json::Map<String, serde_json::Value>,
    ) -> Result<DocumentSummary, KbError> {
        self.add_document_with(dataset, name, bytes, kind, metadata, &Quiet)
    }

    /// [`KnowledgeBase::add_document`], telling `progress` how far it has got: a large document
    /// takes a model minutes to embed.
    pub fn add_document_with(
        &self,
        dataset: &str,
        name: &str,
        bytes: &[u8],
        kind: Option<SourceKind>,
        metadata: serde_json::Map<String, serde_json::Value>,
        progress: &dyn Progress,
    ) -> Result<DocumentSummary, KbError> {
        self.put_document(dataset, None, name, bytes, kind, metadata, progress)
    }

    /// Replaces document `document` (same id) with new content.
    pub fn replace_document(
        &self,
        dataset: &str,
        document: &str,
        name: &str,
        bytes: &[u8],
        kind: Option<SourceKind>,
        metadata: serde_json::Map<String, serde_json::Value>,
    ) -> Result<DocumentSummary, KbError> {
        self.put_document(dataset, Some(document), name, bytes, kind, metadata, &Quiet)
    }

    #[allow(clippy::too_many_arguments)]
    fn put_document(
        &self,
        dataset: &str,
        replacing: Option<&str>,
        name: &str,
        bytes: &[u8],
        kind: Option<SourceKind>,
        metadata: serde_json::Map<String, serde_json::Value>,
        progress: &dyn Progress,
    ) -> Result<DocumentSummary, KbError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > atlas_api::dify::limits::DOCUMENT_NAME {
            return Err(error::invalid(format!(
                "a document name is 1 to {} characters",
                atlas_api::dify::limits::DOCUMENT_NAME
            )));
        }
        let kind = kind.unwrap_or_else(|| SourceKind::of_name(name));
        // Split and embed before taking the write lock: a bad file changes nothing, and a large
        // one blocks nobody (readers and other writes go on while a model embeds it).
        progress.stage("splitting the document", None);
        let segments = split::split(bytes, kind)?;
        if segments.len() > MAX_DOCUMENT_SEGMENTS {
            return Err(KbError::TooManySegments {
                count: segments.len(),
                limit: MAX_DOCUMENT_SEGMENTS,
            });
        }
        if !self.writable {
            return Err(KbError::ReadOnly);
        }
        self.snapshot(dataset)?;
        let ready = self.embed_segments(&segments, progress)?;
        progress.stage("indexing the dataset", None);
        let _writing = self.write_turn()?;
        let old = self.snapshot(dataset)?;
        let mut documents = old.documents.clone();
        // A replaced document keeps its status.
        let (id, enabled) = match replacing {
            Some(id) => {
                let enabled = edit::editable(&mut documents, id)?.enabled;
                documents.retain(|d| d.id != id);
                (id.to_string(), enabled)
            }
            None => (model::new_id(), true),
        };
        let document = Document {
            id: id.clone(),
            name: name.to_string(),
            kind: kind.as_str().to_string(),
            metadata,
            created_at: model::now(),
            enabled,
            archived: false,
            segments,
        };
        let summary = DocumentSummary::of(&document, &old.hits);
        documents.push(document.clone());
        let snapshot = self.rebuild(&old, documents, &ready)?;
        store::write_json(
            self.files.as_ref(),
            &store::document_file(dataset, &id),
            &document,
        )?;
        self.publish(dataset, snapshot);
        Ok(summary)
    }

    /// The vectors of new `segments` by segment id, or [`KbError::Stopping`] once
    /// [`KnowledgeBase::stop`] was called.
    fn embed_segments(
        &self,
        segments: &[model::Segment],
        progress: &dyn Progress,
    ) -> Result<HashMap<String, Vectors>, KbError> {
        let texts: Vec<kept::Texts<'_>> = segments.iter().map(texts_of).collect();
        let stopping = || self.stopping.load(Ordering::Relaxed);
        let vectors = SegmentIndex::embed(
            &texts,
            self.embedder.as_ref(),
            &|_| None,
            &stopping,
            progress,
        )
        .map_err(|e| {
            if stopping() {
                KbError::Stopping
            } else {
                KbError::Embed(e)
            }
        })?;
        Ok(segments.iter().map(|s| s.id.clone()).zip(vectors).collect())
    }

    /// Abandons embedding under way (its write answers [`KbError::Stopping`] and changes
    /// nothing) and refuses new documents: the server is shutting down.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// `old`'s dataset with `documents` instead of its own, keeping its hit counts and the
    /// vectors of the segments it already had or that `ready` holds.
    fn rebuild(
        &self,
        old: &Snapshot,
        documents: Vec<Document>,
        ready: &HashMap<String, Vectors>,
    ) -> Result<Snapshot, KbError> {
        build(
            old.dataset.clone(),
            documents,
            old.hits.clone(),
            self.embedder.as_ref(),
            (Some(old), ready),
            &Quiet,
        )
    }

    /// Deletes a document.
    pub fn delete_document(&self, dataset: &str, document: &str) -> Result<(), KbError> {
        let _writing = self.write_turn()?;
        let old = self.snapshot(dataset)?;
        if !old.documents.iter().any(|d| d.id == document) {
            return Err(KbError::DocumentNotFound);
        }
        let documents: Vec<Document> = old
            .documents
            .iter()
            .filter(|d| d.id != document)
            .cloned()
            .collect();
        let snapshot = self.rebuild(&old, documents, &HashMap::new())?;
        store::remove(
            self.files.as_ref(),
            &store::document_file(dataset, document),
        )?;
        self.publish(dataset, snapshot);
        Ok(())
    }

    /// The best segments of dataset `id` for `query`, best first. Each returned segment's hit
    /// count grows by one.
    pub fn search(
        &self,
        id: &str,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>, KbError> {
        // Counted as given, spaces included, as the API's schema counts it.
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(error::invalid(format!(
                "query must be at most {MAX_QUERY_CHARS} characters"
            )));
        }
        let query = query.trim();
        if query.is_empty() {
            return Err(error::invalid("query is required"));
        }
        if atlas_text::has_control_characters(query) {
            return Err(error::invalid("query contains control characters"));
        }
        if options.top_k == 0 || options.top_k > MAX_TOP_K {
            return Err(error::invalid(format!(
                "top_k must be between 1 and {MAX_TOP_K}"
            )));
        }
        if let Some(filter) = &options.filter {
            filter::validate(filter)?;
        }
        let snapshot = self.snapshot(id)?;
        // Disabled and archived documents are never returned.
        let admitted: Vec<bool> = snapshot
            .documents
            .iter()
            .map(|d| {
                d.retrievable() && options.filter.as_ref().is_none_or(|f| filter::admits(f, d))
            })
            .collect();
        let allowed = |entry: usize| admitted[snapshot.locations[entry].0];
        let semantic_weight = options
            .semantic_weight
            .unwrap_or_else(|| atlas_search::default_semantic_weight(self.embedder.as_ref()));
        let threshold = options.score_threshold.unwrap_or(0.0);
        let scored = snapshot
            .index
            .search(
                query,
                self.embedder.as_ref(),
                options.method,
                semantic_weight,
                &allowed,
                options.top_k,
                threshold,
            )
            .map_err(KbError::Embed)?;
        let hits = scored
            .into_iter()
            .map(|s| {
                let (d, seg) = snapshot.locations[s.entry];
                let doc = &snapshot.documents[d];
                let segment = doc.segments[seg].clone();
                let hit_count = snapshot
                    .hits
                    .counter(&segment.id)
                    .fetch_add(1, Ordering::Relaxed)
                    + 1;
                Hit {
                    document_id: doc.id.clone(),
                    document_name: doc.name.clone(),
                    document_kind: doc.kind.clone(),
                    document_metadata: doc.metadata.clone(),
                    created_at: doc.created_at,
                    score: (s.score * 10000.0).round() / 10000.0,
                    hit_count,
                    segment,
                }
            })
            .collect::<Vec<_>>();
        if !hits.is_empty() {
            snapshot.hits.dirty.store(true, Ordering::Relaxed);
        }
        Ok(hits)
    }

    /// Writes the hit counts that changed since the last flush, and the vectors of datasets
    /// whose segments changed (see `kept.rs`).
    pub fn flush(&self) -> Result<(), KbError> {
        if !self.writable {
            return Ok(());
        }
        let snapshots: Vec<Arc<Snapshot>> = self.datasets.read().values().cloned().collect();
        for s in snapshots {
            if s.hits.dirty.swap(false, Ordering::Relaxed) {
                store::write_json(
                    self.files.as_ref(),
                    &store::hits_file(&s.dataset.id),
                    &s.hits.snapshot(),
                )?;
            }
        }
        self.keep_vectors()
    }

    /// Writes the vectors of every dataset whose file does not hold them yet.
    fn keep_vectors(&self) -> Result<(), KbError> {
        if !self.keeps_vectors || !self.writable {
            return Ok(());
        }
        // One writer at a time: a dataset deleted meanwhile gets no file after it is gone.
        let _writing = self.writing.lock();
        let snapshots: Vec<Arc<Snapshot>> = self.datasets.read().values().cloned().collect();
        for s in snapshots {
            s.keep_vectors(self.files.as_ref(), self.embedder.as_ref())?;
        }
        Ok(())
    }
}
