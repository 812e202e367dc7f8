//! Atlas's store on PostgreSQL: any number of `atlas serve` replicas on one database.
//!
//! Each replica keeps the whole graph in memory, as with the folder store, and uses the database
//! for what one machine cannot give: a durable, shared truth. A write is acknowledged once its
//! transaction committed; every replica follows the others' writes through a change feed
//! (`follow`); and what replicas could race on, a transition's counters, is added up by the
//! database (`UPDATE … SET n = n + $1`) from the reports' deltas ([`Record::Added`],
//! [`Record::Counted`]), never read and written back by a replica; the other replicas add the
//! same deltas to their memory from the change feed.
//!
//! Key design decision: **the [`Store`] trait stays synchronous and this store brings its own
//! small tokio runtime.** The service calls the store from its write path and from start-up code
//! that may or may not run inside a runtime; owning the runtime makes the store usable from both
//! (and from plain threads in the benchmarks) without the service knowing that PostgreSQL is
//! asynchronous.

mod connect;
mod files;
mod follow;
mod pending;
mod read;
mod schema;
mod write;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use atlas_store::files::{Files, Scoped};
use atlas_store::{AppData, CheckReport, Commit, Cut, Loaded, Record, Store, StoreError};
use parking_lot::Mutex;

pub use connect::{create_database, drop_database, with_database};
pub use files::PgFiles;
pub use schema::SCHEMA_VERSION;

pub(crate) use connect::{db_error, pool_error};
use connect::{redacted, replica_name, tls};
pub(crate) use read::{kind_of, load_all, record_of};

/// How a replica connects.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Connections in the pool: the writers' lanes take up to four at once, the follower and
    /// the notifier one each; fewer connections mean fewer concurrent commits.
    pub pool_size: usize,
    /// A PEM file of certificate authorities to trust besides the system's (a managed
    /// database's own CA).
    pub ca_file: Option<std::path::PathBuf>,
    /// How long to wait for a connection before a write answers "unavailable".
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 16,
            ca_file: None,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// What the writer, the follower and the store share.
pub(crate) struct Shared {
    pub(crate) pool: deadpool_postgres::Pool,
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: tokio_postgres_rustls::MakeRustlsConnect,
    /// This replica's name in the rows it writes (`writer`): random, so that replicas never
    /// share one.
    pub(crate) writer: i64,
    /// The newest change sequence number this replica committed, and a wake-up for the notifier.
    pub(crate) latest: std::sync::atomic::AtomicI64,
    pub(crate) committed: tokio::sync::Notify,
    /// Where the follower sends the names of files other replicas changed, once asked.
    pub(crate) file_sink: Mutex<Option<std::sync::mpsc::Sender<Vec<String>>>>,
    /// This replica's writes the follower has not seen in the database yet.
    pub(crate) pending: Mutex<pending::Pending>,
    /// Whether the last write or look reached the database.
    reachable: AtomicBool,
    closed: AtomicBool,
    /// Why writes are refused for now: the database's disk was full at the last commit. Writes
    /// are tried again at most as often as the service asks ([`Store::resume_writes`]).
    full: Mutex<Option<StoreError>>,
}

impl Shared {
    /// Keeps a commit's outcome for [`Store::writable`]: a full disk refuses writes until one is
    /// tried again and commits.
    pub(crate) fn note_commit(&self, outcome: &Result<(), StoreError>) {
        let mut full = self.full.lock();
        match outcome {
            Err(e @ StoreError::DatabaseFull { .. }) => {
                if full.is_none() {
                    tracing::error!("writes stopped: {e}");
                }
                *full = Some(e.clone());
            }
            Ok(()) => {
                if full.take().is_some() {
                    tracing::info!("writes resumed: the database took a write again");
                }
            }
            Err(_) => {}
        }
    }

    pub(crate) fn mark(&self, reachable: bool) {
        let was = self.reachable.swap(reachable, Ordering::Relaxed);
        if was != reachable {
            if reachable {
                tracing::info!("the database is reachable again");
            } else {
                tracing::warn!("the database is unreachable: writes answer 503 until it is back");
            }
        }
    }

