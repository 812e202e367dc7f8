//! The OpenAPI 3.1 document, generated from the tool registry and the typed routes of
//! [`atlas_api::routes`]: the server's own ([`atlas_api::server`]) and Dify's
//! ([`atlas_api::dify`]).

use atlas_api::routes::{Access, Answered, BodyKind, Refusal, RouteDoc, schema_of};
use atlas_api::server::ErrorBody;
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

fn security(access: Access) -> Value {
    match access {
        Access::Open => json!([]),
        // Required only when the server was started with --token.
        Access::Server => json!([{ "bearer": [] }, {}]),
        Access::Dataset => json!([{ "datasetKey": [] }, { "bearer": [] }]),
    }
}

/// Seed 000's error body, once in the components for every route and tool that answers it.
fn error_body(lifted: &mut Components) -> Value {
    let named = json!({ "$ref": "#/$defs/Error", "$defs": { "Error": schema_of::<ErrorBody>() } });
    lifted.lift(&named, "error")
}

/// The responses a refusal of `route` comes with, each status with its shape.
fn refusals(route: &RouteDoc, lifted: &mut Components, owner: &str) -> Map<String, Value> {
    let error = if route.error_schema == schema_of::<ErrorBody>() {
        error_body(lifted)
    } else {
        lifted.lift(&route.error_schema, owner)
    };
    let statuses = route.refusals.iter().copied();
    // Only a route that reads a body refuses one of another content type.
    let statuses =
        statuses.filter(|(status, _)| *status != 415 || route.shape.body != BodyKind::None);
    error_responses(statuses, &error)
}

/// A response for each status, when it comes, with the refusal's schema.
fn error_responses<'a>(
    statuses: impl IntoIterator<Item = (u16, &'a str)>,
    error: &Value,
) -> Map<String, Value> {
    statuses
        .into_iter()
        .map(|(status, when)| {
            let response = json!({ "description": when, "content": { "application/json": { "schema": error } } });
            (status.to_string(), response)
        })
        .collect()
}

/// The success responses of `route`, by how it answers.
fn answers(route: &RouteDoc, lifted: &mut Components, owner: &str) -> Map<String, Value> {
    let mut answer = || lifted.lift(&route.answer_schema, owner);
    let stream = json!({ "schema": { "type": "string", "description": "server-sent events, each event's data the answer's JSON" } });
    let (status, response) = match route.answered {
        Answered::Json => (
            "200",
            json!({ "description": "the answer", "content": { "application/json": { "schema": answer() } } }),
        ),
        Answered::NoContent => ("204", json!({ "description": "done" })),
        Answered::Png => (
            "200",
            json!({ "description": "the image", "content": { "image/png": { "schema": answer() } } }),
        ),
        Answered::EventStream => (
            "200",
            json!({ "description": "server-sent events", "content": { "text/event-stream": stream } }),
        ),
        Answered::EventStreamOrJson => (
            "200",
            json!({ "description": "server-sent events, or the whole answer as JSON", "content": {
                "text/event-stream": stream,
                "application/json": { "schema": answer() }
            } }),
        ),
        Answered::JsonRpc => {
            let mut answers = Map::new();
            answers.insert(
                "202".into(),
                json!({ "description": "a notification, taken" }),
            );
            answers.insert(
                "200".into(),
                json!({ "description": "the answer", "content": {
                    "application/json": { "schema": answer() },
                    "text/event-stream": { "schema": { "type": "string", "description": "one event, its data the answer" } }
                } }),
            );
            return answers;
        }
    };
    Map::from_iter([(status.to_string(), response)])
}

/// The operation of a typed route ([`atlas_api::routes`]): its parameters, body, answer and
/// refusals from its types.
fn typed_operation(route: &RouteDoc, lifted: &mut Components) -> Value {
    // The operation's id names its definitions where another's of the same name differ.
    let id = format!(
        "{}_{}",
        route.shape.method.as_str(),
        route
            .shape
            .path
            .trim_start_matches('/')
            .replace(['/', '{', '}', '-', '.'], "_")
    );
    let owner = id.as_str();
    let mut responses = refusals(route, lifted, owner);
    responses.extend(answers(route, lifted, owner));
    let mut op = json!({
        "operationId": id,
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
    for header in route.headers {
        parameters.push(json!({ "name": header.name, "in": "header", "required": header.required, "schema": { "type": "string" } }));
    }
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    let body = lifted.lift(&route.body_schema, owner);
    let content = match route.shape.body {
        BodyKind::None => None,
        BodyKind::Json => Some(json!({ "application/json": { "schema": body } })),
        BodyKind::Multipart => Some(json!({ "multipart/form-data": { "schema": body } })),
        BodyKind::JsonOrLines => Some(json!({
            "application/json": { "schema": body },
            "application/x-ndjson": { "schema": { "type": "string", "description": "one JSON object a line" } }
        })),
    };
    if let Some(content) = content {
        op["requestBody"] = json!({ "required": true, "content": content });
    }
    op
}

pub(crate) fn document(tools: &ToolRegistry) -> Value {
    let mut lifted = Components::default();
    let error = error_body(&mut lifted);
    let mut paths = Map::new();
    for tool in tools.iter() {
        let input = lifted.lift(&tool.input_schema, tool.name);
        let output = lifted.lift(&tool.output_schema, tool.name);
        // A request whose fields are all optional may come without a body (as `{}`).
        let body_required = input
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        let mut responses = error_responses(ErrorBody::statuses(), &error);
        responses.insert(
            "200".into(),
            json!({ "description": "the answer", "content": { "application/json": { "schema": output } } }),
        );
        paths.insert(
            format!("/api/v1/{}", tool.name),
            json!({ "post": {
                "operationId": tool.name,
                "summary": tool.description,
                "security": security(Access::Server),
                "requestBody": { "required": body_required, "content": { "application/json": { "schema": input } } },
                "responses": responses
            }}),
        );
    }
    let routes = atlas_api::server::route_docs()
        .into_iter()
        .chain(atlas_api::dify::route_docs());
    for route in routes {
        let op = typed_operation(&route, &mut lifted);
        paths
            .entry(route.shape.path.to_string())
            .or_insert_with(|| json!({}))[route.shape.method.as_str()] = op;
    }
    let schemas = lifted.schemas;
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
