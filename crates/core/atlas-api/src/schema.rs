//! The JSON Schemas of the interface, derived from its Rust types; a request's tightened to say
//! what the server checks of every request it reads (no control characters, no blank required
//! text, integers JSON carries exactly), so a client's schema and the server's reader agree.

use atlas_model::REQUIRED_TEXT_PATTERN;
use schemars::JsonSchema;
use serde_json::Value;

/// The largest integer every JSON implementation reads exactly (2^53 − 1, RFC 7493's I-JSON).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A type's JSON Schema, without the meta keys a schema inside a document does not carry.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// No control character but tab and newline.
const TEXT_PATTERN: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";

/// An input schema that says what the server checks of texts: no control characters, and a
/// required text not empty or blank (the checks every request goes through).
pub fn input_schema_of<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    constrain_texts(&mut schema);
    schema
}

fn constrain_texts(schema: &mut Value) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(constrain_texts);
        }
        return;
    };
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    // An object whose items are checked one by one (a batch answers each item's error) keeps
    // its texts unconstrained here: an empty one is that item's error, not the request's.
    let per_item = map.get("x-checked-per-item") == Some(&Value::Bool(true));
    if let Some(Value::Object(properties)) = map.get_mut("properties").filter(|_| !per_item) {
        for (name, property) in properties.iter_mut() {
            let is_text = property.get("type") == Some(&Value::String("string".into()));
            if is_text && required.contains(name) && property.get("enum").is_none() {
                property["minLength"] = Value::from(1);
                property["pattern"] = Value::from(REQUIRED_TEXT_PATTERN);
            }
        }
    }
    let has_type = |name: &str| match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => false,
    };
    let is_text = has_type("string");
    if has_type("integer") {
        // What the integer's Rust type holds, and never beyond what JSON carries exactly.
        let (low, high): (i64, i64) = match map.get("format").and_then(Value::as_str) {
            Some("uint8") => (0, u8::MAX.into()),
            Some("uint16") => (0, u16::MAX.into()),
            Some("uint32") => (0, u32::MAX.into()),
            Some("int32") => (i32::MIN.into(), i32::MAX.into()),
            Some(f) if f.starts_with("uint") => (0, MAX_SAFE_INTEGER as i64),
            _ => (-(MAX_SAFE_INTEGER as i64), MAX_SAFE_INTEGER as i64),
        };
        let tighter = |key: &str, bound: i64, keep_smaller: bool| -> i64 {
            match map.get(key).and_then(Value::as_f64) {
                Some(v) if (v < bound as f64) == keep_smaller => v as i64,
                _ => bound,
            }
        };
        let (low, high) = (
            tighter("minimum", low, false),
            tighter("maximum", high, true),
        );
        map.insert("minimum".into(), Value::from(low));
        map.insert("maximum".into(), Value::from(high));
    }
    if is_text
        && !map.contains_key("pattern")
        && !map.contains_key("enum")
        && !map.contains_key("const")
    {
        map.insert("pattern".into(), Value::from(TEXT_PATTERN));
    }
    map.values_mut().for_each(constrain_texts);
}
