//! Where the business graph lives: `DATA/biz/graph.json`, Atlas's own JSON document of the graph,
//! readable and diffable like the rest of the data folder. A replacement is written atomically
//! (temporary file, fsync, rename) before it is served, so an acknowledged import survives a
//! crash and a failed one leaves the previous graph in place.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use atlas_search::kept::Kept;
use atlas_store::files::{Files, Folder, LockFailure, lock_folder};
use atlas_text::Embedder;
use parking_lot::RwLock;

use crate::error::BizError;
use crate::graph::BusinessGraph;
use crate::model::BusinessData;
use crate::tools::BizSnapshot;

const GRAPH_FILE: &str = "graph.json";
/// The searchable entities' vectors as the embedder made them (see [`atlas_search::kept`]), so
/// that opening with a model embeds only entities whose search text changed.
const VECTORS_FILE: &str = "vectors.image";

pub use atlas_api::business::ImportReport;

/// The business graph of one data folder, swapped whole on import.
pub struct BizStore {
    /// Where graph.json is kept (none for a graph in memory only).
    files: Option<Arc<dyn Files>>,
    embedder: Arc<dyn Embedder>,
    current: RwLock<Arc<BizSnapshot>>,
    /// Whether this process keeps the vectors file: the folder's one writer does; replicas
    /// sharing a database keep none (a file one writes, the others would follow).
    keeps_vectors: bool,
    /// Whether some entities wait for [`BizStore::embed_deferred`].
    deferred: std::sync::atomic::AtomicBool,
    _lock: Option<File>,
}

impl BizStore {
    /// Opens `folder` (created when missing) for serving and importing. One writer at a time: the
    /// folder's `lock` is held until the store is dropped.
    pub fn open(folder: &Path, embedder: Arc<dyn Embedder>) -> Result<BizStore, BizError> {
        Self::open_folder(folder, embedder, false)
    }

    fn open_folder(
        folder: &Path,
        embedder: Arc<dyn Embedder>,
        defer: bool,
    ) -> Result<BizStore, BizError> {
        std::fs::create_dir_all(folder)?;
        let lock = match lock_folder(&folder.join("lock")) {
            Ok(file) => file,
            Err(LockFailure::Held { holder }) => {
                return Err(BizError::Locked {
                    path: folder.display().to_string(),
                    holder,
                });
            }
            Err(LockFailure::Io(e)) => return Err(e.into()),
        };
        Self::from_files(Arc::new(Folder::new(folder)), embedder, Some(lock), defer)
    }

    /// [`BizStore::open`] without embedding: entities whose vectors no file keeps are found by
    /// their words alone until [`BizStore::embed_deferred`] embeds them, so that a server answers
    /// at once (on a folder opened before with the same model, there are none).
    pub fn open_deferred(folder: &Path, embedder: Arc<dyn Embedder>) -> Result<BizStore, BizError> {
        Self::open_folder(folder, embedder, true)
    }

