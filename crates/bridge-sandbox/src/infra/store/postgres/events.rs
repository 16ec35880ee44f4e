//! The event feed: this area's part of [`PgStore`] (the [`crate::infra::store::Store`] methods, forwarded by
//! `store_by_area!`).

use super::*;
use crate::infra::store::{Areas, NewEvent, StoreResult};
use bridge_contract::{Encoded, WebhookEvent};
use sqlx_core::query::query;

impl Areas<'_, PgStore> {
    pub(super) async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        commit_with_events(self.pool.begin().await?, events).await
    }

    pub(super) async fn events(
        &self,
        project: &str,
        since_ms: i64,
        after_seq: i64,
        limit: u64,
    ) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>> {
        // As on SQLite: the time is a filter, the position is the order; the walk starts at the cursor or at the
        // first position whose watermark reaches the time, whichever is later.
        let sql = format!(
            "SELECT {FEED_COLUMNS} FROM events WHERE project = $1 AND created_ms >= $3 AND seq > GREATEST($2, COALESCE(
                 (SELECT seq FROM events WHERE project = $1 AND latest_ms >= $3 ORDER BY latest_ms, seq LIMIT 1),
                 9223372036854775807) - 1)
             ORDER BY seq LIMIT $4"
        );
        self.select(query(&sql).bind(project).bind(after_seq).bind(since_ms).bind(limit as i64)).await
    }
}
