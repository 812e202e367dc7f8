//! The demo knowledge base `atlas serve --demo` sets up: an online shop's customer-service
//! questions and answers in Chinese, under a fixed id and key, so seed 002's QQ customer-service
//! flow can be tried end to end without creating anything first.

use crate::split::SourceKind;
use crate::{Dataset, KbError, KnowledgeBase};

/// The demo dataset's id.
pub const DEMO_DATASET_ID: &str = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001";
/// The demo dataset's key.
pub const DEMO_API_KEY: &str = "dataset-demo-key";
/// The questions and answers (shipped in the repository, `demo/customer_service.csv`).
pub const DEMO_TABLE: &str = include_str!("../demo/customer_service.csv");

/// Creates the demo dataset if it is missing; an existing one is left as it is.
pub fn install(kb: &KnowledgeBase) -> Result<Dataset, KbError> {
    let dataset = kb.create_dataset_with(
        DEMO_DATASET_ID,
        "客服问答（演示）",
        "一家网店的常见问题与回答",
        DEMO_API_KEY,
    )?;
    if kb.documents(DEMO_DATASET_ID)?.is_empty() {
        kb.add_document(
            DEMO_DATASET_ID,
            "customer_service.csv",
            DEMO_TABLE.as_bytes(),
            Some(SourceKind::QaCsv),
            Default::default(),
        )?;
    }
    Ok(dataset)
}

/// Whether the knowledge bases' folder `root` holds the demo dataset without its questions: a
/// start stopped between creating it and adding them (which the next `--demo` start completes).
pub fn is_incomplete(root: &std::path::Path) -> bool {
    let dataset = root.join(DEMO_DATASET_ID);
    let has_document = std::fs::read_dir(dataset.join("documents")).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    });
    dataset.join("dataset.json").is_file() && !has_document
}
