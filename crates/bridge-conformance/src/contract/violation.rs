//! What the proxy reports about one exchange: a [`Violation`] names the operation, the JSON location, the
//! [`Rule`] broken and the offending value (bounded). [`header_value`] lists them in the
//! `x-contract-violations` answer header (bounded, documented in docs/conformance.md, "Checking real traffic").

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The name of the answer header that lists an exchange's violations.
pub const HEADER: &str = "x-contract-violations";
/// At most this many bytes of [`HEADER`]'s value (entries that do not fit are counted in a last `{"more":N}`).
pub const HEADER_LIMIT: usize = 4096;
/// At most this many characters of an offending value are kept.
pub const VALUE_LIMIT: usize = 200;

/// The rules the proxy checks, each with a stable name (the `rule` of a violation). [`Rule::ALL`] lists them with
/// what each means; docs/conformance.md has the same table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A method and path that are no operation of the contract, served by the upstream (anything but 404 with an
    /// empty body, which is what the contract answers for them).
    Route,
    /// An operation that needs a credential answered 2xx to a request without one.
    Security,
    /// The answer's status is not documented for the operation.
    Status,
    /// A documented JSON body came without `Content-Type: application/json`.
    ContentType,
    /// A documented JSON body is not JSON.
    Json,
    /// A member that the object's schema does not have (objects are closed: `additionalProperties: false`).
    ClosedObject,
    /// A required member is missing.
    RequiredMember,
    /// A `DecimalString` member is not a decimal string (a JSON number, or text that is no decimal).
    DecimalString,
    /// A `DateString` member is not a date.
    Date,
    /// A union's tag is missing or unknown, or no variant matches (discriminated, presence and JSON-kind unions).
    Union,
    /// Any other mismatch with the status's schema: a JSON type, an enum value, a length, a bound, a pattern.
    Shape,
    /// The body matches the schema but the contract's generated Rust type of the answer refuses it.
    Typed,
    /// A request the contract refuses was answered 400 `HttpApiDecodeError` with other issues than the contract's
    /// decoder computes, or a request it accepts was answered with a decode error.
    DecodeError,
    /// The upstream answered 2xx to a request the contract's decoder refuses.
    RequestRefused,
}

impl Rule {
    /// Every rule and what it checks, in report order.
    pub const ALL: &'static [(Rule, &'static str)] = &[
        (
            Rule::Route,
            "the method and path are an operation of the contract; others are answered 404 with an empty body",
        ),
        (Rule::Security, "an operation with `security` is not answered 2xx without a credential"),
        (Rule::Status, "the status is documented for the operation"),
        (Rule::ContentType, "a documented JSON body comes as `application/json`"),
        (Rule::Json, "a documented JSON body is JSON"),
        (Rule::ClosedObject, "no member beyond the object's schema (closed objects)"),
        (Rule::RequiredMember, "every required member is present"),
        (Rule::DecimalString, "decimal strings are strings holding a decimal"),
        (Rule::Date, "date strings hold a date"),
        (Rule::Union, "a union's tag names a variant and the value matches it"),
        (Rule::Shape, "JSON types, enums, lengths, bounds and patterns of the status's schema"),
        (Rule::Typed, "the body decodes into the contract's generated Rust type"),
        (Rule::DecodeError, "400 `HttpApiDecodeError` carries exactly the contract decoder's issues"),
        (Rule::RequestRefused, "a request the contract's decoder refuses is not answered 2xx"),
    ];

    /// The stable name (`closed-object`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::Route => "route",
            Rule::Security => "security",
            Rule::Status => "status",
            Rule::ContentType => "content-type",
            Rule::Json => "json",
            Rule::ClosedObject => "closed-object",
            Rule::RequiredMember => "required-member",
            Rule::DecimalString => "decimal-string",
            Rule::Date => "date",
            Rule::Union => "union",
            Rule::Shape => "shape",
            Rule::Typed => "typed",
            Rule::DecodeError => "decode-error",
            Rule::RequestRefused => "request-refused",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule in one exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// The `operationId`, or `METHOD /path` for a request that is no operation.
    pub operation: String,
    pub rule: Rule,
    /// Where: `answer` (the body) or `request.body`, `request.query`, `request.path` followed by a JSON pointer
    /// (`answer/fees/fee`), or `answer.status`, `answer.headers/content-type`, `request.headers/authorization`.
    pub at: String,
    pub message: String,
    /// The offending value, as compact JSON, at most [`VALUE_LIMIT`] characters.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<String>,
}

