//! The phones a run uses: `adb:SERIAL`, `hdc:KEY`, `sim:ADDR` (an `atlas device sim` reached
//! through adb) and `simulate:SOURCE[*N]` (N phones the runner starts in its own process).
//!
//! Each is a [`TestPhone`]: a [`Device`] for the agent, plus what a runner needs around a test —
//! the app started afresh before it (on the test's start screen), the simulator's recorded
//! screen after it, and whether the phone is still there when a test ends in an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use atlas_device::{AppCatalog, Device, DeviceError};
use atlas_device_adb::Adb;
use atlas_device_hdc::Hdc;
use atlas_device_sim::app::recording_folders;
use atlas_device_sim::{Phone, RecordedApp};

/// One `--devices` entry.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceSpec {
    /// A phone adb knows.
    Adb(String),
    /// A HarmonyOS device hdc knows.
    Hdc(String),
    /// A running simulator, at this address, connected through adb.
    Sim(String),
    /// Phones this process simulates.
    Simulate {
        /// What they have installed.
        source: SimSource,
        /// How many.
        count: usize,
        /// Install the apps' seeded update instead (`?update=SEED`, as `atlas device sim
        /// --update` makes it).
        update: Option<u64>,
    },
}

/// What simulated phones have installed.
#[derive(Debug, Clone, PartialEq)]
pub enum SimSource {
    /// A recording, or a folder of recordings (each an app).
    Folder(PathBuf),
    /// An app of a data folder's graph (`APP@DATA`).
    Graph {
        /// The app's id.
        app: String,
        /// The data folder.
        data: PathBuf,
    },
}

/// The most phones one `simulate:` entry may start.
pub const MAX_SIMULATED: usize = 64;

