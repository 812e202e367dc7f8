//! Acknowledged-durable `report_transition` throughput over HTTP on loopback, against SQLite
//! (WAL, synchronous=FULL, one row per commit) fed the same reports.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use atlas_service::Atlas;
use serde::Serialize;

use crate::Percentiles;
use crate::synth::{AppShape, Rng, synthetic_app};

/// How `atlas bench ingest` loads the server.
#[derive(Debug, Clone)]
pub struct IngestConfig {
    /// Concurrent clients.
    pub clients: usize,
    /// How long the load runs.
    pub duration: Duration,
}

/// What `atlas bench ingest` measured: durable reports per second over HTTP and in process, against
/// SQLite and `/healthz`.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    /// Concurrent HTTP clients.
    pub clients: usize,
    /// How long it ran, in seconds.
    pub seconds: f64,
    /// Reports answered with success (each durable before its answer).
    pub acknowledged: u64,
    /// Reports answered with an error.
    pub errors: u64,
    /// Acknowledged reports per second over HTTP.
    pub per_second: f64,
    /// Round-trip latency of one report as a client sees it.
    pub latency: Percentiles,
    /// The graph's success and failure counts grew by exactly the acknowledged reports, both in
    /// memory and after the data folder was reopened from disk.
    pub verified: bool,
    /// SQLite fed the same reports, one upsert per transaction.
    pub sqlite_per_second: f64,
    /// Rows SQLite holds at the end (one per transition).
    pub sqlite_rows: u64,
    /// SQLite fed the same reports, one transaction per `sqlite_batch` of them (as many as
    /// there are clients): what Atlas's group commit does for reports that arrive together.
    pub sqlite_batched_per_second: f64,
    /// Reports per SQLite transaction in the batched run.
    pub sqlite_batch: usize,
    /// The same reports from as many tasks calling the service in-process (no HTTP): what the
    /// service and its journal sustain on their own.
    pub in_process_per_second: f64,
    /// The same clients asking `GET /healthz` as fast as they can: the most this HTTP stack and
    /// load generator do on this machine with no work behind them.
    pub http_ceiling_per_second: f64,
}

impl IngestReport {
    /// Durable reports over HTTP ÷ SQLite committing each report.
    pub fn ratio(&self) -> f64 {
        self.per_second / self.sqlite_per_second.max(f64::MIN_POSITIVE)
    }

    /// Against SQLite with the same batching as the group commit.
    pub fn batched_ratio(&self) -> f64 {
        self.per_second / self.sqlite_batched_per_second.max(f64::MIN_POSITIVE)
    }

    /// In process (no HTTP) against SQLite with the same batching: the store's own speed.
    pub fn in_process_ratio(&self) -> f64 {
        self.in_process_per_second / self.sqlite_batched_per_second.max(f64::MIN_POSITIVE)
    }

    /// Over HTTP against `GET /healthz` from the same clients: what the work behind a report
    /// leaves of what this HTTP stack can answer.
    pub fn ceiling_ratio(&self) -> f64 {
        self.per_second / self.http_ceiling_per_second.max(f64::MIN_POSITIVE)
    }
}

/// `n` reports on random transitions of `app` (a fixed seed: runs compare), 90% successful.
pub(crate) fn reports_on(app: &atlas_store::AppData, n: usize) -> Vec<Report> {
    let mut rng = Rng::new(3);
    (0..n)
        .map(|_| {
            let transition = rng.below(app.transitions.len());
            let t = &app.transitions[transition];
            let (success, latency_ms) = (rng.unit() < 0.9, 200 + rng.below(800) as u64);
            let body = serde_json::json!({
                "from_page": t.from_page,
                "to_page": t.to_page,
                "action": { "type": t.action.action_type, "widget_text": t.action.widget_text },
                "success": success,
                "latency_ms": latency_ms,
            });
            Report {
                body: body.to_string(),
                transition,
                success,
                latency_ms,
            }
        })
        .collect()
}

/// One report a client sends: a known transition, succeeding or not; SQLite is fed the same.
#[derive(Clone)]
pub(crate) struct Report {
    body: String,
    transition: usize,
    success: bool,
    latency_ms: u64,
}

pub(crate) fn total_reports(atlas: &Atlas, app_id: &str) -> u64 {
    atlas.read(|g| {
        g.app(app_id)
            .map(|a| {
                a.transitions()
                    .map(|t| t.success_count() + t.fail_count())
                    .sum()
            })
            .unwrap_or(0)
    })
}

