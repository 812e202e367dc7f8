//! `atlas bench`: speed and memory against references run on the same machine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use atlas_bench::synth::AppShape;
use atlas_bench::{ingest, query, startup};
use atlas_text::{Embedder, HashEmbedder};
use clap::{Args, ValueEnum};

use crate::progress::Shown;
use atlas_progress::Progress;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BenchWhich {
    All,
    Query,
    Ingest,
    Kb,
    Startup,
    /// The simulated phone: screenshot render and actions per second through adb.
    Device,
    /// The web explorer on the demo site, one tab and two: states a minute, Atlas's share of the
    /// time against the browser's (needs Chromium).
    Explore,
    /// The viewer in headless Chromium (needs Python's selenium, chromium and chromium-driver):
    /// time to first render and frame time of a 10,000-page app against the demo's.
    Viewer,
    /// Atlas on PostgreSQL (needs --pg): reports through one and three replicas against the
    /// folder store and pgbench's one-row commits, the follow delay, query_path on a replica,
    /// and a replica's start on a large database.
    Postgres,
    /// A fleet: DroidTask's tasks as one suite (`atlas test run`) on 1, 2, 4 and 8 simulated
    /// phones, DroidTask's ideal model over HTTP answering after `--delay-ms`: wall time against
    /// one phone, model calls of a first and a second run (needs --droidtask).
    Fleet,
}

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Which benchmark to run.
    #[arg(value_enum, default_value = "all")]
    which: BenchWhich,
    /// A PostgreSQL server for `postgres` (the benchmark creates its own databases on it);
    /// `all` skips that benchmark without one.
    #[arg(long, env = "ATLAS_BENCH_PG")]
    pg: Option<String>,
    /// Small sizes that finish in seconds (CI); the figures in docs/benchmarks.md use the full sizes.
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
    /// DroidTask's folder, for `fleet` (`all` skips that benchmark without one).
    #[arg(long, env = "ATLAS_DROIDTASK")]
    droidtask: Option<PathBuf>,
    /// For `fleet`: how long the model takes to answer, as a hosted model would.
    #[arg(long, default_value_t = 300)]
    delay_ms: u64,
    /// For `fleet`: the fleet sizes (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8])]
    phones: Vec<usize>,
    /// For `fleet`: after the two runs, a third on the apps' seeded update (`atlas device sim
    /// --update SEED` on the phones, the model playing the same update), on the same graph.
    #[arg(long, value_name = "SEED")]
    update: Option<u64>,
    /// For `fleet`: how many times the suite runs again after its first run (before the update):
    /// each app's record of trust grows with every run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=50))]
    reruns: u16,
}

/// What `--json` writes: each benchmark's figures under its name.
type Report = serde_json::Map<String, serde_json::Value>;

