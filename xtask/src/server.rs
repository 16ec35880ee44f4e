//! Generates the server crate's code:
//!
//! * `crates/bridge-server/src/generated/shapes.rs`: the request decoder's tables, one static per request
//!   schema (path parameters, query parameters, body), with fields in declaration order and every
//!   constraint and default of the schema;
//! * `crates/bridge-server/src/generated/api.rs`: the `BridgeApi` trait (one async method per operation; an
//!   `x-alias-of` operation shares the method of the operation it aliases) and its route table, and the
//!   `SandboxApi` trait of the sandbox helpers (the operations tagged `sandbox`) and theirs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{format_rust, HEADER};
use crate::operations::{self, Op};
use crate::rust_types::resolve_parameter;

pub fn generate(doc: &Yaml) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let ops = operations::all(doc)?;
    let mut shapes = Shapes { doc, statics: BTreeMap::new(), order: Vec::new() };
    let mut op_tables = String::new();
    for op in &ops {
        let base = op.id.to_shouty_snake_case();
        let path = shapes.parameters(op, "path")?;
        let query = shapes.parameters(op, "query")?;
        let body = match op.op.get("requestBody") {
            Some(body) => {
                let schema = operations::content_schema(doc, body)
                    .ok_or_else(|| anyhow!("{}: body without JSON schema", op.id))?;
                let required = body.get("required").and_then(Value::as_bool) == Some(true);
                format!("Some(BodyShape {{ shape: {}, required: {required} }})", shapes.shape(&schema, false)?)
            }
            None => "None".into(),
        };
        writeln!(
            op_tables,
            "/// Decoder tables of `{} {}` (`{}`).\npub static {base}: OperationShapes = OperationShapes {{ operation_id: {:?}, path_names: &{:?}, path: {path}, query: {query}, body: {body} }};\n",
            op.method.to_uppercase(),
            op.path,
            op.id,
            op.id,
            path_parameter_names(&op.path)
        )?;
    }
    let mut text = String::from("use crate::decode::shape::*;\n\n");
    for name in &shapes.order {
        text.push_str(&shapes.statics[name]);
    }
    text.push_str(&op_tables);
    text.push_str("/// The decoder tables of an operation, by `operationId`.\npub fn by_operation_id(id: &str) -> Option<&'static OperationShapes> {\n    match id {\n");
    for op in &ops {
        writeln!(text, "        {:?} => Some(&{}),", op.id, op.id.to_shouty_snake_case())?;
    }
    text.push_str("        _ => None,\n    }\n}\n");
    let shapes_rs = format!(
        "{HEADER}\n//! The request decoder's tables: every request schema of the document, fields in declaration order.\n\n{}",
        format_rust(&text)?
    );
    let api_rs = format!(
        "{HEADER}\n//! The `BridgeApi` trait (one method per operation), the `SandboxApi` trait (the sandbox helpers) and their route tables.\n\n{}",
        format_rust(&api(doc, &ops)?)?
    );
    Ok(vec![
        (PathBuf::from("crates/bridge-server/src/generated/shapes.rs"), shapes_rs),
        (PathBuf::from("crates/bridge-server/src/generated/api.rs"), api_rs),
    ])
}

struct Shapes<'a> {
    doc: &'a Yaml,
    statics: BTreeMap<String, String>,
    order: Vec<String>,
}

impl<'a> Shapes<'a> {
    fn component(&self, reference: &str) -> anyhow::Result<(&'a str, &'a Yaml)> {
        let name = reference.strip_prefix("#/components/schemas/").ok_or_else(|| anyhow!("bad $ref {reference}"))?;
        let schemas = self.doc.get("components").and_then(|c| c.get("schemas")).and_then(Value::as_mapping).unwrap();
        schemas
            .iter()
            .find(|(k, _)| k.as_str() == Some(name))
            .map(|(k, v)| (k.as_str().unwrap(), v))
            .ok_or_else(|| anyhow!("unresolved {reference}"))
    }

    /// The struct shape of an operation's path or query parameters (`None` when it has none).
    fn parameters(&mut self, op: &Op<'a>, location: &str) -> anyhow::Result<String> {
        let mut fields = Vec::new();
        for param in op.op.get("parameters").and_then(Value::as_sequence).into_iter().flatten() {
            let param = resolve_parameter(self.doc, param);
            if param.get("in").and_then(Value::as_str) != Some(location) {
                continue;
            }
            let name = param.get("name").and_then(Value::as_str).unwrap();
            let schema = param.get("schema").ok_or_else(|| anyhow!("parameter without schema"))?;
            let required = param.get("required").and_then(Value::as_bool) == Some(true);
            fields.push(self.field(name, schema, required, true)?);
        }
        if fields.is_empty() {
            return Ok("None".into());
        }
        let name = format!("{}{}", op.id.to_upper_camel_case(), location.to_upper_camel_case());
        let ident = format!("STRUCT_{}", name.to_shouty_snake_case());
        if !self.statics.contains_key(&name) {
            let text = format!(
                "pub static {ident}: StructShape = StructShape {{ name: {name:?}, fields: &[{}] }};\n\n",
                fields.join(", ")
            );
            self.statics.insert(name.clone(), text);
            self.order.push(name);
        }
        Ok(format!("Some(&{ident})"))
    }

