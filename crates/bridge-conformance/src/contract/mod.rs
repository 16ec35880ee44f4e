//! The base of both tools: the contract, and the checks of one exchange against it. The runner and the proxy
//! (`runner/`, `proxy/`) each stand on it; it imports neither.
//!
//! * This module, [`Contract`]: the contract as both tools use it, all of it read from the workspace's own sources
//!   of truth: the operations (`bridge_contract::every_operation!`, so a new operation of the schema is picked up
//!   by the next build), the bundled OpenAPI document (`bridge_contract::OPENAPI_JSON`: documented statuses and
//!   their response schemas, tags, security schemes) and the server's decoder tables (`bridge_server::shapes`).
//! * [`route`]: which operation a method and path are; [`decode`]: what the contract's decoder makes of a
//!   request; [`exchange`]: the checks of one exchange (route, decode, status and shape, typed); [`answer_json`]:
//!   an answer's body read once for all of them; [`violation`]:
//!   a broken rule and where; [`members`]: what the document says of each location of a JSON value;
//!   [`redact`]: credentials never written whole.
//!
//! Response validation: the schema of the documented status is validated with the `jsonschema` crate
//! (draft 7, formats on). OpenAPI 3.0's `nullable: true` is not JSON Schema: `bridge_contract::openapi` (the
//! workspace's one conversion, shared with its own tests) rewrites it as `anyOf: [<schema>, {type: null}]`;
//! OpenAPI-only keywords (`discriminator`, `x-*`, `example`) are ignored by JSON Schema validators anyway.

pub mod answer_json;
pub mod decode;
pub mod exchange;
pub mod members;
pub mod redact;
pub mod route;
pub mod violation;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use bridge_contract::operations::*;
use bridge_contract::{AnyOperation, ErrorResponse, Operation, Security, OPENAPI_JSON};
use bridge_server::decode::shape::OperationShapes;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::contract::answer_json::AnswerJson;
use crate::contract::violation::{Rule, Violation};

/// One operation of the document.
#[derive(Debug, Clone)]
pub struct OpInfo {
    /// The operation.
    pub operation: AnyOperation,
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
    /// Decodes an answer body of a status into the operation's generated Rust type (2xx: `Operation::Response`,
    /// others: `Operation::Error`), from the answer already read for the schema check; the error is a JSON pointer
    /// and serde's message.
    pub typed: TypedDecode,
}

/// See [`OpInfo::typed`].
pub type TypedDecode = fn(u16, &[u8], &AnswerJson) -> Result<(), (String, String)>;

