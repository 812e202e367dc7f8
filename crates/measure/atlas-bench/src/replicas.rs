//! Atlas on PostgreSQL: `report_transition` throughput through one and three replicas on one
//! database, against the folder store and against PostgreSQL's own ceiling for one-row commits
//! (`pgbench` with a one-line script), all in the same run; how long a replica takes to see
//! another's write; `query_path` latency on a replica against the folder store; and how long a
//! replica takes to start on a database of many transitions.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use atlas_wiring::{Config, Serve, Services, StoreAddress};
use serde::Serialize;

use crate::Percentiles;
use crate::ingest::{Route, drive_clients, reports_on};
use crate::synth::{AppShape, synthetic_app};

/// How `atlas bench postgres` loads the replicas.
#[derive(Debug, Clone)]
pub struct ReplicaConfig {
    /// A PostgreSQL server to create the benchmark's databases on (`postgres://…`).
    pub url: String,
    /// Concurrent HTTP clients.
    pub clients: usize,
    /// How long the load runs.
    pub duration: Duration,
    /// Transitions in the database a replica starts on.
    pub startup_transitions: usize,
}

/// Reports acknowledged by a number of replicas over the configured time.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// Replicas the clients were spread over.
    pub replicas: usize,
    /// Reports acknowledged (durable).
    pub acknowledged: u64,
    /// Reports answered with an error.
    pub errors: u64,
    /// Acknowledged reports per second.
    pub per_second: f64,
    /// Round-trip latency of one report.
    pub latency: Percentiles,
}

/// What `atlas bench postgres` measured: the folder, one and three PostgreSQL replicas, pgbench,
/// following and start-up.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaReport {
    /// Concurrent HTTP clients.
    pub clients: usize,
    /// One server on the folder store.
    pub folder: Throughput,
    /// One replica on PostgreSQL.
    pub postgres_1: Throughput,
    /// Three replicas on one PostgreSQL database.
    pub postgres_3: Throughput,
    /// `pgbench`: one `UPDATE … SET n = n + 1` per transaction, the same number of clients.
    pub pgbench_one_row_commits_per_second: Option<f64>,
    /// Every acknowledged report is in the database, counted once.
    pub verified: bool,
    /// From a write acknowledged on one replica to the other replica answering with it.
    pub follow_delay: Percentiles,
    /// `query_path` on the folder store.
    pub query_path_folder: Percentiles,
    /// `query_path` on a PostgreSQL replica.
    pub query_path_postgres: Percentiles,
    /// Transitions in the database a replica starts on.
    pub startup_transitions: usize,
    /// Pages in that database.
    pub startup_pages: usize,
    /// From connecting to answering, on a database of `startup_transitions`.
    pub startup_seconds: f64,
}

/// A configuration for one benchmark replica on `store`.
fn replica_config(store: StoreAddress, data: &Path) -> Config {
    Config {
        store,
        ..Config::folder(data)
    }
}

fn total_reports(services: &Services, app_id: &str) -> u64 {
    crate::ingest::total_reports(&services.atlas, app_id)
}

/// `clients` reporting through `replicas` for the configured time.
async fn throughput(
    server: &dyn Serve,
    replicas: &[Services],
    config: &ReplicaConfig,
    reports: &Arc<Vec<crate::ingest::Report>>,
) -> Result<Throughput> {
    let mut servers = Vec::new();
    for services in replicas {
        servers.push(server.serve(services, "127.0.0.1:0").await?);
    }
    let addrs: Vec<_> = servers.iter().map(|s| s.addr).collect();
    let (clients, duration, reports) = (config.clients, config.duration, reports.clone());
    let (acknowledged, errors, mut latencies, seconds) = tokio::task::spawn_blocking(move || {
        drive_clients(&addrs, clients, duration, reports, Route::Report)
    })
    .await??;
    for server in servers {
        server.stop().await?;
    }
    Ok(Throughput {
        replicas: replicas.len(),
        acknowledged,
        errors,
        per_second: acknowledged as f64 / seconds,
        latency: Percentiles::from_nanos(&mut latencies),
    })
}

