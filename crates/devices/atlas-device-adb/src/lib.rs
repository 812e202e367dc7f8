//! An Android phone reached through the `adb` program.
//!
//! Each [`Device`] call is one or a few `adb -s SERIAL …` runs: `exec-out screencap -p` for the
//! screenshot, `shell uiautomator dump` for the hierarchy, `shell dumpsys window` for the
//! foreground app, `shell input tap|swipe|keyevent` to act, `shell monkey -p PKG -c
//! android.intent.category.LAUNCHER 1` to launch. `input text` cannot type Chinese, so text goes
//! through ADB Keyboard's broadcasts (`ADB_INPUT_B64`, base64 so any text survives the shell,
//! and `ADB_CLEAR_TEXT`), with the input method switched to it for the call and the previous
//! one restored after.
//!
//! Key design decision: **the parsing of what adb and the phone print is in pure functions**
//! ([`parse_devices`], [`parse_focused_app`], [`parse_screen_size`]), so each is tested on
//! recorded outputs, and the backend on a device or the simulator only has to run commands.

use std::path::PathBuf;
use std::sync::OnceLock;

use atlas_device::{AppCatalog, CurrentApp, Device, DeviceError, Key, Platform, Point, Screenshot};
use atlas_model::Widget;
use base64::Engine;

/// ADB Keyboard's input method, which takes text by broadcast.
pub const ADB_KEYBOARD: &str = "com.android.adbkeyboard/.AdbIME";
/// Where the hierarchy is dumped on the phone before it is read back.
const DUMP_PATH: &str = "/sdcard/atlas-ui.xml";

/// One Android phone, driven by adb commands through a [`Transport`].
pub struct Adb {
    transport: Box<dyn Transport>,
    screen: OnceLock<(u32, u32)>,
    catalog: AppCatalog,
}

/// How adb commands reach a phone: the `adb` program ([`Program`]), or anything that answers
/// them as a phone does — the simulator in the same process — so one backend serves both.
pub trait Transport: Send + Sync {
    /// The phone's name in messages (its serial).
    fn name(&self) -> String;
    /// Runs one adb command on the phone (`shell …`, `exec-out …`); its standard output.
    fn run(&self, args: &[&str]) -> Result<Vec<u8>, DeviceError>;
}

/// The `adb` program, for one phone by serial (`adb devices` lists them); the only one
/// connected when `None`.
pub struct Program {
    program: PathBuf,
    serial: Option<String>,
}

/// A device as `adb devices -l` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The device's serial, as adb names it.
    pub serial: String,
    /// `device` when ready; `offline`, `unauthorized`, `no permissions`…
    pub state: String,
    /// The device's model, when adb says it.
    pub model: Option<String>,
}

/// The devices in `adb devices -l` output.
pub fn parse_devices(output: &str) -> Vec<Listed> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("List of devices") && !l.starts_with('*'))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let serial = fields.next()?.to_string();
            let rest: Vec<&str> = fields.collect();
            // The state is every word before the first `key:value` (`no permissions (...)`).
            let state: Vec<&str> = rest
                .iter()
                .take_while(|w| !w.contains(':'))
                .copied()
                .collect();
            let model = rest
                .iter()
                .find_map(|w| w.strip_prefix("model:"))
                .map(String::from);
            Some(Listed {
                serial,
                state: state.join(" "),
                model,
            })
        })
        .collect()
}

/// The foreground app in `dumpsys window` output: the focused window
/// (`mCurrentFocus=Window{… u0 com.example/com.example.MainActivity}`), else the focused app
/// (`mFocusedApp=ActivityRecord{… u0 com.example/.MainActivity t12}`).
pub fn parse_focused_app(dumpsys: &str) -> Option<CurrentApp> {
    let component = |line: &str| -> Option<CurrentApp> {
        line.split(|c: char| c.is_whitespace() || c == '}' || c == '{')
            .find(|word| word.contains('/') && !word.starts_with('/'))
            .map(|word| {
                let (package, activity) = word.split_once('/').unwrap_or((word, ""));
                CurrentApp {
                    package: package.to_string(),
                    activity: (!activity.is_empty()).then(|| activity.to_string()),
                    name: None,
                }
            })
    };
    let find = |key: &str| {
        dumpsys
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with(key))
            .find_map(component)
    };
    find("mCurrentFocus=").or_else(|| find("mFocusedApp="))
}

