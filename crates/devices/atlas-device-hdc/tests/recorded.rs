//! The whole HDC backend against recorded outputs: no `hdc` or HarmonyOS phone exists here, so a
//! stand-in program (a shell script, named by `with_program` as `ATLAS_HDC` would) writes down
//! every command line it is given and answers as hdc and the phone answer in OpenHarmony's
//! documentation — `uitest` saying `No Error`, `aa dump -l`'s mission list, `file recv`
//! delivering the file. The test checks the command lines the backend sends and what it makes
//! of the answers.

use std::path::{Path, PathBuf};

use atlas_device::{AppCatalog, Device, Key, Point};
use atlas_device_hdc::Hdc;

const KEY: &str = "FMR0223C13000649";

/// `aa dump -l` with the notes app in front (the shape of the aa tool's documentation).
const MISSIONS: &str = "User ID #100\n  current mission lists:{\n    Mission ID #141  mission name #[#com.example.notes:entry:EntryAbility]  lockedState #0\n      AbilityRecord ID #52\n        app name [com.example.notes]\n        main name [EntryAbility]\n        bundle name [com.example.notes]\n        ability type [PAGE]\n        state #FOREGROUND\n";

/// A `uitest dumpLayout` tree: a title, a text field and a button.
const LAYOUT: &str = r#"{"attributes": {"type": "root", "text": "", "bounds": "[0,0][1260,2720]"}, "children": [
  {"attributes": {"type": "Text", "id": "title", "text": "记事本", "clickable": "false", "bounds": "[0,100][1260,220]"}, "children": []},
  {"attributes": {"type": "TextInput", "id": "note", "text": "", "clickable": "true", "bounds": "[40,300][1220,420]"}, "children": []},
  {"attributes": {"type": "Button", "id": "save", "text": "保存", "clickable": "true", "bounds": "[40,500][600,620]"}, "children": []}
]}"#;

/// A PNG's signature and header chunk for a 1260×2720 screen (what the size is read from).
fn png_header() -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    png.extend(1260u32.to_be_bytes());
    png.extend(2720u32.to_be_bytes());
    png.extend([8, 2, 0, 0, 0, 0, 0, 0, 0]);
    png
}

/// The stand-in `hdc`: logs its arguments one run per line, answers by the command.
fn stand_in(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("commands.log");
    std::fs::write(dir.join("missions.txt"), MISSIONS).unwrap();
    std::fs::write(dir.join("layout.json"), LAYOUT).unwrap();
    std::fs::write(dir.join("shot.png"), png_header()).unwrap();
    let script = format!(
        r#"#!/bin/sh
echo "$*" >> '{log}'
case "$*" in
  *"uitest uiInput"*) echo "No Error" ;;
  *"uitest screenCap"*) echo "ScreenCap saved to $7" ;;
  *"uitest dumpLayout"*) echo "DumpLayout saved to:$7" ;;
  *"aa dump -l"*) cat '{dir}/missions.txt' ;;
  *"aa start -b com.example.notes "*) echo "start ability successfully." ;;
  *"aa start"*) echo "error: failed to start ability." ;;
  *"file recv"*"atlas-shot.png"*) cp '{dir}/shot.png' "$6"; echo "FileTransfer finish, Size:29, File count = 1, time:3ms rate:9.67kB/s" ;;
  *"file recv"*"atlas-layout.json"*) cp '{dir}/layout.json' "$6"; echo "FileTransfer finish, Size:512, File count = 1, time:3ms rate:170kB/s" ;;
  *) echo "[Fail]Unknown command: $*" ;;
esac
"#,
        log = log.display(),
        dir = dir.display()
    );
    let program = dir.join("hdc");
    std::fs::write(&program, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    (program, log)
}

#[test]
fn the_hdc_backend_sends_documented_command_lines_and_reads_recorded_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (program, log) = stand_in(dir.path());
    let mut catalog = AppCatalog::builtin();
    catalog.add("记事本", None, Some("com.example.notes".into()));
    let hdc = Hdc::with_program(program, Some(KEY.into())).with_catalog(catalog);

    let shot = hdc.screenshot().unwrap();
    assert_eq!((shot.width, shot.height), (1260, 2720));
    let app = hdc.current_app().unwrap();
    assert_eq!(app.package, "com.example.notes");
    assert_eq!(app.activity.as_deref(), Some("EntryAbility"));
    assert_eq!(app.name.as_deref(), Some("记事本"));
    let widgets = hdc.hierarchy().unwrap();
    assert!(widgets.iter().any(|w| w.text == "保存"), "{widgets:?}");
    hdc.launch("记事本").unwrap();
    let field = Point { x: 630, y: 360 };
    hdc.tap(field).unwrap();
    hdc.type_text("买牛奶").unwrap();
    hdc.double_tap(Point { x: 320, y: 560 }).unwrap();
    hdc.long_press(Point { x: 320, y: 560 }, 1500).unwrap();
    hdc.swipe(Point { x: 630, y: 2000 }, Point { x: 630, y: 800 }, 400)
        .unwrap();
    hdc.key(Key::Back).unwrap();
    hdc.key(Key::Home).unwrap();
    // An app the phone cannot start, and a name nobody catalogued: errors, not panics.
    let refused = hdc.launch("com.example.missing").unwrap_err().to_string();
    assert!(
        refused.contains(KEY) && refused.contains("failed"),
        "{refused}"
    );
    assert!(hdc.launch("不存在的应用").is_err());

    // A dump that is not one: an error naming the device and the command.
    std::fs::write(
        dir.path().join("layout.json"),
        "<html>uitest crashed</html>",
    )
    .unwrap();
    let broken = hdc.hierarchy().unwrap_err().to_string();
    assert!(
        broken.contains(KEY) && broken.contains("dumpLayout"),
        "{broken}"
    );

    let sent = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = sent.lines().collect();
    let expected = [
        format!("-t {KEY} shell uitest screenCap -p /data/local/tmp/atlas-shot.png"),
        format!("-t {KEY} file recv /data/local/tmp/atlas-shot.png "),
        format!("-t {KEY} shell aa dump -l"),
        format!("-t {KEY} shell uitest dumpLayout -p /data/local/tmp/atlas-layout.json"),
        format!("-t {KEY} file recv /data/local/tmp/atlas-layout.json "),
        format!("-t {KEY} shell aa start -b com.example.notes -a EntryAbility"),
        format!("-t {KEY} shell uitest uiInput click 630 360"),
        format!("-t {KEY} shell uitest uiInput inputText 630 360 买牛奶"),
        format!("-t {KEY} shell uitest uiInput doubleClick 320 560"),
        format!("-t {KEY} shell uitest uiInput longClick 320 560"),
        format!("-t {KEY} shell uitest uiInput swipe 630 2000 630 800"),
        format!("-t {KEY} shell uitest uiInput keyEvent Back"),
        format!("-t {KEY} shell uitest uiInput keyEvent Home"),
        format!("-t {KEY} shell aa start -b com.example.missing -a EntryAbility"),
    ];
    assert_eq!(lines.len(), expected.len() + 2, "{sent}");
    for (line, want) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(want.as_str()),
            "sent {line:?}, expected {want:?}"
        );
    }
}
