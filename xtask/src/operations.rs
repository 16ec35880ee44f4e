//! Generates `src/generated/operations.rs`: for every operation, a unit struct implementing
//! `bridge_contract::Operation` (id, method, path, security, parameter/body/answer types) and an error enum with
//! one variant per documented error status.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use heck::ToUpperCamelCase;
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{format_rust, HEADER};

pub const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

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

pub fn all(doc: &Yaml) -> anyhow::Result<Vec<Op<'_>>> {
    let paths = doc.get("paths").and_then(Value::as_mapping).ok_or_else(|| anyhow!("no paths"))?;
    let mut ops = Vec::new();
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let id = op.get("operationId").and_then(Value::as_str).ok_or_else(|| anyhow!("operation without id"))?;
            let alias_of = op.get("x-alias-of").and_then(Value::as_str).map(str::to_owned);
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

/// The component name (or `Vec<Name>`) of a response or body schema.
pub fn schema_type(schema: &Yaml) -> anyhow::Result<String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        let scalar = crate::rust_types::scalar_type(name);
        return Ok(scalar.unwrap_or(name).to_owned());
    }
    if schema.get("type").and_then(Value::as_str) == Some("array") {
        let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
        return Ok(format!("Vec<{}>", schema_type(items)?));
    }
    bail!("answers and bodies refer to named components")
}

/// Follows a `$ref` to `components/responses`.
pub fn response<'a>(doc: &'a Yaml, response: &'a Yaml) -> &'a Yaml {
    match response.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/responses/")) {
        Some(name) => {
            doc.get("components").and_then(|c| c.get("responses")).and_then(|r| r.get(name)).unwrap_or(response)
        }
        None => response,
    }
}

pub fn content_schema(doc: &Yaml, response_or_body: &Yaml) -> Option<Yaml> {
    let r = response(doc, response_or_body);
    r.get("content").and_then(|c| c.get("application/json")).and_then(|m| m.get("schema")).cloned()
}

/// Error answers of an operation: (status, variant/type name, description).
pub fn errors(doc: &Yaml, op: &Yaml) -> anyhow::Result<Vec<(u16, String, String)>> {
    let mut out = Vec::new();
    for (status, r) in op.get("responses").and_then(Value::as_mapping).into_iter().flatten() {
        let status: u16 = status.as_str().unwrap_or_default().parse()?;
        if status < 400 {
            continue;
        }
        let schema = content_schema(doc, r).ok_or_else(|| anyhow!("error {status} without a JSON body"))?;
        let ty = schema_type(&schema)?;
        let description = response(doc, r).get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
        out.push((status, ty, description));
    }
    Ok(out)
}

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
fn union_variants(doc: &Yaml, name: &str) -> Vec<String> {
    let schema = doc.get("components").and_then(|c| c.get("schemas")).and_then(|s| s.get(name));
    schema
        .filter(|s| s.get("discriminator").is_some())
        .and_then(|s| s.get("oneOf"))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("$ref").and_then(Value::as_str))
        .filter_map(|r| r.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
        .collect()
}

