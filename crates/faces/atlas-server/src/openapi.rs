//! The OpenAPI 3.1 document, generated from the tool registry.

use atlas_registry::ToolRegistry;
use serde_json::{Map, Value, json};

/// The shared `components/schemas` and, for each name, the definition as schemars gave it (so
/// two crates' different types of one name, `Candidate`, get two names).
#[derive(Default)]
struct Components {
    schemas: Map<String, Value>,
    given: std::collections::HashMap<String, Value>,
}

impl Components {
    /// Moves a schema's local `$defs` into the components, renaming a definition whose name is
    /// taken by another (`{name}_{owner}`), and points its references there.
    fn lift(&mut self, schema: &Value, owner: &str) -> Value {
        let mut schema = schema.clone();
        let defs = match schema.as_object_mut().and_then(|o| o.remove("$defs")) {
            Some(Value::Object(defs)) => defs,
            _ => Map::new(),
        };
        let mut names = std::collections::HashMap::new();
        for (name, given) in &defs {
            let mut chosen = name.clone();
            let mut n = 1;
            while self.given.get(&chosen).is_some_and(|g| g != given) {
                chosen = if n == 1 {
                    format!("{name}_{owner}")
                } else {
                    format!("{name}_{owner}_{n}")
                };
                n += 1;
            }
            names.insert(name.clone(), chosen);
        }
        for (name, given) in defs {
            let chosen = names[&name].clone();
            let mut lifted = given.clone();
            rewrite_refs(&mut lifted, &names);
            self.given.insert(chosen.clone(), given);
            self.schemas.insert(chosen, lifted);
        }
        rewrite_refs(&mut schema, &names);
        schema
    }
}

fn rewrite_refs(value: &mut Value, names: &std::collections::HashMap<String, String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                let name = names.get(name).map_or(name, String::as_str);
                *r = format!("#/components/schemas/{name}");
            }
            map.values_mut().for_each(|v| rewrite_refs(v, names));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, names)),
        _ => {}
    }
}

/// A route outside the tool registry: method, path, summary, the request body's content type
/// (if it takes one), and who may call it.
struct Route {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    body: Option<&'static str>,
    auth: Auth,
}

/// The fields a route's JSON body must have (name and JSON type), where the route checks them.
fn required_fields(method: &str, path: &str) -> &'static [(&'static str, &'static str)] {
    match (method, path) {
        ("post", "/v1/datasets") => &[("name", "string")],
        ("post", "/v1/datasets/tags") => &[("name", "tag name")],
        ("patch", "/v1/datasets/tags") => &[("tag_id", "string"), ("name", "tag name")],
        ("delete", "/v1/datasets/tags") => &[("tag_id", "string")],
        ("post", "/v1/datasets/tags/binding") => &[("tag_ids", "array"), ("target_id", "string")],
        ("post", "/v1/datasets/tags/unbinding") => &[("tag_id", "string"), ("target_id", "string")],
        ("post", "/retrieval") => &[("knowledge_id", "string"), ("query", "string")],
        ("post", "/v1/datasets/{dataset_id}/retrieve")
        | ("post", "/v1/datasets/{dataset_id}/hit-testing") => &[("query", "string")],
        ("post", "/v1/datasets/{dataset_id}/document/create-by-text") => {
            &[("name", "document name"), ("text", "document text")]
        }
        ("post", "/v1/datasets/{dataset_id}/metadata") => &[("type", "string"), ("name", "string")],
        ("patch", "/v1/datasets/{dataset_id}/metadata/{metadata_id}") => &[("name", "string")],
        ("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments") => {
            &[("segments", "array")]
        }
        ("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}") => {
            &[("segment", "object")]
        }
        ("post", "/v1/datasets/{dataset_id}/documents/metadata") => &[("operation_data", "array")],
        ("patch", "/v1/datasets/{dataset_id}/documents/status/{action}") => {
            &[("document_ids", "array")]
        }
        ("post", "/api/v1/chat") => &[("messages", "array")],
        _ => &[],
    }
}

/// A document's text as `atlas_kb` takes it: something besides spaces, and no NUL (a text with
/// one is taken for a binary file and refused).
fn document_text() -> Value {
    json!({ "type": "string", "minLength": 1, "pattern": "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$" })
}

