//! Start-up from images (`.atlas/graph.image`): a folder opened from its images answers exactly as
//! the same folder opened from its JSON, and the JSON wins whenever it is not the JSON an image
//! copies. Real folders on disk, the real folder store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use atlas_service::*;
use atlas_store::AppData;
use atlas_store_fs::FsStore;
use atlas_text::{Embedder, HashEmbedder};

fn open_with(dir: &Path, embedder: Arc<dyn Embedder>) -> Arc<Atlas> {
    let store = Arc::new(FsStore::open(dir).expect("open store"));
    Atlas::open(store, embedder, CheckpointPolicy::default()).expect("open atlas")
}

fn open(dir: &Path) -> Arc<Atlas> {
    open_with(dir, Arc::new(HashEmbedder::default()))
}

/// How many apps the last start-up took from images, as the folder's performance log says.
fn apps_from_images(dir: &Path) -> usize {
    let log = std::fs::read_to_string(dir.join(".atlas/logs/performance.log")).unwrap();
    let line = log.lines().rev().find(|l| l.contains(" load ")).unwrap();
    let field = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("from_images="));
    field.unwrap().parse().unwrap()
}

fn image_of(dir: &Path) -> PathBuf {
    let apps = dir.join("apps");
    let app = std::fs::read_dir(&apps).unwrap().next().unwrap().unwrap();
    app.path().join(".atlas/graph.image")
}

/// The app with its lists in one order, to compare two exports.
fn sorted(mut data: AppData) -> AppData {
    data.intents.sort_by(|a, b| a.intent_id.cmp(&b.intent_id));
    data.traces.sort_by(|a, b| a.trace_id.cmp(&b.trace_id));
    data
}

/// Everything an agent would ask of the demo app, answered.
fn answers(atlas: &Atlas) -> Vec<serde_json::Value> {
    let data = sorted(atlas.export_app(DEMO_APP_ID).unwrap());
    let mut out = vec![serde_json::to_value(&data).unwrap()];
    let asks = data
        .intents
        .iter()
        .map(|i| i.intent_text.clone())
        .chain(["打开设置", "看看我的订单", "find nearby restaurants"].map(String::from));
    for intent in asks {
        for from in [None, Some(data.pages[3].page_id.clone())] {
            let r = atlas.query_path(QueryPathRequest {
                app_id: DEMO_APP_ID.into(),
                intent: intent.clone(),
                current_page: from,
                max_steps: None,
                include_history: None,
            });
            out.push(serde_json::json!({"ask": intent, "answer": r.map_err(|e| e.to_string())}));
        }
    }
    out
}

/// The same answers, or the first that differs, shown whole.
fn assert_same(got: &[serde_json::Value], expected: &[serde_json::Value]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        if g != e {
            let (g, e) = (g.to_string(), e.to_string());
            let at = g.bytes().zip(e.bytes()).take_while(|(a, b)| a == b).count();
            let from = at.saturating_sub(100);
            panic!(
                "answers differ at byte {at}:\n got …{}\n want …{}",
                g.get(from..(at + 200).min(g.len())).unwrap_or(&g),
                e.get(from..(at + 200).min(e.len())).unwrap_or(&e)
            );
        }
    }
}

