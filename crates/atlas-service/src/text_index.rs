//! Retrieval over what names a destination: registered intents (text and keywords) and pages
//! (name, description, the intents they list).

use std::collections::HashMap;

use atlas_model::{AtlasError, Intent, Page, Result};
use atlas_text::{Embedder, cosine, features, words};

/// What a document points at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DocKind {
    Intent { intent_id: String },
    Page,
}

#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) kind: DocKind,
    /// The page the document leads to, if known.
    pub(crate) target_page: Option<String>,
    pub(crate) text: String,
    pub(crate) keywords: Vec<String>,
    /// `text` and `keywords` normalised once here rather than on every comparison.
    normalized: String,
    normalized_keywords: Vec<String>,
    vector: Vec<f32>,
}

/// A document and how well it matches a query (0..1).
#[derive(Debug, Clone)]
pub(crate) struct Hit<'a> {
    pub(crate) doc: &'a Doc,
    pub(crate) score: f32,
}

/// One app's documents. Documents are never removed, so their positions are stable handles.
#[derive(Default)]
pub(crate) struct AppDocs {
    docs: Vec<Doc>,
    by_key: HashMap<String, u32>,
    /// Feature → documents that have it; used when the embedder is lexical.
    postings: HashMap<String, Vec<u32>>,
    /// Normalised text → documents, for the exact matches that need no scoring at all.
    exact: HashMap<String, Vec<u32>>,
}

impl AppDocs {
    fn insert(&mut self, key: String, doc: Doc) {
        let (at, previous) = match self.by_key.get(&key) {
            Some(&at) => (
                at,
                Some(std::mem::replace(&mut self.docs[at as usize], doc)),
            ),
            None => {
                let at = self.docs.len() as u32;
                self.docs.push(doc);
                self.by_key.insert(key, at);
                (at, None)
            }
        };
        let doc = &self.docs[at as usize];
        // A replaced document keeps its old postings: extra candidates cost a comparison, never
        // a wrong answer, and it spares tracking which features went away.
        let mut tokens: Vec<String> = features(&doc.text).into_iter().map(|f| f.token).collect();
        for k in &doc.keywords {
            tokens.extend(features(k).into_iter().map(|f| f.token));
        }
        tokens.sort();
        tokens.dedup();
        for t in tokens {
            let list = self.postings.entry(t).or_default();
            if list.last() != Some(&at) && !list.contains(&at) {
                list.push(at);
            }
        }
        if previous
            .as_ref()
            .is_none_or(|p| p.normalized != doc.normalized)
        {
            self.exact
                .entry(doc.normalized.clone())
                .or_default()
                .push(at);
        }
    }

    /// Documents that could score above zero for a lexical embedder.
    fn candidates(&self, query: &Query) -> Vec<&Doc> {
        let mut ids: Vec<u32> = query
            .tokens
            .iter()
            .filter_map(|t| self.postings.get(t))
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter().map(|i| &self.docs[i as usize]).collect()
    }
}

#[derive(Default)]
pub(crate) struct TextIndex {
    /// app_id → its documents.
    apps: HashMap<String, AppDocs>,
    lexical: bool,
}

