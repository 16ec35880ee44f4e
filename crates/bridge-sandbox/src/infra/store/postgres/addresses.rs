//! Deposit addresses, routing deposit addresses and their deposits: this area's part of [`PgStore`] (the
//! [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{
    to_json, AddressSearch, Areas, NewEvent, StoreResult, StoredAddress, StoredBridge, StoredDeposit,
    StoredRoutingAddress,
};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

impl Areas<'_, PgStore> {
    pub(super) async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let sql = format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = $1 AND deposit_chain = $2 AND reuse_key = $3 ORDER BY seq LIMIT 1"
        );
        let row = self.select_first(query(&sql).bind(project).bind(deposit_chain).bind(reuse_key)).await?;
        Ok(row.map(|(_, a): (i64, _)| a))
    }

    pub(super) async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for a in addresses {
            query(
                "INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, webhook_url, created_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&a.project)
            .bind(&a.address.deposit_chain)
            .bind(&a.address.deposit_address)
            .bind(&a.reuse_key)
            .bind(to_json(&a.address)?)
            .bind(to_json(&a.search_item)?)
            .bind(&a.webhook_url)
            .bind(a.created_ms)
            .execute(&mut *tx)
            .await?;
        }
        commit_with_events(tx, events).await
    }

    pub(super) async fn address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let sql = format!("SELECT {ADDRESS_COLUMNS} FROM addresses WHERE deposit_chain = $1 AND deposit_address = $2");
        let row = self.select_first(query(&sql).bind(deposit_chain).bind(deposit_address)).await?;
        Ok(row.map(|(_, a): (i64, _)| a))
    }

    pub(super) async fn search_addresses(
        &self,
        project: &str,
        s: &AddressSearch,
    ) -> StoreResult<Vec<(i64, StoredAddress)>> {
        let sql = format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = $1 AND seq > $2
               AND ($3::text IS NULL OR search_item::jsonb ->> 'addressNote' = $3)
               AND ($4::text IS NULL OR deposit_chain = $4)
               AND ($5::text IS NULL OR search_item::jsonb ->> 'destinationChain' = $5)
               AND ($6::text IS NULL OR search_item::jsonb ->> 'destinationAddress' = $6)
             ORDER BY seq LIMIT $7"
        );
        self.select(
            query(&sql)
                .bind(project)
                .bind(s.after)
                .bind(&s.address_note)
                .bind(&s.deposit_chain)
                .bind(&s.destination_chain)
                .bind(&s.destination_address)
                .bind(s.limit as i64),
        )
        .await
    }

    pub(super) async fn insert_routing_address(
        &self,
        a: &StoredRoutingAddress,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query(
            "INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, webhook_url, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&a.project)
        .bind(&a.address.deposit_chain)
        .bind(&a.address.deposit_address)
        .bind(to_json(&a.address)?)
        .bind(&a.webhook_url)
        .bind(a.created_ms)
        .execute(&mut *tx)
        .await?;
        commit_with_events(tx, events).await
    }

    pub(super) async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        let sql = format!(
            "SELECT {ROUTING_ADDRESS_COLUMNS} FROM routing_addresses WHERE deposit_chain = $1 AND deposit_address = $2"
        );
        self.select_first(query(&sql).bind(deposit_chain).bind(deposit_address)).await
    }

    pub(super) async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
        Ok(query_scalar(
            "SELECT EXISTS (SELECT 1 FROM addresses WHERE deposit_chain = $1 AND deposit_address = $2)
                 OR EXISTS (SELECT 1 FROM routing_addresses WHERE deposit_chain = $1 AND deposit_address = $2)",
        )
        .bind(deposit_chain)
        .bind(deposit_address)
        .fetch_one(&self.pool)
        .await?)
    }

    pub(super) async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query("INSERT INTO deposits (deposit_chain, deposit_address, last_bridge, bridge_id) VALUES ($1, $2, $3, $4)")
            .bind(deposit_chain)
            .bind(deposit_address)
            .bind(to_json(&deposit.last_bridge)?)
            .bind(&deposit.bridge_id)
            .execute(&mut *tx)
            .await?;
        if let Some(b) = bridge {
            upsert_bridge(&mut tx, b).await?;
        }
        commit_with_events(tx, events).await
    }

    pub(super) async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        let sql = format!(
            "SELECT {DEPOSIT_COLUMNS} FROM deposits WHERE deposit_chain = $1 AND deposit_address = $2 ORDER BY seq DESC LIMIT $3"
        );
        self.select(query(&sql).bind(deposit_chain).bind(deposit_address).bind(limit as i64)).await
    }

    pub(super) async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
        let (total, recent): (i64, i64) = sqlx_core::query_as::query_as(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE created_ms >= $2) FROM addresses WHERE project = $1",
        )
        .bind(project)
        .bind(since_ms)
        .fetch_one(&self.pool)
        .await?;
        Ok((total as u64, recent as u64))
    }
}
