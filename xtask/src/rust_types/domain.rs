//! `src/generated/domain.rs`: what an implementation needs to build the contract's values without writing the
//! schema again (docs/contributing.md, "Why our own type generator"):
//!
//! * [`constructors`]: `Type::new(required members…)` for every object with a tag, the tags filled in and the
//!   optional members absent (`InvalidRequest::new(message)`), so nobody writes `tag: Default::default()`;
//! * [`built_from`]: conversions declared with `x-built-from` on an object component: the object is built from
//!   the members of the same names of the listed components (a bridge record and its state become an event);
//! * [`nested_unions`]: `From<Leaf>` for a union whose variant is a union holding `Leaf` (an event leaf into
//!   `WebhookEvent`);
//! * [`parameter_bounds`]: the `default`, `minimum`, `maximum`, `minLength` and `maxLength` of operation
//!   parameters as constants of their `{Operation}Query` / `{Operation}Path` struct;
//! * [`service_unavailable`]: every operation's error enum converts from any
//!   `bridge_contract::IntoServiceUnavailable` (a store failure of an implementation), so such failures flow
//!   with `?`;
//! * [`encoded_answers`]: for the answer of each operation marked `x-encoded-answer`, `Type::encode_with(…)`,
//!   which puts the answer's JSON together from its lists already encoded (`Encoded<Vec<Item>>`, e.g. read from
//!   a store) and its other members, without decoding or re-encoding the lists.
//!
//! Each is a function of its own over the model's structs and unions.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use serde_norway::Value;

use super::model::{Field, Model, RustType, Struct, Union};
use crate::bundle::Yaml;
use crate::schema;
use crate::tokens::{doc_comment, float, ident, unsuffixed};

/// Parameters a generated function may take (clippy's `too_many_arguments` limit).
const MAX_PARAMETERS: usize = 7;

type Structs<'m> = BTreeMap<&'m str, &'m Struct>;

pub fn domain_file(doc: &Yaml, model: &Model) -> anyhow::Result<TokenStream> {
    let structs = model.structs();
    let unions: Vec<&Union> = model.unions().collect();
    let constructors = constructors(doc, &structs)?;
    let built_from = built_from(doc, &structs, &unions)?;
    let nested_unions = nested_unions(&unions);
    let parameter_bounds = parameter_bounds(doc)?;
    let service_unavailable = service_unavailable(doc)?;
    let encoded_answers = encoded_answers(doc, &structs)?;
    // `crate` is the generated crate (bridge-contract): `domain.rs` uses its `operations` and `types` modules.
    let modules = [ident("operations"), ident("types")];
    // Members are copied with `.clone()` whatever their type: the generator does not know which types are `Copy`.
    Ok(quote! {
        #![allow(clippy::clone_on_copy)]
        #(use crate::#modules::*;)*
        #constructors
        #built_from
        #nested_unions
        #parameter_bounds
        #service_unavailable
        #encoded_answers
    })
}

/// The object components in the document's order (operation parameter structs are not components).
fn object_components<'m>(doc: &Yaml, structs: &Structs<'m>) -> anyhow::Result<Vec<&'m Struct>> {
    Ok(schema::component_schemas(doc)?
        .keys()
        .filter_map(Value::as_str)
        .filter_map(|n| structs.get(n).copied())
        .collect())
}

