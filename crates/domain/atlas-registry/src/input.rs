//! What a request body must be before a tool sees it: a JSON object, integers JSON carries
//! exactly, and no control character (but tab and newline) in a text the schema names.

use atlas_model::{AtlasError, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses a tool input, turning serde's message into seed 000's INVALID_PARAMETER.
pub fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if !input.is_object() {
        return Err(AtlasError::invalid(
            "body",
            "the request body must be a JSON object",
        ));
    }
    serde_path_to_error::deserialize(input).map_err(invalid_field)
}

/// A body of the right shape whose field `e` names is wrong: the message and details name the
/// field (`action: missing field \`_metadata\``), so a client sees where, not only what.
fn invalid_field(e: serde_path_to_error::Error<serde_json::Error>) -> AtlasError {
    let field = e.path().to_string();
    let reason = e.into_inner().to_string();
    let message = if field == "." {
        format!("invalid parameters: {reason}")
    } else {
        format!("invalid parameters: {field}: {reason}")
    };
    AtlasError::InvalidParameter {
        message,
        details: serde_json::json!({ "field": field, "reason": reason }),
    }
}

/// Parses a raw JSON body: empty or `null` means `{}`, anything but an object is refused, and
/// malformed JSON is told apart from well-formed JSON with the wrong fields.
pub fn parse_json_input<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    let text = body.trim_ascii();
    let text: &[u8] = if text.is_empty() { b"{}" } else { text };
    let malformed = |e: serde_json::Error| AtlasError::InvalidParameter {
        message: format!("malformed JSON: {e}"),
        details: serde_json::json!({ "line": e.line(), "column": e.column() }),
    };
    if text[0] != b'{' {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(AtlasError::invalid(
                "body",
                "the request body must be a JSON object",
            )),
            Err(e) => Err(malformed(e)),
        };
    }
    let mut reader = serde_json::Deserializer::from_slice(text);
    match serde_path_to_error::deserialize(&mut reader) {
        Ok(value) => reader.end().map(|()| value).map_err(malformed),
        Err(e)
            if matches!(
                e.inner().classify(),
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof
            ) =>
        {
            Err(malformed(e.into_inner()))
        }
        // `3.0` where a count is wanted: JSON has one number type, and Python and JavaScript
        // clients send whole floats. Read again with every whole float as an integer.
        Err(e)
            if e.inner()
                .to_string()
                .contains("invalid type: floating point") =>
        {
            let mut value: Value = serde_json::from_slice(text).map_err(malformed)?;
            whole_floats_as_integers(&mut value);
            serde_path_to_error::deserialize(value).map_err(invalid_field)
        }
        Err(e) => Err(invalid_field(e)),
    }
}

pub use atlas_api::schema::MAX_SAFE_INTEGER;

/// The first integer literal (outside strings) beyond ±[`MAX_SAFE_INTEGER`], if any.
fn unsafe_integer(json: &[u8]) -> Option<String> {
    let mut i = 0;
    let mut in_string = false;
    while i < json.len() {
        let b = json[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < json.len()
                && matches!(json[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            let literal = std::str::from_utf8(&json[start..i]).unwrap_or("");
            let integer = !literal.contains(['.', 'e', 'E']);
            let digits = literal.trim_start_matches('-');
            if integer && digits.parse::<u64>().map_or(true, |n| n > MAX_SAFE_INTEGER) {
                return Some(literal.to_string());
            }
            continue;
        }
        i += 1;
    }
    None
}

/// Turns every float with no fraction (`3.0`) into the integer it is.
fn whole_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_floats_as_integers),
        _ => {}
    }
}

/// Refuses a control character (other than tab and newline) in any text of the request that
/// the schema names: no label, intent or query means one, and they break logs, terminals and
/// files. Fields the schema does not name are ignored, as serde ignores them. The raw scan is a
/// byte loop; the walk over the parsed body runs only when it finds something.
pub(crate) fn refuse_control_characters(body: &[u8], schema: &Value) -> Result<()> {
    if control_character(body).is_none() && unsafe_integer(body).is_none() {
        return Ok(());
    }
    let Ok(value) = serde_json::from_slice::<Value>(body.trim_ascii()) else {
        return Ok(());
    };
    control_free(&value, schema)
}

/// [`refuse_control_characters`] over a parsed body.
pub(crate) fn control_free(value: &Value, schema: &Value) -> Result<()> {
    match control_in_named(value, schema, schema, "") {
        Some((field, Refused::Control(c))) => Err(AtlasError::invalid(
            if field.is_empty() { "body" } else { &field },
            format!(
                "{field} holds the control character U+{c:04X}: only tab and newline are taken"
            ),
        )),
        Some((field, Refused::Integer(n))) => Err(AtlasError::invalid(
            &field,
            format!(
                "{field}: {n} is beyond ±{MAX_SAFE_INTEGER}, the integers JSON carries exactly"
            ),
        )),
        None => Ok(()),
    }
}

/// What a named field may not hold.
enum Refused {
    Control(u32),
    Integer(f64),
}

fn is_integer_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// The first refused control character in `value`'s texts at places `schema` names.
fn control_in_named(
    value: &Value,
    schema: &Value,
    root: &Value,
    at: &str,
) -> Option<(String, Refused)> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs")?.get(name))
            .unwrap_or(schema),
        None => schema,
    };
    let alternatives = ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten();
    for alternative in alternatives {
        if let Some(found) = control_in_named(value, alternative, root, at) {
            return Some(found);
        }
    }
    match value {
        Value::String(text) => text
            .chars()
            .find(|c| atlas_text::is_refused_control(*c))
            .map(|c| (at.to_string(), Refused::Control(u32::from(c)))),
        Value::Number(n) if is_integer_schema(schema) => {
            let x = n.as_f64().unwrap_or(0.0);
            (x.abs() > MAX_SAFE_INTEGER as f64).then(|| (at.to_string(), Refused::Integer(x)))
        }
        Value::Array(items) => {
            let item_schema = schema.get("items")?;
            items.iter().enumerate().find_map(|(i, item)| {
                control_in_named(item, item_schema, root, &format!("{at}[{i}]"))
            })
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            // A map's values (`{"name": "value", …}`) are named by its `additionalProperties`.
            let others = schema.get("additionalProperties").filter(|s| s.is_object());
            map.iter().find_map(|(key, item)| {
                let name = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                let item_schema = properties.and_then(|p| p.get(key)).or(others)?;
                control_in_named(item, item_schema, root, &name)
            })
        }
        _ => None,
    }
}

/// Whether a JSON text may hold a refused control character in a string: escaped (`\u0000`,
/// `\b`, `\f`, `\r`) or raw (DEL, the C1 range).
fn control_character(json: &[u8]) -> Option<u32> {
    let refused = |c: u32| char::from_u32(c).is_some_and(atlas_text::is_refused_control);
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'\\' => {
                match json.get(i + 1) {
                    Some(b'b') => return Some(0x08),
                    Some(b'f') => return Some(0x0C),
                    Some(b'r') => return Some(0x0D),
                    Some(b'u') => {
                        let code = json
                            .get(i + 2..i + 6)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok());
                        if let Some(c) = code.filter(|c| refused(*c)) {
                            return Some(c);
                        }
                        i += 6;
                        continue;
                    }
                    _ => {}
                }
                i += 2;
                continue;
            }
            0x7F => return Some(0x7F),
            0xC2 if json.get(i + 1).is_some_and(|b| (0x80..=0x9F).contains(b)) => {
                return Some(u32::from(json[i + 1]));
            }
            _ => {}
        }
        i += 1;
    }
    None
}
