//! The storage seam of Atlas.
//!
//! The service keeps the whole graph in memory and asks the store for two things only: give back
//! everything durable at start-up, and make these changes durable before I answer the caller. That
//! is the [`Store`] trait, with two implementations the service cannot tell apart: the folder
//! database of seed 001 (`atlas-store-fs`) and PostgreSQL (`atlas-store-pg`, where several
//! servers may share one database). The [`files`] seam does the same for whole files: the
//! knowledge bases, the business graph, and what an explorer keeps beside each page.
//!
//! Key design decision: **records carry whole entities, except a report's counters.** Replaying
//! a whole entity twice changes nothing, so a crash at any point of a checkpoint—files half
//! folded, journal not yet trimmed—recovers to exactly the acknowledged state by loading the
//! files and replaying the journal. A report on a transition that exists is the one write that
//! comes by the hundred thousand, and it changes three numbers: it is logged as those numbers'
//! growth ([`Record::Added`]), which a store takes only if it can replay each exactly once
//! ([`Store::takes_added`]: the folder store marks each app's files with the journal position
//! they cover and replays only what lies after it).

pub mod files;
pub mod scratch;
pub mod space;

pub use atlas_model::Counts;
use atlas_model::{App, Intent, Page, Trace, TraceStep, Transition};
use serde::{Deserialize, Serialize};

/// One durable change: the entity as it is after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Record {
    /// An app, whole.
    App(App),
    /// A page, whole.
    Page(Page),
    /// A transition, whole.
    Transition(Transition),
    /// An intent, whole.
    Intent(Intent),
    /// A remembered session, whole.
    Trace(Trace),
    /// A transition whose counters this change added to: `transition` as the writer now sees it
    /// (what a store with one writer keeps) and `added`, what the change added (what a store with
    /// several writers adds to the counters it holds).
    Counted {
        /// The transition as the writer now sees it.
        transition: Transition,
        /// What the change added to its counters.
        added: Counts,
    },
    /// Counters added to a transition that exists, and nothing else: a report, as a store that
    /// replays each record exactly once ([`Store::takes_added`]) takes it.
    Added(Added),
    /// A step added to a remembered session, and nothing else, as a store that replays each
    /// record exactly once ([`Store::takes_steps`]) takes it: a session of n steps then costs
    /// the journal n steps, not the n²/2 of writing it whole at each.
    Stepped(Stepped),
}

/// A report's step added to its session's trace (see [`Record::Stepped`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stepped {
    /// The session's app.
    pub app_id: String,
    /// The trace.
    pub trace_id: String,
    /// The agent's session, for a trace this step starts.
    pub session_id: String,
    /// The intent, for a trace this step starts.
    pub intent: String,
    /// The step; none when the trace is full and only its time moves on, or when only answers
    /// were checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<TraceStep>,
    /// The graph's answers checked with the step (see [`Trace::checks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<atlas_model::Check>,
    /// The app's version the session runs on, when its device reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// When (RFC 3339): the trace's `updated_at`, and its `created_at` if this step starts it.
    pub at: String,
}

impl Stepped {
    /// A trace this step starts: no step yet, made at the step's time.
    pub fn new_trace(&self) -> Trace {
        Trace {
            trace_id: self.trace_id.clone(),
            app_id: self.app_id.clone(),
            session_id: self.session_id.clone(),
            intent: self.intent.clone(),
            steps: vec![],
            finished: None,
            finish_message: None,
            app_version: self.app_version.clone(),
            checks: vec![],
            ends_on: None,
            verdict: None,
            created_at: self.at.clone(),
            updated_at: self.at.clone(),
        }
    }

    /// The trace after the step.
    pub fn apply_to(&self, trace: &mut Trace) {
        if let Some(step) = &self.step {
            trace.steps.push(step.clone());
        }
        trace.checks.extend_from_slice(&self.checks);
        if self.app_version.is_some() {
            trace.app_version.clone_from(&self.app_version);
        }
        trace.updated_at.clone_from(&self.at);
    }
}

/// What one report added to a transition that exists (see [`Record::Added`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Added {
    /// The transition's app.
    pub app_id: String,
    /// The transition.
    pub transition_id: String,
    /// What the report added to its counters.
    pub added: Counts,
    /// The failure's reason, which replaces the transition's; none leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When, in seconds since 1970 (UTC): the transition's `updated_at`.
    pub at: i64,
}

/// The most one entity (a page, an intent, a remembered session…) may take as compact JSON. A
/// store writes an app's graph in files of bounded size (seed 001 §9.2: none over 10 MB); an
/// entity far below that bound always fits one, and no real screen or session comes near it.
pub const MAX_ENTITY_BYTES: usize = 1 << 20;

