//! What the type generator makes of the document, read once: every generated item in output order, each
//! described by what the schema says of it (a member's [`Shape`], a union's [`Discriminant`]), not by Rust text.
//! The emitters (`definitions`, `serde_impls`, `schemars_impls`, `strategies`, `domain`) work from this model
//! alone; reading the document is this module's job.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context};
use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_norway::Value;

use crate::bundle::Yaml;
use crate::schema::{self, bool_of, f64_of, str_of, u64_of};
pub use crate::tokens::RustType;

/// The most members (flattened parts included) a struct may have: the decoder's tables hold sets of them as the
/// bits of a `u64` (`src/codec/table.rs`, `Members`).
pub const MAX_MEMBERS: usize = 64;

/// Everything the type generator emits, in the order it emits it.
pub struct Model {
    /// Components and operation parameter structs, in output order (a tag enum just before its struct).
    pub items: Vec<Item>,
    /// The components that are whole JSON values on their own (everything but aliases), for `every_component!`.
    pub components: Vec<String>,
}

pub enum Item {
    /// A named scalar or map: `pub type Name = …;`.
    Alias {
        name: String,
        doc: Option<String>,
        ty: RustType,
    },
    Struct(Struct),
    Enum(StringEnum),
    Union(Union),
    KindUnion(KindUnion),
}

/// An object component, or the path or query parameters of an operation.
pub struct Struct {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field>,
    /// `additionalProperties: false`.
    pub deny_unknown_fields: bool,
    pub origin: Origin,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Component,
    /// `{OperationId}Query` / `{OperationId}Path`: the server's decoder checks the constraints, the types do not
    /// document them.
    Parameters,
}

pub struct Field {
    /// JSON member name (empty for a flattened part).
    pub json: String,
    /// Rust field identifier (`r#type` for a keyword).
    pub ident: String,
    pub doc: Option<String>,
    /// In the schema's `required` list (a flattened part always is).
    pub required: bool,
    pub value: FieldValue,
}

pub enum FieldValue {
    /// A member of the object.
    Member(Shape),
    /// An `allOf` member: another component whose members this object has too (`#[serde(flatten)]`).
    Flatten(Part),
}

/// A component flattened into a struct.
pub struct Part {
    pub component: String,
    /// A union (or a struct with flattened parts of its own): read after the struct parts, from the members they
    /// did not take (`codec::tree`).
    pub reads_whole_object: bool,
}

/// What one member (or parameter, array item or map value) holds, as the schema says it.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A component or hand-written scalar, by its Rust type (`Fees`, `crate::DecimalString`).
    Named(String),
    /// The one-variant enum generated for a single-value property (a tag such as `_tag: [bridge]`).
    Tag(String),
    String {
        min_length: Option<u64>,
        max_length: Option<u64>,
        pattern: Option<String>,
    },
    /// Any other `type: number`: `crate::DecimalNumber`.
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    /// `u64` when the minimum is not negative, else `i64`.
    Integer {
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    Array {
        items: Box<Shape>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
    /// An object of `additionalProperties` only: `BTreeMap<String, _>`.
    Map(Box<Shape>),
    /// `nullable: true`: `Option<_>`.
    Nullable(Box<Shape>),
}

/// A string enum component, or the tag enum of a single-value property.
pub struct StringEnum {
    pub name: String,
    pub doc: Option<String>,
    pub values: Vec<String>,
    /// The value of `#[default]`: the schema's `default`, or the only value.
    pub default: Option<String>,
}

/// A union of object components, told apart by a tag or by which member is present.
pub struct Union {
    pub name: String,
    pub doc: Option<String>,
    pub discriminant: Discriminant,
    pub variants: Vec<Variant>,
}

pub enum Discriminant {
    /// `discriminator.propertyName`, wherever it is in the object; `x-discriminator-default` is the index of the
    /// variant taken when the tag is absent.
    Tag { property: String, default: Option<usize> },
    /// `x-presence-discriminator`: the member present names the variant.
    Presence,
}

pub struct Variant {
    /// The tag value (tag unions) or the member present (presence unions).
    pub key: String,
    pub ident: String,
    /// The variant's component.
    pub ty: String,
}

/// `x-json-kind-union`: told apart by JSON kind alone.
pub struct KindUnion {
    pub name: String,
    pub doc: Option<String>,
    pub variants: Vec<KindVariant>,
}

pub struct KindVariant {
    /// `string`, `number`, `object`, ...
    pub kind: String,
    pub ident: String,
    pub shape: Shape,
}

impl Model {
    pub fn read(doc: &Yaml) -> anyhow::Result<Model> {
        let mut reader = Reader { doc, items: Vec::new(), components: Vec::new() };
        for (name, schema) in schema::component_schemas(doc)? {
            let name = name.as_str().ok_or_else(|| anyhow!("schema names are strings"))?;
            if schema::scalar_type(name).is_some() {
                continue;
            }
            reader.component(name, schema).with_context(|| format!("component {name}"))?;
        }
        reader.operation_parameters()?;
        for item in &reader.items {
            if let Item::Struct(s) = item {
                // The decoder's tables keep sets of a struct's members (and its flattened parts) in 64 bits.
                if s.fields.len() > MAX_MEMBERS {
                    bail!("{}: {} members; the decoder's tables hold at most {MAX_MEMBERS}", s.name, s.fields.len());
                }
            }
        }
        Ok(Model { items: reader.items, components: reader.components })
    }

    /// Every struct by name (components and parameter structs).
    pub fn structs(&self) -> BTreeMap<&str, &Struct> {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Struct(s) => Some((s.name.as_str(), s)),
                _ => None,
            })
            .collect()
    }

    /// Every union of structs (tag and presence unions), in output order.
    pub fn unions(&self) -> impl Iterator<Item = &Union> {
        self.items.iter().filter_map(|item| match item {
            Item::Union(u) => Some(u),
            _ => None,
        })
    }
}

