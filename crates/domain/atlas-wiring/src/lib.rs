//! The wiring of an Atlas process: what it is made of, and the one function that opens it —
//! the only crate that reaches every store and embedder.
//!
//! `atlas serve`, `atlas mcp`, the benchmarks and the tests all start Atlas the same way: a
//! [`Config`] says where the graph is stored (the data folder, or a PostgreSQL database), which
//! embedders to use and whether to install the demos, and [`open`] turns it into [`Services`]:
//! the graph service, the knowledge bases, the business graph and the tool registry that every
//! face serves.
//!
//! Key design decision: **one start-up path for every face.** A second copy of start-up code (in
//! a benchmark, a test harness) drifts from the real one, and then measures or tests something
//! users never run. What it opens ([`Services`]) and the seam that serves it ([`Serve`]) are
//! `atlas-services`', so the server serves what is open without depending on this crate.

mod embedders;
mod serve;
mod setups;
#[cfg(feature = "testing")]
pub mod testing;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use atlas_progress::Progress;
use atlas_service::{Atlas, CheckpointPolicy};
use atlas_store::Store;
use atlas_store::files::{Files, Scoped};
use atlas_text::{Embedder, HashEmbedder};

pub use atlas_services::{Serve, ServeFuture, Served, Services};
pub use atlas_store_pg::PgOptions;
pub use embedders::{EmbedConfig, EmbedderKind, graph_embedder, kb_embedder};
pub use serve::open_and_serve;
pub use setups::setups_half_done;

/// Where the graph is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreAddress {
    /// Seed 001's folder database (the embedded default): one writer process.
    Folder(PathBuf),
    /// A PostgreSQL database (`postgres://…`): any number of replicas.
    Postgres(String),
}

impl StoreAddress {
    /// `postgres://…` or `postgresql://…` names a database; anything else a folder.
    pub fn parse(text: &str) -> StoreAddress {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            StoreAddress::Postgres(text.to_string())
        } else {
            StoreAddress::Folder(PathBuf::from(text))
        }
    }

    /// The graph's store at `--store` if given, else in the data folder.
    pub fn or_folder(store: Option<&str>, data: &Path) -> StoreAddress {
        match store {
            Some(text) if !text.trim().is_empty() => StoreAddress::parse(text.trim()),
            _ => StoreAddress::Folder(data.to_path_buf()),
        }
    }
}

/// Opens the store at `address`.
pub fn open_store(address: &StoreAddress, pg: &PgOptions) -> Result<Arc<dyn Store>> {
    Ok(match address {
        StoreAddress::Folder(dir) => Arc::new(atlas_store_fs::FsStore::open(dir)?),
        StoreAddress::Postgres(url) => atlas_store_pg::PgStore::connect(url, pg.clone())?,
    })
}

/// The files a database keeps (the knowledge bases' under `kb/`, the business graph's under
/// `biz/`).
fn database_files(url: &str, pg: &PgOptions) -> Result<Arc<dyn Files>> {
    Ok(atlas_store_pg::PgStore::connect(url, pg.clone())?.files())
}

/// The knowledge bases' (`scope` "kb") or the business graph's ("biz") files when `address`
/// keeps them (a database); `None` when they are in the data folder.
pub fn shared_files(
    address: &StoreAddress,
    pg: &PgOptions,
    scope: &str,
) -> Result<Option<Arc<dyn Files>>> {
    Ok(match address {
        StoreAddress::Folder(_) => None,
        StoreAddress::Postgres(url) => Some(Arc::new(Scoped::new(database_files(url, pg)?, scope))),
    })
}

/// The knowledge bases in `files` (shared by replicas) when given, else in `data/kb/` as that
/// folder's one writer; `progress` is told of the segments opening embeds.
pub fn open_kb(
    files: Option<Arc<dyn Files>>,
    data: &Path,
    embedder: Arc<dyn Embedder>,
    progress: &dyn Progress,
) -> Result<atlas_kb::KnowledgeBase> {
    match files {
        Some(files) => atlas_kb::KnowledgeBase::open_shared(files, embedder),
        None => atlas_kb::KnowledgeBase::open_with(&data.join("kb"), embedder, progress),
    }
    .map_err(|e| anyhow::anyhow!("knowledge base: {e}"))
}

