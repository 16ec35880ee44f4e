//! The layers every request goes through, outermost first:
//!
//! 1. its **request id**: the client's `x-request-id` when it is a sane one (1 to 128 visible ASCII characters,
//!    no credential), else a new UUID (tower-http's request-id layers); echoed in the answer's `x-request-id`;
//! 2. its **log span** `request` (request id, method, path with any credential redacted; the operation and
//!    project are recorded by bridge-server as soon as it knows them), so every log line of the request carries
//!    them, and one line when it is answered, with the status and the latency;
//! 3. the **metrics** by operation and status ([`crate::infra::telemetry`]), read from the answer's extensions
//!    ([`bridge_server::OperationId`], [`bridge_server::ErrorTag`]; `other` for paths outside the contract);
//! 4. the **request timeout**: an answer not ready in time is replaced by 503 `ServiceUnavailable`;
//! 5. the **body-read timeout** (tower-http's): a body not received whole in time fails its read, which
//!    bridge-server answers 503 `ServiceUnavailable`.

use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{self, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use bridge_server::{ErrorTag, OperationId};
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;
use tracing::field::Empty;

use super::ServeOptions;
use crate::infra::telemetry;

/// The header of request ids.
pub const REQUEST_ID: &str = "x-request-id";

/// The operation label of answers from paths outside the contract (`/docs`, unknown paths).
const OTHER: &str = "other";

/// `router` inside the request layers, with `options`' timeouts.
pub fn layered(router: axum::Router, options: &ServeOptions) -> axum::Router {
    let header = http::HeaderName::from_static(REQUEST_ID);
    router.layer(
        ServiceBuilder::new()
            .layer(axum::middleware::map_request(drop_odd_request_id))
            .layer(SetRequestIdLayer::new(header.clone(), MakeRequestUuid))
            .layer(PropagateRequestIdLayer::new(header))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(span)
                    .on_request(())
                    .on_response(|response: &Response, latency: Duration, _: &tracing::Span| {
                        tracing::info!(
                            status = response.status().as_u16(),
                            latency_ms = latency.as_secs_f64() * 1e3,
                            "answered"
                        )
                    })
                    .on_failure(()),
            )
            .layer(axum::middleware::from_fn(record))
            .layer(axum::middleware::from_fn_with_state(options.request_timeout, request_timeout))
            .layer(RequestBodyTimeoutLayer::new(options.body_read_timeout)),
    )
}

/// A client's request id is kept only when it is 1 to 128 visible ASCII characters and holds no credential
/// ([`bridge_server::credential`]): it goes into every log line, and is echoed in the answer.
async fn drop_odd_request_id(mut request: Request) -> Request {
    let sane = |v: &HeaderValue| {
        (1..=128).contains(&v.len())
            && v.as_bytes().iter().all(|b| b.is_ascii_graphic())
            && bridge_server::credential::find(v.as_bytes()).next().is_none()
    };
    if request.headers().get(REQUEST_ID).is_some_and(|v| !sane(v)) {
        request.headers_mut().remove(REQUEST_ID);
    }
    request
}

fn span(request: &Request) -> tracing::Span {
    let id = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        path = %bridge_server::credential::redact(request.uri().path()),
        operation = Empty,
        project = Empty,
    )
}

/// Counts the answer by operation and status, its latency, and a 429 by its reason.
async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    let operation = response.extensions().get::<OperationId>().map_or(OTHER, |o| o.0);
    let status = response.status();
    metrics::counter!(telemetry::HTTP_REQUESTS, "operation" => operation, "status" => status.as_u16().to_string())
        .increment(1);
    // An answer a fault profile faulted on purpose (a 429, a 503, a delay) is counted with the faults
    // (`FAULTS_INJECTED`): neither its injected latency nor its 429 describes the sandbox.
    let faulted = response.headers().contains_key(bridge_contract::operations::SANDBOX_FAULT_HEADER);
    if !faulted {
        metrics::histogram!(telemetry::HTTP_REQUEST_DURATION, "operation" => operation)
            .record(started.elapsed().as_secs_f64());
    }
    if status == StatusCode::TOO_MANY_REQUESTS && !faulted {
        let reason = response.extensions().get::<ErrorTag>().map_or_else(|| "unknown".to_owned(), |t| t.0.clone());
        metrics::counter!(telemetry::HTTP_RATE_LIMITED, "operation" => operation, "reason" => reason).increment(1);
    }
    response
}

/// 503 `ServiceUnavailable` for a request not answered within `limit` (its handler is dropped).
async fn request_timeout(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            metrics::counter!(telemetry::HTTP_REQUEST_TIMEOUTS).increment(1);
            tracing::warn!(?limit, "request not answered in time; answered 503");
            let message = format!("the sandbox did not answer within {}", humantime::format_duration(limit));
            bridge_server::serve::json(
                StatusCode::SERVICE_UNAVAILABLE,
                &bridge_contract::ServiceUnavailable { tag: Default::default(), message },
            )
        }
    }
}
