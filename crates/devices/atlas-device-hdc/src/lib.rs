//! A HarmonyOS phone reached through the `hdc` program.
//!
//! Acting is `hdc -t KEY shell uitest uiInput click|doubleClick|longClick X Y`, `swipe X1 Y1 X2
//! Y2 VELOCITY`, `inputText X Y TEXT` and `keyEvent Back|Home|CODE`; looking is `uitest
//! screenCap -p` and `uitest dumpLayout -p` on the phone, each fetched with `hdc file recv`, and
//! `aa dump -l` for the foreground app; `aa start -b BUNDLE -a ABILITY` launches.
//!
//! No `hdc` and no HarmonyOS phone exist where this was written: the command lines follow
//! OpenHarmony's arkxtest and aa documentation, and the parsers are tested on outputs written
//! from that documentation ([`parse_targets`], [`parse_foreground`]), not recorded from a device.
//!
//! Key design decision: as for adb, **everything read from hdc is parsed by pure functions**, so
//! a device's different wording is a test away from being handled.

use std::path::PathBuf;
use std::sync::Mutex;

use atlas_device::{AppCatalog, CurrentApp, Device, DeviceError, Key, Platform, Point, Screenshot};
use atlas_model::Widget;

const SHOT_PATH: &str = "/data/local/tmp/atlas-shot.png";
const LAYOUT_PATH: &str = "/data/local/tmp/atlas-layout.json";
/// The ability DevEco Studio's app template starts with, used when a launch names none.
pub const DEFAULT_ABILITY: &str = "EntryAbility";
/// A swipe's speed in pixels per second (uitest's default is 600).
const SWIPE_VELOCITY: u32 = 600;

/// A device as `hdc list targets -v` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The device's connect key, as hdc names it.
    pub key: String,
    /// `Connected`, `Offline`, `Unauthorized`…
    pub state: String,
}

/// The devices in `hdc list targets -v` output (`[Empty]` when there are none).
pub fn parse_targets(output: &str) -> Vec<Target> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("[Empty]"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let key = fields.first()?.to_string();
            // `KEY  USB|TCP  STATE  HOST  [hdc]`; without -v just the key.
            let state = fields.get(2).map_or("Connected", |s| *s).to_string();
            Some(Target { key, state })
        })
        .collect()
}

/// The foreground ability in `aa dump -l` output: the ability record whose state is
/// `FOREGROUND`, by its `bundle name [...]` and `main name [...]` (or `ability name [...]`).
pub fn parse_foreground(output: &str) -> Option<CurrentApp> {
    let bracketed = |line: &str, key: &str| -> Option<String> {
        let rest = line.trim().strip_prefix(key)?.trim();
        Some(
            rest.trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
        )
    };
    let mut bundle = None;
    let mut ability = None;
    for line in output.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("AbilityRecord ID") || trimmed.starts_with("Mission ID") {
            bundle = None;
            ability = None;
        }
        if let Some(b) = bracketed(trimmed, "bundle name") {
            bundle = Some(b);
        }
        if let Some(a) =
            bracketed(trimmed, "main name").or_else(|| bracketed(trimmed, "ability name"))
        {
            ability = Some(a);
        }
        if trimmed.starts_with("state #")
            && trimmed.contains("FOREGROUND")
            && let Some(package) = bundle.clone().filter(|b| !b.is_empty())
        {
            return Some(CurrentApp {
                package,
                activity: ability.clone().filter(|a| !a.is_empty()),
                name: None,
            });
        }
    }
    None
}

/// uitest's name for a key.
pub fn key_name(key: Key) -> &'static str {
    match key {
        Key::Back => "Back",
        Key::Home => "Home",
        // KeyCode.KEYCODE_ENTER and KEYCODE_DEL in @ohos.multimodalInput.keyCode.
        Key::Enter => "2054",
        Key::Delete => "2055",
    }
}

/// One phone by connect key (`hdc list targets`); the only one when `None`.
pub struct Hdc {
    program: PathBuf,
    key: Option<String>,
    /// Where the last tap landed: `inputText` types at a point, the field tapped before.
    last_tap: Mutex<Option<Point>>,
    catalog: AppCatalog,
}

impl Hdc {
    /// Through `hdc` on the PATH, or `ATLAS_HDC` when set.
    pub fn new(key: Option<String>) -> Hdc {
        Hdc::with_program(atlas_device::tool_program("ATLAS_HDC", "hdc"), key)
    }

    /// The phone `key` (or the only one) through the hdc at `program`.
    pub fn with_program(program: PathBuf, key: Option<String>) -> Hdc {
        Hdc {
            program,
            key,
            last_tap: Mutex::new(None),
            catalog: AppCatalog::builtin(),
        }
    }

    /// Launches apps by the names of `catalog` (the built-in one by default).
    pub fn with_catalog(mut self, catalog: AppCatalog) -> Hdc {
        self.catalog = catalog;
        self
    }

    /// Every device hdc knows, with its state.
    pub fn list(&self) -> Result<Vec<Target>, DeviceError> {
        let output = self.execute(vec!["list".into(), "targets".into(), "-v".into()])?;
        Ok(parse_targets(&String::from_utf8_lossy(&output)))
    }