/// Decodes an answer of `O` into its generated type (see [`OpInfo::typed`]). The common case, a body the type
/// accepts, is decoded from the `Value` the schema check read (no second parse: `scripts/profile-proxy.sh`) when
/// that `Value` holds what was sent (no repeated member), else from the bytes, where a plain struct refuses a
/// repeated member as it always did. A refused body is decoded again from the bytes, with its path tracked, so that
/// the error has the message and location of a decode from the bytes.
fn typed<O: Operation>(status: u16, body: &[u8], answer: &AnswerJson) -> Result<(), (String, String)> {
    let from_value = answer.holds_what_was_sent();
    if (200..300).contains(&status) {
        let accepted = if from_value {
            O::Response::deserialize(&answer.value).is_ok()
        } else {
            serde_json::from_slice::<O::Response>(body).is_ok()
        };
        if accepted {
            return Ok(());
        }
        let de = &mut serde_json::Deserializer::from_slice(body);
        return serde_path_to_error::deserialize::<_, O::Response>(de).map(|_| ()).map_err(|e| {
            let mut pointer = String::new();
            for segment in e.path().iter() {
                match segment {
                    serde_path_to_error::Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
                    serde_path_to_error::Segment::Map { key } => {
                        pointer.push('/');
                        pointer.push_str(&crate::contract::members::escape(key));
                    }
                    serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
                }
            }
            (pointer, e.into_inner().to_string())
        });
    }
    let decoded = if from_value {
        <O::Error as ErrorResponse>::from_value(status, &answer.value).map(|r| r.map(drop))
    } else {
        <O::Error as ErrorResponse>::from_response(status, body).map(|r| r.map(drop))
    };
    match decoded {
        // Refused: the message of a decode from the bytes (with serde_json's position).
        Some(Err(_)) => match <O::Error as ErrorResponse>::from_response(status, body) {
            Some(Err(e)) => Err((String::new(), e.to_string())),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

impl OpInfo {
    /// `GET /bridge/history/user (listBridgeHistory)`.
    pub fn describe(&self) -> String {
        format!("{} {} ({})", self.method, self.path, self.id)
    }
}

/// The contract as the runner and the proxy use it. One per process ([`contract`]).
pub struct Contract {
    ops: Vec<OpInfo>,
    doc: Value,
    /// `components`, with `nullable` converted, as the root of every validation schema (so `$ref`s resolve).
    components: Value,
    validators: RwLock<HashMap<(&'static str, u16), Arc<Documented>>>,
    /// The header of the `legacyApiKey` security scheme.
    pub api_key_header: String,
}

/// What the document says about one status of one operation.
enum Documented {
    /// Not documented: the list of statuses that are.
    No(Vec<String>),
    /// Documented without a body.
    Empty,
    /// Documented with a JSON body: its validator, and its schema as the document writes it.
    Json(Box<jsonschema::Validator>, Value),
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
                    operation: AnyOperation::$ty,
                    id: <$ty as Operation>::ID,
                    method,
                    path,
                    security: <$ty as Operation>::SECURITY,
                    alias_of: <$ty as Operation>::ALIAS_OF,
                    sandbox_only,
                    shapes,
                    typed: typed::<$ty>,
                });
            }};
        }
        bridge_contract::every_operation!(op);
        let in_order = ops.iter().enumerate().all(|(i, op)| op.operation as usize == i);
        anyhow::ensure!(in_order && ops.len() == AnyOperation::ALL.len(), "the operations are not AnyOperation's");
        let api_key_header = doc["components"]["securitySchemes"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(_, scheme)| scheme["type"] == "apiKey" && scheme["in"] == "header")
            .and_then(|(_, scheme)| scheme["name"].as_str())
            .unwrap_or("x-api-key")
            .to_owned();
        let components = bridge_contract::openapi::json_schema_components();
        Ok(Self { ops, doc, components, validators: RwLock::new(HashMap::new()), api_key_header })
    }

    /// Every operation, in the document's order.
    pub fn operations(&self) -> &[OpInfo] {
        &self.ops
    }

    /// What the contract says of `operation`.
    pub fn op(&self, operation: AnyOperation) -> &OpInfo {
        &self.ops[operation as usize]
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

    /// The schema of the JSON body of `status` of `op` (as written in the document, `$ref`s into its components),
    /// `None` when the status is undocumented or has no JSON body.
    pub fn response_schema(&self, op: &OpInfo, status: u16) -> Option<&Value> {
        let responses = &self.doc["paths"][op.path][op.method.to_ascii_lowercase()]["responses"];
        let mut answer = responses.get(status.to_string()).or_else(|| responses.get("default"))?;
        if let Some(reference) = answer.get("$ref").and_then(Value::as_str) {
            answer = self.doc.pointer(reference.trim_start_matches('#'))?;
        }
        answer.pointer("/content/application~1json/schema")
    }

    fn documented(&self, op: &OpInfo, status: u16) -> anyhow::Result<Arc<Documented>> {
        let key = (op.id, status);
        if let Some(found) = self.validators.read().unwrap().get(&key) {
            return Ok(found.clone());
        }
        let responses = &self.doc["paths"][op.path][op.method.to_ascii_lowercase()]["responses"];
        let documented = if responses.get(status.to_string()).or_else(|| responses.get("default")).is_none() {
            Documented::No(self.documented_statuses(op))
        } else {
            match self.response_schema(op, status) {
                None => Documented::Empty,
                Some(schema) => {
                    let mut converted = schema.clone();
                    bridge_contract::openapi::to_json_schema(&mut converted);
                    let root = json!({"allOf": [converted], "components": self.components});
                    let validator = jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft7)
                        .should_validate_formats(true)
                        .build(&root)
                        .map_err(|e| anyhow::anyhow!("the schema of {} {status} does not compile: {e}", op.id))?;
                    Documented::Json(Box::new(validator), schema.clone())
                }
            }
        };
        let documented = Arc::new(documented);
        self.validators.write().unwrap().insert(key, documented.clone());
        Ok(documented)
    }

    /// Checks one answer against the document: the status is documented for the operation, a documented JSON
    /// body comes as `application/json`, validates against the status's schema (each error named by the
    /// [`Rule`] it breaks, at its JSON pointer), and decodes into the operation's generated Rust type.
    pub fn answer_problems(
        &self,
        op: &OpInfo,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Vec<AnswerProblem> {
        let documented = match self.documented(op, status) {
            Ok(d) => d,
            Err(e) => return vec![AnswerProblem::new(Rule::Status, "answer.status", e.to_string())],
        };
        match &*documented {
            Documented::No(statuses) => vec![AnswerProblem::new(
                Rule::Status,
                "answer.status",
                format!(
                    "status {status} is not documented (documented: {}); body: {}",
                    statuses.join(", "),
                    excerpt(body)
                ),
            )],
            Documented::Empty => Vec::new(),
            Documented::Json(validator, schema) => {
                let mut problems = Vec::new();
                let media =
                    content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
                if media != "application/json" {
                    problems.push(AnswerProblem::new(
                        Rule::ContentType,
                        "answer.headers/content-type",
                        format!("content type is {:?}, not application/json", content_type.unwrap_or("(none)")),
                    ));
                }
                // Read once: the schema check and the typed decode both read this.
                let answer = match AnswerJson::read(body) {
                    Err(e) => {
                        problems.push(AnswerProblem::new(
                            Rule::Json,
                            "answer",
                            format!("body is not JSON ({e}): {}", excerpt(body)),
                        ));
                        return problems;
                    }
                    Ok(answer) => answer,
                };
                let value = &answer.value;
                // Valid is the common case, and `is_valid` is cheaper than collecting errors.
                let valid = validator.is_valid(value);
                if !valid {
                    for error in validator.iter_errors(value).take(5) {
                        problems.push(self.schema_problem(schema, value, &error));
                    }
                }
                if valid {
                    if let Err((pointer, message)) = (op.typed)(status, body, &answer) {
                        let at = format!("answer{pointer}");
                        let offending = value.pointer(&pointer).cloned();
                        problems.push(AnswerProblem {
                            rule: Rule::Typed,
                            at,
                            message: format!("the contract's Rust type refuses the body: {message}"),
                            value: offending,
                        });
                    }
                }
                problems
            }
        }
    }

    /// The rule and location of one schema error.
    fn schema_problem(&self, schema: &Value, value: &Value, error: &jsonschema::ValidationError<'_>) -> AnswerProblem {
        use jsonschema::error::ValidationErrorKind as Kind;
        let pointer = error.instance_path().to_string();
        let location = crate::contract::members::location(&self.doc, schema, value, &pointer);
        let is = |name: &str| location.as_ref().is_some_and(|l| l.is(name));
        // A required member that is the tag of a union here.
        let parent_tag = |member: &str| location.as_ref().is_some_and(|l| l.union_tags().contains(&member));
        let last = pointer.rsplit('/').next().unwrap_or_default().to_owned();
        let parent = pointer.rsplit_once('/').map(|(p, _)| p.to_owned()).unwrap_or_default();
        let parent_is_union_of_last = || {
            crate::contract::members::location(&self.doc, schema, value, &parent)
                .is_some_and(|l| l.union_tags().contains(&last.as_str()))
        };
        let (rule, at) = match error.kind() {
            Kind::AdditionalProperties { unexpected } => {
                let member = unexpected.first().map(|m| crate::contract::members::escape(m)).unwrap_or_default();
                (Rule::ClosedObject, format!("{pointer}/{member}"))
            }
            Kind::Required { property } => {
                let member = property.as_str().unwrap_or_default();
                let rule = if parent_tag(member) { Rule::Union } else { Rule::RequiredMember };
                (rule, format!("{pointer}/{}", crate::contract::members::escape(member)))
            }
            Kind::OneOfNotValid { .. } | Kind::OneOfMultipleValid { .. } | Kind::AnyOf { .. } => {
                (Rule::Union, pointer.clone())
            }
            _ if is("DecimalString") => (Rule::DecimalString, pointer.clone()),
            _ if is("DateString") => (Rule::Date, pointer.clone()),
            Kind::Enum { .. } | Kind::Constant { .. } if !pointer.is_empty() && parent_is_union_of_last() => {
                (Rule::Union, pointer.clone())
            }
            _ => (Rule::Shape, pointer.clone()),
        };
        // The offending value: the unexpected member's, none for a missing member, else the instance.
        let offending = match error.kind() {
            Kind::AdditionalProperties { .. } => value.pointer(&at).cloned(),
            Kind::Required { .. } => None,
            _ => Some(error.instance().clone().into_owned()),
        };
        AnswerProblem { rule, at: format!("answer{at}"), message: error.to_string(), value: offending }
    }

    /// [`Self::answer_problems`] as lines (`/payAmount: 1.5 is not of type "string"`), for the runner's checks.
    pub fn check_response(&self, op: &OpInfo, status: u16, content_type: Option<&str>, body: &[u8]) -> Vec<String> {
        self.answer_problems(op, status, content_type, body).into_iter().map(|p| p.line()).collect()
    }
}

