//! The server decodes JSON bodies in one pass (`decode::fast`: a tree, the type read from it with the engine's rules
//! checked on the way, the engine's walker only when something is off); the engine's own path reads them through
//! JavaScript's value and its normalised JSON (`decode::body_by_engine`). They must agree on every body, value for
//! value and issue for issue, in both error modes: for arbitrary schema-valid bodies of every operation (from the
//! contract's proptest strategies) with random mutations (members removed, `null`, replaced by values of every JSON
//! kind and by tricky strings and numbers, unknown members, repeated members, members reordered, strings written
//! with escapes, whitespace), and for every body of the request decoder's fuzz corpus. And a schema-valid body is
//! answered by the one-pass path itself (it hands a body to the engine's path only when they would disagree).

use std::fmt::Debug;
use std::path::PathBuf;

use bridge_contract::operations::*;
use bridge_contract::Operation;
use bridge_server::decode::{self, shape::BodyShape, ErrorsMode};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};

const CONTENT_TYPE: Option<&[u8]> = Some(b"application/json");

/// `decode::body` and the engine's path agree on `bytes`, in both modes.
fn agree<T: serde::de::DeserializeOwned + PartialEq + Debug>(shape: &BodyShape, bytes: &[u8]) -> Result<(), String> {
    for mode in [ErrorsMode::First, ErrorsMode::All] {
        let fast = decode::body::<T>(shape, CONTENT_TYPE, bytes, mode);
        let engine = decode::body_by_engine::<T>(shape, CONTENT_TYPE, bytes, mode);
        if fast != engine {
            return Err(format!(
                "{mode:?}: {}\n fast:   {fast:?}\n engine: {engine:?}",
                String::from_utf8_lossy(bytes)
            ));
        }
    }
    Ok(())
}

/// Replacement values: every JSON kind, strings and numbers at the edges of the rules.
fn tricky() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(""),
        json!(" padded "),
        json!("\u{a0}x\u{2028}"),
        json!("abc"),
        json!("1.5"),
        json!("1e5"),
        json!("0x10"),
        json!("2026-01-02T03:04:05.678Z"),
        json!("pay"),
        json!("extended"),
        json!("partnerbtcfiv2"),
        json!("😀".repeat(41)),
        json!("n".repeat(81)),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(-0.0),
        json!(1e21),
        json!(9_007_199_254_740_993u64),
        json!(0.1),
        json!([]),
        json!(["a", " b "]),
        json!(vec!["s"; 71]),
        json!({}),
        json!({"_tag": "extended", "vaultId": 1}),
        json!({"_tag": "partnerbtcfiv2", "spans": ["  x  "]}),
        json!({"_tag": "nope"}),
    ]
}

