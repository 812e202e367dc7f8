//! Retrieval over what names a destination: registered intents (text and keywords) and pages
//! (name, description, the intents they list).

use std::collections::HashMap;

use atlas_model::{AtlasError, Intent, Page, Result};
use atlas_text::{Embedder, HashEmbedder, Vector, cosine, features, words};

/// What a document points at.
#[derive(Debug, Clone, PartialEq)]
pub enum DocKind {
    /// A registered intent.
    Intent {
        /// The intent's id.
        intent_id: String,
    },
    /// A page.
    Page,
}

/// A page or an intent, as the index keeps it.
#[derive(Debug, Clone)]
pub struct Doc {
    /// A page or an intent.
    pub kind: DocKind,
    /// The page the document leads to, if known.
    pub target_page: Option<String>,
    /// The page's name and description, or the intent's text.
    pub text: String,
    /// An intent's keywords, or the intents a page serves.
    pub keywords: Vec<String>,
    /// `text` and `keywords` normalised once here rather than on every comparison.
    pub(crate) normalized: String,
    pub(crate) normalized_keywords: Vec<String>,
    /// The whole document's vector (text and keywords together).
    pub(crate) vector: Vector,
    /// With a model embedder, a vector for each part on its own (a page's name, its description,
    /// each intent it lists; an intent's text, each keyword): a short request is like one part
    /// far more than like all of them run together, and the best part is the document's score.
    pub(crate) facets: Vec<Vector>,
    /// A page's name and description hashed by words, when the graph's embedder is not that
    /// hashing already (see [`TextIndex::screen_similarity`]).
    pub(crate) words_vector: Option<Vector>,
    /// A fingerprint of the texts the vectors were made of ([`DocTexts::fingerprint`]): a
    /// document indexed again with the same texts (a page revisited, its statistics updated)
    /// keeps its vectors instead of embedding anew. Eight bytes, not a third copy of the texts.
    pub(crate) embedded: u64,
}

/// A document and how well it matches a query (0..1).
#[derive(Debug, Clone)]
pub struct Hit<'a> {
    /// The document.
    pub doc: &'a Doc,
    /// How well it matches (0..1).
    pub score: f32,
}