    fn field(&mut self, name: &str, schema: &Yaml, required: bool, from_string: bool) -> anyhow::Result<String> {
        let default = schema.get("default").or_else(|| {
            schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.component(r).ok())
                .and_then(|(_, s)| s.get("default"))
        });
        let default = match default {
            Some(d) => format!("Some({:?})", serde_json::to_string(d)?),
            None => "None".into(),
        };
        Ok(format!(
            "Field {{ name: {name:?}, required: {required}, default: {default}, shape: {} }}",
            self.shape(schema, from_string)?
        ))
    }

    /// A `Shape` expression for one schema. `from_string`: the value arrives as a string (path and query).
    fn shape(&mut self, schema: &Yaml, from_string: bool) -> anyhow::Result<String> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let (name, target) = self.component(reference)?;
            return match name {
                "DecimalString" => Ok("Shape::Decimal".into()),
                "DateString" => Ok("Shape::Date".into()),
                "DecimalNumber" => self.shape(target, from_string),
                _ if target.get("oneOf").is_some() => Ok(format!("Shape::Union(&{})", self.union(name, target)?)),
                _ if target.get("enum").is_some() => self.shape(target, from_string),
                _ if target.get("type").and_then(Value::as_str) == Some("object") => {
                    Ok(format!("Shape::Struct(&{})", self.structure(name, target)?))
                }
                _ => self.shape(target, from_string),
            };
        }
        if let Some([only]) = schema.get("allOf").and_then(Value::as_sequence).map(Vec::as_slice) {
            return self.shape(only, from_string);
        }
        let ty = schema.get("type").and_then(Value::as_str).ok_or_else(|| anyhow!("schema without type"))?;
        let num =
            |key: &str| schema.get(key).and_then(Value::as_f64).map_or("None".to_owned(), |v| format!("Some({v:?})"));
        let count =
            |key: &str| schema.get(key).and_then(Value::as_u64).map_or("None".to_owned(), |v| format!("Some({v})"));
        Ok(match ty {
            "string" => {
                if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
                    let values: Vec<String> =
                        values.iter().map(|v| format!("{:?}", v.as_str().unwrap_or_default())).collect();
                    return Ok(format!("Shape::Literals(&[{}])", values.join(", ")));
                }
                let pattern =
                    schema.get("pattern").and_then(Value::as_str).map_or("None".to_owned(), |p| format!("Some({p:?})"));
                let trim = schema.get("x-trim").and_then(Value::as_bool) == Some(true);
                format!(
                    "Shape::String(StringRules {{ min_length: {}, max_length: {}, pattern: {pattern}, trim: {trim} }})",
                    count("minLength"),
                    count("maxLength")
                )
            }
            "number" | "integer" => {
                let rules = format!(
                    "NumberRules {{ minimum: {}, maximum: {}, integer: {} }}",
                    num("minimum"),
                    num("maximum"),
                    ty == "integer"
                );
                if from_string {
                    format!("Shape::NumberFromString({rules})")
                } else {
                    format!("Shape::Number({rules})")
                }
            }
            "boolean" => "Shape::Boolean".into(),
            "array" => {
                let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
                format!(
                    "Shape::Array(&ArrayShape {{ items: {}, min_items: {}, max_items: {} }})",
                    self.shape(items, from_string)?,
                    count("minItems"),
                    count("maxItems")
                )
            }
            other => bail!("request schemas do not use type {other}"),
        })
    }

    fn structure(&mut self, name: &str, schema: &Yaml) -> anyhow::Result<String> {
        let ident = format!("STRUCT_{}", name.to_shouty_snake_case());
        if self.statics.contains_key(name) {
            return Ok(ident);
        }
        self.statics.insert(name.to_owned(), String::new()); // reserve: no cycles in request schemas
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut fields = Vec::new();
        for (key, prop) in schema.get("properties").and_then(Value::as_mapping).into_iter().flatten() {
            let prop_name = key.as_str().unwrap();
            fields.push(self.field(prop_name, prop, required.contains(&prop_name), false)?);
        }
        let text = format!(
            "pub static {ident}: StructShape = StructShape {{ name: {name:?}, fields: &[{}] }};\n\n",
            fields.join(", ")
        );
        self.statics.insert(name.to_owned(), text);
        self.order.push(name.to_owned());
        Ok(ident)
    }

    fn union(&mut self, name: &str, schema: &Yaml) -> anyhow::Result<String> {
        let ident = format!("UNION_{}", name.to_shouty_snake_case());
        if self.statics.contains_key(name) {
            return Ok(ident);
        }
        self.statics.insert(name.to_owned(), String::new());
        let disc = schema.get("discriminator").ok_or_else(|| anyhow!("{name}: request unions are discriminated"))?;
        let tag = disc.get("propertyName").and_then(Value::as_str).unwrap();
        let mut variants = Vec::new();
        for (value, target) in disc.get("mapping").and_then(Value::as_mapping).into_iter().flatten() {
            let (variant, variant_schema) = self.component(target.as_str().unwrap())?;
            let s = self.structure(variant, variant_schema)?;
            variants.push(format!("({:?}, &{s})", value.as_str().unwrap()));
        }
        let text = format!(
            "pub static {ident}: UnionShape = UnionShape {{ name: {name:?}, tag: {tag:?}, variants: &[{}] }};\n\n",
            variants.join(", ")
        );
        self.statics.insert(name.to_owned(), text);
        self.order.push(name.to_owned());
        Ok(ident)
    }
}

