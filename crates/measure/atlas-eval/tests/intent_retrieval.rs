//! Requests said in other words, on the demo app's labelled set: the measure tells a request
//! that names a registered intent word for word from one in another language, and covers the
//! set's Chinese, English and unservable requests.

use atlas_eval::retrieval::intents;
use atlas_service::{DEMO_APP_ID, demo_graph};
use atlas_wiring::testing::TestStore;

atlas_wiring::on_every_store!(paraphrased_intents_are_measured_on_the_labelled_set);

async fn paraphrased_intents_are_measured_on_the_labelled_set(store: TestStore) {
    let atlas = store.open_atlas();
    assert_eq!(
        demo_graph(&atlas).await.unwrap(),
        atlas_service::DemoInstall::Installed
    );
    let labelled = intents::read_labelled(intents::DEMO_PARAPHRASES).unwrap();
    assert!(labelled.len() >= 90, "{}", labelled.len());
    // A request that is a registered intent word for word finds its page; one in another
    // language finds nothing with the built-in embedder: the measure tells them apart.
    let exact = vec![
        ("查看优惠券".to_string(), "红包卡券".to_string()),
        ("show my coupons".to_string(), "红包卡券".to_string()),
    ];
    let q = intents::measure(&atlas, DEMO_APP_ID, &exact).unwrap();
    assert_eq!((q.all.queries, q.all.top1), (2, 1), "{q:?}");
    assert_eq!((q.chinese.top1, q.english.top1), (1, 0));
    let q = intents::measure(&atlas, DEMO_APP_ID, &labelled).unwrap();
    assert_eq!(
        q.chinese.queries + q.english.queries + q.unservable.queries,
        labelled.len()
    );
    assert!(q.chinese.queries >= 40 && q.english.queries >= 30, "{q:?}");
    assert!(q.unservable.queries >= 10, "{q:?}");
}
