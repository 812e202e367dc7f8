//! Atlas's store on PostgreSQL: any number of `atlas serve` replicas on one database.
//!
//! Each replica keeps the whole graph in memory, as with the folder store, and uses the database
//! for what one machine cannot give: a durable, shared truth. A write is acknowledged once its
//! transaction committed; every replica follows the others' writes through a change feed
//! (`follow`); and what replicas could race on, a transition's counters, is added up by the
//! database (`UPDATE … SET n = n + $1`) from the [`Record::Counted`] deltas, never read and
//! written back by a replica.
//!
//! Key design decision: **the [`Store`] trait stays synchronous and this store brings its own
//! small tokio runtime.** The service calls the store from its write path and from start-up code
//! that may or may not run inside a runtime; owning the runtime makes the store usable from both
//! (and from plain threads in the benchmarks) without the service knowing that PostgreSQL is
//! asynchronous.

mod follow;
mod pending;
mod schema;
mod write;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use atlas_model::{App, Intent, Page, Trace, Transition};
use atlas_store::{AppData, CheckReport, Commit, Cut, Loaded, Record, Store, StoreError};
use futures_util::{StreamExt, TryStreamExt};
use parking_lot::Mutex;

pub use schema::SCHEMA_VERSION;

/// How a replica connects.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Connections in the pool: the writers' lanes take up to eight at once, the follower and
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
    /// This replica's writes the follower has not seen in the database yet.
    pub(crate) pending: Mutex<pending::Pending>,
    /// Whether the last write or look reached the database.
    reachable: AtomicBool,
    closed: AtomicBool,
}

impl Shared {
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

    pub(crate) fn closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

/// The PostgreSQL store.
pub struct PgStore {
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    writer: tokio::sync::mpsc::UnboundedSender<write::Append>,
    /// The snapshot the last load was read in, for the follower to start from.
    loaded_at: Mutex<Option<String>>,
    describe: String,
}

pub(crate) fn db_error(e: tokio_postgres::Error) -> StoreError {
    // No SQL state: the connection, not the statement, failed. Class 08 (connection
    // exception), 57P01-57P03 (the server shutting down or starting) and 53300 (no connection
    // slot left) say the same from the server's side.
    let away = e.code().is_none_or(|code| {
        let code = code.code();
        code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
    });
    if e.is_closed() || away {
        StoreError::Unavailable(format!("the database: {e}"))
    } else {
        let detail = e
            .as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_else(|| e.to_string());
        StoreError::Io(format!("database error: {detail}"))
    }
}

pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db_error(e),
        other => StoreError::Unavailable(format!("the database: {other}")),
    }
}

/// A random 63-bit name for this replica's rows, from the process id, the clock and the
/// address of a fresh allocation (no random-number crate needed for a name).
fn replica_name() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (h.finish() >> 1) as i64
}

/// The connection string without its password, for logs.
fn redacted(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, p)| match h {
            tokio_postgres::config::Host::Tcp(h) => format!("{h}:{p}"),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .collect();
    format!(
        "PostgreSQL {}@{}/{}",
        config.get_user().unwrap_or("?"),
        hosts.join(","),
        config.get_dbname().unwrap_or("?")
    )
}

