//! Dify's knowledge API for edits short of a whole document: `PATCH` a dataset, a document's
//! segments (list, add, update, delete), and the dataset's metadata fields with the values its
//! documents hold. Bodies and answers in Dify's shapes; the work is `atlas_kb`'s.

use std::collections::HashMap;

use atlas_kb::{BUILT_IN_FIELDS, DocumentStatus, KbError, SegmentInput};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};

use super::manage::{dataset_object, no_content, page};
use super::retrieve::segment_object;
use super::{DifyState, answer, blocking, json_body};

/// An optional string field of a JSON object; another type is invalid_param.
fn optional_text<'a>(object: &'a Value, field: &str) -> Result<Option<&'a str>, KbError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(KbError::InvalidParam(format!("{field} must be a string"))),
    }
}

/// An optional list of strings; another type is invalid_param.
fn string_list(object: &Value, field: &str) -> Result<Option<Vec<String>>, KbError> {
    let not_strings = || KbError::InvalidParam(format!("{field} must be a list of strings"));
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(String::from).ok_or_else(not_strings))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(not_strings()),
    }
}

fn required_text<'a>(object: &'a Value, field: &str) -> Result<&'a str, KbError> {
    optional_text(object, field)?
        .ok_or_else(|| KbError::InvalidParam(format!("{field} is required")))
}

/// Dify's segment fields: `content`, `answer`, `keywords`. `enabled: false` is refused:
/// Atlas keeps no disabled segments (delete one instead).
fn segment_input(object: &Value) -> Result<SegmentInput, KbError> {
    if !object.is_object() {
        return Err(KbError::InvalidParam("a segment is a JSON object".into()));
    }
    match object.get("enabled") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            return Err(KbError::InvalidParam(
                "disabling a segment is not supported: delete it instead".into(),
            ));
        }
        Some(_) => return Err(KbError::InvalidParam("enabled must be true".into())),
    }
    let keywords = string_list(object, "keywords")?;
    Ok(SegmentInput {
        content: required_text(object, "content")?.to_string(),
        answer: optional_text(object, "answer")?.map(String::from),
        keywords,
    })
}

/// The segments' `doc_form` as Dify names it.
fn doc_form(segments: &[(atlas_kb::Segment, u64)]) -> &'static str {
    if segments.iter().any(|(s, _)| s.question.is_some()) {
        "qa_model"
    } else {
        "text_model"
    }
}

pub(super) async fn update_dataset(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let name = optional_text(&body, "name")?.map(String::from);
        let description = optional_text(&body, "description")?.map(String::from);
        let kb = state.kb.clone();
        let summary =
            blocking(move || kb.update_dataset(&dataset, name.as_deref(), description.as_deref()))
                .await?;
        Ok(dataset_object(&summary, &state.kb))
    };
    answer(result.await)
}

pub(super) async fn list_segments(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let (_, summary) = state.kb.document(&dataset, &document)?;
        let keyword = params
            .get("keyword")
            .map(|k| k.to_lowercase())
            .unwrap_or_default();
        if params
            .get("status")
            .is_some_and(|s| !s.is_empty() && s != "completed")
        {
            // Every segment here is indexed when its write answers.
            return page(Vec::<()>::new(), &params, |_, _| Value::Null);
        }
        let segments: Vec<(atlas_kb::Segment, u64)> = state
            .kb
            .segments(&dataset, &document)?
            .into_iter()
            .filter(|(s, _)| {
                keyword.is_empty()
                    || s.content.to_lowercase().contains(&keyword)
                    || s.question
                        .as_ref()
                        .is_some_and(|q| q.to_lowercase().contains(&keyword))
            })
            .collect();
        let form = doc_form(&segments);
        let mut listed = page(segments, &params, |_, (s, hits)| {
            Value::Object(segment_object(s, &document, *hits, summary.created_at))
        })?;
        listed["doc_form"] = json!(form);
        Ok(listed)
    }))
}

pub(super) async fn add_segments(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let inputs = body
            .get("segments")
            .and_then(Value::as_array)
            .ok_or_else(|| KbError::InvalidParam("segments must be a list".into()))?
            .iter()
            .map(segment_input)
            .collect::<Result<Vec<_>, _>>()?;
        let kb = state.kb.clone();
        let (d, doc) = (dataset.clone(), document.clone());
        let added = blocking(move || kb.add_segments(&d, &doc, inputs)).await?;
        let (_, summary) = state.kb.document(&dataset, &document)?;
        Ok(json!({
            "data": added.iter().map(|(s, hits)| Value::Object(segment_object(s, &document, *hits, summary.created_at))).collect::<Vec<_>>(),
            "doc_form": doc_form(&added),
        }))
    };
    answer(result.await)
}

