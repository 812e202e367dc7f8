//! Opening a knowledge base with a model: with each dataset's `vectors.image` (every segment's
//! vectors read back) against without it (every segment embedded, as every opening did before
//! the file existed), on the same folder in the same run.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use atlas_kb::KnowledgeBase;
use atlas_text::Embedder;
use serde::Serialize;

use crate::synth::Rng;

/// What `atlas bench kb` measured of opening a knowledge base.
#[derive(Debug, Clone, Serialize)]
pub struct KbOpenReport {
    /// The embedder used.
    pub embedder: String,
    /// Question/answer pairs in the dataset (a question and an answer embedded for each).
    pub pairs: usize,
    /// Opening without the vectors file, in seconds.
    pub cold_seconds: f64,
    /// Opening with it, in seconds.
    pub kept_seconds: f64,
    /// The vectors file's size, in bytes.
    pub file_bytes: u64,
}

impl KbOpenReport {
    /// How many times faster opening is with the file.
    pub fn ratio(&self) -> f64 {
        self.cold_seconds / self.kept_seconds.max(1e-6)
    }
}

/// Builds a dataset of `pairs` customer-service pairs in `scratch` with `embedder`, then opens it
/// without and with its vectors file.
pub fn run(pairs: usize, embedder: Arc<dyn Embedder>, scratch: &Path) -> Result<KbOpenReport> {
    let root = scratch.join("kb-open");
    let mut rng = Rng::new(0x6b6f);
    let mut table = String::from("question,answer\n");
    for i in 0..pairs {
        let question = crate::kb::sentence(&mut rng);
        table.push_str(&format!("{question},答案{i}：请在订单详情页操作。\n"));
    }
    let id = {
        let kb = KnowledgeBase::open(&root, embedder.clone())?;
        let dataset = kb.create_dataset("bench", "")?;
        kb.add_document(
            &dataset.id,
            "faq.csv",
            table.as_bytes(),
            None,
            Default::default(),
        )?;
        kb.flush()?;
        dataset.id
    };
    let file = root.join(&id).join("vectors.image");
    let file_bytes = std::fs::metadata(&file)?.len();
    let open = || -> Result<f64> {
        let started = Instant::now();
        drop(KnowledgeBase::open(&root, embedder.clone())?);
        Ok(started.elapsed().as_secs_f64())
    };
    let kept_seconds = open()?;
    std::fs::remove_file(&file)?;
    let cold_seconds = open()?;
    anyhow::ensure!(file.is_file(), "opening did not keep the vectors again");
    Ok(KbOpenReport {
        embedder: embedder.name(),
        pairs,
        cold_seconds,
        kept_seconds,
        file_bytes,
    })
}
