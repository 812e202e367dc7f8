//! The server an evaluation talks to, and the runs `atlas eval droidtask` and `atlas eval agent`
//! make against it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use atlas_agent::HttpCaller;
use atlas_import::droidtask::App;
use atlas_progress::Progress;
use atlas_service::GroundingModel;
use atlas_wiring::{EmbedConfig, Serve, Served};

use crate::agent::{AgentEval, AgentOptions};
use crate::droidtask::Report;
use crate::loao::{Fitting, LeaveOneAppOut};

/// The server an evaluation talks to: the one at `url`, or a fresh one on loopback over a
/// temporary folder, so the evaluation goes through HTTP exactly as an agent would.
pub struct EvalServer {
    base: String,
    running: Option<Served>,
    _scratch: tempfile::TempDir,
}

/// Where an evaluation's answers come from.
#[derive(Clone)]
pub struct Target {
    /// A running server; a fresh one on a temporary folder when `None`.
    pub url: Option<String>,
    /// The running server's token.
    pub token: Option<String>,
    /// The fresh server's embedder.
    pub embed: EmbedConfig,
    /// What serves a fresh one (`atlas_server::Loopback`: the server is a face, above this crate).
    pub server: Arc<dyn Serve>,
}

impl EvalServer {
    async fn start(target: &Target, grounding: Option<GroundingModel>) -> Result<EvalServer> {
        let scratch = tempfile::Builder::new().prefix("atlas-eval-").tempdir()?;
        if let Some(base) = &target.url {
            return Ok(EvalServer {
                base: base.clone(),
                running: None,
                _scratch: scratch,
            });
        }
        let config = atlas_wiring::Config {
            embed: target.embed.clone(),
            // A scratch folder removed when the evaluation ends: nothing to fold into readable
            // files, and no checkpoint left running into a folder already gone.
            checkpoint: atlas_service::CheckpointPolicy {
                interval: std::time::Duration::from_secs(24 * 3600),
                max_journal_bytes: u64::MAX,
            },
            ..atlas_wiring::Config::folder(&scratch.path().join("data"))
        };
        let services = atlas_wiring::open(&config).await?;
        if let Some(model) = grounding {
            services.atlas.use_grounding_model(model)?;
        }
        let served = target.server.serve(&services, "127.0.0.1:0").await?;
        Ok(EvalServer {
            base: served.base_url(),
            running: Some(served),
            _scratch: scratch,
        })
    }

    /// Runs `work` against the server (the one at `target.url`, or a fresh one) through an HTTP
    /// caller, on a blocking thread, with app ids under a prefix of its own; stops the server.
    pub async fn evaluate<T: Send + 'static>(
        target: &Target,
        grounding: Option<GroundingModel>,
        kind: &str,
        work: impl FnOnce(&HttpCaller, &str) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T> {
        let server = EvalServer::start(target, grounding).await?;
        let base = server.base.clone();
        let token = target.token.clone();
        let prefix = format!("{kind}-{}.", std::process::id());
        let done =
            tokio::task::spawn_blocking(move || work(&HttpCaller::new(&base, token), &prefix))
                .await?
                .map_err(|e| anyhow::anyhow!("evaluation stopped: {e}"))?;
        server.stop().await?;
        Ok(done)
    }

    async fn stop(self) -> Result<()> {
        if let Some(served) = self.running {
            served.stop().await?;
        }
        Ok(())
    }
}

/// The apps of a DroidTask folder, or only those named.
pub fn droidtask_apps(dir: &Path, only: &[String]) -> Result<Vec<App>> {
    let mut apps = atlas_import::droidtask::read_all(dir)?;
    if !only.is_empty() {
        apps.retain(|a| only.contains(&a.name));
    }
    Ok(apps)
}

/// `atlas eval droidtask`: every app's tasks asked of the server, and (with `fitting`) each app
/// answered by a model fitted on the others.
pub async fn droidtask(
    target: &Target,
    apps: Vec<App>,
    fitting: Option<Fitting>,
    progress: Arc<dyn Progress>,
) -> Result<(Report, Option<LeaveOneAppOut>)> {
    let asking = progress.clone();
    let (report, apps) = EvalServer::evaluate(target, None, "eval", move |caller, prefix| {
        crate::droidtask::evaluate(caller, &apps, prefix, asking.as_ref())
            .map(|r| (r, apps))
            .map_err(anyhow::Error::from)
    })
    .await?;
    let held_out = fitting.map(|f| {
        progress.stage("fitting each app's model on the other apps", None);
        crate::loao::leave_one_app_out(&report, &apps, f)
    });
    Ok((report, held_out))
}

