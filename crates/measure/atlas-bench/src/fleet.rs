//! `atlas bench fleet`: a fleet of simulated phones on one DroidTask suite, with DroidTask's ideal
//! model over HTTP (answering after a delay, as a real model would), the graph served on loopback.
//! Each fleet size runs the suite on a fresh graph: a first run, reruns (what the graph saves a
//! suite run again), and with an update seed a last run on the apps' seeded next release, phones
//! and model alike.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow};
use atlas_device_sim::RecordedApp;
use atlas_eval::ideal_server::IdealServer;
use atlas_testrun::{Status, Suite, SuiteReport};
use atlas_wiring::Serve;
use serde::Serialize;
use serde_json::{Value, json};

/// What to run.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// DroidTask's folder.
    pub droidtask: PathBuf,
    /// Its first tests only (the quick run takes 12), or all.
    pub tests: Option<usize>,
    /// The fleet sizes, in phones.
    pub phones: Vec<usize>,
    /// How long the model takes to answer.
    pub delay: Duration,
    /// Runs after the first, before the update.
    pub reruns: usize,
    /// The apps' seeded update, for a last run.
    pub update: Option<u64>,
}

/// A later run of the suite against its first, on the tests the first run passed: its model
/// calls against the first run's, overall and per app, and the tests it lost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Regression {
    /// This run's calls on those tests.
    pub calls: usize,
    /// The first run's calls on them.
    pub before: usize,
    /// Those tests this run did not pass.
    pub lost: usize,
    /// Per app: this run's calls and the first run's.
    pub per_app: BTreeMap<String, [usize; 2]>,
}

impl Regression {
    fn of(first: &SuiteReport, later: &SuiteReport, passed: &[bool]) -> Regression {
        let mut r = Regression::default();
        for ((was, then), now) in passed.iter().zip(&first.tests).zip(&later.tests) {
            if !*was {
                continue;
            }
            r.calls += now.model_calls;
            r.before += then.model_calls;
            r.lost += usize::from(now.status != Status::Passed);
            let app = r.per_app.entry(then.app.clone()).or_default();
            app[0] += now.model_calls;
            app[1] += then.model_calls;
        }
        r
    }
}

impl std::fmt::Display for Regression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        write!(
            f,
            "{} of {} ({:.1}%)",
            self.calls,
            self.before,
            share(self.calls, self.before)
        )?;
        let apps: Vec<String> = self
            .per_app
            .iter()
            .map(|(app, [now, then])| format!("{app} {:.0}%", share(*now, *then)))
            .collect();
        write!(f, "; {}", apps.join(", "))
    }
}

/// One run of the suite on one fleet size.
#[derive(Debug, Clone)]
pub struct FleetRun {
    /// `first`, `rerun K` or `update`.
    pub name: String,
    /// The run's report.
    pub report: SuiteReport,
    /// Against the first run of its size; none for the first.
    pub regression: Option<Regression>,
}

impl FleetRun {
    /// Tests passed.
    pub fn passed(&self) -> usize {
        self.report
            .tests
            .iter()
            .filter(|t| t.status == Status::Passed)
            .count()
    }

    /// Steps the graph took without the model.
    pub fn graph_steps(&self) -> usize {
        self.report.tests.iter().map(|t| t.graph_steps).sum()
    }
}

/// The runs of one fleet size.
#[derive(Debug, Clone)]
pub struct FleetSize {
    /// Phones.
    pub phones: usize,
    /// Its runs, the first first.
    pub runs: Vec<FleetRun>,
    /// The first run of one phone (the first size), in seconds: what speed-ups are against.
    pub one_phone_seconds: f64,
    /// Tests one phone passed that this size's first run did not.
    pub lost_against_one_phone: usize,
    /// Tests the first run passed that the second did not.
    pub lost_in_second_run: usize,
}

impl FleetSize {
    /// Its first run's speed against one phone's.
    pub fn speedup(&self, run: &FleetRun) -> f64 {
        self.one_phone_seconds / run.report.seconds.max(1e-9)
    }

    /// As `atlas bench --json` writes it.
    pub fn json(&self) -> Value {
        let summary = |r: &FleetRun| r.report.json()["summary"].clone();
        let updated = self.runs.iter().find(|r| r.name == "update");
        let later: Vec<Value> = self.runs[1..]
            .iter()
            .map(|r| {
                let again = r.regression.clone().unwrap_or_default();
                json!({
                    "run": r.name,
                    "summary": summary(r),
                    "calls_over_first_passes": again.calls,
                    "first_run_calls_of_those": again.before,
                    "lost": again.lost,
                    "per_app": again.per_app,
                })
            })
            .collect();
        json!({
            "phones": self.phones,
            "first": summary(&self.runs[0]),
            "second": self.runs.get(1).map(summary),
            "speedup_vs_one_phone": self.speedup(&self.runs[0]),
            "after_update": updated.map(summary),
            "later_runs": later,
            "lost_against_one_phone": self.lost_against_one_phone,
            "lost_in_second_run": self.lost_in_second_run,
        })
    }
}

/// The suite the fleet runs, from DroidTask's tasks.
pub fn suite(config: &FleetConfig) -> Result<Suite> {
    let suite = atlas_eval::ideal_server::droidtask_suite(&config.droidtask, "fleet")
        .map_err(|e| anyhow!(e))?;
    let mut suite =
        Suite::parse(&serde_yaml::to_string(&suite)?, &config.droidtask).map_err(|e| anyhow!(e))?;
    if let Some(tests) = config.tests {
        suite.tests.truncate(tests);
    }
    Ok(suite)
}

