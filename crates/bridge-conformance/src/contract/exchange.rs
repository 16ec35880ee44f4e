//! The checks of one exchange (a request and its answer) against the contract, as the proxy makes them. The
//! request is checked first ([`RequestCheck::new`]: routed to its operation, decoded by the contract's own
//! decoder as the server would decode it), while the upstream works on it; the answer then
//! ([`RequestCheck::answer`]): documented status, content type, body against the status's schema and the
//! generated Rust type ([`crate::contract::Contract::answer_problems`]), no 2xx without a credential where the
//! operation needs one, and the decode-error agreement: a request the contract refuses is fine when the answer
//! is the documented 400 `HttpApiDecodeError` with exactly the issues the decoder computes (or an answer that
//! comes before decoding: 401, 400 `InvalidJwt`, 413, 429, 503), and is a violation when answered 2xx.

use bridge_contract::{Issue, Security};
use bridge_server::ErrorsMode;
use serde_json::Value;

use crate::contract::contract;
use crate::contract::decode::{simulate_parts, Part};
use crate::contract::route::{route, Routed};
use crate::contract::violation::{Rule, Violation};

/// What the proxy saw of a request.
#[derive(Debug, Clone, Default)]
pub struct RequestFacts<'a> {
    /// Upper case.
    pub method: &'a str,
    /// Without the query.
    pub path: &'a str,
    /// The raw query string (without `?`).
    pub query: &'a str,
    /// The request carries `Authorization` or the API key header.
    pub credential: bool,
    pub content_type: Option<&'a str>,
    /// The whole body, or `None` when it was not kept whole (larger than the proxy keeps).
    pub body: Option<&'a [u8]>,
}

/// A request routed and decoded, waiting for its answer.
#[derive(Debug, Clone)]
pub struct RequestCheck {
    pub routed: Option<Routed>,
    /// `METHOD /path`.
    pub request_line: String,
    credential: bool,
    /// What the contract's decoder makes of the request (`None`: not decoded, the body was not kept whole).
    decoded: Option<Result<(), (Part, Vec<Issue>)>>,
}

impl RequestCheck {
    /// Routes and decodes a request (`mode`: how many issues the deployment reports).
    pub fn new(request: &RequestFacts<'_>, mode: ErrorsMode) -> Self {
        let routed = route(request.method, request.path);
        let decoded = routed.as_ref().and_then(|r| {
            let body = request.body?;
            let body = (!body.is_empty() || request.content_type.is_some()).then_some((request.content_type, body));
            Some(simulate_parts(r.op, &r.path_params, body, request.query, mode))
        });
        Self {
            routed,
            request_line: format!("{} {}", request.method, crate::contract::redact::target(request.path)),
            credential: request.credential,
            decoded,
        }
    }

    /// The `operationId`, or `METHOD /path` for a request that is no operation.
    pub fn operation(&self) -> String {
        match &self.routed {
            Some(r) => r.op.id.to_owned(),
            None => self.request_line.clone(),
        }
    }

    /// The violations of the exchange, given the answer.
    pub fn answer(&self, status: u16, content_type: Option<&str>, body: &[u8]) -> Vec<Violation> {
        let Some(routed) = &self.routed else {
            if status == 404 && body.is_empty() {
                return Vec::new();
            }
            return vec![Violation::new(
                self.request_line.clone(),
                Rule::Route,
                "request",
                format!(
                    "{} is no operation of the contract, and the upstream answered {status} (the contract answers \
                     404 with an empty body)",
                    self.request_line
                ),
            )];
        };
        let op = routed.op;
        let mut out = Vec::new();
        let success = (200..300).contains(&status);
        if op.security != Security::None && !self.credential && success {
            out.push(Violation::new(
                op.id,
                Rule::Security,
                "request.headers/authorization",
                format!("answered {status} to a request without a credential (the operation needs {:?})", op.security),
            ));
        }
        out.extend(contract().answer_problems(op, status, content_type, body).iter().map(|p| p.violation(op.id)));
        let decode_error = (status == 400).then(|| decode_error_issues(body)).flatten();
        match &self.decoded {
            Some(Err((part, expected))) => {
                if success {
                    let first = &expected[0];
                    out.push(
                        Violation::new(
                            op.id,
                            Rule::RequestRefused,
                            format!("request.{}{}", part.name(), issue_pointer(first)),
                            format!(
                                "the upstream answered {status} to a request the contract's decoder refuses: {}",
                                first.message
                            ),
                        )
                        .with_value(&serde_json::to_value(expected).unwrap_or(Value::Null)),
                    );
                } else if let Some(actual) = decode_error {
                    let expected_json = serde_json::to_value(expected).unwrap_or(Value::Null);
                    if actual != expected_json {
                        out.push(
                            Violation::new(
                                op.id,
                                Rule::DecodeError,
                                "answer/issues",
                                format!(
                                    "the issues differ from the contract decoder's (request {}): expected {expected_json}",
                                    part.name()
                                ),
                            )
                            .with_value(&actual),
                        );
                    }
                }
            }
            Some(Ok(())) => {
                if let Some(actual) = decode_error {
                    out.push(
                        Violation::new(
                            op.id,
                            Rule::DecodeError,
                            "answer/issues",
                            "the contract's decoder accepts this request, but the upstream answered a decode error",
                        )
                        .with_value(&actual),
                    );
                }
            }
            None => {}
        }
        out
    }
}

