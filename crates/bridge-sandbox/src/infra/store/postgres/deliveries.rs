//! [`DeliveryStore`] on PostgreSQL: due deliveries are taken with `FOR UPDATE SKIP LOCKED` and leased under this
//! instance's name, so each is in flight at one instance at a time.

use async_trait::async_trait;
use bridge_contract::WebhookDeliveryAttempt;
use sqlx_core::query::query;
use sqlx_core::row::Row;

use super::{commit, execute, select, PgStore};
use crate::infra::store::deliveries::{self, AttemptOutcome, DeliveryClaim, DeliveryStore, DueDelivery};
use crate::infra::store::{from_json, StoreResult};

#[async_trait]
impl DeliveryStore for PgStore {
    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let mut tx = self.pool.begin().await?;
        // Rows another instance is taking right now are skipped, not waited for; the per-URL share is applied to
        // the oldest due rows of this batch (window functions and `FOR UPDATE` do not mix).
        let batch = (claim.limit.max(1) * claim.per_url.max(1) as u64).min(1_000) as i64;
        let rows = query(
            "SELECT o.id, o.event_id, o.project, o.url, o.attempts, e.body, o.generation, o.held_back_attempt
             FROM projects p JOIN outbox o ON o.project = p.id JOIN events e ON e.id = o.event_id
             WHERE o.next_ms IS NOT NULL AND o.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)
               AND (o.leased_until IS NULL OR o.leased_until <= $2)
             ORDER BY o.next_ms, o.id LIMIT $3 FOR UPDATE OF o SKIP LOCKED",
        )
        .bind(claim.base_ms)
        .bind(claim.wall_ms)
        .bind(batch)
        .fetch_all(&mut *tx)
        .await?;
        let mut taken = claim.busy.clone();
        let mut out = Vec::new();
        for r in &rows {
            if out.len() as u64 >= claim.limit {
                break;
            }
            let url: String = r.try_get(3)?;
            let n = taken.entry(url.clone()).or_insert(0);
            if *n >= claim.per_url {
                continue;
            }
            *n += 1;
            let attempts: i32 = r.try_get(4)?;
            let held_back_attempt: Option<i32> = r.try_get(7)?;
            out.push(DueDelivery {
                outbox_id: r.try_get(0)?,
                event_id: r.try_get(1)?,
                project: r.try_get(2)?,
                url,
                event: from_json(r.try_get(5)?)?,
                attempt: attempts as u32 + 1,
                generation: r.try_get(6)?,
                held_back: held_back_attempt == Some(attempts + 1),
            });
        }
        let ids: Vec<i64> = out.iter().map(|d| d.outbox_id).collect();
        query("UPDATE outbox SET leased_until = $2, leased_by = $3 WHERE id = ANY($1)")
            .bind(&ids)
            .bind(claim.lease_until_wall_ms)
            .bind(&*self.instance)
            .execute(&mut *tx)
            .await?;
        commit(tx).await?;
        Ok(out)
    }

    /// Releases nothing: other instances on the database may have deliveries in flight, and a dead instance's
    /// leases run out on their own.
    async fn release_leases(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, deliveries::schedule(d, o)).await? == 0 {
            return Ok(()); // reset meanwhile: the delivery and its log are gone
        }
        execute(&mut *tx, deliveries::log_attempt(d, o)).await?;
        commit(tx).await
    }

    async fn record_duplicate(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, deliveries::count_duplicate(d)).await? == 0 {
            return Ok(()); // reset meanwhile
        }
        execute(&mut *tx, deliveries::log_attempt(d, o)).await?;
        commit(tx).await
    }

    async fn hold_back(&self, d: &DueDelivery, until_wall_ms: i64) -> StoreResult<()> {
        execute(&self.pool, deliveries::hold_back(d, until_wall_ms)).await.map(drop)
    }

    async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        select(&self.pool, deliveries::attempts(project, event_id, limit)).await
    }

    async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        execute(&self.pool, deliveries::resend(project, event_id, now_ms)).await
    }

    async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        execute(&self.pool, deliveries::recover(project, since_ms, now_ms)).await
    }
}
