//! `GET /metrics`: the Prometheus text exposition of [`crate::infra::telemetry`]'s recorder. The store's backlog (outbox
//! depth, the oldest due delivery, the oldest due lifecycle step, and under `--retain` how far behind the purge is)
//! is read at each scrape and set as gauges just before rendering, so it is as fresh as the scrape.
//! Unauthenticated and outside the contract.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bridge_server::OperationId;

use crate::infra::telemetry;
use crate::pipeline::retention::Retention;
use crate::service::Sandbox;

/// `/metrics` of a sandbox that keeps what it stores as long as `retention` says.
pub fn routes(sandbox: Sandbox, retention: Retention) -> axum::Router {
    axum::Router::new().route("/metrics", axum::routing::get(metrics)).with_state((sandbox, retention))
}

async fn metrics(State((sandbox, retention)): State<(Sandbox, Retention)>) -> Response {
    // Each project's backlog is measured on its own clock (`crate::infra::clock`): the base is the wall clock (`real`)
    // or 0 (`manual`).
    let base = crate::infra::clock::base_ms(sandbox.clock().mode());
    let backlog = tokio::time::timeout(super::health::STORE_TIMEOUT, sandbox.core().store.backlog(base)).await;
    match backlog {
        Ok(Ok(backlog)) => {
            let late = |late_ms: Option<i64>| late_ms.map_or(0.0, |ms| ms.max(0) as f64 / 1e3);
            metrics::gauge!(telemetry::WEBHOOK_OUTBOX_DEPTH).set(backlog.outbox_pending as f64);
            metrics::gauge!(telemetry::WEBHOOK_OLDEST_DUE_AGE).set(late(backlog.oldest_due_delivery_late_ms));
            metrics::gauge!(telemetry::LIFECYCLE_LAG).set(late(backlog.oldest_due_step_late_ms));
        }
        // The other figures are still served; the backlog gauges keep their last values.
        Ok(Err(e)) => tracing::warn!(error = %e, "reading the backlog for /metrics failed"),
        Err(_) => tracing::warn!("reading the backlog for /metrics timed out"),
    }
    if let Retention::For(keep) = retention {
        let keep_ms = i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
        match tokio::time::timeout(super::health::STORE_TIMEOUT, sandbox.core().store.retention_backlog()).await {
            Ok(Ok(backlog)) => {
                metrics::gauge!(telemetry::RETENTION_LAG).set(backlog.lag_ms(keep_ms) as f64 / 1e3);
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "reading the retention backlog for /metrics failed"),
            Err(_) => tracing::warn!("reading the retention backlog for /metrics timed out"),
        }
    }
    let text = telemetry::recorder().map(|handle| handle.render()).unwrap_or_default();
    let mut response =
        (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text).into_response();
    response.extensions_mut().insert(OperationId("metrics"));
    response
}