/// `Type::new(...)` for every object component with a tag, taking its required members (and flattened parts) in
/// declaration order, when that is at most [`MAX_PARAMETERS`]. Without any, also `Default`.
fn constructors(doc: &Yaml, structs: &Structs) -> anyhow::Result<TokenStream> {
    let mut out = TokenStream::new();
    for s in object_components(doc, structs)? {
        if !s.fields.iter().any(Field::is_tag) {
            continue;
        }
        let params: Vec<&Field> = s.fields.iter().filter(|f| !f.is_tag() && f.required).collect();
        if params.len() > MAX_PARAMETERS {
            continue;
        }
        let signature = params.iter().map(|f| parameter(f));
        let body = s.fields.iter().map(|f| {
            let member = ident(&f.ident);
            if f.part().is_some() {
                quote!(#member) // the parameter of the same name
            } else if f.is_tag() && f.required {
                quote!(#member: Default::default())
            } else if f.required {
                quote!(#member: #member.into())
            } else {
                quote!(#member: None)
            }
        });
        let (name, what) = (
            ident(&s.name),
            doc_comment(&format!("A `{}` with its tags set and its optional members absent.", s.name)),
        );
        out.extend(quote! {
            impl #name {
                #what
                pub fn new(#(#signature),*) -> Self { Self { #(#body),* } }
            }
        });
        if params.is_empty() {
            out.extend(quote!(impl Default for #name { fn default() -> Self { Self::new() } }));
        }
    }
    Ok(out)
}

/// `member: Part` for a flattened part, `member: impl Into<T>` for any other member.
fn parameter(f: &Field) -> TokenStream {
    let (member, ty) = (ident(&f.ident), f.declared());
    match f.part() {
        Some(_) => quote!(#member: #ty),
        None => quote!(#member: impl Into<#ty>),
    }
}

/// A member a source provides: which source, the path that reads it from there and its declared type.
struct Provided {
    source: usize,
    path: Vec<Ident>,
    declared: RustType,
}

/// The members of `source` by JSON name, read through `path` (flattened structs included; flattened unions, whose
/// variant is not known here, and tags, whose types are the owner's own, are not sources).
fn members_of(
    structs: &Structs,
    (index, source): (usize, &str),
    path: &[Ident],
    out: &mut BTreeMap<String, Provided>,
) -> anyhow::Result<()> {
    let s = structs.get(source).ok_or_else(|| anyhow!("x-built-from names {source}, which is not an object"))?;
    for f in s.fields.iter().filter(|f| !f.is_tag()) {
        let path = [path, &[ident(&f.ident)]].concat();
        match f.part() {
            Some(part) if structs.contains_key(part.component.as_str()) => {
                members_of(structs, (index, &part.component), &path, out)?
            }
            Some(_) => {}
            None => {
                let provided = Provided { source: index, path, declared: f.declared() };
                if out.insert(f.json.clone(), provided).is_some() {
                    bail!("x-built-from: member `{}` is in more than one source (of {source})", f.json);
                }
            }
        }
    }
    Ok(())
}

/// For every `x-built-from` source list of an object component: `From<(&A, &B)>` when the sources provide every
/// required member, else `Type::from_a_and_b(a, b, missing required members...)`. A member is copied from the
/// source member of the same name; an optional member no source has is absent, tags are the target's own. The
/// generator refuses a member whose type differs between source and target, and an optional source member for a
/// required target member.
fn built_from(doc: &Yaml, structs: &Structs, unions: &[&Union]) -> anyhow::Result<TokenStream> {
    let mut out = TokenStream::new();
    for (name, component) in schema::component_schemas(doc)? {
        let name = name.as_str().unwrap_or_default();
        let Some(lists) = component.get("x-built-from") else { continue };
        let lists = lists
            .as_sequence()
            .ok_or_else(|| anyhow!("{name}: x-built-from must be a list of lists of component names"))?;
        let target = structs.get(name).ok_or_else(|| anyhow!("{name}: x-built-from is for object components"))?;
        for list in lists {
            let sources: Vec<&str> = list
                .as_sequence()
                .ok_or_else(|| anyhow!("{name}: each x-built-from entry is a list of component names"))?
                .iter()
                .map(|s| s.as_str().ok_or_else(|| anyhow!("{name}: x-built-from names components by name")))
                .collect::<anyhow::Result<_>>()?;
            out.extend(conversion(target, &sources, structs, unions).with_context(|| name.to_owned())?);
        }
    }
    Ok(out)
}

fn conversion(target: &Struct, sources: &[&str], structs: &Structs, unions: &[&Union]) -> anyhow::Result<TokenStream> {
    if unions.iter().any(|u| sources.contains(&u.name.as_str())) {
        bail!("x-built-from names a union; name its variant");
    }
    let vars: Vec<String> = sources.iter().map(|s| s.to_snake_case()).collect();
    let mut provided = BTreeMap::new();
    for (index, (source, var)) in sources.iter().zip(&vars).enumerate() {
        members_of(structs, (index, source), &[ident(var)], &mut provided)?;
    }
    let mut missing = Vec::new();
    let mut used = vec![false; sources.len()];
    let mut body = Vec::new();
    for f in &target.fields {
        if f.part().is_some() {
            bail!("an object built from others has no flattened parts");
        }
        let member = ident(&f.ident);
        let declared = f.declared();
        let value = if f.is_tag() {
            if f.required {
                quote!(Default::default())
            } else {
                quote!(None)
            }
        } else if let Some(p) = provided.get(&f.json) {
            used[p.source] = true;
            let path = &p.path;
            if p.declared == declared {
                quote!(#(#path).*.clone())
            } else if !f.required && declared.option_of() == Some(&p.declared) {
                quote!(Some(#(#path).*.clone()))
            } else {
                bail!("member `{}` is `{}` in a source and `{declared}` here", f.json, p.declared);
            }
        } else if f.required {
            missing.push(f);
            quote!(#member.into())
        } else {
            quote!(None)
        };
        body.push(quote!(#member: #value));
    }
    // A source that provides no member (a state with only its tag) is still named, so the conversion says which
    // state it is for; its parameter is then unused.
    let vars: Vec<Ident> =
        vars.iter().zip(&used).map(|(v, used)| if *used { ident(v) } else { format_ident!("_{}", v) }).collect();
    let refs: Vec<TokenStream> = sources
        .iter()
        .map(|s| {
            let s = ident(s);
            quote!(&#s)
        })
        .collect();
    let what = format!(
        "`{}` from the members of the same names of {} (`x-built-from`); members none of them has are absent.",
        target.name,
        sources.iter().map(|s| format!("[`{s}`]")).collect::<Vec<_>>().join(" and ")
    );
    let name = ident(&target.name);
    if missing.is_empty() {
        let what = doc_comment(&what);
        let (ty, pattern) = match (refs.as_slice(), vars.as_slice()) {
            ([single], [var]) => (single.clone(), quote!(#var)),
            _ => (quote!((#(#refs),*)), quote!((#(#vars),*))),
        };
        return Ok(quote! {
            #what
            impl From<#ty> for #name { fn from(#pattern: #ty) -> Self { Self { #(#body),* } } }
        });
    }
    if sources.len() + missing.len() > MAX_PARAMETERS {
        bail!("built from {sources:?}, {} required members are left: too many parameters", missing.len());
    }
    let mut params: Vec<TokenStream> = vars.iter().zip(&refs).map(|(v, r)| quote!(#v: #r)).collect();
    params.extend(missing.iter().map(|f| parameter(f)));
    let method = format_ident!(
        "from_{}",
        vars.iter().map(|v| v.to_string().trim_start_matches('_').to_owned()).collect::<Vec<_>>().join("_and_")
    );
    let names: Vec<String> = missing.iter().map(|f| format!("`{}`", f.json)).collect();
    let what = doc_comment(&format!("{what}\nThe members they lack are given: {}.", names.join(", ")));
    Ok(quote! {
        impl #name {
            #what
            pub fn #method(#(#params),*) -> Self { Self { #(#body),* } }
        }
    })
}

/// `From<Leaf> for Outer` when a variant of the union `Outer` is itself a union that holds `Leaf` (at any depth),
/// and `Leaf` is held nowhere else in `Outer`.
fn nested_unions(unions: &[&Union]) -> TokenStream {
    let by_name: BTreeMap<&str, &Union> = unions.iter().map(|u| (u.name.as_str(), *u)).collect();
    fn leaves<'a>(union: &'a Union, by_name: &BTreeMap<&str, &'a Union>, out: &mut Vec<&'a str>) {
        for v in &union.variants {
            if let Some(inner) = by_name.get(v.ty.as_str()) {
                leaves(inner, by_name, out);
            }
            out.push(&v.ty);
        }
    }
    let mut out = TokenStream::new();
    for outer in unions {
        let mut held: Vec<(&str, &str, &str)> = Vec::new(); // (leaf, via variant ident, via union)
        for v in outer.variants.iter().filter(|v| by_name.contains_key(v.ty.as_str())) {
            let mut inner_leaves = Vec::new();
            leaves(by_name[v.ty.as_str()], &by_name, &mut inner_leaves);
            held.extend(inner_leaves.into_iter().map(|leaf| (leaf, v.ident.as_str(), v.ty.as_str())));
        }
        for (leaf, variant, inner) in &held {
            let ambiguous = held.iter().filter(|(l, _, _)| l == leaf).count() > 1;
            if ambiguous || outer.variants.iter().any(|v| v.ty == *leaf) {
                continue;
            }
            let (outer, leaf, variant, inner) = (ident(&outer.name), ident(leaf), ident(variant), ident(inner));
            out.extend(quote! {
                impl From<#leaf> for #outer { fn from(v: #leaf) -> Self { Self::#variant(#inner::from(v)) } }
            });
        }
    }
    out
}

/// The bounds and defaults of operation parameters as associated constants of their parameter struct.
fn parameter_bounds(doc: &Yaml) -> anyhow::Result<TokenStream> {
    let mut out = TokenStream::new();
    for op in schema::operations(doc)? {
        if op.alias_of.is_some() {
            continue;
        }
        let base = op.id.to_upper_camel_case();
        let mut by_struct: BTreeMap<String, Vec<TokenStream>> = BTreeMap::new();
        for param in schema::parameters(doc, op.op)? {
            let (Some(location), Some(name), Some(param_schema)) =
                (schema::str_of(param, "in"), schema::str_of(param, "name"), param.get("schema"))
            else {
                continue;
            };
            let constants = bounds(name, param_schema)?;
            if !constants.is_empty() {
                by_struct.entry(format!("{base}{}", location.to_upper_camel_case())).or_default().extend(constants);
            }
        }
        for (ty, constants) in by_struct {
            let ty = ident(&ty);
            out.extend(quote!(impl #ty { #(#constants)* }));
        }
    }
    Ok(out)
}

fn bounds(name: &str, schema: &Yaml) -> anyhow::Result<Vec<TokenStream>> {
    let constant = name.to_shouty_snake_case();
    let kind = schema::str_of(schema, "type").unwrap_or_default();
    let mut out = Vec::new();
    for (key, suffix, what) in
        [("default", "DEFAULT", "default"), ("minimum", "MINIMUM", "minimum"), ("maximum", "MAXIMUM", "maximum")]
    {
        let Some(v) = schema.get(key) else { continue };
        let (ty, value) = match (kind, v) {
            ("number" | "integer", v) => {
                let v = v.as_f64().ok_or_else(|| anyhow!("parameter {name}: a bound that is not a number"))?;
                match kind {
                    "integer" => (quote!(i64), crate::tokens::number(&(v as i64).to_string())),
                    _ => (quote!(f64), float(v, "")),
                }
            }
            (_, Value::String(s)) => (quote!(&'static str), quote!(#s)),
            (_, Value::Bool(b)) => (quote!(bool), quote!(#b)),
            _ => bail!("parameter {name}: unsupported {key}"),
        };
        let doc = doc_comment(&format!("The {what} of `{name}` (schema)."));
        let constant = format_ident!("{constant}_{suffix}");
        out.push(quote!(#doc pub const #constant: #ty = #value;));
    }
    for (key, suffix) in [("minLength", "MIN_LENGTH"), ("maxLength", "MAX_LENGTH")] {
        if let Some(v) = schema::u64_of(schema, key) {
            let doc = doc_comment(&format!("`{key}` of `{name}` (schema)."));
            let (constant, v) = (format_ident!("{constant}_{suffix}"), unsuffixed(v));
            out.push(quote!(#doc pub const #constant: usize = #v;));
        }
    }
    Ok(out)
}

/// `impl<T: IntoServiceUnavailable> From<T>` for the error enum of every operation that answers 503
/// `ServiceUnavailable` (directly or as a variant of its 503 union).
fn service_unavailable(doc: &Yaml) -> anyhow::Result<TokenStream> {
    let schemas = schema::component_schemas(doc)?;
    let holds = |ty: &str| {
        ty == "ServiceUnavailable"
            || schemas.get(ty).and_then(|s| s.get("oneOf")).and_then(Value::as_sequence).is_some_and(|variants| {
                variants.iter().any(|v| schema::str_of(v, "$ref") == Some("#/components/schemas/ServiceUnavailable"))
            })
    };
    let mut out = TokenStream::new();
    for op in schema::operations(doc)? {
        let errors = schema::errors(doc, op.op)?;
        if !errors.iter().any(|e| e.status == 503 && holds(&e.ty)) {
            continue;
        }
        let error = format_ident!("{}Error", op.id.to_upper_camel_case());
        out.extend(quote! {
            impl<T: crate::IntoServiceUnavailable> From<T> for #error {
                fn from(failure: T) -> Self { Self::from(failure.into_service_unavailable()) }
            }
        });
    }
    Ok(out)
}

/// The object component an operation marked `x-encoded-answer: true` answers 200 with, for each such operation.
fn encoded_answer_types(doc: &Yaml) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for op in schema::operations(doc)? {
        match op.op.get("x-encoded-answer") {
            None => continue,
            Some(Value::Bool(true)) => {}
            Some(other) => bail!("{}: x-encoded-answer must be `true` (or absent), not {other:?}", op.id),
        }
        let name = schema::answer_type(doc, op.op)?
            .ok_or_else(|| anyhow!("{}: x-encoded-answer without a JSON 200 answer", op.id))?
            .to_string();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// `Type::encode_with(…)` for the answer of each operation marked `x-encoded-answer` that is an object with list
/// members (other answers are served from their own `Encoded<T>`): one parameter per member in
/// declaration order, a list member as its encoded text (`&Encoded<Vec<Item>>`, copied), any other member as
/// its value (written with serde, absent when optional and `None`, as the type's own `Serialize` does).
fn encoded_answers(doc: &Yaml, structs: &Structs) -> anyhow::Result<TokenStream> {
    let mut out = TokenStream::new();
    for name in encoded_answer_types(doc)? {
        // An answer without lists (a record, a union) is served from its own encoding: nothing to put together.
        let Some(s) = structs.get(name.as_str()) else { continue };
        if !s.fields.iter().any(|f| f.declared().vec_of().is_some()) {
            continue;
        }
        if s.fields.len() > MAX_PARAMETERS {
            bail!("x-encoded-answer: {name} has more than {MAX_PARAMETERS} members");
        }
        let mut params = Vec::new();
        let mut writes = Vec::new();
        let mut lists = Vec::new();
        for f in &s.fields {
            if f.part().is_some() {
                bail!("x-encoded-answer: {name} flattens `{}`; only plain members are supported", f.ident);
            }
            if !f.json.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                bail!("x-encoded-answer: {name}.{} needs escaping", f.json);
            }
            let (member, declared, json) = (ident(&f.ident), f.declared(), &f.json);
            if declared.vec_of().is_some() {
                lists.push(quote!(#member.as_str().len()));
                params.push(quote!(#member: &crate::Encoded<#declared>));
                writes.push(quote!(crate::encoded::write_member(&mut out, &mut first, #json, #member.as_str());));
                continue;
            }
            params.push(quote!(#member: &#declared));
            let write =
                quote!(crate::encoded::write_member(&mut out, &mut first, #json, &serde_json::to_string(#member)?););
            writes.push(if f.required { write } else { quote!(if #member.is_some() { #write }) });
        }
        let name = ident(&name);
        out.extend(quote! {
            impl #name {
                /// This answer's JSON, exactly as its `Serialize` writes it, from its lists already encoded (copied, not
                /// decoded) and its other members.
                pub fn encode_with(#(#params),*) -> Result<crate::Encoded<Self>, serde_json::Error> {
                    let mut out = String::with_capacity(64 #(+ #lists)*);
                    let mut first = true;
                    out.push('{');
                    #(#writes)*
                    out.push('}');
                    Ok(crate::Encoded::from_generated(out))
                }
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rust_types::model::{FieldValue, Origin, Shape, Variant};

    fn field(json: &str, shape: Shape, required: bool) -> Field {
        Field { json: json.into(), ident: json.to_snake_case(), doc: None, required, value: FieldValue::Member(shape) }
    }

    fn text() -> Shape {
        Shape::String { min_length: None, max_length: None, pattern: None }
    }

    fn tag(json: &str, ty: &str) -> Field {
        field(json, Shape::Tag(ty.into()), true)
    }

    fn object(name: &str, fields: Vec<Field>) -> Struct {
        Struct { name: name.into(), doc: None, fields, deny_unknown_fields: false, origin: Origin::Component }
    }

    /// The items as prettyplease prints them, white space folded.
    fn folded(tokens: TokenStream) -> String {
        let file = prettyplease::unparse(&syn::parse2(tokens).unwrap());
        file.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_conversion_copies_members_by_name_and_asks_for_what_is_missing() {
        let record = object("Record", vec![field("amount", text(), true), field("note", text(), false)]);
        let plain = object("Plain", vec![field("amount", text(), true)]);
        let structs: Structs = [("Record", &record), ("Plain", &plain)].into_iter().collect();
        let target = object(
            "Event",
            vec![
                tag("_tag", "EventTag"),
                field("amount", text(), false),
                field("note", text(), false),
                field("at", Shape::Named("crate::DateString".into()), true),
                field("extra", Shape::Integer { minimum: Some(0.0), maximum: None }, false),
            ],
        );
        let text = folded(conversion(&target, &["Record"], &structs, &[]).unwrap());
        assert!(
            text.contains("pub fn from_record(record: &Record, at: impl Into<crate::DateString>) -> Self"),
            "{text}"
        );
        assert!(text.contains("amount: Some(record.amount.clone())"), "{text}");
        assert!(text.contains("note: record.note.clone()"), "{text}");
        assert!(text.contains("tag: Default::default()") && text.contains("extra: None"), "{text}");

        let narrow = object("Narrow", vec![field("amount", self::text(), true)]);
        let complete = folded(conversion(&narrow, &["Plain"], &structs, &[]).unwrap());
        assert!(complete.contains("impl From<&Plain> for Narrow"), "{complete}");
    }

    #[test]
    fn a_conversion_refuses_an_optional_source_for_a_required_member() {
        let loose = object("Loose", vec![field("note", text(), false)]);
        let structs: Structs = [("Loose", &loose)].into_iter().collect();
        let strict = object("Strict", vec![field("note", text(), true)]);
        let err = conversion(&strict, &["Loose"], &structs, &[]).unwrap_err();
        assert!(err.to_string().contains("member `note`"), "{err}");
    }

    #[test]
    fn nested_union_leaves_convert_into_the_outer_union() {
        let variant = |ident: &str, ty: &str| Variant { key: ident.into(), ident: ident.into(), ty: ty.into() };
        let union = |name: &str, variants| Union {
            name: name.into(),
            doc: None,
            discriminant: crate::rust_types::model::Discriminant::Presence,
            variants,
        };
        let outer = union("Outer", vec![variant("Inner", "Inner"), variant("Own", "Own")]);
        let inner = union("Inner", vec![variant("A", "LeafA"), variant("B", "LeafB")]);
        let text = folded(nested_unions(&[&outer, &inner]));
        assert!(text.contains("impl From<LeafA> for Outer"), "{text}");
        assert!(text.contains("Self::Inner(Inner::from(v))"), "{text}");
        assert!(!text.contains("impl From<Own>"), "direct variants already convert: {text}");
    }
}
