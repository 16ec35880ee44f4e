//! The probes, after Kubernetes' `/livez` and `/readyz` and Svix's per-component health answer.
//!
//! * `GET /livez`: 200 `{"status":"ok"}` while the process serves (a restart would not help anything else).
//! * `GET /readyz`: 200 `{"status":"ok"}` when every check passes, else 503 with the failing checks:
//!   `{"status":"fail","checks":{"store":{"status":"fail","message":"..."}}}`. `?verbose` lists every check,
//!   passing or not; `?exclude=NAME` (repeatable) leaves a check out. The checks, in order:
//!   * `store`: one round trip to the store answers within [`STORE_TIMEOUT`];
//!   * `migrations`: every migration this build knows is applied;
//!   * `lifecycle`: a lifecycle pass succeeded within [`STALE_AFTER`];
//!   * `delivery`: a webhook delivery pass succeeded within [`STALE_AFTER`];
//!   * `shutdown`: the instance is not shutting down.
//!
//! Both are unauthenticated and outside the contract (not in the OpenAPI document).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bridge_server::OperationId;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::service::Sandbox;

/// How long the store may take to answer the readiness round trip.
pub const STORE_TIMEOUT: Duration = Duration::from_secs(2);
/// A worker whose last successful pass is older than this is not ready (they run every 100 to 250 ms).
pub const STALE_AFTER: Duration = Duration::from_secs(15);

/// When a worker last succeeded, and its last failure.
#[derive(Debug, Default)]
pub struct Beat {
    /// Milliseconds after [`Health::started`] plus one; 0: never.
    last_ok: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// The heartbeats of the workers and the shutdown flag, read by `/readyz`.
#[derive(Debug)]
pub struct Health {
    started: Instant,
    pub lifecycle: Beat,
    pub delivery: Beat,
    shutting_down: AtomicBool,
}

impl Default for Health {
    fn default() -> Self {
        Self::new()
    }
}

impl Health {
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            lifecycle: Beat::default(),
            delivery: Beat::default(),
            shutting_down: false.into(),
        }
    }

    /// A successful pass of a worker.
    pub fn ok(&self, beat: &Beat) {
        beat.last_ok.store(self.started.elapsed().as_millis() as u64 + 1, Ordering::Release);
    }

    /// A failed pass of a worker.
    pub fn failed(&self, beat: &Beat, error: String) {
        *beat.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
    }

    /// From now on `/readyz` answers 503 (`shutdown`).
    pub fn shutting_down(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    fn fresh(&self, beat: &Beat, what: &str) -> Result<(), String> {
        let last = beat.last_ok.load(Ordering::Acquire);
        let error = || beat.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if last == 0 {
            return Err(match error() {
                Some(e) => format!("no {what} pass has succeeded yet; the last one failed: {e}"),
                None => format!("no {what} pass has run yet"),
            });
        }
        let age = self.started.elapsed().saturating_sub(Duration::from_millis(last - 1));
        if age > STALE_AFTER {
            let why = error().map(|e| format!("; the last one failed: {e}")).unwrap_or_default();
            return Err(format!("the last successful {what} pass was {} s ago{why}", age.as_secs()));
        }
        Ok(())
    }
}

/// What `/readyz` needs.
#[derive(Clone)]
pub struct Probes {
    pub sandbox: Sandbox,
    pub health: Arc<Health>,
}

/// `/livez` and `/readyz`.
pub fn routes(probes: Probes) -> axum::Router {
    axum::Router::new()
        .route("/livez", axum::routing::get(livez))
        .route("/readyz", axum::routing::get(readyz))
        .with_state(probes)
}

#[derive(Serialize)]
struct Check {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn labelled(operation: &'static str, status: StatusCode, body: Value) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
    response.extensions_mut().insert(OperationId(operation));
    response
}

async fn livez() -> Response {
    labelled("livez", StatusCode::OK, serde_json::json!({ "status": "ok" }))
}

async fn readyz(State(probes): State<Probes>, RawQuery(query): RawQuery) -> Response {
    let mut verbose = false;
    let mut excluded = Vec::new();
    for (key, value) in form_urlencoded::parse(query.as_deref().unwrap_or_default().as_bytes()) {
        match &*key {
            "verbose" => verbose = true,
            "exclude" => excluded.push(value.into_owned()),
            _ => {}
        }
    }
    let store = probes.sandbox.core().store.clone();
    let mut results: Vec<(&'static str, Result<(), String>)> = Vec::new();
    let reached = match tokio::time::timeout(STORE_TIMEOUT, store.ping()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the store failed: {e}")),
        Err(_) => Err(format!("the store did not answer within {} s", STORE_TIMEOUT.as_secs())),
    };
    let migrated = match &reached {
        Err(_) => Err("unknown: the store is unreachable".to_owned()),
        Ok(()) => match tokio::time::timeout(STORE_TIMEOUT, store.schema_status()).await {
            Ok(Ok(s)) if s.applied == s.known => Ok(()),
            Ok(Ok(s)) => Err(format!("{} of {} migrations applied", s.applied, s.known)),
            Ok(Err(e)) => Err(format!("reading the applied migrations failed: {e}")),
            Err(_) => Err(format!("the store did not answer within {} s", STORE_TIMEOUT.as_secs())),
        },
    };
    results.push(("store", reached));
    results.push(("migrations", migrated));
    results.push(("lifecycle", probes.health.fresh(&probes.health.lifecycle, "lifecycle")));
    results.push(("delivery", probes.health.fresh(&probes.health.delivery, "webhook delivery")));
    let shutdown = if probes.health.shutting_down.load(Ordering::Acquire) {
        Err("the instance is shutting down".to_owned())
    } else {
        Ok(())
    };
    results.push(("shutdown", shutdown));

    let mut ready = true;
    let mut checks = Map::new();
    for (name, result) in results {
        if excluded.iter().any(|e| e == name) {
            continue;
        }
        let check = match result {
            Ok(()) => Check { status: "ok", message: None },
            Err(message) => {
                ready = false;
                Check { status: "fail", message: Some(message) }
            }
        };
        if verbose || check.status != "ok" {
            checks.insert(name.to_owned(), serde_json::to_value(check).unwrap_or_default());
        }
    }
    let mut body = Map::new();
    body.insert("status".into(), Value::from(if ready { "ok" } else { "fail" }));
    if !checks.is_empty() {
        body.insert("checks".into(), Value::Object(checks));
    }
    let body = Value::Object(body);
    if !ready {
        tracing::warn!(%body, "not ready");
    }
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    labelled("readyz", status, body)
}
