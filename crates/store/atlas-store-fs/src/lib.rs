//! The embedded store: seed 001's human-readable folder database, made durable by a journal.
//!
//! ```text
//! DATA/
//! ├── atlas.json                 what this folder is, and its format version
//! ├── .atlas/
//! │   ├── lock                   one writer per folder (an OS file lock; holds the owner's pid)
//! │   ├── checkpoint.json        which journal segments are already folded into the files
//! │   ├── journal/               append-only segments of records (frames, see `entry.rs`)
//! │   └── logs/                  operations.log, errors.log, performance.log
//! └── apps/{app}/                one seed-001 project memory per app or site
//!     ├── index.json, config.json
//!     ├── {NN}_{page name}/      one folder per page: meta.json, links/, scripts/, todos/, ...
//!     └── .atlas/                graph.json (whole graph + statistics), graph.image (the service's
//!                                binary copy of it, see `image.rs`), statistics.json, logs/
//! ```
//!
//! Key design decision: **the journal is the truth until a checkpoint folds it.** A write is
//! acknowledged once its record is fsynced to the journal (records from concurrent writers share
//! one fsync: group commit). The readable files are rewritten by checkpoints, each file atomically
//! (temporary file, then rename), and the journal is trimmed only after the files are synced.
//! Start-up reads each app's image when it is current, else its `graph.json`, and replays the
//! journal. Whole entities replay idempotently; a report's counters ([`Record::Added`]) do not,
//! so each app's `graph.json` (and its image) records the journal segment it covers up to, and
//! replay skips the app's records from before it: a crash in the middle of a checkpoint, some
//! apps folded and the journal not yet trimmed, adds no report twice.

mod entry;
mod files;
mod fold;
mod fsck;
mod image;
mod journal;
mod layout;
mod lock;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use atlas_store::files::{Files, Folder};
use atlas_store::{AppData, CheckReport, Commit, Cut, LoadSink, Loaded, Record, Store, StoreError};
use parking_lot::Mutex;

pub use atlas_store::space::{DEFAULT_RESERVE_MB, RESERVE_VARIABLE};
pub use files::{
    FORMAT_VERSION, MAX_JSON_BYTES, MAX_SCREENSHOT_BYTES, SchemaViolation, validate_task,
    validate_test_idea,
};
pub use fold::SCREENSHOT;
use journal::Journal;
use layout::Layout;

/// The folder store.
pub struct FsStore {
    layout: Layout,
    journal: Journal,
    /// app_id → folder name under `apps/`, fixed once chosen.
    app_dirs: Mutex<HashMap<String, String>>,
    /// Hashes of files as last written, so unchanged meta.json files are not rewritten.
    fold_cache: Mutex<fold::FoldCache>,
    /// app_id → the journal segment its files cover up to (see [`files::GraphFile`]).
    folded: Mutex<HashMap<String, u64>>,
    _lock: lock::FolderLock,
}

impl FsStore {
    /// Opens (creating if missing) a data folder and takes its writer lock.
    pub fn open(root: &Path) -> Result<FsStore, StoreError> {
        let layout = Layout::new(root);
        layout.create_root()?;
        let lock = lock::FolderLock::acquire(&layout.lock_file(), root)?;
        layout.check_root_version()?;
        let app_dirs = layout.read_app_dirs()?;
        // A write killed before its rename leaves its temporary file: never data (the rename is
        // what makes a file current), so the writer clears them before it writes again.
        let mut cleared = CheckReport::default();
        fsck::remove_temporaries(root, true, &mut cleared);
        for dir in app_dirs.values() {
            let app = layout.apps_dir().join(dir);
            fsck::remove_temporaries(&app, true, &mut cleared);
            fsck::remove_temporaries(&app.join(".atlas"), true, &mut cleared);
        }
        for line in &cleared.repaired {
            layout.log_root("operations.log", &format!("start-up: {line}"));
        }
        let journal = Journal::open(layout.journal_dir(), layout.clone())?;
        Ok(FsStore {
            layout,
            journal,
            app_dirs: Mutex::new(app_dirs),
            fold_cache: Mutex::new(fold::FoldCache::default()),
            folded: Mutex::new(HashMap::new()),
            _lock: lock,
        })
    }

