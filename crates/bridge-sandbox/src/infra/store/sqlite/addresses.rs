//! Deposit addresses, routing deposit addresses and their deposits: this area's part of [`SqliteStore`] (the
//! [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::store::{
    to_json, AddressSearch, Areas, NewEvent, StoreResult, StoredAddress, StoredBridge, StoredDeposit,
    StoredRoutingAddress,
};
use rusqlite::params;

impl Areas<'_, SqliteStore> {
    pub(super) async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let (project, chain, key) = (project.to_owned(), deposit_chain.to_owned(), reuse_key.to_owned());
        self.read(move |c| {
            let sql = format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND deposit_chain = ?2 AND reuse_key = ?3 ORDER BY seq LIMIT 1"
            );
            Ok(select_first(c, &sql, params![project, chain, key])?.map(|(_, a): (i64, _)| a))
        })
        .await
    }

    pub(super) async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
        let (addresses, events) = (addresses.to_vec(), events.to_vec());
        self.run(move |c| {
            for a in &addresses {
                c.execute(
                    "INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, webhook_url, created_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        a.project,
                        a.address.deposit_chain,
                        a.address.deposit_address,
                        a.reuse_key,
                        to_json(&a.address)?,
                        to_json(&a.search_item)?,
                        a.webhook_url,
                        a.created_ms
                    ],
                )?;
            }
            insert_events(c, &events)?;
            Ok(())
        })
        .await
    }

    pub(super) async fn address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let sql =
                format!("SELECT {ADDRESS_COLUMNS} FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2");
            Ok(select_first(c, &sql, params![chain, address])?.map(|(_, a): (i64, _)| a))
        })
        .await
    }

    pub(super) async fn search_addresses(
        &self,
        project: &str,
        s: &AddressSearch,
    ) -> StoreResult<Vec<(i64, StoredAddress)>> {
        let (project, s) = (project.to_owned(), s.clone());
        self.read(move |c| {
            let sql = format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND seq > ?2
                   AND (?3 IS NULL OR json_extract(search_item, '$.addressNote') = ?3)
                   AND (?4 IS NULL OR deposit_chain = ?4)
                   AND (?5 IS NULL OR json_extract(search_item, '$.destinationChain') = ?5)
                   AND (?6 IS NULL OR json_extract(search_item, '$.destinationAddress') = ?6)
                 ORDER BY seq LIMIT ?7"
            );
            let params = params![
                project,
                s.after,
                s.address_note,
                s.deposit_chain,
                s.destination_chain,
                s.destination_address,
                s.limit as i64
            ];
            select(c, &sql, params)
        })
        .await
    }

    pub(super) async fn insert_routing_address(
        &self,
        a: &StoredRoutingAddress,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let (a, events) = (a.clone(), events.to_vec());
        self.run(move |c| {
            c.execute(
                "INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, webhook_url, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![a.project, a.address.deposit_chain, a.address.deposit_address, to_json(&a.address)?, a.webhook_url, a.created_ms],
            )?;
            insert_events(c, &events)?;
            Ok(())
        })
        .await
    }

    pub(super) async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let sql = format!(
                "SELECT {ROUTING_ADDRESS_COLUMNS} FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2"
            );
            select_first(c, &sql, params![chain, address])
        })
        .await
    }

    pub(super) async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT EXISTS (SELECT 1 FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)
                     OR EXISTS (SELECT 1 FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)",
                params![chain, address],
                |r| r.get::<_, bool>(0),
            )?)
        })
        .await
    }

    pub(super) async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let (chain, address, deposit) = (deposit_chain.to_owned(), deposit_address.to_owned(), deposit.clone());
        let (bridge, events) = (bridge.cloned(), events.to_vec());
        self.run(move |c| {
            c.execute(
                "INSERT INTO deposits (deposit_chain, deposit_address, last_bridge, bridge_id) VALUES (?1, ?2, ?3, ?4)",
                params![chain, address, to_json(&deposit.last_bridge)?, deposit.bridge_id],
            )?;
            if let Some(b) = &bridge {
                upsert_bridge(c, b)?;
            }
            insert_events(c, &events)?;
            Ok(())
        })
        .await
    }

    pub(super) async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let sql = format!(
                "SELECT {DEPOSIT_COLUMNS} FROM deposits WHERE deposit_chain = ?1 AND deposit_address = ?2 ORDER BY seq DESC LIMIT ?3"
            );
            select(c, &sql, params![chain, address, limit as i64])
        })
        .await
    }

    pub(super) async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
        let project = project.to_owned();
        self.read(move |c| {
            let (total, recent): (i64, i64) = c.query_row(
                "SELECT COUNT(*), COUNT(CASE WHEN created_ms >= ?2 THEN 1 END) FROM addresses WHERE project = ?1",
                params![project, since_ms],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            Ok((total as u64, recent as u64))
        })
        .await
    }
}
