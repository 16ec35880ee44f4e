//! Generates `src/generated/domain.rs`: what an implementation needs to build the contract's values without
//! writing the schema again (README.md, "Generated code"):
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
//! Each is a function of its own over the field descriptions `rust_types` records while it emits the structs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{anyhow, bail, Context};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{format_rust, HEADER};
use crate::operations;

/// Parameters a generated function may take (clippy's `too_many_arguments` limit).
const MAX_PARAMETERS: usize = 7;

/// One field of a generated struct, as `rust_types` emitted it.
#[derive(Debug, Clone)]
pub struct FieldDef {
    /// JSON member name (empty for a flattened field).
    pub json: String,
    /// Rust field identifier.
    pub ident: String,
    /// Rust type as declared (`Option<…>` included).
    pub declared: String,
    pub required: bool,
    /// The flattened struct or union type, for an `allOf` member.
    pub flatten: Option<String>,
    /// A single-value tag enum (`_tag`, `type`, `state`).
    pub tag: bool,
}

type Structs = BTreeMap<String, Vec<FieldDef>>;
type Unions = [(String, Vec<(String, String)>)];

pub fn generate(doc: &Yaml, structs: &Structs, unions: &Unions) -> anyhow::Result<String> {
    // Members are copied with `.clone()` whatever their type: the generator does not know which types are `Copy`.
    let mut out =
        String::from("#![allow(clippy::clone_on_copy)]\n\nuse crate::operations::*;\nuse crate::types::*;\n\n");
    out.push_str(&constructors(doc, structs)?);
    out.push_str(&built_from(doc, structs, unions)?);
    out.push_str(&nested_unions(unions)?);
    out.push_str(&parameter_bounds(doc)?);
    out.push_str(&service_unavailable(doc)?);
    out.push_str(&encoded_answers(doc, structs)?);
    Ok(format!(
        "{HEADER}\n//! Constructors, conversions and bounds of the contract's types (`xtask/src/domain.rs`). Members are copied\n//! with `.clone()` whatever their type, as the generator does not know which types are `Copy`.\n\n{}",
        format_rust(&out)?
    ))
}

fn component_schemas(doc: &Yaml) -> anyhow::Result<&serde_norway::Mapping> {
    doc.get("components")
        .and_then(|c| c.get("schemas"))
        .and_then(Value::as_mapping)
        .ok_or_else(|| anyhow!("no components.schemas"))
}

/// The object components in the document's order (operation parameter structs are not components).
fn object_components<'a>(doc: &Yaml, structs: &'a Structs) -> anyhow::Result<Vec<(&'a str, &'a [FieldDef])>> {
    Ok(component_schemas(doc)?
        .keys()
        .filter_map(Value::as_str)
        .filter_map(|name| structs.get_key_value(name).map(|(k, v)| (k.as_str(), v.as_slice())))
        .collect())
}

/// `Type::new(...)` for every object component with a tag, taking its required members (and flattened parts) in
/// declaration order, when that is at most [`MAX_PARAMETERS`]. Without any, also `Default`.
fn constructors(doc: &Yaml, structs: &Structs) -> anyhow::Result<String> {
    let mut t = String::new();
    for (name, fields) in object_components(doc, structs)? {
        if !fields.iter().any(|f| f.tag) {
            continue;
        }
        let params: Vec<&FieldDef> = fields.iter().filter(|f| !f.tag && (f.required || f.flatten.is_some())).collect();
        if params.len() > MAX_PARAMETERS {
            continue;
        }
        let signature: Vec<String> = params.iter().map(|f| parameter(f)).collect();
        let body: Vec<String> = fields
            .iter()
            .map(|f| {
                if f.flatten.is_some() {
                    return f.ident.clone(); // the parameter of the same name
                }
                let value = if f.tag && f.required {
                    "Default::default()"
                } else if f.required {
                    return format!("{0}: {0}.into()", f.ident);
                } else {
                    "None"
                };
                format!("{}: {value}", f.ident)
            })
            .collect();
        writeln!(
            t,
            "impl {name} {{\n    /// A `{name}` with its tags set and its optional members absent.\n    pub fn new({}) -> Self {{ Self {{ {} }} }}\n}}\n",
            signature.join(", "),
            body.join(", ")
        )?;
        if params.is_empty() {
            writeln!(t, "impl Default for {name} {{ fn default() -> Self {{ Self::new() }} }}\n")?;
        }
    }
    Ok(t)
}

