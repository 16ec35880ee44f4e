//! [`BridgeStore`] on SQLite. Bridges are not leased here: one process serves a data directory.

use async_trait::async_trait;
use bridge_contract::{BridgeRecord, Encoded};

use super::{execute, insert_events, select, select_first, SqliteStore};
use crate::infra::store::bridges::{self, BridgeStore, HistoryCursorQuery, HistoryQuery, COLUMNS};
use crate::infra::store::rows::One;
use crate::infra::store::sql::{query, Query, Text};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

/// Saves a bridge over the version it was read at ([`bridges::saved_values`]): one row changed, or none.
fn save(b: &StoredBridge) -> StoreResult<Query> {
    let saved = query!(
        "UPDATE bridges SET record = ?3, rejections = ?4, state = ?5, updated_ms = ?6, next_ms = ?7, plan = ?8,
           ended = ?9, stored_ms = wall_ms(), version = version + 1
         WHERE id = ?1 AND version = ?2"
    );
    Ok(Query { args: bridges::saved_values(b)?.into_iter().take(bridges::SAVED_VALUES).collect(), ..saved })
}

#[async_trait]
impl BridgeStore for SqliteStore {
    async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        let bridge = bridges::by_id(project, id);
        self.read_now(move |c| select_first(c, &bridge)).await
    }

    async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let record = bridges::record(project, id);
        let found: Option<One<String>> = self.read_now(move |c| select_first(c, &record)).await?;
        Ok(found.map(|One(record)| Encoded::from_stored(record)))
    }

    async fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let (save, events) = (save(bridge)?, events.to_vec());
        self.run(move |c| {
            if execute(c, &save)? == 0 {
                return Ok(false); // nothing written
            }
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }

    async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        // Each project's due bridges at its own time: one probe of (project, next_ms) per project.
        let due = Query {
            text: Text::Made(format!(
                "SELECT {} FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?1, p.clock_floor)
                 ORDER BY b.next_ms, b.id LIMIT ?2",
                COLUMNS.split(", ").map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ")
            )),
            args: vec![base_ms.into(), (limit as i64).into()],
        };
        self.run(move |c| select(c, &due)).await
    }

    async fn take_due_bridges_of(&self, project: &str, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        // One instance per data directory: nothing to lease; the writer thread orders saves.
        let due = Query {
            text: Text::Made(format!(
                "SELECT {} FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE p.id = ?1 AND b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?2, p.clock_floor)
                 ORDER BY b.next_ms, b.id LIMIT ?3",
                COLUMNS.split(", ").map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ")
            )),
            args: vec![project.into(), base_ms.into(), (limit as i64).into()],
        };
        self.run(move |c| select(c, &due)).await
    }

    async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let (count, page) = (bridges::history_count(project, q), bridges::history_page(project, q));
        self.read(move |c| {
            let One(total) = super::select_one::<One<i64>>(c, &count)?;
            Ok((total as u64, select(c, &page)?))
        })
        .await
    }

    async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        let page = bridges::history_after(project, q);
        self.read(move |c| select(c, &page)).await
    }

    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let found = bridges::by_deposit_hash(project, tx_hash);
        self.read(move |c| select(c, &found)).await
    }

    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let found = bridges::by_withdraw_hash(project, tx_hash);
        self.read(move |c| select(c, &found)).await
    }
}
