//! The server's own routes beside the tools and Dify's: its health, this API's description, the
//! chat, the live events, a page's screenshot, the business graph as one document, and MCP.
//!
//! Each answers in its own content type (JSON, server-sent events, PNG, JSON-RPC), which the
//! route says ([`Answered`](crate::routes::Answered)), so the OpenAPI document describes what the
//! server sends rather than JSON everywhere.

use std::borrow::Cow;

use atlas_model::ErrorCode;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::business::{BusinessData, ImportReport};
use crate::chat::{ChatAnswer, ChatRequest};
use crate::routes::{Header, Nothing, Refusal};

/// Seed 000 §5's error body, every refusal of Atlas's own routes and tools:
/// `{"success": false, "error": {"code", "message", "details"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Always false.
    pub success: bool,
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The error of an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Seed 000's code (`PAGE_NOT_FOUND`).
    pub code: String,
    /// For a person.
    pub message: String,
    /// For a program: the field, the limit, the candidates.
    pub details: Value,
}

impl JsonSchema for ErrorBody {
    fn schema_name() -> Cow<'static, str> {
        "Error".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        json_schema!({
            "type": "object",
            "properties": {
                "success": { "type": "boolean", "const": false },
                "error": {
                    "type": "object",
                    "properties": {
                        "code": { "type": "string", "enum": codes },
                        "message": { "type": "string" },
                        "details": { "type": "object" }
                    },
                    "required": ["code", "message", "details"]
                }
            },
            "required": ["success", "error"]
        })
    }
}

impl Refusal for ErrorBody {
    /// Each code's status, once.
    fn statuses() -> Vec<(u16, &'static str)> {
        let mut statuses: Vec<(u16, &'static str)> = Vec::new();
        for code in ErrorCode::ALL {
            if !statuses.iter().any(|(s, _)| *s == code.http_status()) {
                statuses.push((code.http_status(), code.when()));
            }
        }
        statuses.sort_by_key(|(status, _)| *status);
        statuses
    }
}

/// Whether the server can serve (`GET /healthz`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// It serves and its writes are durable.
    Ok,
    /// It serves reads, but refuses writes (its disk is full) or its checkpoints fail (every
    /// acknowledged write kept in its journal).
    Degraded,
    /// Its store cannot be reached: it takes no writes (answered with 503).
    Unavailable,
}

/// `GET /healthz`'s answer: no more than a load balancer needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HealthAnswer {
    /// Whether it serves.
    pub status: HealthStatus,
    /// Why it is not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why a watcher should look although it is `ok` (its disk filling up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The checkpoints' state, when they fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Value>,
    /// The disk under the data folder (`free_bytes`, `reserve_bytes` under which writes stop,
    /// `warn_below_bytes`), for a store on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<Value>,
}

/// `GET /healthz`'s refusals: not ready (its store is away), or the server's guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum HealthRefusal {
    /// 503: the store cannot be reached.
    Unready(HealthAnswer),
    /// 403: a web page of another origin, or a host name the server does not answer to.
    Refused(ErrorBody),
}

impl Refusal for HealthRefusal {
    fn statuses() -> Vec<(u16, &'static str)> {
        vec![
            (403, ErrorCode::Forbidden.when()),
            (503, "the store cannot be reached: it takes no writes"),
        ]
    }
}

/// A tool as an OpenAI function definition (`GET /api/v1/tools`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionDefinition {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    /// The function.
    pub function: Function,
}

/// The one kind of tool OpenAI's API has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum FunctionKind {
    Function,
}

/// A function a model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Function {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Map<String, Value>,
}

/// `GET /api/v1/events`'s query.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EventsQuery {
    /// Only this app's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
}

/// What the graph learns, as `GET /api/v1/events` sends it: the event's type, its app and what
/// it says of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphEvent {
    /// report, transition, page, intent or app.
    #[serde(rename = "type")]
    pub kind: String,
    /// The app it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// The rest of the event.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A page of an app, by their ids.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PagePath {
    /// The app.
    pub app_id: String,
    /// The page.
    pub page_id: String,
}

/// A PNG image.
#[derive(Debug, Clone)]
pub struct Png(pub Vec<u8>);

impl Serialize for Png {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl JsonSchema for Png {
    fn schema_name() -> Cow<'static, str> {
        "Png".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "binary" })
    }
}

/// How `PUT /api/v1/business-graph`'s body comes, when its content type does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GraphFormat {
    /// Atlas's JSON document.
    Json,
    /// Neo4j's `apoc.export.json.all` lines.
    Apoc,
    /// The same lines, by their file's usual name.
    Jsonl,
}

/// `PUT /api/v1/business-graph`'s query.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GraphQuery {
    /// The body's format, given once at most; else its content type's (lines for
    /// `application/x-ndjson`, a document otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<GraphFormat>,
}

/// One JSON-RPC message, or a batch of them (MCP's 2025-03-26 revision allowed batches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonRpc(pub Value);

impl JsonSchema for JsonRpc {
    fn schema_name() -> Cow<'static, str> {
        "JsonRpc".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "a JSON-RPC message, or a batch of them",
            "anyOf": [{ "type": "object" }, { "type": "array", "minItems": 1 }]
        })
    }
}

