//! Dify's `metadata_filtering_conditions`: which documents a search may return (the knowledge
//! base checks and applies it).

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Dify's comparison operators, every one the knowledge base applies.
pub const OPERATORS: &[&str] = &[
    "contains",
    "not contains",
    "start with",
    "end with",
    "is",
    "is not",
    "empty",
    "not empty",
    "in",
    "not in",
    "=",
    "≠",
    "!=",
    ">",
    "<",
    "≥",
    ">=",
    "≤",
    "<=",
    "before",
    "after",
];

fn operator(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": OPERATORS })
}

/// Documents whose metadata pass every (`and`) or any (`or`) condition.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MetadataFilter {
    /// `and` (every condition) or `or` (any).
    #[serde(default = "and")]
    #[schemars(extend("enum" = ["and", "or"]))]
    pub logical_operator: String,
    /// The conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

fn and() -> String {
    "and".into()
}

/// One condition on a metadata field (`document_name` is the document's name; anything else is
/// looked up in the document's metadata).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Condition {
    /// The metadata field.
    pub name: String,
    /// Dify's operator: `is`, `contains`, `>`, `before`, `empty`, …
    #[schemars(schema_with = "operator")]
    pub comparison_operator: String,
    /// What the field is compared with (none for `empty`).
    #[serde(default)]
    pub value: Option<Value>,
}
