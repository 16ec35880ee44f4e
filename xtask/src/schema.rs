//! Reading the bundled document: components and `$ref`s, operations with their parameters, bodies, answers and
//! security. The generators (`rust_types`, `operations`, `server`, `client`) all read the schema through these
//! helpers; this module imports none of them (a leaf), so no generator imports another to read the document.

use anyhow::{anyhow, bail};
use heck::ToUpperCamelCase;
use serde_norway::{Mapping, Value};

use crate::bundle::Yaml;
use crate::tokens::RustType;

/// The HTTP methods an operation can have, in the order a path item lists them.
pub const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Components the contract maps to hand-written scalars (`src/scalars/`) instead of generating a type.
const SCALARS: [(&str, &str); 3] = [
    ("DecimalString", "crate::DecimalString"),
    ("DecimalNumber", "crate::DecimalNumber"),
    ("DateString", "crate::DateString"),
];

/// The hand-written Rust type of a scalar component, if `name` is one.
pub fn scalar_type(name: &str) -> Option<&'static str> {
    SCALARS.iter().find(|(s, _)| *s == name).map(|(_, r)| *r)
}

pub fn str_of<'v>(v: &'v Yaml, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

pub fn u64_of(v: &Yaml, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

pub fn f64_of(v: &Yaml, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

pub fn bool_of(v: &Yaml, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// `components.schemas`, in the document's order.
pub fn component_schemas(doc: &Yaml) -> anyhow::Result<&Mapping> {
    doc.get("components")
        .and_then(|c| c.get("schemas"))
        .and_then(Value::as_mapping)
        .ok_or_else(|| anyhow!("no components.schemas"))
}

/// The component a `#/components/schemas/…` reference names: its name and schema.
pub fn component<'a>(doc: &'a Yaml, reference: &str) -> anyhow::Result<(&'a str, &'a Yaml)> {
    let name =
        reference.strip_prefix("#/components/schemas/").ok_or_else(|| anyhow!("unsupported $ref {reference}"))?;
    component_schemas(doc)?
        .iter()
        .find(|(k, _)| k.as_str() == Some(name))
        .and_then(|(k, v)| Some((k.as_str()?, v)))
        .ok_or_else(|| anyhow!("unresolved $ref {reference}"))
}

/// The names an object schema lists as `required`.
pub fn required(schema: &Yaml) -> Vec<&str> {
    schema.get("required").and_then(Value::as_sequence).into_iter().flatten().filter_map(Value::as_str).collect()
}

/// An object whose members are all of one schema (`additionalProperties`) and that declares none by name.
pub fn is_map(schema: &Yaml) -> bool {
    schema.get("properties").is_none() && schema.get("additionalProperties").is_some_and(Value::is_mapping)
}

/// Follows a `$ref` to `components/parameters`.
pub fn resolve_parameter<'a>(doc: &'a Yaml, param: &'a Yaml) -> anyhow::Result<&'a Yaml> {
    let Some(reference) = str_of(param, "$ref") else { return Ok(param) };
    let name = reference.strip_prefix("#/components/parameters/").ok_or_else(|| anyhow!("bad parameter ref"))?;
    doc.get("components")
        .and_then(|c| c.get("parameters"))
        .and_then(|p| p.get(name))
        .ok_or_else(|| anyhow!("unresolved {reference}"))
}

/// The parameters of an operation, references followed, in the document's order.
pub fn parameters<'a>(doc: &'a Yaml, op: &'a Yaml) -> anyhow::Result<Vec<&'a Yaml>> {
    op.get("parameters").and_then(Value::as_sequence).into_iter().flatten().map(|p| resolve_parameter(doc, p)).collect()
}

/// The parameters of an operation that are `in` a location (`path`, `query`, `header`).
pub fn parameters_in<'a>(doc: &'a Yaml, op: &'a Yaml, location: &str) -> anyhow::Result<Vec<&'a Yaml>> {
    Ok(parameters(doc, op)?.into_iter().filter(|p| str_of(p, "in") == Some(location)).collect())
}

/// One operation as every generator sees it.
pub struct Op<'a> {
    pub id: String,
    pub method: &'static str,
    pub path: String,
    pub op: &'a Yaml,
    /// The operation whose parameter structs this one uses (itself, or the one it aliases).
    pub params_of: String,
    pub alias_of: Option<String>,
}

/// Every operation, in the document's order.
pub fn operations(doc: &Yaml) -> anyhow::Result<Vec<Op<'_>>> {
    let paths = doc.get("paths").and_then(Value::as_mapping).ok_or_else(|| anyhow!("no paths"))?;
    let mut ops = Vec::new();
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let id = str_of(op, "operationId").ok_or_else(|| anyhow!("operation without id"))?;
            let alias_of = str_of(op, "x-alias-of").map(str::to_owned);
            ops.push(Op {
                id: id.to_owned(),
                method,
                path: path.as_str().unwrap_or_default().to_owned(),
                op,
                params_of: alias_of.clone().unwrap_or_else(|| id.to_owned()),
                alias_of,
            });
        }
    }
    Ok(ops)
}

