//! An embedder that remembers: the same screen, label or question comes back again and again (a
//! fleet of agents on one app, an evaluation teaching the same screens to many graphs), and a
//! local model spends milliseconds on each.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{EmbedError, Embedder};

/// Vectors remembered at most per side; past it memory starts again.
const MAX_REMEMBERED: usize = 100_000;

/// Wraps an embedder with a memory of the texts it embedded, queries and passages apart.
pub struct Memoized<E> {
    inner: E,
    queries: Mutex<HashMap<String, Vec<f32>>>,
    passages: Mutex<HashMap<String, Vec<f32>>>,
}

impl<E: Embedder> Memoized<E> {
    /// `inner`, remembering what it embeds.
    pub fn new(inner: E) -> Memoized<E> {
        Memoized {
            inner,
            queries: Mutex::default(),
            passages: Mutex::default(),
        }
    }
}

fn through(
    memory: &Mutex<HashMap<String, Vec<f32>>>,
    texts: &[&str],
    embed: impl FnOnce(&[&str]) -> Result<Vec<Vec<f32>>, EmbedError>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let missing: Vec<&str> = {
        let memory = memory.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !memory.contains_key(*t))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing
    };
    let fresh = if missing.is_empty() {
        Vec::new()
    } else {
        embed(&missing)?
    };
    let mut memory = memory.lock().unwrap_or_else(|e| e.into_inner());
    if memory.len() + fresh.len() > MAX_REMEMBERED {
        memory.clear();
    }
    let fresh: HashMap<&str, Vec<f32>> = missing.into_iter().zip(fresh).collect();
    let out = texts
        .iter()
        .map(|t| {
            fresh
                .get(t)
                .or_else(|| memory.get(*t))
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    for (t, v) in fresh {
        memory.insert(t.to_string(), v);
    }
    Ok(out)
}

impl<E: Embedder> Embedder for Memoized<E> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        through(&self.queries, texts, |t| self.inner.embed(t))
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        through(&self.passages, texts, |t| self.inner.embed_passages(t))
    }

    fn match_threshold(&self) -> f32 {
        self.inner.match_threshold()
    }

    fn is_lexical(&self) -> bool {
        self.inner.is_lexical()
    }

    fn is_remote(&self) -> bool {
        self.inner.is_remote()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(HashEmbedder, AtomicUsize);

    impl Embedder for Counting {
        fn name(&self) -> String {
            "counting".into()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.1.fetch_add(texts.len(), Ordering::SeqCst);
            self.0.embed(texts)
        }
        fn match_threshold(&self) -> f32 {
            0.5
        }
    }

    #[test]
    fn each_text_is_embedded_once_and_answers_stay_in_order() {
        let memo = Memoized::new(Counting(HashEmbedder::default(), AtomicUsize::new(0)));
        let first = memo.embed(&["点外卖", "settings", "点外卖"]).unwrap();
        let again = memo.embed(&["settings", "点外卖"]).unwrap();
        assert_eq!(memo.inner.1.load(Ordering::SeqCst), 2);
        assert_eq!(first[0], again[1]);
        assert_eq!(first[1], again[0]);
        assert_eq!(first[0], first[2]);
        assert_ne!(first[0], first[1]);
    }
}
