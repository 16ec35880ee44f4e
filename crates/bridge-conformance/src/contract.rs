//! What the runner knows of the contract, all of it read from the workspace's own sources of truth: the
//! operations (`bridge_contract::every_operation!`, so a new operation of the schema is picked up by the next
//! build), the bundled OpenAPI document (`bridge_contract::OPENAPI_JSON`: documented statuses and their
//! response schemas, tags, security schemes) and the server's decoder tables (`bridge_server::shapes`).
//!
//! Response validation: the schema of the documented status is validated with the `jsonschema` crate
//! (draft 7, formats on). OpenAPI 3.0's `nullable: true` is not JSON Schema: `bridge_contract::openapi` (the
//! workspace's one conversion, shared with its own tests) rewrites it as `anyOf: [<schema>, {type: null}]`;
//! OpenAPI-only keywords (`discriminator`, `x-*`, `example`) are ignored by JSON Schema validators anyway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use bridge_contract::operations::*;
use bridge_contract::{Operation, Security, OPENAPI_JSON};
use bridge_server::decode::shape::OperationShapes;
use serde_json::{json, Value};

/// One operation of the document.
#[derive(Debug, Clone)]
pub struct OpInfo {
    /// The `operationId`.
    pub id: &'static str,
    /// Upper-case HTTP method.
    pub method: &'static str,
    /// Path template with `{name}` parameters.
    pub path: &'static str,
    /// Who may call it.
    pub security: Security,
    /// `x-alias-of`: the operation this one is a deprecated alias of.
    pub alias_of: Option<&'static str>,
    /// Tagged `sandbox`: only a sandbox serves it (production answers 404).
    pub sandbox_only: bool,
    /// The decoder tables (path, query, body), in decoding order.
    pub shapes: &'static OperationShapes,
}

impl OpInfo {
    /// `GET /bridge/history/user (listBridgeHistory)`.
    pub fn describe(&self) -> String {
        format!("{} {} ({})", self.method, self.path, self.id)
    }
}

/// The contract as the runner uses it. One per process ([`contract`]).
pub struct Contract {
    ops: Vec<OpInfo>,
    doc: Value,
    /// `components`, with `nullable` converted, as the root of every validation schema (so `$ref`s resolve).
    components: Value,
    validators: Mutex<HashMap<(String, u16), Arc<Documented>>>,
    /// The header of the `legacyApiKey` security scheme.
    pub api_key_header: String,
}

/// What the document says about one status of one operation.
enum Documented {
    /// Not documented: the list of statuses that are.
    No(Vec<String>),
    /// Documented without a body.
    Empty,
    /// Documented with a JSON body and its schema.
    Json(Box<jsonschema::Validator>),
}

/// The contract, loaded once.
pub fn contract() -> &'static Contract {
    static CONTRACT: OnceLock<Contract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        Contract::load().expect("the bundled OpenAPI document is consistent with the generated operations")
    })
}

impl Contract {
    fn load() -> anyhow::Result<Self> {
        let doc: Value = serde_json::from_str(OPENAPI_JSON)?;
        let mut ops = Vec::new();
        macro_rules! op {
            ($ty:ident, $id:literal) => {{
                let method = <$ty as Operation>::METHOD;
                let path = <$ty as Operation>::PATH;
                let entry = &doc["paths"][path][method.to_ascii_lowercase()];
                anyhow::ensure!(entry["operationId"] == $id, "{} {} is not {} in the document", method, path, $id);
                let sandbox_only = entry["tags"].as_array().is_some_and(|tags| tags.iter().any(|t| t == "sandbox"));
                let shapes = bridge_server::shapes::by_operation_id($id)
                    .ok_or_else(|| anyhow::anyhow!("no decoder tables for {}", $id))?;
                ops.push(OpInfo {
                    id: <$ty as Operation>::ID,
                    method,
                    path,
                    security: <$ty as Operation>::SECURITY,
                    alias_of: <$ty as Operation>::ALIAS_OF,
                    sandbox_only,
                    shapes,
                });
            }};
        }
        bridge_contract::every_operation!(op);
        let api_key_header = doc["components"]["securitySchemes"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(_, scheme)| scheme["type"] == "apiKey" && scheme["in"] == "header")
            .and_then(|(_, scheme)| scheme["name"].as_str())
            .unwrap_or("x-api-key")
            .to_owned();
        let components = bridge_contract::openapi::json_schema_components();
        Ok(Self { ops, doc, components, validators: Mutex::new(HashMap::new()), api_key_header })
    }

    /// Every operation, in the document's order.
    pub fn operations(&self) -> &[OpInfo] {
        &self.ops
    }

