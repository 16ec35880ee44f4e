//! The shared clock, the project clocks, project resets and counters: the area's trait, what it stores, and its
//! SQL for both backends (`sqlite/clocks.rs` and `postgres/clocks.rs` implement the trait with it).

use async_trait::async_trait;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{Counter, StoreResult};
use crate::infra::clock::{ClockSync, ProjectClock};

/// What a project reset deleted ([`ClockStore::reset_project`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResetCounts {
    pub quotes: u64,
    pub bridges: u64,
    pub addresses: u64,
    pub routing_addresses: u64,
    pub deposits: u64,
    pub events: u64,
    /// Delivery-log entries (pending deliveries go with their events).
    pub deliveries: u64,
}

#[async_trait]
pub trait ClockStore: Send + Sync {
    /// Syncs the shared clock (`crate::infra::clock`): keeps `sync.value` if nothing is kept yet, else adds
    /// `sync.advanced_by` to the kept value; keeps the higher floor; returns the kept (value, floor), atomically.
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)>;
    /// The clock of `project`; `start` becomes its clock if it has none yet (the project is first seen now).
    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock>;
    /// Adds `ms` to the clock value of `project` (which has one: [`ClockStore::project_clock`]) unless the value
    /// would pass `limit`; the clock after, or `None` and nothing changed.
    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>>;
    /// Keeps each `(project, generation, floor)` as that project's floor where it is higher and the generation is
    /// still the project's.
    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()>;
    /// Deletes every quote, bridge, deposit address, routing deposit address, deposit, event, pending delivery and
    /// delivery-log entry of `project` and sets its clock to `start` (the next generation), in one transaction.
    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)>;
    /// Reserves the next `count` values of a counter (which starts at 1), atomically and durably: returns the last
    /// of them (the block is `last - count + 1 ..= last`); no later reservation, by any instance, gets any of them.
    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64>;
}

/// The clock a sync keeps: `sync.value` when nothing was kept, else the kept value plus `sync.advanced_by`; the
/// higher floor.
pub(super) fn synced(kept: Option<(i64, i64)>, sync: ClockSync) -> (i64, i64) {
    match kept {
        None => (sync.value, sync.floor),
        Some((value, floor)) => (value.saturating_add(sync.advanced_by), floor.max(sync.floor)),
    }
}

/// A project's clock (`projects`).
const CLOCK_COLUMNS: &str = "clock_value, clock_floor, generation";

impl FromRow for ProjectClock {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(ProjectClock { value: row.at(0)?, floor: row.at(1)?, generation: row.at(2)? })
    }
}

pub(super) fn project_clock(project: &str) -> Query {
    query!("SELECT {CLOCK_COLUMNS} FROM projects WHERE id = ?1", project)
}

/// Gives a project first seen now its clock, unless it has one.
pub(super) fn first_seen(project: &str, start: &ProjectClock) -> Query {
    query!(
        "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
         ON CONFLICT (id) DO NOTHING",
        project,
        start.floor,
        start.value,
    )
}

/// Advances a project's clock unless it would pass the limit: the clock after, or no row.
pub(super) fn advance(project: &str, ms: i64, limit: i64) -> Query {
    query!(
        "UPDATE projects SET clock_value = clock_value + ?2 WHERE id = ?1 AND clock_value <= ?3
         RETURNING {CLOCK_COLUMNS}",
        project,
        ms,
        limit,
    )
}

/// Keeps one project's floor where it is higher and the generation is still the project's.
pub(super) fn keep_floor(project: &str, generation: i64, floor: i64) -> Query {
    query!(
        "UPDATE projects SET clock_floor = ?3 WHERE id = ?1 AND generation = ?2 AND clock_floor < ?3",
        project,
        generation,
        floor,
    )
}

/// Sets a project's clock to `start` as its next generation (first, so that concurrent resets of one project
/// take turns): returns the generation.
pub(super) fn next_generation(project: &str, start: &ProjectClock) -> Query {
    query!(
        "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
         ON CONFLICT (id) DO UPDATE SET clock_value = ?3, clock_floor = ?2, generation = projects.generation + 1
         RETURNING generation",
        project,
        start.floor,
        start.value,
    )
}

/// What a reset deletes, in order: the deposits into the project's addresses, then its quotes, bridges,
/// addresses, routing addresses, events, delivery log and (uncounted) outbox.
pub(super) fn reset_deletes(project: &str) -> [Query; 8] {
    [
        query!(
            "DELETE FROM deposits WHERE EXISTS (SELECT 1 FROM addresses a WHERE a.project = ?1
               AND a.deposit_chain = deposits.deposit_chain AND a.deposit_address = deposits.deposit_address)
             OR EXISTS (SELECT 1 FROM routing_addresses r WHERE r.project = ?1
               AND r.deposit_chain = deposits.deposit_chain AND r.deposit_address = deposits.deposit_address)",
            project,
        ),
        query!("DELETE FROM quotes WHERE project = ?1", project),
        query!("DELETE FROM bridges WHERE project = ?1", project),
        query!("DELETE FROM addresses WHERE project = ?1", project),
        query!("DELETE FROM routing_addresses WHERE project = ?1", project),
        query!("DELETE FROM events WHERE project = ?1", project),
        query!("DELETE FROM delivery_attempts WHERE project = ?1", project),
        query!("DELETE FROM outbox WHERE project = ?1", project),
    ]
}

/// What the deletes of [`reset_deletes`] counted, in their order.
pub(super) fn reset_counts(n: [u64; 8]) -> ResetCounts {
    let [deposits, quotes, bridges, addresses, routing_addresses, events, deliveries, _outbox] = n;
    ResetCounts { quotes, bridges, addresses, routing_addresses, deposits, events, deliveries }
}

/// Reserves the next `count` values of a counter: the last of them.
pub(super) fn reserve(counter: Counter, count: u64) -> Query {
    query!(
        "INSERT INTO meta (key, value) VALUES (?1, CAST(?2 AS TEXT))
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS BIGINT) + ?2 AS TEXT) RETURNING value",
        format!("counter:{}", counter.name()),
        count as i64,
    )
}
