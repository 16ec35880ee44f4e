//! [`AddressStore`] on PostgreSQL.

use async_trait::async_trait;

use super::{commit_with_events, execute, select, select_first, select_one, upsert_bridge, PgStore};
use crate::infra::store::addresses::{
    self, AddressSearch, AddressStore, StoredAddress, StoredDeposit, StoredRoutingAddress,
};
use crate::infra::store::rows::{One, Two};
use crate::infra::store::{NewEvent, StoreResult, StoredBridge};

#[async_trait]
impl AddressStore for PgStore {
    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let reusable = addresses::reusable(project, deposit_chain, reuse_key);
        let found = select_first::<(i64, StoredAddress)>(&self.pool, reusable).await?;
        Ok(found.map(|(_, a)| a))
    }

    async fn insert_addresses(&self, list: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for a in list {
            execute(&mut *tx, addresses::insert(a)?).await?;
        }
        commit_with_events(tx, events).await
    }

    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>> {
        let address = addresses::by_address(deposit_chain, deposit_address);
        let found = select_first::<(i64, StoredAddress)>(&self.pool, address).await?;
        Ok(found.map(|(_, a)| a))
    }

    async fn search_addresses(&self, project: &str, s: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>> {
        select(&self.pool, addresses::search(project, s)).await
    }

    async fn insert_routing_address(&self, a: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, addresses::insert_routing(a)?).await?;
        commit_with_events(tx, events).await
    }

    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        select_first(&self.pool, addresses::routing_by_address(deposit_chain, deposit_address)).await
    }

    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
        let One(taken) = select_one(&self.pool, addresses::taken(deposit_chain, deposit_address)).await?;
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
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, addresses::insert_deposit(deposit_chain, deposit_address, deposit)?).await?;
        if let Some(b) = bridge {
            upsert_bridge(&mut tx, b).await?;
        }
        commit_with_events(tx, events).await
    }

    async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        select(&self.pool, addresses::deposits(deposit_chain, deposit_address, limit)).await
    }

    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
        let Two(total, recent) = select_one::<Two<i64, i64>>(&self.pool, addresses::counts(project, since_ms)).await?;
        Ok((total as u64, recent as u64))
    }
}
