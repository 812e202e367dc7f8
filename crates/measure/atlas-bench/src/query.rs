//! `query_path` and `get_next_action` latency in-process, against NetworkX's `shortest_path`
//! (what AutoDroid and DroidBot plan with) on the same graph and the same page pairs.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use atlas_service::{NextActionRequest, QueryPathRequest};
use serde::{Deserialize, Serialize};

use crate::Percentiles;
use crate::synth::{AppShape, Rng, synthetic_app};

const NETWORKX_SCRIPT: &str = include_str!("../python/networkx_reference.py");

/// The app `atlas bench query` generates and how many questions it asks.
#[derive(Debug, Clone)]
pub struct QueryConfig {
    /// The generated app's size.
    pub shape: AppShape,
    /// Questions to ask of each.
    pub queries: usize,
    /// The Python that has NetworkX; `None` skips the reference.
    pub python: Option<String>,
}

/// NetworkX's shortest paths on the same graph and page pairs: the reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NetworkxReport {
    /// NetworkX's version.
    pub version: String,
    /// `nx.shortest_path(G, s, t)`: unweighted, bidirectional BFS.
    pub unweighted: Percentiles,
    /// `nx.shortest_path(G, s, t, weight="cost")`: Dijkstra on Atlas's own edge costs.
    pub weighted: Percentiles,
}

/// What `atlas bench query` measured: path and next-action latency, the planner alone, and
/// NetworkX.
#[derive(Debug, Clone, Serialize)]
pub struct QueryReport {
    /// Pages of the generated app.
    pub pages: usize,
    /// Transitions of the generated app.
    pub transitions: usize,
    /// Questions asked of each.
    pub queries: usize,
    /// `query_path` answered by the service.
    pub query_path: Percentiles,
    /// `get_next_action` answered by the service.
    pub get_next_action: Percentiles,
    /// `query_path`, the same questions again once the tree builder is idle.
    pub query_path_again: Percentiles,
    /// `get_next_action`, the same questions again once the tree builder is idle.
    pub get_next_action_again: Percentiles,
    /// The planner alone on the same page pairs, searching afresh every time (bidirectional
    /// Dijkstra, no remembered routes): what a one-off destination costs.
    pub planner_fresh: Percentiles,
    /// The planner alone with remembered routes, as the service runs it.
    pub planner: Percentiles,
    /// How the remembered routes fared over the whole run.
    pub route_cache_hits: u64,
    /// Routes the planner had to build.
    pub route_cache_misses: u64,
    /// Queries that found no path (should be none: every generated page is reachable).
    pub failures: usize,
    /// The mean length of the paths found, in steps.
    pub mean_path_steps: f64,
    /// NetworkX on the same graph, when Python with NetworkX is there.
    pub networkx: Option<NetworkxReport>,
    /// Why the reference is missing, when it is.
    pub networkx_error: Option<String>,
}

impl QueryReport {
    /// How many times faster than NetworkX's unweighted `shortest_path`, by median, for
    /// query_path, get_next_action, the planner and the planner searching afresh.
    pub fn speedup(&self) -> Option<[f64; 4]> {
        self.networkx.as_ref().map(|nx| self.ratios(&nx.unweighted))
    }

    /// The same against NetworkX's Dijkstra on Atlas's own costs (`weight="cost"`), the
    /// like-for-like comparison, since Atlas weighs reliability as well as length.
    pub fn weighted_speedup(&self) -> Option<[f64; 4]> {
        self.networkx.as_ref().map(|nx| self.ratios(&nx.weighted))
    }

    fn ratios(&self, reference: &Percentiles) -> [f64; 4] {
        let r = |p: &Percentiles| reference.p50_us / p.p50_us.max(1e-3);
        [
            r(&self.query_path),
            r(&self.get_next_action),
            r(&self.planner),
            r(&self.planner_fresh),
        ]
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed().as_nanos() as u64)
}

