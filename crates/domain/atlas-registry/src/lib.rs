//! The one tool registry: every interface of Atlas as a name, a description, a JSON Schema
//! derived from its request type, and a handler from JSON to JSON. The HTTP routes, the MCP tools
//! and the chat page are all generated from this list, so an interface is written once and its
//! schema can never drift between faces.
//!
//! Three domains share it: the GUI graph's seed-000 interfaces ([`atlas_service`]), the business
//! graph's seed-003 tools ([`atlas_biz`]) and knowledge-base retrieval ([`atlas_kb`]). A handler
//! receives a [`ToolContext`] holding all three, so a face serves every tool the same way.
//!
//! Key design decision: **the registry sits above the domains, and every face depends on it,
//! never on a domain's methods.** The service knows nothing of the business graph, the knowledge
//! bases or the agent's reply grammar; only this crate puts them side by side. Every call has a
//! time limit: a tool that could walk or embed for long answers an error instead of holding a
//! connection or a model's turn.

mod business;
mod calls;
mod datasets;
mod guard;
mod hit_test;
mod in_process;
mod input;
mod knowledge;
mod loops;
mod navigation;
mod plan;
mod runs;
mod screen;
mod serving;
mod trust;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use atlas_biz::BizStore;
use atlas_kb::KnowledgeBase;
use atlas_model::{AtlasError, Result};
use atlas_service::Atlas;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use business::{biz_error, business_graph_of};
pub use datasets::{Admit, Admitted, Datasets, Serve};
pub use in_process::ServiceCaller;
pub use input::{MAX_SAFE_INTEGER, parse_input, parse_json_input};
pub use serving::Health;

use atlas_api::schema::{input_schema_of, schema_of};
use atlas_api::server::{Function, FunctionDefinition, FunctionKind};
use input::{control_free, refuse_control_characters};

/// A tool's answer to come, as a JSON value.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;
/// A tool's answer to come, serialized.
pub type JsonFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>>> + Send>>;
/// A request body as it arrived (bytes of any owner).
pub type Body = Box<dyn AsRef<[u8]> + Send>;
type Handler = Arc<dyn Fn(ToolContext, Value) -> ToolFuture + Send + Sync>;
type JsonHandler = Arc<dyn Fn(ToolContext, Body) -> JsonFuture + Send + Sync>;

/// How long any tool call may take before it answers an error.
pub const TOOL_TIME_LIMIT: Duration = Duration::from_secs(20);

/// What the tools work on: the GUI graph, and the business graph and knowledge bases when this
/// process serves them.
#[derive(Clone)]
pub struct ToolContext {
    /// The GUI graph.
    pub atlas: Arc<Atlas>,
    /// The business graph, when this process serves one.
    pub biz: Option<Arc<BizStore>>,
    /// The knowledge bases, when this process serves them.
    pub kb: Option<Arc<KnowledgeBase>>,
    /// The caller proved the server token (a server started with `--token` lets no other caller
    /// reach a tool). It opens every knowledge base; any other caller opens one with its key.
    pub holds_server_token: bool,
}

impl From<Arc<Atlas>> for ToolContext {
    fn from(atlas: Arc<Atlas>) -> ToolContext {
        ToolContext {
            atlas,
            biz: None,
            kb: None,
            holds_server_token: false,
        }
    }
}

/// Which domain a tool belongs to. The chat page offers the business and knowledge tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolGroup {
    /// Seed 000: the GUI graph of apps and websites.
    Navigation,
    /// Seed 003: the business graph.
    Business,
    /// The knowledge bases (seed 002's GET_KNOWLEDGE_DATA).
    Knowledge,
}

/// One named interface.
#[derive(Clone)]
pub struct Tool {
    /// Its name: the route's last segment, the MCP tool's and the function's name.
    pub name: &'static str,
    /// Its domain.
    pub group: ToolGroup,
    /// What it does, in Chinese and English, for people and models.
    pub description: &'static str,
    /// JSON Schema of the input object.
    pub input_schema: Value,
    /// JSON Schema of the answer, from the same Rust type the handler returns.
    pub output_schema: Value,
    /// Whether the tool changes the graph (and so waits for durability).
    pub writes: bool,
    handler: Handler,
    json_handler: JsonHandler,
}

