//! [`AddressStore`] on SQLite.

use async_trait::async_trait;

use super::{execute, insert_events, select, select_first, select_one, upsert_bridge, SqliteStore};
use crate::infra::store::addresses::{
    self, AddressSearch, AddressStore, StoredAddress, StoredDeposit, StoredRoutingAddress,
};
use crate::infra::store::rows::{One, Two};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

#[async_trait]
impl AddressStore for SqliteStore {
    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let reusable = addresses::reusable(project, deposit_chain, reuse_key);
        let found = self.read(move |c| select_first::<(i64, StoredAddress)>(c, &reusable)).await?;
        Ok(found.map(|(_, a)| a))
    }

    async fn insert_addresses(&self, list: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
        let inserts = list.iter().map(addresses::insert).collect::<StoreResult<Vec<_>>>()?;
        let events = events.to_vec();
        self.run(move |c| {
            for insert in &inserts {
                execute(c, insert)?;
            }
            insert_events(c, &events)
        })
        .await
    }

    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>> {
        let address = addresses::by_address(deposit_chain, deposit_address);
        let found = self.read(move |c| select_first::<(i64, StoredAddress)>(c, &address)).await?;
        Ok(found.map(|(_, a)| a))
    }

    async fn search_addresses(&self, project: &str, s: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>> {
        let search = addresses::search(project, s);
        self.read(move |c| select(c, &search)).await
    }

    async fn insert_routing_address(&self, a: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()> {
        let (insert, events) = (addresses::insert_routing(a)?, events.to_vec());
        self.run(move |c| {
            execute(c, &insert)?;
            insert_events(c, &events)
        })
        .await
    }

    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        let address = addresses::routing_by_address(deposit_chain, deposit_address);
        self.read(move |c| select_first(c, &address)).await
    }

    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
        let taken = addresses::taken(deposit_chain, deposit_address);
        let One(taken) = self.read(move |c| select_one(c, &taken)).await?;
        Ok(taken)
    }

    async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let insert = addresses::insert_deposit(deposit_chain, deposit_address, deposit)?;
        let (bridge, events) = (bridge.cloned(), events.to_vec());
        self.run(move |c| {
            execute(c, &insert)?;
            if let Some(b) = &bridge {
                upsert_bridge(c, b)?;
            }
            insert_events(c, &events)
        })
        .await
    }

    async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        let deposits = addresses::deposits(deposit_chain, deposit_address, limit);
        self.read(move |c| select(c, &deposits)).await
    }

    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
        let counts = addresses::counts(project, since_ms);
        let Two(total, recent) = self.read(move |c| select_one::<Two<i64, i64>>(c, &counts)).await?;
        Ok((total as u64, recent as u64))
    }
}