fn embed_one(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>> {
    embedder
        .embed(&[text])
        .map_err(|e| AtlasError::VectorStore(e.to_string()))?
        .pop()
        .ok_or_else(|| AtlasError::VectorStore("embedder returned no vector".into()))
}

/// The query's vector and its normalised form for exact comparisons.
pub(crate) struct Query {
    normalized: String,
    words: Vec<String>,
    tokens: Vec<String>,
    vector: Vec<f32>,
}

pub(crate) fn normalize(text: &str) -> String {
    text.trim().to_lowercase()
}

impl Query {
    pub(crate) fn new(text: &str, embedder: &dyn Embedder) -> Result<Query> {
        Ok(Query {
            normalized: normalize(text),
            words: words(text),
            tokens: features(text).into_iter().map(|f| f.token).collect(),
            vector: embed_one(embedder, text)?,
        })
    }

    pub(crate) fn similarity_to(&self, other: &Query) -> f32 {
        if self.normalized == other.normalized {
            1.0
        } else {
            cosine(&self.vector, &other.vector).max(0.0)
        }
    }
}

impl Doc {
    fn new(
        kind: DocKind,
        target_page: Option<String>,
        text: String,
        keywords: Vec<String>,
        vector: Vec<f32>,
    ) -> Doc {
        let normalized = normalize(&text);
        let normalized_keywords = keywords.iter().map(|k| normalize(k)).collect();
        Doc {
            kind,
            target_page,
            text,
            keywords,
            normalized,
            normalized_keywords,
            vector,
        }
    }

    /// Exact text match scores 1; a keyword the query contains lifts the score; otherwise the
    /// embedding's cosine.
    pub(crate) fn score(&self, query: &Query) -> f32 {
        if self.normalized == query.normalized {
            return 1.0;
        }
        let semantic = cosine(&self.vector, &query.vector).max(0.0);
        let keyword_hit = self
            .normalized_keywords
            .iter()
            .filter(|k| !k.is_empty())
            .any(|k| query.normalized.contains(k.as_str()) || query.words.iter().any(|w| w == k));
        if keyword_hit {
            (0.5 + 0.5 * semantic).min(0.99)
        } else {
            semantic.min(0.99)
        }
    }
}

impl TextIndex {
    pub(crate) fn index_page(&mut self, page: &Page, embedder: &dyn Embedder) -> Result<()> {
        let mut text = page.page_name.clone();
        if !page.description.is_empty() {
            text.push(' ');
            text.push_str(&page.description);
        }
        let vector = embed_one(embedder, &text)?;
        let doc = Doc::new(
            DocKind::Page,
            Some(page.page_id.clone()),
            page.page_name.clone(),
            page.intents.clone(),
            vector,
        );
        self.lexical = embedder.is_lexical();
        self.apps
            .entry(page.app_id.clone())
            .or_default()
            .insert(format!("p:{}", page.page_id), doc);
        Ok(())
    }

    pub(crate) fn index_intent(&mut self, intent: &Intent, embedder: &dyn Embedder) -> Result<()> {
        let text = if intent.keywords.is_empty() {
            intent.intent_text.clone()
        } else {
            format!("{} {}", intent.intent_text, intent.keywords.join(" "))
        };
        let vector = embed_one(embedder, &text)?;
        let doc = Doc::new(
            DocKind::Intent {
                intent_id: intent.intent_id.clone(),
            },
            intent.target_page.clone(),
            intent.intent_text.clone(),
            intent.keywords.clone(),
            vector,
        );
        self.lexical = embedder.is_lexical();
        self.apps
            .entry(intent.app_id.clone())
            .or_default()
            .insert(format!("i:{}", intent.intent_id), doc);
        Ok(())
    }

    /// Documents of one app (or all apps) ranked by score, best first, those scoring above `floor`.
    pub(crate) fn search<'a>(
        &'a self,
        app_id: Option<&str>,
        query: &Query,
        floor: f32,
        want: impl Fn(&Doc) -> bool,
    ) -> Vec<(&'a str, Hit<'a>)> {
        let mut hits: Vec<(&str, Hit)> = self
            .apps
            .iter()
            .filter(|(app, _)| app_id.is_none_or(|a| a == app.as_str()))
            .flat_map(|(app, docs)| {
                let docs: Vec<&Doc> = if self.lexical {
                    docs.candidates(query)
                } else {
                    docs.docs.iter().collect()
                };
                docs.into_iter().map(move |d| (app.as_str(), d))
            })
            .filter(|(_, d)| want(d))
            .map(|(app, doc)| {
                (
                    app,
                    Hit {
                        doc,
                        score: doc.score(query),
                    },
                )
            })
            .filter(|(_, h)| h.score > floor)
            .collect();
        hits.sort_by(|a, b| {
            b.1.score
                .partial_cmp(&a.1.score)
                .unwrap_or(std::cmp::Ordering::Equal)
                // Among equals, a registered intent is the more deliberate statement.
                .then_with(|| {
                    matches!(a.1.doc.kind, DocKind::Page)
                        .cmp(&matches!(b.1.doc.kind, DocKind::Page))
                })
        });
        hits
    }

    /// The documents of an app whose text is exactly `normalized` (they would score 1), registered
    /// intents first: the answer for the common case of an agent repeating a known intent,
    /// found without segmenting, embedding or scoring anything.
    pub(crate) fn exact<'a>(
        &'a self,
        app_id: &str,
        normalized: &str,
        want: impl Fn(&Doc) -> bool,
    ) -> Option<&'a Doc> {
        let docs = self.apps.get(app_id)?;
        let matching = docs
            .exact
            .get(normalized)?
            .iter()
            .map(|i| &docs.docs[*i as usize])
            .filter(|d| d.normalized == normalized && want(d));
        let mut best: Option<&Doc> = None;
        for doc in matching {
            if best.is_none()
                || (matches!(best.map(|b| &b.kind), Some(DocKind::Page))
                    && !matches!(doc.kind, DocKind::Page))
            {
                best = Some(doc);
            }
        }
        best
    }

    /// The vector of a page's document, for semantic page matching.
    pub(crate) fn page_doc(&self, app_id: &str, page_id: &str) -> Option<&Doc> {
        let docs = self.apps.get(app_id)?;
        docs.by_key
            .get(&format!("p:{page_id}"))
            .map(|i| &docs.docs[*i as usize])
    }

    pub(crate) fn similarity(&self, doc: &Doc, query: &Query) -> f32 {
        cosine(&doc.vector, &query.vector).max(0.0)
    }
}
