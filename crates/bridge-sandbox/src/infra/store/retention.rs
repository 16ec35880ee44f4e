//! Retention (`serve --retain`): deleting what is older than the retention, in small batches, and how far behind
//! that is: the area's trait, what it reports, and its SQL for both backends (`sqlite/retention.rs` and
//! `postgres/retention.rs` run each batch as one write: SQLite's writer thread, one short PostgreSQL transaction).
//!
//! **Age is wall-clock time on the store's clock**: every row a purge may delete keeps `stored_ms`, the time of
//! its last write as the store computes it (`wall_ms()` of [`super::sql`]: SQLite's host clock, the PostgreSQL
//! server's clock, the one clock every instance on a database shares), and a purge deletes rows whose `stored_ms`
//! is before its horizon, read from the same clock ([`RetentionStore::wall_ms`]). Not the projects' clocks: those
//! are simulated time, which a project moves years ahead to test expiries (its history would vanish mid-test) and
//! which `--clock manual` never moves (nothing would ever go); disk grows with wall time.
//!
//! What goes, each by its own time (docs/operations.md, "Retention"):
//!
//! * quotes, committed or not, by when they were made (a quote older than the retention cannot be committed: it
//!   is unknown, like an expired one);
//! * bridges whose lifecycle has ended (`bridges.ended`: [`crate::domain::records::StoredBridge::has_ended`]), by
//!   their last change, with the deposits that started them; a bridge still under way is never purged;
//! * deposits that started no bridge (rejected), by when they were made; deposit addresses and routing addresses
//!   are kept (long-lived configuration, like API keys);
//! * events, by when they were appended, with their webhook deliveries once those have ended (delivered or given
//!   up): an event whose delivery is still pending is kept, with its delivery, until the delivery ends;
//! * delivery attempts, by when they were logged, except those of a delivery still pending (a recovery reads them).
//!
//! Batches: events and delivery attempts are walked by position (their primary keys: no index of their own; a
//! batch reads the next positions and deletes the oldest run of them), the others oldest first by an index on
//! `stored_ms`. Each batch checks every row's own time, so nothing younger than the horizon is deleted whatever
//! order rows were written in; the walk by position only stops early at a younger row (what lies past it goes in a
//! later pass).

use async_trait::async_trait;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::StoreResult;

/// Where a purge batch deletes. Each is walked oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeTable {
    /// Ended bridges, by the time of their last change, with the deposits that started them.
    EndedBridges,
    /// Deposits into (routing) deposit addresses that started no bridge, by their time.
    RejectedDeposits,
    /// Quotes, committed or not, by the time they were made.
    Quotes,
    /// Events by feed position, with their webhook deliveries once those have ended.
    Events,
    /// Webhook delivery attempts by position, except those of a delivery still pending.
    DeliveryAttempts,
}

impl PurgeTable {
    /// Every table, in the order a pass purges them (a bridge's deposits with it, before the deposits on their own).
    pub const ALL: [Self; 5] =
        [Self::EndedBridges, Self::RejectedDeposits, Self::Quotes, Self::Events, Self::DeliveryAttempts];
}

/// One batch of a purge: at most `limit` rows of `table` stored before `horizon_ms` (the store's clock); the tables
/// walked by position (events, delivery attempts) start after position `after` (0: from the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeBatch {
    pub table: PurgeTable,
    pub horizon_ms: i64,
    pub after: i64,
    pub limit: u64,
}

impl PurgeBatch {
    /// What a batch that deleted `counts` reports: where the next batch of its table starts. A table taken oldest
    /// first by time goes on while its batches are full (from its start: what was deleted is gone); a table walked
    /// by position, from where the walk stopped (`walked`).
    pub(super) fn purged(&self, counts: PurgeCounts, walked: Option<i64>) -> Purged {
        let full = |n: u64| (n == self.limit).then_some(0);
        let next = match self.table {
            PurgeTable::Quotes => full(counts.quotes),
            PurgeTable::EndedBridges => full(counts.bridges),
            PurgeTable::RejectedDeposits => full(counts.deposits),
            PurgeTable::Events | PurgeTable::DeliveryAttempts => walked,
        };
        Purged { counts, next }
    }
}

/// What a purge deleted, counted apart (`bridge_sandbox_retention_purged_total{kind}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeCounts {
    pub quotes: u64,
    pub bridges: u64,
    pub deposits: u64,
    pub events: u64,
    /// Webhook deliveries (outbox rows), delivered or given up, deleted with their events.
    pub webhook_deliveries: u64,
    pub webhook_attempts: u64,
}

