//! Dify's knowledge API for datasets and documents, in Dify's shapes: what a Dify client (or
//! curl) uses to fill a knowledge base on a running server.
//!
//! Indexing is synchronous here: a document is split, embedded and durable when the answer
//! comes back, so its `indexing_status` is already `completed` and its `batch` is its own id.

use std::collections::HashMap;

use atlas_kb::split::SourceKind;
use atlas_kb::{DatasetSummary, DocumentSummary, KbError, KnowledgeBase};
use axum::body::Bytes;
use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::{DifyState, answer, blocking, dify_error, json_body};

type Params = Query<HashMap<String, String>>;

pub(super) fn dataset_object(d: &DatasetSummary, kb: &KnowledgeBase) -> Value {
    let tags: Vec<Value> = kb
        .dataset_tags(&d.id)
        .unwrap_or_default()
        .iter()
        .map(|t| json!({ "id": t.id, "name": t.name, "type": "knowledge" }))
        .collect();
    json!({
        "id": d.id,
        "name": d.name,
        "description": d.description,
        "provider": "vendor",
        "permission": "only_me",
        "data_source_type": if d.document_count > 0 { json!("upload_file") } else { Value::Null },
        "indexing_technique": "high_quality",
        "app_count": 0,
        "document_count": d.document_count,
        "word_count": d.word_count,
        "segment_count": d.segment_count,
        "created_by": "",
        "created_at": d.created_at,
        "updated_by": "",
        "updated_at": d.created_at,
        "embedding_model": kb.embedder_name(),
        "embedding_model_provider": "atlas",
        "embedding_available": true,
        "retrieval_model_dict": {
            "search_method": "hybrid_search",
            "reranking_enable": false,
            "reranking_model": { "reranking_provider_name": "", "reranking_model_name": "" },
            "top_k": 4,
            "score_threshold_enabled": false,
            "score_threshold": null,
        },
        "tags": tags,
        "doc_form": null,
        "external_knowledge_info": null,
        "external_retrieval_model": null,
    })
}

/// A document in Dify's shape; `built_in` adds the built-in metadata fields' values to its own
/// (when its dataset shows them).
fn document_object(d: &DocumentSummary, position: usize, built_in: bool) -> Value {
    let mut metadata = d.metadata.clone();
    if built_in {
        for (name, value) in [
            ("document_name", json!(d.name)),
            ("uploader", json!("api")),
            ("upload_date", json!(d.created_at)),
            ("last_update_date", json!(d.created_at)),
            ("source", json!("upload_file")),
        ] {
            metadata.insert(name.to_string(), value);
        }
    }
    let display_status = if d.archived {
        "archived"
    } else if !d.enabled {
        "disabled"
    } else {
        "available"
    };
    json!({
        "id": d.id,
        "position": position,
        "data_source_type": "upload_file",
        "data_source_info": null,
        "dataset_process_rule_id": null,
        "name": d.name,
        "created_from": "api",
        "created_by": "",
        "created_at": d.created_at,
        "tokens": d.word_count,
        "indexing_status": "completed",
        "error": null,
        "enabled": d.enabled,
        "disabled_at": null,
        "disabled_by": null,
        "archived": d.archived,
        "display_status": display_status,
        "word_count": d.word_count,
        "hit_count": d.hit_count,
        "segment_count": d.segment_count,
        "doc_form": if d.kind.starts_with("qa_") { "qa_model" } else { "text_model" },
        "doc_metadata": metadata,
    })
}

/// Whether dataset `id` shows the built-in metadata fields on its documents.
fn shows_built_in(state: &DifyState, id: &str) -> bool {
    state.kb.dataset(id).is_ok_and(|d| d.built_in_field_enabled)
}

