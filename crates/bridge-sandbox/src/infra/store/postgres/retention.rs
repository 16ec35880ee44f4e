//! [`RetentionStore`] on PostgreSQL: each batch is one short transaction, which first takes the store's purge
//! lock (`pg_try_advisory_xact_lock`; held until the batch commits): while one instance purges, another's batch
//! finds the lock taken and does nothing, so instances purge one at a time and never wait on each other. Rows a
//! writer holds are skipped, not waited for (`FOR UPDATE SKIP LOCKED`), and a batch waits at most
//! [`LOCK_TIMEOUT`] for any other row lock: a purge never stalls a writer for longer than one small batch.

use async_trait::async_trait;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

use super::{commit, execute, select, select_one, PgStore};
use crate::infra::store::retention::{
    self, older_run, Positioned, PurgeBatch, PurgeCounts, PurgeTable, Purged, RetentionBacklog, RetentionStore,
};
use crate::infra::store::rows::One;
use crate::infra::store::StoreResult;

/// The key of the purge's advisory lock (the bytes of "retain").
const PURGE_LOCK: i64 = 0x7265_7461_696e;

/// How long a batch waits for a row lock before it gives up (the pass fails; the next one tries again).
pub const LOCK_TIMEOUT: &str = "2s";

#[async_trait]
impl RetentionStore for PgStore {
    async fn wall_ms(&self) -> StoreResult<i64> {
        let One(now) = select_one::<One<i64>>(&self.pool, retention::wall_ms()).await?;
        Ok(now)
    }

    async fn purge(&self, b: &PurgeBatch) -> StoreResult<Option<Purged>> {
        let mut tx = self.pool.begin().await?;
        let locked: bool =
            query_scalar("SELECT pg_try_advisory_xact_lock($1)").bind(PURGE_LOCK).fetch_one(&mut *tx).await?;
        if !locked {
            return Ok(None); // another instance's batch is under way; the transaction rolls back when dropped
        }
        query(&format!("SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")).execute(&mut *tx).await?;
        let mut counts = PurgeCounts::default();
        let mut walked = None;
        match b.table {
            PurgeTable::Quotes => counts.quotes = execute(&mut *tx, retention::quotes(b)).await?,
            PurgeTable::EndedBridges => {
                let ids: Vec<String> = select::<One<String>>(&mut *tx, retention::ended_bridges(b))
                    .await?
                    .into_iter()
                    .map(|One(id)| id)
                    .collect();
                counts.bridges = ids.len() as u64;
                if !ids.is_empty() {
                    counts.deposits = execute(&mut *tx, retention::deposits_of(&ids)?).await?;
                }
            }
            PurgeTable::RejectedDeposits => {
                counts.deposits = execute(&mut *tx, retention::rejected_deposits(b)).await?
            }
            PurgeTable::Events => {
                let window: Vec<Positioned> = select(&mut *tx, retention::events_window(b)).await?;
                if let (Some(end), more) = older_run(&window, b.horizon_ms, b.limit) {
                    counts.webhook_deliveries =
                        execute(&mut *tx, retention::ended_deliveries(b.after, end, b.horizon_ms)).await?;
                    counts.events = execute(&mut *tx, retention::events(b.after, end, b.horizon_ms)).await?;
                    walked = more.then_some(end);
                }
            }
            PurgeTable::DeliveryAttempts => {
                let window: Vec<Positioned> = select(&mut *tx, retention::attempts_window(b)).await?;
                if let (Some(end), more) = older_run(&window, b.horizon_ms, b.limit) {
                    counts.webhook_attempts =
                        execute(&mut *tx, retention::attempts(b.after, end, b.horizon_ms)).await?;
                    walked = more.then_some(end);
                }
            }
        }
        commit(tx).await?;
        Ok(Some(b.purged(counts, walked)))
    }

    async fn retention_backlog(&self) -> StoreResult<RetentionBacklog> {
        select_one(&self.pool, retention::backlog()).await
    }
}
