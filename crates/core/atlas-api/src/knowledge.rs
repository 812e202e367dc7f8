//! Knowledge-base retrieval as a tool (`retrieve_knowledge`: Dify's retrieve, seed 002's
//! GET_KNOWLEDGE_DATA).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// retrieve_knowledge's input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveKnowledgeRequest {
    /// 知识库 ID（Dify 的 dataset_id）
    pub dataset_id: String,
    /// 要检索的问题或关键词
    pub query: String,
    /// 最多返回多少条，默认 4，至多 100。Records at most (4 when not given), as Dify's routes.
    #[schemars(range(min = 1, max = 100))]
    #[serde(default)]
    pub top_k: Option<u32>,
    /// 低于此分数（0~1）的结果不返回
    #[serde(default)]
    pub score_threshold: Option<f64>,
    /// 该知识库的 API 密钥（Dify 的 dataset key）；持有服务器令牌的调用方不需要。The dataset's
    /// own key; a caller holding the server token needs none.
    #[serde(default)]
    pub api_key: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
/// A segment that answers the query.
pub struct KnowledgeRecord {
    /// The segment's text (a question/answer segment's answer).
    pub content: String,
    /// A question/answer segment's question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Its fused score, between 0 and 1.
    pub score: f64,
    /// The document it is from.
    pub document_id: String,
    /// That document's name.
    pub document_name: String,
    /// The segment's id.
    pub segment_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
/// retrieve_knowledge's answer.
pub struct KnowledgeRecords {
    /// The best segments, best first.
    pub records: Vec<KnowledgeRecord>,
}
