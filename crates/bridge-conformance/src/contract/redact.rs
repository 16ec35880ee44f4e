//! Credentials never leave the proxy whole: its recordings, reports (JSON, JUnit, HTML), violations and logs
//! redact them, by what a value *is* as well as by where it sits.
//!
//! * **By place.** The values of credential headers (`Authorization`, `Proxy-Authorization`, the legacy API key
//!   header, `Cookie`, `Set-Cookie`) become [`REDACTED`], and so do the JSON members the document marks
//!   `x-secret: true` (the API key of the key exchange and the JWT it answers), at any depth: `replay` puts
//!   `--token` and `--api-key` back there.
//! * **By form.** Every other value that has a credential's form ([`bridge_server::credential`]: API keys
//!   `sbx_…`, dashboard session ids and CSRF tokens, JWTs) is written as its first characters and `…[redacted]`,
//!   wherever it is: in any header, in the request target (also percent-encoded in a path segment or a query
//!   pair), and in any body. Bodies are searched as they are sent, byte for byte (text, HTML, multipart parts,
//!   bytes that are not UTF-8), and as their content type decodes them: the strings and member names of JSON (a
//!   key written with `\u` escapes), the names and values of `application/x-www-form-urlencoded` (a key
//!   percent-encoded). Multipart parts carry their content as sent (RFC 7578 §4.7: no transfer encoding), so the
//!   byte search sees them.
//! * **Not searchable.** A body with a `Content-Encoding` (gzip, …) is not kept at all: it is recorded as
//!   `bodyOmitted` and reports show that it was not kept.

use std::borrow::Cow;
use std::sync::OnceLock;

use bridge_server::credential;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::Value;

use crate::contract::contract;

/// What a value redacted by its place is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The characters a redacted path segment percent-encodes again (those a path segment cannot hold as they are).
const SEGMENT: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'/').add(b'?').add(b'<').add(b'>');

/// A header whose value is a credential.
pub fn is_credential_header(name: &str) -> bool {
    ["authorization", "proxy-authorization", "cookie", "set-cookie"].iter().any(|h| name.eq_ignore_ascii_case(h))
        || name.eq_ignore_ascii_case(&contract().api_key_header)
}

/// The value of header `name` as recordings and reports show it: [`REDACTED`] for a credential header, else the
/// value with every credential-form part redacted.
pub fn header(name: &str, value: &str) -> String {
    if is_credential_header(name) {
        REDACTED.to_owned()
    } else {
        credential::redact(value).into_owned()
    }
}

/// Free text (a message, a URL, a value) with every credential-form part redacted.
pub fn text(text: &str) -> String {
    credential::redact(text).into_owned()
}

/// A request target (path and query) as recordings, reports and logs show it: every credential redacted, as
/// written and as the path's segments and the query's pairs decode.
pub fn target(target: &str) -> String {
    let raw = credential::redact(target);
    if !raw.contains('%') {
        // Nothing is percent-encoded: the segments and pairs decode to what was just searched (`+` is a space,
        // which no credential holds).
        return raw.into_owned();
    }
    let (path, query) = match raw.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (raw.as_ref(), None),
    };
    let decoded_holds = |s: &str| credential::contains(&percent_decode_str(s).decode_utf8_lossy());
    let path: Cow<'_, str> = if path.split('/').any(decoded_holds) {
        let segments: Vec<String> = path
            .split('/')
            .map(|segment| {
                if decoded_holds(segment) {
                    let decoded = percent_decode_str(segment).decode_utf8_lossy();
                    utf8_percent_encode(&credential::redact(&decoded), SEGMENT).to_string()
                } else {
                    segment.to_owned()
                }
            })
            .collect();
        Cow::Owned(segments.join("/"))
    } else {
        Cow::Borrowed(path)
    };
    match query {
        None => path.into_owned(),
        Some(query) => format!("{path}?{}", form(query.as_bytes()).map_or(Cow::Borrowed(query), Cow::Owned)),
    }
}

/// `application/x-www-form-urlencoded` pairs written again with their credentials redacted, when a decoded name
/// or value holds one (`None`: none does).
fn form(bytes: &[u8]) -> Option<String> {
    let pairs: Vec<(Cow<'_, str>, Cow<'_, str>)> = form_urlencoded::parse(bytes).collect();
    if !pairs.iter().any(|(k, v)| credential::contains(k) || credential::contains(v)) {
        return None;
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        out.append_pair(&credential::redact(k), &credential::redact(v));
    }
    Some(out.finish())
}

/// The names of the members the document marks `x-secret: true`.
fn secret_members() -> &'static [String] {
    static SECRETS: OnceLock<Vec<String>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        let mut names = Vec::new();
        for schema in contract().document()["components"]["schemas"].as_object().into_iter().flatten().map(|(_, s)| s) {
            for (name, member) in schema["properties"].as_object().into_iter().flatten() {
                if member["x-secret"] == true && !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        names
    })
}

