//! Hybrid retrieval over short texts: BM25 over CJK-aware features, vector similarity through the
//! [`Embedder`], and their weighted fusion, every score between 0 and 1.
//!
//! Two parts of Atlas search this way: the knowledge bases (a segment's question, and its answer
//! counting less) and the business graph (an entity's `search_text`). Both want one scale for
//! every score, so a threshold or a "close candidates" rule can be set once.
//!
//! Key design decision: **BM25 is normalised by the score a text would get if every query feature
//! were saturated in it**, so a keyword score means the same across queries. With a lexical
//! embedder (the built-in hashing one) vectors would only restate the features: the vector score
//! is then the cosine of the sparse feature vectors, computed over the texts sharing a feature,
//! and no dense vector is stored.

pub mod kept;

use std::collections::HashMap;

use atlas_progress::{Progress, Quiet};
use atlas_text::{EmbedError, Embedder, cosine, features};

const K1: f64 = 1.2;
/// Where a dense embedder's cosine is taken as "unrelated", below its match threshold.
const SEMANTIC_FLOOR_BELOW_THRESHOLD: f64 = 0.2;
/// How much an answer counts beside its question, in words and in meaning: a question says what
/// a pair is about, but a user may ask with a word or an idea only the answer has ("包邮吗" for
/// 运费怎么算). On the demo's labelled paraphrases, the answer's vector at this weight raised e5's
/// semantic top-1 from 0.82 to 0.89, and from 0.70 to 0.79 on the held-out set.
const ANSWER_WEIGHT: f32 = 0.4;
const B: f64 = 0.75;

/// The vector score's share in hybrid search with a dense embedder. Dify's "semantic first" is
/// 0.7, but paraphrased questions share few words with the stored ones, and a shared everyday
/// word ("物流" in "哪家物流" and in 查看物流信息) then outweighs the meaning: on the knowledge
/// base demo's labelled sets with e5, 0.9 gave top-1 0.86 and 0.77 (held out) where 0.7 gave 0.81
/// and 0.70. Words still decide between near-equal meanings.
pub const DENSE_SEMANTIC_WEIGHT: f64 = 0.9;

/// The default vector share for `embedder`: [`DENSE_SEMANTIC_WEIGHT`] for a dense one, 0.5 for a
/// lexical one, whose vectors only restate the words.
pub fn default_semantic_weight(embedder: &dyn Embedder) -> f64 {
    if embedder.is_lexical() {
        0.5
    } else {
        DENSE_SEMANTIC_WEIGHT
    }
}

/// How to search, as Dify's `search_method` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMethod {
    /// Words only (Dify's keyword_search and full_text_search: both are BM25 here).
    Keyword,
    /// The embedder only.
    Semantic,
    /// Both, weighted.
    Hybrid,
}

/// A segment's dense vectors: its searched text's and its answer's.
pub type Vectors = (Option<Vec<f32>>, Option<Vec<f32>>);

/// What a search scores.
pub struct Scored {
    /// The entry's index in the searched list.
    pub entry: usize,
    /// Its fused score, between 0 and 1.
    pub score: f64,
}

struct Entry {
    /// The norm of the feature weights, for the sparse cosine.
    norm: f32,
    length: f32,
    /// The question's vector (dense embedders only) and the answer's, embedded as a passage.
    vector: Option<Vec<f32>>,
    answer_vector: Option<Vec<f32>>,
}

/// One dataset's index; entry `i` is the `i`-th segment handed to [`SegmentIndex::build`].
pub struct SegmentIndex {
    vocabulary: HashMap<String, u32>,
    postings: Vec<Vec<(u32, f32)>>,
    entries: Vec<Entry>,
    average_length: f64,
    lexical: bool,
}