impl Record {
    /// The entity's kind and size when it takes more than [`MAX_ENTITY_BYTES`]: such a record is
    /// refused before it is applied or journaled, so no store is ever asked to write it. A
    /// report's counters are a few numbers and are not measured.
    pub fn oversized(&self) -> Option<(&'static str, usize)> {
        let (kind, size) = match self {
            Record::App(a) => ("app", atlas_model::json_size(a)),
            Record::Page(p) => ("page", atlas_model::json_size(p)),
            Record::Intent(i) => ("intent", atlas_model::json_size(i)),
            Record::Trace(t) => ("session trace", atlas_model::json_size(t)),
            Record::Transition(t) => ("transition", atlas_model::json_size(t)),
            Record::Counted { .. } | Record::Added(_) | Record::Stepped(_) => return None,
        };
        (size > MAX_ENTITY_BYTES).then_some((kind, size))
    }

    /// The app the record is about.
    pub fn app_id(&self) -> &str {
        match self {
            Record::App(a) => &a.app_id,
            Record::Page(p) => &p.app_id,
            Record::Transition(t) | Record::Counted { transition: t, .. } => &t.app_id,
            Record::Intent(i) => &i.app_id,
            Record::Trace(t) => &t.app_id,
            Record::Added(a) => &a.app_id,
            Record::Stepped(s) => &s.app_id,
        }
    }

    /// The record with whole entities only: a [`Record::Counted`] becomes its transition, for a
    /// store with one writer, where the entity as it now is already holds every addition.
    pub fn into_whole(self) -> Record {
        match self {
            Record::Counted { transition, .. } => Record::Transition(transition),
            other => other,
        }
    }
}

impl Added {
    /// The transition after the report.
    pub fn apply_to(&self, t: &mut Transition) {
        self.added.add_to(t);
        if let Some(reason) = &self.reason {
            t.last_failure_reason = reason.clone();
        }
        t.updated_at = atlas_model::rfc3339_of_seconds(self.at);
    }
}

/// Everything Atlas knows about one app, as the store holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppData {
    /// The app.
    pub app: App,
    /// Its pages.
    #[serde(default)]
    pub pages: Vec<Page>,
    /// Its registered intents.
    #[serde(default)]
    pub intents: Vec<Intent>,
    /// Its transitions.
    #[serde(default)]
    pub transitions: Vec<Transition>,
    /// Its remembered sessions.
    #[serde(default)]
    pub traces: Vec<Trace>,
}

/// Why the store could not do what was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// A file or the database failed, said in words (no other error behind it).
    #[error("{0}")]
    Io(String),
    /// A file, the database or an encoding failed while doing `context`, for the reason its
    /// source gives (shared: one failed write is every waiter's error).
    #[error("{}{source}", if context.is_empty() { String::new() } else { format!("{context}: ") })]
    Caused {
        /// What was being done (`cannot write …`), or nothing.
        context: String,
        /// Why it failed.
        #[source]
        source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The store cannot be reached now (a database that went away); the write was not made and
    /// can be tried again.
    #[error("store unavailable: {context}{}", source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    Unavailable {
        /// What is away (`the database`), or why (`the store is stopping`).
        context: String,
        /// The connection's error, when one said so.
        #[source]
        source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// Another process writes the data folder.
    #[error("data folder {path} is in use by another atlas process{holder}")]
    Locked {
        /// The folder.
        path: String,
        /// Which process holds it, as its lock file says.
        holder: String,
    },
    /// A file that cannot be read as what it should be.
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A folder of a newer format than this build reads.
    #[error(
        "{path} was written by a newer Atlas (format {found}, this one reads up to {supported})"
    )]
    TooNew {
        /// The folder's format file.
        path: String,
        /// Its format version.
        found: String,
        /// The newest this build reads.
        supported: String,
    },
    /// A write larger than the store takes.
    #[error("{what} would be {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// What was written.
        what: String,
        /// Its size in bytes.
        size: usize,
        /// The most the store takes.
        limit: usize,
    },
    /// The journal failed before: nothing more is written until the process restarts.
    #[error("the journal failed earlier and the store is read-only until restart: {0}")]
    Failed(String),
    /// No room on the disk that holds the data: the write was not kept, and writes are refused
    /// until space is freed (they then resume by themselves).
    #[error(
        "the disk holding {folder} is full ({free} bytes free, {reserve} kept for checkpoints): \
         nothing of this write was kept; writes resume once space is freed"
    )]
    Full {
        /// The data folder.
        folder: String,
        /// Bytes free for Atlas on its disk.
        free: u64,
        /// Bytes kept free for checkpoints, which free journal segments.
        reserve: u64,
    },
    /// The database server's disk is full (SQLSTATE 53100): the write was not kept, and writes
    /// go on being refused until space is freed there.
    #[error(
        "the database's disk is full ({cause}): nothing of this write was kept; writes resume \
         once space is freed on the database server"
    )]
    DatabaseFull {
        /// The server's words.
        cause: String,
    },
    /// No space left on the disk for a file of the data folder: nothing of it was written.
    #[error(
        "no space left on the disk holding {path}: nothing of this write was kept; try again once \
         space is freed"
    )]
    NoSpace {
        /// The file.
        path: String,
    },
    /// A write failed on the disk for another reason than space: it was not kept, and writes
    /// are refused until the disk takes one again.
    #[error(
        "a write to {folder} failed ({cause}): nothing of it was kept; writes resume once the disk \
         takes them again"
    )]
    WriteFailed {
        /// The data folder.
        folder: String,
        /// The system's error.
        cause: String,
    },
}

