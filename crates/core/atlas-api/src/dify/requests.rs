//! What Dify's knowledge routes take: path and query parameters, and bodies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::MetadataFilter;

/// A name: something besides spaces.
const NAME: &str = "\\S";
/// A document's text as the knowledge base takes it: something besides spaces, and no NUL (a
/// text with one is taken for a binary file and refused).
const DOCUMENT_TEXT: &str = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$";

/// A dataset in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DatasetPath {
    /// The dataset.
    pub dataset_id: String,
}

/// A document in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentPath {
    /// Its dataset.
    pub dataset_id: String,
    /// The document (for indexing-status, the batch: a document's id).
    pub document_id: String,
}

/// A segment in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SegmentPath {
    /// Its dataset.
    pub dataset_id: String,
    /// Its document.
    pub document_id: String,
    /// The segment.
    pub segment_id: String,
}

/// A metadata field in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FieldPath {
    /// Its dataset.
    pub dataset_id: String,
    /// The field.
    pub metadata_id: String,
}

/// Showing or hiding the built-in fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Switch {
    /// Show them.
    Enable,
    /// Hide them.
    Disable,
}

/// The built-in fields' switch in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SwitchPath {
    /// The dataset.
    pub dataset_id: String,
    /// What to do.
    pub action: Switch,
}

/// What Dify's `documents/status/{action}` does to documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentAction {
    /// Retrieval may return them.
    Enable,
    /// Retrieval never returns them; they stay editable.
    Disable,
    /// Retrieval never returns them and they cannot be changed.
    Archive,
    /// Back from the archive, with the enabled state they had.
    UnArchive,
}

/// The documents' status action in the path.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StatusPath {
    /// The dataset.
    pub dataset_id: String,
    /// What to do.
    pub action: DocumentAction,
}

/// Dify's page of a list: `page` from 1, `limit` 1 to 100 (20 when not given), and a keyword
/// the names hold (case aside).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PageQuery {
    /// The page, from 1 (at most what JSON carries exactly).
    #[schemars(range(min = 1, max = 9_007_199_254_740_991u64))]
    pub page: Option<u64>,
    /// Items on a page.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// Only items whose name holds it.
    pub keyword: Option<String>,
}

/// A segment list's page: a page, a keyword the segments hold, and an indexing status (every
/// segment here is `completed` when its write answers).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SegmentQuery {
    /// The page, from 1 (at most what JSON carries exactly).
    #[schemars(range(min = 1, max = 9_007_199_254_740_991u64))]
    pub page: Option<u64>,
    /// Items on a page.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// Only segments whose text holds it.
    pub keyword: Option<String>,
    /// Only segments in this indexing status.
    pub status: Option<String>,
}

/// Dify's search methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchMethodName {
    /// Words only.
    KeywordSearch,
    /// Words only, under Dify's other name.
    FullTextSearch,
    /// Vectors only.
    SemanticSearch,
    /// Both, fused.
    HybridSearch,
}

/// Dify's `weights`: the vector score's share in hybrid search.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Weights {
    /// The vector setting.
    pub vector_setting: Option<VectorSetting>,
}

/// Dify's `vector_setting`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct VectorSetting {
    /// The vector score's share, 0 to 1.
    pub vector_weight: Option<f64>,
}

/// Dify's `retrieval_model`, every field optional (clients send `{"top_k": 3}` alone).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct RetrievalModel {
    /// How to search (hybrid when not given).
    pub search_method: Option<SearchMethodName>,
    /// Records at most, 1 to 100 (4 when not given).
    #[schemars(range(min = 1, max = 100))]
    pub top_k: Option<i64>,
    /// Whether `score_threshold` applies.
    pub score_threshold_enabled: Option<bool>,
    /// Hits below it are dropped, when enabled.
    pub score_threshold: Option<f64>,
    /// The vector score's share in hybrid search.
    pub weights: Option<Weights>,
    /// Only documents whose metadata pass it.
    pub metadata_filtering_conditions: Option<MetadataFilter>,
}

/// `retrieve` and `hit-testing`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RetrieveRequest {
    /// What to search for: at most 250 characters, no control characters.
    #[schemars(length(min = 1, max = 250), extend("pattern" = atlas_model::REQUIRED_TEXT_PATTERN))]
    pub query: String,
    /// How.
    pub retrieval_model: Option<RetrievalModel>,
}