/// The JSON body schema of a route outside the registry.
fn body_schema(method: &str, path: &str) -> Value {
    let fields = required_fields(method, path);
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, kind)| {
            // A tag's name is a string of at most 50 characters (`atlas_kb::tags`).
            let (kind, longest) = match *kind {
                "tag name" => ("string", Some(50)),
                // `atlas_kb`: a document's name is 1 to 255 characters.
                "document name" => ("string", Some(255)),
                "string" if *name == "name" => ("string", Some(100)),
                other => (other, None),
            };
            if kind == "document text" {
                return (name.to_string(), document_text());
            }
            let mut schema = json!({ "type": kind });
            if kind == "string" {
                schema["minLength"] = json!(1);
                schema["pattern"] = json!("\\S");
            }
            if *name == "query" {
                // `atlas_kb`'s query: at most 250 characters, no control characters.
                schema["maxLength"] = json!(250);
                schema["pattern"] = json!(atlas_model::REQUIRED_TEXT_PATTERN);
            }
            if let Some(longest) = longest {
                schema["maxLength"] = json!(longest);
            }
            if kind == "array" {
                schema["minItems"] = json!(1);
            }
            (name.to_string(), schema)
        })
        .collect();
    let mut schema = json!({
        "type": "object",
        "required": fields.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "properties": properties,
    });
    refine(method, path, &mut schema);
    schema
}

/// What a route checks of its body beyond its fields' types, where JSON Schema can say it: the
/// items of its lists, the values a field takes.
fn refine(method: &str, path: &str, schema: &mut Value) {
    let text = json!({ "type": "string", "minLength": 1, "pattern": "\\S" });
    // A segment as the segment routes take it (`enabled: false` is refused: delete instead); a
    // null optional field is taken as not given.
    let segment = json!({
        "type": "object",
        "required": ["content"],
        "properties": {
            "content": text,
            "answer": { "type": ["string", "null"] },
            "keywords": { "type": ["array", "null"], "items": { "type": "string" } },
            "enabled": { "enum": [true, null] }
        }
    });
    let properties = &mut schema["properties"];
    match (method, path) {
        ("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments") => {
            properties["segments"]["items"] = segment;
            properties["segments"]["maxItems"] = json!(atlas_kb::MAX_SEGMENTS_PER_CALL);
        }
        ("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}") => {
            properties["segment"] = segment;
        }
        ("post", "/v1/datasets/{dataset_id}/metadata") => {
            properties["type"] = json!({ "enum": ["string", "number", "time"] });
        }
        ("post", "/v1/datasets/{dataset_id}/documents/metadata") => {
            properties["operation_data"]["items"] = json!({
                "type": "object",
                "required": ["document_id", "metadata_list"],
                "properties": {
                    "document_id": text,
                    "metadata_list": { "type": "array", "items": {
                        "type": "object",
                        "required": ["id"],
                        "properties": { "id": text, "name": { "type": "string" } }
                    } }
                }
            });
        }
        ("patch", "/v1/datasets/{dataset_id}/documents/status/{action}") => {
            properties["document_ids"]["items"] = text;
        }
        ("post", "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-text") => {
            // A new name, new text, or both (null is not given).
            let name =
                json!({ "type": "string", "minLength": 1, "maxLength": 255, "pattern": "\\S" });
            *schema = json!({
                "type": "object",
                "properties": {
                    "name": { "anyOf": [name, { "type": "null" }] },
                    "text": { "anyOf": [document_text(), { "type": "null" }] }
                },
                "anyOf": [
                    { "required": ["name"], "properties": { "name": name } },
                    { "required": ["text"], "properties": { "text": document_text() } }
                ]
            });
        }
        _ => {}
    }
}

#[derive(Clone, Copy)]
enum Auth {
    /// Open to anyone who reaches the address.
    Open,
    /// The server token, when the server has one.
    Server,
    /// A dataset's own key, or the server token.
    Dataset,
}

const JSON: Option<&str> = Some("application/json");

