//! What Dify's knowledge routes answer, in Dify's shapes: every key its clients read is present,
//! with Dify's defaults where Atlas has nothing of its own (`Default` gives them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// No body (a 204).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct NoAnswer {}

/// `{"result": "success"}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Success {
    /// Always `success`.
    #[schemars(extend("const" = "success"))]
    pub result: String,
}

impl Default for Success {
    fn default() -> Self {
        Success {
            result: "success".into(),
        }
    }
}

/// A page of a list.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Page<T> {
    /// The items on this page.
    pub data: Vec<T>,
    /// Whether a later page has more.
    pub has_more: bool,
    /// Items a page holds.
    pub limit: u64,
    /// Items in all pages.
    pub total: u64,
    /// This page, from 1.
    pub page: u64,
}

/// Dify's `retrieval_model_dict` of a dataset.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalModelDict {
    /// `hybrid_search`.
    pub search_method: String,
    /// Never: Atlas reranks nothing.
    pub reranking_enable: bool,
    /// Empty names.
    pub reranking_model: RerankingModel,
    /// 4.
    pub top_k: u64,
    /// Off.
    pub score_threshold_enabled: bool,
    /// None.
    pub score_threshold: Option<f64>,
}

/// Dify's reranking model names (empty here).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RerankingModel {
    /// Empty.
    pub reranking_provider_name: String,
    /// Empty.
    pub reranking_model_name: String,
}

impl Default for RetrievalModelDict {
    fn default() -> Self {
        RetrievalModelDict {
            search_method: "hybrid_search".into(),
            reranking_enable: false,
            reranking_model: RerankingModel::default(),
            top_k: super::limits::DEFAULT_TOP_K as u64,
            score_threshold_enabled: false,
            score_threshold: None,
        }
    }
}

/// A tag as a dataset lists it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DatasetTag {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `knowledge`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A dataset in Dify's shape.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Dataset {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// `vendor`.
    pub provider: String,
    /// `only_me`.
    pub permission: String,
    /// `upload_file` once it has documents.
    pub data_source_type: Option<String>,
    /// `high_quality`.
    pub indexing_technique: String,
    /// 0.
    pub app_count: u64,
    /// Its documents.
    pub document_count: u64,
    /// Characters in its segments.
    pub word_count: u64,
    /// Its segments.
    pub segment_count: u64,
    /// Empty.
    pub created_by: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Empty.
    pub updated_by: String,
    /// Unix seconds.
    pub updated_at: i64,
    /// The embedder's name.
    pub embedding_model: String,
    /// `atlas`.
    pub embedding_model_provider: String,
    /// Always.
    pub embedding_available: bool,
    /// How it is searched when not told.
    pub retrieval_model_dict: RetrievalModelDict,
    /// Its tags.
    pub tags: Vec<DatasetTag>,
    /// None.
    pub doc_form: Option<String>,
    /// None.
    pub external_knowledge_info: Option<Value>,
    /// None.
    pub external_retrieval_model: Option<Value>,
}

impl Default for Dataset {
    fn default() -> Self {
        Dataset {
            id: String::new(),
            name: String::new(),
            description: String::new(),
            provider: "vendor".into(),
            permission: "only_me".into(),
            data_source_type: None,
            indexing_technique: "high_quality".into(),
            app_count: 0,
            document_count: 0,
            word_count: 0,
            segment_count: 0,
            created_by: String::new(),
            created_at: 0,
            updated_by: String::new(),
            updated_at: 0,
            embedding_model: String::new(),
            embedding_model_provider: "atlas".into(),
            embedding_available: true,
            retrieval_model_dict: RetrievalModelDict::default(),
            tags: Vec::new(),
            doc_form: None,
            external_knowledge_info: None,
            external_retrieval_model: None,
        }
    }
}

/// A dataset just made, with the key that opens it (shown once, as `atlas kb create` does).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreatedDataset {
    /// The dataset.
    #[serde(flatten)]
    pub dataset: Dataset,
    /// Its API key: Atlas's addition.
    pub api_key: String,
}