/// The screen size in `wm size` output; an override (`Override size: 720x1600`) wins over the
/// physical size, since input and screenshots use it.
pub fn parse_screen_size(output: &str) -> Option<(u32, u32)> {
    let size_of = |prefix: &str| {
        output.lines().find_map(|line| {
            let (w, h) = line.trim().strip_prefix(prefix)?.trim().split_once('x')?;
            Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
        })
    };
    size_of("Override size:").or_else(|| size_of("Physical size:"))
}

/// The `input keyevent` code of a key.
pub fn keycode(key: Key) -> &'static str {
    match key {
        Key::Back => "KEYCODE_BACK",
        Key::Home => "KEYCODE_HOME",
        Key::Enter => "KEYCODE_ENTER",
        Key::Delete => "KEYCODE_DEL",
    }
}

/// The broadcast that types `text` through ADB Keyboard.
pub fn type_broadcast(text: &str) -> Vec<String> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    [
        "shell",
        "am",
        "broadcast",
        "-a",
        "ADB_INPUT_B64",
        "--es",
        "msg",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([encoded])
    .collect()
}

impl Program {
    /// The arguments of one run: the serial first, then the command.
    pub fn arguments(&self, args: &[&str]) -> Vec<String> {
        atlas_device::tool_arguments(("-s", self.serial.as_deref()), args)
    }

    /// Every device adb knows, with its state.
    pub fn list(&self) -> Result<Vec<Listed>, DeviceError> {
        let output = self.execute(vec!["devices".into(), "-l".into()])?;
        Ok(parse_devices(&String::from_utf8_lossy(&output)))
    }

    fn execute(&self, args: Vec<String>) -> Result<Vec<u8>, DeviceError> {
        let output = atlas_device::run_tool(&self.program, &args, &self.name())?;
        let command = atlas_device::command_line(&self.program, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            let message = stderr.trim().to_string();
            // adb's own words for a phone that is not there or not ready.
            if [
                "not found",
                "offline",
                "unauthorized",
                "no devices",
                "more than one device",
            ]
            .iter()
            .any(|m| message.contains(m))
            {
                return Err(DeviceError::Unavailable {
                    device: self.name(),
                    reason: message,
                });
            }
            return Err(DeviceError::Command {
                device: self.name(),
                command,
                message: if message.is_empty() {
                    format!("exit status {}", output.status)
                } else {
                    message
                },
            });
        }
        Ok(output.stdout)
    }
}

impl Transport for Program {
    fn name(&self) -> String {
        self.serial.clone().unwrap_or_else(|| "adb".into())
    }

    fn run(&self, args: &[&str]) -> Result<Vec<u8>, DeviceError> {
        self.execute(self.arguments(args))
    }
}

impl Adb {
    /// The phone `serial` (or the only one) through `adb` on the PATH, or `ATLAS_ADB` when set.
    pub fn new(serial: Option<String>) -> Adb {
        Adb::with_program(atlas_device::tool_program("ATLAS_ADB", "adb"), serial)
    }

    /// The phone `serial` (or the only one) through the adb at `program`.
    pub fn with_program(program: PathBuf, serial: Option<String>) -> Adb {
        Adb::with_transport(Box::new(Program { program, serial }))
    }

    /// The phone that `transport` reaches.
    pub fn with_transport(transport: Box<dyn Transport>) -> Adb {
        Adb {
            transport,
            screen: OnceLock::new(),
            catalog: AppCatalog::builtin(),
        }
    }

