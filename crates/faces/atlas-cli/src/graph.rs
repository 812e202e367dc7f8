//! The commands over the graph itself: fsck, stats, path, next, diff, export, import, migrate.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use atlas_service::{Atlas, CheckpointPolicy};
use atlas_text::HashEmbedder;
use clap::Subcommand;

use crate::args::*;
use crate::progress::Shown;
use crate::stop::Stop;
use atlas_progress::Progress;

#[derive(Subcommand)]
pub(crate) enum ImportCommand {
    /// An app graph written by `atlas export`.
    Graph {
        #[command(flatten)]
        data: DataArgs,
        file: PathBuf,
    },
    /// A DroidTask folder (raw_utgs/ and user_tasks/): each app's exploration and demonstrated
    /// tasks, taught as an agent would report them, under app id `droidtask.<app>`.
    Droidtask {
        #[command(flatten)]
        data: DataArgs,
        dir: PathBuf,
    },
    /// A recorded app (a DroidBot output folder, states/ and events/, as `atlas device sim`
    /// plays it) as one release of app `--app`, named by the version the phone reports: every
    /// screen it shows from its launch and every recorded step between them. Into an app that
    /// holds an earlier release it is checked as `atlas explore` re-explores a site: known pages
    /// seen (their faces the release's), new screens new pages, known pages and steps the
    /// release no longer shows marked gone; the changes listed as `atlas diff` lists them.
    Release {
        #[command(flatten)]
        data: DataArgs,
        dir: PathBuf,
        /// The app id to teach it under.
        #[arg(long)]
        app: String,
        /// The app's seeded next release instead (`atlas device sim --update SEED`).
        #[arg(long, value_name = "SEED")]
        update: Option<u64>,
        /// Print what was taught and the changes as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A DroidBot (or HMDroidbot) output folder (states/ and events/, or only utg.js), taught as
    /// an agent would report its runs.
    Droidbot {
        #[command(flatten)]
        data: DataArgs,
        dir: PathBuf,
        /// The app id to teach them under.
        #[arg(long)]
        app: String,
    },
    /// A generated app of a given size, shaped like real ones (a menu tree under a home page,
    /// back edges, cross links that favour hub pages, statistics from reliable to flaky), to try
    /// the viewer and the benchmarks on a large app. Pages, transitions and intents with the same
    /// ids are replaced.
    Synthetic {
        #[command(flatten)]
        data: DataArgs,
        /// The app id.
        #[arg(long, default_value = "synthetic.app")]
        app: String,
        /// Pages, 1 to 1,000,000.
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=MAX_SYNTHETIC_PAGES))]
        pages: u64,
        /// Transitions (default: three per page; at least two per page are made), at most 20
        /// per page.
        #[arg(long)]
        transitions: Option<usize>,
        /// Registered intents (default: one per 20 pages), at most one per page.
        #[arg(long)]
        intents: Option<usize>,
        /// The generator's seed: the same seed, the same app.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