    /// The operation with this `operationId`.
    pub fn op(&self, id: &str) -> &OpInfo {
        self.ops.iter().find(|o| o.id == id).unwrap_or_else(|| panic!("no operation {id} in the contract"))
    }

    /// The bundled OpenAPI document.
    pub fn document(&self) -> &Value {
        &self.doc
    }

    /// The statuses the document lists for an operation.
    pub fn documented_statuses(&self, op: &OpInfo) -> Vec<String> {
        self.doc["paths"][op.path][op.method.to_ascii_lowercase()]["responses"]
            .as_object()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn documented(&self, op: &OpInfo, status: u16) -> anyhow::Result<Arc<Documented>> {
        let key = (op.id.to_owned(), status);
        if let Some(found) = self.validators.lock().unwrap().get(&key) {
            return Ok(found.clone());
        }
        let responses = &self.doc["paths"][op.path][op.method.to_ascii_lowercase()]["responses"];
        let mut answer = responses.get(status.to_string()).or_else(|| responses.get("default")).cloned();
        if let Some(reference) = answer.as_ref().and_then(|a| a.get("$ref")).and_then(Value::as_str) {
            answer = self.doc.pointer(reference.trim_start_matches('#')).cloned();
        }
        let documented = match answer {
            None => Documented::No(self.documented_statuses(op)),
            Some(answer) => match answer.pointer("/content/application~1json/schema") {
                None => Documented::Empty,
                Some(schema) => {
                    let mut schema = schema.clone();
                    bridge_contract::openapi::to_json_schema(&mut schema);
                    let root = json!({"allOf": [schema], "components": self.components});
                    let validator = jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft7)
                        .should_validate_formats(true)
                        .build(&root)
                        .map_err(|e| anyhow::anyhow!("the schema of {} {status} does not compile: {e}", op.id))?;
                    Documented::Json(Box::new(validator))
                }
            },
        };
        let documented = Arc::new(documented);
        self.validators.lock().unwrap().insert(key, documented.clone());
        Ok(documented)
    }

    /// Checks one answer against the document: the status is documented for the operation, a documented JSON
    /// body comes as `application/json` and validates against the status's schema. Returns the problems.
    pub fn check_response(&self, op: &OpInfo, status: u16, content_type: Option<&str>, body: &[u8]) -> Vec<String> {
        let documented = match self.documented(op, status) {
            Ok(d) => d,
            Err(e) => return vec![e.to_string()],
        };
        match &*documented {
            Documented::No(statuses) => {
                vec![format!(
                    "status {status} is not documented (documented: {}); body: {}",
                    statuses.join(", "),
                    excerpt(body)
                )]
            }
            Documented::Empty => Vec::new(),
            Documented::Json(validator) => {
                let mut problems = Vec::new();
                let media =
                    content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
                if media != "application/json" {
                    problems
                        .push(format!("content type is {:?}, not application/json", content_type.unwrap_or("(none)")));
                }
                match serde_json::from_slice::<Value>(body) {
                    Err(e) => problems.push(format!("body is not JSON ({e}): {}", excerpt(body))),
                    Ok(value) => {
                        for error in validator.iter_errors(&value).take(5) {
                            let at = error.instance_path().to_string();
                            problems.push(format!(
                                "{} {error}",
                                if at.is_empty() { "(body):".to_owned() } else { format!("{at}:") }
                            ));
                        }
                    }
                }
                problems
            }
        }
    }
}

/// At most 300 characters of a body, for messages.
pub fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        out.push('…');
    }
    if out.is_empty() {
        "(empty)".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_known_with_its_tables() {
        let c = contract();
        assert!(c.operations().len() >= 17);
        assert!(c.op("sandboxAdvanceClock").sandbox_only);
        assert!(!c.op("quoteBridge").sandbox_only);
        assert_eq!(c.op("createDepositAddressesLegacy").alias_of, Some("createDepositAddresses"));
        assert_eq!(c.api_key_header, "x-api-key");
    }

    #[test]
    fn a_wrong_type_is_reported_with_its_location() {
        let c = contract();
        let op = c.op("commitQuote");
        assert!(c.check_response(op, 200, Some("application/json"), br#"{"quoteId":"q1"}"#).is_empty());
        let problems = c.check_response(op, 200, Some("application/json"), br#"{"quoteId":1}"#);
        assert!(problems.iter().any(|p| p.contains("/quoteId")), "{problems:?}");
        let problems = c.check_response(op, 500, Some("text/plain"), b"oops");
        assert!(problems[0].contains("status 500 is not documented"), "{problems:?}");
        let problems = c.check_response(op, 200, Some("text/plain"), br#"{"quoteId":"q1"}"#);
        assert!(problems[0].contains("content type"), "{problems:?}");
    }
}
