//! Credentials never leave the proxy: the values of credential headers (`Authorization`, `Proxy-Authorization`,
//! the legacy API key header, `Cookie`, `Set-Cookie`) and of body members the document marks as secrets
//! (`x-secret: true`: the API key of the key exchange and the JWT it answers) are replaced by [`REDACTED`] in
//! reports and recordings.

use std::sync::OnceLock;

use serde_json::Value;

use crate::contract::contract;

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// A header whose value is a credential.
pub fn is_credential_header(name: &str) -> bool {
    ["authorization", "proxy-authorization", "cookie", "set-cookie"].iter().any(|h| name.eq_ignore_ascii_case(h))
        || name.eq_ignore_ascii_case(&contract().api_key_header)
}

/// The value of header `name` as reports show it.
pub fn header(name: &str, value: &str) -> String {
    if is_credential_header(name) {
        REDACTED.to_owned()
    } else {
        value.to_owned()
    }
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

/// `value` with every secret member (at any depth) replaced by [`REDACTED`].
pub fn json(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if secret_members().iter().any(|s| s == k) && v.is_string() {
                    *v = Value::String(REDACTED.to_owned());
                } else {
                    json(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json),
        _ => {}
    }
}

/// A body as reports show it: JSON with its secrets redacted, other text as it is, at most `limit` characters.
pub fn body(bytes: &[u8], limit: usize) -> String {
    let text = match serde_json::from_slice::<Value>(bytes) {
        Ok(mut value) => {
            json(&mut value);
            value.to_string()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    };
    crate::violation::bounded(&text, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_secret_members_are_redacted() {
        assert_eq!(header("Authorization", "Bearer abc"), REDACTED);
        assert_eq!(header("x-api-key", "k"), REDACTED);
        assert_eq!(header("content-type", "application/json"), "application/json");
        assert!(secret_members().iter().any(|m| m == "apiKey"), "{:?}", secret_members());
        assert!(secret_members().iter().any(|m| m == "jwt"), "{:?}", secret_members());
        let shown = body(br#"{"jwt":"eyJ.x.y","nested":[{"apiKey":"k1"}],"token":"USDC"}"#, 1000);
        assert_eq!(shown, r#"{"jwt":"[redacted]","nested":[{"apiKey":"[redacted]"}],"token":"USDC"}"#);
    }
}
