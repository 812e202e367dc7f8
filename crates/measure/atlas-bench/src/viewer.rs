//! The viewer in a real browser: time to first render and frame time of a generated 10,000-page
//! app against the demo app's, in the same browser and run. The measuring is the viewer's own
//! browser test (`clients/python/tests/viewer_page.py`, built in here), driven by selenium in
//! Debian's headless Chromium against two servers started in this process.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::synth::{AppShape, synthetic_app};

/// The browser test, which prints its figures as a JSON line.
const SCRIPT: &str = include_str!("../../../../clients/python/tests/viewer_page.py");

/// Frame times while the viewer's graph is panned and zoomed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Frames {
    /// Frames drawn.
    pub frames: u64,
    /// The mean frame time, in milliseconds.
    #[serde(rename = "meanMs")]
    pub mean_ms: f64,
    /// The 95th percentile frame time, in milliseconds.
    #[serde(rename = "p95Ms")]
    pub p95_ms: f64,
    /// The script's share of a frame (sigma's `render()`), without the raster.
    #[serde(rename = "renderMs")]
    pub render_ms: f64,
}

/// One graph drawn by the viewer: its size, fetch and first render times, and frames.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drawing {
    /// Pages drawn.
    pub pages: u64,
    /// Transitions drawn.
    #[serde(default)]
    pub transitions: u64,
    /// Fetching the graph, in milliseconds.
    #[serde(default)]
    pub fetch_ms: u64,
    /// From the fetch to the first drawn frame, in milliseconds.
    #[serde(default)]
    pub first_render_ms: u64,
    /// Frame times while panning and zooming.
    pub frames: Frames,
}

/// What the browser test measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ViewerReport {
    /// The demo app.
    pub demo: Drawing,
    /// A generated app of the configured size.
    pub large: Drawing,
    /// A neighbourhood of the large app around one page.
    pub neighbourhood: Drawing,
    /// The large app's first render ÷ the demo's.
    pub first_render_ratio: f64,
    /// The large app's mean frame time ÷ the demo's.
    pub frame_time_ratio: f64,
    /// The large app's script time per frame ÷ the demo's.
    pub render_ratio: f64,
}

/// Runs the browser test on the demo and on a generated app of `pages` pages (three transitions
/// each); `None` when Python's selenium, Chromium or ChromeDriver is missing.
pub async fn run(
    scratch: &Path,
    pages: usize,
    python: &str,
    server: &dyn atlas_wiring::Serve,
) -> anyhow::Result<Option<ViewerReport>> {
    let has_selenium = tokio::process::Command::new(python)
        .args(["-c", "import selenium"])
        .status()
        .await
        .is_ok_and(|s| s.success());
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromedriver"];
    if !has_selenium || !chromium.iter().all(|p| Path::new(p).exists()) {
        eprintln!(
            "bench viewer: skipped, needs Python's selenium and Debian's chromium and chromium-driver"
        );
        return Ok(None);
    }
    let mut demo = atlas_wiring::Config::folder(&scratch.join("demo"));
    demo.demo = true;
    let demo = atlas_wiring::open(&demo).await?;
    let large = atlas_wiring::open(&atlas_wiring::Config::folder(&scratch.join("large"))).await?;
    large
        .atlas
        .import_app(synthetic_app("synthetic.app", AppShape::of_pages(pages), 1).data)
        .await?;
    let demo_server = server.serve(&demo, "127.0.0.1:0").await?;
    let large_server = server.serve(&large, "127.0.0.1:0").await?;
    let (demo_addr, large_addr) = (demo_server.addr, large_server.addr);
    let script = scratch.join("viewer_page.py");
    std::fs::write(&script, SCRIPT)?;
    let output = tokio::process::Command::new(python)
        .arg(&script)
        .env("ATLAS_URL", format!("http://{demo_addr}"))
        .env("ATLAS_BIG_URL", format!("http://{large_addr}"))
        .env("ATLAS_BIG_PAGES", pages.to_string())
        .output()
        .await?;
    demo_server.stop().await?;
    large_server.stop().await?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        anyhow::bail!(
            "the viewer's browser test failed:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let line = stdout.lines().find(|l| l.starts_with('{')).ok_or_else(|| {
        anyhow::anyhow!("the viewer's browser test printed no figures:\n{stdout}")
    })?;
    Ok(Some(serde_json::from_str(line)?))
}
