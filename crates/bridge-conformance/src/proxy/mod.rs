//! `bridge-conformance proxy`: a validating reverse proxy. Every request is forwarded unchanged to the upstream
//! (streamed, headers kept but the hop-by-hop ones, `Via` added, `Host` the upstream's) and its answer forwarded
//! back, and each exchange is checked against the contract ([`crate::contract::exchange`]) with the contract's own
//! decoder, schema and generated types.
//!
//! * The upstream request's URI is built from parts ([`upstream::Upstream::uri_for`]): the upstream's scheme,
//!   authority and prefix, and the request's path and query only. `OPTIONS *` and `CONNECT` answer 400
//!   `ProxyError` and are not forwarded; an absolute-form request goes to the upstream with its path and query.
//!   The client's connector refuses any other host before connecting ([`upstream::UpstreamOnly`]).
//! * An upstream that does not answer within `upstream_timeout` (`--upstream-timeout`, 30 s) is answered 504
//!   `ProxyError`; one that falls silent that long while an answer streams has the answer cut ([`idle::Idle`]).
//!
//! * The request is checked beside the forwarding: its body is copied while it streams to the upstream
//!   ([`tee::Tee`]) and decoded while the upstream works.
//! * An answer of known length (at most `body_limit` bytes) is read whole, checked, and forwarded with its
//!   violations listed in the `x-contract-violations` header ([`crate::contract::violation::header_value`]); with
//!   `strict`, an answer with violations is replaced by a 502 `ContractViolations` body listing them. Other
//!   answers (unknown length, or larger) are streamed as they come and checked once they have passed: their
//!   violations are logged and reported, not put in a header (`strict` reads every answer whole instead, up to
//!   the limit, and answers 502 beyond it).
//! * Each violation is logged (`WARN`, with the operation, rule, location and value), counted in the coverage
//!   ([`crate::report::coverage`]: `GET /_conformance/report` on the proxy, `?format=html` or `?format=junit`), and
//!   kept in the recording (`record`, [`crate::proxy::record`]).

pub mod idle;
pub mod record;
pub mod replay;
pub mod tee;
pub mod upstream;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::sync::oneshot;

use crate::contract::exchange::{RequestCheck, RequestFacts};
use crate::contract::violation::{header_value, Violation, HEADER};
use crate::proxy::record::Recorder;
use crate::report::coverage::{Coverage, Example, TrafficReport};
use bridge_server::ErrorsMode;
use idle::Idle;
use tee::{Kept, Tee};
use upstream::{Upstream, UpstreamOnly};

/// The proxy's own path: the report of what it saw so far (JSON; `?format=html`, `?format=junit`).
pub const REPORT_PATH: &str = "/_conformance/report";

/// How a proxy runs.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The deployment's base URL (scheme, host, port, optional path prefix).
    pub upstream: String,
    /// Where the proxy listens (port 0: any free port).
    pub listen: SocketAddr,
    /// Answer 502 with the violations instead of forwarding a non-conforming answer.
    pub strict: bool,
    /// How many failing properties the upstream's decode errors report.
    pub errors: ErrorsMode,
    /// The upstream serves the sandbox helpers: count them in the coverage.
    pub sandbox_helpers: bool,
    /// Record every exchange to this file (JSON lines).
    pub record: Option<PathBuf>,
    /// The largest body (request or answer) the proxy keeps to check.
    pub body_limit: usize,
    /// How long the upstream may take to answer (its head, and an answer read whole), and may fall silent while
    /// an answer streams: beyond it, 504 `ProxyError` (or the streamed answer is cut).
    pub upstream_timeout: Duration,
}

/// The default of [`ProxyConfig::upstream_timeout`] (`--upstream-timeout`).
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