    /// Wakes the notifier for changes committed up to `seq`.
    pub(crate) fn committed_up_to(&self, seq: Option<i64>) {
        if let Some(seq) = seq {
            self.latest.fetch_max(seq, Ordering::Relaxed);
            self.committed.notify_one();
        }
    }

    pub(crate) fn closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

/// The PostgreSQL store.
pub struct PgStore {
    /// Itself, for the files it hands out (they keep the store alive).
    me: std::sync::Weak<PgStore>,
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    writer: tokio::sync::mpsc::UnboundedSender<write::Append>,
    /// The snapshot the last load was read in, for the follower to start from.
    loaded_at: Mutex<Option<String>>,
    describe: String,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB
    /// [?sslmode=disable|prefer|require]`), creating or migrating Atlas's tables.
    pub fn connect(url: &str, options: PgOptions) -> Result<Arc<PgStore>, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::caused("bad PostgreSQL address", e))?;
        let mut config = config;
        config.connect_timeout(options.connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("atlas");
        }
        // Atlas's statements are prepared once and take arrays of any length: planning them
        // for each call's values cost more than running them, and their plan does not depend
        // on the values.
        let generic = match config.get_options() {
            Some(given) => format!("{given} -c plan_cache_mode=force_generic_plan"),
            None => "-c plan_cache_mode=force_generic_plan".to_string(),
        };
        config.options(&generic);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("atlas-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::caused("", e))?;
        let tls = tls(&options)?;
        let manager = deadpool_postgres::Manager::from_config(
            config.clone(),
            tls.clone(),
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(options.pool_size.max(2))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(options.connect_timeout))
            .create_timeout(Some(options.connect_timeout))
            .recycle_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| StoreError::caused("", e))?;
        let shared = Arc::new(Shared {
            pool,
            config: config.clone(),
            tls,
            writer: replica_name(),
            latest: Default::default(),
            committed: Default::default(),
            file_sink: Default::default(),
            pending: Default::default(),
            reachable: AtomicBool::new(true),
            closed: AtomicBool::new(false),
            full: Mutex::new(None),
        });
        let (writer, queue) = tokio::sync::mpsc::unbounded_channel();
        let store = Arc::new_cyclic(|me| PgStore {
            me: me.clone(),
            describe: redacted(&config),
            shared: shared.clone(),
            writer,
            loaded_at: Mutex::new(None),
            runtime: Some(runtime),
        });
        store.block_on(async move {
            let mut client = shared.pool.get().await.map_err(pool_error)?;
            schema::migrate(&mut client).await
        })?;
        let queue = Arc::new(tokio::sync::Mutex::new(queue));
        for _ in 0..write::LANES {
            store.spawn(write::run(store.shared.clone(), queue.clone()));
        }
        store.spawn(write::notify(store.shared.clone()));
        Ok(store)
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("runtime lives as long as the store")
    }

    fn spawn(&self, job: impl Future<Output = ()> + Send + 'static) {
        self.runtime().spawn(job);
    }

    /// Runs `job` on the store's runtime and waits for it, from any thread (one of another
    /// runtime's included: it is parked, not asked to run a runtime inside a runtime).
    pub(crate) fn block_on<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime().spawn(async move {
            let _ = tx.send(job.await);
        });
        rx.recv()
            .unwrap_or_else(|_| Err(StoreError::unavailable("the store is stopping")))
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
        self.shared.committed.notify_one();
        if let Some(runtime) = self.runtime.take() {
            // Allowed anywhere, a runtime's own thread included; queued writes were answered
            // or will read as failed.
            runtime.shutdown_background();
        }
    }
}

