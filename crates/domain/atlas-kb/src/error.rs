//! What can go wrong, as the types Dify's error codes are mapped from (in one place: [`KbError::code`]).

/// Why a knowledge-base call failed.
#[derive(Debug, thiserror::Error)]
pub enum KbError {
    /// The request is malformed (`invalid_param`).
    #[error("{0}")]
    InvalidParam(String),
    /// No dataset of that id.
    #[error("Dataset not found.")]
    DatasetNotFound,
    /// No document of that id.
    #[error("Document not found.")]
    DocumentNotFound,
    /// No segment of that id.
    #[error("Segment not found.")]
    SegmentNotFound,
    /// No metadata field of that id.
    #[error("Metadata field not found.")]
    MetadataFieldNotFound,
    /// No tag of that id.
    #[error("Tag not found.")]
    TagNotFound,
    /// What was to be made exists already (a name taken).
    #[error("{0}")]
    Conflict(String),
    /// The key is missing or wrong.
    #[error("Invalid Authorization header or API key.")]
    Unauthorized,
    /// Over a size limit.
    #[error("{what} is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: String,
        /// Its size in bytes.
        size: usize,
        /// The most taken.
        limit: usize,
    },
    #[error(
        "the knowledge base in {path} is open for writing by another process{holder}; while `atlas serve` runs, change it through the server's /v1/datasets routes"
    )]
    /// Another process writes the knowledge base.
    Locked {
        /// The folder.
        path: String,
        /// Which process holds it.
        holder: String,
    },
    /// Opened for reading only.
    #[error("this knowledge base was opened read-only")]
    ReadOnly,
    /// A file of the folder failed.
    #[error("storage: {0}")]
    Io(#[from] std::io::Error),
    /// A kept file that cannot be read as what it should be.
    #[error("storage: {name} is damaged: {source}")]
    Damaged {
        /// The file.
        name: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// What was to be kept could not be written as JSON.
    #[error("storage: {0}")]
    Encode(#[source] serde_json::Error),
    /// The store failed.
    #[error("storage: {0}")]
    Store(#[source] atlas_store::StoreError),
    /// The embedder failed.
    #[error("{0}")]
    Embed(#[from] atlas_text::EmbedError),
    #[error(
        "the document has {count} segments, over the limit of {limit}: split it into several documents"
    )]
    /// A document of more segments than one takes.
    TooManySegments {
        /// The document's segments.
        count: usize,
        /// The most one document takes.
        limit: usize,
    },
    /// The server is stopping: the document was not added.
    #[error("the server is stopping; the document was not added, send it again once it is back")]
    Stopping,
    /// The document is archived: un-archive it before changing it.
    #[error("The archived document is not editable.")]
    ArchivedDocument,
}

impl KbError {
    /// Whether nothing was written and the same request may succeed later: the server is
    /// stopping, its disk is full, its database away.
    pub fn is_transient(&self) -> bool {
        match self {
            KbError::Stopping => true,
            KbError::Store(e) => e.is_transient(),
            KbError::Io(e) => atlas_store::files::is_no_space(e),
            _ => false,
        }
    }

    /// Dify's `code` and HTTP status for this error.
    pub fn code(&self) -> (&'static str, u16) {
        if self.is_transient() {
            return ("service_unavailable", 503);
        }
        match self {
            KbError::InvalidParam(_) => ("invalid_param", 400),
            KbError::TooLarge { .. } => ("file_too_large", 413),
            KbError::DatasetNotFound
            | KbError::DocumentNotFound
            | KbError::SegmentNotFound
            | KbError::MetadataFieldNotFound
            | KbError::TagNotFound => ("not_found", 404),
            KbError::Unauthorized => ("unauthorized", 401),
            KbError::Locked { .. } | KbError::ReadOnly | KbError::Conflict(_) => ("conflict", 409),
            KbError::Io(_)
            | KbError::Damaged { .. }
            | KbError::Encode(_)
            | KbError::Store(_)
            | KbError::Embed(_) => ("internal_server_error", 500),
            KbError::TooManySegments { .. } => ("file_too_large", 413),
            KbError::Stopping => ("service_unavailable", 503),
            KbError::ArchivedDocument => ("archived_document_immutable", 403),
        }
    }
}

impl From<KbError> for atlas_api::dify::DifyError {
    /// Dify's error for it (the server logs a fault of its own and tells the client less).
    fn from(e: KbError) -> Self {
        let (code, status) = e.code();
        atlas_api::dify::DifyError {
            status,
            code: code.into(),
            message: e.to_string(),
        }
    }
}

impl From<KbError> for atlas_model::AtlasError {
    /// Seed 000's error for it, as the tools answer (the Dify routes keep Dify's own).
    fn from(e: KbError) -> Self {
        use atlas_model::AtlasError;
        if e.is_transient() {
            return AtlasError::away("the knowledge base", e);
        }
        match e {
            KbError::InvalidParam(_)
            | KbError::TooLarge { .. }
            | KbError::TooManySegments { .. } => AtlasError::InvalidParameter {
                message: e.to_string(),
                details: serde_json::json!({}),
            },
            KbError::DatasetNotFound
            | KbError::DocumentNotFound
            | KbError::SegmentNotFound
            | KbError::MetadataFieldNotFound
            | KbError::TagNotFound => AtlasError::NotFound(e.to_string()),
            KbError::Unauthorized => AtlasError::Unauthorized,
            KbError::Stopping => AtlasError::away("the knowledge base", e),
            KbError::Locked { .. }
            | KbError::ReadOnly
            | KbError::Conflict(_)
            | KbError::ArchivedDocument
            | KbError::Io(_)
            | KbError::Damaged { .. }
            | KbError::Encode(_)
            | KbError::Store(_)
            | KbError::Embed(_) => AtlasError::fault("the knowledge base", e),
        }
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> KbError {
    KbError::InvalidParam(message.into())
}

/// A name (of a dataset, a tag, a metadata field) trimmed, if it is 1 to `longest` characters;
/// `what` says whose name it is in the error ("a tag's name").
pub(crate) fn valid_name<'a>(
    name: &'a str,
    what: &str,
    longest: usize,
) -> Result<&'a str, KbError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > longest {
        return Err(invalid(format!("{what} is 1 to {longest} characters")));
    }
    Ok(name)
}

impl From<atlas_store::StoreError> for KbError {
    fn from(e: atlas_store::StoreError) -> Self {
        KbError::Store(e)
    }
}
