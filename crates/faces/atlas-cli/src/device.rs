//! `atlas device`: the phones adb and hdc see, and the simulated phone.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use atlas_store_fs::FsStore;
use clap::Subcommand;

use crate::args::*;

// Parsed once per run: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub(crate) enum DeviceCommand {
    /// The devices adb and hdc know, with their state (`device`, `offline`, `unauthorized`…).
    List,
    /// Simulated phones replaying DroidBot/DroidTask recordings (`states/`, `events/`) or an
    /// app of a data folder's graph, served with adb's device protocol: `adb connect ADDR`,
    /// then any adb command. Several sources, or `--phones N`, serve several phones from one
    /// process, each on its own port (its own serial) with its own state.
    Sim {
        /// The recordings' folders, e.g. ../shared/data/droidtask-dev/user_tasks/notes (each
        /// gives `--phones` phones).
        #[arg(required_unless_present = "app", conflicts_with = "app")]
        source: Vec<PathBuf>,
        /// Play this app of the graph in `--data` instead (read without locking the folder, so
        /// `atlas serve` may run on it meanwhile).
        #[arg(long)]
        app: Option<String>,
        #[command(flatten)]
        data: DataArgs,
        /// The first phone's address; the others take the ports after it (port 0: each any
        /// free port). Every phone's address is printed on stderr.
        #[arg(long, default_value = "127.0.0.1:5555")]
        listen: String,
        /// Phones for each source.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
        phones: u16,
        /// Start on this screen (a recorded `state_str`, a page id or a page name) instead of
        /// the app's launch screen.
        #[arg(long)]
        start: Option<String>,
        /// Append every action received to this file, one JSON line each (with the phone's
        /// address as `phone` when there are several).
        #[arg(long)]
        log: Option<PathBuf>,
        /// Play the app's next release instead: a seeded update with every kind of change real
        /// releases make (a text renamed, an id changed, widgets reordered, an entry moved into
        /// a menu, a dialog, a confirmation, an entry removed) on screens its recorded steps pass
        /// through, printed on stderr; the same seed makes the same update. The phone reports
        /// the new version (`dumpsys package PKG`).
        #[arg(long, value_name = "SEED")]
        update: Option<u64>,
    },
}

impl DeviceCommand {
    /// Whether the command serves phones until stopped (they keep nothing to finish).
    pub(crate) fn serves(&self) -> bool {
        matches!(self, DeviceCommand::Sim { .. })
    }
}

/// `app`'s seeded update, its changes told on stderr.
fn updated(
    app: &atlas_device_sim::RecordedApp,
    seed: u64,
) -> Result<atlas_device_sim::RecordedApp> {
    let (next, update) = atlas_device_sim::update::update(app, seed, &[])
        .map_err(|e| anyhow::anyhow!("{}: cannot update: {e}", app.package))?;
    eprintln!(
        "{} updated from {} to {} (seed {seed}): {}",
        app.package,
        app.version.name,
        update.version.name,
        serde_json::to_string(&update.changes)?
    );
    for change in &update.said {
        eprintln!("  {change}");
    }
    Ok(next)
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
            phones,
            start,
            log,
            update,
        } => {
            let apps = match app {
                Some(app_id) => vec![graph_app(&data.data, &app_id)?],
                None => source
                    .iter()
                    .map(|s| atlas_device_sim::RecordedApp::read(s))
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            };
            let apps = match update {
                None => apps,
                Some(seed) => apps
                    .iter()
                    .map(|app| updated(app, seed))
                    .collect::<Result<Vec<_>>>()?,
            };
            let first: std::net::SocketAddr = listen
                .parse()
                .with_context(|| format!("--listen {listen} is not an address and port"))?;
            let count = apps.len() * usize::from(phones);
            let several = count > 1;
            let mut served = Vec::new();
            for (k, app) in apps
                .iter()
                .flat_map(|app| std::iter::repeat_n(app, usize::from(phones)))
                .enumerate()
            {
                let mut addr = first;
                if first.port() != 0 {
                    let port = usize::from(first.port()) + k;
                    addr.set_port(
                        u16::try_from(port)
                            .context("too many phones for the ports after --listen")?,
                    );
                }
                let listener = std::net::TcpListener::bind(addr)
                    .with_context(|| format!("cannot listen on {addr}"))?;
                let addr = listener.local_addr()?;
                let mut phone = atlas_device_sim::Phone::new(app.clone(), start.as_deref())
                    .map_err(|e| anyhow::anyhow!(e))?;
                if several {
                    phone.set_label(&addr.to_string());
                }
                if let Some(path) = &log {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .with_context(|| format!("cannot open {}", path.display()))?;
                    phone.log_to(Box::new(file));
                }
                eprintln!(
                    "simulated phone {} ({} screens, {} transitions) on {addr}: adb connect {addr}",
                    app.package,
                    app.screens.len(),
                    app.transitions.len(),
                );
                served.push((listener, phone));
            }
            // Each phone its own thread: an adb client drives them in parallel.
            let threads: Vec<_> = served
                .into_iter()
                .map(|(listener, phone)| {
                    let phone = Arc::new(std::sync::Mutex::new(phone));
                    std::thread::spawn(move || atlas_device_sim::adb::serve(listener, phone))
                })
                .collect();
            for thread in threads {
                match thread.join() {
                    Ok(result) => result?,
                    Err(_) => anyhow::bail!("a simulated phone stopped unexpectedly"),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An app of a data folder's graph as a phone plays it, read without the writer lock.
pub(crate) fn graph_app(
    data: &std::path::Path,
    app_id: &str,
) -> Result<atlas_device_sim::RecordedApp> {
    let apps = FsStore::read_snapshot(data)?.into_apps();
    let found = apps
        .iter()
        .find(|a| a.app.app_id == app_id)
        .ok_or_else(|| {
            let ids: Vec<&str> = apps.iter().map(|a| a.app.app_id.as_str()).collect();
            anyhow::anyhow!(
                "no app {app_id} in {} (it has: {})",
                data.display(),
                ids.join(", ")
            )
        })?;
    Ok(atlas_device_sim::RecordedApp::from_graph(found)?)
}
