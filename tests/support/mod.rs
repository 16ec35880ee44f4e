//! Shared by the integration tests: the bundled OpenAPI document converted to plain JSON Schema.

use serde_json::{json, Value};

/// The OpenAPI document with every `nullable: true` schema turned into `anyOf: [schema, {type: null}]`, which
/// JSON Schema validators understand (OpenAPI 3.0's `nullable` is not a JSON Schema keyword).
pub fn json_schema_document() -> Value {
    let mut doc: Value = serde_json::from_str(bridge_contract::OPENAPI_JSON).expect("the bundled document is JSON");
    convert_nullable(&mut doc);
    doc
}

fn convert_nullable(value: &mut Value) {
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

/// A validator for one component, with `#/components/...` references resolved inside the document.
pub fn validator(doc: &Value, component: &str) -> jsonschema::Validator {
    let schema = json!({
        "$ref": format!("#/components/schemas/{component}"),
        "components": doc["components"].clone(),
    });
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .with_format("decimal-string", |s: &str| s.parse::<bridge_contract::DecimalString>().is_ok())
        .build(&schema)
        .unwrap_or_else(|e| panic!("schema of {component} compiles: {e}"))
}
