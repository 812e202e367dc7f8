//! What the handlers of the server's own routes take and how they refuse, by their route's type
//! ([`atlas_api::server`]), as axum's extractors and `IntoResponse` do.
//!
//! A handler of route `R` takes [`RoutePath<R>`], [`RouteQuery<R>`] and [`RouteBody<R>`]: the
//! types the route declares (and the OpenAPI document describes), so a handler cannot read its
//! path or body as anything else. Every refusal, an extractor's or the handler's, is an
//! [`ApiError`]: seed 000's error body with its code's status, written in one place.

use atlas_api::routes::Route;
use atlas_model::AtlasError;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A refusal of the server's own routes and tools: seed 000's error body (`{"success": false,
/// "error": {code, message, details}}`) with its code's status, and `Retry-After` for a refusal
/// for now.
#[derive(Debug)]
pub struct ApiError(pub AtlasError);

impl From<AtlasError> for ApiError {
    fn from(e: AtlasError) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let e = self.0;
        let status = StatusCode::from_u16(e.code().http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // A refusal for now (a full disk, a database away) is logged by the store when it starts
        // and ends, not once a request.
        if status.is_server_error() && e.retry_after_secs().is_none() {
            tracing::error!("{e}");
        }
        let mut response = (status, Json(e.to_body())).into_response();
        if let Some(secs) = e.retry_after_secs() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
        }
        response
    }
}

/// What a handler answers: the route's answer, or an [`ApiError`].
pub(crate) type Answer<T> = Result<T, ApiError>;

/// Route `R`'s path parameters, as its `Path` type.
pub(crate) struct RoutePath<R: Route>(pub R::Path);

impl<R: Route, S: Send + Sync> FromRequestParts<S> for RoutePath<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(path) = Path::<R::Path>::from_request_parts(parts, state)
            .await
            .map_err(|e| AtlasError::invalid("path", e.body_text()))?;
        Ok(RoutePath(path))
    }
}

/// Route `R`'s query parameters, as its `Query` type (parameters it does not name are ignored).
pub(crate) struct RouteQuery<R: Route>(pub R::Query);

impl<R: Route, S: Send + Sync> FromRequestParts<S> for RouteQuery<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let Query(query) = Query::<R::Query>::try_from_uri(&parts.uri)
            .map_err(|e| AtlasError::invalid("query", e.body_text()))?;
        Ok(RouteQuery(query))
    }
}

/// Route `R`'s JSON body, as its `Body` type, read as every tool's is
/// ([`atlas_registry::parse_json_input`]).
pub(crate) struct RouteBody<R: Route>(pub R::Body);

impl<R: Route, S: Send + Sync> FromRequest<S> for RouteBody<R> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = RawBody::from_request(request, state).await?.0;
        Ok(RouteBody(atlas_registry::parse_json_input(&bytes)?))
    }
}

/// A body as it came, for what is not one JSON type (a tool's arguments, which the registry reads
/// and checks; lines, or a document whose format the query or content type says); refused only
/// when over the limit or unreadable.
pub(crate) struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(RawBody(bytes)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError(AtlasError::PayloadTooLarge {
                    limit: crate::MAX_BODY_BYTES,
                }))
            }
            Err(e) => Err(ApiError(AtlasError::invalid(
                "body",
                format!("cannot read the body: {e}"),
            ))),
        }
    }
}