/// The External Knowledge API's `retrieval_setting`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct RetrievalSetting {
    /// Records at most, 1 to 100 (4 when not given).
    #[schemars(range(min = 1, max = 100))]
    pub top_k: Option<i64>,
    /// Hits below it are dropped (0 keeps all).
    pub score_threshold: Option<f64>,
}

/// The External Knowledge API's request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExternalRetrievalRequest {
    /// The dataset.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub knowledge_id: String,
    /// What to search for.
    #[schemars(length(min = 1, max = 250), extend("pattern" = atlas_model::REQUIRED_TEXT_PATTERN))]
    pub query: String,
    /// How many and how good.
    pub retrieval_setting: Option<RetrievalSetting>,
    /// Only documents whose metadata pass it.
    pub metadata_condition: Option<MetadataFilter>,
}

/// A new dataset.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateDatasetRequest {
    /// Its name, 1 to 100 characters.
    #[schemars(length(min = 1, max = 100), extend("pattern" = NAME))]
    pub name: String,
    /// What it holds.
    pub description: Option<String>,
}

/// A copy of a dataset (Dify's SDK's `duplicate_dataset`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DuplicateDatasetRequest {
    /// The copy's name, 1 to 100 characters.
    #[schemars(length(min = 1, max = 100), extend("pattern" = NAME))]
    pub name: String,
}

/// A new dataset made from a template (Dify's SDK's `create_dataset_from_template`): Atlas's
/// templates are its datasets, whose settings the new one takes without their documents.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FromTemplateRequest {
    /// The template: a dataset's id, or its name when one dataset alone has it.
    #[schemars(length(min = 1, max = 100))]
    pub template_name: String,
    /// The new dataset's name, 1 to 100 characters.
    #[schemars(length(min = 1, max = 100), extend("pattern" = NAME))]
    pub name: String,
    /// What it holds (the template's description when not given).
    pub description: Option<String>,
}

/// A dataset's new name or description.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateDatasetRequest {
    /// Its new name, 1 to 100 characters.
    #[schemars(length(min = 1, max = 100), extend("pattern" = NAME))]
    pub name: Option<String>,
    /// Its new description.
    pub description: Option<String>,
}

/// How a document's text is split: Atlas's addition to Dify's fields (by the file's name when
/// not given). A question/answer kind's text must be that table or list, which a schema cannot
/// say: such a text that is not one is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    /// Plain text, split into paragraphs.
    Text,
    /// Markdown, split by headings.
    Markdown,
    /// A question,answer table.
    QaCsv,
    /// A JSON list of questions and answers.
    QaJson,
}

/// A document's settings beside its text: Atlas's `kind` and `doc_metadata`, and Dify's
/// `original_document_id` (the document an upload replaces).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct DocumentSettings {
    /// How its text is split.
    pub kind: Option<DocumentKind>,
    /// Its metadata values, by field name.
    pub doc_metadata: Option<Map<String, Value>>,
    /// The document it replaces.
    pub original_document_id: Option<String>,
}

/// A new document from text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateByTextRequest {
    /// Its name, 1 to 255 characters.
    #[schemars(length(min = 1, max = 255), extend("pattern" = NAME))]
    pub name: String,
    /// Its text.
    #[schemars(length(min = 1), extend("pattern" = DOCUMENT_TEXT))]
    pub text: String,
    /// Its settings.
    #[serde(flatten)]
    pub settings: DocumentSettings,
}

/// A document's new text, its new name, or both (a `null` is not given).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [
    { "required": ["name"], "properties": { "name": { "type": "string", "minLength": 1, "maxLength": 255, "pattern": NAME } } },
    { "required": ["text"], "properties": { "text": { "type": "string", "minLength": 1, "pattern": DOCUMENT_TEXT } } }
]))]
pub struct UpdateByTextRequest {
    /// Its new name, 1 to 255 characters.
    #[schemars(length(min = 1, max = 255), extend("pattern" = NAME))]
    pub name: Option<String>,
    /// Its new text.
    #[schemars(length(min = 1), extend("pattern" = DOCUMENT_TEXT))]
    pub text: Option<String>,
    /// Its settings.
    #[serde(flatten)]
    pub settings: DocumentSettings,
}