impl Field {
    /// The field's type as declared: an optional member is an `Option` of its shape's type.
    pub fn declared(&self) -> RustType {
        match &self.value {
            FieldValue::Flatten(part) => RustType::Path(part.component.clone()),
            FieldValue::Member(shape) if self.required => shape.rust_type(),
            FieldValue::Member(shape) => RustType::Option(Box::new(shape.rust_type())),
        }
    }

    pub fn shape(&self) -> Option<&Shape> {
        match &self.value {
            FieldValue::Member(shape) => Some(shape),
            FieldValue::Flatten(_) => None,
        }
    }

    pub fn part(&self) -> Option<&Part> {
        match &self.value {
            FieldValue::Flatten(part) => Some(part),
            FieldValue::Member(_) => None,
        }
    }

    /// A single-value tag (`_tag`, `type`, `state`), whose type is its owner's own.
    pub fn is_tag(&self) -> bool {
        matches!(self.shape(), Some(Shape::Tag(_)))
    }
}

impl Shape {
    /// `nullable: true`: `null` is a value (`Option`).
    pub fn is_nullable(&self) -> bool {
        matches!(self, Shape::Nullable(_))
    }

    pub fn rust_type(&self) -> RustType {
        let path = |p: &str| RustType::Path(p.to_owned());
        match self {
            Shape::Named(name) | Shape::Tag(name) => path(name),
            Shape::String { .. } => path("String"),
            Shape::Number { .. } => path("crate::DecimalNumber"),
            Shape::Integer { minimum: Some(lo), .. } if *lo >= 0.0 => path("u64"),
            Shape::Integer { .. } => path("i64"),
            Shape::Boolean => path("bool"),
            Shape::Array { items, .. } => RustType::Vec(Box::new(items.rust_type())),
            Shape::Map(values) => RustType::Map(Box::new(values.rust_type())),
            Shape::Nullable(inner) => RustType::Option(Box::new(inner.rust_type())),
        }
    }
}

impl StringEnum {
    /// The variant identifier of a value (`bridge-swap` → `BridgeSwap`, `1d` → `V1d`).
    pub fn variant_ident(value: &str) -> String {
        let camel = value.to_upper_camel_case();
        match camel.chars().next() {
            Some(c) if c.is_ascii_digit() => format!("V{camel}"),
            None => "Empty".to_owned(),
            _ => camel,
        }
    }
}

/// Reads the document into items; the one place that knows the schema's shape rules.
struct Reader<'a> {
    doc: &'a Yaml,
    items: Vec<Item>,
    components: Vec<String>,
}

impl<'a> Reader<'a> {
    fn deref(&self, reference: &str) -> anyhow::Result<(&'a str, &'a Yaml)> {
        schema::component(self.doc, reference)
    }