/// Runs the benchmark: the folder, one replica and three, each loaded by the same clients, then pgbench, following and start-up.
pub async fn run(
    config: &ReplicaConfig,
    scratch: &Path,
    server: &dyn Serve,
) -> Result<ReplicaReport> {
    let app_id = "bench.replicas";
    let generated = synthetic_app(
        app_id,
        AppShape {
            pages: 1_000,
            transitions: 10_000,
            intents: 50,
        },
        11,
    );
    let reports = Arc::new(reports_on(&generated.data, 20_000));
    let run_id = std::process::id();

    // The folder store, the reference.
    let folder = atlas_wiring::open(&Config::folder(&scratch.join("folder"))).await?;
    folder.atlas.import_app(generated.data.clone()).await?;
    let folder_throughput =
        throughput(server, std::slice::from_ref(&folder), config, &reports).await?;

    // One database, three replicas.
    let scratch_db = ScratchDatabase::create(&config.url, &format!("atlas_bench_{run_id}"))?;
    let url = scratch_db.url.clone();
    let mut replicas = Vec::new();
    for i in 0..3 {
        let data = scratch.join(format!("replica-{i}"));
        replicas.push(
            atlas_wiring::open(&replica_config(StoreAddress::Postgres(url.clone()), &data)).await?,
        );
    }
    replicas[0].atlas.import_app(generated.data.clone()).await?;
    let before = total_reports(&replicas[0], app_id);
    for replica in &replicas[1..] {
        wait_until(|| total_reports(replica, app_id) == before && before > 0)?;
    }
    let one = throughput(server, &replicas[..1], config, &reports).await?;
    let three = throughput(server, &replicas, config, &reports).await?;
    let expected = before + one.acknowledged + three.acknowledged;
    // Every replica converges to the database's count, which is exactly what was acknowledged
    // (no report failed, so none is unknown).
    let verified = one.errors == 0
        && three.errors == 0
        && replicas
            .iter()
            .all(|r| wait_until(|| total_reports(r, app_id) == expected).is_ok());

    // The same app on both, after the same reports: asked in turns, so that the machine's
    // other work weighs on both alike.
    let (query_path_folder, query_path_postgres) =
        query_path_latency(&folder, &replicas[1], app_id, &generated.data);
    let follow_delay = follow_delay(&replicas[0], &replicas[1], "bench.follow").await?;
    drop(replicas);
    drop(folder);

    // In the benchmark's own database, so that its table goes with it.
    let pgbench = pgbench(&url, config.clients, config.duration).ok();
    drop(scratch_db);
    let (startup_pages, startup_seconds) =
        startup(&config.url, config.startup_transitions, run_id).await?;
    Ok(ReplicaReport {
        clients: config.clients,
        folder: folder_throughput,
        postgres_1: one,
        postgres_3: three,
        pgbench_one_row_commits_per_second: pgbench,
        verified,
        follow_delay,
        query_path_folder,
        query_path_postgres,
        startup_transitions: config.startup_transitions,
        startup_pages,
        startup_seconds,
    })
}

/// A database the benchmark created on the server it was given, dropped when the benchmark is
/// done with it, or fails: a benchmark leaves nothing behind on someone's server.
struct ScratchDatabase {
    server: String,
    name: String,
    url: String,
}

impl ScratchDatabase {
    fn create(server: &str, name: &str) -> Result<ScratchDatabase> {
        let url = atlas_store_pg::create_database(server, name)?;
        Ok(ScratchDatabase {
            server: server.to_string(),
            name: name.to_string(),
            url,
        })
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        if let Err(e) = atlas_store_pg::drop_database(&self.server, &self.name) {
            eprintln!("could not drop the benchmark's database {}: {e}", self.name);
        }
    }
}

fn wait_until(mut done: impl FnMut() -> bool) -> Result<()> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if done() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    bail!("a replica did not catch up within 60 s")
}

/// A page added on `writer`, timed until `follower` answers with it; 200 times.
async fn follow_delay(writer: &Services, follower: &Services, app_id: &str) -> Result<Percentiles> {
    let mut samples = Vec::new();
    for i in 0..200 {
        let added = writer
            .atlas
            .add_page(atlas_service::AddPageRequest {
                app_id: app_id.into(),
                page_name: format!("跟随页{i}"),
                ..Default::default()
            })
            .await?;
        let acknowledged = Instant::now();
        let id = added.page_id;
        wait_until(|| follower.atlas.read(|g| g.page(&id).is_some()))?;
        samples.push(acknowledged.elapsed().as_nanos() as u64);
    }
    Ok(Percentiles::from_nanos(&mut samples))
}