/// A text's features as (id, summed weight), sorted by id; `id_of` names a feature or drops it.
fn weighted(text: &str, mut id_of: impl FnMut(String) -> Option<u32>) -> Vec<(u32, f32)> {
    let mut summed: HashMap<u32, f32> = HashMap::new();
    for f in features(text) {
        if let Some(id) = id_of(f.token) {
            *summed.entry(id).or_default() += f.weight;
        }
    }
    let mut out: Vec<(u32, f32)> = summed.into_iter().collect();
    out.sort_unstable_by_key(|(id, _)| *id);
    out
}

fn norm(features: &[(u32, f32)]) -> f32 {
    features.iter().map(|(_, w)| w * w).sum::<f32>().sqrt()
}

/// Texts embedded per call: small enough that a shutdown waits for one batch at most.
const EMBED_BATCH: usize = 4;

impl SegmentIndex {
    /// Indexes `texts` (what is searched, and an answer that counts less). Unless the embedder
    /// is lexical, each text's vectors come from `known` when it has them (the same segment in
    /// the snapshot being replaced: a write re-embeds only what it adds) and from the embedder,
    /// in batches, when it does not.
    pub fn build(
        texts: &[(&str, Option<&str>)],
        embedder: &dyn Embedder,
        known: &dyn Fn(usize) -> Option<Vectors>,
    ) -> Result<SegmentIndex, EmbedError> {
        Self::build_with(texts, embedder, known, &Quiet)
    }

    /// [`SegmentIndex::build`], telling `progress` of the texts it embeds (a knowledge base
    /// opened with a model, whose vectors no file keeps).
    pub fn build_with(
        texts: &[(&str, Option<&str>)],
        embedder: &dyn Embedder,
        known: &dyn Fn(usize) -> Option<Vectors>,
        progress: &dyn Progress,
    ) -> Result<SegmentIndex, EmbedError> {
        let vectors = Self::embed(texts, embedder, known, &|| false, progress)?;
        Ok(Self::from_vectors(texts, vectors, embedder.is_lexical()))
    }

    /// The vectors [`SegmentIndex::build`] would index `texts` with: `known`'s, and the
    /// embedder's for the rest, in batches; none for a lexical embedder. `stop` is asked between
    /// batches, so long work can be abandoned (a server shutting down) within one batch, and
    /// `progress` is told of each batch embedded.
    pub fn embed(
        texts: &[(&str, Option<&str>)],
        embedder: &dyn Embedder,
        known: &dyn Fn(usize) -> Option<Vectors>,
        stop: &dyn Fn() -> bool,
        progress: &dyn Progress,
    ) -> Result<Vec<Vectors>, EmbedError> {
        let mut vectors: Vec<Vectors> = vec![(None, None); texts.len()];
        if embedder.is_lexical() {
            return Ok(vectors);
        }
        let mut missing = Vec::new();
        for (i, slot) in vectors.iter_mut().enumerate() {
            match known(i) {
                Some(v) => *slot = v,
                None => missing.push(i),
            }
        }
        if !missing.is_empty() {
            progress.stage("embedding segments", Some(missing.len() as u64));
        }
        for batch in missing.chunks(EMBED_BATCH) {
            if stop() {
                return Err(EmbedError::new("stopped before the texts were embedded"));
            }
            let questions: Vec<&str> = batch.iter().map(|&i| texts[i].0).collect();
            let embedded = embedder.embed(&questions)?;
            for (&i, v) in batch.iter().zip(embedded) {
                vectors[i].0 = Some(v);
            }
            let answered: Vec<usize> = batch
                .iter()
                .copied()
                .filter(|&i| texts[i].1.is_some())
                .collect();
            let answers: Vec<&str> = answered.iter().filter_map(|&i| texts[i].1).collect();
            let embedded = embedder.embed_passages(&answers)?;
            for (&i, v) in answered.iter().zip(embedded) {
                vectors[i].1 = Some(v);
            }
            progress.advance(batch.len() as u64);
        }
        Ok(vectors)
    }

