//! Dify's knowledge API over the knowledge bases: each route of [`atlas_api::dify`] answered by
//! [`Datasets`] as one [`Serve`] implementation, typed request in, typed answer or Dify's error
//! out. The server only reads HTTP into the request and writes the answer back.
//!
//! Retrieval is [`search_options`] and the knowledge base's search, shared with the
//! `retrieve_knowledge` tool: one limit on every face.

mod documents;
mod edit;
mod retrieve;
mod shapes;
mod tags;

use std::sync::Arc;

use atlas_api::dify::limits;
use atlas_api::dify::{self, DifyError, MetadataFilter, Page, SearchMethodName};
use atlas_api::dify::{DatasetPath, DocumentPath, FieldPath, SegmentPath, StatusPath, SwitchPath};
use atlas_api::routes::{Caller, Route};
use atlas_kb::{KbError, KnowledgeBase, SearchMethod, SearchOptions};

/// Who may ask route `R`, decided from the key and the path alone, before the body is read (a
/// stranger's upload is never read). The rules are listed in one place, `admits!` below.
pub trait Admit<R: Route> {
    /// Whether `caller` may ask this of `path`.
    fn admit(&self, caller: Caller, path: R::Path) -> Result<Admitted<R>, R::Error>;
}

/// Answers route `R`, once admitted.
pub trait Serve<R: Route>: Admit<R> {
    /// The answer, or the route's refusal. It may write and embed: call it where blocking is
    /// allowed.
    fn serve(
        &self,
        admitted: Admitted<R>,
        query: R::Query,
        body: R::Body,
    ) -> Result<R::Answer, R::Error>;
}

/// A request whose caller may ask it: only [`Serve::admit`] makes one.
pub struct Admitted<R: Route> {
    caller: Caller,
    path: R::Path,
}

impl<R: Route> Admitted<R> {
    fn new(caller: Caller, path: R::Path) -> Admitted<R> {
        Admitted { caller, path }
    }
}

/// A path that names a dataset.
trait InDataset {
    fn dataset_id(&self) -> &str;
}

macro_rules! in_dataset {
    ($($path:ty),*) => {$(
        impl InDataset for $path {
            fn dataset_id(&self) -> &str {
                &self.dataset_id
            }
        }
    )*};
}

in_dataset!(
    DatasetPath,
    DocumentPath,
    SegmentPath,
    FieldPath,
    SwitchPath,
    StatusPath
);

/// Who may call which route of Dify's API: a dataset's own key (or the server token) for each
/// route of a dataset named in its path; the server token (when the server has one) for what
/// concerns every dataset. The other four say their rule beside their answer: listing tags
/// (any dataset's key too), binding and unbinding them (the dataset is in the body), the External
/// Knowledge API (likewise).
macro_rules! admits {
    (dataset in the path: $($by_dataset:ident),*; server token: $($by_server:ident),*;) => {
        $(impl Admit<dify::$by_dataset> for Datasets {
            fn admit(
                &self,
                caller: Caller,
                path: <dify::$by_dataset as Route>::Path,
            ) -> Result<Admitted<dify::$by_dataset>, DifyError> {
                self.open_dataset(&caller, path.dataset_id())?;
                Ok(Admitted::new(caller, path))
            }
        })*
        $(impl Admit<dify::$by_server> for Datasets {
            fn admit(
                &self,
                caller: Caller,
                path: <dify::$by_server as Route>::Path,
            ) -> Result<Admitted<dify::$by_server>, DifyError> {
                self.open_all(&caller)?;
                Ok(Admitted::new(caller, path))
            }
        })*
    };
}

admits! {
    dataset in the path: Retrieve, HitTesting, GetDataset, UpdateDataset, DeleteDataset,
        ListDocuments, CreateByText, CreateByFile, GetDocument, DeleteDocument, IndexingStatus,
        UpdateByText, UpdateByFile, ListSegments, AddSegments, UpdateSegment, DeleteSegment,
        ListFields, CreateField, RenameField, DeleteField, BuiltInFields, SwitchBuiltInFields,
        SetDocumentsStatus, SetDocumentMetadata, DatasetTags;
    server token: CreateDataset, DuplicateDataset, CreateFromTemplate, ListDatasets, CreateTag,
        RenameTag, DeleteTag;
}

/// The knowledge bases as Dify's knowledge API serves them, with the server token that opens
/// every dataset.
#[derive(Clone)]
pub struct Datasets {
    kb: Arc<KnowledgeBase>,
    token: Option<Arc<str>>,
}

impl Datasets {
    /// The knowledge bases of `kb`; `token`, when the server has one, opens every dataset and is
    /// what creating and listing datasets take. A server without a token lets anyone on its
    /// address create datasets, as it lets anyone call `/api/v1`.
    pub fn new(kb: Arc<KnowledgeBase>, token: Option<Arc<str>>) -> Datasets {
        Datasets { kb, token }
    }