/// `query_path` from the home page to each intent of the app, in memory, on `folder` and on
/// `replica` in turns.
fn query_path_latency(
    folder: &Services,
    replica: &Services,
    app_id: &str,
    app: &atlas_store::AppData,
) -> (Percentiles, Percentiles) {
    let (mut on_folder, mut on_replica) = (Vec::new(), Vec::new());
    for round in 0..50 {
        for intent in &app.intents {
            for (services, samples) in [(folder, &mut on_folder), (replica, &mut on_replica)] {
                let started = Instant::now();
                let _ = services.atlas.query_path(atlas_service::QueryPathRequest {
                    app_id: app_id.into(),
                    intent: intent.intent_text.clone(),
                    current_page: None,
                    max_steps: None,
                    include_history: None,
                });
                if round > 0 {
                    samples.push(started.elapsed().as_nanos() as u64);
                }
            }
        }
    }
    (
        Percentiles::from_nanos(&mut on_folder),
        Percentiles::from_nanos(&mut on_replica),
    )
}

/// `pgbench` on its own table: one counter row updated per transaction, as a report is.
fn pgbench(url: &str, clients: usize, duration: Duration) -> Result<f64> {
    let bin = pg_binary("pgbench").context("pgbench is not installed")?;
    let psql = pg_binary("psql").context("psql is not installed")?;
    let setup = std::process::Command::new(psql)
        .args([url, "-qc", "DROP TABLE IF EXISTS atlas_pgbench; CREATE TABLE atlas_pgbench (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO atlas_pgbench SELECT g, 0 FROM generate_series(1, 10000) g;"])
        .output()?;
    if !setup.status.success() {
        bail!("{}", String::from_utf8_lossy(&setup.stderr));
    }
    let script = tempfile::NamedTempFile::new()?;
    std::fs::write(
        script.path(),
        "\\set id random(1, 10000)\nUPDATE atlas_pgbench SET n = n + 1 WHERE id = :id;\n",
    )?;
    let out = std::process::Command::new(bin)
        .args(["-n", "-c", &clients.to_string(), "-j", "2", "-T"])
        .arg(duration.as_secs().max(1).to_string())
        .arg("-f")
        .arg(script.path())
        .arg(url)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l[6..].split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .with_context(|| {
            format!(
                "pgbench said: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// A PostgreSQL program: on the PATH, or in Debian's versioned folder.
fn pg_binary(name: &str) -> Option<std::path::PathBuf> {
    let on_path = std::process::Command::new(name).arg("--version").output();
    if on_path.is_ok_and(|o| o.status.success()) {
        return Some(name.into());
    }
    let mut found: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin").join(name))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

/// A database of `transitions` (written straight through the store, as `atlas migrate` does),
/// then a replica opened on it: its pages and the seconds it took to be ready.
async fn startup(url: &str, transitions: usize, run_id: u32) -> Result<(usize, f64)> {
    let scratch_db = ScratchDatabase::create(url, &format!("atlas_bench_startup_{run_id}"))?;
    let url = scratch_db.url.clone();
    let app = synthetic_app(
        "bench.startup",
        AppShape {
            pages: (transitions / 10).max(10),
            transitions,
            intents: 100,
        },
        5,
    )
    .data;
    let pages = app.pages.len();
    let target =
        atlas_wiring::open_store(&StoreAddress::Postgres(url.clone()), &Default::default())?;
    tokio::task::spawn_blocking(move || {
        atlas_wiring::write_apps(target.as_ref(), &[app], &atlas_progress::Quiet)
    })
    .await??;
    let started = Instant::now();
    let replica = tokio::task::spawn_blocking(move || {
        atlas_wiring::open_graph_plain(&StoreAddress::Postgres(url), &Default::default())
    })
    .await??;
    let seconds = started.elapsed().as_secs_f64();
    let loaded = replica.read(|g| g.transition_count());
    if loaded != transitions {
        bail!("the replica loaded {loaded} transitions of {transitions}");
    }
    Ok((pages, seconds))
}
