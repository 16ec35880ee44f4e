//! [`BridgeStore`] on PostgreSQL: a lifecycle pass leases the bridges it takes, so that one instance steps each.

use async_trait::async_trait;
use bridge_contract::{BridgeRecord, Encoded};

use super::{commit_with_events, execute, select, select_first, select_one, PgStore, BRIDGE_LEASE_MS};
use crate::infra::store::bridges::{self, BridgeStore, HistoryCursorQuery, HistoryQuery, COLUMNS};
use crate::infra::store::rows::One;
use crate::infra::store::sql::{query, Query};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

/// Saves a bridge over the version it was read at and ends its lease ([`bridges::saved_values`]): one row
/// changed, or none.
fn save(b: &StoredBridge) -> StoreResult<Query> {
    let saved = query!(
        "UPDATE bridges SET record = ?3, rejections = ?4, state = ?5, updated_ms = ?6, next_ms = ?7, plan = ?8,
           ended = ?9, stored_ms = wall_ms(), leased_until = NULL, version = version + 1
         WHERE id = ?1 AND version = ?2"
    );
    Ok(Query { args: bridges::saved_values(b)?.into_iter().take(bridges::SAVED_VALUES).collect(), ..saved })
}

#[async_trait]
impl BridgeStore for PgStore {
    async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        select_first(&self.pool, bridges::by_id(project, id)).await
    }

    async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let found: Option<One<String>> = select_first(&self.pool, bridges::record(project, id)).await?;
        Ok(found.map(|One(record)| Encoded::from_stored(record)))
    }

    async fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, save(bridge)?).await? == 0 {
            return Ok(false); // the transaction rolls back when dropped: nothing written
        }
        commit_with_events(tx, events).await?;
        Ok(true)
    }

    /// Takes the due bridges for this instance's lifecycle pass: each is leased (wall clock, [`BRIDGE_LEASE_MS`])
    /// so that no other instance steps it meanwhile; saving the bridge ends the lease, and the lease of an
    /// instance that died mid-pass runs out, so another instance steps the bridge.
    async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        let wall = crate::infra::clock::wall_ms();
        // Each project's due bridges at its own time: one probe of (project, next_ms) per project, one statement.
        let leased = query!(
            "UPDATE bridges SET leased_until = ?3, leased_by = ?5 WHERE id IN (
                 SELECT b.id FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= greatest(p.clock_value + ?1, p.clock_floor)
                   AND (b.leased_until IS NULL OR b.leased_until <= ?4)
                 ORDER BY b.next_ms, b.id LIMIT ?2 FOR UPDATE OF b SKIP LOCKED)
             RETURNING {COLUMNS}",
            base_ms,
            limit as i64,
            wall + BRIDGE_LEASE_MS,
            wall,
            &*self.instance,
        );
        let mut due: Vec<StoredBridge> = select(&self.pool, leased).await?;
        due.sort_by(|a, b| (a.next_ms, &a.id).cmp(&(b.next_ms, &b.id)));
        Ok(due)
    }

    /// One project's due bridges, leased to this instance even when another instance leased them (a lease spares
    /// instances work; versioned saves keep them correct): `FOR UPDATE` without `SKIP LOCKED`, so a bridge being
    /// saved right now is waited for and then judged again on its saved state (PostgreSQL re-checks a locked row).
    async fn take_due_bridges_of(&self, project: &str, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        let wall = crate::infra::clock::wall_ms();
        let taken = query!(
            "UPDATE bridges SET leased_until = ?4, leased_by = ?5 WHERE id IN (
                 SELECT b.id FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE p.id = ?1 AND b.next_ms IS NOT NULL AND b.next_ms <= greatest(p.clock_value + ?2, p.clock_floor)
                 ORDER BY b.next_ms, b.id LIMIT ?3 FOR UPDATE OF b)
             RETURNING {COLUMNS}",
            project,
            base_ms,
            limit as i64,
            wall + BRIDGE_LEASE_MS,
            &*self.instance,
        );
        let mut due: Vec<StoredBridge> = select(&self.pool, taken).await?;
        due.sort_by(|a, b| (a.next_ms, &a.id).cmp(&(b.next_ms, &b.id)));
        Ok(due)
    }

    async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let One(total) = select_one::<One<i64>>(&self.pool, bridges::history_count(project, q)).await?;
        let page = select(&self.pool, bridges::history_page(project, q)).await?;
        Ok((total as u64, page))
    }

    async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        select(&self.pool, bridges::history_after(project, q)).await
    }

    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        select(&self.pool, bridges::by_deposit_hash(project, tx_hash)).await
    }

    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        select(&self.pool, bridges::by_withdraw_hash(project, tx_hash)).await
    }
}
