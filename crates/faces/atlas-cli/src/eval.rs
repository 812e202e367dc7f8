//! `atlas eval`: Atlas scored on benchmarks through the interface an agent uses.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_eval::server::Target;
use atlas_service::CheckpointPolicy;
use clap::Subcommand;

use crate::args::*;
use crate::progress::Shown;
use atlas_progress::Progress;

#[derive(Subcommand)]
pub(crate) enum EvalCommand {
    /// Paraphrased intents: the demo app's labelled requests in other words (Chinese and English),
    /// the page `query_path` leads to (top-1) and the pages of `find_similar_intents`' best
    /// intents (top-3).
    Intents {
        /// A query,page labelled set over the demo app (default: its 91 paraphrases).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Retrieval quality of the knowledge base: the demo dataset and its two labelled sets, the
    /// paraphrases the defaults were chosen on and a held-out set written later (or your own
    /// table and labelled set), top-1 and top-3 hit rates per search method.
    Kb {
        /// A question,answer table (default: the demo dataset's).
        #[arg(long)]
        table: Option<PathBuf>,
        /// A query,question labelled set (default: the demo's 114 paraphrases and 57 held-out
        /// queries).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Search quality of the business graph's search tools: the demo graph and its labelled set
    /// of Chinese and English questions (or your own), top-1 and top-3 per tool.
    Biz {
        /// A business graph (Atlas JSON document; default: the demo graph).
        #[arg(long)]
        graph: Option<PathBuf>,
        /// A tool,query,expected labelled set (default: the demo's 74 questions).
        #[arg(long)]
        labelled: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Each DroidTask app taught as a release (`atlas import release`), then its seeded update
    /// as the next: the screens both releases show keeping their pages, the pages the update
    /// removed marked gone and no other, the pages listed as changed (see
    /// docs/evaluations.md).
    Releases {
        dir: PathBuf,
        /// Only these apps (comma-separated).
        #[arg(long, value_delimiter = ',')]
        apps: Vec<String>,
        /// The update's seed (`atlas device sim --update`).
        #[arg(long, default_value_t = 1)]
        update: u64,
        /// Write every app's figures as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// The phone agent on DroidTask's tasks, each on the simulated phone with an ideal scripted
    /// model: model calls and successes without the graph, with the graph on a task new to it,
    /// and on the same task again (see docs/evaluations.md).
    Agent {
        dir: PathBuf,
        /// Only these apps (comma-separated).
        #[arg(long, value_delimiter = ',')]
        apps: Vec<String>,
        /// Write every run as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// The fast path's target: the agent skips the model where the graph is sure (a step of
        /// a remembered way its own record lets replay, or an answer whose confidence, shrunk
        /// toward the app's own record of its kind, reaches this; see docs/navigation.md#trust).
        #[arg(long, default_value_t = 0.95)]
        fast_path: f64,
        /// Each app's tasks run against a server whose grounding model was fitted on the
        /// other apps only: the figures to expect on an app nobody fitted anything to.
        #[arg(long, conflicts_with = "url")]
        leave_one_app_out: bool,
        /// Then update each app with this seed (`atlas device sim --update`) and run its tasks
        /// again: the model alone on the new version, then the fleet on the same graph.
        #[arg(long)]
        update: Option<u64>,
        /// How many times each task is rerun after its first run, before the update and after
        /// it: a fleet's day reruns its suites many times, and an app earns trust over them
        /// (default 3).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=50))]
        reruns: Option<u16>,
        #[command(flatten)]
        mistakes: MistakeArgs,
        /// Send no verdicts: the graph has only the agents' word for how each run went (by
        /// default each run with the graph is judged, as a test runner judges a test, and its
        /// verdict sent with `report_verdict`).
        #[arg(long)]
        no_verdicts: bool,
        /// Against this running server instead of a fresh one on a temporary folder.
        #[arg(long)]
        url: Option<String>,
        #[arg(long, env = "ATLAS_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Plan over the graph's map with the ideal planner: a scripted model that chooses only
        /// among the routes a plan request lists (the one whose steps the recording does next,
        /// as many as match), never an action the request did not offer.
        #[arg(long, conflicts_with = "planner_url")]
        plan: bool,
        /// Or plan with a real model.
        #[command(flatten)]
        planner: PlannerArgs,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// AutoDroid's scoring on a DroidTask folder, leave-one-task-out (see docs/evaluations.md).
    Droidtask {
        dir: PathBuf,
        /// Evaluate against this running server instead of a fresh one on a temporary folder.
        #[arg(long)]
        url: Option<String>,
        #[arg(long, env = "ATLAS_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Write the full report (every step's answer) as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Only these apps (comma-separated).
        #[arg(long, value_delimiter = ',')]
        apps: Vec<String>,
        /// Also report leave-one-app-out figures: the grounding model fitted, calibrated and
        /// thresholded on the other apps only, then asked about each app's steps.
        #[arg(long)]
        leave_one_app_out: bool,
        /// With --leave-one-app-out: write the model fitted on every app given here (the one
        /// Atlas ships is `crates/core/atlas-navigate/src/ground/model.json`).
        #[arg(long, requires = "leave_one_app_out")]
        fit_out: Option<PathBuf>,
        /// With --leave-one-app-out: the precision when sure the threshold keeps on held-out apps.
        #[arg(long, default_value_t = 0.95)]
        precision: f64,
        /// With --leave-one-app-out: how the threshold keeps it: `pooled` (the precision expected
        /// from all held-out answers' calibrated confidences) or `by-app:N` (counted, in every
        /// app that answers at least N steps above it).
        #[arg(long, default_value = "pooled", value_parser = parse_threshold_rule)]
        threshold: atlas_eval::loao::ThresholdRule,
        /// The embedder of the fresh server (ignored with --url).
        #[command(flatten)]
        embed: EmbedArgs,
    },
}

pub(crate) async fn run(what: EvalCommand) -> Result<ExitCode> {
    match what {
        EvalCommand::Intents { labelled, embed } => eval_intents(labelled, &embed).await,
        EvalCommand::Kb {
            table,
            labelled,
            json,
            embed,
        } => eval_kb(table, labelled, json, &embed),
        EvalCommand::Biz {
            graph,
            labelled,
            json,
            embed,
        } => eval_biz(graph, labelled, json, &embed),
        EvalCommand::Droidtask {
            dir,
            url,
            token,
            json,
            apps,
            leave_one_app_out,
            fit_out,
            precision,
            threshold,
            embed,
        } => {
            let fitting = leave_one_app_out.then_some(atlas_eval::loao::Fitting {
                precision,
                threshold,
                ..Default::default()
            });
            let target = Target {
                url,
                token,
                embed: embed.config(),
                server: std::sync::Arc::new(atlas_server::Loopback),
            };
            eval_droidtask(dir, target, json, apps, fitting, fit_out).await
        }
        EvalCommand::Releases {
            dir,
            apps,
            update,
            json,
            embed,
        } => {
            let target = Target {
                url: None,
                token: None,
                embed: embed.config(),
                server: std::sync::Arc::new(atlas_server::Loopback),
            };
            eval_releases(dir, apps, update, json, target).await
        }
        EvalCommand::Agent {
            dir,
            apps,
            json,
            fast_path,
            leave_one_app_out,
            update,
            reruns,
            mistakes,
            no_verdicts,
            url,
            token,
            plan,
            planner,
            embed,
        } => {
            // The screen model is the ideal one: a real planner is named by --planner-model.
            let planning = match (planner.config("planner"), plan) {
                (Some(config), _) => atlas_eval::agent::Planning::Model(config),
                (None, true) => atlas_eval::agent::Planning::Ideal,
                (None, false) => atlas_eval::agent::Planning::Off,
            };
            let target = Target {
                url,
                token,
                embed: embed.config(),
                server: std::sync::Arc::new(atlas_server::Loopback),
            };
            let options = atlas_eval::agent::AgentOptions {
                fast_path,
                planning,
                update,
                reruns: reruns.map(usize::from),
                mistakes: mistakes.mistakes(),
                verdicts: !no_verdicts,
            };
            eval_agent(dir, apps, json, target, options, leave_one_app_out).await
        }
    }
}

pub(crate) async fn eval_intents(labelled: Option<PathBuf>, embed: &EmbedArgs) -> Result<ExitCode> {
    let text = match &labelled {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => atlas_eval::retrieval::intents::DEMO_PARAPHRASES.to_string(),
    };
    let labelled = atlas_eval::retrieval::intents::read_labelled(&text)?;
    let shown = Shown::start();
    shown.stage("learning the demo app", None);
    let scratch = tempfile::Builder::new().prefix("atlas-eval-").tempdir()?;
    let embedder = embedder(embed)?;
    let name = embedder.name();
    let atlas = atlas_wiring::open_graph(
        &atlas_wiring::StoreAddress::Folder(scratch.path().join("data")),
        &Default::default(),
        embedder,
        CheckpointPolicy::default(),
    )?;
    atlas_service::demo_graph(&atlas).await?;
    shown.stage(&format!("asking {} requests", labelled.len()), None);
    let quality =
        atlas_eval::retrieval::intents::measure(&atlas, atlas_service::DEMO_APP_ID, &labelled)?;
    shown.pause();
    println!("paraphrased intents over the demo app, embedder {name}:");
    for (set, hits) in [
        ("chinese", quality.chinese),
        ("english", quality.english),
        ("all", quality.all),
    ] {
        println!(
            "{set:<8} queries {:>3}  top-1 {:.3}  top-3 {:.3}",
            hits.queries,
            hits.top1_rate(),
            hits.top3_rate()
        );
    }
    println!(
        "unservable queries {:>3}  found no page {:.3}",
        quality.unservable.queries,
        quality.unservable.top1_rate()
    );
    for (query, expected, found) in &quality.misses {
        println!(
            "  miss: {query} → {} (expected {expected})",
            if found.is_empty() { "nothing" } else { found }
        );
    }
    shown.finish(&format!("asked {} requests", quality.all.queries));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn eval_biz(
    graph: Option<PathBuf>,
    labelled: Option<PathBuf>,
    json: Option<PathBuf>,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let shown = Shown::start();
    let data = match &graph {
        Some(p) => atlas_biz::import::from_json(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
        None => atlas_biz::demo::data(),
    };
    let labelled = match &labelled {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => atlas_eval::retrieval::business::DEMO_LABELLED.to_string(),
    };
    let labelled = atlas_eval::retrieval::business::read_labelled(&labelled)?;
    let embedder = embedder(embed)?;
    let embedder_name = embedder.name();
    shown.stage("indexing the business graph", None);
    let store = atlas_biz::BizStore::in_memory(data, embedder)?;
    shown.stage(&format!("asking {} questions", labelled.len()), None);
    let quality = atlas_eval::retrieval::business::measure(&store.current(), &labelled)?;
    shown.pause();
    println!("business graph search, embedder {embedder_name}:");
    println!(
        "{:<24} {:>7} {:>6} {:>6}",
        "tool", "queries", "top-1", "top-3"
    );
    for (tool, s) in &quality.by_tool {
        println!(
            "{tool:<24} {:>7} {:>6.3} {:>6.3}",
            s.queries, s.top1, s.top3
        );
    }
    let t = &quality.total;
    println!(
        "{:<24} {:>7} {:>6.3} {:>6.3}",
        "all", t.queries, t.top1, t.top3
    );
    for (tool, query, expected, found) in &quality.misses {
        println!("  miss [{tool}] {query}: expected {expected}, first {found}");
    }
    shown.finish(&format!("asked {} questions", t.queries));
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&quality)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn eval_kb(
    table: Option<PathBuf>,
    labelled: Option<PathBuf>,
    json: Option<PathBuf>,
    embed: &EmbedArgs,
) -> Result<ExitCode> {
    let shown = Shown::start();
    let read = |path: &Option<PathBuf>, default: &str| -> Result<String> {
        match path {
            Some(p) => {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
            }
            None => Ok(default.to_string()),
        }
    };
    let table = read(&table, atlas_kb::demo::DEMO_TABLE)?;
    let sets = match &labelled {
        Some(path) => vec![(path.display().to_string(), read(&labelled, "")?)],
        None => vec![
            (
                "paraphrases".to_string(),
                atlas_eval::retrieval::knowledge::DEMO_PARAPHRASES.to_string(),
            ),
            (
                "held-out".to_string(),
                atlas_eval::retrieval::knowledge::DEMO_HELD_OUT.to_string(),
            ),
        ],
    };
    let scratch = tempfile::Builder::new()
        .prefix("atlas-eval-kb-")
        .tempdir()?;
    let embedder = embedder(embed)?;
    let embedder_name = embedder.name();
    let kb = atlas_kb::KnowledgeBase::open(scratch.path(), embedder)?;
    let dataset = kb.create_dataset("eval", "")?;
    kb.add_document_with(
        &dataset.id,
        "table.csv",
        table.as_bytes(),
        Some(atlas_kb::split::SourceKind::QaCsv),
        Default::default(),
        shown.as_ref(),
    )?;
    let mut results = Vec::new();
    for (set, text) in sets {
        let labelled = atlas_eval::retrieval::knowledge::read_labelled(&text)?;
        for method in [
            atlas_kb::SearchMethod::Keyword,
            atlas_kb::SearchMethod::Semantic,
            atlas_kb::SearchMethod::Hybrid,
        ] {
            shown.stage(&format!("asking the {set} ({method:?})"), None);
            let q = atlas_eval::retrieval::knowledge::measure(&kb, &dataset.id, &labelled, method)?;
            shown.pause();
            println!(
                "{set:<12} {:<9} queries {:>4}  top-1 {:.3}  top-3 {:.3}",
                q.method, q.queries, q.top1, q.top3
            );
            results.push(serde_json::json!({ "set": set, "quality": q }));
        }
    }
    println!("(embedder {embedder_name})");
    shown.finish(&format!(
        "asked {} labelled sets by three methods",
        results.len() / 3
    ));
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&results)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each graph condition's model calls against `base`'s (the model alone's on the updated app,
/// after an update) on as many runs of the same tasks, and its fast path's steps, wrong steps
/// and precision.
fn against(conditions: &atlas_eval::agent::Conditions) -> String {
    conditions
        .iter()
        .filter(|(name, c)| {
            (name.starts_with("graph_") || name.starts_with("after_update")) && c.tasks > 0
        })
        .map(|(name, c)| {
            let calls = c.model_calls as f64 / c.model_only_calls.max(1) as f64;
            let precision = if c.fast_path_steps == 0 {
                "–".to_string()
            } else {
                format!(
                    "{:.3}",
                    1.0 - c.wrong_fast_path_steps as f64 / c.fast_path_steps as f64
                )
            };
            let j = &c.judged;
            let judged = j
                .precision()
                .map_or("–".to_string(), |p| format!("{p:.3}"));
            let agreement = j
                .agreement()
                .map_or("–".to_string(), |p| format!("{p:.3}"));
            format!(
                "{name} {:.1}% ({} fast, {} not the demonstration's, {precision}; judged {} wrong {} precision {judged}, unjudged {} agreeing with the model alone {agreement} of {}, wrong not undone {})",
                calls * 100.0,
                c.fast_path_steps,
                c.wrong_fast_path_steps,
                j.judged,
                j.judged_wrong,
                j.unjudged,
                j.unjudged_compared,
                j.wrong_not_undone
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `atlas eval agent`, printed.
/// `atlas eval releases`: each app and its seeded update taught as two releases, per app and
/// in total.
async fn eval_releases(
    dir: PathBuf,
    only: Vec<String>,
    seed: u64,
    json: Option<PathBuf>,
    target: Target,
) -> Result<ExitCode> {
    let figures = atlas_eval::server::releases(&target, &dir, &only, seed).await?;
    println!(
        "{:<12} {:>9} {:>7} {:>13} {:>11} {:>11} {:>9} {:>9}  update",
        "app", "versions", "screens", "identity", "to gone", "gone right", "gone wrong", "changed"
    );
    let mut total = atlas_eval::release::ReleaseFigures::default();
    for f in &figures {
        println!(
            "{:<12} {:>9} {:>3}→{:<3} {:>4}/{:<4} {:.3} {:>11} {:>11} {:>10} {:>4} ({} untouched)  {}",
            f.app,
            format!("{}→{}", f.versions[0], f.versions[1]),
            f.first.screens,
            f.second.screens,
            f.identity_kept,
            f.screens_in_both,
            f.identity_kept as f64 / f.screens_in_both.max(1) as f64,
            f.pages_to_mark_gone,
            f.marked_gone_right,
            f.marked_gone_wrong,
            f.pages_changed,
            f.changed_untouched,
            f.update
        );
        total.identity_kept += f.identity_kept;
        total.screens_in_both += f.screens_in_both;
        total.pages_to_mark_gone += f.pages_to_mark_gone;
        total.marked_gone_right += f.marked_gone_right;
        total.marked_gone_wrong += f.marked_gone_wrong;
        total.pages_changed += f.pages_changed;
        total.changed_untouched += f.changed_untouched;
    }
    println!(
        "all: identity {}/{} ({:.3}); pages to mark gone {}, marked {}, marked wrongly {}; pages changed {} ({} untouched by the update)",
        total.identity_kept,
        total.screens_in_both,
        total.identity_kept as f64 / total.screens_in_both.max(1) as f64,
        total.pages_to_mark_gone,
        total.marked_gone_right,
        total.marked_gone_wrong,
        total.pages_changed,
        total.changed_untouched
    );
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&figures)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn eval_agent(
    dir: PathBuf,
    only: Vec<String>,
    json: Option<PathBuf>,
    target: Target,
    options: atlas_eval::agent::AgentOptions,
    leave_one_app_out: bool,
) -> Result<ExitCode> {
    let shown = Shown::start();
    let apps = atlas_eval::server::droidtask_apps(&dir, &only)?;
    let planned = !matches!(options.planning, atlas_eval::agent::Planning::Off);
    let report = atlas_eval::server::agent(
        &target,
        dir,
        apps,
        options,
        leave_one_app_out,
        shown.clone(),
    )
    .await?;
    shown.pause();
    if leave_one_app_out {
        println!(
            "leave-one-app-out: each app's tasks answered by a grounding model fitted on the other apps"
        );
    }
    print_conditions("all tasks:", &report.conditions, planned);
    print_answers(&report);
    print_fleet(&report);
    print_conditions(
        "the tasks the model alone completes (lost = completed by the model alone, not here):",
        &report.solvable,
        planned,
    );
    print_runs(&report);
    println!(
        "the agent's own time per step (model and device not included): mean {:.2} ms (asking the graph {:.2} ms), median {:.2} ms, median after a task's first step {:.2} ms",
        report.agent_ms_per_step,
        report.graph_ms_per_step,
        report.agent_ms_p50,
        report.agent_ms_p50_after_first
    );
    if !report.skipped.is_empty() {
        println!(
            "left out (demonstration steps the recorded events do not link): {}",
            report.skipped.join(", ")
        );
    }
    shown.finish(&format!("{} runs of the agent", report.runs.len()));
    if let Some(path) = &json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each condition's totals, and the model calls against the model alone's.
fn print_conditions(title: &str, conditions: &atlas_eval::agent::Conditions, planned: bool) {
    println!("{title}");
    for (name, c) in conditions {
        println!(
            "  {name:<15} tasks {:>3}  succeeded {:>3}  lost {:>2}  model calls {:>4}  fast-path steps {:>4}  wrong fast-path steps {:>3}  wrong steps {:>3}",
            c.tasks,
            c.succeeded,
            c.lost,
            c.model_calls,
            c.fast_path_steps,
            c.wrong_fast_path_steps,
            c.mistaken_steps
        );
        if planned && name != "model_only" {
            println!(
                "  {:<15} of the model calls {:>4} to the planner; planned steps {:>4}  wrong planned steps {:>3}",
                "", c.plan_calls, c.plan_steps, c.wrong_plan_steps
            );
        }
    }
    println!(
        "  model calls against model_only's on the same tasks: {}",
        against(conditions)
    );
}

/// The graph's answers on new tasks by confidence, and beside `eval droidtask`'s on the same steps.
fn print_answers(report: &atlas_eval::agent::AgentEval) {
    println!(
        "graph_new_task: the graph's answers by confidence (share of all steps answered, precision):"
    );
    for p in &report.new_task_curve {
        println!(
            "  ≥ {:.2}: answers {:.3} of steps, precision {:.3}",
            p.threshold, p.coverage, p.precision
        );
    }
    let same = &report.same_screens;
    println!(
        "graph_new_task beside eval droidtask on the same {} ground-truth steps (eval droidtask's first guess right on {:.3}, a right finish on {:.3}):",
        same.steps, same.droidtask_first_guess_right, same.droidtask_right_finish
    );
    for (agent, asked) in same.agent.iter().zip(&same.droidtask) {
        println!(
            "  ≥ {:.2}: the agent offered {:.3} (precision {:.3}); eval droidtask answered {:.3} (precision {:.3})",
            agent.threshold, agent.coverage, agent.precision, asked.coverage, asked.precision
        );
    }
}

/// The fleet condition's halves, and why the graph offered nothing on the steps the model decided.
fn print_fleet(report: &atlas_eval::agent::AgentEval) {
    println!(
        "fleet: each app's tasks in turn on one graph taught only by the runs before (first half, then second half of the tasks):"
    );
    for h in &report.fleet {
        println!(
            "  {:<12} {:<6} tasks {:>3}  succeeded {:>3}  model calls {:>4} of model_only's {:>4}  fast-path steps {:>3} (wrong {:>2})  offered on {:.3} of {:>3} steps, precision {:.3}",
            h.app,
            h.half,
            h.tasks,
            h.succeeded,
            h.model_calls,
            h.model_only_calls,
            h.fast_path_steps,
            h.wrong_fast_path_steps,
            h.offered,
            h.steps,
            h.precision
        );
    }
    let asked: usize = report.new_task_no_offer.values().sum();
    println!(
        "graph_new_task: why the graph offered nothing to take, on the {asked} steps the model decided:"
    );
    let mut causes: Vec<_> = report.new_task_no_offer.iter().collect();
    causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (why, n) in causes {
        println!("  {n:>4}  {why}");
    }
}

/// Per app and per run of the tasks, the model calls against the model alone's; after an update, the steps until the fast path acted again.
fn print_runs(report: &atlas_eval::agent::AgentEval) {
    println!(
        "per app, on the tasks the model alone completes: model calls against model_only's (a condition runs each task once, graph_repeat_later the third run on), fast-path steps, wrong, precision:",
    );
    for (app, conditions) in &report.per_app {
        println!("  {app:<12} {}", against(conditions));
    }
    if let Some(all) = report.by_run.get("all") {
        println!(
            "each run of the tasks, in order: model calls against model_only's on the same tasks (fast-path steps, wrong):"
        );
        for sequence in ["first_half", "second_half", "after_update"] {
            let each: Vec<String> = all
                .iter()
                .filter(|r| r.sequence == sequence)
                .map(|r| {
                    format!(
                        "{:.0}% ({}, {})",
                        100.0 * r.totals.model_calls as f64
                            / r.totals.model_only_calls.max(1) as f64,
                        r.totals.fast_path_steps,
                        r.totals.wrong_fast_path_steps
                    )
                })
                .collect();
            if !each.is_empty() {
                println!("  {sequence:<12} {}", each.join("  "));
            }
        }
    }
    if !report.steps_to_trust.is_empty() {
        let each: Vec<String> = report
            .steps_to_trust
            .iter()
            .map(|(app, steps)| match steps {
                Some(n) => format!("{app} {n}"),
                None => format!("{app} never"),
            })
            .collect();
        println!(
            "after the update, steps until the fast path acted again: {}",
            each.join(", ")
        );
    }
}

/// `atlas eval droidtask`, printed.
pub(crate) async fn eval_droidtask(
    dir: PathBuf,
    target: Target,
    json: Option<PathBuf>,
    only: Vec<String>,
    fitting: Option<atlas_eval::loao::Fitting>,
    fit_out: Option<PathBuf>,
) -> Result<ExitCode> {
    let shown = Shown::start();
    let apps = atlas_eval::server::droidtask_apps(&dir, &only)?;
    let (report, held_out) =
        atlas_eval::server::droidtask(&target, apps, fitting, shown.clone()).await?;
    let line = |name: &str, s: &atlas_eval::droidtask::Scores| {
        println!(
            "{name:<12} tasks {:>3}  steps {:>4}  accuracy {:.3}  completion {:.3}  tap {:.3}  input {:.3}  finish {:.3}  unsure {:.3}  precision when sure {:.3}",
            s.tasks,
            s.all.steps,
            s.all.accuracy(),
            s.completion(),
            s.tap.accuracy(),
            s.input.accuracy(),
            s.finish.accuracy(),
            s.all.unsure_share(),
            s.all.precision()
        )
    };
    shown.pause();
    println!("in-sample (the model this build ships, fitted on the development apps):");
    for app in &report.apps {
        line(&app.app, &app.scores);
    }
    line("total", &report.total);
    if let Some(held_out) = &held_out {
        println!("leave-one-app-out (each app answered by a model fitted on the others):");
        for app in &held_out.apps {
            line(&app.app, &app.scores);
        }
        line("total", &held_out.total);
        println!("held-out precision/coverage by threshold on the calibrated confidence:");
        for p in &held_out.curve {
            println!(
                "  ≥ {:.2}: answers {:.3} of steps, precision {:.3}",
                p.threshold, p.coverage, p.precision
            );
        }
        if let Some(path) = &fit_out {
            std::fs::write(path, serde_json::to_string_pretty(&held_out.model)? + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("model fitted on every app written to {}", path.display());
        }
    }
    println!(
        "page identity (everything taught): app, screens, content states, pages, pages whose screens offer different actions"
    );
    for i in &report.identity {
        println!(
            "  {:<12} {:>4} screens  {:>4} content states  {:>3} pages  {:>3} with differing actions",
            i.app, i.screens, i.content_states, i.pages, i.pages_with_differing_actions
        );
    }
    shown.finish(&format!(
        "asked {} steps of {} tasks in {} apps",
        report.total.all.steps,
        report.total.tasks,
        report.apps.len()
    ));
    if let Some(path) = json {
        let mut doc = serde_json::to_value(&report)?;
        if let Some(held_out) = &held_out {
            doc["leave_one_app_out"] = serde_json::to_value(held_out)?;
        }
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pooled` or `by-app:N`.
fn parse_threshold_rule(text: &str) -> Result<atlas_eval::loao::ThresholdRule> {
    use atlas_eval::loao::ThresholdRule;
    match text.split_once(':') {
        None if text == "pooled" => Ok(ThresholdRule::Pooled),
        Some(("by-app", n)) => n
            .parse()
            .map(|min_answers| ThresholdRule::ByApp { min_answers })
            .map_err(|_| anyhow::anyhow!("by-app:N wants a number of answers, got {n:?}")),
        _ => Err(anyhow::anyhow!("`pooled` or `by-app:N`, got {text:?}")),
    }
}
