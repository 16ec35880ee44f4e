//! What operating the sandbox asks of the store (readiness, the metrics' backlog, leases at shutdown): this area's
//! part of [`PgStore`] (the [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{Areas, Backlog, SchemaStatus, StoreResult};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

impl Areas<'_, PgStore> {
    pub(super) async fn ping(&self) -> StoreResult<()> {
        query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub(super) async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        let applied: Vec<i64> =
            query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&self.pool).await?;
        let known = MIGRATIONS.len();
        let applied = MIGRATIONS.iter().filter(|(version, _, _)| applied.contains(version)).count();
        Ok(SchemaStatus { known, applied })
    }

    pub(super) async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        let row = query(
            "SELECT (SELECT COUNT(*) FROM outbox WHERE next_ms IS NOT NULL),
                    (SELECT MAX(GREATEST(p.clock_value + $1, p.clock_floor) - o.next_ms)
                     FROM projects p JOIN outbox o ON o.project = p.id
                     WHERE o.next_ms IS NOT NULL AND o.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)),
                    (SELECT MAX(GREATEST(p.clock_value + $1, p.clock_floor) - b.next_ms)
                     FROM projects p JOIN bridges b ON b.project = p.id
                     WHERE b.next_ms IS NOT NULL AND b.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor))",
        )
        .bind(base_ms)
        .fetch_one(&self.pool)
        .await?;
        Backlog::from_row(&row)
    }

    /// Clears the leases taken under this handle's name that are still held; others' stay.
    pub(super) async fn release_own_leases(&self) -> StoreResult<()> {
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