/// `atlas eval agent`: the phone agent on `apps`' demonstrated tasks, against the server, or
/// (`leave_one_app_out`) each app against a fresh server whose grounding model was fitted on the
/// explained answers of every other app of `dir`.
pub async fn agent(
    target: &Target,
    dir: PathBuf,
    apps: Vec<App>,
    options: AgentOptions,
    leave_one_app_out: bool,
    progress: Arc<dyn Progress>,
) -> Result<AgentEval> {
    if !leave_one_app_out {
        let asked = apps.clone();
        let running = progress.clone();
        let mut report = EvalServer::evaluate(target, None, "agent", move |caller, prefix| {
            crate::agent::evaluate(&dir, &apps, caller, prefix, &options, running.as_ref())
        })
        .await?;
        // The same steps as `eval droidtask` asks them, for the same-screens comparison.
        let (answered, _) = droidtask(target, asked, None, progress).await?;
        report.same_screens = crate::same_screens::compare(&report.runs, &answered.tasks);
        return Ok(report);
    }
    // The explained answers of every app (the held-out one's included: fitting skips it), from
    // which each app's model is fitted on the others, as `eval droidtask` fits them.
    let fresh = Target {
        url: None,
        token: None,
        embed: target.embed.clone(),
        server: target.server.clone(),
    };
    let every_app = droidtask_apps(&dir, &[])?;
    let all_apps = every_app.clone();
    let asking = progress.clone();
    let answered = EvalServer::evaluate(&fresh, None, "eval", move |caller, prefix| {
        crate::droidtask::evaluate(caller, &every_app, prefix, asking.as_ref())
            .map_err(anyhow::Error::from)
    })
    .await?;
    // The same steps as `eval droidtask --leave-one-app-out` answers them.
    let held_out = crate::loao::leave_one_app_out(&answered, &all_apps, Fitting::default());
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    for app in apps {
        let train: Vec<_> = answered
            .tasks
            .iter()
            .filter(|t| t.app != app.name)
            .collect();
        let model = crate::loao::fit_model(&train, Default::default());
        progress.note(&format!("{}: {}", app.name, model.note));
        let dir = dir.clone();
        let options = options.clone();
        let running = progress.clone();
        let (app_runs, left_out) =
            EvalServer::evaluate(&fresh, Some(model), "agent", move |caller, prefix| {
                crate::agent::evaluate_app(&dir, &app, caller, prefix, &options, running.as_ref())
            })
            .await?;
        runs.extend(app_runs);
        skipped.extend(left_out);
    }
    let mut report = AgentEval::from_runs(runs, skipped);
    report.same_screens = crate::same_screens::compare(&report.runs, &held_out.tasks);
    Ok(report)
}

/// `atlas eval releases`: each DroidTask app of `dir` (or those named) taught as a release, then
/// its seeded update as the next, on a fresh server, measured ([`crate::release`]).
pub async fn releases(
    target: &Target,
    dir: &Path,
    only: &[String],
    seed: u64,
) -> Result<Vec<crate::release::ReleaseFigures>> {
    let mut apps = Vec::new();
    for folder in atlas_device_sim::app::recording_folders(dir)? {
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let app = atlas_device_sim::RecordedApp::read(&folder)?;
        let (next, update) = atlas_device_sim::update::update(&app, seed, &[])
            .map_err(|e| anyhow::anyhow!("{name}: cannot update: {e}"))?;
        apps.push((name, app, next, update.summary()));
    }
    EvalServer::evaluate(target, None, "release", move |caller, prefix| {
        apps.into_iter()
            .map(|(name, app, next, update)| {
                crate::release::measure_release(
                    caller,
                    &format!("{prefix}{name}"),
                    &name,
                    &app,
                    &next,
                    update,
                )
                .map_err(|e| anyhow::anyhow!("{name}: {}: {}", e.code, e.message))
            })
            .collect()
    })
    .await
}
