//! Dify's two error shapes: its knowledge API's `{status, code, message}` and its External
//! Knowledge API's `{error_code, error_msg}`. The knowledge base's errors become them in one
//! place (`atlas-kb`'s `KbError`).

use schemars::JsonSchema;
use serde::Serialize;

use crate::routes::{Refusal, RouteError};

/// Dify's knowledge API error.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, thiserror::Error)]
#[error("{code}: {message}")]
pub struct DifyError {
    /// The HTTP status.
    pub status: u16,
    /// Dify's code: `invalid_param`, `not_found`, `unauthorized`, …
    pub code: String,
    /// What went wrong.
    pub message: String,
}

impl DifyError {
    fn new(status: u16, code: &str, message: impl Into<String>) -> DifyError {
        DifyError {
            status,
            code: code.into(),
            message: message.into(),
        }
    }

    /// Dify's `invalid_param`.
    pub fn invalid(message: impl Into<String>) -> DifyError {
        DifyError::new(400, "invalid_param", message)
    }

    /// A path that is not a route of the API.
    pub fn route_not_found(message: impl Into<String>) -> DifyError {
        DifyError::new(404, "not_found", message)
    }

    /// A route asked with a method it does not take.
    pub fn method_not_allowed(message: impl Into<String>) -> DifyError {
        DifyError::new(405, "method_not_allowed", message)
    }

    /// A request from where the server takes none (another origin, a host it does not answer to).
    pub fn forbidden(message: impl Into<String>) -> DifyError {
        DifyError::new(403, "forbidden", message)
    }

    /// A body of a type the route does not take.
    pub fn unsupported_media_type(message: impl Into<String>) -> DifyError {
        DifyError::new(415, "unsupported_media_type", message)
    }

    /// A fault of the server, not described to the client.
    pub fn internal() -> DifyError {
        DifyError::new(500, "internal_server_error", "An internal error occurred.")
    }
}

/// The statuses Dify's routes refuse with, and when.
fn dify_refusals() -> Vec<(u16, &'static str)> {
    vec![
        (400, "invalid input"),
        (401, "missing or wrong key"),
        (
            403,
            "a key that does not open it, a web page of another origin, or a host name the server does not answer to",
        ),
        (404, "unknown dataset, document, segment, field or tag"),
        (409, "the name is taken, or the folder is another process's"),
        (413, "over the size limit"),
        (415, "the body is not of the route's content type"),
    ]
}

impl Refusal for DifyError {
    fn statuses() -> Vec<(u16, &'static str)> {
        dify_refusals()
    }
}

impl RouteError for DifyError {
    fn status(&self) -> u16 {
        self.status
    }

    fn unreadable(message: String) -> Self {
        DifyError::invalid(message)
    }

    fn too_large(size: usize, limit: usize) -> Self {
        DifyError::new(
            413,
            "file_too_large",
            format!("the request body is {size} bytes, over the limit of {limit}"),
        )
    }

    fn unauthorized() -> Self {
        DifyError::new(
            401,
            "unauthorized",
            "Invalid Authorization header or API key.",
        )
    }
}

/// The External Knowledge API's error: Dify's codes 1001 (no bearer key), 1002 (a key that does
/// not open the knowledge), 2001 (no such knowledge); else the HTTP status as the code.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, thiserror::Error)]
#[error("{error_code}: {error_msg}")]
pub struct ExternalError {
    /// The HTTP status (not in the body).
    #[serde(skip)]
    pub status: u16,
    /// Dify's code.
    pub error_code: u32,
    /// What went wrong.
    pub error_msg: String,
}

impl ExternalError {
    /// Dify's 2001: the knowledge does not exist.
    pub fn no_knowledge() -> ExternalError {
        ExternalError {
            status: 404,
            error_code: 2001,
            error_msg: "The knowledge does not exist.".into(),
        }
    }

    /// Dify's 1002: the key does not open the knowledge.
    pub fn refused() -> ExternalError {
        ExternalError {
            status: 403,
            error_code: 1002,
            error_msg: "Authorization failed. Please check your API key.".into(),
        }
    }
}

impl From<DifyError> for ExternalError {
    /// Another failure: its status, as the code.
    fn from(e: DifyError) -> Self {
        ExternalError {
            status: e.status,
            error_code: e.status.into(),
            error_msg: e.message,
        }
    }
}

impl Refusal for ExternalError {
    fn statuses() -> Vec<(u16, &'static str)> {
        dify_refusals()
    }
}

impl RouteError for ExternalError {
    fn status(&self) -> u16 {
        self.status
    }

    fn unreadable(message: String) -> Self {
        ExternalError {
            status: 400,
            error_code: 400,
            error_msg: message,
        }
    }

    fn too_large(size: usize, limit: usize) -> Self {
        DifyError::too_large(size, limit).into()
    }

    fn unauthorized() -> Self {
        ExternalError {
            status: 403,
            error_code: 1001,
            error_msg: "Invalid Authorization header format. Expected 'Bearer <api-key>' format."
                .into(),
        }
    }
}
