//! The bodies of the fuzz targets, shared by the libFuzzer targets (`fuzz/fuzz_targets/*.rs`, run with
//! `cargo fuzz`) and the corpus replay test that runs on stable in `cargo test --workspace`
//! (`crates/bridge-sandbox/tests/fuzz_corpus.rs`). Each function must never panic, whatever the bytes; the
//! `assert!`s are the properties checked on top of "no panic".
//!
//! Input formats (the seed corpora in `fuzz/corpus/` are written in them):
//! * [`request`]: byte 0 picks the operation (modulo their number, in the document's order: `AnyOperation::ALL`),
//!   byte 1 the `Content-Type` ([`CONTENT_TYPES`]), then `PATH\nQUERY\nBODY`: PATH is the path parameters' values
//!   separated by `/` (in the order the operation declares them), QUERY a raw query string, BODY the raw body.
//! * [`event`]: a JSON document, decoded as every event-carrying type.
//! * [`webhook`]: `SIGNATURE\nBODY`: the `X-Webhook-Signature` header value, then the delivered body; the
//!   verifier holds the public key of `crates/bridge-client/tests/fixtures/signer_a.pub.pem`.

use bridge_contract::js::JsValue;
use bridge_contract::operations::*;
use bridge_contract::{HttpApiDecodeError, Issue, Operation, UserEventsPage, WebhookEnvelope, WebhookEvent};
use bridge_server::decode::shape::{Shape, StructShape};
use bridge_server::decode::{engine, parts, ErrorsMode};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The `Content-Type` values byte 1 of a request input chooses from (`None`: no header).
pub const CONTENT_TYPES: [Option<&str>; 7] = [
    None,
    Some("application/json"),
    Some("application/json; charset=utf-8"),
    Some("text/plain"),
    Some("application/x-www-form-urlencoded"),
    Some("application/octet-stream"),
    Some("APPLICATION/JSON ; foo=bar"),
];

fn split3(data: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let mut it = data.splitn(3, |&b| b == b'\n');
    (it.next().unwrap_or_default(), it.next().unwrap_or_default(), it.next().unwrap_or_default())
}

/// What the server's pipeline does with one part: the engine, then serde into the operation's type. When the
/// engine accepts, serde must too (else the generated tables and types disagree); when it refuses, the issues
/// render into the 400 body.
fn part<T: DeserializeOwned>(shape: &Shape, value: &JsValue) {
    for mode in [ErrorsMode::First, ErrorsMode::All] {
        match engine::decode(shape, value, mode) {
            Ok(normalised) => {
                if let Err(e) = serde_json::from_value::<T>(normalised.clone()) {
                    panic!("the engine accepted what serde refuses ({e}): {normalised}");
                }
            }
            Err(issues) => {
                assert!(!issues.is_empty(), "a refusal without issues");
                render(issues);
            }
        }
    }
}

fn render(issues: Vec<Issue>) {
    let message = bridge_server::serve::summary(&issues);
    let body = HttpApiDecodeError { tag: Default::default(), message, issues };
    serde_json::to_vec(&body).expect("a decode error encodes");
}

fn path_value(shape: &'static StructShape, path: &[u8]) -> JsValue {
    let text = String::from_utf8_lossy(path);
    let mut values = text.split('/');
    let pairs: Vec<(&str, &str)> = shape.fields.iter().map(|f| (f.name, values.next().unwrap_or_default())).collect();
    parts::path_params(pairs)
}

fn operation<O: Operation>(content_type: Option<&str>, path: &[u8], query: &[u8], body: &[u8])
where
    O::Body: PartialEq + std::fmt::Debug,
{
    let shapes = bridge_server::shapes::by_operation_id(O::ID).expect("every operation has decoder tables");
    if let Some(shape) = shapes.path {
        part::<O::Path>(&Shape::Struct(shape), &path_value(shape, path));
    }
    if let Some(body_shape) = &shapes.body {
        let value = if body.is_empty() && !body_shape.required {
            Ok(JsValue::Object(Vec::new()))
        } else {
            parts::body(content_type.map(str::as_bytes), body)
        };
        match value {
            Ok(value) => part::<O::Body>(&body_shape.shape, &value),
            Err(issue) => render(vec![issue]),
        }
        // What the server runs (one pass for JSON bodies) agrees with the engine's path, value for value and issue
        // for issue.
        for mode in [ErrorsMode::First, ErrorsMode::All] {
            let content_type = content_type.map(str::as_bytes);
            let served = bridge_server::decode::body::<O::Body>(body_shape, content_type, body, mode);
            let engine = bridge_server::decode::body_by_engine::<O::Body>(body_shape, content_type, body, mode);
            assert_eq!(served, engine, "the server's decoder and the engine disagree ({mode:?})");
        }
    }
    if let Some(shape) = shapes.query {
        part::<O::Query>(&Shape::Struct(shape), &parts::form(query));
    }
}

