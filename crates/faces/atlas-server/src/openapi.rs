//! The OpenAPI 3.1 document, generated from the tool registry and the typed routes of
//! [`atlas_api::routes`] (Dify's API); the server's own few other routes are listed here.

use atlas_api::routes::{Access, Answered, BodyKind, RouteDoc};
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
    access: Access,
}

/// The JSON body schema of a route outside the registry and Dify's API (the chat's).
fn body_schema(method: &str, path: &str) -> Value {
    match (method, path) {
        ("post", "/api/v1/chat") => json!({
            "type": "object",
            "required": ["messages"],
            "properties": { "messages": { "type": "array", "minItems": 1 } }
        }),
        _ => json!({ "type": "object" }),
    }
}

const JSON: Option<&str> = Some("application/json");

/// Every route that is not a tool, so the document names all that answer.
const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/healthz",
        summary: "Readiness: {\"status\":\"ok\"} once the server can serve; open without the token",
        body: None,
        access: Access::Open,
    },
    Route {
        method: "get",
        path: "/api/v1/openapi.json",
        summary: "This document",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "get",
        path: "/openapi.json",
        summary: "This document, where OpenAPI tools look first",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/tools",
        summary: "Every tool as an OpenAI function definition",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "post",
        path: "/api/v1/chat",
        summary: "One chat turn over the business and knowledge tools, through the configured model: {messages} → {answer, tool_calls, entities}",
        body: JSON,
        access: Access::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/events",
        summary: "What the graph learns, live: server-sent events (report, transition, page, intent, app), each once durable; ?app_id= for one app",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/apps/{app_id}/pages/{page_id}/screenshot",
        summary: "A page's screenshot (PNG) from its seed 001 folder, as get_page_details and get_app_graph point to it; 404 when it has none",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "get",
        path: "/api/v1/business-graph",
        summary: "The business graph as Atlas's JSON document",
        body: None,
        access: Access::Server,
    },
    Route {
        method: "put",
        path: "/api/v1/business-graph",
        summary: "Replace the business graph with Atlas's JSON document (application/json) or Neo4j's apoc.export.json.all lines (application/x-ndjson)",
        body: JSON,
        access: Access::Server,
    },
    Route {
        method: "post",
        path: "/mcp",
        summary: "MCP streamable HTTP: JSON-RPC messages, both protocol eras",
        body: JSON,
        access: Access::Server,
    },
    Route {
        method: "delete",
        path: "/mcp",
        summary: "End an MCP session (Mcp-Session-Id)",
        body: None,
        access: Access::Server,
    },
];

/// The `{name}` parameters of a path.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect()
}

fn security(access: Access) -> Value {
    match access {
        Access::Open => json!([]),
        // Required only when the server was started with --token.
        Access::Server => json!([{ "bearer": [] }, {}]),
        Access::Dataset => json!([{ "datasetKey": [] }, { "bearer": [] }]),
    }
}

fn rpc_error() -> Value {
    json!({ "description": "a JSON-RPC message, or a batch of them", "content": { "application/json": { "schema": { "type": ["object", "array"] } } } })
}

fn operation(route: &Route) -> Value {
    let err = |d: &str| json!({ "description": d, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
    let mut op = json!({
        "operationId": format!("{}_{}", route.method, route.path.trim_start_matches('/').replace(['/', '{', '}', '-', '.'], "_")),
        "summary": route.summary,
        "security": security(route.access),
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
    if route.path == "/api/v1/tools" {
        op["responses"]["200"]["content"]["application/json"]["schema"] =
            json!({ "type": "array", "items": { "type": "object" } });
    }
    let parameters = path_parameters(route.path);
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    if let Some(content_type) = route.body {
        let schema = body_schema(route.method, route.path);
        op["requestBody"] =
            json!({ "required": true, "content": { content_type: { "schema": schema } } });
        if op["responses"].get("415").is_none() {
            op["responses"]["415"] = err("the body is not of the route's content type");
        }
    }
    op
}

/// The operation of a typed route ([`atlas_api::routes`]): its parameters, body, answer and
/// refusals from its types.
fn typed_operation(route: &RouteDoc, lifted: &mut Components) -> Value {
    let owner = route.path.trim_start_matches('/');
    let error = lifted.lift(&route.error_schema, owner);
    let err = |d: &str| json!({ "description": d, "content": { "application/json": { "schema": error } } });
    let mut responses = json!({
        "400": err("invalid input"),
        "401": err("missing or wrong key"),
        "403": err("a key that does not open it, a web page of another origin, or a host name the server does not answer to"),
        "404": err("unknown dataset, document, segment, field or tag"),
        "409": err("the name is taken, or the folder is another process's"),
        "413": err("over the size limit"),
    });
    match route.answered {
        Answered::Json => {
            let answer = lifted.lift(&route.answer_schema, owner);
            responses["200"] = json!({ "description": "the answer", "content": { "application/json": { "schema": answer } } });
        }
        Answered::NoContent => responses["204"] = json!({ "description": "done" }),
    }
    let mut op = json!({
        "operationId": format!("{}_{}", route.method.as_str(), owner.replace(['/', '{', '}', '-', '.'], "_")),
        "summary": route.summary,
        "security": security(route.access),
        "responses": responses,
    });
    let mut parameters = Vec::new();
    for (schema, place) in [(&route.path_schema, "path"), (&route.query_schema, "query")] {
        let schema = lifted.lift(schema, owner);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            // A parameter left out is the `None` of an optional one: it is never `null`.
            let mut property = property.clone();
            if let Some(Value::Array(types)) = property.get_mut("type") {
                types.retain(|t| t != "null");
            }
            parameters.push(json!({
                "name": name,
                "in": place,
                "required": place == "path" || required.contains(&name.as_str()),
                "schema": property,
            }));
        }
    }
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    let content_type = match route.body {
        BodyKind::None => None,
        BodyKind::Json => Some("application/json"),
        BodyKind::Multipart => Some("multipart/form-data"),
    };
    if let Some(content_type) = content_type {
        let body = lifted.lift(&route.body_schema, owner);
        op["requestBody"] =
            json!({ "required": true, "content": { content_type: { "schema": body } } });
        op["responses"]["415"] = err("the body is not of the route's content type");
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
                "security": security(Access::Server),
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
    for route in atlas_api::dify::route_docs() {
        let op = typed_operation(&route, &mut lifted);
        paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}))[route.method.as_str()] = op;
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
