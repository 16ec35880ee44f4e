//! Runtime helpers that the generated serde impls call (hand-written, small, and generic over every type).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Deserializes a required member whose value may be `null`: absent is an error, `null` is `None`.
pub fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// Deserializes an optional member whose value may be `null`: absent is `None` (by `#[serde(default)]`),
/// `null` is `Some(None)`.
pub fn optional_nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Reads the tag of a discriminated union and returns the index of its variant in `tags`.
///
/// Errors name the union, the tag property and the bad tag, and list the tags that are allowed.
/// `default` is the variant used when the tag is absent (`x-discriminator-default`).
pub fn union_index(
    value: &Value,
    union: &str,
    property: &str,
    tags: &[&str],
    default: Option<usize>,
) -> Result<usize, String> {
    let expected = || tags.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
    let Value::Object(map) = value else {
        return Err(format!("expected an object ({union}), got a JSON {}", json_kind(value)));
    };
    match map.get(property) {
        None => default.ok_or_else(|| format!("missing `{property}` of {union}; expected one of {}", expected())),
        Some(Value::String(tag)) => tags
            .iter()
            .position(|t| t == tag)
            .ok_or_else(|| format!("unknown `{property}` {tag:?} of {union}; expected one of {}", expected())),
        Some(other) => {
            Err(format!("`{property}` of {union} must be a string, got {other}; expected one of {}", expected()))
        }
    }
}

/// The variant of a union told apart by which member is present (`x-presence-discriminator`): the index of the one
/// member of `members` that `value` has. None of them, or more than one, is an error naming them.
pub fn presence_index(value: &Value, union: &str, members: &[&str]) -> Result<usize, String> {
    let expected = || members.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(" or ");
    let Value::Object(map) = value else {
        return Err(format!("expected an object ({union}), got a JSON {}", json_kind(value)));
    };
    let mut present = members.iter().enumerate().filter(|(_, m)| map.contains_key(**m));
    match (present.next(), present.next()) {
        (Some((index, _)), None) => Ok(index),
        (None, _) => Err(format!("{union} has neither {}; one of them tells its shape", expected())),
        (Some(_), Some(_)) => Err(format!("{union} has both {}; exactly one of them tells its shape", expected())),
    }
}

/// Deserializes one variant of a union from the already-buffered JSON value.
pub fn variant<T: DeserializeOwned, E: serde::de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// The JSON kind of a value, as the schema's `type` names it.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// JSON Schema of a required member that may be `null` (`{anyOf: [T, null]}`), for schemars: unlike
/// `Option<T>`, it does not make the member optional.
#[cfg(feature = "schemars")]
pub struct Nullable<T>(std::marker::PhantomData<T>);

#[cfg(feature = "schemars")]
impl<T: schemars::JsonSchema> schemars::JsonSchema for Nullable<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let inner = generator.subschema_for::<T>();
        schemars::json_schema!({ "anyOf": [inner, { "type": "null" }] })
    }
}
