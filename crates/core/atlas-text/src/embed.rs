//! The embedder seam and the built-in feature-hashing embedder.

use crate::tokenize::features;

/// Why an embedder could not embed: its model failed, or its service answered an error, said in
/// words and with the error behind it when there is one.
#[derive(Debug, thiserror::Error)]
#[error("embedding failed: {message}{}", source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
pub struct EmbedError {
    /// What failed.
    pub message: String,
    /// Why, when another error said so.
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl EmbedError {
    /// A failure said in words.
    pub fn new(message: impl Into<String>) -> EmbedError {
        EmbedError {
            message: message.into(),
            source: None,
        }
    }

    /// A failure while doing `message`, caused by `source`.
    pub fn caused(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> EmbedError {
        EmbedError {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Turns texts into vectors whose cosine similarity says how alike the texts are.
///
/// Implementations must be deterministic for a given configuration, and their [`Embedder::name`]
/// must change with anything that changes their vectors: vectors kept on disk (an app's
/// `graph.image`, a dataset's `vectors.image`) are copies that serve only the embedder of the
/// same name, and are recomputed from the texts for any other.
pub trait Embedder: Send + Sync {
    /// A short name for logs and stats, e.g. `hash-512` or `openai:text-embedding-3-small`; also
    /// what kept vectors are labelled with.
    fn name(&self) -> String;
    /// One vector per text, in order, all of the embedder's dimension.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds texts that will be searched rather than searched with (a knowledge base's answers).
    /// Asymmetric models (e5's "query: " and "passage: ") encode the two sides differently;
    /// symmetric ones need not override this.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }
    /// The cosine above which two texts are taken to mean the same thing. Models differ widely
    /// (e5 bunches everything between 0.8 and 1), so the threshold belongs to the embedder.
    fn match_threshold(&self) -> f32;
    /// Whether similarity needs shared features (words, character n-grams). A lexical embedder lets
    /// the index score only documents that share a feature with the query instead of all of them.
    fn is_lexical(&self) -> bool {
        false
    }
    /// Whether a call may block on the network (the server then moves it off its event loop).
    fn is_remote(&self) -> bool {
        false
    }
}

/// Cosine similarity of two vectors; 0 when either is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// The default embedder: signed feature hashing of [`features`] into `dims` dimensions.
///
/// It knows no synonyms, but it is exact about shared words and characters, costs microseconds,
/// needs no files, and works the same for Chinese and English.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dims: usize,
}

impl HashEmbedder {
    /// A hashing embedder of `dims` dimensions.
    pub fn new(dims: usize) -> HashEmbedder {
        HashEmbedder { dims: dims.max(16) }
    }

    /// The vector of one text: its features hashed into the dimensions, normalised.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims];
        for f in features(text) {
            let h = fnv1a(f.token.as_bytes());
            let slot = (h % self.dims as u64) as usize;
            let sign = if (h >> 63) == 0 { 1.0 } else { -1.0 };
            v[slot] += sign * f.weight;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        HashEmbedder::new(512)
    }
}

impl Embedder for HashEmbedder {
    fn name(&self) -> String {
        format!("hash-{}", self.dims)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }

    fn match_threshold(&self) -> f32 {
        0.3
    }

    fn is_lexical(&self) -> bool {
        true
    }
}

/// FNV-1a: stable across Rust releases and platforms, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn related_chinese_texts_score_higher_than_unrelated() {
        let e = HashEmbedder::default();
        let q = e.embed_one("点外卖");
        let near = e.embed_one("外卖点餐");
        let far = e.embed_one("打开设置");
        assert!(cosine(&q, &near) > 0.3, "{}", cosine(&q, &near));
        assert!(cosine(&q, &far) < 0.1, "{}", cosine(&q, &far));
    }

    #[test]
    fn english_works_too() {
        let e = HashEmbedder::default();
        let q = e.embed_one("create a new event");
        assert!(cosine(&q, &e.embed_one("New event")) > cosine(&q, &e.embed_one("open settings")));
    }
}

/// The built-in hashing vectors under another name, taken for a model's (dense, not lexical),
/// counting the texts it is asked to embed: what tests and benchmarks of "embedded again or
/// not" measure with, without a model.
#[derive(Debug)]
pub struct CountingEmbedder {
    inner: HashEmbedder,
    texts: std::sync::atomic::AtomicUsize,
    name: String,
}

impl CountingEmbedder {
    /// One named `name` (vectors kept under one name serve no other).
    pub fn named(name: &str) -> std::sync::Arc<CountingEmbedder> {
        std::sync::Arc::new(CountingEmbedder {
            inner: HashEmbedder::default(),
            texts: Default::default(),
            name: name.to_string(),
        })
    }

    /// Texts embedded so far.
    pub fn count(&self) -> usize {
        self.texts.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Embedder for CountingEmbedder {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
        self.inner.embed(texts)
    }
    fn match_threshold(&self) -> f32 {
        self.inner.match_threshold()
    }
}
