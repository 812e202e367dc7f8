//! Debian's `adb` against the simulated phone, and Atlas's ADB backend through it: a DroidTask
//! app's recording replayed as a device, end to end over TCP.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atlas_device::{Device, DeviceError, Key, Point};
use atlas_device_adb::Adb;
use atlas_device_sim::{Phone, RecordedApp};

fn recording() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks/notes");
    dir.join("states").is_dir().then_some(dir)
}

/// The `adb` program; scripts/test.sh installs Debian's, so under CI its absence fails.
fn adb_installed() -> bool {
    let ok = Command::new("adb")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("adb is not installed, and scripts/test.sh installs it");
    }
    ok
}

/// The notes recording when it and Debian's adb are both here (else the test is skipped).
fn ready() -> Option<PathBuf> {
    let Some(dir) = recording() else {
        eprintln!("no DroidTask folder: skipped");
        return None;
    };
    if !adb_installed() {
        eprintln!("adb is not installed: skipped");
        return None;
    }
    Some(dir)
}

fn adb(args: &[&str]) -> String {
    let out = Command::new("adb").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[derive(serde::Deserialize)]
struct EventFile {
    event: serde_json::Value,
    start_state: String,
    stop_state: String,
}

#[test]
fn adb_and_the_adb_backend_drive_a_recorded_app() {
    let Some(dir) = ready() else { return };
    let app = RecordedApp::read(&dir).unwrap();
    let package = app.package.clone();
    let log = Arc::new(Mutex::new(Vec::<u8>::new()));
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (serial, phone) = serve(&dir, None);
    phone.lock().unwrap().log_to(Box::new(Shared(log.clone())));

    // A demonstrated run's taps, by coordinates through `adb shell input tap`, reach the
    // recorded screens.
    let mut events: Vec<(String, EventFile)> = std::fs::read_dir(dir.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let file: EventFile =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.display().to_string(), file)
        })
        .collect();
    events.sort_by(|a, b| a.0.cmp(&b.0));
    let mut replayed = 0;
    for (_, e) in &events {
        let kind = e.event["event_type"].as_str().unwrap_or("");
        if kind != "click" || phone.lock().unwrap().current() != e.start_state {
            continue;
        }
        let b = &e.event["view"]["bounds"];
        let (x, y) = (
            (b[0][0].as_i64().unwrap() + b[1][0].as_i64().unwrap()) / 2,
            (b[0][1].as_i64().unwrap() + b[1][1].as_i64().unwrap()) / 2,
        );
        adb(&[
            "-s",
            &serial,
            "shell",
            "input",
            "tap",
            &x.to_string(),
            &y.to_string(),
        ]);
        assert_eq!(
            phone.lock().unwrap().current(),
            e.stop_state,
            "tap at ({x}, {y})"
        );
        replayed += 1;
    }
    assert!(replayed >= 2, "only {replayed} recorded taps replayed");

    // Atlas's backend through the same adb.
    let device = Adb::with_program("adb".into(), Some(serial.clone()));
    device.launch(&package).unwrap();
    assert_eq!(device.current_app().unwrap().package, package);
    let shot = device.screenshot().unwrap();
    assert_eq!(
        (shot.width, shot.height),
        phone.lock().unwrap().screen_size()
    );
    let widgets = device.hierarchy().unwrap();
    assert!(widgets.len() > 3, "{widgets:?}");
    // Tap the launch screen's first recorded way on, then type Chinese into the field there.
    let field_run = events
        .iter()
        .find(|(_, e)| e.event["event_type"] == "set_text");
    if let Some((_, typing)) = field_run {
        *phone.lock().unwrap() = {
            let app = RecordedApp::read(&dir).unwrap();
            let mut fresh = Phone::new(app, Some(&typing.start_state)).unwrap();
            fresh.log_to(Box::new(Shared(log.clone())));
            fresh
        };
        let b = &typing.event["view"]["bounds"];
        let at = Point {
            x: ((b[0][0].as_i64().unwrap() + b[1][0].as_i64().unwrap()) / 2) as u32,
            y: ((b[0][1].as_i64().unwrap() + b[1][1].as_i64().unwrap()) / 2) as u32,
        };
        device.tap(at).unwrap();
        device.type_text("你好，世界").unwrap();
        let shown = device.hierarchy().unwrap();
        assert!(
            shown.iter().any(|w| w.text == "你好，世界"),
            "the typed text is in its field: {shown:?}"
        );
        assert_eq!(
            adb(&[
                "-s",
                &serial,
                "shell",
                "settings",
                "get",
                "secure",
                "default_input_method"
            ])
            .trim(),
            "com.android.inputmethod.latin/.LatinIME",
            "the previous input method is restored"
        );
        // The screenshot writes the typed text in its field: dark ink inside the field's box.
        let font = atlas_device_sim::render::Glyphs::find().is_some();
        if !font && std::env::var_os("CI").is_some() {
            panic!("no CJK font for the simulator, and scripts/test.sh installs one");
        }
        if font {
            let shot = device.screenshot().unwrap();
            let corner = |i: usize, j: usize| b[i][j].as_i64().unwrap();
            let field = (corner(0, 0), corner(0, 1), corner(1, 0), corner(1, 1));
            let ink = dark_pixels(&shot.png, shot.width as usize, field);
            assert!(
                ink > 200,
                "only {ink} dark pixels where 你好，世界 was typed"
            );
        }
    }
    // What Atlas's backend sent, as the simulator received it: its action log, line by line.
    let seen = |from: usize| -> Vec<serde_json::Value> {
        String::from_utf8(log.lock().unwrap()[from..].to_vec())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mark = log.lock().unwrap().len();
    let (a, b) = (Point { x: 300, y: 700 }, Point { x: 300, y: 1500 });
    device.launch(&package).unwrap();
    device.double_tap(a).unwrap();
    device.long_press(a, 800).unwrap();
    device.swipe(b, a, 400).unwrap();
    device.key(Key::Back).unwrap();
    device.key(Key::Home).unwrap();
    let actions = seen(mark);
    let kinds: Vec<&str> = actions
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["launch", "tap", "tap", "long_press", "swipe", "key", "key"],
        "{actions:?}"
    );
    assert_eq!(actions[1]["at"], serde_json::json!([300, 700]));
    assert_eq!(
        actions[2]["at"], actions[1]["at"],
        "a double tap is two taps at one point"
    );
    assert_eq!(actions[3]["ms"], 800);
    assert_eq!(actions[4]["from"], serde_json::json!([300, 1500]));
    assert_eq!(actions[4]["to"], serde_json::json!([300, 700]));
    assert_eq!(actions[5]["key"], "KEYCODE_BACK");
    assert_eq!(actions[6]["key"], "KEYCODE_HOME");

    // Open-AutoGLM's screenshot: saved on the phone, then pulled; a PNG the size of the screen,
    // the same picture `exec-out screencap -p` gives.
    let scratch = std::env::temp_dir().join(format!("atlas-sim-pull-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let pulled = scratch.join("tmp.png");
    adb(&["-s", &serial, "shell", "screencap", "-p", "/sdcard/tmp.png"]);
    adb(&[
        "-s",
        &serial,
        "pull",
        "/sdcard/tmp.png",
        pulled.to_str().unwrap(),
    ]);
    let png = std::fs::read(&pulled).unwrap();
    assert_eq!(
        atlas_device::png_size(&png),
        Some(phone.lock().unwrap().screen_size())
    );
    assert_eq!(png, device.screenshot().unwrap().png);
    // A file pushed comes back byte for byte; a missing one is adb's own error.
    let note = scratch.join("备忘.txt");
    std::fs::write(&note, "买牛奶 milk\n").unwrap();
    adb(&[
        "-s",
        &serial,
        "push",
        note.to_str().unwrap(),
        "/sdcard/备忘.txt",
    ]);
    assert_eq!(
        adb(&["-s", &serial, "shell", "cat", "/sdcard/备忘.txt"]),
        "买牛奶 milk\n"
    );
    // The phone holds what a phone holds: four 60 MB pushes fit, a fifth is refused as a full
    // phone's is (the simulator's memory does not grow with what hosts push).
    let big = scratch.join("big.bin");
    std::fs::write(&big, vec![7u8; 60 * 1024 * 1024]).unwrap();
    for i in 0..5 {
        let pushed = Command::new("adb")
            .args(["-s", &serial, "push", big.to_str().unwrap()])
            .arg(format!("/sdcard/big{i}.bin"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&pushed.stderr).into_owned()
            + &String::from_utf8_lossy(&pushed.stdout);
        if i < 4 {
            assert!(pushed.status.success(), "push {i}: {said}");
        } else {
            assert!(!pushed.status.success(), "a fifth 60 MB push fitted");
            assert!(said.contains("no space left"), "{said}");
        }
    }
    adb(&["-s", &serial, "shell", "rm", "/sdcard/big0.bin"]);
    let again = Command::new("adb")
        .args([
            "-s",
            &serial,
            "push",
            big.to_str().unwrap(),
            "/sdcard/big4.bin",
        ])
        .output()
        .unwrap();
    assert!(again.status.success(), "a removed file frees its space");
    for i in 1..5 {
        adb(&["-s", &serial, "shell", "rm", &format!("/sdcard/big{i}.bin")]);
    }
    let missing = Command::new("adb")
        .args([
            "-s",
            &serial,
            "pull",
            "/sdcard/nothing.png",
            scratch.join("x").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr).into_owned()
        + &String::from_utf8_lossy(&missing.stdout);
    assert!(said.contains("does not exist"), "{said}");
    std::fs::remove_dir_all(&scratch).unwrap();

    // Bad input is an error naming the device, never a panic.
    assert!(matches!(
        device.launch("com.example.nothing"),
        Err(DeviceError::Invalid(_))
    ));
    let off = device
        .tap(Point { x: 5000, y: 10 })
        .unwrap_err()
        .to_string();
    assert!(off.contains(&serial), "{off}");
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(log.contains("\"text\":\"你好，世界\""), "{log}");
    adb(&["disconnect", &serial]);
    // A device adb no longer has: an error naming it, not a panic.
    let offline = device.current_app().unwrap_err().to_string();
    assert!(offline.contains(&serial), "{offline}");
}

/// Pixels darker than mid-grey inside a box of a PNG the simulator wrote (RGB, 8 bits, rows
/// unfiltered in one zlib stream: the simulator's own encoding, not a general PNG reader).
fn dark_pixels(png: &[u8], width: usize, (l, t, r, b): (i64, i64, i64, i64)) -> usize {
    use std::io::Read;
    let mut at = 8;
    let mut compressed = Vec::new();
    while at + 8 <= png.len() {
        let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        if &png[at + 4..at + 8] == b"IDAT" {
            compressed.extend_from_slice(&png[at + 8..at + 8 + length]);
        }
        at += 12 + length;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&compressed[..])
        .read_to_end(&mut raw)
        .unwrap();
    let row = 1 + width * 3;
    let mut dark = 0;
    for y in t.max(0) as usize..b.max(0) as usize {
        for x in l.max(0) as usize..r.max(0) as usize {
            let p = y * row + 1 + x * 3;
            if p + 2 < raw.len() && raw[p] < 100 && raw[p + 1] < 100 && raw[p + 2] < 100 {
                dark += 1;
            }
        }
    }
    dark
}

/// What `adb -s SERIAL shell LINE` printed on stdout and its exit status.
fn shell(serial: &str, line: &str) -> (String, Option<i32>) {
    let out = Command::new("adb")
        .args(["-s", serial, "shell", line])
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

/// Serves a phone on the recording's launch screen (or `start`) to Debian's adb; its serial.
fn serve(dir: &Path, start: Option<&str>) -> (String, Arc<Mutex<Phone>>) {
    let app = RecordedApp::read(dir).unwrap();
    let phone = Arc::new(Mutex::new(Phone::new(app, start).unwrap()));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let serial = listener.local_addr().unwrap().to_string();
    {
        let phone = phone.clone();
        std::thread::spawn(move || atlas_device_sim::adb::serve(listener, phone));
    }
    assert!(adb(&["connect", &serial]).contains("connected"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !adb(&["devices"]).contains(&format!("{serial}\tdevice")) {
        assert!(Instant::now() < deadline, "the simulator never came online");
        std::thread::sleep(Duration::from_millis(100));
    }
    (serial, phone)
}

/// The commands DroidBot (`droidbot/adapter/adb.py`), Open-AutoGLM and common test scripts send,
/// through Debian's adb, answered as a phone answers them — exit statuses included.
#[test]
fn common_adb_clients_commands_are_answered_as_a_phone_answers() {
    let Some(dir) = ready() else { return };
    let (serial, phone) = serve(&dir, None);
    let package = RecordedApp::read(&dir).unwrap().package;
    let (w, h) = phone.lock().unwrap().screen_size();
    let ok = |line: &str| ok_on(&serial, line);
    // Exit statuses reach the host (the shell protocol), as on a phone.
    assert_eq!(shell(&serial, "false").1, Some(1));
    assert_eq!(shell(&serial, "nosuchcommand").1, Some(127));
    assert_eq!(shell(&serial, "exit 3").1, Some(3));
    // Commands joined and piped.
    assert_eq!(ok("echo a && echo b; false || echo c"), "a\nb\nc\n");
    let focus = ok("dumpsys window windows | grep -E 'mCurrentFocus|mFocusedApp'");
    assert_eq!(focus.lines().count(), 2, "{focus}");
    assert!(focus.contains(&package), "{focus}");
    // What DroidBot reads of the display, in the forms its regular expressions expect.
    let display = ok("dumpsys display");
    let size = format!("deviceWidth={w}, deviceHeight={h}");
    assert!(
        display
            .lines()
            .any(|l| l.contains("DisplayViewport{valid=true, ")
                && l.contains("orientation=0, ")
                && l.contains(&size)),
        "{display}"
    );
    assert_eq!(ok("wm density"), "Physical density: 440\n");
    assert!(
        ok("pm list packages -f")
            .lines()
            .any(|l| l == format!("package:/data/app/{package}-1/base.apk={package}"))
    );
    assert!(ok("pm list packages").contains(&format!("package:{package}\n")));
    assert_eq!(
        ok("settings get secure enabled_accessibility_services"),
        "null\n"
    );
    ok("settings put secure enabled_accessibility_services a/.B");
    assert_eq!(
        ok("settings get secure enabled_accessibility_services"),
        "a/.B\n"
    );
    assert!(ok("dumpsys activity activities").contains(&format!(
        "mResumedActivity: ActivityRecord{{b1e55ed u0 {package}/"
    )));
    // DroidBot's reading of the activity stack (`device.py`): a task line, then `* Hist #N:`.
    let stack = ok("dumpsys activity activities");
    assert!(stack.lines().any(|l| l.trim() == "Task id #1"), "{stack}");
    assert!(
        stack
            .lines()
            .any(|l| l.trim().starts_with("* Hist #0: ActivityRecord{")
                && l.contains(&format!(" {package}/"))
                && l.trim_end().ends_with(" t1}")),
        "{stack}"
    );
    assert_eq!(
        ok(&format!("pm path {package}")),
        format!("package:/data/app/{package}-1/base.apk\n")
    );
    assert_eq!(shell(&serial, "pm path com.example.nothing").1, Some(1));
    assert!(ok("dumpsys activity services").starts_with("ACTIVITY MANAGER SERVICES"));
    assert!(ok("dumpsys input").contains("SurfaceOrientation: 0"));
    assert_eq!(ok("getprop ro.sf.lcd_density"), "440\n");
    assert!(ok("ps").contains(&package));
    ok("settings put secure accessibility_enabled 1");
    // Starting and stopping the app.
    let launch = phone.lock().unwrap().current().to_string();
    // DroidBot's and AndroidViewClient's way: `ACTIVITY pkg/activity … pid=N`.
    let activity = ok("dumpsys activity top | grep ACTIVITY");
    assert!(activity.contains(" pid="), "{activity}");
    let component = activity
        .split_whitespace()
        .find(|w| w.contains('/'))
        .unwrap()
        .to_string();
    ok(&format!("am force-stop {package}"));
    assert!(ok(&format!("am start -n {component}")).contains("Starting: Intent"));
    assert_eq!(phone.lock().unwrap().current(), launch);
    assert_eq!(
        shell(&serial, "am start -n com.example.nothing/.Main").1,
        Some(1)
    );
    // Keys by name and by code; a swipe from the touchscreen; files and folders.
    for key in ["BACK", "HOME", "MENU", "KEYCODE_MENU", "82", "ENTER"] {
        ok(&format!("input keyevent {key}"));
    }
    assert_eq!(shell(&serial, "input keyevent NOSUCHKEY").1, Some(1));
    ok("input touchscreen swipe 100 800 100 300 200");
    ok("mkdir /sdcard/atlas && mkdir -p /sdcard/atlas/a/b");
    assert!(ok("ls /sdcard").lines().any(|l| l == "atlas"));
    assert_eq!(shell(&serial, "mkdir /sdcard/atlas").1, Some(1));
    assert!(ok("logcat -d").starts_with("--------- beginning of main"));
    // The screen's dump straight to the terminal.
    let xml = ok("uiautomator dump /dev/tty");
    assert!(
        xml.starts_with("<?xml") && xml.contains("</hierarchy>"),
        "{xml}"
    );
    adb(&["disconnect", &serial]);

    // Typing through `input text`, `%s` a space as Android reads it, into a field just tapped.
    let events = std::fs::read_dir(dir.join("events")).unwrap();
    let typing = events
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter_map(|text| serde_json::from_str::<EventFile>(&text).ok())
        .find(|e| e.event["event_type"] == "set_text")
        .expect("the notes recording types somewhere");
    let (serial, _) = serve(&dir, Some(&typing.start_state));
    let b = &typing.event["view"]["bounds"];
    let (x, y) = (
        (b[0][0].as_i64().unwrap() + b[1][0].as_i64().unwrap()) / 2,
        (b[0][1].as_i64().unwrap() + b[1][1].as_i64().unwrap()) / 2,
    );
    ok_on(&serial, &format!("input tap {x} {y}"));
    ok_on(&serial, "input text hello%sworld");
    let xml = ok_on(&serial, "uiautomator dump /dev/tty");
    assert!(xml.contains("text=\"hello world\""), "{xml}");
    adb(&["disconnect", &serial]);
}

fn ok_on(serial: &str, line: &str) -> String {
    let (out, code) = shell(serial, line);
    assert_eq!(code, Some(0), "`{line}` failed: {out}");
    out
}
