//! The simulated phone driven in-process through Atlas's ADB backend (no adb program): the
//! same commands as over the wire, on the DroidTask `notes` recording.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use atlas_device::{Device, DeviceError, Key, Point};
use atlas_device_sim::app::Trigger;
use atlas_device_sim::typing::Bounds;
use atlas_device_sim::{Phone, RecordedApp};

/// The DroidTask apps' recordings folder, or `app`'s recording in it; none (the test is skipped)
/// where the data is not here.
fn droidtask(app: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks")
        .join(app);
    let here = if app.is_empty() {
        dir.is_dir()
    } else {
        dir.join("states").is_dir()
    };
    if !here {
        eprintln!("no DroidTask folder: skipped");
    }
    here.then_some(dir)
}

#[test]
fn the_backend_drives_the_phone_in_process() {
    let Some(dir) = droidtask("notes") else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let package = app.package.clone();
    // The first recorded tap from the launch screen, and where it leads.
    let (bounds, to) = app
        .transitions
        .iter()
        .find_map(|((from, trigger), to)| match trigger {
            atlas_device_sim::app::Trigger::Tap(b) if *from == app.launch => Some((*b, to.clone())),
            _ => None,
        })
        .expect("a recorded tap on the launch screen");
    let phone = Arc::new(Mutex::new(Phone::new(app, None).unwrap()));
    let device = atlas_device_sim::device::in_process(phone.clone(), "sim-notes");
    assert_eq!(device.current_app().unwrap().package, package);
    let shot = device.screenshot().unwrap();
    assert_eq!(
        (shot.width, shot.height),
        phone.lock().unwrap().screen_size()
    );
    assert!(device.hierarchy().unwrap().len() > 3);
    let centre = Point {
        x: ((bounds[0][0] + bounds[1][0]) / 2) as u32,
        y: ((bounds[0][1] + bounds[1][1]) / 2) as u32,
    };
    device.tap(centre).unwrap();
    assert_eq!(phone.lock().unwrap().current(), to);
    device.key(Key::Back).unwrap();
    device.launch(&package).unwrap();
    assert!(matches!(
        device.launch("com.example.none"),
        Err(DeviceError::Invalid(_))
    ));
    let off = device
        .tap(Point { x: 99_999, y: 1 })
        .unwrap_err()
        .to_string();
    assert!(off.contains("sim-notes"), "{off}");
}

/// What the phone's dump shows is what a person sees: DroidBot recorded the views of a pager's
/// other pages too, marked not visible, and `uiautomator dump` leaves such views out.
#[test]
fn views_off_the_screen_are_not_in_the_dump() {
    let Some(dir) = droidtask("clock") else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    // A screen with a labelled view recorded as not visible, whose label no shown view has.
    let (screen, hidden) = app
        .screens
        .values()
        .find_map(|s| {
            let shown: Vec<&str> = s
                .views
                .iter()
                .filter(|v| v.is_shown())
                .filter_map(|v| v.text.as_deref())
                .collect();
            s.views
                .iter()
                .filter(|v| !v.is_shown())
                .filter_map(|v| v.text.clone())
                .find(|t| !t.is_empty() && !shown.contains(&t.as_str()))
                .map(|t| (s.state_str.clone(), t))
        })
        .expect("the clock's pager keeps its other tabs' views");
    let shown_count = app.screens[&screen]
        .views
        .iter()
        .filter(|v| v.is_shown() && v.bounds.is_some())
        .count();
    let phone = Arc::new(Mutex::new(Phone::new(app, Some(&screen)).unwrap()));
    let device = atlas_device_sim::device::in_process(phone, "sim-clock");
    let widgets = device.hierarchy().unwrap();
    assert!(!widgets.is_empty() && widgets.len() <= shown_count);
    assert!(
        widgets.iter().all(|w| w.text != hidden),
        "{hidden:?} is off the screen"
    );
}

