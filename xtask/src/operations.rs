//! Generates `src/generated/operations.rs`: for every operation, a unit struct implementing
//! `bridge_contract::Operation` (id, method, path, security, parameter/body/answer types) and an error enum with
//! one variant per documented error status; `AnyOperation`, an enum of every operation; `every_operation!`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::anyhow;
use heck::{ToShoutySnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{rust_file, HEADER};
use crate::rust_types::serialize_each_variant;
use crate::schema::{self, ErrorAnswer, Op};
use crate::tokens::{doc_comment, ident, unsuffixed, RustType};

pub fn generate(doc: &Yaml) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let ops = schema::operations(doc)?;
    let operations = ops.iter().map(|op| operation(doc, op)).collect::<anyhow::Result<Vec<_>>>()?;
    let headers = headers(doc)?;
    let names: Vec<_> = ops.iter().map(|op| format_ident!("{}", op.id.to_upper_camel_case())).collect();
    let ids: Vec<_> = ops.iter().map(|op| &op.id).collect();
    let any = any_operation(&ops, &names);
    let items = quote! {
        use serde::Serialize;
        use crate::operation::{ErrorResponse, Operation, Security};
        use crate::types::*;
        #(#operations)*
        #any
        #headers
        /// Calls `$callback!(Operation, "operationId");` once for every operation, in the document's order.
        #[macro_export]
        macro_rules! every_operation {
            ($callback:ident) => {
                #($callback!(#names, #ids);)*
            };
        }
    };
    let preamble = format!(
        "{HEADER}\n//! One unit struct per operation, implementing [`crate::Operation`], and its error enum; [`AnyOperation`]:\n//! every operation as a value.\n\n"
    );
    Ok(vec![(PathBuf::from("src/generated/operations.rs"), rust_file(&preamble, items)?)])
}

