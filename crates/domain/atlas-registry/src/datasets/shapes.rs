//! The knowledge base's records in Dify's shapes.

use atlas_api::dify::{
    Dataset, DatasetTag, Document, Record, RecordDocument, RecordSegment, Segment,
};
use atlas_kb::{DatasetSummary, DocumentSummary, Hit, KnowledgeBase};
use serde_json::json;

pub(super) fn dataset(d: &DatasetSummary, kb: &KnowledgeBase) -> Dataset {
    let tags = kb
        .dataset_tags(&d.id)
        .unwrap_or_default()
        .into_iter()
        .map(|t| DatasetTag {
            id: t.id,
            name: t.name,
            kind: "knowledge".into(),
        })
        .collect();
    Dataset {
        id: d.id.clone(),
        name: d.name.clone(),
        description: d.description.clone(),
        data_source_type: (d.document_count > 0).then(|| "upload_file".into()),
        document_count: d.document_count as u64,
        word_count: d.word_count as u64,
        segment_count: d.segment_count as u64,
        created_at: d.created_at,
        updated_at: d.created_at,
        embedding_model: kb.embedder_name(),
        tags,
        ..Dataset::default()
    }
}

/// A document in Dify's shape; `built_in` adds the built-in metadata fields' values to its own
/// (when its dataset shows them).
pub(super) fn document(d: &DocumentSummary, position: usize, built_in: bool) -> Document {
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
    Document {
        id: d.id.clone(),
        position: position as u64,
        name: d.name.clone(),
        created_at: d.created_at,
        tokens: d.word_count as u64,
        enabled: d.enabled,
        archived: d.archived,
        display_status: display_status.into(),
        word_count: d.word_count as u64,
        hit_count: d.hit_count,
        segment_count: d.segment_count as u64,
        doc_form: if d.kind.starts_with("qa_") {
            "qa_model"
        } else {
            "text_model"
        }
        .into(),
        doc_metadata: metadata,
        ..Document::default()
    }
}

/// A segment in Dify's shape: `content` is what is searched (a pair's question), `answer` a
/// pair's answer.
pub(super) fn segment(
    s: &atlas_kb::Segment,
    document_id: &str,
    hit_count: u64,
    created_at: i64,
) -> Segment {
    Segment {
        id: s.id.clone(),
        position: s.position as u64,
        document_id: document_id.to_string(),
        content: s.searched_text().to_string(),
        answer: s
            .question
            .as_ref()
            .map(|_| s.content.clone())
            .unwrap_or_default(),
        word_count: s.word_count as u64,
        tokens: s.word_count as u64,
        keywords: s.keywords.clone(),
        index_node_id: s.id.clone(),
        hit_count,
        created_at,
        indexing_at: created_at,
        completed_at: created_at,
        ..Segment::default()
    }
}

/// The segments' `doc_form` as Dify names it.
pub(super) fn doc_form<'a>(segments: impl IntoIterator<Item = &'a atlas_kb::Segment>) -> String {
    if segments.into_iter().any(|s| s.question.is_some()) {
        "qa_model"
    } else {
        "text_model"
    }
    .into()
}

/// A hit in Dify's record shape.
pub(super) fn record(hit: &Hit) -> Record {
    let mut shown = segment(
        &hit.segment,
        &hit.document_id,
        hit.hit_count,
        hit.created_at,
    );
    // What the agent reads is `content`: the answer, for a question/answer pair.
    shown.content = hit.segment.content.clone();
    Record {
        segment: RecordSegment {
            segment: shown,
            document: RecordDocument {
                id: hit.document_id.clone(),
                data_source_type: "upload_file".into(),
                name: hit.document_name.clone(),
                doc_type: None,
                doc_metadata: (!hit.document_metadata.is_empty())
                    .then(|| hit.document_metadata.clone()),
            },
        },
        child_chunks: Vec::new(),
        score: hit.score,
        tsne_position: None,
        files: Vec::new(),
        summary: None,
    }
}