fn tls(options: &PgOptions) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &options.ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| StoreError::Io(format!("cannot read {}: {e}", path.display())))?;
        let mut reader = std::io::Cursor::new(pem);
        for cert in rustls_pemfile_certs(&mut reader) {
            roots
                .add(cert)
                .map_err(|e| StoreError::Io(format!("{}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Io(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The certificates of a PEM file.
fn rustls_pemfile_certs(
    reader: &mut dyn std::io::BufRead,
) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    let mut text = Vec::new();
    let _ = reader.read_to_end(&mut text);
    rustls::pki_types::CertificateDer::pem_slice_iter(&text)
        .filter_map(Result::ok)
        .collect()
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB
    /// [?sslmode=disable|prefer|require]`), creating or migrating Atlas's tables.
    pub fn connect(url: &str, options: PgOptions) -> Result<Arc<PgStore>, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Io(format!("bad PostgreSQL address: {e}")))?;
        let mut config = config;
        config.connect_timeout(options.connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("atlas");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("atlas-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Io(e.to_string()))?;
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
            .map_err(|e| StoreError::Io(e.to_string()))?;
        let shared = Arc::new(Shared {
            pool,
            config: config.clone(),
            tls,
            writer: replica_name(),
            latest: Default::default(),
            committed: Default::default(),
            pending: Default::default(),
            reachable: AtomicBool::new(true),
            closed: AtomicBool::new(false),
        });
        let (writer, queue) = tokio::sync::mpsc::unbounded_channel();
        let store = PgStore {
            describe: redacted(&config),
            shared: shared.clone(),
            writer,
            loaded_at: Mutex::new(None),
            runtime: Some(runtime),
        };
        store.block_on(async move {
            let mut client = shared.pool.get().await.map_err(pool_error)?;
            schema::migrate(&mut client).await
        })?;
        let queue = Arc::new(tokio::sync::Mutex::new(queue));
        for _ in 0..write::LANES {
            store.spawn(write::run(store.shared.clone(), queue.clone()));
        }
        store.spawn(write::notify(store.shared.clone()));
        Ok(Arc::new(store))
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
    fn block_on<T: Send + 'static>(&self, job: impl Future<Output = T> + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime().spawn(async move {
            let _ = tx.send(job.await);
        });
        rx.recv().expect("the store's runtime ran the job")
    }

    /// Whether the database holds no graph yet (`atlas migrate` writes only into an empty one).
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        let shared = self.shared.clone();
        self.block_on(async move {
            let client = shared.pool.get().await.map_err(pool_error)?;
            let row = client
                .query_one(
                    "SELECT NOT EXISTS (SELECT 1 FROM atlas_entities)
                        AND NOT EXISTS (SELECT 1 FROM atlas_transitions)",
                    &[],
                )
                .await
                .map_err(db_error)?;
            Ok(row.get(0))
        })
    }
}

/// Creates the database `name` on the server of `url` (connecting to `url`'s own database to do
/// it) and answers the address of the new one: for tests, benchmarks, and `atlas migrate` into a
/// database that does not exist yet.
pub fn create_database(url: &str, name: &str) -> Result<String, StoreError> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(StoreError::Io(format!("bad database name {name:?}")));
    }
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| StoreError::Io(format!("bad PostgreSQL address: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StoreError::Io(e.to_string()))?;
    let tls = tls(&PgOptions::default())?;
    let name_owned = name.to_string();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let (client, connection) = config.connect(tls).await.map_err(db_error)?;
            tokio::spawn(connection);
            client
                .batch_execute(&format!("CREATE DATABASE \"{name_owned}\""))
                .await
                .map_err(db_error)
        })
    })
    .join()
    .map_err(|_| StoreError::Io("creating the database panicked".into()))??;
    Ok(with_database(url, name))
}

/// `url` with its database replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_end = base[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(base.len());
    format!("{}/{name}{query}", &base[..host_end])
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

pub(crate) fn kind_of(record: &Record) -> &'static str {
    match record {
        Record::App(_) => "app",
        Record::Page(_) => "page",
        Record::Intent(_) => "intent",
        Record::Trace(_) => "trace",
        Record::Transition(_) | Record::Counted { .. } => "transition",
    }
}

type Counters = (Option<i64>, Option<i64>, Option<f64>, Option<i64>);

/// The record of one row: `data` is the entity's JSON; a transition's counters come from their
/// columns, which the database keeps added up.
pub(crate) fn record_of(
    kind: &str,
    data: serde_json::Value,
    counters: Counters,
) -> Result<Record, serde_json::Error> {
    Ok(match kind {
        "app" => Record::App(serde_json::from_value::<App>(data)?),
        "page" => Record::Page(serde_json::from_value::<Page>(data)?),
        "intent" => Record::Intent(serde_json::from_value::<Intent>(data)?),
        "trace" => Record::Trace(serde_json::from_value::<Trace>(data)?),
        _ => {
            let mut t: Transition = serde_json::from_value(data)?;
            t.success_count = counters.0.unwrap_or(0).max(0) as u64;
            t.fail_count = counters.1.unwrap_or(0).max(0) as u64;
            t.latency_total_ms = counters.2.unwrap_or(0.0);
            t.latency_samples = counters.3.unwrap_or(0).max(0) as u64;
            Record::Transition(t)
        }
    })
}

