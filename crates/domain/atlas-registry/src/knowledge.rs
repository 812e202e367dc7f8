//! Knowledge-base retrieval (Dify's retrieve, seed 002's GET_KNOWLEDGE_DATA) as a tool.

use atlas_api::knowledge::{KnowledgeRecord, KnowledgeRecords, RetrieveKnowledgeRequest};
use atlas_kb::KbError;
use atlas_model::AtlasError;

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

pub(crate) fn tool() -> Tool {
    use crate::interface;
    use atlas_api::tools;
    interface::<tools::RetrieveKnowledge, _, _>(
        ToolGroup::Knowledge,
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