/// Runs the benchmark in `scratch`: HTTP clients, then in process, then SQLite and `/healthz` with the same load.
pub async fn run(
    config: &IngestConfig,
    scratch: &Path,
    server: &dyn atlas_wiring::Serve,
) -> Result<IngestReport> {
    let app_id = "bench.ingest";
    let generated = synthetic_app(
        app_id,
        AppShape {
            pages: 1_000,
            transitions: 10_000,
            intents: 0,
        },
        11,
    );
    let reports = Arc::new(reports_on(&generated.data, 20_000));
    let data_dir = scratch.join("ingest-data");
    let services = atlas_wiring::open(&atlas_wiring::Config::folder(&data_dir)).await?;
    let atlas = services.atlas.clone();
    atlas.import_app(generated.data).await?;
    atlas.checkpoint()?;
    let before = total_reports(&atlas, app_id);

    let served = server.serve(&services, "127.0.0.1:0").await?;
    let addr = served.addr;

    let clients = config.clients.max(1);
    let duration = config.duration;
    let (acknowledged, errors, mut latencies, seconds): (u64, u64, Vec<u64>, f64) =
        tokio::task::spawn_blocking({
            let reports = reports.clone();
            move || drive_clients(&[addr], clients, duration, reports, Route::Report)
        })
        .await??;
    let (ceiling_answers, _, _, ceiling_seconds) = tokio::task::spawn_blocking({
        let reports = reports.clone();
        move || {
            drive_clients(
                &[addr],
                clients,
                duration.min(Duration::from_secs(3)),
                reports,
                Route::Health,
            )
        }
    })
    .await??;
    served.stop().await?;

    let in_memory = total_reports(&atlas, app_id) == before + acknowledged;
    let (in_process_count, in_process_seconds) =
        in_process(&atlas, clients, duration, &reports).await?;
    let acknowledged_all = acknowledged + in_process_count;
    services.close()?;
    drop(atlas);
    drop(services);
    // Reopen from disk: what was acknowledged must be there.
    let reopened = crate::reopen_folder(&data_dir)?;
    let on_disk = total_reports(&reopened, app_id) == before + acknowledged_all;
    drop(reopened);

    let (sqlite_rows, sqlite_seconds) =
        sqlite_reference(&scratch.join("reference.sqlite"), duration, &reports, 1)?;
    // Atlas's group commit makes the reports that arrive together durable with one fsync; the
    // fair SQLite counterpart commits one transaction per as many reports as there are clients.
    let (batched_rows, batched_seconds) = sqlite_reference(
        &scratch.join("reference-batched.sqlite"),
        duration,
        &reports,
        clients,
    )?;
    Ok(IngestReport {
        clients,
        seconds,
        acknowledged,
        errors,
        per_second: acknowledged as f64 / seconds,
        latency: Percentiles::from_nanos(&mut latencies),
        verified: in_memory && on_disk && acknowledged > 0,
        sqlite_per_second: sqlite_rows as f64 / sqlite_seconds,
        sqlite_rows,
        sqlite_batched_per_second: batched_rows as f64 / batched_seconds,
        sqlite_batch: clients,
        in_process_per_second: in_process_count as f64 / in_process_seconds,
        http_ceiling_per_second: ceiling_answers as f64 / ceiling_seconds,
    })
}

