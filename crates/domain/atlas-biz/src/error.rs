//! What can go wrong with a business graph. The service maps these to seed 000's error codes.

#[derive(Debug, thiserror::Error)]
pub enum BizError {
    /// Input that cannot be a business graph or a tool call: the message says what and where.
    #[error("{0}")]
    Invalid(String),
    /// No entity of this type with this id.
    #[error("no {kind} with id {id:?}")]
    NotFound { kind: &'static str, id: String },
    /// Another process (a running server) holds the folder.
    #[error(
        "{path} is in use by another atlas process{holder}; change the business graph through that server's HTTP API"
    )]
    Locked { path: String, holder: String },
    #[error("storage: {0}")]
    Io(String),
    #[error("embedding: {0}")]
    Embed(String),
}

impl From<std::io::Error> for BizError {
    fn from(e: std::io::Error) -> Self {
        BizError::Io(e.to_string())
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> BizError {
    BizError::Invalid(message.into())
}
