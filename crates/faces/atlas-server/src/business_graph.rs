//! The business graph as a whole: `GET /api/v1/business-graph` answers Atlas's JSON document of
//! it, `PUT` replaces it with a JSON document (`application/json`) or the lines of Neo4j's
//! `apoc.export.json.all` (`application/x-ndjson`; `?format=apoc` says so whatever the content
//! type). The replacement is checked whole and on disk before it answers.

use atlas_api::server::{GraphFormat, GraphQuery};
use atlas_model::AtlasError;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};

use crate::{AppState, error_response};

/// The body's format: the `format` query parameter, once at most, when given; else the content
/// type's (lines for NDJSON, a document for JSON). Anything else in the query is ignored.
fn format_of(uri: &Uri, headers: &HeaderMap) -> Result<GraphFormat, AtlasError> {
    let query = Query::<GraphQuery>::try_from_uri(uri)
        .map_err(|e| AtlasError::invalid("format", e.body_text()))?;
    Ok(match query.0.format {
        Some(format) => format,
        None if crate::cross_site::is_ndjson(headers) => GraphFormat::Apoc,
        None => GraphFormat::Json,
    })
}

pub(crate) async fn export(State(state): State<AppState>) -> Response {
    match state.services.business_graph() {
        Ok(graph) => Json(graph).into_response(),
        Err(e) => error_response(&e),
    }
}

pub(crate) async fn import(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let Ok(body) = body else {
        return error_response(&AtlasError::PayloadTooLarge {
            limit: crate::MAX_BODY_BYTES,
        });
    };
    let format = match format_of(&uri, &headers) {
        Ok(format) => format,
        Err(e) => return error_response(&e),
    };
    if std::str::from_utf8(&body).is_err() {
        return error_response(&AtlasError::invalid("body", "the body is not UTF-8 text"));
    }
    let services = state.services.clone();
    let outcome =
        tokio::task::spawn_blocking(move || services.replace_business_graph(format, &body)).await;
    match outcome {
        Ok(Ok(report)) => Json(report).into_response(),
        Ok(Err(e)) => error_response(&e),
        Err(e) => error_response(&AtlasError::fault("the import stopped", e)),
    }
}