    /// The index of `texts` with their `vectors` (from [`SegmentIndex::embed`]).
    pub fn from_vectors(
        texts: &[(&str, Option<&str>)],
        vectors: Vec<Vectors>,
        lexical: bool,
    ) -> SegmentIndex {
        let mut vocabulary = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut entries = Vec::with_capacity(texts.len());
        for (i, ((text, answer), (vector, answer_vector))) in texts.iter().zip(vectors).enumerate()
        {
            let mut id_of = |token: String| {
                let next = vocabulary.len() as u32;
                Some(*vocabulary.entry(token).or_insert(next))
            };
            let mut features = weighted(text, &mut id_of);
            if let Some(answer) = answer {
                let mut merged: HashMap<u32, f32> = features.into_iter().collect();
                for (id, w) in weighted(answer, &mut id_of) {
                    *merged.entry(id).or_default() += w * ANSWER_WEIGHT;
                }
                features = merged.into_iter().collect();
                features.sort_unstable_by_key(|(id, _)| *id);
            }
            postings.resize_with(vocabulary.len(), Vec::new);
            for (id, w) in &features {
                postings[*id as usize].push((i as u32, *w));
            }
            let length = features.iter().map(|(_, w)| w).sum::<f32>();
            entries.push(Entry {
                norm: norm(&features),
                length,
                vector,
                answer_vector,
            });
        }
        let average_length = if entries.is_empty() {
            1.0
        } else {
            entries.iter().map(|e| e.length as f64).sum::<f64>() / entries.len() as f64
        };
        SegmentIndex {
            vocabulary,
            postings,
            entries,
            average_length: average_length.max(1e-6),
            lexical,
        }
    }

    /// Entry `i`'s vectors, for the next build to reuse.
    pub fn vectors(&self, i: usize) -> Option<Vectors> {
        let e = self.entries.get(i)?;
        e.vector
            .as_ref()
            .map(|v| (Some(v.clone()), e.answer_vector.clone()))
    }

    /// The best `limit` entries scoring above zero and at least `threshold`, best first, among
    /// those `allowed` admits. `semantic_weight` is the vector score's share in hybrid search.
    ///
    /// One pass over the query features' postings fills dense per-entry sums (BM25 and, for a
    /// lexical embedder, the sparse dot product); only entries touched are then fused, filtered
    /// and partially sorted.
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &self,
        query: &str,
        embedder: &dyn Embedder,
        method: SearchMethod,
        semantic_weight: f64,
        allowed: &dyn Fn(usize) -> bool,
        limit: usize,
        threshold: f64,
    ) -> Result<Vec<Scored>, EmbedError> {
        let (ws, wk) = match method {
            SearchMethod::Keyword => (0.0, 1.0),
            SearchMethod::Semantic => (1.0, 0.0),
            SearchMethod::Hybrid => (
                semantic_weight.clamp(0.0, 1.0),
                1.0 - semantic_weight.clamp(0.0, 1.0),
            ),
        };
        let n = self.entries.len();
        let query_features = weighted(query, |token| self.vocabulary.get(&token).copied());
        let mut keyword = vec![0f32; n];
        let mut dot = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut ceiling = 0.0f64;
        for (id, wq) in &query_features {
            let posting = &self.postings[*id as usize];
            let df = posting.len() as f64;
            let idf = (1.0 + (n as f64 - df + 0.5) / (df + 0.5)).ln() as f32;
            ceiling += *wq as f64 * idf as f64 * (K1 + 1.0);
            let (k1, b, average) = (K1 as f32, B as f32, self.average_length as f32);
            for (entry, tf) in posting {
                let i = *entry as usize;
                if keyword[i] == 0.0 && dot[i] == 0.0 {
                    touched.push(*entry);
                }
                let length = self.entries[i].length / average;
                keyword[i] += wq * idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length));
                dot[i] += wq * tf;
            }
        }
        let query_norm = norm(&query_features);
        let lexical_cosine = |i: usize| -> f64 {
            let denominator = query_norm * self.entries[i].norm;
            if denominator > 0.0 {
                (dot[i] / denominator).clamp(0.0, 1.0) as f64
            } else {
                0.0
            }
        };
        let keyword_score = |i: usize| {
            if ceiling > 0.0 {
                (keyword[i] as f64 / ceiling).min(1.0)
            } else {
                0.0
            }
        };
        let mut out: Vec<Scored> = Vec::new();
        let mut keep = |entry: usize, score: f64| {
            if score > 0.0 && score >= threshold && allowed(entry) {
                out.push(Scored {
                    entry,
                    score: score.min(1.0),
                });
            }
        };
        if self.lexical || ws == 0.0 {
            for &e in &touched {
                let i = e as usize;
                let semantic = if ws > 0.0 { lexical_cosine(i) } else { 0.0 };
                keep(i, wk * keyword_score(i) + ws * semantic);
            }
        } else {
            // A dense embedder can find what shares no word: every entry is scored.
            let query_vector = embedder.embed(&[query])?.pop().unwrap_or_default();
            // Dense models' cosines bunch near the top (e5's between 0.8 and 1): stretched from a
            // floor below the model's own match threshold, a vector score spans 0..1 like a
            // keyword score and the two can be weighed against each other.
            let floor =
                (embedder.match_threshold() as f64 - SEMANTIC_FLOOR_BELOW_THRESHOLD).max(0.0);
            let stretch = |c: f32| ((c as f64 - floor) / (1.0 - floor)).clamp(0.0, 1.0);
            for (i, entry) in self.entries.iter().enumerate() {
                let to_question = entry
                    .vector
                    .as_ref()
                    .map_or(0.0, |v| stretch(cosine(&query_vector, v)));
                let semantic = match &entry.answer_vector {
                    Some(v) => {
                        to_question * (1.0 - ANSWER_WEIGHT as f64)
                            + stretch(cosine(&query_vector, v)) * ANSWER_WEIGHT as f64
                    }
                    None => to_question,
                };
                keep(i, wk * keyword_score(i) + ws * semantic);
            }
        }
        let by_score =
            |a: &Scored, b: &Scored| b.score.total_cmp(&a.score).then(a.entry.cmp(&b.entry));
        if out.len() > limit {
            out.select_nth_unstable_by(limit, by_score);
            out.truncate(limit);
        }
        out.sort_by(by_score);
        Ok(out)
    }
}

