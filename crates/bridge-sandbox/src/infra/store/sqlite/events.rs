//! The event feed: this area's part of [`SqliteStore`] (the [`crate::infra::store::Store`] methods, forwarded by
//! `store_by_area!`).

use super::*;
use crate::infra::store::{Areas, NewEvent, StoreResult};
use bridge_contract::{Encoded, WebhookEvent};
use rusqlite::params;

impl Areas<'_, SqliteStore> {
    pub(super) async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        let events = events.to_vec();
        self.run(move |c| {
            insert_events(c, &events)?;
            Ok(())
        })
        .await
    }

    pub(super) async fn events(
        &self,
        project: &str,
        since_ms: i64,
        after_seq: i64,
        limit: u64,
    ) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>> {
        let project = project.to_owned();
        self.read_now(move |c| {
            // Positions are in commit order, which need not be time order (two requests may take their times in
            // one order and commit in the other; instances' clocks agree only up to a tick): the time is a filter.
            // The walk along the (project, seq) index starts at the cursor or at the first position whose
            // watermark (`latest_ms`, never decreasing along the feed) reaches `since_ms`, whichever is later: no
            // event at or after `since_ms` comes before that position, and finding it is one index seek, so a
            // page costs O(page) however many events come before `since_ms`.
            let sql = format!(
                "SELECT {FEED_COLUMNS} FROM events INDEXED BY events_by_project
                 WHERE project = ?1 AND created_ms >= ?3 AND seq > max(?2, coalesce(
                     (SELECT seq FROM events INDEXED BY events_by_latest
                      WHERE project = ?1 AND latest_ms >= ?3 ORDER BY latest_ms, seq LIMIT 1),
                     9223372036854775807) - 1)
                 ORDER BY seq LIMIT ?4"
            );
            select(c, &sql, params![project, after_seq, since_ms, limit as i64])
        })
        .await
    }
}
