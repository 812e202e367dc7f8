//! `atlas explore` and `atlas demo-site`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use atlas_explore::{ExploreOptions, Progress};
use atlas_registry::ServiceCaller;
use atlas_service::Atlas;
use atlas_store::files::Artifacts;
use atlas_store_fs::FsStore;
use clap::Args;

use crate::stop::Stop;

#[derive(Args)]
pub struct ExploreArgs {
    /// The address to start from (http or https).
    pub url: String,
    /// The app id the site is kept under (default: its host and port).
    #[arg(long)]
    pub app_id: Option<String>,
    /// The most states, that is kinds of page (their other addresses are examples, not
    /// states): a site of a few hundred kinds is mapped whole, the time and actions bound the rest.
    #[arg(long, default_value_t = 200)]
    pub max_states: usize,
    #[arg(long, default_value_t = 6)]
    pub max_depth: u32,
    #[arg(long, default_value_t = 500)]
    pub max_actions: usize,
    #[arg(long, default_value_t = 600)]
    pub max_seconds: u64,
    /// Also execute what would delete, pay, order, sign out or create content (recorded and left
    /// undone otherwise).
    #[arg(long)]
    pub allow_destructive: bool,
    /// Browser tabs exploring at once.
    #[arg(long, default_value_t = 1)]
    pub tabs: usize,
    /// Another origin to explore besides the start's (repeatable).
    #[arg(long = "origin")]
    pub origins: Vec<String>,
    /// USER:PASSWORD typed into login forms.
    #[arg(long, env = "ATLAS_EXPLORE_CREDENTIALS")]
    pub credentials: Option<String>,
    /// Examples kept of a kind of page (other rows, tickets, topics of one route template),
    /// their links followed; the rest are that page, not explored.
    #[arg(long, default_value_t = 5)]
    pub max_similar: usize,
    /// Page loads at most (every document a tab loads).
    #[arg(long)]
    pub max_loads: Option<usize>,
    /// The Chromium to drive (default: ATLAS_CHROMIUM, else chromium on the PATH).
    #[arg(long)]
    pub chromium: Option<PathBuf>,
    /// The site's version (a release's number). Without it the explorer names the versions it
    /// notices: r1, then r2 when exploring again finds the site changed.
    #[arg(long)]
    pub app_version: Option<String>,
    /// Write the run's summary as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Args)]
pub struct CrawlArgs {
    /// The address to start from (http or https).
    pub url: String,
    /// Page loads at most.
    #[arg(long, default_value_t = 100)]
    pub max_loads: usize,
    /// The Chromium to drive (default: ATLAS_CHROMIUM, else chromium on the PATH).
    #[arg(long)]
    pub chromium: Option<PathBuf>,
    /// Write what was loaded as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `atlas crawl`: the breadth-first baseline; writes nothing but its `--json`.
pub(crate) async fn crawl(args: CrawlArgs) -> Result<ExitCode> {
    atlas_explore::start_address(&args.url)?;
    let chromium = chromium(args.chromium.clone())?;
    let report = atlas_explore::crawl::crawl(&args.url, &chromium, args.max_loads).await?;
    let pages = report
        .pages
        .iter()
        .filter(|p| p.content_type.contains("html"))
        .count();
    println!(
        "crawled {}: {} page loads, {} pages, {} links left; {:.1} s",
        args.url, report.loads, pages, report.left, report.seconds
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn chromium(given: Option<PathBuf>) -> Result<PathBuf> {
    match given.or_else(atlas_browser::find_chromium) {
        Some(path) => Ok(path),
        None => bail!(
            "no Chromium found: install Debian's chromium (apt-get install chromium), or name one with --chromium or ATLAS_CHROMIUM"
        ),
    }
}

/// A bar on a terminal; plain lines otherwise.
struct Shown {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl Progress for Shown {
    fn update(&self, states: usize, queued: usize, actions: usize) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{states} states, {queued} queued, {actions} actions"
            ));
        }
    }

    fn state(&self, name: &str, url: &str) {
        self.say(format!("state: {name} ({url})"));
    }

    fn release(&self, change: &str, name: &str, url: &str) {
        self.say(format!("{change}: {name} ({url})"));
    }
}

impl Shown {
    fn say(&self, line: String) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None if self.quiet => {}
            None => eprintln!("{line}"),
        }
    }
}

/// The run's options, every argument checked: called before the data folder is opened, so bad
/// input changes nothing.
pub fn options(args: &ExploreArgs) -> Result<ExploreOptions> {
    atlas_explore::start_address(&args.url)?;
    let chromium = chromium(args.chromium.clone())?;
    let credentials = match &args.credentials {
        None => None,
        Some(c) => match c.split_once(':') {
            Some((u, p)) if !u.is_empty() => Some((u.to_string(), p.to_string())),
            _ => bail!("--credentials takes USER:PASSWORD"),
        },
    };
    if args.tabs == 0 || args.max_states == 0 {
        bail!("--tabs and --max-states must be at least 1");
    }
    Ok(ExploreOptions {
        start: args.url.clone(),
        app_id: args.app_id.clone(),
        max_states: args.max_states,
        max_depth: args.max_depth,
        max_actions: args.max_actions,
        max_seconds: args.max_seconds,
        allow_destructive: args.allow_destructive,
        tabs: args.tabs,
        origins: args.origins.clone(),
        credentials,
        max_similar: args.max_similar.max(1),
        max_loads: args.max_loads.unwrap_or(usize::MAX),
        chromium,
        app_version: match args.app_version.as_deref().map(str::trim) {
            Some("") => bail!("--app-version must not be blank"),
            other => other.map(str::to_string),
        },
    })
}

