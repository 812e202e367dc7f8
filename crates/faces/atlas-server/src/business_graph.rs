//! The business graph as a whole: `GET /api/v1/business-graph` answers Atlas's JSON document of
//! it, `PUT` replaces it with a JSON document (`application/json`) or the lines of Neo4j's
//! `apoc.export.json.all` (`application/x-ndjson`; `?format=apoc` says so whatever the content
//! type). The replacement is checked whole and on disk before it answers.

use atlas_api::business::{BusinessData, ImportReport};
use atlas_api::server::{self as own, GraphFormat};
use atlas_model::AtlasError;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;

use crate::AppState;
use crate::extract::{Answer, RawBody, RouteQuery};

/// `GET /api/v1/business-graph`: Atlas's JSON document of it.
pub(crate) async fn export(State(state): State<AppState>) -> Answer<Json<BusinessData>> {
    Ok(Json(state.services.business_graph()?))
}

/// `PUT /api/v1/business-graph`: the body's format is the `format` query parameter, once at
/// most, when given; else the content type's (lines for NDJSON, a document for JSON). Anything
/// else in the query is ignored.
pub(crate) async fn import(
    State(state): State<AppState>,
    RouteQuery(query): RouteQuery<own::ReplaceBusinessGraph>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Answer<Json<ImportReport>> {
    let format = match query.format {
        Some(format) => format,
        None if crate::cross_site::is_ndjson(&headers) => GraphFormat::Apoc,
        None => GraphFormat::Json,
    };
    if std::str::from_utf8(&body).is_err() {
        return Err(AtlasError::invalid("body", "the body is not UTF-8 text").into());
    }
    let services = state.services.clone();
    let report =
        tokio::task::spawn_blocking(move || services.replace_business_graph(format, &body))
            .await
            .map_err(|e| AtlasError::fault("the import stopped", e))??;
    Ok(Json(report))
}