impl StoreError {
    /// The store cannot be reached now, for a reason said in words.
    pub fn unavailable(context: impl Into<String>) -> StoreError {
        StoreError::Unavailable {
            context: context.into(),
            source: None,
        }
    }

    /// `what` cannot be reached now, as `source` says.
    pub fn away(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Unavailable {
            context: what.into(),
            source: Some(std::sync::Arc::new(source)),
        }
    }

    /// Whether nothing was written and the same request may succeed later: the database is
    /// away, or the disk is full or failing. Answered 503 with `Retry-After`.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable { .. }
                | StoreError::Full { .. }
                | StoreError::DatabaseFull { .. }
                | StoreError::NoSpace { .. }
                | StoreError::WriteFailed { .. }
        )
    }

    /// A failure while doing `context`, caused by `source`.
    pub fn caused(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Caused {
            context: context.into(),
            source: std::sync::Arc::new(source),
        }
    }
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::caused("", e)
    }
}

/// The writer's half of a [`Commit`]: send `Ok(())` once the records are durable.
pub type CommitSender = tokio::sync::oneshot::Sender<Result<(), StoreError>>;

/// Resolves once the appended records are on disk (or the write failed).
pub struct Commit(tokio::sync::oneshot::Receiver<Result<(), StoreError>>);

impl Commit {
    /// A commit to resolve, and its sender for the writer.
    pub fn new() -> (CommitSender, Commit) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (tx, Commit(rx))
    }

    /// An already-failed commit.
    pub fn failed(message: String) -> Commit {
        let (tx, commit) = Commit::new();
        let _ = tx.send(Err(StoreError::Io(message)));
        commit
    }

    /// A commit refused before anything was written, for the reason `error` gives.
    pub fn refused(error: StoreError) -> Commit {
        let (tx, commit) = Commit::new();
        let _ = tx.send(Err(error));
        commit
    }

    /// Waits from async code.
    pub async fn wait(self) -> Result<(), StoreError> {
        match self.0.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StoreError::Failed("journal writer stopped".into())),
        }
    }

    /// Waits from a thread that is not running an async runtime.
    pub fn wait_blocking(self) -> Result<(), StoreError> {
        match self.0.blocking_recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StoreError::Failed("journal writer stopped".into())),
        }
    }
}

/// The disk that holds a data folder, as health checks report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskSpace {
    /// The data folder.
    pub folder: String,
    /// Bytes free for Atlas.
    pub free_bytes: u64,
    /// Bytes kept free for checkpoints: writes are refused below it.
    pub reserve_bytes: u64,
    /// Below this many free bytes, health warns that the disk is filling up.
    pub warn_below_bytes: u64,
}

/// A point in the journal: everything appended before it is covered by a checkpoint taken now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut(pub u64);

/// One round of followed changes (see [`Store::follow`]).
pub struct Followed {
    rows: Vec<Record>,
    settle: Box<dyn FnOnce(Vec<Record>) -> Vec<Record> + Send>,
}

impl Followed {
    /// `rows` as the store read them; `settle` turns them into what the follower should hold.
    pub fn new(
        rows: Vec<Record>,
        settle: impl FnOnce(Vec<Record>) -> Vec<Record> + Send + 'static,
    ) -> Followed {
        Followed {
            rows,
            settle: Box::new(settle),
        }
    }

    /// The entities as the store read them (to prepare for them before settling).
    pub fn rows(&self) -> &[Record] {
        &self.rows
    }

