//! A report's counters are journaled as their growth, which is not idempotent: these tests
//! check that replay adds each exactly once, also after a crash in the middle of a checkpoint.

use std::fs;
use std::path::Path;

use atlas_model::{Action, App, Page, Transition};
use atlas_store::{Added, AppData, Counts, Record, Store};
use atlas_store_fs::FsStore;

const APP: &str = "com.example.记账";

fn app_data() -> AppData {
    let [home, list] = ["首页", "账单"].map(|name| Page {
        created_at: "2026-11-26T00:00:00Z".into(),
        ..Page::named(APP, name)
    });
    let action = Action {
        action_type: "click".into(),
        widget_text: "账单".into(),
        ..Action::default()
    };
    let transition = Transition {
        transition_id: atlas_model::transition_id(&home.page_id, &action, &list.page_id),
        app_id: APP.into(),
        from_page: home.page_id.clone(),
        to_page: list.page_id.clone(),
        action,
        success_count: 1,
        fail_count: 0,
        latency_total_ms: 0.0,
        latency_samples: 0,
        last_failure_reason: String::new(),
        created_at: "2026-11-26T00:00:00Z".into(),
        updated_at: "2026-11-26T00:00:00Z".into(),
        ..Default::default()
    };
    AppData {
        app: App {
            app_id: APP.into(),
            home_page: Some(home.page_id.clone()),
            created_at: "2026-11-26T00:00:00Z".into(),
            updated_at: "2026-11-26T00:00:00Z".into(),
            ..Default::default()
        },
        pages: vec![home, list],
        intents: vec![],
        transitions: vec![transition],
        traces: vec![],
    }
}

fn report(data: &AppData, success: bool) -> Record {
    Record::Added(Added {
        app_id: APP.into(),
        transition_id: data.transitions[0].transition_id.clone(),
        added: Counts {
            success: u64::from(success),
            fail: u64::from(!success),
            latency_total_ms: 100.0,
            latency_samples: 1,
        },
        reason: (!success).then(|| "超时".to_string()),
        at: 1_800_000_000,
    })
}

/// The app's first transition's (successes, failures) after opening the folder.
fn counts_after_open(root: &Path) -> (u64, u64) {
    let store = FsStore::open(root).unwrap();
    let apps = store.load().unwrap().into_apps();
    let t = &apps[0].transitions[0];
    (t.success_count, t.fail_count)
}

fn write_whole(store: &FsStore, data: &AppData) {
    let mut records = vec![Record::App(data.app.clone())];
    records.extend(data.pages.iter().cloned().map(Record::Page));
    records.extend(data.transitions.iter().cloned().map(Record::Transition));
    store.append(records).wait_blocking().unwrap();
}

#[test]
fn reports_replay_once_from_the_journal_and_not_again_after_a_checkpoint() {
    let root = tempfile::tempdir().unwrap();
    let mut data = app_data();
    {
        let store = FsStore::open(root.path()).unwrap();
        write_whole(&store, &data);
        for success in [true, true, false] {
            store
                .append(vec![report(&data, success)])
                .wait_blocking()
                .unwrap();
        }
    }
    assert_eq!(
        counts_after_open(root.path()),
        (3, 1),
        "1 imported, then 2 and 1 reported"
    );
    assert_eq!(
        counts_after_open(root.path()),
        (3, 1),
        "opening again adds nothing"
    );

    // Fold what the service holds now: the files carry it, the journal no longer does.
    let store = FsStore::open(root.path()).unwrap();
    let apps = store.load().unwrap().into_apps();
    data = apps[0].clone();
    assert_eq!(data.transitions[0].last_failure_reason, "超时");
    let cut = store.begin_checkpoint().unwrap();
    store.finish_checkpoint(cut, &[data.clone()]).unwrap();
    store
        .append(vec![report(&data, true)])
        .wait_blocking()
        .unwrap();
    drop(store);
    assert_eq!(counts_after_open(root.path()), (4, 1));
}

#[test]
fn a_crash_between_folding_an_app_and_trimming_the_journal_adds_no_report_twice() {
    let root = tempfile::tempdir().unwrap();
    let data = app_data();
    let store = FsStore::open(root.path()).unwrap();
    write_whole(&store, &data);
    let cut = store.begin_checkpoint().unwrap();
    store
        .finish_checkpoint(cut, std::slice::from_ref(&data))
        .unwrap();
    for _ in 0..5 {
        store
            .append(vec![report(&data, true)])
            .wait_blocking()
            .unwrap();
    }
    // What the folder looks like before the next checkpoint: its journal still holds the five
    // reports, and `checkpoint.json` says the files do not cover them.
    let meta = root.path().join(".atlas");
    let before: Vec<(std::path::PathBuf, Vec<u8>)> = ["checkpoint.json"]
        .iter()
        .map(|f| meta.join(f))
        .chain(
            fs::read_dir(meta.join("journal"))
                .unwrap()
                .map(|e| e.unwrap().path()),
        )
        .map(|p| (p.clone(), fs::read(&p).unwrap()))
        .collect();
    let mut folded = store.load().unwrap().into_apps().remove(0);
    folded.transitions[0].success_count = 6;
    let cut = store.begin_checkpoint().unwrap();
    store.finish_checkpoint(cut, &[folded]).unwrap();
    drop(store);
    // The crash: the app's files were folded, but `checkpoint.json` and the journal are as they
    // were (the trim never happened).
    for (path, bytes) in before {
        fs::write(path, bytes).unwrap();
    }
    assert_eq!(
        counts_after_open(root.path()),
        (6, 0),
        "the five reports counted once"
    );
    let snapshot = FsStore::read_snapshot(root.path()).unwrap().into_apps();
    assert_eq!(snapshot[0].transitions[0].success_count, 6);
}