pub(crate) async fn bench(args: BenchArgs) -> Result<ExitCode> {
    let scratch = atlas_bench::scratch(args.dir.as_deref())?;
    let chosen: Vec<BenchWhich> = BenchWhich::value_variants()
        .iter()
        .copied()
        .filter(|&w| w != BenchWhich::All && (args.which == BenchWhich::All || args.which == w))
        .collect();
    let mut report = Report::new();
    let shown = Shown::start();
    for (k, &which) in chosen.iter().enumerate() {
        let name = which
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        shown.stage(
            &format!("benchmark {}/{}: {name}", k + 1, chosen.len()),
            None,
        );
        let r = &mut report;
        match which {
            BenchWhich::All => {}
            BenchWhich::Query => query(&args, &scratch, r, &shown).await?,
            BenchWhich::Ingest => ingest(&args, &scratch, r, &shown).await?,
            BenchWhich::Kb => kb(&args, &scratch, r, &shown).await?,
            BenchWhich::Startup => startup(&args, &scratch, r, &shown).await?,
            BenchWhich::Device => device(&args, &scratch, r, &shown).await?,
            BenchWhich::Explore => explore(&args, &scratch, r, &shown).await?,
            BenchWhich::Viewer => viewer(&args, &scratch, r, &shown).await?,
            BenchWhich::Postgres => postgres(&args, &scratch, r, &shown).await?,
            BenchWhich::Fleet => fleet(&args, &scratch, r, &shown).await?,
        }
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    shown.finish(&format!("{} benchmarks run", chosen.len()));
    Ok(ExitCode::SUCCESS)
}

/// Planning: `query_path` and `get_next_action` on a generated app, against NetworkX.
async fn query(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
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
    shown.note(&format!(
        "bench query: {} pages, {} transitions, {} queries",
        shape.pages, shape.transitions, config.queries
    ));
    let r = query::run(&config, scratch.path()).await?;
    shown.pause();
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
        "p99 against the goal of 500 µs: query_path {:.2}x, get_next_action {:.2}x (goal: <= 1.0x)",
        r.query_path.p99_us / 500.0,
        r.get_next_action.p99_us / 500.0
    );
    println!(
        "the same questions again, every wished-for route tree built: query_path p50 {:.1} µs  p99 {:.1} µs; get_next_action p50 {:.1} µs  p99 {:.1} µs",
        r.query_path_again.p50_us,
        r.query_path_again.p99_us,
        r.get_next_action_again.p50_us,
        r.get_next_action_again.p99_us
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
    Ok(())
}

/// Durable reports over HTTP and in process, against SQLite and `/healthz`.
async fn ingest(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let config = ingest::IngestConfig {
        clients: args.clients.unwrap_or(if args.quick { 16 } else { 64 }),
        duration: Duration::from_secs(args.seconds.unwrap_or(if args.quick { 2 } else { 10 })),
    };
    shown.note(&format!(
        "bench ingest: {} clients for {} s, then SQLite for as long",
        config.clients,
        config.duration.as_secs()
    ));
    let r = ingest::run(&config, scratch.path(), &atlas_server::Loopback).await?;
    shown.pause();
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
        "report_transition {:>9.0}/s durable in-process ({} tasks, no HTTP); ratio to sqlite batched {:.2}x (goal: >= 1.5x)",
        r.in_process_per_second,
        r.clients,
        r.in_process_ratio()
    );
    println!(
        "GET /healthz      {:>9.0}/s from the same clients: this machine's HTTP ceiling with no work behind it; reports over HTTP {:.2}x of it (goal: >= 0.7x)",
        r.http_ceiling_per_second,
        r.ceiling_ratio()
    );
    if !r.verified {
        bail!("acknowledged reports are missing from the graph");
    }
    report.insert("ingest".into(), serde_json::to_value(&r)?);
    Ok(())
}

/// Knowledge-base retrieval against SQLite's FTS5, and loading large documents.
async fn kb(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let config = atlas_bench::kb::KbBenchConfig {
        segments: if args.quick { 5_000 } else { 100_000 },
        queries: if args.quick { 300 } else { 2_000 },
    };
    shown.note(&format!(
        "bench kb: {} segments, {} queries",
        config.segments, config.queries
    ));
    let r = atlas_bench::kb::run(&config, scratch.path())?;
    shown.pause();
    println!(
        "kb retrieve      p50 {:>8.1} µs  p99 {:>8.1} µs  ({} segments, hybrid, top 4; built in {:.1} s; {} of {} queries answered)",
        r.retrieve.p50_us, r.retrieve.p99_us, r.segments, r.build_seconds, r.answered, r.queries
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
        let e5 = atlas_embed_e5::E5Embedder::open(&dir, atlas_embed_e5::DEFAULT_THRESHOLD)?;
        embedders.push(Arc::new(e5));
    }
    let mut loads = Vec::new();
    let mut opens = Vec::new();
    for embedder in embedders {
        if !embedder.is_lexical() {
            let pairs = if args.quick { 200 } else { 2_000 };
            let r = atlas_bench::kb_open::run(pairs, embedder.clone(), scratch.path())?;
            println!(
                "kb open, {} pairs, {}: {:.2} s with vectors.image ({:.1} MB), {:.1} s embedding every segment; ratio {:.0}x",
                r.pairs,
                r.embedder,
                r.kept_seconds,
                r.file_bytes as f64 / 1e6,
                r.cold_seconds,
                r.ratio()
            );
            opens.push(r);
        }
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
    report.insert("kb_open".into(), serde_json::to_value(&opens)?);
    Ok(())
}

/// Opening a large graph, against parsing the same files.
async fn startup(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
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
    shown.note(&format!(
        "bench startup: building {} apps with {} transitions in all",
        config.apps, config.transitions
    ));
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
    shown.pause();
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
        "         from {} images ({:.0} MB); with the images removed, from JSON: {:.0} ms ({:.1}x)",
        r.images.0,
        r.images.1 as f64 / 1e6,
        r.from_json_ms,
        r.from_json_ms / r.reference_parse_ms.max(0.001)
    );
    println!(
        "memory   {:>8.0} bytes resident per transition after start-up, {:.0} at peak",
        r.rss_bytes_per_transition, r.peak_bytes_per_transition
    );
    report.insert("startup".into(), serde_json::to_value(&r)?);
    Ok(())
}