impl Tool {
    /// Runs the tool on a JSON input.
    pub fn call(&self, context: impl Into<ToolContext>, input: Value) -> ToolFuture {
        (self.handler)(context.into(), input)
    }

    /// Runs the tool on a JSON body and answers serialized JSON: the HTTP path, which goes from
    /// bytes to the typed request and back without building a `Value` tree on either side.
    pub fn call_json(&self, context: impl Into<ToolContext>, body: Body) -> JsonFuture {
        (self.json_handler)(context.into(), body)
    }

    /// The OpenAI function-calling definition of this tool.
    pub fn openai_function(&self) -> FunctionDefinition {
        FunctionDefinition {
            kind: FunctionKind::Function,
            function: Function {
                name: self.name.to_string(),
                description: self.description.to_string(),
                parameters: self.input_schema.as_object().cloned().unwrap_or_default(),
            },
        }
    }
}

/// Runs a tool's future within [`TOOL_TIME_LIMIT`].
async fn limited<T>(name: &str, future: impl Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(TOOL_TIME_LIMIT, future).await {
        Ok(answer) => answer,
        Err(_) => Err(AtlasError::Graph(format!(
            "{name} did not answer within {} s",
            TOOL_TIME_LIMIT.as_secs()
        ))),
    }
}

fn tool<Req, Resp, F, Fut>(
    group: ToolGroup,
    name: &'static str,
    description: &'static str,
    writes: bool,
    f: F,
) -> Tool
where
    Req: DeserializeOwned + JsonSchema + Send + 'static,
    Resp: Serialize + JsonSchema + 'static,
    F: Fn(ToolContext, Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp>> + Send + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    let input_schema = input_schema_of::<Req>();
    let schema = Arc::new(input_schema.clone());
    let schema_too = schema.clone();
    Tool {
        name,
        group,
        description,
        input_schema,
        output_schema: schema_of::<Resp>(),
        writes,
        handler: Arc::new(move |context, input| {
            let f = f.clone();
            let schema = schema_too.clone();
            Box::pin(async move {
                control_free(&input, &schema)?;
                let req: Req = parse_input(input)?;
                let resp = limited(name, f(context, req)).await?;
                serde_json::to_value(resp).map_err(|e| AtlasError::fault("writing the answer", e))
            })
        }),
        json_handler: Arc::new(move |context, body| {
            let g = g.clone();
            let schema = schema.clone();
            Box::pin(async move {
                let req: Req = parse_json_input((*body).as_ref())?;
                refuse_control_characters((*body).as_ref(), &schema)?;
                drop(body);
                let resp = limited(name, g(context, req)).await?;
                serde_json::to_vec(&resp).map_err(|e| AtlasError::fault("writing the answer", e))
            })
        }),
    }
}

/// A tool of the interface (`I`: its name, request and answer, from `atlas_api::tools`).
fn interface<I, F, Fut>(group: ToolGroup, description: &'static str, writes: bool, f: F) -> Tool
where
    I: atlas_api::Interface,
    I::Request: Send + 'static,
    I::Answer: 'static,
    F: Fn(ToolContext, I::Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<I::Answer>> + Send + 'static,
{
    tool(group, I::NAME, description, writes, f)
}

/// Every tool, by name.
pub struct ToolRegistry {
    tools: Vec<Tool>,
}

impl ToolRegistry {
    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every tool, in the order the faces list them.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }
}

/// Every interface: seed 000's, seed 003's and knowledge retrieval.
pub fn registry() -> ToolRegistry {
    let mut tools = navigation::tools();
    tools.extend(business::tools());
    tools.push(knowledge::tool());
    tools.extend(runs::tools());
    ToolRegistry { tools }
}
