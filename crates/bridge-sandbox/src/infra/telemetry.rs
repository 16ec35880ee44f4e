//! The metrics the sandbox records: one constant per name, with its unit and help text, and the process's
//! Prometheus recorder.
//!
//! Modules record through the `metrics` facade (`metrics::counter!(telemetry::HTTP_REQUESTS, ...)`); with no
//! recorder installed (a library user, a unit test) that costs nothing and records nothing. `serve` installs the
//! recorder once per process ([`recorder`]) and `GET /metrics` renders it in the Prometheus text format
//! (`metrics-exporter-prometheus`). Names follow Prometheus' conventions: a `bridge_sandbox_` prefix, base units
//! in the name (`_seconds`), `_total` on counters. Every label has a bounded set of values: operation ids of the
//! schema, HTTP statuses, error `_tag`s, fixed outcome words. No metric is labelled by project: any token's `sub`
//! is a project, so their number is unbounded (the logs carry the project of every request instead).
//!
//! A leaf module: the store, the deliverer, the lifecycle and the HTTP layers all use it, and it uses none of them.

use std::sync::OnceLock;

use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Requests answered, by `operation` (the schema's operationId, or one of the sandbox's own endpoints) and `status`.
pub const HTTP_REQUESTS: &str = "bridge_sandbox_http_requests_total";
/// Time from a request's arrival to its answer's head, by `operation`.
pub const HTTP_REQUEST_DURATION: &str = "bridge_sandbox_http_request_duration_seconds";
/// Answers 429, by `operation` and `reason` (the error's `_tag`, e.g. `DepositAddressRateLimitExceeded`).
pub const HTTP_RATE_LIMITED: &str = "bridge_sandbox_http_rate_limited_total";
/// Requests cut by the request timeout (answered 503 `ServiceUnavailable`), by `operation`.
pub const HTTP_REQUEST_TIMEOUTS: &str = "bridge_sandbox_http_request_timeouts_total";
/// Open client connections.
pub const HTTP_CONNECTIONS: &str = "bridge_sandbox_http_connections";
/// The cap on open client connections (below the open-file limit).
pub const HTTP_CONNECTION_LIMIT: &str = "bridge_sandbox_http_connection_limit";
/// Connections the sandbox closed before their client did, by `reason`: `header_timeout`, `idle_timeout`,
/// `evicted` (at the cap, for a newer connection), `shutdown`.
pub const HTTP_CONNECTIONS_CLOSED: &str = "bridge_sandbox_http_connections_closed_total";

/// Time of a store transaction's commit (SQLite: one group of writes; PostgreSQL: one transaction), by `backend`.
pub const STORE_COMMIT_DURATION: &str = "bridge_sandbox_store_commit_duration_seconds";
/// Writes committed together by one SQLite group commit.
pub const STORE_GROUP_COMMIT_WRITES: &str = "bridge_sandbox_store_group_commit_writes";

/// Webhook delivery attempts, by `outcome`: `delivered` (2xx), `retrying` (failed, another attempt is
/// scheduled), `exhausted` (failed, the last attempt), `interrupted` (cut by this instance's shutdown and handed
/// back, due at once).
pub const WEBHOOK_ATTEMPTS: &str = "bridge_sandbox_webhook_attempts_total";
/// Time of one delivery attempt (the POST and its answer).
pub const WEBHOOK_ATTEMPT_DURATION: &str = "bridge_sandbox_webhook_attempt_duration_seconds";
/// Attempts in flight at this instance.
pub const WEBHOOK_IN_FLIGHT: &str = "bridge_sandbox_webhook_deliveries_in_flight";
/// Deliveries in the outbox that are neither delivered nor given up (the whole store: every instance on one
/// database reports the same figure).
pub const WEBHOOK_OUTBOX_DEPTH: &str = "bridge_sandbox_webhook_outbox_depth";
/// How late the oldest due delivery is on the sandbox clock (0 when none is due); the whole store.
pub const WEBHOOK_OLDEST_DUE_AGE: &str = "bridge_sandbox_webhook_oldest_due_age_seconds";

/// How late the oldest due lifecycle step is on the sandbox clock (0 when none is due); the whole store.
pub const LIFECYCLE_LAG: &str = "bridge_sandbox_lifecycle_lag_seconds";
/// Lifecycle passes of this instance, by `outcome` (`ok`, `failed`).
pub const LIFECYCLE_PASSES: &str = "bridge_sandbox_lifecycle_passes_total";
/// Lifecycle steps (bridge transitions) this instance made.
pub const LIFECYCLE_STEPS: &str = "bridge_sandbox_lifecycle_steps_total";

/// Rows the retention purge deleted at this instance, by `kind`: `quotes`, `bridges`, `deposits`, `events`,
/// `webhook_deliveries`, `webhook_attempts`.
pub const RETENTION_PURGED: &str = "bridge_sandbox_retention_purged_total";
/// How far behind the retention purge is: how long the oldest row it would delete has been older than the
/// retention (0 when none is), on the store's wall clock; the whole store. Not set under `--retain forever`.
pub const RETENTION_LAG: &str = "bridge_sandbox_retention_lag_seconds";
/// Retention passes of this instance, by `outcome`: `ok`, `failed`, `busy` (another instance was purging).
pub const RETENTION_PASSES: &str = "bridge_sandbox_retention_passes_total";
/// Faults injected on purpose into a project's own traffic (its fault profile, `PUT /sandbox/faults`), by `on`
/// (`request`, `delivery`) and `kind` (`tooManyRequests`, `unavailable`, `delay`; `duplicate`, `holdBack`, `delay`).
pub const FAULTS_INJECTED: &str = "bridge_sandbox_faults_injected_total";

