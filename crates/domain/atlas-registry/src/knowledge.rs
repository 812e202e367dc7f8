//! Knowledge-base retrieval (Dify's retrieve, seed 002's GET_KNOWLEDGE_DATA) as a tool, with the
//! search options and the limit of Dify's routes ([`crate::datasets::search_options`]).

use atlas_api::knowledge::{KnowledgeRecord, KnowledgeRecords, RetrieveKnowledgeRequest};
use atlas_model::AtlasError;

use crate::business::blocking;
use crate::datasets::search_options;
use crate::{Tool, ToolContext, ToolGroup};

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
                    kb.authorize(&r.dataset_id, key)?;
                }
                let options =
                    search_options(None, r.top_k.map(i64::from), r.score_threshold, None, None)?;
                let hits = kb.search(&r.dataset_id, &r.query, &options)?;
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
