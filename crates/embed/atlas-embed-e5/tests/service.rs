//! The service with the e5 embedder: Chinese phrasings nobody registered find their page.

use std::sync::Arc;

use atlas_embed_e5::{DEFAULT_THRESHOLD, E5Embedder, installed_for_tests};
use atlas_service::{Atlas, CheckpointPolicy, DEMO_APP_ID, QueryPathRequest, demo_graph};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_chinese_phrasing_finds_the_demo_page() {
    let Some(dir) = installed_for_tests() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(atlas_store_fs::FsStore::open(data.path()).unwrap());
    let atlas = Atlas::open(
        store,
        Arc::new(E5Embedder::open(&dir, DEFAULT_THRESHOLD).unwrap()),
        CheckpointPolicy::default(),
    )
    .unwrap();
    demo_graph(&atlas).await.unwrap();
    // No word or character pair of this phrasing is in the demo's intents: the built-in embedder
    // finds nothing, e5 finds the delivery page by meaning.
    let r = atlas
        .query_path(QueryPathRequest {
            app_id: DEMO_APP_ID.into(),
            intent: "肚子饿了叫点吃的".into(),
            current_page: None,
            max_steps: None,
            include_history: None,
        })
        .unwrap();
    assert!(r.success, "{r:?}");
    assert_eq!(r.target_page.unwrap().page_name, "外卖首页");
}
