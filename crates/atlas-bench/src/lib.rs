//! Benchmarks that hold Atlas to its speed and memory targets (`atlas bench`).
//!
//! Key design decision: **every figure is reported next to a reference measured in the same run on
//! the same machine** — NetworkX's `shortest_path` on the same graph and queries, SQLite with one
//! fsynced commit per row for the same stream of reports, a plain read-and-parse of the same
//! files — because absolute timings say more about the machine than about Atlas, while ratios
//! travel. Everything runs through the public service or the real HTTP server; the generated
//! graphs come from a fixed seed so runs compare.

pub mod device;
pub mod ingest;
pub mod kb;
pub mod kb_load;
pub mod query;
pub mod replicas;
pub mod startup;
pub mod synth;

use serde::Serialize;

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct Percentiles {
    pub p50_us: f64,
    pub p99_us: f64,
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
