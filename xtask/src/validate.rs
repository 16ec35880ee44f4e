//! Is the bundled document valid OpenAPI 3.0? Two independent validators: the OpenAPI Initiative's JSON Schema
//! for 3.0 documents (vendored in `xtask/meta/`), run with the `jsonschema` crate, and the typed `openapiv3`
//! model that progenitor reads.

pub fn problems(doc: &serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    let meta: serde_json::Value =
        serde_json::from_str(include_str!("../meta/openapi-3.0.schema.json")).expect("vendored meta-schema is JSON");
    match jsonschema::draft4::new(&meta) {
        Ok(validator) => {
            for error in validator.iter_errors(doc) {
                problems.push(format!("not valid OpenAPI 3.0 at {}: {error}", error.instance_path()));
            }
        }
        Err(e) => problems.push(format!("the OpenAPI 3.0 meta-schema does not compile: {e}")),
    }
    if let Err(e) = serde_json::from_value::<openapiv3::OpenAPI>(doc.clone()) {
        problems.push(format!("openapiv3 cannot read the document: {e}"));
    }
    problems
}
