//! Persistence. The service talks to the [`Store`] trait (domain operations, each one atomic), so a server
//! database can be added for multi-instance deployments; [`SqliteStore`] keeps everything in one SQLite file
//! (`sandbox.db` in the data directory) with migrations, WAL journaling and `synchronous = FULL`: a change is
//! acknowledged only after it is durable, so a crash loses nothing that was acknowledged.
//!
//! Every state change and the events it emits are written in one transaction, so an event is never lost or
//! emitted for a change that did not happen. Events get a strictly increasing sequence number at insert, in
//! commit order; the event feed's cursor is that number, which makes paging exact under concurrent writes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use anyhow::Context;
use bridge_contract::{
    BridgeRecord, DepositAddress, DepositAddressSearchItem, LastBridge, QuoteResponse, Rejection,
    RoutingDepositAddress, WebhookEvent,
};
use rusqlite::{params, Connection, OptionalExtension};
use rusqlite_migration::{Migrations, M};
use serde::{de::DeserializeOwned, Serialize};

/// A quote as the sandbox keeps it until it is committed or expires.
#[derive(Debug, Clone)]
pub struct StoredQuote {
    pub id: String,
    pub project: String,
    pub response: QuoteResponse,
    /// The request's `mode` (`pay` or `receive`), kept for swap records.
    pub mode: String,
    pub created_ms: i64,
    pub expires_ms: i64,
    pub committed: bool,
}

/// A bridge record and what the lifecycle needs to move it on.
#[derive(Debug, Clone)]
pub struct StoredBridge {
    pub id: String,
    pub project: String,
    pub record: BridgeRecord,
    pub rejections: Vec<Rejection>,
    pub state: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// When the lifecycle next moves this bridge (`None`: final state).
    pub next_ms: Option<i64>,
    pub webhook_url: Option<String>,
    /// A departure from the usual path chosen through a sandbox helper: `swapFailed` or `delayed`.
    pub plan: Option<String>,
}

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

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub id: String,
    pub project: String,
    pub created_ms: i64,
    pub event: WebhookEvent,
    /// Where to deliver it (the quote's or deposit address's `webhookUrl`).
    pub webhook_url: Option<String>,
}

/// History filters and order.
#[derive(Debug, Clone)]
pub struct HistoryQuery {
    pub state: Option<String>,
    pub sort_by_updated: bool,
    pub descending: bool,
    pub offset: u64,
    pub limit: u64,
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

pub type Result<T> = anyhow::Result<T>;

/// The sandbox's persistence, one atomic domain operation per method.
pub trait Store: Send + Sync + 'static {
    /// The clock's stored (value, floor), if any.
    fn clock(&self) -> Result<Option<(i64, i64)>>;
    fn save_clock(&self, value: i64, floor: i64) -> Result<()>;
    /// The next value of a named counter (starting at 1).
    fn next_counter(&self, name: &str) -> Result<u64>;

    fn insert_quote(&self, quote: &StoredQuote) -> Result<()>;
    fn quote(&self, project: &str, id: &str) -> Result<Option<StoredQuote>>;
    /// Marks the quote committed and inserts its bridge with its events; `false` if it was already committed.
    fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> Result<bool>;

    fn bridge(&self, project: &str, id: &str) -> Result<Option<StoredBridge>>;
    /// Inserts or replaces a bridge, with the events its change emits.
    fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> Result<()>;
    /// Bridges whose lifecycle is due at `now_ms`, oldest first.
    fn due_bridges(&self, now_ms: i64, limit: u64) -> Result<Vec<StoredBridge>>;
    /// Quotes that expired uncommitted are simply dropped here (they can no longer be committed).
    fn history(&self, project: &str, query: &HistoryQuery) -> Result<(u64, Vec<StoredBridge>)>;