impl Violation {
    /// A violation; a credential its operation (`METHOD /path` of a request that is no operation), location or
    /// message quotes is written redacted ([`bridge_server::credential::redact`]): violations go to logs, headers
    /// and reports.
    pub fn new(operation: impl Into<String>, rule: Rule, at: impl Into<String>, message: impl Into<String>) -> Self {
        let redacted = |mut s: String| {
            bridge_server::credential::redact_in_place(&mut s);
            s
        };
        Self {
            operation: redacted(operation.into()),
            rule,
            at: redacted(at.into()),
            message: redacted(message.into()),
            value: None,
        }
    }

    /// The same violation with its offending value (credentials redacted, then bounded).
    pub fn with_value(mut self, value: &Value) -> Self {
        self.value = Some(bounded(&bridge_server::credential::redact(&value.to_string()), VALUE_LIMIT));
        self
    }

    /// `closed-object at answer/extra (quoteBridge): ...`, for logs and runner failures.
    pub fn line(&self) -> String {
        let value = self.value.as_deref().map(|v| format!(" (value: {v})")).unwrap_or_default();
        format!("{} at {} ({}): {}{value}", self.rule, self.at, self.operation, self.message)
    }
}

/// At most `limit` characters of `text`, with `…` when cut.
pub fn bounded(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// The value of the [`HEADER`] answer header: a JSON array of `{"rule","at","message","value"?}`, ASCII only
/// (other characters as `\uXXXX`), at most [`HEADER_LIMIT`] bytes; violations that do not fit are counted in a
/// last element `{"more": N}`. `None` when there is no violation.
pub fn header_value(violations: &[Violation]) -> Option<String> {
    if violations.is_empty() {
        return None;
    }
    let more_reserve = r#",{"more":00000}"#.len() + 1;
    let mut out = String::from("[");
    let mut listed = 0;
    for v in violations {
        let mut entry = serde_json::json!({"rule": v.rule, "at": v.at, "message": bounded(&v.message, 300)});
        if let Some(value) = &v.value {
            entry["value"] = Value::String(value.clone());
        }
        let entry = ascii_json(&entry);
        let separator = usize::from(listed > 0);
        if out.len() + separator + entry.len() + more_reserve > HEADER_LIMIT {
            break;
        }
        if listed > 0 {
            out.push(',');
        }
        out.push_str(&entry);
        listed += 1;
    }
    if listed < violations.len() {
        if listed > 0 {
            out.push(',');
        }
        out.push_str(&format!(r#"{{"more":{}}}"#, violations.len() - listed));
    }
    out.push(']');
    Some(out)
}

/// Compact JSON with every character outside printable ASCII written as `\uXXXX` (a valid header value).
fn ascii_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_ascii_json_and_bounded() {
        let v = Violation::new("quoteBridge", Rule::DecimalString, "answer/payAmount", "not a decimal string: é")
            .with_value(&serde_json::json!(1.5));
        let header = header_value(std::slice::from_ref(&v)).unwrap();
        assert!(header.is_ascii(), "{header}");
        let parsed: Value = serde_json::from_str(&header).unwrap();
        assert_eq!(parsed[0]["rule"], "decimal-string");
        assert_eq!(parsed[0]["at"], "answer/payAmount");
        assert_eq!(parsed[0]["value"], "1.5");
        assert!(parsed[0]["message"].as_str().unwrap().ends_with('é'));

        let many = vec![v; 200];
        let header = header_value(&many).unwrap();
        assert!(header.len() <= HEADER_LIMIT, "{}", header.len());
        let parsed: Vec<Value> = serde_json::from_str(&header).unwrap();
        let more = parsed.last().unwrap()["more"].as_u64().unwrap() as usize;
        assert_eq!(parsed.len() - 1 + more, 200);
        assert!(header_value(&[]).is_none());
        assert_eq!(Rule::ALL.len(), 14);
    }

    #[test]
    fn values_are_bounded() {
        assert_eq!(bounded("abcdef", 3), "abc…");
        assert_eq!(bounded("abc", 3), "abc");
        let v = Violation::new("x", Rule::Shape, "answer", "m").with_value(&Value::String("x".repeat(1000)));
        assert_eq!(v.value.unwrap().chars().count(), VALUE_LIMIT + 1);
    }
}
