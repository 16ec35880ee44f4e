//! Request decoding: every 400 the server answers comes from here.
//!
//! * [`shape`]: what the decoder knows of a request schema (the tables are generated from the document);
//! * [`engine`]: the reference framework's rules, issue for issue;
//! * [`parts`]: turning an HTTP request into the three parts the engine decodes (path parameters, body by
//!   content type, query), in the framework's order: path, then body, then query;
//! * [`fast`]: a JSON body straight into the operation's type when the engine would find no issue in it;
//!   [`body`] tries it first and asks the engine otherwise.

pub mod engine;
pub mod fast;
pub mod parts;
mod pattern;
pub mod render;
pub mod shape;

use bridge_contract::js::JsValue;
use bridge_contract::{Issue, IssueTag};
use serde::de::DeserializeOwned;

pub use engine::ErrorsMode;

/// A request body as the operation's type, as the server decodes it: a JSON body read once into a tree and
/// checked and typed from it ([`fast`]); a body of another content type through [`body_by_engine`]. The result is
/// the same either way, issue for issue (`tests/fast_path.rs`).
pub fn body<T: DeserializeOwned>(
    shape: &shape::BodyShape,
    content_type: Option<&[u8]>,
    bytes: &[u8],
    mode: ErrorsMode,
) -> Result<T, Vec<Issue>> {
    if !bytes.is_empty() && parts::is_json(content_type) {
        if let Some(decoded) = fast::body(&shape.shape, bytes, mode) {
            return decoded;
        }
    }
    body_by_engine(shape, content_type, bytes, mode)
}

/// A request body as the operation's type through the engine and its JavaScript value: the body by content type
/// ([`parts::body`]), the engine's issues or normalised JSON ([`engine::decode`]), then serde.
pub fn body_by_engine<T: DeserializeOwned>(
    shape: &shape::BodyShape,
    content_type: Option<&[u8]>,
    bytes: &[u8],
    mode: ErrorsMode,
) -> Result<T, Vec<Issue>> {
    let value = if bytes.is_empty() && !shape.required {
        JsValue::Object(Vec::new())
    } else {
        parts::body(content_type, bytes).map_err(|issue| vec![issue])?
    };
    typed(engine::decode(&shape.shape, &value, mode)?)
}

/// The engine's normalised JSON as the operation's Rust type. The engine already enforced the schema, so this
/// fails only if the generated tables and types disagree; that is still a 400 (one issue), never a 500.
pub fn typed<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Vec<Issue>> {
    serde_json::from_value(value).map_err(|e| typed_issues(&e))
}

/// The issue of a checked value that serde refused (see [`typed`]).
fn typed_issues(e: &serde_json::Error) -> Vec<Issue> {
    let mut message = format!("Unable to decode the request: {e}");
    crate::credential::redact_in_place(&mut message);
    vec![Issue { tag: IssueTag::Transformation, path: Vec::new(), message }]
}