/// `AnyOperation`: every operation as a value, one variant per `operationId` (named as its unit struct), in the
/// document's order. Not `#[non_exhaustive]`: a `match` over it names every operation, so an operation added to
/// the schema fails to compile wherever operations are dispatched until it is handled there.
fn any_operation(ops: &[Op<'_>], names: &[proc_macro2::Ident]) -> TokenStream {
    let variant_docs =
        ops.iter().map(|op| doc_comment(&format!("`{} {}` (`{}`).", op.method.to_uppercase(), op.path, op.id)));
    let count = unsuffixed(ops.len() as u64);
    quote! {
        /// Every operation of the document as a value, one variant per `operationId` (named as its unit struct in
        /// this module), in the document's order. A `match` over it names every operation: one added to the schema
        /// does not compile until each `match` handles it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum AnyOperation { #(#variant_docs #names,)* }
        impl AnyOperation {
            /// Every operation, in the document's order (`ALL[op as usize] == op`).
            pub const ALL: [AnyOperation; #count] = [#(Self::#names),*];
            /// The `operationId`.
            pub const fn id(self) -> &'static str {
                match self { #(Self::#names => <#names as Operation>::ID,)* }
            }
            /// The operation whose `operationId` is `id`.
            pub fn from_id(id: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|op| op.id() == id)
            }
        }
        impl std::fmt::Display for AnyOperation {
            /// The `operationId`.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(self.id()) }
        }
    }
}

/// The unit struct of one operation, its `Operation` impl, its error enum and the error enum's impls.
fn operation(doc: &Yaml, op: &Op<'_>) -> anyhow::Result<TokenStream> {
    let name = format_ident!("{}", op.id.to_upper_camel_case());
    let error = format_ident!("{name}Error");
    let inputs = schema::inputs(doc, op)?;
    let unit = |ty: Option<RustType>| ty.map_or_else(|| quote!(()), |ty| quote!(#ty));
    let (path, query, body) = (unit(inputs.path), unit(inputs.query), unit(inputs.body));
    let response = unit(schema::answer_type(doc, op.op)?);
    let summary = op.op.get("summary").and_then(Value::as_str).unwrap_or_default();
    let method = op.method.to_uppercase();
    let deprecated = schema::bool_of(op.op, "deprecated");
    let mut text = format!("`{method} {}` (`{}`): {summary}.", op.path, op.id);
    if deprecated {
        text.push_str("\n\nDeprecated: kept for backward compatibility and to be removed.");
    }
    let what = doc_comment(&text);
    let alias = match &op.alias_of {
        Some(a) => quote!(Some(#a)),
        None => quote!(None),
    };
    let security = ident(schema::security(doc, op.op));
    let (id, path_template) = (&op.id, &op.path);
    let errors = schema::errors(doc, op.op)?;
    let error_enum = error_enum(doc, op, &error, &errors);
    Ok(quote! {
        #what
        #[derive(Debug, Clone, Copy, Default)]
        pub struct #name;
        impl Operation for #name {
            const ID: &'static str = #id;
            const METHOD: &'static str = #method;
            const PATH: &'static str = #path_template;
            const SECURITY: Security = Security::#security;
            const DEPRECATED: bool = #deprecated;
            const ALIAS_OF: Option<&'static str> = #alias;
            type Path = #path;
            type Query = #query;
            type Body = #body;
            type Response = #response;
            type Error = #error;
        }
        #error_enum
    })
}

/// The error enum of an operation (one variant per documented error answer), its `ErrorResponse`, `Serialize`
/// and `From` impls.
fn error_enum(doc: &Yaml, op: &Op<'_>, error: &proc_macro2::Ident, errors: &[ErrorAnswer]) -> TokenStream {
    let what = doc_comment(&format!("Every documented error answer of `{}`.", op.id));
    let variants: Vec<_> = errors.iter().map(|e| ident(&e.ty)).collect();
    let statuses: Vec<_> = errors.iter().map(|e| unsuffixed(e.status.into())).collect();
    let variant_docs = errors.iter().map(|e| {
        let first_line = e.description.lines().next().unwrap_or_default();
        doc_comment(&format!("{}: {first_line}", e.status))
    });
    let serialize = serialize_each_variant(error, variants.iter().cloned());
    // A variant of an error union converts too (`InvalidRequest` into the 422 union of a quote), when it belongs
    // to exactly one of the operation's error answers and is not one itself.
    let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for e in errors {
        for variant in schema::union_variants(doc, &e.ty) {
            owners.entry(variant).or_default().push(&e.ty);
        }
    }
    let union_conversions = owners.iter().filter_map(|(variant, unions)| match unions.as_slice() {
        [union] if !errors.iter().any(|e| e.ty == *variant) => {
            let (variant, union) = (ident(variant), ident(union));
            Some(quote!(impl From<#variant> for #error { fn from(v: #variant) -> Self { Self::#union(#union::from(v)) } }))
        }
        _ => None,
    });
    quote! {
        #what
        #[derive(Debug, Clone, PartialEq)]
        pub enum #error { #(#variant_docs #variants(#variants),)* }
        impl ErrorResponse for #error {
            const STATUSES: &'static [u16] = &[#(#statuses),*];
            fn status(&self) -> u16 { match self { #(Self::#variants(_) => #statuses,)* } }
            // Inline: decoding is compiled where an answer is decoded, not for every operation in this crate.
            #[inline]
            fn from_response(status: u16, body: &[u8]) -> Option<Result<Self, serde_json::Error>> {
                match status {
                    #(#statuses => Some(serde_json::from_slice(body).map(Self::#variants)),)*
                    _ => None,
                }
            }
            #[inline]
            fn from_value(status: u16, value: &serde_json::Value) -> Option<Result<Self, serde_json::Error>> {
                match status {
                    #(#statuses => Some(serde::Deserialize::deserialize(value).map(Self::#variants)),)*
                    _ => None,
                }
            }
        }
        #serialize
        #(impl From<#variants> for #error { fn from(v: #variants) -> Self { Self::#variants(v) } })*
        #(#union_conversions)*
    }
}

/// Header names the document states (security scheme, webhook callback), so no crate writes them by hand.
fn headers(doc: &Yaml) -> anyhow::Result<TokenStream> {
    let api_key_header = doc
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(|s| s.get("legacyApiKey"))
        .and_then(|k| k.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("components.securitySchemes.legacyApiKey.name is missing"))?;
    let operations = schema::operations(doc)?;
    let callbacks = || {
        operations
            .iter()
            .filter_map(|op| op.op.get("callbacks").and_then(Value::as_mapping))
            .flat_map(|callbacks| callbacks.values())
            .filter_map(|cb| cb.as_mapping().and_then(|m| m.values().next()))
            .filter_map(|item| item.get("post"))
    };
    let signature_header = callbacks()
        .filter_map(|post| post.get("parameters").and_then(Value::as_sequence))
        .flatten()
        .find(|p| schema::str_of(p, "in") == Some("header"))
        .and_then(|p| schema::str_of(p, "name"))
        .ok_or_else(|| anyhow!("the webhookEvent callback declares no signature header"))?
        .to_owned();
    let response_headers = response_headers(doc)?;
    // A header a receiver may set on its 2xx answer (the callback's answer headers): optional.
    let answer_header = callbacks()
        .filter_map(|post| post.get("responses").and_then(Value::as_mapping))
        .flat_map(|responses| responses.values())
        .filter_map(|response| response.get("headers").and_then(Value::as_mapping))
        .flat_map(|headers| headers.keys())
        .find_map(Value::as_str)
        .map(|name| {
            quote! {
                /// The header a receiver may set on its 2xx answer to a delivery (the `webhookEvent` callback's
                /// answer): it acknowledges the delivery but holds its `ts` too old to act on.
                pub const WEBHOOK_STALE_HEADER: &str = #name;
            }
        });
    Ok(quote! {
        /// The header of the legacy API key (`components.securitySchemes.legacyApiKey`).
        pub const LEGACY_API_KEY_HEADER: &str = #api_key_header;
        /// The header that carries a webhook delivery's signature (the `webhookEvent` callback).
        pub const WEBHOOK_SIGNATURE_HEADER: &str = #signature_header;
        #response_headers
        #answer_header
    })
}

/// A constant per header component (`components.headers.X`) that answers send, named `X_HEADER` (snake case)
/// and holding the name the responses give it (`headers: { name: { $ref: '#/components/headers/X' } }`); an
/// error when two responses name one component differently. Nothing for a component no response names.
fn response_headers(doc: &Yaml) -> anyhow::Result<TokenStream> {
    let Some(components) = doc.get("components").and_then(|c| c.get("headers")).and_then(Value::as_mapping) else {
        return Ok(TokenStream::new());
    };
    let mut responses: Vec<&Yaml> = Vec::new();
    if let Some(shared) = doc.get("components").and_then(|c| c.get("responses")).and_then(Value::as_mapping) {
        responses.extend(shared.values());
    }
    for op in schema::operations(doc)? {
        if let Some(answers) = op.op.get("responses").and_then(Value::as_mapping) {
            responses.extend(answers.values());
        }
    }
    let mut named: BTreeMap<String, String> = BTreeMap::new();
    for response in responses {
        for (name, header) in response.get("headers").and_then(Value::as_mapping).into_iter().flatten() {
            let (Some(name), Some(target)) = (name.as_str(), schema::str_of(header, "$ref")) else { continue };
            let Some(component) = target.strip_prefix("#/components/headers/") else { continue };
            match named.get(component) {
                Some(earlier) if earlier != name => {
                    return Err(anyhow!("components.headers.{component} is named both {earlier} and {name}"))
                }
                _ => {
                    named.insert(component.to_owned(), name.to_owned());
                }
            }
        }
    }
    let consts = components.keys().filter_map(Value::as_str).filter_map(|component| {
        let name = named.get(component)?;
        let konst = format_ident!("{}_HEADER", component.to_shouty_snake_case());
        let doc = doc_comment(&format!("The header the answers name `components.headers.{component}`."));
        Some(quote! { #doc pub const #konst: &str = #name; })
    });
    Ok(quote! { #(#consts)* })
}
