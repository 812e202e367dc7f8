//! Datasets, documents and segments as they are stored (one JSON file per document).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dataset {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The Bearer token that may read this dataset (Dify's "dataset-…" keys).
    pub api_key: String,
    /// Unix seconds.
    pub created_at: i64,
    /// The metadata fields its documents may hold (Dify's dataset metadata).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata_fields: Vec<MetadataField>,
    /// The knowledge tags bound to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tag_ids: Vec<String>,
}

/// A metadata field a dataset declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataField {
    pub id: String,
    pub name: String,
    /// `string`, `number` or `time`.
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub id: String,
    pub name: String,
    /// What it was made from: text, markdown, qa_csv or qa_json.
    pub kind: String,
    /// Free-form metadata, filterable by `metadata_filtering_conditions`.
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub created_at: i64,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Segment {
    pub id: String,
    /// 1-based, within its document.
    pub position: usize,
    /// What a hit returns (the answer, for a question/answer pair).
    pub content: String,
    /// What is searched when it differs from `content` (the question of a pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    pub keywords: Vec<String>,
    pub word_count: usize,
}

impl Segment {
    /// The text retrieval matches against.
    pub fn searched_text(&self) -> &str {
        self.question.as_deref().unwrap_or(&self.content)
    }
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