    /// The arguments of one run: the connect key first, then the command.
    pub fn arguments(&self, args: &[&str]) -> Vec<String> {
        atlas_device::tool_arguments(("-t", self.key.as_deref()), args)
    }

    /// Runs a command on the device's shell; its standard output, or an error when hdc says it
    /// failed.
    pub fn shell(&self, command: &[&str]) -> Result<String, DeviceError> {
        let mut args = vec!["shell"];
        args.extend_from_slice(command);
        self.run(&args)
    }

    fn run(&self, args: &[&str]) -> Result<String, DeviceError> {
        let output = self.execute(self.arguments(args))?;
        Ok(String::from_utf8_lossy(&output).into_owned())
    }

    fn execute(&self, args: Vec<String>) -> Result<Vec<u8>, DeviceError> {
        let output = atlas_device::run_tool(&self.program, &args, &self.name())?;
        let command = atlas_device::command_line(&self.program, &args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        // hdc prints its own failures on stdout with an exit status of 0.
        let said = stdout.trim();
        if said.starts_with("[Fail]")
            || said.contains("Device not founded")
            || said.contains("device not found")
        {
            return Err(DeviceError::Unavailable {
                device: self.name(),
                reason: said.to_string(),
            });
        }
        if !output.status.success() {
            return Err(DeviceError::Command {
                device: self.name(),
                command,
                message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output.stdout)
    }

    /// Runs a uitest input command; uitest says `No Error` or names what failed.
    fn ui_input(&self, args: &[&str]) -> Result<(), DeviceError> {
        let mut all = vec!["shell", "uitest", "uiInput"];
        all.extend_from_slice(args);
        let said = self.run(&all)?;
        if said.to_ascii_lowercase().contains("error") && !said.contains("No Error") {
            return Err(DeviceError::Command {
                device: self.name(),
                command: format!("hdc shell uitest uiInput {}", args.join(" ")),
                message: said.trim().to_string(),
            });
        }
        Ok(())
    }

    /// Fetches a file the phone wrote.
    fn receive(&self, remote: &str) -> Result<Vec<u8>, DeviceError> {
        let local = std::env::temp_dir().join(format!(
            "atlas-hdc-{}-{}",
            std::process::id(),
            remote.rsplit('/').next().unwrap_or("file")
        ));
        let local_text = local.to_string_lossy().into_owned();
        self.run(&["file", "recv", remote, &local_text])?;
        let bytes = std::fs::read(&local).map_err(|e| DeviceError::Command {
            device: self.name(),
            command: format!("hdc file recv {remote}"),
            message: format!("nothing received: {e}"),
        });
        let _ = std::fs::remove_file(&local);
        bytes
    }
}

fn xy(at: Point) -> (String, String) {
    (at.x.to_string(), at.y.to_string())
}

impl Device for Hdc {
    fn name(&self) -> String {
        self.key.clone().unwrap_or_else(|| "hdc".into())
    }

    fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        self.run(&["shell", "uitest", "screenCap", "-p", SHOT_PATH])?;
        Screenshot::from_png(self.receive(SHOT_PATH)?).map_err(|e| DeviceError::Command {
            device: self.name(),
            command: format!("hdc shell uitest screenCap -p {SHOT_PATH}"),
            message: e.to_string(),
        })
    }

    fn current_app(&self) -> Result<CurrentApp, DeviceError> {
        let output = self.run(&["shell", "aa", "dump", "-l"])?;
        let mut app = parse_foreground(&output).ok_or_else(|| DeviceError::Command {
            device: self.name(),
            command: "hdc shell aa dump -l".into(),
            message: "no ability in the foreground".into(),
        })?;
        app.name = self.catalog.name_of(&app.package).map(String::from);
        Ok(app)
    }

    fn hierarchy(&self) -> Result<Vec<Widget>, DeviceError> {
        self.run(&["shell", "uitest", "dumpLayout", "-p", LAYOUT_PATH])?;
        let json = String::from_utf8_lossy(&self.receive(LAYOUT_PATH)?).into_owned();
        atlas_uitree::harmony_widgets(&json).map_err(|e| DeviceError::Command {
            device: self.name(),
            command: format!("hdc shell uitest dumpLayout -p {LAYOUT_PATH}"),
            message: e.to_string(),
        })
    }

    fn tap(&self, at: Point) -> Result<(), DeviceError> {
        let (x, y) = xy(at);
        self.ui_input(&["click", &x, &y])?;
        *self.last_tap.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
        Ok(())
    }

    fn double_tap(&self, at: Point) -> Result<(), DeviceError> {
        let (x, y) = xy(at);
        self.ui_input(&["doubleClick", &x, &y])
    }

    fn long_press(&self, at: Point, _millis: u32) -> Result<(), DeviceError> {
        let (x, y) = xy(at);
        self.ui_input(&["longClick", &x, &y])
    }

    fn swipe(&self, from: Point, to: Point, _millis: u32) -> Result<(), DeviceError> {
        let ((x1, y1), (x2, y2)) = (xy(from), xy(to));
        let velocity = SWIPE_VELOCITY.to_string();
        self.ui_input(&["swipe", &x1, &y1, &x2, &y2, &velocity])
    }

    fn key(&self, key: Key) -> Result<(), DeviceError> {
        self.ui_input(&["keyEvent", key_name(key)])
    }

    fn launch(&self, app: &str) -> Result<(), DeviceError> {
        let package = &self.catalog.resolve(app, Platform::HarmonyOs)?;
        let said = self.run(&["shell", "aa", "start", "-b", package, "-a", DEFAULT_ABILITY])?;
        if !said.contains("successfully") {
            return Err(DeviceError::Invalid(format!(
                "{} could not start {package}: {}",
                self.name(),
                said.trim()
            )));
        }
        Ok(())
    }

    fn type_text(&self, text: &str) -> Result<(), DeviceError> {
        let at = self
            .last_tap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ok_or_else(|| {
                DeviceError::Invalid(format!(
                    "{}: tap the field first (uitest types at a point)",
                    self.name()
                ))
            })?;
        let (x, y) = xy(at);
        self.ui_input(&["inputText", &x, &y, text])
    }

    fn clear_text(&self) -> Result<(), DeviceError> {
        // Select all (Ctrl+A: KEYCODE_CTRL_LEFT 2072 with KEYCODE_A 2017), then delete.
        self.ui_input(&["keyEvent", "2072", "2017"])?;
        self.ui_input(&["keyEvent", key_name(Key::Delete)])
    }

    fn app_version(&self, bundle: &str) -> Result<Option<String>, DeviceError> {
        let output = self.run(&["shell", "bm", "dump", "-n", bundle])?;
        Ok(version_name(&output))
    }
}

/// The first `"versionName"` of `bm dump -n`'s JSON (the bundle's own, before its modules').
fn version_name(dump: &str) -> Option<String> {
    let after = &dump[dump.find("\"versionName\"")? + "\"versionName\"".len()..];
    let value = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let end = value.find('"')?;
    Some(value[..end].to_string()).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_bm_dump() {
        let out = "com.example.app:\n{\n    \"applicationInfo\": {\n        \"versionCode\": 1000000,\n        \"versionName\": \"1.0.0\"\n    }\n}\n";
        assert_eq!(version_name(out).as_deref(), Some("1.0.0"));
        assert_eq!(version_name("error: failed to get information\n"), None);
    }

    #[test]
    fn targets_are_listed_with_their_state() {
        // `hdc list targets -v`, as OpenHarmony's hdc guide shows it.
        let output = "7001005458323933328a01fce1e46f00\tUSB\tConnected\tlocalhost\thdc\n192.168.0.100:8710\tTCP\tOffline\tlocalhost\thdc\n";
        assert_eq!(
            parse_targets(output),
            vec![
                Target {
                    key: "7001005458323933328a01fce1e46f00".into(),
                    state: "Connected".into()
                },
                Target {
                    key: "192.168.0.100:8710".into(),
                    state: "Offline".into()
                },
            ]
        );
        assert!(parse_targets("[Empty]\n").is_empty());
        assert_eq!(parse_targets("FMR0223C13000649\n")[0].state, "Connected");
    }

    #[test]
    fn the_foreground_ability_is_found_among_missions() {
        // `aa dump -l` (the mission list), in the shape of the aa tool's documentation.
        let output = "User ID #100\n  current mission lists:{\n    Mission ID #139  mission name #[#com.ohos.settings:entry:com.ohos.settings.MainAbility]  lockedState #0\n      AbilityRecord ID #49\n        app name [com.ohos.settings]\n        main name [com.ohos.settings.MainAbility]\n        bundle name [com.ohos.settings]\n        ability type [PAGE]\n        state #BACKGROUND\n    Mission ID #141  mission name #[#com.example.meituan:entry:EntryAbility]  lockedState #0\n      AbilityRecord ID #52\n        app name [com.example.meituan]\n        main name [EntryAbility]\n        bundle name [com.example.meituan]\n        ability type [PAGE]\n        state #FOREGROUND\n";
        assert_eq!(
            parse_foreground(output),
            Some(CurrentApp {
                package: "com.example.meituan".into(),
                activity: Some("EntryAbility".into()),
                name: None,
            })
        );
        assert_eq!(parse_foreground("User ID #100\n"), None);
    }

    #[test]
    fn commands_name_the_device_and_a_missing_hdc_is_an_error_saying_so() {
        let hdc = Hdc::with_program("/nonexistent/hdc".into(), Some("FMR0223C13000649".into()));
        assert_eq!(
            hdc.arguments(&["shell", "uitest", "uiInput", "click", "10", "20"]),
            [
                "-t",
                "FMR0223C13000649",
                "shell",
                "uitest",
                "uiInput",
                "click",
                "10",
                "20"
            ]
        );
        let error = hdc.key(Key::Back).unwrap_err().to_string();
        assert!(
            error.contains("FMR0223C13000649") && error.contains("keyEvent Back"),
            "{error}"
        );
        let error = hdc.type_text("你好").unwrap_err().to_string();
        assert!(error.contains("tap the field first"), "{error}");
    }
}