/// One app's documents. Documents are never removed, so their positions are stable handles.
#[derive(Default)]
pub struct AppDocs {
    pub(crate) docs: Vec<Doc>,
    pub(crate) by_key: HashMap<String, u32>,
    /// Feature → documents that have it; used when the embedder is lexical.
    pub(crate) postings: HashMap<String, Vec<u32>>,
    /// Normalised text → documents, for the exact matches that need no scoring at all.
    pub(crate) exact: HashMap<String, Vec<u32>>,
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

/// Every app's pages and intents, searchable by words and by meaning.
#[derive(Default)]
pub struct TextIndex {
    /// app_id → its documents.
    pub(crate) apps: HashMap<String, AppDocs>,
    pub(crate) lexical: bool,
}

fn embed_one(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>> {
    embedder
        .embed(&[text])
        .map_err(|e| AtlasError::embedding("a text", e))?
        .pop()
        .ok_or_else(|| AtlasError::VectorStore {
            context: "the embedder returned no vector".into(),
            source: None,
        })
}

/// The query's vector and its normalised form for exact comparisons.
pub struct Query {
    normalized: String,
    words: Vec<String>,
    tokens: Vec<String>,
    vector: Vec<f32>,
}

/// A text as exact comparisons see it: trimmed and lower-cased.
pub fn normalize(text: &str) -> String {
    text.trim().to_lowercase()
}

impl Query {
    /// The query of `text`, embedded as the index's documents are.
    pub fn new(text: &str, embedder: &dyn Embedder) -> Result<Query> {
        Ok(Query::with_vector(text, embed_one(embedder, text)?))
    }

    fn with_vector(text: &str, vector: Vec<f32>) -> Query {
        Query {
            normalized: normalize(text),
            words: words(text),
            tokens: features(text).into_iter().map(|f| f.token).collect(),
            vector,
        }
    }

    /// A query hashed by words, for [`TextIndex::screen_similarity`].
    pub fn words_only(text: &str) -> Query {
        Query::with_vector(text, HashEmbedder::default().embed_one(text))
    }

    /// How alike two queries are (0..1).
    pub fn similarity_to(&self, other: &Query) -> f32 {
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
        vector: Vector,
        facets: Vec<Vector>,
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
            facets,
            words_vector: None,
            embedded: 0,
        }
    }

    /// Exact text match scores 1; a keyword the query contains lifts the score; otherwise the
    /// embedding's cosine.
    pub fn score(&self, query: &Query) -> f32 {
        if self.normalized == query.normalized {
            return 1.0;
        }
        let semantic = self
            .facets
            .iter()
            .map(|f| f.cosine(&query.vector))
            .fold(self.vector.cosine(&query.vector), f32::max)
            .max(0.0);
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

/// The index key of a page's document.
pub fn page_key(page_id: &str) -> String {
    format!("p:{page_id}")
}

/// The index key of a registered intent's document.
pub fn intent_key(intent_id: &str) -> String {
    format!("i:{intent_id}")
}

/// What a document's vectors are made of: its whole text and, for a model embedder, its parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocTexts {
    whole: String,
    parts: Vec<String>,
}

impl DocTexts {
    /// A page: its name and description together; the name, the description and each intent it
    /// lists apart.
    pub fn of_page(page_name: &str, description: &str, intents: &[String]) -> DocTexts {
        let mut whole = page_name.to_string();
        if !description.is_empty() {
            whole.push(' ');
            whole.push_str(description);
        }
        let mut parts = vec![page_name, description];
        parts.extend(intents.iter().map(String::as_str));
        DocTexts::new(whole, parts)
    }

    /// An intent: its text with its keywords; the text and each keyword apart.
    pub fn of_intent(intent_text: &str, keywords: &[String]) -> DocTexts {
        let whole = if keywords.is_empty() {
            intent_text.to_string()
        } else {
            format!("{intent_text} {}", keywords.join(" "))
        };
        let mut parts = vec![intent_text];
        parts.extend(keywords.iter().map(String::as_str));
        DocTexts::new(whole, parts)
    }

    fn new(whole: String, parts: Vec<&str>) -> DocTexts {
        let mut parts: Vec<String> = parts
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        parts.sort_unstable();
        parts.dedup();
        DocTexts { whole, parts }
    }

    /// A 64-bit hash of the texts (SipHash, fixed keys): equal texts, equal fingerprints; two
    /// different texts share one once in 2^64.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.whole.hash(&mut hasher);
        self.parts.hash(&mut hasher);
        hasher.finish()
    }

    /// Every text an embedder is asked for, to embed them before a write lock is taken.
    pub fn all(&self, embedder: &dyn Embedder) -> Vec<String> {
        let mut texts = vec![self.whole.clone()];
        if facets_wanted(embedder, &self.parts) {
            texts.extend(self.parts.iter().cloned());
        }
        texts
    }
}

/// Whether a document gets a vector per part (see [`Doc::facets`]): with a model embedder and
/// more than one part. A lexical embedder's whole-text vector already counts every part's words.
fn facets_wanted(embedder: &dyn Embedder, parts: &[String]) -> bool {
    !embedder.is_lexical() && parts.len() > 1
}

/// The vectors of a document made of `texts` (whose fingerprint is `embedded`): those of
/// `previous` when it was made of the same.
fn vectors(
    texts: &DocTexts,
    embedded: u64,
    previous: Option<&Doc>,
    embedder: &dyn Embedder,
) -> Result<(Vector, Vec<Vector>)> {
    if let Some(doc) = previous.filter(|d| d.embedded == embedded) {
        return Ok((doc.vector.clone(), doc.facets.clone()));
    }
    let vector = Vector::from(embed_one(embedder, &texts.whole)?);
    if !facets_wanted(embedder, &texts.parts) {
        return Ok((vector, vec![]));
    }
    let parts: Vec<&str> = texts.parts.iter().map(String::as_str).collect();
    let facets = embedder
        .embed(&parts)
        .map_err(|e| AtlasError::embedding("a text's parts", e))?;
    if facets.len() != parts.len() {
        return Err(AtlasError::VectorStore {
            context: format!(
                "the embedder returned {} vectors for {} texts",
                facets.len(),
                parts.len()
            ),
            source: None,
        });
    }
    Ok((vector, facets.into_iter().map(Vector::from).collect()))
}

/// An embedder that answers from vectors computed before the write lock was taken (see
/// `Atlas::embed_ahead`), and asks the real one only for what is missing: a model spends
/// milliseconds on a text, and no reader should wait for that.
pub struct Prepared<'a> {
    /// The embedder for what was not prepared.
    pub inner: &'a dyn Embedder,
    /// Vectors computed ahead, by text.
    pub ready: &'a HashMap<String, Vec<f32>>,
}

