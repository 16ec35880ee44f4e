//! [`QuoteStore`] on SQLite.

use async_trait::async_trait;

use super::{execute, insert_events, select_first, upsert_bridge, SqliteStore};
use crate::infra::store::quotes::{self, QuoteStore, StoredQuote};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

#[async_trait]
impl QuoteStore for SqliteStore {
    async fn insert_quote(&self, quote: &StoredQuote) -> StoreResult<()> {
        let insert = quotes::insert(quote)?;
        self.run(move |c| execute(c, &insert).map(drop)).await
    }

    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        let quote = quotes::by_id(project, id);
        self.read_now(move |c| select_first(c, &quote)).await
    }

    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let (mark, bridge, events) = (quotes::mark_committed(quote_id), bridge.clone(), events.to_vec());
        self.run(move |c| {
            if execute(c, &mark)? == 0 {
                return Ok(false);
            }
            upsert_bridge(c, &bridge)?;
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }
}
