//! [`DeliveryStore`] on SQLite: one process serves a data directory, so the oldest due rows of each URL are
//! taken in one write and leased by time alone.

use async_trait::async_trait;
use bridge_contract::WebhookDeliveryAttempt;
use rusqlite::params;

use super::{execute, select, SqliteStore};
use crate::infra::store::deliveries::{self, AttemptOutcome, DeliveryClaim, DeliveryStore, DueDelivery};
use crate::infra::store::{from_json, StoreResult};

#[async_trait]
impl DeliveryStore for SqliteStore {
    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let claim = claim.clone();
        self.run(move |c| {
            // The oldest due rows of each URL, at most `per_url` of each (so a backlog of one receiver cannot
            // hide the others), oldest first overall.
            type Row = (i64, String, String, String, i64, String, i64, i64, Option<i64>);
            let rows: Vec<Row> = {
                let mut stmt = c.prepare_cached(
                    "SELECT d.id, d.event_id, d.project, d.url, d.attempts, e.body, d.rank, d.generation,
                            d.held_back_attempt FROM (
                         SELECT id, event_id, project, url, attempts, next_ms, generation, held_back_attempt,
                                ROW_NUMBER() OVER (PARTITION BY url ORDER BY next_ms, id) AS rank
                         FROM outbox o
                         WHERE next_ms IS NOT NULL
                           AND next_ms <= (SELECT max(p.clock_value + ?1, p.clock_floor) FROM projects p WHERE p.id = o.project)
                           AND (leased_until IS NULL OR leased_until <= ?2)
                     ) d JOIN events e ON e.id = d.event_id
                     WHERE d.rank <= ?3 ORDER BY d.next_ms, d.id",
                )?;
                let rows = stmt.query_map(params![claim.base_ms, claim.wall_ms, claim.per_url as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut lease = c.prepare_cached("UPDATE outbox SET leased_until = ?2 WHERE id = ?1")?;
            let mut out = Vec::new();
            for (id, event_id, project, url, attempts, body, rank, generation, held_back_attempt) in rows {
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
                    generation,
                    held_back: held_back_attempt == Some(attempts + 1),
                });
            }
            drop(lease);
            Ok(out)
        })
        .await
    }

    async fn release_leases(&self) -> StoreResult<()> {
        self.run(|c| {
            c.execute("UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL", [])?;
            Ok(())
        })
        .await
    }

    async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let (schedule, log) = (deliveries::schedule(d, o), deliveries::log_attempt(d, o));
        self.run(move |c| {
            if execute(c, &schedule)? == 0 {
                return Ok(()); // reset meanwhile: the delivery and its log are gone
            }
            execute(c, &log).map(drop)
        })
        .await
    }

    async fn record_duplicate(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let (count, log) = (deliveries::count_duplicate(d), deliveries::log_attempt(d, o));
        self.run(move |c| {
            if execute(c, &count)? == 0 {
                return Ok(()); // reset meanwhile
            }
            execute(c, &log).map(drop)
        })
        .await
    }

    async fn hold_back(&self, d: &DueDelivery, until_wall_ms: i64) -> StoreResult<()> {
        let hold = deliveries::hold_back(d, until_wall_ms);
        self.run(move |c| execute(c, &hold).map(drop)).await
    }

    async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        let attempts = deliveries::attempts(project, event_id, limit);
        self.read(move |c| select(c, &attempts)).await
    }

    async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        let resend = deliveries::resend(project, event_id, now_ms);
        self.run(move |c| Ok(execute(c, &resend)? as u64)).await
    }

    async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        let recover = deliveries::recover(project, since_ms, now_ms);
        self.run(move |c| Ok(execute(c, &recover)? as u64)).await
    }
}
