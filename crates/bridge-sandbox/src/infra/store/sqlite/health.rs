//! [`HealthStore`] on SQLite.

use async_trait::async_trait;

use super::{select_one, SqliteStore};
use crate::infra::store::deliveries::DeliveryStore;
use crate::infra::store::health::{self, Backlog, HealthStore, SchemaStatus};
use crate::infra::store::rows::One;
use crate::infra::store::{migrations, StoreError, StoreResult};

#[async_trait]
impl HealthStore for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        let ping = health::ping();
        self.read_now(move |c| select_one::<One<i64>>(c, &ping).map(drop)).await
    }

    async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        self.read_now(|c| {
            let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let pending = migrations::sqlite().pending_migrations(c).map_err(StoreError::new)?;
            let known = (version + i64::from(pending)).max(0) as usize;
            Ok(SchemaStatus { known, applied: (version.max(0) as usize).min(known) })
        })
        .await
    }

    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        let backlog = health::backlog(base_ms);
        self.read(move |c| select_one(c, &backlog)).await
    }

    /// One process serves a data directory: every lease is its own (bridges are not leased on SQLite).
    async fn release_own_leases(&self) -> StoreResult<()> {
        self.release_leases().await
    }
}
