//! JSON answers: the encoding every answer of this crate goes through ([`json`]), for the request pipeline
//! (`serve`) and the answers of other modules (`admission`'s 429). It imports only [`crate::credential`]: an error
//! answer never quotes a credential back whole.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{header, StatusCode};
use serde::Serialize;

/// The `_tag` of an error answer's JSON body (`DepositAddressRateLimitExceeded`, `HttpApiDecodeError`, ...), in the
/// extensions of every error answer this crate encodes, so that layers around the router can count errors by kind
/// without reading bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorTag(pub String);

/// A JSON answer; an error answer (4xx, 5xx) carries its body's `_tag` as [`ErrorTag`], and a credential its
/// messages quote (an id or a value from the request) is written redacted ([`crate::credential::redact`]; error
/// answers are small, and one without a credential is sent as encoded).
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) if status.is_client_error() || status.is_server_error() => {
            let bytes = match crate::credential::redact_bytes(&bytes) {
                std::borrow::Cow::Owned(redacted) => redacted,
                std::borrow::Cow::Borrowed(_) => bytes,
            };
            let mut response = json_text(status, bytes);
            if let Some(tag) = error_tag(value) {
                response.extensions_mut().insert(ErrorTag(tag));
            }
            response
        }
        Ok(bytes) => json_text(status, bytes),
        Err(e) => internal(&format!("encoding the answer: {e}")),
    }
}

/// The `_tag` member of an error value, read from the value (error answers only: they are small).
fn error_tag<T: Serialize>(value: &T) -> Option<String> {
    match serde_json::to_value(value).ok()? {
        serde_json::Value::Object(mut members) => match members.remove("_tag")? {
            serde_json::Value::String(tag) => Some(tag),
            _ => None,
        },
        _ => None,
    }
}

/// A JSON answer already encoded.
pub(crate) fn json_text(status: StatusCode, text: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(text.into())
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A server bug: logged, answered 500 without details beyond the message.
pub(crate) fn internal(message: &str) -> Response {
    let message = crate::credential::redact(message);
    tracing::error!(message = %message, "internal error");
    (StatusCode::INTERNAL_SERVER_ERROR, message.into_owned()).into_response()
}

pub(crate) fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