/// Every field a DroidTask app's recording types into shows what is typed after a tap on it,
/// in every app (a toolbar's search field, a dialog's text field, a note's body).
#[test]
fn typing_after_a_tap_shows_in_the_field_in_every_app() {
    let Some(root) = droidtask("") else {
        return;
    };
    let mut apps = 0;
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(app) = RecordedApp::read(&dir) else {
            continue;
        };
        let fields: Vec<(String, [[i64; 2]; 2])> = app
            .transitions
            .keys()
            .filter_map(|(from, trigger)| match trigger {
                atlas_device_sim::app::Trigger::Type(field, _) => Some((from.clone(), *field)),
                _ => None,
            })
            .collect();
        if fields.is_empty() {
            continue;
        }
        apps += 1;
        let mut phone = Phone::new(app, None).unwrap();
        for (screen, field) in fields {
            phone.reset(Some(&screen)).unwrap();
            let (x, y) = (
                (field[0][0] + field[1][0]) / 2,
                (field[0][1] + field[1][1]) / 2,
            );
            phone.run(&format!("input tap {x} {y}"));
            if phone.current() != screen {
                continue;
            }
            phone.run("input text zq%sxw");
            let xml = String::from_utf8(phone.run("uiautomator dump /dev/tty")).unwrap();
            if !xml.contains("zq xw") && phone.current() == screen {
                missing.push(format!("{}: {screen} {field:?}", dir.display()));
            }
        }
    }
    assert!(apps >= 2, "only {apps} apps type anywhere");
    assert!(missing.is_empty(), "typed text not shown: {missing:#?}");
}

/// The recorded taps that open a screen with a text field focused (a search bar opened, a
/// dialog asking for a name, a new event's form), in every app: ADB Keyboard's typing, as
/// Open-AutoGLM sends it, shows in that field's `text` in the dump and in the screenshot.
#[test]
fn typing_on_the_screen_a_tap_opened_shows_in_its_focused_field() {
    let Some(root) = droidtask("") else {
        return;
    };
    let (mut cases, mut apps) = (0, 0);
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let Ok(app) = RecordedApp::read(&entry.unwrap().path()) else {
            continue;
        };
        let focused = |screen: &str| {
            app.screens[screen]
                .views
                .iter()
                .find(|v| v.is_shown() && v.editable && v.focused)
                .and_then(|v| v.bounds)
        };
        let taps: Vec<(String, Bounds, String, Bounds)> = app
            .transitions
            .iter()
            .filter_map(|((from, trigger), to)| match trigger {
                Trigger::Tap(b) if from != to && focused(from).is_none() => {
                    Some((from.clone(), *b, to.clone(), focused(to)?))
                }
                _ => None,
            })
            .collect();
        apps += usize::from(!taps.is_empty());
        let mut phone = Phone::new(app.clone(), None).unwrap();
        phone.run("ime set com.android.adbkeyboard/.AdbIME");
        for (from, tap, to, field) in taps {
            phone.reset(Some(&from)).unwrap();
            let (x, y) = ((tap[0][0] + tap[1][0]) / 2, (tap[0][1] + tap[1][1]) / 2);
            phone.run(&format!("input tap {x} {y}"));
            if phone.current() != to {
                continue; // the tap's centre is on a smaller view with a tap of its own
            }
            let before = field_pixels(&mut phone, field);
            phone.run("am broadcast -a ADB_INPUT_B64 --es msg 5Lmw6I+cIGxpc3Q=");
            if phone.current() != to {
                continue; // a recorded typing of the same text led on
            }
            cases += 1;
            let xml = String::from_utf8(phone.run("uiautomator dump /dev/tty")).unwrap();
            if !xml.contains("text=\"买菜 list\"") || field_pixels(&mut phone, field) == before {
                missing.push(format!("{from} → {to}"));
            }
        }
    }
    assert!(apps >= 3 && cases >= 20, "{cases} taps in {apps} apps");
    assert!(missing.is_empty(), "typed text not shown: {missing:#?}");
}

/// The screen's pixels inside `bounds`, as the framebuffer sends them.
fn field_pixels(phone: &mut Phone, bounds: [[i64; 2]; 2]) -> Vec<u8> {
    let width = phone.screen_size().0 as usize;
    let frame = phone.framebuffer();
    let pixels = &frame[13 * 4..];
    let [[l, t], [r, b]] = bounds.map(|p| p.map(|v| v.max(0) as usize));
    (t..b)
        .flat_map(|y| pixels[(y * width + l) * 4..(y * width + r) * 4].to_vec())
        .collect()
}