/// 1, labelled with the sandbox's `version`.
pub const BUILD_INFO: &str = "bridge_sandbox_build_info";
/// The process's soft limit of open files (after raising it at start).
pub const OPEN_FILES_LIMIT: &str = "bridge_sandbox_open_files_limit";

/// Every metric above (docs/operations.md lists them; the example alert rules may name only these).
pub const ALL: &[&str] = &[
    HTTP_REQUESTS,
    HTTP_REQUEST_DURATION,
    HTTP_RATE_LIMITED,
    HTTP_REQUEST_TIMEOUTS,
    HTTP_CONNECTIONS,
    HTTP_CONNECTION_LIMIT,
    HTTP_CONNECTIONS_CLOSED,
    STORE_COMMIT_DURATION,
    STORE_GROUP_COMMIT_WRITES,
    WEBHOOK_ATTEMPTS,
    WEBHOOK_ATTEMPT_DURATION,
    WEBHOOK_IN_FLIGHT,
    WEBHOOK_OUTBOX_DEPTH,
    WEBHOOK_OLDEST_DUE_AGE,
    LIFECYCLE_LAG,
    LIFECYCLE_PASSES,
    LIFECYCLE_STEPS,
    RETENTION_PURGED,
    RETENTION_LAG,
    RETENTION_PASSES,
    FAULTS_INJECTED,
    BUILD_INFO,
    OPEN_FILES_LIMIT,
];

/// Latency buckets (seconds) of requests, commits and webhook attempts: 0.5 ms to 30 s.
const SECONDS_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];
/// Group sizes: 1 to `group_commit::MAX_BATCH` (128).
const WRITES_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

/// The process's Prometheus recorder, installed as the `metrics` recorder on first use. `None` when another
/// recorder was installed first (a program embedding the sandbox with its own): then that one records.
pub fn recorder() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full(STORE_GROUP_COMMIT_WRITES.into()), WRITES_BUCKETS))
                .expect("the buckets are not empty");
            match builder.install_recorder() {
                Ok(handle) => {
                    describe();
                    metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
                    Some(handle)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "another metrics recorder is installed; /metrics serves nothing");
                    None
                }
            }
        })
        .as_ref()
}

/// Units and help texts (Prometheus' `# HELP` lines).
fn describe() {
    describe_counter!(HTTP_REQUESTS, Unit::Count, "Requests answered, by operation (operationId) and HTTP status.");
    describe_histogram!(
        HTTP_REQUEST_DURATION,
        Unit::Seconds,
        "Time from a request's arrival to its answer, by operation."
    );
    describe_counter!(HTTP_RATE_LIMITED, Unit::Count, "Answers 429, by operation and reason (the error's _tag).");
    describe_counter!(HTTP_REQUEST_TIMEOUTS, Unit::Count, "Requests cut by the request timeout (answered 503).");
    describe_gauge!(HTTP_CONNECTIONS, Unit::Count, "Open client connections.");
    describe_gauge!(HTTP_CONNECTION_LIMIT, Unit::Count, "The cap on open client connections.");
    describe_counter!(
        HTTP_CONNECTIONS_CLOSED,
        Unit::Count,
        "Connections the sandbox closed, by reason (header_timeout, idle_timeout, evicted, shutdown)."
    );
    describe_histogram!(STORE_COMMIT_DURATION, Unit::Seconds, "Time of a store commit, by backend.");
    describe_histogram!(
        STORE_GROUP_COMMIT_WRITES,
        Unit::Count,
        "Writes committed together by one SQLite group commit."
    );
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        Unit::Count,
        "Webhook delivery attempts, by outcome (delivered, retrying, exhausted, interrupted)."
    );
    describe_histogram!(WEBHOOK_ATTEMPT_DURATION, Unit::Seconds, "Time of one webhook delivery attempt.");
    describe_gauge!(WEBHOOK_IN_FLIGHT, Unit::Count, "Webhook delivery attempts in flight at this instance.");
    describe_gauge!(
        WEBHOOK_OUTBOX_DEPTH,
        Unit::Count,
        "Webhook deliveries neither delivered nor given up (whole store)."
    );
    describe_gauge!(
        WEBHOOK_OLDEST_DUE_AGE,
        Unit::Seconds,
        "How late the oldest due webhook delivery is, on the sandbox clock (whole store)."
    );
    describe_gauge!(LIFECYCLE_LAG, Unit::Seconds, "How late the oldest due lifecycle step is, on the sandbox clock.");
    describe_counter!(LIFECYCLE_PASSES, Unit::Count, "Lifecycle passes of this instance, by outcome (ok, failed).");
    describe_counter!(LIFECYCLE_STEPS, Unit::Count, "Bridge transitions made by this instance's lifecycle passes.");
    describe_counter!(
        RETENTION_PURGED,
        Unit::Count,
        "Rows the retention purge deleted at this instance, by kind (quotes, bridges, deposits, events, \
         webhook_deliveries, webhook_attempts)."
    );
    describe_gauge!(
        RETENTION_LAG,
        Unit::Seconds,
        "How long the oldest row the retention purge would delete has been older than the retention (whole store)."
    );
    describe_counter!(
        RETENTION_PASSES,
        Unit::Count,
        "Retention passes of this instance, by outcome (ok, failed, busy: another instance was purging)."
    );
    describe_counter!(
        FAULTS_INJECTED,
        Unit::Count,
        "Faults injected on purpose by projects' fault profiles, by on (request, delivery) and kind."
    );
    describe_gauge!(BUILD_INFO, Unit::Count, "1, labelled with the sandbox's version.");
    describe_gauge!(OPEN_FILES_LIMIT, Unit::Count, "The process's soft limit of open files.");
}