impl Embedder for Prepared<'_> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, atlas_text::EmbedError> {
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !self.ready.contains_key(*t))
            .collect();
        let mut fresh = if missing.is_empty() {
            vec![]
        } else {
            self.inner.embed(&missing)?
        }
        .into_iter();
        Ok(texts
            .iter()
            .map(|t| match self.ready.get(*t) {
                Some(v) => v.clone(),
                None => fresh.next().unwrap_or_default(),
            })
            .collect())
    }

    fn match_threshold(&self) -> f32 {
        self.inner.match_threshold()
    }

    fn is_lexical(&self) -> bool {
        self.inner.is_lexical()
    }
}

impl TextIndex {
    /// Indexes (or indexes again) a page's texts.
    pub fn index_page(&mut self, page: &Page, embedder: &dyn Embedder) -> Result<()> {
        let texts = DocTexts::of_page(&page.page_name, &page.description, &page.intents);
        let key = page_key(&page.page_id);
        let embedded = texts.fingerprint();
        let (vector, facets) = vectors(&texts, embedded, self.doc(&page.app_id, &key), embedder)?;
        let mut doc = Doc::new(
            DocKind::Page,
            Some(page.page_id.clone()),
            page.page_name.clone(),
            page.intents.clone(),
            vector,
            facets,
        );
        if embedder.name() != HashEmbedder::default().name() {
            doc.words_vector = Some(Vector::from(
                HashEmbedder::default().embed_one(&texts.whole),
            ));
        }
        doc.embedded = embedded;
        self.lexical = embedder.is_lexical();
        self.apps
            .entry(page.app_id.clone())
            .or_default()
            .insert(key, doc);
        Ok(())
    }

    /// Indexes (or indexes again) an intent's texts.
    pub fn index_intent(&mut self, intent: &Intent, embedder: &dyn Embedder) -> Result<()> {
        let texts = DocTexts::of_intent(&intent.intent_text, &intent.keywords);
        let key = intent_key(&intent.intent_id);
        let embedded = texts.fingerprint();
        let (vector, facets) = vectors(&texts, embedded, self.doc(&intent.app_id, &key), embedder)?;
        let mut doc = Doc::new(
            DocKind::Intent {
                intent_id: intent.intent_id.clone(),
            },
            intent.target_page.clone(),
            intent.intent_text.clone(),
            intent.keywords.clone(),
            vector,
            facets,
        );
        doc.embedded = embedded;
        self.lexical = embedder.is_lexical();
        self.apps
            .entry(intent.app_id.clone())
            .or_default()
            .insert(key, doc);
        Ok(())
    }

    /// Whether the document under `key` already has the vectors of `texts`.
    pub fn is_embedded(&self, app_id: &str, key: &str, texts: &DocTexts) -> bool {
        self.doc(app_id, key)
            .is_some_and(|d| d.embedded == texts.fingerprint())
    }

    fn doc(&self, app_id: &str, key: &str) -> Option<&Doc> {
        let docs = self.apps.get(app_id)?;
        docs.by_key.get(key).map(|i| &docs.docs[*i as usize])
    }

    /// Documents of one app (or all apps) ranked by score, best first, those scoring above `floor`.
    pub fn search<'a>(
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
    pub fn exact<'a>(
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
    pub fn page_doc(&self, app_id: &str, page_id: &str) -> Option<&Doc> {
        self.doc(app_id, &page_key(page_id))
    }

    /// How alike a screen's words (a [`Query::words_only`]) are to a page's name and description.
    ///
    /// Whatever the graph's embedder, this compares words, not meanings: a screen is the same
    /// screen when it shows the same labels, while two screens that mean alike ("Settings",
    /// "Preferences"; a list and its item's details) are different places to an agent. A model
    /// embedder finds most screens of one app alike and would merge them.
    pub fn screen_similarity(&self, doc: &Doc, screen: &Query) -> f32 {
        doc.words_vector
            .as_ref()
            .unwrap_or(&doc.vector)
            .cosine(&screen.vector)
            .max(0.0)
    }
}