/// A `--devices` entry that is not one, and what entries look like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{spec:?}: {problem}")]
pub struct SpecError {
    /// The entry.
    pub spec: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Why the phones of a run cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum PhonesError {
    /// A phone did not answer or could not start.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A recording cannot be read, or a simulated phone not started on it.
    #[error(transparent)]
    Recording(#[from] atlas_device_sim::SimError),
    /// A recording cannot be updated as asked.
    #[error("{name}: cannot update: {source}")]
    Update {
        /// The recording.
        name: String,
        /// Why.
        #[source]
        source: atlas_device_sim::SimError,
    },
    /// An app of a data folder's graph cannot be read.
    #[error(transparent)]
    GraphApp(Box<dyn std::error::Error + Send + Sync>),
    /// The entries give no phone.
    #[error("no devices")]
    NoDevices,
    /// A simulated phone with no app to install.
    #[error("no apps to install")]
    NoApps,
}

impl DeviceSpec {
    /// Reads one entry, or says what entries look like.
    pub fn parse(spec: &str) -> Result<DeviceSpec, SpecError> {
        let spec = spec.trim();
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let wrong = |problem: String| SpecError {
            spec: spec.to_string(),
            problem,
        };
        let needs = |what: &str| {
            if rest.is_empty() {
                Err(wrong(format!("{kind}: needs {what}")))
            } else {
                Ok(rest.to_string())
            }
        };
        Ok(match kind {
            "adb" => DeviceSpec::Adb(needs("a serial")?),
            "hdc" => DeviceSpec::Hdc(needs("a connect key")?),
            "sim" => DeviceSpec::Sim(needs("the simulator's address, e.g. sim:127.0.0.1:5555")?),
            "simulate" => {
                let rest = needs("a recording, a folder of recordings or APP@DATA")?;
                let (rest, update) =
                    match rest.rsplit_once("?update=") {
                        Some((rest, seed)) => (
                            rest.to_string(),
                            Some(seed.parse::<u64>().map_err(|_| {
                                wrong("?update= takes a seed, a whole number".into())
                            })?),
                        ),
                        None => (rest, None),
                    };
                let (source, count) = match rest.rsplit_once('*') {
                    Some((source, n)) => (
                        source,
                        n.parse::<usize>()
                            .ok()
                            .filter(|n| (1..=MAX_SIMULATED).contains(n))
                            .ok_or_else(|| {
                                wrong(format!("*N must be a count from 1 to {MAX_SIMULATED}"))
                            })?,
                    ),
                    None => (rest.as_str(), 1),
                };
                let source = match source.split_once('@') {
                    Some((app, data)) if !app.is_empty() && !data.is_empty() => SimSource::Graph {
                        app: app.to_string(),
                        data: PathBuf::from(data),
                    },
                    _ => SimSource::Folder(PathBuf::from(source)),
                };
                DeviceSpec::Simulate {
                    source,
                    count,
                    update,
                }
            }
            _ => {
                return Err(wrong(
                    "expected adb:SERIAL, hdc:KEY, sim:ADDR or simulate:SOURCE[*N][?update=SEED]"
                        .into(),
                ));
            }
        })
    }
}

/// A phone as a test runner uses it.
pub trait TestPhone: Send {
    /// Its name in reports: the serial, the address, `sim-1`.
    fn name(&self) -> String;
    /// The app started afresh for a test (on `start` where given).
    fn prepare(&mut self, app: &str, start: Option<&str>) -> Result<(), DeviceError>;
    /// Whether [`prepare`](TestPhone::prepare) would find `app` and `start` here, asked
    /// without moving the phone: the app installed, the start a screen or activity it has.
    fn check(&self, app: &str, start: Option<&str>) -> Result<(), DeviceError>;
    /// The device the agent drives (the prepared app's, on a simulated phone).
    fn device(&self) -> &dyn Device;
    /// The recorded screen shown, on a simulator.
    fn screen(&self) -> Option<String>;
    /// Whether the phone still answers.
    fn alive(&self) -> bool {
        self.device().current_app().is_ok()
    }
}

/// Reads an app of a data folder's graph as a phone plays it.
pub type GraphApp<'a> =
    &'a dyn Fn(&str, &Path) -> Result<RecordedApp, Box<dyn std::error::Error + Send + Sync>>;

/// The phones of `specs`. `graph_app` reads an app of a data folder's graph (`APP@DATA`);
/// `catalog` names apps for Launch.
pub fn open(
    specs: &[DeviceSpec],
    catalog: &AppCatalog,
    graph_app: GraphApp<'_>,
) -> Result<Vec<Box<dyn TestPhone>>, PhonesError> {
    let mut phones: Vec<Box<dyn TestPhone>> = Vec::new();
    let mut simulated = 0;
    for spec in specs {
        match spec {
            DeviceSpec::Adb(serial) => phones.push(Box::new(Remote::adb(serial, catalog, false))),
            DeviceSpec::Sim(addr) => {
                Adb::connect(addr)?;
                phones.push(Box::new(Remote::adb(addr, catalog, true)));
            }
            DeviceSpec::Hdc(key) => phones.push(Box::new(Remote {
                name: key.clone(),
                backend: Backend::Hdc(Hdc::new(Some(key.clone())).with_catalog(catalog.clone())),
                simulator: false,
                catalog: catalog.clone(),
            })),
            DeviceSpec::Simulate {
                source,
                count,
                update,
            } => {
                let mut apps = match source {
                    SimSource::Folder(dir) => recordings(dir)?,
                    SimSource::Graph { app, data } => vec![(
                        app.clone(),
                        graph_app(app, data).map_err(PhonesError::GraphApp)?,
                    )],
                };
                if let Some(seed) = update {
                    for (name, app) in &mut apps {
                        let (next, update) = atlas_device_sim::update::update(app, *seed, &[])
                            .map_err(|source| PhonesError::Update {
                                name: name.clone(),
                                source,
                            })?;
                        tracing::info!(
                            "{name} updated from {} to {} (seed {seed}): {}",
                            app.version.name,
                            update.version.name,
                            serde_json::to_string(&update.changes).unwrap_or_default()
                        );
                        *app = next;
                    }
                }
                for phone in simulated_from(&Arc::new(apps), *count, catalog, simulated)? {
                    simulated += 1;
                    phones.push(phone);
                }
            }
        }
    }
    if phones.is_empty() {
        return Err(PhonesError::NoDevices);
    }
    Ok(phones)
}

/// `count` phones simulated in this process, each with every app of `apps` installed.
pub fn simulated(
    apps: &Arc<Vec<(String, RecordedApp)>>,
    count: usize,
    catalog: &AppCatalog,
) -> Result<Vec<Box<dyn TestPhone>>, PhonesError> {
    simulated_from(apps, count, catalog, 0)
}

/// Phones `sim-(after+1)` to `sim-(after+count)`.
fn simulated_from(
    apps: &Arc<Vec<(String, RecordedApp)>>,
    count: usize,
    catalog: &AppCatalog,
    after: usize,
) -> Result<Vec<Box<dyn TestPhone>>, PhonesError> {
    if apps.is_empty() {
        return Err(PhonesError::NoApps);
    }
    (1..=count)
        .map(|k| {
            Simulated::new(format!("sim-{}", after + k), apps.clone(), catalog)
                .map(|p| Box::new(p) as Box<dyn TestPhone>)
        })
        .collect()
}

/// The recordings under `dir` (see [`recording_folders`]), each by its folder's name.
pub fn recordings(dir: &Path) -> Result<Vec<(String, RecordedApp)>, atlas_device_sim::SimError> {
    recording_folders(dir)?
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok((name, RecordedApp::read(p)?))
        })
        .collect()
}

