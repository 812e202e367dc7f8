//! `atlas test`: suites of agent tests on a fleet of phones (`atlas test run`), and a suite
//! written from DroidTask's demonstrations (`atlas test droidtask-suite`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_agent::HttpCaller;
use atlas_testrun::phones::{self, DeviceSpec};
use atlas_testrun::{Progress, RunConfig, Suite, TestResult};
use clap::{Args, Subcommand};

use crate::stop::Stop;

use crate::agent::AgentOptions;
use crate::args::EmbedArgs;

#[derive(Subcommand)]
pub enum TestCommand {
    /// Run a suite (YAML) on phones in parallel, one test per phone at a time, every agent on
    /// one graph; exit 0 only when every test passes.
    Run(Box<TestRunArgs>),
    /// Print a suite (YAML) of DroidTask's demonstrated tasks: each task a test starting on its
    /// recorded first screen and expected to finish on its recorded last.
    DroidtaskSuite {
        /// DroidTask's folder (with `user_tasks/`), or one app's recording.
        dir: PathBuf,
        /// The suite's name.
        #[arg(long, default_value = "droidtask")]
        name: String,
    },
}

#[derive(Args)]
pub struct TestRunArgs {
    /// The suite file.
    suite: PathBuf,
    /// The phones: `adb:SERIAL`, `hdc:KEY`, `sim:ADDR` (a running `atlas device sim`) or
    /// `simulate:SOURCE[*N]` (N phones started here; SOURCE a recording, a folder of
    /// recordings — each an app every phone has — or `APP@DATA`); comma-separated or repeated.
    #[arg(long, value_delimiter = ',', required = true)]
    devices: Vec<String>,
    /// A graph in this process over this data folder, served (the viewer, the API) on
    /// `--addr` while the suite runs; `--atlas URL` uses a running server's instead.
    #[arg(long, conflicts_with = "atlas")]
    data: Option<PathBuf>,
    /// With `--data`: where the graph is served.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: String,
    #[command(flatten)]
    embed: EmbedArgs,
    /// Write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the results as JUnit XML.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Write one self-contained HTML page: every step with its screenshot.
    #[arg(long)]
    html: Option<PathBuf>,
    /// Only the tests with one of these tags (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    tag: Vec<String>,
    /// Runs of a test lost with their phone before it counts as an error.
    #[arg(long, default_value_t = 2)]
    attempts: usize,
    /// The app's id in the graph for every test (default: each screen's app's package).
    #[arg(long)]
    app_id: Option<String>,
    #[command(flatten)]
    options: AgentOptions,
}

