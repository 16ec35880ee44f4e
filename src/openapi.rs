//! The bundled OpenAPI document for validators: OpenAPI 3.0's `nullable` is not a JSON Schema keyword, so
//! [`json_schema_components`] rewrites every `nullable: true` schema as `anyOf: [schema, {type: null}]`, and
//! [`schema_for`] wraps any schema of the document (a component, a response body) with those components so that
//! a JSON Schema validator (such as the `jsonschema` crate) resolves its `#/components/...` references.

use serde_json::{json, Value};

/// [`crate::OPENAPI_JSON`], parsed.
pub fn document() -> Value {
    serde_json::from_str(crate::OPENAPI_JSON).expect("the bundled document is JSON")
}

/// The document's `components`, with `nullable` converted.
pub fn json_schema_components() -> Value {
    let mut components = document()["components"].take();
    convert_nullable(&mut components);
    components
}

/// A JSON Schema for `schema` (for example `{"$ref": "#/components/schemas/BridgeQuote"}`), self-contained.
pub fn schema_for(schema: &Value) -> Value {
    let mut schema = schema.clone();
    convert_nullable(&mut schema);
    json!({ "allOf": [schema], "components": json_schema_components() })
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
