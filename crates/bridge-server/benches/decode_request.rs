//! Request decoding as the server does it (`bridge_server::decode::body`: the fast path straight into the
//! operation's Rust type, and the engine when the body has issues), on a valid and on an invalid quote request,
//! with the engine alone for reference (bytes → `JsValue` → shape walk → normalised JSON → the Rust type), against
//! two baselines measured in the same run:
//!
//! * `serde`: `serde_json::from_slice::<BridgeQuoteRequest>` of the same bytes (no issues, first error only,
//!   none of the framework's rules such as refinements or UTF-16 lengths);
//! * `jsonschema`: parsing the same bytes into a `serde_json::Value` and validating it against the
//!   `BridgeQuoteRequest` component of the bundled document with the `jsonschema` crate (every error
//!   collected; the validator is built once, outside the measurement).
//!
//! `scripts/bench-report.py` prints each measurement as a ratio to `serde`.
//! Run: `cargo bench -p bridge-server --bench decode_request` (add `-- --quick` for a short run).

use std::hint::black_box;

use bridge_contract::BridgeQuoteRequest;
use bridge_server::decode::{self, shape::BodyShape, ErrorsMode};
use bridge_server::shapes;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

#[path = "support/quote_bodies.rs"]
mod quote_bodies;
use quote_bodies::{INVALID, VALID};

fn body_shape() -> &'static BodyShape {
    shapes::by_operation_id("quoteBridge")
        .expect("quoteBridge has tables")
        .body
        .as_ref()
        .expect("quoteBridge has a body")
}

/// What the server does with a JSON body: the fast path, else the engine; the count of issues on failure.
fn server_decode(bytes: &[u8], mode: ErrorsMode) -> Result<BridgeQuoteRequest, usize> {
    decode::body(body_shape(), Some(b"application/json"), bytes, mode).map_err(|issues| issues.len())
}

/// The engine alone: parse keeping JavaScript's key order, walk the shape, then serde.
fn engine_decode(bytes: &[u8], mode: ErrorsMode) -> Result<BridgeQuoteRequest, usize> {
    decode::body_by_engine(body_shape(), Some(b"application/json"), bytes, mode).map_err(|issues| issues.len())
}

/// The bundled document as plain JSON Schema (OpenAPI 3.0's `nullable` becomes `anyOf [.., null]`).
fn validator() -> jsonschema::Validator {
    fn nullable(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.values_mut().for_each(nullable);
                if map.remove("nullable") == Some(Value::Bool(true)) {
                    let inner = Value::Object(std::mem::take(map));
                    map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(nullable),
            _ => {}
        }
    }
    let mut doc: Value = serde_json::from_str(bridge_contract::OPENAPI_JSON).unwrap();
    nullable(&mut doc);
    let schema = json!({"$ref": "#/components/schemas/BridgeQuoteRequest", "components": doc["components"].clone()});
    jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(&schema).expect("the schema compiles")
}

fn bench(c: &mut Criterion) {
    let validator = validator();
    // The inputs are what they claim to be, for every decoder.
    assert!(engine_decode(VALID, ErrorsMode::First).is_ok());
    assert_eq!(server_decode(VALID, ErrorsMode::First), engine_decode(VALID, ErrorsMode::First));
    assert_eq!(server_decode(INVALID, ErrorsMode::First), Err(2));
    assert_eq!(server_decode(INVALID, ErrorsMode::All), Err(3));
    assert!(serde_json::from_slice::<BridgeQuoteRequest>(VALID).is_ok());
    assert!(validator.is_valid(&serde_json::from_slice::<Value>(VALID).unwrap()));
    assert_eq!(
        engine_decode(INVALID, ErrorsMode::First).unwrap_err(),
        2,
        "one issue per literal of `mode` (pay, receive)"
    );
    assert_eq!(engine_decode(INVALID, ErrorsMode::All).unwrap_err(), 3, "`mode` (2) and `recipient` (1)");
    assert!(serde_json::from_slice::<BridgeQuoteRequest>(INVALID).is_err());
    assert_eq!(validator.iter_errors(&serde_json::from_slice::<Value>(INVALID).unwrap()).count(), 2);

    for (name, bytes) in [("valid", VALID), ("invalid", INVALID)] {
        let mut group = c.benchmark_group(format!("quote-request-{name}"));
        group.bench_function("decoder-first", |b| b.iter(|| server_decode(black_box(bytes), ErrorsMode::First)));
        group.bench_function("decoder-all", |b| b.iter(|| server_decode(black_box(bytes), ErrorsMode::All)));
        group.bench_function("engine-first", |b| b.iter(|| engine_decode(black_box(bytes), ErrorsMode::First)));
        group.bench_function("engine-all", |b| b.iter(|| engine_decode(black_box(bytes), ErrorsMode::All)));
        group.bench_function("serde", |b| {
            b.iter(|| serde_json::from_slice::<BridgeQuoteRequest>(black_box(bytes)).is_ok())
        });
        group.bench_function("jsonschema", |b| {
            b.iter(|| {
                let value: Value = serde_json::from_slice(black_box(bytes)).unwrap();
                validator.iter_errors(&value).count()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
