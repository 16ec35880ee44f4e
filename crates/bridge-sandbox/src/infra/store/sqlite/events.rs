//! [`EventStore`] on SQLite: positions are `events.seq`, in commit order (one writer: `super::insert_events`).

use super::{insert_events, select, SqliteStore};
use crate::infra::store::events::{self, EventStore, FeedEvents};
use crate::infra::store::{NewEvent, StoreResult};
use async_trait::async_trait;

#[async_trait]
impl EventStore for SqliteStore {
    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        let events = events.to_vec();
        self.run(move |c| insert_events(c, &events)).await
    }

    async fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> StoreResult<FeedEvents> {
        let page = events::page(project, since_ms, after_seq, limit);
        self.read_now(move |c| select(c, &page)).await
    }
}