pub(super) async fn update_segment(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document, segment)): Path<(String, String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let input = segment_input(body.get("segment").unwrap_or(&Value::Null))?;
        let kb = state.kb.clone();
        let (d, doc) = (dataset.clone(), document.clone());
        let updated = blocking(move || kb.update_segment(&d, &doc, &segment, input)).await?;
        let (_, summary) = state.kb.document(&dataset, &document)?;
        let updated = [(updated, 0)];
        Ok(json!({
            "data": Value::Object(segment_object(&updated[0].0, &document, 0, summary.created_at)),
            "doc_form": doc_form(&updated),
        }))
    };
    answer(result.await)
}

pub(super) async fn delete_segment(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, document, segment)): Path<(String, String, String)>,
) -> Response {
    if let Err(e) = state.open_dataset(&headers, &dataset) {
        return super::dify_error(&e);
    }
    let kb = state.kb.clone();
    no_content(blocking(move || kb.delete_segment(&dataset, &document, &segment)).await)
}

fn field_object(field: &atlas_kb::MetadataField) -> Value {
    json!({ "id": field.id, "name": field.name, "type": field.kind })
}

pub(super) async fn list_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let fields = state.kb.metadata_fields(&dataset)?;
        Ok(json!({
            "doc_metadata": fields.iter().map(|(f, count)| {
                let mut object = field_object(f);
                object["count"] = json!(count);
                object
            }).collect::<Vec<_>>(),
            "built_in_field_enabled": state.kb.dataset(&dataset)?.built_in_field_enabled,
        }))
    }))
}

/// Dify's built-in metadata fields, which every document has a value of.
pub(super) async fn built_in_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).map(|()| {
        let fields: Vec<Value> = BUILT_IN_FIELDS
            .iter()
            .map(|(name, kind)| json!({ "name": name, "type": kind }))
            .collect();
        json!({ "fields": fields })
    }))
}

/// `enable` or `disable`: whether the dataset's documents show the built-in fields' values.
pub(super) async fn switch_built_in_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, action)): Path<(String, String)>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let enabled = match action.as_str() {
            "enable" => true,
            "disable" => false,
            other => {
                return Err(KbError::InvalidParam(format!(
                    "the action is enable or disable, not {other:?}"
                )));
            }
        };
        let kb = state.kb.clone();
        blocking(move || kb.set_built_in_fields(&dataset, enabled)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

/// `PATCH documents/status/{action}` with `{document_ids}`: `enable`, `disable`, `archive` or
/// `un_archive` them, all or none.
pub(super) async fn set_documents_status(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, action)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let status = DocumentStatus::named(&action).ok_or_else(|| {
            KbError::InvalidParam(format!(
                "the action is enable, disable, archive or un_archive, not {action:?}"
            ))
        })?;
        let ids = string_list(&json_body(body)?, "document_ids")?
            .filter(|ids| !ids.is_empty())
            .ok_or_else(|| {
                KbError::InvalidParam("document_ids must name at least one document".into())
            })?;
        let kb = state.kb.clone();
        blocking(move || kb.set_documents_status(&dataset, &ids, status)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

pub(super) async fn create_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let (name, kind) = (
            required_text(&body, "name")?.to_string(),
            required_text(&body, "type")?.to_string(),
        );
        let kb = state.kb.clone();
        let field = blocking(move || kb.create_metadata_field(&dataset, &name, &kind)).await?;
        Ok(field_object(&field))
    };
    answer(result.await)
}

pub(super) async fn rename_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, field)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let name = required_text(&body, "name")?.to_string();
        let kb = state.kb.clone();
        let field = blocking(move || kb.rename_metadata_field(&dataset, &field, &name)).await?;
        Ok(field_object(&field))
    };
    answer(result.await)
}

pub(super) async fn delete_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path((dataset, field)): Path<(String, String)>,
) -> Response {
    if let Err(e) = state.open_dataset(&headers, &dataset) {
        return super::dify_error(&e);
    }
    let kb = state.kb.clone();
    no_content(blocking(move || kb.delete_metadata_field(&dataset, &field)).await)
}

