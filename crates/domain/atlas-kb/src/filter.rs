//! Dify's `metadata_filtering_conditions`: which documents a search may return.
//!
//! A condition names a metadata field (`document_name` is the document's name; anything else is
//! looked up in the document's metadata) and one of Dify's operators. A field a document lacks
//! satisfies only `empty` and `not empty`'s opposite; an unknown operator is a bad parameter,
//! not a silent "no match".

use serde::Deserialize;
use serde_json::Value;

use crate::error::{KbError, invalid};
use crate::model::Document;

/// Dify's `metadata_filtering_conditions`: documents whose metadata pass every (or any) condition.
#[derive(Debug, Clone, Deserialize)]
pub struct MetadataFilter {
    /// `and` (every condition) or `or` (any).
    #[serde(default = "and")]
    pub logical_operator: String,
    /// The conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

fn and() -> String {
    "and".into()
}

/// One condition on a metadata field.
#[derive(Debug, Clone, Deserialize)]
pub struct Condition {
    /// The metadata field.
    pub name: String,
    /// Dify's operator: `is`, `contains`, `>`, `before`, `empty`, …
    pub comparison_operator: String,
    /// What the field is compared with (none for `empty`).
    #[serde(default)]
    pub value: Option<Value>,
}

const OPERATORS: &[&str] = &[
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

impl MetadataFilter {
    /// Refuses unknown operators and logical operators before any search runs.
    pub fn validate(&self) -> Result<(), KbError> {
        if !matches!(self.logical_operator.as_str(), "and" | "or") {
            return Err(invalid(format!(
                "logical_operator must be \"and\" or \"or\", not {:?}",
                self.logical_operator
            )));
        }
        for c in &self.conditions {
            if !OPERATORS.contains(&c.comparison_operator.as_str()) {
                return Err(invalid(format!(
                    "unknown comparison_operator {:?}",
                    c.comparison_operator
                )));
            }
        }
        Ok(())
    }

    /// Whether the document's metadata pass.
    pub fn admits(&self, doc: &Document) -> bool {
        if self.conditions.is_empty() {
            return true;
        }
        let mut results = self.conditions.iter().map(|c| c.holds(doc));
        if self.logical_operator == "or" {
            results.any(|r| r)
        } else {
            results.all(|r| r)
        }
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

impl Condition {
    fn holds(&self, doc: &Document) -> bool {
        let field: Option<Value> = if self.name == "document_name" {
            Some(Value::String(doc.name.clone()))
        } else {
            doc.metadata.get(&self.name).cloned()
        };
        let empty = field
            .as_ref()
            .is_none_or(|v| v.is_null() || as_text(v).is_empty());
        match self.comparison_operator.as_str() {
            "empty" => return empty,
            "not empty" => return !empty,
            _ => {}
        }
        let Some(field) = field else { return false };
        let wanted = self.value.clone().unwrap_or(Value::Null);
        let (text, value) = (as_text(&field), as_text(&wanted));
        let members = || -> Vec<String> {
            match &wanted {
                Value::Array(items) => items.iter().map(as_text).collect(),
                other => as_text(other)
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect(),
            }
        };
        let numbers = || as_number(&field).zip(as_number(&wanted));
        match self.comparison_operator.as_str() {
            "contains" => text.contains(&value),
            "not contains" => !text.contains(&value),
            "start with" => text.starts_with(&value),
            "end with" => text.ends_with(&value),
            "is" => text == value,
            "is not" => text != value,
            "in" => members().contains(&text),
            "not in" => !members().contains(&text),
            "=" => numbers().map_or(text == value, |(a, b)| a == b),
            "≠" | "!=" => numbers().map_or(text != value, |(a, b)| a != b),
            ">" => numbers().is_some_and(|(a, b)| a > b),
            "<" => numbers().is_some_and(|(a, b)| a < b),
            "≥" | ">=" => numbers().is_some_and(|(a, b)| a >= b),
            "≤" | "<=" => numbers().is_some_and(|(a, b)| a <= b),
            // Dates as ISO text or Unix seconds both order correctly.
            "before" => numbers().map_or(text < value, |(a, b)| a < b),
            "after" => numbers().map_or(text > value, |(a, b)| a > b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, metadata: Value) -> Document {
        Document {
            id: "d".into(),
            name: name.into(),
            kind: "text".into(),
            metadata: metadata.as_object().cloned().unwrap_or_default(),
            created_at: 0,
            enabled: true,
            archived: false,
            segments: vec![],
        }
    }

    fn filter(value: Value) -> MetadataFilter {
        let f: MetadataFilter = serde_json::from_value(value).unwrap();
        f.validate().unwrap();
        f
    }

    #[test]
    fn conditions_on_names_and_metadata() {
        let refund = doc(
            "退款说明.md",
            serde_json::json!({ "category": "售后", "version": 3, "updated": "2026-05-01" }),
        );
        let shipping = doc("shipping.txt", serde_json::json!({ "category": "物流" }));
        let f = filter(
            serde_json::json!({ "conditions": [{ "name": "document_name", "comparison_operator": "contains", "value": "退款" }] }),
        );
        assert!(f.admits(&refund) && !f.admits(&shipping));
        let f = filter(
            serde_json::json!({ "logical_operator": "or", "conditions": [
            { "name": "version", "comparison_operator": "≥", "value": 3 }, { "name": "category", "comparison_operator": "in", "value": ["物流"] } ] }),
        );
        assert!(f.admits(&refund) && f.admits(&shipping));
        let f = filter(
            serde_json::json!({ "conditions": [{ "name": "updated", "comparison_operator": "before", "value": "2026-06-01" }, { "name": "version", "comparison_operator": "not empty" }] }),
        );
        assert!(f.admits(&refund) && !f.admits(&shipping));
        let f = filter(
            serde_json::json!({ "conditions": [{ "name": "version", "comparison_operator": "empty" }] }),
        );
        assert!(!f.admits(&refund) && f.admits(&shipping));
        let bad: MetadataFilter = serde_json::from_value(
            serde_json::json!({ "conditions": [{ "name": "x", "comparison_operator": "like" }] }),
        )
        .unwrap();
        assert!(bad.validate().is_err());
    }
}