#[test]
fn a_graph_past_the_part_budget_is_split_into_parts_and_read_back_whole() {
    let root = tempfile::tempdir().unwrap();
    let mut data = app_data();
    let template = data.transitions[0].clone();
    let (from, to) = (template.from_page.clone(), template.to_page.clone());
    data.transitions = (0..20_000)
        .map(|i| {
            let action = Action {
                action_type: "click".into(),
                widget_text: format!("{i} {}", "长的标签 long label ".repeat(20)),
                ..Action::default()
            };
            Transition {
                transition_id: atlas_model::transition_id(&from, &action, &to),
                action,
                success_count: i,
                ..template.clone()
            }
        })
        .collect();
    let store = FsStore::open(root.path()).unwrap();
    let cut = store.begin_checkpoint().unwrap();
    store.finish_checkpoint(cut, &[data.clone()]).unwrap();
    drop(store);
    let meta = store_meta(root.path());
    let parts = fs::read_dir(&meta)
        .unwrap()
        .filter(|e| {
            let name = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .to_string();
            name.starts_with("graph.") && name.ends_with(".json") && name != "graph.json"
        })
        .count();
    assert!(
        parts >= 2,
        "a graph of {} transitions in {} files",
        data.transitions.len(),
        parts + 1
    );
    let store = FsStore::open(root.path()).unwrap();
    assert_eq!(store.load().unwrap().into_apps(), vec![data]);
}

/// The `.atlas` folder of the one app in `root`.
fn store_meta(root: &Path) -> std::path::PathBuf {
    let apps = root.join("apps");
    let app = fs::read_dir(&apps).unwrap().next().unwrap().unwrap().path();
    app.join(".atlas")
}

/// A fleet's sessions, pretty-printed, take about twice what they take as compact JSON: the
/// graph's files are budgeted by the bytes written, so none passes the folder's limit (one
/// once did, at 10,564,439 bytes, and no start-up could open the folder after).
#[test]
fn a_fleet_of_sessions_is_written_in_files_under_the_folders_limit_and_read_back_whole() {
    use atlas_model::{Trace, TraceStep};
    let root = tempfile::tempdir().unwrap();
    let mut data = app_data();
    let (from, to) = (
        data.transitions[0].from_page.clone(),
        data.transitions[0].to_page.clone(),
    );
    data.traces = (0..600)
        .map(|session| Trace {
            trace_id: format!("trace-{session:04}"),
            app_id: APP.into(),
            session_id: format!("session-{session}"),
            intent: format!("记一笔账 {}", session % 40),
            steps: (0..120)
                .map(|step| TraceStep {
                    from_page: from.clone(),
                    to_page: to.clone(),
                    action: Action {
                        action_type: "click".into(),
                        widget_id: format!("com.example:id/button_{step}"),
                        widget_text: "账单".into(),
                        ..Action::default()
                    },
                    success: step % 7 != 0,
                    latency_ms: 120,
                    checked: None,
                })
                .collect(),
            finished: Some(true),
            finish_message: None,
            app_version: None,
            checks: vec![],
            ends_on: None,
            verdict: None,
            created_at: "2026-11-26T00:00:00Z".into(),
            updated_at: "2026-11-26T00:00:00Z".into(),
        })
        .collect();
    let compact = serde_json::to_vec(&data.traces).unwrap().len();
    assert!(
        compact < atlas_store_fs::MAX_JSON_BYTES * 2,
        "the sessions are {compact} bytes as compact JSON"
    );
    let store = FsStore::open(root.path()).unwrap();
    let cut = store.begin_checkpoint().unwrap();
    store.finish_checkpoint(cut, &[data.clone()]).unwrap();
    drop(store);
    let mut written = 0;
    for entry in fs::read_dir(store_meta(root.path())).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("graph") && name.ends_with(".json") {
            let size = entry.metadata().unwrap().len() as usize;
            assert!(
                size <= atlas_store_fs::MAX_JSON_BYTES,
                "{name} is {size} bytes"
            );
            written += size;
        }
    }
    assert!(
        written > compact * 3 / 2,
        "written {written} bytes for {compact} of compact JSON: the test no longer tests what the \
         pretty form adds"
    );
    let store = FsStore::open(root.path()).unwrap();
    let mut back = store.load().unwrap().into_apps();
    back[0].traces.sort_by(|a, b| a.trace_id.cmp(&b.trace_id));
    assert_eq!(back, vec![data]);
}

/// A checkpoint killed between writing a part and renaming it leaves its temporary file; the
/// next writer clears it (fsck would call the folder unclean), and the graph is whole.
#[test]
fn a_temporary_file_left_by_a_killed_checkpoint_is_cleared_at_the_next_open() {
    let root = tempfile::tempdir().unwrap();
    let store = FsStore::open(root.path()).unwrap();
    let cut = store.begin_checkpoint().unwrap();
    store.finish_checkpoint(cut, &[app_data()]).unwrap();
    drop(store);
    let left = store_meta(root.path()).join(".graph.1795813681095091689.006.json.tmp");
    fs::write(&left, b"{\"half\": ").unwrap();
    let store = FsStore::open(root.path()).unwrap();
    assert!(!left.exists());
    assert!(store.check(false).unwrap().is_clean());
    assert_eq!(store.load().unwrap().into_apps(), vec![app_data()]);
}