/// Runs the benchmark in `scratch`: generates the app, asks the service and the planner, then NetworkX.
pub async fn run(config: &QueryConfig, scratch: &Path) -> Result<QueryReport> {
    let app_id = "bench.query";
    let generated = synthetic_app(app_id, config.shape, 42);
    let atlas = crate::open_folder(&scratch.join("query-data"))?;
    let pages: Vec<String> = generated
        .data
        .pages
        .iter()
        .map(|p| p.page_id.clone())
        .collect();
    let edges: Vec<(String, String, f64)> = generated
        .data
        .transitions
        .iter()
        .map(|t| {
            (
                t.from_page.clone(),
                t.to_page.clone(),
                -t.smoothed_success_rate().ln() + atlas_graph::STEP_COST,
            )
        })
        .collect();
    let (page_count, transition_count) =
        (generated.data.pages.len(), generated.data.transitions.len());
    atlas.import_app(generated.data).await?;
    if generated.intents.is_empty() {
        bail!("the generated app has no intents");
    }

    let mut rng = Rng::new(7);
    let home = pages[0].clone();
    // A short warm-up so the first measured query does not pay for cold caches.
    for (intent, _) in generated.intents.iter().take(50) {
        let _ = atlas.query_path(QueryPathRequest {
            app_id: app_id.into(),
            intent: intent.clone(),
            current_page: None,
            max_steps: None,
            include_history: None,
        });
    }
    let questions: Vec<Question> = (0..config.queries)
        .map(|_| {
            let (intent, target) = &generated.intents[rng.below(generated.intents.len())];
            let from = pages[rng.below(pages.len())].clone();
            (intent.clone(), target.clone(), from)
        })
        .collect();
    let first = ask(&atlas, app_id, &questions)?;
    // Again once the tree builder has built every tree the first pass wished for: the same
    // questions as a fleet keeps asking them.
    let idle_by = Instant::now() + std::time::Duration::from_secs(60);
    while atlas
        .read(|g| g.app(app_id).map(|a| a.route_cache_stats().wanted))
        .unwrap_or(0)
        > 0
        && Instant::now() < idle_by
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut again = ask(&atlas, app_id, &questions)?;
    let path_pairs: Vec<(String, String)> = questions
        .iter()
        .map(|(_, target, _)| (home.clone(), target.clone()))
        .collect();
    let next_pairs: Vec<(String, String)> = questions
        .iter()
        .map(|(_, target, from)| (from.clone(), target.clone()))
        .collect();
    let Pass {
        mut path_ns,
        mut next_ns,
        failures,
        steps,
    } = first;

    // The planner alone on the same pairs, afresh and then as the service runs it.
    let (mut fresh_ns, mut planner_ns) = (Vec::new(), Vec::new());
    atlas.read(|g| {
        let app = g.app(app_id).expect("imported above");
        for (from, to) in path_pairs.iter().chain(&next_pairs) {
            fresh_ns.push(timed(|| app.plan_fresh(from, to, 10)).1);
            planner_ns.push(timed(|| app.plan(from, to, 10)).1);
        }
    });
    let cache = atlas
        .read(|g| g.app(app_id).map(|a| a.route_cache_stats()))
        .unwrap_or_default();
    let (networkx, networkx_error) = match &config.python {
        None => (None, Some("skipped".to_string())),
        Some(python) => match networkx_reference(python, scratch, &edges, &path_pairs, &next_pairs)
        {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        },
    };
    Ok(QueryReport {
        pages: page_count,
        transitions: transition_count,
        queries: config.queries,
        query_path: Percentiles::from_nanos(&mut path_ns),
        get_next_action: Percentiles::from_nanos(&mut next_ns),
        query_path_again: Percentiles::from_nanos(&mut again.path_ns),
        get_next_action_again: Percentiles::from_nanos(&mut again.next_ns),
        planner_fresh: Percentiles::from_nanos(&mut fresh_ns),
        planner: Percentiles::from_nanos(&mut planner_ns),
        route_cache_hits: cache.hits,
        route_cache_misses: cache.misses,
        failures: failures + again.failures,
        mean_path_steps: steps as f64 / config.queries.max(1) as f64,
        networkx,
        networkx_error,
    })
}

/// One question of the benchmark: an intent, its target page, and the page `get_next_action`
/// is asked from.
type Question = (String, String, String);

/// What one pass over the questions measured.
struct Pass {
    path_ns: Vec<u64>,
    next_ns: Vec<u64>,
    failures: usize,
    steps: usize,
}

