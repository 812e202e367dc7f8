//! Datasets, documents and segments as they are stored (one JSON file per document).

use serde::{Deserialize, Serialize};

/// A dataset: its documents' common settings and key.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dataset {
    /// Its id (a UUID).
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it holds.
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
    /// Whether its documents show Dify's built-in metadata ([`BUILT_IN_FIELDS`]) beside their own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub built_in_field_enabled: bool,
}

/// Dify's built-in metadata fields, which every document has a value of: name and type.
pub const BUILT_IN_FIELDS: [(&str, &str); 5] = [
    ("document_name", "string"),
    ("uploader", "string"),
    ("upload_date", "time"),
    ("last_update_date", "time"),
    ("source", "string"),
];

/// A metadata field a dataset declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataField {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `string`, `number` or `time`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A document, split into segments.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    /// Its id (a UUID).
    pub id: String,
    /// Its name (a file name, for an uploaded file).
    pub name: String,
    /// What it was made from: text, markdown, qa_csv or qa_json.
    pub kind: String,
    /// Free-form metadata, filterable by `metadata_filtering_conditions`.
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Unix seconds.
    pub created_at: i64,
    /// Whether retrieval may return it (Dify's document status `enable`/`disable`).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub enabled: bool,
    /// Archived: kept, never returned, not editable until un-archived.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// Its segments, in order.
    pub segments: Vec<Segment>,
}

impl Document {
    /// Whether retrieval may return its segments.
    pub fn retrievable(&self) -> bool {
        self.enabled && !self.archived
    }
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// What a search returns: a passage, or a question/answer pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Segment {
    /// Its id (a UUID).
    pub id: String,
    /// 1-based, within its document.
    pub position: usize,
    /// What a hit returns (the answer, for a question/answer pair).
    pub content: String,
    /// What is searched when it differs from `content` (the question of a pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Its keywords.
    pub keywords: Vec<String>,
    /// Its characters (Dify's `word_count`).
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
