//! What an agent does to a phone, apart from how it reaches it.
//!
//! Seed 002's agent looks at a screen (a screenshot, the foreground app, the UI hierarchy) and
//! acts on it (tap, swipe, keys, text, launching an app). [`Device`] is that vocabulary, in screen
//! pixels. Its implementations live in crates of their own — `atlas-device-adb` for Android,
//! `atlas-device-hdc` for HarmonyOS, and the simulator that replays recorded apps — as the store
//! trait lives apart from the folder store: an agent and its tests are written once against the
//! trait, and a new way to reach a phone changes nothing above it.
//!
//! Key design decision: **the trait is synchronous.** Every implementation runs a command-line
//! tool or a socket round trip per call and waits for it; an async caller moves the call to its
//! blocking pool. A synchronous trait keeps implementations free of a runtime and usable from a
//! plain test.

mod apps;

pub use apps::{AppCatalog, Platform};
pub use atlas_model::Point;
use atlas_model::Widget;

/// A screenshot: PNG bytes and the screen's size in pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// The PNG's bytes.
    pub png: Vec<u8>,
    /// The screen's width in pixels.
    pub width: u32,
    /// The screen's height in pixels.
    pub height: u32,
}

impl Screenshot {
    /// A screenshot from PNG bytes, its size read from the PNG header.
    pub fn from_png(png: Vec<u8>) -> Result<Screenshot, DeviceError> {
        let (width, height) = png_size(&png).ok_or_else(|| {
            DeviceError::Invalid(format!(
                "not a PNG image ({} bytes, starting {:02x?})",
                png.len(),
                &png[..png.len().min(8)]
            ))
        })?;
        Ok(Screenshot { png, width, height })
    }
}

/// The width and height in a PNG's IHDR chunk, which the format puts first.
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || &png[..8] != SIGNATURE || &png[12..16] != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes(png[16..20].try_into().ok()?);
    let height = u32::from_be_bytes(png[20..24].try_into().ok()?);
    (width > 0 && height > 0).then_some((width, height))
}

/// The app in the foreground.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentApp {
    /// Android package or HarmonyOS bundle name.
    pub package: String,
    /// The activity or ability shown, when the device says.
    pub activity: Option<String>,
    /// The app's name, when the device's [`AppCatalog`] lists its package.
    pub name: Option<String>,
}

/// The keys an agent presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Back.
    Back,
    /// Home.
    Home,
    /// Enter: sends what was typed.
    Enter,
    /// Delete: removes the character before the cursor.
    Delete,
}

/// How a device call failed. Every error names the device and, for a command, the command.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The device is not connected, or not ready (`unauthorized`, `offline`).
    #[error("device {device} is not available: {reason}")]
    Unavailable {
        /// The device's name.
        device: String,
        /// What it said.
        reason: String,
    },
    /// A command the device was sent failed or answered what cannot be read.
    #[error("device {device}: `{command}` failed: {message}")]
    Command {
        /// The device's name.
        device: String,
        /// The command, as sent.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// The call asks for something impossible (a point off the screen, an unknown app).
    #[error("{0}")]
    Invalid(String),
    /// What plays the device (a simulated phone) refused, for the reason its error gives.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
    /// An app catalog file that cannot be read, or has a line that is not one.
    #[error("the app catalog {path}: {source}")]
    Catalog {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The command line of a device tool (`adb`, `hdc`) for one device: its selector flag and
/// value first (`-s SERIAL`, `-t KEY`) when one is given, then the command.
pub fn tool_arguments(selector: (&str, Option<&str>), args: &[&str]) -> Vec<String> {
    let (flag, value) = selector;
    let mut all = Vec::new();
    if let Some(value) = value {
        all.push(flag.to_string());
        all.push(value.to_string());
    }
    all.extend(args.iter().map(|a| a.to_string()));
    all
}

/// The device tool to run: the program the environment variable `variable` names, else
/// `default` on the PATH.
pub fn tool_program(variable: &str, default: &str) -> std::path::PathBuf {
    std::env::var_os(variable)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(default))
}

/// Runs a device tool; a tool that cannot be started is an error naming the device and the
/// command. What its output means is the backend's to say.
pub fn run_tool(
    program: &std::path::Path,
    args: &[String],
    device: &str,
) -> Result<std::process::Output, DeviceError> {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map_err(|e| DeviceError::Command {
            device: device.to_string(),
            command: command_line(program, args),
            message: format!("cannot run {}: {e}", program.display()),
        })
}

/// How a run is named in messages: the tool's file name and its arguments.
pub fn command_line(program: &std::path::Path, args: &[String]) -> String {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name} {}", args.join(" "))
}