impl Store for PgStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        let shared = self.shared.clone();
        let (snapshot, apps) = self.block_on(async move { load_all(&shared).await })?;
        *self.loaded_at.lock() = Some(snapshot);
        Ok(Loaded {
            apps,
            journal: Vec::new(),
        })
    }

    fn append(&self, records: Vec<Record>) -> Commit {
        // Replicas follow whole rows: a trace is written whole (`takes_steps` is false).
        if records.iter().any(|r| matches!(r, Record::Stepped(_))) {
            return Commit::failed("a session's step is written with its whole trace".into());
        }
        let (tx, commit) = Commit::new();
        let id = self.shared.pending.lock().push(&records);
        if self.writer.send((id, records, tx)).is_err() {
            // Only while the store is being dropped.
            return Commit::failed("the database writer stopped".into());
        }
        commit
    }

    /// Nothing to fold: every acknowledged write is in its table already.
    fn begin_checkpoint(&self) -> Result<Cut, StoreError> {
        Ok(Cut(0))
    }

    fn finish_checkpoint(&self, _cut: Cut, _changed: &[AppData]) -> Result<(), StoreError> {
        Ok(())
    }

    /// A report's growth is added to the edge's row by the database, and carried by its change
    /// to the other replicas, which add it in turn: each once, whatever the order.
    fn takes_added(&self) -> bool {
        true
    }

    fn wants_checkpoints(&self) -> bool {
        false
    }

    /// Counts what the database holds, and finds transitions whose pages are not there.
    fn check(&self, _repair: bool) -> Result<CheckReport, StoreError> {
        let shared = self.shared.clone();
        self.block_on(async move {
            let client = shared.pool.get().await.map_err(pool_error)?;
            let count = |kind: &'static str| {
                let client = &client;
                async move {
                    client
                        .query_one(
                            "SELECT count(*) FROM atlas_entities WHERE kind = $1",
                            &[&kind],
                        )
                        .await
                        .map(|r| r.get::<_, i64>(0) as usize)
                        .map_err(db_error)
                }
            };
            let mut report = CheckReport {
                apps: count("app").await?,
                pages: count("page").await?,
                ..Default::default()
            };
            report.transitions = client
                .query_one("SELECT count(*) FROM atlas_transitions", &[])
                .await
                .map_err(db_error)?
                .get::<_, i64>(0) as usize;
            let dangling = client
                .query(
                    "SELECT t.transition_id FROM atlas_transitions t
                     WHERE NOT EXISTS (SELECT 1 FROM atlas_entities p WHERE p.kind = 'page'
                         AND p.app_id = t.app_id AND p.id = t.data->>'from_page')
                        OR NOT EXISTS (SELECT 1 FROM atlas_entities p WHERE p.kind = 'page'
                         AND p.app_id = t.app_id AND p.id = t.data->>'to_page')
                     LIMIT 100",
                    &[],
                )
                .await
                .map_err(db_error)?;
            for row in dangling {
                report.problems.push(format!(
                    "transition {} joins a page that is not in the database",
                    row.get::<_, String>(0)
                ));
            }
            Ok(report)
        })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn follow(&self) -> Option<std::sync::mpsc::Receiver<atlas_store::Followed>> {
        let snapshot = self.loaded_at.lock().take()?;
        self.shared.pending.lock().track();
        let (sink, changes) = std::sync::mpsc::channel();
        self.spawn(follow::run(self.shared.clone(), snapshot, sink));
        Some(changes)
    }

    fn available(&self) -> bool {
        self.shared.reachable.load(Ordering::Relaxed)
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.shared.full.lock().clone().map_or(Ok(()), Err)
    }

    /// The database's disk may have room again: the next write is tried.
    fn resume_writes(&self) -> Result<(), StoreError> {
        self.shared.full.lock().take();
        Ok(())
    }

    fn page_files(&self, page: &atlas_model::Page) -> Result<Arc<dyn Files>, StoreError> {
        let app = app_key(&page.app_id);
        self.scoped_files(&format!("apps/{app}/pages/{}", page.page_id))
    }

    fn app_files(&self, app_id: &str) -> Result<Arc<dyn Files>, StoreError> {
        self.scoped_files(&format!("apps/{}/app", app_key(app_id)))
    }
}

/// An app's name among the files: a digest, since an app id may hold any character.
fn app_key(app_id: &str) -> String {
    atlas_model::page_id(app_id, "")
}

impl PgStore {
    /// The database's files under `scope/`.
    fn scoped_files(&self, scope: &str) -> Result<Arc<dyn Files>, StoreError> {
        let store = self
            .me
            .upgrade()
            .ok_or_else(|| StoreError::unavailable("the store is stopping"))?;
        Ok(Arc::new(Scoped::new(store.files(), scope)))
    }
}
