//! One error type for the whole service, mapped to seed 000's codes in exactly one place.

use serde_json::Value;

/// Seed 000 §5's error codes, plus the two the transport needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// `INVALID_PARAMETER`: the request is malformed.
    InvalidParameter,
    /// `PAGE_NOT_FOUND`.
    PageNotFound,
    /// `INTENT_NOT_FOUND`.
    IntentNotFound,
    /// `PATH_NOT_FOUND`.
    PathNotFound,
    /// `GRAPH_ERROR`: a fault of the graph or its store.
    GraphError,
    /// `VECTOR_STORE_ERROR`: the embedder failed.
    VectorStoreError,
    /// `PAYLOAD_TOO_LARGE`.
    PayloadTooLarge,
    /// `UNAUTHORIZED`: the token is missing or wrong.
    Unauthorized,
    /// `NOT_FOUND`: no app, dataset, entity or route of that name.
    NotFound,
    /// `FORBIDDEN`: a request from where the server takes none.
    Forbidden,
    /// `UNSUPPORTED_MEDIA_TYPE`.
    UnsupportedMediaType,
    /// The store cannot take writes now (its database went away); try again.
    ServiceUnavailable,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::InvalidParameter,
        ErrorCode::PageNotFound,
        ErrorCode::IntentNotFound,
        ErrorCode::PathNotFound,
        ErrorCode::GraphError,
        ErrorCode::VectorStoreError,
        ErrorCode::PayloadTooLarge,
        ErrorCode::Unauthorized,
        ErrorCode::NotFound,
        ErrorCode::Forbidden,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::ServiceUnavailable,
    ];

    /// When a code's status is answered, as the OpenAPI document says it.
    pub fn when(self) -> &'static str {
        match self {
            ErrorCode::InvalidParameter => "invalid input",
            ErrorCode::PageNotFound
            | ErrorCode::IntentNotFound
            | ErrorCode::PathNotFound
            | ErrorCode::NotFound => "unknown page, intent, path or entity",
            ErrorCode::GraphError | ErrorCode::VectorStoreError => "a fault of Atlas",
            ErrorCode::PayloadTooLarge => "body over 10 MB",
            ErrorCode::Unauthorized => {
                "missing or wrong bearer token (a server started with --token)"
            }
            ErrorCode::Forbidden => {
                "a web page of another origin, or a host name the server does not answer to"
            }
            ErrorCode::UnsupportedMediaType => "the body is not of the route's content type",
            ErrorCode::ServiceUnavailable => {
                "the database went away: nothing was written, try again"
            }
        }
    }

    /// The code as seed 000 writes it (`PAGE_NOT_FOUND`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParameter => "INVALID_PARAMETER",
            ErrorCode::PageNotFound => "PAGE_NOT_FOUND",
            ErrorCode::IntentNotFound => "INTENT_NOT_FOUND",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::GraphError => "GRAPH_ERROR",
            ErrorCode::VectorStoreError => "VECTOR_STORE_ERROR",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
        }
    }

    /// HTTP status per DESIGN.md: 400 for bad input, 404 for an unknown page or entity, 500 for a
    /// fault of ours.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidParameter => 400,
            ErrorCode::PageNotFound | ErrorCode::IntentNotFound | ErrorCode::NotFound => 404,
            ErrorCode::PathNotFound => 404,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::GraphError | ErrorCode::VectorStoreError => 500,
            ErrorCode::ServiceUnavailable => 503,
        }
    }
}

/// Every error of the service, each answered with its seed code and HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum AtlasError {
    /// The request is malformed.
    #[error("{message}")]
    InvalidParameter {
        /// What is wrong.
        message: String,
        /// The field at fault (`{"field": …}`), or more.
        details: Value,
    },
    /// No page of that id.
    #[error("page not found: {0}")]
    PageNotFound(String),
    /// No intent of that id.
    #[error("intent not found: {0}")]
    IntentNotFound(String),
    /// No way there.
    #[error("{0}")]
    PathNotFound(String),
    /// A fault in the graph or its store: ours, not the caller's.
    #[error("graph error: {0}")]
    Graph(String),
    /// A fault of ours caused by another error, kept as the source: what was being done, and
    /// why it failed.
    #[error("graph error: {context}: {source}")]
    Fault {
        /// What was being done.
        context: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The embedder failed.
    #[error("vector store error: {context}{}", source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    VectorStore {
        /// What was being embedded, or what went wrong.
        context: String,
        /// The embedder's error, when it answered one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A body over the size limit.
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The most the route takes, in bytes.
        limit: usize,
    },
    /// The bearer token is missing or wrong.
    #[error("missing or wrong bearer token")]
    Unauthorized,
    /// No app, dataset, entity or route of that name.
    #[error("{0}")]
    NotFound(String),
    /// A request from where this server does not take requests (a web page of another origin,
    /// a host name it does not answer to).
    #[error("{0}")]
    Forbidden(String),
    /// A body of a type the route does not take.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The store cannot be reached now: nothing was written, and the request can be retried.
    #[error("{context}{}", source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    Unavailable {
        /// What cannot be reached, or why not.
        context: String,
        /// The store's error, when one said so.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// What `Retry-After` asks of a client refused for now: a few seconds, long enough for a
