//! Generates the server crate's code:
//!
//! * `crates/bridge-server/src/generated/shapes.rs`: the request decoder's tables, one static per request
//!   schema (path parameters, query parameters, body), with fields in declaration order and every
//!   constraint and default of the schema;
//! * `crates/bridge-server/src/generated/api.rs`: the `BridgeApi` trait (one async method per operation; an
//!   `x-alias-of` operation shares the method of the operation it aliases) and its route table, and the
//!   `SandboxApi` trait of the sandbox helpers (the operations tagged `sandbox`) and theirs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, ToTokens};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{rust_file, HEADER};
use crate::schema::{self, bool_of, str_of, Op};
use crate::tokens::{doc_comment, float, ident, unsuffixed};

pub fn generate(doc: &Yaml) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let ops = schema::operations(doc)?;
    let mut shapes = Shapes { doc, statics: BTreeMap::new(), order: Vec::new() };
    let mut op_tables = Vec::new();
    for op in &ops {
        let table = format_ident!("{}", op.id.to_shouty_snake_case());
        let path = shapes.parameters(op, "path")?;
        let query = shapes.parameters(op, "query")?;
        let body = match op.op.get("requestBody") {
            Some(body) => {
                let schema =
                    schema::content_schema(doc, body).ok_or_else(|| anyhow!("{}: body without JSON schema", op.id))?;
                let required = bool_of(body, "required");
                let shape = shapes.shape(&schema, false)?;
                quote!(Some(BodyShape { shape: #shape, required: #required }))
            }
            None => quote!(None),
        };
        let what = doc_comment(&format!("Decoder tables of `{} {}` (`{}`).", op.method.to_uppercase(), op.path, op.id));
        let (id, path_names) = (&op.id, path_parameter_names(&op.path));
        op_tables.push(quote! {
            #what
            pub static #table: OperationShapes = OperationShapes {
                operation_id: #id, path_names: &[#(#path_names),*], path: #path, query: #query, body: #body
            };
        });
    }
    let statics = shapes.order.iter().map(|name| &shapes.statics[name]);
    let ids = ops.iter().map(|op| &op.id);
    let tables = ops.iter().map(|op| format_ident!("{}", op.id.to_shouty_snake_case()));
    let shapes_rs = quote! {
        use crate::decode::shape::*;
        #(#statics)*
        #(#op_tables)*
        /// The decoder tables of an operation, by `operationId`.
        pub fn by_operation_id(id: &str) -> Option<&'static OperationShapes> {
            match id {
                #(#ids => Some(&#tables),)*
                _ => None,
            }
        }
    };
    let shapes_rs = rust_file(
        &format!(
            "{HEADER}\n//! The request decoder's tables: every request schema of the document, fields in declaration \
             order.\n\n"
        ),
        shapes_rs,
    )?;
    let api_rs = rust_file(
        &format!(
            "{HEADER}\n//! The `BridgeApi` trait (one method per operation), the `SandboxApi` trait (the sandbox \
             helpers) and their route tables.\n\n"
        ),
        api(doc, &ops)?,
    )?;
    Ok(vec![
        (PathBuf::from("crates/bridge-server/src/generated/shapes.rs"), shapes_rs),
        (PathBuf::from("crates/bridge-server/src/generated/api.rs"), api_rs),
    ])
}

/// The decoder's statics, each written once however many requests use its schema.
struct Shapes<'a> {
    doc: &'a Yaml,
    /// By schema name (a component, or `{OperationId}{Location}` for parameters); empty while being written.
    statics: BTreeMap<String, TokenStream>,
    /// The order the statics were finished in.
    order: Vec<String>,
}