/// A small deterministic random source (the cases come from proptest's seed).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Changes `value` in a few random places (recursively into objects and arrays).
fn mutate(value: &mut Value, random: &mut Random, depth: usize) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            match random.below(8) {
                0 if !keys.is_empty() => {
                    map.remove(&keys[random.below(keys.len())]);
                }
                1 if !keys.is_empty() => {
                    let pool = tricky();
                    map.insert(keys[random.below(keys.len())].clone(), pool[random.below(pool.len())].clone());
                }
                2 => {
                    map.insert("unknownMember".into(), json!({"a": [1, "\u{e9}"]}));
                }
                _ => {}
            }
            if depth < 4 {
                for member in map.values_mut() {
                    if random.below(3) == 0 {
                        mutate(member, random, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) if depth < 4 => {
            for item in items.iter_mut() {
                if random.below(3) == 0 {
                    mutate(item, random, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// `value` as JSON text: members rotated, some written twice (first with another value, or last), strings
/// sometimes with every character escaped, whitespace here and there.
fn write(value: &Value, random: &mut Random, out: &mut String) {
    let space = |random: &mut Random, out: &mut String| {
        if random.below(6) == 0 {
            out.push_str([" ", "\n", "\t ", "\r\n"][random.below(4)]);
        }
    };
    space(random, out);
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            let by = random.below(entries.len());
            entries.rotate_left(by);
            out.push('{');
            let mut first = true;
            for (key, member) in entries {
                let extra = match random.below(10) {
                    0 => Some(Value::Null),
                    1 => Some(json!("other")),
                    _ => None,
                };
                let before = random.below(2) == 0;
                let mut writes: Vec<&Value> = vec![member];
                if let Some(extra) = &extra {
                    if before {
                        writes.insert(0, extra);
                    } else {
                        writes.push(extra);
                    }
                }
                for member in writes {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    write(&Value::String(key.clone()), random, out);
                    out.push(':');
                    write(member, random, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, random, out);
            }
            out.push(']');
        }
        Value::String(s) if random.below(8) == 0 => {
            out.push('"');
            for unit in s.encode_utf16() {
                out.push_str(&format!("\\u{unit:04x}"));
            }
            out.push('"');
        }
        other => out.push_str(&other.to_string()),
    }
    space(random, out);
}

fn check<O: Operation>(failures: &mut Vec<String>)
where
    O::Body: Arbitrary + PartialEq + Debug,
{
    let Some(shape) = bridge_server::shapes::by_operation_id(O::ID).and_then(|s| s.body.as_ref()) else { return };
    let mut runner = TestRunner::new(Config { cases: 256, failure_persistence: None, ..Config::default() });
    let result = runner.run(&(any::<O::Body>(), any::<u64>(), any::<bool>()), |(body, seed, mutated)| {
        let mut value = serde_json::to_value(&body).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // A schema-valid body is answered by the one-pass path itself, not handed to the engine.
        let answered = decode::fast::body::<O::Body>(&shape.shape, value.to_string().as_bytes(), ErrorsMode::First);
        prop_assert!(
            matches!(answered, Some(Ok(_))),
            "the fast path did not answer a valid body: {answered:?}\n{value}"
        );
        let mut random = Random(seed);
        if mutated {
            mutate(&mut value, &mut random, 0);
        }
        let mut text = String::new();
        write(&value, &mut random, &mut text);
        agree::<O::Body>(shape, text.as_bytes()).map_err(TestCaseError::fail)?;
        // The plain text too (what most clients send).
        agree::<O::Body>(shape, value.to_string().as_bytes()).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        failures.push(format!("{}: {e}", O::ID));
    }
}

#[test]
fn fast_path_and_engine_agree_on_arbitrary_bodies() {
    let mut failures = Vec::new();
    macro_rules! each {
        ($op:ident, $id:literal) => {
            check::<$op>(&mut failures);
        };
    }
    bridge_contract::every_operation!(each);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every body of the request decoder's fuzz corpus (`fuzz/src/harness.rs` describes the input format: byte 0
/// picks the operation, then `PATH\nQUERY\nBODY`), for the operation it was made for and for every other one.
#[test]
fn fast_path_and_engine_agree_on_the_fuzz_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/request_decoder");
    let mut bodies = Vec::new();
    for entry in std::fs::read_dir(&root).expect("the corpus is there") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        if data.len() >= 2 {
            let mut parts = data[2..].splitn(3, |&b| b == b'\n');
            let (_, _, body) = (parts.next(), parts.next(), parts.next().unwrap_or_default());
            bodies.push(body.to_vec());
        }
    }
    assert!(bodies.len() > 100, "the corpus has bodies ({})", bodies.len());
    let mut failures = Vec::new();
    macro_rules! each {
        ($op:ident, $id:literal) => {
            if let Some(shape) = bridge_server::shapes::by_operation_id($id).and_then(|s| s.body.as_ref()) {
                for body in &bodies {
                    if let Err(e) = agree::<<$op as Operation>::Body>(shape, body) {
                        failures.push(format!("{}: {e}", $id));
                    }
                }
            }
        };
    }
    bridge_contract::every_operation!(each);
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n\n"));
}