/// database to come back or a disk to be freed between tries, short enough for an agent's step.
pub const RETRY_AFTER_SECS: u64 = 5;

/// A result whose error is an [`AtlasError`].
pub type Result<T, E = AtlasError> = std::result::Result<T, E>;

impl AtlasError {
    /// Invalid input about one named field.
    pub fn invalid(field: &str, message: impl Into<String>) -> AtlasError {
        AtlasError::InvalidParameter {
            message: message.into(),
            details: serde_json::json!({ "field": field }),
        }
    }

    /// A fault of ours while doing `context`, caused by `source`.
    pub fn fault(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> AtlasError {
        AtlasError::Fault {
            context: context.into(),
            source: source.into(),
        }
    }

    /// The embedder failed while embedding `context`, as `source` says.
    pub fn embedding(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> AtlasError {
        AtlasError::VectorStore {
            context: context.into(),
            source: Some(source.into()),
        }
    }

    /// Nothing can be written now, for a reason said in words; try again.
    pub fn unavailable(context: impl Into<String>) -> AtlasError {
        AtlasError::Unavailable {
            context: context.into(),
            source: None,
        }
    }

    /// Nothing could be written while doing `context`, as `source` says; try again.
    pub fn away(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> AtlasError {
        AtlasError::Unavailable {
            context: context.into(),
            source: Some(source.into()),
        }
    }

    /// The seed's code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            AtlasError::InvalidParameter { .. } => ErrorCode::InvalidParameter,
            AtlasError::PageNotFound(_) => ErrorCode::PageNotFound,
            AtlasError::IntentNotFound(_) => ErrorCode::IntentNotFound,
            AtlasError::PathNotFound(_) => ErrorCode::PathNotFound,
            AtlasError::Graph(_) | AtlasError::Fault { .. } => ErrorCode::GraphError,
            AtlasError::VectorStore { .. } => ErrorCode::VectorStoreError,
            AtlasError::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            AtlasError::Unauthorized => ErrorCode::Unauthorized,
            AtlasError::NotFound(_) => ErrorCode::NotFound,
            AtlasError::Forbidden(_) => ErrorCode::Forbidden,
            AtlasError::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            AtlasError::Unavailable { .. } => ErrorCode::ServiceUnavailable,
        }
    }

    /// How long a client should wait before it tries again (`Retry-After`, in seconds): only
    /// for a refusal that nothing was written by and that passes (the store away, the disk full).
    pub fn retry_after_secs(&self) -> Option<u64> {
        matches!(self, AtlasError::Unavailable { .. }).then_some(RETRY_AFTER_SECS)
    }

    /// The error body's `details`: the field at fault, or `{}`.
    pub fn details(&self) -> Value {
        match self {
            AtlasError::InvalidParameter { details, .. } => details.clone(),
            AtlasError::PageNotFound(id) => serde_json::json!({ "page_id": id }),
            AtlasError::IntentNotFound(intent) => serde_json::json!({ "intent": intent }),
            AtlasError::PayloadTooLarge { limit } => serde_json::json!({ "limit_bytes": limit }),
            AtlasError::Unavailable { .. } => {
                serde_json::json!({ "retry": true, "retry_after_secs": RETRY_AFTER_SECS })
            }
            _ => serde_json::json!({}),
        }
    }

    /// Seed 000 §5's error body: `{"success": false, "error": {"code", "message", "details"}}`.
    pub fn to_body(&self) -> Value {
        serde_json::json!({
            "success": false,
            "error": { "code": self.code().as_str(), "message": self.to_string(), "details": self.details() }
        })
    }
}