    /// Launches apps by the names of `catalog` (the built-in one by default).
    pub fn with_catalog(mut self, catalog: AppCatalog) -> Adb {
        self.catalog = catalog;
        self
    }

    /// Every device the adb program knows, with its state.
    pub fn list() -> Result<Vec<Listed>, DeviceError> {
        Program {
            program: atlas_device::tool_program("ATLAS_ADB", "adb"),
            serial: None,
        }
        .list()
    }

    /// `adb connect ADDRESS`: a device on TCP (an `atlas device sim`) added to adb's list; an
    /// error with adb's words when it did not connect.
    pub fn connect(address: &str) -> Result<(), DeviceError> {
        let program = Program {
            program: atlas_device::tool_program("ATLAS_ADB", "adb"),
            serial: None,
        };
        let said = program.execute(vec!["connect".into(), address.into()])?;
        let said = String::from_utf8_lossy(&said);
        if said.contains("connected") {
            Ok(())
        } else {
            Err(DeviceError::Unavailable {
                device: address.to_string(),
                reason: format!("adb could not connect: {}", said.trim()),
            })
        }
    }

    /// Runs a command on the phone's shell; its standard output, or an error when it exits
    /// with a failure (adb carries the status over `shell_v2`).
    pub fn shell(&self, command: &[&str]) -> Result<String, DeviceError> {
        let mut args = vec!["shell"];
        args.extend_from_slice(command);
        self.run_text(&args)
    }

    fn run(&self, args: &[&str]) -> Result<Vec<u8>, DeviceError> {
        self.transport.run(args)
    }

    fn run_text(&self, args: &[&str]) -> Result<String, DeviceError> {
        Ok(String::from_utf8_lossy(&self.run(args)?).into_owned())
    }

    fn screen_size(&self) -> Result<(u32, u32), DeviceError> {
        if let Some(size) = self.screen.get() {
            return Ok(*size);
        }
        let output = self.run_text(&["shell", "wm", "size"])?;
        let size = parse_screen_size(&output).ok_or_else(|| DeviceError::Command {
            device: self.name(),
            command: "adb shell wm size".into(),
            message: format!("no screen size in {:?}", output.trim()),
        })?;
        Ok(*self.screen.get_or_init(|| size))
    }

    fn on_screen(&self, at: Point) -> Result<(String, String), DeviceError> {
        let (width, height) = self.screen_size()?;
        if at.x >= width || at.y >= height {
            return Err(DeviceError::Invalid(format!(
                "({}, {}) is off the {width}×{height} screen of {}",
                at.x,
                at.y,
                self.name()
            )));
        }
        Ok((at.x.to_string(), at.y.to_string()))
    }

    /// Runs `f` with ADB Keyboard as the input method, restoring the previous one after.
    fn with_adb_keyboard(
        &self,
        f: impl FnOnce() -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        let previous = self
            .run_text(&["shell", "settings", "get", "secure", "default_input_method"])?
            .trim()
            .to_string();
        let switch = previous != ADB_KEYBOARD;
        if switch {
            self.run(&["shell", "ime", "set", ADB_KEYBOARD])?;
        }
        let result = f();
        if switch && !previous.is_empty() && previous != "null" {
            self.run(&["shell", "ime", "set", &previous])?;
        }
        result
    }
}

impl Device for Adb {
    fn name(&self) -> String {
        self.transport.name()
    }

    fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        Screenshot::from_png(self.run(&["exec-out", "screencap", "-p"])?).map_err(|e| {
            DeviceError::Command {
                device: self.name(),
                command: "adb exec-out screencap -p".into(),
                message: e.to_string(),
            }
        })
    }

    fn current_app(&self) -> Result<CurrentApp, DeviceError> {
        let output = self.run_text(&["shell", "dumpsys", "window"])?;
        let mut app = parse_focused_app(&output).ok_or_else(|| DeviceError::Command {
            device: self.name(),
            command: "adb shell dumpsys window".into(),
            message: "no focused window or app in the output".into(),
        })?;
        app.name = self.catalog.name_of(&app.package).map(String::from);
        Ok(app)
    }

    fn hierarchy(&self) -> Result<Vec<Widget>, DeviceError> {
        self.run(&["shell", "uiautomator", "dump", DUMP_PATH])?;
        let xml = self.run_text(&["exec-out", "cat", DUMP_PATH])?;
        atlas_uitree::uiautomator_widgets(&xml).map_err(|e| DeviceError::Command {
            device: self.name(),
            command: format!("adb shell uiautomator dump {DUMP_PATH}"),
            message: e.to_string(),
        })
    }

    fn tap(&self, at: Point) -> Result<(), DeviceError> {
        let (x, y) = self.on_screen(at)?;
        self.run(&["shell", "input", "tap", &x, &y]).map(drop)
    }

    fn double_tap(&self, at: Point) -> Result<(), DeviceError> {
        self.tap(at)?;
        self.wait(80);
        self.tap(at)
    }

    fn long_press(&self, at: Point, millis: u32) -> Result<(), DeviceError> {
        let (x, y) = self.on_screen(at)?;
        let millis = millis.to_string();
        self.run(&["shell", "input", "swipe", &x, &y, &x, &y, &millis])
            .map(drop)
    }

    fn swipe(&self, from: Point, to: Point, millis: u32) -> Result<(), DeviceError> {
        let (x1, y1) = self.on_screen(from)?;
        let (x2, y2) = self.on_screen(to)?;
        let millis = millis.to_string();
        self.run(&["shell", "input", "swipe", &x1, &y1, &x2, &y2, &millis])
            .map(drop)
    }

    fn key(&self, key: Key) -> Result<(), DeviceError> {
        self.run(&["shell", "input", "keyevent", keycode(key)])
            .map(drop)
    }

    fn launch(&self, app: &str) -> Result<(), DeviceError> {
        let package = &self.catalog.resolve(app, Platform::Android)?;
        // Over the shell protocol (`shell_v2`) monkey's "aborted" is an exit status of its own
        // and words on stderr; over the plain shell, words on stdout.
        let output = match self.run_text(&[
            "shell",
            "monkey",
            "-p",
            package,
            "-c",
            "android.intent.category.LAUNCHER",
            "1",
        ]) {
            Ok(output) => output,
            Err(DeviceError::Command { message, .. }) if message.contains("monkey aborted") => {
                message
            }
            Err(e) => return Err(e),
        };
        if output.contains("No activities found") || output.contains("monkey aborted") {
            return Err(DeviceError::Invalid(format!(
                "{} has no app {package} to launch",
                self.name()
            )));
        }
        Ok(())
    }

    fn type_text(&self, text: &str) -> Result<(), DeviceError> {
        let args = type_broadcast(text);
        self.with_adb_keyboard(|| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.run(&args).map(drop)
        })
    }

    fn clear_text(&self) -> Result<(), DeviceError> {
        self.with_adb_keyboard(|| {
            self.run(&["shell", "am", "broadcast", "-a", "ADB_CLEAR_TEXT"])
                .map(drop)
        })
    }

    fn app_version(&self, package: &str) -> Result<Option<String>, DeviceError> {
        let output = self.run_text(&["shell", "dumpsys", "package", package])?;
        Ok(version_name(&output))
    }
}

