//! The graph with a model embedder: page and intent texts are embedded before the write lock is
//! taken (a model spends milliseconds on each, and readers must not wait for it), and a document
//! indexed again with the same texts keeps its vectors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atlas_service::*;
use atlas_store_fs::FsStore;
use atlas_text::{EmbedError, Embedder, HashEmbedder};

/// The hashing embedder declared a model: it counts the texts it embeds, and a text holding
/// [`SLOW`] makes it wait until the test lets it go.
struct Model {
    inner: HashEmbedder,
    texts: AtomicUsize,
    entered: Mutex<Sender<()>>,
    release: Mutex<Receiver<()>>,
}

const SLOW: &str = "慢";

impl Embedder for Model {
    fn name(&self) -> String {
        "test-model".into()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        if texts.iter().any(|t| t.contains(SLOW)) {
            self.entered.lock().unwrap().send(()).unwrap();
            let _ = self
                .release
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(30));
        }
        self.inner.embed(texts)
    }

    fn match_threshold(&self) -> f32 {
        0.5
    }

    fn is_lexical(&self) -> bool {
        false
    }
}

fn open(dir: &std::path::Path) -> (Arc<Atlas>, Arc<Model>, Receiver<()>, Sender<()>) {
    let (entered_tx, entered) = channel();
    let (release, release_rx) = channel();
    let model = Arc::new(Model {
        inner: HashEmbedder::default(),
        texts: AtomicUsize::new(0),
        entered: Mutex::new(entered_tx),
        release: Mutex::new(release_rx),
    });
    let store = Arc::new(FsStore::open(dir).unwrap());
    let atlas = Atlas::open(store, model.clone(), CheckpointPolicy::default()).unwrap();
    (atlas, model, entered, release)
}

fn page(name: &str, description: &str) -> AddPageRequest {
    AddPageRequest {
        app_id: "app".into(),
        page_name: name.into(),
        page_type: None,
        description: Some(description.into()),
        intents: vec!["查看订单".into()],
        ui_hierarchy: None,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_written_again_with_the_same_texts_is_not_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let (atlas, model, _entered, _release) = open(dir.path());
    atlas.add_page(page("订单列表", "全部订单")).await.unwrap();
    let first = model.texts.load(Ordering::SeqCst);
    // The whole text and its three parts (name, description, intent).
    assert_eq!(first, 4);
    atlas.add_page(page("订单列表", "全部订单")).await.unwrap();
    assert_eq!(model.texts.load(Ordering::SeqCst), first);
    // A new description is new text.
    atlas
        .add_page(page("订单列表", "全部订单和退款"))
        .await
        .unwrap();
    assert!(model.texts.load(Ordering::SeqCst) > first);
}

#[test]
fn readers_do_not_wait_while_a_new_page_is_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let (atlas, _model, entered, release) = open(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(atlas.add_page(page("首页", ""))).unwrap();
    let writer = {
        let atlas = atlas.clone();
        std::thread::spawn(move || {
            tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(atlas.add_page(page("慢页", "加载很慢的页面")))
        })
    };
    entered
        .recv_timeout(Duration::from_secs(10))
        .expect("the model was asked for the new page's texts");
    // The model is busy with the new page: a reader still gets the graph at once.
    let (done, read) = channel();
    let reader = {
        let atlas = atlas.clone();
        std::thread::spawn(move || done.send(atlas.read(|g| g.page_count())).unwrap())
    };
    let pages = read.recv_timeout(Duration::from_secs(5));
    release.send(()).unwrap();
    assert_eq!(pages, Ok(1), "a reader waited for the model");
    reader.join().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(atlas.read(|g| g.page_count()), 2);
}
