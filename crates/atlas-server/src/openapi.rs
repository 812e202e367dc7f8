//! The OpenAPI 3.1 document, generated from the tool registry.

use atlas_service::ToolRegistry;
use serde_json::{Map, Value, json};

/// Moves schemars' local `$defs` into `components/schemas` so references resolve in one document.
fn lift_defs(mut schema: Value, components: &mut Map<String, Value>) -> Value {
    if let Some(defs) = schema.as_object_mut().and_then(|o| o.remove("$defs")) {
        if let Value::Object(defs) = defs {
            for (k, v) in defs {
                components.insert(k, v);
            }
        }
    }
    rewrite_refs(&mut schema);
    schema
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                if let Some(name) = r.strip_prefix("#/$defs/") {
                    *r = format!("#/components/schemas/{name}");
                }
            }
            map.values_mut().for_each(rewrite_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
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
        }
    });
    components.insert("Error".into(), error);
    let mut paths = Map::new();
    for tool in tools.iter() {
        let mut defs = Map::new();
        let schema = lift_defs(tool.input_schema.clone(), &mut defs);
        for (k, v) in defs {
            let mut v = v;
            rewrite_refs(&mut v);
            components.insert(k, v);
        }
        let err = |d: &str| json!({ "description": d, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
        paths.insert(
            format!("/api/v1/{}", tool.name),
            json!({ "post": {
                "operationId": tool.name,
                "summary": tool.description,
                "requestBody": { "required": true, "content": { "application/json": { "schema": schema } } },
                "responses": {
                    "200": { "description": "the seed's output object", "content": { "application/json": { "schema": { "type": "object" } } } },
                    "400": err("invalid input"),
                    "404": err("unknown page or entity"),
                    "413": err("body over 10 MB"),
                    "500": err("a fault of Atlas")
                }
            }}),
        );
    }
    paths.insert("/healthz".into(), json!({ "get": { "operationId": "healthz", "responses": { "200": { "description": "ready" } } } }));
    json!({
        "openapi": "3.1.0",
        "info": { "title": "Atlas knowledge-graph API", "version": env!("CARGO_PKG_VERSION") },
        "components": { "schemas": components, "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } } },
        "paths": paths
    })
}