/// Dify's `operation_data`: `[{document_id, metadata_list: [{id, value, name}]}]`.
pub(super) async fn set_document_metadata(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_dataset(&headers, &dataset)?;
        let body = json_body(body)?;
        let operations = body
            .get("operation_data")
            .and_then(Value::as_array)
            .filter(|list| !list.is_empty())
            .ok_or_else(|| {
                KbError::InvalidParam("operation_data must list at least one document".into())
            })?;
        let mut values = Vec::new();
        for operation in operations {
            let document = required_text(operation, "document_id")?.to_string();
            let list = operation
                .get("metadata_list")
                .and_then(Value::as_array)
                .ok_or_else(|| KbError::InvalidParam("metadata_list must be a list".into()))?;
            let fields = list
                .iter()
                .map(|item| {
                    Ok((
                        required_text(item, "id")?.to_string(),
                        item.get("value").cloned().unwrap_or(Value::Null),
                    ))
                })
                .collect::<Result<Vec<_>, KbError>>()?;
            values.push((document, fields));
        }
        let kb = state.kb.clone();
        blocking(move || kb.set_document_metadata(&dataset, values)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

fn tag_object(tag: &atlas_kb::Tag, bound: usize) -> Value {
    json!({ "id": tag.id, "name": tag.name, "type": "knowledge", "binding_count": bound })
}

/// Knowledge tags belong to the whole server: changing them takes the server token (when there
/// is one), as creating datasets does; a dataset's own key may list them too (and bind them to
/// its dataset), as Dify's clients do with one key.
pub(super) async fn list_tags(State(state): State<DifyState>, headers: HeaderMap) -> Response {
    answer(state.open_tags(&headers).map(|()| {
        Value::Array(
            state
                .kb
                .tags()
                .iter()
                .map(|(t, bound)| tag_object(t, *bound))
                .collect(),
        )
    }))
}

pub(super) async fn create_tag(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_all(&headers)?;
        let name = required_text(&json_body(body)?, "name")?.to_string();
        let kb = state.kb.clone();
        let tag = blocking(move || kb.create_tag(&name)).await?;
        Ok(tag_object(&tag, 0))
    };
    answer(result.await)
}

pub(super) async fn rename_tag(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_all(&headers)?;
        let body = json_body(body)?;
        let (id, name) = (
            required_text(&body, "tag_id")?.to_string(),
            required_text(&body, "name")?.to_string(),
        );
        let kb = state.kb.clone();
        let tag = blocking(move || kb.rename_tag(&id, &name)).await?;
        let bound = state
            .kb
            .tags()
            .iter()
            .find(|(t, _)| t.id == tag.id)
            .map_or(0, |(_, n)| *n);
        Ok(tag_object(&tag, bound))
    };
    answer(result.await)
}

pub(super) async fn delete_tag(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        state.open_all(&headers)?;
        let id = required_text(&json_body(body)?, "tag_id")?.to_string();
        let kb = state.kb.clone();
        blocking(move || kb.delete_tag(&id)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

/// `{tag_ids, target_id}`: the dataset's own key or the server token.
pub(super) async fn bind_tags(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        let body = json_body(body)?;
        let dataset = required_text(&body, "target_id")?.to_string();
        state.open_dataset(&headers, &dataset)?;
        let ids = string_list(&body, "tag_ids")?
            .ok_or_else(|| KbError::InvalidParam("tag_ids is required".into()))?;
        let kb = state.kb.clone();
        blocking(move || kb.bind_tags(&dataset, &ids)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

/// `{tag_id, target_id}`.
pub(super) async fn unbind_tag(
    State(state): State<DifyState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        let body = json_body(body)?;
        let dataset = required_text(&body, "target_id")?.to_string();
        state.open_dataset(&headers, &dataset)?;
        let id = required_text(&body, "tag_id")?.to_string();
        let kb = state.kb.clone();
        blocking(move || kb.unbind_tag(&dataset, &id)).await?;
        Ok(json!({ "result": "success" }))
    };
    answer(result.await)
}

pub(super) async fn dataset_tags(
    State(state): State<DifyState>,
    headers: HeaderMap,
    Path(dataset): Path<String>,
) -> Response {
    answer(state.open_dataset(&headers, &dataset).and_then(|()| {
        let tags = state.kb.dataset_tags(&dataset)?;
        Ok(json!({
            "data": tags.iter().map(|t| json!({ "id": t.id, "name": t.name })).collect::<Vec<_>>(),
            "total": tags.len(),
        }))
    }))
}
