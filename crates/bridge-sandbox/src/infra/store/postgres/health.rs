//! [`HealthStore`] on PostgreSQL.

use async_trait::async_trait;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

use super::{commit, select_one, PgStore};
use crate::infra::store::health::{self, Backlog, HealthStore, SchemaStatus};
use crate::infra::store::rows::One;
use crate::infra::store::{migrations, StoreResult};

#[async_trait]
impl HealthStore for PgStore {
    async fn ping(&self) -> StoreResult<()> {
        select_one::<One<i32>>(&self.pool, health::ping()).await.map(drop)
    }

    async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        let applied: Vec<i64> =
            query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&self.pool).await?;
        let known = migrations::postgres();
        let applied = known.iter().filter(|m| applied.contains(&m.version)).count();
        Ok(SchemaStatus { known: known.len(), applied })
    }

    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        select_one(&self.pool, health::backlog(base_ms)).await
    }

    /// Clears the leases taken under this handle's name that are still held; others' stay.
    async fn release_own_leases(&self) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query(
            "UPDATE outbox SET leased_until = NULL, leased_by = NULL WHERE leased_by = $1 AND leased_until IS NOT NULL",
        )
        .bind(&*self.instance)
        .execute(&mut *tx)
        .await?;
        query("UPDATE bridges SET leased_until = NULL, leased_by = NULL WHERE leased_by = $1 AND leased_until IS NOT NULL")
            .bind(&*self.instance)
            .execute(&mut *tx)
            .await?;
        commit(tx).await
    }
}
