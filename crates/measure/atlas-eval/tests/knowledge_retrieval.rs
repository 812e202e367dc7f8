//! Retrieval quality on the demo's labelled sets with the multilingual e5 model: the figures the
//! docs/evaluations.md reports, held as floors so a change that loses them fails here.

use std::sync::Arc;

use atlas_embed_e5::{DEFAULT_THRESHOLD, E5Embedder, installed_for_tests};
use atlas_eval::retrieval::knowledge::{DEMO_HELD_OUT, DEMO_PARAPHRASES, measure, read_labelled};
use atlas_kb::split::SourceKind;
use atlas_kb::{KnowledgeBase, SearchMethod};

fn e5() -> Option<E5Embedder> {
    Some(E5Embedder::open(&installed_for_tests()?, DEFAULT_THRESHOLD).unwrap())
}

#[test]
fn e5_finds_paraphrased_customer_questions() {
    let Some(embedder) = e5() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let kb = KnowledgeBase::open(scratch.path(), Arc::new(embedder)).unwrap();
    let dataset = kb.create_dataset("demo", "").unwrap();
    kb.add_document(
        &dataset.id,
        "qa.csv",
        atlas_kb::demo::DEMO_TABLE.as_bytes(),
        Some(SourceKind::QaCsv),
        Default::default(),
    )
    .unwrap();
    let paraphrases = read_labelled(DEMO_PARAPHRASES).unwrap();
    let held_out = read_labelled(DEMO_HELD_OUT).unwrap();
    assert!(paraphrases.len() >= 100 && held_out.len() >= 50);
    // The goal is top-1 0.85 on the labelled set; the held-out set is harder.
    let hybrid = measure(&kb, &dataset.id, &paraphrases, SearchMethod::Hybrid).unwrap();
    assert!(
        hybrid.top1 >= 0.85,
        "hybrid top-1 {:.3}: {:?}",
        hybrid.top1,
        hybrid.misses
    );
    let semantic = measure(&kb, &dataset.id, &paraphrases, SearchMethod::Semantic).unwrap();
    assert!(semantic.top1 >= 0.87, "semantic top-1 {:.3}", semantic.top1);
    let held = measure(&kb, &dataset.id, &held_out, SearchMethod::Hybrid).unwrap();
    assert!(
        held.top1 >= 0.75 && held.top3 >= 0.9,
        "held-out hybrid {:.3} / {:.3}",
        held.top1,
        held.top3
    );
}