/// A document in Dify's shape.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    /// Its id.
    pub id: String,
    /// Its place in its dataset, from 1.
    pub position: u64,
    /// `upload_file`.
    pub data_source_type: String,
    /// None.
    pub data_source_info: Option<Value>,
    /// None.
    pub dataset_process_rule_id: Option<String>,
    /// Its name.
    pub name: String,
    /// `api`.
    pub created_from: String,
    /// Empty.
    pub created_by: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Characters in its segments.
    pub tokens: u64,
    /// `completed`: a document is indexed when its write answers.
    pub indexing_status: String,
    /// None.
    pub error: Option<String>,
    /// Whether retrieval may return it.
    pub enabled: bool,
    /// None.
    pub disabled_at: Option<i64>,
    /// None.
    pub disabled_by: Option<String>,
    /// Whether it is archived.
    pub archived: bool,
    /// `available`, `disabled` or `archived`.
    pub display_status: String,
    /// Characters in its segments.
    pub word_count: u64,
    /// Searches that returned one of its segments.
    pub hit_count: u64,
    /// Its segments.
    pub segment_count: u64,
    /// `text_model`, or `qa_model` for question/answer pairs.
    pub doc_form: String,
    /// Its metadata values (with the built-in fields' when its dataset shows them).
    pub doc_metadata: Map<String, Value>,
}

impl Default for Document {
    fn default() -> Self {
        Document {
            id: String::new(),
            position: 0,
            data_source_type: "upload_file".into(),
            data_source_info: None,
            dataset_process_rule_id: None,
            name: String::new(),
            created_from: "api".into(),
            created_by: String::new(),
            created_at: 0,
            tokens: 0,
            indexing_status: "completed".into(),
            error: None,
            enabled: true,
            disabled_at: None,
            disabled_by: None,
            archived: false,
            display_status: "available".into(),
            word_count: 0,
            hit_count: 0,
            segment_count: 0,
            doc_form: "text_model".into(),
            doc_metadata: Map::new(),
        }
    }
}

/// A document just written, and its batch (its own id).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WrittenDocument {
    /// The document as it now is.
    pub document: Document,
    /// The batch to ask indexing-status of.
    pub batch: String,
}

/// A batch's indexing progress.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BatchStatus {
    /// The document.
    pub id: String,
    /// `completed`.
    pub indexing_status: String,
    /// Unix seconds.
    pub processing_started_at: i64,
    /// Unix seconds.
    pub parsing_completed_at: i64,
    /// Unix seconds.
    pub cleaning_completed_at: i64,
    /// Unix seconds.
    pub splitting_completed_at: i64,
    /// Unix seconds.
    pub completed_at: i64,
    /// None.
    pub paused_at: Option<i64>,
    /// None.
    pub error: Option<String>,
    /// None.
    pub stopped_at: Option<i64>,
    /// Its segments.
    pub completed_segments: u64,
    /// Its segments.
    pub total_segments: u64,
}

/// Dify's indexing-status answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct IndexingStatuses {
    /// One batch.
    pub data: Vec<BatchStatus>,
}

/// A segment in Dify's shape: `content` is what is searched (a pair's question), `answer` a
/// pair's answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Segment {
    /// Its id.
    pub id: String,
    /// Its place in its document.
    pub position: u64,
    /// Its document.
    pub document_id: String,
    /// Its text (a pair's question).
    pub content: String,
    /// None.
    pub sign_content: Option<String>,
    /// A pair's answer, else empty.
    pub answer: String,
    /// Its characters.
    pub word_count: u64,
    /// Its characters.
    pub tokens: u64,
    /// Its keywords.
    pub keywords: Vec<String>,
    /// Its id.
    pub index_node_id: String,
    /// Empty.
    pub index_node_hash: String,
    /// Searches that returned it.
    pub hit_count: u64,
    /// Always.
    pub enabled: bool,
    /// None.
    pub disabled_at: Option<i64>,
    /// None.
    pub disabled_by: Option<String>,
    /// `completed`.
    pub status: String,
    /// Empty.
    pub created_by: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub indexing_at: i64,
    /// Unix seconds.
    pub completed_at: i64,
    /// None.
    pub error: Option<String>,
    /// None.
    pub stopped_at: Option<i64>,
}

