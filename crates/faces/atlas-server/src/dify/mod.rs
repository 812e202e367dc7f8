//! Dify's knowledge routes, so a phone agent's GET_KNOWLEDGE_DATA (and Dify itself, through its
//! External Knowledge API) can use Atlas in place of a Dify server, and Dify's clients can fill it.
//!
//! - [`retrieve`]: `POST /v1/datasets/{dataset_id}/retrieve` and `/hit-testing`, records in Dify's
//!   full shape (every key present, Dify's defaults for what Atlas does not have); and
//!   `POST /retrieval`, the External Knowledge API (`knowledge_id` = dataset id, errors as
//!   `{"error_code", "error_msg"}`).
//! - [`manage`]: Dify's knowledge API for datasets and documents (create, list, update by text
//!   or file, delete), so a running server takes new documents without a restart.
//!
//! Errors are Dify's `{"status", "code", "message"}`. These routes carry their own keys, so they
//! sit outside the server token layer that guards `/api/v1`: a dataset's own API key opens that
//! dataset, and the server token (when the server has one) opens every dataset and is what
//! creating and listing datasets need. A server started without a token lets anyone on its
//! address create datasets, as it lets anyone call `/api/v1`.

mod edit;
mod manage;
mod retrieve;

use std::sync::Arc;

use atlas_kb::{KbError, KnowledgeBase};
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;

#[derive(Clone)]
pub(crate) struct DifyState {
    pub kb: Arc<KnowledgeBase>,
    /// The server token, which opens every dataset.
    pub token: Option<Arc<str>>,
}

/// A document upload may be as large as the knowledge base accepts, plus the multipart framing.
const MAX_UPLOAD_BYTES: usize = atlas_kb::split::MAX_FILE_BYTES + 64 * 1024;

pub(crate) fn routes(state: DifyState) -> Router {
    Router::new()
        .route(
            "/v1/datasets/{dataset_id}/retrieve",
            post(retrieve::retrieve),
        )
        .route(
            "/v1/datasets/{dataset_id}/hit-testing",
            post(retrieve::retrieve),
        )
        .route("/retrieval", post(retrieve::external_retrieval))
        .route(
            "/v1/datasets",
            post(manage::create_dataset).get(manage::list_datasets),
        )
        .route(
            "/v1/datasets/{dataset_id}",
            get(manage::get_dataset)
                .patch(edit::update_dataset)
                .delete(manage::delete_dataset),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/segments",
            get(edit::list_segments).post(edit::add_segments),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}",
            post(edit::update_segment).delete(edit::delete_segment),
        )
        .route(
            "/v1/datasets/{dataset_id}/metadata",
            get(edit::list_metadata).post(edit::create_metadata),
        )
        .route(
            "/v1/datasets/{dataset_id}/metadata/built-in",
            get(edit::built_in_metadata),
        )
        .route(
            "/v1/datasets/{dataset_id}/metadata/built-in/{action}",
            post(edit::switch_built_in_metadata),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/status/{action}",
            axum::routing::patch(edit::set_documents_status),
        )
        .route(
            "/v1/datasets/{dataset_id}/metadata/{metadata_id}",
            axum::routing::patch(edit::rename_metadata).delete(edit::delete_metadata),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/metadata",
            post(edit::set_document_metadata),
        )
        .route(
            "/v1/datasets/tags",
            get(edit::list_tags)
                .post(edit::create_tag)
                .patch(edit::rename_tag)
                .delete(edit::delete_tag),
        )
        .route("/v1/datasets/tags/binding", post(edit::bind_tags))
        .route("/v1/datasets/tags/unbinding", post(edit::unbind_tag))
        .route("/v1/datasets/{dataset_id}/tags", get(edit::dataset_tags))
        .route(
            "/v1/datasets/{dataset_id}/documents",
            get(manage::list_documents),
        )
        .route(
            "/v1/datasets/{dataset_id}/document/create-by-text",
            post(manage::create_by_text),
        )
        .route(
            "/v1/datasets/{dataset_id}/document/create_by_text",
            post(manage::create_by_text),
        )
        .route(
            "/v1/datasets/{dataset_id}/document/create-by-file",
            post(manage::create_by_file),
        )
        .route(
            "/v1/datasets/{dataset_id}/document/create_by_file",
            post(manage::create_by_file),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}",
            get(manage::get_document).delete(manage::delete_document),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/indexing-status",
            get(manage::indexing_status),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-text",
            post(manage::update_by_text),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/update_by_text",
            post(manage::update_by_text),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-file",
            post(manage::update_by_file),
        )
        .route(
            "/v1/datasets/{dataset_id}/documents/{document_id}/update_by_file",
            post(manage::update_by_file),
        )
        // Anything else under /v1 is Dify's 404, in Dify's shape.
        .route("/v1/{*rest}", axum::routing::any(unknown_route))
        .layer(axum::middleware::from_fn(dify_method_not_allowed))
        .layer(axum::middleware::from_fn(refuse_oversize))
        .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            dify_error(&KbError::Io("a handler panicked".into()))
        }))
        .with_state(state)
}

