//! Bridges: saving, the lifecycle's due bridges, history and lookups by transaction hash: this area's part of
//! [`SqliteStore`] (the [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{
    history_order, Areas, HistoryCursorQuery, HistoryQuery, NewEvent, StoreResult, StoredBridge,
};
use bridge_contract::{BridgeRecord, Encoded};
use rusqlite::{params, OptionalExtension};

impl Areas<'_, SqliteStore> {
    pub(super) async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let sql = format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE id = ?1 AND project = ?2");
            select_first(c, &sql, params![id, project])
        })
        .await
    }

    pub(super) async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let mut stmt = c.prepare_cached("SELECT record FROM bridges WHERE id = ?1 AND project = ?2")?;
            let record: Option<String> = stmt.query_row(params![id, project], |r| r.get(0)).optional()?;
            Ok(record.map(Encoded::from_stored))
        })
        .await
    }

    pub(super) async fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let (b, events) = (bridge.clone(), events.to_vec());
        self.run(move |c| {
            let text = BridgeText::of(&b)?;
            let saved = c
                .prepare_cached(
                    "UPDATE bridges SET record = ?3, rejections = ?4, state = ?5, updated_ms = ?6, next_ms = ?7,
                       plan = ?8, version = version + 1
                     WHERE id = ?1 AND version = ?2",
                )?
                .execute(params![
                    b.id,
                    b.version,
                    text.record,
                    text.rejections,
                    text.state,
                    b.updated_ms,
                    b.next_ms,
                    text.plan
                ])?;
            if saved == 0 {
                return Ok(false); // nothing written
            }
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }

    pub(super) async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        self.run(move |c| {
            // Each project's due bridges at its own time: one probe of (project, next_ms) per project.
            let columns = BRIDGE_COLUMNS.split(", ").map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ");
            let sql = format!(
                "SELECT {columns} FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?1, p.clock_floor)
                 ORDER BY b.next_ms, b.id LIMIT ?2"
            );
            select(c, &sql, params![base_ms, limit as i64])
        })
        .await
    }

    pub(super) async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let (project, q) = (project.to_owned(), q.clone());
        self.read(move |c| {
            let state = q.state.map(|s| s.as_str());
            let filter = if state.is_some() { "AND state = ?2" } else { "AND ?2 IS NULL" };
            let total: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM bridges WHERE project = ?1 {filter}"),
                params![project, state],
                |r| r.get(0),
            )?;
            let (column, direction, _) = history_order(q.sort_by, q.direction);
            let mut stmt = c.prepare(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 {filter} ORDER BY {column} {direction}, id {direction} LIMIT ?3 OFFSET ?4"
            ))?;
            let rows = stmt.query(params![project, state, q.limit as i64, q.offset as i64])?;
            Ok((total as u64, collect(rows)?))
        })
        .await
    }

    pub(super) async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        let (project, q) = (project.to_owned(), q.clone());
        self.read(move |c| {
            let state = q.state.map(|s| s.as_str());
            let (column, direction, beyond) = history_order(q.sort_by, q.direction);
            let (after_key, after_id) = q.after_parts();
            let mut stmt = c.prepare(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 AND (?2 IS NULL OR state = ?2)
                   AND (?3 IS NULL OR ({column}, id) {beyond} (?3, ?4))
                 ORDER BY {column} {direction}, id {direction} LIMIT ?5"
            ))?;
            let rows = stmt.query(params![project, state, after_key, after_id, q.limit as i64])?;
            collect(rows)
        })
        .await
    }

    pub(super) async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let found = "json_extract(record, '$.depositTxHash') = ?2
            OR EXISTS (SELECT 1 FROM json_each(rejections) WHERE json_extract(value, '$.depositTxHash') = ?2)";
        self.bridges_by_hash(project, tx_hash, found).await
    }

    pub(super) async fn bridges_by_withdraw_hash(
        &self,
        project: &str,
        tx_hash: &str,
    ) -> StoreResult<Vec<StoredBridge>> {
        self.bridges_by_hash(project, tx_hash, "json_extract(record, '$.withdrawTxHash') = ?2").await
    }

    /// A project's bridges for which `found` holds of the transaction hash `?2`, oldest first.
    async fn bridges_by_hash(&self, project: &str, tx_hash: &str, found: &str) -> StoreResult<Vec<StoredBridge>> {
        let sql =
            format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 AND ({found}) ORDER BY created_ms, id");
        let (project, hash) = (project.to_owned(), tx_hash.to_owned());
        self.read(move |c| select(c, &sql, params![project, hash])).await
    }
}
