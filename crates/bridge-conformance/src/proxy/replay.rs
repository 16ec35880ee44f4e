//! `bridge-conformance replay FILE --base-url URL`: sends a recording ([`crate::proxy::record`]) again, in order, and
//! reports how each answer differs from the recorded one: status, content type, and the JSON body member by
//! member, ignoring what must differ: the members the contract marks `x-volatile: true` (ids, transaction hashes,
//! cursors, and every `DateString`), found by walking the answer with its documented schema
//! ([`crate::contract::members::volatile_pointers`]). Where such a member's recorded and replayed values differ, the replayed
//! value replaces the recorded one in every later request (path, query and body): a quote id made by the replay
//! is the one its commit then uses.
//!
//! Credentials were redacted when recorded: the recorded `Authorization` becomes `Bearer <token>` (`--token`),
//! the API key header and the members marked `x-secret` in request bodies become `--api-key`; without them the
//! header is left out.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Context as _;
use bridge_contract::AnyOperation;
use serde::Serialize;
use serde_json::Value;

use crate::contract::contract;
use crate::contract::redact::REDACTED;
use crate::proxy::record::Recorded;

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub base_url: String,
    /// Replaces a redacted `Authorization` (as `Bearer <token>`).
    pub token: Option<String>,
    /// Replaces a redacted API key header and redacted secret members of request bodies.
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl ReplayConfig {
    pub fn new(base_url: impl Into<String>) -> Self {
        Self { base_url: base_url.into(), token: None, api_key: None, timeout: Duration::from_secs(30) }
    }
}

/// One way a replayed answer differs from the recorded one.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Difference {
    /// `answer.status`, `answer.headers/content-type`, or `answer` and a JSON pointer.
    pub at: String,
    pub recorded: Value,
    pub replayed: Value,
}

/// One replayed exchange.
#[derive(Debug, Clone, Serialize)]
pub struct Replayed {
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// `POST /bridge/quote/user` as sent (after substitutions).
    pub request: String,
    pub differences: Vec<Difference>,
}

impl Replayed {
    /// `PASS #3 quoteBridge POST /...` or `FAIL #3 ...: at recorded → replayed; ...`.
    pub fn line(&self) -> String {
        let op = self.operation.as_deref().unwrap_or("(no operation)");
        if self.differences.is_empty() {
            return format!("PASS #{} {op} {}", self.seq, self.request);
        }
        let diffs: Vec<String> = self
            .differences
            .iter()
            .map(|d| format!("{} recorded {} replayed {}", d.at, d.recorded, d.replayed))
            .collect();
        format!(
            "FAIL #{} {op} {}: {}",
            self.seq,
            self.request,
            crate::contract::violation::bounded(&diffs.join("; "), 2000)
        )
    }
}

/// Every replayed exchange.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayReport {
    pub exchanges: Vec<Replayed>,
    /// Recorded value → replayed value of the volatile members met.
    pub substitutions: usize,
}

impl ReplayReport {
    pub fn passed(&self) -> usize {
        self.exchanges.iter().filter(|e| e.differences.is_empty()).count()
    }

    pub fn failed(&self) -> usize {
        self.exchanges.len() - self.passed()
    }
}

const MAX_DIFFERENCES: usize = 20;