impl Refusal for JsonRpc {
    fn statuses() -> Vec<(u16, &'static str)> {
        vec![
            (
                400,
                "not a JSON-RPC message, or headers that disagree with it",
            ),
            (401, ErrorCode::Unauthorized.when()),
            (403, ErrorCode::Forbidden.when()),
            (404, "an unknown or ended session: initialize again"),
            (413, ErrorCode::PayloadTooLarge.when()),
            (415, ErrorCode::UnsupportedMediaType.when()),
        ]
    }
}

const MCP_SESSION: &[Header] = &[Header {
    name: "Mcp-Session-Id",
    required: true,
}];

crate::routes! {
    /// Readiness, for health probes and load balancers.
    Health Get "/healthz" (Open, None)
        "Readiness: {\"status\":\"ok\"} once the server can serve, \"degraded\" while its checkpoints fail (it keeps every write in its journal), 503 \"unavailable\" while its database is away; open without the token"
        Nothing, Nothing, Nothing => HealthAnswer | HealthRefusal;
    /// This API's description.
    OpenApi Get "/api/v1/openapi.json" (Server, None)
        "This document"
        Nothing, Nothing, Nothing => Map<String, Value> | ErrorBody;
    /// The same, where OpenAPI tools look first.
    OpenApiAtRoot Get "/openapi.json" (Server, None)
        "This document, where OpenAPI tools look first"
        Nothing, Nothing, Nothing => Map<String, Value> | ErrorBody;
    /// The tools for a model.
    Tools Get "/api/v1/tools" (Server, None)
        "Every tool as an OpenAI function definition"
        Nothing, Nothing, Nothing => Vec<FunctionDefinition> | ErrorBody;
    /// A chat turn.
    Chat Post "/api/v1/chat" (Server, Json, EventStreamOrJson)
        "One chat turn over the business and knowledge tools, through the configured model (404 when none is): {messages, stream?} → server-sent events, each a ChatEvent as JSON (tool calls, their results, the answer's pieces, then done or error), or with \"stream\": false every event at the end as {events}"
        Nothing, Nothing, ChatRequest => ChatAnswer | ErrorBody;
    /// What the graph learns, live.
    Events Get "/api/v1/events" (Server, None, EventStream)
        "What the graph learns, live: server-sent events (report, transition, page, intent, app), each once durable, its data the event as JSON; ?app_id= for one app"
        Nothing, EventsQuery, Nothing => GraphEvent | ErrorBody;
    /// A page's screenshot.
    Screenshot Get "/api/v1/apps/{app_id}/pages/{page_id}/screenshot" (Server, None, Png)
        "A page's screenshot (PNG) from its seed 001 folder, as get_page_details and get_app_graph point to it; 404 when it has none"
        PagePath, Nothing, Nothing => Png | ErrorBody;
    /// The business graph, whole.
    BusinessGraph Get "/api/v1/business-graph" (Server, None)
        "The business graph as Atlas's JSON document"
        Nothing, Nothing, Nothing => BusinessData | ErrorBody;
    /// The business graph replaced.
    ReplaceBusinessGraph Put "/api/v1/business-graph"
        (Server, JsonOrLines; body_schema = crate::business::graph_document_schema)
        "Replace the business graph, checked whole and durable before it answers: with Atlas's JSON document (application/json), or Neo4j's apoc.export.json.all lines (application/x-ndjson, or ?format=apoc): one JSON object a line, a node ({type: node, id, labels, properties}) or a relationship ({type: relationship, label, start: {id}, end: {id}, properties})"
        Nothing, GraphQuery, BusinessData => ImportReport | ErrorBody;
    /// MCP's streamable HTTP transport.
    Mcp Post "/mcp" (Server, Json, JsonRpc)
        "MCP streamable HTTP: JSON-RPC messages, both protocol eras (a POST whose message is initialize opens a session, answered with Mcp-Session-Id; without one, the stateless 2026-07-28 revision)"
        Nothing, Nothing, JsonRpc => JsonRpc | JsonRpc;
    /// An MCP session ended.
    EndMcpSession Delete "/mcp" (Server, None, NoContent; headers = MCP_SESSION)
        "End an MCP session (Mcp-Session-Id)"
        Nothing, Nothing, Nothing => Nothing | JsonRpc;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error the service answers is an [`ErrorBody`] its schema allows, with a status the
    /// document names.
    #[test]
    fn every_error_code_is_an_error_body_of_a_documented_status() {
        let statuses: Vec<u16> = ErrorBody::statuses().iter().map(|(s, _)| *s).collect();
        let schema = crate::schema::schema_of::<ErrorBody>();
        let codes = &schema["properties"]["error"]["properties"]["code"]["enum"];
        for error in [
            atlas_model::AtlasError::invalid("limit", "too many"),
            atlas_model::AtlasError::NotFound("no app".into()),
            atlas_model::AtlasError::Unauthorized,
            atlas_model::AtlasError::PayloadTooLarge { limit: 10 },
        ] {
            let body: ErrorBody = serde_json::from_value(error.to_body()).unwrap();
            assert!(!body.success);
            assert!(
                codes
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c == &body.error.code)
            );
            assert!(statuses.contains(&error.code().http_status()), "{error}");
        }
        for code in ErrorCode::ALL {
            assert!(statuses.contains(&code.http_status()), "{code:?}");
        }
    }
}
