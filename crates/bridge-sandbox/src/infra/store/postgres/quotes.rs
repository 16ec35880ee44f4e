//! Quotes: this area's part of [`PgStore`] (the [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{to_json, Areas, NewEvent, StoreResult, StoredBridge, StoredQuote};
use sqlx_core::query::query;

impl Areas<'_, PgStore> {
    pub(super) async fn insert_quote(&self, q: &StoredQuote) -> StoreResult<()> {
        query(
            "INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed) VALUES ($1, $2, $3, $4, $5, $6, FALSE)",
        )
        .bind(&q.id)
        .bind(&q.project)
        .bind(to_json(&q.response)?)
        .bind(q.mode.as_str())
        .bind(q.created_ms)
        .bind(q.expires_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        let sql = format!("SELECT {QUOTE_COLUMNS} FROM quotes WHERE id = $1 AND project = $2");
        self.select_first(query(&sql).bind(id).bind(project)).await
    }

    pub(super) async fn commit_quote(
        &self,
        quote_id: &str,
        bridge: &StoredBridge,
        events: &[NewEvent],
    ) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let changed = query("UPDATE quotes SET committed = TRUE WHERE id = $1 AND NOT committed")
            .bind(quote_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        upsert_bridge(&mut tx, bridge).await?;
        commit_with_events(tx, events).await?;
        Ok(true)
    }
}
