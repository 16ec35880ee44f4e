//! [`EventStore`] on PostgreSQL: positions come from `feed_head` in commit order (`super::commit_with_events`).

use super::{commit_with_events, select, PgStore};
use crate::infra::store::events::{self, EventStore, FeedEvents};
use crate::infra::store::{NewEvent, StoreResult};
use async_trait::async_trait;

#[async_trait]
impl EventStore for PgStore {
    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        commit_with_events(self.pool.begin().await?, events).await
    }

    async fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> StoreResult<FeedEvents> {
        select(&self.pool, events::page(project, since_ms, after_seq, limit)).await
    }
}
