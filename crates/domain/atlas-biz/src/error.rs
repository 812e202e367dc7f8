//! What can go wrong with a business graph. The service maps these to seed 000's error codes.

/// What can go wrong with a business graph or a tool call.
#[derive(Debug, thiserror::Error)]
pub enum BizError {
    /// Input that cannot be a business graph or a tool call: the message says what and where.
    #[error("{0}")]
    Invalid(String),
    /// No entity of this type with this id.
    #[error("no {kind} with id {id:?}")]
    NotFound {
        /// The type asked for.
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// Another process (a running server) holds the folder.
    #[error(
        "{path} is in use by another atlas process{holder}; change the business graph through that server's HTTP API"
    )]
    Locked {
        /// The folder.
        path: String,
        /// Who holds it, as its lock file says (" (pid N)"), or empty.
        holder: String,
    },
    /// Reading or writing the data folder (or the database) failed.
    #[error("storage: {0}")]
    Store(#[from] atlas_store::StoreError),
    /// A file of the folder failed.
    #[error("storage: {0}")]
    Io(#[from] std::io::Error),
    /// The graph could not be written as JSON.
    #[error("storage: {0}")]
    Encode(#[from] serde_json::Error),
    /// The embedder failed to embed a search text or a query.
    #[error("{0}")]
    Embed(#[from] atlas_text::EmbedError),
}

impl BizError {
    /// Whether nothing was written and the same request may succeed later (a full disk, the
    /// database away).
    pub fn is_transient(&self) -> bool {
        match self {
            BizError::Store(e) => e.is_transient(),
            BizError::Io(e) => atlas_store::files::is_no_space(e),
            _ => false,
        }
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> BizError {
    BizError::Invalid(message.into())
}
