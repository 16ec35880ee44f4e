//! The published document ([`OPENAPI_JSON`], served at `GET /openapi.json`) states the same contract as the
//! source form the types are generated from ([`OPENAPI_SOURCE_JSON`]), in constructs other languages' generators
//! read (`xtask/src/publish.rs`): every value the generated types produce is valid against both, each value made
//! from one by a mutation (a member removed, added, set to `null` or to another JSON kind, a tag or state
//! swapped for another of the document's enum values, a decimal string broken) is valid against both or against
//! neither, and production's payloads are valid against both. Checked with the `jsonschema` crate, component by
//! component (the list is the generated `every_component!`).

use crate::support;

use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt::Debug;

use bridge_contract::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::Serialize;
use serde_json::{json, Value};

/// A document converted for a JSON Schema validator, as `support::json_schema_document` converts the source.
fn json_schema(text: &str) -> Value {
    let mut doc: Value = serde_json::from_str(text).unwrap();
    bridge_contract::openapi::to_json_schema(&mut doc);
    doc
}

/// Counts of what the mutations did, so that the test is seen not to be vacuous.
#[derive(Default)]
struct Tally {
    values: usize,
    mutants_valid: usize,
    mutants_invalid: usize,
}

/// Every string enum value of the document (tags, states, enums): what a swapped tag or state is drawn from.
fn enum_values(doc: &Value, out: &mut BTreeSet<String>) {
    match doc {
        Value::Object(map) => {
            if let Some(values) = map.get("enum").and_then(Value::as_array) {
                out.extend(values.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            map.values().for_each(|v| enum_values(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| enum_values(v, out)),
        _ => {}
    }
}

/// JSON pointers of every node of `value` below the root (and the root itself, as "").
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(v, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A copy of `value` with one change chosen by `seed`: see the module documentation.
fn mutate(value: &Value, seed: u64, enums: &[String]) -> Value {
    let mut out = value.clone();
    let mut all = Vec::new();
    pointers(value, String::new(), &mut all);
    let at = &all[(seed % all.len() as u64) as usize];
    let choice = (seed >> 16) % 7;
    let pick = (seed >> 24) as usize;
    let (parent, key) = match at.rfind('/') {
        Some(i) => (&at[..i], Some(at[i + 1..].replace("~1", "/").replace("~0", "~"))),
        None => ("", None),
    };
    let node = out.pointer_mut(at).unwrap();
    match choice {
        // Another value of the document's enums (tags and states included) for a string.
        0 | 1 if node.is_string() => *node = Value::from(enums[pick % enums.len()].clone()),
        // A broken decimal string, or a string for a number.
        2 if node.is_string() => *node = json!("0x10"),
        2 if node.is_number() => *node = json!("1"),
        // null, or another JSON kind.
        3 => *node = Value::Null,
        4 => {
            *node = match node {
                Value::Object(_) => json!("x"),
                Value::Array(_) => json!({}),
                Value::String(_) => json!(1),
                _ => json!([]),
            }
        }
        // A member added to an object.
        5 if node.is_object() => {
            node.as_object_mut().unwrap().insert("unknownMember".into(), json!(1));
        }
        // The member removed (the tag and state too).
        _ => {
            if let Some(key) = key {
                match out.pointer_mut(parent).unwrap() {
                    Value::Object(map) => {
                        map.remove(&key);
                    }
                    Value::Array(items) => {
                        items.remove(key.parse::<usize>().unwrap());
                    }
                    _ => unreachable!("a parent is a container"),
                }
            }
        }
    }
    out
}

/// Values of `T` and their mutants against the component `name` in both forms.
fn check<T>(name: &str, forms: &(Value, Value), enums: &[String], tally: &mut Tally, failures: &mut Vec<String>)
where
    T: Arbitrary + Serialize + Debug,
{
    let source = support::validator(&forms.0, name);
    let published = support::validator(&forms.1, name);
    let mut runner = TestRunner::new(Config { cases: 16, failure_persistence: None, ..Config::default() });
    let seen = [Cell::new(0), Cell::new(0), Cell::new(0)];
    let result = runner.run(&(any::<T>(), proptest::collection::vec(any::<u64>(), 8)), |(value, seeds)| {
        let json = serde_json::to_value(&value).map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        prop_assert!(source.is_valid(&json), "not valid against the source form: {json:#}");
        prop_assert!(published.is_valid(&json), "not valid against the published form: {json:#}");
        seen[0].set(seen[0].get() + 1);
        for seed in seeds {
            let mutant = mutate(&json, seed, enums);
            let (s, p) = (source.is_valid(&mutant), published.is_valid(&mutant));
            prop_assert_eq!(s, p, "the source form says {} and the published form {}: {:#}", s, p, mutant);
            let outcome = &seen[if s { 1 } else { 2 }];
            outcome.set(outcome.get() + 1);
        }
        Ok(())
    });
    tally.values += seen[0].get();
    tally.mutants_valid += seen[1].get();
    tally.mutants_invalid += seen[2].get();
    if let Err(e) = result {
        failures.push(format!("{name}: {e}"));
    }
}

#[test]
fn the_published_form_accepts_and_refuses_what_the_source_does() {
    let forms = (json_schema(OPENAPI_SOURCE_JSON), json_schema(OPENAPI_JSON));
    let mut enums = BTreeSet::new();
    enum_values(&forms.0, &mut enums);
    let enums: Vec<String> = enums.into_iter().collect();
    let (mut tally, mut failures, mut checked) = (Tally::default(), Vec::new(), 0);
    macro_rules! each {
        ($ty:ident, $name:literal) => {
            check::<$ty>($name, &forms, &enums, &mut tally, &mut failures);
            checked += 1;
        };
    }
    bridge_contract::every_component!(each);
    assert!(checked > 100, "every component is covered ({checked})");
    assert!(failures.is_empty(), "{} of {checked} components differ:\n{}", failures.len(), failures.join("\n\n"));
    // Not vacuous: many values, and mutants of both outcomes.
    assert!(tally.values > 1000, "{} values", tally.values);
    assert!(
        tally.mutants_valid > 1000 && tally.mutants_invalid > 5000,
        "{} valid and {} invalid mutants",
        tally.mutants_valid,
        tally.mutants_invalid
    );
}

/// The forms do differ where the restatements are, so the test above compares two documents, not one twice.
#[test]
fn the_published_form_is_restated_where_generators_need_it() {
    let source: Value = serde_json::from_str(OPENAPI_SOURCE_JSON).unwrap();
    let published: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
    let (s, p) = (&source["components"]["schemas"], &published["components"]["schemas"]);
    assert!(s["BridgeRecordBridge"]["allOf"].is_array() && p["BridgeRecordBridge"]["oneOf"].is_array());
    assert_eq!(
        p["BridgeRecordBridge"]["discriminator"]["mapping"]["EXECUTED"],
        "#/components/schemas/BridgeRecordBridgeExecuted"
    );
    assert!(s["BridgeRecord"]["discriminator"].is_object() && p["BridgeRecord"].get("discriminator").is_none());
    assert_eq!(p["BridgePendingEvent"]["type"], "object");
    assert_eq!(source["paths"], published["paths"], "operations are published as written");
}

/// Production's payloads (tests/fixtures/production, written from the official SDK's types) are valid against
/// both forms: the records without `_tag` among them.
#[test]
fn production_payloads_are_valid_against_both_forms() {
    let forms = (json_schema(OPENAPI_SOURCE_JSON), json_schema(OPENAPI_JSON));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/production");
    let mut validators = std::collections::HashMap::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let name = fixture["type"].as_str().unwrap().to_owned();
        for (form, doc) in [("source", &forms.0), ("published", &forms.1)] {
            let validator = validators.entry((form, name.clone())).or_insert_with(|| support::validator(doc, &name));
            let errors: Vec<String> = validator.iter_errors(&fixture["payload"]).map(|e| e.to_string()).collect();
            if !errors.is_empty() {
                failures.push(format!("{} against the {form} form: {errors:?}", path.display()));
            }
        }
        checked += 1;
    }
    assert!(checked > 150, "{checked} fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