impl Default for Segment {
    fn default() -> Self {
        Segment {
            id: String::new(),
            position: 0,
            document_id: String::new(),
            content: String::new(),
            sign_content: None,
            answer: String::new(),
            word_count: 0,
            tokens: 0,
            keywords: Vec::new(),
            index_node_id: String::new(),
            index_node_hash: String::new(),
            hit_count: 0,
            enabled: true,
            disabled_at: None,
            disabled_by: None,
            status: "completed".into(),
            created_by: String::new(),
            created_at: 0,
            indexing_at: 0,
            completed_at: 0,
            error: None,
            stopped_at: None,
        }
    }
}

/// A page of segments and the document's form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SegmentPage {
    /// The page.
    #[serde(flatten)]
    pub page: Page<Segment>,
    /// `text_model` or `qa_model`.
    pub doc_form: String,
}

/// Segments just added.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AddedSegments {
    /// The segments.
    pub data: Vec<Segment>,
    /// `text_model` or `qa_model`.
    pub doc_form: String,
}

/// A segment just changed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UpdatedSegment {
    /// The segment.
    pub data: Segment,
    /// `text_model` or `qa_model`.
    pub doc_form: String,
}

/// The query as Dify echoes it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryContent {
    /// The query.
    pub content: String,
}

/// A hit's document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecordDocument {
    /// Its id.
    pub id: String,
    /// `upload_file`.
    pub data_source_type: String,
    /// Its name.
    pub name: String,
    /// None.
    pub doc_type: Option<String>,
    /// Its metadata values, or none.
    pub doc_metadata: Option<Map<String, Value>>,
}

/// A hit's segment: what the agent reads is `content` (a pair's answer).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecordSegment {
    /// The segment.
    #[serde(flatten)]
    pub segment: Segment,
    /// Its document.
    pub document: RecordDocument,
}

/// A hit in Dify's record shape.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Record {
    /// The segment.
    pub segment: RecordSegment,
    /// None.
    pub child_chunks: Vec<Value>,
    /// Its fused score, 0 to 1.
    pub score: f64,
    /// None.
    pub tsne_position: Option<Value>,
    /// None.
    pub files: Vec<Value>,
    /// None.
    pub summary: Option<String>,
}

/// Dify's retrieve answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveAnswer {
    /// The query.
    pub query: QueryContent,
    /// The hits, best first.
    pub records: Vec<Record>,
}

/// Where an External Knowledge record is from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExternalMetadata {
    /// Its document.
    pub document_id: String,
    /// Its segment.
    pub segment_id: String,
    /// A pair's question.
    pub question: Option<String>,
}

/// An External Knowledge record.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExternalRecord {
    /// The text (a pair's answer).
    pub content: String,
    /// Its fused score, 0 to 1.
    pub score: f64,
    /// Its document's name.
    pub title: String,
    /// Where it is from.
    pub metadata: ExternalMetadata,
}

/// The External Knowledge API's answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExternalRecords {
    /// The hits, best first.
    pub records: Vec<ExternalRecord>,
}

/// A metadata field.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Field {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `string`, `number` or `time`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A metadata field and how many documents hold a value of it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CountedField {
    /// The field.
    #[serde(flatten)]
    pub field: Field,
    /// Documents with a value.
    pub count: u64,
}

/// A dataset's metadata fields.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FieldList {
    /// The fields.
    pub doc_metadata: Vec<CountedField>,
    /// Whether documents show the built-in fields' values.
    pub built_in_field_enabled: bool,
}

/// A built-in metadata field.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BuiltInField {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: String,
}

/// The built-in metadata fields.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BuiltInFieldList {
    /// The fields.
    pub fields: Vec<BuiltInField>,
}

/// A knowledge tag.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tag {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `knowledge`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Datasets it is bound to.
    pub binding_count: u64,
}

/// A tag as a dataset's tag list names it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TagName {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// A dataset's tags.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DatasetTagList {
    /// The tags.
    pub data: Vec<TagName>,
    /// How many.
    pub total: u64,
}
