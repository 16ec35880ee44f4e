//! Generates the contract's Rust types (`src/generated/types.rs`) and their proptest strategies
//! (`src/generated/arbitrary.rs`) from the bundled document.
//!
//! Mapping (see README.md, "Generated code"):
//! * object component → struct with one field per property, in declaration order; optional → `Option` skipped
//!   when `None`; required-but-nullable → `Option` that must be present; `additionalProperties: false` →
//!   `deny_unknown_fields`; `allOf` members → `#[serde(flatten)]` fields (a union member is named after its
//!   discriminator, e.g. `state`; a `...Common` member is `common`);
//! * a single-value enum property (a tag such as `_tag: [bridge]`) → a one-variant enum `{Struct}{Property}`;
//! * string enum component → enum with `as_str()`;
//! * discriminated `oneOf` → enum with one newtype variant per tag value and serde impls that read the object once
//!   (`codec::union`: buffered, strings borrowed), find the tag wherever it is, name it in errors (never
//!   `untagged`) and read the variant from the buffer; `x-discriminator-default` is used when the tag is absent;
//! * a struct with `allOf` members → `Serialize` derived with `flatten`; `Deserialize` reads the object once
//!   (`codec::flattened`) and splits its members between the parts (own members, structs, then unions);
//! * `x-json-kind-union` → enum chosen by JSON kind;
//! * `DecimalString`, `DecimalNumber`, `DateString` and every other `type: number` → the hand-written scalars
//!   in `src/scalars/` (a JSON number is a JavaScript number: integers print without `.0`).
//! * operation parameters → `{OperationId}Query` / `{OperationId}Path` structs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context};
use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::codegen::{format_rust, HEADER};

/// On every union of objects, whose variants differ in size (a swap record is larger than a plain one): they are held
/// inline, as everywhere in the contract. The reason is written into the doc comment (syn drops comments).
const LARGE_VARIANTS: &str =
    "///\n/// Variants are held inline like every contract type (clippy's `large_enum_variant` is allowed: boxing \
     would\n/// change every constructor and `match` of a value that is decoded once and read).\n\
     #[allow(clippy::large_enum_variant)]";

const SCALARS: [(&str, &str); 3] = [
    ("DecimalString", "crate::DecimalString"),
    ("DecimalNumber", "crate::DecimalNumber"),
    ("DateString", "crate::DateString"),
];

pub fn generate(doc: &Yaml, fingerprint: &str) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let schemas = doc
        .get("components")
        .and_then(|c| c.get("schemas"))
        .and_then(Value::as_mapping)
        .ok_or_else(|| anyhow!("no components.schemas"))?;
    let mut gen = Gen {
        doc,
        types: String::new(),
        arb: String::new(),
        components: Vec::new(),
        struct_fields: BTreeMap::new(),
        unions: Vec::new(),
        struct_defs: BTreeMap::new(),
        tag_types: std::collections::BTreeSet::new(),
    };
    for (name, schema) in schemas {
        let name = name.as_str().ok_or_else(|| anyhow!("schema names are strings"))?;
        if SCALARS.iter().any(|(s, _)| *s == name) {
            continue;
        }
        gen.component(name, schema).with_context(|| format!("component {name}"))?;
    }
    gen.operations()?;
    gen.shared_member_accessors()?;

    let mut types = String::new();
    writeln!(types, "use serde::{{Deserialize, Serialize}};\n")?;
    types.push_str(&gen.types);
    types.push_str(&every_component_macro(&gen.components));
    let types = format!(
        "{HEADER}\n// schema-fingerprint: {fingerprint}\n//! The contract's types, one per schema component, in the document's order.\n\n{}",
        format_rust(&types)?
    );
    let arb = format!(
        "{HEADER}\n//! proptest strategies that produce schema-valid values of every generated type (feature `proptest`).\n\n{}",
        format_rust(&format!("use proptest::prelude::*;\nuse crate::types::*;\n\n{}", gen.arb))?
    );
    let domain = crate::domain::generate(doc, &gen.struct_defs, &gen.unions)?;
    Ok(vec![
        (PathBuf::from("src/generated/types.rs"), types),
        (PathBuf::from("src/generated/arbitrary.rs"), arb),
        (PathBuf::from("src/generated/domain.rs"), domain),
    ])
}

struct Gen<'a> {
    doc: &'a Yaml,
    types: String,
    arb: String,
    /// Components that are whole JSON values on their own (everything but aliases), for `every_component!`.
    components: Vec<String>,
    /// The fields of every generated struct (field ident, Rust type as declared), for the unions' accessors.
    struct_fields: BTreeMap<String, Vec<(String, String)>>,
    /// Every union of structs: (union, [(variant ident, variant type)]), for the accessors of shared members.
    unions: Vec<(String, Vec<(String, String)>)>,
    /// Every generated struct with what `crate::domain` needs of its fields (constructors and conversions).
    struct_defs: BTreeMap<String, Vec<crate::domain::FieldDef>>,
    /// The one-variant enums generated for tag properties.
    tag_types: std::collections::BTreeSet<String>,
}

/// How one property or parameter maps to Rust.
struct FieldType {
    rust: String,
    strategy: String,
    nullable: bool,
    schemars: Vec<String>,
}

struct Field {
    json: String,
    rust: String,
    doc: Option<String>,
    ty: FieldType,
    required: bool,
    flatten: bool,
}

impl<'a> Gen<'a> {
    fn deref(&self, reference: &str) -> anyhow::Result<(&'a str, &'a Yaml)> {
        let name =
            reference.strip_prefix("#/components/schemas/").ok_or_else(|| anyhow!("unsupported $ref {reference}"))?;
        let schemas = self.doc.get("components").and_then(|c| c.get("schemas")).and_then(Value::as_mapping).unwrap();
        let (key, value) = schemas
            .iter()
            .find(|(k, _)| k.as_str() == Some(name))
            .ok_or_else(|| anyhow!("unresolved $ref {reference}"))?;
        Ok((key.as_str().unwrap(), value))
    }