/// The business graph in `files` (shared by replicas) when given, else in `data/biz/` as that
/// folder's one writer.
pub fn open_biz(
    files: Option<Arc<dyn Files>>,
    data: &Path,
    embedder: Arc<dyn Embedder>,
) -> Result<atlas_biz::BizStore> {
    match files {
        Some(files) => atlas_biz::BizStore::open_shared(files, embedder),
        None => atlas_biz::BizStore::open(&data.join("biz"), embedder),
    }
    .map_err(|e| anyhow::anyhow!("business graph: {e}"))
}

/// Opens the graph service on the store at `address`, as every command that needs only the
/// graph does.
pub fn open_graph(
    address: &StoreAddress,
    pg: &PgOptions,
    embedder: Arc<dyn Embedder>,
    policy: CheckpointPolicy,
) -> Result<Arc<Atlas>> {
    let store = open_store(address, pg)?;
    Ok(Atlas::open(store, embedder, policy)?)
}

/// [`open_graph`] with the built-in embedder, for commands that read, check or export.
pub fn open_graph_plain(address: &StoreAddress, pg: &PgOptions) -> Result<Arc<Atlas>> {
    open_graph(
        address,
        pg,
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )
}

/// Everything one Atlas process serves.
#[derive(Debug, Clone)]
pub struct Config {
    /// The data folder: the graph, the knowledge bases and the business graph, unless `store`
    /// names a database, which then keeps all three.
    pub data: PathBuf,
    /// Where the graph (and, in a database, the knowledge bases and business graph) is stored.
    pub store: StoreAddress,
    /// The pool and timeouts of a PostgreSQL store.
    pub pg: PgOptions,
    /// The graph's embedder.
    pub embed: EmbedConfig,
    /// The knowledge bases' embedder: e5 when installed and the graph's is lexical (`true`),
    /// or always the graph's.
    pub kb_embedder_auto: bool,
    /// How often the journal is folded into the readable files.
    pub checkpoint: CheckpointPolicy,
    /// Install the demo app, knowledge base and business graph when they are not there yet.
    pub demo: bool,
    /// A grounding model to answer navigation with instead of the shipped one.
    pub grounding_model: Option<PathBuf>,
}

impl Config {
    /// A configuration on the folder `data` with the built-in embedder and no demos.
    pub fn folder(data: &Path) -> Config {
        Config {
            data: data.to_path_buf(),
            store: StoreAddress::Folder(data.to_path_buf()),
            pg: PgOptions::default(),
            embed: EmbedConfig::hash(),
            kb_embedder_auto: false,
            checkpoint: CheckpointPolicy::default(),
            demo: false,
            grounding_model: None,
        }
    }
}

