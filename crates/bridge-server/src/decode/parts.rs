//! From HTTP to the values the engine decodes.
//!
//! * Path parameters: percent-decoded strings (invalid UTF-8 is replaced, never refused).
//! * Query: `application/x-www-form-urlencoded` pairs (`+` is a space); a repeated key becomes an array of
//!   strings, as in the framework, so `?page=1&page=2` fails with `Expected string, actual ["1","2"]`.
//! * Body, by `Content-Type`: none or `application/json` (any parameters) is parsed as JSON (an empty body
//!   is `null`); `text/*` is the raw text, a string; `application/x-www-form-urlencoded` is a record of
//!   strings; anything else is bytes, which decode like an object with no members. Malformed JSON gives one
//!   `Transformation` issue at `[]` that says where the JSON broke (the framework answers an empty 400; the
//!   status is the same and the body is clearer).

use bridge_contract::js::JsValue;
use bridge_contract::{Issue, IssueTag};

/// The body as the decoder sees it.
pub fn body(content_type: Option<&[u8]>, bytes: &[u8]) -> Result<JsValue, Issue> {
    let media = content_type.map(|ct| {
        let ct = String::from_utf8_lossy(ct);
        ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
    });
    match media.as_deref() {
        None | Some("application/json") => json(bytes),
        Some(m) if m.starts_with("text/") => Ok(JsValue::String(String::from_utf8_lossy(bytes).into_owned())),
        Some("application/x-www-form-urlencoded") => Ok(form(bytes)),
        Some(_) => Ok(JsValue::Object(Vec::new())),
    }
}

/// `true` for the content types whose body is parsed as JSON by [`body`]: none, or `application/json` with any
/// parameters (compared without allocating; a content type this misses still goes through [`body`]).
pub fn is_json(content_type: Option<&[u8]>) -> bool {
    match content_type {
        None => true,
        Some(ct) => {
            let media = ct.split(|b| *b == b';').next().unwrap_or_default();
            media.trim_ascii().eq_ignore_ascii_case(b"application/json")
        }
    }
}

/// Parses JSON text keeping JavaScript's key order and reading numbers exactly; an empty body is `null`.
pub fn json(bytes: &[u8]) -> Result<JsValue, Issue> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(JsValue::Null);
    }
    // Numbers are read exactly, as JSON.parse reads them (see `bridge_contract::js::from_json_slice`).
    bridge_contract::js::from_json_slice(bytes).map_err(|e| json_issue(&e))
}

/// The one issue of a body that is not JSON: where the JSON broke.
pub(crate) fn json_issue(e: &serde_json::Error) -> Issue {
    let mut message = format!("Unable to parse the body as JSON: {e}");
    crate::credential::redact_in_place(&mut message);
    Issue { tag: IssueTag::Transformation, path: Vec::new(), message }
}

/// `a=1&b=2&b=3` → `{"a":"1","b":["2","3"]}`.
pub fn form(bytes: &[u8]) -> JsValue {
    let mut entries: Vec<(String, JsValue)> = Vec::new();
    for (key, value) in form_urlencoded::parse(bytes) {
        let value = JsValue::String(value.into_owned());
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, JsValue::Array(items))) => items.push(value),
            Some((_, existing)) => {
                let first = std::mem::replace(existing, JsValue::Null);
                *existing = JsValue::Array(vec![first, value]);
            }
            None => entries.push((key.into_owned(), value)),
        }
    }
    JsValue::Object(entries)
}

/// Path parameters as an object of strings.
pub fn path_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> JsValue {
    JsValue::Object(params.into_iter().map(|(k, v)| (k.to_owned(), JsValue::String(v.to_owned()))).collect())
}