impl PurgeCounts {
    /// Each count with its name (the metric's `kind` label).
    pub fn by_kind(&self) -> [(&'static str, u64); 6] {
        [
            ("quotes", self.quotes),
            ("bridges", self.bridges),
            ("deposits", self.deposits),
            ("events", self.events),
            ("webhook_deliveries", self.webhook_deliveries),
            ("webhook_attempts", self.webhook_attempts),
        ]
    }

    pub fn total(&self) -> u64 {
        self.by_kind().iter().map(|(_, n)| n).sum()
    }

    /// Both counts added.
    pub fn add(&mut self, other: &Self) {
        self.quotes += other.quotes;
        self.bridges += other.bridges;
        self.deposits += other.deposits;
        self.events += other.events;
        self.webhook_deliveries += other.webhook_deliveries;
        self.webhook_attempts += other.webhook_attempts;
    }
}

/// What one batch deleted, and where the next batch of its table starts (`None`: nothing of the table is left
/// before the horizon, or what is left waits for a later pass).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    pub counts: PurgeCounts,
    pub next: Option<i64>,
}

/// How far behind the purge is: the store's clock now, and the oldest `stored_ms` among the rows a purge deletes
/// once they are past its horizon (`None`: there are none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionBacklog {
    pub now_ms: i64,
    pub oldest_ms: Option<i64>,
}

impl RetentionBacklog {
    /// How long the oldest purgeable row has been past a horizon `keep_ms` behind now (0 when none is).
    pub fn lag_ms(&self, keep_ms: i64) -> i64 {
        self.oldest_ms.map_or(0, |oldest| self.now_ms.saturating_sub(keep_ms).saturating_sub(oldest).max(0))
    }
}

#[async_trait]
pub trait RetentionStore: Send + Sync {
    /// The store's wall clock now (ms since the Unix epoch): the clock rows are stamped with (`stored_ms`) and a
    /// purge's horizon is measured on.
    async fn wall_ms(&self) -> StoreResult<i64>;
    /// Deletes one batch, in one write; `None` when another instance's purge holds the store's purge lock (nothing
    /// done: PostgreSQL, where several instances share the store, purges from one at a time).
    async fn purge(&self, batch: &PurgeBatch) -> StoreResult<Option<Purged>>;
    /// The store's clock and the oldest purgeable row's time, for the metrics.
    async fn retention_backlog(&self) -> StoreResult<RetentionBacklog>;
}

/// A row of a walk by position: its position and its time (`NULL`: a row never stamped, never purged).
pub(super) struct Positioned(pub(super) i64, pub(super) Option<i64>);

impl FromRow for Positioned {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(Positioned(row.at(0)?, row.at(1)?))
    }
}

impl FromRow for RetentionBacklog {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let oldest = (1..=5).map(|i| row.at::<Option<i64>>(i)).collect::<StoreResult<Vec<_>>>()?;
        Ok(RetentionBacklog { now_ms: row.at(0)?, oldest_ms: oldest.into_iter().flatten().min() })
    }
}

/// Where the run of rows older than `horizon_ms` at the start of a window read by position ends (`None`: the first
/// row is not older), and whether the walk goes on past it (the whole window was older, and full).
pub(super) fn older_run(window: &[Positioned], horizon_ms: i64, limit: u64) -> (Option<i64>, bool) {
    let run = window.iter().take_while(|Positioned(_, stored)| stored.is_some_and(|t| t < horizon_ms)).count();
    let end = run.checked_sub(1).map(|last| window[last].0);
    (end, run == window.len() && window.len() as u64 == limit)
}

pub(super) fn wall_ms() -> Query {
    query!("SELECT wall_ms()")
}

/// The quotes a batch deletes.
pub(super) fn quotes(b: &PurgeBatch) -> Query {
    query!(
        "DELETE FROM quotes WHERE id IN (SELECT id FROM quotes WHERE stored_ms < ?1 ORDER BY stored_ms LIMIT ?2
           FOR UPDATE SKIP LOCKED)",
        b.horizon_ms,
        b.limit as i64,
    )
}

/// The ended bridges a batch deletes: their ids. A bridge a writer holds is skipped (PostgreSQL), and one changed
/// since the batch read it is deleted only if it is still ended and still older.
pub(super) fn ended_bridges(b: &PurgeBatch) -> Query {
    query!(
        "DELETE FROM bridges WHERE id IN (SELECT id FROM bridges WHERE ended AND stored_ms < ?1 ORDER BY stored_ms
           LIMIT ?2 FOR UPDATE SKIP LOCKED) RETURNING id",
        b.horizon_ms,
        b.limit as i64,
    )
}

/// The deposits that started the bridges `ids` (a JSON array of ids).
pub(super) fn deposits_of(ids: &[String]) -> StoreResult<Query> {
    Ok(query!(
        "DELETE FROM deposits WHERE bridge_id IN (SELECT value FROM jsonb_array_elements_text(?1::jsonb))",
        serde_json::to_string(ids)?,
    ))
}