/// Dify's page: `page` from 1, `limit` 1 to 100 (20 by default).
pub(super) fn page<T>(
    items: Vec<T>,
    params: &HashMap<String, String>,
    to_value: impl Fn(usize, &T) -> Value,
) -> Result<Value, KbError> {
    let number = |name: &str, default: usize, max: usize| -> Result<usize, KbError> {
        match params.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| {
                    KbError::InvalidParam(format!("{name} must be a number from 1 to {max}"))
                }),
        }
    };
    let (page, limit) = (number("page", 1, usize::MAX)?, number("limit", 20, 100)?);
    let start = (page - 1).saturating_mul(limit);
    let data: Vec<Value> = items
        .iter()
        .enumerate()
        .skip(start)
        .take(limit)
        .map(|(i, item)| to_value(i, item))
        .collect();
    Ok(
        json!({ "data": data, "has_more": start.saturating_add(limit) < items.len(), "limit": limit, "total": items.len(), "page": page }),
    )
}

pub(super) async fn create_dataset(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    answer(
        async {
            state.open_all(&headers)?;
            let body = json_body(body)?;
            let name = body["name"]
                .as_str()
                .ok_or_else(|| {
                    KbError::InvalidParam("name is required and must be a string".into())
                })?
                .to_string();
            let description = body["description"].as_str().unwrap_or_default().to_string();
            let kb = state.kb.clone();
            let dataset = blocking(move || kb.create_dataset(&name, &description)).await?;
            let mut object = dataset_object(&state.kb.dataset_summary(&dataset.id)?, &state.kb);
            // Atlas's addition: the key that opens this dataset, shown once, as `atlas kb create` does.
            object["api_key"] = json!(dataset.api_key);
            Ok(object)
        }
        .await,
    )
}

pub(super) async fn list_datasets(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Query(params): Params,
) -> Response {
    answer(state.open_all(&headers).and_then(|()| {
        page(state.kb.datasets(), &params, |_, d| {
            dataset_object(d, &state.kb)
        })
    }))
}

pub(super) async fn get_dataset(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        Ok(dataset_object(
            &state.kb.dataset_summary(&dataset)?,
            &state.kb,
        ))
    }))
}

/// 204 No Content, as Dify answers a delete, or the error.
pub(super) fn no_content(result: Result<(), KbError>) -> Response {
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => dify_error(&e),
    }
}

pub(super) async fn delete_dataset(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
) -> Response {
    if let Err(e) = state.open_dataset(&headers, &dataset) {
        return dify_error(&e);
    }
    let kb = state.kb.clone();
    no_content(blocking(move || kb.delete_dataset(&dataset)).await)
}

pub(super) async fn list_documents(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    Query(params): Params,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let keyword = params
            .get("keyword")
            .map(|k| k.to_lowercase())
            .unwrap_or_default();
        let documents: Vec<(usize, DocumentSummary)> = state
            .kb
            .documents(&dataset)?
            .into_iter()
            .enumerate()
            .filter(|(_, d)| d.name.to_lowercase().contains(&keyword))
            .collect();
        let built_in = shows_built_in(&state, &dataset);
        page(documents, &params, |_, (i, d)| {
            document_object(d, i + 1, built_in)
        })
    }))
}

pub(super) async fn get_document(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let (position, d) = state.kb.document(&dataset, &document)?;
        Ok(document_object(
            &d,
            position,
            shows_built_in(&state, &dataset),
        ))
    }))
}

pub(super) async fn delete_document(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
) -> Response {
    if let Err(e) = state.open_dataset(&headers, &dataset) {
        return dify_error(&e);
    }
    let kb = state.kb.clone();
    no_content(blocking(move || kb.delete_document(&dataset, &document)).await)
}

/// A document to write: its name, bytes, kind and metadata, from a JSON body or a multipart form.
#[derive(Default)]
struct Upload {
    name: Option<String>,
    bytes: Option<Vec<u8>>,
    kind: Option<SourceKind>,
    metadata: Option<Map<String, Value>>,
    /// Dify's `original_document_id`: the document this upload replaces.
    original: Option<String>,
}