/// The simulated phone through adb: screenshots and actions per second.
async fn device(
    args: &BenchArgs,
    _scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let (renders, taps) = if args.quick { (5, 20) } else { (50, 200) };
    shown.note(&format!(
        "bench device: {renders} screenshots, {taps} taps per path"
    ));
    let r = tokio::task::spawn_blocking(move || atlas_bench::device::run(renders, taps)).await??;
    shown.pause();
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
    Ok(())
}

/// The web explorer on the demo site.
async fn explore(
    args: &BenchArgs,
    _scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix("atlas-bench-explore-")
        .tempdir_in(args.dir.clone().unwrap_or_else(std::env::temp_dir))?;
    if let Some(r) = crate::explore::bench(scratch.path()).await? {
        for run in &r.runs {
            shown.pause();
            println!("explore  {}", run.summary().replace('\n', "\n         "));
        }
        println!("explore  two tabs {:.2}x as fast as one", r.speed_up);
        report.insert("explore".into(), serde_json::to_value(&r)?);
    }
    Ok(())
}

/// The viewer in headless Chromium.
async fn viewer(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let pages = if args.quick { 3_000 } else { 10_000 };
    let dir = tempfile::Builder::new()
        .prefix("atlas-bench-viewer-")
        .tempdir_in(scratch.path())?;
    if let Some(r) =
        atlas_bench::viewer::run(dir.path(), pages, &args.python, &atlas_server::Loopback).await?
    {
        let line = |name: &str, d: &atlas_bench::viewer::Drawing| {
            let first = if d.first_render_ms > 0 {
                format!("first render {:>5} ms, ", d.first_render_ms)
            } else {
                String::new()
            };
            shown.pause();
            println!(
                "viewer {name}: {:>5} pages, {first}frame {:>6.1} ms (p95 {:.1}), script {:.2} ms a frame",
                d.pages, d.frames.mean_ms, d.frames.p95_ms, d.frames.render_ms
            )
        };
        line("demo (reference)    ", &r.demo);
        line("large app           ", &r.large);
        line("its neighbourhood   ", &r.neighbourhood);
        println!(
            "viewer large / demo: first render {:.1}x, frame time {:.1}x, script {:.1}x",
            r.first_render_ratio, r.frame_time_ratio, r.render_ratio
        );
        report.insert("viewer".into(), serde_json::to_value(&r)?);
    }
    Ok(())
}

