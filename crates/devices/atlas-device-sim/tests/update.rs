//! Seeded updates of the DroidTask recordings: the same seed makes the same update, every kind of
//! change lands on every app, the phone reports the new version, and a step an update put a
//! screen in front of still gets where it went, one tap later.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use atlas_device::{Device, Point};
use atlas_device_sim::app::Trigger;
use atlas_device_sim::update::{Change, update};
use atlas_device_sim::{Phone, RecordedApp};

/// The DroidTask apps' recordings, or none (the test is skipped) where the data is not here.
fn recordings() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks");
    if !dir.is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return Vec::new();
    }
    atlas_device_sim::app::recording_folders(&dir).unwrap()
}

#[test]
fn the_same_seed_makes_the_same_update_and_another_seed_another() {
    let Some(dir) = recordings().into_iter().find(|d| d.ends_with("notes")) else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let (_, a) = update(&app, 5, &[]).unwrap();
    let (_, b) = update(&app, 5, &[]).unwrap();
    let (_, c) = update(&app, 6, &[]).unwrap();
    assert_eq!(a.said, b.said);
    assert_eq!(a.version, b.version);
    assert_ne!(a.said, c.said);
    assert_ne!(a.version, app.version);
}

#[test]
fn every_kind_of_change_lands_on_every_app() {
    for dir in recordings() {
        let app = RecordedApp::read(&dir).unwrap();
        for seed in 0..4 {
            let (next, update) = update(&app, seed, &[]).unwrap();
            for change in Change::ALL {
                assert!(
                    update.changes.get(&change).copied().unwrap_or(0) >= 1,
                    "{}: seed {seed}: no {change:?} in {:?}",
                    dir.display(),
                    update.said
                );
            }
            assert_eq!(
                update.changes.values().sum::<usize>(),
                update.said.len(),
                "{:?}",
                update.said
            );
            // Everything the update added is a screen of the app, reachable only through the
            // steps it redirected.
            for (from, trigger) in next.transitions.keys() {
                assert!(next.screens.contains_key(from), "{from}");
                if let Trigger::Tap(b) = trigger {
                    assert!(b[0][0] < b[1][0] && b[0][1] < b[1][1], "{b:?}");
                }
            }
            for to in next.transitions.values() {
                assert!(next.screens.contains_key(to), "{to}");
            }
        }
    }
}

#[test]
fn the_phone_reports_the_new_version_and_a_screen_put_in_the_way_lets_the_step_go_on() {
    let Some(dir) = recordings().into_iter().find(|d| d.ends_with("notes")) else {
        return;
    };
    let app = RecordedApp::read(&dir).unwrap();
    let (next, update) = update(&app, 11, &[]).unwrap();
    let package = app.package.clone();
    // A step the update put a dialog or a confirmation in front of: the old tap, then the tap
    // the update says goes on, reach where the old tap went.
    let (screen, bounds, through) = app
        .transitions
        .iter()
        .find_map(|((from, trigger), to)| {
            let Trigger::Tap(b) = trigger else {
                return None;
            };
            let now = next.transitions.get(&(from.clone(), trigger.clone()))?;
            (now != to && update.pass(now).is_some()).then(|| (from.clone(), *b, now.clone()))
        })
        .expect("a redirected step");
    let target = next.transitions[&(
        through.clone(),
        Trigger::Tap(update.pass(&through).unwrap()),
    )]
        .clone();
    assert_eq!(
        target,
        app.transitions[&(screen.clone(), Trigger::Tap(bounds))]
    );
    // The update says where the way on goes: a model that came another way can tell.
    assert_eq!(update.pass_to(&through), Some(target.as_str()));
    let phone = Arc::new(Mutex::new(Phone::new(next, Some(&screen)).unwrap()));
    let device = atlas_device_sim::device::in_process(phone.clone(), "sim");
    assert_eq!(
        device.app_version(&package).unwrap().as_deref(),
        Some(update.version.name.as_str())
    );
    assert_eq!(device.app_version("com.not.installed").unwrap(), None);
    let centre = |b: [[i64; 2]; 2]| Point {
        x: ((b[0][0] + b[1][0]) / 2) as u32,
        y: ((b[0][1] + b[1][1]) / 2) as u32,
    };
    device.tap(centre(bounds)).unwrap();
    assert_eq!(phone.lock().unwrap().current(), through);
    let widgets = device.hierarchy().unwrap();
    assert!(
        widgets.iter().any(|w| !w.text.is_empty()),
        "the added screen shows its texts: {widgets:?}"
    );
    device.tap(centre(update.pass(&through).unwrap())).unwrap();
    assert_eq!(phone.lock().unwrap().current(), target);
}