    fn component(&mut self, name: &str, schema: &'a Yaml) -> anyhow::Result<()> {
        let description = str_of(schema, "description");
        if schema.get("oneOf").is_some() {
            if schema.get("x-json-kind-union").and_then(Value::as_bool) == Some(true) {
                self.kind_union(name, schema, description)?;
            } else if schema.get("x-presence-discriminator").is_some() {
                self.presence_union(name, schema, description)?;
            } else {
                self.union(name, schema, description)?;
            }
        } else if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
            let values: Vec<String> = values.iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect();
            self.string_enum(name, &values, description, str_of(schema, "default"))?;
        } else if schema.get("allOf").is_some() || (str_of(schema, "type") == Some("object") && !is_map(schema)) {
            self.structure(name, schema, description)?;
        } else {
            // A named scalar (for example the public key string) or map (an object of `additionalProperties`
            // only, such as the bridge configuration by chain): a type alias.
            let ty = self.field_type(schema, name, "value")?;
            doc_comment(&mut self.types, description, "");
            writeln!(self.types, "pub type {name} = {};\n", ty.rust)?;
            return Ok(());
        }
        self.components.push(name.to_owned());
        Ok(())
    }

    fn fields_of(&mut self, owner: &str, schema: &'a Yaml, out: &mut Vec<Field>) -> anyhow::Result<()> {
        if let Some(members) = schema.get("allOf").and_then(Value::as_sequence) {
            for member in members {
                if let Some(reference) = str_of(member, "$ref") {
                    let (target, target_schema) = self.deref(reference)?;
                    let rust = match target_schema.get("discriminator").and_then(|d| str_of(d, "propertyName")) {
                        Some(tag) => tag.to_snake_case(),
                        None if target.ends_with("Common") => "common".to_owned(),
                        None => target.to_snake_case(),
                    };
                    out.push(Field {
                        json: String::new(),
                        rust,
                        doc: str_of(target_schema, "description").map(str::to_owned),
                        ty: FieldType {
                            rust: target.to_owned(),
                            strategy: format!("any::<{target}>()"),
                            nullable: false,
                            schemars: vec![],
                        },
                        required: true,
                        flatten: true,
                    });
                } else {
                    self.fields_of(owner, member, out)?;
                }
            }
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if let Some(props) = schema.get("properties").and_then(Value::as_mapping) {
            for (key, prop) in props {
                let json = key.as_str().ok_or_else(|| anyhow!("property names are strings"))?;
                let ty = self.field_type(prop, owner, json).with_context(|| format!("property {json}"))?;
                let doc = str_of(prop, "description").map(str::to_owned).or_else(|| {
                    str_of(prop, "$ref")
                        .and_then(|r| self.deref(r).ok())
                        .and_then(|(_, s)| str_of(s, "description"))
                        .map(first_sentence)
                });
                out.push(Field {
                    json: json.to_owned(),
                    rust: field_ident(json),
                    doc,
                    ty,
                    required: required.contains(&json),
                    flatten: false,
                });
            }
        }
        Ok(())
    }

    fn structure(&mut self, name: &str, schema: &'a Yaml, description: Option<&str>) -> anyhow::Result<()> {
        let mut fields = Vec::new();
        self.fields_of(name, schema, &mut fields)?;
        let deny = schema.get("additionalProperties").and_then(Value::as_bool) == Some(false);
        self.emit_struct(name, description, &fields, deny)
    }

    fn emit_struct(
        &mut self,
        name: &str,
        description: Option<&str>,
        fields: &[Field],
        deny: bool,
    ) -> anyhow::Result<()> {
        let flattens = fields.iter().any(|f| f.flatten);
        let t = &mut self.types;
        doc_comment(t, description, "");
        // A struct that flattens `allOf` members gets its own `Deserialize` (see `flattened_deserialize`).
        let derive_deserialize = if flattens { "" } else { ", Deserialize" };
        writeln!(t, "#[derive(Debug, Clone, PartialEq, Serialize{derive_deserialize})]")?;
        writeln!(t, "#[cfg_attr(feature = \"schemars\", derive(schemars::JsonSchema))]")?;
        if deny {
            writeln!(t, "#[serde(deny_unknown_fields)]")?;
        }
        writeln!(t, "pub struct {name} {{")?;
        let mut recorded = Vec::new();
        for f in fields {
            doc_comment(t, f.doc.as_deref(), "    ");
            if f.flatten {
                writeln!(t, "    #[serde(flatten)]\n    pub {}: {},", f.rust, f.ty.rust)?;
                recorded.push((f.rust.clone(), f.ty.rust.clone()));
                continue;
            }
            let (serde, rust_ty) = serde_attributes(f);
            writeln!(t, "    #[serde({})]", serde.join(", "))?;
            // schemars would call every `Option` nullable; say exactly what the source says instead.
            let mut schemars = f.ty.schemars.clone();
            if !f.required {
                schemars.push(format!("with = {:?}", f.ty.rust));
            } else if f.ty.nullable {
                let inner = f.ty.rust.strip_prefix("Option<").and_then(|r| r.strip_suffix('>')).unwrap_or(&f.ty.rust);
                schemars.push(format!("with = \"crate::codec::Nullable<{inner}>\""));
            }
            if !schemars.is_empty() {
                writeln!(t, "    #[cfg_attr(feature = \"schemars\", schemars({}))]", schemars.join(", "))?;
            }
            writeln!(t, "    pub {}: {rust_ty},", f.rust)?;
            recorded.push((f.rust.clone(), rust_ty));
        }
        writeln!(t, "}}\n")?;
        self.struct_fields.insert(name.to_owned(), recorded.clone());
        let defs = fields
            .iter()
            .zip(recorded)
            .map(|(f, (ident, declared))| crate::domain::FieldDef {
                json: f.json.clone(),
                ident,
                declared,
                required: f.required,
                flatten: f.flatten.then(|| f.ty.rust.clone()),
                tag: self.tag_types.contains(&f.ty.rust),
            })
            .collect();
        self.struct_defs.insert(name.to_owned(), defs);
        if flattens {
            self.flattened_deserialize(name, fields, deny)?;
        }

        // proptest: tuples of at most eight strategies, nested, mapped into the struct.
        let strategies: Vec<String> = fields
            .iter()
            .map(|f| {
                if f.required || f.flatten {
                    f.ty.strategy.clone()
                } else {
                    format!("proptest::option::of({})", f.ty.strategy)
                }
            })
            .collect();
        let names: Vec<String> = fields.iter().map(|f| f.rust.clone()).collect();
        let chunks_s: Vec<String> = strategies.chunks(8).map(|c| format!("({},)", c.join(", "))).collect();
        let chunks_n: Vec<String> = names.chunks(8).map(|c| format!("({},)", c.join(", "))).collect();
        let a = &mut self.arb;
        writeln!(a, "impl Arbitrary for {name} {{")?;
        writeln!(a, "    type Parameters = ();\n    type Strategy = BoxedStrategy<Self>;")?;
        writeln!(a, "    fn arbitrary_with(_: ()) -> Self::Strategy {{")?;
        if fields.is_empty() {
            writeln!(a, "        Just({name} {{}}).boxed()")?;
        } else {
            writeln!(
                a,
                "        ({},).prop_map(|({},)| {name} {{ {} }}).boxed()",
                chunks_s.join(", "),
                chunks_n.join(", "),
                names.join(", ")
            )?;
        }
        writeln!(a, "    }}\n}}\n")?;
        Ok(())
    }

    /// `Deserialize` of a struct that flattens `allOf` members: the object is read whole (`codec::flattened`), then
    /// its parts are read from it one after the other, each taking the members it knows: the struct's own members
    /// (through a private derived struct), the flattened structs, then the flattened unions, which get the rest
    /// (serde's `flatten` would hand them the same members, after buffering them once more).
    fn flattened_deserialize(&mut self, name: &str, fields: &[Field], deny: bool) -> anyhow::Result<()> {
        if deny {
            bail!("{name}: additionalProperties: false with allOf members is not supported");
        }
        let mut reads = Vec::new(); // (field, expression), structs before unions
        for f in fields.iter().filter(|f| f.flatten) {
            let (_, target) = self.deref(&format!("#/components/schemas/{}", f.ty.rust))?;
            if target.get("allOf").is_some() {
                bail!("{name}: {} flattens allOf members itself", f.ty.rust);
            }
            if self.reads_whole_object(&f.ty.rust)? {
                reads.push((f, false, format!("{}::from_body(&parts.rest())?", f.ty.rust)));
            } else {
                reads.push((f, true, "parts.rest().read()?".to_owned()));
            }
        }
        reads.sort_by_key(|(_, is_struct, _)| !is_struct);
        let own: Vec<&Field> = fields.iter().filter(|f| !f.flatten).collect();
        let t = &mut self.types;
        writeln!(t, "impl<'de> Deserialize<'de> for {name} {{")?;
        writeln!(t, "    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{")?;
        writeln!(t, "        crate::codec::flattened(deserializer, {name:?}, Self::from_body)")?;
        writeln!(t, "    }}\n}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(
            t,
            "    /// Reads the parts from an object read whole: own members, flattened structs, flattened unions."
        )?;
        writeln!(
            t,
            "    pub(crate) fn from_body(body: &crate::codec::Body<'_, '_>) -> Result<Self, crate::codec::Error> {{"
        )?;
        if !own.is_empty() {
            writeln!(t, "        #[derive(Deserialize)]\n        struct Own {{")?;
            for f in &own {
                let (serde, rust_ty) = serde_attributes(f);
                let serde: Vec<String> = serde.into_iter().filter(|a| !a.starts_with("skip_serializing_if")).collect();
                writeln!(t, "            #[serde({})]\n            {}: {rust_ty},", serde.join(", "), f.rust)?;
            }
            writeln!(t, "        }}")?;
        }
        writeln!(t, "        let parts = body.parts();")?;
        if !own.is_empty() {
            writeln!(t, "        let own: Own = parts.rest().read()?;")?;
        }
        for (f, _, read) in &reads {
            writeln!(t, "        let {}: {} = {read};", f.rust, f.ty.rust)?;
        }
        let members: Vec<String> =
            fields.iter().map(|f| if f.flatten { f.rust.clone() } else { format!("{0}: own.{0}", f.rust) }).collect();
        writeln!(t, "        Ok(Self {{ {} }})", members.join(", "))?;
        writeln!(t, "    }}\n}}\n")?;
        Ok(())
    }

    /// `true` for the components whose `Deserialize` reads the object whole first: discriminated unions and structs
    /// that flatten `allOf` members. Such a variant or part is read from the object already read (`from_body`).
    fn reads_whole_object(&self, component: &str) -> anyhow::Result<bool> {
        let (_, schema) = self.deref(&format!("#/components/schemas/{component}"))?;
        let union =
            schema.get("oneOf").is_some() && schema.get("x-json-kind-union").and_then(Value::as_bool) != Some(true);
        let flattens =
            schema.get("allOf").and_then(Value::as_sequence).is_some_and(|m| m.iter().any(|m| m.get("$ref").is_some()));
        Ok(union || flattens)
    }

    fn string_enum(
        &mut self,
        name: &str,
        values: &[String],
        description: Option<&str>,
        default: Option<&str>,
    ) -> anyhow::Result<()> {
        let t = &mut self.types;
        doc_comment(t, description, "");
        let derive_default = if default.is_some() || values.len() == 1 { ", Default" } else { "" };
        writeln!(t, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord{derive_default}, Serialize, Deserialize)]")?;
        writeln!(t, "#[cfg_attr(feature = \"schemars\", derive(schemars::JsonSchema))]")?;
        writeln!(t, "pub enum {name} {{")?;
        for v in values {
            if default == Some(v.as_str()) || (default.is_none() && values.len() == 1) {
                writeln!(t, "    #[default]")?;
            }
            writeln!(t, "    #[serde(rename = {v:?})]\n    {},", variant_ident(v))?;
        }
        writeln!(t, "}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(t, "    /// Every value, in the schema's order.")?;
        let all: Vec<String> = values.iter().map(|v| format!("Self::{}", variant_ident(v))).collect();
        writeln!(t, "    pub const ALL: &'static [Self] = &[{}];", all.join(", "))?;
        writeln!(t, "    /// The value as it is written in JSON.")?;
        writeln!(t, "    pub fn as_str(self) -> &'static str {{ match self {{")?;
        for v in values {
            writeln!(t, "        Self::{} => {v:?},", variant_ident(v))?;
        }
        writeln!(t, "    }} }}\n}}\n")?;
        writeln!(t, "impl std::fmt::Display for {name} {{ fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{ f.write_str(self.as_str()) }} }}\n")?;
        writeln!(
            self.arb,
            "impl Arbitrary for {name} {{ type Parameters = (); type Strategy = BoxedStrategy<Self>;\n fn arbitrary_with(_: ()) -> Self::Strategy {{ proptest::sample::select({name}::ALL).boxed() }} }}\n"
        )?;
        Ok(())
    }

    fn union(&mut self, name: &str, schema: &'a Yaml, description: Option<&str>) -> anyhow::Result<()> {
        let disc = schema.get("discriminator").ok_or_else(|| anyhow!("union without discriminator"))?;
        let property = str_of(disc, "propertyName").ok_or_else(|| anyhow!("discriminator without propertyName"))?;
        let mapping =
            disc.get("mapping").and_then(Value::as_mapping).ok_or_else(|| anyhow!("discriminator without mapping"))?;
        let mut variants = Vec::new(); // (tag, variant ident, type)
        for (tag, target) in mapping {
            let tag = tag.as_str().unwrap().to_owned();
            let (ty, _) = self.deref(target.as_str().unwrap())?;
            variants.push((tag.clone(), variant_ident(&tag), ty.to_owned()));
        }
        let default = str_of(schema, "x-discriminator-default");
        let default_index = match default {
            Some(d) => {
                format!("Some({})", variants.iter().position(|v| v.0 == d).ok_or_else(|| anyhow!("bad default"))?)
            }
            None => "None".to_owned(),
        };
        let tags: Vec<String> = variants.iter().map(|v| format!("{:?}", v.0)).collect();
        self.unions
            .push((name.to_owned(), variants.iter().map(|(_, ident, ty)| (ident.clone(), ty.clone())).collect()));
        let t = &mut self.types;
        doc_comment(t, description, "");
        writeln!(t, "///\n/// Told apart by `{property}`, wherever it is in the object (read once); an unknown tag is named in the error.")?;
        writeln!(t, "{LARGE_VARIANTS}")?;
        writeln!(t, "#[derive(Debug, Clone, PartialEq)]\npub enum {name} {{")?;
        for (tag, ident, ty) in &variants {
            writeln!(t, "    /// `{property}` = `{tag}`.\n    {ident}({ty}),")?;
        }
        writeln!(t, "}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(t, "    /// The property that tells the variants apart.\n    pub const TAG_PROPERTY: &'static str = {property:?};")?;
        writeln!(
            t,
            "    /// Every tag value, in the schema's order.\n    pub const TAGS: &'static [&'static str] = &[{}];",
            tags.join(", ")
        )?;
        writeln!(t, "    /// The tag value of this variant.\n    pub fn tag(&self) -> &'static str {{ match self {{")?;
        for (tag, ident, _) in &variants {
            writeln!(t, "        Self::{ident}(_) => {tag:?},")?;
        }
        writeln!(t, "    }} }}\n}}\n")?;
        writeln!(t, "impl Serialize for {name} {{\n    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{ match self {{")?;
        for (_, ident, _) in &variants {
            writeln!(t, "        Self::{ident}(v) => v.serialize(serializer),")?;
        }
        writeln!(t, "    }} }}\n}}\n")?;
        let mut reads = Vec::new();
        for (_, ident, ty) in &variants {
            let read =
                if self.reads_whole_object(ty)? { format!("{ty}::from_body(body)") } else { "body.read()".to_owned() };
            reads.push((ident, read));
        }
        let t = &mut self.types;
        writeln!(t, "impl<'de> Deserialize<'de> for {name} {{")?;
        writeln!(t, "    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{")?;
        writeln!(t, "        crate::codec::union(deserializer, {name:?}, Self::from_body)")?;
        writeln!(t, "    }}\n}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(t, "    /// Reads the variant its tag names from an object read whole.")?;
        writeln!(
            t,
            "    pub(crate) fn from_body(body: &crate::codec::Body<'_, '_>) -> Result<Self, crate::codec::Error> {{"
        )?;
        writeln!(t, "        match body.tag({name:?}, Self::TAG_PROPERTY, Self::TAGS, {default_index})? {{")?;
        for (i, (ident, read)) in reads.iter().enumerate() {
            writeln!(t, "            {i} => {read}.map(Self::{ident}),")?;
        }
        writeln!(
            t,
            "            _ => Err(crate::codec::Error::custom(\"tag index out of range\")),\n        }}\n    }}\n}}\n"
        )?;
        for (_, ident, ty) in &variants {
            writeln!(t, "impl From<{ty}> for {name} {{ fn from(v: {ty}) -> Self {{ Self::{ident}(v) }} }}\n")?;
        }
        let subs: Vec<String> =
            variants.iter().map(|(_, _, ty)| format!("generator.subschema_for::<{ty}>()")).collect();
        writeln!(
            t,
            "#[cfg(feature = \"schemars\")]\nimpl schemars::JsonSchema for {name} {{\n    fn schema_name() -> std::borrow::Cow<'static, str> {{ {name:?}.into() }}\n    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{ \"oneOf\": [{}] }}) }}\n}}\n",
            subs.join(", ")
        )?;
        let arms: Vec<String> =
            variants.iter().map(|(_, ident, ty)| format!("any::<{ty}>().prop_map({name}::{ident}).boxed()")).collect();
        writeln!(
            self.arb,
            "impl Arbitrary for {name} {{ type Parameters = (); type Strategy = BoxedStrategy<Self>;\n fn arbitrary_with(_: ()) -> Self::Strategy {{ proptest::strategy::Union::new(vec![{}]).boxed() }} }}\n",
            arms.join(", ")
        )?;
        Ok(())
    }

    /// A union told apart by which required member is present (`x-presence-discriminator`: member → variant). The
    /// variant idents are the variant types' names without the union's common prefix and `Event`-style suffix
    /// (`BridgeCancelledBridgeSwapEvent` in `BridgeCancelledEvent` → `BridgeSwap`).
    fn presence_union(&mut self, name: &str, schema: &'a Yaml, description: Option<&str>) -> anyhow::Result<()> {
        let mapping = schema
            .get("x-presence-discriminator")
            .and_then(Value::as_mapping)
            .ok_or_else(|| anyhow!("x-presence-discriminator must map members to variants"))?;
        let mut variants = Vec::new(); // (member, variant ident, type)
        for (member, target) in mapping {
            let member = member.as_str().ok_or_else(|| anyhow!("member names are strings"))?.to_owned();
            let (ty, _) = self.deref(target.as_str().ok_or_else(|| anyhow!("variants are $refs"))?)?;
            variants.push((member, presence_variant_ident(name, ty), ty.to_owned()));
        }
        let members: Vec<String> = variants.iter().map(|v| format!("{:?}", v.0)).collect();
        self.unions
            .push((name.to_owned(), variants.iter().map(|(_, ident, ty)| (ident.clone(), ty.clone())).collect()));
        let t = &mut self.types;
        doc_comment(t, description, "");
        writeln!(
            t,
            "///\n/// Told apart by which member is present; the serde impls name the members when none or both are."
        )?;
        writeln!(t, "{LARGE_VARIANTS}")?;
        writeln!(t, "#[derive(Debug, Clone, PartialEq)]\npub enum {name} {{")?;
        for (member, ident, ty) in &variants {
            writeln!(t, "    /// Has `{member}`.\n    {ident}({ty}),")?;
        }
        writeln!(t, "}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(t, "    /// The members that tell the variants apart, in the schema's order.\n    pub const MEMBERS: &'static [&'static str] = &[{}];", members.join(", "))?;
        writeln!(t, "}}\n")?;
        writeln!(t, "impl Serialize for {name} {{\n    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{ match self {{")?;
        for (_, ident, _) in &variants {
            writeln!(t, "        Self::{ident}(v) => v.serialize(serializer),")?;
        }
        writeln!(t, "    }} }}\n}}\n")?;
        let mut reads = Vec::new();
        for (_, ident, ty) in &variants {
            let read =
                if self.reads_whole_object(ty)? { format!("{ty}::from_body(body)") } else { "body.read()".to_owned() };
            reads.push((ident, read));
        }
        let t = &mut self.types;
        writeln!(t, "impl<'de> Deserialize<'de> for {name} {{")?;
        writeln!(t, "    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{")?;
        writeln!(t, "        crate::codec::union(deserializer, {name:?}, Self::from_body)")?;
        writeln!(t, "    }}\n}}\n")?;
        writeln!(t, "impl {name} {{")?;
        writeln!(t, "    /// Reads the variant the member present names from an object read whole.")?;
        writeln!(
            t,
            "    pub(crate) fn from_body(body: &crate::codec::Body<'_, '_>) -> Result<Self, crate::codec::Error> {{"
        )?;
        writeln!(t, "        match body.presence({name:?}, Self::MEMBERS)? {{")?;
        for (i, (ident, read)) in reads.iter().enumerate() {
            writeln!(t, "            {i} => {read}.map(Self::{ident}),")?;
        }
        writeln!(
            t,
            "            _ => Err(crate::codec::Error::custom(\"member index out of range\")),\n        }}\n    }}\n}}\n"
        )?;
        for (_, ident, ty) in &variants {
            writeln!(t, "impl From<{ty}> for {name} {{ fn from(v: {ty}) -> Self {{ Self::{ident}(v) }} }}\n")?;
        }
        let subs: Vec<String> =
            variants.iter().map(|(_, _, ty)| format!("generator.subschema_for::<{ty}>()")).collect();
        writeln!(
            t,
            "#[cfg(feature = \"schemars\")]\nimpl schemars::JsonSchema for {name} {{\n    fn schema_name() -> std::borrow::Cow<'static, str> {{ {name:?}.into() }}\n    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{ \"oneOf\": [{}] }}) }}\n}}\n",
            subs.join(", ")
        )?;
        let arms: Vec<String> =
            variants.iter().map(|(_, ident, ty)| format!("any::<{ty}>().prop_map({name}::{ident}).boxed()")).collect();
        writeln!(
            self.arb,
            "impl Arbitrary for {name} {{ type Parameters = (); type Strategy = BoxedStrategy<Self>;\n fn arbitrary_with(_: ()) -> Self::Strategy {{ proptest::strategy::Union::new(vec![{}]).boxed() }} }}\n",
            arms.join(", ")
        )?;
        Ok(())
    }

    fn kind_union(&mut self, name: &str, schema: &'a Yaml, description: Option<&str>) -> anyhow::Result<()> {
        let mut variants = Vec::new(); // (json kind, ident, rust type, strategy)
        for member in schema.get("oneOf").and_then(Value::as_sequence).unwrap() {
            if let Some(reference) = str_of(member, "$ref") {
                let (ty, target) = self.deref(reference)?;
                let kind = str_of(target, "type").unwrap_or("object").to_owned();
                variants.push((kind, ty.to_owned(), ty.to_owned(), format!("any::<{ty}>()")));
            } else {
                let kind = str_of(member, "type").ok_or_else(|| anyhow!("kind-union member without type"))?;
                let ft = self.field_type(member, name, kind)?;
                variants.push((kind.to_owned(), kind.to_upper_camel_case(), ft.rust, ft.strategy));
            }
        }
        let t = &mut self.types;
        doc_comment(t, description, "");
        writeln!(t, "///\n/// Told apart by JSON kind alone.\n#[derive(Debug, Clone, PartialEq)]\npub enum {name} {{")?;
        for (kind, ident, ty, _) in &variants {
            writeln!(t, "    /// A JSON {kind}.\n    {ident}({ty}),")?;
        }
        writeln!(t, "}}\n")?;
        writeln!(t, "impl Serialize for {name} {{\n    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{ match self {{")?;
        for (_, ident, _, _) in &variants {
            writeln!(t, "        Self::{ident}(v) => v.serialize(serializer),")?;
        }
        writeln!(t, "    }} }}\n}}\n")?;
        let kinds: Vec<String> = variants.iter().map(|v| format!("{:?}", v.0)).collect();
        writeln!(t, "impl<'de> Deserialize<'de> for {name} {{")?;
        writeln!(t, "    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{")?;
        writeln!(t, "        crate::codec::by_kind(deserializer, |value| match value.kind() {{")?;
        for (kind, ident, _, _) in &variants {
            writeln!(t, "            {kind:?} => value.read().map(Self::{ident}),")?;
        }
        writeln!(
            t,
            "            other => Err(crate::codec::Error::custom(format_args!(\"expected one of {{}} ({name}), got a JSON {{other}}\", [{}].join(\", \")))),\n        }})\n    }}\n}}\n",
            kinds.join(", ")
        )?;
        let subs: Vec<String> =
            variants.iter().map(|(_, _, ty, _)| format!("generator.subschema_for::<{ty}>()")).collect();
        writeln!(
            t,
            "#[cfg(feature = \"schemars\")]\nimpl schemars::JsonSchema for {name} {{\n    fn schema_name() -> std::borrow::Cow<'static, str> {{ {name:?}.into() }}\n    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {{ schemars::json_schema!({{ \"oneOf\": [{}] }}) }}\n}}\n",
            subs.join(", ")
        )?;
        let arms: Vec<String> =
            variants.iter().map(|(_, ident, _, s)| format!("({s}).prop_map({name}::{ident}).boxed()")).collect();
        writeln!(
            self.arb,
            "impl Arbitrary for {name} {{ type Parameters = (); type Strategy = BoxedStrategy<Self>;\n fn arbitrary_with(_: ()) -> Self::Strategy {{ proptest::strategy::Union::new(vec![{}]).boxed() }} }}\n",
            arms.join(", ")
        )?;
        Ok(())
    }

    /// The Rust type, strategy and schemars attributes of one property (or parameter) schema.
    fn field_type(&mut self, schema: &'a Yaml, owner: &str, prop: &str) -> anyhow::Result<FieldType> {
        let nullable = schema.get("nullable").and_then(Value::as_bool) == Some(true);
        let mut inner = self.plain_type(schema, owner, prop)?;
        if nullable {
            inner.rust = format!("Option<{}>", inner.rust);
            inner.strategy = format!("proptest::option::of({})", inner.strategy);
            inner.nullable = true;
        }
        Ok(inner)
    }

    fn plain_type(&mut self, schema: &'a Yaml, owner: &str, prop: &str) -> anyhow::Result<FieldType> {
        let simple = |rust: &str, strategy: String| FieldType {
            rust: rust.to_owned(),
            strategy,
            nullable: false,
            schemars: vec![],
        };
        if let Some(reference) = str_of(schema, "$ref") {
            let (name, _) = self.deref(reference)?;
            let rust = SCALARS
                .iter()
                .find(|(s, _)| *s == name)
                .map(|(_, r)| (*r).to_owned())
                .unwrap_or_else(|| name.to_owned());
            return Ok(simple(&rust, format!("any::<{rust}>()")));
        }
        if let Some(members) = schema.get("allOf").and_then(Value::as_sequence) {
            if members.len() == 1 {
                return self.plain_type(&members[0], owner, prop);
            }
            bail!("allOf with several members inside a property");
        }
        let ty = str_of(schema, "type").ok_or_else(|| anyhow!("schema without type"))?;
        Ok(match ty {
            "string" => {
                if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
                    let [value] = values.as_slice() else { bail!("inline enum with several values") };
                    let value = value.as_str().ok_or_else(|| anyhow!("tag values are strings"))?.to_owned();
                    let tag_type = format!("{owner}{}", prop.trim_start_matches('_').to_upper_camel_case());
                    self.string_enum(&tag_type, &[value], Some(&format!("The `{prop}` tag of [`{owner}`].")), None)?;
                    self.tag_types.insert(tag_type.clone());
                    return Ok(simple(&tag_type, format!("Just({tag_type}::default())")));
                }
                let min = u64_of(schema, "minLength");
                let max = u64_of(schema, "maxLength");
                let mut schemars = Vec::new();
                if let Some(min) = min {
                    schemars.push(format!("extend(\"minLength\" = {min})"));
                }
                if let Some(max) = max {
                    schemars.push(format!("extend(\"maxLength\" = {max})"));
                }
                let strategy = if let Some(pattern) = str_of(schema, "pattern") {
                    schemars.push(format!("extend(\"pattern\" = {pattern:?})"));
                    let body = pattern.trim_start_matches('^').trim_end_matches('$');
                    format!("proptest::string::string_regex({body:?}).expect(\"pattern compiles\")")
                } else {
                    // Printable BMP characters, so that a length is the same in chars and in UTF-16 units.
                    let (lo, hi) = (min.unwrap_or(0), max.unwrap_or(min.unwrap_or(0) + 24));
                    format!("\"[ -~\\u{{a0}}-\\u{{d7ff}}\\u{{e000}}-\\u{{fffd}}]{{{lo},{hi}}}\"")
                };
                FieldType { rust: "String".into(), strategy, nullable: false, schemars }
            }
            "number" => {
                let (lo, hi) = (f64_of(schema, "minimum"), f64_of(schema, "maximum"));
                let mut schemars = Vec::new();
                if let Some(lo) = lo {
                    schemars.push(format!("extend(\"minimum\" = {lo:?})"));
                }
                if let Some(hi) = hi {
                    schemars.push(format!("extend(\"maximum\" = {hi:?})"));
                }
                let strategy = match (lo, hi) {
                    (None, None) => "any::<crate::DecimalNumber>()".to_owned(),
                    (lo, hi) => format!(
                        "({:?}f64..={:?}f64).prop_map(|x| crate::DecimalNumber::try_from(x).expect(\"finite\"))",
                        lo.unwrap_or(-1e15),
                        hi.unwrap_or(1e15)
                    ),
                };
                FieldType { rust: "crate::DecimalNumber".into(), strategy, nullable: false, schemars }
            }
            "integer" => {
                let (lo, hi) = (f64_of(schema, "minimum"), f64_of(schema, "maximum"));
                let mut schemars = Vec::new();
                if let Some(lo) = lo {
                    schemars.push(format!("extend(\"minimum\" = {})", lo as i64));
                }
                if let Some(hi) = hi {
                    schemars.push(format!("extend(\"maximum\" = {}i64)", hi as i64));
                }
                // Values stay within JavaScript's safe integers (2^53 - 1) unless the schema is narrower.
                let hi = grouped(hi.map_or(9_007_199_254_740_991i64, |h| (h as i64).min(9_007_199_254_740_991)));
                let (rust, strategy) = match lo {
                    Some(lo) if lo >= 0.0 => ("u64", format!("{}u64..={hi}u64", lo as u64)),
                    _ => ("i64", format!("-9_007_199_254_740_991i64..={hi}i64")),
                };
                FieldType { rust: rust.into(), strategy, nullable: false, schemars }
            }
            "boolean" => simple("bool", "any::<bool>()".into()),
            "array" => {
                let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
                let item = self.field_type(items, owner, prop)?;
                let (min, max) = (u64_of(schema, "minItems"), u64_of(schema, "maxItems"));
                let mut schemars = Vec::new();
                if min.is_some() || max.is_some() {
                    schemars.push(length_attr(min, max));
                }
                if !item.schemars.is_empty() {
                    // Item constraints go through schemars' validation attributes, which `inner` understands.
                    let inner: Vec<String> = item.schemars.iter().map(|a| extend_to_validation(a)).collect();
                    schemars.push(format!("inner({})", inner.join(", ")));
                }
                let (lo, hi) = (min.unwrap_or(0), max.unwrap_or(min.unwrap_or(0) + 3).min(min.unwrap_or(0) + 6));
                FieldType {
                    rust: format!("Vec<{}>", item.rust),
                    strategy: format!("proptest::collection::vec({}, {lo}..={hi})", item.strategy),
                    nullable: false,
                    schemars,
                }
            }
            "object" => {
                let values = schema
                    .get("additionalProperties")
                    .filter(|v| v.is_mapping())
                    .ok_or_else(|| anyhow!("inline object without additionalProperties schema"))?;
                let value = self.field_type(values, owner, prop)?;
                FieldType {
                    rust: format!("std::collections::BTreeMap<String, {}>", value.rust),
                    strategy: format!(
                        "proptest::collection::btree_map(\"[a-zA-Z0-9_]{{1,8}}\", {}, 0..3)",
                        value.strategy
                    ),
                    nullable: false,
                    schemars: vec![],
                }
            }
            other => bail!("unsupported type {other}"),
        })
    }

    /// For every union of structs, an accessor per member that every variant has with the same Rust type
    /// (`QuoteResponse::quote_id()`, `BridgeRecord::common()`), so that shared members are read without a `match`.
    /// Tags are left out (each variant's tag has its own type; the union's `tag()` names it).
    fn shared_member_accessors(&mut self) -> anyhow::Result<()> {
        for (union, variants) in &self.unions {
            let Some(first) = variants.first().and_then(|(_, ty)| self.struct_fields.get(ty)) else {
                continue;
            };
            // The tag itself is left out: `tag()` already names it, and each variant's tag has a type of its own.
            let shared: Vec<&(String, String)> = first
                .iter()
                .filter(|(field, _)| !matches!(field.as_str(), "tag" | "r#type" | "state"))
                .filter(|(field, ty)| {
                    variants.iter().all(|(_, v)| {
                        self.struct_fields.get(v).is_some_and(|fs| fs.iter().any(|(f, t)| f == field && t == ty))
                    })
                })
                .collect();
            if shared.is_empty() {
                continue;
            }
            let t = &mut self.types;
            writeln!(t, "/// The members every variant of [`{union}`] has.\nimpl {union} {{")?;
            for (field, ty) in shared {
                let method = field.trim_start_matches("r#");
                let (ret, borrow) = match (ty.as_str(), ty.strip_prefix("Option<").and_then(|r| r.strip_suffix('>'))) {
                    ("String", _) => ("&str".to_owned(), ".as_str()"),
                    (_, Some("String")) => ("Option<&str>".to_owned(), ".as_deref()"),
                    (_, Some(inner)) => (format!("Option<&{inner}>"), ".as_ref()"),
                    _ => match ty.strip_prefix("Vec<").and_then(|r| r.strip_suffix('>')) {
                        Some(item) => (format!("&[{item}]"), ".as_slice()"),
                        None => (format!("&{ty}"), ""),
                    },
                };
                let amp = if borrow.is_empty() { "&" } else { "" };
                writeln!(t, "    /// `{method}` of whichever variant this is.\n    pub fn {method}(&self) -> {ret} {{ match self {{")?;
                for (ident, _) in variants {
                    writeln!(t, "        Self::{ident}(v) => {amp}v.{field}{borrow},")?;
                }
                writeln!(t, "    }} }}")?;
            }
            writeln!(t, "}}\n")?;
        }
        Ok(())
    }

    /// `{OperationId}Query` and `{OperationId}Path` structs for operations with such parameters.
    fn operations(&mut self) -> anyhow::Result<()> {
        let paths = self.doc.get("paths").and_then(Value::as_mapping).ok_or_else(|| anyhow!("no paths"))?;
        let mut done = BTreeMap::new();
        for (path, item) in paths {
            for method in ["get", "post", "put", "patch", "delete"] {
                let Some(op) = item.get(method) else { continue };
                if op.get("x-alias-of").is_some() {
                    continue; // an alias shares the parameter structs of the operation it aliases
                }
                let id = str_of(op, "operationId").ok_or_else(|| anyhow!("operation without id"))?;
                let base = id.to_upper_camel_case();
                for location in ["path", "query"] {
                    let mut fields = Vec::new();
                    for param in op.get("parameters").and_then(Value::as_sequence).into_iter().flatten() {
                        let param = self.resolve_parameter(param)?;
                        if str_of(param, "in") != Some(location) {
                            continue;
                        }
                        let json = str_of(param, "name").unwrap();
                        let schema = param.get("schema").ok_or_else(|| anyhow!("parameter without schema"))?;
                        let mut ty = self.field_type(schema, &base, json)?;
                        let mut doc = str_of(param, "description").map(str::to_owned);
                        if let Some(default) = schema.get("default") {
                            let default = serde_norway::to_string(default)?;
                            doc = Some(
                                format!("{} Default: {}.", doc.unwrap_or_default(), default.trim()).trim().to_owned(),
                            );
                        }
                        ty.schemars.clear();
                        fields.push(Field {
                            json: json.to_owned(),
                            rust: field_ident(json),
                            doc,
                            ty,
                            required: param.get("required").and_then(Value::as_bool) == Some(true),
                            flatten: false,
                        });
                    }
                    if fields.is_empty() {
                        continue;
                    }
                    let name = format!("{base}{}", location.to_upper_camel_case());
                    let description = format!(
                        "The {location} parameters of `{} {}` (`{id}`).",
                        method.to_uppercase(),
                        path.as_str().unwrap()
                    );
                    self.emit_struct(&name, Some(&description), &fields, false)?;
                    done.insert(name, ());
                }
            }
        }
        Ok(())
    }

    fn resolve_parameter(&self, param: &'a Yaml) -> anyhow::Result<&'a Yaml> {
        match str_of(param, "$ref") {
            Some(reference) => {
                let name =
                    reference.strip_prefix("#/components/parameters/").ok_or_else(|| anyhow!("bad parameter ref"))?;
                self.doc
                    .get("components")
                    .and_then(|c| c.get("parameters"))
                    .and_then(|p| p.get(name))
                    .ok_or_else(|| anyhow!("unresolved {reference}"))
            }
            None => Ok(param),
        }
    }
}

/// The `#[serde(...)]` attributes and the Rust type of a (non-flattened) member.
fn serde_attributes(f: &Field) -> (Vec<String>, String) {
    let mut serde = vec![format!("rename = {:?}", f.json)];
    let rust_ty = if !f.required && f.ty.nullable {
        // Optional and nullable: absent is `None`, `null` is `Some(None)`.
        serde.push("default".into());
        serde.push("deserialize_with = \"crate::codec::optional_nullable\"".into());
        serde.push("skip_serializing_if = \"Option::is_none\"".into());
        format!("Option<{}>", f.ty.rust)
    } else if !f.required {
        serde.push("default".into());
        serde.push("skip_serializing_if = \"Option::is_none\"".into());
        format!("Option<{}>", f.ty.rust)
    } else if f.ty.nullable {
        serde.push("deserialize_with = \"crate::codec::required_nullable\"".into());
        f.ty.rust.clone()
    } else {
        f.ty.rust.clone()
    };
    (serde, rust_ty)
}

/// The hand-written Rust type of a scalar component, if `name` is one.
pub fn scalar_type(name: &str) -> Option<&'static str> {
    SCALARS.iter().find(|(s, _)| *s == name).map(|(_, r)| *r)
}

/// Follows a `$ref` to `components/parameters`.
pub fn resolve_parameter<'a>(doc: &'a Yaml, param: &'a Yaml) -> &'a Yaml {
    match str_of(param, "$ref").and_then(|r| r.strip_prefix("#/components/parameters/")) {
        Some(name) => {
            doc.get("components").and_then(|c| c.get("parameters")).and_then(|p| p.get(name)).unwrap_or(param)
        }
        None => param,
    }
}

fn every_component_macro(components: &[String]) -> String {
    let mut m = String::from(
        "/// Calls `$callback!(Type, \"ComponentName\");` once for every generated component type, so that tests and\n\
         /// tools can cover every type without writing the list again.\n#[macro_export]\nmacro_rules! every_component {\n    ($callback:ident) => {\n",
    );
    for c in components {
        let _ = writeln!(m, "        $callback!({c}, {c:?});");
    }
    m.push_str("    };\n}\n");
    m
}

fn str_of<'v>(v: &'v Yaml, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn u64_of(v: &Yaml, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn f64_of(v: &Yaml, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn length_attr(min: Option<u64>, max: Option<u64>) -> String {
    let parts: Vec<String> =
        [min.map(|m| format!("min = {m}")), max.map(|m| format!("max = {m}"))].into_iter().flatten().collect();
    format!("length({})", parts.join(", "))
}

/// An integer literal with `_` between groups of three digits (`9_007_199_254_740_991`).
fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// `extend("minLength" = 1)` → `length(min = 1)`, for `inner(...)`, which takes validation attributes only.
fn extend_to_validation(attr: &str) -> String {
    let body = attr.trim_start_matches("extend(").trim_end_matches(')');
    let (key, value) = body.split_once(" = ").unwrap_or((body, ""));
    match key.trim_matches('"') {
        "minLength" => format!("length(min = {value})"),
        "maxLength" => format!("length(max = {value})"),
        "pattern" => format!("regex(pattern = {value})"),
        "minimum" => format!("range(min = {value})"),
        "maximum" => format!("range(max = {value})"),
        other => panic!("no validation attribute for {other}"),
    }
}

/// The first sentence of a description (its first paragraph unwrapped, up to the first full stop that ends a
/// sentence): the doc of a field whose type is a component with a description of its own.
fn first_sentence(text: &str) -> String {
    let paragraph: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
    let paragraph = paragraph.join(" ");
    match paragraph.find(". ") {
        Some(end) => paragraph[..=end].to_owned(),
        None => paragraph,
    }
}

fn doc_comment(out: &mut String, text: Option<&str>, indent: &str) {
    if let Some(text) = text {
        for line in text.trim_end().lines() {
            let _ = writeln!(out, "{indent}///{}{}", if line.is_empty() { "" } else { " " }, line);
        }
    }
}

const KEYWORDS: [&str; 12] =
    ["type", "match", "ref", "self", "struct", "enum", "fn", "mod", "trait", "use", "where", "move"];

fn field_ident(json: &str) -> String {
    let snake = json.trim_start_matches('_').to_snake_case();
    if KEYWORDS.contains(&snake.as_str()) {
        format!("r#{snake}")
    } else {
        snake
    }
}

/// The variant ident of `variant` in the presence union `union`: the variant's name without the prefix and suffix
/// it shares with the union's name.
fn presence_variant_ident(union: &str, variant: &str) -> String {
    let prefix = union.chars().zip(variant.chars()).take_while(|(a, b)| a == b).count();
    let suffix = union.chars().rev().zip(variant.chars().rev()).take_while(|(a, b)| a == b).count();
    let core = &variant[prefix.min(variant.len())..variant.len().saturating_sub(suffix).max(prefix)];
    if core.is_empty() {
        variant.to_owned()
    } else {
        core.to_owned()
    }
}

fn variant_ident(value: &str) -> String {
    let camel = value.to_upper_camel_case();
    match camel.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("V{camel}"),
        None => "Empty".to_owned(),
        _ => camel,
    }
}

/// An object whose members are all of one schema (`additionalProperties`) and that declares none by name.
fn is_map(schema: &Yaml) -> bool {
    schema.get("properties").is_none() && schema.get("additionalProperties").is_some_and(Value::is_mapping)
}