fn parameter(f: &FieldDef) -> String {
    match &f.flatten {
        Some(ty) => format!("{}: {ty}", f.ident),
        None => format!("{}: impl Into<{}>", f.ident, f.declared),
    }
}

/// A member a source provides: the expression that reads it, its declared type and whether it is required.
struct Provided {
    expr: String,
    declared: String,
}

/// The members of `source` by JSON name, read through `var` (flattened structs included; flattened unions, whose
/// variant is not known here, and tags, whose types are the owner's own, are not sources).
fn members_of(structs: &Structs, source: &str, var: &str, out: &mut BTreeMap<String, Provided>) -> anyhow::Result<()> {
    let fields = structs.get(source).ok_or_else(|| anyhow!("x-built-from names {source}, which is not an object"))?;
    for f in fields {
        if f.tag {
            continue;
        }
        match &f.flatten {
            Some(ty) if structs.contains_key(ty) => members_of(structs, ty, &format!("{var}.{}", f.ident), out)?,
            Some(_) => {}
            None => {
                let provided = Provided { expr: format!("{var}.{}", f.ident), declared: f.declared.clone() };
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
fn built_from(doc: &Yaml, structs: &Structs, unions: &Unions) -> anyhow::Result<String> {
    let mut t = String::new();
    for (name, schema) in component_schemas(doc)? {
        let name = name.as_str().unwrap_or_default();
        let Some(lists) = schema.get("x-built-from") else { continue };
        let lists = lists
            .as_sequence()
            .ok_or_else(|| anyhow!("{name}: x-built-from must be a list of lists of component names"))?;
        let fields = structs.get(name).ok_or_else(|| anyhow!("{name}: x-built-from is for object components"))?;
        for list in lists {
            let sources: Vec<&str> = list
                .as_sequence()
                .ok_or_else(|| anyhow!("{name}: each x-built-from entry is a list of component names"))?
                .iter()
                .map(|s| s.as_str().ok_or_else(|| anyhow!("{name}: x-built-from names components by name")))
                .collect::<anyhow::Result<_>>()?;
            t.push_str(&conversion(name, fields, &sources, structs, unions).with_context(|| name.to_owned())?);
        }
    }
    Ok(t)
}

fn conversion(
    name: &str,
    fields: &[FieldDef],
    sources: &[&str],
    structs: &Structs,
    unions: &Unions,
) -> anyhow::Result<String> {
    if unions.iter().any(|(u, _)| sources.contains(&u.as_str())) {
        bail!("x-built-from names a union; name its variant");
    }
    let vars: Vec<String> = sources.iter().map(|s| s.to_snake_case()).collect();
    let mut provided = BTreeMap::new();
    for (source, var) in sources.iter().zip(&vars) {
        members_of(structs, source, var, &mut provided)?;
    }
    let mut missing = Vec::new();
    let mut body = Vec::new();
    for f in fields {
        if f.flatten.is_some() {
            bail!("an object built from others has no flattened parts");
        }
        let value = if f.tag {
            if f.required {
                "Default::default()".to_owned()
            } else {
                "None".to_owned()
            }
        } else if let Some(p) = provided.get(&f.json) {
            if p.declared == f.declared {
                format!("{}.clone()", p.expr)
            } else if !f.required && f.declared == format!("Option<{}>", p.declared) {
                format!("Some({}.clone())", p.expr)
            } else {
                bail!("member `{}` is `{}` in a source and `{}` here", f.json, p.declared, f.declared);
            }
        } else if f.required {
            missing.push(f);
            format!("{}.into()", f.ident)
        } else {
            "None".to_owned()
        };
        body.push(format!("{}: {value}", f.ident));
    }
    // A source that provides no member (a state with only its tag) is still named, so the conversion says which
    // state it is for; its parameter is then unused.
    let body_text = body.join(", ");
    let vars: Vec<String> =
        vars.into_iter().map(|v| if body_text.contains(&format!("{v}.")) { v } else { format!("_{v}") }).collect();
    let refs: Vec<String> = sources.iter().map(|s| format!("&{s}")).collect();
    let what = format!(
        "/// `{name}` from the members of the same names of {} (`x-built-from`); members none of them has are absent.",
        sources.iter().map(|s| format!("[`{s}`]")).collect::<Vec<_>>().join(" and ")
    );
    let body = body.join(", ");
    if missing.is_empty() {
        let (ty, pattern) = match sources {
            [_] => (refs[0].clone(), vars[0].clone()),
            _ => (format!("({})", refs.join(", ")), format!("({})", vars.join(", "))),
        };
        return Ok(format!(
            "{what}\nimpl From<{ty}> for {name} {{ fn from({pattern}: {ty}) -> Self {{ Self {{ {body} }} }} }}\n\n"
        ));
    }
    if sources.len() + missing.len() > MAX_PARAMETERS {
        bail!("built from {sources:?}, {} required members are left: too many parameters", missing.len());
    }
    let mut params: Vec<String> = vars.iter().zip(&refs).map(|(v, r)| format!("{v}: {r}")).collect();
    params.extend(missing.iter().map(|f| parameter(f)));
    let method = format!("from_{}", vars.iter().map(|v| v.trim_start_matches('_')).collect::<Vec<_>>().join("_and_"));
    let names: Vec<String> = missing.iter().map(|f| format!("`{}`", f.json)).collect();
    Ok(format!(
        "impl {name} {{\n    {what}\n    /// The members they lack are given: {}.\n    pub fn {method}({}) -> Self {{ Self {{ {body} }} }}\n}}\n\n",
        names.join(", "),
        params.join(", ")
    ))
}

/// `From<Leaf> for Outer` when a variant of the union `Outer` is itself a union that holds `Leaf` (at any depth),
/// and `Leaf` is held nowhere else in `Outer`.
fn nested_unions(unions: &Unions) -> anyhow::Result<String> {
    let variants: BTreeMap<&str, &Vec<(String, String)>> = unions.iter().map(|(u, v)| (u.as_str(), v)).collect();
    fn leaves<'a>(union: &str, variants: &BTreeMap<&str, &'a Vec<(String, String)>>, out: &mut Vec<&'a str>) {
        for (_, ty) in variants[union].iter() {
            if variants.contains_key(ty.as_str()) {
                leaves(ty, variants, out);
            }
            out.push(ty);
        }
    }
    let mut t = String::new();
    for (outer, own) in unions {
        let mut held: Vec<(&str, &str, &str)> = Vec::new(); // (leaf, via variant ident, via union)
        for (ident, inner) in own.iter().filter(|(_, ty)| variants.contains_key(ty.as_str())) {
            let mut inner_leaves = Vec::new();
            leaves(inner, &variants, &mut inner_leaves);
            held.extend(inner_leaves.into_iter().map(|leaf| (leaf, ident.as_str(), inner.as_str())));
        }
        for (leaf, ident, inner) in &held {
            let ambiguous = held.iter().filter(|(l, _, _)| l == leaf).count() > 1;
            if ambiguous || own.iter().any(|(_, ty)| ty == leaf) {
                continue;
            }
            writeln!(
                t,
                "impl From<{leaf}> for {outer} {{ fn from(v: {leaf}) -> Self {{ Self::{ident}({inner}::from(v)) }} }}\n"
            )?;
        }
    }
    Ok(t)
}

/// The bounds and defaults of operation parameters as associated constants of their parameter struct.
fn parameter_bounds(doc: &Yaml) -> anyhow::Result<String> {
    let mut t = String::new();
    for op in operations::all(doc)? {
        if op.alias_of.is_some() {
            continue;
        }
        let base = op.id.to_upper_camel_case();
        let mut by_struct: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for param in op.op.get("parameters").and_then(Value::as_sequence).into_iter().flatten() {
            let param = crate::rust_types::resolve_parameter(doc, param);
            let (Some(location), Some(name), Some(schema)) = (
                param.get("in").and_then(Value::as_str),
                param.get("name").and_then(Value::as_str),
                param.get("schema"),
            ) else {
                continue;
            };
            let constants = bounds(name, schema)?;
            if !constants.is_empty() {
                by_struct.entry(format!("{base}{}", location.to_upper_camel_case())).or_default().extend(constants);
            }
        }
        for (ty, constants) in by_struct {
            writeln!(t, "impl {ty} {{\n{}}}\n", constants.join(""))?;
        }
    }
    Ok(t)
}

fn bounds(name: &str, schema: &Yaml) -> anyhow::Result<Vec<String>> {
    let constant = name.to_shouty_snake_case();
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or_default();
    let mut out = Vec::new();
    let number = |v: &Yaml| -> anyhow::Result<String> {
        let v = v.as_f64().ok_or_else(|| anyhow!("parameter {name}: a bound that is not a number"))?;
        Ok(match kind {
            "integer" => format!("i64 = {}", v as i64),
            _ => format!("f64 = {v:?}"),
        })
    };
    for (key, suffix, what) in
        [("default", "DEFAULT", "default"), ("minimum", "MINIMUM", "minimum"), ("maximum", "MAXIMUM", "maximum")]
    {
        if let Some(v) = schema.get(key) {
            let value = match (kind, v) {
                ("number" | "integer", v) => number(v)?,
                (_, Value::String(s)) => format!("&'static str = {s:?}"),
                (_, Value::Bool(b)) => format!("bool = {b}"),
                _ => bail!("parameter {name}: unsupported {key}"),
            };
            out.push(format!(
                "    /// The {what} of `{name}` (schema).\n    pub const {constant}_{suffix}: {value};\n"
            ));
        }
    }
    for (key, suffix) in [("minLength", "MIN_LENGTH"), ("maxLength", "MAX_LENGTH")] {
        if let Some(v) = schema.get(key).and_then(Value::as_u64) {
            out.push(format!(
                "    /// `{key}` of `{name}` (schema).\n    pub const {constant}_{suffix}: usize = {v};\n"
            ));
        }
    }
    Ok(out)
}

/// `impl<T: IntoServiceUnavailable> From<T>` for the error enum of every operation that answers 503
/// `ServiceUnavailable` (directly or as a variant of its 503 union).
fn service_unavailable(doc: &Yaml) -> anyhow::Result<String> {
    let schemas = component_schemas(doc)?;
    let holds = |ty: &str| {
        ty == "ServiceUnavailable"
            || schemas.get(ty).and_then(|s| s.get("oneOf")).and_then(Value::as_sequence).is_some_and(|variants| {
                variants
                    .iter()
                    .any(|v| v.get("$ref").and_then(Value::as_str) == Some("#/components/schemas/ServiceUnavailable"))
            })
    };
    let mut t = String::new();
    for op in operations::all(doc)? {
        let errors = operations::errors(doc, op.op)?;
        if !errors.iter().any(|(status, ty, _)| *status == 503 && holds(ty)) {
            continue;
        }
        let error = format!("{}Error", op.id.to_upper_camel_case());
        writeln!(
            t,
            "impl<T: crate::IntoServiceUnavailable> From<T> for {error} {{ fn from(failure: T) -> Self {{ Self::from(failure.into_service_unavailable()) }} }}\n"
        )?;
    }
    Ok(t)
}

/// The object component an operation marked `x-encoded-answer: true` answers 200 with, for each such operation.
fn encoded_answer_types(doc: &Yaml) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for op in operations::all(doc)? {
        match op.op.get("x-encoded-answer") {
            None => continue,
            Some(Value::Bool(true)) => {}
            Some(other) => bail!("{}: x-encoded-answer must be `true` (or absent), not {other:?}", op.id),
        }
        let ok = op
            .op
            .get("responses")
            .and_then(|r| r.get("200"))
            .and_then(|r| operations::content_schema(doc, r))
            .ok_or_else(|| anyhow!("{}: x-encoded-answer without a JSON 200 answer", op.id))?;
        let name = operations::schema_type(&ok)?;
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
fn encoded_answers(doc: &Yaml, structs: &Structs) -> anyhow::Result<String> {
    let mut t = String::new();
    for name in encoded_answer_types(doc)? {
        // An answer without lists (a record, a union) is served from its own encoding: nothing to put together.
        let Some(fields) = structs.get(&name) else { continue };
        if !fields.iter().any(|f| f.declared.starts_with("Vec<")) {
            continue;
        }
        if fields.len() > MAX_PARAMETERS {
            bail!("x-encoded-answer: {name} has more than {MAX_PARAMETERS} members");
        }
        let mut params = Vec::new();
        let mut body = String::new();
        let mut lists = Vec::new();
        for f in fields {
            if f.flatten.is_some() {
                bail!("x-encoded-answer: {name} flattens `{}`; only plain members are supported", f.ident);
            }
            if !f.json.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                bail!("x-encoded-answer: {name}.{} needs escaping", f.json);
            }
            let ident = &f.ident;
            if f.declared.starts_with("Vec<") {
                lists.push(format!("{ident}.as_str().len()"));
                params.push(format!("{ident}: &crate::Encoded<{}>", f.declared));
                writeln!(body, "crate::encoded::write_member(&mut out, &mut first, {:?}, {ident}.as_str());", f.json)?;
                continue;
            }
            params.push(format!("{ident}: &{}", f.declared));
            let write = format!(
                "crate::encoded::write_member(&mut out, &mut first, {:?}, &serde_json::to_string({ident})?);",
                f.json
            );
            if f.required {
                writeln!(body, "{write}")?;
            } else {
                writeln!(body, "if {ident}.is_some() {{ {write} }}")?;
            }
        }
        writeln!(
            t,
            "impl {name} {{
    /// This answer's JSON, exactly as its `Serialize` writes it, from its lists already encoded (copied, not
    /// decoded) and its other members.
    pub fn encode_with({}) -> Result<crate::Encoded<Self>, serde_json::Error> {{
        let mut out = String::with_capacity(64 + {});
        let mut first = true;
        out.push('{{');
        {body}
        out.push('}}');
        Ok(crate::Encoded::from_generated(out))
    }}
}}
",
            params.join(", "),
            lists.join(" + ")
        )?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(json: &str, declared: &str, required: bool) -> FieldDef {
        FieldDef {
            json: json.into(),
            ident: json.to_snake_case(),
            declared: declared.into(),
            required,
            flatten: None,
            tag: false,
        }
    }

    fn tag(json: &str, ty: &str) -> FieldDef {
        FieldDef { tag: true, ..field(json, ty, true) }
    }

    #[test]
    fn a_conversion_copies_members_by_name_and_asks_for_what_is_missing() {
        let mut structs = Structs::new();
        structs.insert("Record".into(), vec![field("amount", "String", true), field("note", "Option<String>", false)]);
        structs.insert("Plain".into(), vec![field("amount", "String", true)]);
        let target = vec![
            tag("_tag", "EventTag"),
            field("amount", "Option<String>", false),
            field("note", "Option<String>", false),
            field("at", "crate::DateString", true),
            field("extra", "Option<u64>", false),
        ];
        let text = conversion("Event", &target, &["Record"], &structs, &[]).unwrap();
        assert!(
            text.contains("pub fn from_record(record: &Record, at: impl Into<crate::DateString>) -> Self"),
            "{text}"
        );
        assert!(text.contains("amount: Some(record.amount.clone())"), "{text}");
        assert!(text.contains("note: record.note.clone()"), "{text}");
        assert!(text.contains("tag: Default::default()") && text.contains("extra: None"), "{text}");

        let complete = conversion("Narrow", &[field("amount", "String", true)], &["Plain"], &structs, &[]).unwrap();
        assert!(complete.contains("impl From<&Plain> for Narrow"), "{complete}");
    }

    #[test]
    fn a_conversion_refuses_an_optional_source_for_a_required_member() {
        let mut structs = Structs::new();
        structs.insert("Loose".into(), vec![field("note", "Option<String>", false)]);
        let err = conversion("Strict", &[field("note", "String", true)], &["Loose"], &structs, &[]).unwrap_err();
        assert!(err.to_string().contains("member `note`"), "{err}");
    }

    #[test]
    fn nested_union_leaves_convert_into_the_outer_union() {
        let unions = vec![
            ("Outer".to_owned(), vec![("Inner".to_owned(), "Inner".to_owned()), ("Own".to_owned(), "Own".to_owned())]),
            ("Inner".to_owned(), vec![("A".to_owned(), "LeafA".to_owned()), ("B".to_owned(), "LeafB".to_owned())]),
        ];
        let text = nested_unions(&unions).unwrap();
        assert!(text.contains("impl From<LeafA> for Outer"), "{text}");
        assert!(text.contains("Self::Inner(Inner::from(v))"), "{text}");
        assert!(!text.contains("impl From<Own>"), "direct variants already convert: {text}");
    }
}

/// The rules on a fixture document (`xtask/tests/fixtures/generators/x_built_from.yaml`), through the whole
/// pipeline: bundled, validated and linted like the real schema, then generated.
#[cfg(test)]
mod fixture {
    use std::path::Path;

    use crate::bundle;

    fn domain_of(fixture: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generators").join(fixture);
        let doc = bundle::load(&path).unwrap();
        let json = bundle::to_json_value(&doc).unwrap();
        let mut problems = crate::validate::problems(&json);
        problems.extend(crate::lint::problems(&json, &doc));
        assert!(problems.is_empty(), "{problems:?}");
        let files = crate::rust_types::generate(&doc, "fixture").unwrap();
        files
            .into_iter()
            .find(|(p, _)| p.ends_with("domain.rs"))
            .unwrap()
            .1
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn x_built_from_constructors_and_nested_unions() {
        let text = domain_of("x_built_from.yaml");
        // complete sources: a conversion; members by name, optional ones absent, tags the event's own
        assert!(text.contains("impl From<(&Record, &Settled)> for SettledCardEvent"), "{text}");
        assert!(text.contains("tx_hash: settled.tx_hash.clone()") && text.contains("extra: None"), "{text}");
        assert!(text.contains("note: record.note.clone()"), "{text}");
        // a required member no source has: a constructor that takes it
        assert!(text.contains("pub fn from_record(record: &Record, opened_at: impl Into<String>) -> Self"), "{text}");
        // a tagged object: new(required members)
        assert!(text.contains("impl Settled { /// A `Settled` with its tags set and its optional members absent. pub fn new(tx_hash: impl Into<String>) -> Self"), "{text}");
        // the leaves of a union variant convert into the outer union
        assert!(text.contains("impl From<SettledCardEvent> for Event { fn from(v: SettledCardEvent) -> Self { Self::Settled(SettledEvent::from(v)) } }"), "{text}");
        assert!(!text.contains("impl From<OpenedEvent> for Event"), "a direct variant converts already: {text}");
    }

    #[test]
    fn x_encoded_answer_puts_the_answer_together_from_encoded_lists() {
        let text = domain_of("x_encoded_answer.yaml");
        assert!(
            text.contains("pub fn encode_with( items: &crate::Encoded<Vec<Event>>, next: &Option<String>, total: &Option<i64>, ) -> Result<crate::Encoded<Self>, serde_json::Error>"),
            "{text}"
        );
        // the list copied, a required nullable member always written, an optional one only when present
        assert!(text.contains(r#"write_member(&mut out, &mut first, "items", items.as_str());"#), "{text}");
        assert!(
            text.contains(r#"write_member( &mut out, &mut first, "next", &serde_json::to_string(next)?, );"#),
            "{text}"
        );
        assert!(text.contains(r#"if total.is_some() {"#), "{text}");
        assert!(!text.contains("impl Event {"), "only the marked operation's answer: {text}");
    }
}