    fn reusable_address(&self, project: &str, deposit_chain: &str, reuse_key: &str) -> Result<Option<StoredAddress>>;
    /// Inserts the addresses of one request and their events, all or nothing.
    fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> Result<()>;
    fn address(&self, deposit_chain: &str, deposit_address: &str) -> Result<Option<StoredAddress>>;
    /// One page of a project's addresses in insertion order: (position, address).
    fn search_addresses(&self, project: &str, search: &AddressSearch) -> Result<Vec<(i64, StoredAddress)>>;
    /// Inserts a routing deposit address and its event, atomically.
    fn insert_routing_address(&self, address: &StoredRoutingAddress, events: &[NewEvent]) -> Result<()>;
    fn routing_address(&self, deposit_chain: &str, deposit_address: &str) -> Result<Option<StoredRoutingAddress>>;
    /// Whether an address on a chain is taken, by a deposit address or a routing deposit address.
    fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> Result<bool>;
    /// Records a deposit into an address, with the bridge it started (if any) and the events, atomically.
    fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> Result<()>;
    /// The most recent deposits into an address, newest first.
    fn deposits(&self, deposit_chain: &str, deposit_address: &str, limit: u64) -> Result<Vec<StoredDeposit>>;

    /// Appends events on their own.
    fn append_events(&self, events: &[NewEvent]) -> Result<()>;
    /// A project's events at or after `since_ms` with a sequence number above `after_seq`, in sequence order.
    fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> Result<Vec<(i64, WebhookEvent)>>;

    /// Deliveries due at `now_ms` (sandbox clock) that no worker holds, oldest first; each is leased until
    /// `lease_until_wall_ms`. Leases are on the wall clock: they measure real time in flight, which moving the
    /// sandbox clock must not cut short (that would deliver an event twice). A worker that dies mid-delivery
    /// leaves its rows to be taken again when the lease runs out, or at once by the next [`Store::release_leases`].
    ///
    /// Fair to receivers: at most `per_url` rows of one URL, less the `busy` ones of that URL already in flight,
    /// so one slow or dead receiver cannot take every slot from the others.
    fn take_due_deliveries(
        &self,
        now_ms: i64,
        wall_ms: i64,
        lease_until_wall_ms: i64,
        limit: u64,
        per_url: usize,
        busy: &HashMap<String, usize>,
    ) -> Result<Vec<DueDelivery>>;
    /// Releases every lease: a deliverer that starts (one per data directory) has nothing in flight yet.
    fn release_leases(&self) -> Result<()>;
    /// Records an attempt and schedules the next one (or closes the delivery).
    fn record_attempt(&self, delivery: &DueDelivery, outcome: &AttemptOutcome) -> Result<()>;
    /// A project's delivery attempts, newest first, optionally of one event.
    fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> Result<Vec<bridge_contract::WebhookDeliveryAttempt>>;
}

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            r#"
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE quotes (
            id TEXT PRIMARY KEY, project TEXT NOT NULL, body TEXT NOT NULL, mode TEXT NOT NULL,
            created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL, committed INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE bridges (
            id TEXT PRIMARY KEY, project TEXT NOT NULL, record TEXT NOT NULL, rejections TEXT NOT NULL,
            state TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
            next_ms INTEGER, webhook_url TEXT
        );
        CREATE INDEX bridges_by_created ON bridges (project, created_ms, id);
        CREATE INDEX bridges_by_updated ON bridges (project, updated_ms, id);
        CREATE INDEX bridges_due ON bridges (next_ms) WHERE next_ms IS NOT NULL;
        CREATE TABLE addresses (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL,
            deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL, reuse_key TEXT NOT NULL,
            body TEXT NOT NULL, search_item TEXT NOT NULL, webhook_url TEXT, created_ms INTEGER NOT NULL,
            UNIQUE (deposit_chain, deposit_address)
        );
        CREATE INDEX addresses_reuse ON addresses (project, deposit_chain, reuse_key);
        CREATE TABLE deposits (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
            last_bridge TEXT NOT NULL, bridge_id TEXT
        );
        CREATE INDEX deposits_by_address ON deposits (deposit_chain, deposit_address, seq);
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, project TEXT NOT NULL,
            created_ms INTEGER NOT NULL, body TEXT NOT NULL, webhook_url TEXT
        );
        CREATE INDEX events_by_project ON events (project, seq);
        CREATE INDEX events_by_time ON events (project, created_ms, seq);
        "#,
        ),
        M::up(
            r#"
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, project TEXT NOT NULL, url TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0, next_ms INTEGER, delivered INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX outbox_due ON outbox (next_ms) WHERE next_ms IS NOT NULL;
        CREATE TABLE delivery_attempts (
            id INTEGER PRIMARY KEY AUTOINCREMENT, outbox_id INTEGER NOT NULL, event_id TEXT NOT NULL,
            project TEXT NOT NULL, url TEXT NOT NULL, attempt INTEGER NOT NULL, at_ms INTEGER NOT NULL,
            status INTEGER, error TEXT, delivered INTEGER NOT NULL, next_ms INTEGER
        );
        CREATE INDEX attempts_by_project ON delivery_attempts (project, id);
        "#,
        ),
        // What the lifecycle does at its next step when it leaves the usual path (sandbox `outcome`s).
        M::up("ALTER TABLE bridges ADD COLUMN plan TEXT;"),
        // Routing deposit addresses; their deposits go to `deposits` like those of deposit addresses.
        M::up(
            r#"
        CREATE TABLE routing_addresses (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL,
            deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
            body TEXT NOT NULL, webhook_url TEXT, created_ms INTEGER NOT NULL,
            UNIQUE (deposit_chain, deposit_address)
        );
        "#,
        ),
        // Delivery leases on the wall clock, apart from `next_ms` (when an attempt is due, on the sandbox clock).
        M::up("ALTER TABLE outbox ADD COLUMN leased_until INTEGER;"),
    ])
}

