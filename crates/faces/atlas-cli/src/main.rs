//! `atlas`: the one binary. Each subcommand is a thin face over `atlas-service`, in a module of
//! its own; commands that touch data take `--data DIR` (and, for the graph, `--store` to keep it
//! in PostgreSQL instead) and hold the folder's writer lock while they run. Every process opens
//! what it serves through `atlas-wiring`.

mod agent;
mod args;
mod bench;
mod biz;
mod device;
mod eval;
mod explore;
mod graph;
mod kb;
mod progress;
mod serve;
mod stop;
mod test;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};

use args::{DataArgs, EmbedArgs, ServiceArgs, print_json};
use bench::BenchArgs;
use biz::BizCommand;
use device::DeviceCommand;
use eval::EvalCommand;
use graph::ImportCommand;
use kb::KbCommand;
use stop::{OnSignal, Stop};
use test::TestCommand;

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

#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API.
    Serve(serve::ServeArgs),
    /// A scripted OpenAI-compatible chat model: plays back the turns of a script, tool calls
    /// included, to test prompts and the chat page offline; or, with `--droidtask DIR`,
    /// DroidTask's ideal phone-agent model for every recorded app of DIR (see docs/commands.md).
    ModelSim(serve::ModelSimArgs),
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
        /// Also the way in each earlier version of the app.
        #[arg(long)]
        history: bool,
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
    /// What changed between two versions of an app (get_app_diff): pages added, removed and
    /// changed (title, texts, actions), transitions, intents whose way changed.
    Diff {
        #[command(flatten)]
        data: DataArgs,
        app: String,
        /// The older version (default: the one before `--to`).
        #[arg(long)]
        from: Option<String>,
        /// The newer version (default: the current one).
        #[arg(long)]
        to: Option<String>,
        /// The answer as JSON instead of lines for people.
        #[arg(long)]
        json: bool,
    },
    /// An app's remembered ways, each with its own record (get_ways): the finished runs that
    /// confirmed it, replays that passed and parted, and whether it would be replayed.
    Ways {
        #[command(flatten)]
        data: DataArgs,
        app: String,
        /// Only the ways remembered for this task.
        #[arg(long)]
        intent: Option<String>,
        /// Judge them for this version of the app.
        #[arg(long)]
        app_version: Option<String>,
    },
    /// Forget a remembered way (forget_way): its sessions and checks so far stop counting, and
    /// the next finished run learns it anew.
    ForgetWay {
        #[command(flatten)]
        data: DataArgs,
        app: String,
        /// The way's key, as `atlas ways` lists it.
        way: String,
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
    /// Copy the whole graph from one store into an empty other: a data folder (seed 001's
    /// layout) to PostgreSQL (`postgres://USER@HOST:PORT/DB`), or back. Lossless both ways.
    Migrate {
        /// The store to read: a data folder or a postgres:// address.
        #[arg(long)]
        from: String,
        /// The store to write, which must hold no graph yet.
        #[arg(long)]
        to: String,
        /// A PEM file of certificate authorities to trust for the database's TLS.
        #[arg(long, env = "ATLAS_PG_CA")]
        pg_ca: Option<std::path::PathBuf>,
    },
    /// Import data into the graph.
    Import {
        #[command(subcommand)]
        what: ImportCommand,
    },
    /// Explore a website in headless Chromium into the data folder (seed 001; see docs/explorer.md).
    Explore {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        #[command(flatten)]
        args: explore::ExploreArgs,
    },
    /// Crawl a website's links breadth-first in headless Chromium, writing nothing: the
    /// baseline `atlas explore` is measured against (see docs/explorer.md).
    Crawl {
        #[command(flatten)]
        args: explore::CrawlArgs,
    },
    /// Serve the bundled demo website (several pages, a login, a search, a single-page app, a
    /// clock, a "delete account" button) to try `atlas explore` on (see docs/explorer.md).
    DemoSite {
        #[arg(long, default_value = "127.0.0.1:7702")]
        addr: String,
    },
    /// The phone agent of seed 002.
    Agent {
        #[command(subcommand)]
        what: agent::AgentCommand,
    },
    /// Test suites: agent tests on a fleet of phones sharing one graph, with JUnit, HTML and
    /// JSON reports.
    Test {
        #[command(subcommand)]
        what: TestCommand,
    },
    /// Phones: the ones adb sees, and a simulated one that replays a recorded app.
    Device {
        #[command(subcommand)]
        what: DeviceCommand,
    },
    /// Measure speed and memory against references run on the same machine (see docs/benchmarks.md).
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

impl Command {
    /// What the first signal does, from the moment the command is known: servers that keep
    /// nothing end at once and successfully; those that hold a folder open or a run under way
    /// wind down (each says how once it starts, [`Stop::wind_down`]); every other command's
    /// writes are each whole, and it ends at once, saying what it leaves.
    fn on_signal(&self) -> OnSignal {
        match self {
            Command::ModelSim(_) | Command::DemoSite { .. } => OnSignal::EndServing,
            Command::Device { what } if what.serves() => OnSignal::EndServing,
            Command::Serve(_)
            | Command::Mcp { .. }
            | Command::Explore { .. }
            | Command::Agent {
                what: agent::AgentCommand::Run(_),
            }
            | Command::Test {
                what: TestCommand::Run(_),
            } => OnSignal::WindDown,
            _ => OnSignal::End,
        }
    }
}

async fn run(cli: Cli, stop: Stop) -> Result<ExitCode> {
    match cli.command {
        Command::ModelSim(args) => serve::model_sim(args).await,
        Command::Serve(args) => serve::serve(args, stop).await,
        Command::Mcp { services } => serve::mcp(services, stop).await,
        Command::Fsck { data, repair } => graph::fsck(data, repair).await,
        Command::Stats { data, app } => graph::stats(data, app),
        Command::Path {
            data,
            app,
            intent,
            from,
            max_steps,
            history,
        } => graph::path(data, app, intent, from, max_steps, history),
        Command::Next { data, page, intent } => graph::next(data, page, intent),
        Command::Diff {
            data,
            app,
            from,
            to,
            json,
        } => graph::diff(data, app, from, to, json),
        Command::Ways {
            data,
            app,
            intent,
            app_version,
        } => graph::ways(data, app, intent, app_version),
        Command::ForgetWay { data, app, way } => graph::forget_way(data, app, way).await,
        Command::Export { data, app, out } => graph::export(data, app, out),
        Command::Import { what } => graph::import(what, stop).await,
        Command::Migrate { from, to, pg_ca } => graph::migrate(from, to, pg_ca, stop).await,
        Command::Bench(args) => bench::bench(args).await,
        Command::BenchOpen { data } => {
            print_json(&atlas_bench::startup::measure_open(&data)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Device { what } => device::device(what),
        Command::Agent { what } => agent::run(what, stop).await,
        Command::Test { what } => test::run(what, stop).await,
        Command::Explore { data, embed, args } => explore::command(data, embed, args, stop).await,
        Command::Crawl { args } => explore::crawl(args).await,
        Command::DemoSite { addr } => explore::demo_site(addr).await,
        Command::Kb { what } => kb::kb_command(what),
        Command::Biz { what } => biz::biz_command(what),
        Command::Eval { what } => eval::run(what).await,
    }
}

fn main() -> ExitCode {
    // Before anything else: from here on no signal ends the process unsaid (see stop.rs).
    let stop = match Stop::install() {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("error: cannot take SIGTERM and Ctrl-C: {e}");
            return ExitCode::from(2);
        }
    };
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
    stop.begin(cli.command.on_signal());
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
    let code = match runtime.block_on(run(cli, stop)) {
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
