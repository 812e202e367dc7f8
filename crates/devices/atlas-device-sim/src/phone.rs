//! The simulated phone: a current screen of a recorded app, and the shell commands an agent's
//! adb sends, answered as Android answers them (`wm size`, `dumpsys window`, `uiautomator dump`,
//! `screencap [-p] [FILE]`, `input`, `monkey`, `settings`, `ime`, `am broadcast` for ADB Keyboard,
//! and `cat`, `ls`, `rm`, `echo`, `true`, `getprop` around them). Files live in [`Storage`].
//!
//! A tap inside a view follows the transition recorded for that view; where none was recorded the
//! screen stays, as a real app that ignores a tap. Typing shows in the focused field, and follows a
//! recorded typing of the same text where there is one. Every action is logged as a JSON line.

use std::collections::HashMap;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::json;

use crate::app::{RecordedApp, Trigger, View};
use crate::storage::Storage;

const ADB_KEYBOARD: &str = "com.android.adbkeyboard/.AdbIME";
const LATIN_IME: &str = "com.android.inputmethod.latin/.LatinIME";
const DEFAULT_DUMP: &str = "/sdcard/window_dump.xml";

/// A simulated phone: a recorded app on the screen, its files, its input method, and the shell
/// commands Android's adb sends answered as Android does.
pub struct Phone {
    app: RecordedApp,
    /// The screen shown (a recorded `state_str`).
    current: String,
    /// Screens left by taps, for Back where no Back was recorded.
    history: Vec<String>,
    ime: String,
    /// The text field last tapped, by its bounds, and what was typed into it on this screen.
    focused: Option<[[i64; 2]; 2]>,
    typed: HashMap<[[i64; 2]; 2], String>,
    storage: Storage,
    /// When the phone started (seconds since 1970): the time its files carry.
    booted_at: u32,
    log: Option<Box<dyn Write + Send>>,
    glyphs: Option<crate::render::Glyphs>,
}