#[cfg(test)]
mod progress_tests {
    use super::*;
    use atlas_progress::Tally;
    use atlas_text::HashEmbedder;

    /// The hashing embedder taken as a dense model, so texts are embedded.
    struct Dense(HashEmbedder);

    impl Embedder for Dense {
        fn name(&self) -> String {
            "dense".into()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.embed(texts)
        }
        fn match_threshold(&self) -> f32 {
            0.5
        }
    }

    #[test]
    fn embedding_tells_of_the_texts_it_embeds_and_not_of_those_it_knew() {
        let texts: Vec<(String, Option<String>)> = (0..10)
            .map(|i| {
                (
                    format!("问题 {i}"),
                    (i % 2 == 0).then(|| format!("answer {i}")),
                )
            })
            .collect();
        let texts: Vec<(&str, Option<&str>)> = texts
            .iter()
            .map(|(q, a)| (q.as_str(), a.as_deref()))
            .collect();
        let tally = Tally::default();
        let known = |i: usize| (i < 3).then(|| (Some(vec![1.0]), None));
        let vectors = SegmentIndex::embed(
            &texts,
            &Dense(HashEmbedder::default()),
            &known,
            &|| false,
            &tally,
        )
        .unwrap();
        assert_eq!(vectors.len(), 10);
        let stages = tally.stages();
        assert_eq!(stages.len(), 1);
        assert_eq!((stages[0].total, stages[0].done), (Some(7), 7));

        let quiet = Tally::default();
        SegmentIndex::embed(
            &texts,
            &HashEmbedder::default(),
            &|_| None,
            &|| false,
            &quiet,
        )
        .unwrap();
        assert!(
            quiet.stages().is_empty(),
            "a lexical embedder embeds nothing"
        );
    }
}
