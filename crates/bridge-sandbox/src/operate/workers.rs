//! The workers beside the HTTP server: the lifecycle ticker (a pass every [`TICK`]: due bridges move on), the
//! webhook courier (deliveries from the outbox) and, under `--retain DURATION`, the retention purge (a pass every
//! [`Retention::interval`]: what is older than the retention is deleted). The first two report their passes to
//! [`Health`] (readiness); all three to the metrics.
//!
//! Stopping ([`Workers::stop`], at shutdown): none starts a new pass; a purge stops after the batch under way; a
//! lifecycle pass under way finishes (its steps are saved one by one), the webhook attempts in flight finish or are handed back at the deadline
//! ([`Deliverer::drain`]), then a last pass syncs this instance's clock to the store, and every lease this
//! instance still holds is released ([`crate::infra::store::HealthStore::release_own_leases`]), so that other instances take
//! its bridges and deliveries at once rather than when the leases run out.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::health::Health;
use crate::infra::store::Store;
use crate::infra::telemetry;
use crate::pipeline::delivery::Deliverer;
use crate::pipeline::retention::{self, Pass, Retention};
use crate::service::Sandbox;

/// How often the lifecycle runs.
pub const TICK: Duration = Duration::from_millis(250);
/// At most this for each of the last pass and the hand-back at shutdown.
const LAST_STEPS: Duration = Duration::from_secs(5);

/// The running workers.
pub struct Workers {
    sandbox: Sandbox,
    deliverer: Deliverer,
    stop: watch::Sender<bool>,
    ticker: JoinHandle<()>,
    courier: JoinHandle<()>,
    /// The retention purge (`None` under `--retain forever`).
    janitor: Option<JoinHandle<()>>,
}

impl Workers {
    /// Starts the workers: the lifecycle ticker, the courier and, unless `retention` is forever, the purge.
    pub fn start(sandbox: Sandbox, deliverer: Deliverer, health: Arc<Health>, retention: Retention) -> Self {
        let (stop, stopping) = watch::channel(false);
        let ticker = tokio::spawn(tick(sandbox.clone(), health.clone(), stopping.clone()));
        let janitor = match retention {
            Retention::Forever => None,
            Retention::For(keep) => Some(tokio::spawn(purge(sandbox.core().store.clone(), keep, stopping.clone()))),
        };
        let courier = tokio::spawn(deliver(deliverer.clone(), health, stopping));
        Self { sandbox, deliverer, stop, ticker, courier, janitor }
    }

    /// Stops the workers by `deadline` (see the module docs) and hands back this instance's leases.
    pub async fn stop(self, deadline: tokio::time::Instant) {
        let _ = self.stop.send(true);
        if let Some(mut janitor) = self.janitor {
            if tokio::time::timeout_at(deadline, &mut janitor).await.is_err() {
                janitor.abort();
            }
        }
        let (mut ticker, mut courier) = (self.ticker, self.courier);
        if tokio::time::timeout_at(deadline, &mut courier).await.is_err() {
            courier.abort();
        }
        let cut = self.deliverer.drain(deadline).await;
        if tokio::time::timeout_at(deadline, &mut ticker).await.is_err() {
            tracing::warn!(
                "the lifecycle pass did not finish within the shutdown grace period; its bridges are handed back"
            );
            ticker.abort();
        }
        // The clock's advances of this instance reach the store (and a last round of due steps is made); both
        // bounded, for a store that does not answer.
        match tokio::time::timeout(LAST_STEPS, self.sandbox.tick()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "the last lifecycle pass failed"),
            Err(_) => tracing::warn!("the last lifecycle pass did not finish in time"),
        }
        match tokio::time::timeout(LAST_STEPS, self.sandbox.core().store.release_own_leases()).await {
            Ok(Ok(())) => tracing::info!(handed_back_attempts = cut, "workers stopped; leases handed back"),
            Ok(Err(e)) => tracing::warn!(error = %e, "handing back the leases failed; they run out on their own"),
            Err(_) => tracing::warn!("handing back the leases timed out; they run out on their own"),
        }
    }
}

async fn tick(sandbox: Sandbox, health: Arc<Health>, mut stopping: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = stopping.wait_for(|stop| *stop) => return,
        }
        match sandbox.tick().await {
            Ok(steps) => {
                health.ok(&health.lifecycle);
                metrics::counter!(telemetry::LIFECYCLE_PASSES, "outcome" => "ok").increment(1);
                metrics::counter!(telemetry::LIFECYCLE_STEPS).increment(steps as u64);
            }
            Err(e) => {
                let error = format!("{e:#}");
                tracing::warn!(%error, "lifecycle pass failed");
                health.failed(&health.lifecycle, error);
                metrics::counter!(telemetry::LIFECYCLE_PASSES, "outcome" => "failed").increment(1);
            }
        }
    }
}

async fn deliver(deliverer: Deliverer, health: Arc<Health>, mut stopping: watch::Receiver<bool>) {
    loop {
        if *stopping.borrow() {
            return;
        }
        let pause = match deliverer.run_once().await {
            Ok(started) => {
                health.ok(&health.delivery);
                if started > 0 {
                    tokio::task::yield_now().await;
                    continue;
                }
                Duration::from_millis(100)
            }
            Err(e) => {
                let error = format!("{e:#}");
                tracing::warn!(%error, "delivery pass failed");
                health.failed(&health.delivery, error);
                Duration::from_millis(500)
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stopping.wait_for(|stop| *stop) => return,
        }
    }
}

/// The retention purge: a pass every [`Retention::interval`] of `keep`, until stopped.
async fn purge(store: Arc<dyn Store>, keep: Duration, mut stopping: watch::Receiver<bool>) {
    let every = Retention::interval(keep);
    tracing::info!(retention = %Retention::For(keep), every = ?every, "retention purge started");
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stopping.wait_for(|stop| *stop) => return,
        }
        let started = std::time::Instant::now();
        let (outcome, purged) = match retention::purge(&*store, keep, &stopping).await {
            Ok(Pass::Done(purged) | Pass::Stopped(purged)) => ("ok", purged),
            Ok(Pass::Busy(purged)) => ("busy", purged),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "retention pass failed");
                metrics::counter!(telemetry::RETENTION_PASSES, "outcome" => "failed").increment(1);
                continue;
            }
        };
        metrics::counter!(telemetry::RETENTION_PASSES, "outcome" => outcome).increment(1);
        if purged.total() > 0 {
            let took_ms = started.elapsed().as_secs_f64() * 1e3;
            tracing::info!(?purged, took_ms, "retention purge: deleted what is older than the retention");
        }
    }
}