/// The tool a phone is reached through.
enum Backend {
    Adb(Adb),
    Hdc(Hdc),
}

/// A phone reached through its tool (adb or hdc).
struct Remote {
    name: String,
    backend: Backend,
    /// An `atlas device sim` (answers `atlas-sim`).
    simulator: bool,
    catalog: AppCatalog,
}

impl Remote {
    fn adb(serial: &str, catalog: &AppCatalog, simulator: bool) -> Remote {
        Remote {
            name: serial.to_string(),
            backend: Backend::Adb(Adb::new(Some(serial.to_string())).with_catalog(catalog.clone())),
            simulator,
            catalog: catalog.clone(),
        }
    }

    fn shell(&self, command: &[&str]) -> Result<String, DeviceError> {
        match &self.backend {
            Backend::Adb(adb) => adb.shell(command),
            Backend::Hdc(hdc) => hdc.shell(command),
        }
    }

    fn harmony(&self) -> bool {
        matches!(self.backend, Backend::Hdc(_))
    }

    /// `app`'s package or bundle, as the catalog names it for this phone's system.
    fn package(&self, app: &str) -> Result<String, DeviceError> {
        let platform = if self.harmony() {
            atlas_device::Platform::HarmonyOs
        } else {
            atlas_device::Platform::Android
        };
        self.catalog.resolve(app, platform)
    }

    /// Whether Android's package manager has `package` (`pm path` fails for one it has not).
    fn installed(&self, package: &str) -> Result<(), DeviceError> {
        match self.shell(&["pm", "path", package]) {
            Ok(_) => Ok(()),
            Err(e @ DeviceError::Unavailable { .. }) => Err(e),
            Err(_) => Err(DeviceError::Invalid(format!(
                "{} has no package {package}",
                self.name
            ))),
        }
    }
}

impl TestPhone for Remote {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn prepare(&mut self, app: &str, start: Option<&str>) -> Result<(), DeviceError> {
        let harmony = self.harmony();
        match start {
            Some(screen) if self.simulator => self.shell(&["atlas-sim", "reset", screen]).map(drop),
            Some(ability) if harmony => {
                let (bundle, ability) = split_start(ability, "BUNDLE/ABILITY")?;
                self.shell(&["aa", "start", "-b", bundle, "-a", ability])
                    .map(drop)
            }
            Some(activity) => self.shell(&["am", "start", "-S", "-n", activity]).map(drop),
            None => {
                // A fresh start: the app stopped first, so no screen of an earlier test is left.
                let package = self.package(app)?;
                let stop = if harmony { "aa" } else { "am" };
                self.shell(&[stop, "force-stop", &package])?;
                self.device().launch(&package)
            }
        }
    }

    fn check(&self, app: &str, start: Option<&str>) -> Result<(), DeviceError> {
        match start {
            Some(screen) if self.simulator => {
                self.shell(&["atlas-sim", "has", screen])
                    .map_err(|e| match e {
                        DeviceError::Unavailable { .. } => e,
                        _ => DeviceError::Invalid(format!("{} has no screen {screen}", self.name)),
                    })?;
                Ok(())
            }
            Some(ability) if self.harmony() => split_start(ability, "BUNDLE/ABILITY").map(drop),
            Some(activity) => self.installed(split_start(activity, "PKG/ACTIVITY")?.0),
            // HarmonyOS's bundle manager is asked when the ability starts.
            None if self.harmony() => self.package(app).map(drop),
            None => self.installed(&self.package(app)?),
        }
    }

    fn device(&self) -> &dyn Device {
        match &self.backend {
            Backend::Adb(adb) => adb,
            Backend::Hdc(hdc) => hdc,
        }
    }

    fn screen(&self) -> Option<String> {
        self.simulator
            .then(|| self.shell(&["atlas-sim", "screen"]).ok())
            .flatten()
            .map(|s| s.trim().to_string())
    }
}

/// A test's `start` of the form `form` (`PKG/ACTIVITY`, `BUNDLE/ABILITY`): its two parts.
fn split_start<'a>(start: &'a str, form: &str) -> Result<(&'a str, &'a str), DeviceError> {
    start
        .split_once('/')
        .ok_or_else(|| DeviceError::Invalid(format!("start {start:?}: expected {form}")))
}

