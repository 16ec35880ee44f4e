//! The JSON Schema that schemars derives from each generated Rust type agrees with the component it was
//! generated from: the same properties, the same required set, the same nullability, enums and constraints
//! (lengths, pattern, item counts, bounds), and the same union variants. Driven by `every_component!`.

use std::collections::{BTreeMap, BTreeSet};

use bridge_contract::*;
use serde_json::{json, Value};

/// What is compared of one schema, after `$ref`s, `allOf` and nullable wrappers are resolved.
#[derive(Debug, PartialEq)]
struct Shape {
    kind: Option<String>,
    nullable: bool,
    enumeration: Option<Vec<Value>>,
    constraints: BTreeMap<&'static str, Value>,
    properties: BTreeMap<String, Shape>,
    required: BTreeSet<String>,
    variants: Vec<String>,
    items: Option<Box<Shape>>,
}

const CONSTRAINTS: [&str; 7] = ["minLength", "maxLength", "pattern", "minItems", "maxItems", "minimum", "maximum"];

struct Resolver<'a> {
    components: &'a Value,
}

impl Resolver<'_> {
    fn follow<'v>(&'v self, mut schema: &'v Value) -> (&'v Value, Option<String>) {
        let mut name = None;
        while let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let n = r.rsplit('/').next().unwrap().to_owned();
            schema = &self.components[&n];
            name = Some(n);
        }
        (schema, name)
    }

    /// `depth` 0 is the component itself; properties and items are compared one level deep.
    fn shape(&self, schema: &Value, depth: usize) -> Shape {
        let (mut schema, _) = self.follow(schema);
        let mut nullable = schema.get("nullable") == Some(&json!(true));
        // Constraints may sit on a wrapper (`{anyOf: [X, null], minLength: 1}`) or on the inner schema.
        let mut constraints: BTreeMap<&'static str, Value> = BTreeMap::new();
        // Unwrap `anyOf: [X, null]` and single-member `allOf` (nullable or described references).
        loop {
            for k in CONSTRAINTS {
                if let Some(v) = schema.get(k) {
                    constraints.insert(k, normalise_number(v));
                }
            }
            if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
                let non_null: Vec<&Value> = any.iter().filter(|s| !is_null_schema(s)).collect();
                if non_null.len() == 1 && any.len() == 2 {
                    nullable = true;
                    schema = self.follow(non_null[0]).0;
                    continue;
                }
            }
            if let Some([only]) = schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
                schema = self.follow(only).0;
                continue;
            }
            break;
        }
        nullable |= schema.get("nullable") == Some(&json!(true));
        let enumeration = schema
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter(|x| !x.is_null()).cloned().collect())
            .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
        for k in CONSTRAINTS {
            if let Some(v) = schema.get(k) {
                constraints.insert(k, normalise_number(v));
            }
        }
        let mut shape = Shape {
            kind: schema.get("type").and_then(Value::as_str).map(str::to_owned),
            nullable,
            enumeration,
            constraints,
            properties: BTreeMap::new(),
            required: BTreeSet::new(),
            variants: Vec::new(),
            items: None,
        };
        if depth == 0 {
            self.collect_object(schema, &mut shape);
            if let Some(one_of) = schema.get("oneOf").and_then(Value::as_array) {
                shape.variants.extend(one_of.iter().map(|v| self.variant_name(v)));
            }
            shape.variants.sort();
        }
        if let Some(items) = schema.get("items") {
            shape.items = Some(Box::new(self.shape(items, 1)));
        }
        shape
    }

    fn collect_object(&self, schema: &Value, shape: &mut Shape) {
        let (schema, _) = self.follow(schema);
        for member in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            let target = self.follow(member).0;
            match target.get("oneOf").and_then(Value::as_array) {
                // A flattened union (a record's `state`): compare its variants.
                Some(one_of) => shape.variants.extend(one_of.iter().map(|v| self.variant_name(v))),
                None => self.collect_object(member, shape),
            }
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                shape.properties.insert(name.clone(), self.shape(prop, 1));
            }
        }
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            shape.required.extend(required.iter().filter_map(|r| r.as_str().map(str::to_owned)));
        }
        if schema.get("properties").is_some() && shape.kind.is_none() {
            shape.kind = Some("object".into());
        }
    }

    fn variant_name(&self, variant: &Value) -> String {
        let (target, name) = self.follow(variant);
        match (name, target.get("type").and_then(Value::as_str)) {
            (Some(_), Some(kind)) if kind != "object" => kind.to_owned(),
            (Some(name), _) => name,
            (None, kind) => kind.unwrap_or("?").to_owned(),
        }
    }
}

