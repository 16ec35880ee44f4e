//! Quotes: this area's part of [`SqliteStore`] (the [`crate::infra::store::Store`] methods, forwarded by
//! `store_by_area!`).

use super::*;
use crate::infra::store::{to_json, Areas, NewEvent, StoreResult, StoredBridge, StoredQuote};
use rusqlite::params;

impl Areas<'_, SqliteStore> {
    pub(super) async fn insert_quote(&self, q: &StoredQuote) -> StoreResult<()> {
        let q = q.clone();
        self.run(move |c| {
            c.prepare_cached(
                "INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
            )?
            .execute(params![q.id, q.project, to_json(&q.response)?, q.mode.as_str(), q.created_ms, q.expires_ms],
            )?;
            Ok(())
        })
        .await
    }

    pub(super) async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let sql = format!("SELECT {QUOTE_COLUMNS} FROM quotes WHERE id = ?1 AND project = ?2");
            select_first(c, &sql, params![id, project])
        })
        .await
    }

    pub(super) async fn commit_quote(
        &self,
        quote_id: &str,
        bridge: &StoredBridge,
        events: &[NewEvent],
    ) -> StoreResult<bool> {
        let (quote_id, bridge, events) = (quote_id.to_owned(), bridge.clone(), events.to_vec());
        self.run(move |c| {
            let changed =
                c.execute("UPDATE quotes SET committed = 1 WHERE id = ?1 AND committed = 0", params![quote_id])?;
            if changed == 0 {
                return Ok(false);
            }
            upsert_bridge(c, &bridge)?;
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }
}