    /// The records to apply, in an order that applies cleanly (apps, pages and intents, then
    /// transitions and traces). Call it holding the state still—no appends in between—because
    /// it lays this process's own writes that the round does not include over the rows read,
    /// so that memory never goes back to an older version than the one it wrote.
    pub fn settle(self) -> Vec<Record> {
        (self.settle)(self.rows)
    }
}

/// What `fsck` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    /// Apps checked.
    pub apps: usize,
    /// Pages checked.
    pub pages: usize,
    /// Transitions checked.
    pub transitions: usize,
    /// What is wrong and was not repaired.
    pub problems: Vec<String>,
    /// What was repaired, and how.
    pub repaired: Vec<String>,
}

impl CheckReport {
    /// Nothing is left wrong.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What [`Store::load`] gives back: the folded files, and the journal records written since,
/// in order, for the caller to apply on top (its indexed upserts make that linear).
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every app as its files hold it.
    pub apps: Vec<AppData>,
    /// The records written since, in order.
    pub journal: Vec<Record>,
}

impl Loaded {
    /// The apps as they stand once the journal is applied: each record replaces the entity
    /// with its key, or adds it. For readers that want the data, not a live graph (a simulated
    /// phone, an export); the service applies the journal into its own indexes instead.
    pub fn into_apps(self) -> Vec<AppData> {
        fn upsert<T>(list: &mut Vec<T>, item: T, key: impl Fn(&T) -> &str) {
            match list.iter_mut().find(|x| key(x) == key(&item)) {
                Some(slot) => *slot = item,
                None => list.push(item),
            }
        }
        let mut apps = self.apps;
        for record in self.journal {
            let at = match apps.iter().position(|a| a.app.app_id == record.app_id()) {
                Some(i) => i,
                None => {
                    let Record::App(app) = &record else {
                        continue; // an entity of an app never created: nothing to attach it to
                    };
                    apps.push(AppData {
                        app: app.clone(),
                        pages: Vec::new(),
                        intents: Vec::new(),
                        transitions: Vec::new(),
                        traces: Vec::new(),
                    });
                    apps.len() - 1
                }
            };
            let data = &mut apps[at];
            match record.into_whole() {
                Record::App(app) => data.app = app,
                Record::Page(p) => upsert(&mut data.pages, p, |p| &p.page_id),
                Record::Transition(t) => upsert(&mut data.transitions, t, |t| &t.transition_id),
                Record::Intent(i) => upsert(&mut data.intents, i, |i| &i.intent_id),
                Record::Trace(t) => upsert(&mut data.traces, t, |t| &t.trace_id),
                Record::Added(a) => {
                    if let Some(t) = data
                        .transitions
                        .iter_mut()
                        .find(|t| t.transition_id == a.transition_id)
                    {
                        a.apply_to(t);
                    }
                }
                Record::Stepped(s) => {
                    match data.traces.iter_mut().find(|t| t.trace_id == s.trace_id) {
                        Some(t) => s.apply_to(t),
                        None => {
                            let mut t = s.new_trace();
                            s.apply_to(&mut t);
                            data.traces.push(t);
                        }
                    }
                }
                Record::Counted { .. } => unreachable!("into_whole"),
            }
        }
        apps
    }
}

/// A page's screenshot in its folder, as an explorer saves it (seed 001 §2.2).
pub const SCREENSHOT: &str = "screenshot.png";

/// Where [`Store::load_each`] hands each app it reads.
pub trait LoadSink {
    /// An image of one app ([`Store::keep_image`]), current with the app's files: true when the
    /// sink took it, false to be handed the app's data instead.
    fn image(&mut self, image: &[u8]) -> bool;
    /// One app as its files hold it.
    fn app(&mut self, data: AppData);
}

