//! What a label means next to the instruction: the cosine of their embeddings, from e5 when the
//! graph embeds with it ("vibration" is "Vibrate", 删除 is 移除, "my orders" is 我的订单, with no
//! word list), else from the built-in hashing embedder (shared character n-grams). The model is
//! fitted per source, since the two spread their cosines differently.
//!
//! Labels repeat across pages, steps and sessions, so their vectors are kept; embedding happens
//! outside the graph's lock, as it may be slow.

use std::collections::HashMap;
use std::sync::Arc;

use atlas_text::{Embedder, HashEmbedder, cosine};
use parking_lot::Mutex;

/// Vectors kept at most; past it the cache starts again (labels of one app fit many times over).
const MAX_KEPT: usize = 200_000;

/// What labels mean next to an instruction: their embeddings' cosines, from e5 or the hashing
/// embedder, kept once computed.
pub struct Meaning {
    embedder: Arc<dyn Embedder>,
    /// Where the embedder's cosines start to mean something: below its match threshold by the
    /// width the hybrid search uses.
    floor: f32,
    kept: Mutex<HashMap<String, Vec<f32>>>,
}

impl Meaning {
    /// e5 when the graph's embedder is e5; otherwise the built-in hashing embedder, so a remote or
    /// other local model never changes what the shipped weights mean.
    pub fn for_graph(graph: &Arc<dyn Embedder>) -> Meaning {
        let embedder: Arc<dyn Embedder> = if is_e5(graph.as_ref()) {
            graph.clone()
        } else {
            Arc::new(HashEmbedder::default())
        };
        let floor = if embedder.is_lexical() {
            0.0
        } else {
            (embedder.match_threshold() - 0.2).max(0.0)
        };
        Meaning {
            embedder,
            floor,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Which shipped model goes with these meanings.
    pub(crate) fn is_e5(&self) -> bool {
        is_e5(self.embedder.as_ref())
    }

    /// Similarity of `a` and `b`, 0 (unrelated) to 1, once [`Meaning::learn`] has seen both.
    pub(crate) fn similarity(&self, a: &str, b: &str) -> f64 {
        let kept = self.kept.lock();
        let (Some(x), Some(y)) = (kept.get(a.trim()), kept.get(b.trim())) else {
            return 0.0;
        };
        let c = cosine(x, y);
        f64::from(((c - self.floor) / (1.0 - self.floor)).clamp(0.0, 1.0))
    }

    /// Embeds the texts not seen yet. A failing embedder leaves them unknown (similarity 0).
    pub(crate) fn learn(&self, texts: &[&str]) {
        let missing: Vec<&str> = {
            let kept = self.kept.lock();
            let mut missing: Vec<&str> = texts
                .iter()
                .map(|t| t.trim())
                .filter(|t| !t.is_empty() && !kept.contains_key(*t))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        if missing.is_empty() {
            return;
        }
        match self.embedder.embed(&missing) {
            Ok(vectors) => {
                let mut kept = self.kept.lock();
                if kept.len() + vectors.len() > MAX_KEPT {
                    kept.clear();
                }
                for (t, v) in missing.into_iter().zip(vectors) {
                    kept.insert(t.to_string(), v);
                }
            }
            Err(e) => tracing::warn!("grounding could not embed labels: {e}"),
        }
    }
}

fn is_e5(embedder: &dyn Embedder) -> bool {
    embedder.name().starts_with("e5")
}