pub fn generate(doc: &Yaml) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut out = String::from("use serde::Serialize;\n\nuse crate::operation::{ErrorResponse, Operation, Security};\nuse crate::types::*;\n\n");
    let mut list = String::new();
    for op in all(doc)? {
        let name = op.id.to_upper_camel_case();
        let params = op.params_of.to_upper_camel_case();
        let has = |loc: &str| {
            op.op.get("parameters").and_then(Value::as_sequence).into_iter().flatten().any(|p| {
                let p = crate::rust_types::resolve_parameter(doc, p);
                p.get("in").and_then(Value::as_str) == Some(loc)
            })
        };
        let path_ty = if has("path") { format!("{params}Path") } else { "()".into() };
        let query_ty = if has("query") { format!("{params}Query") } else { "()".into() };
        let body_ty = match op.op.get("requestBody").and_then(|b| content_schema(doc, b)) {
            Some(schema) => schema_type(&schema)?,
            None => "()".into(),
        };
        let ok = op.op.get("responses").and_then(|r| r.get("200")).and_then(|r| content_schema(doc, r));
        let ok_ty = match ok {
            Some(schema) => schema_type(&schema)?,
            None => "()".into(),
        };
        let summary = op.op.get("summary").and_then(Value::as_str).unwrap_or_default();
        let errors = errors(doc, op.op)?;
        let method = op.method.to_uppercase();
        let deprecated = op.op.get("deprecated").and_then(Value::as_bool) == Some(true);
        let alias = match &op.alias_of {
            Some(a) => format!("Some({a:?})"),
            None => "None".into(),
        };
        writeln!(out, "/// `{method} {}` (`{}`): {summary}.", op.path, op.id)?;
        if deprecated {
            writeln!(out, "///\n/// Deprecated: kept for backward compatibility and to be removed.")?;
        }
        writeln!(out, "#[derive(Debug, Clone, Copy, Default)]\npub struct {name};\n")?;
        writeln!(out, "impl Operation for {name} {{")?;
        writeln!(out, "    const ID: &'static str = {:?};\n    const METHOD: &'static str = {method:?};\n    const PATH: &'static str = {:?};", op.id, op.path)?;
        writeln!(out, "    const SECURITY: Security = Security::{};\n    const DEPRECATED: bool = {deprecated};\n    const ALIAS_OF: Option<&'static str> = {alias};", security(doc, op.op))?;
        writeln!(out, "    type Path = {path_ty};\n    type Query = {query_ty};\n    type Body = {body_ty};\n    type Response = {ok_ty};\n    type Error = {name}Error;\n}}\n")?;
        writeln!(
            out,
            "/// Every documented error answer of `{}`.\n#[derive(Debug, Clone, PartialEq)]\npub enum {name}Error {{",
            op.id
        )?;
        for (status, ty, description) in &errors {
            writeln!(out, "    /// {status}: {}\n    {ty}({ty}),", description.lines().next().unwrap_or_default())?;
        }
        writeln!(out, "}}\n")?;
        writeln!(out, "impl ErrorResponse for {name}Error {{")?;
        let statuses: Vec<String> = errors.iter().map(|e| e.0.to_string()).collect();
        writeln!(out, "    const STATUSES: &'static [u16] = &[{}];", statuses.join(", "))?;
        writeln!(out, "    fn status(&self) -> u16 {{ match self {{")?;
        for (status, ty, _) in &errors {
            writeln!(out, "        Self::{ty}(_) => {status},")?;
        }
        writeln!(out, "    }} }}")?;
        writeln!(out, "    fn from_response(status: u16, body: &[u8]) -> Option<Result<Self, serde_json::Error>> {{ match status {{")?;
        for (status, ty, _) in &errors {
            writeln!(out, "        {status} => Some(serde_json::from_slice(body).map(Self::{ty})),")?;
        }
        writeln!(out, "        _ => None,\n    }} }}\n}}\n")?;
        writeln!(out, "impl Serialize for {name}Error {{\n    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{ match self {{")?;
        for (_, ty, _) in &errors {
            writeln!(out, "        Self::{ty}(v) => v.serialize(serializer),")?;
        }
        writeln!(out, "    }} }}\n}}\n")?;
        for (_, ty, _) in &errors {
            writeln!(out, "impl From<{ty}> for {name}Error {{ fn from(v: {ty}) -> Self {{ Self::{ty}(v) }} }}\n")?;
        }
        // A variant of an error union converts too (`InvalidRequest` into the 422 union of a quote), when it belongs
        // to exactly one of the operation's error answers and is not one itself.
        let mut owners: std::collections::BTreeMap<String, Vec<&str>> = std::collections::BTreeMap::new();
        for (_, ty, _) in &errors {
            for variant in union_variants(doc, ty) {
                owners.entry(variant).or_default().push(ty);
            }
        }
        for (variant, union) in owners {
            if let [union] = union.as_slice() {
                if !errors.iter().any(|(_, ty, _)| *ty == variant) {
                    writeln!(out, "impl From<{variant}> for {name}Error {{ fn from(v: {variant}) -> Self {{ Self::{union}({union}::from(v)) }} }}\n")?;
                }
            }
        }
        writeln!(list, "        $callback!({name}, {:?});", op.id)?;
    }
    // Header names the document states (security scheme, webhook callback), so no crate writes them by hand.
    let api_key_header = doc
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(|s| s.get("legacyApiKey"))
        .and_then(|k| k.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("components.securitySchemes.legacyApiKey.name is missing"))?;
    let signature_header = all(doc)?
        .iter()
        .filter_map(|op| op.op.get("callbacks").and_then(Value::as_mapping))
        .flat_map(|callbacks| callbacks.values())
        .filter_map(|cb| cb.as_mapping().and_then(|m| m.values().next()))
        .filter_map(|item| item.get("post").and_then(|p| p.get("parameters")).and_then(Value::as_sequence))
        .flatten()
        .find(|p| p.get("in").and_then(Value::as_str) == Some("header"))
        .and_then(|p| p.get("name").and_then(Value::as_str))
        .ok_or_else(|| anyhow!("the webhookEvent callback declares no signature header"))?
        .to_owned();
    writeln!(out, "/// The header of the legacy API key (`components.securitySchemes.legacyApiKey`).\npub const LEGACY_API_KEY_HEADER: &str = {api_key_header:?};\n")?;
    writeln!(out, "/// The header that carries a webhook delivery's signature (the `webhookEvent` callback).\npub const WEBHOOK_SIGNATURE_HEADER: &str = {signature_header:?};\n")?;
    writeln!(
        out,
        "/// Calls `$callback!(Operation, \"operationId\");` once for every operation, in the document's order.\n#[macro_export]\nmacro_rules! every_operation {{\n    ($callback:ident) => {{\n{list}    }};\n}}"
    )?;
    let text = format!(
        "{HEADER}\n//! One unit struct per operation, implementing [`crate::Operation`], and its error enum.\n\n{}",
        format_rust(&out)?
    );
    Ok(vec![(PathBuf::from("src/generated/operations.rs"), text)])
}