/// Refuses a body announced as too large before reading any of it, so the client gets the
/// answer instead of a connection closed under its upload.
async fn refuse_oversize(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match crate::announced_length(request.headers()) {
        Some(size) if size > MAX_UPLOAD_BYTES => dify_error(&KbError::TooLarge {
            what: "the request body".into(),
            size,
            limit: MAX_UPLOAD_BYTES,
        }),
        _ => next.run(request).await,
    }
}

/// A route of this API asked with a method it does not take: 405 in Dify's shape, `Allow` kept.
async fn dify_method_not_allowed(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let what = format!("{} {}", request.method(), request.uri().path());
    let response = next.run(request).await;
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let mut refused = dify_error(&KbError::MethodNotAllowed(format!(
        "{what}: this route does not take that method"
    )));
    if let Some(allow) = response.headers().get(header::ALLOW) {
        refused.headers_mut().insert(header::ALLOW, allow.clone());
    }
    refused
}

async fn unknown_route(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    dify_error(&KbError::RouteNotFound(format!(
        "{method} {} is not a route of this server's Dify API",
        uri.path()
    )))
}

pub(crate) fn dify_error(e: &KbError) -> Response {
    let (_, status) = e.code();
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status.is_server_error() {
        tracing::error!("knowledge base: {e}");
    }
    (status, Json(e.to_body())).into_response()
}

/// A handler's result as a response: the value as JSON, or Dify's error.
fn answer(result: Result<Value, KbError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(e) => dify_error(&e),
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    crate::bearer(headers).filter(|k| !k.is_empty())
}

impl DifyState {
    fn is_server_token(&self, key: &str) -> bool {
        self.token.as_deref().is_some_and(|t| t == key)
    }

    /// Whether the request may read or change dataset `id`: its own key or the server token.
    /// An unknown dataset is not_found, a missing or wrong key unauthorized.
    fn open_dataset(&self, headers: &HeaderMap, id: &str) -> Result<(), KbError> {
        let key = bearer(headers).ok_or(KbError::Unauthorized)?;
        if self.is_server_token(key) {
            return self.kb.dataset(id).map(|_| ());
        }
        self.kb.authorize(id, key)
    }

    /// Whether the request may list the server's tags: what opens all, or any dataset's own key.
    fn open_tags(&self, headers: &HeaderMap) -> Result<(), KbError> {
        self.open_all(headers).or_else(|e| match bearer(headers) {
            Some(key) if self.kb.is_dataset_key(key) => Ok(()),
            _ => Err(e),
        })
    }

    /// Whether the request may create or list datasets: the server token, when there is one.
    fn open_all(&self, headers: &HeaderMap) -> Result<(), KbError> {
        match &self.token {
            None => Ok(()),
            Some(_) if bearer(headers).is_some_and(|k| self.is_server_token(k)) => Ok(()),
            Some(_) => Err(KbError::Unauthorized),
        }
    }
}

fn read_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, KbError> {
    body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            KbError::TooLarge {
                what: "the request body".into(),
                size: MAX_UPLOAD_BYTES + 1,
                limit: MAX_UPLOAD_BYTES,
            }
        } else {
            KbError::InvalidParam(format!("cannot read the body: {e}"))
        }
    })
}

/// The JSON object of a body, or Dify's invalid_param.
fn json_body(body: Result<Bytes, BytesRejection>) -> Result<Value, KbError> {
    let bytes = read_body(body)?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| KbError::InvalidParam(format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(KbError::InvalidParam(
            "the body must be a JSON object".into(),
        ));
    }
    Ok(value)
}

/// Runs knowledge-base work off the event loop: writes fsync, and an embedder may run a model
/// or call a network service.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, KbError> + Send + 'static,
) -> Result<T, KbError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| KbError::Io(format!("the work stopped: {e}")))?
}