/// The request decoder: path parameters, body by content type, query, for one operation.
pub fn request(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let content_type = CONTENT_TYPES[data[1] as usize % CONTENT_TYPES.len()];
    let (path, query, body) = split3(&data[2..]);
    let mut index = data[0] as usize % AnyOperation::ALL.len();
    macro_rules! pick {
        ($op:ident, $id:literal) => {
            if index == 0 {
                operation::<$op>(content_type, path, query, body);
            }
            index = index.wrapping_sub(1);
        };
    }
    bridge_contract::every_operation!(pick);
    let _ = index;
}

/// Decodes `data` as `T`; a value that decodes encodes, and its encoding decodes again to the same encoding
/// (the second pass is the fixed point: numbers are read to within one unit in the last place, docs/rust.md).
fn round_trip<T: DeserializeOwned + Serialize>(data: &[u8]) -> Option<T> {
    let value: T = serde_json::from_slice(data).ok()?;
    let once = serde_json::to_string(&value).expect("a decoded value encodes");
    let again: T =
        serde_json::from_str(&once).unwrap_or_else(|e| panic!("its own encoding does not decode ({e}): {once}"));
    let twice = serde_json::to_string(&again).expect("encodes");
    let third: T = serde_json::from_str(&twice).expect("decodes");
    assert_eq!(serde_json::to_string(&third).unwrap(), twice, "encoding is not stable");
    Some(value)
}

/// The event decoder: an event, a page of the feed, a webhook envelope, and the client's open `Event`.
pub fn event(data: &[u8]) {
    let typed = round_trip::<WebhookEvent>(data);
    round_trip::<UserEventsPage>(data);
    round_trip::<WebhookEnvelope>(data);
    if let Ok(open) = serde_json::from_slice::<bridge_client::webhook::Event>(data) {
        // A known tag decodes as the contract's type does with its members it does not have ignored (production
        // may add members): as the type itself when that decodes too; an unknown one keeps its tag.
        match &open {
            bridge_client::webhook::Event::Known(e) => {
                let lenient = bridge_contract::codec::ignoring_unknown_members(|| {
                    serde_json::from_slice::<WebhookEvent>(data).ok()
                });
                assert_eq!(Some(e), lenient.as_ref());
                if typed.is_some() {
                    assert_eq!(Some(e), typed.as_ref());
                }
            }
            bridge_client::webhook::Event::Unknown { tag, .. } => {
                assert!(!WebhookEvent::TAGS.contains(&tag.as_str()))
            }
        }
        serde_json::to_string(&open).expect("an open event encodes");
    }
}

fn verifier() -> &'static bridge_client::webhook::WebhookVerifier {
    static VERIFIER: std::sync::OnceLock<bridge_client::webhook::WebhookVerifier> = std::sync::OnceLock::new();
    VERIFIER.get_or_init(|| {
        bridge_client::webhook::WebhookVerifier::from_pem(include_str!(
            "../../crates/bridge-client/tests/fixtures/signer_a.pub.pem"
        ))
        .expect("the fixture key loads")
    })
}

/// The webhook verifier: signature header parsing, canonical JSON, RSA verification, envelope decoding.
/// Returns whether the delivery verified.
pub fn webhook(data: &[u8]) -> bool {
    let (header, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let header = String::from_utf8_lossy(header);
    // The signed text is JSON.stringify(JSON.parse(body)): doing it twice changes nothing.
    if let Ok(canonical) = bridge_client::webhook::canonical_json(body) {
        let again = bridge_client::webhook::canonical_json(canonical.as_bytes()).expect("canonical JSON parses");
        assert_eq!(again, canonical, "canonical JSON is not a fixed point");
    }
    match verifier().verify(body, &header) {
        Ok(delivery) => {
            assert_eq!(
                Ok(delivery.canonical.clone()),
                bridge_client::webhook::canonical_json(body).map_err(|e| e.to_string())
            );
            let _ = delivery.into_envelope();
            true
        }
        Err(e) => {
            let _ = e.to_string();
            false
        }
    }
}
