//! The one tool registry: every interface as a name, a description, a JSON Schema derived from
//! its request type, and a handler from JSON to JSON. HTTP routes, MCP tools and the chat page
//! are all generated from this list.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use atlas_model::{AtlasError, Result};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Atlas;

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;
pub type JsonFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>>> + Send>>;
/// A request body as it arrived (bytes of any owner).
pub type Body = Box<dyn AsRef<[u8]> + Send>;
type Handler = Arc<dyn Fn(Arc<Atlas>, Value) -> ToolFuture + Send + Sync>;
type JsonHandler = Arc<dyn Fn(Arc<Atlas>, Body) -> JsonFuture + Send + Sync>;

/// One named interface.
#[derive(Clone)]
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the input object.
    pub input_schema: Value,
    /// Whether the tool changes the graph (and so waits for durability).
    pub writes: bool,
    handler: Handler,
    json_handler: JsonHandler,
}

impl Tool {
    /// Runs the tool on a JSON input.
    pub fn call(&self, atlas: Arc<Atlas>, input: Value) -> ToolFuture {
        (self.handler)(atlas, input)
    }

    /// Runs the tool on a JSON body and answers serialized JSON: the HTTP path, which goes from
    /// bytes to the typed request and back without building a `Value` tree on either side.
    pub fn call_json(&self, atlas: Arc<Atlas>, body: Body) -> JsonFuture {
        (self.json_handler)(atlas, body)
    }

    /// The OpenAI function-calling definition of this tool.
    pub fn openai_function(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": { "name": self.name, "description": self.description, "parameters": self.input_schema }
        })
    }
}

/// Parses a tool input, turning serde's message into seed 000's INVALID_PARAMETER.
pub fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if !input.is_object() {
        return Err(AtlasError::invalid(
            "body",
            "the request body must be a JSON object",
        ));
    }
    serde_json::from_value(input).map_err(|e| AtlasError::InvalidParameter {
        message: format!("invalid parameters: {e}"),
        details: serde_json::json!({ "reason": e.to_string() }),
    })
}

/// Parses a raw JSON body: empty or `null` means `{}`, anything but an object is refused, and
/// malformed JSON is told apart from well-formed JSON with the wrong fields.
pub fn parse_json_input<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    let text = body.trim_ascii();
    let text: &[u8] = if text.is_empty() || text == b"null" {
        b"{}"
    } else {
        text
    };
    let malformed = |e: serde_json::Error| AtlasError::InvalidParameter {
        message: format!("malformed JSON: {e}"),
        details: serde_json::json!({ "line": e.line(), "column": e.column() }),
    };
    if text[0] != b'{' {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(AtlasError::invalid(
                "body",
                "the request body must be a JSON object",
            )),
            Err(e) => Err(malformed(e)),
        };
    }
    serde_json::from_slice(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => malformed(e),
        _ => AtlasError::InvalidParameter {
            message: format!("invalid parameters: {e}"),
            details: serde_json::json!({ "reason": e.to_string() }),
        },
    })
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

fn tool<Req, Resp, F, Fut>(
    name: &'static str,
    description: &'static str,
    writes: bool,
    f: F,
) -> Tool
where
    Req: DeserializeOwned + JsonSchema + Send + 'static,
    Resp: Serialize + 'static,
    F: Fn(Arc<Atlas>, Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp>> + Send + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    Tool {
        name,
        description,
        input_schema: schema_of::<Req>(),
        writes,
        handler: Arc::new(move |atlas, input| {
            let f = f.clone();
            Box::pin(async move {
                let req: Req = parse_input(input)?;
                let resp = f(atlas, req).await?;
                serde_json::to_value(resp).map_err(|e| AtlasError::Graph(e.to_string()))
            })
        }),
        json_handler: Arc::new(move |atlas, body| {
            let g = g.clone();
            Box::pin(async move {
                let req: Req = parse_json_input((*body).as_ref())?;
                drop(body);
                let resp = g(atlas, req).await?;
                serde_json::to_vec(&resp).map_err(|e| AtlasError::Graph(e.to_string()))
            })
        }),
    }
}