/// Reads a grounding model file (see [`Config::grounding_model`]).
pub fn read_grounding_model(path: &Path) -> Result<atlas_service::GroundingModel> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the grounding model {}", path.display()))?;
    Atlas::read_grounding_model(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Opens everything `config` names: the store, the embedders, the graph service (with its
/// checkpointer), the knowledge bases, the business graph and the tool registry; installs the
/// demos when asked.
pub async fn open(config: &Config) -> Result<Services> {
    if let StoreAddress::Folder(dir) = &config.store
        && dir != &config.data
    {
        bail!(
            "--store names the folder {}, but the data folder is {}: give one of them",
            dir.display(),
            config.data.display()
        );
    }
    let embedder = graph_embedder(&config.embed)?;
    // On PostgreSQL the knowledge bases and the business graph are kept in the database too,
    // and the files other replicas change are read again.
    let (store, shared_files, shared_changes) = match &config.store {
        StoreAddress::Folder(dir) => {
            let store = open_store(&config.store, &config.pg)?;
            setups::refuse_half_migrated(&atlas_store::files::Folder::new(dir), &store.describe())?;
            (store, None, None)
        }
        StoreAddress::Postgres(url) => {
            let pg = atlas_store_pg::PgStore::connect(url, config.pg.clone())?;
            let files = pg.files();
            setups::refuse_half_migrated(files.as_ref(), &pg.describe())?;
            let changes = pg.follow_files();
            (pg as Arc<dyn Store>, Some(files), Some(changes))
        }
    };
    let atlas = Atlas::open(store, embedder.clone(), config.checkpoint)?;
    if let Some(path) = &config.grounding_model {
        atlas.use_grounding_model(read_grounding_model(path)?)?;
    }
    if config.demo {
        match atlas_service::demo_graph(&atlas).await? {
            atlas_service::DemoInstall::Installed => {
                tracing::info!("loaded the demo app {}", atlas_service::DEMO_APP_ID)
            }
            atlas_service::DemoInstall::Completed(missing) => tracing::warn!(
                "the demo app {} was incomplete ({missing}, left by a start that was stopped): \
                 completed",
                atlas_service::DEMO_APP_ID
            ),
            atlas_service::DemoInstall::Present => {}
        }
    }
    atlas.start_checkpointer();
    let kb_embedder = kb_embedder(config.kb_embedder_auto, &config.embed, embedder);
    eprintln!(
        "knowledge bases and business graph embedded by {}",
        kb_embedder.name()
    );
    let scoped = |scope: &str| {
        shared_files
            .clone()
            .map(|files| Arc::new(Scoped::new(files, scope)) as Arc<dyn Files>)
    };
    // A folder's writer opens without embedding what its vectors files lack (a model changed,
    // a document edited by hand) and embeds it once serving: on a folder opened before with the
    // same model there is nothing to embed, and start-up takes a fraction of a second.
    let (kb, biz) = match scoped("kb") {
        Some(files) => (
            open_kb(
                Some(files),
                &config.data,
                kb_embedder.clone(),
                &atlas_progress::Quiet,
            )?,
            open_biz(scoped("biz"), &config.data, kb_embedder)?,
        ),
        None => (
            atlas_kb::KnowledgeBase::open_deferred(&config.data.join("kb"), kb_embedder.clone())
                .map_err(|e| anyhow::anyhow!("knowledge base: {e}"))?,
            atlas_biz::BizStore::open_deferred(&config.data.join("biz"), kb_embedder)
                .map_err(|e| anyhow::anyhow!("business graph: {e}"))?,
        ),
    };
    let (kb, biz) = (Arc::new(kb), Arc::new(biz));
    embed_deferred(&kb, &biz);
    if let Some(changes) = shared_changes {
        follow_files(changes, &kb, &biz);
    }
    if config.demo {
        let demo_kb = atlas_kb::demo::install(&kb)?;
        eprintln!(
            "demo knowledge base: dataset {} key {}",
            demo_kb.id, demo_kb.api_key
        );
        if let Some(report) = atlas_biz::demo::install(&biz)? {
            eprintln!(
                "demo business graph: {} processes, {} implementations, {} tables",
                report.businesses, report.implementations, report.data_resources
            );
        }
    }
    Ok(Services {
        atlas,
        kb,
        biz,
        tools: Arc::new(atlas_registry::registry()),
    })
}

/// Embeds, on a thread of its own, what the knowledge bases and the business graph were opened
/// without (see [`open`]); until then those segments and entities are found by their words.
fn embed_deferred(kb: &Arc<atlas_kb::KnowledgeBase>, biz: &Arc<atlas_biz::BizStore>) {
    let (kb, biz) = (kb.clone(), biz.clone());
    let embed = move || {
        let started = std::time::Instant::now();
        match kb.embed_deferred() {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                "embedded the segments of {n} datasets no vectors file kept in {} ms",
                started.elapsed().as_millis()
            ),
            Err(e) => tracing::warn!("embedding the knowledge bases' segments: {e}"),
        }
        match biz.embed_deferred() {
            Ok(false) => {}
            Ok(true) => tracing::info!(
                "embedded the business graph's entities no vectors file kept in {} ms",
                started.elapsed().as_millis()
            ),
            Err(e) => tracing::warn!("embedding the business graph's entities: {e}"),
        }
    };
    std::thread::Builder::new()
        .name("atlas-embed-deferred".into())
        .spawn(embed)
        .expect("spawn the deferred embedding");
}

/// Reads again what other replicas changed: a dataset (`kb/<id>/…`), the knowledge tags, the
/// business graph. On a thread of its own, until the store stops or the services are dropped.
fn follow_files(
    changes: std::sync::mpsc::Receiver<Vec<String>>,
    kb: &Arc<atlas_kb::KnowledgeBase>,
    biz: &Arc<atlas_biz::BizStore>,
) {
    let (kb, biz) = (Arc::downgrade(kb), Arc::downgrade(biz));
    let follow = move || {
        for names in changes {
            let (Some(kb), Some(biz)) = (kb.upgrade(), biz.upgrade()) else {
                return;
            };
            let mut datasets: Vec<&str> = Vec::new();
            let (mut tags, mut graph) = (false, false);
            for name in &names {
                match name.split('/').collect::<Vec<_>>().as_slice() {
                    ["kb", "tags.json"] => tags = true,
                    ["kb", dataset, ..] => datasets.push(dataset),
                    ["biz", ..] => graph = true,
                    _ => {}
                }
            }
            datasets.sort_unstable();
            datasets.dedup();
            for dataset in datasets {
                if let Err(e) = kb.reload_dataset(dataset) {
                    tracing::warn!("reading dataset {dataset} again: {e}");
                }
            }
            if tags && let Err(e) = kb.reload_tags() {
                tracing::warn!("reading the knowledge tags again: {e}");
            }
            if graph && let Err(e) = biz.reload() {
                tracing::warn!("reading the business graph again: {e}");
            }
        }
    };
    std::thread::Builder::new()
        .name("atlas-follow-files".into())
        .spawn(follow)
        .expect("spawn the files follower");
}

/// What [`migrate`] copied.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Migrated {
    /// Apps copied.
    pub apps: usize,
    /// Pages copied.
    pub pages: usize,
    /// Intents copied.
    pub intents: usize,
    /// Transitions copied.
    pub transitions: usize,
    /// Remembered sessions copied.
    pub traces: usize,
    /// The knowledge bases' and the business graph's files.
    pub files: usize,
    /// Whether it completed a migration from the same store that had been stopped.
    pub resumed: bool,
}