pub(crate) async fn fsck(data: DataArgs, repair: bool) -> Result<ExitCode> {
    // Opening recovers (replays and folds the journal), as any start does; then check.
    must_exist(&data)?;
    let store = atlas_wiring::open_store(&data.address(), &data.pg())?;
    let atlas = Atlas::open(
        store.clone(),
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )?;
    atlas.checkpoint()?;
    let mut report = store.check(repair)?;
    let files = atlas_wiring::store_files(&data.address(), &data.pg())?;
    let half_done = atlas_wiring::setups_half_done(&atlas, &data.data, files.as_ref(), repair);
    for (problem, repaired) in half_done.await? {
        match repaired {
            true => report.repaired.push(problem),
            false => report.problems.push(problem),
        }
    }
    if repair {
        atlas.checkpoint()?;
    }
    for line in &report.repaired {
        println!("repaired: {line}");
    }
    for line in &report.problems {
        println!("problem: {line}");
    }
    println!(
        "{}: {} apps, {} pages, {} transitions, {} problems, {} repaired",
        data.describe(),
        report.apps,
        report.pages,
        report.transitions,
        report.problems.len(),
        report.repaired.len()
    );
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn stats(data: DataArgs, app: Option<String>) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    print_json(&atlas.get_graph_stats(atlas_service::GraphStatsRequest { app_id: app })?)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn path(
    data: DataArgs,
    app: String,
    intent: String,
    from: Option<String>,
    max_steps: Option<i64>,
    history: bool,
) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    let r = atlas.query_path(atlas_service::QueryPathRequest {
        app_id: app,
        intent,
        current_page: from,
        max_steps,
        include_history: history.then_some(true),
    })?;
    print_json(&r)?;
    Ok(if r.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn diff(
    data: DataArgs,
    app: String,
    from: Option<String>,
    to: Option<String>,
    json: bool,
) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    let diff = atlas.get_app_diff(atlas_service::AppDiffRequest {
        app_id: app,
        from_version: from,
        to_version: to,
    })?;
    if json {
        print_json(&diff)?;
    } else {
        print!("{}", diff_lines(&diff));
    }
    Ok(ExitCode::SUCCESS)
}

/// A diff as lines for people: `+` added, `-` removed, `~` changed.
fn diff_lines(d: &atlas_service::AppDiff) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let versions: Vec<&str> = d.versions.iter().map(|v| v.version.as_str()).collect();
    let p = &d.pages;
    let _ = writeln!(
        out,
        "{}: {} -> {} (versions {})\npages: {} added, {} removed, {} changed, {} unchanged, {} not checked",
        d.app_id,
        d.from,
        d.to,
        versions.join(", "),
        p.added.len(),
        p.removed.len(),
        p.changed.len(),
        p.unchanged,
        p.unchecked.len()
    );
    let named = |page: &atlas_service::DiffPage| {
        if page.url.is_empty() {
            page.page_name.clone()
        } else {
            format!("{}  {}", page.page_name, page.url)
        }
    };
    for page in &p.added {
        let _ = writeln!(out, "+ {}", named(page));
    }
    for page in &p.removed {
        let _ = writeln!(out, "- {}", named(page));
    }
    for c in &p.changed {
        let mut what = Vec::new();
        if let Some([old, new]) = &c.title {
            what.push(format!("title {old:?} -> {new:?}"));
        }
        for (sign, list, kind) in [
            ('+', &c.texts_added, "texts"),
            ('-', &c.texts_removed, "texts"),
            ('+', &c.actions_added, "actions"),
            ('-', &c.actions_removed, "actions"),
        ] {
            if !list.is_empty() {
                let quoted: Vec<String> = list.iter().map(|t| format!("{t:?}")).collect();
                what.push(format!("{kind} {sign}{}", quoted.join(&format!(" {sign}"))));
            }
        }
        let _ = writeln!(out, "~ {}: {}", named(&c.page), what.join("; "));
    }
    let t = &d.transitions;
    let _ = writeln!(
        out,
        "transitions: {} added, {} removed, {} kept",
        t.added.len(),
        t.removed.len(),
        t.kept
    );
    for (sign, list) in [('+', &t.added), ('-', &t.removed)] {
        for step in list {
            let _ = writeln!(out, "{sign} {}: {} -> {}", step.from, step.action, step.to);
        }
    }
    let i = &d.intents;
    for (sign, list) in [('+', &i.added), ('-', &i.removed)] {
        for intent in list {
            let _ = writeln!(out, "{sign} intent {intent:?}");
        }
    }
    for change in &i.path_changed {
        let way = |w: &Option<Vec<String>>| {
            w.as_ref()
                .map_or_else(|| "no way".to_string(), |steps| steps.join(", "))
        };
        let _ = writeln!(
            out,
            "~ intent {:?} ({}): {} => {}",
            change.intent,
            change.target_page,
            way(&change.from),
            way(&change.to)
        );
    }
    out
}