impl Phone {
    /// The app on its launch screen, or on `start` (a recorded `state_str`).
    pub fn new(app: RecordedApp, start: Option<&str>) -> Result<Phone, String> {
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
                        return Err(format!(
                            "no screen {s} (give a recorded state_str, a page id or a page name)"
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "{} screens are named {s}: give its id",
                            named.len()
                        ));
                    }
                }
            }
            None => app.launch.clone(),
        };
        Ok(Phone {
            app,
            current,
            history: Vec::new(),
            ime: LATIN_IME.to_string(),
            focused: None,
            typed: HashMap::new(),
            storage: Storage::default(),
            booted_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as u32),
            log: None,
            glyphs: crate::render::Glyphs::find(),
        })
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
        let screen = &self.app.screens[&self.current];
        (screen.width.max(1), screen.height.max(1))
    }

    fn views(&self) -> &[View] {
        &self.app.screens[&self.current].views
    }

    fn record(&mut self, action: serde_json::Value) {
        if let Some(log) = &mut self.log {
            let _ = writeln!(log, "{action}");
            let _ = log.flush();
        }
    }

    fn go(&mut self, to: String) {
        if to != self.current {
            self.history.push(std::mem::replace(&mut self.current, to));
            self.focused = None;
            self.typed.clear();
        }
    }

    /// Runs one shell command; its output as the shell would print it.
    pub fn run(&mut self, command: &str) -> Vec<u8> {
        let words = split(command);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["wm", "size"] => {
                let (w, h) = self.screen_size();
                format!("Physical size: {w}x{h}\n").into_bytes()
            }
            ["dumpsys", "window", ..] => self.dumpsys_window().into_bytes(),
            ["uiautomator", "dump", rest @ ..] => {
                let path = rest.first().copied().unwrap_or(DEFAULT_DUMP).to_string();
                let xml = self.hierarchy_xml();
                if !self.storage.put(&path, xml.into_bytes()) {
                    return b"ERROR: could not write the dump: no space left on the phone\n"
                        .to_vec();
                }
                self.record(json!({"action": "dump", "screen": self.current}));
                format!("UI hierchary dumped to: {path}\n").into_bytes()
            }
            ["cat", path] => match self.storage.get(path) {
                Some(bytes) => bytes.to_vec(),
                None => format!("cat: {path}: No such file or directory\n").into_bytes(),
            },
            ["rm", paths @ ..] => {
                let mut out = Vec::new();
                let force = paths.iter().any(|p| p.starts_with('-') && p.contains('f'));
                for path in paths.iter().filter(|p| !p.starts_with('-')) {
                    if !self.storage.remove(path) && !force {
                        out.extend(format!("rm: {path}: No such file or directory\n").into_bytes());
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
                            Vec::new()
                        } else {
                            format!("Error opening file: {path} (No space left on device)\n")
                                .into_bytes()
                        }
                    }
                    None => png,
                }
            }
            ["ls", folder @ ..] => {
                let folder = folder
                    .iter()
                    .find(|w| !w.starts_with('-'))
                    .unwrap_or(&"/sdcard");
                if !self.storage.is_dir(folder) {
                    return format!("ls: {folder}: No such file or directory\n").into_bytes();
                }
                let names: Vec<String> = self
                    .storage
                    .list(folder)
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect();
                names
                    .iter()
                    .map(|n| format!("{n}\n"))
                    .collect::<String>()
                    .into_bytes()
            }
            ["true"] => Vec::new(),
            ["echo", text @ ..] => format!("{}\n", text.join(" ")).into_bytes(),
            ["getprop", name] => format!("{}\n", property(name)).into_bytes(),
            ["ime", "list", ..] => format!("{ADB_KEYBOARD}\n{LATIN_IME}\n").into_bytes(),
            ["input", "tap", x, y] => match (x.parse(), y.parse()) {
                (Ok(x), Ok(y)) => self.tap(x, y),
                _ => usage("input tap X Y"),
            },
            ["input", "swipe", x1, y1, x2, y2, rest @ ..] => {
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
                        Vec::new()
                    }
                    _ => usage("input swipe X1 Y1 X2 Y2 [MS]"),
                }
            }
            ["input", "keyevent", key] => self.key(key),
            ["input", "text", text @ ..] => {
                let text = text.join(" ");
                self.type_text(&text);
                Vec::new()
            }
            ["monkey", "-p", package, ..] => self.launch(package),
            ["settings", "get", "secure", "default_input_method"] => {
                format!("{}\n", self.ime).into_bytes()
            }
            ["ime", "set", ime] => {
                self.ime = ime.to_string();
                format!("Input method {ime} selected for user #0\n").into_bytes()
            }
            ["am", "broadcast", "-a", action, rest @ ..] => self.broadcast(action, rest),
            _ => format!(
                "/system/bin/sh: {}: inaccessible or not found\n",
                words.first().unwrap_or(&"")
            )
            .into_bytes(),
        }
    }

    /// The current screen as a PNG, logged as a screenshot taken.
    pub fn screenshot(&mut self) -> Vec<u8> {
        self.record(json!({"action": "screenshot", "screen": self.current}));
        let (w, h) = self.screen_size();
        crate::render::screen_png(w, h, self.views(), &self.typed, self.glyphs.as_ref())
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

    fn dumpsys_window(&self) -> String {
        let activity = &self.app.screens[&self.current].foreground_activity;
        format!(
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{{5ca1ab1e u0 {activity}}}\n  mFocusedApp=ActivityRecord{{b1e55ed u0 {activity} t1}}\n"
        )
    }

    fn tap(&mut self, x: i64, y: i64) -> Vec<u8> {
        let (w, h) = self.screen_size();
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            self.record(json!({"action": "tap", "at": [x, y], "error": "off the screen"}));
            return format!("Error: ({x}, {y}) is off the {w}x{h} screen\n").into_bytes();
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
        let field = under.iter().find(|v| v.editable).and_then(|v| v.bounds);
        match recorded {
            Some((bounds, to)) => {
                self.record(json!({"action": "tap", "at": [x, y], "view": bounds, "screen": from, "to": to}));
                self.go(to);
            }
            None => {
                self.record(json!({"action": "tap", "at": [x, y], "screen": from, "to": from}));
            }
        }
        if self.current == from
            && let Some(field) = field
        {
            self.focused = Some(field);
        }
        Vec::new()
    }

    fn key(&mut self, key: &str) -> Vec<u8> {
        let from = self.current.clone();
        match key {
            "KEYCODE_BACK" | "4" => {
                let recorded = self
                    .app
                    .transitions
                    .get(&(from.clone(), Trigger::Key("BACK".into())))
                    .cloned();
                if let Some(to) = recorded.or_else(|| self.history.pop()) {
                    self.current = to;
                    self.focused = None;
                    self.typed.clear();
                }
            }
            "KEYCODE_HOME" | "3" => {
                if let Some(home) = self.app.home.clone() {
                    self.go(home);
                }
            }
            "KEYCODE_DEL" | "67" => {
                if let Some(field) = self.focused
                    && let Some(text) = self.typed.get_mut(&field)
                {
                    text.pop();
                }
            }
            "KEYCODE_ENTER" | "66" => {}
            other => {
                self.record(json!({"action": "key", "key": other, "error": "unknown key"}));
                return format!("Error: unknown key {other}\n").into_bytes();
            }
        }
        self.record(json!({"action": "key", "key": key, "screen": from, "to": self.current}));
        Vec::new()
    }

    fn launch(&mut self, package: &str) -> Vec<u8> {
        if package != self.app.package {
            self.record(json!({"action": "launch", "package": package, "error": "no such app"}));
            return b"** No activities found to run, monkey aborted.\n".to_vec();
        }
        let from = self.current.clone();
        self.history.clear();
        self.current = self.app.launch.clone();
        self.focused = None;
        self.typed.clear();
        self.record(
            json!({"action": "launch", "package": package, "screen": from, "to": self.current}),
        );
        b"  bash arg: -p\n  bash arg: 1\nEvents injected: 1\n".to_vec()
    }

    fn broadcast(&mut self, action: &str, rest: &[&str]) -> Vec<u8> {
        let done = format!(
            "Broadcasting: Intent {{ act={action} flg=0x400000 }}\nBroadcast completed: result=0\n"
        )
        .into_bytes();
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
                    Err(e) => return format!("Error: bad base64: {e}\n").into_bytes(),
                }
            }
            ("ADB_INPUT_TEXT", ["--es", "msg", text @ ..]) => {
                let text = text.join(" ");
                self.type_text(&text);
            }
            ("ADB_CLEAR_TEXT", _) => {
                if let Some(field) = self.focused {
                    self.typed.insert(field, String::new());
                    self.record(json!({"action": "clear", "screen": self.current}));
                }
            }
            _ => {}
        }
        done
    }

    fn type_text(&mut self, text: &str) {
        let from = self.current.clone();
        let Some(field) = self.focused else {
            self.record(json!({"action": "type", "text": text, "screen": from, "error": "no focused field"}));
            return;
        };
        let now = {
            let typed = self.typed.entry(field).or_default();
            typed.push_str(text);
            typed.clone()
        };
        let recorded = [now.clone(), String::new()].into_iter().find_map(|text| {
            let key = (from.clone(), Trigger::Type(field, text));
            self.app.transitions.get(&key).cloned()
        });
        self.record(json!({"action": "type", "text": text, "field": field, "screen": from, "to": recorded.as_deref().unwrap_or(&from)}));
        if let Some(to) = recorded {
            self.go(to);
        }
    }

    /// The current screen as `uiautomator dump` writes it (nodes flat under the root), typed
    /// text shown in its field.
    fn hierarchy_xml(&self) -> String {
        let mut xml = String::from(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
        );
        for (i, view) in self.views().iter().filter(|v| v.is_shown()).enumerate() {
            let Some([[l, t], [r, b]]) = view.bounds else {
                continue;
            };
            let text = view
                .bounds
                .and_then(|bounds| self.typed.get(&bounds).cloned())
                .or_else(|| view.text.clone())
                .unwrap_or_default();
            xml.push_str(&format!(
                "<node index=\"{i}\" text=\"{}\" resource-id=\"{}\" class=\"{}\" package=\"{}\" content-desc=\"{}\" checkable=\"{}\" checked=\"{}\" clickable=\"{}\" enabled=\"true\" focusable=\"{}\" focused=\"{}\" scrollable=\"{}\" long-clickable=\"{}\" password=\"false\" selected=\"{}\" bounds=\"[{l},{t}][{r},{b}]\" />",
                escape(&text),
                escape(view.resource_id.as_deref().unwrap_or("")),
                escape(view.class.as_deref().unwrap_or("")),
                escape(view.package.as_deref().unwrap_or(&self.app.package)),
                escape(view.content_description.as_deref().unwrap_or("")),
                view.checkable,
                view.checked,
                view.clickable,
                view.clickable || view.editable,
                view.bounds.is_some() && view.bounds == self.focused,
                view.scrollable,
                view.long_clickable,
                view.selected,
            ));
        }
        xml.push_str("</hierarchy>");
        xml
    }
}

/// The system properties agents read to name the device.
fn property(name: &str) -> &'static str {
    match name {
        "ro.product.model" => "Atlas_Simulator",
        "ro.product.manufacturer" => "Atlas",
        "ro.product.name" | "ro.product.device" => "atlas_sim",
        "ro.build.version.release" => "14",
        "ro.build.version.sdk" => "34",
        _ => "",
    }
}

fn usage(what: &str) -> Vec<u8> {
    format!("Error: usage: {what}\n").into_bytes()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A shell command's words: spaces separate them; single and double quotes group.
fn split(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn shell_words_split_at_spaces_and_group_in_quotes() {
        assert_eq!(split("input tap 10 20"), ["input", "tap", "10", "20"]);
        assert_eq!(
            split("input text 'a b' \"c\""),
            ["input", "text", "a b", "c"]
        );
        assert_eq!(split("ime set ''"), ["ime", "set", ""]);
    }
}