/// The scopes of the files [`migrate`] copies besides the graph.
const FILE_SCOPES: [&str; 2] = ["kb", "biz"];

/// Every file the store at `address` keeps besides the graph (the knowledge bases', the business
/// graph's, a migration's mark): the data folder's, or the database's.
pub fn store_files(address: &StoreAddress, pg: &PgOptions) -> Result<Arc<dyn Files>> {
    Ok(match address {
        StoreAddress::Folder(dir) => Arc::new(atlas_store::files::Folder::new(dir)),
        StoreAddress::Postgres(url) => database_files(url, pg)?,
    })
}

/// The graph's store at `address` and every file of its knowledge bases and business graph,
/// over one connection pool for a database.
fn store_and_files(
    address: &StoreAddress,
    pg: &PgOptions,
) -> Result<(Arc<dyn Store>, Arc<dyn Files>)> {
    Ok(match address {
        StoreAddress::Folder(dir) => (
            open_store(address, pg)?,
            Arc::new(atlas_store::files::Folder::new(dir)),
        ),
        StoreAddress::Postgres(url) => {
            let store = atlas_store_pg::PgStore::connect(url, pg.clone())?;
            let files = store.files();
            (store, files)
        }
    })
}

/// Records per append while migrating: large enough to commit quickly, small enough to bound
/// one transaction.
const MIGRATE_CHUNK: usize = 20_000;