impl ProxyConfig {
    /// A proxy of `upstream` on a free port of 127.0.0.1, reporting only, 4 MiB bodies.
    pub fn new(upstream: impl Into<String>) -> Self {
        Self {
            upstream: upstream.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            strict: false,
            errors: ErrorsMode::First,
            sandbox_helpers: false,
            record: None,
            body_limit: 4 << 20,
            upstream_timeout: UPSTREAM_TIMEOUT,
        }
    }
}

type ProxyBody = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;
/// A request body as sent upstream: read whole, or streamed.
type UpstreamBody = Either<Full<Bytes>, Tee<Incoming>>;

#[cfg(not(feature = "https"))]
type Transport = hyper_util::client::legacy::connect::HttpConnector;
#[cfg(feature = "https")]
type Transport = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
/// The client's connector: to the upstream only.
type Connector = UpstreamOnly<Transport>;

struct Shared {
    config: ProxyConfig,
    upstream: Arc<Upstream>,
    client: Client<Connector, UpstreamBody>,
    coverage: Arc<Coverage>,
    /// Taken out (and closed) by [`Proxy::stop`].
    recorder: std::sync::Mutex<Option<Recorder>>,
    via: HeaderValue,
}

/// A running proxy.
pub struct Proxy {
    /// Where it listens.
    pub addr: SocketAddr,
    /// `http://<addr>`.
    pub url: String,
    coverage: Arc<Coverage>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    shared: Arc<Shared>,
}

fn transport() -> anyhow::Result<Transport> {
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.set_nodelay(true);
    #[cfg(not(feature = "https"))]
    return Ok(http);
    #[cfg(feature = "https")]
    {
        http.enforce_http(false);
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(hyper_rustls::HttpsConnectorBuilder::new()
            .with_platform_verifier()?
            .https_or_http()
            .enable_http1()
            .wrap_connector(http))
    }
}

impl Proxy {
    /// Binds `config.listen` and serves until [`Proxy::stop`].
    pub async fn start(config: ProxyConfig) -> anyhow::Result<Self> {
        let upstream = Arc::new(Upstream::parse(&config.upstream)?);
        anyhow::ensure!(!config.upstream_timeout.is_zero(), "--upstream-timeout must be more than 0");
        let connector = UpstreamOnly::new(transport()?, upstream.clone());
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let recorder = config.record.as_deref().map(Recorder::create).transpose()?;
        let listener =
            tokio::net::TcpListener::bind(config.listen).await.with_context(|| format!("binding {}", config.listen))?;
        let addr = listener.local_addr()?;
        let coverage = Arc::new(Coverage::new(&config.upstream, config.sandbox_helpers));
        let shared = Arc::new(Shared {
            config,
            upstream,
            client,
            coverage: coverage.clone(),
            recorder: std::sync::Mutex::new(recorder),
            via: HeaderValue::from_static("1.1 bridge-conformance"),
        });
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(listener, shared.clone(), stopped));
        tracing::info!(listen = %addr, upstream = %crate::contract::redact::text(&shared.config.upstream), strict = shared.config.strict,
            upstream_timeout = %humantime::format_duration(shared.config.upstream_timeout), "proxy started");
        Ok(Self { addr, url: format!("http://{addr}"), coverage, stop: Some(stop), task: Some(task), shared })
    }

    /// The report of what the proxy saw so far.
    pub fn report(&self) -> TrafficReport {
        self.coverage.report()
    }

    /// Exchanges seen so far.
    pub fn requests(&self) -> u64 {
        self.coverage.requests()
    }

    /// Stops accepting, lets open exchanges finish (at most 10 s), closes the recording, and returns the report.
    pub async fn stop(mut self) -> anyhow::Result<TrafficReport> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.context("the proxy task")??;
        }
        let report = self.coverage.report();
        let recorder = self.shared.recorder.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(recorder) = recorder {
            recorder.finish()?;
        }
        tracing::info!(requests = report.requests, violations = report.violations, "proxy stopped");
        Ok(report)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) -> anyhow::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let service = hyper::service::service_fn(move |request| handle(shared.clone(), request));
                let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!("connection: {e}");
                    }
                });
            }
            _ = &mut stopped => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(std::time::Duration::from_secs(10), graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after 10 s; stopping anyway");
    }
    Ok(())
}