/// Replays `recorded` against `config.base_url`, writing one line per exchange to `out` and `N passed, M failed`
/// at the end.
pub async fn replay(
    recorded: &[Recorded],
    config: &ReplayConfig,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<ReplayReport> {
    let http = bridge_client::Client::reqwest_builder()
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .timeout(config.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the HTTP client")?;
    let base = config.base_url.trim_end_matches('/');
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    let mut report = ReplayReport::default();
    for r in recorded {
        let method = r.request.method.as_deref().unwrap_or("GET");
        let target = substitute_target(r.request.target.as_deref().unwrap_or("/"), &map);
        let mut request = http.request(reqwest::Method::from_bytes(method.as_bytes())?, format!("{base}{target}"));
        for (name, value) in &r.request.headers {
            let lower = name.to_ascii_lowercase();
            if ["host", "content-length", "connection", "transfer-encoding", "via", "keep-alive", "te", "upgrade"]
                .contains(&lower.as_str())
            {
                continue;
            }
            let value = if value == REDACTED {
                if lower == "authorization" {
                    match &config.token {
                        Some(t) => format!("Bearer {t}"),
                        None => continue,
                    }
                } else if lower == contract().api_key_header.to_ascii_lowercase() {
                    match &config.api_key {
                        Some(k) => k.clone(),
                        None => continue,
                    }
                } else {
                    continue;
                }
            } else {
                value.clone()
            };
            request = request.header(name.as_str(), value);
        }
        let body = r.request.body_bytes();
        if !body.is_empty() || r.request.body.is_some() {
            request = request.body(substitute_body(body, &map, config.api_key.as_deref()));
        }
        let answer = request.send().await.with_context(|| format!("#{} {method} {base}{target}", r.seq))?;
        let status = answer.status().as_u16();
        let content_type =
            answer.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = answer.bytes().await?;
        let differences = compare(r, status, content_type.as_deref(), &bytes, &mut map);
        let replayed =
            Replayed { seq: r.seq, operation: r.operation.clone(), request: format!("{method} {target}"), differences };
        writeln!(out, "{}", replayed.line())?;
        report.exchanges.push(replayed);
    }
    report.substitutions = map.len();
    writeln!(out, "{} passed, {} failed", report.passed(), report.failed())?;
    Ok(report)
}

/// The recorded target with learned values replaced (raw and percent-encoded).
fn substitute_target(target: &str, map: &BTreeMap<String, String>) -> String {
    let mut out = target.to_owned();
    for (old, new) in map {
        let encode = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
        let form = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        for (o, n) in [(old.clone(), new.clone()), (encode(old), encode(new)), (form(old), form(new))] {
            if !o.is_empty() && out.contains(&o) {
                out = out.replace(&o, &n);
            }
        }
    }
    out
}

/// The recorded body with learned values replaced where they are whole JSON strings, and redacted secrets replaced
/// by the API key.
fn substitute_body(body: Vec<u8>, map: &BTreeMap<String, String>, api_key: Option<&str>) -> Vec<u8> {
    let Ok(mut text) = String::from_utf8(body.clone()) else { return body };
    let quoted = |s: &str| Value::String(s.to_owned()).to_string();
    for (old, new) in map {
        text = text.replace(&quoted(old), &quoted(new));
    }
    if let Some(key) = api_key {
        text = text.replace(&quoted(REDACTED), &quoted(key));
    }
    text.into_bytes()
}

/// The differences between the recorded answer and the replayed one; learns the new values of volatile members.
fn compare(
    r: &Recorded,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    map: &mut BTreeMap<String, String>,
) -> Vec<Difference> {
    let mut out = Vec::new();
    let recorded_status = r.answer.status.unwrap_or_default();
    if recorded_status != status {
        out.push(Difference { at: "answer.status".into(), recorded: recorded_status.into(), replayed: status.into() });
    }
    let media =
        |ct: Option<&str>| ct.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let recorded_media = media(r.answer.header("content-type"));
    if recorded_media != media(content_type) {
        out.push(Difference {
            at: "answer.headers/content-type".into(),
            recorded: recorded_media.into(),
            replayed: media(content_type).into(),
        });
    }
    if r.answer.body_omitted {
        return out;
    }
    let recorded_body = r.answer.body_bytes();
    match (serde_json::from_slice::<Value>(&recorded_body), serde_json::from_slice::<Value>(body)) {
        (Ok(a), Ok(b)) => {
            let mut volatile = Vec::new();
            let op = r.operation.as_deref().and_then(AnyOperation::from_id).map(|op| contract().op(op));
            if let Some(schema) = op.and_then(|op| contract().response_schema(op, recorded_status)) {
                let doc = contract().document();
                volatile = crate::contract::members::volatile_pointers(doc, schema, &a);
                volatile.extend(crate::contract::members::volatile_pointers(doc, schema, &b));
            }
            diff(&a, &b, String::new(), &volatile, map, &mut out);
        }
        _ if recorded_body != body => out.push(Difference {
            at: "answer".into(),
            recorded: String::from_utf8_lossy(&recorded_body).into_owned().into(),
            replayed: String::from_utf8_lossy(body).into_owned().into(),
        }),
        _ => {}
    }
    out.truncate(MAX_DIFFERENCES);
    out
}

fn diff(
    a: &Value,
    b: &Value,
    pointer: String,
    volatile: &[String],
    map: &mut BTreeMap<String, String>,
    out: &mut Vec<Difference>,
) {
    if out.len() >= MAX_DIFFERENCES {
        return;
    }
    if volatile.contains(&pointer) {
        learn(a, b, map);
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{pointer}/{}", crate::contract::members::escape(k));
                match y.get(k) {
                    Some(vb) => diff(va, vb, p, volatile, map, out),
                    None if volatile.contains(&p) => {}
                    None => {
                        out.push(Difference { at: format!("answer{p}"), recorded: va.clone(), replayed: Value::Null })
                    }
                }
            }
            for (k, vb) in y {
                let p = format!("{pointer}/{}", crate::contract::members::escape(k));
                if !x.contains_key(k) && !volatile.contains(&p) {
                    out.push(Difference {
                        at: format!("answer{p} (new member)"),
                        recorded: Value::Null,
                        replayed: vb.clone(),
                    });
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(Difference {
                    at: format!("answer{pointer} (length)"),
                    recorded: x.len().into(),
                    replayed: y.len().into(),
                });
            }
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff(va, vb, format!("{pointer}/{i}"), volatile, map, out);
            }
        }
        _ if a != b => {
            out.push(Difference { at: format!("answer{pointer}"), recorded: a.clone(), replayed: b.clone() })
        }
        _ => {}
    }
}