/// A phone simulated in this process, with every app of its source installed: a test runs on
/// the phone's copy of its app, started afresh.
struct Simulated {
    name: String,
    apps: Arc<Vec<(String, RecordedApp)>>,
    /// Each app's screen state, made when a test first uses the app (the first app's at once).
    running: HashMap<usize, (Arc<Mutex<Phone>>, Adb)>,
    /// The app in front: a key of `running`.
    current: usize,
    catalog: AppCatalog,
}

impl Simulated {
    fn new(
        name: String,
        apps: Arc<Vec<(String, RecordedApp)>>,
        catalog: &AppCatalog,
    ) -> Result<Simulated, PhonesError> {
        let mut catalog = catalog.clone();
        for (folder, app) in apps.iter() {
            catalog.add(folder, Some(app.package.clone()), None);
        }
        let mut phone = Simulated {
            name,
            apps,
            running: HashMap::new(),
            current: 0,
            catalog,
        };
        phone.start(0)?;
        Ok(phone)
    }

    /// Which of the phone's apps `app` names (its recording's folder or its package).
    fn app_index(&self, app: &str) -> Result<usize, DeviceError> {
        self.apps
            .iter()
            .position(|(folder, recorded)| folder == app || recorded.package == app)
            .ok_or_else(|| {
                let names: Vec<&str> = self.apps.iter().map(|(f, _)| f.as_str()).collect();
                DeviceError::Invalid(format!(
                    "{} has no app {app:?} (it has: {})",
                    self.name,
                    names.join(", ")
                ))
            })
    }

    /// App `index`'s phone, made on its first use.
    fn start(&mut self, index: usize) -> Result<&Mutex<Phone>, DeviceError> {
        if let std::collections::hash_map::Entry::Vacant(e) = self.running.entry(index) {
            let phone = Phone::new(self.apps[index].1.clone(), None)
                .map_err(|e| DeviceError::Backend(e.into()))?;
            let phone = Arc::new(Mutex::new(phone));
            let device = atlas_device_sim::device::in_process(phone.clone(), &self.name)
                .with_catalog(self.catalog.clone());
            e.insert((phone, device));
        }
        Ok(&self.running[&index].0)
    }
}

impl TestPhone for Simulated {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn prepare(&mut self, app: &str, start: Option<&str>) -> Result<(), DeviceError> {
        let index = self.app_index(app)?;
        self.start(index)?
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reset(start)
            .map_err(|e| DeviceError::Backend(e.into()))?;
        self.current = index;
        Ok(())
    }

    fn check(&self, app: &str, start: Option<&str>) -> Result<(), DeviceError> {
        let (folder, recorded) = &self.apps[self.app_index(app)?];
        match start {
            Some(screen) if !recorded.screens.contains_key(screen) => Err(DeviceError::Invalid(
                format!("{}'s {folder} has no screen {screen}", self.name),
            )),
            _ => Ok(()),
        }
    }

    fn device(&self) -> &dyn Device {
        &self.running[&self.current].1
    }

    fn screen(&self) -> Option<String> {
        let (phone, _) = self.running.get(&self.current)?;
        Some(
            phone
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .current()
                .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_entries_read_as_the_contract_writes_them() {
        assert_eq!(
            DeviceSpec::parse("adb:emulator-5554"),
            Ok(DeviceSpec::Adb("emulator-5554".into()))
        );
        assert_eq!(
            DeviceSpec::parse("sim:127.0.0.1:5555"),
            Ok(DeviceSpec::Sim("127.0.0.1:5555".into()))
        );
        assert_eq!(
            DeviceSpec::parse("simulate:data/user_tasks*4"),
            Ok(DeviceSpec::Simulate {
                source: SimSource::Folder("data/user_tasks".into()),
                count: 4,
                update: None,
            })
        );
        assert_eq!(
            DeviceSpec::parse("simulate:data/user_tasks*2?update=7"),
            Ok(DeviceSpec::Simulate {
                source: SimSource::Folder("data/user_tasks".into()),
                count: 2,
                update: Some(7),
            })
        );
        assert_eq!(
            DeviceSpec::parse("simulate:com.x@/tmp/data"),
            Ok(DeviceSpec::Simulate {
                source: SimSource::Graph {
                    app: "com.x".into(),
                    data: "/tmp/data".into()
                },
                count: 1,
                update: None,
            })
        );
        for bad in [
            "adb:",
            "usb:1",
            "simulate:x*0",
            "simulate:x*many",
            "simulate:x*65",
            "simulate:x?update=soon",
            "simulate:x?update=-1",
        ] {
            assert!(DeviceSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
