//! How the interface's requests read the fields that hold objects: a struct is never read from
//! an array, and a `carry` Atlas did not give is ignored rather than refused.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field whose value is an object, or absent or `null`: serde reads a struct from a JSON array
/// of its fields too, which no schema of ours allows (`"executed": [null, null]` would be taken
/// for an action executed). For `#[serde(default, deserialize_with = "atlas_api::fields::object")]`.
pub fn object<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    optional_object(deserializer)?
        .map(|value| serde_json::from_value(value).map_err(serde::de::Error::custom))
        .transpose()
}

/// A `carry` sent back: an object, or absent or `null`. What it holds is Atlas's own, read back
/// as it was given; an object that is not one Atlas gave (fields of other types, another shape)
/// is ignored — the screen starts afresh, as a run's first — rather than refused, since its
/// schema promises only an object. For `#[serde(default, deserialize_with = "atlas_api::fields::carried")]`.
pub fn carried<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(optional_object(deserializer)?.and_then(|value| serde_json::from_value(value).ok()))
}

/// The field's object, none when it is absent or `null`, an error for any other JSON value.
fn optional_object<'de, D>(deserializer: D) -> std::result::Result<Option<Value>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::Deserialize;
    match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::Object(_)) => Ok(Some(value)),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected an object, got {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            }
        ))),
    }
}