    fn component(&mut self, name: &str, schema: &'a Yaml) -> anyhow::Result<()> {
        let doc = str_of(schema, "description").map(str::to_owned);
        let item = if schema.get("oneOf").is_some() {
            if bool_of(schema, "x-json-kind-union") {
                Item::KindUnion(self.kind_union(name, schema, doc)?)
            } else if schema.get("x-presence-discriminator").is_some() {
                Item::Union(self.presence_union(name, schema, doc)?)
            } else {
                Item::Union(self.union(name, schema, doc)?)
            }
        } else if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
            let values: Vec<String> = values.iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect();
            string_enum(name, values, doc, str_of(schema, "default"))
        } else if schema.get("allOf").is_some() || (str_of(schema, "type") == Some("object") && !schema::is_map(schema))
        {
            Item::Struct(self.structure(name, schema, doc)?)
        } else {
            // A named scalar (for example the public key string) or map (an object of `additionalProperties`
            // only, such as the bridge configuration by chain): a type alias.
            let ty = self.shape(schema, name, "value")?.rust_type();
            self.items.push(Item::Alias { name: name.to_owned(), doc, ty });
            return Ok(());
        };
        self.items.push(item);
        self.components.push(name.to_owned());
        Ok(())
    }

    fn structure(&mut self, name: &str, schema: &'a Yaml, doc: Option<String>) -> anyhow::Result<Struct> {
        let mut fields = Vec::new();
        self.fields_of(name, schema, &mut fields)?;
        let deny_unknown_fields = schema.get("additionalProperties").and_then(Value::as_bool) == Some(false);
        if fields.iter().any(|f| f.part().is_some()) {
            // Such a struct reads its parts from the object read whole (`codec::tree`).
            if deny_unknown_fields {
                bail!("{name}: additionalProperties: false with allOf members is not supported");
            }
            for part in fields.iter().filter_map(Field::part) {
                let (_, target) = self.deref(&format!("#/components/schemas/{}", part.component))?;
                if target.get("allOf").is_some() {
                    bail!("{name}: {} flattens allOf members itself", part.component);
                }
            }
        }
        Ok(Struct { name: name.to_owned(), doc, fields, deny_unknown_fields, origin: Origin::Component })
    }

    fn fields_of(&mut self, owner: &str, schema: &'a Yaml, out: &mut Vec<Field>) -> anyhow::Result<()> {
        for member in schema.get("allOf").and_then(Value::as_sequence).into_iter().flatten() {
            let Some(reference) = str_of(member, "$ref") else {
                self.fields_of(owner, member, out)?;
                continue;
            };
            let (target, target_schema) = self.deref(reference)?;
            let ident = match target_schema.get("discriminator").and_then(|d| str_of(d, "propertyName")) {
                Some(tag) => tag.to_snake_case(),
                None if target.ends_with("Common") => "common".to_owned(),
                None => target.to_snake_case(),
            };
            out.push(Field {
                json: String::new(),
                ident,
                doc: str_of(target_schema, "description").map(str::to_owned),
                required: true,
                value: FieldValue::Flatten(Part {
                    component: target.to_owned(),
                    reads_whole_object: self.reads_whole_object(target)?,
                }),
            });
        }
        let required = schema::required(schema);
        for (key, prop) in schema.get("properties").and_then(Value::as_mapping).into_iter().flatten() {
            let json = key.as_str().ok_or_else(|| anyhow!("property names are strings"))?;
            let shape = self.shape(prop, owner, json).with_context(|| format!("property {json}"))?;
            let doc = str_of(prop, "description").map(str::to_owned).or_else(|| {
                str_of(prop, "$ref")
                    .and_then(|r| self.deref(r).ok())
                    .and_then(|(_, s)| str_of(s, "description"))
                    .map(first_sentence)
            });
            out.push(Field {
                json: json.to_owned(),
                ident: field_ident(json),
                doc,
                required: required.contains(&json),
                value: FieldValue::Member(shape),
            });
        }
        Ok(())
    }

    /// `true` for the components whose `Deserialize` reads the object whole first: discriminated unions and structs
    /// that flatten `allOf` members. Such a part is read from the object already read (`codec::tree`).
    fn reads_whole_object(&self, component: &str) -> anyhow::Result<bool> {
        let (_, schema) = self.deref(&format!("#/components/schemas/{component}"))?;
        let union = schema.get("oneOf").is_some() && !bool_of(schema, "x-json-kind-union");
        let flattens =
            schema.get("allOf").and_then(Value::as_sequence).is_some_and(|m| m.iter().any(|m| m.get("$ref").is_some()));
        Ok(union || flattens)
    }

    fn union(&mut self, name: &str, schema: &'a Yaml, doc: Option<String>) -> anyhow::Result<Union> {
        let disc = schema.get("discriminator").ok_or_else(|| anyhow!("union without discriminator"))?;
        let property = str_of(disc, "propertyName").ok_or_else(|| anyhow!("discriminator without propertyName"))?;
        let mapping =
            disc.get("mapping").and_then(Value::as_mapping).ok_or_else(|| anyhow!("discriminator without mapping"))?;
        let mut variants = Vec::new();
        for (tag, target) in mapping {
            let tag = tag.as_str().ok_or_else(|| anyhow!("tag values are strings"))?;
            let (ty, _) = self.deref(target.as_str().ok_or_else(|| anyhow!("variants are $refs"))?)?;
            variants.push(self.variant(tag, StringEnum::variant_ident(tag), ty)?);
        }
        let default = match str_of(schema, "x-discriminator-default") {
            Some(d) => Some(variants.iter().position(|v| v.key == d).ok_or_else(|| anyhow!("bad default"))?),
            None => None,
        };
        let discriminant = Discriminant::Tag { property: property.to_owned(), default };
        Ok(Union { name: name.to_owned(), doc, discriminant, variants })
    }

    /// A union told apart by which required member is present (`x-presence-discriminator`: member → variant). The
    /// variant idents are the variant types' names without the union's common prefix and `Event`-style suffix
    /// (`BridgeCancelledBridgeSwapEvent` in `BridgeCancelledEvent` → `BridgeSwap`).
    fn presence_union(&mut self, name: &str, schema: &'a Yaml, doc: Option<String>) -> anyhow::Result<Union> {
        let mapping = schema
            .get("x-presence-discriminator")
            .and_then(Value::as_mapping)
            .ok_or_else(|| anyhow!("x-presence-discriminator must map members to variants"))?;
        let mut variants = Vec::new();
        for (member, target) in mapping {
            let member = member.as_str().ok_or_else(|| anyhow!("member names are strings"))?;
            let (ty, _) = self.deref(target.as_str().ok_or_else(|| anyhow!("variants are $refs"))?)?;
            variants.push(self.variant(member, presence_variant_ident(name, ty), ty)?);
        }
        Ok(Union { name: name.to_owned(), doc, discriminant: Discriminant::Presence, variants })
    }

    fn variant(&self, key: &str, ident: String, ty: &str) -> anyhow::Result<Variant> {
        Ok(Variant { key: key.to_owned(), ident, ty: ty.to_owned() })
    }

    fn kind_union(&mut self, name: &str, schema: &'a Yaml, doc: Option<String>) -> anyhow::Result<KindUnion> {
        let mut variants = Vec::new();
        for member in schema.get("oneOf").and_then(Value::as_sequence).into_iter().flatten() {
            if let Some(reference) = str_of(member, "$ref") {
                let (ty, target) = self.deref(reference)?;
                let kind = str_of(target, "type").unwrap_or("object").to_owned();
                variants.push(KindVariant { kind, ident: ty.to_owned(), shape: Shape::Named(ty.to_owned()) });
            } else {
                let kind = str_of(member, "type").ok_or_else(|| anyhow!("kind-union member without type"))?;
                let shape = self.shape(member, name, kind)?;
                variants.push(KindVariant { kind: kind.to_owned(), ident: kind.to_upper_camel_case(), shape });
            }
        }
        Ok(KindUnion { name: name.to_owned(), doc, variants })
    }

    /// The shape of one property (or parameter) schema of `owner`.
    fn shape(&mut self, schema: &'a Yaml, owner: &str, prop: &str) -> anyhow::Result<Shape> {
        let plain = self.plain_shape(schema, owner, prop)?;
        Ok(if bool_of(schema, "nullable") { Shape::Nullable(Box::new(plain)) } else { plain })
    }

    fn plain_shape(&mut self, schema: &'a Yaml, owner: &str, prop: &str) -> anyhow::Result<Shape> {
        if let Some(reference) = str_of(schema, "$ref") {
            let (name, _) = self.deref(reference)?;
            return Ok(Shape::Named(schema::scalar_type(name).unwrap_or(name).to_owned()));
        }
        if let Some(members) = schema.get("allOf").and_then(Value::as_sequence) {
            if let [only] = members.as_slice() {
                return self.plain_shape(only, owner, prop);
            }
            bail!("allOf with several members inside a property");
        }
        let ty = str_of(schema, "type").ok_or_else(|| anyhow!("schema without type"))?;
        let (minimum, maximum) = (f64_of(schema, "minimum"), f64_of(schema, "maximum"));
        Ok(match ty {
            "string" => {
                if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
                    let [value] = values.as_slice() else { bail!("inline enum with several values") };
                    let value = value.as_str().ok_or_else(|| anyhow!("tag values are strings"))?.to_owned();
                    let tag_type = format!("{owner}{}", prop.trim_start_matches('_').to_upper_camel_case());
                    let doc = format!("The `{prop}` tag of [`{owner}`].");
                    self.items.push(string_enum(&tag_type, vec![value], Some(doc), None));
                    return Ok(Shape::Tag(tag_type));
                }
                Shape::String {
                    min_length: u64_of(schema, "minLength"),
                    max_length: u64_of(schema, "maxLength"),
                    pattern: str_of(schema, "pattern").map(str::to_owned),
                }
            }
            "number" => Shape::Number { minimum, maximum },
            "integer" => Shape::Integer { minimum, maximum },
            "boolean" => Shape::Boolean,
            "array" => {
                let items = schema.get("items").ok_or_else(|| anyhow!("array without items"))?;
                Shape::Array {
                    items: Box::new(self.shape(items, owner, prop)?),
                    min_items: u64_of(schema, "minItems"),
                    max_items: u64_of(schema, "maxItems"),
                }
            }
            "object" => {
                let values = schema
                    .get("additionalProperties")
                    .filter(|v| v.is_mapping())
                    .ok_or_else(|| anyhow!("inline object without additionalProperties schema"))?;
                Shape::Map(Box::new(self.shape(values, owner, prop)?))
            }
            other => bail!("unsupported type {other}"),
        })
    }

    /// `{OperationId}Query` and `{OperationId}Path` structs for operations with such parameters.
    fn operation_parameters(&mut self) -> anyhow::Result<()> {
        for op in schema::operations(self.doc)? {
            if op.alias_of.is_some() {
                continue; // an alias shares the parameter structs of the operation it aliases
            }
            let base = op.id.to_upper_camel_case();
            for location in ["path", "query"] {
                let mut fields = Vec::new();
                for param in schema::parameters_in(self.doc, op.op, location)? {
                    let json = str_of(param, "name").ok_or_else(|| anyhow!("parameter without name"))?;
                    let schema = param.get("schema").ok_or_else(|| anyhow!("parameter without schema"))?;
                    let shape = self.shape(schema, &base, json)?;
                    let mut doc = str_of(param, "description").map(str::to_owned);
                    if let Some(default) = schema.get("default") {
                        let default = serde_norway::to_string(default)?;
                        doc =
                            Some(format!("{} Default: {}.", doc.unwrap_or_default(), default.trim()).trim().to_owned());
                    }
                    fields.push(Field {
                        json: json.to_owned(),
                        ident: field_ident(json),
                        doc,
                        required: bool_of(param, "required"),
                        value: FieldValue::Member(shape),
                    });
                }
                if fields.is_empty() {
                    continue;
                }
                let doc =
                    format!("The {location} parameters of `{} {}` (`{}`).", op.method.to_uppercase(), op.path, op.id);
                self.items.push(Item::Struct(Struct {
                    name: format!("{base}{}", location.to_upper_camel_case()),
                    doc: Some(doc),
                    fields,
                    deny_unknown_fields: false,
                    origin: Origin::Parameters,
                }));
            }
        }
        Ok(())
    }
}

fn string_enum(name: &str, values: Vec<String>, doc: Option<String>, default: Option<&str>) -> Item {
    let default = match (default, values.as_slice()) {
        (Some(d), _) => Some(d.to_owned()),
        (None, [only]) => Some(only.clone()),
        (None, _) => None,
    };
    Item::Enum(StringEnum { name: name.to_owned(), doc, values, default })
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