/// Reads the fields Atlas adds to Dify's (`kind`, `doc_metadata`) and `name` from a JSON object.
fn upload_fields(object: &Value, upload: &mut Upload) -> Result<(), KbError> {
    if let Some(name) = object.get("name").filter(|v| !v.is_null()) {
        upload.name = Some(
            name.as_str()
                .ok_or_else(|| KbError::InvalidParam("name must be a string".into()))?
                .to_string(),
        );
    }
    if let Some(kind) = object.get("kind").filter(|v| !v.is_null()) {
        let named = kind.as_str().and_then(SourceKind::named);
        upload.kind = Some(named.ok_or_else(|| {
            KbError::InvalidParam("kind must be text, markdown, qa_csv or qa_json".into())
        })?);
    }
    if let Some(original) = object.get("original_document_id").filter(|v| !v.is_null()) {
        upload.original = Some(
            original
                .as_str()
                .ok_or_else(|| {
                    KbError::InvalidParam("original_document_id must be a string".into())
                })?
                .to_string(),
        );
    }
    if let Some(metadata) = object.get("doc_metadata").filter(|v| !v.is_null()) {
        upload.metadata = Some(
            metadata
                .as_object()
                .cloned()
                .ok_or_else(|| KbError::InvalidParam("doc_metadata must be an object".into()))?,
        );
    }
    Ok(())
}

fn text_upload(body: Result<Bytes, BytesRejection>) -> Result<Upload, KbError> {
    let body = json_body(body)?;
    let mut upload = Upload::default();
    upload_fields(&body, &mut upload)?;
    if let Some(text) = body.get("text").filter(|v| !v.is_null()) {
        upload.bytes = Some(
            text.as_str()
                .ok_or_else(|| KbError::InvalidParam("text must be a string".into()))?
                .as_bytes()
                .to_vec(),
        );
    }
    Ok(upload)
}

/// Dify's form: the file in `file`, settings as a JSON string in `data`.
async fn file_upload(mut form: Multipart) -> Result<Upload, KbError> {
    let mut upload = Upload::default();
    let mut file_name = None;
    let bad = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            KbError::TooLarge {
                what: "the upload".into(),
                size: super::MAX_UPLOAD_BYTES + 1,
                limit: super::MAX_UPLOAD_BYTES,
            }
        } else {
            KbError::InvalidParam(format!("cannot read the form: {e}"))
        }
    };
    while let Some(field) = form.next_field().await.map_err(bad)? {
        match field.name() {
            Some("file") => {
                file_name = field.file_name().map(str::to_string);
                upload.bytes = Some(field.bytes().await.map_err(bad)?.to_vec());
            }
            Some("data") => {
                let text = field.text().await.map_err(bad)?;
                if text.trim().is_empty() {
                    // An empty field gives no settings.
                    continue;
                }
                let data: Value = serde_json::from_str(&text)
                    .map_err(|e| KbError::InvalidParam(format!("data is not JSON: {e}")))?;
                upload_fields(&data, &mut upload)?;
            }
            _ => {}
        }
    }
    if upload.bytes.is_none() {
        return Err(KbError::InvalidParam(
            "the form has no file field (Dify's no_file_uploaded)".into(),
        ));
    }
    upload.name = upload.name.or(file_name);
    Ok(upload)
}