/// One way an answer differs from the document.
#[derive(Debug, Clone)]
pub struct AnswerProblem {
    pub rule: Rule,
    /// `answer/fees/fee`, `answer.status`, `answer.headers/content-type`.
    pub at: String,
    pub message: String,
    /// The offending value.
    pub value: Option<Value>,
}

impl AnswerProblem {
    fn new(rule: Rule, at: &str, message: String) -> Self {
        Self { rule, at: at.to_owned(), message, value: None }
    }

    /// `/payAmount: <message>` for body problems, the message alone otherwise.
    pub fn line(&self) -> String {
        match self.at.strip_prefix("answer") {
            Some(pointer) if pointer.is_empty() || pointer.starts_with('/') => {
                format!(
                    "{} {}",
                    if pointer.is_empty() { "(body):".to_owned() } else { format!("{pointer}:") },
                    self.message
                )
            }
            _ => self.message.clone(),
        }
    }

    /// As a [`Violation`] of operation `op`.
    pub fn violation(&self, op: &str) -> Violation {
        let v = Violation::new(op, self.rule, self.at.clone(), self.message.clone());
        match &self.value {
            Some(value) => v.with_value(value),
            None => v,
        }
    }
}

/// At most 300 characters of a body, for messages.
pub fn excerpt(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty)".into();
    }
    violation::bounded(&String::from_utf8_lossy(body), 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_known_with_its_tables() {
        let c = contract();
        assert!(c.operations().len() >= 17);
        assert!(c.op(AnyOperation::SandboxAdvanceClock).sandbox_only);
        assert!(!c.op(AnyOperation::QuoteBridge).sandbox_only);
        assert_eq!(c.op(AnyOperation::CreateDepositAddressesLegacy).alias_of, Some("createDepositAddresses"));
        assert_eq!(c.api_key_header, "x-api-key");
    }

    #[test]
    fn a_wrong_type_is_reported_with_its_location() {
        let c = contract();
        let op = c.op(AnyOperation::CommitQuote);
        assert!(c.check_response(op, 200, Some("application/json"), br#"{"quoteId":"q1"}"#).is_empty());
        let problems = c.check_response(op, 200, Some("application/json"), br#"{"quoteId":1}"#);
        assert!(problems.iter().any(|p| p.contains("/quoteId")), "{problems:?}");
        let problems = c.check_response(op, 500, Some("text/plain"), b"oops");
        assert!(problems[0].contains("status 500 is not documented"), "{problems:?}");
        let problems = c.check_response(op, 200, Some("text/plain"), br#"{"quoteId":"q1"}"#);
        assert!(problems[0].contains("content type"), "{problems:?}");
    }

    /// The answer is read once, into the `Value` the schema check reads; the typed decode reads that `Value` unless
    /// an object repeated a member (a `Value` keeps the last one only): a repeat the generated type refuses from
    /// the bytes is still reported, with the bytes' message, for success and error answers alike.
    #[test]
    fn a_repeated_member_is_checked_as_sent() {
        let c = contract();
        let commit = c.op(AnyOperation::CommitQuote);
        let once = br#"{"quoteId":"q1"}"#;
        assert!(c.check_response(commit, 200, Some("application/json"), once).is_empty());
        let twice = br#"{"quoteId":"q1","quoteId":"q2"}"#;
        let problems = c.answer_problems(commit, 200, Some("application/json"), twice);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].rule, Rule::Typed);
        assert!(problems[0].message.ends_with("duplicate field `quoteId` at line 1 column 25"), "{problems:?}");
        let unauthorized = br#"{"_tag":"Unauthorized","message":"no","message":"no"}"#;
        let problems = c.answer_problems(commit, 401, Some("application/json"), unauthorized);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("duplicate field `message`"), "{problems:?}");
        // A wrong type is refused from the `Value` and reported with the message of a decode from the bytes.
        let wrong = br#"{"_tag":"Unauthorized","message":1}"#;
        let problems = c.answer_problems(commit, 401, Some("application/json"), wrong);
        assert!(problems.iter().any(|p| p.rule != Rule::Typed), "the schema refuses it first: {problems:?}");
    }
}