/// The `issues` of a 400 `HttpApiDecodeError` body, with credential-form values redacted as the contract's decoder
/// writes them (a deployment that quotes one whole, as the reference framework does, differs only there).
fn decode_error_issues(body: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let mut issues =
        (value.get("_tag")? == "HttpApiDecodeError").then(|| value.get("issues").cloned().unwrap_or(Value::Null))?;
    crate::contract::redact::json(&mut issues);
    Some(issues)
}

/// The JSON pointer of an issue's path (`["depositChains", 0]` → `/depositChains/0`).
fn issue_pointer(issue: &Issue) -> String {
    let path = serde_json::to_value(&issue.path).unwrap_or(Value::Null);
    let mut out = String::new();
    for key in path.as_array().into_iter().flatten() {
        out.push('/');
        match key {
            Value::String(s) => out.push_str(&crate::contract::members::escape(s)),
            other => out.push_str(&other.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(body: &str, credential: bool) -> RequestCheck {
        let facts = RequestFacts {
            method: "POST",
            path: "/bridge/quote/user",
            query: "",
            credential,
            content_type: Some("application/json"),
            body: Some(body.as_bytes()),
        };
        RequestCheck::new(&facts, ErrorsMode::First)
    }

    #[test]
    fn a_refused_request_needs_the_decoders_issues() {
        let check = quote(r#"{"token":"USDC"}"#, true);
        assert_eq!(check.operation(), "quoteBridge");
        let ok = br#"{"_tag":"HttpApiDecodeError","issues":[{"_tag":"Missing","path":["chainIn"],"message":"is missing"}],"message":"m"}"#;
        assert_eq!(check.answer(400, Some("application/json"), ok), vec![]);
        let wrong = br#"{"_tag":"HttpApiDecodeError","issues":[],"message":"m"}"#;
        let v = check.answer(400, Some("application/json"), wrong);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!((v[0].rule, v[0].at.as_str()), (Rule::DecodeError, "answer/issues"));
        let v = check.answer(200, Some("application/json"), b"{}");
        let refused = v.iter().find(|v| v.rule == Rule::RequestRefused).expect("request-refused");
        assert_eq!(refused.at, "request.body/chainIn");
        // Authentication answers first: no decode verdict.
        let unauthorized = br#"{"_tag":"Unauthorized","message":"no"}"#;
        assert_eq!(check.answer(401, Some("application/json"), unauthorized), vec![]);
    }

    /// A deployment that quotes a credential whole in a decode error (as the reference framework does) agrees with
    /// the contract's decoder, which writes it redacted: the issues are compared with credentials redacted.
    #[test]
    fn a_credential_quoted_whole_or_redacted_is_the_same_issue() {
        let key = "sbx_q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83";
        let facts = RequestFacts {
            method: "POST",
            path: "/authentication/auth/apiKey",
            content_type: Some("text/plain"),
            body: Some(key.as_bytes()),
            ..Default::default()
        };
        let check = RequestCheck::new(&facts, ErrorsMode::First);
        let issue = |actual: &str| {
            let message = format!("Expected {{ readonly apiKey: NonEmptyString }}, actual \"{actual}\"");
            serde_json::json!({"_tag": "HttpApiDecodeError", "message": message,
                "issues": [{"_tag": "Type", "path": [], "message": message}]})
            .to_string()
        };
        for actual in [key.to_owned(), format!("{}…[redacted]", &key[..8])] {
            let v = check.answer(400, Some("application/json"), issue(&actual).as_bytes());
            assert_eq!(v, vec![], "{actual}");
        }
        let v = check.answer(400, Some("application/json"), issue("something else").as_bytes());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(!format!("{v:?}").contains(key), "the violation redacts it too: {v:?}");
    }

    #[test]
    fn unknown_routes_must_be_404_empty() {
        let facts = RequestFacts { method: "GET", path: "/secret", ..Default::default() };
        let check = RequestCheck::new(&facts, ErrorsMode::First);
        assert_eq!(check.operation(), "GET /secret");
        assert!(check.answer(404, None, b"").is_empty());
        assert_eq!(check.answer(200, None, b"hi")[0].rule, Rule::Route);
    }

    #[test]
    fn no_success_without_a_credential() {
        let check = quote(r#"{"token":"USDC"}"#, false);
        let v = check.answer(200, Some("application/json"), b"{}");
        assert!(v.iter().any(|v| v.rule == Rule::Security && v.at == "request.headers/authorization"), "{v:?}");
    }
}