/// `clients` tasks calling `report_transition` directly for `duration`; how many were
/// acknowledged, in how many seconds. The requests are parsed before the clock starts, as
/// SQLite's statements are given their numbers: decoding a request is the HTTP face's work, which
/// the HTTP figure measures.
async fn in_process(
    atlas: &Arc<Atlas>,
    clients: usize,
    duration: Duration,
    reports: &Arc<Vec<Report>>,
) -> Result<(u64, f64)> {
    let requests: Arc<Vec<atlas_service::ReportTransitionRequest>> = Arc::new(
        reports
            .iter()
            .map(|r| serde_json::from_str(&r.body))
            .collect::<Result<_, _>>()?,
    );
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (atlas, requests) = (atlas.clone(), requests.clone());
            tokio::spawn(async move {
                let mut done = 0u64;
                let mut i = c * 7919;
                while started.elapsed() < duration {
                    let request = requests[i % requests.len()].clone();
                    i += 1;
                    atlas.report_transition(request).await?;
                    done += 1;
                }
                anyhow::Ok(done)
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    Ok((total, started.elapsed().as_secs_f64()))
}

/// `clients` concurrent HTTP/1.1 keep-alive connections posting reports until the time is up,
/// client `c` to `addrs[c % addrs.len()]`, driven by one thread of their own (an async client,
/// so the load generator does not spend the machine's cores switching between threads).
/// Returns acknowledged, errors, latencies (ns) and the seconds it took.
pub(crate) fn drive_clients(
    addrs: &[SocketAddr],
    clients: usize,
    duration: Duration,
    reports: Arc<Vec<Report>>,
    route: Route,
) -> Result<(u64, u64, Vec<u64>, f64)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let addrs = addrs.to_vec();
    runtime.block_on(async move {
        let started = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let reports = reports.clone();
                let addr = addrs[c % addrs.len()];
                tokio::spawn(async move {
                    one_client(addr, c, started + duration, &reports, route).await
                })
            })
            .collect();
        let (mut acknowledged, mut errors, mut latencies) = (0, 0, Vec::new());
        for task in tasks {
            let (a, e, l) = task.await??;
            acknowledged += a;
            errors += e;
            latencies.extend(l);
        }
        Ok((
            acknowledged,
            errors,
            latencies,
            started.elapsed().as_secs_f64(),
        ))
    })
}

/// What the load generator asks for.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Route {
    Report,
    Health,
}

async fn one_client(
    addr: SocketAddr,
    client: usize,
    until: Instant,
    reports: &[Report],
    route: Route,
) -> Result<(u64, u64, Vec<u64>)> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let (mut acknowledged, mut errors, mut latencies) = (0, 0, Vec::new());
    let mut i = client * 7919;
    while Instant::now() < until {
        let report = &reports[i % reports.len()];
        i += 1;
        let request = match route {
            Route::Report => hyper::Request::post("/api/v1/report_transition")
                .header("host", addr.to_string())
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(bytes::Bytes::from(
                    report.body.clone(),
                )))?,
            Route::Health => hyper::Request::get("/healthz")
                .header("host", addr.to_string())
                .body(http_body_util::Full::new(bytes::Bytes::new()))?,
        };
        let sent = Instant::now();
        let response = sender.send_request(request).await?;
        let ok = response.status() == 200;
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await?
            .to_bytes();
        latencies.push(sent.elapsed().as_nanos() as u64);
        const SUCCESS: &[u8] = b"\"success\":true";
        let answered = match route {
            Route::Report => body.windows(SUCCESS.len()).any(|w| w == SUCCESS),
            Route::Health => !body.is_empty(),
        };
        if ok && answered {
            acknowledged += 1;
        } else {
            errors += 1;
        }
    }
    Ok((acknowledged, errors, latencies))
}

/// SQLite doing the same job the durable way: the same reports, each an upsert of its
/// transition's counters, `batch` of them per transaction (1: one per report), WAL,
/// synchronous=FULL. One connection, since SQLite serialises writers anyway.
fn sqlite_reference(
    path: &Path,
    duration: Duration,
    reports: &[Report],
    batch: usize,
) -> Result<(u64, f64)> {
    let mut db = rusqlite::Connection::open(path)?;
    let mode: String = db.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        bail!("SQLite refused WAL mode ({mode})");
    }
    db.execute_batch(
        "PRAGMA synchronous=FULL;
         CREATE TABLE IF NOT EXISTS transitions (id INTEGER PRIMARY KEY, success INTEGER NOT NULL, fail INTEGER NOT NULL, latency_ms REAL NOT NULL);",
    )?;
    let started = Instant::now();
    let mut rows = 0u64;
    let mut next = reports.iter().cycle();
    while started.elapsed() < duration {
        let tx = db.transaction()?;
        {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO transitions (id, success, fail, latency_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET success = success + ?2, fail = fail + ?3, latency_ms = latency_ms + ?4",
            )?;
            for report in next.by_ref().take(batch.max(1)) {
                upsert.execute(rusqlite::params![
                    report.transition as i64,
                    report.success as i64,
                    (!report.success) as i64,
                    report.latency_ms as f64
                ])?;
                rows += 1;
            }
        }
        tx.commit()?;
    }
    Ok((rows, started.elapsed().as_secs_f64()))
}
