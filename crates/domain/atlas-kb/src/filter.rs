//! Dify's `metadata_filtering_conditions`: which documents a search may return.
//!
//! A condition names a metadata field (`document_name` is the document's name; anything else is
//! looked up in the document's metadata) and one of Dify's operators. A field a document lacks
//! satisfies only `empty` and `not empty`'s opposite; an unknown operator is a bad parameter,
//! not a silent "no match".

use serde_json::Value;

use crate::error::{KbError, invalid};
use crate::model::Document;

pub use atlas_api::dify::{Condition, MetadataFilter};

use atlas_api::dify::OPERATORS;

/// Refuses unknown operators and logical operators before any search runs.
pub(crate) fn validate(filter: &MetadataFilter) -> Result<(), KbError> {
    if !matches!(filter.logical_operator.as_str(), "and" | "or") {
        return Err(invalid(format!(
            "logical_operator must be \"and\" or \"or\", not {:?}",
            filter.logical_operator
        )));
    }
    for c in &filter.conditions {
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
pub(crate) fn admits(filter: &MetadataFilter, doc: &Document) -> bool {
    if filter.conditions.is_empty() {
        return true;
    }
    let mut results = filter.conditions.iter().map(|c| holds(c, doc));
    if filter.logical_operator == "or" {
        results.any(|r| r)
    } else {
        results.all(|r| r)
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

fn holds(condition: &Condition, doc: &Document) -> bool {
    let field: Option<Value> = if condition.name == "document_name" {
        Some(Value::String(doc.name.clone()))
    } else {
        doc.metadata.get(&condition.name).cloned()
    };
    let empty = field
        .as_ref()
        .is_none_or(|v| v.is_null() || as_text(v).is_empty());
    match condition.comparison_operator.as_str() {
        "empty" => return empty,
        "not empty" => return !empty,
        _ => {}
    }
    let Some(field) = field else { return false };
    let wanted = condition.value.clone().unwrap_or(Value::Null);
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
    match condition.comparison_operator.as_str() {
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
        validate(&f).unwrap();
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
        assert!(admits(&f, &refund) && !admits(&f, &shipping));
        let f = filter(
            serde_json::json!({ "logical_operator": "or", "conditions": [
            { "name": "version", "comparison_operator": "≥", "value": 3 }, { "name": "category", "comparison_operator": "in", "value": ["物流"] } ] }),
        );
        assert!(admits(&f, &refund) && admits(&f, &shipping));
        let f = filter(
            serde_json::json!({ "conditions": [{ "name": "updated", "comparison_operator": "before", "value": "2026-06-01" }, { "name": "version", "comparison_operator": "not empty" }] }),
        );
        assert!(admits(&f, &refund) && !admits(&f, &shipping));
        let f = filter(
            serde_json::json!({ "conditions": [{ "name": "version", "comparison_operator": "empty" }] }),
        );
        assert!(!admits(&f, &refund) && admits(&f, &shipping));
        let bad: MetadataFilter = serde_json::from_value(
            serde_json::json!({ "conditions": [{ "name": "x", "comparison_operator": "like" }] }),
        )
        .unwrap();
        assert!(validate(&bad).is_err());
    }
}
