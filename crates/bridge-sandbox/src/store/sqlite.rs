//! [`SqliteStore`]: the whole store in one SQLite file (`sandbox.db` in the data directory) with versioned
//! migrations, WAL journaling and `synchronous = FULL`: a change is acknowledged only after it is durable, so a
//! crash loses nothing that was acknowledged. Writes go through one connection on one thread (SQLite has one
//! writer at a time, which also keeps feed positions in commit order); reads go through a small pool of reader
//! connections, which WAL lets run beside the writer and each other, each seeing every commit made before it
//! starts. Writes are committed together when they arrive together (group commit, [`super::group_commit`]):
//! one fsync per batch, each write answered after its batch is durable. Reads run on the blocking thread pool
//! (`tokio::task::spawn_blocking`), writes on the writer's own thread, never on an async worker.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bridge_contract::{BridgeRecord, DateString, Encoded, WebhookDeliveryAttempt, WebhookEvent};
use rusqlite::{params, Connection, OptionalExtension};
use rusqlite_migration::{Migrations, M};

use super::checkpoint::Checkpointer;
use super::group_commit::Writer;
use super::sqlite_access as access;
use super::{
    from_json, from_text, history_order, synced, to_json, AddressSearch, AttemptOutcome, Backlog, Counter,
    DeliveryClaim, DueDelivery, HistoryCursorQuery, HistoryQuery, NewEvent, ResetCounts, SchemaStatus, Store,
    StoreError, StoreResult, StoredAddress, StoredBridge, StoredDeposit, StoredQuote, StoredRoutingAddress,
};
use super::{
    AccessSnapshot, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoredApiKey, StoredProject,
    StoredSigningKey, Usage,
};
use crate::clock::{ClockSync, ProjectClock};

use crate::records;

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::new(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::new(e)
    }
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
        // Plans as JSON (`crate::records::Plan`), from the text of earlier versions: `swapFailed`, `failed`, and
        // `delayed:<deposit tx hash>:<block>` (the sandbox's own hashes, which hold no `:`).
        M::up(
            r#"
        UPDATE bridges SET plan = json_quote(plan) WHERE plan IN ('swapFailed', 'failed');
        UPDATE bridges SET plan = json_object('delayed', json_object(
                'txHash', substr(plan, 9, instr(substr(plan, 9), ':') - 1),
                'block', CAST(substr(plan, 9 + instr(substr(plan, 9), ':')) AS INTEGER)))
            WHERE plan LIKE 'delayed:%';
        "#,
        ),
        // Production endpoints beyond the spec (issue 17): bridges by deposit and withdrawal hash, and deposit
        // addresses created by a project in a window (the creation rate limit).
        M::up(
            r#"
        CREATE INDEX bridges_deposit_hash ON bridges (json_extract(record, '$.depositTxHash'));
        CREATE INDEX bridges_withdraw_hash ON bridges (json_extract(record, '$.withdrawTxHash'));
        CREATE INDEX addresses_project_created ON addresses (project, created_ms);
        "#,
        ),
        // Bridge versions: a save writes only over the version it read (`Store::save_bridge`).
        M::up("ALTER TABLE bridges ADD COLUMN version INTEGER NOT NULL DEFAULT 0;"),
        // The feed's time watermark (`latest_ms`: the latest `created_ms` at or before each position, never
        // decreasing along the feed), so that the first page at a `sinceTimestamp` starts with an index seek.
        M::up(
            r#"
        ALTER TABLE events ADD COLUMN latest_ms INTEGER;
        UPDATE events SET latest_ms = w.m
            FROM (SELECT seq, MAX(created_ms) OVER (ORDER BY seq) AS m FROM events) AS w
            WHERE w.seq = events.seq;
        CREATE INDEX events_by_latest ON events (project, latest_ms, seq);
        "#,
        ),
        // A clock per project (issue 22; PostgreSQL migration 0005 says what each column is). Projects seen by
        // earlier versions, which had one clock for all, keep that clock.
        M::up(
            r#"
        CREATE TABLE projects (
            id TEXT PRIMARY KEY, first_seen_ms INTEGER NOT NULL, clock_value INTEGER NOT NULL,
            clock_floor INTEGER NOT NULL, generation INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor)
        SELECT p.project, json_extract(c.value, '$[1]'), json_extract(c.value, '$[0]'), json_extract(c.value, '$[1]')
        FROM (SELECT project FROM quotes UNION SELECT project FROM bridges UNION SELECT project FROM events
              UNION SELECT project FROM addresses UNION SELECT project FROM routing_addresses) AS p
        CROSS JOIN (SELECT value FROM meta WHERE key = 'clock') AS c;
        CREATE INDEX bridges_due_by_project ON bridges (project, next_ms) WHERE next_ms IS NOT NULL;
        CREATE INDEX outbox_due_by_project ON outbox (project, next_ms) WHERE next_ms IS NOT NULL;
        CREATE INDEX outbox_by_project ON outbox (project);
        "#,
        ),
        // Projects, API keys, signing keys and the audit list (issue 26: `store::access`).
        M::up(super::sqlite_access::MIGRATION),
        // What each delivery attempt took and the start of its answer (issue 27; PostgreSQL migration 0009).
        M::up(
            r#"
        ALTER TABLE delivery_attempts ADD COLUMN latency_ms INTEGER;
        ALTER TABLE delivery_attempts ADD COLUMN body_start TEXT;
        CREATE INDEX attempts_by_outbox ON delivery_attempts (outbox_id, at_ms);
        "#,
        ),
    ])
}