/// A phone an agent drives. Coordinates are pixels of the screen as [`Device::screenshot`] sees
/// it; a point outside it is [`DeviceError::Invalid`].
pub trait Device: Send + Sync {
    /// A name for messages: the serial, the connect key, the simulator's address.
    fn name(&self) -> String;
    /// The screen as a PNG, with its size.
    fn screenshot(&self) -> Result<Screenshot, DeviceError>;
    /// The app in front.
    fn current_app(&self) -> Result<CurrentApp, DeviceError>;
    /// The screen's widgets, read by the uiautomator or dumpLayout reader Atlas learns from.
    fn hierarchy(&self) -> Result<Vec<Widget>, DeviceError>;
    /// Taps a point.
    fn tap(&self, at: Point) -> Result<(), DeviceError>;
    /// Taps a point twice.
    fn double_tap(&self, at: Point) -> Result<(), DeviceError>;
    /// Presses a point for `millis`.
    fn long_press(&self, at: Point, millis: u32) -> Result<(), DeviceError>;
    /// Swipes from one point to another in `millis`.
    fn swipe(&self, from: Point, to: Point, millis: u32) -> Result<(), DeviceError>;
    /// Presses a key.
    fn key(&self, key: Key) -> Result<(), DeviceError>;
    /// Starts an app by package (bundle) name, or by a name the device's [`AppCatalog`] knows.
    fn launch(&self, app: &str) -> Result<(), DeviceError>;
    /// Types into the focused field; any text, Chinese included.
    fn type_text(&self, text: &str) -> Result<(), DeviceError>;
    /// Empties the focused field.
    fn clear_text(&self) -> Result<(), DeviceError>;
    /// The installed version (`versionName`) of an app, by package (bundle) name, when the
    /// device says; `None` where it does not (the app is not installed, or the device cannot
    /// tell). The graph keeps its trust per version, and notices an update by it.
    fn app_version(&self, package: &str) -> Result<Option<String>, DeviceError> {
        let _ = package;
        Ok(None)
    }
    /// Lets the screen settle.
    fn wait(&self, millis: u32) {
        std::thread::sleep(std::time::Duration::from_millis(u64::from(millis)));
    }
}

/// A device that tells `on_screenshot` of every screenshot taken through it (an agent takes one
/// as each step begins), for runners and evaluations that follow a run step by step; everything
/// else goes to `inner` unchanged, waits too unless `skip_waits` (a simulated phone never needs
/// them).
pub struct Watched<'a> {
    /// The device driven.
    pub inner: &'a dyn Device,
    /// Called with each screenshot, before the agent sees it.
    pub on_screenshot: Box<dyn Fn(&Screenshot) + Send + Sync + 'a>,
    /// Waits return at once.
    pub skip_waits: bool,
}

impl Device for Watched<'_> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        let shot = self.inner.screenshot()?;
        (self.on_screenshot)(&shot);
        Ok(shot)
    }
    fn current_app(&self) -> Result<CurrentApp, DeviceError> {
        self.inner.current_app()
    }
    fn hierarchy(&self) -> Result<Vec<Widget>, DeviceError> {
        self.inner.hierarchy()
    }
    fn tap(&self, at: Point) -> Result<(), DeviceError> {
        self.inner.tap(at)
    }
    fn double_tap(&self, at: Point) -> Result<(), DeviceError> {
        self.inner.double_tap(at)
    }
    fn long_press(&self, at: Point, millis: u32) -> Result<(), DeviceError> {
        self.inner.long_press(at, millis)
    }
    fn swipe(&self, from: Point, to: Point, millis: u32) -> Result<(), DeviceError> {
        self.inner.swipe(from, to, millis)
    }
    fn key(&self, key: Key) -> Result<(), DeviceError> {
        self.inner.key(key)
    }
    fn launch(&self, app: &str) -> Result<(), DeviceError> {
        self.inner.launch(app)
    }
    fn type_text(&self, text: &str) -> Result<(), DeviceError> {
        self.inner.type_text(text)
    }
    fn clear_text(&self) -> Result<(), DeviceError> {
        self.inner.clear_text()
    }
    fn app_version(&self, package: &str) -> Result<Option<String>, DeviceError> {
        self.inner.app_version(package)
    }
    fn wait(&self, millis: u32) {
        if !self.skip_waits {
            self.inner.wait(millis)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_png_header_gives_the_size_and_anything_else_is_refused() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend(1080u32.to_be_bytes());
        png.extend(2400u32.to_be_bytes());
        let shot = Screenshot::from_png(png).unwrap();
        assert_eq!((shot.width, shot.height), (1080, 2400));
        let error = Screenshot::from_png(b"error: closed".to_vec()).unwrap_err();
        assert!(error.to_string().contains("not a PNG"), "{error}");
    }
}
