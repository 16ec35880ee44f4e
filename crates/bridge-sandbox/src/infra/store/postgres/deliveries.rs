//! Webhook deliveries: the outbox, its leases and the attempt log: this area's part of [`PgStore`] (the
//! [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{from_json, Areas, AttemptOutcome, DeliveryClaim, DueDelivery, StoreResult};
use bridge_contract::WebhookDeliveryAttempt;
use sqlx_core::query::query;
use sqlx_core::row::Row;

impl Areas<'_, PgStore> {
    pub(super) async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let mut tx = self.pool.begin().await?;
        // Rows another instance is taking right now are skipped, not waited for; the per-URL share is applied to
        // the oldest due rows of this batch (window functions and `FOR UPDATE` do not mix).
        let batch = (claim.limit.max(1) * claim.per_url.max(1) as u64).min(1_000) as i64;
        let rows = query(
            "SELECT o.id, o.event_id, o.project, o.url, o.attempts, e.body
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
            out.push(DueDelivery {
                outbox_id: r.try_get(0)?,
                event_id: r.try_get(1)?,
                project: r.try_get(2)?,
                url,
                event: from_json(r.try_get(5)?)?,
                attempt: r.try_get::<i32, _>(4)? as u32 + 1,
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
    pub(super) async fn release_leases(&self) -> StoreResult<()> {
        Ok(())
    }

    pub(super) async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let kept =
            query("UPDATE outbox SET attempts = $2, next_ms = $3, delivered = $4, leased_until = NULL WHERE id = $1")
                .bind(d.outbox_id)
                .bind(d.attempt as i32)
                .bind(o.next_ms)
                .bind(o.delivered)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if kept == 0 {
            return Ok(()); // reset meanwhile: the delivery and its log are gone
        }
        query(
            "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms, latency_ms, body_start)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(d.outbox_id)
        .bind(&d.event_id)
        .bind(&d.project)
        .bind(&d.url)
        .bind(d.attempt as i32)
        .bind(o.at_ms)
        .bind(o.status.map(i32::from))
        .bind(&o.error)
        .bind(o.delivered)
        .bind(o.next_ms)
        .bind(o.latency_ms)
        .bind(&o.body_start)
        .execute(&mut *tx)
        .await?;
        commit(tx).await?;
        Ok(())
    }

    pub(super) async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        let sql = format!(
            "SELECT {ATTEMPT_COLUMNS} FROM delivery_attempts a LEFT JOIN events e ON e.id = a.event_id
             WHERE a.project = $1 AND ($2::text IS NULL OR a.event_id = $2) ORDER BY a.id DESC LIMIT $3"
        );
        self.select(query(&sql).bind(project).bind(event_id).bind(limit as i64)).await
    }

    pub(super) async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        Ok(query("UPDATE outbox SET next_ms = $3, delivered = false WHERE project = $1 AND event_id = $2")
            .bind(project)
            .bind(event_id)
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    pub(super) async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        Ok(query(
            "UPDATE outbox SET next_ms = $3 WHERE project = $1 AND NOT delivered AND attempts > 0
               AND (SELECT max(a.at_ms) FROM delivery_attempts a WHERE a.outbox_id = outbox.id) >= $2",
        )
        .bind(project)
        .bind(since_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }
}
