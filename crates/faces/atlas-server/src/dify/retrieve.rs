//! Retrieval: Dify's dataset retrieve API and its External Knowledge API.

use std::sync::Arc;

use atlas_kb::{Hit, KbError, KnowledgeBase, MetadataFilter, SearchMethod, SearchOptions};
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{DifyState, answer, bearer, blocking, json_body};

/// Dify's `retrieval_model`, every field optional (clients send `{"top_k": 3}` alone).
#[derive(Deserialize, Default)]
struct RetrievalModel {
    search_method: Option<String>,
    top_k: Option<i64>,
    #[serde(default)]
    score_threshold_enabled: bool,
    score_threshold: Option<f64>,
    weights: Option<Value>,
    metadata_filtering_conditions: Option<MetadataFilter>,
}

fn options(model: RetrievalModel) -> Result<SearchOptions, KbError> {
    let defaults = SearchOptions::default();
    let method = match model.search_method.as_deref() {
        None => defaults.method,
        Some("keyword_search" | "full_text_search") => SearchMethod::Keyword,
        Some("semantic_search") => SearchMethod::Semantic,
        Some("hybrid_search") => SearchMethod::Hybrid,
        Some(other) => {
            return Err(KbError::InvalidParam(format!(
                "unknown search_method {other:?}"
            )));
        }
    };
    let top_k = match model.top_k {
        None => defaults.top_k,
        Some(k) if k >= 1 && k as usize <= atlas_kb::MAX_TOP_K => k as usize,
        Some(k) => {
            return Err(KbError::InvalidParam(format!(
                "top_k must be between 1 and {}, got {k}",
                atlas_kb::MAX_TOP_K
            )));
        }
    };
    let semantic_weight = model
        .weights
        .as_ref()
        .and_then(|w| w["vector_setting"]["vector_weight"].as_f64())
        .or(defaults.semantic_weight);
    Ok(SearchOptions {
        method,
        top_k,
        score_threshold: if model.score_threshold_enabled {
            model.score_threshold
        } else {
            None
        },
        semantic_weight,
        filter: model.metadata_filtering_conditions,
    })
}

async fn search(
    kb: Arc<KnowledgeBase>,
    dataset: String,
    query: String,
    options: SearchOptions,
) -> Result<Vec<Hit>, KbError> {
    blocking(move || kb.search(&dataset, &query, &options)).await
}

pub(super) async fn retrieve(
    State(state): State<DifyState>,
    Path(dataset): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    answer(retrieve_inner(state, dataset, headers, body).await)
}

