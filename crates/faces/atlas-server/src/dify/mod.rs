//! Dify's knowledge routes ([`atlas_api::dify`]), so a phone agent's GET_KNOWLEDGE_DATA (and Dify
//! itself, through its External Knowledge API) can use Atlas in place of a Dify server, and
//! Dify's clients can fill it.
//!
//! Each route is read here from HTTP into its typed parts (the bearer key, the path, the query,
//! the body) and answered by the registry's [`Datasets`]; nothing of the knowledge base is known
//! here. Who may ask is decided before the body is read: a stranger's upload is never read. These
//! routes carry their own keys, so they sit outside the server token layer that guards `/api/v1`.

mod upload;

use std::collections::HashMap;

use atlas_api::dify::{self, DifyError, UploadForm};
use atlas_api::routes::{Answered, BodyKind, Caller, Route, RouteError};
use atlas_registry::{Admit, Datasets, Serve};
use axum::extract::{DefaultBodyLimit, FromRequestParts, Query, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::de::DeserializeOwned;

use crate::routing::{at, on};

/// Every route of [`atlas_api::dify`], answered by `datasets`.
pub(crate) fn routes(datasets: Datasets) -> Router {
    let router = Router::new();
    let router = json::<dify::ExternalRetrieval>(router);
    let router = json::<dify::Retrieve>(router);
    let router = json::<dify::HitTesting>(router);
    let router = json::<dify::CreateDataset>(router);
    let router = json::<dify::DuplicateDataset>(router);
    let router = json::<dify::CreateFromTemplate>(router);
    let router = json::<dify::ListDatasets>(router);
    let router = json::<dify::GetDataset>(router);
    let router = json::<dify::UpdateDataset>(router);
    let router = json::<dify::DeleteDataset>(router);
    let router = json::<dify::ListDocuments>(router);
    let router = json::<dify::CreateByText>(router);
    let router = form::<dify::CreateByFile>(router);
    let router = json::<dify::GetDocument>(router);
    let router = json::<dify::DeleteDocument>(router);
    let router = json::<dify::IndexingStatus>(router);
    let router = json::<dify::UpdateByText>(router);
    let router = form::<dify::UpdateByFile>(router);
    let router = json::<dify::ListSegments>(router);
    let router = json::<dify::AddSegments>(router);
    let router = json::<dify::UpdateSegment>(router);
    let router = json::<dify::DeleteSegment>(router);
    let router = json::<dify::ListFields>(router);
    let router = json::<dify::CreateField>(router);
    let router = json::<dify::RenameField>(router);
    let router = json::<dify::DeleteField>(router);
    let router = json::<dify::BuiltInFields>(router);
    let router = json::<dify::SwitchBuiltInFields>(router);
    let router = json::<dify::SetDocumentsStatus>(router);
    let router = json::<dify::SetDocumentMetadata>(router);
    let router = json::<dify::ListTags>(router);
    let router = json::<dify::CreateTag>(router);
    let router = json::<dify::RenameTag>(router);
    let router = json::<dify::DeleteTag>(router);
    let router = json::<dify::BindTags>(router);
    let router = json::<dify::UnbindTag>(router);
    let router = json::<dify::DatasetTags>(router);
    let max_upload = Datasets::max_upload_bytes();
    router
        // Anything else under /v1 is Dify's 404, in Dify's shape.
        .route("/v1/{*rest}", axum::routing::any(unknown_route))
        .layer(axum::middleware::from_fn(method_not_allowed))
        .layer(axum::middleware::from_fn(refuse_oversize))
        .layer(DefaultBodyLimit::max(max_upload))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            refusal(DifyError::internal())
        }))
        .with_state(datasets)
}

/// A route whose body is JSON (or that takes none).
fn json<R>(router: Router<Datasets>) -> Router<Datasets>
where
    R: Route<Error: RouteError> + 'static,
    R::Body: DeserializeOwned,
    Datasets: Serve<R>,
{
    at::<R, _>(router, on(R::METHOD, answer_json::<R>))
}

/// A route whose body is Dify's upload form.
fn form<R>(router: Router<Datasets>) -> Router<Datasets>
where
    R: Route<Body = UploadForm, Error: RouteError> + 'static,
    Datasets: Serve<R>,
{
    at::<R, _>(router, on(R::METHOD, answer_form::<R>))
}

async fn answer_json<R>(State(datasets): State<Datasets>, request: Request) -> Response
where
    R: Route<Error: RouteError> + 'static,
    R::Body: DeserializeOwned,
    Datasets: Serve<R>,
{
    answer::<R, _>(datasets, request, |request| async move {
        match R::BODY {
            BodyKind::Json | BodyKind::JsonOrLines => {
                upload::json_body::<R::Body, R::Error>(request.into_body()).await
            }
            // A route without a body ignores what came.
            BodyKind::None | BodyKind::Multipart => serde_json::from_value(serde_json::json!({}))
                .map_err(|e| R::Error::unreadable(e.to_string())),
        }
    })
    .await
}

