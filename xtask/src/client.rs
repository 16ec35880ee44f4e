//! Generates the client crate's code (`crates/bridge-client/src/generated/`) with progenitor.
//!
//! Three files:
//!
//! * `client.rs`: progenitor's output for a copy of the document transformed for it (see
//!   [`progenitor_document`]). Every component schema is replaced by the root crate's type
//!   (`GenerationSettings::with_replacement`), so progenitor generates methods, not types.
//! * `methods.rs`: one method per operation on `bridge_client::Client`, written from progenitor's method
//!   signatures: the same call, but with the contract's `{Operation}Query` struct for query parameters, the
//!   success value itself and `bridge_client::Error<{Operation}Error>` (the root crate's per-operation error
//!   enum) as the error.
//! * `operations.rs`: the tables the request hooks read (`Security` of each operation, and whether it is safe to
//!   retry: a GET, or `x-safe-to-retry: true`), and the operation of each error enum
//!   (`crate::error::OperationError`, so an error names the operation that failed). Apart from the methods,
//!   because the hooks run below the client: nothing they import imports the client.
//!
//! The client's own code (`crates/bridge-client/src/*.rs`) is the runtime the generated code calls: credentials,
//! user agent and retries in the request hooks (`crate::transport::Settings` is progenitor's inner type), and
//! the few operations of [`RESOLVED`] whose method hands over to hand-written code.
//!
//! progenitor runs here, not in a build script or macro, so the client's users never compile it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context};
use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle};
use quote::{format_ident, quote, ToTokens};
use serde_json::{json, Value};

use crate::bundle::Yaml;
use crate::codegen::{self, HEADER};
use crate::schema;
use crate::tokens::{doc_comment, ident, path};

const OUT_DIR: &str = "crates/bridge-client/src/generated";

/// Component schemas the client maps to one of its own types instead of the root crate's.
///
/// `UserEventsPage.items` is a `WebhookEvent[]`; decoded strictly, one event of a kind this build does not know
/// (the service adds kinds) would fail the whole page. The client's `EventPage` holds `bridge_client::Event`
/// (`Known(WebhookEvent)` or `Unknown { tag, raw }`) instead, and converts to the root crate's page.
const CLIENT_TYPES: &[(&str, &str)] = &[("UserEventsPage", "crate::event_page::EventPage")];

/// Operations whose typed method hands over to a hand-written function of the same parameters (after `self`),
/// with the paragraph added to its documentation.
///
/// `commitQuote` changes state, so it is never retried blindly; when its answer is lost (a timeout, a reset
/// connection, a gateway's 5xx) the client resolves it with `getBridge` (the quote id is the bridge id).
const RESOLVED: &[(&str, &str, &str)] = &[(
    "commitQuote",
    "crate::commit::commit_resolving_lost_answers",
    "A lost answer (a timeout, a reset connection, a gateway's 5xx) is resolved by the client, not by its caller:\n\
     it reads the bridge (the quote id is the bridge id) and answers as a first successful commit would have, or\n\
     commits again if the bridge does not exist. See [`crate::commit`].",
)];

pub fn generate(doc: &Yaml, json: &Value) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let spec_json = progenitor_document(json)?;
    let spec: openapiv3::OpenAPI =
        serde_json::from_value(spec_json).context("the document transformed for progenitor does not parse")?;

    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Positional)
        .with_tag(TagStyle::Merged)
        .with_inner_type(quote::quote!(crate::transport::Settings))
        .with_hooks(HooksMode::Expected);
    let schemas =
        json.pointer("/components/schemas").and_then(Value::as_object).ok_or_else(|| anyhow!("no schemas"))?;
    for name in schemas.keys() {
        let target = CLIENT_TYPES
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| (*t).to_owned())
            .unwrap_or_else(|| format!("::bridge_contract::{name}"));
        settings.with_replacement(name, target, std::iter::empty());
    }
    let mut generator = Generator::new(&settings);
    let tokens = generator.generate_tokens(&spec).map_err(|e| anyhow!("progenitor: {e}"))?;
    let raw = codegen::parse(tokens)?;
    let raw_file = codegen::format_file(
        &format!(
            "{HEADER}\n//! progenitor's client (positional style) for `schema/openapi.yaml`, every schema replaced by \
             the\n//! `bridge_contract` type of the same name. Use [`crate::Client`], which wraps it.\n\n"
        ),
        &raw,
    );

    let facade = facade(doc, &raw)?;
    Ok(vec![
        (PathBuf::from(OUT_DIR).join("client.rs"), raw_file),
        (PathBuf::from(OUT_DIR).join("methods.rs"), facade.methods),
        (PathBuf::from(OUT_DIR).join("operations.rs"), facade.tables),
    ])
}