/// Runs a synchronous interface. With a remote embedder it may wait on the network, so it runs on
/// tokio's blocking pool instead of stalling a worker that serves other connections; with a local
/// one it takes microseconds and runs in place, where a hop to another thread would cost more.
fn sync_call<R: Send + 'static>(
    atlas: Arc<Atlas>,
    f: impl FnOnce(&Atlas) -> Result<R> + Send + 'static,
) -> impl Future<Output = Result<R>> + Send {
    async move {
        if atlas.embedder().is_remote() {
            tokio::task::spawn_blocking(move || f(&atlas))
                .await
                .map_err(|e| AtlasError::Graph(format!("interface failed: {e}")))?
        } else {
            f(&atlas)
        }
    }
}

/// Every tool, by name.
pub struct ToolRegistry {
    tools: Vec<Tool>,
}

impl ToolRegistry {
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }
}

/// The seed-000 interfaces.
pub fn registry() -> ToolRegistry {
    use crate::*;
    let tools = vec![
        tool(
            "query_path",
            "根据用户意图查询从当前页面到目标页面的完整操作路径（主路径与备选路径）。Plan the path from the current page to the page that serves an intent.",
            false,
            |a: Arc<Atlas>, r: QueryPathRequest| sync_call(a, move |a| a.query_path(r)),
        ),
        tool(
            "get_next_action",
            "返回为完成意图当前需要执行的下一个操作。The next action to take from the current page for an intent.",
            false,
            |a: Arc<Atlas>, r: NextActionRequest| sync_call(a, move |a| a.get_next_action(r)),
        ),
        tool(
            "match_current_page",
            "根据页面标题和UI结构匹配图谱中的页面。Recognise the current page from its title and widgets.",
            false,
            |a: Arc<Atlas>, r: MatchPageRequest| sync_call(a, move |a| a.match_current_page(r)),
        ),
        tool(
            "get_rag_context",
            "为LLM决策生成结构化上下文与提示词。Prompt and structured context (pages, paths, past cases, tips) for an LLM.",
            false,
            |a: Arc<Atlas>, r: RagContextRequest| sync_call(a, move |a| a.get_rag_context(r)),
        ),
        tool(
            "report_transition",
            "上报一次操作的结果，更新转换统计。Report what an action did; updates the edge's statistics.",
            true,
            |a: Arc<Atlas>, r: ReportTransitionRequest| async move { a.report_transition(r).await },
        ),
        tool(
            "add_page",
            "添加新发现的页面（重复添加会更新该页面）。Add (or update) a page.",
            true,
            |a: Arc<Atlas>, r: AddPageRequest| async move { a.add_page(r).await },
        ),
        tool(
            "register_intent",
            "注册用户意图及其目标页面与关键词。Register an intent with its target page and keywords.",
            true,
            |a: Arc<Atlas>, r: RegisterIntentRequest| async move { a.register_intent(r).await },
        ),
        tool(
            "get_available_actions",
            "获取页面的所有可用操作，按成功率排序。A page's outgoing actions by success rate.",
            false,
            |a: Arc<Atlas>, r: AvailableActionsRequest| {
                sync_call(a, move |a| a.get_available_actions(r))
            },
        ),
        tool(
            "find_similar_intents",
            "查找相似的已注册意图（可跨App）。Registered intents similar to a query, across apps unless app_id is given.",
            false,
            |a: Arc<Atlas>, r: SimilarIntentsRequest| {
                sync_call(a, move |a| a.find_similar_intents(r))
            },
        ),
        tool(
            "get_graph_stats",
            "获取图谱统计信息（可按App）。Counts and averages of the graph, overall or for one app.",
            false,
            |a: Arc<Atlas>, r: GraphStatsRequest| sync_call(a, move |a| a.get_graph_stats(r)),
        ),
        tool(
            "batch_add_transitions",
            "批量添加页面转换关系。Add many transitions at once.",
            true,
            |a: Arc<Atlas>, r: BatchAddTransitionsRequest| async move {
                a.batch_add_transitions(r).await
            },
        ),
    ];
    ToolRegistry { tools }
}
