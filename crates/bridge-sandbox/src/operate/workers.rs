//! The two workers beside the HTTP server: the lifecycle ticker (a pass every [`TICK`]: due bridges move on) and
//! the webhook courier (deliveries from the outbox). Each reports its passes to [`Health`] (readiness) and to the
//! metrics.
//!
//! Stopping ([`Workers::stop`], at shutdown): neither starts a new pass; a lifecycle pass under way finishes (its
//! steps are saved one by one), the webhook attempts in flight finish or are handed back at the deadline
//! ([`Deliverer::drain`]), then a last pass syncs this instance's clock to the store, and every lease this
//! instance still holds is released ([`crate::infra::store::HealthStore::release_own_leases`]), so that other instances take
//! its bridges and deliveries at once rather than when the leases run out.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::health::Health;
use crate::infra::telemetry;
use crate::pipeline::delivery::Deliverer;
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
}

impl Workers {
    /// Starts both workers.
    pub fn start(sandbox: Sandbox, deliverer: Deliverer, health: Arc<Health>) -> Self {
        let (stop, stopping) = watch::channel(false);
        let ticker = tokio::spawn(tick(sandbox.clone(), health.clone(), stopping.clone()));
        let courier = tokio::spawn(deliver(deliverer.clone(), health, stopping));
        Self { sandbox, deliverer, stop, ticker, courier }
    }

    /// Stops both workers by `deadline` (see the module docs) and hands back this instance's leases.
    pub async fn stop(self, deadline: tokio::time::Instant) {
        let _ = self.stop.send(true);
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