/// Every route that is not a tool, so the document names all that answer.
const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/healthz",
        summary: "Readiness: {\"status\":\"ok\"} once the server can serve; open without the token",
        body: None,
        auth: Auth::Open,
    },
    Route {
        method: "get",
        path: "/api/v1/openapi.json",
        summary: "This document",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/openapi.json",
        summary: "This document, where OpenAPI tools look first",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/tools",
        summary: "Every tool as an OpenAI function definition",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "post",
        path: "/api/v1/chat",
        summary: "One chat turn over the business and knowledge tools, through the configured model: {messages} → {answer, tool_calls, entities}",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/events",
        summary: "What the graph learns, live: server-sent events (report, transition, page, intent, app), each once durable; ?app_id= for one app",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/apps/{app_id}/pages/{page_id}/screenshot",
        summary: "A page's screenshot (PNG) from its seed 001 folder, as get_page_details and get_app_graph point to it; 404 when it has none",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/business-graph",
        summary: "The business graph as Atlas's JSON document",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "put",
        path: "/api/v1/business-graph",
        summary: "Replace the business graph with Atlas's JSON document (application/json) or Neo4j's apoc.export.json.all lines (application/x-ndjson)",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "post",
        path: "/mcp",
        summary: "MCP streamable HTTP: JSON-RPC messages, both protocol eras",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "delete",
        path: "/mcp",
        summary: "End an MCP session (Mcp-Session-Id)",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "post",
        path: "/retrieval",
        summary: "Dify's External Knowledge API: {knowledge_id, query, retrieval_setting, metadata_condition?} → {records}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets",
        summary: "Dify: create a dataset {name, description?} → the dataset and its api_key",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/v1/datasets",
        summary: "Dify: list datasets (page, limit)",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}",
        summary: "Dify: a dataset",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "patch",
        path: "/v1/datasets/{dataset_id}",
        summary: "Dify: update a dataset's name or description",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "delete",
        path: "/v1/datasets/{dataset_id}",
        summary: "Dify: delete a dataset",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/retrieve",
        summary: "Dify: retrieve {query, retrieval_model?} → {query, records}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/hit-testing",
        summary: "Dify: the same as retrieve",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/documents",
        summary: "Dify: list documents (keyword, page, limit)",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/document/create-by-text",
        summary: "Dify: add a document {name, text, kind?, doc_metadata?}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/document/create-by-file",
        summary: "Dify: add a document from a file (multipart: file, data)",
        body: Some("multipart/form-data"),
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}",
        summary: "Dify: a document",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "delete",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}",
        summary: "Dify: delete a document",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/indexing-status",
        summary: "Dify: indexing progress (a document is indexed when its create answers)",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-text",
        summary: "Dify: replace a document's text",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-file",
        summary: "Dify: replace a document from a file (multipart)",
        body: Some("multipart/form-data"),
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/segments",
        summary: "Dify: a document's segments (keyword, status, page, limit)",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/segments",
        summary: "Dify: add segments {segments: [{content, answer?, keywords?}]}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}",
        summary: "Dify: update a segment {segment: {content, answer?, keywords?}}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "delete",
        path: "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}",
        summary: "Dify: delete a segment",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/metadata",
        summary: "Dify: the dataset's metadata fields",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/metadata",
        summary: "Dify: declare a metadata field {type, name}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "patch",
        path: "/v1/datasets/{dataset_id}/metadata/{metadata_id}",
        summary: "Dify: rename a metadata field {name}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "delete",
        path: "/v1/datasets/{dataset_id}/metadata/{metadata_id}",
        summary: "Dify: remove a metadata field",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/metadata/built-in",
        summary: "Dify: the built-in metadata fields every document has",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/metadata/built-in/{action}",
        summary: "Dify: show (enable) or hide (disable) the built-in fields' values on documents",
        body: None,
        auth: Auth::Dataset,
    },
    Route {
        method: "patch",
        path: "/v1/datasets/{dataset_id}/documents/status/{action}",
        summary: "Dify: enable, disable, archive or un_archive documents {document_ids}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/{dataset_id}/documents/metadata",
        summary: "Dify: set documents' metadata values {operation_data}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/tags",
        summary: "Dify: knowledge tags",
        body: None,
        auth: Auth::Server,
    },
    Route {
        method: "post",
        path: "/v1/datasets/tags",
        summary: "Dify: create a tag {name}",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "patch",
        path: "/v1/datasets/tags",
        summary: "Dify: rename a tag {tag_id, name}",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "delete",
        path: "/v1/datasets/tags",
        summary: "Dify: delete a tag {tag_id}",
        body: JSON,
        auth: Auth::Server,
    },
    Route {
        method: "post",
        path: "/v1/datasets/tags/binding",
        summary: "Dify: bind tags to a dataset {tag_ids, target_id}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "post",
        path: "/v1/datasets/tags/unbinding",
        summary: "Dify: unbind a tag {tag_id, target_id}",
        body: JSON,
        auth: Auth::Dataset,
    },
    Route {
        method: "get",
        path: "/v1/datasets/{dataset_id}/tags",
        summary: "Dify: a dataset's tags",
        body: None,
        auth: Auth::Dataset,
    },
];