/// The tag of the operations that only the sandbox serves (its helpers): they get a trait of their own.
const SANDBOX_TAG: &str = "sandbox";

/// One generated service trait: its name, documentation and route-table function.
struct ServiceTrait {
    name: &'static str,
    doc: &'static str,
    routes_fn: &'static str,
}

const BRIDGE_API: ServiceTrait = ServiceTrait {
    name: "BridgeApi",
    doc: "/// The service, one async method per operation of the OpenAPI document except the sandbox helpers (tag\n\
          /// `sandbox`, [`SandboxApi`]). Implement it and pass it to [`crate::router`]. Requests are authenticated and\n\
          /// decoded before a method is called: a method never sees malformed input. Each method returns the\n\
          /// operation's 200 answer or one of its documented errors (the error enum knows each variant's status).\n",
    routes_fn: "routes",
};

const SANDBOX_API: ServiceTrait = ServiceTrait {
    name: "SandboxApi",
    doc: "/// The sandbox helpers: one async method per operation tagged `sandbox` (production deployments do not have\n\
          /// them). Implement it and pass it to [`crate::sandbox_router`], whose routes merge into [`crate::router`]'s.\n\
          /// Authenticated and decoded like [`BridgeApi`]'s operations.\n",
    routes_fn: "sandbox_routes",
};

/// Whether an operation is a sandbox helper (tagged `sandbox`).
fn is_sandbox_helper(op: &Op<'_>) -> bool {
    op.op.get("tags").and_then(Value::as_sequence).into_iter().flatten().any(|t| t.as_str() == Some(SANDBOX_TAG))
}