/// The first `versionName=` of `dumpsys package`'s output (the installed package's).
fn version_name(dumpsys: &str) -> Option<String> {
    dumpsys
        .lines()
        .find_map(|line| line.trim().strip_prefix("versionName="))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_dumpsys_package() {
        let out = "Packages:\n  Package [com.a] (1f):\n    versionCode=42 minSdk=21 targetSdk=34\n    versionName=2.3.1\n    splits=[base]\n";
        assert_eq!(version_name(out).as_deref(), Some("2.3.1"));
        assert_eq!(version_name("Activity Resolver Table:\n"), None);
        assert_eq!(version_name("    versionName=\n"), None);
    }

    #[test]
    fn devices_are_listed_with_their_state_and_model() {
        let output = "List of devices attached\n\
            emulator-5554          device product:sdk_gphone64 model:sdk_gphone64_x86_64 device:emu64x transport_id:1\n\
            127.0.0.1:5555         offline transport_id:2\n\
            R58M123ABC             unauthorized usb:1-1 transport_id:3\n\
            0123456789             no permissions (missing udev rules?); see [http://developer.android.com/tools/device.html] usb:1-2\n\n";
        let listed = parse_devices(output);
        assert_eq!(listed.len(), 4);
        assert_eq!(
            listed[0],
            Listed {
                serial: "emulator-5554".into(),
                state: "device".into(),
                model: Some("sdk_gphone64_x86_64".into())
            }
        );
        assert_eq!(
            (listed[1].state.as_str(), &listed[1].model),
            ("offline", &None)
        );
        assert_eq!(listed[2].state, "unauthorized");
        assert!(
            listed[3].state.starts_with("no permissions"),
            "{:?}",
            listed[3]
        );
        assert!(parse_devices("List of devices attached\n\n").is_empty());
    }

    #[test]
    fn the_focused_window_names_the_foreground_app() {
        let dumpsys = "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  \
            mCurrentFocus=Window{3f2a1b u0 com.sankuai.meituan/com.meituan.android.pt.homepage.activity.MainActivity}\n  \
            mFocusedApp=ActivityRecord{9c1d u0 com.sankuai.meituan/com.meituan.android.pt.homepage.activity.MainActivity t52}\n";
        assert_eq!(
            parse_focused_app(dumpsys),
            Some(CurrentApp {
                package: "com.sankuai.meituan".into(),
                activity: Some("com.meituan.android.pt.homepage.activity.MainActivity".into()),
                name: None,
            })
        );
        // A popup without an activity: the focused app still says.
        let popup = "  mCurrentFocus=Window{1 u0 StatusBar}\n  mFocusedApp=ActivityRecord{2 u0 com.android.settings/.Settings t3}\n";
        assert_eq!(
            parse_focused_app(popup).map(|a| a.package),
            Some("com.android.settings".into())
        );
        assert_eq!(parse_focused_app("mCurrentFocus=null\n"), None);
    }

    #[test]
    fn an_override_size_wins_over_the_physical_one() {
        assert_eq!(
            parse_screen_size("Physical size: 1080x2400\n"),
            Some((1080, 2400))
        );
        assert_eq!(
            parse_screen_size("Physical size: 1440x3200\nOverride size: 1080x2400\n"),
            Some((1080, 2400))
        );
        assert_eq!(parse_screen_size("error: closed"), None);
    }

    #[test]
    fn chinese_text_is_broadcast_in_base64() {
        let args = type_broadcast("你好 world");
        assert_eq!(
            args[..7],
            [
                "shell",
                "am",
                "broadcast",
                "-a",
                "ADB_INPUT_B64",
                "--es",
                "msg"
            ]
        );
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&args[7])
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "你好 world");
    }

    #[test]
    fn a_missing_adb_is_an_error_naming_the_device_and_the_command() {
        let program = Program {
            program: "/nonexistent/adb".into(),
            serial: Some("R58M123ABC".into()),
        };
        assert_eq!(
            program.arguments(&["shell", "input", "tap", "1", "2"])[..2],
            ["-s", "R58M123ABC"]
        );
        let adb = Adb::with_transport(Box::new(program));
        let error = adb.key(Key::Back).unwrap_err().to_string();
        assert!(
            error.contains("R58M123ABC") && error.contains("keyevent KEYCODE_BACK"),
            "{error}"
        );
    }
}