fn is_null_schema(s: &Value) -> bool {
    s.get("type") == Some(&json!("null"))
        || s.get("enum") == Some(&json!([null]))
        || s.get("const") == Some(&Value::Null)
}

fn normalise_number(v: &Value) -> Value {
    match v.as_f64() {
        Some(f) if v.is_number() => json!(f),
        _ => v.clone(),
    }
}

/// The members that differ, one line each.
fn difference(expected: &Shape, actual: &Shape) -> String {
    let mut lines = Vec::new();
    let names: BTreeSet<&String> = expected.properties.keys().chain(actual.properties.keys()).collect();
    for name in names {
        let (e, a) = (expected.properties.get(name), actual.properties.get(name));
        if e != a {
            lines.push(format!("  .{name}: source {e:?}\n  {}  generated {a:?}", " ".repeat(name.len())));
        }
    }
    if expected.required != actual.required {
        lines.push(format!("  required: source {:?}, generated {:?}", expected.required, actual.required));
    }
    if lines.is_empty() {
        lines.push(format!("  source {expected:?}\n  generated {actual:?}"));
    }
    format!("\n{}", lines.join("\n"))
}

#[test]
fn every_type_agrees_with_its_source_component() {
    let doc: Value = serde_json::from_str(OPENAPI_SOURCE_JSON).unwrap();
    let source = Resolver { components: &doc["components"]["schemas"] };
    let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
    let mut failures = Vec::new();
    let mut checked = 0;
    macro_rules! each {
        ($ty:ident, $name:literal) => {{
            let root = serde_json::to_value(generator.root_schema_for::<$ty>()).unwrap();
            let mut defs = generator.definitions().clone();
            defs.insert($name.to_owned(), root.clone());
            let defs = Value::Object(defs);
            let generated = Resolver { components: &defs };
            let expected = source.shape(&doc["components"]["schemas"][$name], 0);
            let actual = generated.shape(&root, 0);
            if expected != actual {
                failures.push(format!("{}: {}", $name, difference(&expected, &actual)));
            }
            checked += 1;
        }};
    }
    every_component!(each);
    assert!(checked > 100);
    assert!(failures.is_empty(), "{} of {checked} types disagree:\n{}", failures.len(), failures.join("\n"));
}

/// The comparison is not vacuous: a schema with one constraint changed is told apart.
#[test]
fn a_changed_constraint_is_noticed() {
    let doc: Value = serde_json::from_str(OPENAPI_SOURCE_JSON).unwrap();
    let mut changed = doc.clone();
    changed["components"]["schemas"]["DepositAddressCreateRequest"]["properties"]["addressNote"]["maxLength"] =
        json!(81);
    let a = Resolver { components: &doc["components"]["schemas"] };
    let b = Resolver { components: &changed["components"]["schemas"] };
    let name = "DepositAddressCreateRequest";
    assert_ne!(a.shape(&doc["components"]["schemas"][name], 0), b.shape(&changed["components"]["schemas"][name], 0));
}

/// `AnyOperation` is the document's operations, each variant the operation of its unit struct, in the order of
/// `every_operation!` (the document's), and `ALL[op as usize] == op` (a table per operation is indexed so).
#[test]
fn any_operation_is_every_operation_in_the_documents_order() {
    let doc: Value = serde_json::from_str(OPENAPI_SOURCE_JSON).unwrap();
    let mut documented = Vec::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            documented.extend(operation.get("operationId").and_then(Value::as_str));
        }
    }
    let ids: Vec<&str> = AnyOperation::ALL.iter().map(|op| op.id()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    documented.sort_unstable();
    assert_eq!(sorted, documented);
    for (i, op) in AnyOperation::ALL.into_iter().enumerate() {
        assert_eq!(op as usize, i, "{op}");
        assert_eq!(AnyOperation::from_id(op.id()), Some(op));
        assert_eq!(op.to_string(), op.id());
    }
    assert_eq!(AnyOperation::from_id("noSuchOperation"), None);
    let mut typed = Vec::new();
    macro_rules! each {
        ($ty:ident, $id:literal) => {
            assert_eq!(AnyOperation::$ty.id(), <operations::$ty as Operation>::ID);
            typed.push($id);
        };
    }
    every_operation!(each);
    assert_eq!(typed, ids);
}