/// Query plans that do not depend on bound values (SQLite's query planner stability guarantee). Without it, a
/// cached statement with a bound `LIMIT` or range is prepared again at every execution (to plan for the new
/// values): measured, a sixth of a feed page's time went to SQLite's parser. Every query here is planned by its
/// indexes alone.
fn stable_plans(conn: &Connection) -> StoreResult<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// All state in one SQLite file.
pub struct SqliteStore {
    writer: Writer,
    _checkpointer: Checkpointer,
    readers: Arc<Vec<Mutex<Connection>>>,
    next_reader: std::sync::atomic::AtomicUsize,
}

/// Reader connections: one per core the sandbox is likely to have, and a few more for reads that wait on disk.
const READERS: usize = 4;

impl SqliteStore {
    /// Opens (creating and migrating) `dir/sandbox.db`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::new(e).context(format!("creating {}", dir.display())))?;
        let path = dir.join("sandbox.db");
        let mut conn =
            Connection::open(&path).map_err(|e| StoreError::new(e).context(format!("opening {}", path.display())))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Checkpoints run on their own thread (`Checkpointer`), not inside a commit.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        stable_plans(&conn)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations().to_latest(&mut conn).map_err(|e| StoreError::new(e).context("migrating the sandbox database"))?;
        let readers = (0..READERS)
            .map(|_| {
                let reader = Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(|e| StoreError::new(e).context(format!("opening {} to read", path.display())))?;
                reader.busy_timeout(std::time::Duration::from_secs(5))?;
                stable_plans(&reader)?;
                Ok(Mutex::new(reader))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Self {
            _checkpointer: Checkpointer::start(&path)?,
            writer: Writer::start(conn)?,
            readers: Arc::new(readers),
            next_reader: Default::default(),
        })
    }

    /// Runs the read `f` with a reader connection (a free one if any, else the next in turn) on the blocking
    /// thread pool.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let readers = self.readers.clone();
        let start = self.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::task::spawn_blocking(move || {
            let n = readers.len();
            let free = (0..n).find_map(|i| readers[(start + i) % n].try_lock().ok());
            let reader = match free {
                Some(reader) => reader,
                None => readers[start % n].lock().unwrap_or_else(|p| p.into_inner()),
            };
            f(&reader)
        })
        .await
        .map_err(|e| StoreError::new(e).context("store task"))?
    }

    /// Runs the read `f` with a free reader connection right here, on the calling (async) thread, or like
    /// [`Self::read`] when none is free. For reads that an index bounds (one row by key, a page from a cursor):
    /// handing them to another thread costs more than they do (thread wake-ups were most of a bridge read's
    /// time), and they hold the thread for microseconds.
    async fn read_now<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let start = self.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let n = self.readers.len();
        let f = {
            let free = (0..n).find_map(|i| self.readers[(start + i) % n].try_lock().ok());
            match free {
                Some(reader) => return f(&reader),
                None => f,
            }
        };
        self.read(f).await
    }

    /// Runs the write `f` in the writer's next batch; answers once the batch is durable.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.writer.run(f).await
    }
}

