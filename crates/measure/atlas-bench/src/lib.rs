//! Benchmarks that hold Atlas to its speed and memory targets (`atlas bench`).
//!
//! Key design decision: **every figure is reported next to a reference measured in the same run on
//! the same machine** — NetworkX's `shortest_path` on the same graph and queries, SQLite with one
//! fsynced commit per row for the same stream of reports, a plain read-and-parse of the same
//! files — because absolute timings say more about the machine than about Atlas, while ratios
//! travel. Everything runs through the public service or the real HTTP server; the generated
//! graphs come from a fixed seed so runs compare.

pub mod device;
pub mod fleet;
pub mod ingest;
pub mod kb;
pub mod kb_load;
pub mod kb_open;
pub mod query;
pub mod replicas;
pub mod startup;
pub mod synth;
pub mod viewer;

use serde::Serialize;

/// The graph service on the data folder `data`, opened as every Atlas process opens it
/// (`atlas_wiring`), with the built-in embedder.
pub fn open_folder(data: &std::path::Path) -> anyhow::Result<std::sync::Arc<atlas_service::Atlas>> {
    atlas_wiring::open_graph_plain(
        &atlas_wiring::StoreAddress::Folder(data.to_path_buf()),
        &Default::default(),
    )
}

/// Opens a folder this process has just let go of. The service's last reference may still be
/// dropping on one of the service's own threads (a checkpoint was running when the benchmark
/// dropped its own), and the folder stays locked until that finishes: waits up to ten seconds.
pub fn reopen_folder(
    data: &std::path::Path,
) -> anyhow::Result<std::sync::Arc<atlas_service::Atlas>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ours = format!("(pid {})", std::process::id());
    loop {
        match open_folder(data) {
            Err(e) if format!("{e:#}").contains(&ours) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            opened => return opened,
        }
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct Percentiles {
    /// The median.
    pub p50_us: f64,
    /// The 99th percentile.
    pub p99_us: f64,
    /// The mean.
    pub mean_us: f64,
}

impl Percentiles {
    /// From samples in nanoseconds (sorted in place).
    pub fn from_nanos(samples: &mut [u64]) -> Percentiles {
        if samples.is_empty() {
            return Percentiles {
                p50_us: 0.0,
                p99_us: 0.0,
                mean_us: 0.0,
            };
        }
        samples.sort_unstable();
        let at =
            |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        let mean = samples.iter().map(|s| *s as f64).sum::<f64>() / samples.len() as f64 / 1000.0;
        Percentiles {
            p50_us: at(0.5),
            p99_us: at(0.99),
            mean_us: mean,
        }
    }
}

/// The scratch folder a benchmark works in: the caller's `--dir` or a temporary one, removed
/// afterwards either way.
pub fn scratch(parent: Option<&std::path::Path>) -> anyhow::Result<tempfile::TempDir> {
    Ok(match parent {
        Some(p) => {
            std::fs::create_dir_all(p)?;
            tempfile::Builder::new()
                .prefix("atlas-bench-")
                .tempdir_in(p)?
        }
        None => tempfile::Builder::new().prefix("atlas-bench-").tempdir()?,
    })
}

/// Resident and peak memory of this process, in bytes, from `/proc/self/status` (Linux).
pub fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
