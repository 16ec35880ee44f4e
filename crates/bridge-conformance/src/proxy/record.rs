//! `--record FILE`: every exchange through the proxy as one JSON line ([`Recorded`]), credentials redacted
//! ([`crate::contract::redact`]: by place, and by form in every header, the target and every body); `bridge-conformance replay` ([`crate::proxy::replay`]) sends them again. Lines are written and
//! flushed one at a time by a thread of their own, so a proxy that is killed leaves whole lines behind.
//!
//! A line: `{"seq":1,"at":"2026-...Z","operation":"quoteBridge","request":{"method":"POST",
//! "target":"/bridge/quote/user","headers":[["content-type","application/json"],["authorization","[redacted]"]],
//! "body":"{...}"},"answer":{"status":200,"headers":[...],"body":"{...}"},"violations":[]}`. Bodies are kept
//! as their text (`body`), or as base64 (`bodyBase64`) when they are not UTF-8; a body longer than the proxy
//! keeps, or sent with a `Content-Encoding` (which the redaction cannot search), is left out (`bodyOmitted: true`).

use std::io::Write as _;
use std::path::Path;
use std::sync::mpsc;

use anyhow::Context as _;
use base64::Engine as _;
use bytes::Bytes;
use http::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::contract::violation::Violation;

/// A request or an answer as recorded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Requests: the method.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub method: Option<String>,
    /// Requests: path and query.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<String>,
    /// Answers: the status.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<u16>,
    /// Name and value, in order; credentials redacted.
    pub headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub body_base64: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub body_omitted: bool,
}

impl Message {
    /// The body's bytes (empty when omitted).
    pub fn body_bytes(&self) -> Vec<u8> {
        match (&self.body, &self.body_base64) {
            (Some(text), _) => text.clone().into_bytes(),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD.decode(b64).unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    }

    /// The value of header `name` (the first one).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn new(headers: &HeaderMap, body: Option<&Bytes>) -> Self {
        let shown = headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    crate::contract::redact::header(n.as_str(), &String::from_utf8_lossy(v.as_bytes())),
                )
            })
            .collect();
        let mut message = Self { headers: shown, ..Self::default() };
        let value = |name: http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        let kept = body.and_then(|bytes| {
            crate::contract::redact::body(
                value(http::header::CONTENT_TYPE),
                value(http::header::CONTENT_ENCODING),
                bytes,
            )
        });
        match kept {
            None => message.body_omitted = true,
            Some(bytes) if bytes.is_empty() => {}
            Some(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => message.body = Some(text.to_owned()),
                Err(_) => message.body_base64 = Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            },
        }
        message
    }
}

/// One recorded exchange (one line of the file).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Recorded {
    pub seq: u64,
    /// When the answer was forwarded (RFC 3339).
    pub at: String,
    /// The `operationId` (absent for requests that are no operation).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub operation: Option<String>,
    pub request: Message,
    pub answer: Message,
    #[serde(default)]
    pub violations: Vec<Violation>,
}

/// An exchange as the proxy hands it to the recorder (redacted and encoded on the recorder's thread).
pub struct Exchange {
    pub operation: Option<&'static str>,
    pub method: String,
    pub target: String,
    pub request_headers: HeaderMap,
    pub request_body: Option<Bytes>,
    pub status: u16,
    pub answer_headers: HeaderMap,
    pub answer_body: Option<Bytes>,
    pub violations: Vec<Violation>,
}

/// Writes exchanges to a file, one JSON line each, on a thread of its own.
pub struct Recorder {
    tx: mpsc::Sender<Exchange>,
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
}

impl Recorder {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let (tx, rx) = mpsc::channel::<Exchange>();
        let thread = std::thread::Builder::new().name("recorder".into()).spawn(move || {
            let mut out = std::io::BufWriter::new(file);
            for (seq, e) in rx.into_iter().enumerate() {
                let mut request = Message::new(&e.request_headers, e.request_body.as_ref());
                request.method = Some(e.method);
                request.target = Some(e.target);
                let mut answer = Message::new(&e.answer_headers, e.answer_body.as_ref());
                answer.status = Some(e.status);
                let line = Recorded {
                    seq: seq as u64 + 1,
                    at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    operation: e.operation.map(str::to_owned),
                    request,
                    answer,
                    violations: e.violations,
                };
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
                out.flush()?;
            }
            Ok(())
        })?;
        Ok(Self { tx, thread })
    }

    /// Queues an exchange.
    pub fn record(&self, exchange: Exchange) {
        let _ = self.tx.send(exchange);
    }

    /// Writes what is queued and closes the file.
    pub fn finish(self) -> anyhow::Result<()> {
        drop(self.tx);
        self.thread.join().map_err(|_| anyhow::anyhow!("the recorder thread panicked"))?
    }
}

/// Reads a recording.
pub fn read(path: &Path) -> anyhow::Result<Vec<Recorded>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("{} line {}", path.display(), i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_are_written_redacted_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let recorder = Recorder::create(&path).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("authorization", "Bearer secret-token".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        recorder.record(Exchange {
            operation: Some("exchangeApiKey"),
            method: "POST".into(),
            target: "/auth/x?a=1".into(),
            request_headers: headers,
            request_body: Some(Bytes::from_static(br#"{"apiKey":"the-key"}"#)),
            status: 200,
            answer_headers: HeaderMap::new(),
            answer_body: Some(Bytes::from_static(&[0xff, 0x00])),
            violations: vec![],
        });
        recorder.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("secret-token") && !text.contains("the-key"), "{text}");
        let lines = read(&path).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].request.header("Authorization"), Some("[redacted]"));
        assert_eq!(lines[0].request.body.as_deref(), Some(r#"{"apiKey":"[redacted]"}"#));
        assert_eq!(lines[0].answer.body_bytes(), vec![0xff, 0x00]);
        assert_eq!(lines[0].request.target.as_deref(), Some("/auth/x?a=1"));
    }
}