/// Learns recorded → replayed for the strings of a volatile member (also inside objects and arrays).
fn learn(a: &Value, b: &Value, map: &mut BTreeMap<String, String>) {
    match (a, b) {
        (Value::String(x), Value::String(y)) if x != y && !x.is_empty() => {
            map.insert(x.clone(), y.clone());
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                if let Some(vb) = y.get(k) {
                    learn(va, vb, map);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => x.iter().zip(y).for_each(|(va, vb)| learn(va, vb, map)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volatile_members_are_learned_not_compared() {
        let volatile = vec!["/quoteId".to_owned(), "/expiresAt".to_owned()];
        let mut map = BTreeMap::new();
        let mut out = Vec::new();
        let a = json!({"quoteId": "q1", "expiresAt": "t1", "payAmount": "100", "fees": {"fee": "1"}});
        let b = json!({"quoteId": "q2", "expiresAt": "t2", "payAmount": "101", "fees": {"fee": "1", "extra": 1}});
        diff(&a, &b, String::new(), &volatile, &mut map, &mut out);
        assert_eq!(map.get("q1").map(String::as_str), Some("q2"));
        let at: Vec<&str> = out.iter().map(|d| d.at.as_str()).collect();
        assert_eq!(at, ["answer/fees/extra (new member)", "answer/payAmount"]);
        assert_eq!(substitute_target("/bridge/quote/commit/q1?x=q1", &map), "/bridge/quote/commit/q2?x=q2");
        let body = substitute_body(br#"{"id":"q1","apiKey":"[redacted]","n":"q10"}"#.to_vec(), &map, Some("k"));
        assert_eq!(String::from_utf8(body).unwrap(), r#"{"id":"q2","apiKey":"k","n":"q10"}"#);
    }
}