    /// The most bytes an upload may have, its form's framing included.
    pub fn max_upload_bytes() -> usize {
        atlas_kb::split::MAX_FILE_BYTES + 64 * 1024
    }

    fn is_server_token(&self, key: &str) -> bool {
        self.token.as_deref().is_some_and(|t| t == key)
    }

    fn key(caller: &Caller) -> Result<&str, KbError> {
        caller
            .key
            .as_deref()
            .filter(|k| !k.is_empty())
            .ok_or(KbError::Unauthorized)
    }

    /// Whether the caller may read or change dataset `id`: its own key or the server token. An
    /// unknown dataset is not_found, a missing or wrong key unauthorized.
    fn open_dataset(&self, caller: &Caller, id: &str) -> Result<(), KbError> {
        let key = Self::key(caller)?;
        if self.is_server_token(key) {
            return self.kb.dataset(id).map(|_| ());
        }
        self.kb.authorize(id, key)
    }

    /// Whether the caller may create or list datasets and change tags: the server token, when
    /// there is one.
    fn open_all(&self, caller: &Caller) -> Result<(), KbError> {
        match &self.token {
            None => Ok(()),
            Some(_) if Self::key(caller).is_ok_and(|k| self.is_server_token(k)) => Ok(()),
            Some(_) => Err(KbError::Unauthorized),
        }
    }

    /// Whether the caller may list the server's tags: what opens all, or any dataset's key.
    fn open_tags(&self, caller: &Caller) -> Result<(), KbError> {
        self.open_all(caller).or_else(|e| match Self::key(caller) {
            Ok(key) if self.kb.is_dataset_key(key) => Ok(()),
            _ => Err(e),
        })
    }
}

/// Search options from what a face was given: one check of `top_k` (1 to [`limits::TOP_K`],
/// [`limits::DEFAULT_TOP_K`] when not given) on every face.
pub(crate) fn search_options(
    method: Option<SearchMethodName>,
    top_k: Option<i64>,
    score_threshold: Option<f64>,
    semantic_weight: Option<f64>,
    filter: Option<MetadataFilter>,
) -> Result<SearchOptions, KbError> {
    let defaults = SearchOptions::default();
    let top_k = match top_k {
        None => limits::DEFAULT_TOP_K,
        Some(k) if k >= 1 && k as u64 <= limits::TOP_K as u64 => k as usize,
        Some(k) => {
            return Err(KbError::InvalidParam(format!(
                "top_k must be between 1 and {}, got {k}",
                limits::TOP_K
            )));
        }
    };
    let method = match method {
        None => defaults.method,
        Some(SearchMethodName::KeywordSearch | SearchMethodName::FullTextSearch) => {
            SearchMethod::Keyword
        }
        Some(SearchMethodName::SemanticSearch) => SearchMethod::Semantic,
        Some(SearchMethodName::HybridSearch) => SearchMethod::Hybrid,
    };
    Ok(SearchOptions {
        method,
        top_k,
        score_threshold,
        semantic_weight: semantic_weight.or(defaults.semantic_weight),
        filter,
    })
}

/// Dify's page of `items`: `page` from 1, `limit` 1 to 100 (20 when not given).
fn page<T, A>(
    items: Vec<T>,
    page: Option<u64>,
    limit: Option<u64>,
    to_answer: impl Fn(&T) -> A,
) -> Result<Page<A>, DifyError> {
    let page = page.unwrap_or(1);
    if page == 0 || page > crate::MAX_SAFE_INTEGER {
        return Err(DifyError::invalid(format!(
            "page must be a number from 1 to {}",
            crate::MAX_SAFE_INTEGER
        )));
    }
    let limit = limit.unwrap_or(limits::DEFAULT_PAGE_LIMIT as u64);
    if !(1..=limits::PAGE_LIMIT as u64).contains(&limit) {
        return Err(DifyError::invalid(format!(
            "limit must be a number from 1 to {}",
            limits::PAGE_LIMIT
        )));
    }
    let start = (page - 1).saturating_mul(limit);
    let data = items
        .iter()
        .skip(usize::try_from(start).unwrap_or(usize::MAX))
        .take(limit as usize)
        .map(to_answer)
        .collect();
    Ok(Page {
        data,
        has_more: start.saturating_add(limit) < items.len() as u64,
        limit,
        total: items.len() as u64,
        page,
    })
}

/// Whether `text` holds `keyword`, case aside (an empty keyword is in every text).
fn holds(text: &str, keyword: &Option<String>) -> bool {
    keyword
        .as_deref()
        .is_none_or(|k| text.to_lowercase().contains(&k.to_lowercase()))
}