/// The recorded apps the phones play, by name.
type Apps = Arc<Vec<(String, RecordedApp)>>;

/// DroidTask's ideal model served on loopback: its URL.
async fn model_server(model: IdealServer) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, model.router()).await });
    Ok(url)
}

/// Runs every fleet size of `config` over `suite` (each on a fresh graph in `scratch`, served by
/// `server`), telling `shown` each size as it is done.
pub async fn run(
    config: &FleetConfig,
    suite: &Suite,
    scratch: &Path,
    server: &dyn Serve,
    shown: &mut dyn FnMut(&FleetSize),
) -> Result<Vec<FleetSize>> {
    let read = || IdealServer::read(&config.droidtask, config.delay).map_err(|e| anyhow!(e));
    let model_url = model_server(read()?).await?;
    let apps =
        Arc::new(atlas_testrun::phones::recordings(&config.droidtask).map_err(|e| anyhow!(e))?);
    // With an update: the apps' seeded update, on phones and to the model alike.
    let updated = match config.update {
        None => None,
        Some(seed) => {
            let model = read()?.updated(seed).map_err(|e| anyhow!(e))?;
            let apps = Arc::new(model.apps());
            Some((apps, model_server(model).await?))
        }
    };
    let mut sizes = Vec::new();
    let mut one_phone: Option<(f64, Vec<bool>)> = None;
    for &n in config.phones.iter().filter(|n| **n > 0) {
        let data = scratch.join(format!("fleet-{n}"));
        let served = atlas_wiring::open_and_serve(
            &atlas_wiring::Config::folder(&data),
            server,
            "127.0.0.1:0",
        )
        .await?;
        let plan = Plan {
            suite: suite.clone(),
            apps: apps.clone(),
            model_url: model_url.clone(),
            base: served.base_url(),
            updated: updated.clone(),
            reruns: config.reruns,
            phones: n,
        };
        let reports = tokio::task::spawn_blocking(move || plan.run()).await??;
        served.stop().await?;
        let passed = passes(&reports[0]);
        let (one_phone_seconds, one_phone_passed) = one_phone
            .get_or_insert_with(|| (reports[0].seconds, passed.clone()))
            .clone();
        let updated_run = config.update.map(|_| reports.len() - 1);
        let runs: Vec<FleetRun> = reports
            .iter()
            .enumerate()
            .map(|(k, r)| FleetRun {
                name: match k {
                    0 => "first".to_string(),
                    k if Some(k) == updated_run => "update".to_string(),
                    k => format!("rerun {k}"),
                },
                regression: (k > 0).then(|| Regression::of(&reports[0], r, &passed)),
                report: r.clone(),
            })
            .collect();
        let size = FleetSize {
            phones: n,
            lost_against_one_phone: one_phone_passed
                .iter()
                .zip(&passed)
                .filter(|(was, is)| **was && !**is)
                .count(),
            lost_in_second_run: runs
                .get(1)
                .and_then(|r| r.regression.as_ref())
                .map_or(0, |r| r.lost),
            runs,
            one_phone_seconds,
        };
        shown(&size);
        sizes.push(size);
    }
    Ok(sizes)
}

/// Which tests of a run passed.
fn passes(report: &SuiteReport) -> Vec<bool> {
    report
        .tests
        .iter()
        .map(|t| t.status == Status::Passed)
        .collect()
}

/// The runs of one fleet size, on a blocking thread: the first, the reruns, the update's.
struct Plan {
    suite: Suite,
    apps: Apps,
    model_url: String,
    base: String,
    /// The updated apps and the model that plays them.
    updated: Option<(Apps, String)>,
    reruns: usize,
    phones: usize,
}

impl Plan {
    fn run(self) -> Result<Vec<SuiteReport>> {
        let caller = atlas_agent::HttpCaller::new(&self.base, None);
        let mut config = atlas_testrun::RunConfig {
            model: atlas_llm::ModelConfig::new(&self.model_url, "droidtask-ideal", None),
            planner: None,
            max_steps: 30,
            lang: "en".into(),
            rules: atlas_guard::RuleSet::with_shipped([]).map_err(|(_, e)| e)?,
            fast_path: 0.95,
            app_id: None,
            knowledge_base: None,
            yes: true,
            max_attempts: 2,
            stop: Default::default(),
        };
        config.model.retries = 3;
        let original = (self.apps.clone(), config.model.clone());
        let after = self.updated.map(|(apps, url)| {
            let mut model = config.model.clone();
            model.base_url = url;
            (apps, model)
        });
        let mut reports = Vec::new();
        for (apps, model) in std::iter::repeat_n(original, 1 + self.reruns).chain(after) {
            config.model = model;
            let phones = atlas_testrun::phones::simulated(
                &apps,
                self.phones,
                &atlas_device::AppCatalog::builtin(),
            )
            .map_err(|e| anyhow!(e))?;
            reports.push(atlas_testrun::run_suite(
                &self.suite,
                phones,
                &config,
                Some(&caller),
                &atlas_testrun::Quiet,
            ));
        }
        Ok(reports)
    }
}