/// A delivery that is due: the outbox row, its event's JSON, and the attempt number it is about to make.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    pub outbox_id: i64,
    pub event_id: String,
    pub project: String,
    pub url: String,
    pub event: WebhookEvent,
    /// 1 for the first attempt.
    pub attempt: u32,
}

/// What became of one attempt.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub at_ms: i64,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub delivered: bool,
    /// When to try again (`None`: delivered or given up).
    pub next_ms: Option<i64>,
}

/// All state in one SQLite file.
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string(value)?)
}

fn from_json<T: DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text)
        .with_context(|| format!("stored JSON does not decode: {}", text.chars().take(200).collect::<String>()))
}

impl SqliteStore {
    /// Opens (creating and migrating) `dir/sandbox.db`.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("sandbox.db");
        let mut conn = Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations().to_latest(&mut conn).context("migrating the sandbox database")?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut conn)
    }
}

/// Appends events, and an outbox row for each that has a `webhookUrl`, in the caller's transaction.
fn insert_events(tx: &rusqlite::Transaction<'_>, events: &[NewEvent]) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO events (id, project, created_ms, body, webhook_url) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut outbox =
        tx.prepare_cached("INSERT INTO outbox (event_id, project, url, next_ms) VALUES (?1, ?2, ?3, ?4)")?;
    for e in events {
        stmt.execute(params![e.id, e.project, e.created_ms, to_json(&e.event)?, e.webhook_url])?;
        if let Some(url) = &e.webhook_url {
            outbox.execute(params![e.id, e.project, url, e.created_ms])?;
        }
    }
    Ok(())
}

fn upsert_bridge(tx: &rusqlite::Transaction<'_>, b: &StoredBridge) -> Result<()> {
    tx.execute(
        "INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan",
        params![b.id, b.project, to_json(&b.record)?, to_json(&b.rejections)?, b.state, b.created_ms, b.updated_ms, b.next_ms, b.webhook_url, b.plan],
    )?;
    Ok(())
}

const BRIDGE_COLUMNS: &str =
    "id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan";

type BridgeRow = (String, String, String, String, String, i64, i64, Option<i64>, Option<String>, Option<String>);

fn read_bridge(row: &rusqlite::Row<'_>) -> rusqlite::Result<BridgeRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
        row.get(9)?,
    ))
}

fn bridge_from_row(r: BridgeRow) -> Result<StoredBridge> {
    Ok(StoredBridge {
        id: r.0,
        project: r.1,
        record: from_json(&r.2)?,
        rejections: from_json(&r.3)?,
        state: r.4,
        created_ms: r.5,
        updated_ms: r.6,
        next_ms: r.7,
        webhook_url: r.8,
        plan: r.9,
    })
}

const ADDRESS_COLUMNS: &str = "seq, project, reuse_key, body, search_item, webhook_url, created_ms";

fn address_from_row(
    row: &rusqlite::Row<'_>,
) -> rusqlite::Result<(i64, String, String, String, String, Option<String>, i64)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
}

