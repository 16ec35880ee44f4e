//! Deposit addresses, routing deposit addresses and their deposits: the area's trait, what it stores, and its SQL
//! for both backends (`sqlite/addresses.rs` and `postgres/addresses.rs` implement the trait with it).

use async_trait::async_trait;
use bridge_contract::{DepositAddress, DepositAddressSearchItem, LastBridge, RoutingDepositAddress};

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{from_json, to_json, NewEvent, StoreResult, StoredBridge};

/// A deposit address of a project.
#[derive(Debug, Clone)]
pub struct StoredAddress {
    pub project: String,
    pub address: DepositAddress,
    pub search_item: DepositAddressSearchItem,
    /// Addresses with the same key are reused unless `reusePolicy` is `create-new`.
    pub reuse_key: String,
    pub webhook_url: Option<String>,
    pub created_ms: i64,
}

/// A routing deposit address of a project (sandbox helper `POST /sandbox/routing-deposit-addresses`).
#[derive(Debug, Clone)]
pub struct StoredRoutingAddress {
    pub project: String,
    pub address: RoutingDepositAddress,
    pub webhook_url: Option<String>,
    pub created_ms: i64,
}

/// A deposit into a deposit address, as the public status lists it, and the bridge it started (if any).
#[derive(Debug, Clone)]
pub struct StoredDeposit {
    pub last_bridge: LastBridge,
    pub bridge_id: Option<String>,
}

/// Deposit-address search filters; `after` is the position of the last item of the previous page.
#[derive(Debug, Clone, Default)]
pub struct AddressSearch {
    pub address_note: Option<String>,
    pub deposit_chain: Option<String>,
    pub destination_chain: Option<String>,
    pub destination_address: Option<String>,
    pub after: i64,
    pub limit: u64,
}

#[async_trait]
pub trait AddressStore: Send + Sync {
    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>>;
    /// Inserts the addresses of one request and their events, all or nothing.
    async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()>;
    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>>;
    /// One page of a project's addresses in insertion order: (position, address).
    async fn search_addresses(&self, project: &str, search: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>>;
    /// Inserts a routing deposit address and its event, atomically.
    async fn insert_routing_address(&self, address: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()>;
    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>>;
    /// Whether an address on a chain is taken, by a deposit address or a routing deposit address.
    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool>;
    /// Records a deposit into an address, with the bridge it started (if any) and the events, atomically.
    async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()>;
    /// The most recent deposits into an address, newest first.
    async fn deposits(&self, deposit_chain: &str, deposit_address: &str, limit: u64)
        -> StoreResult<Vec<StoredDeposit>>;
    /// How many deposit addresses a project has created: in all, and at or after `since_ms`.
    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)>;
}

/// A deposit address and its position (`seq`, the search's cursor).
const COLUMNS: &str = "seq, project, reuse_key, body, search_item, webhook_url, created_ms";

impl FromRow for (i64, StoredAddress) {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok((
            row.at(0)?,
            StoredAddress {
                project: row.at(1)?,
                reuse_key: row.at(2)?,
                address: from_json(&row.at::<String>(3)?)?,
                search_item: from_json(&row.at::<String>(4)?)?,
                webhook_url: row.at(5)?,
                created_ms: row.at(6)?,
            },
        ))
    }
}

const ROUTING_COLUMNS: &str = "project, body, webhook_url, created_ms";

impl FromRow for StoredRoutingAddress {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredRoutingAddress {
            project: row.at(0)?,
            address: from_json(&row.at::<String>(1)?)?,
            webhook_url: row.at(2)?,
            created_ms: row.at(3)?,
        })
    }
}

const DEPOSIT_COLUMNS: &str = "last_bridge, bridge_id";

impl FromRow for StoredDeposit {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredDeposit { last_bridge: from_json(&row.at::<String>(0)?)?, bridge_id: row.at(1)? })
    }
}

pub(super) fn reusable(project: &str, deposit_chain: &str, reuse_key: &str) -> Query {
    query!(
        "SELECT {COLUMNS} FROM addresses WHERE project = ?1 AND deposit_chain = ?2 AND reuse_key = ?3 ORDER BY seq LIMIT 1",
        project,
        deposit_chain,
        reuse_key,
    )
}

pub(super) fn insert(a: &StoredAddress) -> StoreResult<Query> {
    Ok(query!(
        "INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, webhook_url, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        &a.project,
        &a.address.deposit_chain,
        &a.address.deposit_address,
        &a.reuse_key,
        to_json(&a.address)?,
        to_json(&a.search_item)?,
        &a.webhook_url,
        a.created_ms,
    ))
}

pub(super) fn by_address(deposit_chain: &str, deposit_address: &str) -> Query {
    query!(
        "SELECT {COLUMNS} FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2",
        deposit_chain,
        deposit_address,
    )
}

pub(super) fn search(project: &str, s: &AddressSearch) -> Query {
    query!(
        "SELECT {COLUMNS} FROM addresses WHERE project = ?1 AND seq > ?2
           AND (CAST(?3 AS TEXT) IS NULL OR search_item::jsonb ->> 'addressNote' = ?3)
           AND (CAST(?4 AS TEXT) IS NULL OR deposit_chain = ?4)
           AND (CAST(?5 AS TEXT) IS NULL OR search_item::jsonb ->> 'destinationChain' = ?5)
           AND (CAST(?6 AS TEXT) IS NULL OR search_item::jsonb ->> 'destinationAddress' = ?6)
         ORDER BY seq LIMIT ?7",
        project,
        s.after,
        &s.address_note,
        &s.deposit_chain,
        &s.destination_chain,
        &s.destination_address,
        s.limit as i64,
    )
}

pub(super) fn insert_routing(a: &StoredRoutingAddress) -> StoreResult<Query> {
    Ok(query!(
        "INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, webhook_url, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &a.project,
        &a.address.deposit_chain,
        &a.address.deposit_address,
        to_json(&a.address)?,
        &a.webhook_url,
        a.created_ms,
    ))
}

pub(super) fn routing_by_address(deposit_chain: &str, deposit_address: &str) -> Query {
    query!(
        "SELECT {ROUTING_COLUMNS} FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2",
        deposit_chain,
        deposit_address,
    )
}

pub(super) fn taken(deposit_chain: &str, deposit_address: &str) -> Query {
    query!(
        "SELECT EXISTS (SELECT 1 FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)
             OR EXISTS (SELECT 1 FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)",
        deposit_chain,
        deposit_address,
    )
}

pub(super) fn insert_deposit(deposit_chain: &str, deposit_address: &str, d: &StoredDeposit) -> StoreResult<Query> {
    Ok(query!(
        "INSERT INTO deposits (deposit_chain, deposit_address, last_bridge, bridge_id, stored_ms)
         VALUES (?1, ?2, ?3, ?4, wall_ms())",
        deposit_chain,
        deposit_address,
        to_json(&d.last_bridge)?,
        &d.bridge_id,
    ))
}

pub(super) fn deposits(deposit_chain: &str, deposit_address: &str, limit: u64) -> Query {
    query!(
        "SELECT {DEPOSIT_COLUMNS} FROM deposits WHERE deposit_chain = ?1 AND deposit_address = ?2 ORDER BY seq DESC LIMIT ?3",
        deposit_chain,
        deposit_address,
        limit as i64,
    )
}

pub(super) fn counts(project: &str, since_ms: i64) -> Query {
    query!(
        "SELECT COUNT(*), COUNT(CASE WHEN created_ms >= ?2 THEN 1 END) FROM addresses WHERE project = ?1",
        project,
        since_ms,
    )
}