/// Asks `query_path` (from the home page) and `get_next_action` (from the question's page) for
/// every question, in turns.
fn ask(atlas: &atlas_service::Atlas, app_id: &str, questions: &[Question]) -> Result<Pass> {
    let mut pass = Pass {
        path_ns: Vec::with_capacity(questions.len()),
        next_ns: Vec::with_capacity(questions.len()),
        failures: 0,
        steps: 0,
    };
    for (intent, _, from) in questions {
        let request = QueryPathRequest {
            app_id: app_id.into(),
            intent: intent.clone(),
            current_page: None,
            max_steps: None,
            include_history: None,
        };
        let (answer, ns) = timed(|| atlas.query_path(request));
        let answer = answer.map_err(|e| anyhow::anyhow!("query_path: {e}"))?;
        pass.path_ns.push(ns);
        match &answer.path {
            Some(path) if answer.success => pass.steps += path.total_steps,
            _ => pass.failures += 1,
        }
        let request = NextActionRequest {
            app_version: None,
            current_page: from.clone(),
            intent: intent.clone(),
            app_id: None,
            session_id: None,
            explain: false,
        };
        let (answer, ns) = timed(|| atlas.get_next_action(request));
        let answer = answer.map_err(|e| anyhow::anyhow!("get_next_action: {e}"))?;
        pass.next_ns.push(ns);
        if answer.error.is_some() {
            pass.failures += 1;
        }
    }
    Ok(pass)
}

/// Runs the NetworkX script on the same edges and page pairs.
fn networkx_reference(
    python: &str,
    scratch: &Path,
    edges: &[(String, String, f64)],
    path_pairs: &[(String, String)],
    next_pairs: &[(String, String)],
) -> Result<NetworkxReport> {
    let script = scratch.join("networkx_reference.py");
    std::fs::write(&script, NETWORKX_SCRIPT)?;
    let edges_file = scratch.join("edges.tsv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&edges_file)?);
    for (from, to, cost) in edges {
        writeln!(out, "{from}\t{to}\t{cost}")?;
    }
    out.flush()?;
    let pairs_file = scratch.join("pairs.tsv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&pairs_file)?);
    for (from, to) in path_pairs.iter().chain(next_pairs) {
        writeln!(out, "{from}\t{to}")?;
    }
    out.flush()?;
    let output = Command::new(python)
        .arg(&script)
        .arg(&edges_file)
        .arg(&pairs_file)
        .output()
        .with_context(|| format!("cannot run {python}"))?;
    if !output.status.success() {
        bail!("{}", String::from_utf8_lossy(&output.stderr).trim());
    }
    serde_json::from_slice(&output.stdout)
        .context("the NetworkX script's output is not its JSON report")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The service's tree builder at work: in an app too big for its askers to build trees, a
    /// destination asked twice gets its tree from the builder thread, and later questions about
    /// it are answered from the tree.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_big_apps_route_trees_are_built_by_the_service_off_the_request_path() {
        let shape = AppShape {
            pages: 2_000,
            transitions: atlas_graph::ASKER_BUILDS_UP_TO + 4_000,
            intents: 10,
        };
        let generated = synthetic_app("bench.trees", shape, 3);
        let (from, goal) = (
            generated.data.pages[17].page_id.clone(),
            generated.data.pages[1_234].page_id.clone(),
        );
        let scratch = tempfile::tempdir().unwrap();
        let atlas = crate::open_folder(scratch.path()).unwrap();
        atlas.import_app(generated.data).await.unwrap();
        let plan = |from: &str| {
            atlas.read(|g| {
                let app = g.app("bench.trees").unwrap();
                (
                    app.plan(from, &goal, 50).unwrap().cost,
                    app.route_cache_stats(),
                )
            })
        };
        let (first, _) = plan(&from);
        let (second, stats) = plan(&from);
        assert_eq!(first, second);
        assert_eq!(stats.misses, 2, "{stats:?}");
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while plan(&from).1.trees == 0 {
            assert!(Instant::now() < deadline, "no tree was built");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let other = generated_page(&atlas, 999);
        let (cost, stats) = plan(&other);
        let fresh = atlas.read(|g| g.app("bench.trees").unwrap().plan_fresh(&other, &goal, 50));
        assert_eq!(cost, fresh.unwrap().cost);
        assert!(stats.hits >= 1 && stats.wanted == 0, "{stats:?}");
    }

    fn generated_page(atlas: &atlas_service::Atlas, slot: usize) -> String {
        atlas.read(|g| g.app("bench.trees").unwrap().pages()[slot].page_id.clone())
    }
}