    /// Everything a data folder holds, read without its writer lock and without writing: for
    /// readers beside a running `atlas serve` (a simulated phone of an app). Safe against a
    /// checkpoint running meanwhile: a whole entity read twice, from the files and from the
    /// journal, is the same entity, and the newest wins; a report's counters are taken only from
    /// segments the app's files do not cover.
    pub fn read_snapshot(root: &Path) -> Result<Loaded, StoreError> {
        let layout = Layout::new(root);
        if !root.join("atlas.json").is_file() {
            return Err(StoreError::Io(format!(
                "{} is not an Atlas data folder (no atlas.json)",
                root.display()
            )));
        }
        layout.check_root_version()?;
        let folded_before = journal::folded_before(&layout)?;
        let mut dirs: Vec<String> = layout.read_app_dirs()?.into_values().collect();
        dirs.sort();
        let mut folded = HashMap::new();
        let apps = dirs
            .iter()
            .map(|dir| {
                let (data, before) = files::read_graph(&layout.apps_dir().join(dir))?;
                folded.insert(data.app.app_id.clone(), before);
                Ok(data)
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut journal = Vec::new();
        journal::read_segments(
            &layout.journal_dir(),
            (folded_before..u64::MAX, None),
            |_, _| {},
            |segment, records| journal.extend(not_folded(&folded, segment, records)),
        )?;
        Ok(Loaded { apps, journal })
    }

    /// The data folder.
    pub fn root(&self) -> &Path {
        self.layout.root()
    }

    /// The folder of an app, if the app has been folded into files.
    pub fn app_dir(&self, app_id: &str) -> Option<PathBuf> {
        self.app_dirs
            .lock()
            .get(app_id)
            .map(|d| self.layout.apps_dir().join(d))
    }

    /// The folder of an app (fixing its name if no checkpoint has yet).
    pub fn app_folder(&self, app_id: &str) -> PathBuf {
        self.layout.apps_dir().join(self.dir_for(app_id))
    }

    /// The folder of a page (seed 001 §4.1), where an explorer keeps the page's screenshot, DOM,
    /// tasks, scripts, test ideas and reports beside the meta.json checkpoints write. The app's
    /// folder name is fixed here if no checkpoint has fixed it yet.
    pub fn page_dir(&self, page: &atlas_model::Page) -> PathBuf {
        self.app_folder(&page.app_id)
            .join(fold::node_dir_name(page))
    }

    /// [`FsStore::page_dir`], made with its standard sub-folders (§2.2) if it is not there yet.
    pub fn make_page_dir(&self, page: &atlas_model::Page) -> Result<PathBuf, StoreError> {
        let dir = self.page_dir(page);
        fold::ensure_node_dirs(&dir)?;
        Ok(dir)
    }

    fn dir_for(&self, app_id: &str) -> String {
        let mut dirs = self.app_dirs.lock();
        if let Some(d) = dirs.get(app_id) {
            return d.clone();
        }
        let base = atlas_model::sanitize_node_id(app_id);
        let taken = |name: &str| dirs.values().any(|d| d == name);
        let name = if taken(&base) {
            format!("{base}-{}", &atlas_model::page_id(app_id, "")[..8])
        } else {
            base
        };
        dirs.insert(app_id.to_string(), name.clone());
        name
    }
}

/// The records of journal segment `segment` that the files of their apps do not cover already.
fn not_folded(
    folded: &HashMap<String, u64>,
    segment: u64,
    records: Vec<Record>,
) -> impl Iterator<Item = Record> + '_ {
    records.into_iter().filter(move |r| {
        folded
            .get(r.app_id())
            .is_none_or(|before| segment >= *before)
    })
}

impl Store for FsStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        /// Data only: a reader that wants entities, not the service's images.
        struct Collect(Vec<AppData>);
        impl LoadSink for Collect {
            fn image(&mut self, _image: &[u8]) -> bool {
                false
            }
            fn app(&mut self, data: AppData) {
                self.0.push(data);
            }
        }
        let mut apps = Collect(Vec::new());
        let journal = self.load_each(&mut apps)?;
        Ok(Loaded {
            apps: apps.0,
            journal,
        })
    }

    fn load_each(&self, sink: &mut dyn LoadSink) -> Result<Vec<Record>, StoreError> {
        let started = std::time::Instant::now();
        let mut dirs: Vec<(String, String)> = self
            .app_dirs
            .lock()
            .iter()
            .map(|(app_id, dir)| (dir.clone(), app_id.clone()))
            .collect();
        dirs.sort();
        let apps = dirs.len();
        let mut images = 0usize;
        let mut folded = HashMap::new();
        for (dir, app_id) in dirs {
            let app_root = self.layout.apps_dir().join(&dir);
            if let Some(image) = image::current(&app_root)
                && sink.image(&image.bytes[image.body..])
            {
                folded.insert(app_id, image.folded_before);
                images += 1;
                continue;
            }
            let (data, before) = files::read_graph(&app_root)?;
            folded.insert(data.app.app_id.clone(), before);
            sink.app(data);
        }
        let mut journal = Vec::new();
        self.journal
            .replay(|segment, records| journal.extend(not_folded(&folded, segment, records)))?;
        *self.folded.lock() = folded;
        self.layout.log_root(
            "performance.log",
            &format!(
                "load apps={apps} from_images={images} journal_records={} ms={}",
                journal.len(),
                started.elapsed().as_millis()
            ),
        );
        Ok(journal)
    }

    fn append(&self, records: Vec<Record>) -> Commit {
        // One writer: the transition as it now is holds every addition already.
        let whole: Vec<Record> = records.into_iter().map(Record::into_whole).collect();
        self.journal.append(&whole)
    }

    fn takes_added(&self) -> bool {
        true
    }

    fn takes_steps(&self) -> bool {
        true
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.journal.writable()
    }

    fn write_failures(&self) -> u64 {
        self.journal.failures()
    }

    fn resume_writes(&self) -> Result<(), StoreError> {
        self.journal.resume()
    }

    fn disk(&self) -> Option<atlas_store::DiskSpace> {
        self.journal.disk()
    }

    fn journal_bytes(&self) -> u64 {
        self.journal.appended()
    }

    fn begin_checkpoint(&self) -> Result<Cut, StoreError> {
        self.journal.rotate().map(Cut)
    }

    fn finish_checkpoint(&self, cut: Cut, changed: &[AppData]) -> Result<(), StoreError> {
        let started = std::time::Instant::now();
        let mut cache = self.fold_cache.lock();
        for app in changed {
            let dir = self.dir_for(&app.app.app_id);
            let app_root = self.layout.apps_dir().join(&dir);
            if let Err(e) = fold::fold_app(&app_root, &dir, app, cut.0, &mut cache) {
                self.layout
                    .log_root("errors.log", &format!("checkpoint of {dir} failed: {e}"));
                return Err(e);
            }
            self.folded.lock().insert(app.app.app_id.clone(), cut.0);
        }
        layout::sync_filesystem(self.layout.root())?;
        self.journal.trim_before(cut.0)?;
        self.layout.log_root(
            "performance.log",
            &format!(
                "checkpoint apps={} ms={}",
                changed.len(),
                started.elapsed().as_millis()
            ),
        );
        Ok(())
    }

    fn keeps_images(&self) -> bool {
        true
    }

    fn keep_image(&self, app_id: &str, image: &[u8]) -> Result<(), StoreError> {
        let dir = self.dir_for(app_id);
        let folded_before = self.folded.lock().get(app_id).copied().unwrap_or(0);
        image::keep(&self.layout.apps_dir().join(dir), image, folded_before)
    }

    fn check(&self, repair: bool) -> Result<CheckReport, StoreError> {
        let dirs: Vec<(String, String)> = self
            .app_dirs
            .lock()
            .iter()
            .map(|(a, d)| (a.clone(), d.clone()))
            .collect();
        let mut report = fsck::check_root(&self.layout, repair);
        // Acknowledged writes the journal could not give back: told, never repairable.
        report.problems.extend(self.journal.damage());
        for (_, dir) in dirs {
            fsck::check_app(
                &self.layout.apps_dir().join(&dir),
                &dir,
                repair,
                &mut report,
            );
        }
        if repair && !report.repaired.is_empty() {
            self.fold_cache.lock().clear();
        }
        Ok(report)
    }

    fn describe(&self) -> String {
        format!("folder store at {}", self.layout.root().display())
    }

    fn page_folder(&self, page: &atlas_model::Page) -> Option<PathBuf> {
        Some(self.page_dir(page))
    }

    fn page_files(&self, page: &atlas_model::Page) -> Result<Arc<dyn Files>, StoreError> {
        Ok(Arc::new(Folder::new(&self.make_page_dir(page)?)))
    }

    fn app_files(&self, app_id: &str) -> Result<Arc<dyn Files>, StoreError> {
        Ok(Arc::new(Folder::new(&self.app_folder(app_id))))
    }
}