    /// Embeds the entities [`BizStore::open_deferred`] left to their words and keeps their
    /// vectors; whether there were any.
    pub fn embed_deferred(&self) -> Result<bool, BizError> {
        if !self
            .deferred
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            return Ok(false);
        }
        self.reload()?;
        Ok(true)
    }

    /// Opens the graph kept in `files` that other processes write too (a database shared by
    /// replicas): no lock; each process follows the others' imports through
    /// [`BizStore::reload`].
    pub fn open_shared(
        files: Arc<dyn Files>,
        embedder: Arc<dyn Embedder>,
    ) -> Result<BizStore, BizError> {
        Self::from_files(files, embedder, None, false)
    }

    /// The graph kept in `files`; with the folder's `lock`, this process is its one writer and
    /// keeps its vectors.
    fn from_files(
        files: Arc<dyn Files>,
        embedder: Arc<dyn Embedder>,
        lock: Option<File>,
        defer: bool,
    ) -> Result<BizStore, BizError> {
        let keeps_vectors = lock.is_some();
        let data = Self::read_from(files.as_ref())?;
        let (snapshot, deferred) = build(files.as_ref(), data, &embedder, keeps_vectors, defer)?;
        Ok(BizStore {
            files: Some(files),
            embedder,
            current: RwLock::new(Arc::new(snapshot)),
            keeps_vectors,
            deferred: deferred.into(),
            _lock: lock,
        })
    }

    /// Reads the graph again as kept (another process imported one) and serves it.
    pub fn reload(&self) -> Result<(), BizError> {
        let Some(files) = &self.files else {
            return Ok(());
        };
        let data = Self::read_from(files.as_ref())?;
        let (snapshot, _) = build(
            files.as_ref(),
            data,
            &self.embedder,
            self.keeps_vectors,
            false,
        )?;
        *self.current.write() = Arc::new(snapshot);
        Ok(())
    }

    /// The graph kept in `files` (empty when there is none), read without building an index.
    pub fn read_from(files: &dyn Files) -> Result<BusinessData, BizError> {
        match files.read(GRAPH_FILE).map_err(BizError::Store)? {
            Some(bytes) => crate::import::from_json(&String::from_utf8_lossy(&bytes))
                .map_err(|e| BizError::Invalid(format!("{GRAPH_FILE}: {e}"))),
            None => Ok(BusinessData::default()),
        }
    }

    /// The graph stored in `folder` (empty when there is none), read without taking the lock or
    /// building an index: what an export beside a running server needs.
    pub fn read(folder: &Path) -> Result<BusinessData, BizError> {
        Self::read_from(&Folder::new(folder))
    }

    /// A store kept in memory only (tests, tools that need no folder).
    pub fn in_memory(
        data: BusinessData,
        embedder: Arc<dyn Embedder>,
    ) -> Result<BizStore, BizError> {
        let snapshot = BizSnapshot::build(BusinessGraph::build(data)?, embedder.clone())?;
        Ok(BizStore {
            files: None,
            embedder,
            current: RwLock::new(Arc::new(snapshot)),
            keeps_vectors: false,
            deferred: false.into(),
            _lock: None,
        })
    }

    /// The graph being served.
    pub fn current(&self) -> Arc<BizSnapshot> {
        self.current.read().clone()
    }

    /// Whether the folder has no business graph yet (nothing imported).
    pub fn is_empty(&self) -> bool {
        let snapshot = self.current();
        let data = snapshot.graph().data();
        data.businesses.is_empty()
            && data.implementations.is_empty()
            && data.data_resources.is_empty()
    }

    /// Replaces the whole graph: checked and indexed first, then on disk, then served.
    pub fn replace(&self, data: BusinessData, skipped: usize) -> Result<ImportReport, BizError> {
        // What is stored is what was given: search texts generated from fields stay generated,
        // so a description edited in graph.json later regenerates its search text.
        let given = serde_json::to_vec_pretty(&data)?;
        let graph = BusinessGraph::build(data)?;
        let d = graph.data();
        let report = ImportReport {
            businesses: d.businesses.len(),
            steps: d.steps.len(),
            implementations: d.implementations.len(),
            data_resources: d.data_resources.len(),
            relations: d.relations.len(),
            skipped,
        };
        let snapshot = match &self.files {
            Some(files) => {
                let (snapshot, embedded) = BizSnapshot::build_kept(
                    graph,
                    self.embedder.clone(),
                    kept(files.as_ref(), &self.embedder, self.keeps_vectors),
                    false,
                )?;
                files.write(GRAPH_FILE, &given).map_err(BizError::Store)?;
                if self.keeps_vectors && embedded > 0 {
                    keep(files.as_ref(), &snapshot);
                }
                snapshot
            }
            None => BizSnapshot::build(graph, self.embedder.clone())?,
        };
        *self.current.write() = Arc::new(snapshot);
        Ok(report)
    }
}

/// The vectors `files` keep for `embedder` (none for a lexical one, or when not `keeps`).
fn kept(files: &dyn Files, embedder: &Arc<dyn Embedder>, keeps: bool) -> Kept {
    if !keeps || embedder.is_lexical() {
        return Kept::default();
    }
    match files.read(VECTORS_FILE) {
        Ok(Some(bytes)) => Kept::parse(&bytes, &embedder.name()),
        _ => Kept::default(),
    }
}

/// Writes the snapshot's vectors for the next opening; a failure costs that opening time only.
fn keep(files: &dyn Files, snapshot: &BizSnapshot) {
    if let Err(e) = files.write(VECTORS_FILE, &snapshot.kept_vectors()) {
        tracing::warn!("the business graph's vectors were not kept: {e}");
    }
}

/// The snapshot of `data`, with the vectors `files` keep where they serve; the file written
/// again when anything had to be embedded (and this process keeps it). With `defer`, nothing is
/// embedded: the entities the file lacks are found by their words alone, and the answer says
/// whether there were any (for [`BizStore::embed_deferred`]).
fn build(
    files: &dyn Files,
    data: BusinessData,
    embedder: &Arc<dyn Embedder>,
    keeps: bool,
    defer: bool,
) -> Result<(BizSnapshot, bool), BizError> {
    let graph = BusinessGraph::build(data)?;
    let (snapshot, missing) =
        BizSnapshot::build_kept(graph, embedder.clone(), kept(files, embedder, keeps), defer)?;
    let deferred = defer && missing > 0 && !embedder.is_lexical();
    if keeps && missing > 0 && !deferred {
        keep(files, &snapshot);
    }
    Ok((snapshot, deferred))
}