pub async fn run(command: TestCommand, stop: Stop) -> Result<ExitCode> {
    match command {
        TestCommand::Run(args) => run_suite(*args, stop).await,
        TestCommand::DroidtaskSuite { dir, name } => {
            let suite = atlas_eval::ideal_server::droidtask_suite(&dir, &name)
                .map_err(|e| anyhow::anyhow!(e))?;
            print!("{}", serde_yaml::to_string(&suite)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn run_suite(args: TestRunArgs, stop: Stop) -> Result<ExitCode> {
    let mut suite = Suite::load(&args.suite)?;
    if !args.tag.is_empty() {
        suite
            .tests
            .retain(|t| t.tags.iter().any(|tag| args.tag.contains(tag)));
        anyhow::ensure!(
            !suite.tests.is_empty(),
            "no test has the tags {:?}",
            args.tag
        );
    }
    let specs = args
        .devices
        .iter()
        .map(|d| DeviceSpec::parse(d))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| anyhow::Error::new(e).context("--devices"))?;
    let options = &args.options;
    let catalog = options.catalog()?;
    let stopping = crate::agent::stop_after_step(&stop);
    stop.leaves("every acknowledged write is in the graph's journal and is replayed at the next start; no report was written");
    let config = RunConfig {
        model: options.model(),
        planner: options.planner.config(&options.model),
        max_steps: options.max_steps.max(1),
        lang: options.lang.clone(),
        rules: options.rule_sets()?,
        fast_path: options.fast_path,
        app_id: args.app_id.clone(),
        knowledge_base: None,
        yes: options.yes,
        max_attempts: args.attempts.max(1),
        stop: stopping,
    };
    // The graph: a running server's, or one served here over --data.
    let (base, token, served) = match (&options.atlas, &args.data) {
        (Some(url), _) => (Some(url.clone()), options.atlas_token.clone(), None),
        (None, Some(data)) => {
            let served = serve_graph(data, &args.addr, args.embed.config()).await?;
            let base = served.base_url();
            eprintln!("graph served on {base} (the viewer: {base}/)");
            (Some(base), None, Some(served))
        }
        (None, None) => (None, None, None),
    };
    // A test's `knowledge` dataset is asked where PHONE_AGENT_KNOWLEDGE_BASE_URL says (with its
    // token), else at the graph's server (with its token).
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let knowledge_base = match var("PHONE_AGENT_KNOWLEDGE_BASE_URL") {
        Some(url) => Some((
            url,
            var("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN").or_else(|| var("PHONE_AGENT_KNOWLEDGE_TOKEN")),
        )),
        None => base.clone().map(|b| (b, token.clone())),
    };
    let config = RunConfig {
        knowledge_base,
        ..config
    };
    let json = args.json.clone();
    let junit = args.junit.clone();
    let html = args.html.clone();
    let report = tokio::task::spawn_blocking(move || {
        let phones = phones::open(&specs, &catalog, &|app, data| {
            crate::device::graph_app(data, app).map_err(Into::into)
        })?;
        atlas_testrun::check_suite(&suite, &phones)?;
        eprintln!(
            "suite {}: {} on {}",
            suite.name,
            atlas_testrun::report::counted(suite.tests.len(), "test"),
            atlas_testrun::report::counted(phones.len(), "phone")
        );
        let caller = base.as_deref().map(|b| HttpCaller::new(b, token.clone()));
        let graph = caller
            .as_ref()
            .map(|c| c as &(dyn atlas_agent::ToolCaller + Sync));
        let bar = Bar::new(suite.tests.len());
        let names: Vec<String> = phones.iter().map(|p| p.name()).collect();
        let board = graph.map(|g| atlas_testrun::board::Board::start(g, &suite, &names));
        if let (Some(base), Some(board)) = (&base, &board) {
            eprintln!("live: {base}/runs?run={}", board.run_id());
        }
        let both = Both(&bar, board.as_ref().map(|b| b as &dyn Progress));
        let report = atlas_testrun::run_suite(&suite, phones, &config, graph, &both);
        if let Some(board) = &board {
            board.end();
        }
        bar.finish();
        anyhow::Ok(report)
    })
    .await??;
    if let Some(served) = served {
        served.stop().await?;
    }
    for (path, text) in [
        (&json, serde_json::to_string_pretty(&report.json())?),
        (&junit, report.junit()),
        (&html, report.html()),
    ] {
        if let Some(path) = path {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    eprintln!("{}", report.summary());
    if stop.is_requested() {
        eprintln!("stopped by {} before the suite's end", stop.signal_name());
        return Ok(stop.status());
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The data folder's graph served on `addr` (the API the agents use, and the viewer).
pub(crate) async fn serve_graph(
    data: &std::path::Path,
    addr: &str,
    embed: atlas_wiring::EmbedConfig,
) -> Result<atlas_wiring::Served> {
    let config = atlas_wiring::Config {
        embed,
        ..atlas_wiring::Config::folder(data)
    };
    atlas_wiring::open_and_serve(&config, &atlas_server::Loopback, addr).await
}

/// Progress on a terminal: a bar of tests, with what each phone is doing; on anything else, a
/// line as each test ends.
struct Bar {
    bar: Option<indicatif::ProgressBar>,
    doing: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Bar {
    fn new(tests: usize) -> Bar {
        let bar = crate::progress::terminal_bar(
            "{bar:30} {pos}/{len} tests {elapsed_precise} {wide_msg}",
        );
        if let Some(bar) = &bar {
            bar.set_length(tests as u64);
        }
        Bar {
            bar,
            doing: Default::default(),
        }
    }

    fn show(&self) {
        if let Some(bar) = &self.bar {
            let doing = self.doing.lock().unwrap_or_else(|e| e.into_inner());
            bar.set_message(
                doing
                    .iter()
                    .map(|(d, what)| format!("{d}: {what}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn started(&self, device: &str, test: &str) {
        self.doing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(device.to_string(), test.to_string());
        self.show();
    }

    fn step(&self, device: &str, test: &str, step: usize, _: &[u8]) {
        self.doing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(device.to_string(), format!("{test} #{step}"));
        self.show();
    }

    fn ended(&self, result: &TestResult, lost: bool) {
        self.doing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&result.device);
        let line = if lost {
            format!(
                "{} lost with {} ({}): it runs again on another phone",
                result.name, result.device, result.message
            )
        } else {
            format!(
                "{:?} {} on {} — {} steps, {} model calls, {} graph steps, {:.1} s{}",
                result.status,
                result.name,
                result.device,
                result.steps,
                result.model_calls,
                result.graph_steps,
                result.seconds,
                if result.status == atlas_testrun::Status::Passed {
                    String::new()
                } else {
                    format!(": {}", result.message)
                }
            )
        };
        match &self.bar {
            Some(bar) => {
                if !lost {
                    bar.inc(1);
                }
                bar.println(line);
                self.show();
            }
            None => eprintln!("{line}"),
        }
    }
}

/// Two listeners to a run: the terminal and, with a graph, the live board.
struct Both<'a>(&'a dyn Progress, Option<&'a dyn Progress>);

impl Progress for Both<'_> {
    fn started(&self, device: &str, test: &str) {
        self.0.started(device, test);
        if let Some(p) = self.1 {
            p.started(device, test);
        }
    }

    fn step(&self, device: &str, test: &str, step: usize, screen: &[u8]) {
        self.0.step(device, test, step, screen);
        if let Some(p) = self.1 {
            p.step(device, test, step, screen);
        }
    }

    fn ended(&self, result: &TestResult, lost: bool) {
        self.0.ended(result, lost);
        if let Some(p) = self.1 {
            p.ended(result, lost);
        }
    }
}