impl<'a> Shapes<'a> {
    /// The struct shape of an operation's path or query parameters (`None` when it has none).
    fn parameters(&mut self, op: &Op<'a>, location: &str) -> anyhow::Result<TokenStream> {
        let mut fields = Vec::new();
        for param in schema::parameters_in(self.doc, op.op, location)? {
            let name = str_of(param, "name").ok_or_else(|| anyhow!("parameter without name"))?;
            let schema = param.get("schema").ok_or_else(|| anyhow!("parameter without schema"))?;
            fields.push(self.field(name, schema, bool_of(param, "required"), true)?);
        }
        if fields.is_empty() {
            return Ok(quote!(None));
        }
        let name = format!("{}{}", op.id.to_upper_camel_case(), location.to_upper_camel_case());
        let ident = format_ident!("STRUCT_{}", name.to_shouty_snake_case());
        if !self.statics.contains_key(&name) {
            self.finish_struct(&name, &ident, fields);
        }
        Ok(quote!(Some(&#ident)))
    }

    fn finish_struct(&mut self, name: &str, ident: &Ident, fields: Vec<TokenStream>) {
        let tokens = quote!(pub static #ident: StructShape = StructShape { name: #name, fields: &[#(#fields),*] };);
        self.finish(name, tokens);
    }

    fn finish(&mut self, name: &str, tokens: TokenStream) {
        self.statics.insert(name.to_owned(), tokens);
        self.order.push(name.to_owned());
    }

    fn field(&mut self, name: &str, schema: &Yaml, required: bool, from_string: bool) -> anyhow::Result<TokenStream> {
        let default = schema.get("default").or_else(|| {
            str_of(schema, "$ref").and_then(|r| schema::component(self.doc, r).ok()).and_then(|(_, s)| s.get("default"))
        });
        let default = match default {
            Some(d) => {
                let json = serde_json::to_string(d)?;
                quote!(Some(#json))
            }
            None => quote!(None),
        };
        let shape = self.shape(schema, from_string)?;
        Ok(quote!(Field { name: #name, required: #required, default: #default, shape: #shape }))
    }

    /// A `Shape` expression for one schema. `from_string`: the value arrives as a string (path and query).
    fn shape(&mut self, schema: &Yaml, from_string: bool) -> anyhow::Result<TokenStream> {
        if let Some(reference) = str_of(schema, "$ref") {
            let (name, target) = schema::component(self.doc, reference)?;
            return match name {
                "DecimalString" => Ok(quote!(Shape::Decimal)),
                "DateString" => Ok(quote!(Shape::Date)),
                "DecimalNumber" => self.shape(target, from_string),
                _ if target.get("oneOf").is_some() => {
                    let union = self.union(name, target)?;
                    Ok(quote!(Shape::Union(&#union)))
                }
                _ if target.get("enum").is_some() => self.shape(target, from_string),
                _ if str_of(target, "type") == Some("object") => {
                    let structure = self.structure(name, target)?;
                    Ok(quote!(Shape::Struct(&#structure)))
                }
                _ => self.shape(target, from_string),
            };
        }
        if let Some([only]) = schema.get("allOf").and_then(Value::as_sequence).map(Vec::as_slice) {
            return self.shape(only, from_string);
        }
        let ty = str_of(schema, "type").ok_or_else(|| anyhow!("schema without type"))?;
        let optional = |value: Option<TokenStream>| value.map_or_else(|| quote!(None), |v| quote!(Some(#v)));
        let num = |key: &str| optional(schema::f64_of(schema, key).map(|v| float(v, "")));
        let count = |key: &str| optional(schema::u64_of(schema, key).map(|v| unsuffixed(v).into_token_stream()));
        Ok(match ty {
            "string" => {
                if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
                    let values = values.iter().map(|v| v.as_str().unwrap_or_default());
                    return Ok(quote!(Shape::Literals(&[#(#values),*])));
                }
                let pattern = optional(str_of(schema, "pattern").map(|p| quote!(#p)));
                let trim = bool_of(schema, "x-trim");
                let (min_length, max_length) = (count("minLength"), count("maxLength"));
                quote!(Shape::String(StringRules {
                    min_length: #min_length, max_length: #max_length, pattern: #pattern, trim: #trim
                }))
            }
            "number" | "integer" => {
                let (minimum, maximum, integer) = (num("minimum"), num("maximum"), ty == "integer");
                let rules = quote!(NumberRules { minimum: #minimum, maximum: #maximum, integer: #integer });
                if from_string {
                    quote!(Shape::NumberFromString(#rules))
                } else {
                    quote!(Shape::Number(#rules))
                }
            }
            "boolean" => quote!(Shape::Boolean),
            "array" => {
                let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
                let items = self.shape(items, from_string)?;
                let (min_items, max_items) = (count("minItems"), count("maxItems"));
                quote!(Shape::Array(&ArrayShape { items: #items, min_items: #min_items, max_items: #max_items }))
            }
            other => bail!("request schemas do not use type {other}"),
        })
    }

    fn structure(&mut self, name: &str, schema: &Yaml) -> anyhow::Result<Ident> {
        let ident = format_ident!("STRUCT_{}", name.to_shouty_snake_case());
        if self.statics.contains_key(name) {
            return Ok(ident);
        }
        self.statics.insert(name.to_owned(), TokenStream::new()); // reserve: no cycles in request schemas
        let required = schema::required(schema);
        let mut fields = Vec::new();
        for (key, prop) in schema.get("properties").and_then(Value::as_mapping).into_iter().flatten() {
            let prop_name = key.as_str().ok_or_else(|| anyhow!("property names are strings"))?;
            fields.push(self.field(prop_name, prop, required.contains(&prop_name), false)?);
        }
        self.finish_struct(name, &ident, fields);
        Ok(ident)
    }

    fn union(&mut self, name: &str, schema: &Yaml) -> anyhow::Result<Ident> {
        let ident = format_ident!("UNION_{}", name.to_shouty_snake_case());
        if self.statics.contains_key(name) {
            return Ok(ident);
        }
        self.statics.insert(name.to_owned(), TokenStream::new());
        let disc = schema.get("discriminator").ok_or_else(|| anyhow!("{name}: request unions are discriminated"))?;
        let tag = str_of(disc, "propertyName").ok_or_else(|| anyhow!("{name}: discriminator without propertyName"))?;
        let mut variants = Vec::new();
        for (value, target) in disc.get("mapping").and_then(Value::as_mapping).into_iter().flatten() {
            let target = target.as_str().ok_or_else(|| anyhow!("{name}: mapping targets are $refs"))?;
            let (variant, variant_schema) = schema::component(self.doc, target)?;
            let s = self.structure(variant, variant_schema)?;
            let value = value.as_str().ok_or_else(|| anyhow!("{name}: tag values are strings"))?;
            variants.push(quote!((#value, &#s)));
        }
        let tokens =
            quote!(pub static #ident: UnionShape = UnionShape { name: #name, tag: #tag, variants: &[#(#variants),*] };);
        self.finish(name, tokens);
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
    doc: "The service, one async method per operation of the OpenAPI document except the sandbox helpers (tag\n\
          `sandbox`, [`SandboxApi`]). Implement it and pass it to [`crate::router`]. Requests are authenticated and\n\
          decoded before a method is called: a method never sees malformed input. Each method returns the\n\
          operation's 200 answer or one of its documented errors (the error enum knows each variant's status).",
    routes_fn: "routes",
};

const SANDBOX_API: ServiceTrait = ServiceTrait {
    name: "SandboxApi",
    doc: "The sandbox helpers: one async method per operation tagged `sandbox` (production deployments do not have\n\
          them). Implement it and pass it to [`crate::sandbox_router`], whose routes merge into [`crate::router`]'s.\n\
          Authenticated and decoded like [`BridgeApi`]'s operations.",
    routes_fn: "sandbox_routes",
};

/// Whether an operation is a sandbox helper (tagged `sandbox`).
fn is_sandbox_helper(op: &Op<'_>) -> bool {
    op.op.get("tags").and_then(Value::as_sequence).into_iter().flatten().any(|t| t.as_str() == Some(SANDBOX_TAG))
}

/// The `BridgeApi` and `SandboxApi` traits, each with its route table.
fn api(doc: &Yaml, ops: &[Op<'_>]) -> anyhow::Result<TokenStream> {
    let (sandbox, production): (Vec<&Op<'_>>, Vec<&Op<'_>>) = ops.iter().partition(|op| is_sandbox_helper(op));
    let bridge_api = service_trait(doc, ops, &production, &BRIDGE_API)?;
    let sandbox_api = service_trait(doc, ops, &sandbox, &SANDBOX_API)?;
    Ok(quote! {
        use std::future::Future;
        use bridge_contract::operations::*;
        use bridge_contract::*;
        use crate::auth::Caller;
        use crate::serve::{handle, handle_alias, AppState};
        #bridge_api
        #sandbox_api
    })
}

/// One route's handler: the HTTP method and the closure that serves it.
struct Route {
    method: Ident,
    handler: TokenStream,
}

/// One service trait over `members` (operations of `ops`) and the function listing their routes.
fn service_trait(doc: &Yaml, ops: &[Op<'_>], members: &[&Op<'_>], spec: &ServiceTrait) -> anyhow::Result<TokenStream> {
    let trait_name = ident(spec.name);
    let mut methods = Vec::new();
    let mut routes: BTreeMap<String, Vec<Route>> = BTreeMap::new();
    let mut path_order: Vec<String> = Vec::new();
    for op in members {
        let target = op.alias_of.as_deref().unwrap_or(&op.id);
        let target_op = ops.iter().find(|o| o.id == target).ok_or_else(|| anyhow!("unknown alias target {target}"))?;
        let struct_name = format_ident!("{}", target.to_upper_camel_case());
        let error = format_ident!("{struct_name}Error");
        let method_name = format_ident!("{}", target.to_snake_case());
        let secured = schema::security(doc, target_op.op) != "None";
        let inputs = schema::inputs(doc, target_op)?;
        let mut params = Vec::new();
        let mut args = Vec::new();
        if secured {
            params.push(quote!(caller: Caller));
            args.push(quote!(caller));
        }
        for (name, ty) in [("path", &inputs.path), ("query", &inputs.query), ("body", &inputs.body)] {
            if let Some(ty) = ty {
                let name = ident(name);
                params.push(quote!(#name: #ty));
                args.push(quote!(input.#name));
            }
        }
        let caller_pattern = if secured { ident("caller") } else { ident("_caller") };
        let inputs_given = inputs.path.is_some() || inputs.query.is_some() || inputs.body.is_some();
        let input_pattern = if inputs_given { ident("input") } else { ident("_input") };
        let closure = quote!(|api, #caller_pattern, #input_pattern| async move { api.#method_name(#(#args),*).await });
        let handler = match &op.alias_of {
            None => {
                let summary = str_of(op.op, "summary").unwrap_or_default();
                let response = quote!(<#struct_name as Operation>::Response);
                let ok_ty =
                    if bool_of(op.op, "x-encoded-answer") { quote!(crate::Answer<#response>) } else { response };
                let mut text = format!("`{} {}` (`{}`): {summary}.", op.method.to_uppercase(), op.path, op.id);
                for alias in ops.iter().filter(|o| o.alias_of.as_deref() == Some(op.id.as_str())) {
                    text.push_str(&format!(
                        "\n\nAlso serves the deprecated `{} {}` (`{}`).",
                        alias.method.to_uppercase(),
                        alias.path,
                        alias.id
                    ));
                }
                let what = doc_comment(&text);
                methods.push(quote! {
                    #what
                    fn #method_name(&self, #(#params),*) -> impl Future<Output = Result<#ok_ty, #error>> + Send;
                });
                quote!(handle::<#struct_name, A, _, _, _>(state, request, #closure))
            }
            Some(_) => {
                let alias_struct = format_ident!("{}", op.id.to_upper_camel_case());
                quote!(handle_alias::<#alias_struct, #struct_name, A, _, _, _>(state, request, #closure))
            }
        };
        let handler = quote! {
            |axum::extract::State(state): axum::extract::State<AppState<A>>, request: axum::extract::Request| async move {
                #handler.await
            }
        };
        let route = positional_route(&op.path);
        if !routes.contains_key(&route) {
            path_order.push(route.clone());
        }
        routes.entry(route).or_default().push(Route { method: ident(op.method), handler });
    }
    let routes = path_order.iter().map(|path| {
        // `axum::routing::get(...)`, then `.post(...)` on the method router for each further method.
        let (first, rest) = routes[path].split_first().expect("a route has a method");
        let (method, handler) = (&first.method, &first.handler);
        let further = rest.iter().map(|Route { method, handler }| quote!(.#method(#handler)));
        quote!(.route(#path, axum::routing::#method(#handler) #(#further)*))
    });
    let (what, routes_fn) = (doc_comment(spec.doc), ident(spec.routes_fn));
    let routes_doc = doc_comment(&format!("The routes of [`{}`]'s operations.", spec.name));
    Ok(quote! {
        #what
        pub trait #trait_name: Send + Sync + 'static { #(#methods)* }
        #routes_doc
        pub(crate) fn #routes_fn<A: #trait_name>() -> axum::Router<AppState<A>> {
            axum::Router::new() #(#routes)*
        }
    })
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
