//! Shared by the integration tests: validators for the document's components.

use serde_json::{json, Value};

/// The OpenAPI document converted to JSON Schema (see `bridge_contract::openapi`).
pub fn json_schema_document() -> Value {
    let mut doc = bridge_contract::openapi::document();
    bridge_contract::openapi::to_json_schema(&mut doc);
    doc
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