/// A field's text stays while a dialog of its activity is open over it and is there when
/// the dialog closes (the recorded screen after it shows the recording's text otherwise).
#[test]
fn typed_text_is_there_again_when_a_dialog_over_it_closes() {
    let Some(dir) = droidtask("calendar") else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let field_key = |screen: &str, id: &str| {
        app.screens[screen]
            .views
            .iter()
            .find(|v| v.is_shown() && v.editable && v.resource_id.as_deref() == Some(id))
            .and_then(|v| v.bounds)
    };
    let title = "com.simplemobiletools.calendar:id/event_title";
    let activity = |s: &str| app.screens[s].foreground_activity.clone();
    // A form with the title, a tap to a dialog of the same activity without it, a tap from
    // the dialog to a form with the title again.
    let taps: Vec<(&String, [[i64; 2]; 2], &String)> = app
        .transitions
        .iter()
        .filter_map(|((from, trigger), to)| match trigger {
            Trigger::Tap(b) => Some((from, *b, to)),
            _ => None,
        })
        .collect();
    let chains = taps.iter().flat_map(|&(form, open, dialog)| {
        let opens = field_key(form, title).is_some()
            && field_key(dialog, title).is_none()
            && activity(dialog) == activity(form);
        taps.iter()
            .filter(move |(d, _, back)| opens && *d == dialog && field_key(back, title).is_some())
            .map(move |&(_, close, back)| (form, open, dialog, close, back))
    });
    let centre = |b: [[i64; 2]; 2]| {
        format!(
            "input tap {} {}",
            (b[0][0] + b[1][0]) / 2,
            (b[0][1] + b[1][1]) / 2
        )
    };
    let mut tried = 0;
    let mut phone = Phone::new(app.clone(), None).unwrap();
    let back = chains
        .filter_map(|(form, open, dialog, close, back)| {
            tried += 1;
            phone.reset(Some(form)).unwrap();
            phone.run(&centre(field_key(form, title)?));
            phone.run("input text zq%sxw");
            (phone.current() == form).then_some(())?;
            phone.run(&centre(open));
            (phone.current() == dialog).then_some(())?;
            phone.run(&centre(close));
            (phone.current() == back).then_some(back)
        })
        .next()
        .unwrap_or_else(|| panic!("none of {tried} ways through a dialog of the form is a tap's"));
    let xml = String::from_utf8(phone.run("uiautomator dump /dev/tty")).unwrap();
    assert!(xml.contains("text=\"zq xw\""), "{xml}");
    // Select-all and Del clear it, as on a phone; Back to the app's start forgets it.
    phone.run(&centre(field_key(back, title).unwrap()));
    phone.run("input keycombination KEYCODE_CTRL_LEFT KEYCODE_A");
    phone.run("input keyevent KEYCODE_DEL");
    let xml = String::from_utf8(phone.run("uiautomator dump /dev/tty")).unwrap();
    assert!(!xml.contains("zq xw"), "{xml}");
}