fn address_decode(r: (i64, String, String, String, String, Option<String>, i64)) -> Result<(i64, StoredAddress)> {
    Ok((
        r.0,
        StoredAddress {
            project: r.1,
            reuse_key: r.2,
            address: from_json(&r.3)?,
            search_item: from_json(&r.4)?,
            webhook_url: r.5,
            created_ms: r.6,
        },
    ))
}

impl Store for SqliteStore {
    fn clock(&self) -> Result<Option<(i64, i64)>> {
        self.with(|c| {
            let v: Option<String> =
                c.query_row("SELECT value FROM meta WHERE key = 'clock'", [], |r| r.get(0)).optional()?;
            Ok(match v {
                Some(text) => Some(from_json(&text)?),
                None => None,
            })
        })
    }

    fn save_clock(&self, value: i64, floor: i64) -> Result<()> {
        self.with(|c| {
            c.execute("INSERT INTO meta (key, value) VALUES ('clock', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", params![to_json(&(value, floor))?])?;
            Ok(())
        })
    }

    fn next_counter(&self, name: &str) -> Result<u64> {
        self.with(|c| {
            let tx = c.transaction()?;
            let key = format!("counter:{name}");
            let current: Option<String> =
                tx.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| r.get(0)).optional()?;
            let next = current.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) + 1;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, next.to_string()],
            )?;
            tx.commit()?;
            Ok(next)
        })
    }

    fn insert_quote(&self, q: &StoredQuote) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
                params![q.id, q.project, to_json(&q.response)?, q.mode, q.created_ms, q.expires_ms],
            )?;
            Ok(())
        })
    }

    fn quote(&self, project: &str, id: &str) -> Result<Option<StoredQuote>> {
        self.with(|c| {
            let row = c
                .query_row(
                    "SELECT id, project, body, mode, created_ms, expires_ms, committed FROM quotes WHERE id = ?1 AND project = ?2",
                    params![id, project],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, i64>(4)?, r.get::<_, i64>(5)?, r.get::<_, bool>(6)?)),
                )
                .optional()?;
            row.map(|r| Ok(StoredQuote { id: r.0, project: r.1, response: from_json(&r.2)?, mode: r.3, created_ms: r.4, expires_ms: r.5, committed: r.6 }))
                .transpose()
        })
    }

    fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> Result<bool> {
        self.with(|c| {
            let tx = c.transaction()?;
            let changed =
                tx.execute("UPDATE quotes SET committed = 1 WHERE id = ?1 AND committed = 0", params![quote_id])?;
            if changed == 0 {
                return Ok(false);
            }
            upsert_bridge(&tx, bridge)?;
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(true)
        })
    }

    fn bridge(&self, project: &str, id: &str) -> Result<Option<StoredBridge>> {
        self.with(|c| {
            let row = c
                .query_row(
                    &format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE id = ?1 AND project = ?2"),
                    params![id, project],
                    read_bridge,
                )
                .optional()?;
            row.map(bridge_from_row).transpose()
        })
    }

    fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            upsert_bridge(&tx, bridge)?;
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(())
        })
    }

    fn due_bridges(&self, now_ms: i64, limit: u64) -> Result<Vec<StoredBridge>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE next_ms IS NOT NULL AND next_ms <= ?1 ORDER BY next_ms, id LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![now_ms, limit as i64], read_bridge)?;
            rows.map(|r| bridge_from_row(r?)).collect()
        })
    }

    fn history(&self, project: &str, q: &HistoryQuery) -> Result<(u64, Vec<StoredBridge>)> {
        self.with(|c| {
            let filter = if q.state.is_some() { "AND state = ?2" } else { "AND ?2 IS NULL" };
            let total: i64 = c.query_row(&format!("SELECT COUNT(*) FROM bridges WHERE project = ?1 {filter}"), params![project, q.state], |r| r.get(0))?;
            let column = if q.sort_by_updated { "updated_ms" } else { "created_ms" };
            let direction = if q.descending { "DESC" } else { "ASC" };
            let mut stmt = c.prepare(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 {filter} ORDER BY {column} {direction}, id {direction} LIMIT ?3 OFFSET ?4"
            ))?;
            let rows = stmt.query_map(params![project, q.state, q.limit as i64, q.offset as i64], read_bridge)?;
            let items = rows.map(|r| bridge_from_row(r?)).collect::<Result<Vec<_>>>()?;
            Ok((total as u64, items))
        })
    }

    fn reusable_address(&self, project: &str, deposit_chain: &str, reuse_key: &str) -> Result<Option<StoredAddress>> {
        self.with(|c| {
            let row = c
                .query_row(
                    &format!("SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND deposit_chain = ?2 AND reuse_key = ?3 ORDER BY seq LIMIT 1"),
                    params![project, deposit_chain, reuse_key],
                    address_from_row,
                )
                .optional()?;
            Ok(row.map(address_decode).transpose()?.map(|(_, a)| a))
        })
    }

    fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            for a in addresses {
                tx.execute(
                    "INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, webhook_url, created_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![a.project, a.address.deposit_chain, a.address.deposit_address, a.reuse_key, to_json(&a.address)?, to_json(&a.search_item)?, a.webhook_url, a.created_ms],
                )?;
            }
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(())
        })
    }

    fn address(&self, deposit_chain: &str, deposit_address: &str) -> Result<Option<StoredAddress>> {
        self.with(|c| {
            let row = c
                .query_row(
                    &format!(
                        "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2"
                    ),
                    params![deposit_chain, deposit_address],
                    address_from_row,
                )
                .optional()?;
            Ok(row.map(address_decode).transpose()?.map(|(_, a)| a))
        })
    }

    fn search_addresses(&self, project: &str, s: &AddressSearch) -> Result<Vec<(i64, StoredAddress)>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND seq > ?2
                   AND (?3 IS NULL OR json_extract(search_item, '$.addressNote') = ?3)
                   AND (?4 IS NULL OR deposit_chain = ?4)
                   AND (?5 IS NULL OR json_extract(search_item, '$.destinationChain') = ?5)
                   AND (?6 IS NULL OR json_extract(search_item, '$.destinationAddress') = ?6)
                 ORDER BY seq LIMIT ?7"
            ))?;
            let rows = stmt.query_map(
                params![
                    project,
                    s.after,
                    s.address_note,
                    s.deposit_chain,
                    s.destination_chain,
                    s.destination_address,
                    s.limit as i64
                ],
                address_from_row,
            )?;
            rows.map(|r| address_decode(r?)).collect()
        })
    }

    fn insert_routing_address(&self, a: &StoredRoutingAddress, events: &[NewEvent]) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, webhook_url, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![a.project, a.address.deposit_chain, a.address.deposit_address, to_json(&a.address)?, a.webhook_url, a.created_ms],
            )?;
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(())
        })
    }

    fn routing_address(&self, deposit_chain: &str, deposit_address: &str) -> Result<Option<StoredRoutingAddress>> {
        self.with(|c| {
            let row = c
                .query_row(
                    "SELECT project, body, webhook_url, created_ms FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2",
                    params![deposit_chain, deposit_address],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, i64>(3)?)),
                )
                .optional()?;
            row.map(|(project, body, webhook_url, created_ms)| Ok(StoredRoutingAddress { project, address: from_json(&body)?, webhook_url, created_ms })).transpose()
        })
    }

    fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> Result<bool> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT EXISTS (SELECT 1 FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)
                     OR EXISTS (SELECT 1 FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2)",
                params![deposit_chain, deposit_address],
                |r| r.get::<_, bool>(0),
            )?)
        })
    }

    fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO deposits (deposit_chain, deposit_address, last_bridge, bridge_id) VALUES (?1, ?2, ?3, ?4)",
                params![deposit_chain, deposit_address, to_json(&deposit.last_bridge)?, deposit.bridge_id],
            )?;
            if let Some(b) = bridge {
                upsert_bridge(&tx, b)?;
            }
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(())
        })
    }

    fn deposits(&self, deposit_chain: &str, deposit_address: &str, limit: u64) -> Result<Vec<StoredDeposit>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT last_bridge, bridge_id FROM deposits WHERE deposit_chain = ?1 AND deposit_address = ?2 ORDER BY seq DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![deposit_chain, deposit_address, limit as i64], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?;
            rows.map(|r| {
                let (last, bridge_id) = r?;
                Ok(StoredDeposit { last_bridge: from_json(&last)?, bridge_id })
            })
            .collect()
        })
    }

    fn append_events(&self, events: &[NewEvent]) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            insert_events(&tx, events)?;
            tx.commit()?;
            Ok(())
        })
    }

    fn take_due_deliveries(
        &self,
        now_ms: i64,
        wall_ms: i64,
        lease_until_wall_ms: i64,
        limit: u64,
        per_url: usize,
        busy: &HashMap<String, usize>,
    ) -> Result<Vec<DueDelivery>> {
        self.with(|c| {
            let tx = c.transaction()?;
            // The oldest due rows of each URL, at most `per_url` of each (so a backlog of one receiver cannot
            // hide the others), oldest first overall.
            let rows: Vec<(i64, String, String, String, i64, String, i64)> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT d.id, d.event_id, d.project, d.url, d.attempts, e.body, d.rank FROM (
                         SELECT id, event_id, project, url, attempts, next_ms,
                                ROW_NUMBER() OVER (PARTITION BY url ORDER BY next_ms, id) AS rank
                         FROM outbox
                         WHERE next_ms IS NOT NULL AND next_ms <= ?1 AND (leased_until IS NULL OR leased_until <= ?2)
                     ) d JOIN events e ON e.id = d.event_id
                     WHERE d.rank <= ?3 ORDER BY d.next_ms, d.id",
                )?;
                let rows = stmt.query_map(params![now_ms, wall_ms, per_url as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut lease = tx.prepare_cached("UPDATE outbox SET leased_until = ?2 WHERE id = ?1")?;
            let mut out = Vec::new();
            for (id, event_id, project, url, attempts, body, rank) in rows {
                if out.len() as u64 >= limit {
                    break;
                }
                if rank as usize + busy.get(&url).copied().unwrap_or(0) > per_url {
                    continue;
                }
                lease.execute(params![id, lease_until_wall_ms])?;
                out.push(DueDelivery {
                    outbox_id: id,
                    event_id,
                    project,
                    url,
                    event: from_json(&body)?,
                    attempt: attempts as u32 + 1,
                });
            }
            drop(lease);
            tx.commit()?;
            Ok(out)
        })
    }

    fn release_leases(&self) -> Result<()> {
        self.with(|c| {
            c.execute("UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL", [])?;
            Ok(())
        })
    }

    fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "UPDATE outbox SET attempts = ?2, next_ms = ?3, delivered = ?4, leased_until = NULL WHERE id = ?1",
                params![d.outbox_id, d.attempt, o.next_ms, o.delivered],
            )?;
            tx.execute(
                "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![d.outbox_id, d.event_id, d.project, d.url, d.attempt, o.at_ms, o.status, o.error, o.delivered, o.next_ms],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> Result<Vec<bridge_contract::WebhookDeliveryAttempt>> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT event_id, url, attempt, at_ms, status, error, delivered, next_ms FROM delivery_attempts
                 WHERE project = ?1 AND (?2 IS NULL OR event_id = ?2) ORDER BY id DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![project, event_id, limit as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, bool>(6)?,
                    r.get::<_, Option<i64>>(7)?,
                ))
            })?;
            rows.map(|r| {
                let (event_id, url, attempt, at_ms, status, error, delivered, next_ms) = r?;
                Ok(bridge_contract::WebhookDeliveryAttempt {
                    event_id,
                    url,
                    attempt: attempt as u64,
                    at: bridge_contract::DateString::from_millis(at_ms).unwrap_or(bridge_contract::DateString::MIN),
                    status,
                    error,
                    delivered,
                    next_attempt_at: next_ms.and_then(bridge_contract::DateString::from_millis),
                })
            })
            .collect()
        })
    }

    fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> Result<Vec<(i64, WebhookEvent)>> {
        self.with(|c| {
            // The sandbox clock never goes backwards, so sequence order is time order: find the first event at or
            // after `since_ms` through the time index, then page by sequence. Each page costs O(page size).
            let mut stmt = c.prepare_cached(
                "SELECT seq, body FROM events WHERE project = ?1 AND created_ms >= ?3 AND seq > max(?2,
                   coalesce((SELECT seq FROM events WHERE project = ?1 AND created_ms >= ?3 ORDER BY created_ms, seq LIMIT 1), 9223372036854775807) - 1)
                 ORDER BY seq LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![project, after_seq, since_ms, limit as i64], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            rows.map(|r| {
                let (seq, body) = r?;
                Ok((seq, from_json(&body)?))
            })
            .collect()
        })
    }
}