/// The settings of an upload, as the JSON in its form's `data` field.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UploadSettings {
    /// The document's name, 1 to 255 characters (the file's when not given).
    #[schemars(length(min = 1, max = 255), extend("pattern" = NAME))]
    pub name: Option<String>,
    /// Its settings.
    #[serde(flatten)]
    pub settings: DocumentSettings,
}

/// Dify's upload form, as the server reads it: the file (its name and bytes) and the settings
/// from `data`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(extend("properties" = {
    "file": { "type": "string", "minLength": 1, "pattern": "\\S" },
    "data": { "type": "string", "contentMediaType": "application/json" }
}, "required" = ["file"]))]
pub struct UploadForm {
    /// The file's name, as the form gives it.
    #[schemars(skip)]
    pub file_name: Option<String>,
    /// The file's bytes; none when the form has no `file`.
    #[schemars(skip)]
    pub file: Option<Vec<u8>>,
    /// The settings.
    #[schemars(skip)]
    pub settings: UploadSettings,
}

/// A segment as a client writes it: Dify's `{content, answer?, keywords?}`. With an answer, the
/// content is the question searched and the answer what a hit returns. `enabled: false` is
/// refused: Atlas keeps no disabled segments (delete one instead).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SegmentInput {
    /// The text, or the question of a pair.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub content: String,
    /// The answer of a question/answer pair.
    pub answer: Option<String>,
    /// Keywords given by hand (else the segment's own words).
    pub keywords: Option<Vec<String>>,
    /// Only `true` (or not given).
    #[schemars(extend("enum" = [true, null]))]
    pub enabled: Option<bool>,
}

/// Segments to add.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddSegmentsRequest {
    /// 1 to 1,000 segments.
    #[schemars(length(min = 1, max = 1000))]
    pub segments: Vec<SegmentInput>,
}

/// A segment's new content.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateSegmentRequest {
    /// The segment.
    pub segment: SegmentInput,
}

/// A metadata field's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    /// Text.
    String,
    /// A number.
    Number,
    /// A time, in Unix seconds.
    Time,
}

impl FieldType {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Number => "number",
            FieldType::Time => "time",
        }
    }
}

/// A metadata field to declare.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateFieldRequest {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// Its name, 1 to 64 characters.
    #[schemars(length(min = 1, max = 64), extend("pattern" = NAME))]
    pub name: String,
}

/// A metadata field's new name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenameFieldRequest {
    /// 1 to 64 characters.
    #[schemars(length(min = 1, max = 64), extend("pattern" = NAME))]
    pub name: String,
}

/// Documents to change.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentIdsRequest {
    /// At least one.
    #[schemars(length(min = 1), extend("items" = { "type": "string", "minLength": 1, "pattern": NAME }))]
    pub document_ids: Vec<String>,
}

/// One metadata value to set.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FieldValue {
    /// The field.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub id: String,
    /// Its value (`null` removes it).
    #[serde(default)]
    pub value: Value,
    /// The field's name, as Dify's clients send it (the id decides).
    pub name: Option<String>,
}

/// A document's metadata values to set.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentValues {
    /// The document.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub document_id: String,
    /// Its values.
    pub metadata_list: Vec<FieldValue>,
}

/// Dify's `operation_data`: documents' metadata values, all set or none.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentMetadataRequest {
    /// At least one document.
    #[schemars(length(min = 1))]
    pub operation_data: Vec<DocumentValues>,
}

/// A tag to make.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TagNameRequest {
    /// Its name, 1 to 50 characters.
    #[schemars(length(min = 1, max = 50), extend("pattern" = NAME))]
    pub name: String,
}

/// A tag's new name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenameTagRequest {
    /// The tag.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub tag_id: String,
    /// Its new name, 1 to 50 characters.
    #[schemars(length(min = 1, max = 50), extend("pattern" = NAME))]
    pub name: String,
}

/// A tag to delete.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TagIdRequest {
    /// The tag.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub tag_id: String,
}

/// Tags to bind to a dataset.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BindTagsRequest {
    /// The tags.
    #[schemars(length(min = 1))]
    pub tag_ids: Vec<String>,
    /// The dataset.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub target_id: String,
}

/// A tag to unbind from a dataset.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UnbindTagRequest {
    /// The tag.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub tag_id: String,
    /// The dataset.
    #[schemars(length(min = 1), extend("pattern" = NAME))]
    pub target_id: String,
}