/// What an operation takes besides its caller, each `None` when it takes none: its path and query parameter
/// structs (`{ParamsOf}Path`, `{ParamsOf}Query`: an alias uses those of the operation it aliases) and its body.
pub struct Inputs {
    pub path: Option<RustType>,
    pub query: Option<RustType>,
    pub body: Option<RustType>,
}

pub fn inputs(doc: &Yaml, op: &Op<'_>) -> anyhow::Result<Inputs> {
    let base = op.params_of.to_upper_camel_case();
    let parameters = |location: &str, suffix: &str| -> anyhow::Result<Option<RustType>> {
        let any = !parameters_in(doc, op.op, location)?.is_empty();
        Ok(any.then(|| RustType::Path(format!("{base}{suffix}"))))
    };
    let body = match op.op.get("requestBody").and_then(|b| content_schema(doc, b)) {
        Some(schema) => Some(schema_type(&schema)?),
        None => None,
    };
    Ok(Inputs { path: parameters("path", "Path")?, query: parameters("query", "Query")?, body })
}

/// The Rust type of an operation's 200 answer (`None`: it has no JSON answer).
pub fn answer_type(doc: &Yaml, op: &Yaml) -> anyhow::Result<Option<RustType>> {
    match op.get("responses").and_then(|r| r.get("200")).and_then(|r| content_schema(doc, r)) {
        Some(schema) => Ok(Some(schema_type(&schema)?)),
        None => Ok(None),
    }
}

/// The Rust type of a response or body schema: a component (or scalar) by name, or a `Vec` of one.
pub fn schema_type(schema: &Yaml) -> anyhow::Result<RustType> {
    if let Some(r) = str_of(schema, "$ref") {
        let name = r.rsplit('/').next().unwrap_or_default();
        return Ok(RustType::Path(scalar_type(name).unwrap_or(name).to_owned()));
    }
    if str_of(schema, "type") == Some("array") {
        let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
        return Ok(RustType::Vec(Box::new(schema_type(items)?)));
    }
    bail!("answers and bodies refer to named components")
}

/// Follows a `$ref` to `components/responses`.
pub fn response<'a>(doc: &'a Yaml, response: &'a Yaml) -> &'a Yaml {
    match str_of(response, "$ref").and_then(|r| r.strip_prefix("#/components/responses/")) {
        Some(name) => {
            doc.get("components").and_then(|c| c.get("responses")).and_then(|r| r.get(name)).unwrap_or(response)
        }
        None => response,
    }
}

/// The JSON schema of a response or request body.
pub fn content_schema(doc: &Yaml, response_or_body: &Yaml) -> Option<Yaml> {
    let r = response(doc, response_or_body);
    r.get("content").and_then(|c| c.get("application/json")).and_then(|m| m.get("schema")).cloned()
}

/// One documented error answer of an operation.
pub struct ErrorAnswer {
    pub status: u16,
    /// The component (the error enum's variant and its type).
    pub ty: String,
    pub description: String,
}

/// Error answers of an operation (status 400 and up), in the document's order.
pub fn errors(doc: &Yaml, op: &Yaml) -> anyhow::Result<Vec<ErrorAnswer>> {
    let mut out = Vec::new();
    for (status, r) in op.get("responses").and_then(Value::as_mapping).into_iter().flatten() {
        let status: u16 = status.as_str().unwrap_or_default().parse()?;
        if status < 400 {
            continue;
        }
        let schema = content_schema(doc, r).ok_or_else(|| anyhow!("error {status} without a JSON body"))?;
        let ty = schema_type(&schema)?.to_string();
        let description = str_of(response(doc, r), "description").unwrap_or_default().to_owned();
        out.push(ErrorAnswer { status, ty, description });
    }
    Ok(out)
}

/// Who may call an operation: the variant of `bridge_contract::Security` it has.
pub fn security(doc: &Yaml, op: &Yaml) -> &'static str {
    let sec = op.get("security").or_else(|| doc.get("security"));
    let names: Vec<&str> = sec
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|req| req.as_mapping().and_then(|m| m.keys().next()).and_then(Value::as_str))
        .collect();
    match names.as_slice() {
        [] => "None",
        ["bearerAuth"] => "Bearer",
        _ => "BearerOrApiKey",
    }
}

/// The variant types of the discriminated union component `name` (empty when it is not one).
pub fn union_variants(doc: &Yaml, name: &str) -> Vec<String> {
    let schema = doc.get("components").and_then(|c| c.get("schemas")).and_then(|s| s.get(name));
    schema
        .filter(|s| s.get("discriminator").is_some())
        .and_then(|s| s.get("oneOf"))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|v| str_of(v, "$ref"))
        .filter_map(|r| r.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
        .collect()
}
