//! Knowledge-base retrieval (Dify's retrieve, seed 002's GET_KNOWLEDGE_DATA) as a tool.

use atlas_kb::KbError;
use atlas_model::AtlasError;
use schemars::JsonSchema;
use serde::Serialize;

use crate::business::blocking;
use crate::{Tool, ToolContext, ToolGroup};

/// Knowledge-base errors in seed 000's format (the Dify routes keep Dify's own).
pub fn kb_error(e: KbError) -> AtlasError {
    match e.code().1 {
        400 | 413 => AtlasError::InvalidParameter {
            message: e.to_string(),
            details: serde_json::json!({}),
        },
        404 => AtlasError::NotFound(e.to_string()),
        401 => AtlasError::Unauthorized,
        _ => AtlasError::Graph(e.to_string()),
    }
}

/// retrieve_knowledge's input.
#[derive(Debug, Clone, serde::Deserialize, JsonSchema)]
pub struct RetrieveKnowledgeRequest {
    /// 知识库 ID（Dify 的 dataset_id）
    pub dataset_id: String,
    /// 要检索的问题或关键词
    pub query: String,
    /// 最多返回多少条，默认 4
    #[schemars(range(min = 1, max = 20))]
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

#[derive(Debug, Clone, Serialize, JsonSchema)]
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

#[derive(Debug, Clone, Serialize, JsonSchema)]
/// retrieve_knowledge's answer.
pub struct KnowledgeRecords {
    /// The best segments, best first.
    pub records: Vec<KnowledgeRecord>,
}

pub(crate) fn tool() -> Tool {
    use crate::tool;
    tool(
        ToolGroup::Knowledge,
        "retrieve_knowledge",
        "在知识库中检索与问题最相关的片段（混合检索），即 Dify 的 retrieve。Search a knowledge base (Dify dataset) for the segments that answer a question.",
        false,
        |c: ToolContext, r: RetrieveKnowledgeRequest| {
            blocking(move || {
                let kb = c.kb.ok_or_else(|| {
                    AtlasError::NotFound("this server has no knowledge bases".into())
                })?;
                // One rule on every face: a dataset's records need its key or the server token.
                if !c.holds_server_token {
                    let key = r.api_key.as_deref().ok_or(AtlasError::Unauthorized)?;
                    kb.authorize(&r.dataset_id, key).map_err(kb_error)?;
                }
                let top_k = r.top_k.unwrap_or(4);
                if !(1..=20).contains(&top_k) {
                    return Err(AtlasError::invalid(
                        "top_k",
                        format!("top_k must be between 1 and 20, got {top_k}"),
                    ));
                }
                let options = atlas_kb::SearchOptions {
                    top_k: top_k as usize,
                    score_threshold: r.score_threshold,
                    ..Default::default()
                };
                let hits = kb
                    .search(&r.dataset_id, &r.query, &options)
                    .map_err(kb_error)?;
                Ok(KnowledgeRecords {
                    records: hits
                        .into_iter()
                        .map(|h| KnowledgeRecord {
                            content: h.segment.content,
                            question: h.segment.question,
                            score: h.score,
                            document_id: h.document_id,
                            document_name: h.document_name,
                            segment_id: h.segment.id,
                        })
                        .collect(),
                })
            })
        },
    )
}
