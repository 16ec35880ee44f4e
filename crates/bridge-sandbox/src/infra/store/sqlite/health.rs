//! What operating the sandbox asks of the store (readiness, the metrics' backlog, leases at shutdown): this area's
//! part of [`SqliteStore`] (the [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{Areas, Backlog, SchemaStatus, StoreError, StoreResult};

impl Areas<'_, SqliteStore> {
    pub(super) async fn ping(&self) -> StoreResult<()> {
        self.read_now(|c| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0)).map(drop)?)).await
    }

    pub(super) async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        self.read_now(|c| {
            let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let pending = migrations().pending_migrations(c).map_err(StoreError::new)?;
            let known = (version + i64::from(pending)).max(0) as usize;
            Ok(SchemaStatus { known, applied: (version.max(0) as usize).min(known) })
        })
        .await
    }

    pub(super) async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        self.read(move |c| {
            let backlog = select_first(
                c,
                "SELECT (SELECT COUNT(*) FROM outbox WHERE next_ms IS NOT NULL),
                            (SELECT MAX(max(p.clock_value + ?1, p.clock_floor) - o.next_ms)
                             FROM projects p JOIN outbox o ON o.project = p.id
                             WHERE o.next_ms IS NOT NULL AND o.next_ms <= max(p.clock_value + ?1, p.clock_floor)),
                            (SELECT MAX(max(p.clock_value + ?1, p.clock_floor) - b.next_ms)
                             FROM projects p JOIN bridges b ON b.project = p.id
                             WHERE b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?1, p.clock_floor))",
                [base_ms],
            )?;
            backlog.ok_or_else(|| StoreError::new(anyhow::anyhow!("the backlog query returned no row")))
        })
        .await
    }

    /// One process serves a data directory: every lease is its own (bridges are not leased on SQLite).
    pub(super) async fn release_own_leases(&self) -> StoreResult<()> {
        self.release_leases().await
    }
}
