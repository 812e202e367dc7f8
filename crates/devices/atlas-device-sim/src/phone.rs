//! The simulated phone: a current screen of a recorded app, and the shell commands an agent's
//! adb sends, answered as Android answers them, exit status included (`wm size|density`,
//! `dumpsys window|display|activity|package`, `uiautomator dump [FILE|/dev/tty]`, `screencap [-p]
//! [FILE]`, `input [SOURCE] tap|swipe|keyevent|text`, `monkey`, `am start|force-stop|broadcast`
//! (ADB Keyboard), `pm list packages`, `settings get|put`, `ime`, `logcat`, and `cat`, `ls`,
//! `mkdir`, `rm`, `echo`, `true`, `false`, `exit`, `getprop` around them; 127 for the rest).
//! The simulator's own commands, for test runners: `atlas-sim screen` prints the recorded
//! screen shown (its `state_str`), `atlas-sim reset [SCREEN]` starts the app afresh (on SCREEN),
//! `atlas-sim has SCREEN` says whether the app has that screen (exit 1 when not).
//! Command lines are read by [`crate::shell`]. Files live in [`Storage`].
//!
//! A tap inside a view follows the transition recorded for that view; where none was recorded the
//! screen stays, as a real app that ignores a tap. Typing shows in the focused field
//! ([`crate::typing`]: the field keeps its text while its activity is shown, and the focus goes
//! where a phone puts it), and follows a recorded typing of the same text where there is one. Every action is logged as a JSON line.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::json;

use crate::app::{RecordedApp, Trigger, View};
use crate::shell::Output;
use crate::storage::Storage;
use crate::typing::Fields;

const ADB_KEYBOARD: &str = "com.android.adbkeyboard/.AdbIME";
const LATIN_IME: &str = "com.android.inputmethod.latin/.LatinIME";
const DEFAULT_DUMP: &str = "/sdcard/window_dump.xml";
/// The keys the phone knows, by name (`KEYCODE_` left off) and Android's code. Back, Home, Del
/// and Forward-Del act; the others a recorded app has no answer to, so the screen stays, as an
/// app that ignores them.
const KEY_CODES: [(&str, &str); 28] = [
    ("HOME", "3"),
    ("BACK", "4"),
    ("DEL", "67"),
    ("FORWARD_DEL", "112"),
    ("ENTER", "66"),
    ("MENU", "82"),
    ("TAB", "61"),
    ("ESCAPE", "111"),
    ("SEARCH", "84"),
    ("POWER", "26"),
    ("WAKEUP", "224"),
    ("SLEEP", "223"),
    ("VOLUME_UP", "24"),
    ("VOLUME_DOWN", "25"),
    ("VOLUME_MUTE", "164"),
    ("APP_SWITCH", "187"),
    ("SPACE", "62"),
    ("CAMERA", "27"),
    ("NOTIFICATION", "83"),
    ("DPAD_UP", "19"),
    ("DPAD_DOWN", "20"),
    ("DPAD_LEFT", "21"),
    ("DPAD_RIGHT", "22"),
    ("DPAD_CENTER", "23"),
    ("MOVE_HOME", "122"),
    ("MOVE_END", "123"),
    ("PAGE_UP", "92"),
    ("PAGE_DOWN", "93"),
];
/// The screen density `wm density` and `dumpsys display` report (a common phone's).
const DENSITY: u32 = 440;
/// The input sources `input` may name before its command.
const INPUT_SOURCES: [&str; 10] = [
    "touchscreen",
    "touchpad",
    "touchnavigation",
    "keyboard",
    "mouse",
    "trackball",
    "dpad",
    "gamepad",
    "stylus",
    "joystick",
];
/// The system properties agents read to name the device.
const PROPERTIES: [(&str, &str); 10] = [
    ("ro.build.type", "user"),
    ("ro.build.version.release", "14"),
    ("ro.build.version.sdk", "34"),
    // A production phone: not debuggable, secure (adb has no root).
    ("ro.debuggable", "0"),
    ("ro.product.device", "atlas_sim"),
    ("ro.product.manufacturer", "Atlas"),
    ("ro.product.model", "Atlas_Simulator"),
    ("ro.product.name", "atlas_sim"),
    ("ro.secure", "1"),
    ("ro.sf.lcd_density", "440"),
];

/// A simulated phone: a recorded app on the screen, its files, its input method, and the shell
/// commands Android's adb sends answered as Android does.
pub struct Phone {
    app: RecordedApp,
    /// The screen shown (a recorded `state_str`).
    current: String,
    /// Screens left by taps, for Back where no Back was recorded.
    history: Vec<String>,
    ime: String,
    /// What `settings put` stored, by namespace and key.
    settings: HashMap<(String, String), String>,
    /// What is typed into the fields, and which has the focus.
    fields: Fields,
    /// The checkable views tapped on this screen where the recording has no tap (a checkbox, a
    /// switch, a radio button), by their bounds: each shows the other checked state, as a
    /// phone's toggle does, until the screen changes.
    toggled: std::collections::HashSet<[[i64; 2]; 2]>,
    storage: Storage,
    /// When the phone started (seconds since 1970): the time its files carry.
    booted_at: u32,
    log: Option<Box<dyn Write + Send>>,
    /// Which phone this is in a log several phones share.
    label: Option<String>,
    glyphs: Option<crate::render::Glyphs>,
}