/// The `BridgeApi` and `SandboxApi` traits, each with its route table.
fn api(doc: &Yaml, ops: &[Op<'_>]) -> anyhow::Result<String> {
    let mut t = String::from(
        "use std::future::Future;\n\nuse bridge_contract::operations::*;\nuse bridge_contract::*;\n\nuse crate::auth::Caller;\nuse crate::serve::{handle, handle_alias, AppState};\n\n",
    );
    let (sandbox, production): (Vec<&Op<'_>>, Vec<&Op<'_>>) = ops.iter().partition(|op| is_sandbox_helper(op));
    t.push_str(&service_trait(doc, ops, &production, &BRIDGE_API)?);
    t.push_str(&service_trait(doc, ops, &sandbox, &SANDBOX_API)?);
    Ok(t)
}

/// One service trait over `members` (operations of `ops`) and the function listing their routes.
fn service_trait(doc: &Yaml, ops: &[Op<'_>], members: &[&Op<'_>], spec: &ServiceTrait) -> anyhow::Result<String> {
    let trait_name = spec.name;
    let mut t = format!("{}pub trait {trait_name}: Send + Sync + 'static {{\n", spec.doc);
    let mut routes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut path_order: Vec<String> = Vec::new();
    for op in members {
        let target = op.alias_of.as_deref().unwrap_or(&op.id);
        let target_op = ops.iter().find(|o| o.id == target).ok_or_else(|| anyhow!("unknown alias target {target}"))?;
        let struct_name = target.to_upper_camel_case();
        let method_name = target.to_snake_case();
        let secured = operations::security(doc, target_op.op) != "None";
        let (path_ty, query_ty, body_ty) = param_types(doc, target_op)?;
        let mut params = Vec::new();
        let mut args = Vec::new();
        if secured {
            params.push("caller: Caller".to_owned());
            args.push("caller".to_owned());
        }
        for (name, ty) in [("path", &path_ty), ("query", &query_ty), ("body", &body_ty)] {
            if ty != "()" {
                params.push(format!("{name}: {ty}"));
                args.push(format!("input.{name}"));
            }
        }
        let caller_pattern = if secured { "caller" } else { "_caller" };
        let input_pattern = if args.iter().any(|a| a.starts_with("input.")) { "input" } else { "_input" };
        let closure = format!(
            "|api, {caller_pattern}, {input_pattern}| async move {{ api.{method_name}({}).await }}",
            args.join(", ")
        );
        let handler = match &op.alias_of {
            None => {
                let summary = op.op.get("summary").and_then(Value::as_str).unwrap_or_default();
                let response = format!("<{struct_name} as Operation>::Response");
                let ok_ty = if encoded_answer(op.op) { format!("crate::Answer<{response}>") } else { response };
                writeln!(t, "    /// `{} {}` (`{}`): {summary}.", op.method.to_uppercase(), op.path, op.id)?;
                for alias in ops.iter().filter(|o| o.alias_of.as_deref() == Some(op.id.as_str())) {
                    writeln!(
                        t,
                        "    ///\n    /// Also serves the deprecated `{} {}` (`{}`).",
                        alias.method.to_uppercase(),
                        alias.path,
                        alias.id
                    )?;
                }
                writeln!(
                    t,
                    "    fn {method_name}(&self, {}) -> impl Future<Output = Result<{ok_ty}, {struct_name}Error>> + Send;\n",
                    params.join(", ")
                )?;
                format!("handle::<{struct_name}, A, _, _, _>(state, request, {closure})")
            }
            Some(_) => {
                let alias_struct = op.id.to_upper_camel_case();
                format!("handle_alias::<{alias_struct}, {struct_name}, A, _, _, _>(state, request, {closure})")
            }
        };
        let method = op.method;
        let entry = format!(
            "axum::routing::{method}(|axum::extract::State(state): axum::extract::State<AppState<A>>, request: axum::extract::Request| async move {{ {handler}.await }})"
        );
        let route = positional_route(&op.path);
        if !routes.contains_key(&route) {
            path_order.push(route.clone());
        }
        routes.entry(route).or_default().push(entry);
    }
    t.push_str("}\n\n");
    writeln!(
        t,
        "/// The routes of [`{trait_name}`]'s operations.\npub(crate) fn {}<A: {trait_name}>() -> axum::Router<AppState<A>> {{\n    axum::Router::new()",
        spec.routes_fn
    )?;
    for path in &path_order {
        let methods = &routes[path];
        let mut chain = methods[0].clone();
        for m in &methods[1..] {
            // `axum::routing::post(...)` → `.post(...)` on the method router.
            chain.push_str(&format!(".{}", m.trim_start_matches("axum::routing::")));
        }
        writeln!(t, "        .route({path:?}, {chain})")?;
    }
    t.push_str("}\n\n");
    Ok(t)
}

/// Whether an operation is marked `x-encoded-answer: true`: its method answers `bridge_server::Answer` (the value, or JSON the
/// implementation holds) instead of the value alone.
fn encoded_answer(op: &Yaml) -> bool {
    op.get("x-encoded-answer").and_then(Value::as_bool) == Some(true)
}

/// The names of a path template's parameters, in the order they appear (`/a/{x}/b/{y}` → `[x, y]`).
fn path_parameter_names(path: &str) -> Vec<&str> {
    path.split('/').filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}')).collect()
}

/// The route the router registers for a path template: every parameter named by its segment's position
/// (`/sda/deposit-addresses/{depositChain}/{destinationChain}/supported-tokens` →
/// `/sda/deposit-addresses/{p2}/{p3}/supported-tokens`). The router refuses two routes whose parameters at the
/// same position have different names, and production has such paths; the server hands each value to the
/// operation's decoder under the schema's name, by position (`OperationShapes::path_names`).
fn positional_route(path: &str) -> String {
    path.split('/')
        .enumerate()
        .map(|(i, segment)| if segment.starts_with('{') { format!("{{p{i}}}") } else { segment.to_owned() })
        .collect::<Vec<_>>()
        .join("/")
}

fn param_types(doc: &Yaml, op: &Op<'_>) -> anyhow::Result<(String, String, String)> {
    let base = op.id.to_upper_camel_case();
    let has = |loc: &str| {
        op.op
            .get("parameters")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .any(|p| resolve_parameter(doc, p).get("in").and_then(Value::as_str) == Some(loc))
    };
    let path = if has("path") { format!("{base}Path") } else { "()".into() };
    let query = if has("query") { format!("{base}Query") } else { "()".into() };
    let body = match op.op.get("requestBody").and_then(|b| operations::content_schema(doc, b)) {
        Some(schema) => operations::schema_type(&schema)?,
        None => "()".into(),
    };
    Ok((path, query, body))
}