/// The copy of the bundled document progenitor is given (`schema/` itself is never changed):
///
/// * every error answer (status 400 and up) becomes a raw body (`*/*`): progenitor allows one error type per
///   operation and loses the status when a body does not decode, so the client decodes error bodies itself
///   with the root crate's `ErrorResponse::from_response(status, body)` and keeps status and bytes otherwise;
/// * parameter schemas lose `pattern`, `minLength` and `maxLength` (typify would make validating newtypes and
///   pull `regress` into the client; the server checks them and answers the documented 400), and an inline
///   `type: number` becomes the `DecimalNumber` component, the type the root crate's `{Operation}Query`
///   structs use;
/// * callbacks (the webhook deliveries) are removed: they are the `webhook` module's business.
pub fn progenitor_document(json: &Value) -> anyhow::Result<Value> {
    let mut doc = json.clone();
    let paths = doc.get_mut("paths").and_then(Value::as_object_mut).ok_or_else(|| anyhow!("no paths"))?;
    for (path, item) in paths.iter_mut() {
        let item = item.as_object_mut().ok_or_else(|| anyhow!("path {path} is not an object"))?;
        if item.contains_key("parameters") {
            bail!("path {path}: path-level parameters are not supported by the client generator");
        }
        for (method, op) in item.iter_mut() {
            if !schema::METHODS.contains(&method.as_str()) {
                continue;
            }
            let op = op.as_object_mut().ok_or_else(|| anyhow!("{method} {path} is not an object"))?;
            op.remove("callbacks");
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for param in params {
                    let resolved = match param.get("$ref").and_then(Value::as_str) {
                        Some(r) => json
                            .pointer(r.trim_start_matches('#'))
                            .cloned()
                            .ok_or_else(|| anyhow!("{r} does not resolve"))?,
                        None => param.clone(),
                    };
                    *param = resolved;
                    if let Some(schema) = param.get_mut("schema").and_then(Value::as_object_mut) {
                        for k in ["pattern", "minLength", "maxLength"] {
                            schema.remove(k);
                        }
                        if schema.get("type").and_then(Value::as_str) == Some("number") {
                            *schema =
                                json!({ "$ref": "#/components/schemas/DecimalNumber" }).as_object().unwrap().clone();
                        }
                    }
                }
            }
            let responses = op
                .get_mut("responses")
                .and_then(Value::as_object_mut)
                .ok_or_else(|| anyhow!("{method} {path} has no responses"))?;
            for (status, response) in responses.iter_mut() {
                let code: u16 = status.parse().with_context(|| format!("{method} {path}: status {status}"))?;
                if code < 400 {
                    continue;
                }
                let description = match response.get("$ref").and_then(Value::as_str) {
                    Some(r) => json.pointer(r.trim_start_matches('#')).and_then(|r| r.get("description")).cloned(),
                    None => response.get("description").cloned(),
                };
                *response = json!({
                    "description": description.unwrap_or_else(|| json!("")),
                    "content": { "*/*": {} },
                });
            }
        }
    }
    Ok(doc)
}

/// One documented operation as the façade needs it.
struct OpInfo {
    /// Position in the document.
    order: usize,
    id: String,
    /// `operationId` in UpperCamelCase: the root crate's `operations::{Name}` and `{Name}Error`.
    name: String,
    method: String,
    path: String,
    summary: String,
    description: String,
    deprecated: bool,
    alias_of: Option<String>,
    sandbox: bool,
    /// The root crate's query struct (`{ParamsOf}Query`), when the operation has query parameters.
    query: Option<String>,
    /// The (OpenAPI) names of its query parameters.
    query_params: Vec<String>,
    /// A GET, or marked `x-safe-to-retry: true`: retried after a timeout or a lost connection.
    safe_to_retry: bool,
}

fn op_infos(doc: &Yaml) -> anyhow::Result<BTreeMap<String, OpInfo>> {
    use serde_norway::Value as Y;
    let mut out = BTreeMap::new();
    for (order, op) in schema::operations(doc)?.into_iter().enumerate() {
        let text = |k: &str| op.op.get(k).and_then(Y::as_str).unwrap_or_default().trim().to_owned();
        let query_params: Vec<String> = schema::parameters_in(doc, op.op, "query")?
            .into_iter()
            .map(|p| schema::str_of(p, "name").unwrap_or_default().to_owned())
            .collect();
        let tags: Vec<&str> =
            op.op.get("tags").and_then(Y::as_sequence).into_iter().flatten().filter_map(Y::as_str).collect();
        out.insert(
            op.id.to_snake_case(),
            OpInfo {
                order,
                id: op.id.clone(),
                name: op.id.to_upper_camel_case(),
                method: op.method.to_uppercase(),
                path: op.path.clone(),
                summary: text("summary"),
                description: text("description"),
                deprecated: op.op.get("deprecated").and_then(Y::as_bool) == Some(true),
                alias_of: op.alias_of.clone(),
                sandbox: tags.contains(&"sandbox"),
                query: (!query_params.is_empty()).then(|| format!("{}Query", op.params_of.to_upper_camel_case())),
                query_params,
                safe_to_retry: op.method == "get" || op.op.get("x-safe-to-retry").and_then(Y::as_bool) == Some(true),
            },
        );
    }
    Ok(out)
}