fn boxed(body: Full<Bytes>) -> ProxyBody {
    body.map_err(|never| match never {}).boxed()
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response<ProxyBody> {
    let mut response = Response::new(boxed(Full::new(Bytes::from(body.to_string()))));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The proxy's own answer, 400, 502 or 504 `ProxyError` (the schema's component); its message redacted.
fn proxy_error(status: StatusCode, message: impl std::fmt::Display) -> Response<ProxyBody> {
    let body = bridge_contract::ProxyError::new(crate::contract::redact::text(&message.to_string()));
    json_response(status, &serde_json::to_value(&body).unwrap_or_default())
}

/// `GET /_conformance/report[?format=json|html|junit]`.
fn report_response(shared: &Shared, query: &str) -> Response<ProxyBody> {
    let report = shared.coverage.report();
    let format = form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "format").map(|(_, v)| v.into_owned());
    let (content_type, body) = match format.as_deref() {
        Some("html") => ("text/html; charset=utf-8", crate::report::html::page(&report, None)),
        Some("junit") => ("application/xml", report.junit().unwrap_or_else(|e| format!("<!-- {e} -->"))),
        _ => ("application/json", serde_json::to_string_pretty(&report).unwrap_or_default()),
    };
    let mut response = Response::new(boxed(Full::new(Bytes::from(body))));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Removes the hop-by-hop headers (RFC 9110 7.6.1): `Connection` and those it names, and the usual ones.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.contains_key(header::CONNECTION) {
        strip_connection_named(headers);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

/// The hop-by-hop headers every message loses (RFC 9110 7.6.1, and the older `Keep-Alive`, `Proxy-Connection`).
const HOP_BY_HOP: [HeaderName; 9] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
];

/// Removes the headers that `Connection` names.
fn strip_connection_named(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<ProxyBody>, Infallible> {
    let started = Instant::now();
    if request.uri().path() == REPORT_PATH && request.method() == http::Method::GET {
        return Ok(report_response(&shared, request.uri().query().unwrap_or_default()));
    }
    let (mut parts, body) = request.into_parts();
    let method = parts.method.as_str().to_owned();
    // Before anything is read or sent: a target that names no path of the upstream is refused here.
    let upstream_uri = match shared.upstream.uri_for(&parts.method, &parts.uri) {
        Ok(uri) => uri,
        Err(refused) => {
            tracing::warn!(%method, target = %crate::contract::redact::text(&parts.uri.to_string()), "not forwarded: {refused}");
            return Ok(proxy_error(StatusCode::BAD_REQUEST, refused));
        }
    };
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or_default().to_owned();
    // The target as logs, reports and recordings show it (credentials redacted).
    let target = crate::contract::redact::target(parts.uri.path_and_query().map_or(path.as_str(), |p| p.as_str()));
    let original_headers = parts.headers.clone();

    // A body of known length within the limit is read whole first (for a JSON request it came with the head) and
    // sent as one piece; any other body is streamed, and copied as it passes. The request check runs while the
    // upstream works: it waits for the copy of the body, then routes and decodes.
    let limit = shared.config.body_limit;
    let length = header_str(&parts.headers, "content-length").and_then(|v| v.parse::<usize>().ok());
    let (body, kept): (UpstreamBody, oneshot::Receiver<Kept>) = match length {
        Some(n) if n <= limit => {
            let (tx, rx) = oneshot::channel();
            match Limited::new(body, limit).collect().await {
                Ok(collected) => {
                    let bytes = collected.to_bytes();
                    let _ = tx.send(Some(bytes.clone()));
                    (Either::Left(Full::new(bytes)), rx)
                }
                Err(e) => {
                    tracing::debug!(%method, %target, "reading the request failed: {e}");
                    return Ok(proxy_error(StatusCode::BAD_REQUEST, format!("reading the request failed: {e}")));
                }
            }
        }
        _ => {
            let (tee, rx) = Tee::new(body, limit);
            (Either::Right(tee), rx)
        }
    };
    let api_key = crate::contract::contract().api_key_header.as_str();
    let credential = parts.headers.contains_key(header::AUTHORIZATION) || parts.headers.contains_key(api_key);
    let content_type = header_str(&parts.headers, "content-type").map(str::to_owned);
    let (m, p, q, mode) = (method.clone(), path.clone(), query.clone(), shared.config.errors);
    let request_check = tokio::spawn(async move {
        let kept: Kept = kept.await.ok().flatten();
        let facts = RequestFacts {
            method: &m,
            path: &p,
            query: &q,
            credential,
            content_type: content_type.as_deref(),
            body: kept.as_deref(),
        };
        (RequestCheck::new(&facts, mode), kept)
    });

    strip_hop_by_hop(&mut parts.headers);
    parts.headers.remove(header::HOST);
    parts.headers.append(header::VIA, shared.via.clone());
    parts.uri = upstream_uri;
    // One deadline for the answer's head and, when it is read whole, its body.
    let limit = shared.config.upstream_timeout;
    let deadline = tokio::time::Instant::now() + limit;
    let answer = match tokio::time::timeout_at(deadline, shared.client.request(Request::from_parts(parts, body))).await
    {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => {
            shared.coverage.upstream_error();
            let e = crate::contract::redact::text(&format!("{e:#}"));
            tracing::warn!(%method, %target, "the upstream did not answer: {e}");
            return Ok(proxy_error(StatusCode::BAD_GATEWAY, format!("the upstream did not answer: {e}")));
        }
        Err(_) => return Ok(upstream_timed_out(&shared, &method, &target, "answer")),
    };
    let (mut answer_parts, answer_body) = answer.into_parts();
    strip_hop_by_hop(&mut answer_parts.headers);
    answer_parts.headers.append(header::VIA, shared.via.clone());
    let status = answer_parts.status.as_u16();
    let known_length = header_str(&answer_parts.headers, "content-length").and_then(|v| v.parse::<usize>().ok());
    let whole = shared.config.strict || known_length.is_some_and(|n| n <= shared.config.body_limit);

    if !whole {
        // Streamed: checked once it has passed.
        let (tee, kept) = Tee::new(Idle::new(answer_body, limit), shared.config.body_limit);
        let shared2 = shared.clone();
        let headers = answer_parts.headers.clone();
        tokio::spawn(async move {
            let answer = kept.await.ok().flatten();
            let Ok((check, request_body)) = request_check.await else { return };
            let exchange =
                Observed { method, target, original_headers, request_body, status, headers, answer, started };
            let violations = match &exchange.answer {
                Some(answer) => check.answer(status, header_str(&exchange.headers, "content-type"), answer),
                None => Vec::new(),
            };
            observe(&shared2, &check, exchange, violations);
        });
        let body = tee.boxed();
        return Ok(Response::from_parts(answer_parts, body));
    }

    let bytes =
        match tokio::time::timeout_at(deadline, Limited::new(answer_body, shared.config.body_limit).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(e)) => {
                tracing::warn!(%method, %target, "reading the upstream's answer failed: {e}");
                shared.coverage.upstream_error();
                return Ok(proxy_error(
                    StatusCode::BAD_GATEWAY,
                    format!("reading the upstream's answer failed (or it is larger than the proxy keeps): {e}"),
                ));
            }
            Err(_) => return Ok(upstream_timed_out(&shared, &method, &target, "answer's body")),
        };
    let (check, request_body) = match request_check.await {
        Ok(done) => done,
        Err(e) => {
            tracing::error!("the request check failed: {e}");
            return Ok(Response::from_parts(answer_parts, boxed(Full::new(bytes))));
        }
    };
    let violations = check.answer(status, header_str(&answer_parts.headers, "content-type"), &bytes);
    let response = if violations.is_empty() {
        Response::from_parts(answer_parts.clone(), boxed(Full::new(bytes.clone())))
    } else if shared.config.strict {
        let body = serde_json::json!({
            "_tag": "ContractViolations",
            "message": format!("the upstream's answer ({status}) breaks the contract; bridge-conformance proxy --strict answers 502 instead"),
            "operation": check.operation(),
            "upstreamStatus": status,
            "violations": violations,
        });
        let mut response = json_response(StatusCode::BAD_GATEWAY, &body);
        if let Some(value) = header_value(&violations).and_then(|v| HeaderValue::from_str(&v).ok()) {
            response.headers_mut().insert(HEADER, value);
        }
        response
    } else {
        let mut parts = answer_parts.clone();
        if let Some(value) = header_value(&violations).and_then(|v| HeaderValue::from_str(&v).ok()) {
            parts.headers.insert(HEADER, value);
        }
        Response::from_parts(parts, boxed(Full::new(bytes.clone())))
    };
    let exchange = Observed {
        method,
        target,
        original_headers,
        request_body,
        status,
        headers: answer_parts.headers,
        answer: Some(bytes),
        started,
    };
    observe(&shared, &check, exchange, violations);
    Ok(response)
}

/// 504 `ProxyError`: the upstream did not send `what` within `--upstream-timeout` (counted as an upstream error).
fn upstream_timed_out(shared: &Shared, method: &str, target: &str, what: &str) -> Response<ProxyBody> {
    shared.coverage.upstream_error();
    let limit = humantime::format_duration(shared.config.upstream_timeout);
    tracing::warn!(%method, %target, "the upstream sent no {what} within {limit}; answered 504");
    proxy_error(
        StatusCode::GATEWAY_TIMEOUT,
        format!(
            "the upstream sent no {what} within {limit} (--upstream-timeout); whether it acted on the request is unknown"
        ),
    )
}

/// An exchange after its answer was forwarded.
struct Observed {
    method: String,
    target: String,
    original_headers: HeaderMap,
    request_body: Option<Bytes>,
    status: u16,
    headers: HeaderMap,
    answer: Option<Bytes>,
    started: Instant,
}

fn observe(shared: &Shared, check: &RequestCheck, e: Observed, violations: Vec<Violation>) {
    let operation = check.routed.as_ref().map(|r| r.op.id);
    for v in &violations {
        tracing::warn!(operation = %v.operation, rule = %v.rule, at = %v.at, value = v.value.as_deref().unwrap_or(""), "contract violation: {}", v.message);
    }
    tracing::debug!(method = %e.method, target = %e.target, status = e.status, micros = e.started.elapsed().as_micros() as u64, "exchange");
    let request_line = format!("{} {}", e.method, e.target);
    shared.coverage.observe(operation, &check.request_line, e.status, &violations, || {
        let pairs = |h: &HeaderMap| -> Vec<(String, String)> {
            h.iter().map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect()
        };
        let (request_headers, answer_headers) = (pairs(&e.original_headers), pairs(&e.headers));
        Example::new(
            &request_line,
            request_headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            e.request_body.as_deref().unwrap_or(b"(not kept: larger than the proxy keeps)"),
            e.status,
            answer_headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            e.answer.as_deref().unwrap_or(b"(not kept: larger than the proxy keeps)"),
        )
    });
    if let Some(recorder) = &*shared.recorder.lock().unwrap_or_else(|e| e.into_inner()) {
        recorder.record(crate::proxy::record::Exchange {
            operation,
            method: e.method,
            target: e.target,
            request_headers: e.original_headers,
            request_body: e.request_body,
            status: e.status,
            answer_headers: e.headers,
            answer_body: e.answer,
            violations,
        });
    }
}