impl Phone {
    /// The app on its launch screen, or on `start` (a recorded `state_str`).
    pub fn new(app: RecordedApp, start: Option<&str>) -> Result<Phone, crate::SimError> {
        let current = match start {
            Some(s) if app.screens.contains_key(s) => s.to_string(),
            Some(s) => {
                let named: Vec<&String> = app
                    .screens
                    .values()
                    .filter(|screen| screen.name.as_deref() == Some(s))
                    .map(|screen| &screen.state_str)
                    .collect();
                match named[..] {
                    [one] => one.clone(),
                    [] => {
                        return Err(crate::SimError::NoSuchScreen(format!(
                            "no screen {s} (give a recorded state_str, a page id or a page name)"
                        )));
                    }
                    _ => {
                        return Err(crate::SimError::NoSuchScreen(format!(
                            "{} screens are named {s}: give its id",
                            named.len()
                        )));
                    }
                }
            }
            None => app.launch.clone(),
        };
        let mut phone = Phone {
            app,
            current,
            history: Vec::new(),
            ime: LATIN_IME.to_string(),
            settings: HashMap::new(),
            fields: Fields::default(),
            toggled: Default::default(),
            storage: Storage::default(),
            booted_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as u32),
            log: None,
            label: None,
            glyphs: crate::render::Glyphs::find(),
        };
        phone.settle_fields(None);
        Ok(phone)
    }

    /// The app back on its launch screen, or on `start`, as a fresh phone would show it: nothing
    /// typed, no way back; files and settings stay. Fails (and changes nothing) for a screen the
    /// recording does not have.
    pub fn reset(&mut self, start: Option<&str>) -> Result<(), crate::SimError> {
        let current = match start {
            Some(s) if self.app.screens.contains_key(s) => s.to_string(),
            Some(s) => return Err(crate::SimError::NoSuchScreen(format!("no screen {s}"))),
            None => self.app.launch.clone(),
        };
        self.record(json!({"action": "reset", "screen": self.current, "to": current}));
        self.current = current;
        self.history.clear();
        self.fields.clear();
        self.toggled.clear();
        self.settle_fields(None);
        Ok(())
    }

    /// Names the phone in its log lines (`phone`), where several phones share one log.
    pub fn set_label(&mut self, label: &str) {
        self.label = Some(label.to_string());
    }

    /// Logs every action to `log` as JSON lines.
    pub fn log_to(&mut self, log: Box<dyn Write + Send>) {
        self.log = Some(log);
    }

    /// The screen shown (its `state_str`).
    pub fn current(&self) -> &str {
        &self.current
    }

    /// The shown screen's size in pixels.
    pub fn screen_size(&self) -> (u32, u32) {
        let screen = self.screen();
        (screen.width.max(1), screen.height.max(1))
    }

    /// The views of the screen shown, as its recording dumped them.
    pub fn views(&self) -> &[View] {
        &self.screen().views
    }

    fn record(&mut self, mut action: serde_json::Value) {
        if let (Some(label), Some(fields)) = (&self.label, action.as_object_mut()) {
            fields.insert("phone".into(), label.clone().into());
        }
        if let Some(log) = &mut self.log {
            // One write a line, so phones sharing a log (appending) never interleave within one.
            let _ = log.write_all(format!("{action}\n").as_bytes());
            let _ = log.flush();
        }
    }

    fn go(&mut self, to: String) {
        self.go_tapping(to, None);
    }

    /// Shows screen `to`, left by a tap on a text field at `tapped` when there was one.
    fn go_tapping(&mut self, to: String, tapped: Option<(i64, i64)>) {
        if to != self.current {
            self.history.push(std::mem::replace(&mut self.current, to));
            self.toggled.clear();
            self.settle_fields(tapped);
        }
    }

    /// The fields after the screen changed: the texts of activities no longer on the screen or
    /// the back stack dropped, the focus moved ([`Fields::arrive`]).
    fn settle_fields(&mut self, tapped: Option<(i64, i64)>) {
        let screens = &self.app.screens;
        let live: HashSet<&str> = self
            .history
            .iter()
            .chain(std::iter::once(&self.current))
            .filter_map(|s| screens.get(s))
            .map(|s| s.foreground_activity.as_str())
            .collect();
        self.fields.arrive(&screens[&self.current], &live, tapped);
    }

    /// The screen shown, as recorded.
    fn screen(&self) -> &crate::app::Screen {
        &self.app.screens[&self.current]
    }

    /// Runs a command line; its output as the plain `shell:` service delivers it (stdout and
    /// stderr together, no status).
    pub fn run(&mut self, line: &str) -> Vec<u8> {
        self.execute(line).merged()
    }

    /// Runs a command line as `/system/bin/sh` does ([`crate::shell`]): stdout, stderr and the
    /// exit status.
    pub fn execute(&mut self, line: &str) -> Output {
        crate::shell::run_line(line, self)
    }

    /// One command of the phone's (none of them reads what a pipe feeds it; the shell's text
    /// filters do).
    fn phone_command(&mut self, words: &[&str]) -> Output {
        match words.first().copied() {
            Some("wm" | "dumpsys" | "getprop" | "ps" | "settings" | "ime" | "logcat") => {
                self.system_command(words)
            }
            Some("stop" | "start" | "reboot") => self.system_command(words),
            Some("cat" | "rm" | "mkdir" | "screencap" | "ls" | "cp") => self.file_command(words),
            Some("input") => self.input_command(words),
            Some("pm" | "am" | "monkey") => self.app_command(words),
            _ => self.shell_builtin(words),
        }
    }

    /// What the system says of itself: the window, the display, services, properties, settings, input methods, the log.
    fn system_command(&mut self, words: &[&str]) -> Output {
        match words {
            ["wm", "size", ..] => {
                let (w, h) = self.screen_size();
                Output::ok(format!("Physical size: {w}x{h}\n"))
            }
            ["wm", "density", ..] => Output::ok(format!("Physical density: {DENSITY}\n")),
            ["dumpsys", "window", ..] => Output::ok(self.dumpsys_window()),
            ["dumpsys", "display", ..] => Output::ok(self.dumpsys_display()),
            ["dumpsys", "activity", "top", ..] => Output::ok(self.dumpsys_top()),
            ["dumpsys", "activity", "activities" | "a", ..] => {
                Output::ok(self.dumpsys_activities())
            }
            ["dumpsys", "activity", "services" | "s", ..] => {
                Output::ok("ACTIVITY MANAGER SERVICES (dumpsys activity services)\n  (nothing)\n")
            }
            ["dumpsys", "input", ..] => {
                Output::ok("INPUT MANAGER (dumpsys input)\n  SurfaceOrientation: 0\n")
            }
            ["dumpsys", "package", package, ..] => Output::ok(self.dumpsys_package(package)),
            // Android's answer for a service the phone does not run (it exits 0).
            ["dumpsys", "power", ..] => Output::ok(DUMPSYS_POWER),
            ["dumpsys", "battery", ..] => Output::ok(DUMPSYS_BATTERY),
            ["dumpsys", service, ..] => Output::ok(format!("Can't find service: {service}\n")),
            ["ps", ..] => Output::ok(format!(
                "USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME\nroot             1     0   12345   1234 0                   0 S init\nu0_a123       {APP_PID}   321 1234567 123456 0                  0 S {}\n",
                self.app.package
            )),
            // The framework's restart needs root, which a production phone does not give.
            ["stop" | "start" | "reboot", ..] => {
                Output::fail(1, format!("{}: must be root\n", words[0]))
            }
            ["getprop"] => Output::ok(
                PROPERTIES
                    .iter()
                    .map(|(name, value)| format!("[{name}]: [{value}]\n"))
                    .collect::<String>(),
            ),
            ["getprop", name, ..] => Output::ok(format!("{}\n", property(name))),
            ["ime", "list", ..] => Output::ok(format!("{ADB_KEYBOARD}\n{LATIN_IME}\n")),
            ["ime", "set", ime] => {
                self.ime = ime.to_string();
                Output::ok(format!("Input method {ime} selected for user #0\n"))
            }
            ["settings", "get", namespace, key] => Output::ok(format!(
                "{}\n",
                match (*namespace, *key) {
                    ("secure", "default_input_method") => self.ime.clone(),
                    _ => self
                        .settings
                        .get(&(namespace.to_string(), key.to_string()))
                        .cloned()
                        .unwrap_or_else(|| "null".into()),
                }
            )),
            ["settings", "put", namespace, key, value @ ..] => {
                let value = value.join(" ");
                if (*namespace, *key) == ("secure", "default_input_method") {
                    self.ime = value;
                } else {
                    self.settings
                        .insert((namespace.to_string(), key.to_string()), value);
                }
                Output::ok("")
            }
            ["logcat", args @ ..] => {
                // A phone's log is the app's business; what the simulator has is its start. A
                // log without `-d` would stream forever: it ends at once here.
                if args.contains(&"-c") {
                    return Output::ok("");
                }
                Output::ok(format!(
                    "--------- beginning of main\n01-01 00:00:00.000  1000  1000 I atlas_sim: {} started\n",
                    self.app.package
                ))
            }

            _ => not_found(words),
        }
    }

    /// The phone's files: read, removed, made, listed, copied, and screenshots written to them.
    fn file_command(&mut self, words: &[&str]) -> Output {
        match words {
            ["cat", paths @ ..] if !paths.is_empty() => {
                let mut out = Output::default();
                for path in paths {
                    match self.storage.get(path) {
                        Some(bytes) => out.stdout.extend_from_slice(bytes),
                        None => {
                            out.stderr.extend(
                                format!("cat: {path}: No such file or directory\n").into_bytes(),
                            );
                            out.code = 1;
                        }
                    }
                }
                out
            }
            ["rm", paths @ ..] => {
                let mut out = Output::default();
                let flag = |f: char| paths.iter().any(|p| p.starts_with('-') && p.contains(f));
                let (force, recursive) = (flag('f'), flag('r') || flag('R'));
                for path in paths.iter().filter(|p| !p.starts_with('-')) {
                    let why = if self.storage.is_dir(path) {
                        (!(recursive && self.storage.remove_tree(path))).then_some("Is a directory")
                    } else if self.storage.remove(path) || force {
                        None
                    } else {
                        Some("No such file or directory")
                    };
                    if let Some(why) = why {
                        out.stderr
                            .extend(format!("rm: {path}: {why}\n").into_bytes());
                        out.code = 1;
                    }
                }
                out
            }
            ["mkdir", paths @ ..] => {
                let parents = paths.iter().any(|p| p.starts_with('-') && p.contains('p'));
                let mut out = Output::default();
                for path in paths.iter().filter(|p| !p.starts_with('-')) {
                    if let Err(why) = self.storage.make_dir(path, parents) {
                        out.stderr
                            .extend(format!("mkdir: '{path}': {why}\n").into_bytes());
                        out.code = 1;
                    }
                }
                out
            }
            // A PNG whatever the options: `-p`, or a file name ending in .png, as agents ask.
            ["screencap", rest @ ..] => {
                let png = self.screenshot();
                match rest.iter().find(|w| !w.starts_with('-')) {
                    Some(path) => {
                        if self.storage.put(path, png) {
                            Output::ok("")
                        } else {
                            Output::fail(
                                1,
                                format!("Error opening file: {path} (No space left on device)\n"),
                            )
                        }
                    }
                    None => Output::ok(png),
                }
            }
            ["ls", folder @ ..] => {
                let folder = folder
                    .iter()
                    .find(|w| !w.starts_with('-'))
                    .unwrap_or(&"/sdcard");
                if !self.storage.is_dir(folder) {
                    return Output::fail(1, format!("ls: {folder}: No such file or directory\n"));
                }
                Output::ok(
                    self.storage
                        .entries(folder)
                        .iter()
                        .map(|n| format!("{n}\n"))
                        .collect::<String>(),
                )
            }
            ["cp", args @ ..] => self.copy(args),
            _ => not_found(words),
        }
    }

    /// `input`: taps, swipes, keys and text, from any input source.
    fn input_command(&mut self, words: &[&str]) -> Output {
        match words {
            // `input [SOURCE] COMMAND …`: the source (touchscreen, keyboard…) changes nothing here.
            ["input", source, rest @ ..] if INPUT_SOURCES.contains(source) => {
                let mut words = vec!["input"];
                words.extend(rest);
                self.phone_command(&words)
            }
            ["input", "tap", x, y] => match (x.parse(), y.parse()) {
                (Ok(x), Ok(y)) => self.tap(x, y),
                _ => usage("input tap X Y"),
            },
            ["input", "swipe" | "draganddrop", x1, y1, x2, y2, rest @ ..] => {
                let numbers: Vec<Option<i64>> =
                    [x1, y1, x2, y2].iter().map(|v| v.parse().ok()).collect();
                let millis: i64 = rest.first().and_then(|m| m.parse().ok()).unwrap_or(300);
                match numbers.as_slice() {
                    [Some(x1), Some(y1), Some(x2), Some(y2)] => {
                        let action = if (x1, y1) == (x2, y2) {
                            "long_press"
                        } else {
                            "swipe"
                        };
                        self.record(json!({"action": action, "from": [x1, y1], "to": [x2, y2], "ms": millis, "screen": self.current}));
                        Output::ok("")
                    }
                    _ => usage("input swipe X1 Y1 X2 Y2 [MS]"),
                }
            }
            ["input", "keyevent", keys @ ..] if !keys.is_empty() => {
                let mut out = Output::default();
                for key in keys.iter().filter(|k| !k.starts_with("--")) {
                    let one = self.key(key);
                    out.stderr.extend(one.stderr);
                    out.code = out.code.max(one.code);
                }
                out
            }
            // Android 12's `input keycombination`: select-all (Ctrl+A) acts, the others as
            // their keys do here: nothing.
            ["input", "keycombination", keys @ ..] if !keys.is_empty() => {
                let keys: Vec<&str> = keys
                    .iter()
                    .map(|k| k.strip_prefix("KEYCODE_").unwrap_or(k))
                    .collect();
                let ctrl = keys
                    .iter()
                    .any(|k| matches!(*k, "CTRL_LEFT" | "CTRL_RIGHT" | "113" | "114"));
                if ctrl && keys.iter().any(|k| matches!(*k, "A" | "29")) {
                    self.fields.select_all();
                } else {
                    self.fields.other_key();
                }
                self.record(json!({"action": "keys", "keys": keys, "screen": self.current}));
                Output::ok("")
            }
            // Android's `input text` reads `%s` as a space.
            ["input", "text", text @ ..] => {
                let text = text.join(" ").replace("%s", " ");
                self.type_text(&text);
                Output::ok("")
            }
            _ => not_found(words),
        }
    }

    /// Apps: installed packages, started, stopped, and broadcasts to them.
    fn app_command(&mut self, words: &[&str]) -> Output {
        match words {
            ["pm", "path", package] => {
                if self.installed().contains(package) {
                    Output::ok(format!("package:/data/app/{package}-1/base.apk\n"))
                } else {
                    Output::fail(1, "")
                }
            }
            ["monkey", "-p", package, ..] => self.launch(package),
            ["am", "start" | "start-activity", args @ ..] => self.start_activity(args),
            ["am", "force-stop" | "kill", package, ..] => self.force_stop(package),
            ["am", "broadcast", "-a", action, rest @ ..] => self.broadcast(action, rest),
            ["pm", "list", "packages", args @ ..] => self.list_packages(args),
            _ => not_found(words),
        }
    }

    /// The shell's own words, Atlas's `atlas-sim` and `uiautomator`; anything else is not found.
    fn shell_builtin(&mut self, words: &[&str]) -> Output {
        match words {
            ["uiautomator", "dump", rest @ ..] => self.dump(rest),
            ["atlas-sim", "screen"] => Output::ok(format!("{}\n", self.current)),
            ["atlas-sim", "has", screen] => match self.app.screens.contains_key(*screen) {
                true => Output::ok(""),
                false => Output::fail(1, format!("atlas-sim: no screen {screen}\n")),
            },
            ["atlas-sim", "reset", start @ ..] if start.len() <= 1 => {
                match self.reset(start.first().copied()) {
                    Ok(()) => Output::ok(""),
                    Err(e) => Output::fail(1, format!("atlas-sim: {e}\n")),
                }
            }
            ["true"] => Output::ok(""),
            ["false"] => Output::fail(1, ""),
            ["exit", code @ ..] => Output {
                code: code.first().and_then(|c| c.parse().ok()).unwrap_or(0),
                ..Output::default()
            },
            ["echo", "-n", text @ ..] => Output::ok(text.join(" ")),
            ["echo", text @ ..] => Output::ok(format!("{}\n", text.join(" "))),
            [] => Output::ok(""),
            _ => not_found(words),
        }
    }

    /// `uiautomator dump [FILE]`: written to the file, or printed where the file is the
    /// terminal (`/dev/tty`, `/dev/stdout`).
    fn dump(&mut self, args: &[&str]) -> Output {
        let path = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .copied()
            .unwrap_or(DEFAULT_DUMP)
            .to_string();
        let xml = self.hierarchy_xml();
        self.record(json!({"action": "dump", "screen": self.current}));
        if matches!(
            path.as_str(),
            "/dev/tty" | "/dev/stdout" | "/proc/self/fd/1"
        ) {
            return Output::ok(format!("{xml}UI hierchary dumped to: {path}\n"));
        }
        if !self.storage.put(&path, xml.into_bytes()) {
            return Output::fail(
                1,
                "ERROR: could not write the dump: no space left on the phone\n",
            );
        }
        Output::ok(format!("UI hierchary dumped to: {path}\n"))
    }
    /// `cp [-f] SRC… DST` as toybox copies files: into DST, or into the folder DST names.
    fn copy(&mut self, args: &[&str]) -> Output {
        let paths: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .collect();
        let [sources @ .., target] = &paths[..] else {
            return Output::fail(1, "usage: cp [-f] SOURCE... DEST\n");
        };
        if sources.is_empty() {
            return Output::fail(1, "usage: cp [-f] SOURCE... DEST\n");
        }
        let into_folder = self.storage.is_dir(target);
        if sources.len() > 1 && !into_folder {
            return Output::fail(1, format!("cp: '{target}' not directory\n"));
        }
        let mut out = Output::default();
        for source in sources {
            let Some(bytes) = self.storage.get(source).map(<[u8]>::to_vec) else {
                out.stderr
                    .extend(format!("cp: {source}: No such file or directory\n").into_bytes());
                out.code = 1;
                continue;
            };
            let to = if into_folder {
                let name = source.rsplit('/').next().unwrap_or(source);
                format!("{}/{name}", target.trim_end_matches('/'))
            } else {
                target.to_string()
            };
            if let Err(why) = crate::shell::System::write(self, &to, &bytes, false) {
                out.stderr.extend(format!("cp: {to}: {why}\n").into_bytes());
                out.code = 1;
            }
        }
        out
    }

    /// The current screen as a PNG, logged as a screenshot taken.
    pub fn screenshot(&mut self) -> Vec<u8> {
        self.record(json!({"action": "screenshot", "screen": self.current}));
        let (w, h) = self.screen_size();
        let typed = self.fields.shown_by_bounds(self.screen());
        crate::render::screen_png(w, h, &self.shown_views(), &typed, self.glyphs.as_ref())
    }

    /// The views as the screen shows them: the recording's, with the switches tapped here
    /// (that the recording never saw tapped) flipped.
    fn shown_views(&self) -> std::borrow::Cow<'_, [View]> {
        if self.toggled.is_empty() {
            return std::borrow::Cow::Borrowed(self.views());
        }
        let mut views = self.views().to_vec();
        for view in &mut views {
            if view.bounds.is_some_and(|b| self.toggled.contains(&b)) {
                view.checked = !view.checked;
            }
        }
        std::borrow::Cow::Owned(views)
    }

    /// The current screen as adb's `framebuffer:` service sends it (version 1: the header of
    /// bits per pixel, size, width, height and each colour's offset and length, then RGBA
    /// pixels row by row), the same picture as [`Phone::screenshot`]; logged as a screenshot.
    pub fn framebuffer(&mut self) -> Vec<u8> {
        self.record(json!({"action": "screenshot", "screen": self.current, "via": "framebuffer"}));
        let (w, h) = self.screen_size();
        let typed = self.fields.shown_by_bounds(self.screen());
        let rgb =
            crate::render::screen_pixels(w, h, &self.shown_views(), &typed, self.glyphs.as_ref());
        let size = (w as usize) * (h as usize) * 4;
        // version, bpp, size, width, height; red, blue, green, alpha as (offset, length).
        let header: [u32; 13] = [1, 32, size as u32, w, h, 0, 8, 16, 8, 8, 8, 24, 8];
        let mut out = Vec::with_capacity(header.len() * 4 + size);
        for field in header {
            out.extend(field.to_le_bytes());
        }
        for pixel in rgb.chunks_exact(3) {
            out.extend_from_slice(pixel);
            out.push(255);
        }
        out
    }

    /// A file of the phone (`adb pull`), logged.
    pub fn pull_file(&mut self, path: &str) -> Option<Vec<u8>> {
        let bytes = self.storage.get(path).map(<[u8]>::to_vec);
        self.record(json!({"action": "pull", "path": path, "bytes": bytes.as_ref().map(Vec::len)}));
        bytes
    }

    /// Writes a file onto the phone (`adb push`), logged; false when the phone is full.
    pub fn push_file(&mut self, path: &str, bytes: Vec<u8>) -> bool {
        self.record(json!({"action": "push", "path": path, "bytes": bytes.len()}));
        self.storage.put(path, bytes)
    }

    /// Bytes a pushed file may still take.
    pub fn free_bytes(&self) -> usize {
        self.storage.free()
    }

    /// A file's bytes.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.storage.get(path)
    }

    /// Whether the path is a folder.
    pub fn is_dir(&self, path: &str) -> bool {
        self.storage.is_dir(path)
    }

    /// A folder's entries, with their sizes.
    pub fn list(&self, folder: &str) -> Vec<(String, usize)> {
        self.storage.list(folder)
    }

    /// When the phone started, in seconds since 1970.
    pub fn booted_at(&self) -> u32 {
        self.booted_at
    }

    fn dumpsys_display(&self) -> String {
        let (w, h) = self.screen_size();
        format!(
            "DISPLAY MANAGER (dumpsys display)\n  mDefaultViewport=DisplayViewport{{valid=true, type=INTERNAL, orientation=0, logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}\n  mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", real {w} x {h}, density {DENSITY}}}\n"
        )
    }

    /// The activity stack as `dumpsys activity activities` prints it: the task, its one
    /// activity (`* Hist #0`, which DroidBot reads), the resumed one.
    fn dumpsys_activities(&self) -> String {
        let activity = &self.screen().foreground_activity;
        let record = format!("ActivityRecord{{b1e55ed u0 {activity} t1}}");
        format!(
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n  Task id #1\n    * Hist #0: {record}\n  mResumedActivity: {record}\n  topResumedActivity={record}\n"
        )
    }

    /// `dumpsys activity top`: the resumed activity's task, and its `ACTIVITY pkg/activity id
    /// pid=N` line (the app's pid as `ps` lists it), which AndroidViewClient reads.
    fn dumpsys_top(&self) -> String {
        let activity = &self.screen().foreground_activity;
        let package = activity.split('/').next().unwrap_or_default();
        let pid = if package == self.app.package {
            APP_PID
        } else {
            1500
        };
        format!(
            "TASK {package} id=1 userId=0\n  ACTIVITY {activity} b1e55ed pid={pid}\n    Local Activity b1e55ed State:\n      mResumed=true mStopped=false mFinished=false\n"
        )
    }

    /// `dumpsys package PKG`: the activity its launcher icon starts (the MAIN action's resolver
    /// entry, as DroidBot reads it), then the lines agents read its version from
    /// (`versionCode=`, `versionName=`) and its install times, as Android writes them; for the
    /// app and the launcher the recording went home to (of another package, no package section).
    fn dumpsys_package(&self, package: &str) -> String {
        let mut out = String::from("Activity Resolver Table:\n  Non-Data Actions:\n");
        let (version, start, category) = if package == self.app.package {
            (
                self.app.version.clone(),
                self.app.launch.clone(),
                "LAUNCHER",
            )
        } else if let Some((_, home)) = self.launcher().filter(|(p, _)| *p == package) {
            (crate::app::AppVersion::default(), home, "HOME")
        } else {
            return out + "\n";
        };
        if let Some(activity) = self
            .app
            .screens
            .get(&start)
            .map(|s| &s.foreground_activity)
            .filter(|a| a.contains('/'))
        {
            out += &format!(
                "      android.intent.action.MAIN:\n        5ca1ab1e {activity} filter 0ddba11\n          Action: \"android.intent.action.MAIN\"\n          Category: \"android.intent.category.{category}\"\n"
            );
        }
        out += &format!(
            "\nPackages:\n  Package [{package}] (5ca1ab1e):\n    userId=10123\n    pkg=Package{{5ca1ab1e {package}}}\n    codePath=/data/app/{package}-1\n    versionCode={} minSdk=21 targetSdk=34\n    versionName={}\n    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    firstInstallTime={INSTALLED}\n    lastUpdateTime={INSTALLED}\n",
            version.code, version.name
        );
        out
    }

    fn dumpsys_window(&self) -> String {
        let activity = &self.screen().foreground_activity;
        format!(
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{{5ca1ab1e u0 {activity}}}\n  mFocusedApp=ActivityRecord{{b1e55ed u0 {activity} t1}}\n"
        )
    }

    fn tap(&mut self, x: i64, y: i64) -> Output {
        let (w, h) = self.screen_size();
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            self.record(json!({"action": "tap", "at": [x, y], "error": "off the screen"}));
            return Output::fail(1, format!("Error: ({x}, {y}) is off the {w}x{h} screen\n"));
        }
        let from = self.current.clone();
        // The view tapped: one with a recorded tap here first, else the smallest under the point.
        let mut under: Vec<&View> = self
            .views()
            .iter()
            .filter(|v| v.is_shown() && v.contains(x, y))
            .collect();
        under.sort_by_key(|v| v.area());
        let recorded = under.iter().find_map(|v| {
            let bounds = v.bounds?;
            let to = self
                .app
                .transitions
                .get(&(from.clone(), Trigger::Tap(bounds)))?;
            Some((bounds, to.clone()))
        });
        let field = under
            .iter()
            .find_map(|v| crate::typing::FieldKey::of(self.screen(), v));
        match recorded {
            Some((bounds, to)) => {
                self.record(json!({"action": "tap", "at": [x, y], "view": bounds, "screen": from, "to": to}));
                let tapped = field.is_some().then_some((x, y));
                self.go_tapping(to, tapped);
            }
            None => {
                // A toggle the recording never saw tapped still toggles.
                let toggle = under.iter().find(|v| v.checkable).and_then(|v| v.bounds);
                if let Some(bounds) = toggle
                    && !self.toggled.remove(&bounds)
                {
                    self.toggled.insert(bounds);
                }
                self.record(json!({"action": "tap", "at": [x, y], "screen": from, "to": from, "toggled": toggle}));
            }
        }
        if self.current == from
            && let Some(field) = field
        {
            self.fields.focus(field);
        }
        Output::ok("")
    }

    /// One key of `input keyevent`, by name (`BACK`, `KEYCODE_BACK`) or code (`4`).
    fn key(&mut self, key: &str) -> Output {
        let from = self.current.clone();
        let name = key.strip_prefix("KEYCODE_").unwrap_or(key);
        let Some(&(name, _)) = KEY_CODES
            .iter()
            .find(|(n, code)| *n == name || *code == name)
        else {
            self.record(json!({"action": "key", "key": name, "error": "unknown key"}));
            return Output::fail(1, format!("Error: Unknown keycode: {key}\n"));
        };
        match name {
            "BACK" => {
                let recorded = self
                    .app
                    .transitions
                    .get(&(from.clone(), Trigger::Key("BACK".into())))
                    .cloned();
                if let Some(to) = recorded.or_else(|| self.history.pop()) {
                    self.current = to;
                    self.toggled.clear();
                    self.settle_fields(None);
                }
            }
            "HOME" => {
                if let Some(home) = self.app.home.clone() {
                    self.go(home);
                }
            }
            "DEL" => self.fields.delete(),
            // The cursor is at the end: only a selection goes.
            "FORWARD_DEL" => self.fields.delete_selection(),
            _ => self.fields.other_key(),
        }
        self.record(json!({"action": "key", "key": key, "screen": from, "to": self.current}));
        Output::ok("")
    }

    fn launch(&mut self, package: &str) -> Output {
        if package != self.app.package {
            self.record(json!({"action": "launch", "package": package, "error": "no such app"}));
            return Output::fail(252, "** No activities found to run, monkey aborted.\n");
        }
        let from = self.current.clone();
        self.history.clear();
        self.current = self.app.launch.clone();
        self.fields.clear();
        self.toggled.clear();
        self.settle_fields(None);
        self.record(
            json!({"action": "launch", "package": package, "screen": from, "to": self.current}),
        );
        Output::ok("  bash arg: -p\n  bash arg: 1\nEvents injected: 1\n")
    }

    /// `am start [-W] [-S] -n PKG/ACTIVITY …`: the app's launch screen; other intents (a
    /// browser's `-a VIEW -d URL`) start nothing the simulator has.
    fn start_activity(&mut self, args: &[&str]) -> Output {
        let component = args
            .windows(2)
            .find(|w| w[0] == "-n")
            .map(|w| w[1])
            .or_else(|| {
                args.iter()
                    .copied()
                    .find(|a| a.contains('/') && !a.starts_with('-'))
            });
        let Some(component) = component else {
            return Output::fail(1, "Error: Activity not started, unable to resolve Intent\n");
        };
        let package = component.split('/').next().unwrap_or_default();
        // The launcher the recording went home to is an app of the phone's too.
        if let Some((launcher, home)) = self.launcher()
            && package == launcher
        {
            let from = self.current.clone();
            self.go(home);
            self.record(
                json!({"action": "launch", "package": package, "screen": from, "to": self.current}),
            );
            return Output::ok(format!("Starting: Intent {{ cmp={component} }}\n"));
        }
        if package != self.app.package {
            self.record(json!({"action": "launch", "package": package, "error": "no such app"}));
            return Output::fail(
                1,
                format!("Error type 3\nError: Activity class {{{component}}} does not exist.\n"),
            );
        }
        // The package is the app's: the launch cannot fail.
        self.launch(package);
        Output::ok(format!("Starting: Intent {{ cmp={component} }}\n"))
    }

    /// `am force-stop PKG`: the app is gone from the screen; the next launch starts it afresh.
    fn force_stop(&mut self, package: &str) -> Output {
        if package == self.app.package {
            let from = self.current.clone();
            if let Some(home) = self.app.home.clone() {
                self.go(home);
            }
            self.history.clear();
            self.record(json!({"action": "force_stop", "package": package, "screen": from, "to": self.current}));
        }
        Output::ok("")
    }

    /// The packages on the phone: the recorded app and ADB Keyboard (installed by the user),
    /// then the system's, the recording's launcher among them.
    fn installed(&self) -> Vec<&str> {
        let mut packages = vec![
            self.app.package.as_str(),
            "com.android.adbkeyboard",
            "android",
            "com.android.settings",
            "com.android.inputmethod.latin",
        ];
        packages.extend(self.launcher().map(|(package, _)| package));
        packages
    }

    /// The launcher the recording went home to (its package) and its home screen, where the
    /// recording has one that is not the app's.
    fn launcher(&self) -> Option<(&str, String)> {
        let home = self.app.home.as_ref()?;
        let package = self
            .app
            .screens
            .get(home)?
            .foreground_activity
            .split('/')
            .next()?;
        (!package.is_empty() && package != self.app.package).then(|| (package, home.clone()))
    }

    /// `pm list packages [-f] [-3] [FILTER]`: what [`Phone::installed`] has (`-3`: what the user
    /// installed).
    fn list_packages(&self, args: &[&str]) -> Output {
        let with_path = args.contains(&"-f");
        let filter = args.iter().find(|a| !a.starts_with('-'));
        let mut packages = self.installed();
        if args.contains(&"-3") {
            packages.truncate(2);
        }
        Output::ok(
            packages
                .iter()
                .filter(|p| filter.is_none_or(|f| p.contains(f)))
                .map(|p| {
                    if with_path {
                        format!("package:/data/app/{p}-1/base.apk={p}\n")
                    } else {
                        format!("package:{p}\n")
                    }
                })
                .collect::<String>(),
        )
    }

    fn broadcast(&mut self, action: &str, rest: &[&str]) -> Output {
        let done = Output::ok(format!(
            "Broadcasting: Intent {{ act={action} flg=0x400000 }}\nBroadcast completed: result=0\n"
        ));
        // ADB Keyboard acts only while it is the input method, as on a phone.
        if self.ime != ADB_KEYBOARD {
            self.record(json!({"action": "broadcast", "intent": action, "ignored": "ADB Keyboard is not the input method"}));
            return done;
        }
        match (action, rest) {
            ("ADB_INPUT_B64", ["--es", "msg", encoded]) => {
                match base64::engine::general_purpose::STANDARD.decode(encoded) {
                    Ok(bytes) => {
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        self.type_text(&text);
                    }
                    Err(e) => return Output::fail(1, format!("Error: bad base64: {e}\n")),
                }
            }
            ("ADB_INPUT_TEXT", ["--es", "msg", text @ ..]) => {
                let text = text.join(" ");
                self.type_text(&text);
            }
            ("ADB_CLEAR_TEXT", _) if self.fields.clear_focused() => {
                self.record(json!({"action": "clear", "screen": self.current}));
            }
            _ => {}
        }
        done
    }

    fn type_text(&mut self, text: &str) {
        let from = self.current.clone();
        let screen = self.screen();
        let field = self.fields.focused().and_then(|key| {
            screen
                .views
                .iter()
                .find(|v| crate::typing::FieldKey::of(screen, v).as_ref() == Some(key))?
                .bounds
        });
        let (Some(field), Some(now)) = (field, self.fields.type_text(text)) else {
            self.record(json!({"action": "type", "text": text, "screen": from, "error": "no focused field"}));
            return;
        };
        let recorded = [now.clone(), String::new()].into_iter().find_map(|text| {
            let key = (from.clone(), Trigger::Type(field, text));
            self.app.transitions.get(&key).cloned()
        });
        self.record(json!({"action": "type", "text": text, "field": field, "screen": from, "to": recorded.as_deref().unwrap_or(&from)}));
        // A screen the recording reached by this typing shows what the recording shows there,
        // its field's text included.
        if let Some(to) = recorded.filter(|to| *to != from) {
            self.fields.forget_focused_text();
            self.go(to);
        }
    }

    /// The current screen as `uiautomator dump` writes it: the recorded tree of views, each
    /// node inside its parent's (a view the recording marks not shown is left out with what is
    /// inside it), typed text shown in its field.
    fn hierarchy_xml(&self) -> String {
        let views = self.views();
        // A view's parent comes before it in the recorded list (DroidBot lists the tree in
        // pre-order); any other parent (none, -1, a made-up view's) makes it a root.
        let mut children = vec![Vec::new(); views.len()];
        let mut roots = Vec::new();
        for (i, view) in views.iter().enumerate() {
            match view
                .parent
                .and_then(|p| usize::try_from(p).ok())
                .filter(|p| *p < i)
            {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut xml = String::from(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
        );
        self.write_nodes(&roots, &children, &mut xml);
        xml.push_str("</hierarchy>");
        xml
    }

    /// The nodes of views `ids` (siblings), each with its children inside.
    fn write_nodes(&self, ids: &[usize], children: &[Vec<usize>], xml: &mut String) {
        let views = self.views();
        let mut index = 0;
        for &i in ids {
            let view = &views[i];
            if !view.is_shown() {
                continue;
            }
            let Some([[l, t], [r, b]]) = view.bounds else {
                // A view without a place: what is inside it takes its place.
                self.write_nodes(&children[i], children, xml);
                continue;
            };
            let typed_key = crate::typing::FieldKey::of(self.screen(), view);
            let text = typed_key
                .as_ref()
                .and_then(|key| self.fields.shown_as(key, view))
                .or_else(|| view.text.clone())
                .unwrap_or_default();
            xml.push_str(&format!(
                "<node index=\"{index}\" text=\"{}\" resource-id=\"{}\" class=\"{}\" package=\"{}\" content-desc=\"{}\" checkable=\"{}\" checked=\"{}\" clickable=\"{}\" enabled=\"true\" focusable=\"{}\" focused=\"{}\" scrollable=\"{}\" long-clickable=\"{}\" password=\"{}\" selected=\"{}\" bounds=\"[{l},{t}][{r},{b}]\"",
                escape(&text),
                escape(view.resource_id.as_deref().unwrap_or("")),
                escape(view.class.as_deref().unwrap_or("")),
                escape(view.package.as_deref().unwrap_or(&self.app.package)),
                escape(view.content_description.as_deref().unwrap_or("")),
                view.checkable,
                view.checked != view.bounds.is_some_and(|b| self.toggled.contains(&b)),
                view.clickable,
                view.clickable || view.editable,
                typed_key.is_some() && typed_key.as_ref() == self.fields.focused(),
                view.scrollable,
                view.long_clickable,
                view.is_password,
                view.selected,
            ));
            index += 1;
            let mut inside = String::new();
            self.write_nodes(&children[i], children, &mut inside);
            if inside.is_empty() {
                xml.push_str(" />");
            } else {
                xml.push('>');
                xml.push_str(&inside);
                xml.push_str("</node>");
            }
        }
    }
}

/// A system property's value; empty for one the phone does not have, as `getprop` prints it.
fn property(name: &str) -> &'static str {
    PROPERTIES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, v)| v)
}