/// Appends events, and an outbox row for each that has a `webhookUrl`, in the caller's transaction.
fn insert_events(c: &Connection, events: &[NewEvent]) -> StoreResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    // The watermark of these positions: the latest time of the feed so far, these events included.
    let before: Option<i64> = c
        .prepare_cached("SELECT latest_ms FROM events ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?
        .flatten();
    let newest = events.iter().map(|e| e.created_ms).max().unwrap_or(i64::MIN);
    let latest = before.map_or(newest, |b| b.max(newest));
    let mut stmt = c.prepare_cached(
        "INSERT INTO events (id, project, created_ms, body, webhook_url, latest_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut outbox =
        c.prepare_cached("INSERT INTO outbox (event_id, project, url, next_ms) VALUES (?1, ?2, ?3, ?4)")?;
    for e in events {
        stmt.execute(params![e.id, e.project, e.created_ms, to_json(&e.event)?, e.webhook_url, latest])?;
        if let Some(url) = &e.webhook_url {
            outbox.execute(params![e.id, e.project, url, e.created_ms])?;
        }
    }
    Ok(())
}

fn upsert_bridge(c: &Connection, b: &StoredBridge) -> StoreResult<()> {
    let plan = b.plan.as_ref().map(to_json).transpose()?;
    c.prepare_cached(
        "INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan,
           version = bridges.version + 1",
    )?
    .execute(params![
            b.id,
            b.project,
            to_json(&b.record)?,
            to_json(&b.rejections)?,
            records::state_name(&b.record),
            b.created_ms,
            b.updated_ms,
            b.next_ms,
            b.webhook_url,
            plan
        ],
    )?;
    Ok(())
}

const BRIDGE_COLUMNS: &str =
    "id, project, record, rejections, created_ms, updated_ms, next_ms, webhook_url, plan, version";

fn bridge_from_row(row: &rusqlite::Row<'_>) -> StoreResult<StoredBridge> {
    Ok(StoredBridge {
        id: row.get(0)?,
        project: row.get(1)?,
        record: from_json(&row.get::<_, String>(2)?)?,
        rejections: from_json(&row.get::<_, String>(3)?)?,
        created_ms: row.get(4)?,
        updated_ms: row.get(5)?,
        next_ms: row.get(6)?,
        webhook_url: row.get(7)?,
        plan: row.get::<_, Option<String>>(8)?.map(|p| from_json(&p)).transpose()?,
        version: row.get(9)?,
    })
}

/// The clock of `project`, if it was seen.
fn read_project_clock(c: &Connection, project: &str) -> StoreResult<Option<ProjectClock>> {
    Ok(c.prepare_cached("SELECT clock_value, clock_floor, generation FROM projects WHERE id = ?1")?
        .query_row(params![project], |r| Ok(ProjectClock { value: r.get(0)?, floor: r.get(1)?, generation: r.get(2)? }))
        .optional()?)
}

/// Rows through a decoder that may fail (rusqlite's own row mapping only fails with rusqlite errors).
fn collect<T>(
    mut rows: rusqlite::Rows<'_>,
    decode: impl Fn(&rusqlite::Row<'_>) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(decode(row)?);
    }
    Ok(out)
}

const ADDRESS_COLUMNS: &str = "seq, project, reuse_key, body, search_item, webhook_url, created_ms";

fn address_from_row(row: &rusqlite::Row<'_>) -> StoreResult<(i64, StoredAddress)> {
    Ok((
        row.get(0)?,
        StoredAddress {
            project: row.get(1)?,
            reuse_key: row.get(2)?,
            address: from_json(&row.get::<_, String>(3)?)?,
            search_item: from_json(&row.get::<_, String>(4)?)?,
            webhook_url: row.get(5)?,
            created_ms: row.get(6)?,
        },
    ))
}

fn quote_from_row(row: &rusqlite::Row<'_>) -> StoreResult<StoredQuote> {
    Ok(StoredQuote {
        id: row.get(0)?,
        project: row.get(1)?,
        response: from_json(&row.get::<_, String>(2)?)?,
        mode: from_text(&row.get::<_, String>(3)?)?,
        created_ms: row.get(4)?,
        expires_ms: row.get(5)?,
        committed: row.get(6)?,
    })
}

#[async_trait]
impl Store for SqliteStore {
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
        self.run(move |c| {
            let kept: Option<String> =
                c.query_row("SELECT value FROM meta WHERE key = 'clock'", [], |r| r.get(0)).optional()?;
            let kept = kept.map(|text| from_json::<(i64, i64)>(&text)).transpose()?;
            let (value, floor) = synced(kept, sync);
            c.execute(
                "INSERT INTO meta (key, value) VALUES ('clock', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![to_json(&(value, floor))?],
            )?;
            Ok((value, floor))
        })
        .await
    }

    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        let owned = project.to_owned();
        if let Some(clock) = self.read_now(move |c| read_project_clock(c, &owned)).await? {
            return Ok(clock);
        }
        let (project, start) = (project.to_owned(), *start);
        self.run(move |c| {
            c.prepare_cached(
                "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
                 ON CONFLICT (id) DO NOTHING",
            )?
            .execute(params![project, start.floor, start.value])?;
            read_project_clock(c, &project)?
                .ok_or_else(|| StoreError::new(anyhow::anyhow!("project {project} vanished")))
        })
        .await
    }

    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>> {
        let project = project.to_owned();
        self.run(move |c| {
            let changed = c
                .prepare_cached(
                    "UPDATE projects SET clock_value = clock_value + ?2 WHERE id = ?1 AND clock_value <= ?3",
                )?
                .execute(params![project, ms, limit])?;
            if changed == 0 {
                return Ok(None);
            }
            read_project_clock(c, &project)
        })
        .await
    }

    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
        if floors.is_empty() {
            return Ok(());
        }
        let floors = floors.to_vec();
        self.run(move |c| {
            let mut stmt = c.prepare_cached(
                "UPDATE projects SET clock_floor = ?3 WHERE id = ?1 AND generation = ?2 AND clock_floor < ?3",
            )?;
            for (project, generation, floor) in &floors {
                stmt.execute(params![project, generation, floor])?;
            }
            Ok(())
        })
        .await
    }

    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)> {
        let (project, start) = (project.to_owned(), *start);
        self.run(move |c| {
            let generation: i64 = c.query_row(
                "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
                 ON CONFLICT (id) DO UPDATE SET clock_value = ?3, clock_floor = ?2, generation = generation + 1
                 RETURNING generation",
                params![project, start.floor, start.value],
                |r| r.get(0),
            )?;
            let delete = |sql: &str| -> StoreResult<u64> { Ok(c.execute(sql, params![project])? as u64) };
            let deposits = delete(
                "DELETE FROM deposits WHERE EXISTS (SELECT 1 FROM addresses a WHERE a.project = ?1
                   AND a.deposit_chain = deposits.deposit_chain AND a.deposit_address = deposits.deposit_address)
                 OR EXISTS (SELECT 1 FROM routing_addresses r WHERE r.project = ?1
                   AND r.deposit_chain = deposits.deposit_chain AND r.deposit_address = deposits.deposit_address)",
            )?;
            let counts = ResetCounts {
                quotes: delete("DELETE FROM quotes WHERE project = ?1")?,
                bridges: delete("DELETE FROM bridges WHERE project = ?1")?,
                addresses: delete("DELETE FROM addresses WHERE project = ?1")?,
                routing_addresses: delete("DELETE FROM routing_addresses WHERE project = ?1")?,
                deposits,
                events: delete("DELETE FROM events WHERE project = ?1")?,
                deliveries: delete("DELETE FROM delivery_attempts WHERE project = ?1")?,
            };
            delete("DELETE FROM outbox WHERE project = ?1")?;
            Ok((ProjectClock { generation, ..start }, counts))
        })
        .await
    }

    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let key = format!("counter:{}", counter.name());
        self.run(move |c| {
            let current: Option<String> =
                c.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| r.get(0)).optional()?;
            let next = current.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) + count;
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, next.to_string()],
            )?;
            Ok(next)
        })
        .await
    }

    async fn insert_quote(&self, q: &StoredQuote) -> StoreResult<()> {
        let q = q.clone();
        self.run(move |c| {
            c.prepare_cached(
                "INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
            )?
            .execute(params![q.id, q.project, to_json(&q.response)?, q.mode.as_str(), q.created_ms, q.expires_ms],
            )?;
            Ok(())
        })
        .await
    }

    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, project, body, mode, created_ms, expires_ms, committed FROM quotes WHERE id = ?1 AND project = ?2",
            )?;
            let rows = stmt.query(params![id, project])?;
            Ok(collect(rows, quote_from_row)?.pop())
        })
        .await
    }

    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let (quote_id, bridge, events) = (quote_id.to_owned(), bridge.clone(), events.to_vec());
        self.run(move |c| {
            let changed =
                c.execute("UPDATE quotes SET committed = 1 WHERE id = ?1 AND committed = 0", params![quote_id])?;
            if changed == 0 {
                return Ok(false);
            }
            upsert_bridge(c, &bridge)?;
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }

    async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let mut stmt =
                c.prepare_cached(&format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE id = ?1 AND project = ?2"))?;
            let rows = stmt.query(params![id, project])?;
            Ok(collect(rows, bridge_from_row)?.pop())
        })
        .await
    }

    async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let (project, id) = (project.to_owned(), id.to_owned());
        self.read_now(move |c| {
            let mut stmt = c.prepare_cached("SELECT record FROM bridges WHERE id = ?1 AND project = ?2")?;
            let record: Option<String> = stmt.query_row(params![id, project], |r| r.get(0)).optional()?;
            Ok(record.map(Encoded::from_stored))
        })
        .await
    }

    async fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let (b, events) = (bridge.clone(), events.to_vec());
        self.run(move |c| {
            let plan = b.plan.as_ref().map(to_json).transpose()?;
            let saved = c
                .prepare_cached(
                    "UPDATE bridges SET record = ?3, rejections = ?4, state = ?5, updated_ms = ?6, next_ms = ?7,
                       plan = ?8, version = version + 1
                     WHERE id = ?1 AND version = ?2",
                )?
                .execute(params![
                    b.id,
                    b.version,
                    to_json(&b.record)?,
                    to_json(&b.rejections)?,
                    records::state_name(&b.record),
                    b.updated_ms,
                    b.next_ms,
                    plan
                ])?;
            if saved == 0 {
                return Ok(false); // nothing written
            }
            insert_events(c, &events)?;
            Ok(true)
        })
        .await
    }

    async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        self.run(move |c| {
            // Each project's due bridges at its own time: one probe of (project, next_ms) per project.
            let columns = BRIDGE_COLUMNS.split(", ").map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {columns} FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?1, p.clock_floor)
                 ORDER BY b.next_ms, b.id LIMIT ?2"
            ))?;
            let rows = stmt.query(params![base_ms, limit as i64])?;
            collect(rows, bridge_from_row)
        })
        .await
    }

    async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let (project, q) = (project.to_owned(), q.clone());
        self.read(move |c| {
            let state = q.state.map(|s| s.as_str());
            let filter = if state.is_some() { "AND state = ?2" } else { "AND ?2 IS NULL" };
            let total: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM bridges WHERE project = ?1 {filter}"),
                params![project, state],
                |r| r.get(0),
            )?;
            let (column, direction, _) = history_order(q.sort_by, q.direction);
            let mut stmt = c.prepare(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 {filter} ORDER BY {column} {direction}, id {direction} LIMIT ?3 OFFSET ?4"
            ))?;
            let rows = stmt.query(params![project, state, q.limit as i64, q.offset as i64])?;
            Ok((total as u64, collect(rows, bridge_from_row)?))
        })
        .await
    }

    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let (project, chain, key) = (project.to_owned(), deposit_chain.to_owned(), reuse_key.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND deposit_chain = ?2 AND reuse_key = ?3 ORDER BY seq LIMIT 1"
            ))?;
            let rows = stmt.query(params![project, chain, key])?;
            Ok(collect(rows, address_from_row)?.pop().map(|(_, a)| a))
        })
        .await
    }

    async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
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

    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE deposit_chain = ?1 AND deposit_address = ?2"
            ))?;
            let rows = stmt.query(params![chain, address])?;
            Ok(collect(rows, address_from_row)?.pop().map(|(_, a)| a))
        })
        .await
    }

    async fn search_addresses(&self, project: &str, s: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>> {
        let (project, s) = (project.to_owned(), s.clone());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = ?1 AND seq > ?2
                   AND (?3 IS NULL OR json_extract(search_item, '$.addressNote') = ?3)
                   AND (?4 IS NULL OR deposit_chain = ?4)
                   AND (?5 IS NULL OR json_extract(search_item, '$.destinationChain') = ?5)
                   AND (?6 IS NULL OR json_extract(search_item, '$.destinationAddress') = ?6)
                 ORDER BY seq LIMIT ?7"
            ))?;
            let rows = stmt.query(params![
                project,
                s.after,
                s.address_note,
                s.deposit_chain,
                s.destination_chain,
                s.destination_address,
                s.limit as i64
            ])?;
            collect(rows, address_from_row)
        })
        .await
    }

    async fn insert_routing_address(&self, a: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()> {
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

    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT project, body, webhook_url, created_ms FROM routing_addresses WHERE deposit_chain = ?1 AND deposit_address = ?2",
            )?;
            let rows = stmt.query(params![chain, address])?;
            let found = collect(rows, |r| {
                Ok(StoredRoutingAddress {
                    project: r.get(0)?,
                    address: from_json(&r.get::<_, String>(1)?)?,
                    webhook_url: r.get(2)?,
                    created_ms: r.get(3)?,
                })
            })?;
            Ok(found.into_iter().next())
        })
        .await
    }

    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
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

    async fn add_deposit(
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

    async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        let (chain, address) = (deposit_chain.to_owned(), deposit_address.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT last_bridge, bridge_id FROM deposits WHERE deposit_chain = ?1 AND deposit_address = ?2 ORDER BY seq DESC LIMIT ?3",
            )?;
            let rows = stmt.query(params![chain, address, limit as i64])?;
            collect(rows, |r| {
                Ok(StoredDeposit { last_bridge: from_json(&r.get::<_, String>(0)?)?, bridge_id: r.get(1)? })
            })
        })
        .await
    }

    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        let events = events.to_vec();
        self.run(move |c| {
            insert_events(c, &events)?;
            Ok(())
        })
        .await
    }

    async fn events(
        &self,
        project: &str,
        since_ms: i64,
        after_seq: i64,
        limit: u64,
    ) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>> {
        let project = project.to_owned();
        self.read_now(move |c| {
            // Positions are in commit order, which need not be time order (two requests may take their times in
            // one order and commit in the other; instances' clocks agree only up to a tick): the time is a filter.
            // The walk along the (project, seq) index starts at the cursor or at the first position whose
            // watermark (`latest_ms`, never decreasing along the feed) reaches `since_ms`, whichever is later: no
            // event at or after `since_ms` comes before that position, and finding it is one index seek, so a
            // page costs O(page) however many events come before `since_ms`.
            let mut stmt = c.prepare_cached(
                "SELECT seq, body FROM events INDEXED BY events_by_project
                 WHERE project = ?1 AND created_ms >= ?3 AND seq > max(?2, coalesce(
                     (SELECT seq FROM events INDEXED BY events_by_latest
                      WHERE project = ?1 AND latest_ms >= ?3 ORDER BY latest_ms, seq LIMIT 1),
                     9223372036854775807) - 1)
                 ORDER BY seq LIMIT ?4",
            )?;
            let rows = stmt.query(params![project, after_seq, since_ms, limit as i64])?;
            collect(rows, |r| Ok((r.get(0)?, Encoded::from_stored(r.get(1)?))))
        })
        .await
    }

    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let claim = claim.clone();
        self.run(move |c| {
            // The oldest due rows of each URL, at most `per_url` of each (so a backlog of one receiver cannot
            // hide the others), oldest first overall.
            let rows: Vec<(i64, String, String, String, i64, String, i64)> = {
                let mut stmt = c.prepare_cached(
                    "SELECT d.id, d.event_id, d.project, d.url, d.attempts, e.body, d.rank FROM (
                         SELECT id, event_id, project, url, attempts, next_ms,
                                ROW_NUMBER() OVER (PARTITION BY url ORDER BY next_ms, id) AS rank
                         FROM outbox o
                         WHERE next_ms IS NOT NULL
                           AND next_ms <= (SELECT max(p.clock_value + ?1, p.clock_floor) FROM projects p WHERE p.id = o.project)
                           AND (leased_until IS NULL OR leased_until <= ?2)
                     ) d JOIN events e ON e.id = d.event_id
                     WHERE d.rank <= ?3 ORDER BY d.next_ms, d.id",
                )?;
                let rows = stmt.query_map(params![claim.base_ms, claim.wall_ms, claim.per_url as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut lease = c.prepare_cached("UPDATE outbox SET leased_until = ?2 WHERE id = ?1")?;
            let mut out = Vec::new();
            for (id, event_id, project, url, attempts, body, rank) in rows {
                if out.len() as u64 >= claim.limit {
                    break;
                }
                if rank as usize + claim.busy.get(&url).copied().unwrap_or(0) > claim.per_url {
                    continue;
                }
                lease.execute(params![id, claim.lease_until_wall_ms])?;
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
            Ok(out)
        })
        .await
    }

    async fn release_leases(&self) -> StoreResult<()> {
        self.run(|c| {
            c.execute("UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL", [])?;
            Ok(())
        })
        .await
    }

    async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let (d, o) = (d.clone(), o.clone());
        self.run(move |c| {
            let kept = c.execute(
                "UPDATE outbox SET attempts = ?2, next_ms = ?3, delivered = ?4, leased_until = NULL WHERE id = ?1",
                params![d.outbox_id, d.attempt, o.next_ms, o.delivered],
            )?;
            if kept == 0 {
                return Ok(()); // reset meanwhile: the delivery and its log are gone
            }
            c.execute(
                "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms, latency_ms, body_start)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![d.outbox_id, d.event_id, d.project, d.url, d.attempt, o.at_ms, o.status, o.error, o.delivered, o.next_ms, o.latency_ms, o.body_start],
            )?;
            Ok(())
        })
        .await
    }

    async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        let (project, event_id) = (project.to_owned(), event_id.map(str::to_owned));
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT a.event_id, a.url, a.attempt, a.at_ms, a.status, a.error, a.delivered, a.next_ms, a.latency_ms,
                        a.body_start, e.body
                 FROM delivery_attempts a LEFT JOIN events e ON e.id = a.event_id
                 WHERE a.project = ?1 AND (?2 IS NULL OR a.event_id = ?2) ORDER BY a.id DESC LIMIT ?3",
            )?;
            let rows = stmt.query(params![project, event_id, limit as i64])?;
            collect(rows, |r| {
                Ok(WebhookDeliveryAttempt {
                    event_id: r.get(0)?,
                    url: r.get(1)?,
                    attempt: r.get::<_, i64>(2)? as u64,
                    at: DateString::from_millis(r.get(3)?).unwrap_or(DateString::MIN),
                    status: r.get(4)?,
                    error: r.get(5)?,
                    delivered: r.get(6)?,
                    next_attempt_at: r.get::<_, Option<i64>>(7)?.and_then(DateString::from_millis),
                    latency_ms: r.get::<_, Option<i64>>(8)?.map(|ms| ms.max(0) as u64),
                    response_body_start: r.get(9)?,
                    event: r.get::<_, Option<String>>(10)?.map(|body| from_json(&body)).transpose()?,
                })
            })
        })
        .await
    }

    async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        let (project, event_id) = (project.to_owned(), event_id.to_owned());
        self.run(move |c| {
            let n = c.execute(
                "UPDATE outbox SET next_ms = ?3, delivered = 0 WHERE project = ?1 AND event_id = ?2",
                params![project, event_id, now_ms],
            )?;
            Ok(n as u64)
        })
        .await
    }

    async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        let project = project.to_owned();
        self.run(move |c| {
            let n = c.execute(
                "UPDATE outbox SET next_ms = ?3 WHERE project = ?1 AND delivered = 0 AND attempts > 0
                   AND (SELECT max(a.at_ms) FROM delivery_attempts a WHERE a.outbox_id = outbox.id) >= ?2",
                params![project, since_ms, now_ms],
            )?;
            Ok(n as u64)
        })
        .await
    }

    async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        let (project, q) = (project.to_owned(), q.clone());
        self.read(move |c| {
            let state = q.state.map(|s| s.as_str());
            let (column, direction, beyond) = history_order(q.sort_by, q.direction);
            let (after_key, after_id) = match &q.after {
                Some((key, id)) => (Some(*key), Some(id.clone())),
                None => (None, None),
            };
            let mut stmt = c.prepare(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 AND (?2 IS NULL OR state = ?2)
                   AND (?3 IS NULL OR ({column}, id) {beyond} (?3, ?4))
                 ORDER BY {column} {direction}, id {direction} LIMIT ?5"
            ))?;
            let rows = stmt.query(params![project, state, after_key, after_id, q.limit as i64])?;
            collect(rows, bridge_from_row)
        })
        .await
    }

    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let (project, hash) = (project.to_owned(), tx_hash.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 AND (json_extract(record, '$.depositTxHash') = ?2
                   OR EXISTS (SELECT 1 FROM json_each(rejections) WHERE json_extract(value, '$.depositTxHash') = ?2))
                 ORDER BY created_ms, id"
            ))?;
            let rows = stmt.query(params![project, hash])?;
            collect(rows, bridge_from_row)
        })
        .await
    }

    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let (project, hash) = (project.to_owned(), tx_hash.to_owned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = ?1 AND json_extract(record, '$.withdrawTxHash') = ?2
                 ORDER BY created_ms, id"
            ))?;
            let rows = stmt.query(params![project, hash])?;
            collect(rows, bridge_from_row)
        })
        .await
    }

    async fn ping(&self) -> StoreResult<()> {
        self.read_now(|c| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0)).map(drop)?)).await
    }

    async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        self.read_now(|c| {
            let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let pending = migrations().pending_migrations(c).map_err(StoreError::new)?;
            let known = (version + i64::from(pending)).max(0) as usize;
            Ok(SchemaStatus { known, applied: (version.max(0) as usize).min(known) })
        })
        .await
    }

    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        self.read(move |c| {
            let (pending, delivery_late, step_late) = c
                .prepare_cached(
                    "SELECT (SELECT COUNT(*) FROM outbox WHERE next_ms IS NOT NULL),
                            (SELECT MAX(max(p.clock_value + ?1, p.clock_floor) - o.next_ms)
                             FROM projects p JOIN outbox o ON o.project = p.id
                             WHERE o.next_ms IS NOT NULL AND o.next_ms <= max(p.clock_value + ?1, p.clock_floor)),
                            (SELECT MAX(max(p.clock_value + ?1, p.clock_floor) - b.next_ms)
                             FROM projects p JOIN bridges b ON b.project = p.id
                             WHERE b.next_ms IS NOT NULL AND b.next_ms <= max(p.clock_value + ?1, p.clock_floor))",
                )?
                .query_row([base_ms], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))?;
            Ok(Backlog {
                outbox_pending: pending as u64,
                oldest_due_delivery_late_ms: delivery_late,
                oldest_due_step_late_ms: step_late,
            })
        })
        .await
    }

    /// One process serves a data directory: every lease is its own (bridges are not leased on SQLite).
    async fn release_own_leases(&self) -> StoreResult<()> {
        self.release_leases().await
    }

    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
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

    // ------------------------------------------- projects, API keys, signing keys, the audit list (issue 26)

    async fn access_version(&self) -> StoreResult<i64> {
        self.read_now(access::version).await
    }

    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        self.read(access::snapshot).await
    }

    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        let (column, value) = (lookup.column(), lookup.value().to_owned());
        self.read_now(move |c| access::api_key(c, column, &value)).await
    }

    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        let project = project.map(str::to_owned);
        self.read(move |c| access::api_keys(c, project.as_deref())).await
    }

    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        let (key, actor) = (key.clone(), actor.to_owned());
        self.run(move |c| access::insert_api_key(c, &key, imported, &actor)).await
    }

    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        let (id, actor) = (id.to_owned(), actor.to_owned());
        self.run(move |c| access::revoke_api_key(c, &id, at_ms, &actor)).await
    }

    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        let (project, actor, how) = (project.to_owned(), actor.to_owned(), how.to_owned());
        self.run(move |c| access::ensure_project(c, &project, at_ms, &actor, &how)).await
    }

    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        let (project, actor) = (project.to_owned(), actor.to_owned());
        self.run(move |c| access::set_project_disabled(c, &project, disabled, at_ms, &actor)).await
    }

    async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        self.read(access::projects).await
    }

    async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        let usage = usage.clone();
        self.run(move |c| access::record_usage(c, &usage)).await
    }

    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        let (candidate, actor) = (candidate.clone(), actor.to_owned());
        self.run(move |c| access::initial_signing_key(c, &candidate, &actor)).await
    }

    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        let (secret, actor) = (secret.to_vec(), actor.to_owned());
        self.run(move |c| access::rotate_signing_key(c, &secret, at_ms, how, &actor)).await
    }

    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        let kid = kid.to_owned();
        self.run(move |c| access::extend_signed_until(c, &kid, until_ms)).await
    }

    async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        let query = query.clone();
        self.read(move |c| access::audit_list(c, &query)).await
    }
}