pub(crate) fn ways(
    data: DataArgs,
    app: String,
    intent: Option<String>,
    app_version: Option<String>,
) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    print_json(&atlas.get_ways(atlas_service::GetWaysRequest {
        app_id: app,
        intent,
        app_version,
    })?)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn forget_way(data: DataArgs, app: String, way: String) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    let forgotten = atlas
        .forget_way(atlas_service::ForgetWayRequest { app_id: app, way })
        .await?;
    atlas.checkpoint()?;
    print_json(&forgotten)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn next(data: DataArgs, page: String, intent: String) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    let r = atlas.get_next_action(atlas_service::NextActionRequest {
        app_version: None,
        current_page: page,
        intent,
        app_id: None,
        session_id: None,
        explain: false,
    })?;
    print_json(&r)?;
    Ok(if r.error.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn export(data: DataArgs, app: String, out: Option<PathBuf>) -> Result<ExitCode> {
    let atlas = open_existing(&data)?;
    let graph = atlas.export_app(&app)?;
    let text = serde_json::to_string_pretty(&graph)?;
    match out {
        Some(path) => std::fs::write(&path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => println!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn import(what: ImportCommand, stop: Stop) -> Result<ExitCode> {
    stop.leaves("an app of the import is written whole or not at all, in one append");
    match what {
        ImportCommand::Graph { data, file } => {
            let shown = Shown::start();
            shown.stage(&format!("reading {}", file.display()), None);
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let graph: atlas_store::AppData = match serde_json::from_str(&text) {
                Ok(g) => g,
                Err(e) => bail!("{} is not an exported app graph: {e}", file.display()),
            };
            import_app(&data, graph, &shown, &stop).await
        }
        ImportCommand::Droidtask { data, dir } => {
            let apps = atlas_import::droidtask::read_all(&dir)?;
            let recordings = apps
                .iter()
                .map(|app| {
                    (
                        format!("droidtask.{}", app.name),
                        std::iter::once(&app.exploration)
                            .chain(&app.tasks)
                            .map(|t| t.recording())
                            .collect(),
                    )
                })
                .collect();
            import_recordings(&data, recordings, &stop).await
        }
        ImportCommand::Release {
            data,
            dir,
            app,
            update,
            json,
        } => import_release(&data, &dir, app, update, json, &stop).await,
        ImportCommand::Droidbot { data, dir, app } => {
            let runs = atlas_import::droidbot::read(&dir)?;
            import_recordings(&data, vec![(app, runs)], &stop).await
        }
        ImportCommand::Synthetic {
            data,
            app,
            pages,
            transitions,
            intents,
            seed,
        } => {
            let pages = pages as usize;
            if transitions.is_some_and(|t| t > pages.saturating_mul(20)) {
                bail!("--transitions may be at most 20 per page ({})", pages * 20);
            }
            if intents.is_some_and(|i| i > pages) {
                bail!("--intents may be at most one per page ({pages})");
            }
            let typical = atlas_bench::synth::AppShape::of_pages(pages);
            let shape = atlas_bench::synth::AppShape {
                transitions: transitions.unwrap_or(typical.transitions),
                intents: intents.unwrap_or(typical.intents),
                ..typical
            };
            let shown = Shown::start();
            shown.stage(&format!("generating {pages} pages"), None);
            let generated = atlas_bench::synth::synthetic_app(&app, shape, seed);
            import_app(&data, generated.data, &shown, &stop).await
        }
    }
}

/// What an import leaves once written: it is durable before the folder's files show it.
const IMPORT_WRITTEN: &str =
    "the import is written whole in the journal; the next start folds it into the folder's files";

/// Imports one whole app into the data folder (one append: all of it or nothing) and makes it
/// durable.
async fn import_app(
    data: &DataArgs,
    app: atlas_store::AppData,
    shown: &Shown,
    stop: &Stop,
) -> Result<ExitCode> {
    let (id, pages, transitions) = (
        app.app.app_id.clone(),
        app.pages.len(),
        app.transitions.len(),
    );
    shown.stage(&format!("importing {id}"), None);
    let atlas = open_default(data)?;
    let summary = atlas.import_app(app).await?;
    stop.leaves(IMPORT_WRITTEN);
    shown.stage("writing the data folder", None);
    atlas.checkpoint()?;
    shown.pause();
    print_json(&summary)?;
    shown.finish(&format!(
        "imported {id}: {pages} pages, {transitions} transitions"
    ));
    Ok(ExitCode::SUCCESS)
}

/// The most pages `atlas import synthetic` makes: its memory grows with them.
const MAX_SYNTHETIC_PAGES: u64 = 1_000_000;

/// `atlas migrate`: the copy runs on a blocking thread (the stores wait for their writes).
pub(crate) async fn migrate(
    from: String,
    to: String,
    pg_ca: Option<PathBuf>,
    stop: Stop,
) -> Result<ExitCode> {
    stop.leaves(format!(
        "the copy into {to} is part made and marked so: nothing serves it, and the same \
         `atlas migrate` run again completes it"
    ));
    let pg = atlas_wiring::PgOptions {
        ca_file: pg_ca,
        ..Default::default()
    };
    let (from, to) = (
        atlas_wiring::StoreAddress::parse(&from),
        atlas_wiring::StoreAddress::parse(&to),
    );
    let shown = Shown::start();
    let copying = shown.clone();
    let copied = tokio::task::spawn_blocking(move || {
        atlas_wiring::migrate(&from, &to, &pg, copying.as_ref())
    })
    .await??;
    shown.pause();
    print_json(&copied)?;
    shown.finish(&format!(
        "copied {} apps, {} pages, {} transitions, {} files{}",
        copied.apps,
        copied.pages,
        copied.transitions,
        copied.files,
        if copied.resumed {
            " (completing the migration that was stopped)"
        } else {
            ""
        }
    ));
    Ok(ExitCode::SUCCESS)
}

/// Teaches recordings through the tool registry, as an agent reports them, one app at a time.
/// Reports are evidence, so teaching the same recordings twice would count them twice: an app
/// already present is left as it is.
/// `atlas import release`: a recorded app, or its seeded update, as one release of `app_id`.
async fn import_release(
    data: &DataArgs,
    dir: &std::path::Path,
    app_id: String,
    update: Option<u64>,
    json: bool,
    stop: &Stop,
) -> Result<ExitCode> {
    let recorded = atlas_device_sim::RecordedApp::read(dir)?;
    let recorded = match update {
        None => recorded,
        Some(seed) => {
            atlas_device_sim::update::update(&recorded, seed, &[])
                .map_err(|e| anyhow::anyhow!("{}: cannot update: {e}", recorded.package))?
                .0
        }
    };
    let atlas = open_default(data)?;
    // Taught on a copy of the app in memory, then written whole: the release, or nothing of it.
    let scratch = atlas.scratch()?;
    let before = atlas.export_app(&app_id).ok();
    if let Some(app) = &before {
        scratch.import_app(app.clone()).await?;
    }
    let caller =
        atlas_registry::ServiceCaller::new(scratch.clone(), tokio::runtime::Handle::current());
    let teaching = app_id.clone();
    let taught = tokio::task::spawn_blocking(move || {
        atlas_eval::release::teach_release(&caller, &teaching, &recorded)
    })
    .await?
    .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
    let after = scratch.export_app(&app_id)?;
    match &before {
        Some(before) => atlas.write_changes(before, after).await?,
        None => atlas.import_app(after).await?,
    };
    stop.leaves(IMPORT_WRITTEN);
    atlas.checkpoint()?;
    if json {
        print_json(&taught)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "release {} (before: {}): {} screens, {} known pages seen, {} new, {} steps; {} marked gone",
        taught.version,
        taught.previous.as_deref().unwrap_or("none"),
        taught.screens,
        taught.pages_matched,
        taught.pages_added,
        taught.steps,
        taught.marked_gone
    );
    if let Some(diff) = &taught.diff {
        print!("{}", diff_lines(diff));
    }
    Ok(ExitCode::SUCCESS)
}

/// Each app is taught on a scratch graph, then written whole (one append): a stop leaves every
/// app whole or absent, and the same import run again imports those it had not reached.
pub(crate) async fn import_recordings(
    data: &DataArgs,
    apps: Vec<(String, Vec<atlas_import::recording::Recording>)>,
    stop: &Stop,
) -> Result<ExitCode> {
    let shown = Shown::start();
    let atlas = open_default(data)?;
    let mut summary = Vec::new();
    for (app_id, recordings) in apps {
        if atlas.read(|g| g.app(&app_id).is_some()) {
            summary.push((app_id, serde_json::json!("nothing (already imported)")));
            continue;
        }
        let scratch = atlas.scratch()?;
        let caller =
            atlas_registry::ServiceCaller::new(scratch.clone(), tokio::runtime::Handle::current());
        let teaching = shown.clone();
        let app = app_id.clone();
        let taught = tokio::task::spawn_blocking(move || -> Result<serde_json::Value> {
            let mut total = atlas_eval::teach::Taught::default();
            teaching.stage(&format!("teaching {app}'s recordings"), Some(recordings.len() as u64));
            for recording in &recordings {
                let t = atlas_eval::teach::teach_recording(&caller, &app, recording, &format!("import-{}", recording.name))?;
                total.screens += t.screens;
                total.steps += t.steps;
                total.intents += t.intents;
                teaching.advance(1);
            }
            Ok(serde_json::json!({ "recordings": recordings.len(), "screens": total.screens, "steps": total.steps, "intents": total.intents }))
        })
        .await??;
        atlas.import_app(scratch.export_app(&app_id)?).await?;
        stop.leaves(
            "each app imported so far is written whole in the journal, the others not at all; \
             the same import run again imports the rest",
        );
        summary.push((app_id, taught));
    }
    shown.stage("writing the data folder", None);
    atlas.checkpoint()?;
    shown.pause();
    for (app_id, added) in &summary {
        let stats = atlas.get_graph_stats(atlas_service::GraphStatsRequest {
            app_id: Some(app_id.clone()),
        })?;
        println!(
            "{app_id}: added {added}; now {} pages, {} transitions, {} intents",
            stats.pages, stats.transitions, stats.intents
        );
    }
    shown.finish(&format!("imported {} apps", summary.len()));
    Ok(ExitCode::SUCCESS)
}