/// Durable storage for the graph.
pub trait Store: Send + Sync {
    /// Everything durable: the folded files and the journal to replay on top of them.
    fn load(&self) -> Result<Loaded, StoreError>;
    /// What [`Store::load`] gives, each app handed to `each` as soon as it is read and the
    /// journal returned: a store that can read one app at a time holds no more than one app's
    /// data besides the caller's, which keeps start-up's peak, and the freed memory it leaves
    /// behind, to one app's size rather than the whole graph's.
    ///
    /// A store that keeps images ([`Store::keep_image`]) offers an app's image first, when the
    /// app's files are still those the image was made with; the app's data follows only if the
    /// sink refuses it.
    fn load_each(&self, sink: &mut dyn LoadSink) -> Result<Vec<Record>, StoreError> {
        let loaded = self.load()?;
        for app in loaded.apps {
            sink.app(app);
        }
        Ok(loaded.journal)
    }
    /// Appends records as one atomic unit; the [`Commit`] resolves once they are durable.
    /// Callers append in the order they changed their state.
    fn append(&self, records: Vec<Record>) -> Commit;
    /// Bytes appended since the last checkpoint began: what a restart would replay beyond the
    /// files (none for a store whose writes are in their final place).
    fn journal_bytes(&self) -> u64 {
        0
    }
    /// Marks the journal position a checkpoint will cover. The caller must hold its state still
    /// (no appends) while calling this and while copying the state it will fold.
    fn begin_checkpoint(&self) -> Result<Cut, StoreError>;
    /// Folds the state of the changed apps into the files and drops the journal before `cut`.
    fn finish_checkpoint(&self, cut: Cut, changed: &[AppData]) -> Result<(), StoreError>;
    /// Whether the store takes [`Record::Added`]: it replays each exactly once. A store that
    /// does not is given the transition whole ([`Record::Counted`]) instead.
    fn takes_added(&self) -> bool {
        false
    }
    /// Whether the store takes [`Record::Stepped`]: it replays each exactly once. A store that
    /// does not is given the trace whole ([`Record::Trace`]) instead.
    fn takes_steps(&self) -> bool {
        false
    }
    /// Whether the store keeps images of apps for the next start-up ([`Store::keep_image`]).
    fn keeps_images(&self) -> bool {
        false
    }
    /// Keeps `image`, the caller's own encoding of `app_id` as the last [`Store::finish_checkpoint`]
    /// folded it, beside the files it was folded into, for [`Store::load_each`] to offer while
    /// those files stay as they are. An image lost or refused costs time, never data: the files
    /// stay the truth. Call it before any later checkpoint of the app.
    fn keep_image(&self, _app_id: &str, _image: &[u8]) -> Result<(), StoreError> {
        Ok(())
    }
    /// Checks the files for consistency; with `repair`, rebuilds what can be rebuilt.
    fn check(&self, repair: bool) -> Result<CheckReport, StoreError>;
    /// A line for logs: where and what this store is.
    fn describe(&self) -> String;
    /// For a store that other processes write too: the changes they (and this process) made,
    /// round by round, as whole entities as they now stand. `None` for a store with one writer.
    /// Called once, by the service that loaded the store.
    fn follow(&self) -> Option<std::sync::mpsc::Receiver<Followed>> {
        None
    }
    /// Whether the store wants [`Store::finish_checkpoint`] called with the changed apps: a
    /// store whose writes are already in their final place does not, and is spared the copies.
    fn wants_checkpoints(&self) -> bool {
        true
    }
    /// Whether the store can take writes now (a database that went away cannot); a store on
    /// local files always can.
    fn available(&self) -> bool {
        true
    }
    /// Whether a write now would be taken: an error ([`StoreError::is_transient`]) while the
    /// disk is full or a write failed, asked before a write changes memory so that a refused
    /// write changes nothing.
    fn writable(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// How many times writing has failed since the store opened. A failed append may leave the
    /// caller's memory ahead of what is durable: when this count moves, the caller reads its
    /// state again ([`Store::load_each`] gives what is durable, and only that) before it writes
    /// or checkpoints, then asks [`Store::resume_writes`]. Stores that read failed writes' rows
    /// again by themselves ([`Store::follow`]) keep it at 0.
    fn write_failures(&self) -> u64 {
        0
    }
    /// After a failure, tries to take writes again (a new journal segment); an error while the
    /// disk still cannot. Only once the caller's memory holds no more than what is durable.
    fn resume_writes(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// The disk under the store: its free space and the reserve, for health checks; none for a
    /// store that is not on a local disk.
    fn disk(&self) -> Option<DiskSpace> {
        None
    }
    /// A page's folder of seed 001 (§4.1), where an explorer keeps its screenshot, DOM and
    /// reports, for people to open; none for a store without folders.
    fn page_folder(&self, _page: &atlas_model::Page) -> Option<std::path::PathBuf> {
        None
    }
    /// The files `page` keeps beside the graph (see [`files::Artifacts`]), named relative to
    /// it: in its folder for a data folder, in the files table for a database.
    fn page_files(
        &self,
        page: &atlas_model::Page,
    ) -> Result<std::sync::Arc<dyn files::Files>, StoreError>;
    /// The files an app keeps beside the graph (the exploration's frontier), named relative to
    /// it.
    fn app_files(&self, app_id: &str) -> Result<std::sync::Arc<dyn files::Files>, StoreError>;
}
