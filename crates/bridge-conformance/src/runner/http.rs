//! The runner's HTTP side: raw requests (so that malformed ones can be sent and raw answers seen), and every
//! answer checked against the document ([`Contract::check_response`]) before any check looks at it. A problem is
//! recorded in the run's [`Sink`]; the runner fails the check during which it was recorded, so *every* answer of
//! *every* check is schema-checked, whatever the check itself asserts.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context as _};
use bridge_contract::AnyOperation;
use serde_json::Value;

use crate::contract::{contract, excerpt, OpInfo};

/// Schema problems recorded while a check runs.
pub type Sink = Arc<Mutex<Vec<String>>>;

/// How a request authenticates.
#[derive(Debug, Clone)]
pub enum Credential {
    /// No `Authorization` header.
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// An `Authorization` header with exactly this value.
    Authorization(String),
    /// The legacy API key header of the document's `legacyApiKey` scheme.
    ApiKey(String),
}

/// A request body.
#[derive(Debug, Clone)]
pub enum Body {
    None,
    /// JSON, `Content-Type: application/json`.
    Json(Value),
    /// Bytes as given, with this content type (or none).
    Raw {
        content_type: Option<String>,
        bytes: Vec<u8>,
    },
}

/// A client of the deployment for one credential; clones share the connection pool and the sink.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    base: String,
    credential: Credential,
    sink: Sink,
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub op: &'static str,
    pub status: u16,
    pub content_type: Option<String>,
    /// The answer's headers.
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
    /// The body as JSON (`Null` when it is not JSON).
    pub json: Value,
}

impl Reply {
    /// The body's `_tag`, if any.
    pub fn tag(&self) -> Option<&str> {
        self.json.get("_tag").and_then(Value::as_str)
    }

    /// `404 {"_tag":"BridgeNotFound",...}`.
    pub fn describe(&self) -> String {
        format!("{} {}", self.status, excerpt(&self.body))
    }

    /// The JSON body of a 200 answer, or an error describing the answer.
    pub fn ok(self) -> anyhow::Result<Value> {
        self.expect(200)
    }

    /// The JSON body when the status is `status`, or an error describing the answer.
    pub fn expect(self, status: u16) -> anyhow::Result<Value> {
        if self.status != status {
            bail!("{} answered {}, expected {status}", self.op, self.describe());
        }
        Ok(self.json)
    }

    /// Status `status` with a body whose `_tag` is `tag`.
    pub fn expect_tag(self, status: u16, tag: &str) -> anyhow::Result<Value> {
        if self.status != status || self.tag() != Some(tag) {
            bail!("{} answered {}, expected {status} {tag}", self.op, self.describe());
        }
        Ok(self.json)
    }
}

impl Api {
    /// A client of `base_url` (no trailing slash needed).
    pub fn new(base_url: &str, credential: Credential, timeout: Duration, sink: Sink) -> anyhow::Result<Self> {
        let builder = bridge_client::Client::reqwest_builder().map_err(|e| anyhow::anyhow!("{e}"))?;
        let http = builder.timeout(timeout).connect_timeout(timeout).build().context("building the HTTP client")?;
        Ok(Self { http, base: base_url.trim_end_matches('/').to_owned(), credential, sink })
    }

    /// The same client with another credential.
    pub fn with_credential(&self, credential: Credential) -> Self {
        Self { credential, ..self.clone() }
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Calls operation `op` with path parameters, query pairs and an optional JSON body.
    pub async fn call(
        &self,
        op: AnyOperation,
        path: &[(&str, &str)],
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> anyhow::Result<Reply> {
        let op = contract().op(op);
        let query = encode_query(query.iter().map(|(k, v)| (*k, *v)));
        self.send(op, path, &query, body.map(Body::Json).unwrap_or(Body::None)).await
    }

    /// A request that is no operation of the document (an unknown path, a wrong method): status and body, not
    /// validated. `body` is sent as is, with `Content-Type: application/json`, when given.
    pub async fn raw(&self, method: &str, path: &str, body: Option<Vec<u8>>) -> anyhow::Result<(u16, Vec<u8>)> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(reqwest::Method::from_bytes(method.as_bytes())?, &url);
        if let Credential::Bearer(token) = &self.credential {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        }
        let response = request.send().await.with_context(|| format!("{method} {url}"))?;
        let status = response.status().as_u16();
        Ok((status, response.bytes().await?.to_vec()))
    }

    /// Sends a request to `op` with an already encoded query string and any body; checks the answer against the
    /// document (problems go to the sink).
    pub async fn send(
        &self,
        op: &'static OpInfo,
        path: &[(&str, &str)],
        query: &str,
        body: Body,
    ) -> anyhow::Result<Reply> {
        let mut url = format!("{}{}", self.base, fill_path(op.path, path)?);
        if !query.is_empty() {
            url.push('?');
            url.push_str(query);
        }
        let method = reqwest::Method::from_bytes(op.method.as_bytes())?;
        let mut request = self.http.request(method, &url);
        request = match &self.credential {
            Credential::None => request,
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::Authorization(value) => request.header(reqwest::header::AUTHORIZATION, value),
            Credential::ApiKey(key) => request.header(contract().api_key_header.as_str(), key),
        };
        request = match body {
            Body::None => request,
            Body::Json(value) => {
                request.header(reqwest::header::CONTENT_TYPE, "application/json").body(serde_json::to_vec(&value)?)
            }
            Body::Raw { content_type, bytes } => {
                let request = match content_type {
                    Some(ct) => request.header(reqwest::header::CONTENT_TYPE, ct),
                    None => request,
                };
                request.body(bytes)
            }
        };
        let response = request.send().await.with_context(|| format!("{} {url}", op.method))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let content_type = headers.get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body =
            response.bytes().await.with_context(|| format!("reading the answer of {} {url}", op.method))?.to_vec();
        tracing::debug!(op = op.id, status, url = %url, "answer");
        for problem in contract().check_response(op, status, content_type.as_deref(), &body) {
            self.sink.lock().unwrap().push(format!("{} answered {status}: {problem}", op.describe()));
        }
        let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
        Ok(Reply { op: op.id, status, content_type, headers, body, json })
    }
}

/// `a=1&b=x+y`, pairs in order (a key may repeat).
pub fn encode_query<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

/// The path template with its `{name}` parameters filled in (percent-encoded).
pub fn fill_path(template: &str, params: &[(&str, &str)]) -> anyhow::Result<String> {
    let mut out = template.to_owned();
    for (name, value) in params {
        let placeholder = format!("{{{name}}}");
        if !out.contains(&placeholder) {
            bail!("{template} has no parameter {name}");
        }
        out = out.replace(&placeholder, &encode_segment(value));
    }
    if out.contains('{') {
        bail!("{template}: a path parameter is missing ({out})");
    }
    Ok(out)
}

fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries_are_encoded() {
        assert_eq!(fill_path("/a/{x}/b/{y}", &[("x", "1 2"), ("y", "z/é")]).unwrap(), "/a/1%202/b/z%2F%C3%A9");
        assert!(fill_path("/a/{x}", &[]).is_err());
        assert_eq!(encode_query([("page", "1"), ("page", "a b&c")]), "page=1&page=a+b%26c");
    }
}