/// Everything in the database, read in one snapshot, and that snapshot (for the follower to
/// start from).
pub(crate) async fn load_all(shared: &Shared) -> Result<(String, Vec<AppData>), StoreError> {
    let mut client = shared.pool.get().await.map_err(pool_error)?;
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(db_error)?;
    let snapshot: String = tx
        .query_one("SELECT pg_current_snapshot()::text", &[])
        .await
        .map_err(db_error)?
        .get(0);
    let mut apps: HashMap<String, AppData> = HashMap::new();
    let mut orphans = 0usize;
    let no_params: [&(dyn tokio_postgres::types::ToSql + Sync); 0] = [];
    // Apps first (ORDER BY kind puts 'app' before the rest), so every other row finds its app.
    let rows = tx
        .query_raw(
            "SELECT kind, data FROM atlas_entities ORDER BY kind = 'app' DESC",
            no_params,
        )
        .await
        .map_err(db_error)?;
    let mut rows = std::pin::pin!(rows);
    while let Some(row) = rows.try_next().await.map_err(db_error)? {
        let kind: String = row.get(0);
        let record = record_of(&kind, row.get(1), (None, None, None, None))
            .map_err(|e| corrupt(&kind, e))?;
        place(&mut apps, record, &mut orphans);
    }
    let rows = tx
        .query_raw(
            "SELECT data, success_count, fail_count, latency_total_ms, latency_samples
             FROM atlas_transitions",
            no_params,
        )
        .await
        .map_err(db_error)?;
    let mut rows = std::pin::pin!(rows.map(|r| r.map_err(db_error)));
    while let Some(row) = rows.next().await {
        let row = row?;
        let counters = (row.get(1), row.get(2), row.get(3), row.get(4));
        let record =
            record_of("transition", row.get(0), counters).map_err(|e| corrupt("transition", e))?;
        place(&mut apps, record, &mut orphans);
    }
    tx.commit().await.map_err(db_error)?;
    if orphans > 0 {
        tracing::warn!("{orphans} rows belong to no app in the database and were skipped");
    }
    let mut apps: Vec<AppData> = apps.into_values().collect();
    apps.sort_by(|a, b| a.app.app_id.cmp(&b.app.app_id));
    for app in &mut apps {
        app.pages.sort_by_key(|p| p.ordinal);
    }
    Ok((snapshot, apps))
}

fn corrupt(kind: &str, e: serde_json::Error) -> StoreError {
    StoreError::Corrupt {
        path: format!("a {kind} row of the database"),
        message: e.to_string(),
    }
}

fn place(apps: &mut HashMap<String, AppData>, record: Record, orphans: &mut usize) {
    if let Record::App(app) = record {
        apps.insert(
            app.app_id.clone(),
            AppData {
                app,
                pages: Vec::new(),
                intents: Vec::new(),
                transitions: Vec::new(),
                traces: Vec::new(),
            },
        );
        return;
    }
    let Some(data) = apps.get_mut(record.app_id()) else {
        *orphans += 1;
        return;
    };
    match record {
        Record::Page(p) => data.pages.push(p),
        Record::Intent(i) => data.intents.push(i),
        Record::Trace(t) => data.traces.push(t),
        Record::Transition(t) | Record::Counted { transition: t, .. } => data.transitions.push(t),
        Record::App(_) => unreachable!("handled above"),
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
        let (tx, commit) = Commit::new();
        let id = self.shared.pending.lock().push(records.clone());
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
        let (sink, changes) = std::sync::mpsc::channel();
        self.spawn(follow::run(self.shared.clone(), snapshot, sink));
        Some(changes)
    }

    fn available(&self) -> bool {
        self.shared.reachable.load(Ordering::Relaxed)
    }
}
