//! Start-up time and resident memory when opening a data folder of many apps, measured in a fresh
//! process (so nothing the generator allocated is counted), against reading and parsing the same
//! graph files as untyped JSON.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::synth::{AppShape, synthetic_app};

/// The size of the folder `atlas bench startup` builds.
#[derive(Debug, Clone)]
pub struct StartupConfig {
    /// Apps to generate.
    pub apps: usize,
    /// Transitions in all.
    pub transitions: usize,
    /// Transitions per page in each generated app.
    pub fan_out: usize,
}

/// What the child process measures about itself while opening the folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenMeasurement {
    /// Opening the folder until it answers, in milliseconds.
    pub open_ms: f64,
    /// Pages opened.
    pub pages: usize,
    /// Transitions opened.
    pub transitions: usize,
    /// Resident memory before opening, in bytes.
    pub rss_before: u64,
    /// Resident memory after opening, in bytes.
    pub rss_after: u64,
    /// Peak resident memory, in bytes.
    pub rss_peak: u64,
}

/// What `atlas bench startup` measured: opening the folder in fresh processes, memory, and parsing
/// the same files as untyped JSON.
#[derive(Debug, Clone, Serialize)]
pub struct StartupReport {
    /// Apps generated.
    pub apps: usize,
    /// Pages in the folder.
    pub pages: usize,
    /// Transitions in the folder.
    pub transitions: usize,
    /// Building the data, in seconds.
    pub build_seconds: f64,
    /// Median of the runs.
    pub open_ms: f64,
    /// Each run's measurement.
    pub runs: Vec<OpenMeasurement>,
    /// Resident memory after opening, per transition.
    pub rss_bytes_per_transition: f64,
    /// Peak memory while opening, per transition.
    pub peak_bytes_per_transition: f64,
    /// Reading every graph file of the folder and parsing it into untyped JSON, in this process.
    pub reference_parse_ms: f64,
    /// The graph files' total size, in bytes.
    pub graph_file_bytes: u64,
    /// The apps' images start-up read instead (how many, their bytes in all).
    pub images: (usize, u64),
    /// Opening the same folder once more with its images removed, so every app is read from its
    /// JSON (an upgrade's first start, or a graph edited by hand), in milliseconds.
    pub from_json_ms: f64,
}

/// Opens `data` and reports what it cost: the body of the hidden `atlas bench-open` command.
pub fn measure_open(data: &Path) -> Result<OpenMeasurement> {
    let (rss_before, _) = crate::memory();
    let started = Instant::now();
    let atlas = crate::open_folder(data)?;
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (rss_after, rss_peak) = crate::memory();
    let (pages, transitions) = atlas.read(|g| (g.page_count(), g.transition_count()));
    Ok(OpenMeasurement {
        open_ms,
        pages,
        transitions,
        rss_before,
        rss_after,
        rss_peak,
    })
}

/// Writes the large folder through the service (import, then a checkpoint), as real data gets there.
pub async fn build(config: &StartupConfig, data: &Path) -> Result<(usize, usize)> {
    let atlas = crate::open_folder(data)?;
    let apps = config.apps.max(1);
    let per_app = config.transitions.div_ceil(apps);
    let shape = AppShape {
        pages: (per_app / config.fan_out.max(2)).max(1),
        transitions: per_app,
        intents: 50,
    };
    for i in 0..apps {
        let generated = synthetic_app(&format!("com.bench.app{i:03}"), shape, 1000 + i as u64);
        atlas.import_app(generated.data).await?;
        // Fold as we go so the journal never holds the whole million.
        if i % 10 == 9 {
            atlas.checkpoint()?;
        }
    }
    atlas.checkpoint()?;
    Ok(atlas.read(|g| (g.page_count(), g.transition_count())))
}

/// Reads and parses every `.atlas/graph*.json` under `apps/`.
fn reference_parse(data: &Path) -> Result<(f64, u64)> {
    let started = Instant::now();
    let mut bytes = 0u64;
    for app in std::fs::read_dir(data.join("apps"))? {
        let dir = app?.path().join(".atlas");
        for file in
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let path = file?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with("graph") && name.ends_with(".json") {
                let text = std::fs::read(&path)?;
                bytes += text.len() as u64;
                let _: serde_json::Value = serde_json::from_slice(&text)?;
            }
        }
    }
    Ok((started.elapsed().as_secs_f64() * 1000.0, bytes))
}

/// Builds the folder, then opens it `runs` times in fresh processes made by `child` (which must
/// run [`measure_open`] on the folder given as its last argument and print the JSON).
pub async fn run(
    config: &StartupConfig,
    scratch: &Path,
    child: impl Fn() -> Command,
    runs: usize,
) -> Result<StartupReport> {
    let data = scratch.join("startup-data");
    let started = Instant::now();
    let (pages, transitions) = build(config, &data).await?;
    let build_seconds = started.elapsed().as_secs_f64();
    let (reference_parse_ms, graph_file_bytes) = reference_parse(&data)?;
    let images = images_in(&data, false)?;
    let mut measurements = Vec::new();
    for _ in 0..runs.max(1) {
        measurements.push(open_in_child(&child, &data, transitions)?);
    }
    // The same folder without its images: an upgrade's first start, or JSON edited by hand.
    images_in(&data, true)?;
    let from_json_ms = open_in_child(&child, &data, transitions)?.open_ms;
    let mut times: Vec<f64> = measurements.iter().map(|m| m.open_ms).collect();
    times.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    let per = |bytes: u64| bytes as f64 / transitions.max(1) as f64;
    // The median run, as for the time: the least of a few runs flatters.
    let median_of = |values: Vec<u64>| {
        let mut values = values;
        values.sort_unstable();
        values.get(values.len() / 2).copied().unwrap_or(0)
    };
    let rss = median_of(
        measurements
            .iter()
            .map(|m| m.rss_after.saturating_sub(m.rss_before))
            .collect(),
    );
    let peak = median_of(
        measurements
            .iter()
            .map(|m| m.rss_peak.saturating_sub(m.rss_before))
            .collect(),
    );
    Ok(StartupReport {
        apps: config.apps,
        pages,
        transitions,
        build_seconds,
        open_ms: median,
        runs: measurements,
        rss_bytes_per_transition: per(rss),
        peak_bytes_per_transition: per(peak),
        reference_parse_ms,
        graph_file_bytes,
        images,
        from_json_ms,
    })
}

/// Opens `data` in a fresh process and checks it holds every transition.
fn open_in_child(
    child: &impl Fn() -> Command,
    data: &Path,
    transitions: usize,
) -> Result<OpenMeasurement> {
    let output = child()
        .arg(data)
        .output()
        .context("cannot start the measuring process")?;
    if !output.status.success() {
        bail!(
            "the measuring process failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let m: OpenMeasurement = serde_json::from_slice(&output.stdout)
        .context("the measuring process did not print its JSON")?;
    if m.transitions != transitions {
        bail!(
            "reopened {} transitions, wrote {transitions}",
            m.transitions
        );
    }
    Ok(m)
}

/// The apps' images (`.atlas/graph.image`) in the folder: how many, and their bytes; removed
/// when `remove` says so.
fn images_in(data: &Path, remove: bool) -> Result<(usize, u64)> {
    let (mut count, mut bytes) = (0, 0);
    for app in std::fs::read_dir(data.join("apps"))? {
        let image = app?.path().join(".atlas").join("graph.image");
        if let Ok(meta) = std::fs::metadata(&image) {
            count += 1;
            bytes += meta.len();
            if remove {
                std::fs::remove_file(&image)?;
            }
        }
    }
    Ok((count, bytes))
}
