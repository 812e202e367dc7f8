//! Seed 003's tools: each one function of the business graph's current snapshot.

use atlas_biz::{BizError, BizSnapshot};
use atlas_model::{AtlasError, Result};

use crate::{Tool, ToolContext, ToolGroup, interface};
use atlas_api::tools;

/// Seed 003's business-graph errors in seed 000's format.
pub fn biz_error(e: BizError) -> AtlasError {
    match e {
        BizError::Invalid(message) => AtlasError::InvalidParameter {
            message,
            details: serde_json::json!({}),
        },
        BizError::NotFound { .. } => AtlasError::NotFound(e.to_string()),
        BizError::Embed(_) => AtlasError::embedding("the business graph", e),
        _ if e.is_transient() => AtlasError::away("the business graph", e),
        BizError::Locked { .. } | BizError::Store(_) | BizError::Io(_) | BizError::Encode(_) => {
            AtlasError::fault("the business graph", e)
        }
    }
}

/// A whole business graph document as `PUT /api/v1/business-graph` takes it: read as every
/// request is (a whole float where an integer is wanted, the field named in an error, no control
/// character in a text), then its lists checked.
pub fn business_graph_of(body: &[u8]) -> Result<atlas_biz::BusinessData> {
    let names: std::collections::BTreeMap<String, serde::de::IgnoredAny> =
        crate::parse_json_input(body)?;
    atlas_biz::import::check_lists(names.keys().map(String::as_str)).map_err(biz_error)?;
    let data = crate::parse_json_input(body)?;
    crate::input::refuse_control_characters(body, &atlas_api::business::graph_document_schema())?;
    Ok(data)
}

/// Runs `f` on tokio's blocking pool: searches embed their query (milliseconds with a neural
/// embedder), and off the worker threads the time limit can answer while `f` still runs.
pub(crate) async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R> + Send + 'static,
) -> Result<R> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AtlasError::fault("the tool stopped", e))?
}

/// A seed-003 tool (`I`): one function of the business graph's snapshot.
fn business<I>(
    description: &'static str,
    f: fn(&BizSnapshot, &I::Request) -> std::result::Result<I::Answer, BizError>,
) -> Tool
where
    I: atlas_api::Interface,
    I::Request: Send + 'static,
    I::Answer: Send + 'static,
{
    interface::<I, _, _>(
        ToolGroup::Business,
        description,
        false,
        move |c: ToolContext, r: I::Request| {
            blocking(move || {
                let biz = c.biz.ok_or_else(|| {
                    AtlasError::NotFound("this server has no business graph".into())
                })?;
                f(&biz.current(), &r).map_err(biz_error)
            })
        },
    )
}

pub(crate) fn tools() -> Vec<Tool> {
    vec![
        business::<tools::SearchBusinesses>(
            "根据自然语言描述查找可能相关的业务流程。用于当用户提到“某个业务/流程/活动”但没有给出 process_id 时。Find business processes by a description.",
            BizSnapshot::search_businesses,
        ),
        business::<tools::SearchImplementations>(
            "根据自然语言描述或 URI 片段查找实现/接口，例如“订单详情接口”、“/api/order/detail 报 500”。Find implementations (APIs, jobs) by a description or a URI fragment.",
            BizSnapshot::search_implementations,
        ),
        business::<tools::SearchDataResources>(
            "根据自然语言描述查找数据资源（库表或其他数据节点），如“用户资料表”、“月卡记录表”。Find data resources (tables) by a description or a table name.",
            BizSnapshot::search_data_resources,
        ),
        business::<tools::SummarizeBusiness>(
            "给出某个业务流程的简要说明和关键要素，用于快速回答“这个流程大概是干什么的”。A process's summary, key steps and systems.",
            BizSnapshot::summarize_business,
        ),
        business::<tools::GetBusinessContextForChat>(
            "返回指定业务流程的详细图结构信息，供 LLM 深入回答路径/依赖等问题。A process's steps, implementations and resources in detail.",
            BizSnapshot::get_business_context_for_chat,
        ),
        business::<tools::SummarizeImplementation>(
            "给出某个实现/接口的简要说明，包括它的用途、URI、所在系统以及主要使用场景。An implementation's summary and the processes that use it.",
            BizSnapshot::summarize_implementation,
        ),
        business::<tools::GetImplementationContextForChat>(
            "返回某个实现的业务使用情况、资源依赖及实现间调用关系。Where an implementation is used, what it calls and what data it touches.",
            BizSnapshot::get_implementation_context_for_chat,
        ),
        business::<tools::SummarizeDataResource>(
            "给出某个数据资源（库表等）的简要说明，包括所在库表、用途及典型读写方。A table's summary, main fields and typical readers and writers.",
            BizSnapshot::summarize_data_resource,
        ),
        business::<tools::GetResourceContextForChat>(
            "返回某个数据资源在业务中的使用上下文，包括哪些流程/步骤/实现在读写它。Which processes, steps and implementations use a table.",
            BizSnapshot::get_resource_context_for_chat,
        ),
        business::<tools::GetNeighbors>(
            "获取某个节点周围一跳或多跳的邻居节点，用于回答“这个东西周围还有什么”的问题。Neighbours within 1..3 hops, grouped by type, with the edges among them.",
            BizSnapshot::get_neighbors,
        ),
        business::<tools::GetPathBetweenEntities>(
            "查找两个实体（流程/实现/数据资源）之间的路径，用于回答“从 A 到 B 之间经过了什么”的问题。A shortest path between two entities.",
            BizSnapshot::get_path_between_entities,
        ),
    ]
}
