//! The Model Context Protocol face of Atlas: every tool of the one registry, as MCP tools.
//!
//! MCP has two eras. The handshake revisions (2024-11-05 to 2025-11-25) open with `initialize`
//! and, over HTTP, carry an `Mcp-Session-Id`; the stateless 2026-07-28 revision has no handshake:
//! every request names its protocol version in `_meta` (and the `MCP-Protocol-Version` header),
//! and `server/discover` says what the server speaks. Clients of both eras are in use, so Atlas
//! answers both, on stdio and on one HTTP endpoint.
//!
//! Key design decision: **the protocol is a pure function from a JSON-RPC message (and the era
//! it arrived in) to the answer**, written here against the registry rather than through an SDK.
//! rmcp's streamable-HTTP service runs either stateful or stateless, not both on one endpoint,
//! and Atlas's tools are already a registry of JSON-Schema'd functions: the part of MCP they
//! need (discover, initialize, ping, tools/list, tools/call) is small and is tested against the
//! official Python client in both eras. Transports (stdio here, HTTP in atlas-server) only move
//! messages.

mod stdio;

use std::sync::Arc;

use atlas_registry::{ToolContext, ToolRegistry};
use serde_json::{Map, Value, json};

pub use stdio::serve_stdio;

/// The stateless revision.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The revisions reached through `initialize`, oldest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// `_meta` keys of the 2026-07-28 envelope.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a request that is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a method the server does not have.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's code for parameters the method does not take.
pub const INVALID_PARAMS: i64 = -32602;
/// MCP's code for a protocol version this server does not speak.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

const INSTRUCTIONS: &str = "Atlas: a knowledge graph of apps' user interfaces (query_path, get_next_action, ...), a business graph of processes, implementations (APIs) and data resources (tables) (search_* first: users never give ids; then summarize_*, get_*_context_for_chat, get_neighbors, get_path_between_entities), and knowledge bases (retrieve_knowledge).";

/// The protocol revision a message is answered in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// A session opened by `initialize` at this revision (or stdio before/after it).
    Handshake(String),
    /// The stateless revision: the version the request's `_meta` names.
    Modern,
}

impl Era {
    fn version(&self) -> &str {
        match self {
            Era::Handshake(v) => v,
            Era::Modern => MODERN_VERSION,
        }
    }

    /// structuredContent arrived in 2025-06-18.
    fn has_structured_content(&self) -> bool {
        match self {
            Era::Handshake(v) => v.as_str() >= "2025-06-18",
            Era::Modern => true,
        }
    }
}

/// The revision a client's `initialize` gets: its own when Atlas speaks it, else the newest
/// handshake revision (the client then decides whether it can go on).
pub fn negotiate(requested: Option<&str>) -> &'static str {
    HANDSHAKE_VERSIONS
        .iter()
        .find(|v| Some(**v) == requested)
        .copied()
        .unwrap_or(HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1])
}

/// The revision an `initialize` message opens a session in; None for any other message.
pub fn handshake_version(message: &Value) -> Option<&'static str> {
    (message.get("method").and_then(Value::as_str) == Some("initialize")).then(|| {
        negotiate(
            message
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str),
        )
    })
}

/// The `_meta` protocol version of a request, if it names one.
pub fn meta_version(message: &Value) -> Option<&str> {
    message
        .pointer("/params/_meta")
        .and_then(|m| m.get(PROTOCOL_VERSION_META))
        .and_then(Value::as_str)
}

/// A JSON-RPC error answer.
pub fn error(id: Value, code: i64, message: impl Into<String>, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message.into() });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

fn success(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// Serves the registry's tools to one kind of client.
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<ToolRegistry>,
    context: ToolContext,
}

impl McpServer {
    /// The server of `tools`, working on `context`.
    pub fn new(tools: Arc<ToolRegistry>, context: ToolContext) -> McpServer {
        McpServer { tools, context }
    }

    fn server_info() -> Value {
        json!({ "name": "atlas", "title": "Atlas", "version": env!("CARGO_PKG_VERSION") })
    }

    fn capabilities() -> Value {
        json!({ "tools": { "listChanged": false } })
    }