async fn retrieve_inner(
    state: DifyState,
    dataset: String,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Value, KbError> {
    state.open_dataset(&headers, &dataset)?;
    let body = json_body(body)?;
    let query = body["query"]
        .as_str()
        .ok_or_else(|| KbError::InvalidParam("query is required and must be a string".into()))?
        .to_string();
    let model: RetrievalModel = match &body["retrieval_model"] {
        Value::Null => RetrievalModel::default(),
        m => serde_json::from_value(m.clone())
            .map_err(|e| KbError::InvalidParam(format!("retrieval_model: {e}")))?,
    };
    let hits = search(state.kb, dataset, query.clone(), options(model)?).await?;
    Ok(
        json!({ "query": { "content": query }, "records": hits.iter().map(record).collect::<Vec<_>>() }),
    )
}

/// A segment in Dify's shape, every key present: `content` is what is searched (a pair's
/// question), `answer` a pair's answer.
pub(super) fn segment_object(
    s: &atlas_kb::Segment,
    document_id: &str,
    hit_count: u64,
    created_at: i64,
) -> serde_json::Map<String, Value> {
    let object = json!({
        "id": s.id,
        "position": s.position,
        "document_id": document_id,
        "content": s.searched_text(),
        "sign_content": null,
        "answer": s.question.as_ref().map(|_| s.content.clone()).unwrap_or_default(),
        "word_count": s.word_count,
        "tokens": s.word_count,
        "keywords": s.keywords,
        "index_node_id": s.id,
        "index_node_hash": "",
        "hit_count": hit_count,
        "enabled": true,
        "disabled_at": null,
        "disabled_by": null,
        "status": "completed",
        "created_by": "",
        "created_at": created_at,
        "indexing_at": created_at,
        "completed_at": created_at,
        "error": null,
        "stopped_at": null,
    });
    match object {
        Value::Object(map) => map,
        _ => unreachable!("a JSON object literal"),
    }
}

/// A hit in Dify's record shape, every key present.
fn record(hit: &Hit) -> Value {
    let s = &hit.segment;
    let mut segment = segment_object(s, &hit.document_id, hit.hit_count, hit.created_at);
    // What the agent reads is `content`: the answer, for a question/answer pair.
    segment.insert("content".into(), json!(s.content));
    segment.insert(
        "document".into(),
        json!({
            "id": hit.document_id,
            "data_source_type": "upload_file",
            "name": hit.document_name,
            "doc_type": null,
            "doc_metadata": if hit.document_metadata.is_empty() { Value::Null } else { Value::Object(hit.document_metadata.clone()) },
        }),
    );
    json!({
        "segment": segment,
        "child_chunks": [],
        "score": hit.score,
        "tsne_position": null,
        "files": [],
        "summary": null,
    })
}

fn external_error(status: StatusCode, code: u32, message: &str) -> Response {
    (
        status,
        Json(json!({ "error_code": code, "error_msg": message })),
    )
        .into_response()
}

pub(super) async fn external_retrieval(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(key) = bearer(&headers) else {
        return external_error(
            StatusCode::FORBIDDEN,
            1001,
            "Invalid Authorization header format. Expected 'Bearer <api-key>' format.",
        );
    };
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return external_error(StatusCode::BAD_REQUEST, 400, &e.to_string()),
    };
    let (Some(dataset), Some(query)) = (body["knowledge_id"].as_str(), body["query"].as_str())
    else {
        return external_error(
            StatusCode::BAD_REQUEST,
            400,
            "knowledge_id and query are required strings",
        );
    };
    let kb = state.kb.clone();
    // The dataset's own key, or the server token, which opens every dataset.
    let authorized = if state.is_server_token(key) {
        kb.dataset(dataset).map(|_| ())
    } else {
        kb.authorize(dataset, key)
    };
    match authorized {
        Ok(()) => {}
        Err(KbError::DatasetNotFound) => {
            return external_error(StatusCode::NOT_FOUND, 2001, "The knowledge does not exist.");
        }
        Err(_) => {
            return external_error(
                StatusCode::FORBIDDEN,
                1002,
                "Authorization failed. Please check your API key.",
            );
        }
    }
    let setting = &body["retrieval_setting"];
    let top_k = setting["top_k"].as_i64().unwrap_or(4);
    if !(1..=atlas_kb::MAX_TOP_K as i64).contains(&top_k) {
        return external_error(
            StatusCode::BAD_REQUEST,
            400,
            &format!("top_k must be between 1 and {}", atlas_kb::MAX_TOP_K),
        );
    }
    let filter = match &body["metadata_condition"] {
        Value::Null => None,
        c => match serde_json::from_value::<MetadataFilter>(c.clone()) {
            Ok(f) => Some(f),
            Err(e) => {
                return external_error(
                    StatusCode::BAD_REQUEST,
                    400,
                    &format!("metadata_condition: {e}"),
                );
            }
        },
    };
    let threshold = setting["score_threshold"].as_f64().filter(|t| *t > 0.0);
    let options = SearchOptions {
        top_k: top_k as usize,
        score_threshold: threshold,
        filter,
        ..SearchOptions::default()
    };
    match search(kb, dataset.to_string(), query.to_string(), options).await {
        Ok(hits) => Json(json!({ "records": hits.iter().map(|h| json!({
            "content": h.segment.content,
            "score": h.score,
            "title": h.document_name,
            "metadata": { "document_id": h.document_id, "segment_id": h.segment.id, "question": h.segment.question },
        })).collect::<Vec<_>>() }))
        .into_response(),
        Err(e) => {
            let (_, status) = e.code();
            external_error(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), status as u32, &e.to_string())
        }
    }
}
