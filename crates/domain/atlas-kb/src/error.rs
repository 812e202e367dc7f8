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
    /// A request for a route the server does not have.
    #[error("{0}")]
    RouteNotFound(String),
    /// A method the route does not take.
    #[error("{0}")]
    MethodNotAllowed(String),
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
    /// The files or the database failed.
    #[error("storage: {0}")]
    Io(String),
    /// The embedder failed.
    #[error("embedding: {0}")]
    Embed(String),
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
    /// A request from where the server takes none.
    #[error("{0}")]
    Forbidden(String),
    /// A body of a type the route does not take.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The document is archived: un-archive it before changing it.
    #[error("The archived document is not editable.")]
    ArchivedDocument,
}

impl KbError {
    /// Dify's `code` and HTTP status for this error.
    pub fn code(&self) -> (&'static str, u16) {
        match self {
            KbError::InvalidParam(_) => ("invalid_param", 400),
            KbError::TooLarge { .. } => ("file_too_large", 413),
            KbError::DatasetNotFound
            | KbError::DocumentNotFound
            | KbError::SegmentNotFound
            | KbError::MetadataFieldNotFound
            | KbError::TagNotFound
            | KbError::RouteNotFound(_) => ("not_found", 404),
            KbError::Unauthorized => ("unauthorized", 401),
            KbError::Locked { .. } | KbError::ReadOnly | KbError::Conflict(_) => ("conflict", 409),
            KbError::Io(_) | KbError::Embed(_) => ("internal_server_error", 500),
            KbError::MethodNotAllowed(_) => ("method_not_allowed", 405),
            KbError::TooManySegments { .. } => ("file_too_large", 413),
            KbError::Stopping => ("service_unavailable", 503),
            KbError::Forbidden(_) => ("forbidden", 403),
            KbError::ArchivedDocument => ("archived_document_immutable", 403),
            KbError::UnsupportedMediaType(_) => ("unsupported_media_type", 415),
        }
    }

    /// Dify's error body: `{"status", "code", "message"}`.
    pub fn to_body(&self) -> serde_json::Value {
        let (code, status) = self.code();
        let message = if status >= 500 {
            "An internal error occurred.".to_string()
        } else {
            self.to_string()
        };
        serde_json::json!({ "status": status, "code": code, "message": message })
    }
}

impl From<std::io::Error> for KbError {
    fn from(e: std::io::Error) -> Self {
        KbError::Io(e.to_string())
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
        KbError::Io(e.to_string())
    }
}