/// A demo folder whose transitions include what the rows keep aside: a time in another zone,
/// counts past 32 bits, a failure's reason.
async fn demo_folder(dir: &Path) {
    let atlas = open(dir);
    demo_graph(&atlas).await.unwrap();
    let mut data = atlas.export_app(DEMO_APP_ID).unwrap();
    data.transitions[0].created_at = "2026-03-01T09:30:00+08:00".into();
    data.transitions[1].success_count = u64::from(u32::MAX) + 7;
    data.transitions[2].fail_count = 3;
    data.transitions[2].last_failure_reason = "弹窗挡住了按钮".into();
    atlas.import_app(data).await.unwrap();
    atlas.checkpoint().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_opened_from_its_images_answers_as_from_its_json() {
    let dir = tempfile::tempdir().unwrap();
    demo_folder(dir.path()).await;
    assert!(
        image_of(dir.path()).is_file(),
        "a checkpoint writes the image"
    );

    let from_images = answers(&open(dir.path()));
    assert_eq!(apps_from_images(dir.path()), 1);

    std::fs::remove_file(image_of(dir.path())).unwrap();
    let from_json = open(dir.path());
    assert_eq!(apps_from_images(dir.path()), 0);
    assert_same(&answers(&from_json), &from_images);
    // The app read from JSON gets its image at the next checkpoint, though nothing changed.
    from_json.checkpoint().unwrap();
    drop(from_json);
    assert!(image_of(dir.path()).is_file());
    assert_same(&answers(&open(dir.path())), &from_images);
    assert_eq!(apps_from_images(dir.path()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_was_learned_after_the_image_is_replayed_over_it() {
    let dir = tempfile::tempdir().unwrap();
    demo_folder(dir.path()).await;
    let before = {
        let atlas = open(dir.path());
        let t = atlas.export_app(DEMO_APP_ID).unwrap().transitions[5].clone();
        let mut changed = atlas.export_app(DEMO_APP_ID).unwrap();
        changed.transitions = vec![t.clone()];
        changed.transitions[0].fail_count += 10;
        atlas.import_app(changed).await.unwrap();
        // No checkpoint: the change is in the journal only, the image is the older state.
        answers(&atlas)
    };
    let atlas = open(dir.path());
    assert_eq!(apps_from_images(dir.path()), 1);
    assert_same(&answers(&atlas), &before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_json_wins_over_the_image_that_copied_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    demo_folder(dir.path()).await;
    let graph = image_of(dir.path()).with_file_name("graph.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&graph).unwrap()).unwrap();
    json["pages"][0]["description"] = "改过的描述".into();
    std::fs::write(&graph, serde_json::to_vec_pretty(&json).unwrap()).unwrap();

    let atlas = open(dir.path());
    assert_eq!(apps_from_images(dir.path()), 0);
    let page = &atlas.export_app(DEMO_APP_ID).unwrap().pages[0];
    assert_eq!(page.description, "改过的描述");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_image_is_passed_over_for_the_json() {
    let dir = tempfile::tempdir().unwrap();
    demo_folder(dir.path()).await;
    let expected = answers(&open(dir.path()));
    let image = image_of(dir.path());
    let bytes = std::fs::read(&image).unwrap();
    // Keep the header (the graph files it lists are still there) and damage the body.
    for damage in [
        bytes[..bytes.len() / 2].to_vec(),
        [&bytes[..bytes.len() / 2], &vec![0u8; bytes.len() / 2][..]].concat(),
        [&bytes[..200], &b"not an image at all"[..]].concat(),
    ] {
        // Written as the image was, so its time says nothing: only its contents are wrong.
        std::fs::write(&image, &damage).unwrap();
        let atlas = open(dir.path());
        assert_same(&answers(&atlas), &expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_of_another_embedder_are_made_anew() {
    let dir = tempfile::tempdir().unwrap();
    demo_folder(dir.path()).await;
    let other = Arc::new(HashEmbedder::new(128));
    let expected = {
        let copy = tempfile::tempdir().unwrap();
        for entry in walk(dir.path()) {
            let to = copy.path().join(entry.strip_prefix(dir.path()).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&entry, &to).unwrap();
        }
        std::fs::remove_file(image_of(copy.path())).unwrap();
        std::fs::remove_file(copy.path().join(".atlas/lock")).ok();
        answers(&open_with(copy.path(), other.clone()))
    };
    let atlas = open_with(dir.path(), other);
    assert_eq!(
        apps_from_images(dir.path()),
        1,
        "the graph still comes from the image"
    );
    assert_same(&answers(&atlas), &expected);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_symlink() {
            continue; // a page's links: made again from the graph
        } else if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