/// Copies the whole graph from one store to another that holds none yet (the folder of seed
/// 001 to PostgreSQL, or back): every entity as it is, counters included, and the knowledge
/// bases' and the business graph's files, telling `progress` how far it has got. The target is
/// marked as being filled until the copy is whole: nothing serves it meanwhile, and the same
/// migration run again after a stop completes it.
pub fn migrate(
    from: &StoreAddress,
    to: &StoreAddress,
    pg: &PgOptions,
    progress: &dyn Progress,
) -> Result<Migrated> {
    if from == to {
        bail!("--from and --to name the same store");
    }
    if let StoreAddress::Folder(dir) = from
        && !dir.is_dir()
    {
        bail!("no data folder at {}", dir.display());
    }
    let (source, from_files) = store_and_files(from, pg)?;
    progress.stage(&format!("reading {}", source.describe()), None);
    let apps = source
        .load()
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", source.describe()))?
        .into_apps();
    drop(source);
    let (target, to_files) = store_and_files(to, pg)?;
    // A migration from the same store that was stopped is completed: every record and file it
    // copies is whole, so copying again over what it copied before changes only what it lacked.
    let resumed = match setups::migrating(to_files.as_ref())? {
        Some(mark) if mark.from == setups::shown(from) => true,
        Some(mark) => bail!(
            "{} holds part of a migration from {}, stopped before its end: complete that one \
             first (`atlas migrate --from {} --to …`)",
            target.describe(),
            mark.from,
            mark.from
        ),
        None => false,
    };
    if !resumed {
        refuse_filled(target.as_ref(), to_files.as_ref())?;
    }
    let mark = setups::Migrating {
        from: setups::shown(from),
        started_at: atlas_model::now_rfc3339(),
    };
    to_files
        .write(setups::MIGRATING, &serde_json::to_vec_pretty(&mark)?)
        .map_err(|e| anyhow::anyhow!("marking {} as being filled: {e}", target.describe()))?;
    let mut names = Vec::new();
    for scope in FILE_SCOPES {
        names.extend(from_files.list(scope)?);
    }
    let mut copied = write_apps(target.as_ref(), &apps, progress)?;
    progress.stage(
        "copying knowledge bases and business graph",
        Some(names.len() as u64),
    );
    for name in names {
        let bytes = from_files
            .read(&name)?
            .with_context(|| format!("{name} went away while it was copied"))?;
        to_files
            .write(&name, &bytes)
            .map_err(|e| anyhow::anyhow!("writing {name}: {e}"))?;
        copied.files += 1;
        progress.advance(1);
    }
    to_files
        .remove(setups::MIGRATING)
        .map_err(|e| anyhow::anyhow!("the copy is whole, but its mark stays: {e}"))?;
    copied.resumed = resumed;
    Ok(copied)
}

/// Refuses a store that holds a graph or files already: a migration fills an empty one.
fn refuse_filled(target: &dyn Store, files: &dyn Files) -> Result<()> {
    let present = target
        .load()
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", target.describe()))?
        .into_apps();
    if !present.is_empty() {
        bail!(
            "{} already holds {} apps: migrate into an empty store",
            target.describe(),
            present.len()
        );
    }
    for scope in FILE_SCOPES {
        if !files.list(scope)?.is_empty() {
            bail!(
                "{} already holds {scope} files: migrate into an empty store",
                target.describe()
            );
        }
    }
    Ok(())
}

/// Writes whole apps into `target` (counters as they are), chunk by chunk, and folds them into
/// its files if it keeps any.
pub fn write_apps(
    target: &dyn Store,
    apps: &[atlas_store::AppData],
    progress: &dyn Progress,
) -> Result<Migrated> {
    let mut copied = Migrated::default();
    // An app's record, then its pages', intents', transitions' and traces'.
    let records: usize = apps
        .iter()
        .map(|a| 1 + a.pages.len() + a.intents.len() + a.transitions.len() + a.traces.len())
        .sum();
    progress.stage(
        &format!("writing {}", target.describe()),
        Some(records as u64),
    );
    for app in apps {
        let mut records = vec![atlas_store::Record::App(app.app.clone())];
        records.extend(app.pages.iter().cloned().map(atlas_store::Record::Page));
        records.extend(app.intents.iter().cloned().map(atlas_store::Record::Intent));
        records.extend(
            app.transitions
                .iter()
                .cloned()
                .map(atlas_store::Record::Transition),
        );
        records.extend(app.traces.iter().cloned().map(atlas_store::Record::Trace));
        for chunk in records.chunks(MIGRATE_CHUNK) {
            target
                .append(chunk.to_vec())
                .wait_blocking()
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", target.describe()))?;
            progress.advance(chunk.len() as u64);
        }
        copied.apps += 1;
        copied.pages += app.pages.len();
        copied.intents += app.intents.len();
        copied.transitions += app.transitions.len();
        copied.traces += app.traces.len();
    }
    if target.wants_checkpoints() {
        progress.stage("folding the journal into the files", None);
        let cut = target.begin_checkpoint()?;
        target.finish_checkpoint(cut, apps)?;
    }
    Ok(copied)
}
