//! The bundled OpenAPI document for validators, in its source form ([`crate::OPENAPI_SOURCE_JSON`]; the published
//! form states the same contract, but its union of bridge records has no `discriminator`, so a validator would
//! report a bad record less precisely). OpenAPI 3.0's `nullable` and `discriminator` are not JSON Schema
//! keywords, so [`to_json_schema`] rewrites every `nullable: true` schema as `anyOf: [schema, {type: null}]` and
//! every discriminated union as a tag check plus one `if`/`then` per tag (so that a validator reports a bad member
//! inside the variant the tag names, at its own path, instead of "not valid under any of the schemas"). The
//! unions told apart by which member is present (`x-presence-discriminator`) get the same treatment.
//! [`json_schema_components`] are the document's components so converted, and [`schema_for`] wraps any schema of
//! the document (a component, a response body) with them so that a JSON Schema validator (such as the
//! `jsonschema` crate) resolves its `#/components/...` references.

use serde_json::{json, Value};

/// [`crate::OPENAPI_SOURCE_JSON`], parsed.
pub fn document() -> Value {
    serde_json::from_str(crate::OPENAPI_SOURCE_JSON).expect("the bundled document is JSON")
}

/// The document's `components`, converted by [`to_json_schema`].
pub fn json_schema_components() -> Value {
    let mut components = document()["components"].take();
    to_json_schema(&mut components);
    components
}

/// A JSON Schema for `schema` (for example `{"$ref": "#/components/schemas/BridgeQuote"}`), self-contained.
pub fn schema_for(schema: &Value) -> Value {
    let mut schema = schema.clone();
    to_json_schema(&mut schema);
    json!({ "allOf": [schema], "components": json_schema_components() })
}

/// Rewrites the OpenAPI-only keywords of `value` (a schema, or any part of the document) into JSON Schema:
/// [`convert_nullable`] and [`convert_discriminators`].
pub fn to_json_schema(value: &mut Value) {
    convert_discriminators(value);
    convert_nullable(value);
}

/// Rewrites every discriminated `oneOf` (OpenAPI `discriminator`, or `x-presence-discriminator`) as checks a JSON
/// Schema validator reports precisely: the tag is one of the mapped values (required unless the union has an
/// `x-discriminator-default`), and the variant it names validates the whole value. For a presence union, exactly
/// one of the members is present, and the variant it names validates the whole value. The `oneOf` is kept as
/// it is only for unions told apart by JSON kind.
pub fn convert_discriminators(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                convert_discriminators(child);
            }
            let mut checks = Vec::new();
            if let Some(discriminator) = map.get("discriminator").cloned() {
                let property = discriminator["propertyName"].as_str().unwrap_or_default().to_owned();
                let mapping = discriminator["mapping"].as_object().cloned().unwrap_or_default();
                let tags: Vec<&String> = mapping.keys().collect();
                checks.push(json!({"properties": {&property: {"enum": tags}}}));
                match map.get("x-discriminator-default").and_then(Value::as_str) {
                    Some(default) => checks.push(json!({
                        "if": {"not": {"required": [&property]}},
                        "then": {"$ref": mapping.get(default).cloned().unwrap_or_default()},
                    })),
                    None => checks.push(json!({"required": [&property]})),
                }
                for (tag, target) in &mapping {
                    checks.push(json!({
                        "if": {"properties": {&property: {"const": tag}}, "required": [&property]},
                        "then": {"$ref": target},
                    }));
                }
            } else if let Some(presence) = map.get("x-presence-discriminator").and_then(Value::as_object).cloned() {
                let one_of: Vec<Value> = presence.keys().map(|member| json!({"required": [member]})).collect();
                checks.push(json!({"oneOf": one_of}));
                for (member, target) in &presence {
                    checks.push(json!({"if": {"required": [member]}, "then": {"$ref": target}}));
                }
            }
            if !checks.is_empty() {
                map.remove("oneOf");
                map.remove("discriminator");
                map.insert("allOf".into(), Value::Array(checks));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(convert_discriminators),
        _ => {}
    }
}

/// Rewrites `{..., nullable: true}` as `{anyOf: [{...}, {type: "null"}]}` everywhere in `value`.
pub fn convert_nullable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                convert_nullable(child);
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let description = map.remove("description");
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                if let Some(d) = description {
                    map.insert("description".into(), d);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(convert_nullable),
        _ => {}
    }
}