/// The two files written from progenitor's methods.
struct Facade {
    /// The typed methods on `Client`, one per method of progenitor's `impl Client`.
    methods: String,
    /// Security, retry safety and the operation of each error enum, by operation.
    tables: String,
}

/// The typed methods on `Client`, one per method of progenitor's `impl Client`, and the tables of the operations.
fn facade(doc: &Yaml, raw: &syn::File) -> anyhow::Result<Facade> {
    let ops = op_infos(doc)?;
    let mut methods: Vec<&syn::ImplItemFn> = raw
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) if imp.trait_.is_none() && imp.self_ty.to_token_stream().to_string() == "Client" => {
                Some(imp)
            }
            _ => None,
        })
        .flat_map(|imp| imp.items.iter())
        .filter_map(|item| match item {
            syn::ImplItem::Fn(f) if f.sig.asyncness.is_some() => Some(f),
            _ => None,
        })
        .collect();
    methods.sort_by_key(|m| ops.get(&m.sig.ident.to_string()).map_or(usize::MAX, |op| op.order));

    let mut typed = Vec::new();
    let mut security = Vec::new();
    let mut safe = Vec::new();
    let mut error_ops = Vec::new();
    let mut seen = Vec::new();
    for m in &methods {
        let fn_name = &m.sig.ident;
        let op = ops
            .get(&fn_name.to_string())
            .ok_or_else(|| anyhow!("progenitor method {fn_name} matches no operationId"))?;
        seen.push(fn_name.to_string());
        typed.push(method(m, op).with_context(|| format!("method {fn_name}"))?);
        let (operation, error) = (ident(&op.name), format_ident!("{}Error", op.name));
        let (key, safe_to_retry) = (fn_name.to_string(), op.safe_to_retry);
        security.push(quote!(#key => <::bridge_contract::operations::#operation as Operation>::SECURITY,));
        safe.push(quote!(#key => #safe_to_retry,));
        error_ops.push(quote! {
            impl crate::error::OperationError for ::bridge_contract::operations::#error {
                type Operation = ::bridge_contract::operations::#operation;
            }
        });
    }
    for id in ops.keys() {
        if !seen.contains(id) {
            bail!("progenitor generated no method for operation {id}");
        }
    }
    for (id, _, _) in RESOLVED {
        if !ops.values().any(|op| op.id == *id) {
            bail!("RESOLVED names {id}, which is not an operation of the document");
        }
    }
    let methods = quote! {
        #[allow(unused_imports)]
        use crate::raw::types;
        /// The operations of the document, one method each (generated from progenitor's client by `cargo xtask regen`).
        impl crate::client::Client { #(#typed)* }
    };
    let tables = quote! {
        use ::bridge_contract::{Operation, Security};
        /// Who may call the operation progenitor names `operation` (its snake-case `operationId`).
        pub(crate) fn security(operation: &str) -> Option<Security> {
            Some(match operation { #(#security)* _ => return None, })
        }
        /// Whether the operation progenitor names `operation` may be repeated when its answer is lost: a GET, or
        /// marked `x-safe-to-retry: true` in the document.
        pub(crate) fn safe_to_retry(operation: &str) -> Option<bool> {
            Some(match operation { #(#safe)* _ => return None, })
        }
        #(#error_ops)*
    };
    Ok(Facade {
        methods: codegen::rust_file(
            &format!(
                "{HEADER}\n//! The typed methods of [`crate::Client`], one per operation, generated from progenitor's \
                 client.\n// Each method takes progenitor's generics (`<'a>` on every reference) as they are; clippy \
                 would elide `'a` in\n// the methods with one reference.\n#![allow(clippy::needless_lifetimes)]\n\n"
            ),
            methods,
        )?,
        tables: codegen::rust_file(
            &format!(
                "{HEADER}\n//! What the request hooks and errors know of each operation (its security, whether it is \
                 safe to retry, the\n//! operation of each error enum), by the name progenitor gives it.\n\n"
            ),
            tables,
        )?,
    })
}

/// The typed method of one operation over progenitor's method `m`: the same call, with the contract's query
/// struct for the query parameters, the success value itself and the operation's error enum.
fn method(m: &syn::ImplItemFn, op: &OpInfo) -> anyhow::Result<TokenStream> {
    let fn_name = &m.sig.ident;
    let success = success_type(&m.sig.output).context("return type")?;

    // Parameters: path parameters as progenitor has them, then the query struct, then the body.
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut query_done = false;
    for input in &m.sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            continue;
        };
        let syn::Pat::Ident(name) = &*pt.pat else { bail!("a parameter that is not a name") };
        let name = &name.ident;
        let ty = &pt.ty;
        if !op.query_params.iter().any(|q| *name == q.to_snake_case()) {
            params.push(quote!(#name: #ty));
            args.push(quote!(#name));
            continue;
        }
        if !query_done {
            let q = op.query.as_ref().ok_or_else(|| anyhow!("query parameters but no query struct"))?;
            let q = ident(q);
            params.push(quote!(query: &'a ::bridge_contract::#q));
            query_done = true;
        }
        args.push(query_arg(name, ty).with_context(|| format!("query parameter {name}"))?);
    }
    let generics = &m.sig.generics;
    let generics = if generics.params.is_empty() { quote!(<'a>) } else { quote!(#generics) };

    let mut docs = vec![format!("{}.", op.summary.trim_end_matches('.')), String::new()];
    docs.push(format!(
        "`{} {}` (`{}`); documented errors: [`{}Error`](bridge_contract::operations::{}Error).",
        op.method, op.path, op.id, op.name, op.name
    ));
    if !op.description.is_empty() {
        docs.push(String::new());
        docs.extend(op.description.lines().map(str::to_owned));
    }
    let resolved = RESOLVED.iter().find(|(id, _, _)| *id == op.id);
    if let Some((_, _, doc)) = resolved {
        docs.push(String::new());
        docs.extend(doc.lines().map(str::to_owned));
    }
    if op.sandbox {
        docs.push(String::new());
        docs.push(
            "**Sandbox only**: production deployments do not have this path and answer 404, which surfaces as".into(),
        );
        docs.push("[`Error::UnexpectedResponse`](crate::Error::UnexpectedResponse).".into());
    }
    let docs = doc_comment(&docs.join("\n"));
    let deprecated = match (&op.deprecated, &op.alias_of) {
        (true, Some(of)) => {
            let note = format!("kept for backward compatibility; use `{}`", of.to_snake_case());
            Some(quote!(#[deprecated(note = #note)]))
        }
        (true, None) => Some(quote!(#[deprecated(note = "kept for backward compatibility")])),
        _ => None,
    };
    let call = match resolved {
        Some((_, function, _)) => {
            let function = path(function);
            quote!(#function(self, #(#args),*))
        }
        None => quote!(crate::error::lift(self.raw.#fn_name(#(#args),*).await)),
    };
    let error = format_ident!("{}Error", op.name);
    Ok(quote! {
        #docs
        #deprecated
        pub async fn #fn_name #generics(
            &'a self,
            #(#params),*
        ) -> Result<#success, crate::error::Error<::bridge_contract::operations::#error>> {
            #call.await
        }
    })
}

/// `T` of `Result<ResponseValue<T>, Error<..>>`.
fn success_type(output: &syn::ReturnType) -> anyhow::Result<&syn::Type> {
    let syn::ReturnType::Type(_, ty) = output else { bail!("no return type") };
    arg(arg(ty, "Result")?, "ResponseValue")
}

/// The first type argument of `ty`, a path whose last segment is `expect` (`Option<T>` → `T`).
fn arg<'t>(ty: &'t syn::Type, expect: &str) -> anyhow::Result<&'t syn::Type> {
    let syn::Type::Path(p) = ty else { bail!("not a path") };
    let last = p.path.segments.last().ok_or_else(|| anyhow!("empty path"))?;
    if last.ident != expect {
        bail!("expected {expect}, found {}", last.ident);
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else { bail!("{expect} without arguments") };
    match a.args.first() {
        Some(syn::GenericArgument::Type(t)) => Ok(t),
        _ => bail!("{expect} without a type argument"),
    }
}

/// The expression passing field `name` of the root crate's query struct (`String`, `Option<String>`, a
/// contract type `T` or `Option<T>`) to progenitor's parameter of type `ty` (`&str`, `Option<&str>`, `&T`,
/// `Option<&T>`).
fn query_arg(name: &syn::Ident, ty: &syn::Type) -> anyhow::Result<TokenStream> {
    if let syn::Type::Reference(_) = ty {
        return Ok(quote!(&query.#name));
    }
    match arg(ty, "Option") {
        Ok(syn::Type::Reference(r)) if r.elem.to_token_stream().to_string() == "str" => {
            Ok(quote!(query.#name.as_deref()))
        }
        Ok(syn::Type::Reference(_)) => Ok(quote!(query.#name.as_ref())),
        _ => bail!("progenitor passes query parameters by reference; unexpected type {}", ty.to_token_stream()),
    }
}
