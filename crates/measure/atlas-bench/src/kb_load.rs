//! Knowledge-base retrieve latency while a large document is being added to another dataset,
//! against the same queries on the idle knowledge base in the same run; and how soon
//! [`KnowledgeBase::stop`] ends that indexing.
//!
//! A document is split and embedded before the knowledge base's write lock is taken, and a model
//! embedder is locked per text, so a query waits for at most one text of the document (and the
//! CPU the indexing uses). The figures say whether that holds: p99 under load against idle.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use atlas_kb::{KnowledgeBase, SearchOptions};
use atlas_text::Embedder;
use serde::Serialize;

use crate::Percentiles;
use crate::synth::Rng;

/// How `atlas bench kb-load` loads the knowledge base while it is asked.
#[derive(Debug, Clone)]
pub struct KbLoadConfig {
    /// The size of the document added during the measurement.
    pub document_bytes: usize,
    /// The longest the loaded measurement runs before the indexing is stopped.
    pub max_seconds: f64,
}

/// What `atlas bench kb-load` measured: retrieval latency idle and while a large document is
/// indexed.
#[derive(Debug, Clone, Serialize)]
pub struct KbLoadReport {
    /// The embedder used.
    pub embedder: String,
    /// The size of the document added, in bytes.
    pub document_bytes: usize,
    /// Segments the document was split into.
    pub document_segments: usize,
    /// Retrieve on the demo dataset, nothing else running.
    pub idle: Percentiles,
    /// The same queries while the document is split and embedded.
    pub loaded: Percentiles,
    /// Questions answered while the document was indexed.
    pub loaded_queries: usize,
    /// Whether the document was indexed completely within `max_seconds` (else it was stopped).
    pub indexed: bool,
    /// How long indexing ran, in seconds.
    pub indexing_seconds: f64,
    /// From `stop()` to the add returning, when it had to be stopped.
    pub stop_ms: Option<f64>,
}

impl KbLoadReport {
    /// The 99th percentile while indexing ÷ idle: what the indexing costs a question.
    pub fn ratio(&self) -> f64 {
        self.loaded.p99_us / self.idle.p99_us.max(0.001)
    }
}

/// A Chinese text of at most `bytes` bytes (within a paragraph of it), in paragraphs of a few
/// sentences.
fn document(bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "订单",
        "退款",
        "物流",
        "发票",
        "会员",
        "积分",
        "优惠券",
        "地址",
        "客服",
        "配送",
        "售后",
        "换货",
        "支付",
        "账户",
        "密码",
        "通知",
        "商品",
        "库存",
        "价格",
        "活动",
    ];
    let mut rng = Rng::new(0x10ad);
    let mut text = String::with_capacity(bytes);
    loop {
        let mut paragraph = String::new();
        for _ in 0..4 {
            for _ in 0..12 {
                paragraph.push_str(WORDS[rng.below(WORDS.len())]);
            }
            paragraph.push('。');
        }
        paragraph.push_str("\n\n");
        if text.len() + paragraph.len() > bytes {
            return text;
        }
        text.push_str(&paragraph);
    }
}

/// Runs the benchmark in `scratch`: questions idle, then while the document is added.
pub fn run(
    config: &KbLoadConfig,
    embedder: Arc<dyn Embedder>,
    scratch: &Path,
) -> Result<KbLoadReport> {
    let name = embedder.name();
    let kb = Arc::new(KnowledgeBase::open(
        &scratch.join(format!("kb-load-{name}")),
        embedder,
    )?);
    let demo = atlas_kb::demo::install(&kb)?;
    let queries: Vec<String> = atlas_eval::retrieval::knowledge::read_labelled(
        atlas_eval::retrieval::knowledge::DEMO_PARAPHRASES,
    )?
    .into_iter()
    .map(|(q, _)| q)
    .collect();
    let options = SearchOptions::default();
    let ask = |q: &str| -> Result<u64> {
        let t = Instant::now();
        kb.search(&demo.id, q, &options)?;
        Ok(t.elapsed().as_nanos() as u64)
    };
    for q in &queries {
        ask(q)?;
    }
    let mut idle: Vec<u64> = Vec::new();
    for q in queries.iter().chain(&queries) {
        idle.push(ask(q)?);
    }

    let target = kb.create_dataset("large", "")?;
    let text = document(config.document_bytes);
    let document_segments =
        atlas_kb::split::split(text.as_bytes(), atlas_kb::split::SourceKind::Text)?.len();
    let started = Instant::now();
    let adding = {
        let kb = kb.clone();
        std::thread::spawn(move || {
            kb.add_document(
                &target.id,
                "large.txt",
                text.as_bytes(),
                None,
                Default::default(),
            )
        })
    };
    // Give the split a moment, so the samples fall while the model embeds.
    std::thread::sleep(Duration::from_millis(200));
    let mut loaded: Vec<u64> = Vec::new();
    let deadline = Duration::from_secs_f64(config.max_seconds);
    let mut at = 0;
    while !adding.is_finished() && started.elapsed() < deadline {
        loaded.push(ask(&queries[at % queries.len()])?);
        at += 1;
        // An agent asks now and then, not in a tight loop.
        std::thread::sleep(Duration::from_millis(20));
    }
    let indexed = adding.is_finished();
    let indexing_seconds = started.elapsed().as_secs_f64();
    let mut stop_ms = None;
    if !indexed {
        let asked = Instant::now();
        kb.stop();
        let result = adding.join().map_err(|_| anyhow!("the add panicked"))?;
        if result.is_ok() {
            return Err(anyhow!("a stopped add still succeeded"));
        }
        stop_ms = Some(asked.elapsed().as_secs_f64() * 1000.0);
    } else {
        adding.join().map_err(|_| anyhow!("the add panicked"))??;
    }
    Ok(KbLoadReport {
        embedder: name,
        document_bytes: config.document_bytes,
        document_segments,
        idle: Percentiles::from_nanos(&mut idle),
        loaded_queries: loaded.len(),
        loaded: Percentiles::from_nanos(&mut loaded),
        indexed,
        indexing_seconds,
        stop_ms,
    })
}
