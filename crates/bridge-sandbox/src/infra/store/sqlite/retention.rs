//! [`RetentionStore`] on SQLite: each batch is one write of the writer thread (one savepoint of a group commit),
//! kept small so that the writes queued behind it wait little. One process serves a data directory: no lock.

use async_trait::async_trait;
use rusqlite::Connection;

use super::{execute, select, select_one, SqliteStore};
use crate::infra::store::retention::{
    self, older_run, Positioned, PurgeBatch, PurgeCounts, PurgeTable, Purged, RetentionBacklog, RetentionStore,
};
use crate::infra::store::rows::One;
use crate::infra::store::StoreResult;

#[async_trait]
impl RetentionStore for SqliteStore {
    async fn wall_ms(&self) -> StoreResult<i64> {
        let now = retention::wall_ms();
        let One(now) = self.read_now(move |c| select_one::<One<i64>>(c, &now)).await?;
        Ok(now)
    }

    async fn purge(&self, batch: &PurgeBatch) -> StoreResult<Option<Purged>> {
        let batch = *batch;
        self.run(move |c| purge(c, &batch).map(Some)).await
    }

    async fn retention_backlog(&self) -> StoreResult<RetentionBacklog> {
        let backlog = retention::backlog();
        self.read(move |c| select_one(c, &backlog)).await
    }
}

/// One batch, in the writer's transaction.
fn purge(c: &Connection, b: &PurgeBatch) -> StoreResult<Purged> {
    let mut counts = PurgeCounts::default();
    let mut walked = None;
    match b.table {
        PurgeTable::Quotes => counts.quotes = execute(c, &retention::quotes(b))? as u64,
        PurgeTable::EndedBridges => {
            let ids: Vec<String> =
                select::<One<String>>(c, &retention::ended_bridges(b))?.into_iter().map(|One(id)| id).collect();
            counts.bridges = ids.len() as u64;
            if !ids.is_empty() {
                counts.deposits = execute(c, &retention::deposits_of(&ids)?)? as u64;
            }
        }
        PurgeTable::RejectedDeposits => counts.deposits = execute(c, &retention::rejected_deposits(b))? as u64,
        PurgeTable::Events => {
            let window: Vec<Positioned> = select(c, &retention::events_window(b))?;
            if let (Some(end), more) = older_run(&window, b.horizon_ms, b.limit) {
                counts.webhook_deliveries =
                    execute(c, &retention::ended_deliveries(b.after, end, b.horizon_ms))? as u64;
                counts.events = execute(c, &retention::events(b.after, end, b.horizon_ms))? as u64;
                walked = more.then_some(end);
            }
        }
        PurgeTable::DeliveryAttempts => {
            let window: Vec<Positioned> = select(c, &retention::attempts_window(b))?;
            if let (Some(end), more) = older_run(&window, b.horizon_ms, b.limit) {
                counts.webhook_attempts = execute(c, &retention::attempts(b.after, end, b.horizon_ms))? as u64;
                walked = more.then_some(end);
            }
        }
    }
    Ok(b.purged(counts, walked))
}
