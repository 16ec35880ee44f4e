//! What operating the sandbox asks of the store (readiness, the metrics' backlog, leases at shutdown): the area's
//! trait, what it reports, and its SQL for both backends (`sqlite/health.rs` and `postgres/health.rs`).

use async_trait::async_trait;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::StoreResult;

/// What the store holds that is waiting (for the metrics): the whole store, every instance's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Outbox rows neither delivered nor given up.
    pub outbox_pending: u64,
    /// How late (ms, each on its own project's clock) the latest of the deliveries that are due is.
    pub oldest_due_delivery_late_ms: Option<i64>,
    /// How late (ms, each on its own project's clock) the latest of the lifecycle steps that are due is.
    pub oldest_due_step_late_ms: Option<i64>,
}

/// How far the store's schema is migrated: the migrations this build knows, and how many of them are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaStatus {
    pub known: usize,
    pub applied: usize,
}

#[async_trait]
pub trait HealthStore: Send + Sync {
    /// One round trip to the store (readiness).
    async fn ping(&self) -> StoreResult<()>;
    /// How far the schema is migrated (readiness: every migration this build knows is applied).
    async fn schema_status(&self) -> StoreResult<SchemaStatus>;
    /// The outbox and lifecycle backlog, for the metrics: what is due is measured against each project's own
    /// clock at `base_ms` ([`crate::infra::clock::base_ms`]), as the lifecycle pass and the deliverer take it.
    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog>;
    /// Hands back the leases this store handle holds (deliveries taken by
    /// [`super::DeliveryStore::take_due_deliveries`] and bridges taken by [`super::BridgeStore::due_bridges`] that
    /// were not finished): an instance that shuts down calls it last, so other instances take them at once instead
    /// of when the lease runs out. Leases of other instances stay.
    async fn release_own_leases(&self) -> StoreResult<()>;
}

/// The backlog: one row of three columns, the outbox rows pending (`COUNT(*)`) and how late the latest due
/// delivery and the latest due lifecycle step are (`MAX(...)`, `NULL` when none is due).
impl FromRow for Backlog {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(Backlog {
            outbox_pending: row.at::<i64>(0)? as u64,
            oldest_due_delivery_late_ms: row.at(1)?,
            oldest_due_step_late_ms: row.at(2)?,
        })
    }
}

pub(super) fn ping() -> Query {
    query!("SELECT 1")
}

pub(super) fn backlog(base_ms: i64) -> Query {
    query!(
        "SELECT (SELECT COUNT(*) FROM outbox WHERE next_ms IS NOT NULL),
                (SELECT MAX(greatest(p.clock_value + ?1, p.clock_floor) - o.next_ms)
                 FROM projects p JOIN outbox o ON o.project = p.id
                 WHERE o.next_ms IS NOT NULL AND o.next_ms <= greatest(p.clock_value + ?1, p.clock_floor)),
                (SELECT MAX(greatest(p.clock_value + ?1, p.clock_floor) - b.next_ms)
                 FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= greatest(p.clock_value + ?1, p.clock_floor))",
        base_ms,
    )
}