/// The `{name}` parameters of a path; an action names one of the route's actions.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
        .map(|name| {
            let mut schema = json!({ "type": "string" });
            if name == "action" {
                schema["enum"] = if path.contains("/documents/status/") {
                    json!(["enable", "disable", "archive", "un_archive"])
                } else {
                    json!(["enable", "disable"])
                };
            }
            json!({ "name": name, "in": "path", "required": true, "schema": schema })
        })
        .collect()
}

fn security(auth: Auth) -> Value {
    match auth {
        Auth::Open => json!([]),
        // Required only when the server was started with --token.
        Auth::Server => json!([{ "bearer": [] }, {}]),
        Auth::Dataset => json!([{ "datasetKey": [] }, { "bearer": [] }]),
    }
}

fn rpc_error() -> Value {
    json!({ "description": "a JSON-RPC message, or a batch of them", "content": { "application/json": { "schema": { "type": ["object", "array"] } } } })
}

fn operation(route: &Route) -> Value {
    let error = if route.path.starts_with("/v1/") || route.path == "/retrieval" {
        "#/components/schemas/DifyError"
    } else {
        "#/components/schemas/Error"
    };
    let err = |d: &str| json!({ "description": d, "content": { "application/json": { "schema": { "$ref": error } } } });
    let mut op = json!({
        "operationId": format!("{}_{}", route.method, route.path.trim_start_matches('/').replace(['/', '{', '}', '-', '.'], "_")),
        "summary": route.summary,
        "security": security(route.auth),
        "responses": {
            "200": { "description": "the answer", "content": { "application/json": { "schema": { "type": "object" } } } },
            "400": err("invalid input"),
            "401": err("missing or wrong key"),
            "403": err("a web page of another origin, or a host name the server does not answer to"),
            "404": err("unknown entity"),
            "409": err("the name is taken, or the folder is another process's"),
        }
    });
    if route.path == "/api/v1/business-graph" && route.method == "put" {
        // The whole graph: a document naming at least one of its lists, nothing else (`{}` is
        // refused, not read as "empty the graph"), or Neo4j's export lines with ?format=apoc.
        op["requestBody"] = json!({ "required": true, "content": {
            "application/json": { "schema": atlas_registry::business_graph_schema() },
            // One JSON object a line, each a node or a relationship as apoc.export.json.all
            // writes them (`{"type": "node", "id", "labels", "properties"}`,
            // `{"type": "relationship", "label", "start", "end", "properties"}`).
            "application/x-ndjson": { "schema": {
                "type": "string",
                "description": "Neo4j apoc.export.json.all lines: one JSON object a line, a node ({type: node, id, labels, properties}) or a relationship ({type: relationship, label, start: {id}, end: {id}, properties})"
            } }
        } });
        op["responses"]["415"] = json!({ "description": "the body is not JSON", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
        return op;
    }
    if route.path == "/api/v1/events" {
        // A stream that lasts as long as the client reads it.
        op["responses"]["200"] = json!({ "description": "server-sent events", "content": { "text/event-stream": { "schema": { "type": "string" } } } });
        op["parameters"] = json!([{ "name": "app_id", "in": "query", "required": false, "schema": { "type": "string" } }]);
        return op;
    }
    if route.path.ends_with("/screenshot") {
        op["responses"]["200"] = json!({ "description": "the screenshot", "content": { "image/png": { "schema": { "type": "string", "format": "binary" } } } });
        op["parameters"] = Value::Array(path_parameters(route.path));
        return op;
    }
    if route.path == "/mcp" {
        // JSON-RPC answers, errors included.
        let rpc = rpc_error();
        for status in ["200", "400", "401", "403", "404", "406"] {
            op["responses"][status] = rpc.clone();
        }
        op["responses"]["202"] = json!({ "description": "a notification, taken" });
        if route.method == "delete" {
            op["parameters"] = json!([{ "name": "Mcp-Session-Id", "in": "header", "required": true, "schema": { "type": "string" } }]);
            op["responses"] = json!({
                "204": { "description": "the session ended" },
                "400": rpc_error(),
                "403": rpc_error(),
                "404": { "description": "no such session" }
            });
        } else {
            // A message or a batch; a malformed message inside is answered in-band, as JSON-RPC
            // errors are.
            op["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": {
                "anyOf": [{ "type": "object" }, { "type": "array", "minItems": 1 }]
            } } } });
        }
        return op;
    }
    if route.path == "/retrieval" {
        // The External Knowledge API's own error shape.
        let external = json!({ "description": "an error", "content": { "application/json": { "schema": {
            "type": "object",
            "required": ["error_code", "error_msg"],
            "properties": { "error_code": { "type": "integer" }, "error_msg": { "type": "string" } }
        } } } });
        for status in ["400", "401", "403", "404", "415"] {
            op["responses"][status] = external.clone();
        }
    }
    if route.path == "/api/v1/tools" || (route.path == "/v1/datasets/tags" && route.method == "get")
    {
        op["responses"]["200"]["content"]["application/json"]["schema"] =
            json!({ "type": "array", "items": { "type": "object" } });
    }
    if route.method == "delete" && route.path.starts_with("/v1/") {
        op["responses"]["204"] = json!({ "description": "deleted" });
    }
    let parameters = path_parameters(route.path);
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    if let Some(content_type) = route.body {
        let schema = if content_type == "application/json" {
            body_schema(route.method, route.path)
        } else {
            // Dify's upload form: the document's text in `file` (named after the file, or
            // "untitled"), its settings as a JSON string in `data`.
            json!({
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": { "type": "string", "minLength": 1, "pattern": "\\S" },
                    "data": { "type": "string", "contentMediaType": "application/json" }
                }
            })
        };
        op["requestBody"] =
            json!({ "required": true, "content": { content_type: { "schema": schema } } });
        if op["responses"].get("415").is_none() {
            op["responses"]["415"] = err("the body is not of the route's content type");
        }
    }
    op
}

