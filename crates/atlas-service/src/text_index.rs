//! Retrieval over what names a destination: registered intents (text and keywords) and pages
//! (name, description, the intents they list).

use std::collections::HashMap;

use atlas_model::{AtlasError, Intent, Page, Result};
use atlas_text::{cosine, features, words, Embedder};

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
    vector: Vec<f32>,
}

/// A document and how well it matches a query (0..1).
#[derive(Debug, Clone)]
pub(crate) struct Hit<'a> {
    pub(crate) doc: &'a Doc,
    pub(crate) score: f32,
}

#[derive(Default)]
pub(crate) struct AppDocs {
    docs: HashMap<String, Doc>,
    /// Feature → keys of documents that have it; used when the embedder is lexical.
    postings: HashMap<String, Vec<String>>,
}

impl AppDocs {
    fn insert(&mut self, key: String, doc: Doc) {
        if !self.docs.contains_key(&key) {
            let mut tokens: Vec<String> = features(&doc.text).into_iter().map(|f| f.token).collect();
            for k in &doc.keywords {
                tokens.extend(features(k).into_iter().map(|f| f.token));
            }
            tokens.sort();
            tokens.dedup();
            for t in tokens {
                self.postings.entry(t).or_default().push(key.clone());
            }
        }
        self.docs.insert(key, doc);
    }

    /// Documents that could score above zero for a lexical embedder; `None` means all.
    fn candidates(&self, query: &Query) -> Vec<&Doc> {
        let mut keys: Vec<&String> = query.tokens.iter().filter_map(|t| self.postings.get(t)).flatten().collect();
        keys.sort();
        keys.dedup();
        keys.into_iter().filter_map(|k| self.docs.get(k)).collect()
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

fn normalize(text: &str) -> String {
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
        if self.normalized == other.normalized { 1.0 } else { cosine(&self.vector, &other.vector).max(0.0) }
    }
}

impl Doc {
    /// Exact text match scores 1; a keyword the query contains lifts the score; otherwise the
    /// embedding's cosine.
    pub(crate) fn score(&self, query: &Query) -> f32 {
        if normalize(&self.text) == query.normalized {
            return 1.0;
        }
        let semantic = cosine(&self.vector, &query.vector).max(0.0);
        let keyword_hit = self
            .keywords
            .iter()
            .filter(|k| !k.trim().is_empty())
            .any(|k| query.normalized.contains(&normalize(k)) || query.words.iter().any(|w| *w == normalize(k)));
        if keyword_hit { (0.5 + 0.5 * semantic).min(0.99) } else { semantic.min(0.99) }
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
        let doc = Doc {
            kind: DocKind::Page,
            target_page: Some(page.page_id.clone()),
            text: page.page_name.clone(),
            keywords: page.intents.clone(),
            vector,
        };
        self.lexical = embedder.is_lexical();
        self.apps.entry(page.app_id.clone()).or_default().insert(format!("p:{}", page.page_id), doc);
        Ok(())
    }

    pub(crate) fn index_intent(&mut self, intent: &Intent, embedder: &dyn Embedder) -> Result<()> {
        let text = if intent.keywords.is_empty() {
            intent.intent_text.clone()
        } else {
            format!("{} {}", intent.intent_text, intent.keywords.join(" "))
        };
        let vector = embed_one(embedder, &text)?;
        let doc = Doc {
            kind: DocKind::Intent { intent_id: intent.intent_id.clone() },
            target_page: intent.target_page.clone(),
            text: intent.intent_text.clone(),
            keywords: intent.keywords.clone(),
            vector,
        };
        self.lexical = embedder.is_lexical();
        self.apps.entry(intent.app_id.clone()).or_default().insert(format!("i:{}", intent.intent_id), doc);
        Ok(())
    }

    /// Documents of one app (or all apps) ranked by score, best first, those scoring above `floor`.
    pub(crate) fn search<'a>(&'a self, app_id: Option<&str>, query: &Query, floor: f32, want: impl Fn(&Doc) -> bool) -> Vec<(&'a str, Hit<'a>)> {
        let mut hits: Vec<(&str, Hit)> = self
            .apps
            .iter()
            .filter(|(app, _)| app_id.is_none_or(|a| a == app.as_str()))
            .flat_map(|(app, docs)| {
                let docs: Vec<&Doc> = if self.lexical { docs.candidates(query) } else { docs.docs.values().collect() };
                docs.into_iter().map(move |d| (app.as_str(), d))
            })
            .filter(|(_, d)| want(d))
            .map(|(app, doc)| (app, Hit { doc, score: doc.score(query) }))
            .filter(|(_, h)| h.score > floor)
            .collect();
        hits.sort_by(|a, b| {
            b.1.score
                .partial_cmp(&a.1.score)
                .unwrap_or(std::cmp::Ordering::Equal)
                // Among equals, a registered intent is the more deliberate statement.
                .then_with(|| matches!(a.1.doc.kind, DocKind::Page).cmp(&matches!(b.1.doc.kind, DocKind::Page)))
        });
        hits
    }

    /// The vector of a page's document, for semantic page matching.
    pub(crate) fn page_doc(&self, app_id: &str, page_id: &str) -> Option<&Doc> {
        self.apps.get(app_id).and_then(|docs| docs.docs.get(&format!("p:{page_id}")))
    }

    pub(crate) fn similarity(&self, doc: &Doc, query: &Query) -> f32 {
        cosine(&doc.vector, &query.vector).max(0.0)
    }
}
