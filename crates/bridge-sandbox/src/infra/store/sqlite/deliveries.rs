//! Webhook deliveries: the outbox, its leases and the attempt log: this area's part of [`SqliteStore`] (the
//! [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{from_json, Areas, AttemptOutcome, DeliveryClaim, DueDelivery, StoreResult};
use bridge_contract::WebhookDeliveryAttempt;
use rusqlite::params;

impl Areas<'_, SqliteStore> {
    pub(super) async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let claim = claim.clone();
        self.run(move |c| {
            // The oldest due rows of each URL, at most `per_url` of each (so a backlog of one receiver cannot
            // hide the others), oldest first overall.
            let rows: Vec<(i64, String, String, String, i64, String, i64)> = {
                let mut stmt = c.prepare_cached(
                    "SELECT d.id, d.event_id, d.project, d.url, d.attempts, e.body, d.rank FROM (
                         SELECT id, event_id, project, url, attempts, next_ms,
                                ROW_NUMBER() OVER (PARTITION BY url ORDER BY next_ms, id) AS rank
                         FROM outbox o
                         WHERE next_ms IS NOT NULL
                           AND next_ms <= (SELECT max(p.clock_value + ?1, p.clock_floor) FROM projects p WHERE p.id = o.project)
                           AND (leased_until IS NULL OR leased_until <= ?2)
                     ) d JOIN events e ON e.id = d.event_id
                     WHERE d.rank <= ?3 ORDER BY d.next_ms, d.id",
                )?;
                let rows = stmt.query_map(params![claim.base_ms, claim.wall_ms, claim.per_url as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut lease = c.prepare_cached("UPDATE outbox SET leased_until = ?2 WHERE id = ?1")?;
            let mut out = Vec::new();
            for (id, event_id, project, url, attempts, body, rank) in rows {
                if out.len() as u64 >= claim.limit {
                    break;
                }
                if rank as usize + claim.busy.get(&url).copied().unwrap_or(0) > claim.per_url {
                    continue;
                }
                lease.execute(params![id, claim.lease_until_wall_ms])?;
                out.push(DueDelivery {
                    outbox_id: id,
                    event_id,
                    project,
                    url,
                    event: from_json(&body)?,
                    attempt: attempts as u32 + 1,
                });
            }
            drop(lease);
            Ok(out)
        })
        .await
    }

    pub(super) async fn release_leases(&self) -> StoreResult<()> {
        self.run(|c| {
            c.execute("UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL", [])?;
            Ok(())
        })
        .await
    }

    pub(super) async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let (d, o) = (d.clone(), o.clone());
        self.run(move |c| {
            let kept = c.execute(
                "UPDATE outbox SET attempts = ?2, next_ms = ?3, delivered = ?4, leased_until = NULL WHERE id = ?1",
                params![d.outbox_id, d.attempt, o.next_ms, o.delivered],
            )?;
            if kept == 0 {
                return Ok(()); // reset meanwhile: the delivery and its log are gone
            }
            c.execute(
                "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms, latency_ms, body_start)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![d.outbox_id, d.event_id, d.project, d.url, d.attempt, o.at_ms, o.status, o.error, o.delivered, o.next_ms, o.latency_ms, o.body_start],
            )?;
            Ok(())
        })
        .await
    }

    pub(super) async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        let (project, event_id) = (project.to_owned(), event_id.map(str::to_owned));
        self.read(move |c| {
            let sql = format!(
                "SELECT {ATTEMPT_COLUMNS} FROM delivery_attempts a LEFT JOIN events e ON e.id = a.event_id
                 WHERE a.project = ?1 AND (?2 IS NULL OR a.event_id = ?2) ORDER BY a.id DESC LIMIT ?3"
            );
            select(c, &sql, params![project, event_id, limit as i64])
        })
        .await
    }

    pub(super) async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        let (project, event_id) = (project.to_owned(), event_id.to_owned());
        self.run(move |c| {
            let n = c.execute(
                "UPDATE outbox SET next_ms = ?3, delivered = 0 WHERE project = ?1 AND event_id = ?2",
                params![project, event_id, now_ms],
            )?;
            Ok(n as u64)
        })
        .await
    }

    pub(super) async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        let project = project.to_owned();
        self.run(move |c| {
            let n = c.execute(
                "UPDATE outbox SET next_ms = ?3 WHERE project = ?1 AND delivered = 0 AND attempts > 0
                   AND (SELECT max(a.at_ms) FROM delivery_attempts a WHERE a.outbox_id = outbox.id) >= ?2",
                params![project, since_ms, now_ms],
            )?;
            Ok(n as u64)
        })
        .await
    }
}
