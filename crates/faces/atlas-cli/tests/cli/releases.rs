//! A real web application released again: Roundup 2.2.0 (a Python issue tracker from PyPI)
//! explored, then upgraded in place to Roundup 2.6.0 (its data kept, its templates the new
//! release's) on the same address and explored again from what the folder knows. The figures
//! against a fresh exploration of the new release are `scripts/release-figures.sh roundup`'s.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::explore::{KillOnDrop, atlas, explore_command, replay_nav_script, states, tasks_in};

/// What a task sends, across releases: its action, label, the link's target or the form's
/// address and field names (as the explorer's own key does).
fn sends(task: &Value) -> String {
    let p = &task["parameters"];
    let mut fields: Vec<String> = p["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| format!("{}:{}", f["name"], f["type"]))
        .collect();
    fields.sort();
    let place = match p["href"].as_str() {
        Some(href) => href.to_string(),
        None if !fields.is_empty() => format!("{} {}", p["action"], fields.join(",")),
        None => task["selector"].as_str().unwrap_or_default().to_string(),
    };
    format!(
        "{} {} {place} {}",
        task["action"],
        p["label"],
        if p["refill"] == true { "again" } else { "" }
    )
}

/// `scripts/roundup-tracker.sh` with these arguments, which must succeed.
fn tracker_script(script: &Path, args: &[&str], home: &Path) {
    let status = Command::new(script).args(args).arg(home).status().unwrap();
    assert!(status.success(), "roundup-tracker.sh {args:?}");
}

/// The tracker in `home` served by `release` at `port`, until dropped.
fn serve(script: &Path, release: &str, port: u16, home: &Path) -> KillOnDrop {
    let server = KillOnDrop({
        let mut c = Command::new(script);
        c.process_group(0);
        c.args(["serve", release, &port.to_string()])
            .arg(home)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .dies_with_test()
            .spawn()
            .unwrap()
    });
    until_answers(
        &format!("http://127.0.0.1:{port}/demo/"),
        &format!("Roundup {release}"),
        Duration::from_secs(60),
    );
    server
}

#[test]
fn a_real_tracker_released_again_is_re_explored_from_what_the_folder_knows() {
    let Some(chromium) = chromium() else { return };
    let Some(script) = installed_at("ATLAS_ROUNDUP", "Roundup 2.2.0 and 2.6.0") else {
        return;
    };
    let script = Path::new(&script);
    let dir = tempfile::tempdir().unwrap();
    let (site, data) = (dir.path().join("site"), dir.path().join("data"));
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/demo");
    let explore = |release: &str, report: &str| {
        let _tracker = serve(script, release, port, &site);
        let path = dir.path().join(report);
        report_of(
            explore_command(&base, &data, &chromium)
                .args(["--app-id", "roundup", "--app-version", release])
                .args(["--credentials", "admin:admin", "--max-states", "40"])
                .args(["--max-seconds", "400", "--json"])
                .arg(&path),
            &path,
        )
    };
    tracker_script(script, &["make", "2.2.0"], &site);
    let first = explore("2.2.0", "first.json");
    let old: Vec<Value> = states(&data.join("apps/roundup"));
    let done_before: Vec<Vec<String>> = old
        .iter()
        .map(|s| tasks_in(s, "completed").iter().map(sends).collect())
        .collect();
    tracker_script(script, &["upgrade", "2.6.0"], &site);
    let again = explore("2.6.0", "again.json");
    let known: Vec<Value> = states(&data.join("apps/roundup"));
    eprintln!(
        "Roundup 2.2.0 explored in {:.1} s ({} states, {} actions); 2.6.0 re-explored in {:.1} s ({} actions): {}",
        first["seconds"].as_f64().unwrap(),
        first["states"],
        first["actions"],
        again["seconds"].as_f64().unwrap(),
        again["actions"],
        again["release"]
    );

    // Every state known before was checked: the same, changed, or gone; none deleted, each
    // still its page.
    let release = &again["release"];
    assert_eq!(release["previous"], "2.2.0", "{again}");
    assert_eq!(release["version"], "2.6.0");
    let list = |key: &str| release[key].as_array().unwrap().len();
    let checked = release["same"].as_u64().unwrap() as usize + list("changed") + list("gone");
    assert_eq!(checked, old.len(), "{release}");
    assert!(known.len() >= old.len());
    for (before, after) in old.iter().zip(&known) {
        assert_eq!(
            before["page_id"], after["page_id"],
            "a known state keeps its page"
        );
    }
    // The release rewrote the classic template's layout (HTML5 landmarks instead of tables, its
    // upgrading notes say): the known pages are changed screens, not new pages, and nothing of
    // them was acted on again that sends what it sent (by its completed tasks, not by a count
    // of actions that a run's time budget decides).
    assert!(list("changed") * 2 > old.len(), "{release}");
    assert!(list("gone") * 10 <= old.len(), "{release}");
    for ((before, after), done) in old.iter().zip(&known).zip(&done_before) {
        let again_done: Vec<String> = tasks_in(after, "completed").iter().map(sends).collect();
        for key in done {
            let count = |list: &[String]| list.iter().filter(|k| *k == key).count();
            assert_eq!(
                count(&again_done),
                count(done),
                "{key} done again on {}",
                before["name"]
            );
        }
    }

    // What changed, as `atlas diff` lists it: the two releases, no page listed as changed that
    // shows the same texts, title and actions, what a release lacks kept as history.
    let out = atlas()
        .args(["diff", "roundup", "--json", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (diff["from"].as_str(), diff["to"].as_str()),
        (Some("2.2.0"), Some("2.6.0"))
    );
    for change in diff["pages"]["changed"].as_array().unwrap() {
        let said = [
            "texts_added",
            "texts_removed",
            "actions_added",
            "actions_removed",
        ]
        .iter()
        .any(|k| change[*k].as_array().is_some_and(|a| !a.is_empty()))
            || change["title"].is_array();
        assert!(
            said,
            "a page listed as changed with nothing changed: {change}"
        );
    }
    assert_eq!(
        diff["pages"]["removed"].as_array().unwrap().len(),
        list("gone"),
        "{diff}"
    );
    let (clean, said) = fsck(&data);
    assert!(clean, "{said}");

    // The recorded ways (each page's navigation script) were checked on the new release: each
    // page still there kept its way, took its steps' new locators, or goes by its address now;
    // replayed in Playwright on 2.6.0, the ways the release touched end on their pages.
    let names = |key: &str| -> Vec<String> {
        release[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let (repaired, replaced) = (names("ways_repaired"), names("ways_replaced"));
    // The new layout moved the sign-in form every way behind it starts with.
    assert!(!repaired.is_empty(), "{release}");
    assert_eq!(
        release["ways_kept"].as_u64().unwrap() as usize + repaired.len() + replaced.len(),
        old.len() - list("gone"),
        "{release}"
    );
    let _tracker = serve(script, "2.6.0", port, &site);
    let touched = repaired.iter().take(3).chain(replaced.iter().take(3));
    let mut replayed = 0;
    for name in touched {
        let state = known.iter().find(|s| s["name"] == name.as_str()).unwrap();
        let Some(ended) = replay_nav_script(state, &chromium, "admin") else {
            return;
        };
        assert_eq!(ended["url"], state["url"], "the way to {name}: {ended}");
        replayed += 1;
    }
    eprintln!(
        "recorded ways on 2.6.0: {} kept, {} repaired, {} replaced; {replayed} replayed in Playwright",
        release["ways_kept"],
        repaired.len(),
        replaced.len()
    );
}