    /// The answer to one message, or None for a notification (and for a response, since Atlas
    /// sends no requests of its own).
    pub async fn handle(&self, message: &Value, era: &Era) -> Option<Value> {
        let Some(object) = message.as_object() else {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "a message is a JSON object",
                None,
            ));
        };
        let id = object.get("id").cloned();
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            return match id {
                // A response to nothing we asked.
                Some(_) if object.contains_key("result") || object.contains_key("error") => None,
                _ => Some(error(
                    id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "a request names its method",
                    None,
                )),
            };
        };
        let id = id?; // notifications (initialized, cancelled, ...) need no answer
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        if let Era::Modern = era {
            match meta_version(message) {
                Some(MODERN_VERSION) => {}
                other => {
                    return Some(error(
                        id,
                        UNSUPPORTED_PROTOCOL_VERSION,
                        format!(
                            "unsupported protocol version {:?}; this endpoint speaks {MODERN_VERSION} without a session, or the handshake revisions after initialize",
                            other.unwrap_or("(none)")
                        ),
                        Some(json!({ "supported": supported_versions(), "requested": other })),
                    ));
                }
            }
        }
        Some(match method {
            "initialize" => {
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                success(
                    id,
                    json!({
                        "protocolVersion": negotiate(requested),
                        "capabilities": Self::capabilities(),
                        "serverInfo": Self::server_info(),
                        "instructions": INSTRUCTIONS,
                    }),
                )
            }
            "server/discover" => success(
                id,
                json!({
                    "supportedVersions": supported_versions(),
                    "capabilities": Self::capabilities(),
                    "instructions": INSTRUCTIONS,
                    "resultType": "complete",
                    "ttlMs": 0,
                    "cacheScope": "private",
                    "_meta": { SERVER_INFO_META: Self::server_info() },
                }),
            ),
            "ping" => success(id, self.complete(json!({}), era)),
            "tools/list" => {
                let tools: Vec<Value> = self
                    .tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "description": t.description,
                            "inputSchema": t.input_schema,
                            "annotations": { "readOnlyHint": !t.writes },
                        })
                    })
                    .collect();
                let mut result = json!({ "tools": tools });
                if let Era::Modern = era {
                    result["ttlMs"] = json!(0);
                    result["cacheScope"] = json!("private");
                }
                success(id, self.complete(result, era))
            }
            "tools/call" => self.call_tool(id, &params, era).await,
            other => error(
                id,
                METHOD_NOT_FOUND,
                format!("method {other} is not served"),
                None,
            ),
        })
    }

    /// Marks a result complete where the revision has `resultType`.
    fn complete(&self, mut result: Value, era: &Era) -> Value {
        if let (Era::Modern, Some(o)) = (era, result.as_object_mut()) {
            o.insert("resultType".into(), json!("complete"));
        }
        result
    }

    async fn call_tool(&self, id: Value, params: &Value, era: &Era) -> Value {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return error(id, INVALID_PARAMS, "tools/call needs a tool name", None);
        };
        let Some(tool) = self.tools.get(name) else {
            return error(id, INVALID_PARAMS, format!("unknown tool: {name}"), None);
        };
        // Some clients send the arguments as a JSON string, as OpenAI's API does.
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or(Value::String(text.clone()))
            }
            Some(v) => v.clone(),
        };
        // A tool's failure is the model's to read and correct: a result with isError, not a
        // protocol error.
        let (body, is_error) = match tool.call(self.context.clone(), arguments).await {
            Ok(answer) => (answer, false),
            Err(e) => (e.to_body(), true),
        };
        let mut result = json!({
            "content": [{ "type": "text", "text": body.to_string() }],
            "isError": is_error,
        });
        if era.has_structured_content() && body.is_object() {
            result["structuredContent"] = body;
        }
        tracing::debug!(
            tool = name,
            is_error,
            version = era.version(),
            "mcp tools/call"
        );
        success(id, self.complete(result, era))
    }
}

/// Every revision Atlas answers.
pub fn supported_versions() -> Vec<&'static str> {
    let mut all: Vec<&str> = HANDSHAKE_VERSIONS.to_vec();
    all.push(MODERN_VERSION);
    all
}