/// What the shell answers for a command it has not got (or with arguments it does not take).
fn not_found(words: &[&str]) -> Output {
    Output::fail(
        127,
        format!(
            "/system/bin/sh: {}: inaccessible or not found\n",
            words.first().copied().unwrap_or_default()
        ),
    )
}

fn usage(what: &str) -> Output {
    Output::fail(1, format!("Error: usage: {what}\n"))
}

impl crate::shell::System for Phone {
    fn command(&mut self, words: &[&str], _input: &[u8]) -> Output {
        self.phone_command(words)
    }

    fn write(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), crate::WriteError> {
        if !WRITABLE.iter().any(|root| under(path, root)) {
            return Err(crate::WriteError::ReadOnly);
        }
        let mut all = if append {
            self.storage
                .get(path)
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        all.extend_from_slice(bytes);
        if self.storage.put(path, all) {
            Ok(())
        } else {
            Err(crate::WriteError::Full)
        }
    }

    fn kind(&self, path: &str) -> Option<crate::shell::FileKind> {
        use crate::shell::FileKind;
        if self.storage.is_dir(path) {
            Some(FileKind::Folder)
        } else if self.storage.is_device(path) {
            Some(FileKind::Device)
        } else {
            self.storage.get(path).map(|_| FileKind::File)
        }
    }
}

/// The app's process id, as `ps` and `dumpsys activity top` show it.
const APP_PID: u32 = 4242;

/// When every app of a simulated phone was installed (and last updated), as `dumpsys package`
/// says: a fixed time, so the same phone answers the same.
const INSTALLED: &str = "2024-01-01 08:00:00";

/// `dumpsys power` of a phone in use: awake, its screen on (what adbutils' `is_screen_on` and
/// uiautomator2 read).
const DUMPSYS_POWER: &str = "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n  mWakefulness=Awake\n  mWakefulnessChanging=false\n  mIsPowered=true\n  mPlugType=2\n  mStayOn=false\n  mProximityPositive=false\n  mBootCompleted=true\n  mSystemReady=true\n  mHoldingWakeLockSuspendBlocker=false\n  mHoldingDisplaySuspendBlocker=true\n\nDisplay Power: state=ON\n";

/// `dumpsys battery` of a phone charging over USB, in Android's words.
const DUMPSYS_BATTERY: &str = "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n  Dock powered: false\n  Max charging current: 500000\n  Max charging voltage: 5000000\n  Charge counter: 3000000\n  status: 2\n  health: 2\n  present: true\n  level: 80\n  scale: 100\n  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n";

/// Where the shell may write on a phone without root: shared storage, adb's temporary folder and
/// the null device.
const WRITABLE: [&str; 4] = [
    "/sdcard",
    "/storage/emulated/0",
    "/data/local/tmp",
    "/dev/null",
];

/// Whether `path` is `root` or inside it.
fn under(path: &str, root: &str) -> bool {
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