/// `atlas explore`: checks every argument, then opens the data folder and explores.
pub(crate) async fn command(
    data: crate::args::DataArgs,
    embed: crate::args::EmbedArgs,
    args: ExploreArgs,
    stop: Stop,
) -> Result<ExitCode> {
    let options = options(&args)?;
    stop.wind_down("stopping: the frontier and the folder are checkpointed");
    stop.leaves(
        "every acknowledged write and every task file is whole; run the same command again to \
         resume",
    );
    let atlas = atlas_wiring::open_graph(
        &data.address(),
        &data.pg(),
        crate::args::embedder(&embed)?,
        atlas_service::CheckpointPolicy::default(),
    )?;
    // index.json, graph.json and statistics.json follow the exploration as it goes.
    atlas.start_checkpointer();
    run(options, args.json, atlas, stop).await
}

/// The explorer's ways to the graph in this process: its tools through the registry, as any
/// client's, and the pages' files through the service, which names their folders.
fn explorer_links(atlas: &Arc<Atlas>) -> (atlas_explore::Graph, Arc<dyn Artifacts>) {
    let caller = ServiceCaller::new(atlas.clone(), tokio::runtime::Handle::current());
    (Arc::new(caller), atlas.clone())
}

async fn run(
    options: ExploreOptions,
    json: Option<PathBuf>,
    atlas: Arc<Atlas>,
    stop: Stop,
) -> Result<ExitCode> {
    let bar = crate::progress::terminal_bar("{spinner} {elapsed_precise} {msg}");
    if let Some(bar) = &bar {
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
    }
    let shown = Arc::new(Shown { bar, quiet: false });
    let (graph, artifacts) = explorer_links(&atlas);
    let exploring = atlas_explore::explore(
        graph,
        artifacts,
        options,
        shown.clone(),
        &atlas_explore_release::ReleaseCheck,
    );
    let report = tokio::select! {
        biased;
        _ = stop.requested() => {
            // Everything acknowledged is in the journal and every task file is whole: the next
            // run puts the tasks under way back in the queue.
            atlas.checkpoint()?;
            eprintln!("stopped by {}; run the same command again to resume", stop.signal_name());
            return Ok(stop.status());
        }
        report = exploring => report?,
    };
    atlas.checkpoint()?;
    if let Some(bar) = &shown.bar {
        bar.finish_and_clear();
    }
    println!("{}", report.summary());
    if let Some(path) = &json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `atlas demo-site`: serves the bundled demo website at `addr` until stopped.
pub async fn demo_site(addr: String) -> Result<ExitCode> {
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    eprintln!("demo site on http://{}", listener.local_addr()?);
    // A signal ends it at once (OnSignal::EndServing): it keeps nothing.
    axum::serve(listener, atlas_demo_site::router(Default::default())).await?;
    Ok(ExitCode::SUCCESS)
}

/// `atlas bench explore`: the demo site explored to the end with one tab and with two, each into
/// a fresh folder; the browser's time is the reference Atlas's own time is measured against.
#[derive(Debug, serde::Serialize)]
pub struct ExploreBench {
    pub runs: Vec<atlas_explore::ExploreReport>,
    /// One tab's time over two tabs'.
    pub speed_up: f64,
}

pub async fn bench(scratch: &std::path::Path) -> Result<Option<ExploreBench>> {
    let Some(chromium) = atlas_browser::find_chromium() else {
        eprintln!("bench explore: skipped, no Chromium (apt-get install chromium)");
        return Ok(None);
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let start = format!("http://{}/", listener.local_addr()?);
    let site = tokio::spawn(async move {
        axum::serve(listener, atlas_demo_site::router(Default::default())).await
    });
    let mut runs = Vec::new();
    for tabs in [1, 2] {
        let data = scratch.join(format!("explore-{tabs}-tabs"));
        let atlas = Atlas::open(
            Arc::new(FsStore::open(&data)?),
            Arc::new(atlas_text::HashEmbedder::default()),
            atlas_service::CheckpointPolicy::default(),
        )?;
        let (graph, artifacts) = explorer_links(&atlas);
        let options = ExploreOptions {
            start: start.clone(),
            app_id: None,
            max_states: 100,
            max_depth: 6,
            max_actions: 1000,
            max_seconds: 600,
            allow_destructive: false,
            tabs,
            origins: Vec::new(),
            credentials: Some(("bench".into(), "bench-password".into())),
            max_similar: 5,
            max_loads: usize::MAX,
            chromium: chromium.clone(),
            app_version: None,
        };
        let report = atlas_explore::explore(
            graph,
            artifacts,
            options,
            Arc::new(Shown {
                bar: None,
                quiet: true,
            }),
            &atlas_explore_release::ReleaseCheck,
        )
        .await?;
        atlas.checkpoint()?;
        runs.push(report);
    }
    site.abort();
    let speed_up = runs[0].seconds / runs[1].seconds.max(1e-9);
    Ok(Some(ExploreBench { runs, speed_up }))
}