/// Adds `upload` to `dataset`, or replaces document `replacing` (the route's, or the upload's
/// `original_document_id`) with it, keeping its name and metadata when the upload does not give
/// them.
async fn write(
    state: DifyState,
    headers: HeaderMap,
    dataset: String,
    replacing: Option<String>,
    upload: Result<Upload, KbError>,
) -> Response {
    answer(
        async {
            state.open_dataset(&headers, &dataset)?;
            let upload = upload?;
            let replacing = replacing.or(upload.original);
            if let (Some(id), None, Some(name)) =
                (replacing.clone(), &upload.bytes, upload.name.clone())
            {
                // A new name alone: the content stays.
                let (kb, d) = (state.kb.clone(), dataset.clone());
                let renamed = blocking(move || kb.rename_document(&d, &id, &name)).await?;
                return written(&state, &dataset, &renamed.id);
            }
            let bytes = upload.bytes.ok_or_else(|| {
                KbError::InvalidParam("text is required and must be a string".into())
            })?;
            let kb = state.kb.clone();
            let summary = match replacing {
                None => {
                    let name = upload.name.ok_or_else(|| {
                        KbError::InvalidParam("name is required and must be a string".into())
                    })?;
                    let dataset = dataset.clone();
                    blocking(move || {
                        kb.add_document(
                            &dataset,
                            &name,
                            &bytes,
                            upload.kind,
                            upload.metadata.unwrap_or_default(),
                        )
                    })
                    .await?
                }
                Some(id) => {
                    let (_, old) = state.kb.document(&dataset, &id)?;
                    let name = upload.name.unwrap_or(old.name);
                    let metadata = upload.metadata.unwrap_or(old.metadata);
                    let dataset = dataset.clone();
                    blocking(move || {
                        kb.replace_document(&dataset, &id, &name, &bytes, upload.kind, metadata)
                    })
                    .await?
                }
            };
            written(&state, &dataset, &summary.id)
        }
        .await,
    )
}

/// The answer to a document's write: the document as it now is, and its batch (its id).
fn written(state: &DifyState, dataset: &str, id: &str) -> Result<Value, KbError> {
    let (position, summary) = state.kb.document(dataset, id)?;
    let built_in = shows_built_in(state, dataset);
    Ok(json!({ "document": document_object(&summary, position, built_in), "batch": summary.id }))
}

pub(super) async fn create_by_text(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write(state, headers, dataset, None, text_upload(body)).await
}

pub(super) async fn update_by_text(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write(state, headers, dataset, Some(document), text_upload(body)).await
}

/// The multipart upload, read only once the key opens the dataset: a stranger's file is not read.
async fn form_upload(
    state: &DifyState,
    headers: &HeaderMap,
    dataset: &str,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Upload, KbError> {
    state.open_dataset(headers, dataset)?;
    match form {
        Ok(form) => file_upload(form).await,
        Err(e) => Err(KbError::InvalidParam(format!(
            "a multipart form is expected: {e}"
        ))),
    }
}

pub(super) async fn create_by_file(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    form: Result<Multipart, MultipartRejection>,
) -> Response {
    // A new document is named after its file; a file sent without a name is "untitled" (one
    // that replaces a document keeps that document's name).
    let upload = form_upload(&state, &headers, &dataset, form)
        .await
        .map(|mut upload| {
            if upload.original.is_none() {
                upload.name.get_or_insert_with(|| "untitled".to_string());
            }
            upload
        });
    write(state, headers, dataset, None, upload).await
}

pub(super) async fn update_by_file(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
    form: Result<Multipart, MultipartRejection>,
) -> Response {
    let upload = form_upload(&state, &headers, &dataset, form).await;
    write(state, headers, dataset, Some(document), upload).await
}

/// Dify's indexing progress for a batch; a batch here is one document, indexed before its
/// create call answered.
pub(super) async fn indexing_status(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, batch)): Path<(String, String)>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let (_, d) = state.kb.document(&dataset, &batch)?;
        let at = d.created_at;
        Ok(json!({ "data": [{
            "id": d.id,
            "indexing_status": "completed",
            "processing_started_at": at,
            "parsing_completed_at": at,
            "cleaning_completed_at": at,
            "splitting_completed_at": at,
            "completed_at": at,
            "paused_at": null,
            "error": null,
            "stopped_at": null,
            "completed_segments": d.segment_count,
            "total_segments": d.segment_count,
        }] }))
    }))
}