/// A checkbox tapped where the recording has no tap on it toggles, as a phone's does: the dump
/// shows it checked the other way until the screen changes (a recording has a toggle's other
/// state only where someone tapped it there).
#[test]
fn a_toggle_the_recording_never_tapped_still_toggles() {
    let Some(dir) = droidtask("messenger") else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let (screen, bounds) = app
        .screens
        .iter()
        .find_map(|(state, screen)| {
            let view = screen.views.iter().find(|v| {
                v.checkable
                    && v.is_shown()
                    && v.bounds.is_some_and(|b| {
                        !app.transitions.keys().any(|(from, trigger)| {
                        from == state
                            && matches!(trigger, atlas_device_sim::app::Trigger::Tap(t) if *t == b)
                    })
                    })
            })?;
            Some((state.clone(), view.bounds?))
        })
        .expect("a checkbox nobody tapped");
    let mut phone = Phone::new(app, None).unwrap();
    phone.reset(Some(&screen)).unwrap();
    let phone = Arc::new(Mutex::new(phone));
    let device = atlas_device_sim::device::in_process(phone.clone(), "sim-messenger");
    let rect = format!(
        "[{},{}][{},{}]",
        bounds[0][0], bounds[0][1], bounds[1][0], bounds[1][1]
    );
    let checked = || {
        device
            .hierarchy()
            .unwrap()
            .into_iter()
            .find(|w| w.bounds == rect)
            .and_then(|w| w.checked)
    };
    let before = checked().expect("the checkbox in the dump");
    let centre = Point {
        x: ((bounds[0][0] + bounds[1][0]) / 2) as u32,
        y: ((bounds[0][1] + bounds[1][1]) / 2) as u32,
    };
    device.tap(centre).unwrap();
    assert_eq!(phone.lock().unwrap().current(), screen, "no screen change");
    assert_eq!(checked(), Some(!before));
    device.tap(centre).unwrap();
    assert_eq!(checked(), Some(before));
    device.tap(centre).unwrap();
    device.key(Key::Back).unwrap();
    phone.lock().unwrap().reset(Some(&screen)).unwrap();
    assert_eq!(
        checked(),
        Some(before),
        "a fresh screen shows the recording"
    );
}

/// The phone's shell as adbutils and AndroidViewClient use it: the status through `$?`, files
/// written by redirection and copied, `test`, all inside the phone's own storage.
#[test]
fn the_shell_keeps_status_variables_and_files_as_a_phones_does() {
    let Some(dir) = droidtask("notes") else {
        return;
    };
    let mut phone = Phone::new(RecordedApp::read(&dir).unwrap(), None).unwrap();
    let mut run = |line: &str| {
        let out = phone.execute(line);
        (String::from_utf8(out.stdout).unwrap(), out.code)
    };
    // adbutils' shell2 without shell_v2: the command, then its status after a marker.
    assert_eq!(run("false; echo X4EXIT:$?").0, "X4EXIT:1\n");
    assert_eq!(run("nothing-here; echo X4EXIT:$?").0, "X4EXIT:127\n");
    // AndroidViewClient's dump: into a file, copied, read back.
    assert_eq!(
        run("uiautomator dump /sdcard/w.xml >/dev/null && cp /sdcard/w.xml /data/local/tmp/ && test -f /data/local/tmp/w.xml && echo copied").0,
        "copied\n"
    );
    assert!(run("cat /data/local/tmp/w.xml").0.starts_with("<?xml"));
    assert_eq!(
        run("D=/sdcard/n.txt; echo -n one > $D; echo two >> $D; cat $D").0,
        "onetwo\n"
    );
    assert_eq!(run("echo x > /system/x").1, 1);
    assert_eq!(
        run("[ -d /sdcard ] && [ ! -e /system/x ] && echo ok").0,
        "ok\n"
    );
    assert_eq!(run("cp /sdcard/none /sdcard/other").1, 1);
}

/// The launcher the recording went home to is an installed app: listed, and started by its
/// activity as `dumpsys activity top` names it.
#[test]
fn the_recordings_launcher_is_an_installed_app() {
    let Some(dir) = droidtask("notes") else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let package = app.package.clone();
    let mut phone = Phone::new(app, None).unwrap();
    let mut run = |line: &str| {
        let out = phone.execute(line);
        (String::from_utf8(out.stdout).unwrap(), out.code)
    };
    run("input keyevent HOME");
    let top = run("dumpsys activity top | grep ACTIVITY").0;
    let component = top.split_whitespace().nth(1).unwrap().to_string();
    let launcher = component.split('/').next().unwrap().to_string();
    assert_ne!(launcher, package, "{top}");
    assert!(
        run("pm list packages")
            .0
            .contains(&format!("package:{launcher}\n"))
    );
    run(&format!("monkey -p {package} 1"));
    let (said, code) = run(&format!("am start -n {component}"));
    assert_eq!(code, 0, "{said}");
    assert!(run("dumpsys activity top").0.contains(&component));
}
