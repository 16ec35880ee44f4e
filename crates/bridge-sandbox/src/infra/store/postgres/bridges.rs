//! Bridges: saving, the lifecycle's due bridges, history and lookups by transaction hash: this area's part of
//! [`PgStore`] (the [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{
    history_order, Areas, HistoryCursorQuery, HistoryQuery, NewEvent, StoreResult, StoredBridge,
};
use bridge_contract::{BridgeRecord, Encoded};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

impl Areas<'_, PgStore> {
    pub(super) async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        let sql = format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE id = $1 AND project = $2");
        self.select_first(query(&sql).bind(id).bind(project)).await
    }

    pub(super) async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let record: Option<String> = query_scalar("SELECT record FROM bridges WHERE id = $1 AND project = $2")
            .bind(id)
            .bind(project)
            .fetch_optional(&self.pool)
            .await?;
        Ok(record.map(Encoded::from_stored))
    }

    pub(super) async fn save_bridge(&self, b: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let text = BridgeText::of(b)?;
        let saved = query(
            "UPDATE bridges SET record = $3, rejections = $4, state = $5, updated_ms = $6, next_ms = $7, plan = $8,
               leased_until = NULL, version = version + 1
             WHERE id = $1 AND version = $2",
        )
        .bind(&b.id)
        .bind(b.version)
        .bind(text.record)
        .bind(text.rejections)
        .bind(text.state)
        .bind(b.updated_ms)
        .bind(b.next_ms)
        .bind(text.plan)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if saved == 0 {
            return Ok(false); // the transaction rolls back when dropped: nothing written
        }
        commit_with_events(tx, events).await?;
        Ok(true)
    }

    /// Takes the due bridges for this instance's lifecycle pass: each is leased (wall clock, [`BRIDGE_LEASE_MS`])
    /// so that no other instance steps it meanwhile; saving the bridge ends the lease, and the lease of an
    /// instance that died mid-pass runs out, so another instance steps the bridge.
    pub(super) async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        let wall = crate::infra::clock::wall_ms();
        // Each project's due bridges at its own time: one probe of (project, next_ms) per project, one statement.
        let sql = format!(
            "UPDATE bridges SET leased_until = $3, leased_by = $5 WHERE id IN (
                 SELECT b.id FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)
                   AND (b.leased_until IS NULL OR b.leased_until <= $4)
                 ORDER BY b.next_ms, b.id LIMIT $2 FOR UPDATE OF b SKIP LOCKED)
             RETURNING {BRIDGE_COLUMNS}"
        );
        let leased = query(&sql).bind(base_ms).bind(limit as i64).bind(wall + BRIDGE_LEASE_MS).bind(wall);
        let mut due: Vec<StoredBridge> = self.select(leased.bind(&*self.instance)).await?;
        due.sort_by(|a, b| (a.next_ms, &a.id).cmp(&(b.next_ms, &b.id)));
        Ok(due)
    }

    pub(super) async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let state = q.state.map(|s| s.as_str());
        let total: i64 =
            query_scalar("SELECT COUNT(*) FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)")
                .bind(project)
                .bind(state)
                .fetch_one(&self.pool)
                .await?;
        let (column, direction, _) = history_order(q.sort_by, q.direction);
        let sql = format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)
             ORDER BY {column} {direction}, id {direction} LIMIT $3 OFFSET $4"
        );
        let rows =
            self.select(query(&sql).bind(project).bind(state).bind(q.limit as i64).bind(q.offset as i64)).await?;
        Ok((total as u64, rows))
    }

    pub(super) async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        let state = q.state.map(|s| s.as_str());
        let (column, direction, beyond) = history_order(q.sort_by, q.direction);
        let (after_key, after_id) = q.after_parts();
        let sql = format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)
               AND ($3::bigint IS NULL OR ({column}, id) {beyond} ($3::bigint, $4::text))
             ORDER BY {column} {direction}, id {direction} LIMIT $5"
        );
        self.select(query(&sql).bind(project).bind(state).bind(after_key).bind(after_id).bind(q.limit as i64)).await
    }

    pub(super) async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let found = "(record::jsonb) ->> 'depositTxHash' = $2
            OR EXISTS (SELECT 1 FROM jsonb_array_elements(rejections::jsonb) r WHERE r ->> 'depositTxHash' = $2)";
        self.bridges_by_hash(project, tx_hash, found).await
    }

    pub(super) async fn bridges_by_withdraw_hash(
        &self,
        project: &str,
        tx_hash: &str,
    ) -> StoreResult<Vec<StoredBridge>> {
        self.bridges_by_hash(project, tx_hash, "(record::jsonb) ->> 'withdrawTxHash' = $2").await
    }

    /// A project's bridges for which `found` holds of the transaction hash `$2`, oldest first.
    async fn bridges_by_hash(&self, project: &str, tx_hash: &str, found: &str) -> StoreResult<Vec<StoredBridge>> {
        let sql =
            format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ({found}) ORDER BY created_ms, id");
        self.select(query(&sql).bind(project).bind(tx_hash)).await
    }
}