/// `value` with every secret member (at any depth) replaced by [`REDACTED`], and every other string and member
/// name holding a credential redacted by its form.
pub fn json(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.keys().any(|k| credential::contains(k)) {
                *map = std::mem::take(map).into_iter().map(|(k, v)| (text(&k), v)).collect();
            }
            for (k, v) in map.iter_mut() {
                if secret_members().iter().any(|s| s == k) && v.is_string() {
                    *v = Value::String(REDACTED.to_owned());
                } else {
                    json(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json),
        Value::String(s) => credential::redact_in_place(s),
        _ => {}
    }
}

/// A body as recordings and reports keep it, given its headers' `Content-Type` and `Content-Encoding`: every
/// credential redacted (see the module's description), borrowed when there is none; `None` when it is encoded
/// and cannot be searched (it is then not kept).
pub fn body<'a>(content_type: Option<&str>, content_encoding: Option<&str>, bytes: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    if content_encoding.is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity")) {
        return None;
    }
    if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
        let before = value.clone();
        json(&mut value);
        // Rewritten only when something was redacted: the body is kept as it was sent otherwise.
        return Some(if value == before { Cow::Borrowed(bytes) } else { Cow::Owned(value.to_string().into_bytes()) });
    }
    let raw = credential::redact_bytes(bytes);
    let media = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        if let Some(rewritten) = form(&raw) {
            return Some(Cow::Owned(rewritten.into_bytes()));
        }
    }
    Some(raw)
}

/// A body as reports show it: [`body`] as text, at most `limit` characters.
pub fn shown_body(content_type: Option<&str>, content_encoding: Option<&str>, bytes: &[u8], limit: usize) -> String {
    match body(content_type, content_encoding, bytes) {
        Some(kept) => crate::contract::violation::bounded(&String::from_utf8_lossy(&kept), limit),
        None => "(not kept: encoded with a Content-Encoding)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sbx_q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83";

    fn shown(content_type: &str, bytes: &[u8]) -> String {
        String::from_utf8(body(Some(content_type), None, bytes).unwrap().into_owned()).unwrap()
    }

    #[test]
    fn credentials_and_secret_members_are_redacted() {
        assert_eq!(header("Authorization", "Bearer abc"), REDACTED);
        assert_eq!(header("x-api-key", "k"), REDACTED);
        assert_eq!(header("content-type", "application/json"), "application/json");
        assert_eq!(header("x-anything", &format!("k={KEY}")), "k=sbx_q83v…[redacted]");
        assert!(secret_members().iter().any(|m| m == "apiKey"), "{:?}", secret_members());
        assert!(secret_members().iter().any(|m| m == "jwt"), "{:?}", secret_members());
        let shown = shown_body(None, None, br#"{"jwt":"eyJ.x.y","nested":[{"apiKey":"k1"}],"token":"USDC"}"#, 1000);
        assert_eq!(shown, r#"{"jwt":"[redacted]","nested":[{"apiKey":"[redacted]"}],"token":"USDC"}"#);
    }

    #[test]
    fn a_credential_is_found_in_every_body_type_and_in_targets() {
        let escaped = KEY.replacen('s', "\\u0073", 1);
        assert_eq!(
            shown("application/json", format!(r#"{{"note":"{escaped}"}}"#).as_bytes()),
            r#"{"note":"sbx_q83v…[redacted]"}"#
        );
        assert_eq!(shown("application/json", format!(r#"{{"{KEY}":1}}"#).as_bytes()), r#"{"sbx_q83v…[redacted]":1}"#);
        let encoded = KEY.replacen('_', "%5F", 1);
        let form = shown("application/x-www-form-urlencoded", format!("a=1&apiKey={encoded}").as_bytes());
        assert_eq!(form, "a=1&apiKey=sbx_q83v%E2%80%A6%5Bredacted%5D");
        assert_eq!(shown("text/plain", KEY.as_bytes()), "sbx_q83v…[redacted]");
        let multipart = format!("--b\r\nContent-Disposition: form-data; name=\"apiKey\"\r\n\r\n{KEY}\r\n--b--\r\n");
        assert!(!shown("multipart/form-data; boundary=b", multipart.as_bytes()).contains(KEY));
        let mut binary = vec![0xff, 0x00];
        binary.extend_from_slice(KEY.as_bytes());
        let kept = body(Some("application/octet-stream"), None, &binary).unwrap();
        assert!(!kept.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
        assert!(body(Some("text/plain"), Some("gzip"), KEY.as_bytes()).is_none(), "encoded: not kept");
        assert!(matches!(body(Some("application/json"), None, br#"{"a":"USDC"}"#), Some(Cow::Borrowed(_))));

        assert_eq!(target(&format!("/x/{KEY}?apiKey={KEY}")), "/x/sbx_q83v…[redacted]?apiKey=sbx_q83v…[redacted]");
        let shown = target(&format!("/x/{encoded}?k={encoded}&page=1"));
        assert!(!percent_decode_str(&shown).decode_utf8_lossy().contains(KEY), "{shown}");
        assert_eq!(target("/bridge/quote/user?a=1%202"), "/bridge/quote/user?a=1%202", "left as it is");
    }
}