pub(crate) fn document(tools: &ToolRegistry) -> Value {
    let mut components = Map::new();
    let error = json!({
        "type": "object",
        "properties": {
            "success": { "type": "boolean", "const": false },
            "error": {
                "type": "object",
                "properties": { "code": { "type": "string" }, "message": { "type": "string" }, "details": { "type": "object" } },
                "required": ["code", "message", "details"]
            }
        },
        "required": ["success", "error"]
    });
    components.insert("Error".into(), error);
    components.insert(
        "DifyError".into(),
        json!({
            "type": "object",
            "properties": { "status": { "type": "integer" }, "code": { "type": "string" }, "message": { "type": "string" } },
            "required": ["status", "code", "message"]
        }),
    );
    let mut lifted = Components::default();
    let mut paths = Map::new();
    for tool in tools.iter() {
        let input = lifted.lift(&tool.input_schema, tool.name);
        let output = lifted.lift(&tool.output_schema, tool.name);
        // A request whose fields are all optional may come without a body (as `{}`).
        let body_required = input
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        let err = |d: &str| json!({ "description": d, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
        paths.insert(
            format!("/api/v1/{}", tool.name),
            json!({ "post": {
                "operationId": tool.name,
                "summary": tool.description,
                "security": security(Auth::Server),
                "requestBody": { "required": body_required, "content": { "application/json": { "schema": input } } },
                "responses": {
                    "200": { "description": "the answer", "content": { "application/json": { "schema": output } } },
                    "400": err("invalid input"),
                    "401": err("missing or wrong bearer token (a server started with --token)"),
                    "403": err("a web page of another origin, or a host name the server does not answer to"),
                    "404": err("unknown page or entity"),
                    "413": err("body over 10 MB"),
                    "415": err("the body is not application/json"),
                    "500": err("a fault of Atlas"),
                    "503": err("the database went away: nothing was written, try again")
                }
            }}),
        );
    }
    for route in ROUTES {
        let entry = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        let mut op = operation(route);
        // A body schema derived from a Rust type brings its definitions along.
        if let Some(schema) = op.pointer_mut("/requestBody/content/application~1json/schema") {
            *schema = lifted.lift(schema, route.path.trim_start_matches('/'));
        }
        entry[route.method] = op;
    }
    let mut schemas = lifted.schemas;
    schemas.extend(components);
    json!({
        "openapi": "3.1.0",
        "info": { "title": "Atlas knowledge-graph API", "version": env!("CARGO_PKG_VERSION") },
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": { "type": "http", "scheme": "bearer", "description": "the server token (--token); needed only when the server has one" },
                "datasetKey": { "type": "http", "scheme": "bearer", "description": "a dataset's API key (dataset-…)" }
            }
        },
        "paths": paths
    })
}