async fn answer_form<R>(State(datasets): State<Datasets>, request: Request) -> Response
where
    R: Route<Body = UploadForm, Error: RouteError> + 'static,
    Datasets: Serve<R>,
{
    answer::<R, _>(datasets, request, upload::form::<R::Error>).await
}

/// Admits the request from its key and path, then reads its query and (only then) its body
/// with `read_body`, and serves it.
async fn answer<R, F>(
    datasets: Datasets,
    request: Request,
    read_body: impl FnOnce(Request) -> F,
) -> Response
where
    R: Route<Error: RouteError> + 'static,
    F: std::future::Future<Output = Result<R::Body, R::Error>>,
    Datasets: Serve<R>,
{
    let (mut parts, body) = request.into_parts();
    let admitted = match admit::<R>(&datasets, &mut parts).await {
        Ok(admitted) => admitted,
        Err(e) => return refusal(e),
    };
    let read = async {
        let query = query::<R>(&mut parts).await?;
        let body = read_body(Request::from_parts(parts, body)).await?;
        Ok::<_, R::Error>((query, body))
    };
    match read.await {
        Ok((query, body)) => serve::<R>(datasets, admitted, query, body).await,
        Err(e) => refusal(e),
    }
}

/// The caller's key and the path, admitted or refused.
async fn admit<R>(
    datasets: &Datasets,
    parts: &mut Parts,
) -> Result<atlas_registry::Admitted<R>, R::Error>
where
    R: Route<Error: RouteError>,
    Datasets: Serve<R>,
{
    let caller = Caller {
        key: crate::bearer(&parts.headers).map(str::to_string),
    };
    let params = RawPathParams::from_request_parts(parts, &())
        .await
        .map_err(|e| R::Error::unreadable(e.body_text()))?;
    let params: HashMap<&str, &str> = params.iter().collect();
    let path: R::Path = serde_json::to_value(params)
        .and_then(serde_json::from_value)
        .map_err(|e| R::Error::unreadable(format!("the path: {e}")))?;
    datasets.admit(caller, path)
}

async fn query<R: Route<Error: RouteError>>(parts: &mut Parts) -> Result<R::Query, R::Error> {
    Query::<R::Query>::from_request_parts(parts, &())
        .await
        .map(|Query(query)| query)
        .map_err(|e| R::Error::unreadable(e.body_text()))
}

/// Runs the route off the event loop (writes fsync; an embedder may run a model or call a
/// network service) and writes its answer.
async fn serve<R>(
    datasets: Datasets,
    admitted: atlas_registry::Admitted<R>,
    query: R::Query,
    body: R::Body,
) -> Response
where
    R: Route<Error: RouteError> + 'static,
    Datasets: Serve<R>,
{
    let work = tokio::task::spawn_blocking(move || datasets.serve(admitted, query, body));
    match work.await {
        Ok(Ok(answer)) => match R::ANSWERED {
            Answered::NoContent => StatusCode::NO_CONTENT.into_response(),
            // Dify's routes answer JSON or nothing.
            _ => Json(answer).into_response(),
        },
        Ok(Err(e)) => refusal(e),
        Err(e) => {
            tracing::error!("knowledge base: the work stopped: {e}");
            refusal(DifyError::internal())
        }
    }
}

/// A refusal in its route's shape (a route's, or the cross-site checks' before a route is chosen); a fault
/// of the server is logged and not described.
pub(crate) fn refusal<E: RouteError>(e: E) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        // Refused for now (the disk full, the server stopping): said, and when to try again.
        let secs = atlas_model::RETRY_AFTER_SECS;
        let mut response = (status, Json(e)).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
        return response;
    }
    if status.is_server_error() {
        let described = serde_json::to_string(&e).unwrap_or_default();
        tracing::error!("knowledge base: {described}");
        let mut body = serde_json::to_value(&e).unwrap_or_default();
        for message in ["message", "error_msg"] {
            if body.get(message).is_some() {
                body[message] = "An internal error occurred.".into();
            }
        }
        return (status, Json(body)).into_response();
    }
    (status, Json(e)).into_response()
}

/// Refuses a body announced as too large before reading any of it, so the client gets the
/// answer instead of a connection closed under its upload.
async fn refuse_oversize(request: Request, next: axum::middleware::Next) -> Response {
    let limit = Datasets::max_upload_bytes();
    match crate::announced_length(request.headers()) {
        Some(size) if size > limit => refusal(DifyError::too_large(size, limit)),
        _ => next.run(request).await,
    }
}

/// A route of this API asked with a method it does not take: 405 in Dify's shape, `Allow` kept.
async fn method_not_allowed(request: Request, next: axum::middleware::Next) -> Response {
    let what = format!("{} {}", request.method(), request.uri().path());
    let response = next.run(request).await;
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let mut refused = refusal(DifyError::method_not_allowed(format!(
        "{what}: this route does not take that method"
    )));
    if let Some(allow) = response.headers().get(header::ALLOW) {
        refused.headers_mut().insert(header::ALLOW, allow.clone());
    }
    refused
}

async fn unknown_route(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    refusal(DifyError::route_not_found(format!(
        "{method} {} is not a route of this server's Dify API",
        uri.path()
    )))
}