/// Atlas on PostgreSQL: replicas, follow delay, a replica's start.
async fn postgres(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    match &args.pg {
        None if args.which == BenchWhich::Postgres => {
            anyhow::bail!("give the PostgreSQL server to benchmark on: --pg postgres://…")
        }
        None => {
            shown.pause();
            println!("postgres (skipped: no --pg server)")
        }
        Some(url) => {
            let config = atlas_bench::replicas::ReplicaConfig {
                url: url.clone(),
                clients: args.clients.unwrap_or(16),
                duration: Duration::from_secs(args.seconds.unwrap_or(if args.quick {
                    2
                } else {
                    10
                })),
                startup_transitions: if args.quick { 20_000 } else { 1_000_000 },
            };
            let r = atlas_bench::replicas::run(&config, scratch.path(), &atlas_server::Loopback)
                .await?;
            shown.pause();
            let line = |t: &atlas_bench::replicas::Throughput, name: &str| {
                println!(
                    "postgres {name}: {:>7.0} reports/s ({} clients, p50 {:.2} ms, p99 {:.2} ms)",
                    t.per_second,
                    r.clients,
                    t.latency.p50_us / 1000.0,
                    t.latency.p99_us / 1000.0
                )
            };
            line(&r.folder, "folder store    ");
            line(&r.postgres_1, "1 replica       ");
            line(&r.postgres_3, "3 replicas      ");
            if let Some(ceiling) = r.pgbench_one_row_commits_per_second {
                println!(
                    "postgres pgbench one-row commits: {ceiling:>7.0}/s; 1 replica {:.2}x, 3 replicas {:.2}x of it",
                    r.postgres_1.per_second / ceiling,
                    r.postgres_3.per_second / ceiling
                );
            }
            println!(
                "postgres every acknowledged report counted once on every replica: {}",
                r.verified
            );
            println!(
                "postgres follow delay p50 {:.1} ms, p99 {:.1} ms",
                r.follow_delay.p50_us / 1000.0,
                r.follow_delay.p99_us / 1000.0
            );
            println!(
                "postgres query_path p50 {:.1} µs on a replica, {:.1} µs on the folder store ({:.2}x)",
                r.query_path_postgres.p50_us,
                r.query_path_folder.p50_us,
                r.query_path_postgres.p50_us / r.query_path_folder.p50_us.max(0.001)
            );
            println!(
                "postgres a replica on {} transitions ({} pages) ready in {:.1} s",
                r.startup_transitions, r.startup_pages, r.startup_seconds
            );
            report.insert("postgres".into(), serde_json::to_value(&r)?);
        }
    }
    Ok(())
}

/// A fleet of simulated phones on one suite ([`atlas_bench::fleet`]): each size runs the suite on
/// a fresh graph, then again.
async fn fleet(
    args: &BenchArgs,
    scratch: &tempfile::TempDir,
    report: &mut Report,
    shown: &Shown,
) -> Result<()> {
    let Some(droidtask) = &args.droidtask else {
        if args.which == BenchWhich::Fleet {
            bail!("bench fleet needs --droidtask DIR (DroidTask's folder)");
        }
        shown.note("bench fleet: skipped (no --droidtask)");
        return Ok(());
    };
    let config = atlas_bench::fleet::FleetConfig {
        droidtask: droidtask.clone(),
        tests: args.quick.then_some(12),
        phones: if args.quick {
            vec![1, 2]
        } else {
            args.phones.clone()
        },
        delay: Duration::from_millis(args.delay_ms),
        reruns: usize::from(args.reruns),
        update: args.update,
    };
    let suite = atlas_bench::fleet::suite(&config)?;
    shown.note(&format!(
        "bench fleet: {} tests, the model answering after {} ms, on {:?} phones",
        suite.tests.len(),
        args.delay_ms,
        config.phones
    ));
    shown.pause();
    println!(
        "phones  run          wall s  ÷ one phone  passed  model calls  graph steps  calls on the tests the first run passed, against its"
    );
    let sizes = atlas_bench::fleet::run(
        &config,
        &suite,
        scratch.path(),
        &atlas_server::Loopback,
        &mut print_fleet_size,
    )
    .await?;
    let rows: Vec<serde_json::Value> = sizes.iter().map(|s| s.json()).collect();
    report.insert(
        "fleet".into(),
        serde_json::json!({"tests": suite.tests.len(), "delay_ms": args.delay_ms, "sizes": rows}),
    );
    Ok(())
}

/// A fleet size's runs, a line each, and what it lost.
fn print_fleet_size(size: &atlas_bench::fleet::FleetSize) {
    let n = size.phones;
    for run in &size.runs {
        println!(
            "{n:>6}  {:<9} {:>7.1}  {:>11.2}  {:>6}  {:>11}  {:>11}  {}",
            run.name,
            run.report.seconds,
            size.speedup(run),
            run.passed(),
            run.report.model_calls(),
            run.graph_steps(),
            run.regression
                .as_ref()
                .map_or(String::new(), ToString::to_string),
        );
    }
    println!(
        "        tests passed on one phone but not on {n}: {}; passed in the first run but not the second: {}",
        size.lost_against_one_phone, size.lost_in_second_run
    );
}
