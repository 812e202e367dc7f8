//! `atlas device`: the phones adb and hdc see, and the simulated phone.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use atlas_store_fs::FsStore;
use clap::Subcommand;

use crate::args::*;

#[derive(Subcommand)]
pub(crate) enum DeviceCommand {
    /// The devices adb and hdc know, with their state (`device`, `offline`, `unauthorized`…).
    List,
    /// A simulated phone replaying a DroidBot/DroidTask recording (`states/`, `events/`) or an
    /// app of a data folder's graph, served with adb's device protocol: `adb connect ADDR`, then
    /// any adb command.
    Sim {
        /// The recording's folder, e.g. ../shared/data/droidtask-dev/user_tasks/notes.
        #[arg(required_unless_present = "app", conflicts_with = "app")]
        source: Option<PathBuf>,
        /// Play this app of the graph in `--data` instead (read without locking the folder, so
        /// `atlas serve` may run on it meanwhile).
        #[arg(long)]
        app: Option<String>,
        #[command(flatten)]
        data: DataArgs,
        #[arg(long, default_value = "127.0.0.1:5555")]
        listen: String,
        /// Start on this screen (a recorded `state_str`, a page id or a page name) instead of
        /// the app's launch screen.
        #[arg(long)]
        start: Option<String>,
        /// Append every action received to this file, one JSON line each.
        #[arg(long)]
        log: Option<PathBuf>,
    },
}

pub(crate) fn device(what: DeviceCommand) -> Result<ExitCode> {
    match what {
        DeviceCommand::List => {
            let listed = atlas_device_adb::Adb::list()?;
            for d in &listed {
                println!(
                    "adb  {:<24} {:<14} {}",
                    d.serial,
                    d.state,
                    d.model.clone().unwrap_or_default()
                );
            }
            // hdc is optional: most machines have only one of the two.
            let targets = match atlas_device_hdc::Hdc::new(None).list() {
                Ok(targets) => targets,
                Err(e) => {
                    tracing::debug!("hdc: {e}");
                    Vec::new()
                }
            };
            for t in &targets {
                println!("hdc  {:<24} {}", t.key, t.state);
            }
            if listed.is_empty() && targets.is_empty() {
                println!("(no devices; `adb connect HOST:PORT` adds one over TCP)");
            }
            Ok(ExitCode::SUCCESS)
        }
        DeviceCommand::Sim {
            source,
            app,
            data,
            listen,
            start,
            log,
        } => {
            let app = match (source, app) {
                (Some(source), _) => atlas_device_sim::RecordedApp::read(&source),
                (None, Some(app_id)) => graph_app(&data.data, &app_id),
                (None, None) => unreachable!("clap requires a source or --app"),
            }
            .map_err(|e| anyhow::anyhow!(e))?;
            let (screens, transitions, package) = (
                app.screens.len(),
                app.transitions.len(),
                app.package.clone(),
            );
            let mut phone = atlas_device_sim::Phone::new(app, start.as_deref())
                .map_err(|e| anyhow::anyhow!(e))?;
            if let Some(path) = &log {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                phone.log_to(Box::new(file));
            }
            let listener = std::net::TcpListener::bind(&listen)
                .with_context(|| format!("cannot listen on {listen}"))?;
            eprintln!(
                "simulated phone {package} ({screens} screens, {transitions} transitions) on {}: adb connect {}",
                listener.local_addr()?,
                listener.local_addr()?
            );
            atlas_device_sim::adb::serve(listener, Arc::new(std::sync::Mutex::new(phone)))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An app of a data folder's graph as a phone plays it, read without the writer lock.
pub(crate) fn graph_app(
    data: &std::path::Path,
    app_id: &str,
) -> Result<atlas_device_sim::RecordedApp, String> {
    let apps = FsStore::read_snapshot(data)
        .map_err(|e| e.to_string())?
        .into_apps();
    let found = apps
        .iter()
        .find(|a| a.app.app_id == app_id)
        .ok_or_else(|| {
            let ids: Vec<&str> = apps.iter().map(|a| a.app.app_id.as_str()).collect();
            format!(
                "no app {app_id} in {} (it has: {})",
                data.display(),
                ids.join(", ")
            )
        })?;
    atlas_device_sim::RecordedApp::from_graph(found)
}
