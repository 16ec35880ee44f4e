//! [`QuoteStore`] on PostgreSQL.

use async_trait::async_trait;

use super::{commit_with_events, execute, select_first, upsert_bridge, PgStore};
use crate::infra::store::quotes::{self, QuoteStore, StoredQuote};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

#[async_trait]
impl QuoteStore for PgStore {
    async fn insert_quote(&self, quote: &StoredQuote) -> StoreResult<()> {
        execute(&self.pool, quotes::insert(quote)?).await.map(drop)
    }

    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        select_first(&self.pool, quotes::by_id(project, id)).await
    }

    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, quotes::mark_committed(quote_id)).await? == 0 {
            return Ok(false);
        }
        upsert_bridge(&mut tx, bridge).await?;
        commit_with_events(tx, events).await?;
        Ok(true)
    }
}