/// The deposits that started no bridge a batch deletes.
pub(super) fn rejected_deposits(b: &PurgeBatch) -> Query {
    query!(
        "DELETE FROM deposits WHERE seq IN (SELECT seq FROM deposits WHERE bridge_id IS NULL AND stored_ms < ?1
           ORDER BY stored_ms LIMIT ?2)",
        b.horizon_ms,
        b.limit as i64,
    )
}

/// The next events of the feed after the batch's position, with their times.
pub(super) fn events_window(b: &PurgeBatch) -> Query {
    query!("SELECT seq, stored_ms FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2", b.after, b.limit as i64)
}

/// The ended deliveries (delivered or given up) of the older events at positions `after < seq <= end`. A delivery
/// a resend makes due meanwhile is no longer ended, and stays (PostgreSQL checks the row again once its writer is
/// done).
pub(super) fn ended_deliveries(after: i64, end: i64, horizon_ms: i64) -> Query {
    query!(
        "DELETE FROM outbox WHERE next_ms IS NULL AND event_id IN (SELECT id FROM events
           WHERE seq > ?1 AND seq <= ?2 AND stored_ms < ?3)",
        after,
        end,
        horizon_ms,
    )
}

/// The older events at positions `after < seq <= end` that have no delivery left (after [`ended_deliveries`]: a
/// pending delivery keeps its event).
pub(super) fn events(after: i64, end: i64, horizon_ms: i64) -> Query {
    query!(
        "DELETE FROM events WHERE seq > ?1 AND seq <= ?2 AND stored_ms < ?3
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = events.id)",
        after,
        end,
        horizon_ms,
    )
}

/// The next delivery attempts after the batch's position, with their times.
pub(super) fn attempts_window(b: &PurgeBatch) -> Query {
    query!("SELECT id, stored_ms FROM delivery_attempts WHERE id > ?1 ORDER BY id LIMIT ?2", b.after, b.limit as i64)
}

/// The older attempts at positions `after < id <= end`, except those of a delivery still pending.
pub(super) fn attempts(after: i64, end: i64, horizon_ms: i64) -> Query {
    query!(
        "DELETE FROM delivery_attempts WHERE id > ?1 AND id <= ?2 AND stored_ms < ?3
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = delivery_attempts.outbox_id AND o.next_ms IS NOT NULL)",
        after,
        end,
        horizon_ms,
    )
}

/// The store's clock, and the oldest time of each kind of row a purge deletes once it is past the horizon (one
/// index seek each: the first event and attempt by position that no pending delivery keeps).
pub(super) fn backlog() -> Query {
    query!(
        "SELECT wall_ms(),
                (SELECT min(stored_ms) FROM quotes),
                (SELECT min(stored_ms) FROM bridges WHERE ended),
                (SELECT min(stored_ms) FROM deposits WHERE bridge_id IS NULL),
                (SELECT e.stored_ms FROM events e WHERE NOT EXISTS (SELECT 1 FROM outbox o
                   WHERE o.event_id = e.id AND o.next_ms IS NOT NULL) ORDER BY e.seq LIMIT 1),
                (SELECT a.stored_ms FROM delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM outbox o
                   WHERE o.id = a.outbox_id AND o.next_ms IS NOT NULL) ORDER BY a.id LIMIT 1)"
    )
}

#[cfg(test)]
mod tests {
    use super::{older_run, Positioned, RetentionBacklog};

    #[test]
    fn a_walk_deletes_the_older_run_and_goes_on_only_past_a_full_older_window() {
        let w = |rows: &[(i64, Option<i64>)]| rows.iter().map(|&(p, t)| Positioned(p, t)).collect::<Vec<_>>();
        assert_eq!(older_run(&w(&[(3, Some(5)), (4, Some(9)), (7, Some(10))]), 10, 3), (Some(4), false));
        assert_eq!(older_run(&w(&[(3, Some(5)), (4, Some(9))]), 10, 2), (Some(4), true), "full and older: go on");
        assert_eq!(older_run(&w(&[(3, Some(5)), (4, Some(9))]), 10, 3), (Some(4), false), "the end of the table");
        assert_eq!(older_run(&w(&[(3, Some(10))]), 10, 3), (None, false), "the horizon itself is not older");
        assert_eq!(older_run(&w(&[(3, None), (4, Some(1))]), 10, 2), (None, false), "never stamped: kept");
        assert_eq!(older_run(&[], 10, 3), (None, false));
    }

    #[test]
    fn the_lag_is_how_long_the_oldest_purgeable_row_has_been_past_the_horizon() {
        let backlog = |oldest| RetentionBacklog { now_ms: 10_000, oldest_ms: oldest };
        assert_eq!(backlog(Some(1_000)).lag_ms(2_000), 7_000);
        assert_eq!(backlog(Some(9_000)).lag_ms(2_000), 0, "younger than the retention");
        assert_eq!(backlog(None).lag_ms(2_000), 0);
    }
}
